"""Rows in group order, and where each group's run of rows starts: one pass, no sort by value."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from proxanon._engine import kernels


class GroupRuns(NamedTuple):
    """``labels[order]`` ascends; the group ``ids[i]`` holds the ``sizes[i]`` rows
    ``order[starts[i]:starts[i] + sizes[i]]`` (rows of one group keep their order)."""

    order: NDArray[np.int64]
    ids: NDArray[np.int64]
    starts: NDArray[np.int64]
    sizes: NDArray[np.int64]


def group_runs(labels: NDArray[np.int64]) -> GroupRuns:
    """The rows of every distinct label, as runs of a stable order by label. O(n): the order
    is a radix sort (``_core.order_by_label``), the runs are where the sorted labels change
    (``np.unique`` would sort them once more: 0.1 s at 3M rows)."""
    order = kernels.order_by_label(labels)
    ordered = labels[order]
    n = ordered.size
    change = np.empty(n, dtype=bool)
    if n:
        change[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
    starts = np.flatnonzero(change).astype(np.int64)
    sizes = np.diff(np.append(starts, n)).astype(np.int64)
    return GroupRuns(order, ordered[starts].astype(np.int64), starts, sizes)
