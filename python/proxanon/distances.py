"""Every form the ``metric=`` parameter takes (docs/design/definitions.md), resolved to a neighbour
relation.

- Built-ins over components on a common scale: ``"l1"``, ``"l2"``, ``"linf"`` (weighted,
  weights default to 1/s), ``"min_component"`` (min_i w_i |x_i − y_i|, the XColor paper's
  Example 2; weights default to 1 and must be positive) and ``"variational"``
  (½ Σ |p_i − q_i| between probability vectors; takes no weights). ``"each"`` and
  ``"combination"`` name what is protected instead: ``"min_component"`` and ``"l1"``.
- A Python callable ``f(X, Y) -> distances`` over blocks of rows: called on blocks of
  *distinct* values (at most ``BLOCK`` × ``BLOCK`` at a time), never once per pair.
  It must be symmetric and return real distances >= 0 (anything else, NaN included, is
  refused naming the function); only the upper triangle of each block pair is used.
- A precomputed neighbour graph: a scipy.sparse n × n matrix whose nonzeros are the
  ε-neighbour pairs (made symmetric; the diagonal is ignored; ``epsilon`` is not needed;
  NaN entries are refused).
- :func:`taxonomy_distance`: the height of the lowest common ancestor over the tree height,
  for categorical values coded as leaf indices of a :class:`~proxanon.Hierarchy`.

Two values are neighbours when ``distance <= epsilon + NEIGHBOUR_SLACK * max(1, epsilon)``
(docs/design/privacy-model.md; ``proxanon._core.neighbour_threshold`` computes it, the slack is
1e-9).
"""

from __future__ import annotations

import math
import reprlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._engine import kernels
from proxanon.hierarchy import Hierarchy

BUILTINS = ("l1", "l2", "linf", "min_component", "variational")
#: Names of what is to be protected, each resolved to the built-in that protects it
#: (docs/guide/feasibility.md): "each" sensitive column's value alone (``min_component``:
#: rows close in any one column are neighbours), or their "combination" (``l1``).
INTENTS = {"each": "min_component", "combination": "l1"}
#: Every name ``metric=`` takes.
METRIC_NAMES = (*BUILTINS, *INTENTS)
#: Built-ins that satisfy the triangle inequality (advise's clique proof needs it).
TRUE_METRICS = ("l1", "l2", "linf", "variational")
#: Distinct values per block handed to a callable.
BLOCK = 2048

DistanceFunction = Callable[[NDArray[np.float64], NDArray[np.float64]], Any]


@dataclass(frozen=True)
class Relation:
    """A resolved ``metric=``: a built-in (``name``, ``weights``), a callable, or a graph."""

    kind: str                       # "builtin", "callable" or "graph"
    name: str                       # the native metric's name, or "callable" / "graph"
    label: str                      # how reports name it
    weights: NDArray[np.float64] | None = None
    function: DistanceFunction | None = None
    matrix: Any = None              # scipy.sparse matrix for kind == "graph"
    is_metric: bool = False         # the triangle inequality holds
    taxonomy: bool = False          # some column is compared by its taxonomy (componentwise)
    #: The graphs between values already built from this relation (a callable's or a given
    #: graph's), by the values and epsilon they were built for: one job builds each once
    #: (``proxanon._engine.relations.bind``).
    graphs: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def threshold(self, epsilon: float) -> float:
        """The largest distance of neighbours (the C++ core's one definition)."""
        return kernels.neighbour_threshold(epsilon)


def box_radius(metric: str, weight: float, distance: float) -> float:
    """The largest difference in one component alone (the others equal) at which two values
    are still within ``distance`` under the built-in ``metric`` weighing that component by
    ``weight`` > 0: ``distance / sqrt(weight)`` for L2, ``distance / weight`` for L1, L∞ and
    min-component (the weighted distances of docs/design/definitions.md)."""
    return distance / (math.sqrt(weight) if metric == "l2" else weight)


def is_sparse(value: Any) -> bool:
    # A sparse matrix can only exist once scipy.sparse is imported: a metric name or function
    # is told apart without importing it (0.1 s on a first call).
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(value))


def resolve(metric: Any, weights: Any, columns: int, rows: int) -> Relation:
    """Checks ``metric`` and ``weights`` for sensitive values of shape (rows, columns)."""
    if is_sparse(metric):
        if weights is not None:
            raise ValueError("weights do not apply to a precomputed neighbour graph")
        if metric.shape != (rows, rows):
            raise ValueError(
                f"the neighbour graph (metric) has shape {metric.shape} but there are {rows} "
                f"rows: it must be a {rows} x {rows} matrix whose nonzeros are neighbour pairs")
        entries = np.asarray(metric.tocoo().data)
        if entries.dtype.kind in "fc" and np.isnan(entries).any():
            raise ValueError(
                f"the neighbour graph (metric) has {int(np.isnan(entries).sum())} NaN "
                "entries; its nonzeros mark neighbour pairs, so a NaN is neither an edge nor "
                "a non-edge: store 1 for each neighbour pair and nothing (or 0) elsewhere")
        return Relation("graph", "graph", "precomputed graph", matrix=metric)
    if callable(metric):
        if weights is not None:
            raise ValueError("weights do not apply to a distance function; fold them into it")
        label = getattr(metric, "__name__", type(metric).__name__)
        return Relation("callable", "callable", label, function=metric,
                        is_metric=bool(getattr(metric, "is_metric", False)))
    if isinstance(metric, str) and metric.lower() in INTENTS:
        metric = INTENTS[metric.lower()]
    if not isinstance(metric, str) or metric.lower() not in BUILTINS:
        given = (f"{type(metric).__name__} of shape {metric.shape} (for neighbour pairs "
                 "given as a matrix, pass scipy.sparse.csr_matrix(distances <= epsilon))"
                 if hasattr(metric, "shape") else reprlib.repr(metric))
        raise ValueError(
            f"unknown metric {given}; choose one of {', '.join(METRIC_NAMES)}, a function "
            "f(X, Y) returning distances, or a scipy.sparse neighbour graph")
    name = metric.lower()
    if name == "variational":
        if weights is not None:
            raise ValueError("the variational distance takes no weights")
        return Relation("builtin", "l1", name, weights=np.full(columns, 0.5), is_metric=True)
    if name == "min_component":
        w = np.ones(columns) if weights is None else _validate.weights(weights, columns)
        if (w <= 0).any():
            raise ValueError("min_component weights must be > 0 (a zero weight would make "
                             "every pair of values neighbours)")
        return Relation("builtin", name, name, weights=w)
    return Relation("builtin", name, name, weights=_validate.weights(weights, columns),
                    is_metric=True)


def as_arguments(relation: Relation) -> tuple[Any, Any]:
    """The (metric, weights) arguments that resolve back to this relation."""
    if relation.kind == "graph":
        return relation.matrix, None
    if relation.kind == "callable":
        return relation.function, None
    if relation.label == "variational":
        return "variational", None
    return relation.label, relation.weights


def pairwise(relation: Relation, x: NDArray[np.float64], y: NDArray[np.float64]
             ) -> NDArray[np.float64]:
    """Distances between every row of x and every row of y (a built-in or a callable)."""
    if relation.function is not None:
        return _checked_distances(relation.function(x, y), relation.label, x, y)
    if relation.weights is None:
        raise TypeError(f"pairwise needs a built-in metric or a distance function, not a "
                        f"{relation.label}")
    diff = np.abs(x[:, None, :] - y[None, :, :])
    weighted = diff * relation.weights
    if relation.name == "l2":
        result = np.sqrt((weighted * diff).sum(axis=2))
    elif relation.name == "linf":
        result = weighted.max(axis=2)
    elif relation.name == "min_component":
        result = weighted.min(axis=2)
    else:
        result = weighted.sum(axis=2)
    return np.asarray(result, dtype=np.float64)


def _checked_distances(returned: Any, label: str, x: NDArray[np.float64],
                       y: NDArray[np.float64]) -> NDArray[np.float64]:
    """What a distance function returned for the blocks ``x`` and ``y``, as float64; refused,
    naming the function, unless it is one real distance >= 0 per pair (a complex part would
    be dropped, text misread, a negative distance would make every pair neighbours, and NaN
    would compare as "not neighbours")."""
    def refuse(problem: str) -> ValueError:
        return ValueError(f"the distance function {label!r} returned {problem}; it must return "
                          "one real distance >= 0 per pair of rows")

    raw = np.asarray(returned)
    if raw.dtype.kind == "c":
        raise refuse(f"complex numbers ({raw.dtype})")
    if raw.dtype.kind not in "biufO":
        raise refuse(f"values of dtype {raw.dtype}, which are not distances")
    try:
        result = raw.astype(np.float64)
    except (TypeError, ValueError):
        raise refuse("objects that are not real numbers") from None
    if result.shape != (x.shape[0], y.shape[0]):
        raise refuse(f"shape {result.shape} for blocks of {x.shape[0]} and {y.shape[0]} rows")
    for bad, problem in ((np.isnan(result), "NaN"), (result < 0, "a negative distance")):
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise refuse(f"{problem} ({result[i, j]}) between the values {x[i].tolist()} and "
                         f"{y[j].tolist()}")
    return result


def value_graph(relation: Relation, sens: NDArray[np.float64], epsilon: float
                ) -> tuple[NDArray[np.int32], NDArray[np.int64], NDArray[np.int32], int]:
    """The neighbour graph of a callable over the distinct values of ``sens``.

    Returns (value id per row, CSR offsets, CSR targets, number of calls made). The
    function is called on blocks of up to BLOCK distinct values, upper triangle only.
    """
    values, row_value = np.unique(sens, axis=0, return_inverse=True)
    count = values.shape[0]
    threshold = relation.threshold(epsilon)
    sources: list[NDArray[np.int64]] = []
    sinks: list[NDArray[np.int64]] = []
    calls = 0
    for lo in range(0, count, BLOCK):
        for hi in range(lo, count, BLOCK):
            block = pairwise(relation, values[lo:lo + BLOCK], values[hi:hi + BLOCK])
            calls += 1
            a, b = np.nonzero(block <= threshold)
            a, b = a + lo, b + hi
            keep = a < b
            sources.append(a[keep])
            sinks.append(b[keep])
    offsets, targets = _csr(np.concatenate(sources) if sources else np.zeros(0, np.int64),
                            np.concatenate(sinks) if sinks else np.zeros(0, np.int64), count)
    return row_value.reshape(-1).astype(np.int32), offsets, targets, calls


def row_graph(relation: Relation, rows: int
              ) -> tuple[NDArray[np.int32], NDArray[np.int64], NDArray[np.int32]]:
    """A precomputed n × n neighbour graph as CSR over rows (each row its own value)."""
    coo = relation.matrix.tocoo()
    a = np.asarray(coo.row, dtype=np.int64)
    b = np.asarray(coo.col, dtype=np.int64)
    nonzero = np.asarray(coo.data) != 0
    a, b = a[nonzero], b[nonzero]
    off = a != b
    a, b = np.minimum(a[off], b[off]), np.maximum(a[off], b[off])
    offsets, targets = _csr(a, b, rows)
    return np.arange(rows, dtype=np.int32), offsets, targets


def _csr(a: NDArray[np.int64], b: NDArray[np.int64], count: int
         ) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
    """Symmetric CSR adjacency from the undirected pairs a < b (duplicates removed)."""
    pairs = np.unique(np.stack([np.concatenate([a, b]), np.concatenate([b, a])], axis=1), axis=0)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs[:, 0], minlength=count), out=offsets[1:])
    return offsets, pairs[:, 1].astype(np.int32)


def taxonomy_distance(hierarchy: Hierarchy) -> DistanceFunction:
    """The taxonomy distance over leaf indices: height(LCA) / height of the tree.

    A leaf's height is 0 and a node's height is the longest path down to a leaf below it, so
    identical values are at distance 0, values meeting only at the root at distance 1, and
    with ``epsilon = 0`` the principle becomes exact-value diversity ((α, k)-anonymity and
    ℓ-diversity as special cases, paper §II-D). Values are ``Hierarchy.leaf_index`` codes,
    one column. The distance is an ultrametric, so advise's clique proof applies.
    """
    depth = np.asarray(hierarchy.depth, dtype=np.int64)
    leaves = hierarchy.n_leaves
    height = np.zeros(depth.shape[0], dtype=np.int64)
    parent = np.asarray(hierarchy.parent, dtype=np.int64)
    for leaf in range(leaves):  # walk up, recording the longest way down seen at each node
        node, below = leaf, 0
        while node >= 0:
            height[node] = max(height[node], below)
            node, below = parent[node], below + 1
    top = max(int(height.max()), 1)

    def distance(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        a = np.asarray(x, dtype=np.int64).reshape(-1)
        b = np.asarray(y, dtype=np.int64).reshape(-1)
        nodes = hierarchy.lca(a[:, None], b[None, :])
        return np.asarray(height[nodes] / top, dtype=np.float64)

    distance.__name__ = f"taxonomy({hierarchy.root})"
    distance.is_metric = True  # type: ignore[attr-defined]
    return distance


def componentwise(relation: Relation, taxonomies: list[Hierarchy | None]) -> Relation:
    """A built-in metric over components some of which are taxonomy leaf codes.

    A numeric component contributes |x − y|; a taxonomy component its taxonomy distance;
    they combine with the relation's weights as L1, L2, L∞ or min-component do. Used for
    tables whose categorical sensitive columns come with a hierarchy.
    """
    weights = relation.weights
    if weights is None:
        raise TypeError(f"componentwise combines the components of a built-in metric (l1, l2, "
                        f"linf, min_component); got the {relation.label}")
    parts = [taxonomy_distance(h) if h is not None else None for h in taxonomies]
    name = relation.name

    def distance(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        terms = []
        for j, part in enumerate(parts):
            d = (part(x[:, j], y[:, j]) if part is not None
                 else np.abs(x[:, j, None] - y[None, :, j]))
            terms.append(weights[j] * (d * d if name == "l2" else d))
        stack = np.stack(terms)
        if name == "linf":
            return np.asarray(stack.max(axis=0))
        if name == "min_component":
            return np.asarray(stack.min(axis=0))
        total = stack.sum(axis=0)
        return np.asarray(np.sqrt(total) if name == "l2" else total)

    label = f"{relation.label} with taxonomy distance"
    distance.__name__ = label
    return Relation("callable", "callable", label, function=distance,
                    is_metric=relation.is_metric, taxonomy=True)
