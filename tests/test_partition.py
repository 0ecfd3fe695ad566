"""Properties of ``proxanon.partition``, checked against the independent ``audit``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import proxanon
from proxanon import InfeasibleError, audit, partition
from tests.conftest import brute_neighbours, brute_potential

METRICS = ("l1", "l2", "linf")


def brute_excess(sensitive, groups, metric, w, eps, delta) -> int:
    """E = Σ_v max(0, D_G(v) − t(G)), counted pair by pair."""
    total = 0
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        t = int(np.floor((1 - delta) * (len(rows) - 1) + 1e-9))
        for a in rows:
            d = sum(brute_neighbours(sensitive[a], sensitive[b], metric, w, eps)
                    for b in rows if b != a)
            total += max(0, d - t)
    return total


@st.composite
def instances(draw):
    n = draw(st.integers(2, 60))
    s = draw(st.integers(1, 3))
    levels = draw(st.sampled_from([3, 5, 10]))
    cells = draw(st.lists(st.integers(0, levels), min_size=n * s, max_size=n * s))
    sensitive = np.array(cells, dtype=float).reshape(n, s) / levels
    k = draw(st.integers(1, max(1, n // 2)))
    eps = draw(st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.4]))
    delta = draw(st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.8, 1.0]))
    # One-row groups have risk 1 (docs/design/privacy-model.md): k = 1 is refused with delta > 0.
    if k == 1:
        delta = 0.0
    metric = draw(st.sampled_from(METRICS))
    with_qi = draw(st.booleans())
    qi = None
    if with_qi:
        d = draw(st.integers(1, 3))
        qi = np.array(draw(st.lists(st.integers(0, 20), min_size=n * d, max_size=n * d)),
                      dtype=float).reshape(n, d)
    limit = draw(st.sampled_from([None, 1, 3]))
    init = draw(st.sampled_from(["degree", "qi"])) if with_qi else "degree"
    moves = draw(st.sampled_from(["auto", "swap"]))
    return sensitive, k, eps, delta, metric, qi, limit, init, moves


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_every_result_agrees_with_audit(case):
    sensitive, k, eps, delta, metric, qi, limit, init, moves = case
    result = partition(sensitive, k=k, epsilon=eps, delta=delta, metric=metric,
                       quasi_identifiers=qi, on_infeasible="best_effort", search_limit=limit,
                       init=init, moves=moves)
    n = len(sensitive)
    report = audit(sensitive, result.groups, k=k, epsilon=eps, delta=delta, metric=metric)
    # Satisfied exactly when the independent audit says so, with the same violations.
    assert result.satisfied == report.satisfied
    np.testing.assert_array_equal(result.violating_rows, report.violating_rows)
    np.testing.assert_array_equal(result.violating_groups, report.violating_groups)
    assert result.stats["remaining_violations"] == len(report.violating_rows)
    sizes = np.bincount(result.groups)
    assert len(sizes) == result.stats["m"] and sizes.min() >= k
    if moves == "swap":  # the paper's repair: m = floor(n/k) groups of equitable sizes
        m = n // k
        assert len(sizes) == m
        assert sizes.min() == n // m and sizes.max() == -(-n // m)


@settings(max_examples=150, deadline=None)
@given(instances())
def test_every_move_lowers_potential_or_excess(case):
    sensitive, k, eps, delta, metric, qi, limit, init, moves = case
    result = partition(sensitive, k=k, epsilon=eps, delta=delta, metric=metric,
                       quasi_identifiers=qi, on_infeasible="best_effort", search_limit=limit,
                       trace=True, init=init, moves=moves)
    s = sensitive.shape[1]
    w = np.full(s, 1.0 / s)
    groups = result.initial_groups.copy()
    potential = brute_potential(sensitive, groups, metric, w, eps)
    assert potential == result.stats["initial_potential"]
    for v, v2, claimed in result.swap_log:
        assert claimed < 0
        assert groups[v] != groups[v2]
        groups[v], groups[v2] = groups[v2], groups[v]
        after = brute_potential(sensitive, groups, metric, w, eps)
        assert after - potential == claimed
        potential = after
    assert len(result.swap_log) == result.stats["swaps"]
    # The stronger repair's moves each lower the total excess by what they claim.
    excess = brute_excess(sensitive, groups, metric, w, eps, delta)
    for v, v2, target, claimed in result.move_log:
        assert claimed < 0
        if v2 >= 0:
            assert groups[v2] == target
            groups[v2] = groups[v]
        groups[v] = target
        assert np.bincount(groups).min() >= k
        after = brute_excess(sensitive, groups, metric, w, eps, delta)
        assert after - excess == claimed
        excess = after
    assert len(result.move_log) == result.stats["excess_moves"]
    if moves == "swap":
        assert len(result.move_log) == 0
    np.testing.assert_array_equal(groups, result.groups)
    assert brute_potential(sensitive, groups, metric, w, eps) == result.stats["final_potential"]


def test_same_input_same_output():
    rng = np.random.default_rng(7)
    sensitive = rng.integers(0, 8, size=(3000, 3)) / 7
    qi = rng.integers(17, 90, size=(3000, 2)).astype(float)
    runs = [partition(sensitive, k=10, epsilon=0.1, delta=0.7, quasi_identifiers=qi,
                      on_infeasible="best_effort") for _ in range(3)]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].groups, other.groups)
        assert runs[0].stats["swaps"] == other.stats["swaps"]


def test_inputs_are_not_modified():
    rng = np.random.default_rng(3)
    sensitive = rng.random((500, 2))
    qi = rng.random((500, 3))
    weights = np.array([0.3, 0.7])
    copies = sensitive.copy(), qi.copy(), weights.copy()
    result = partition(sensitive, k=5, epsilon=0.05, delta=0.5, weights=weights,
                       quasi_identifiers=qi, on_infeasible="best_effort")
    np.testing.assert_array_equal(sensitive, copies[0])
    np.testing.assert_array_equal(qi, copies[1])
    np.testing.assert_array_equal(weights, copies[2])
    assert not np.shares_memory(result.groups, sensitive)


def test_weights_change_the_neighbour_relation():
    # Two components; with all weight on the second, rows differing only in the first
    # component are identical in distance and must be spread across groups.
    sensitive = np.column_stack([np.arange(40) / 39, np.repeat([0.0, 1.0], 20)])
    result = partition(sensitive, k=4, epsilon=0.0, delta=0.5, weights=[0.0, 1.0])
    report = audit(sensitive, result.groups, k=4, epsilon=0.0, delta=0.5, weights=[0.0, 1.0])
    assert result.satisfied and report.satisfied
    unweighted = audit(sensitive, result.groups, k=4, epsilon=0.0, delta=0.5)
    assert unweighted.max_risk == 0.0  # all rows distinct under the default weights


def test_stats_report_the_run():
    rng = np.random.default_rng(11)
    sensitive = rng.integers(0, 6, size=(1000, 2)) / 5
    result = partition(sensitive, k=10, epsilon=0.1, delta=0.6, on_infeasible="best_effort")
    stats = result.stats
    for key in ("n", "m", "max_degree", "bound_holds", "bound", "initial_violations", "swaps",
                "remaining_violations", "distinct_values", "value_edges", "row_edges",
                "initial_potential", "final_potential", "violating_groups"):
        assert key in stats
    assert stats["n"] == 1000 and stats["m"] == 100
    assert set(stats["seconds"]) == {"graph", "initialize", "repair", "suppress", "total"}
    assert all(v >= 0 for v in stats["seconds"].values())
    assert stats["bound"] == pytest.approx(1000 / 2 * (1 - (1 - 1 / 10) * 0.6))
    assert stats["bound_holds"] == (stats["max_degree"] <= stats["bound"])
    assert stats["distinct_values"] == len(np.unique(sensitive, axis=0))
    assert stats["final_potential"] <= stats["initial_potential"]
    assert stats["initial_potential"] - stats["final_potential"] >= stats["swaps"]


def infeasible_instance():
    # 20 rows, all the same value: every pair are neighbours, so with delta = 1 no group of
    # size >= 2 can be free of neighbours.
    return np.zeros((20, 2))


def test_infeasible_raises_with_numbers_and_advice():
    with pytest.raises(InfeasibleError) as caught:
        partition(infeasible_instance(), k=5, epsilon=0.1, delta=1.0)
    message = str(caught.value)
    assert "20 violating row(s)" in message and "4 of 4 group(s)" in message
    assert "max_degree=19" in message
    assert "smaller epsilon or delta" in message and "proxanon.advise" in message
    assert "Proof: rows within epsilon/2 of (0, 0) are 20 pairwise neighbours" in message
    assert "no partition into groups of at least k rows satisfies it" in message
    assert isinstance(caught.value, ValueError)
    assert caught.value.partition is not None and not caught.value.partition.satisfied


def test_best_effort_lists_the_violations():
    result = partition(infeasible_instance(), k=5, epsilon=0.1, delta=1.0,
                       on_infeasible="best_effort")
    assert not result.satisfied
    assert result.stats["violating_groups"] == [0, 1, 2, 3]
    np.testing.assert_array_equal(result.violating_rows, np.arange(20))
    assert "20 violating rows" in repr(result)


def test_bound_holding_gives_a_solution():
    # Lemma 2: Theta <= m(t+1)/2 guarantees success. 10 distinct values, 100 rows, eps = 0:
    # Theta = 9; k = 10 gives m = 10; delta = 0.5 gives t = 4 and m(t+1)/2 = 25.
    sensitive = np.repeat(np.arange(10) / 9, 10)
    result = partition(sensitive, k=10, epsilon=0.0, delta=0.5)
    assert result.stats["bound_holds"] and result.satisfied


def test_one_dimensional_input_is_one_column():
    values = np.linspace(0, 1, 50)
    flat = partition(values, k=5, epsilon=0.05, delta=0.6)
    column = partition(values.reshape(-1, 1), k=5, epsilon=0.05, delta=0.6)
    np.testing.assert_array_equal(flat.groups, column.groups)


def test_package_exports():
    assert {"partition", "audit", "InfeasibleError", "Partition", "AuditReport"} <= set(
        proxanon.__all__)


def qi_spread(qi: np.ndarray, groups: np.ndarray) -> float:
    """Mean over groups of the summed normalized QI ranges (the paper's numeric loss)."""
    scaled = (qi - qi.min(0)) / np.where(np.ptp(qi, 0) > 0, np.ptp(qi, 0), 1)
    frame = pd.DataFrame(scaled).assign(g=groups).groupby("g")
    return float((frame.max() - frame.min()).sum(axis=1).mean())


def test_qi_start_keeps_groups_narrow(adult_sensitive, adult_qi):
    degree = partition(adult_sensitive, k=10, epsilon=0.05, delta=0.8,
                       quasi_identifiers=adult_qi)
    local = partition(adult_sensitive, k=10, epsilon=0.05, delta=0.8,
                      quasi_identifiers=adult_qi, init="qi")
    assert local.satisfied
    assert audit(adult_sensitive, local.groups, k=10, epsilon=0.05, delta=0.8).satisfied
    assert qi_spread(adult_qi, local.groups) < 0.5 * qi_spread(adult_qi, degree.groups)
    sizes = np.bincount(local.groups)
    assert sizes.min() == 10 and sizes.max() == 11


def test_qi_start_needs_quasi_identifiers():
    with pytest.raises(ValueError, match="init='qi'.*quasi_identifiers"):
        partition(np.zeros(20), k=5, epsilon=0.1, delta=0.5, init="qi")
    with pytest.raises(ValueError, match="init must be one of 'degree', 'qi'"):
        partition(np.zeros(20), k=5, epsilon=0.1, delta=0.5, init="random")


@settings(max_examples=150, deadline=None)
@given(instances(), st.sampled_from([0.0, 0.1, 0.3, 1.0]))
def test_suppression_respects_its_budget_and_passes_audit(case, budget):
    sensitive, k, eps, delta, metric, qi, limit, init, moves = case
    n = len(sensitive)
    try:
        result = partition(sensitive, k=k, epsilon=eps, delta=delta, metric=metric,
                           quasi_identifiers=qi, search_limit=limit, init=init, moves=moves,
                           on_infeasible="suppress", max_suppression=budget)
    except InfeasibleError as exc:
        left_out = exc.partition.suppressed_rows
        # refused only when the budget is too small, or nothing could be released
        if n - left_out.size < k:  # proven by the exact search (small n) or where XColor ended
            proven = exc.partition.stats["exact_search"]
            assert ("no group of" if proven else "fewer than k") in str(exc)
        else:
            assert left_out.size > budget * n and "max_suppression" in str(exc)
        return
    left_out = result.suppressed_rows
    assert left_out.size <= budget * n
    np.testing.assert_array_equal(np.flatnonzero(result.groups == -1), left_out)
    report = audit(sensitive, result.groups, k=k, epsilon=eps, delta=delta, metric=metric)
    assert result.satisfied and report.satisfied
    np.testing.assert_array_equal(report.suppressed_rows, left_out)
    kept = result.groups[result.groups >= 0]
    assert kept.size == 0 or np.array_equal(np.unique(kept), np.arange(kept.max() + 1))


@pytest.mark.parametrize("delta", [0.85, 0.9])
def test_suppression_keeps_rows_where_every_group_starts_out_violating(delta):
    # 30% of the rows on one value: every group of k rows starts with more of them than its
    # allowance, so a dissolved group's rows can only go to groups that violate. They used to
    # be left out in turn, each step dissolving the next group, until no row was released.
    n, k, eps = 2_000, 10, 0.001
    values = np.random.default_rng(0).integers(0, 200, n) / 200
    values[: int(0.3 * n)] = 0.5
    result = partition(values, k=k, epsilon=eps, delta=delta, on_infeasible="suppress",
                       max_suppression=0.5)
    assert result.satisfied
    left_out = result.suppressed_rows
    assert left_out.size <= 0.25 * n  # a quarter of the rows at most, not all of them
    np.testing.assert_array_equal(np.flatnonzero(result.groups == -1), left_out)
    for g in np.unique(result.groups[result.groups >= 0]):  # brute force, pair by pair
        rows = values[result.groups == g]
        near = np.abs(rows[:, None] - rows[None, :]) <= eps + 1e-9
        counts = near.sum(axis=1) - 1
        assert rows.size >= k
        assert counts.max() <= np.floor((1 - delta) * (rows.size - 1) + 1e-9)


def test_stronger_repair_beats_swaps_on_adult(adult_sensitive):
    # epsilon = 0.1, delta = 0.8: the paper's swaps stall (why the stronger repair exists).
    swaps = partition(adult_sensitive, k=10, epsilon=0.1, delta=0.8, moves="swap",
                      on_infeasible="best_effort")
    stronger = partition(adult_sensitive, k=10, epsilon=0.1, delta=0.8,
                         on_infeasible="best_effort")
    left = stronger.stats["remaining_violations"]
    assert left <= 0.7 * swaps.stats["remaining_violations"]
    report = audit(adult_sensitive, stronger.groups, k=10, epsilon=0.1, delta=0.8)
    assert len(report.violating_rows) == left
    assert report.group_sizes.min() >= 10
    # and suppression removes what is left, within a budget
    clean = partition(adult_sensitive, k=10, epsilon=0.1, delta=0.8,
                      on_infeasible="suppress", max_suppression=0.05)
    assert audit(adult_sensitive, clean.groups, k=10, epsilon=0.1, delta=0.8).satisfied
    assert 0 < clean.suppressed_rows.size <= 0.05 * len(adult_sensitive)


def test_partition_infeasible_error_opens_with_a_one_line_summary():
    with pytest.raises(InfeasibleError) as caught:
        partition(np.zeros((20, 2)), k=5, epsilon=0.1, delta=1.0)
    first, details = str(caught.value).split("\n", 1)
    assert first == ("no partition satisfying (epsilon=0.1, delta=1)^k-dissimilarity with k=5 "
                     "was found: 20 row(s) violate in 4 of 4 group(s).")
    assert "XColor left 20 violating row(s) in 4 of 4 group(s)" in details
    assert "max_degree=19" in details and "Proof:" in details
