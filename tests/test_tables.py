"""Sensitive columns scaled to [0, 1] (docs/design/definitions.md): extreme ranges, dates, dtypes
pandas offers.

References are exact: ``fractions.Fraction`` for min-max quotients and integer tick counts
for dates, so the scaling under test is never its own reference.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon.audit import audit_arrays
from proxanon.tables import real_values, scale_column, scale_sensitive, span_fraction


def exact_min_max(values: list[float]) -> list[float]:
    """(x - min) / (max - min) in rational arithmetic, rounded once to float."""
    lo, hi = Fraction(min(values)), Fraction(max(values))
    if hi == lo:
        return [0.0] * len(values)
    return [float((Fraction(x) - lo) / (hi - lo)) for x in values]


def assert_close_to_exact(got: np.ndarray, values: list[float]) -> None:
    # Two roundings (numerator, denominator) and the division: a few units in the last place.
    want = np.array(exact_min_max(values))
    assert np.isfinite(got).all()
    assert ((got >= 0.0) & (got <= 1.0)).all()
    assert (np.abs(got - want) <= 4 * np.finfo(float).eps * want + 5e-324).all(), (got, want)


def test_a_range_that_overflows_scales_to_finite_exact_fractions():
    values = [1e308, -1e308, 0.0, 1.0, 5e307, -1.7e308, 1.7e308, 5e-324, -2.5e-310]
    assert max(values) - min(values) == float("inf")  # the case at hand
    assert_close_to_exact(scale_column(pd.Series(values), "s"), values)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=12))
def test_min_max_scaling_matches_exact_arithmetic(values):
    assert_close_to_exact(scale_column(pd.Series(values, dtype=np.float64), "s"), values)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=4, max_size=4))
def test_a_group_share_of_a_range_matches_exact_arithmetic(bounds):
    lo, start, stop, hi = sorted(bounds)
    got = float(span_fraction(start, stop, lo, hi))
    want = 0.0 if hi == lo else float((Fraction(stop) - Fraction(start))
                                      / (Fraction(hi) - Fraction(lo)))
    assert 0.0 <= got <= 1.0
    assert abs(got - want) <= 4 * np.finfo(float).eps * want + 5e-324


def test_anonymize_accepts_a_sensitive_column_whose_range_overflows():
    # Scaled, the twelve values are 0, 1 and 0.05 .. 0.95 in steps of 0.1: no two are
    # 0.05-neighbours, so every partition satisfies; before, scaling gave NaN and anonymize
    # blamed "non-finite values" the table does not have.
    inner = [(2 * i - 9) * 0.1e308 for i in range(10)]
    values = [-1e308, 1e308, *inner]
    frame = pd.DataFrame({"zone": np.arange(12) % 3, "s": values})
    result = proxanon.anonymize(frame, quasi_identifiers=["zone"], sensitive=["s"], k=3,
                                epsilon=0.04, delta=0.5)
    reference = np.array(exact_min_max(values))
    check = audit_arrays(reference, result.groups, k=3, epsilon=0.04, delta=0.5)
    assert result.report.satisfied and check.satisfied
    assert result.report.max_risk == check.max_risk == 0.0


DAYS = [0, 3, 10, 365, 7, 364]


def _dates(unit: str) -> pd.Series:
    return pd.Series(np.array(DAYS, dtype="datetime64[D]").astype(f"datetime64[{unit}]"))


def _durations(unit: str) -> pd.Series:
    return pd.Series(np.array(DAYS, dtype="timedelta64[D]").astype(f"timedelta64[{unit}]"))


@pytest.mark.parametrize(
    ("make", "arrow"),
    [
        (lambda: _dates("s"), False),
        (lambda: _dates("ns"), False),
        (lambda: _dates("ns").dt.tz_localize("Asia/Tokyo"), False),
        (lambda: _dates("ms").astype("timestamp[ms][pyarrow]"), True),
        (lambda: _durations("us"), False),
        (lambda: _durations("s").astype("duration[s][pyarrow]"), True),
    ],
    ids=["datetime64[s]", "datetime64[ns]", "Asia/Tokyo", "pyarrow timestamp", "timedelta64",
         "pyarrow duration"],
)
def test_dates_and_durations_scale_by_their_span_in_any_unit_or_zone(make, arrow):
    if arrow:
        pytest.importorskip("pyarrow")
    np.testing.assert_allclose(scale_column(make(), "when"), np.array(DAYS) / 365,
                               rtol=1e-15, atol=0)


def test_a_date_span_beyond_int64_ticks_scales_exactly():
    stamps = pd.Series([pd.Timestamp.min, pd.Timestamp.max, pd.Timestamp("2000-01-01")])
    ticks = [int(t.value) for t in stamps]  # nanoseconds; max - min exceeds int64
    assert ticks[1] - ticks[0] > 2**63
    want = [float(Fraction(t - ticks[0], ticks[1] - ticks[0])) for t in ticks]
    np.testing.assert_allclose(scale_column(stamps, "when"), want, rtol=1e-15, atol=0)


def test_a_missing_date_is_refused_by_column_and_row():
    series = pd.Series(pd.to_datetime(["2020-01-01", None, "2020-02-01"]))
    with pytest.raises(ValueError, match=r"'when' has a missing date or duration \(NaT\) at row 1"):
        scale_column(series, "when")


def test_anonymize_and_audit_take_a_date_sensitive_column_as_its_span():
    days = np.array([0, 40, 80, 120, 160, 200, 240, 280, 320, 360, 5, 45])
    frame = pd.DataFrame({"zone": np.arange(12) % 3,
                          "admitted": pd.to_datetime("2020-01-01") + pd.to_timedelta(days, "D")})
    result = proxanon.anonymize(frame, quasi_identifiers=["zone"], sensitive=["admitted"], k=3,
                                epsilon=0.02, delta=0.5)
    scaled = (days - days.min()) / (days.max() - days.min())
    check = audit_arrays(scaled, result.groups, k=3, epsilon=0.02, delta=0.5)
    assert check.satisfied == result.report.satisfied
    assert check.max_risk == result.report.max_risk


@pytest.mark.parametrize(
    ("column", "pattern"),
    [
        (np.arange(6) + 1j, r"'s' holds complex numbers"),
        (pd.array(["1", "2", "3", "4", "5", "6"], dtype="string"),
         r"'s' has dtype string.*pd\.to_numeric"),
        (np.array([1, "a", 2.5, 3, 4, 5], dtype=object), r"'s' has dtype object.*pd\.to_numeric"),
        (pd.array([1, None, 3, 4, 5, 6], dtype="Int64"), r"'s' has a missing .* at row 1"),
        (np.full(6, np.nan), r"'s' has a missing or non-finite value at row 0"),
        (np.array([True, False] * 3), r"'s' has dtype bool"),
        (pd.Categorical(list("abcabc")), r"'s' is an unordered categorical"),
    ],
    ids=["complex", "string", "mixed object", "Int64 with NA", "all NaN", "bool",
         "unordered categorical"],
)
def test_columns_that_are_not_a_scale_are_refused_by_name(column, pattern):
    frame = pd.DataFrame({"zone": np.arange(6) % 2, "s": column})
    with pytest.raises(ValueError, match=pattern):
        scale_sensitive(frame, "s")
    with pytest.raises(ValueError, match=pattern):
        proxanon.anonymize(frame, quasi_identifiers="zone", sensitive="s", k=2, epsilon=0.1,
                           delta=0.5)
    with pytest.raises(ValueError, match=pattern):
        proxanon.audit(frame, quasi_identifiers="zone", sensitive="s", k=2, epsilon=0.1,
                       delta=0.5)


def test_extension_numbers_scale_like_numpy_numbers():
    values = [3.5, -1.0, 7.25, 0.0]
    want = scale_column(pd.Series(values), "s")
    np.testing.assert_array_equal(scale_column(pd.Series(values, dtype="Float64"), "s"), want)
    ints = [3, -1, 7, 0]
    np.testing.assert_array_equal(scale_column(pd.Series(ints, dtype="Int64"), "s"),
                                  scale_column(pd.Series(ints, dtype=np.int64), "s"))


def test_an_ordered_categorical_ranks_over_all_its_categories_used_or_not():
    series = pd.Series(pd.Categorical(["low", "high", "low"],
                                      categories=["low", "mid", "high", "top"], ordered=True))
    np.testing.assert_array_equal(scale_column(series, "s"), [0.0, 2 / 3, 0.0])


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame([[0.1, 0.2], [0.3, 0.4]], columns=["s", "s"]),
        pd.DataFrame([[0.1, 0.2], [0.3, 0.4]],
                     columns=pd.MultiIndex.from_tuples([("s", "a"), ("s", "b")])),
    ],
    ids=["duplicated name", "MultiIndex level"],
)
def test_a_name_that_picks_several_columns_is_refused(frame):
    with pytest.raises(ValueError, match=r"sensitive: 's' names 2 columns of the table"):
        scale_sensitive(frame, "s")
    # audit refuses any repeated name first (its table would be ambiguous); a MultiIndex
    # level has no repeated name and reaches the per-column check.
    with pytest.raises(ValueError, match=r"more than one column named 's'|'s' names 2 columns"):
        proxanon.audit(frame, groups=[0, 0], sensitive="s", k=2, epsilon=0.1, delta=0.5)


def test_an_empty_table_is_refused_by_column():
    frame = pd.DataFrame({"zone": pd.Series([], dtype=float), "s": pd.Series([], dtype=float)})
    with pytest.raises(ValueError, match=r"sensitive column 's' is empty"):
        scale_sensitive(frame, "s")
    with pytest.raises(ValueError, match=r"sensitive column 's' is empty"):
        proxanon.audit(frame, quasi_identifiers="zone", sensitive="s", k=1, epsilon=0.1,
                       delta=0.5)


def test_real_values_name_the_role_column_and_row():
    with pytest.raises(ValueError, match=r"quasi-identifier column 'zip' holds complex numbers"):
        real_values(pd.Series([1 + 2j, 3 + 0j]), "zip", "quasi-identifier")
    with pytest.raises(ValueError, match=r"quasi-identifier column 'zip' has a missing .* row 2"):
        real_values(pd.Series([1, 2, None], dtype="Int64"), "zip", "quasi-identifier")
    np.testing.assert_array_equal(real_values(pd.Series([3, 1], dtype="Int64"), "zip", "q"),
                                  [3.0, 1.0])


@settings(max_examples=60, deadline=None)
@given(base=st.sampled_from([0, 2**53, 10**17, 2**62, -(2**63)]),
       offsets=st.lists(st.integers(0, 2**40), min_size=2, max_size=12),
       unsigned=st.booleans())
def test_integers_beyond_two_to_the_53_scale_exactly(base: int, offsets: list[int],
                                                     unsigned: bool) -> None:
    """Integers scale by their exact differences, not by their float64 roundings (1e17 + 10
    and 1e17 + 16 are one float): the reference is rational arithmetic on the integers."""
    if unsigned:  # the same spread of bases, moved onto [0, 2^64)
        base += 2**63
    values = [base + x for x in offsets]
    dtype = np.uint64 if unsigned else np.int64
    got = scale_column(pd.Series(np.array(values, dtype=dtype)), "s")
    lo, hi = min(values), max(values)
    want = [0.0 if hi == lo else float(Fraction(v - lo, hi - lo)) for v in values]
    assert np.allclose(got, want, rtol=0, atol=1e-15)
    masked = pd.array(values, dtype="UInt64" if unsigned else "Int64")
    nullable = scale_column(pd.Series(masked), "s")
    assert np.array_equal(nullable, got)


def test_an_audit_over_integers_beyond_two_to_the_53_counts_their_true_gaps() -> None:
    """10^17 + 0, 10, 20, 30 are a third of their range apart: no two are neighbours at
    epsilon 0.2 (float64 would put 10^17 + 10 and + 20 at 10^17 + 8 and + 16)."""
    frame = pd.DataFrame({"q": [1] * 4 + [2] * 4,
                          "s": np.array([10**17 + i for i in [0, 10, 20, 30] * 2], np.int64)})
    report = proxanon.audit(frame, quasi_identifiers=["q"], sensitive=["s"], k=4,
                            epsilon=0.2, delta=1.0)
    assert report.satisfied and report.max_risk == 0.0
