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
