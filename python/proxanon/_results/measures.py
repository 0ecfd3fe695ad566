"""The utility measures of a partition, computed once for the report and for
:mod:`proxanon.evaluate` alike (docs/design/publishing.md, the cost of a published table):
per group and QI column, the published label, the paper's cost and NCP, and from them loss,
GCP, NCP per column, discernibility and the average group size.

Each column's cost in a group depends only on the group's smallest and largest code, so all
per-group numbers come from one sort of the rows by group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon._engine import kernels
from proxanon.generalize import QIColumn, format_instants, format_number
from proxanon.hierarchy import Hierarchy
from proxanon.tables import span_fraction


@dataclass(frozen=True)
class GroupSummary:
    """Per group and QI column: published label, the paper's cost and NCP
    (docs/design/publishing.md).

    The methods are the utility measures of the partition (docs/design/publishing.md), the one
    implementation that the report and :mod:`proxanon.evaluate` share. The labels are
    formatted when first read: a candidate table that is compared by its costs and not
    published never needs them (0.3 s of text at 3M rows).
    """

    cost: NDArray[np.float64]           # (groups, d): |G.A_i| / |A_i|
    ncp: NDArray[np.float64]            # (groups, d): as cost, but one category costs 0
    sizes: NDArray[np.int64]
    format_labels: Callable[[], list[NDArray[np.object_]]] = field(repr=False, compare=False)

    @cached_property
    def labels(self) -> list[NDArray[np.object_]]:
        """Per column, one published label per group."""
        return self.format_labels()

    def loss(self) -> float:
        """The paper's loss(G) = Σ_i |G.A_i| / |A_i|, averaged over groups."""
        return float(self.cost.sum(axis=1).mean())

    def gcp(self) -> float:
        """Global certainty penalty Σ_G |G|·Σ_i NCP_i(G) / (n·d), in [0, 1]."""
        n = int(self.sizes.sum())
        return float((self.sizes[:, None] * self.ncp).sum() / (n * self.ncp.shape[1]))

    def ncp_by_column(self, names: Sequence[str]) -> dict[str, float]:
        """Per QI column, its NCP averaged over rows."""
        n = int(self.sizes.sum())
        return {c: float((self.sizes * self.ncp[:, j]).sum() / n) for j, c in enumerate(names)}

    def discernibility(self) -> int:
        """Σ_G |G|² over the published groups."""
        return discernibility(self.sizes)

    def average_group_size(self) -> float:
        return average_group_size(self.sizes)


def discernibility(sizes: NDArray[np.int64]) -> int:
    """Σ_G |G|², the discernibility metric, from the group sizes."""
    return int((sizes.astype(np.int64) ** 2).sum())


def average_group_size(sizes: NDArray[np.int64]) -> float:
    """Rows per group."""
    return int(sizes.sum()) / sizes.size


def _pair_labels(lo: NDArray[Any], hi: NDArray[Any],
                 text: Callable[[NDArray[Any]], list[str]], joined: str) -> NDArray[np.object_]:
    """Per group, the label of its extremes: the value alone when ``lo == hi``, else the two
    joined as ``[a{joined}b]``. Each distinct value and each distinct pair is formatted once
    (``text`` formats an array of values), so the cost is O(m log m) numpy work plus Python
    work in the distinct pairs, not in the groups."""
    values, inverse = np.unique(np.concatenate([lo, hi]), return_inverse=True)
    words = text(values)
    first, last = inverse[:lo.size], inverse[lo.size:]
    pairs, pair_of = np.unique(first.astype(np.int64) * values.size + last, return_inverse=True)
    labels = np.array([words[a] if a == b else f"[{words[a]}{joined}{words[b]}]"
                       for a, b in zip((pairs // values.size).tolist(),
                                       (pairs % values.size).tolist(), strict=True)],
                      dtype=object)
    out: NDArray[np.object_] = labels[pair_of.reshape(-1)]
    return out


def summarize_groups(columns: list[QIColumn], groups: NDArray[np.int64],
                     rows: NDArray[np.int64] | None = None) -> GroupSummary:
    """Published labels and costs of every group, from each column's per-group extremes.
    ``rows``: the groups are those of these rows only (``groups`` gives one per entry),
    costed against the whole columns' ranges."""
    groups = np.asarray(groups)
    if rows is not None and len(rows) != groups.size:
        raise ValueError(f"{groups.size} group ids for {len(rows)} rows")
    if groups.size and groups.min() < 0:
        raise ValueError("group ids must be 0 .. m-1")
    sizes = np.bincount(groups) if groups.size else np.zeros(0, dtype=np.int64)
    if (sizes == 0).any():
        raise ValueError("group ids must be 0 .. m-1")
    order = kernels.order_by_label(groups)
    starts = np.r_[0, np.cumsum(sizes)[:-1]] if sizes.size else np.zeros(0, dtype=np.int64)
    texts: list[Callable[[], NDArray[np.object_]]] = []  # per column, its labels when asked
    cost = np.zeros((sizes.size, len(columns)))
    ncp = np.zeros((sizes.size, len(columns)))
    for j, whole in enumerate(columns):
        col = whole if rows is None else whole.subset(rows)
        ordered = col.codes[order]
        lo = np.minimum.reduceat(ordered, starts) if sizes.size else ordered
        hi = np.maximum.reduceat(ordered, starts) if sizes.size else ordered
        if col.hierarchy is None:
            cost[:, j] = span_fraction(lo, hi, float(whole.codes.min()),
                                       float(whole.codes.max()))
            ncp[:, j] = cost[:, j]
            if col.instants is None:
                texts.append(partial(_pair_labels, lo, hi, _format_numbers, "-"))
            else:
                exact = col.instants[order]
                texts.append(partial(_pair_labels, np.minimum.reduceat(exact, starts),
                                     np.maximum.reduceat(exact, starts),
                                     partial(format_instants, timezone=col.timezone), ", "))
        else:
            tree = col.hierarchy
            nodes = tree.lca(lo.astype(np.int64), hi.astype(np.int64))
            cost[:, j] = np.asarray(tree.leaf_counts)[nodes] / tree.n_leaves
            ncp[:, j] = np.where(lo == hi, 0.0, cost[:, j])
            texts.append(partial(_node_labels, tree, nodes))
    return GroupSummary(cost=cost, ncp=ncp, sizes=sizes.astype(np.int64),
                        format_labels=lambda: [text() for text in texts])


def _format_numbers(values: NDArray[Any]) -> list[str]:
    return [format_number(x) for x in values]


def _node_labels(tree: Hierarchy, nodes: NDArray[np.int64]) -> NDArray[np.object_]:
    labels: NDArray[np.object_] = np.asarray(tree.labels, dtype=object)[nodes]
    return labels
