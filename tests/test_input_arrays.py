"""Arrays and group ids that numpy would convert silently but wrongly are refused clearly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from proxanon import advise, audit, partition

GOOD = np.linspace(0, 1, 40).reshape(20, 2)

# Arrays numpy would turn into floats silently but wrongly are refused by every entry point.
NOT_REALS = [
    (np.arange(20) + 1j, r"sensitive holds complex numbers"),
    (np.arange(20).astype("datetime64[D]"), r"sensitive holds dates or durations"),
    (np.arange(20).astype("timedelta64[s]"), r"sensitive holds dates or durations"),
    (np.array([f"{i / 20}" for i in range(20)]), r"sensitive must be a numeric array; it holds"),
    (np.array([0.5, "0.25"] * 10, dtype=object), r"sensitive must be a numeric array; it holds"),
    (np.array([pd.Timestamp("2020-01-01", tz="UTC")] * 20, dtype=object),
     r"sensitive holds dates or durations"),
]
NOT_REAL_IDS = ["complex", "datetime64", "timedelta64", "numeric text", "object with text",
                "object with timestamps"]


@pytest.mark.parametrize(("values", "pattern"), NOT_REALS, ids=NOT_REAL_IDS)
def test_values_that_are_not_real_numbers_are_refused(values, pattern):
    snapshot = values.copy()
    with pytest.raises(TypeError, match=pattern):
        partition(values, k=4, epsilon=0.1, delta=0.5)
    with pytest.raises(TypeError, match=pattern):
        audit(values, np.arange(20) // 4, k=4, epsilon=0.1, delta=0.5)
    with pytest.raises(TypeError, match=pattern):
        advise(values, k=4, epsilon=0.1, delta=0.5)
    with pytest.raises(TypeError, match=pattern.replace("sensitive", "quasi_identifiers")):
        partition(GOOD, quasi_identifiers=values, k=4, epsilon=0.1, delta=0.5)
    np.testing.assert_array_equal(values, snapshot)


@pytest.mark.parametrize(
    ("groups", "error", "pattern"),
    [
        # uint64 ids past int64 used to wrap to -1: rows silently audited as suppressed.
        (np.array([2**64 - 1] * 10 + [0] * 10, dtype=np.uint64), ValueError,
         r"groups holds the id 18446744073709551615, beyond int64"),
        (np.array([1e30] * 10 + [0.0] * 10), TypeError, r"row 0 has 1e\+30"),
        (np.array([np.nan] + [0.0] * 19), TypeError, r"row 0 has nan"),
        (pd.array([0] * 19 + [None], dtype="Int64"), TypeError, r"row 19 has nan"),
        (np.array(["a"] * 20), TypeError, r"pd\.factorize"),
    ],
    ids=["uint64 beyond int64", "huge float", "NaN", "Int64 with NA", "labels"],
)
def test_group_ids_that_are_not_int64_ids_are_refused(groups, error, pattern):
    with pytest.raises(error, match=pattern):
        audit(GOOD, groups, k=4, epsilon=0.1, delta=0.5)


def test_masked_entries_are_refused_not_unmasked():
    values = np.ma.masked_array(np.linspace(0, 1, 20), mask=[False] * 7 + [True] + [False] * 12)
    with pytest.raises(ValueError, match=r"sensitive has 1 masked \(missing\) entries, the "
                                         r"first at index 7"):
        partition(values, k=4, epsilon=0.1, delta=0.5)
    groups = np.ma.masked_array(np.arange(20) // 4, mask=[True] + [False] * 19)
    with pytest.raises(ValueError, match=r"groups has 1 masked"):
        audit(GOOD, groups, k=4, epsilon=0.1, delta=0.5)


def test_zero_dimensional_arrays_are_numbers():
    a = audit(GOOD, np.arange(20) // 4, k=np.array(4), epsilon=np.array(0.1), delta=np.array(0.5))
    b = audit(GOOD, np.arange(20) // 4, k=4, epsilon=0.1, delta=0.5)
    np.testing.assert_array_equal(a.neighbour_counts, b.neighbour_counts)
    with pytest.raises(TypeError, match="k must be an integer"):
        audit(GOOD, np.arange(20) // 4, k=np.array([4]), epsilon=0.1, delta=0.5)


def brute_force_l1_counts(values: list[float], groups: list[int], epsilon: float) -> list[int]:
    """D_G(v) with Python floats, which overflow to inf without a warning."""
    return [sum(1 for u, (y, h) in enumerate(zip(values, groups, strict=True))
                if u != v and h == groups[v]
                and (x == y or abs(x - y) <= epsilon + 1e-9 * max(1.0, epsilon)))
            for v, x in enumerate(values)]


def test_audit_of_values_whose_distances_overflow():
    import warnings

    values = [1e308, -1e308, 0.5, -1.5e308, 1.7e308, 1.7e308, 0.0, 0.01]
    groups = [0, 0, 0, 0, 1, 1, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # overflow to inf is the verdict, not a warning
        report = audit(values, groups, k=4, epsilon=0.1, delta=0.5)
    np.testing.assert_array_equal(report.neighbour_counts,
                                  brute_force_l1_counts(values, groups, 0.1))
    # With an epsilon near the float range, inf could be the wrong verdict: refused.
    with pytest.raises(ValueError, match=r"distances between these sensitive values overflow"):
        audit(values, groups, k=4, epsilon=1e308, delta=0.5)
