"""Tests for proxanon.audit: the independent (epsilon, delta)^k-dissimilarity verifier.

The main check compares ``audit`` field by field with a brute-force, pure-Python reference
(one ``math`` distance per pair) on hypothesis-generated tables whose values lie on a 0.1
grid, so ties and distances exactly at epsilon happen often. Paper Table I is pinned with
values derived by hand.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import AuditReport, audit

# --------------------------------------------------------------------------------------
# Brute-force reference (docs/design/definitions.md and docs/design/privacy-model.md), deliberately
# naive: a double loop over Python floats.
# --------------------------------------------------------------------------------------


def _distance(x: list[float], y: list[float], w: list[float], metric: str) -> float:
    if metric == "l1":
        return sum(wi * abs(a - b) for a, b, wi in zip(x, y, w, strict=False))
    if metric == "l2":
        return math.sqrt(sum(wi * (a - b) ** 2 for a, b, wi in zip(x, y, w, strict=False)))
    if metric == "linf":
        return max(wi * abs(a - b) for a, b, wi in zip(x, y, w, strict=False))
    raise AssertionError(metric)


def brute_force(
    rows: list[list[float]],
    labels: list[int],
    *,
    k: int,
    epsilon: float,
    delta: float,
    metric: str,
    weights: list[float] | None,
) -> dict[str, Any]:
    n, s = len(rows), len(rows[0])
    w = [1.0 / s] * s if weights is None else [float(x) for x in weights]
    threshold = epsilon + 1e-9 * max(1.0, epsilon)
    members: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    counts = [0] * n
    for group in members.values():
        for v in group:
            counts[v] = sum(
                1 for u in group if u != v and _distance(rows[u], rows[v], w, metric) <= threshold
            )
    ids = sorted(members)
    sizes, risks, violating_groups, small_groups, violating_rows = [], [], [], [], []
    for gid in ids:
        group = members[gid]
        size = len(group)
        t = math.floor((1 - delta) * (size - 1) + 1e-9)
        sizes.append(size)
        risks.append(1.0 if size == 1 else max(counts[v] for v in group) / (size - 1))
        # docs/design/privacy-model.md: risk <= 1 - delta; a group of one row has risk 1.
        alone = size == 1 and 1.0 > 1.0 - delta + 1e-9
        bad = [v for v in group if counts[v] > t or alone]
        if bad:
            violating_groups.append(gid)
        violating_rows.extend(bad)
        if size < k:
            small_groups.append(gid)
    return {
        "satisfied": not violating_groups and not small_groups,
        "max_risk": max(risks),
        "vulnerability": len(violating_groups) / len(ids),
        "n_groups": len(ids),
        "group_ids": ids,
        "group_sizes": sizes,
        "group_risk": risks,
        "violating_groups": violating_groups,
        "small_groups": small_groups,
        "violating_rows": sorted(violating_rows),
        "neighbour_counts": counts,
    }


ARRAY_FIELDS = (
    "group_ids",
    "group_sizes",
    "group_risk",
    "violating_groups",
    "small_groups",
    "violating_rows",
    "neighbour_counts",
)


def assert_matches(report: AuditReport, expected: dict[str, Any]) -> None:
    assert report.satisfied is expected["satisfied"]
    assert report.max_risk == expected["max_risk"]
    assert report.vulnerability == expected["vulnerability"]
    assert report.n_groups == expected["n_groups"]
    for name in ARRAY_FIELDS:
        actual = getattr(report, name)
        want = np.asarray(expected[name], dtype=actual.dtype)
        assert actual.shape == want.shape, name
        np.testing.assert_array_equal(actual, want, err_msg=name)


# --------------------------------------------------------------------------------------
# Property test against the reference
# --------------------------------------------------------------------------------------

SPARSE_IDS = [0, 1, 2, 3, 7, 42, 1000, 2**40]


@st.composite
def tables(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 40))
    s = draw(st.integers(1, 3))
    grid = st.integers(0, 10).map(lambda i: i / 10)
    rows = draw(st.lists(st.lists(grid, min_size=s, max_size=s), min_size=n, max_size=n))
    n_labels = draw(st.integers(1, min(n, 8)))
    id_pool = draw(st.permutations(SPARSE_IDS))[:n_labels]
    labels = draw(st.lists(st.sampled_from(id_pool), min_size=n, max_size=n))
    weights = draw(
        st.one_of(
            st.none(),
            st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 1 / 3]), min_size=s, max_size=s),
        )
    )
    delta = draw(
        st.one_of(
            st.sampled_from([0.0, 0.25, 0.5, 0.75, 0.8, 0.9, 1.0]),
            st.floats(0.0, 1.0, allow_nan=False),
        )
    )
    return {
        "rows": rows,
        "labels": labels,
        "k": draw(st.integers(1, min(5, n))),
        "epsilon": draw(st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3])),
        "delta": delta,
        "metric": draw(st.sampled_from(["l1", "l2", "linf"])),
        "weights": weights,
    }


@settings(max_examples=200, deadline=None)
@given(tables())
def test_matches_brute_force(case: dict[str, Any]) -> None:
    params = {key: case[key] for key in ("k", "epsilon", "delta", "metric", "weights")}
    sensitive = np.array(case["rows"], dtype=np.float64)
    groups = np.array(case["labels"], dtype=np.int64)
    report = audit(sensitive, groups, **params)
    assert_matches(report, brute_force(case["rows"], case["labels"], **params))
    assert (report.k, report.epsilon, report.delta, report.metric) == (
        case["k"],
        case["epsilon"],
        case["delta"],
        case["metric"],
    )


@settings(max_examples=50, deadline=None)
@given(tables(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(case: dict[str, Any], rnd: Any) -> None:
    params = {key: case[key] for key in ("k", "epsilon", "delta", "metric", "weights")}
    sensitive = np.array(case["rows"], dtype=np.float64)
    groups = np.array(case["labels"], dtype=np.int64)
    perm = np.array(rnd.sample(range(len(groups)), len(groups)))
    base = audit(sensitive, groups, **params)
    shuffled = audit(sensitive[perm], groups[perm], **params)
    np.testing.assert_array_equal(shuffled.neighbour_counts, base.neighbour_counts[perm])
    np.testing.assert_array_equal(shuffled.group_risk, base.group_risk)
    np.testing.assert_array_equal(shuffled.violating_groups, base.violating_groups)
    # row i of the shuffled table is row perm[i] of the original
    np.testing.assert_array_equal(np.sort(perm[shuffled.violating_rows]), base.violating_rows)


# --------------------------------------------------------------------------------------
# Paper Table I (xcolor paper, Example 1)
# --------------------------------------------------------------------------------------

TABLE_I = np.array(
    [
        (0.8, 0.0, 0.0),  # 1  group 0
        (0.6, 0.4, 0.4),  # 2
        (0.7, 0.1, 0.1),  # 3
        (1.0, 0.2, 0.2),  # 4
        (0.1, 0.9, 0.9),  # 5
        (0.2, 0.5, 0.2),  # 6  group 1
        (0.8, 0.1, 0.9),  # 7
        (0.4, 0.3, 0.5),  # 8
        (0.6, 0.9, 0.3),  # 9
        (1.0, 0.7, 0.7),  # 10
    ]
)
TABLE_I_GROUPS = np.array([0] * 5 + [1] * 5)

# L-infinity distances with weights (1, 1, 1), by hand:
#   group 0: 1-2 0.4, 1-3 0.1, 1-4 0.2, 1-5 0.9, 2-3 0.3, 2-4 0.4, 2-5 0.5, 3-4 0.3,
#            3-5 0.8, 4-5 0.9
#   group 1: 6-7 0.7, 6-8 0.3, 6-9 0.4, 6-10 0.8, 7-8 0.4, 7-9 0.8, 7-10 0.6, 8-9 0.6,
#            8-10 0.6, 9-10 0.4
# In float64 several of these land just above the decimal value (|0.7 - 0.8| =
# 0.10000000000000009, |0.4 - 0.1| = 0.30000000000000004), so they only count as
# neighbours thanks to the 1e-9 tolerance.


def test_table_one_linf_epsilon_0_1() -> None:
    # eps = 0.1: the only pair within 0.1 is #1-#3, so D = 1 for #1 and #3, 0 elsewhere.
    # risk(G0) = 1 / (5 - 1) = 0.25, risk(G1) = 0.
    report = audit(
        TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.1, delta=0.75, metric="linf", weights=[1, 1, 1]
    )
    np.testing.assert_array_equal(report.neighbour_counts, [1, 0, 1, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(report.group_risk, [0.25, 0.0])
    assert report.max_risk == 0.25
    # delta = 0.75: t = floor(0.25 * 4) = 1, D <= 1 everywhere -> satisfied (risk 0.25 is
    # exactly 1 - delta; "at most" semantics).
    assert report.satisfied
    assert report.vulnerability == 0.0


def test_table_one_linf_delta_0_8_violates() -> None:
    # delta = 0.8: t = floor(0.2 * 4) = 0 (0.7999999999999998 in float64), so #1 and #3
    # (D = 1) violate; group 0 violates, group 1 does not -> vulnerability 1/2.
    report = audit(
        TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.1, delta=0.8, metric="linf", weights=[1, 1, 1]
    )
    assert not report.satisfied
    np.testing.assert_array_equal(report.violating_rows, [0, 2])
    np.testing.assert_array_equal(report.violating_groups, [0])
    assert report.small_groups.size == 0
    assert report.vulnerability == 0.5


def test_table_one_linf_epsilon_0_3() -> None:
    # eps = 0.3: group 0 pairs within 0.3 are 1-3, 1-4, 2-3, 3-4 ->
    #   D = (#1: 2, #2: 1, #3: 3, #4: 2, #5: 0), risk = 3/4.
    # group 1: only 6-8 (0.3) -> D(#6) = D(#8) = 1, risk = 1/4.
    report = audit(
        TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.3, delta=0.5, metric="linf", weights=[1, 1, 1]
    )
    np.testing.assert_array_equal(report.neighbour_counts, [2, 1, 3, 2, 0, 1, 0, 1, 0, 0])
    np.testing.assert_array_equal(report.group_risk, [0.75, 0.25])
    # delta = 0.5: t = 2, only #3 (D = 3) violates.
    np.testing.assert_array_equal(report.violating_rows, [2])
    np.testing.assert_array_equal(report.violating_groups, [0])
    assert not report.satisfied


def test_table_one_l1_default_weights() -> None:
    # L1 with the default weights 1/3: 1-3 = (0.1 + 0.1 + 0.1) / 3 = 0.1 (a neighbour, via
    # the tolerance); next closest in group 0 are 1-4 = 0.2 and 3-4 = 0.5/3 = 0.167;
    # in group 1 the closest is 6-8 = 0.7/3 = 0.233. So with eps = 0.1 only #1-#3 pair up.
    report = audit(TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.1, delta=0.75)
    assert report.metric == "l1"
    np.testing.assert_array_equal(report.neighbour_counts, [1, 0, 1, 0, 0, 0, 0, 0, 0, 0])
    # eps = 0.2 adds 1-4 (0.2) and 3-4 (0.167): D = (#1: 2, #3: 2, #4: 2), risk(G0) = 0.5.
    wider = audit(TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.2, delta=0.75)
    np.testing.assert_array_equal(wider.neighbour_counts, [2, 0, 2, 2, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(wider.group_risk, [0.5, 0.0])
    np.testing.assert_array_equal(wider.violating_rows, [0, 2, 3])


def test_tolerance_at_epsilon() -> None:
    # |0.7 - 0.8| = 0.10000000000000009 in float64: neighbours only with the tolerance.
    close = audit([0.7, 0.8], [0, 0], k=2, epsilon=0.1, delta=1.0)
    np.testing.assert_array_equal(close.neighbour_counts, [1, 1])
    assert not close.satisfied
    # 1e-7 beyond epsilon is far outside the 1e-9 tolerance.
    apart = audit([0.7, 0.8000001], [0, 0], k=2, epsilon=0.1, delta=1.0)
    np.testing.assert_array_equal(apart.neighbour_counts, [0, 0])
    assert apart.satisfied


# --------------------------------------------------------------------------------------
# Edge cases
# --------------------------------------------------------------------------------------


def test_allowed_neighbours_guard_against_float_error() -> None:
    # |G| = 11, delta = 0.8: (1 - 0.8) * 10 = 1.9999999999999996 in float64, yet t(G) must
    # be 2 (docs/design/privacy-model.md). Nine rows form three triples of equal values (D = 2
    # each), the other two are isolated, so risk = 2 / 10 = 1 - delta exactly: satisfied.
    values = [0.0, 0.0, 0.0, 0.2, 0.2, 0.2, 0.4, 0.4, 0.4, 0.6, 0.8]
    report = audit(values, [4] * 11, k=11, epsilon=0.05, delta=0.8)
    np.testing.assert_array_equal(report.neighbour_counts, [2] * 9 + [0, 0])
    assert report.max_risk == 0.2
    assert report.satisfied
    assert report.violating_rows.size == 0


def test_singleton_group_has_risk_one() -> None:
    report = audit([0.1, 0.5, 0.9], [3, 3, 8], k=1, epsilon=0.1, delta=0.5)
    np.testing.assert_array_equal(report.group_ids, [3, 8])
    np.testing.assert_array_equal(report.group_risk, [0.0, 1.0])
    assert report.max_risk == 1.0
    # A singleton has no neighbours (D = 0 <= t = 0), but it publishes its value as it is:
    # risk 1 > 1 - delta (docs/design/privacy-model.md), so it violates, and the report says so.
    np.testing.assert_array_equal(report.violating_groups, [8])
    np.testing.assert_array_equal(report.violating_rows, [2])
    assert not report.satisfied
    # With delta = 0, risk 1 is allowed: the singleton passes.
    assert audit([0.1, 0.5, 0.9], [3, 3, 8], k=1, epsilon=0.1, delta=0.0).satisfied
    with_k2 = audit([0.1, 0.5, 0.9], [3, 3, 8], k=2, epsilon=0.1, delta=0.5)
    np.testing.assert_array_equal(with_k2.small_groups, [8])
    assert not with_k2.satisfied


def test_delta_zero_always_satisfied_when_groups_are_big_enough() -> None:
    # All rows identical: every row is a neighbour of every other (D = |G| - 1 = t).
    report = audit(np.zeros((12, 2)), np.arange(12) % 3, k=4, epsilon=0.0, delta=0.0)
    np.testing.assert_array_equal(report.neighbour_counts, np.full(12, 3))
    np.testing.assert_array_equal(report.group_risk, [1.0, 1.0, 1.0])
    assert report.satisfied
    assert report.vulnerability == 0.0


def test_delta_one_requires_no_neighbours_at_all() -> None:
    values = np.array([0.0, 0.5, 1.0, 0.0, 0.3, 0.6])
    groups = np.array([0, 0, 0, 1, 1, 1])
    # eps = 0.4: group 0 gaps are 0.5 -> no neighbours; group 1 has 0.0-0.3 and 0.3-0.6.
    report = audit(values, groups, k=3, epsilon=0.4, delta=1.0)
    np.testing.assert_array_equal(report.neighbour_counts, [0, 0, 0, 1, 2, 1])
    np.testing.assert_array_equal(report.violating_groups, [1])
    np.testing.assert_array_equal(report.violating_rows, [3, 4, 5])
    assert report.vulnerability == 0.5
    assert not report.satisfied
    spread = audit(values[:3], groups[:3], k=3, epsilon=0.4, delta=1.0)
    assert spread.satisfied


def test_non_contiguous_group_ids() -> None:
    values = np.array([0.1, 0.9, 0.1, 0.5, 0.9, 0.1, 0.5])
    groups = np.array([1000, 5, 17, 1000, 5, 1000, 17])
    report = audit(values, groups, k=2, epsilon=0.0, delta=0.5)
    np.testing.assert_array_equal(report.group_ids, [5, 17, 1000])
    np.testing.assert_array_equal(report.group_sizes, [2, 2, 3])
    # group 5 = {0.9, 0.9}: both have D = 1 > t = floor(0.5) = 0.
    # group 1000 = {0.1, 0.5, 0.1}: rows 0 and 5 have D = 1 <= t = 1.
    np.testing.assert_array_equal(report.neighbour_counts, [1, 1, 0, 0, 1, 1, 0])
    np.testing.assert_array_equal(report.group_risk, [1.0, 0.0, 0.5])
    np.testing.assert_array_equal(report.violating_groups, [5])
    np.testing.assert_array_equal(report.violating_rows, [1, 4])
    assert report.vulnerability == pytest.approx(1 / 3)
    assert report.group_ids.dtype == np.int64


def test_small_groups_fail_but_do_not_count_as_vulnerable() -> None:
    values = np.array([0.0, 0.4, 0.8, 0.0, 0.4])
    groups = np.array([2, 2, 2, 9, 9])
    report = audit(values, groups, k=3, epsilon=0.1, delta=0.5)
    np.testing.assert_array_equal(report.small_groups, [9])
    assert report.violating_groups.size == 0
    assert report.vulnerability == 0.0
    assert not report.satisfied
    assert audit(values, groups, k=2, epsilon=0.1, delta=0.5).satisfied


def test_zero_weight_column_is_ignored() -> None:
    values = np.array([[0.0, 0.0], [0.0, 1.0]])
    for metric in ("l1", "l2", "linf"):
        report = audit(values, [0, 0], k=2, epsilon=0.0, delta=1.0, metric=metric, weights=[1, 0])
        np.testing.assert_array_equal(report.neighbour_counts, [1, 1])


# --------------------------------------------------------------------------------------
# Large inputs (block paths), against independent references
# --------------------------------------------------------------------------------------


def test_one_group_of_30000_rows_matches_sorted_count() -> None:
    rng = np.random.default_rng(7)
    values = rng.integers(0, 1000, size=30_000) / 1000  # ties and exact-epsilon gaps
    epsilon = 0.005
    report = audit(values, np.zeros(30_000, dtype=np.int64), k=10, epsilon=epsilon, delta=0.9)
    # 1-D L1 with weight 1: the neighbours of x are the values in [x - thr, x + thr].
    thr = epsilon + 1e-9
    ordered = np.sort(values)
    expected = (
        np.searchsorted(ordered, values + thr, side="right")
        - np.searchsorted(ordered, values - thr, side="left")
        - 1
    )
    np.testing.assert_array_equal(report.neighbour_counts, expected)
    assert report.max_risk == expected.max() / 29_999
    t = math.floor((1 - 0.9) * 29_999 + 1e-9)
    np.testing.assert_array_equal(report.violating_rows, np.flatnonzero(expected > t))


@pytest.mark.parametrize("metric", ["l1", "l2", "linf"])
def test_mixed_sizes_match_per_group_numpy(metric: str) -> None:
    # Thousands of equal-size groups (several stacked blocks) plus one group of 1,500 rows
    # (row blocks), rows shuffled; reference: one full (g, g) matrix per group.
    rng = np.random.default_rng(11)
    sizes = [20] * 3000 + [7] * 500 + [1500, 1]
    groups = rng.permutation(np.repeat(np.arange(len(sizes)) * 3 + 1, sizes))
    values = rng.integers(0, 20, size=(groups.size, 2)) / 20
    weights = np.array([0.7, 0.3])
    epsilon, delta = 0.1, 0.8
    report = audit(
        values, groups, k=5, epsilon=epsilon, delta=delta, metric=metric, weights=weights
    )
    expected = np.empty(groups.size, dtype=np.int64)
    for gid in np.unique(groups):
        rows = np.flatnonzero(groups == gid)
        diff = np.abs(values[rows][:, None, :] - values[rows][None, :, :])
        if metric == "l1":
            dist = (diff * weights).sum(axis=2)
        elif metric == "l2":
            dist = np.sqrt((diff**2 * weights).sum(axis=2))
        else:
            dist = (diff * weights).max(axis=2)
        expected[rows] = (dist <= epsilon + 1e-9).sum(axis=1) - 1
    np.testing.assert_array_equal(report.neighbour_counts, expected)
    assert report.n_groups == len(sizes)
    np.testing.assert_array_equal(report.small_groups, [len(sizes) * 3 - 2])


# --------------------------------------------------------------------------------------
# Validation and immutability
# --------------------------------------------------------------------------------------

GOOD = {"k": 2, "epsilon": 0.1, "delta": 0.5}


@pytest.mark.parametrize(
    ("sensitive", "groups", "overrides", "error", "pattern"),
    [
        ([[0.1], [np.nan]], [0, 0], {}, ValueError, "sensitive"),
        ([0.1, 0.2, 0.3], [0, 0], {}, ValueError, "groups"),
        ([0.1, 0.2], [0, -2], {}, ValueError, "groups"),
        ([0.1, 0.2], [0.0, 0.5], {}, TypeError, "groups"),
        ([0.1, 0.2], [0, 0], {"k": 0}, ValueError, r"\bk\b"),
        ([0.1, 0.2], [0, 0], {"k": 2.5}, TypeError, r"\bk\b"),
        ([0.1, 0.2], [0, 0], {"delta": 1.5}, ValueError, "delta"),
        ([0.1, 0.2], [0, 0], {"delta": -0.1}, ValueError, "delta"),
        ([0.1, 0.2], [0, 0], {"epsilon": -0.1}, ValueError, "epsilon"),
        ([0.1, 0.2], [0, 0], {"epsilon": float("nan")}, ValueError, "epsilon"),
        ([0.1, 0.2], [0, 0], {"metric": "cosine"}, ValueError, "metric"),
        ([[0.1, 0.2], [0.3, 0.4]], [0, 0], {"weights": [1.0]}, ValueError, "weights"),
        ([[0.1, 0.2], [0.3, 0.4]], [0, 0], {"weights": [1.0, -1.0]}, ValueError, "weights"),
    ],
)
def test_invalid_input_names_the_parameter(
    sensitive: Any, groups: Any, overrides: dict[str, Any], error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        audit(sensitive, groups, **{**GOOD, **overrides})


def test_inputs_are_not_modified() -> None:
    rng = np.random.default_rng(3)
    sensitive = rng.random((50, 3))
    groups = rng.integers(0, 5, size=50)
    weights = np.array([0.2, 0.3, 0.5])
    copies = (sensitive.copy(), groups.copy(), weights.copy())
    report = audit(sensitive, groups, k=2, epsilon=0.3, delta=0.5, metric="l2", weights=weights)
    for original, copy in zip((sensitive, groups, weights), copies, strict=False):
        np.testing.assert_array_equal(original, copy)
    for name in ARRAY_FIELDS:
        array = getattr(report, name)
        assert not array.flags.writeable, name
        assert not np.shares_memory(array, sensitive) and not np.shares_memory(array, groups)


# --------------------------------------------------------------------------------------
# Presentation
# --------------------------------------------------------------------------------------


def test_str_shows_verdict_and_max_risk() -> None:
    bad = audit(
        TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.3, delta=0.5, metric="linf", weights=[1, 1, 1]
    )
    text = str(bad)
    assert "NOT satisfied" in text
    assert "0.7500" in text  # max risk 3/4
    assert "50.00%" in text  # vulnerability: 1 of 2 groups
    good = audit(
        TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.1, delta=0.75, metric="linf", weights=[1, 1, 1]
    )
    assert "satisfied" in str(good) and "NOT" not in str(good)
    assert "0.2500" in str(good)


def test_summary_is_plain_json() -> None:
    report = audit(
        TABLE_I, TABLE_I_GROUPS, k=5, epsilon=0.3, delta=0.5, metric="linf", weights=[1, 1, 1]
    )
    summary = json.loads(json.dumps(report.summary()))
    assert summary["satisfied"] is False
    assert summary["max_risk"] == 0.75
    assert summary["vulnerability"] == 0.5
    assert summary["n_groups"] == 2
    assert summary["n_violating_rows"] == 1
    assert (summary["k"], summary["epsilon"], summary["delta"], summary["metric"]) == (
        5,
        0.3,
        0.5,
        "linf",
    )


def test_a_table_audit_compares_a_sensitive_taxonomy_as_anonymize_did() -> None:
    """hierarchies= gives the audit of a published table the taxonomy distance anonymize
    used for that sensitive column, so its numbers are the report's."""
    import pandas as pd

    from proxanon import Hierarchy, anonymize

    tree = Hierarchy.from_rows([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"],
                                ["b2", "B", "*"]])
    frame = pd.DataFrame({"q": np.arange(40) % 10, "t": ["a1", "a2", "b1", "b2"] * 10})
    for delta in (0.5, 0.9):
        kw = dict(sensitive=["t"], k=4, epsilon=0.5, delta=delta)
        result = anonymize(frame, quasi_identifiers=["q"], hierarchies={"t": tree},
                           on_infeasible="best_effort", **kw)
        check = audit(result.table, quasi_identifiers=["q"], hierarchies={"t": tree}, **kw)
        assert check.satisfied == result.satisfied
        assert check.max_risk == result.report.max_risk
        assert len(check.violating_rows) == result.report.remaining_violations
    with pytest.raises(TypeError, match="hierarchies applies to a table.s sensitive columns"):
        audit(np.zeros(4), np.zeros(4, dtype=int), k=2, epsilon=0.1, delta=0.5,
              hierarchies={"t": tree})


# One ordering of the worst groups: ``worst_groups`` and the text list the same groups.


def ordered_report():
    rng = np.random.default_rng(3)
    sens = rng.integers(0, 4, 60) / 3
    groups = rng.permutation(np.arange(60) % 12) * 7  # ids need not be contiguous
    return audit(sens, groups, k=3, epsilon=0.1, delta=0.5)


def test_worst_groups_are_the_riskiest_ids_ties_by_id():
    checked = ordered_report()
    risk = dict(zip(checked.group_ids.tolist(), checked.group_risk.tolist(), strict=True))
    expected = sorted(risk, key=lambda g: (-risk[g], g))
    assert checked.worst_groups(len(risk)).tolist() == expected
    assert checked.worst_groups(4).tolist() == expected[:4]
    assert checked.worst_groups(0).size == 0


def test_the_report_lists_its_worst_groups_in_that_order():
    checked = ordered_report()
    listed = [int(g) for g in re.findall(r"^    group (\d+):", str(checked), re.MULTILINE)]
    assert listed == checked.worst_groups().tolist() and len(listed) == 5


def test_worst_groups_count_is_checked():
    with pytest.raises(ValueError, match="count must be >= 0"):
        ordered_report().worst_groups(-1)


def test_a_grouping_with_fewer_audited_rows_than_k_is_judged_not_refused() -> None:
    # Three rows audited (the rest left out, -1) against k = 4: the group is too small.
    values = np.linspace(0, 1, 8)[:, None]
    check = audit(values, np.array([0, 0, 0, -1, -1, -1, -1, -1]), k=4, epsilon=0.1, delta=0.5)
    assert not check.satisfied
    assert check.summary()["n_small_groups"] == 1
    assert check.group_sizes.tolist() == [3]
