"""The tables ``anonymize`` weighs against one another: one way of publishing the input
(:class:`_Published`), the cost tables are compared by, a lower bound of it for a table not
yet finished, and which of two candidates is better."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from proxanon._results.audit import AuditReport
from proxanon._results.measures import GroupSummary, summarize_groups
from proxanon._results.partition import Partition
from proxanon.generalize import QIColumn


@dataclass(frozen=True)
class _Published:
    """One way of publishing the table: the engine's last partition, the classes an attacker
    sees (rows sharing a published QI tuple) and the independent audit of those classes."""

    part: Partition
    released: NDArray[np.int64]   # input rows in the release, ascending
    classes: NDArray[np.int64]    # published class per released row, 0 .. classes-1
    columns: list[QIColumn]       # the QI columns of the released rows
    summary: GroupSummary         # per class
    merged: NDArray[np.int64]     # first-run groups per class (> 1: merged by their tuple)
    rounds: int
    swaps: int
    initial_violations: int
    seconds: dict[str, float]
    check: AuditReport
    plain: bool                   # the plain partition's path (the fallback)


def _cost(summary: GroupSummary, n_all: int) -> float:
    """The GCP of a published table over all ``n_all`` input rows, a suppressed row counting
    as fully generalized (NCP 1 in every QI): the measure ``anonymize`` compares tables by.
    It tracks the count-query error (bench/UTILITY.md) and needs no query workload."""
    released = int(summary.sizes.sum())
    return (summary.gcp() * released + (n_all - released)) / n_all


#: Classes ``_cost_floor`` reads at most (every s-th class under 2k rows): at 3M census
#: rows 1/16 of them, 20 ms instead of the 0.3 s of a summary of all.
_FLOOR_CLASSES = 1 << 14


def _cost_floor(columns: list[QIColumn], classes: NDArray[np.int64], k: int,
                n_all: int) -> float:
    """A lower bound of :func:`_cost` for every table that specialization and absorption
    make of ``classes`` (a class per released row; ``columns`` over those rows). A class
    under 2k rows is never split and gives no rows (absorption only adds rows at its own
    tuple), so its rows keep their NCP; the bound sums it over every s-th such class, at
    most ``_FLOOR_CLASSES`` of them."""
    sizes = np.bincount(classes)
    stride = -(-sizes.size // _FLOOR_CLASSES)
    picked = sizes < 2 * k
    picked[np.arange(sizes.size) % stride != 0] = False
    rows = np.flatnonzero(picked[classes])
    released = classes.size
    share = 0.0
    if rows.size:
        dense = (np.cumsum(picked) - 1)[classes[rows]]
        summary = summarize_groups(columns, dense, rows=rows)
        share = float((summary.sizes[:, None] * summary.ncp).sum()) / (released * len(columns))
    return (share * released + (n_all - released)) / n_all


def _better(candidate: _Published, incumbent: _Published,
            acceptable: Callable[[_Published], bool]) -> bool:
    """Whether ``candidate`` publishes a better table: acceptable first, then fewer
    violating rows, then fewer rows left out (ties keep the incumbent)."""
    def rank(result: _Published) -> tuple[bool, int, int]:
        return (not acceptable(result), len(result.check.violating_rows),
                -result.released.size)
    return rank(candidate) < rank(incumbent)
