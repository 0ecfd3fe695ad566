"""The privacy criteria ``anonymize`` holds published classes to besides (epsilon, delta)^k
(docs/guide/criteria.md): the proof that the whole table fails one (then no partition meets
it), and the classes of a candidate merged until every class satisfies each criterion.

Merging is the repair: a merged class's distribution of a column is a convex combination of
its parts', so distinct and entropy l-diversity, t-closeness (the earth mover's distance is
convex) and beta-likeness hold in the union of classes that hold them; recursive (c, l) and
delta-disclosure need not, and (epsilon, delta)^k-dissimilarity need not either, so every
merged class is measured again, and merged further while it fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._errors import InfeasibleError
from proxanon._pipeline.classes import _merge_equal_tuples
from proxanon._results.audit import AuditReport
from proxanon._results.criteria import (
    CodedColumns,
    Criterion,
    CriterionVerdict,
    criteria_verdicts,
    criterion_columns,
)
from proxanon._results.measures import summarize_groups
from proxanon.generalize import QIColumn

#: Classes on either side of a failing class, in the order of their QI centroids, among
#: which it finds the nearest to merge with.
MERGE_WINDOW = 32

_Ints = NDArray[np.int64]


@dataclass(frozen=True)
class CriteriaJob:
    """The criteria asked for, over the columns they read (coded over the rows of the
    candidate tables), and the sensitive columns a criterion without a column reads;
    ``enforced``: those classes are merged for (None: all; a table published as best effort
    leaves out those the whole table fails)."""

    criteria: tuple[Criterion, ...]
    sensitive: tuple[str, ...]
    coded: CodedColumns
    enforced: tuple[Criterion, ...] | None = None

    @classmethod
    def on(cls, table: pd.DataFrame, criteria: tuple[Criterion, ...],
           sensitive: Sequence[str]) -> CriteriaJob:
        """The criteria over the rows of ``table``."""
        names = criterion_columns(criteria, sensitive)
        return cls(criteria, tuple(sensitive), CodedColumns(table, names))

    def subset(self, table: pd.DataFrame) -> CriteriaJob:
        """The same criteria over the rows of ``table`` (the rows a table publishes)."""
        return replace(CriteriaJob.on(table, self.criteria, self.sensitive),
                       enforced=self.enforced)

    def verdicts(self, classes: _Ints, *, enforced: bool = False) -> list[CriterionVerdict]:
        """Each criterion (each enforced one where ``enforced``) on each column it reads,
        over ``classes``."""
        criteria = self.criteria if not enforced or self.enforced is None else self.enforced
        return criteria_verdicts(self.coded, classes, criteria, self.sensitive)

    def prove_feasible(self, n: int) -> None:
        """Raises InfeasibleError naming the first criterion the whole table fails: no
        partition's classes can satisfy it then (each class is a part of the table, and the
        table the union of classes)."""
        for verdict in self.verdicts(np.zeros(n, dtype=np.int64)):
            if not verdict.satisfied:
                raise InfeasibleError(
                    f"{verdict.criterion} cannot be met: the whole table fails it on "
                    f"{verdict.column!r} (measure {verdict.value:g}), and every class is a "
                    "part of the table, so no partition satisfies it; relax the criterion")

    def infeasible(self, n: int) -> list[CriterionVerdict]:
        """The criteria the whole table fails (none when every criterion can be met)."""
        return [v for v in self.verdicts(np.zeros(n, dtype=np.int64)) if not v.satisfied]


def enforce_criteria(classes: _Ints, columns: list[QIColumn], job: CriteriaJob,
                     audit: Callable[[_Ints], AuditReport]) -> tuple[_Ints, int]:
    """``classes`` (an id per row) merged until every class satisfies each criterion of
    ``job``: per round, classes publishing the same tuple merged (one equivalence class to
    an attacker), then each failing class merged with the nearest class by QI centroid
    (among :data:`MERGE_WINDOW` on either side in centroid order). A class is failing when it
    fails a criterion, or fails ``audit`` (the (epsilon, delta)^k check) having been formed
    by a merge: a class the candidate left failing is not this step's to repair. Returns the
    classes (0..m-1) and the rounds that merged; ends at one class at worst, which fails
    only where the whole table does."""
    classes = _dense(classes)
    original = classes
    rounds = 0
    while True:
        labels = summarize_groups(columns, classes).labels
        classes = _dense(_merge_equal_tuples(labels)[classes])
        m = int(classes.max()) + 1
        failing = np.zeros(m, dtype=bool)
        for verdict in job.verdicts(classes, enforced=True):
            failing[verdict.failing_classes] = True
        merged = _merged(original, classes, m)
        if merged.any():
            report = audit(classes)
            bad = np.zeros(m, dtype=bool)
            bad[np.r_[report.violating_groups, report.small_groups].astype(np.int64)] = True
            failing |= bad & merged
        if not failing.any() or m == 1:
            return classes, rounds
        rounds += 1
        classes = _dense(_merge_nearest(classes, np.flatnonzero(failing), columns, m)[classes])


def _dense(classes: _Ints) -> _Ints:
    """Ids 0..m-1 in ascending order of the given ids."""
    return np.unique(classes, return_inverse=True)[1].astype(np.int64).reshape(-1)


def _merged(original: _Ints, classes: _Ints, m: int) -> NDArray[np.bool_]:
    """Per class, whether it unites rows of several ``original`` classes."""
    first = np.full(m, -1, dtype=np.int64)
    first[classes] = original
    return np.bincount(classes, weights=(original != first[classes]), minlength=m) > 0


def _merge_nearest(classes: _Ints, failing: _Ints, columns: list[QIColumn], m: int) -> _Ints:
    """A new id per class: each failing class joined with its nearest class (by the
    centroid of its QI codes, each column scaled by its range), unions closed transitively."""
    codes = np.column_stack([c.codes for c in columns]).astype(np.float64)
    span = codes.max(axis=0) - codes.min(axis=0)
    codes = (codes - codes.min(axis=0)) / np.where(span > 0, span, 1.0)
    sizes = np.bincount(classes, minlength=m).astype(np.float64)
    centroid = np.column_stack([np.bincount(classes, weights=codes[:, j], minlength=m)
                                for j in range(codes.shape[1])]) / sizes[:, None]
    order = np.lexsort(centroid.T[::-1])
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(m)
    offsets = np.r_[-MERGE_WINDOW:0, 1:MERGE_WINDOW + 1]
    around = position[failing][:, None] + offsets[None, :]
    valid = (around >= 0) & (around < m)
    candidates = order[np.clip(around, 0, m - 1)]
    distance = np.abs(centroid[candidates] - centroid[failing][:, None, :]).sum(axis=2)
    distance[~valid] = np.inf
    ranked = np.take_along_axis(candidates, np.argsort(distance, axis=1, kind="stable"), 1)
    # Greedy matching, smallest failing class first: each takes its nearest class not yet
    # taken this round (else its nearest), so that merges pair classes instead of chaining
    # whole runs of failing classes into one.
    taken = np.zeros(m, dtype=bool)
    partner = np.empty(len(failing), dtype=np.int64)
    for i in np.lexsort((failing, sizes[failing])).tolist():
        if taken[failing[i]]:
            partner[i] = failing[i]
            continue
        free = ranked[i][~taken[ranked[i]]]
        partner[i] = free[0] if free.size else ranked[i][0]
        taken[failing[i]] = taken[partner[i]] = True
    return _components(m, failing, partner)


def _components(m: int, a: _Ints, b: _Ints) -> _Ints:
    """The connected components of the graph on 0..m-1 with edges (a[i], b[i]), labelled by
    their smallest node (union-find, path halving)."""
    parent = np.arange(m, dtype=np.int64)

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        rx, ry = root(x), root(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)
    return np.array([root(x) for x in range(m)], dtype=np.int64)
