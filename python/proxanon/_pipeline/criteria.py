"""The privacy criteria ``anonymize`` holds published classes to besides (epsilon, delta)^k
(docs/guide/criteria.md): the proof that the whole table fails one (then no partition meets
it), and the classes of a candidate merged until every class satisfies each criterion.

Merging is the repair: a merged class's distribution of a column is a convex combination of
its parts', so distinct, entropy and recursive l-diversity, t-closeness (the earth mover's
distance is convex) and beta-likeness hold in the union of classes that hold them
(docs/design/privacy-model.md); delta-disclosure need not, and (epsilon, delta)^k-
dissimilarity need not either, so every merged class is measured again, and merged further
while it fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine.options import NativeCriteria, criterion_kind
from proxanon._errors import InfeasibleError
from proxanon._pipeline.classes import _audit_groups, _merge_equal_tuples
from proxanon._results.criteria import (
    BetaLikeness,
    CodedColumns,
    Criterion,
    CriterionVerdict,
    DeltaDisclosure,
    LDiversity,
    TCloseness,
    criteria_verdicts,
    criterion_columns,
)
from proxanon._results.measures import summarize_groups
from proxanon.distances import Relation
from proxanon.generalize import QIColumn

#: Classes on either side of a failing class, in the order of their QI centroids, among
#: which it finds the nearest to merge with.
MERGE_WINDOW = 32

_Ints = NDArray[np.int64]
#: The (ε, δ)^k check of classes: given an id per row (-1 for rows not checked), the ids
#: of the classes that fail it.
Audit = Callable[[NDArray[np.int64]], NDArray[np.int64]]


def class_audit(sens: NDArray[np.float64], relation: Relation, k: int, eps: float | None,
                dlt: float | None, threads: int) -> Audit:
    """The (ε, δ)^k check of the classes of rows of ``sens`` (the pipeline's audit;
    rows labelled -1 left out, a set of fewer than k rows failing as a whole)."""
    def failing(groups: _Ints) -> _Ints:
        kept = groups[groups >= 0]
        if kept.size < k:
            small: _Ints = np.unique(kept)
            return small
        report = _audit_groups(sens, groups, relation, k, eps, dlt, threads)
        return np.union1d(report.violating_groups, report.small_groups).astype(np.int64)
    return failing


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

    def verdicts(self, classes: _Ints) -> list[CriterionVerdict]:
        """Each criterion on each column it reads, over ``classes``."""
        return criteria_verdicts(self.coded, classes, self.criteria, self.sensitive)

    @cached_property
    def native(self) -> NativeCriteria:
        """The enforced criteria as the native checks of Mondrian's cut and specialization
        take them (over the rows of this job)."""
        criteria = self.criteria if self.enforced is None else self.enforced
        names = list(self.coded.codes)
        specs = []
        for criterion in criteria:
            kind, value, c = _native_kind(criterion)
            for name in ([criterion.column] if criterion.column else self.sensitive):
                specs.append((kind, value, c, names.index(name)))
        return NativeCriteria(
            codes=tuple(np.ascontiguousarray(self.coded.codes[n][0], dtype=np.int32)
                        for n in names),
            values=tuple(self.coded.codes[n][1] for n in names),
            numeric=tuple(self.coded.codes[n][2] for n in names), specs=tuple(specs))

    def failing(self, classes: _Ints, rows: NDArray[np.bool_]) -> _Ints:
        """The ids of the classes of ``rows`` (a mask; whole classes) that fail an enforced
        criterion."""
        criteria = self.criteria if self.enforced is None else self.enforced
        verdicts = criteria_verdicts(self.coded, classes, criteria, self.sensitive, rows)
        ids: _Ints = np.unique(np.concatenate([v.failing_classes for v in verdicts] or
                                              [np.zeros(0, dtype=np.int64)]))
        return ids

    def prove_feasible(self, n: int) -> None:
        """Raises InfeasibleError naming the first criterion the whole table fails: no
        partition's classes can satisfy it then, since the table is the union of its classes
        and each criterion the whole table can fail (the l-diversities) holds in a union of
        classes that hold it (docs/design/privacy-model.md)."""
        for verdict in self.verdicts(np.zeros(n, dtype=np.int64)):
            if not verdict.satisfied:
                raise InfeasibleError(
                    f"{verdict.criterion} cannot be met: the whole table fails it on "
                    f"{verdict.column!r} (measure {verdict.value:g}), and it would hold in the "
                    "whole table if every class held it, so no partition satisfies it; relax "
                    "the criterion")

    def infeasible(self, n: int) -> list[CriterionVerdict]:
        """The criteria the whole table fails (none when every criterion can be met)."""
        return [v for v in self.verdicts(np.zeros(n, dtype=np.int64)) if not v.satisfied]


def _native_kind(criterion: Criterion) -> tuple[int, float, float]:
    """(kind, value, c) of ``criterion`` for :class:`NativeCriteria`, its kind named by the
    core (:func:`criterion_kind`)."""
    if isinstance(criterion, LDiversity):
        return criterion_kind(criterion.kind), float(criterion.l), float(criterion.c or 0.0)
    if isinstance(criterion, TCloseness):
        return criterion_kind("t_closeness"), criterion.t, 0.0
    if isinstance(criterion, BetaLikeness):
        return criterion_kind("beta_likeness"), criterion.beta, 0.0
    if not isinstance(criterion, DeltaDisclosure):
        raise TypeError(f"not a privacy criterion: {criterion!r}")
    return criterion_kind("delta_disclosure"), criterion.delta, 0.0


def enforce_criteria(classes: _Ints, columns: list[QIColumn], job: CriteriaJob,
                     audit: Audit) -> tuple[_Ints, int]:
    """``classes`` (an id per row) merged until every class satisfies each criterion of
    ``job``. Per round, each failing class is paired with the nearest class by QI centroid
    (among :data:`MERGE_WINDOW` on either side in centroid order) that it was not refused
    with; the pairs are merged and ``audit`` (the (epsilon, delta)^k check) refuses those
    whose union fails it, which then try their next nearest class (a class whose every
    candidate was refused merges with its nearest all the same, and its union merges
    further while it fails). Once no class fails, classes publishing the same tuple are
    merged (one equivalence class to an attacker) and checked again. A class the candidate
    left failing (ε, δ)^k is not this step's to repair. Only classes that changed are
    measured again. Returns the classes (0..m-1) and the rounds that merged; ends at one
    class at worst, which fails only where the whole table does."""
    classes = _dense(classes)
    original = classes
    n = classes.size
    codes = _scaled_codes(columns)
    rounds = 0
    refused: set[tuple[int, int]] = set()
    bad = np.zeros(n, dtype=bool)        # the row's class fails (as last measured)
    stale = np.ones(n, dtype=bool)       # the row's class changed since measured
    unaudited = np.zeros(n, dtype=bool)  # ... since audited, not by a refused merge's audit
    while True:
        m = int(classes.max()) + 1
        if stale.any():
            bad[stale] = np.isin(classes[stale], job.failing(classes, stale))
            stale[:] = False
        if unaudited.any():
            bad[unaudited] |= np.isin(classes[unaudited],
                                      audit(np.where(unaudited, classes, -1)))
            unaudited[:] = False
        if not bad.any():
            labels = summarize_groups(columns, classes).labels
            settled = _merge_equal_tuples(labels)[classes]
            if int(settled.max()) + 1 == m:
                return classes, rounds
            changed = np.bincount(settled, minlength=m) != np.bincount(
                np.unique(np.c_[settled, classes], axis=0)[:, 0], minlength=m)
            stale = unaudited = changed[settled]
            classes = settled
            continue
        if m == 1:
            return classes, rounds
        rounds += 1
        classes, changed_rows, unchecked_rows = _merge_round(
            classes, np.unique(classes[bad]), codes, original, refused, audit)
        stale, unaudited = changed_rows, unchecked_rows.copy()


def _scaled_codes(columns: list[QIColumn]) -> NDArray[np.float64]:
    """The rows' QI codes, each column scaled to [0, 1] by its range."""
    codes = np.column_stack([c.codes for c in columns]).astype(np.float64)
    low = codes.min(axis=0)
    span = codes.max(axis=0) - low
    scaled: NDArray[np.float64] = (codes - low) / np.where(span > 0, span, 1.0)
    return scaled


def _merge_round(classes: _Ints, failing: _Ints, codes: NDArray[np.float64], original: _Ints,
                 refused: set[tuple[int, int]], audit: Audit
                 ) -> tuple[_Ints, NDArray[np.bool_], NDArray[np.bool_]]:
    """One round of :func:`enforce_criteria`: the pairs proposed, their unions audited, and
    those not refused merged. ``refused`` (pairs of classes named by their smallest
    ``original`` id) grows by the pairs refused. Returns the classes, the rows of the new
    unions, and those of unions not audited as they are (a forced pair, or a union whose
    audit refused some of its pairs)."""
    m = int(classes.max()) + 1
    name = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(name, classes, original)
    partner, forced = _propose(classes, failing, codes, m, name, refused)
    component = _components(m, failing, partner)
    # Only the unions are audited (the other rows labelled -1).
    united = np.bincount(component, minlength=m) > 1
    trial = np.where(united[component[classes]], component[classes], -1)
    bad_labels = audit(trial)
    refused_pair = ~forced & np.isin(component[failing], bad_labels)
    for a, b in zip(name[failing[refused_pair]].tolist(), name[partner[refused_pair]].tolist(),
                    strict=True):
        refused.add((min(a, b), max(a, b)))
    keep = ~refused_pair
    final = _components(m, failing[keep], partner[keep])
    unchecked = np.zeros(m, dtype=bool)  # per final union: not audited as it is
    unchecked[final[failing[forced]]] = True
    unchecked[final[np.isin(component, bad_labels)]] = True
    labels = _dense(final)
    union = np.bincount(final, minlength=m) > 1
    return (labels[classes], union[final[classes]],
            (union & unchecked)[final[classes]])


def _dense(classes: _Ints) -> _Ints:
    """Ids 0..m-1 in ascending order of the given ids."""
    return np.unique(classes, return_inverse=True)[1].astype(np.int64).reshape(-1)


def _propose(classes: _Ints, failing: _Ints, codes: NDArray[np.float64], m: int, name: _Ints,
             refused: set[tuple[int, int]]) -> tuple[_Ints, NDArray[np.bool_]]:
    """Per failing class, the class to merge it with, and whether the pair is forced (every
    candidate refused or taken). Candidates: the :data:`MERGE_WINDOW` classes on either side
    in the order of the centroids of their QI ``codes`` (:func:`_scaled_codes`),
    nearest first (L1 between centroids); a greedy matching, smallest failing class first,
    so that merges pair classes instead of chaining runs of failing classes into one."""
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
    ranked_valid = np.take_along_axis(valid, np.argsort(distance, axis=1, kind="stable"), 1)
    taken = np.zeros(m, dtype=bool)
    partner = np.empty(len(failing), dtype=np.int64)
    forced = np.zeros(len(failing), dtype=bool)
    for i in np.lexsort((failing, sizes[failing])).tolist():
        own = int(failing[i])
        if taken[own]:  # already some failing class's partner this round
            partner[i], forced[i] = own, True
            continue
        options = ranked[i][ranked_valid[i]].tolist()
        free = [c for c in options if not taken[c]
                and (min(name[own], name[c]), max(name[own], name[c])) not in refused]
        partner[i] = free[0] if free else options[0]
        forced[i] = not free
        taken[own] = taken[partner[i]] = True
    return partner, forced


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
