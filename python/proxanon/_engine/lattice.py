"""The full-domain recoding's lattice search (cpp/include/proxanon/global/lattice.hpp) as
the pipeline calls it: one native call per job over the table's weighted units."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from proxanon import _core
from proxanon._engine.options import Checks, criterion_kind
from proxanon._engine.relations import bind
from proxanon._engine.runs import MAX_GRAPH_ENTRIES


@dataclass(frozen=True)
class LatticeColumn:
    """One quasi-identifier's levels: ``levels[l][leaf]``, the node a leaf is published as at
    level l, and ``ncp[node]``, what a row so published costs."""

    levels: list[NDArray[np.int32]]
    ncp: NDArray[np.float64]


@dataclass(frozen=True)
class LatticeFound:
    """The search's answer: ``found``, the ``levels`` of the node, each row's class
    (``groups``, -1 suppressed), the rows ``suppressed``, the loss ``cost`` (the GCP
    numerator), the lattice's ``nodes`` and those ``checked``, the rows the top node leaves
    out (``top_suppressed``) and the native ``seconds``."""

    found: bool
    levels: tuple[int, ...]
    groups: NDArray[np.int64]
    suppressed: int
    cost: float
    nodes: int
    checked: int
    top_suppressed: int
    seconds: float


def run_lattice(sens: NDArray[np.float64], checks: Checks, columns: list[LatticeColumn],
                units: tuple[NDArray[np.int32], NDArray[np.int64], NDArray[np.int32]],
                max_suppressed: int) -> LatticeFound:
    """The node of lowest loss within ``max_suppressed`` rows under ``checks`` (``eps``
    None: k and the criteria alone); ``units``: leaf codes (units x d), and their rows as
    CSR offsets and rows."""
    relation, criteria = checks.relation, checks.criteria
    dissimilar = checks.eps is not None
    # Recursive (c, l)-diversity does not hold of unions of passing classes.
    monotone = not dissimilar and (criteria is None or all(
        spec[0] != criterion_kind("recursive") for spec in criteria.specs))
    leaf, offsets, rows = units
    raw = _core.lattice(
        bind(relation, sens, checks.eps if dissimilar else None).native, checks.k,
        checks.dlt if dissimilar and checks.dlt is not None else 0.0, 0,
        [(column.levels, column.ncp.tolist()) for column in columns],
        np.ascontiguousarray(leaf, dtype=np.int32).reshape(-1), offsets, rows,
        max_suppressed, monotone, max_graph_entries=MAX_GRAPH_ENTRIES,
        **({} if criteria is None else criteria.arguments()))
    return LatticeFound(found=bool(raw["found"]), levels=tuple(int(v) for v in raw["levels"]),
                        groups=np.asarray(raw["groups"], dtype=np.int64),
                        suppressed=int(raw["suppressed"]), cost=float(raw["cost"]),
                        nodes=int(raw["nodes"]), checked=int(raw["checked"]),
                        top_suppressed=int(raw["top_suppressed"]),
                        seconds=float(raw["seconds"]))
