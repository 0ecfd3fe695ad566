"""The utility of any published table read from its labels (docs/design/utility.md): a QI
label stands for the leaves under the node it names (a taxonomy column; a categorical column
without one has the flat taxonomy, its values under ``*``), or the values of the range it
writes (``[lo-hi]``, a number, or ``*``: a numeric column). So a table from any tool is
measured by what it publishes, not by what its rows' values would allow. Cost: O(n d) plus
O(n) per query."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._results.workload import (
    Attribute,
    Coverage,
    WorkloadResult,
    check_workload,
    run_workload,
    sensitive_attribute,
)
from proxanon.generalize import encode_qi
from proxanon.hierarchy import Hierarchy

#: A published numeric range, ``[lo-hi]`` (either end may be negative).
_RANGE = re.compile(r"^\[\s*(-?[0-9.]+(?:[eE][-+]?\d+)?)\s*-\s*(-?[0-9.]+(?:[eE][-+]?\d+)?)\s*\]$")
#: The label of a fully generalized value.
ROOT = "*"


@dataclass(frozen=True)
class TableScore:
    """Utility of a published table from its labels (:func:`proxanon.evaluate.score_table`).

    ``classes``: rows sharing their published QI labels, suppressed rows left out;
    ``min_class`` and ``largest_share`` (of the released rows) describe them. ``gcp``: the mean
    over rows and QIs of the NCP of each published label (leaves under its node over all
    leaves, 0 for a leaf; a range's width over the original column's, every row's; a
    suppressed row costs 1);
    ``ncp``: that mean per column; ``discernibility``: Σ class size² plus n per suppressed
    row; ``count_query``: the count-query workload of
    :func:`proxanon.evaluate.count_query_error` (the same draws for the same seed), each
    label spreading its rows uniformly over what it covers and suppressed rows estimating
    nothing."""

    rows: int
    suppressed: int
    classes: int
    min_class: int
    largest_share: float
    gcp: float
    ncp: dict[str, float]
    discernibility: int
    count_query: WorkloadResult


@dataclass(frozen=True)
class _Read:
    """One QI column read: each row's domain index, and what its label covers and costs."""

    attribute: Attribute
    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    ncp: NDArray[np.float64]


def _taxonomy_column(name: str, values: pd.Series, released: NDArray[np.int64],
                     labels: NDArray[np.object_], tree: Hierarchy) -> _Read:
    every = tree.leaf_index(values.to_numpy(), column=name).astype(np.int64)
    leaves = every[released]
    pairs = pd.MultiIndex.from_arrays([labels, leaves])
    codes, distinct = pd.factorize(pairs)
    node_of = np.empty(len(distinct), dtype=np.int64)
    for j, (label, leaf) in enumerate(distinct):
        node = int(leaf)
        while node >= 0 and tree.labels[node] != label:
            node = int(tree.parent[node])
        if node < 0:
            raise ValueError(
                f"published value {label!r} of quasi-identifier column {name!r} is neither "
                f"the original value {tree.labels[int(leaf)]!r} nor a node above it in the "
                "column's hierarchy: pass the hierarchy the table was published with")
        node_of[j] = node
    nodes = node_of[codes]
    share = np.where(nodes < tree.n_leaves, 0.0,
                     np.asarray(tree.leaf_counts, dtype=np.float64)[nodes] / tree.n_leaves)
    return _Read(Attribute(name, tuple(tree.leaves), every),
                 np.asarray(tree.first_leaf, dtype=np.int64)[nodes],
                 np.asarray(tree.last_leaf, dtype=np.int64)[nodes], share)


def _numeric_column(name: str, values: pd.Series, released: NDArray[np.int64],
                    labels: NDArray[np.object_]) -> _Read:
    domain, index = np.unique(values.to_numpy(dtype=np.float64), return_inverse=True)
    raw = domain[index.reshape(-1)[released]]
    # A range is measured against the original column's extent, suppressed rows included
    # (what a published range hides of the column, as the root's bounds say).
    extent = float(domain[-1] - domain[0]) if domain.size else 0.0
    codes, distinct = pd.factorize(pd.Series(labels, dtype=object).astype(str))
    bounds = np.empty((len(distinct), 2))
    for j, label in enumerate(distinct):
        text = label.strip()
        found = _RANGE.match(text)
        try:
            bounds[j] = ((domain[0], domain[-1]) if text == ROOT
                         else (float(found.group(1)), float(found.group(2))) if found
                         else (float(text), float(text)))
        except ValueError:
            raise ValueError(
                f"published value {label!r} of numeric quasi-identifier column {name!r} is "
                f"neither a number, a range [lo-hi] nor {ROOT!r}") from None
    lo, hi = bounds[codes, 0], bounds[codes, 1]
    outside = (raw < lo) | (raw > hi)
    if outside.any():
        at = int(np.argmax(outside))
        raise ValueError(
            f"published value {labels[at]!r} of quasi-identifier column {name!r} does not "
            f"cover the original value {raw[at]!r} of its row (position {at}): pass the "
            "original table, rows in the published order")
    ncp = (hi - lo) / extent if extent > 0 else np.zeros(len(raw))
    return _Read(Attribute(name, tuple(domain.tolist()), index.reshape(-1).astype(np.int64)),
                 np.searchsorted(domain, lo, side="left").astype(np.int64),
                 np.searchsorted(domain, hi, side="right").astype(np.int64) - 1, ncp)


def score_table(original: pd.DataFrame, published: pd.DataFrame, *,
                quasi_identifiers: Sequence[str], sensitive: Sequence[str],
                hierarchies: Mapping[str, Hierarchy | str] | None = None,
                suppressed: Any = None, qd: int = 2, s: float = 0.1, n_queries: int = 1000,
                seed: int = 0) -> TableScore:
    """See :func:`proxanon.evaluate.score_table`."""
    n = len(original)
    qi, sens = list(quasi_identifiers), list(sensitive)
    missing = [c for c in (*qi, *sens) if c not in original.columns]
    if missing:
        raise ValueError(f"original lacks column(s) {missing}")
    left_out = (np.zeros(n, dtype=bool) if suppressed is None
                else np.asarray(suppressed, dtype=bool).reshape(-1))
    if left_out.size != n:
        raise ValueError(f"suppressed has {left_out.size:,} entries for {n:,} original rows")
    released = np.flatnonzero(~left_out)
    if len(published) not in (n, released.size):
        raise ValueError(
            f"published has {len(published):,} rows: pass one per original row ({n:,}), or "
            f"one per released row ({released.size:,}), in the original order")
    absent = [c for c in qi if c not in published.columns]
    if absent:
        raise ValueError(f"published lacks quasi-identifier column(s) {absent}")
    rows = published if len(published) == released.size else published.iloc[released]
    trees = {c: Hierarchy.from_csv(h, sep=";") if not isinstance(h, Hierarchy) else h
             for c, h in (hierarchies or {}).items() if c in qi}
    reads = []
    for c in qi:
        labels = rows[c].to_numpy(dtype=object)
        column = original[c]
        tree = trees.get(c)
        if tree is None and not (pd.api.types.is_numeric_dtype(column.dtype)
                                 and not isinstance(column.dtype, pd.CategoricalDtype)):
            # A categorical column without a taxonomy has the flat one anonymize gives it
            # (its values under "*"), in the same leaf order, so queries draw alike.
            tree = encode_qi(original, c, None).hierarchy
        reads.append(_numeric_column(c, column, released, labels) if tree is None
                     else _taxonomy_column(c, column, released, labels, tree))
    classes = rows[qi].astype(str).groupby(qi, sort=False).ngroup().to_numpy(dtype=np.int64)
    sizes = np.bincount(classes) if classes.size else np.zeros(0, dtype=np.int64)
    d, cut = len(qi), int(left_out.sum())
    ncp = {r.attribute.name: (float(r.ncp.sum()) + cut) / n for r in reads}
    qd, sel, count, seed = check_workload(qd, s, n_queries, seed, d)
    return TableScore(
        rows=n, suppressed=cut, classes=int(sizes.size),
        min_class=int(sizes.min()) if sizes.size else 0,
        largest_share=float(sizes.max() / released.size) if sizes.size else 0.0,
        gcp=sum(ncp.values()) / d, ncp=ncp,
        discernibility=int((sizes.astype(np.int64) ** 2).sum()) + cut * n,
        count_query=_workload(original, sens, reads, classes, released,
                              (qd, sel, count, seed)))


def _workload(original: pd.DataFrame, sens: list[str], reads: list[_Read],
              classes: NDArray[np.int64], released: NDArray[np.int64],
              settings: tuple[int, float, int, int]) -> WorkloadResult:
    """The count-query workload over every original row: released rows by their classes'
    coverage (the first row of a class stands for it: its rows share their labels), the
    others in one pseudo-class that estimates nothing."""
    n = len(original)
    hidden = int(classes.max()) + 1 if classes.size else 0
    groups = np.full(n, hidden, dtype=np.int64)
    groups[released] = classes
    first = np.full(hidden + 1, -1, dtype=np.int64)
    first[classes[::-1]] = np.arange(classes.size)[::-1]
    coverage = {}
    for r in reads:
        lo = np.zeros(hidden + 1, dtype=np.int64)
        hi = np.zeros(hidden + 1, dtype=np.int64)
        lo[:hidden], hi[:hidden] = r.lo[first[:hidden]], r.hi[first[:hidden]]
        coverage[r.attribute.name] = Coverage(lo, hi, (hi - lo + 1).astype(np.float64))
    qd, sel, count, seed = settings
    sens_attrs = [sensitive_attribute(original[c], c) for c in sens]
    return run_workload([r.attribute for r in reads], coverage, sens_attrs, groups, hidden,
                        anatomy=False, qd=qd, sel=sel, count=count, seed=seed)
