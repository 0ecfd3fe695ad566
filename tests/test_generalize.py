"""The QI encoding (``proxanon.generalize``) at its limits, and the loss of a partition."""

from __future__ import annotations

import datetime
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from proxanon import anonymize, partition
from proxanon._results.measures import summarize_groups
from proxanon.generalize import QIColumn

HUGE = [1e308, -1e308]


def test_loss_of_a_column_whose_range_overflows_is_exact():
    codes = np.array(HUGE + [float(v) for v in range(10)])
    groups = np.array([0, 1] + [2] * 5 + [3] * 5)
    summary = summarize_groups([QIColumn("q", codes, None)], groups)
    width = Fraction(1e308) - Fraction(-1e308)
    for g in range(4):
        members = codes[groups == g]
        exact = (Fraction(members.max()) - Fraction(members.min())) / width
        assert summary.cost[g, 0] == pytest.approx(float(exact), rel=1e-15, abs=0)
    assert np.isfinite(summary.loss()) and np.isfinite(summary.gcp())


def test_anonymize_reports_a_finite_loss_over_a_huge_qi_range():
    table = pd.DataFrame({"q": HUGE + list(range(10)), "s": np.linspace(0, 1, 12)})
    report = anonymize(table, quasi_identifiers=["q"], sensitive=["s"], k=3, epsilon=.05,
                       delta=.5).report
    assert 0.0 <= report.loss <= 1.0
    assert 0.0 <= report.gcp <= 1.0


def test_mondrian_cuts_a_qi_whose_range_overflows():
    """The native loss model scales such a column into [0, 1] too (no NaN, no collapse)."""
    qi = (np.linspace(-1, 1, 12) * 1e308)[[11, 0, *range(1, 11)]]
    result = partition(np.linspace(0, 1, 12), k=3, quasi_identifiers=qi, method="mondrian")
    sizes = np.bincount(result.groups)
    assert sizes.size == 4 and sizes.min() >= 3
    # strict Mondrian: the groups are disjoint intervals of q
    spans = sorted((qi[result.groups == g].min(), qi[result.groups == g].max())
                   for g in range(sizes.size))
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_object_qi_keeps_booleans_apart_from_equal_numbers():
    """True == 1 in Python, but they are different QI values and both need a leaf."""
    q = np.array([1, True, 0, False] * 3, dtype=object)
    table = pd.DataFrame({"q": q, "s": np.linspace(0, 1, 12)})
    result = anonymize(table, quasi_identifiers=["q"], sensitive=["s"], k=3, epsilon=.05,
                       delta=.5)
    published = result.table["q"].astype(str).to_numpy()
    assert set(published) <= {"1", "True", "0", "False", "*"}
    kept = published != "*"
    np.testing.assert_array_equal(published[kept], q.astype(str)[kept])


def test_complex_qi_column_is_refused_not_truncated():
    table = pd.DataFrame({"q": np.array([1 + 1j, 1 + 2j, 0, 3] * 3), "s": np.linspace(0, 1, 12)})
    with pytest.raises(ValueError, match=r"quasi-identifier column 'q' holds complex numbers"):
        anonymize(table, quasi_identifiers=["q"], sensitive=["s"], k=3, epsilon=.05, delta=.5)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, "Int64"])
def test_integer_qi_beyond_two_to_the_53_is_refused_by_column_and_row(dtype) -> None:
    """Its float64 codes would merge 2^53 + 1 with 2^53 and publish numbers not in the data."""
    frame = pd.DataFrame({"id": pd.array([5, 2**53 + 1, 7, 9], dtype=dtype),
                          "s": [0.0, 1.0, 0.0, 1.0]})
    with pytest.raises(ValueError,
                       match=r"'id' holds integers beyond 2\^53.*9007199254740993 at row 1"):
        anonymize(frame, quasi_identifiers=["id"], sensitive=["s"], k=2, epsilon=0.1, delta=1.0)
    frame["id"] = pd.array([5, 2**53, 7, -(2**53)] if dtype != np.uint64 else [5, 2**53, 7, 9],
                           dtype=dtype)  # 2^53 is exact: accepted
    result = anonymize(frame, quasi_identifiers=["id"], sensitive=["s"], k=2, epsilon=0.1,
                       delta=1.0)
    assert str(2**53) in " ".join(result.table["id"].astype(str))


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_date_qi_outside_nanosecond_instants_is_refused_not_wrapped(unit: str) -> None:
    """1500-01-01 as a nanosecond instant wraps around to 2084: refused, naming column and
    row; dates within the range in the same unit are published as they are."""
    dates = np.array(["2000-01-01", "1500-06-01", "2000-01-02", "2000-01-03"],
                     dtype=f"datetime64[{unit}]")
    frame = pd.DataFrame({"when": np.repeat(dates, 2), "s": [0.0, 1.0] * 4})
    with pytest.raises(ValueError, match=r"'when' holds a date outside .*1500-06-01.* at row 2"):
        anonymize(frame, quasi_identifiers=["when"], sensitive=["s"], k=2, epsilon=0.1,
                  delta=1.0)
    frame["when"] = np.repeat(np.array(["1700-01-01", "1800-06-01", "2000-01-01",
                                        "2262-04-01"], dtype=f"datetime64[{unit}]"), 2)
    result = anonymize(frame, quasi_identifiers=["when"], sensitive=["s"], k=2, epsilon=0.1,
                       delta=1.0)
    assert result.table["when"].tolist() == ["1700-01-01"] * 2 + ["1800-06-01"] * 2 + [
        "2000-01-01"] * 2 + ["2262-04-01"] * 2


@pytest.mark.parametrize("values", [
    pd.to_timedelta([1, 2, 3, 4], unit="h"),
    pd.Series(pd.period_range("2020-01", periods=4, freq="M")),
])
def test_a_qi_of_values_proxanon_cannot_generalize_is_refused_by_column(values) -> None:
    """Durations and periods are neither numbers, dates nor labels: named, with a fix."""
    frame = pd.DataFrame({"t": values, "s": [0.0, 1.0, 0.0, 1.0]})
    with pytest.raises(TypeError, match=r"quasi-identifier column 't' .*convert the column"):
        anonymize(frame, quasi_identifiers=["t"], sensitive=["s"], k=2, epsilon=0.1, delta=1.0)


def test_a_hierarchy_path_that_is_a_directory_is_refused_by_column(tmp_path) -> None:
    frame = pd.DataFrame({"job": ["a", "b", "a", "b"], "s": [0.0, 1.0, 0.0, 1.0]})
    with pytest.raises(ValueError, match=r"hierarchy file for column 'job' is a directory"):
        anonymize(frame, quasi_identifiers=["job"], sensitive=["s"], k=2, epsilon=0.1,
                  delta=1.0, hierarchies={"job": str(tmp_path)})


def test_text_qi_values_are_published_as_given_and_kept_apart() -> None:
    """Without a hierarchy, 'a' and 'a ' are two values: a class of one value publishes it
    byte for byte (a stripped 'a' is not the row's own value), a mixed class '*'."""
    q = np.array(["a", "a ", " b"] * 8, dtype=object)
    frame = pd.DataFrame({"q": q, "s": np.arange(24.0)})
    result = anonymize(frame, quasi_identifiers=["q"], sensitive=["s"], k=4, epsilon=0.01,
                       delta=0.5)
    published = result.table["q"].to_numpy()
    kept = published != "*"
    assert kept.all()  # every value holds 8 rows: each is a class of its own
    np.testing.assert_array_equal(published[kept], q[kept])
    assert set(frame["q"]) == {"a", "a ", " b"}  # the input is as it was


def test_exact_fractions_are_published_as_themselves() -> None:
    """A QI of Fractions: 1/3 is published as '1/3' (its float text would be a value not in
    the data; 1/2 may read '0.5', the same number), and two fractions one float cannot tell
    apart stay two values."""
    from fractions import Fraction

    close = Fraction(1, 3) + Fraction(1, 10**20)
    assert float(close) == float(Fraction(1, 3))
    # 2^-60 is a float, but its float's text is a decimal that is not it; 10^400 / 3 is
    # beyond any float.
    q = np.array([Fraction(1, 3), close, Fraction(1, 2), Fraction(1, 2**60),
                  Fraction(10**400, 3)] * 6, dtype=object)
    frame = pd.DataFrame({"q": q, "s": np.arange(30.0)})
    result = anonymize(frame, quasi_identifiers=["q"], sensitive=["s"], k=3, epsilon=0.01,
                       delta=0.5)
    assert result.report.groups == 5
    assert all(Fraction(label) == value for label, value in zip(result.table["q"], q, strict=True))


def test_date_qis_a_nanosecond_apart_are_two_values() -> None:
    """Nanoseconds since 1970 beyond 2^53 round together as float64: the codes count from
    the column's earliest instant, so two instants 1 ns apart are two classes."""
    times = pd.to_datetime(["2021-01-05 10:00:00.000000001"] * 3
                           + ["2021-01-05 10:00:00.000000002"] * 3)
    frame = pd.DataFrame({"d": times, "s": [0.0, 1.0, 2.0] * 2})
    result = anonymize(frame, quasi_identifiers=["d"], sensitive=["s"], k=3, epsilon=0.0,
                       delta=0.9)
    assert result.satisfied
    assert result.table["d"].tolist() == ["2021-01-05T10:00:00.000000001"] * 3 + [
        "2021-01-05T10:00:00.000000002"] * 3


def test_date_qis_no_float_tells_apart_are_refused_with_the_pair() -> None:
    """Over a span of years, float64 codes keep no nanoseconds: refused, naming the two
    instants and the fix; milliseconds over the whole range are told apart."""
    times = pd.to_datetime(["2001-01-05 10:00:00"] * 3 + ["2021-01-05 10:00:00.000000002"] * 3
                           + ["2021-01-05 10:00:00.000000003"] * 3, format="ISO8601")
    frame = pd.DataFrame({"d": times, "s": [0.0, 1.0, 2.0] * 3})
    with pytest.raises(ValueError, match=r"'d' holds instants too close .*"
                                         r"10:00:00.000000002 and .*000000003.*dt.floor"):
        anonymize(frame, quasi_identifiers=["d"], sensitive=["s"], k=3, epsilon=0.0, delta=0.9)
    frame["d"] = pd.to_datetime(["1700-01-05 10:00:00"] * 3 + ["2250-01-05 10:00:00.001"] * 3
                                + ["2250-01-05 10:00:00.002"] * 3, format="ISO8601")
    result = anonymize(frame, quasi_identifiers=["d"], sensitive=["s"], k=3, epsilon=0.0,
                       delta=0.9)
    assert result.table["d"].nunique() == 3


def test_date_qis_on_the_first_day_of_nanosecond_instants_are_refused_not_crashed() -> None:
    """A date on 1677-09-21 has no nanosecond midnight, which its published label reads:
    refused by column and row (it crashed in pandas' normalize); the next day is published."""
    frame = pd.DataFrame({"d": pd.to_datetime(["1677-09-21 06:00"] * 2 + ["2000-01-01 00:00"] * 2),
                          "s": [0.0, 1.0, 0.0, 1.0]})
    with pytest.raises(ValueError, match=r"'d' holds a date outside 1677-09-22.*at row 0"):
        anonymize(frame, quasi_identifiers=["d"], sensitive=["s"], k=2, epsilon=0.1, delta=0.5)
    frame["d"] = pd.to_datetime(["1677-09-22 06:00"] * 2 + ["2000-01-01 00:00"] * 2)
    result = anonymize(frame, quasi_identifiers=["d"], sensitive=["s"], k=2, epsilon=0.1,
                       delta=0.5)
    assert result.table["d"].iloc[0] == "1677-09-22T06:00:00"


def test_a_text_qi_value_that_cannot_be_a_leaf_is_named_with_its_column() -> None:
    frame = pd.DataFrame({"q": ["a", "*", "b", "a"], "s": [0.0, 1.0, 0.5, 0.2]})
    with pytest.raises(ValueError, match=r"quasi-identifier column 'q': .*'\*'"):
        anonymize(frame, quasi_identifiers=["q"], sensitive=["s"], k=2, epsilon=0.1, delta=0.5)


def test_a_qi_of_python_dates_is_generalized_as_the_same_dates_in_datetime64() -> None:
    days = [datetime.date(2020, 1, 1) + datetime.timedelta(days=int(d))
            for d in np.random.default_rng(3).integers(0, 400, 60)]
    frame = pd.DataFrame({"when": days, "s": np.linspace(0, 1, 60)})
    converted = frame.assign(when=pd.to_datetime(frame["when"]))
    privacy = {"k": 3, "epsilon": 0.05, "delta": 0.5}
    as_objects = anonymize(frame, quasi_identifiers=["when"], sensitive=["s"], **privacy)
    as_dates = anonymize(converted, quasi_identifiers=["when"], sensitive=["s"], **privacy)
    assert as_objects.table["when"].tolist() == as_dates.table["when"].tolist()
    assert np.array_equal(as_objects.groups, as_dates.groups)
    assert frame["when"].tolist() == days  # the caller's column is not changed


def test_a_sensitive_column_of_python_dates_names_the_conversion() -> None:
    frame = pd.DataFrame({"q": np.arange(8) % 2,
                          "born": [datetime.date(1990, 1, 1 + i) for i in range(8)]})
    with pytest.raises(ValueError, match=r"datetime.date objects: convert them with "
                       r"frame\['born'\] = pd.to_datetime\(frame\['born'\]\)"):
        anonymize(frame, quasi_identifiers=["q"], sensitive=["born"], k=2, epsilon=0.1,
                  delta=0.5)
