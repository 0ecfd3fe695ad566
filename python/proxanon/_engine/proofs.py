"""The proofs of ``advise``, ``partition`` and ``anonymize``: what the neighbour graph says about
(k, ε, δ) before XColor runs (docs/design/proofs.md). Here: the entry points, the
:class:`Advice` result and the sufficient conditions; the cliques are found in
:mod:`proxanon._engine.cliques`, the necessary conditions (the clique bound's capacities, the
degree bound, the early verdict's proof) are in :mod:`proxanon._engine.infeasibility`, and
their sentences in :mod:`proxanon._engine.proof_texts`.

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

Cost: ``advice`` builds the ε relation (in the structure ``partition`` would pick) and the
cliques of :mod:`proxanon._engine.cliques`; each largest δ is an exact bisection on the bit
patterns of doubles (at most 64 evaluations of a bound). ``early_proof`` builds no ε
relation. Everything is deterministic and the caller's arrays are never modified.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _core, _validate
from proxanon._display import Summarized
from proxanon._engine.cliques import _clique_radius, _first_rows, _graph, _largest_clique
from proxanon._engine.infeasibility import (
    _capacity,
    _capacity_any,
    _too_few_others,
    _verdict,
    infeasibility_proof,
)
from proxanon._engine.options import NativeRun
from proxanon._engine.proof_texts import (
    _RELAX_WORDS,
    _degree_reason,
    _down,
    _reason,
    _shape_text,
    _value_text,
)
from proxanon._engine.verdicts import proven_before_repair
from proxanon._errors import GraphTooDenseError, InfeasibleError
from proxanon.distances import Relation


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
        k rows (:mod:`proxanon._engine.infeasibility`)."""
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


def inequality_4_bound(n: int, k: int, delta: float) -> float:
    """Right-hand side of the paper's inequality (4): n/2 · (1 − (1 − 1/k) · δ).

    The paper derives it from Lemma 2 (Θ ≤ m(t+1)/2) but drops the floor in t and assumes
    k divides n, so as printed it is not a guarantee (``proxanon.advise`` has a 9-row
    counterexample and the bound that is proven). Reported as the paper's yardstick.
    """
    return n / 2.0 * (1.0 - (1.0 - 1.0 / k) * delta)


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
