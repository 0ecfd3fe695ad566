"""audit_arrays on partitions with suppressed rows and a precomputed neighbour graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sparse

from proxanon import audit, partition


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
