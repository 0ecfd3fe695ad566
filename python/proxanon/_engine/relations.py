"""The native relation of a run (``_core.Relation``, cpp/bindings/relation.hpp): the one place
where a resolved ``metric=`` becomes what the C++ core reads. A built-in metric crosses as
its ``_core.Metric`` with its weights and epsilon; a callable is evaluated here over the
distinct sensitive values into a graph between them; a precomputed graph of rows crosses as
its CSR. Every native entry point that reads the sensitive values (``partition``,
``session``, ``specialize``, ``mondrian``, ``lattice``) takes the object this builds.

Cost: O(1) for a built-in metric; a callable's graph costs O(u²) calls over u distinct
values (``distances.value_graph``), a row graph O(edges log edges), each once per job.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from proxanon import _core
from proxanon.distances import Relation, row_graph, value_graph


@dataclass(frozen=True)
class Bound:
    """A native relation, the distance function's calls that built it and the seconds they
    took (0 for a built-in metric)."""

    native: _core.Relation
    calls: int = 0
    seconds: float = 0.0


def metric(name: str) -> _core.Metric:
    """The native metric of a built-in name (``distances.BUILTINS`` resolved: "l1", "l2",
    "linf" or "min_component")."""
    return _core.Metric.__members__[name]


def structure(name: str) -> _core.Structure:
    """The native neighbour structure of ``neighbours=`` ("auto", "graph", "sorted" or "grid")."""
    return _core.Structure.__members__[name]


def bind(relation: Relation, sens: NDArray[np.float64], eps: float | None) -> Bound:
    """``relation`` over the sensitive values ``sens`` (float64, n × s) at ``eps``; with
    ``eps`` None no distance is checked, and only the values themselves cross (for distinct
    ℓ and the criteria). A callable's graph, or a given one, is built once per relation,
    values and epsilon (kept in ``relation.graphs``; the values are told apart by a hash of
    their bytes, O(n)): the steps of one job reuse it."""
    if eps is None or relation.weights is not None:
        weights = [] if relation.weights is None else relation.weights.tolist()
        name = relation.name if relation.weights is not None else "l1"
        return Bound(_core.Relation(sens, metric(name), weights, eps))
    key = (relation.kind, sens.shape, eps,
           hashlib.blake2b(np.ascontiguousarray(sens).tobytes(), digest_size=16).digest())
    built = relation.graphs.get(key)
    if built is not None:  # built before in this job: no calls, no time
        return Bound(built)
    tic = time.perf_counter()
    calls = 0
    if relation.kind == "callable":
        row_value, offsets, targets, calls = value_graph(relation, sens, eps)
    else:
        row_value, offsets, targets = row_graph(relation, sens.shape[0])
    native = _core.Relation(row_value, offsets, targets)
    relation.graphs[key] = native
    return Bound(native, calls, time.perf_counter() - tic)
