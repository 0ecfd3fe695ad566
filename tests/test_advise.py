"""``advise``: Θ, the δ bounds and the clique proof, checked by brute force and the engine."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import proxanon
from proxanon import audit, partition
from proxanon._engine.infeasibility import infeasibility_proof
from proxanon.advise import Advice, advise
from proxanon.distances import resolve
from tests.conftest import brute_neighbours
from tests.test_small_instances import largest_coverable, small_instances

METRICS = ("l1", "l2", "linf")
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def spec_t(size: int, delta: float) -> int:
    """t(G) written out from docs/design/privacy-model.md."""
    return math.floor((1.0 - delta) * (size - 1) + 1e-9)


def equitable(n: int, k: int) -> list[int]:
    m = n // k
    return [n // m + (1 if i < n % m else 0) for i in range(m)]


def rhs_4(n: int, k: int, delta: float) -> float:
    return n / 2 * (1 - (1 - 1 / k) * delta)


def above(x: float) -> float:
    return float(np.nextafter(x, 2.0))


@st.composite
def tables(draw, max_rows=40):
    n = draw(st.integers(1, max_rows))
    s = draw(st.integers(1, 3))
    cells = draw(st.lists(st.integers(0, 10), min_size=n * s, max_size=n * s))
    sensitive = np.array(cells, dtype=float).reshape(n, s) / 10  # a 0.1 grid: ties happen
    metric = draw(st.sampled_from(METRICS))
    weights = draw(st.one_of(
        st.none(),
        st.lists(st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 1.0, 2.0]), min_size=s, max_size=s),
        st.lists(st.floats(0.0, 3.0), min_size=s, max_size=s),
    ))
    eps = draw(st.sampled_from([0.0, 1e-10, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.5]))
    k = draw(st.integers(1, n))
    delta = draw(st.sampled_from([None, 0.0, 0.2, 0.5, 0.7, 0.8, 0.9, 1.0]))
    return sensitive, metric, weights, eps, k, delta


def weights_of(weights, s):
    return np.full(s, 1 / s) if weights is None else np.asarray(weights, dtype=float)


def brute_degrees(sensitive, metric, w, radius):
    """Per row: other rows within ``radius`` (the distance and tolerance of
    docs/design/definitions.md)."""
    n = len(sensitive)
    return np.array([
        sum(brute_neighbours(sensitive[i], sensitive[j], metric, w, radius)
            for j in range(n) if j != i)
        for i in range(n)
    ])


@SLOW
@given(tables())
def test_max_degree_and_clique_match_brute_force(case):
    sensitive, metric, weights, eps, k, delta = case
    original = sensitive.copy()
    a = advise(sensitive, k=k, epsilon=eps, metric=metric, weights=weights, delta=delta)
    np.testing.assert_array_equal(sensitive, original)
    n, s = sensitive.shape
    w = weights_of(weights, s)

    degrees = brute_degrees(sensitive, metric, w, eps)
    assert a.max_degree == degrees.max()
    assert a.row == int(np.flatnonzero(degrees == degrees.max())[0])
    assert a.value == tuple(sensitive[a.row])

    # Clique: rows within the ball radius of one row's value (identical values only when
    # the radius is None), or, where orthants are cliques (Linf, or one weighted component),
    # the neighbours of one row on one side of it in every weighted component; the largest
    # over all rows.
    def in_ball(x, y):
        if a.clique_radius is None:
            return bool((x == y).all())
        return brute_neighbours(x, y, metric, w, a.clique_radius)

    sides = np.flatnonzero(w > 0)

    def in_orthant(x, y, signs):
        return brute_neighbours(x, y, metric, w, eps) and all(
            (y[j] >= x[j]) if up else (y[j] <= x[j]) for j, up in zip(sides, signs, strict=True))

    ball = np.array([sum(in_ball(sensitive[i], sensitive[j]) for j in range(n))
                     for i in range(n)])
    orthants_apply = 0 < len(sides) <= 6 and (len(sides) == 1 or metric == "linf")
    orthant = 0
    if orthants_apply:
        orthant = max(sum(in_orthant(sensitive[i], sensitive[j], signs) for j in range(n))
                      for i in range(n) for signs in itertools.product((0, 1), repeat=len(sides)))
    if len(sides) == 1:
        assert a.clique_size == orthant  # the largest clique there is
    else:
        assert a.clique_size == max(ball.max(), orthant)
    if a.clique_radius is not None:
        assert a.clique_radius <= eps / 2
        assert eps / 2 - a.clique_radius < 1e-8 * max(1.0, eps)
    rows = a.clique_rows
    assert len(rows) == a.clique_size and (np.diff(rows) > 0).all()
    centre = np.array(a.clique_value)
    assert any((sensitive[r] == centre).all() for r in rows)
    if a.clique_shape == "orthant":
        assert any(all(in_orthant(centre, sensitive[r], signs) for r in rows)
                   for signs in itertools.product((0, 1), repeat=len(sides)))
    else:
        assert all(in_ball(centre, sensitive[r]) for r in rows)
    for i, r in enumerate(rows):
        for r2 in rows[i + 1:]:
            assert brute_neighbours(sensitive[r], sensitive[r2], metric, w, eps)
    assert not rows.flags.writeable


@SLOW
@given(tables())
def test_delta_bounds_are_exact_boundaries(case):
    sensitive, metric, weights, eps, k, delta = case
    a = advise(sensitive, k=k, epsilon=eps, metric=metric, weights=weights, delta=delta)
    n = len(sensitive)
    theta = a.max_degree
    assert a.m == n // k and a.n == n and a.k == k
    sizes = equitable(n, k)
    assert a.group_sizes == tuple(sorted((s, sizes.count(s)) for s in set(sizes)))

    # Inequality (4): holds at max_delta_guaranteed, fails just above it.
    g = a.max_delta_guaranteed
    if theta > n / 2:
        assert g is None
    else:
        assert g is not None and 0.0 <= g <= 1.0
        assert theta <= rhs_4(n, k, g) + 1e-9
        if g < 1.0:
            assert theta > rhs_4(n, k, above(g))
            assert g == pytest.approx((1 - 2 * theta / n) / (1 - 1 / k), abs=1e-9)

    # The proven bound: its condition (spelled out again) holds at it, fails just above.
    q, q_max = min(sizes), max(sizes)

    def proven(d):
        if q_max == 1 and d > 0:  # groups of one row: risk 1 (docs/design/privacy-model.md) > 1 - d
            return False
        trivial = all(spec_t(s, d) >= min(theta, s - 1) for s in sizes)
        return trivial or theta * (q + q_max - 1) < q * len(sizes) * (spec_t(q, d) + 1)

    p = a.max_delta_proven
    assert 0.0 <= p <= 1.0 and proven(p)
    if p < 1.0:
        assert not proven(above(p))

    # Capacity of the equitable groups, and the δ beyond which the clique refutes them.
    def capacity(d):
        return sum(spec_t(s, d) + 1 for s in sizes)

    for d in (0.0, 0.3, 0.8, 1.0):
        assert a.capacity(d) == capacity(d)
        assert a.capacity_any(d) >= a.capacity(d)
    # The degree bound (spelled out again): a row with too few non-neighbours for a group
    # of the given size or larger.
    def too_few_others(size, d):
        return n - 1 - theta < size - 1 - spec_t(size, d)

    def not_refuted(d):
        if q_max == 1 and d > 0:  # groups of one row: risk 1 (docs/design/privacy-model.md) > 1 - d
            return False
        return capacity(d) >= a.clique_size and not too_few_others(q, d)

    r = a.largest_delta_not_refuted
    assert not_refuted(r)
    if r < 1.0:
        assert not not_refuted(above(r))
    if delta is None:
        assert a.provably_infeasible is None and a.infeasible_for_any_partition is None
        assert a.reason is None
    else:
        assert a.provably_infeasible == (not not_refuted(delta)) == (delta > r)
        assert a.infeasible_for_any_partition == (a.clique_size > a.capacity_any(delta)
                                                  or too_few_others(k, delta))
        # explain() names the clique's rows where the clique proves the verdict; otherwise
        # the proof is the degree bound's, about one row.
        text = a.explain("THE ROWS")
        assert (text is None) == (not a.provably_infeasible)
        clique_proves = a.clique_size > capacity(delta) and (
            not a.infeasible_for_any_partition or a.clique_size > a.capacity_any(delta))
        if text is not None:
            assert ("THE ROWS" in text) == clique_proves
            if not clique_proves:
                assert text == a.reason and ("rows that are not" in text or (
                    k == 1 and "a group of one row has risk 1" in text))
        if a.infeasible_for_any_partition:
            assert a.provably_infeasible
        assert (a.reason is not None) == a.provably_infeasible


@SLOW
@given(tables(max_rows=30))
def test_advice_never_contradicts_the_engine(case):
    sensitive, metric, weights, eps, k, delta = case
    for d in ([delta] if delta is not None else [0.5, 0.9]):
        a = advise(sensitive, k=k, epsilon=eps, metric=metric, weights=weights, delta=d)
        # Groups of one row have risk 1 (docs/design/privacy-model.md): the engine refuses.
        if k == 1 and d > 0:
            with pytest.raises(ValueError, match=r"k=1 with delta=.*use k >= 2"):
                partition(sensitive, k=k, epsilon=eps, metric=metric, weights=weights, delta=d)
            assert a.max_delta_proven == 0.0  # no success is promised
            continue
        # The equitable claim is about the paper's n // k equitable groups (moves="swap");
        # the stronger repair may regroup into fewer, larger groups, so only the claim for
        # every partition into groups of >= k rows binds it.
        equitable = partition(sensitive, k=k, epsilon=eps, delta=d, metric=metric,
                              weights=weights, on_infeasible="best_effort", moves="swap")
        stronger = partition(sensitive, k=k, epsilon=eps, delta=d, metric=metric,
                             weights=weights, on_infeasible="best_effort")
        if a.provably_infeasible:
            assert not equitable.satisfied
        if a.infeasible_for_any_partition:
            assert not stronger.satisfied
        if d <= a.max_delta_proven:
            assert equitable.satisfied and stronger.satisfied
    # At the proven bound itself the engine must succeed.
    a = advise(sensitive, k=k, epsilon=eps, metric=metric, weights=weights)
    result = partition(sensitive, k=k, epsilon=eps, delta=a.max_delta_proven, metric=metric,
                       weights=weights, on_infeasible="best_effort")
    assert result.satisfied


@pytest.mark.parametrize("n", range(1, 31))
def test_capacity_any_bounds_every_partition(n):
    """Brute force over all multisets of group sizes >= k summing to n (dynamic programme)."""
    table = np.arange(n, dtype=float) / max(n, 1)
    for k in range(1, n + 1):
        a = advise(table, k=k, epsilon=0.0)
        for delta in (0.0, 0.1, 0.25, 1 / 3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0):
            best = [-1] * (n + 1)  # best[j]: max Σ (t + 1) over partitions of j rows
            best[0] = 0
            for j in range(1, n + 1):
                options = [best[j - s] + spec_t(s, delta) + 1
                           for s in range(k, j + 1) if best[j - s] >= 0]
                best[j] = max(options, default=-1)
            assert a.capacity(delta) <= best[n] <= a.capacity_any(delta)


def test_a_large_clique_proves_infeasibility():
    others = [x for x in np.linspace(0, 1, 41) if abs(x - 0.5) > 1e-12]
    sensitive = np.array([0.5] * 60 + others)[:, None]
    assert len(sensitive) == 100
    a = advise(sensitive, k=10, epsilon=0.01, delta=0.9)
    assert a.max_degree == 59 and a.row == 0 and a.value == (0.5,)
    assert a.clique_size == 60 and a.clique_value == (0.5,)
    np.testing.assert_array_equal(a.clique_rows, np.arange(60))
    assert a.capacity(0.9) == 10  # 10 groups of 10 rows, t = 0
    # At most 2 of 11 rows (t(11) = 1) is the best ratio: floor(100 · 2 / 11) = 18, below
    # the closed form floor(0.1 · 90) + 10 = 19 (8 groups of 11 and one of 12 hold 18).
    assert a.capacity_any(0.9) == 18
    assert a.provably_infeasible and a.infeasible_for_any_partition
    for text in ("(0.5)", "60", "10 groups", "at most 10", "18",
                 "no partition into groups of at least k rows"):
        assert text in a.reason
    assert "provably infeasible" in str(a)
    result = partition(sensitive, k=10, epsilon=0.01, delta=0.9, on_infeasible="best_effort")
    assert not result.satisfied
    # The clique is the only obstacle: below the refuted range the engine succeeds.
    assert a.largest_delta_not_refuted < 0.9
    low = advise(sensitive, k=10, epsilon=0.01, delta=0.3)
    assert not low.provably_infeasible
    assert partition(sensitive, k=10, epsilon=0.01, delta=0.3).satisfied


def test_infeasible_for_equitable_groups_only():
    # 100 rows, k = 10, δ = 0.9: 10 groups of 10 hold 10 clique rows, but 9 groups
    # (8 of 11 and one of 12, t = 1 each) could hold 18; a clique of 15 refutes only the first.
    sensitive = np.array([0.5] * 15 + [x / 50 + 2 for x in range(85)])[:, None]
    a = advise(sensitive, k=10, epsilon=0.01, delta=0.9)
    assert a.clique_size == 15 and a.capacity(0.9) == 10 and a.capacity_any(0.9) >= 18
    assert a.provably_infeasible and not a.infeasible_for_any_partition
    assert "no equitable partition into 10 groups" in a.reason
    assert "does not rule them out" in a.reason
    assert not partition(sensitive, k=10, epsilon=0.01, delta=0.9, moves="swap",
                         on_infeasible="best_effort").satisfied
    # The stronger repair regroups into fewer, larger groups, which the bound allows.
    regrouped = partition(sensitive, k=10, epsilon=0.01, delta=0.9)
    assert regrouped.satisfied and regrouped.n_groups < 10


def test_a_spread_out_table_is_fine():
    sensitive = np.linspace(0, 1, 100)[:, None]
    a = advise(sensitive, k=10, epsilon=0.001, delta=0.9)
    assert a.max_degree == 0 and a.clique_size == 1
    assert a.max_delta_guaranteed == 1.0 and a.max_delta_proven == 1.0
    assert a.largest_delta_not_refuted == 1.0
    assert a.provably_infeasible is False and a.reason is None
    assert partition(sensitive, k=10, epsilon=0.001, delta=0.9).satisfied


def test_inequality_4_is_not_a_guarantee():
    """The paper's (4) holds here, yet the proof of Lemma 2 does not apply (k does not divide
    n and t is an integer): a satisfying equitable partition exists and XColor's swaps end
    with violations."""
    sensitive = np.array([2 / 3, 0, 2 / 3, 1, 2 / 3, 0, 2 / 3, 2 / 3, 1 / 3])
    a = advise(sensitive, k=2, epsilon=0.3, delta=0.2)
    assert a.max_degree == 4 and 4 <= rhs_4(9, 2, 0.2)
    assert a.max_delta_guaranteed >= 0.2
    assert a.max_delta_proven < 0.2
    assert not a.provably_infeasible
    witness = np.array([0, 0, 1, 1, 2, 2, 3, 3, 3])  # the n // k equitable groups
    assert audit(sensitive, witness, k=2, epsilon=0.3, delta=0.2).satisfied
    swapped = partition(sensitive, k=2, epsilon=0.3, delta=0.2, moves="swap",
                        on_infeasible="best_effort")
    assert not swapped.satisfied and swapped.n_groups == 4
    assert audit(sensitive, swapped.groups, k=2, epsilon=0.3, delta=0.2).violating_rows.size > 0


def test_inequality_4_suffices_for_12_rows_in_groups_of_3():
    """No counterexample to (4) with k dividing n at n = 12, k = 3: swaps never stall there.

    With t = 0 (δ > 1/2), (4) allows Θ <= 3; with t = 1 (0 < δ <= 1/2) it allows Θ <= 5. In
    either case a stalled violation v in V needs, in every class movable for v, members
    adjacent to v's group mates (Λ >= 0 for every partner, docs/design/xcolor.md); counting those
    edges against Θ leaves a violation with an exchangeable partner in every state (for t = 1: at
    least two movable classes need >= 8 edges from v's two mates, which forces v's degree to
    6 > 5). A seeded search of 2-D L1 tables at the δ where (4) and Lemma 2 differ checks it.
    """
    rng = np.random.default_rng(12)
    with_violations = 0
    for _ in range(200):
        sensitive = rng.integers(0, 7, size=(12, 2)) / 6
        for epsilon in (0.1, 0.2, 0.3):
            for delta, theta in ((0.2, 5), (0.7, 3)):
                a = advise(sensitive, k=3, epsilon=epsilon, delta=delta)
                if a.max_degree != theta:
                    continue
                assert a.max_degree <= rhs_4(12, 3, delta) and a.max_delta_proven < delta
                result = partition(sensitive, k=3, epsilon=epsilon, delta=delta, moves="swap",
                                   on_infeasible="best_effort")
                with_violations += result.stats["initial_violations"] > 0
                assert result.satisfied
    assert with_violations >= 20  # the swaps had work to do


def test_adult(adult_sensitive):
    # ε = 0.05, δ = 0.8: solved by the engine, and advise agrees on Θ and claims nothing.
    solved = advise(adult_sensitive, k=10, epsilon=0.05, delta=0.8)
    result = partition(adult_sensitive, k=10, epsilon=0.05, delta=0.8)
    assert solved.max_degree == result.stats["max_degree"] == 6053
    assert result.satisfied
    assert not solved.provably_infeasible and not solved.infeasible_for_any_partition
    assert solved.m == 3016 and solved.group_sizes == ((10, 3014), (11, 2))
    assert solved.clique_size == 2361
    # ε = 0.1, δ = 0.8: swaps stall, and the clique shows why: 6,054 rows pairwise within ε
    # cannot fit into 3,016 groups that hold at most 6,034 of them.
    stalled = advise(adult_sensitive, k=10, epsilon=0.1, delta=0.8)
    assert stalled.max_degree == 13870
    assert stalled.clique_size == 6054 and stalled.capacity(0.8) == 6034
    assert stalled.provably_infeasible and not stalled.infeasible_for_any_partition
    assert stalled.largest_delta_not_refuted < 0.8
    assert not partition(adult_sensitive, k=10, epsilon=0.1, delta=0.8,
                         on_infeasible="best_effort").satisfied


def test_str_names_the_numbers():
    sensitive = np.array([[0.5, 0.25]] * 30 + [[0.0, 1.0]] * 10)
    a = advise(sensitive, k=4, epsilon=0.1, delta=0.8)
    text = str(a)
    assert "Θ = 29" in text and "row 0" in text and "(0.5, 0.25)" in text
    assert "inequality (4)" in text and "clique: 30 rows" in text
    assert "provably infeasible" in text and "smaller epsilon" in text
    assert "at δ" not in str(advise(sensitive, k=4, epsilon=0.1))


def test_deterministic_and_accepts_any_layout():
    rng = np.random.default_rng(3)
    sensitive = rng.integers(0, 5, size=(50, 2))  # integers, not float64
    a = advise(sensitive, k=5, epsilon=0.5, delta=0.5)
    b = advise(np.asfortranarray(sensitive.astype(float)), k=5, epsilon=0.5, delta=0.5)
    assert isinstance(a, Advice) and a == b
    np.testing.assert_array_equal(a.clique_rows, b.clique_rows)
    with pytest.raises(AttributeError):
        a.k = 3  # type: ignore[misc]
    one = advise([0.1, 0.2, 0.2], k=1, epsilon=0.0)
    assert one.max_degree == 1 and one.row == 1 and one.value == (0.2,)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"sensitive": None}, TypeError, "sensitive is required"),
    ({"sensitive": [[np.nan]]}, ValueError, "non-finite"),
    ({"k": 0}, ValueError, "k must be >= 1"),
    ({"k": True}, TypeError, "k must be an integer"),
    ({"k": 5}, ValueError, "larger than the number of rows"),
    ({"epsilon": -0.1}, ValueError, "epsilon must be a finite number"),
    ({"epsilon": "0.1"}, TypeError, "epsilon must be a number"),
    ({"delta": 1.5}, ValueError, "delta must lie in"),
    ({"delta": float("nan")}, ValueError, "delta must lie in"),
    ({"metric": "min"}, ValueError, "unknown metric"),
    ({"metric": 1}, ValueError, "unknown metric"),
    ({"weights": [1.0, 2.0]}, ValueError, "weights has 2 entries"),
    ({"weights": [-1.0]}, ValueError, "weights must be finite and >= 0"),
])
def test_validation(kwargs, error, match):
    args = {"sensitive": [0.1, 0.2, 0.3], "k": 2, "epsilon": 0.1, **kwargs}
    sensitive = args.pop("sensitive")
    with pytest.raises(error, match=match):
        advise(sensitive, **args)


def test_capacity_validates_delta():
    a = advise([0.1, 0.2, 0.3], k=1, epsilon=0.1)
    with pytest.raises(ValueError, match="delta must lie in"):
        a.capacity(1.5)
    with pytest.raises(TypeError, match="delta must be a number"):
        a.capacity_any("0.5")


def test_proofs_cover_most_infeasible_small_instances_and_every_proof_holds():
    """advise's bounds (clique: balls, orthants, windows; capacity: the closed form and the
    ratio bound; degree) against exhaustive search on 1,200 small random tables: no proof on
    a table that has a satisfying partition, and a proof for at least 90% of those that have
    none (the ε/2 balls with the closed form alone proved 46%)."""
    infeasible = proven = early = 0
    for seed in (11, 12, 13, 14):
        for values, k, eps, delta, metric in small_instances(300, seed):
            n = len(values)
            solvable = largest_coverable(values, k, eps, delta, metric) == n
            a = advise(values, k=k, epsilon=eps, delta=delta, metric=metric)
            # The early verdict's proof: the same bounds without the ε relation.
            relation = resolve(metric, None, values.shape[1], n)
            quick = infeasibility_proof(values, relation, k, eps, delta, any_partition=True)
            if a.infeasible_for_any_partition:
                assert not solvable, (values.tolist(), k, eps, delta, metric)
                assert a.provably_infeasible and a.reason is not None
            if quick is not None:
                assert not solvable and a.infeasible_for_any_partition
            if not solvable:
                infeasible += 1
                proven += bool(a.infeasible_for_any_partition)
                early += quick is not None
    assert infeasible >= 150
    assert proven >= 0.9 * infeasible
    assert early >= 0.9 * infeasible


def test_the_degree_bound_proves_a_star_that_no_clique_refutes():
    # Row 0 is a neighbour of every other row; the others form two far clusters of 4. The
    # largest clique (5 rows) fits the one group of 9 (t = 4), but row 0 would need 4 rows
    # that are not its neighbours in its group and there are none.
    values = np.array([0.5] + [0.2] * 4 + [0.8] * 4)[:, None]
    a = advise(values, k=9, epsilon=0.3, delta=0.5)
    assert a.clique_size == 5 == a.capacity_any(0.5)
    assert a.max_degree == 8 and a.row == 0
    assert a.provably_infeasible and a.infeasible_for_any_partition
    assert "row 0 (0.5) has 8 epsilon-neighbours" in a.reason and "needs 4 rows" in a.reason
    assert a.explain("the rows") == a.reason
    assert largest_coverable(values, 9, 0.3, 0.5, "l1") < len(values)
    assert not partition(values, k=9, epsilon=0.3, delta=0.5, on_infeasible="best_effort").satisfied


@pytest.mark.parametrize("metric", ["l1", "l2", "linf"])
def test_the_quick_degree_test_never_rules_out_a_row_that_has_the_degree(metric):
    from proxanon._engine.infeasibility import _degree_possible

    rng = np.random.default_rng(7)
    for _ in range(200):
        n, s = int(rng.integers(2, 30)), int(rng.integers(1, 4))
        values = np.round(rng.random((n, s)) * 6) / 6
        weights = rng.random(s) + 0.1
        eps = float(rng.choice([0.0, 0.1, 0.3, 0.6]))
        relation = resolve(metric, weights, s, n)
        w = relation.weights
        theta = max(sum(brute_neighbours(values[a], values[b], metric, w, eps)
                        for b in range(n) if b != a) for a in range(n))
        for above in range(-1, n + 1):
            if theta > above:
                assert _degree_possible(values, relation, eps, above)


def test_advice_names_only_what_can_still_be_lowered() -> None:
    """At epsilon = 0 only equal values are neighbours: a proof there does not suggest a
    smaller epsilon, on the command line or in Python."""
    from proxanon.cli.advise import verdict

    values = np.r_[np.zeros(600), np.linspace(0.1, 1, 400)]  # 60% share one value
    at_zero = proxanon.advise(values, k=10, epsilon=0.0, delta=0.9)
    assert at_zero.infeasible_for_any_partition
    assert at_zero.relaxable() == ("delta", "k")
    line = verdict(at_zero)[1]
    assert "--epsilon" not in line and "a smaller --delta, or leave rows out" in line
    assert "smaller epsilon" not in str(at_zero)
    wider = proxanon.advise(values, k=10, epsilon=0.05, delta=0.9)
    assert "a smaller --epsilon or --delta, or leave rows out" in verdict(wider)[1]
    assert "smaller epsilon" in str(wider)
    assert proxanon.advise(values, k=1, epsilon=0.0, delta=0.0).relaxable() == ()


def test_min_component_proof_counts_one_columns_window() -> None:
    """Under min_component rows close in one column alone are neighbours: where 37% of the
    rows share one amount, a class of 10 rows can hold at most 2 of them at delta = 0.8,
    so no table exists (the issue's donor table), and the rows the proof names are pairwise
    neighbours, checked pair by pair."""
    rng = np.random.default_rng(0)
    n = 2000
    values = np.column_stack([np.where(rng.random(n) < 0.37, 0.01, rng.random(n)),
                              rng.random(n), rng.random(n)])
    found = advise(values, k=10, epsilon=0.002, delta=0.8, metric="min_component")
    assert found.infeasible_for_any_partition
    assert found.clique_shape.startswith("column ")
    rows = values[np.asarray(found.clique_rows)]
    gaps = np.abs(rows[:, None, :] - rows[None, :, :]).min(axis=2)
    assert (gaps <= 0.002 + 1e-9).all() and found.clique_size == len(rows) >= 0.37 * n * 0.9
    assert "component 0 alone" in str(found)
    # The same table under l1: the columns together keep rows apart, and nothing is proven.
    assert not advise(values, k=10, epsilon=0.002, delta=0.8).infeasible_for_any_partition
