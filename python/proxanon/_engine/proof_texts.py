"""The sentences of the feasibility proofs: the clique bound's and the degree bound's
reasons, the shapes of the cliques in words, and how δ and values are printed
(docs/design/proofs.md).

Every reason states the numbers it rests on (the clique or the row, the group sizes, t and
the capacity), so that a reader can check the proof by hand; a δ printed as a bound is
rounded down (``_down``), so that the printed value is itself allowed. The texts are pure
functions of their arguments: O(number of group sizes) each, no table is read.
"""

from __future__ import annotations

import math

from proxanon import _core
from proxanon._engine.cliques import _Clique

#: The words of :meth:`proxanon._engine.proofs.Advice.relaxable`'s parameters, as advice.
_RELAX_WORDS = {"epsilon": "a smaller epsilon (fewer neighbours)",
                "delta": "a smaller delta (a larger risk allowed)",
                "k": "a smaller k (more groups: a larger k lowers both bounds)"}


def _degree_reason(who: str, theta: int, n: int, k: int, q: int, delta: float,
                   any_infeasible: bool) -> str:
    """The degree bound's proof; ``who`` names the row."""
    size = k if any_infeasible else q
    need = size - 1 - _core.allowed_neighbours(size, delta)
    groups = ("any group of at least k = " f"{k} rows" if any_infeasible
              else f"every group XColor builds (at least {q} rows)")
    text = (
        f"{who} has {theta:,} epsilon-neighbours among the {n:,} rows, so only "
        f"{n - 1 - theta:,} rows that are not, but in {groups} it may have at most t "
        f"neighbours, so it needs {need:,} rows that are not: no "
    )
    if any_infeasible:
        return text + ("partition into groups of at least k rows satisfies (epsilon, delta)^"
                       f"k-dissimilarity with delta = {delta:g}")
    return text + (f"equitable partition into {n // k:,} groups satisfies (epsilon, delta)^"
                   f"k-dissimilarity with delta = {delta:g}; groups of {k} to {q - 1} rows "
                   "need fewer, so this bound does not rule out partitions that have them")


def _down(d: float) -> str:
    """δ rounded down to 4 decimals, so that the printed value is itself allowed."""
    return f"{math.floor(d * 10_000) / 10_000:.4f}"


def _value_text(value: tuple[float, ...]) -> str:
    return "(" + ", ".join(f"{x:.6g}" for x in value) + ")"


def _shape_note(clique: _Clique) -> str:
    """How the rows of a clique, named by the caller, are pairwise neighbours."""
    if clique.shape == "orthant":
        if len(clique.value) == 1:
            return "all within epsilon of one row's value, on one side of it"
        return ("all within epsilon of one row's values, on one side of them in every column "
                "the distance weighs")
    return {"value": "all with one value",
            "ball": "all within epsilon/2 of one row's values"}[clique.shape]


def _shape_text(shape: str) -> str:
    if shape.startswith("column "):  # _column_window's
        return (f"within epsilon of one another in component {shape.split()[1]} alone (under "
                "min_component, neighbours) from")
    return {"value": "with the value", "ball": "within epsilon/2 of",
            "orthant": "within epsilon of, and on one side in every component of,"}[shape]


def _reason(who: str, clique: int, group_sizes: tuple[tuple[int, int], ...], delta: float, *,
            capacity: int, capacity_any: int, m: int, k: int) -> str:
    """The clique bound's proof that no equitable partition into the ``m`` groups of
    ``group_sizes`` satisfies (``clique`` pairwise neighbours, named by ``who``, exceed
    their ``capacity``), and whether groups of at least ``k`` rows (``capacity_any``) are
    ruled out too."""
    kinds = ", ".join(
        f"{count:,} of {size:,} rows with t = {_core.allowed_neighbours(size, delta)}"
        for size, count in group_sizes
    )
    text = (
        f"{who} are {clique:,} pairwise neighbours, but a "
        f"satisfying group holds at most t + 1 of them, so the {m:,} groups XColor builds "
        f"(n // k; {kinds}) hold at most {capacity:,}: no equitable partition into {m:,} "
        f"groups satisfies (epsilon, delta)^k-dissimilarity with delta = {delta:g}"
    )
    if clique > capacity_any:
        text += (
            f"; and any partition into groups of at least k = {k} rows holds at most "
            f"{capacity_any:,} of them (a group of s rows holds at most t(s) + 1, and no "
            "group sizes of at least k adding up to n allow more), so no partition into "
            "groups of at least k rows satisfies it with these parameters"
        )
    else:
        text += (
            f"; partitions into fewer, larger groups may hold up to {capacity_any:,}, so this "
            "bound does not rule them out"
        )
    return text
