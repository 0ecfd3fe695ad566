"""The proofs of ``advise``, ``partition`` and ``anonymize``: what the neighbour graph says about
(k, ε, δ) before XColor runs.

Everything here follows from the ε-neighbour graph Ψ (one vertex per row, an edge between
rows within ε, docs/design/privacy-model.md) and the sizes of the groups XColor builds: m = n // k
groups of ``n // m`` or ``n // m + 1`` rows (docs/design/xcolor.md). Write ``q = n // m`` for the
smaller size, ``t(s) = floor((1 - δ)(s - 1) + 1e-9)`` for the neighbours a member of an s-row group
may have, and Θ for the maximum degree of Ψ.

Sufficient conditions (XColor will succeed)
    *Inequality (4)* of the paper, ``Θ <= (n/2)(1 - (1 - 1/k)δ)``, is Lemma 2's condition
    ``Θ <= m(t + 1)/2`` with ``m = n/k`` and the floor in t dropped. It is what the paper
    offers as the guarantee (``max_delta_guaranteed``), but it assumes k divides n and drops
    the floor, so it is weaker than the lemma's hypothesis (n = 40, k = 10, δ = 0.45: (4)
    allows Θ <= 11.9, the lemma needs Θ <= 10) and is not a proof. It does fail: 9 rows
    with values (2/3 ×5, 0 ×2, 1, 1/3), k = 2, ε = 0.3, δ = 0.2 have Θ = 4 <= 4.05, a
    satisfying partition exists, and XColor ends with violations.

    *Lemma 2 with integer t and unequal sizes* (``max_delta_proven``): if
    ``Θ·(q + q' - 1) < q·m·(t(q) + 1)``, where q' is the largest group size, then every
    violation in every equitable colouring has an exchangeable partner, so each swap lowers
    the number of monochromatic edges by at least one and XColor ends with no violation.
    Proof (the paper's, keeping sizes and floors): let v in V have ``D_V(v) >= t(V) + 1``,
    let V_1..V_g be the classes movable for v (``D_Vi(v) =: d_i <= t(V_i)``) and assume none
    is exchangeable. Every other class V' (V included) holds ``>= t(V') + 1 >= t(q) + 1``
    neighbours of v, so ``Σ d_i <= Θ - (m - g)(t(q) + 1)``. Not exchangeable means, for each
    v' in V_i, ``D_{V∖v}(v') >= D_V(v) - d_i >= t(q) + 1 - d_i``, and also ``>= 0``. Summing
    over the ``|V_i| >= q`` members of each V_i gives at least
    ``q·Σ_i (t(q) + 1 - d_i) >= q·(m(t(q) + 1) - Θ)``. The same sum counts, for each of the
    ``|V| - 1 <= q' - 1`` rows of ``V∖v``, its neighbours in the V_i, so it is at most
    ``(q' - 1)·Θ``. The condition makes the lower bound exceed the upper one: contradiction.
    With q' = q this is ``Θ < q·m(t + 1)/(2q - 1)``, slightly weaker than the paper's
    ``Θ <= m(t + 1)/2``; with q' = q + 1 it is ``Θ < m(t(q) + 1)/2``. Trivially, too, no row
    can violate when every group size s has ``t(s) >= min(Θ, s - 1)`` (e.g. at δ = 0).
    Groups of one row (k = 1) have risk 1 (docs/design/privacy-model.md), so with k = 1 success is
    promised at δ = 0 only (the engine refuses k = 1 with δ > 0).

A necessary condition (a proof of infeasibility)
    For the true metrics (weighted L1, L2, L∞ with weights >= 0 obey the triangle
    inequality), rows within ε/2 of one row's value x are pairwise within ε: a clique of c
    rows in Ψ. A group that holds c_G of them gives each c_G - 1 neighbours, so a satisfying
    group holds at most ``t(G) + 1`` of them, and a satisfying partition needs
    ``c <= Σ_G (t(G) + 1)``.

    - For the equitable partition into m groups (what XColor builds) the right-hand side is
      ``capacity(δ)``, computed exactly from the sizes.
    - For *any* partition into g groups of at least k rows (so g <= m), since
      ``t(s) <= (1 - δ)(s - 1) + 1e-9`` and a sum of floors is at most the floor of the sum,
      ``Σ_G (t(G) + 1) <= floor((1 - δ)(n - g) + g·1e-9) + g``. Going from g to g + 1 groups
      changes the floor by at least -1 (it loses ``1 - δ - 1e-9 < 1``) and adds 1, so the
      bound is non-decreasing in g and largest at g = m:
      ``capacity_any(δ) = floor((1 - δ)(n - m) + E) + m``, with E = 2e-9·(n + m) covering the
      1e-9 terms and float rounding. If the clique exceeds it, no partition of the table into
      groups of at least k rows satisfies (ε, δ)^k-dissimilarity.

    - A tighter bound for any partition: a group of s rows holds at most u(s) = t(s) + 1
      clique rows, u(s)/s per row, so any partition holds at most ``floor(n·u(s*)/s*)``
      where s* >= k has the largest ratio (an integer comparison; the ratio is at most
      ``α + (1 - α)/s`` up to the 1e-9 allowance, α = 1 - δ, so only sizes up to where that
      falls below the best are compared). ``capacity_any`` is the smaller of the two.

    Orthants are cliques without the triangle inequality. The ε-neighbours y of a row a
    that lie on one side of it in every weighted component (y_i >= a_i in some
    components, y_i <= a_i in the others) are pairwise neighbours under Linf, and under
    every built-in distance when only one component is weighted: two such rows differ in
    each component by no more than the farther of them from a, and a computed difference
    never exceeds a larger one (rounding is monotone), so each weighted term of their
    distance is at most the larger one with a. With one weighted component the largest
    orthant over every anchor is the largest clique (the interval graph's), found by two
    pointers over the sorted values in O(n log n). Under Linf on several components, every
    row's orthants are counted on tables of at most ORTHANT_ALL_ROWS rows, and those of
    SAMPLED_CENTRES rows beyond.

    The degree bound: s - 1 - t(s) never falls as s grows (s - 1 gains 1, t(s) at most 1),
    so a row with Θ ε-neighbours, in a group of s >= k rows, needs at least
    ``k - 1 - t(k)`` of its ``n - 1 - Θ`` non-neighbours with it: when
    ``n - 1 - Θ < k - 1 - t(k)`` no partition into groups of at least k rows satisfies
    (with q = n // m for k, no equitable partition into m groups).

    On 1,200 small random tables (``tests/test_small_instances.small_instances``, seeds
    11-14), these bounds together prove 93% of those that exhaustive search shows
    infeasible (the ε/2 balls with the closed form alone: 46%); so does
    ``infeasibility_proof`` (the early verdict), which takes Θ from the sorted values in
    one dimension and from SAMPLED_CENTRES rows on several instead of every row.

    The ball radius r is set a little below ε/2 (see ``_clique_radius``) so that the neighbour
    threshold at r (docs/design/privacy-model.md), ``thr(r) = r + 1e-9·max(1, r)``, counted twice,
    still fits inside the threshold at ε with room for float rounding: ``2·thr(r) = ε +
    0.5e-9·max(1, ε)``, which is at most ``thr(ε) - 0.4e-9·max(1, ε)`` (checked in the code). Rows
    at exactly ε/2 from the centre are inside the ball.

Everything is deterministic and the caller's arrays are never modified.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _core, _validate
from proxanon._display import Summarized
from proxanon._engine.options import NativeRun
from proxanon._engine.verdicts import proven_before_repair, too_dense
from proxanon._errors import GraphTooDenseError, InfeasibleError
from proxanon.distances import Relation, box_radius, row_graph, value_graph

#: Metrics for which the triangle inequality holds (weighted Lp with weights >= 0), so
#: the ε/2-ball argument proves a clique.


@dataclass(frozen=True, repr=False)
class Advice(Summarized):
    """What the neighbour graph proves about (k, ε, δ); see the module docstring.

    Attributes
    ----------
    n, k, m, epsilon, metric, delta
        The inputs (``m = n // k`` groups; ``delta`` is None when not given).
    group_sizes
        ``((size, number of groups), ...)`` of the equitable partition, smaller size first.
    max_degree, row, value
        Θ: the most ε-neighbours any row has; the lowest row index attaining it; its value.
    max_delta_guaranteed
        The largest δ in [0, 1] for which inequality (4), ``Θ <= (n/2)(1 - (1 - 1/k)δ)``,
        holds; None if it fails even at δ = 0 (Θ > n/2). This is the paper's stated
        guarantee, but (4) drops the floor in t and assumes k divides n, so it is only an
        approximation of Lemma 2 and does not guarantee success (module docstring gives a
        failing instance); above it success is possible but not guaranteed. For a proven
        guarantee use ``max_delta_proven``.
    max_delta_proven
        The largest δ in [0, 1] for which Lemma 2 with integer t and the actual group sizes
        holds, or no row can violate at all (module docstring); with any δ at most this,
        XColor is proven to end with every group satisfying (ε, δ)^k-dissimilarity. At
        least 0: at δ = 0 every group allows ``|G| - 1`` neighbours.
    clique_radius
        Radius r (about ε/2) of the balls that give cliques; None when ε is too small for a
        positive radius (then only rows with identical values are counted as balls).
    clique_shape
        What the clique is: ``"ball"`` (the rows within r of ``clique_value``),
        ``"orthant"`` (the ε-neighbours of ``clique_value`` on one side of it in every
        component: Linf, or one weighted component) or ``"value"`` (rows with that value).
    clique_size, clique_value, clique_rows
        The largest clique found (all pairwise ε-neighbours; with one weighted component
        the largest there is), its centre or anchor value, and its rows' indices, ascending.
    largest_delta_not_refuted
        The largest δ in [0, 1] with ``capacity(δ) >= clique_size`` and no row refuted by
        the degree bound: for every larger δ no equitable partition into m groups satisfies
        the principle. Not refuted is not a promise: a δ at most this (and above
        ``max_delta_proven``) may still fail, as XColor is a heuristic and the bounds see
        one clique and one row at a time.
    provably_infeasible
        When delta is given: ``clique_size > capacity(delta)`` or the degree bound, i.e. no
        partition into ``n // k`` equitable groups (what XColor builds) can satisfy the
        principle.
    infeasible_for_any_partition
        When delta is given: ``clique_size > capacity_any(delta)`` or the degree bound for
        groups of at least k rows, i.e. no partition into groups of at least k rows at all
        can satisfy it.
    reason
        When ``provably_infeasible``: a sentence with the clique (or the row) and the
        numbers.
    """

    n: int
    k: int
    m: int
    epsilon: float
    metric: str
    delta: float | None
    group_sizes: tuple[tuple[int, int], ...]
    max_degree: int
    row: int
    value: tuple[float, ...]
    max_delta_guaranteed: float | None
    max_delta_proven: float
    clique_radius: float | None
    clique_shape: str
    clique_size: int
    clique_value: tuple[float, ...]
    clique_rows: NDArray[np.int64] = field(repr=False, compare=False)
    largest_delta_not_refuted: float
    provably_infeasible: bool | None
    infeasible_for_any_partition: bool | None
    reason: str | None

    def _summary_fields(self) -> list[tuple[str, Any]]:
        return [("n", self.n), ("k", self.k), ("m", self.m), ("epsilon", self.epsilon),
                ("metric", self.metric), ("delta", self.delta),
                ("max_degree", self.max_degree), ("clique_size", self.clique_size),
                ("max_delta_proven", self.max_delta_proven),
                ("largest_delta_not_refuted", self.largest_delta_not_refuted),
                ("provably_infeasible", self.provably_infeasible)]

    def capacity(self, delta: float) -> int:
        """``Σ_G (t(G) + 1)`` over the equitable groups: at most this many rows of a clique
        fit into ``n // k`` groups that satisfy (ε, δ)^k-dissimilarity."""
        d = _delta(delta, self.k, self.epsilon, self.n)
        return _capacity(self.group_sizes, d)

    def capacity_any(self, delta: float) -> int:
        """An upper bound on ``Σ_G (t(G) + 1)`` over every partition into groups of at least
        k rows (module docstring)."""
        d = _delta(delta, self.k, self.epsilon, self.n)
        return _capacity_any(self.n, self.k, d)

    def explain(self, rows: str) -> str | None:
        """``reason`` with the clique's rows described by ``rows`` (e.g. by their values in
        the table's own units, which only the caller knows); None unless provably
        infeasible."""
        if not self.provably_infeasible or self.delta is None:
            return None
        capacity, capacity_any = self.capacity(self.delta), self.capacity_any(self.delta)
        clique_any = self.clique_size > capacity_any
        if self.clique_size <= capacity or (self.infeasible_for_any_partition and not clique_any):
            return self.reason  # the degree bound's: about one row, not the clique
        return _reason(rows, self.clique_size, self.group_sizes, self.delta,
                       capacity=capacity, capacity_any=capacity_any, m=self.m, k=self.k)

    def __str__(self) -> str:
        sizes = " or ".join(f"{size:,}" for size, _ in self.group_sizes)
        lines = [
            f"n={self.n:,} rows, k={self.k} -> m={self.m:,} groups of {sizes} rows; "
            f"epsilon={self.epsilon:g} ({self.metric})",
            f"  max degree Θ = {self.max_degree:,} epsilon-neighbours "
            f"(row {self.row}, value {_value_text(self.value)})",
        ]
        if self.max_delta_guaranteed is None:
            lines.append("  inequality (4) Θ <= n/2·(1 - (1 - 1/k)·δ) fails for every δ "
                         f"(Θ > n/2 = {self.n / 2:,g})")
        else:
            lines.append("  inequality (4) Θ <= n/2·(1 - (1 - 1/k)·δ) holds for "
                         f"δ <= {_down(self.max_delta_guaranteed)} (the paper's bound)")
        lines.append("  proven (Lemma 2 with integer t): XColor succeeds for "
                     f"δ <= {_down(self.max_delta_proven)}")
        lines.append(
            f"  clique: {self.clique_size:,} rows {_shape_text(self.clique_shape)} "
            f"{_value_text(self.clique_value)} are pairwise neighbours; {self.m:,} groups can "
            f"hold them (and every row its non-neighbours) only for "
            f"δ <= {_down(self.largest_delta_not_refuted)}"
            + (" (groups of one row: δ = 0 only)" if self.k == 1 else "")
        )
        if self.delta is not None:
            if self.provably_infeasible:
                lines.append(f"  at δ = {self.delta:g}: provably infeasible: {self.reason}")
            else:
                proven = self.delta <= self.max_delta_proven
                lines.append(
                    f"  at δ = {self.delta:g}: not ruled out (the clique of "
                    f"{self.clique_size:,} fits the capacity {self.capacity(self.delta):,}); "
                    + ("success is proven" if proven else "success is possible, not guaranteed")
                )
        refuted, proven_up_to = (_down(self.largest_delta_not_refuted),
                                 _down(self.max_delta_proven))
        lines.append(
            f"  to try: δ <= {proven_up_to} is proven to succeed; δ above {refuted} is proven "
            f"to fail in {self.m:,} groups; in between nothing is proven either way (not "
            "refuted is not a promise: XColor may still end with violations)"
            + "".join(f"; {_RELAX_WORDS[name]}" for name in self.relaxable()
                      if name != "delta")
        )
        return "\n".join(lines)

    def relaxable(self) -> tuple[str, ...]:
        """The parameters that can still be lowered to make the setting easier, of
        ``("epsilon", "delta", "k")``: not epsilon at 0, not delta at 0 (or not given), not k
        at 1. Advice names only these."""
        return tuple(name for name, lowerable in (
            ("epsilon", self.epsilon > 0), ("delta", bool(self.delta)), ("k", self.k > 1))
            if lowerable)


#: The words of :meth:`Advice.relaxable`'s parameters, as advice.
_RELAX_WORDS = {"epsilon": "a smaller epsilon (fewer neighbours)",
                "delta": "a smaller delta (a larger risk allowed)",
                "k": "a smaller k (more groups: a larger k lowers both bounds)"}



def advice(sens: NDArray[np.float64], relation: Relation, k: int, eps: float,
           dlt: float | None, threads: int) -> Advice:
    """:func:`proxanon.advise` on checked arguments (``sens`` float64 of shape (n, s), read
    and never modified; ``relation`` resolved; ``dlt`` None when no delta was given): Θ, the
    bounds and, with ``dlt``, the verdict. See the module docstring."""
    n = sens.shape[0]
    metric = relation.label
    m = n // k
    group_sizes = tuple(sorted(Counter(_core.equitable_sizes(n, m)).items()))

    graph = _graph(sens, relation, eps, threads)
    values = np.asarray(graph["values"], dtype=np.float64)
    degree = np.asarray(graph["value_degree"], dtype=np.int64)
    first_row = _first_rows(np.asarray(graph["row_value"], dtype=np.int64), len(values))
    theta = int(degree.max())
    top = int(np.argmin(np.where(degree == theta, first_row, n)))

    clique = _largest_clique(sens, relation, eps, threads, graph)
    clique_size = clique.size

    def guaranteed(d: float) -> bool:
        return theta <= inequality_4_bound(n, k, d)

    q, q_max = group_sizes[0][0], group_sizes[-1][0]

    def proven(d: float) -> bool:
        # No row can violate when every group allows min(Θ, |G| - 1) neighbours ...
        if all(_core.allowed_neighbours(size, d) >= min(theta, size - 1)
               for size, _ in group_sizes):
            return True
        # ... and otherwise Lemma 2 (integer t, unequal sizes) gives every violation a swap.
        t = _core.allowed_neighbours(q, d)
        return bool(theta * (q + q_max - 1) < q * m * (t + 1))

    def not_refuted(d: float) -> bool:
        return _capacity(group_sizes, d) >= clique_size and not _too_few_others(theta, n, q, d)

    # At δ = 0, t(G) = |G| - 1: capacity(0) = n >= any clique, and no row can violate.
    not_refuted_max = _largest_true_from_zero(not_refuted)
    proven_max = _largest_true_from_zero(proven)
    # Groups of one row: risk 1 (docs/design/privacy-model.md), allowed only at delta = 0.
    if k == 1:
        proven_max = not_refuted_max = 0.0

    infeasible = any_infeasible = None
    reason = None
    if dlt is not None:
        infeasible, any_infeasible, reason = _verdict(clique, group_sizes, n, k, dlt)
        # The degree bound (one row with too few non-neighbours), where it proves more.
        degree_any = _too_few_others(theta, n, k, dlt)
        if (degree_any and not any_infeasible) or (
                not infeasible and _too_few_others(theta, n, q, dlt)):
            infeasible, any_infeasible = True, degree_any
            who = f"row {int(first_row[top])} {_value_text(tuple(float(x) for x in values[top]))}"
            reason = _degree_reason(who, theta, n, k, q, dlt, degree_any)
        if k == 1 and _validate.single_row_violates(dlt) and not infeasible:
            infeasible = True
            reason = ("with k = 1 the equitable groups hold one row each, and a group of one "
                      "row has risk 1 (docs/design/privacy-model.md), above 1 - δ: use k >= 2 "
                      "(the engine refuses k = 1 with δ > 0)")

    return Advice(
        n=n, k=k, m=m, epsilon=eps, metric=metric, delta=dlt, group_sizes=group_sizes,
        max_degree=theta, row=int(first_row[top]),
        value=tuple(float(x) for x in values[top]),
        max_delta_guaranteed=_largest_true(guaranteed),
        max_delta_proven=proven_max,
        clique_radius=_clique_radius(eps) if relation.is_metric else None,
        clique_shape=clique.shape, clique_size=clique_size, clique_value=clique.value,
        clique_rows=clique.rows,
        largest_delta_not_refuted=not_refuted_max,
        provably_infeasible=infeasible, infeasible_for_any_partition=any_infeasible,
        reason=reason,
    )


def _graph(sens: NDArray[np.float64], relation: Relation, radius: float,
           threads: int) -> dict[str, NDArray[Any]]:
    """Distinct values, multiplicities, value id per row and row degree per value (and, for
    a distance function or a precomputed graph, the CSR). A built-in metric is held in the
    structure ``partition`` would pick: many distinct values never make a stored graph."""
    if relation.kind == "builtin":
        try:
            return _core.value_relation(sens, relation.name, _weights(relation), radius,
                                        threads=threads)
        except GraphTooDenseError as exc:
            raise too_dense(radius, relation, exc) from None
    if relation.kind == "callable":
        row_value, offsets, targets, _ = value_graph(relation, sens, radius)
        values = np.unique(sens, axis=0)
    else:
        row_value, offsets, targets = row_graph(relation, sens.shape[0])
        values = sens
    counts = np.bincount(row_value, minlength=len(offsets) - 1).astype(np.int64)
    summed = np.concatenate(([0], np.cumsum(counts[targets])))
    degree = counts - 1 + summed[offsets[1:]] - summed[offsets[:-1]]
    return {"values": values, "counts": counts, "row_value": row_value, "offsets": offsets,
            "targets": targets, "value_degree": degree}


@dataclass(frozen=True)
class _Clique:
    """Rows proven pairwise ε-neighbours: a ball of radius about ε/2 around ``value`` (a
    metric), the ε-neighbours of ``value`` on one side of it in every component (an
    orthant), or one value."""

    radius: float | None
    size: int
    value: tuple[float, ...]
    rows: NDArray[np.int64]
    shape: str = "ball"  # "ball", "orthant", "value" or "column j" (_column_window)


def _largest_clique(sens: NDArray[np.float64], relation: Relation, eps: float, threads: int,
                    graph: dict[str, NDArray[Any]] | None = None,
                    window: dict[str, int] | None = None, sampled: bool = False) -> _Clique:
    """The largest such clique (ties: the one whose value a row holds first; a ball before
    an orthant); ``graph`` is the ε relation when the caller has it (used for the
    identical-value cliques). With one weighted component the largest orthant (a window of
    values from an anchor up) is the largest clique of all, found in O(n log n) (``window``:
    ``_core.largest_window``'s answer when the caller has it). ``sampled``: the caller has
    tried ``_sampled_clique`` already, whose orthants are those counted here beyond
    ORTHANT_ALL_ROWS rows, so they are not counted again."""
    if _weighted(relation, sens.shape[1]) == 1:
        if window is None:
            window = _core.largest_window(sens, relation.name, _weights(relation), eps)
        return _orthant(sens, relation, eps, window["anchor"], threads)
    # The ball of radius ~eps/2 is a clique only under the triangle inequality; without it
    # only identical values (always neighbours) are a proven clique.
    radius = _clique_radius(eps) if relation.is_metric else None
    if radius is None:
        source = graph if graph is not None else _graph(sens, relation, eps, threads)
        clique = np.asarray(source["counts"], dtype=np.int64)
    else:
        source = _graph(sens, relation, radius, threads)
        # The rows in the closed ball of a value: its row degree there, plus itself.
        clique = np.asarray(source["value_degree"], dtype=np.int64) + 1
    values = np.asarray(source["values"], dtype=np.float64)
    row_value = np.asarray(source["row_value"], dtype=np.int64)
    first_row = _first_rows(row_value, len(values))
    size = int(clique.max())
    centre = int(np.argmin(np.where(clique == size, first_row, len(sens))))
    value = tuple(float(x) for x in values[centre])
    if radius is not None and relation.kind == "builtin":
        found = _ball(sens, relation, radius, int(first_row[centre]), value, threads)
    else:
        members = [centre] if radius is None else _ball_members(source, centre)
        rows = np.flatnonzero(np.isin(row_value, members)).astype(np.int64)
        rows.setflags(write=False)
        found = _Clique(radius, size, value, rows, "ball" if radius is not None else "value")
    if _orthants_apply(relation, sens.shape[1]) and not (sampled and len(sens) > ORTHANT_ALL_ROWS):
        centres = (np.arange(len(sens)) if len(sens) <= ORTHANT_ALL_ROWS
                   else _sampled_centres(len(sens)))
        found = max(found, _largest_orthant(sens, relation, eps, centres, threads),
                    key=lambda c: c.size)
    one_column = _column_window(sens, relation, eps, threads)
    if one_column is not None and one_column.size > found.size:
        found = one_column
    return found


def _column_window(sens: NDArray[np.float64], relation: Relation, eps: float,
                   threads: int) -> _Clique | None:
    """Under min_component on several columns, rows within epsilon of one another in one
    column alone are pairwise neighbours (the distance is the smallest weighted component):
    the largest window of one column's values (equal values included), over the columns.
    None under any other metric. O(n log n) per column (``_core.largest_window``)."""
    if relation.name != "min_component" or relation.weights is None or sens.shape[1] < 2:
        return None
    best: _Clique | None = None
    for j in range(sens.shape[1]):
        column = np.ascontiguousarray(sens[:, j:j + 1])
        weight = [float(relation.weights[j])]
        anchor = int(_core.largest_window(column, relation.name, weight, eps)["anchor"])
        rows = _core.balls(column, relation.name, weight, eps, [anchor], members=True,
                           threads=threads, shape="orthants")["rows"].astype(np.int64)
        rows.setflags(write=False)
        if best is None or rows.size > best.size:
            best = _Clique(None, int(rows.size), tuple(float(x) for x in sens[anchor]), rows,
                           f"column {j}")
    return best


#: Tables of at most this many rows have the orthant cliques of every row counted (Linf on
#: several components; O(2^s · n · rows in a slab)); larger ones those of SAMPLED_CENTRES rows.
ORTHANT_ALL_ROWS = 2048


def _weighted(relation: Relation, columns: int) -> int:
    """Components of positive weight of a built-in relation (0 for any other)."""
    if relation.kind != "builtin":
        return 0
    return columns if relation.weights is None else int(np.count_nonzero(relation.weights > 0))


def _orthants_apply(relation: Relation, columns: int) -> bool:
    """Whether orthants are cliques: Linf (each component on its own), or one weighted
    component under any built-in distance; at most 6 weighted components (2^s orthants)."""
    weighted = _weighted(relation, columns)
    return 0 < weighted <= 6 and (weighted == 1 or relation.name == "linf")


def _largest_orthant(sens: NDArray[np.float64], relation: Relation, eps: float,
                     centres: NDArray[np.int64], threads: int) -> _Clique:
    """The largest orthant clique anchored at one of ``centres`` (ties: the first)."""
    sizes = _core.balls(sens, relation.name, _weights(relation), eps, centres.tolist(),
                        threads=threads, shape="orthants")["sizes"]
    return _orthant(sens, relation, eps, int(centres[int(np.argmax(sizes))]), threads)


def _orthant(sens: NDArray[np.float64], relation: Relation, eps: float, anchor: int,
             threads: int) -> _Clique:
    """The largest orthant clique anchored at row ``anchor``, its rows ascending."""
    rows = _core.balls(sens, relation.name, _weights(relation), eps, [anchor], members=True,
                       threads=threads, shape="orthants")["rows"].astype(np.int64)
    rows.setflags(write=False)
    return _Clique(None, int(rows.size), tuple(float(x) for x in sens[anchor]), rows, "orthant")


def _sampled_centres(n: int) -> NDArray[np.int64]:
    return np.unique(np.linspace(0, n - 1, min(n, SAMPLED_CENTRES)).astype(np.int64))


#: Rows (evenly spaced in the table) whose ε/2 balls ``infeasibility_proof`` counts first on
#: several components, where the exact clique needs every value's ball (a grid scan each,
#: long where the values crowd): most of them fall where the rows are densest, so a proof
#: usually needs no more.
SAMPLED_CENTRES = 256


def _sampled_clique(sens: NDArray[np.float64], relation: Relation, eps: float,
                    threads: int) -> _Clique | None:
    """The largest ε/2 ball (and, where they are cliques, orthant) around SAMPLED_CENTRES
    rows (a clique, not the largest one), O(SAMPLED_CENTRES · n); None without a built-in
    metric or a positive radius."""
    radius = _clique_radius(eps)
    if radius is None or relation.kind != "builtin" or not relation.is_metric:
        return None
    centres = _sampled_centres(sens.shape[0])
    sizes = _core.balls(sens, relation.name, _weights(relation), radius,
                        centres.tolist(), threads=threads)["sizes"]
    best = int(centres[int(np.argmax(sizes))])
    found = _ball(sens, relation, radius, best, tuple(float(x) for x in sens[best]), threads)
    if _orthants_apply(relation, sens.shape[1]):
        found = max(found, _largest_orthant(sens, relation, eps, centres, threads),
                    key=lambda c: c.size)
    return found


def _ball(sens: NDArray[np.float64], relation: Relation, radius: float, centre: int,
          value: tuple[float, ...], threads: int) -> _Clique:
    """The rows within ``radius`` of row ``centre`` (a built-in metric), O(n)."""
    rows = _core.balls(sens, relation.name, _weights(relation), radius, [centre],
                       members=True, threads=threads)["rows"].astype(np.int64)
    rows.setflags(write=False)
    return _Clique(radius, int(rows.size), value, rows)


def _weights(relation: Relation) -> list[float]:
    return [] if relation.weights is None else relation.weights.tolist()


def _verdict(clique: _Clique, group_sizes: tuple[tuple[int, int], ...], n: int, k: int,
             delta: float, describe: Callable[[_Clique], str] | None = None,
             ) -> tuple[bool, bool, str | None]:
    """(no equitable partition into n // k groups satisfies, no partition into groups of at
    least k does, the proof as a sentence or None), from the clique alone; ``describe``
    names the clique's rows in the proof (default: the ball's centre value)."""
    m = n // k
    capacity = _capacity(group_sizes, delta)
    capacity_any = _capacity_any(n, k, delta)
    infeasible = clique.size > capacity
    any_infeasible = clique.size > capacity_any
    reason = None
    if infeasible:
        who = (f"{describe(clique)} ({_shape_note(clique)})" if describe is not None
               else f"rows {_shape_text(clique.shape)} {_value_text(clique.value)}")
        reason = _reason(who, clique.size, group_sizes, delta, capacity=capacity,
                         capacity_any=capacity_any, m=m, k=k)
    return infeasible, any_infeasible, reason


def infeasibility_proof(sens: NDArray[np.float64], relation: Relation, k: int, eps: float,
                        delta: float, any_partition: bool,
                        describe: Callable[[NDArray[np.int64]], str] | None = None,
                        threads: int = 1) -> str | None:
    """The clique bound, then the degree bound, without the ε relation (the cliques of
    ``_largest_clique`` in the structure partition would use; the degrees of one weighted
    component's rows, or of SAMPLED_CENTRES rows on several): the proof that no equitable
    partition into n // k groups (``any_partition``: no partition into groups of at least k)
    satisfies, or None. ``describe(rows)`` names rows (ascending indices) in the caller's
    terms, e.g. by their values in the table's own units. On several components the shapes
    around SAMPLED_CENTRES rows are tried first: where they prove it, the proof costs
    O(SAMPLED_CENTRES · n) and no structure is built."""
    n = sens.shape[0]
    group_sizes = tuple(sorted(Counter(_core.equitable_sizes(n, n // k)).items()))
    q = group_sizes[0][0] if group_sizes else k

    def proof(clique: _Clique) -> str | None:
        infeasible, any_infeasible, reason = _verdict(
            clique, group_sizes, n, k, delta,
            None if describe is None else lambda c: describe(c.rows))
        return reason if (any_infeasible if any_partition else infeasible) else None

    # One weighted component: the window and the degree come from one pass.
    window = (_core.largest_window(sens, relation.name, _weights(relation), eps)
              if _weighted(relation, sens.shape[1]) == 1 else None)
    # Several components: a few balls first (O(n) each), the exact largest only if needed.
    sampled = _sampled_clique(sens, relation, eps, threads) if sens.shape[1] > 1 else None
    found = None if sampled is None else proof(sampled)
    if found is None:
        found = proof(_largest_clique(sens, relation, eps, threads, window=window,
                                      sampled=sampled is not None))
    if found is not None:
        return found
    most = _most_neighbours(n, k if any_partition else q, delta)
    witness = (_degree_witness(sens, relation, eps, threads, window)
               if _degree_possible(sens, relation, eps, most) else None)
    if witness is None or witness[1] <= most:
        return None
    row, theta = witness
    who = (describe(np.array([row], dtype=np.int64)) if describe is not None
           else f"row {row} {_value_text(tuple(float(x) for x in sens[row]))}")
    return _degree_reason(who, theta, n, k, q, delta, _too_few_others(theta, n, k, delta))


def _degree_possible(sens: NDArray[np.float64], relation: Relation, eps: float,
                     above: int) -> bool:
    """False when no row can have more than ``above`` ε-neighbours (a quick test before
    looking for one, O(n) on one component): such a row and its neighbours, at least
    ``above + 2`` rows, lie within the box radius r of it along every weighted component,
    so some run of that many consecutive values of the component spans at most 2r. Only
    the runs from the lowest ``n - above - 1`` values can, so only those are compared."""
    n = sens.shape[0]
    run = above + 2
    if relation.kind != "builtin" or relation.weights is None or not 2 <= run <= n:
        return bool(run <= n)
    if relation.name == "min_component":
        return True  # one close component makes a neighbour: no component bounds a degree
    j = int(np.argmax(relation.weights))
    weight = float(relation.weights[j])
    if weight <= 0:
        return True
    threshold = relation.threshold(eps)
    radius = box_radius(relation.name, weight, threshold)
    starts = n - run + 1  # runs [i, i + run) for i < starts
    column = sens[:, j]
    ends = np.partition(column, [starts - 1, n - starts])
    low = np.sort(ends[:starts])
    high = np.sort(ends[n - starts:])
    return bool(((high - low) <= 2.0 * radius * (1.0 + 1e-9) + 1e-300).any())


def _degree_witness(sens: NDArray[np.float64], relation: Relation, eps: float,
                    threads: int, window: dict[str, int] | None) -> tuple[int, int] | None:
    """A row and its number of ε-neighbours, for the degree bound without the ε relation:
    with one weighted component the row of the largest degree (``window``, two pointers
    over the sorted values), with several the best of SAMPLED_CENTRES rows (their
    ε-balls); None without a built-in distance."""
    if relation.kind != "builtin" or sens.shape[0] == 0:
        return None
    if window is not None:
        return int(window["degree_row"]), int(window["degree"])
    centres = _sampled_centres(sens.shape[0])
    sizes = _core.balls(sens, relation.name, _weights(relation), eps, centres.tolist(),
                        threads=threads)["sizes"]
    best = int(np.argmax(sizes))
    return int(centres[best]), int(sizes[best]) - 1


def _ball_members(ball: dict[str, NDArray[Any]], centre: int) -> list[int]:
    """The values within the radius of ``ball`` (a CSR relation) of value ``centre``, itself
    included."""
    start, stop = int(ball["offsets"][centre]), int(ball["offsets"][centre + 1])
    return [centre] + [int(u) for u in ball["targets"][start:stop]]


def _first_rows(row_value: NDArray[np.int64], values: int) -> NDArray[np.int64]:
    """Lowest row index holding each value."""
    first = np.full(values, len(row_value), dtype=np.int64)
    np.minimum.at(first, row_value, np.arange(len(row_value), dtype=np.int64))
    return first


def _clique_radius(eps: float) -> float | None:
    """A ball radius r whose neighbour threshold, doubled, stays inside ε's.

    With ``thr(x) = x + 1e-9·max(1, x)`` (docs/design/privacy-model.md), rows a, b with computed
    distances ``d(x, a), d(x, b) <= thr(r)`` have ``d(a, b) <= 2·thr(r)`` by the triangle
    inequality. r is chosen so that ``2·thr(r) = ε + 0.5e-9·max(1, ε)``: distances of exactly ε/2
    are inside the ball, and ``thr(ε) - 2·thr(r) = 0.5e-9·max(1, ε)`` absorbs float rounding in
    the three computed distances (relative error about s·1e-16 each). None when that r is
    not positive (ε below about 1.5e-9); then only identical values form the clique.
    """
    scale = max(1.0, eps)
    target = eps / 2.0 + 0.25e-9 * scale  # the wanted thr(r)
    radius = target - 1e-9 * max(1.0, eps / 2.0)
    if radius <= 0.0:
        return None
    # max(1, r) was approximated by max(1, ε/2); make sure the margin really holds.
    limit = _core.neighbour_threshold(eps) - 0.4e-9 * scale
    while 2.0 * _core.neighbour_threshold(radius) > limit:
        radius -= 1e-12 * scale
    return radius


def _capacity(group_sizes: tuple[tuple[int, int], ...], delta: float) -> int:
    return sum(count * (_core.allowed_neighbours(size, delta) + 1)
               for size, count in group_sizes)


def _capacity_any(n: int, k: int, delta: float) -> int:
    """The smaller of two upper bounds on ``Σ_G (t(G) + 1)`` over the partitions of n rows
    into groups of at least k (module docstring): ``floor((1 - δ)(n - m) + E) + m`` and
    ``floor(n · u(s*) / s*)``, where u(s) = t(s) + 1 and s* has the largest u(s) / s."""
    m = n // k
    slack = 2e-9 * (n + m)
    closed = max(int(math.floor((1.0 - delta) * (n - m) + slack)), 0) + m
    # u(s) / s <= α + 2e-9 + (1 - α + 1e-8) / s (α = 1 - δ; t(s) <= α(s - 1) + 1e-9 up to
    # rounding), which falls with s: once it is below the best ratio, no larger s beats it.
    alpha = 1.0 - delta
    best_u, best_s = _core.allowed_neighbours(k, delta) + 1, k
    for size in range(k + 1, min(n, k + _RATIO_SIZES) + 2):
        if size > n:
            break  # every size was compared
        if (alpha + 2e-9 + (1.0 - alpha + 1e-8) / size) * best_s < best_u:
            break  # no larger size has a larger ratio
        u = _core.allowed_neighbours(size, delta) + 1
        if u * best_s > best_u * size:
            best_u, best_s = u, size
    else:
        return closed  # sizes left unchecked: only the closed form is proven
    return min(closed, n * best_u // best_s)


#: Group sizes compared for the ratio bound of ``_capacity_any`` (a few dozen suffice unless
#: δ is within about 1e-4 of 0).
_RATIO_SIZES = 100_000


def _most_neighbours(n: int, size: int, delta: float) -> int:
    """The degree bound: a row with Θ ε-neighbours has n - 1 - Θ rows that are not; a group
    of s >= ``size`` rows holding it needs s - 1 - t(s) of them, at least
    ``size - 1 - t(size)`` (s - 1 - t(s) never falls as s grows). So no row of a satisfying
    partition into such groups has more than this many ε-neighbours."""
    return n - 1 - (size - 1 - _core.allowed_neighbours(size, delta))


def _too_few_others(theta: int, n: int, size: int, delta: float) -> bool:
    """Whether a row with Θ ε-neighbours refutes every partition into groups of at least
    ``size`` rows (``_most_neighbours``)."""
    return theta > _most_neighbours(n, size, delta)


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


def _delta(value: Any, k: int, eps: float, n: int) -> float:
    return _validate.privacy(k, eps, value, n, measured=True)[2]


def _bits(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def _from_bits(b: int) -> float:
    return float(struct.unpack("<d", struct.pack("<q", b))[0])


def _largest_true(predicate: Callable[[float], bool]) -> float | None:
    """The largest double δ in [0, 1] with ``predicate(δ)``, for a predicate that is true
    on a prefix of [0, 1] (every one here is monotone in δ, floats included); None if
    false at 0."""
    return _largest_true_from_zero(predicate) if predicate(0.0) else None


def _largest_true_from_zero(predicate: Callable[[float], bool]) -> float:
    """As :func:`_largest_true`, for a predicate known to hold at 0. Exact: bisection on the
    bit patterns of non-negative doubles."""
    if predicate(1.0):
        return 1.0
    lo, hi = _bits(0.0), _bits(1.0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if predicate(_from_bits(mid)):
            lo = mid
        else:
            hi = mid
    return _from_bits(lo)


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


def inequality_4_bound(n: int, k: int, delta: float) -> float:
    """Right-hand side of the paper's inequality (4): n/2 · (1 − (1 − 1/k) · δ).

    The paper derives it from Lemma 2 (Θ ≤ m(t+1)/2) but drops the floor in t and assumes
    k divides n, so as printed it is not a guarantee (``proxanon.advise`` has a 9-row
    counterexample and the bound that is proven). Reported as the paper's yardstick.
    """
    return n / 2.0 * (1.0 - (1.0 - 1.0 / k) * delta)


#: Rows above which ``on_infeasible="raise"`` checks the clique bound before any repair: a
#: repair that cannot succeed is long on large tables (each violation scans every group),
#: while on small ones it is quick and its best-effort partition travels with the error.
EARLY_VERDICT_ROWS = 8192


def early_verdict(sens: NDArray[np.float64], run: NativeRun, *, on_infeasible: str,
                  initial_groups: NDArray[np.int64] | None) -> None:
    """Raises InfeasibleError (with no partition) when advise's clique bound already proves
    that ``run``'s repair cannot succeed: no equitable partition into n // k groups for
    ``moves="swap"``, no partition into groups of at least k for ``"auto"`` (which may
    regroup). Only for ``on_infeasible="raise"`` and no given start (see ``early_proof``)."""
    if on_infeasible != "raise" or initial_groups is not None:
        return
    k, dlt, eps, relation = run.options.k, run.options.delta, run.eps, run.relation
    proof = early_proof(sens, k, eps, dlt, relation, any_partition=run.options.moves == "auto",
                        threads=run.options.threads)
    if proof is not None:
        raise InfeasibleError(proven_before_repair(proof, k, eps, dlt, relation))


def early_proof(sens: NDArray[np.float64], k: int, eps: float, dlt: float,
                relation: Relation, any_partition: bool,
                describe: Callable[[NDArray[np.int64]], str] | None = None,
                threads: int = 1) -> str | None:
    """advise's clique bound before any repair (:func:`infeasibility_proof`:
    O(n log n) in one dimension, the implicit structures beyond), on tables of more than
    EARLY_VERDICT_ROWS rows with a built-in metric: the proof, or None."""
    if (relation.kind != "builtin" or not relation.is_metric
            or sens.shape[0] <= EARLY_VERDICT_ROWS):
        return None
    return infeasibility_proof(sens, relation, k, eps, dlt, any_partition, describe, threads)


def feasibility_advice(sens: NDArray[np.float64], stats: dict[str, Any],
                       relation: Relation) -> str:
    """What :func:`proxanon.advise` can prove about these parameters, as a sentence."""
    if relation.kind != "builtin" or not relation.is_metric:
        return ""  # the clique proof needs the triangle inequality of a known metric
    try:
        found = advice(sens, relation, stats["k"], stats["epsilon"], stats["delta"],
                       _validate.threads(None))
    except GraphTooDenseError:  # the epsilon/2 graph is too dense to build: no proof to offer
        return ""
    if found.reason:
        return " Proof: " + found.reason + "."
    return (f" proxanon.advise: success is proven for delta <= {found.max_delta_proven:.4f} "
            "and failure in n // k groups for delta above "
            f"{found.largest_delta_not_refuted:.4f}; in between nothing is proven either way "
            "(a run may fail, as this one did).")
