"""Follow-ups to issues 9 and 16 in ``partition``: Mondrian's verdict and violations."""

from __future__ import annotations

import numpy as np
import pytest

from proxanon import InfeasibleError, audit, partition

# Four near-identical values: the whole table fails (3 neighbours each, t = 2 of 5), but
# the halves by QI hold two of them each (1 neighbour, t = 1 of 2) and pass.
SENS = np.array([0.0, 0.01, 0.02, 0.03, 0.5, 0.9])
QI = np.array([0.0, 3.0, 1.0, 4.0, 2.0, 5.0])
CHECKS = {"epsilon": 0.1, "delta": 0.5}


def test_mondrian_lists_only_the_rows_that_violate():
    result = partition(SENS, k=6, quasi_identifiers=QI, method="mondrian",
                       on_infeasible="best_effort", **CHECKS)
    assert not result.satisfied
    expected = audit(SENS, result.groups, k=6, **CHECKS).violating_rows
    np.testing.assert_array_equal(expected, [0, 1, 2, 3])
    np.testing.assert_array_equal(result.violating_rows, expected)
    assert result.stats["remaining_violations"] == 4


def test_mondrian_cut_of_a_failing_whole_table_is_satisfied():
    result = partition(SENS, k=3, quasi_identifiers=QI, method="mondrian", **CHECKS)
    assert result.satisfied and result.n_groups == 2
    assert result.violating_rows.size == 0
    assert audit(SENS, result.groups, k=3, **CHECKS).satisfied


def test_partition_infeasible_error_opens_with_a_one_line_summary():
    with pytest.raises(InfeasibleError) as caught:
        partition(np.zeros((20, 2)), k=5, epsilon=0.1, delta=1.0)
    first, details = str(caught.value).split("\n", 1)
    assert first == ("no partition satisfying (epsilon=0.1, delta=1)^k-dissimilarity with k=5 "
                     "was found: 20 row(s) violate in 4 of 4 group(s).")
    assert "XColor left 20 violating row(s) in 4 of 4 group(s)" in details
    assert "max_degree=19" in details and "Proof:" in details
