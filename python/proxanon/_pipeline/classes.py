"""The steps on classes that both of ``anonymize``'s paths share: published tuples' inputs,
groups merged by their tuple, classes specialized and absorbed, rows interchangeable between
groups and exchanged, the Mondrian-(ε, δ) cut and its table, and the independent audit of
classes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine import classes as native_classes
from proxanon._engine.audit import audit_owned
from proxanon._engine.options import Checks, NativeCriteria
from proxanon._engine.runs import run_specialize
from proxanon._results.audit import AuditReport
from proxanon._results.measures import GroupSummary, summarize_groups
from proxanon.distances import Relation, as_arguments
from proxanon.generalize import QIColumn

KeyInputs = tuple[NDArray[np.float64], list[tuple[NDArray[np.int32], int] | None],
                  list[NDArray[np.int32] | None]]


@dataclass(frozen=True, kw_only=True)
class ClassChecks:
    """What every published class must pass: the engine's :class:`Checks` (at least ``k``
    rows, (``eps``, ``dlt``)^k-dissimilarity under ``relation``, ``ell`` distinct values
    where given; docs/design/definitions.md) on the rows' sensitive values ``sens``."""

    sens: NDArray[np.float64]
    checks: Checks
    #: The criteria's own measure over the same rows (``CriteriaJob.failing``: the ids of
    #: the classes of a mask of whole classes that fail one), for the steps whose native
    #: code does not read the criteria (absorption); None without criteria.
    failing: Callable[[NDArray[np.int64], NDArray[np.bool_]], NDArray[np.int64]] | None = None

    @classmethod
    def on(cls, sens: NDArray[np.float64], relation: Relation, *, k: int, eps: float | None,
           dlt: float | None, ell: int | None = None,
           criteria: NativeCriteria | None = None,
           failing: Callable[[NDArray[np.int64], NDArray[np.bool_]], NDArray[np.int64]]
           | None = None) -> ClassChecks:
        """The checks of ``sens`` under ``relation`` (``criteria``: over the same rows, and
        ``failing`` their measure)."""
        return cls(sens=sens, checks=Checks(k=k, eps=eps, dlt=dlt, relation=relation, ell=ell,
                                            criteria=criteria), failing=failing)

    def unpacked(self) -> tuple[NDArray[np.float64], Relation, int, float | None, float | None,
                                int | None]:
        """The fields in the order (sens, relation, k, eps, dlt, ell)."""
        c = self.checks
        return self.sens, c.relation, c.k, c.eps, c.dlt, c.ell


def _specialize_classes(classes: NDArray[np.int64], formed_from: NDArray[np.int64],
                        columns: list[QIColumn], checks: ClassChecks,
                        inputs: KeyInputs | None = None, threads: int = 1
                        ) -> tuple[NDArray[np.int64], GroupSummary, NDArray[np.int64]]:
    """The published classes with every class of at least 2k rows split top-down into parts
    that pass the same checks and publish finer tuples no other class publishes (a taxonomy
    of several levels otherwise gathers many groups under one coarse node); see
    :func:`proxanon._engine.runs.run_specialize`. Returns the classes, their summary, and per class
    the ``formed_from`` of the class it came from. ``inputs``: ``_published_key_inputs``
    of ``columns`` where the caller has them; ``threads``: the threads the splits run on (the
    same classes for any number)."""
    split, _ = run_specialize(classes, checks.sens, checks.checks,
                              *(inputs or _published_key_inputs(columns)), threads=threads)
    return split, summarize_groups(columns, split), _carried(formed_from, classes, split)


def _carried(formed_from: NDArray[np.int64], classes: NDArray[np.int64],
             split: NDArray[np.int64]) -> NDArray[np.int64]:
    """Per class of ``split`` (each inside one class of ``classes``), the ``formed_from``
    of the class it came from."""
    carried = np.zeros(int(split.max()) + 1, dtype=np.int64)
    carried[split] = formed_from[classes]
    return carried


def _published_key_inputs(columns: list[QIColumn]) -> KeyInputs:
    """The QI codes, taxonomies and node keys (nodes with one label share a key) from which
    the native code computes published tuples."""
    qi = np.ascontiguousarray(np.column_stack([c.codes for c in columns]))
    return qi, [c.taxonomy_spec() for c in columns], _node_keys(columns)


def _node_keys(columns: list[QIColumn]) -> list[NDArray[np.int32] | None]:
    """Per taxonomy column, a key per node, shared by nodes with one label (None otherwise)."""
    return [None if c.hierarchy is None else
            pd.factorize(np.asarray(c.hierarchy.labels, dtype=object))[0].astype(np.int32)
            for c in columns]


def _absorb_classes(classes: NDArray[np.int64], columns: list[QIColumn], checks: ClassChecks,
                    inputs: KeyInputs | None = None, failing: bool = False,
                    summary: GroupSummary | None = None) -> NDArray[np.int64] | None:
    """The published classes with rows of giant classes (above the larger of 2k rows and
    1/200 of the table) moved into passing classes whose finer tuples already cover them;
    None when no row moved (the caller summarizes what it publishes). Every class keeps its
    id and its tuple, passing classes keep passing, failing ones are not touched, the
    table's loss only falls, no class grows past twice the cap and the largest class never grows
    (cpp/include/proxanon/publish/absorb.hpp). With ``failing`` (a table published as best effort),
    failing giant classes give rows too, to passing classes or to failing ones, and no
    failing class becomes riskier than it was nor the table's violating rows more. One
    native call, and none when no class is above the cap, nor, given the ``summary`` of
    ``classes``, when every class above it publishes its values exactly (NCP 0: a row it
    gives could only cost more elsewhere)."""
    sizes = np.bincount(classes)
    cap = native_classes.absorb_cap(classes.size, checks.checks.k)
    if sizes.max() <= cap or (summary is not None and not failing
                              and not summary.ncp[sizes > cap].any()):
        return None
    moved, count = run_specialize(classes, checks.sens, checks.checks,
                                  *(inputs or _published_key_inputs(columns)),
                                  step="absorb_failing" if failing else "absorb")
    if count and checks.failing is not None:
        # Absorption moves rows by the sensitive values alone: where a class it changed
        # fails a criterion, no row moves.
        changed = moved != classes
        touched = np.isin(moved, np.union1d(moved[changed], classes[changed]))
        if checks.failing(moved, touched).size:
            return None
    return moved if count else None


def _interchangeable_rows(sens: NDArray[np.float64], relation: Relation) -> NDArray[np.int64]:
    """An id per row, equal for rows that are interchangeable between groups: rows with
    identical sensitive values; with a row-indexed neighbour graph, rows whose neighbours
    (themselves included) are the same."""
    if relation.kind != "graph":
        return native_classes.row_ids(sens)
    from scipy import sparse  # only a graph relation needs it (a slow import)

    n = sens.shape[0]
    near = relation.matrix.astype(bool).tocsr() + sparse.identity(n, dtype=bool, format="csr")
    near.sort_indices()
    ids: NDArray[np.int64] = pd.factorize(pd.Series(
        [near.indices[near.indptr[i]:near.indptr[i + 1]].tobytes()
         for i in range(n)]))[0].astype(np.int64)
    return ids



def _merge_equal_tuples(labels: list[NDArray[np.object_]]) -> NDArray[np.int64]:
    """Class id per group such that groups with the same published tuple share a class;
    ids follow the first group of each class, so they are 0 .. classes-1 in group order."""
    frame = pd.DataFrame({str(j): column for j, column in enumerate(labels)})
    ids: NDArray[np.int64] = frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy(
        dtype=np.int64)
    return ids




def _audit_groups(sens: NDArray[np.float64], groups: NDArray[np.int64], relation: Relation,
                  k: int, eps: float | None, dlt: float | None, threads: int) -> AuditReport:
    """The independent audit of published groups (no distance check without epsilon)."""
    metric_arg, weights_arg = as_arguments(relation)
    return audit_owned(np.ascontiguousarray(sens, dtype=np.float64),
                       np.asarray(groups, dtype=np.int64), k=k,
                       epsilon=0.0 if eps is None else eps, delta=0.0 if dlt is None else dlt,
                       metric=metric_arg, weights=weights_arg, n_threads=threads)
