"""The proofs of infeasibility: what no satisfying partition can hold, and the early
verdict's proof from it (docs/design/proofs.md).

Write m = n // k for the groups XColor builds, of ``n // m`` or ``n // m + 1`` rows
(docs/design/xcolor.md), ``q = n // m`` for the smaller size, and
``t(s) = floor((1 - δ)(s - 1) + 1e-9)`` for the neighbours a member of an s-row group may
have (docs/design/privacy-model.md). A group that holds c_G rows of a clique of c rows
(:mod:`proxanon._engine.cliques`) gives each c_G - 1 neighbours, so a satisfying group
holds at most ``t(G) + 1`` of them, and a satisfying partition needs
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

The degree bound: s - 1 - t(s) never falls as s grows (s - 1 gains 1, t(s) at most 1), so
a row with Θ ε-neighbours, in a group of s >= k rows, needs at least ``k - 1 - t(k)`` of its
``n - 1 - Θ`` non-neighbours with it: when ``n - 1 - Θ < k - 1 - t(k)`` no partition into
groups of at least k rows satisfies (with q = n // m for k, no equitable partition into m
groups).

On 1,200 small random tables (``tests/test_small_instances.small_instances``, seeds
11-14), these bounds together prove 93% of those that exhaustive search shows
infeasible (the ε/2 balls with the closed form alone: 46%); so does
``infeasibility_proof`` (the early verdict), which takes Θ from the sorted values in
one dimension and from SAMPLED_CENTRES rows on several instead of every row.

Cost: the capacities are O(number of group sizes), ``_capacity_any``'s ratio bound at most
_RATIO_SIZES sizes (a few dozen unless δ is near 0); ``infeasibility_proof`` builds no ε
relation: O(n log n) in one dimension, O(SAMPLED_CENTRES · n) on several where the sampled
shapes prove it, the ε/2 structure beyond. Everything is deterministic and the caller's
arrays are never modified.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from proxanon import _core
from proxanon._engine.cliques import (
    _Clique,
    _largest_clique,
    _metric,
    _sampled_centres,
    _sampled_clique,
    _weighted,
)
from proxanon._engine.proof_texts import (
    _degree_reason,
    _reason,
    _shape_note,
    _shape_text,
    _value_text,
)
from proxanon.distances import Relation, box_radius


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
    window = (_core.largest_window(sens, *_metric(relation), eps)
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
    sizes = _core.balls(sens, *_metric(relation), eps, centres.tolist(),
                        threads=threads)["sizes"]
    best = int(np.argmax(sizes))
    return int(centres[best]), int(sizes[best]) - 1
