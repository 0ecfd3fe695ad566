"""The Mondrian-(ε, δ) cut as ``anonymize`` publishes it: strict Mondrian's groups, those
publishing one tuple merged, classes specialized and giant classes' rows absorbed
(docs/design/mondrian.md), and its published table."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine.runs import MAX_GRAPH_ENTRIES, run_mondrian
from proxanon._pipeline.candidates import _cost, _cost_floor
from proxanon._pipeline.classes import (
    ClassChecks,
    KeyInputs,
    _absorb_classes,
    _merge_equal_tuples,
    _specialize_classes,
)
from proxanon._results.anonymization import GROUP_COLUMN, HIERARCHY_CUT
from proxanon._results.measures import GroupSummary, summarize_groups
from proxanon._results.partition import Partition
from proxanon.generalize import QIColumn


@dataclass(frozen=True)
class _Cut:
    """Mondrian's table: its partition, the published classes and their summary, the classes
    before absorption (the start a repair by the swap loop takes), and the merging rounds
    (``part.stats["merge_rounds"]``). ``released``: where the hierarchy cut suppressed rows,
    the input rows kept (``groups``, ``summary`` and ``start`` are theirs, in that order, and
    the summary's ranges those of the rows kept, as the published table shows them; ``part``
    is over every input row, -1 where suppressed); None where every row is. ``priced``: the
    GCP of those classes with every input row's ranges, where rows were suppressed."""

    part: Partition
    groups: NDArray[np.int64]
    summary: GroupSummary
    start: NDArray[np.int64]
    rounds: int  # merging rounds: 1 where groups publishing one tuple were merged, else 0
    released: NDArray[np.int64] | None = None
    priced: float | None = None

    def name(self) -> str:
        """How ``Report.method`` and ``Report.candidates`` name this cut: the hierarchy cut or
        strict Mondrian's median cut ("mondrian")."""
        return HIERARCHY_CUT if self.part.stats.get("cut") == "hierarchy" else "mondrian"

    def cost(self) -> float:
        """GCP over every input row and the input's ranges, a suppressed row counting as fully
        generalized: what cuts are compared by."""
        return self.priced if self.priced is not None else _cost(self.summary,
                                                                  self.part.groups.size)


#: What a cut's rows released read: their QI columns, checks and key inputs.
Released = Callable[[NDArray[np.int64]], tuple[list[QIColumn], ClassChecks, KeyInputs]]


def _mondrian_cut(columns: list[QIColumn], checks: ClassChecks, keys: KeyInputs, *,
                  threads: int = 1,
                  grid_checks: bool = True, max_graph_entries: int = MAX_GRAPH_ENTRIES,
                  follow_hierarchy: bool = False, suppress: int = 0,
                  released: Released | None = None) -> _Cut:
    """A cut's groups, those that publish the same values merged (one pass: a union keeps its
    tuple), classes of 2k rows or more specialized, giant classes' rows absorbed
    (:func:`_absorb_classes`), and their summary (``rounds``, also
    ``part.stats["merge_rounds"]``: 1 when the pass merged). O(n log n) per level of cuts.
    The cuts: the hierarchy cut (docs/design/mondrian.md#the-hierarchy-cut) and strict
    Mondrian's median cut where ``follow_hierarchy`` (the table job at δ = 0), the median
    cut alone otherwise (``method="mondrian"``, the paper's baseline); of two, the one
    :func:`_best_cut` picks, so the hierarchy cut is never published where it costs more
    than strict Mondrian's. (The default path's Mondrian-(ε, δ) candidate builds the same
    two beside XColor's run, and picks by :func:`_best_cut` too.) ``suppress``: rows
    the hierarchy cut may leave out where that lowers the cost (GCP over every row, a
    suppressed row costing 1), its table then finished over ``released(rows kept)``.
    ``keys``: ``_published_key_inputs`` of ``columns``; ``grid_checks``,
    ``max_graph_entries``: as :func:`proxanon._engine.runs.run_mondrian`; ``threads``:
    specialization's."""
    sens = checks.sens
    qi, taxonomies, _ = keys
    built = [run_mondrian(sens, checks.checks, qi, taxonomies, on_infeasible="best_effort",
                          started=time.perf_counter(), grid_checks=grid_checks,
                          max_graph_entries=max_graph_entries, follow_hierarchy=follow,
                          max_suppressed=suppress if follow else 0)
             for follow in ((True, False) if follow_hierarchy else (False,))]
    if not follow_hierarchy:
        return _finished_cut(columns, checks, keys, built[0], threads)
    return _best_cut(columns, checks, keys, RawCuts(median=built[1], hierarchy=built[0]),
                     threads, released)


@dataclass(frozen=True)
class RawCuts:
    """Mondrian's groups as the native cuts leave them: strict Mondrian's median cut and,
    where it was built, the hierarchy cut (docs/design/mondrian.md#the-hierarchy-cut)."""

    median: Partition
    hierarchy: Partition | None = None

    def remaining_violations(self) -> int:
        """The violating rows of the cut with fewer of them (the one a repair would start
        from)."""
        return min(int(part.stats["remaining_violations"])
                   for part in (self.median, self.hierarchy) if part is not None)


def _best_cut(columns: list[QIColumn], checks: ClassChecks, keys: KeyInputs, raw: RawCuts,
              threads: int, released: Released | None = None) -> _Cut:
    """Of ``raw``'s cuts, each finished, the one whose native verdict holds and whose table
    has the lowest GCP (the hierarchy cut on ties); where neither holds, the one with fewer
    violating rows. The hierarchy cut tried every split its checks allow: it is not
    specialized. The median cut is finished (specialized and absorbed) only where the
    classes those steps cannot change cost no more than the hierarchy cut's table."""
    if raw.hierarchy is None:
        return _finished_cut(columns, checks, keys, raw.median, threads)
    hierarchy, median, k = raw.hierarchy, raw.median, checks.checks.k
    cut = _suppressed_cut(columns, hierarchy, released, threads) if (
        hierarchy.suppressed_rows.size) else (
        _finished_cut(columns, checks, keys, hierarchy, threads, specialize=False))
    # Specialization and absorption keep the median cut's classes under 2k rows: where they
    # alone cost more than the hierarchy cut, the median cut is not finished.
    if cut.part.satisfied and _cost_floor(columns, median.groups, k, median.groups.size) > (
            cut.cost() * (1 + 1e-9)):
        return cut
    other = _finished_cut(columns, checks, keys, median, threads)
    return min((cut, other), key=lambda c: (
        not c.part.satisfied,
        0 if c.part.satisfied else int(c.part.stats["remaining_violations"]), c.cost()))


def _suppressed_cut(columns: list[QIColumn], part: Partition, released: Released | None,
                    threads: int) -> _Cut:
    """The hierarchy cut that left out ``part.suppressed_rows``, finished over the rows it
    kept (``released`` gives what they read; ``columns``: every input row's)."""
    if released is None:
        raise ValueError("a cut that suppresses rows needs what its released rows read")
    kept = np.flatnonzero(part.groups >= 0)
    cut = _finished_cut(*released(kept), replace(part, groups=part.groups[kept]), threads,
                        specialize=False)
    priced = _cost(summarize_groups(columns, cut.groups, rows=kept), part.groups.size)
    return replace(cut, part=replace(cut.part, groups=part.groups), released=kept,
                   priced=priced)


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
