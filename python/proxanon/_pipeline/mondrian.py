"""The Mondrian-(ε, δ) cut as ``anonymize`` publishes it: strict Mondrian's groups, those
publishing one tuple merged, classes specialized and giant classes' rows absorbed
(docs/design/mondrian.md), and its published table."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine.runs import MAX_GRAPH_ENTRIES, run_mondrian
from proxanon._pipeline.candidates import _cost_floor
from proxanon._pipeline.classes import (
    ClassChecks,
    KeyInputs,
    _absorb_classes,
    _merge_equal_tuples,
    _specialize_classes,
)
from proxanon._results.anonymization import GROUP_COLUMN
from proxanon._results.measures import GroupSummary, summarize_groups
from proxanon._results.partition import Partition
from proxanon.generalize import QIColumn


@dataclass(frozen=True)
class _Cut:
    """Mondrian's table: its partition, the published classes and their summary, the classes
    before absorption (the start a repair by the swap loop takes), and the merging rounds
    (``part.stats["merge_rounds"]``)."""

    part: Partition
    groups: NDArray[np.int64]
    summary: GroupSummary
    start: NDArray[np.int64]
    rounds: int  # merging rounds: 1 where groups publishing one tuple were merged, else 0


def _mondrian_cut(columns: list[QIColumn], checks: ClassChecks, keys: KeyInputs, *,
                  part: Partition | None = None, threads: int = 1,
                  grid_checks: bool = True, max_graph_entries: int = MAX_GRAPH_ENTRIES,
                  follow_hierarchy: bool = False) -> _Cut:
    """A cut's groups, those that publish the same values merged (one pass: a union keeps its
    tuple), classes of 2k rows or more specialized, giant classes' rows absorbed
    (:func:`_absorb_classes`), and their summary (``rounds``, also
    ``part.stats["merge_rounds"]``: 1 when the pass merged). O(n log n) per level of cuts.
    ``part``: a cut's groups where the caller has them already, else built here: the
    hierarchy cut (docs/design/mondrian.md#the-hierarchy-cut) and strict Mondrian's median
    cut where ``follow_hierarchy`` (the table job at δ = 0), the median cut alone
    otherwise (``method="mondrian"``, the paper's baseline, and the default path's
    Mondrian-(ε, δ) candidate). Of several, the one whose native verdict holds and whose
    finished table has the lowest GCP is returned (the first on ties), so the hierarchy
    cut is never published where it costs more than strict Mondrian's. ``keys``:
    ``_published_key_inputs`` of ``columns``; ``grid_checks``, ``max_graph_entries``: as
    :func:`proxanon._engine.runs.run_mondrian`; ``threads``: specialization's."""
    sens, relation, k, eps, dlt, ell = checks.unpacked()
    qi, taxonomies, _ = keys
    if part is not None:
        return _finished_cut(columns, checks, keys, part, threads)
    built = [run_mondrian(sens, checks.checks, qi, taxonomies, on_infeasible="best_effort",
                          started=time.perf_counter(), grid_checks=grid_checks,
                          max_graph_entries=max_graph_entries, follow_hierarchy=follow)
             for follow in ((True, False) if follow_hierarchy else (False,))]
    if not follow_hierarchy:
        return _finished_cut(columns, checks, keys, built[0], threads)
    # The hierarchy cut tried every split its checks allow: no specialization after it.
    cut = _finished_cut(columns, checks, keys, built[0], threads, specialize=False)
    median = built[1]
    # Specialization and absorption keep the median cut's classes under 2k rows: where they
    # alone cost more than the hierarchy cut, the median cut is not finished.
    if cut.part.satisfied and _cost_floor(columns, median.groups, k, median.groups.size) > (
            cut.summary.gcp() * (1 + 1e-9)):
        return cut
    other = _finished_cut(columns, checks, keys, median, threads)
    return min((cut, other), key=lambda c: (not c.part.satisfied, c.summary.gcp()))


def _finished_cut(columns: list[QIColumn], checks: ClassChecks, keys: KeyInputs,
                  part: Partition, threads: int, specialize: bool = True) -> _Cut:
    """One cut's groups merged where they publish one tuple, specialized (where
    ``specialize``) and absorbed."""
    # A cut's boxes are disjoint, but two can still publish the same LCA labels; the
    # union of such groups is one equivalence class.
    first = summarize_groups(columns, part.groups)
    owner = _merge_equal_tuples(first.labels)
    merged = owner[part.groups]
    rounds = int(part.stats["m"] != int(merged.max()) + 1)
    # Median cuts on leaf codes rarely fall on a taxonomy node's boundary, so many boxes
    # publish one coarse node: split those classes top-down along the taxonomies.
    if specialize:
        start, summary, _ = _specialize_classes(
            merged, np.ones(int(merged.max()) + 1, np.int64), columns, checks, keys, threads)
    else:  # the first summary stands where no group was merged or renumbered
        unchanged = np.array_equal(owner, np.arange(owner.size))
        start, summary = merged, first if unchanged else summarize_groups(columns, merged)
    absorbed = _absorb_classes(start, columns, checks, keys, summary=summary)
    groups, summary = ((absorbed, summarize_groups(columns, absorbed)) if absorbed is not None
                       else (start, summary))
    return _Cut(replace(part, stats={**part.stats, "merge_rounds": rounds}), groups, summary,
                start, rounds)


class _Unwanted(Exception):
    """Work beside the caller's that the caller no longer needs (it has ended)."""


def _mondrian_table(data: pd.DataFrame, columns: list[QIColumn], cut: _Cut,
                    unwanted: threading.Event | None = None) -> tuple[pd.DataFrame, float]:
    """The published table of Mondrian's groups (every row, its QIs generalized, the group
    column added), and the seconds it took. Raises _Unwanted once ``unwanted`` is set
    (checked between columns: work beside the caller's ends within a column's time)."""
    tic = time.perf_counter()
    table = data.copy()
    for col, labels in zip(columns, cut.summary.labels, strict=True):
        if unwanted is not None and unwanted.is_set():
            raise _Unwanted
        table[col.name] = pd.Series(labels[cut.groups], index=table.index, dtype=object)
    table[GROUP_COLUMN] = cut.groups
    return table, time.perf_counter() - tic
