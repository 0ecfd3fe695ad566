"""audit_arrays on partitions with suppressed rows and a precomputed neighbour graph."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import audit, partition
from tests.conftest import brute_neighbours


def brute_force_counts(near: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """D_G(v) by looping over pairs; -1 for a suppressed row."""
    counts = np.full(groups.shape[0], -1)
    for v in np.flatnonzero(groups >= 0):
        counts[v] = sum(1 for u in np.flatnonzero(groups == groups[v]) if u != v and near[u, v])
    return counts


def test_a_suppressed_partition_is_audited_with_the_graph_partition_used():
    # 22 equal values cannot all fit 2 to a group of 3 (t = 1) among 30 rows: partition
    # suppresses some; the audit must resolve the 30 x 30 graph against the kept rows.
    rng = np.random.default_rng(3)
    values = np.r_[np.zeros(22), rng.random(8)]
    near = np.abs(values[:, None] - values[None, :]) <= 0.05
    for graph in (sparse.csr_matrix(near.astype(np.int8)), sparse.coo_array(near)):
        result = partition(values, k=3, epsilon=0.05, delta=0.5, metric=graph,
                           on_infeasible="suppress", max_suppression=0.6)
        assert (result.groups == -1).any()
        report = audit(values, result.groups, k=3, epsilon=0.05, delta=0.5, metric=graph)
        counts = brute_force_counts(near, result.groups)
        np.testing.assert_array_equal(report.neighbour_counts, counts)
        np.testing.assert_array_equal(report.suppressed_rows, np.flatnonzero(result.groups < 0))
        assert report.satisfied == result.satisfied


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.slow
def test_neighbour_counts_of_large_groups_match_brute_force(data) -> None:
    """Groups with more distinct values than the pairwise path takes are counted through an
    index over their own values: the counts, verdict and violating rows must equal a brute
    force over every pair (values on a lattice, so distances fall exactly at epsilon)."""
    s = data.draw(st.integers(1, 3), label="components")
    n = data.draw(st.integers(60, 260), label="n")
    levels = data.draw(st.sampled_from([4, 10, 40, 100]), label="levels")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    sensitive = rng.integers(0, levels + 1, size=(n, s)) / levels
    metric = data.draw(st.sampled_from(["l1", "l2", "linf", "min_component"]), label="metric")
    allowed = [0.5, 1.0] if metric == "min_component" else [0.0, 0.5, 1.0]
    weights = np.array(data.draw(st.lists(st.sampled_from(allowed), min_size=s, max_size=s),
                                 label="weights"))
    if metric != "min_component" and not weights.any():
        weights[0] = 1.0
    eps = data.draw(st.sampled_from([0.0, 0.1, 0.25]), label="epsilon")
    groups = rng.integers(0, data.draw(st.integers(1, 3), label="groups"), n) * 7 + 3
    report = audit(sensitive, groups, k=1, epsilon=eps, delta=0.7, metric=metric,
                   weights=weights)
    expected = np.array([
        sum(1 for b in range(n) if b != a and groups[b] == groups[a] and (
            np.array_equal(sensitive[a], sensitive[b])
            or brute_neighbours(sensitive[a], sensitive[b], metric, weights, eps)))
        for a in range(n)])
    np.testing.assert_array_equal(report.neighbour_counts, expected)
    sizes = {g: int((groups == g).sum()) for g in np.unique(groups)}
    allowed_t = np.array([np.floor(0.3 * (sizes[g] - 1) + 1e-9) for g in groups])
    np.testing.assert_array_equal(report.violating_rows, np.flatnonzero(expected > allowed_t))
