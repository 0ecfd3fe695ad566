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
                  part: Partition | None = None, threads: int = 1, grid_checks: bool = True,
                  max_graph_entries: int = MAX_GRAPH_ENTRIES) -> _Cut:
    """Strict Mondrian's groups, those that publish the same values merged (one pass: a union
    keeps its tuple), classes of 2k rows or more specialized, giant classes' rows absorbed
    (:func:`_absorb_classes`), and their summary (``rounds``, also
    ``part.stats["merge_rounds"]``: 1 when the pass merged). Three native calls; O(n log n)
    per level of cuts. ``keys``: ``_published_key_inputs`` of ``columns``; ``grid_checks``,
    ``max_graph_entries``: as :func:`proxanon._engine.runs.run_mondrian`; ``part``:
    Mondrian's groups where the caller has them already; ``threads``: specialization's."""
    sens, relation, k, eps, dlt, ell = checks.unpacked()
    qi, taxonomies, _ = keys
    if part is None:
        part = run_mondrian(sens, checks.checks,
                            qi, taxonomies, on_infeasible="best_effort",
                            started=time.perf_counter(), grid_checks=grid_checks,
                            max_graph_entries=max_graph_entries)
    # Mondrian's boxes are disjoint, but two can still publish the same LCA labels; the
    # union of such groups is one equivalence class.
    merged = _merge_equal_tuples(summarize_groups(columns, part.groups).labels)[part.groups]
    rounds = int(part.stats["m"] != int(merged.max()) + 1)
    # Median cuts on leaf codes rarely fall on a taxonomy node's boundary, so many boxes
    # publish one coarse node: split those classes top-down along the taxonomies.
    start, summary, _ = _specialize_classes(merged, np.ones(int(merged.max()) + 1, np.int64),
                                            columns, checks, keys, threads)
    absorbed = _absorb_classes(start, columns, checks, keys)
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
