"""``sensitive_ranges``: numeric sensitive columns scaled by a given (min, max) instead of
their own, the same way by ``anonymize`` (its own audit included, after suppression too) and by
``audit``, and reported as the scale the verdict was reached on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from proxanon import Hierarchy, InfeasibleError, anonymize, audit

from .conftest import brute_classes_satisfy
from .test_candidates import QI, SA, small_tables

#: Wider than any column small_tables draws (incomes to 7,000, hours to 50).
RANGES = {"income": (-10_000.0, 20_000.0), "hours": (0.0, 100.0)}


def brute_satisfied_on(frame: pd.DataFrame, classes: np.ndarray, k: int, epsilon: float,
                       delta: float) -> bool:
    """(ε, δ)^k-dissimilarity with every sensitive column scaled by RANGES, pair by pair."""
    sens = np.column_stack([(frame[c].to_numpy() - RANGES[c][0]) / (RANGES[c][1] - RANGES[c][0])
                            for c in SA])
    return brute_classes_satisfy(sens, classes, k, epsilon, delta)


def check_published_on_ranges(frame: pd.DataFrame, k: int, epsilon: float, delta: float,
                              **options: object) -> np.ndarray:
    """anonymize with RANGES: its audit's scales are RANGES, the published rows satisfy the
    principle on them (brute force), and audit(published table, sensitive_ranges=RANGES)
    repeats its counts. Returns the group per row (-1: suppressed)."""
    common = dict(quasi_identifiers=QI, sensitive=SA, k=k, epsilon=epsilon, delta=delta,
                  sensitive_ranges=RANGES)
    result = anonymize(frame, **common, **options)
    assert result.audit is not None and result.audit.scales == RANGES
    released = np.flatnonzero(result.groups >= 0)
    published = result.table.groupby(QI, sort=False).ngroup().to_numpy()
    assert result.satisfied
    assert brute_satisfied_on(frame.iloc[released].reset_index(drop=True), published, k,
                              epsilon, delta)
    again = audit(result.table, **common)
    assert again.satisfied and again.scales == RANGES
    counts = result.audit.neighbour_counts
    assert np.array_equal(np.sort(again.neighbour_counts), np.sort(counts[counts >= 0]))
    groups: np.ndarray = result.groups
    return groups


@settings(max_examples=60, deadline=None)
@given(case=small_tables())
def test_published_rows_are_checked_on_the_given_ranges(case) -> None:
    frame, k, epsilon, delta = case
    try:
        check_published_on_ranges(frame, k, epsilon, delta, on_infeasible="suppress",
                                  max_suppression=0.3)
    except InfeasibleError:
        pass


def test_rows_left_out_do_not_change_the_scale() -> None:
    # Most rows hold the same values: some must be left out, which narrows the published
    # columns' own ranges; the check stays on the given ones.
    rng = np.random.default_rng(3)
    same = np.arange(40) < 28
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], 40), "age": rng.integers(20, 60, 40),
                          "income": np.where(same, 5000.0, rng.integers(0, 8, 40) * 2500.0),
                          "hours": np.where(same, 40.0, rng.integers(0, 11, 40) * 10.0)})
    groups = check_published_on_ranges(frame, 4, 0.02, 0.5, on_infeasible="suppress",
                                       max_suppression=0.6)
    assert (groups < 0).any()


def test_own_ranges_are_reported_over_the_rows_audited() -> None:
    frame = pd.DataFrame({"q": ["a"] * 6, "income": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0],
                          "hours": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    check = audit(frame, quasi_identifiers=["q"], sensitive=["income", "hours"], k=2,
                  epsilon=0.1, delta=0.5, sensitive_ranges={"hours": (0.0, 10.0)})
    assert check.scales == {"income": (10.0, 60.0), "hours": (0.0, 10.0)}
    variational = audit(frame.assign(income=frame["income"] / 100), quasi_identifiers=["q"],
                        sensitive=["income"], k=2, epsilon=0.1, delta=0.5,
                        metric="variational")
    assert variational.scales == {"income": (0.0, 1.0)}


def test_a_range_for_a_column_no_range_scales_is_refused_by_name() -> None:
    frame = pd.DataFrame({
        "q": ["a"] * 6,
        "edu": pd.Categorical(["lo", "mid", "hi"] * 2, categories=["lo", "mid", "hi"],
                              ordered=True),
        "when": pd.date_range("2020-01-01", periods=6),
        "inc": [10, 20, 30, 40, 10, 20]})
    tree = Hierarchy.from_dict({"*": {"low": [10, 20], "high": [30, 40]}})
    for column, extra in (("edu", {}), ("when", {}), ("inc", {"hierarchies": {"inc": tree}})):
        options = dict(quasi_identifiers=["q"], sensitive=[column], k=2, epsilon=0.1,
                       delta=0.5, sensitive_ranges={column: (0.0, 1000.0)}, **extra)
        for run in (anonymize, audit):
            with pytest.raises(ValueError, match=f"sensitive_ranges names '{column}'.*drop"):
                run(frame, **options)


def test_rows_left_out_of_an_audit_do_not_widen_its_scale() -> None:
    # Row 0 (income 0) is left out: the others are scaled as a table of only them would be.
    table = pd.DataFrame({"income": [0.0, 40.0, 45.0, 70.0, 100.0], "note": list("abcde")})
    groups = np.array([-1, 0, 0, 1, 1])
    kept = groups >= 0
    options = dict(sensitive=["income"], k=2, epsilon=0.05, delta=1.0)
    partial = audit(table, groups, **options)
    alone = audit(table[kept], groups[kept], **options)
    assert partial.satisfied == alone.satisfied
    assert partial.scales == alone.scales == {"income": (40.0, 100.0)}
    np.testing.assert_array_equal(partial.neighbour_counts[kept], alone.neighbour_counts)
    assert partial.neighbour_counts[0] == -1


def test_integers_beyond_2_53_are_scaled_exactly_by_a_given_range() -> None:
    # 10^17 + 3i: a float64 holds them 16 apart, so a float scaling would merge most.
    base = 10**17
    frame = pd.DataFrame({"q": ["a"] * 12, "inc": np.array([base + 3 * i for i in range(12)])})
    options = dict(quasi_identifiers=["q"], sensitive=["inc"], k=2, epsilon=0.1, delta=0.5)
    own = audit(frame, **options)
    given = audit(frame, **options, sensitive_ranges={"inc": (base, base + 33)})
    # Each value's neighbours are the values 3 apart (3/33 <= 0.1 < 6/33).
    assert own.neighbour_counts.tolist() == [1] + [2] * 10 + [1]
    np.testing.assert_array_equal(given.neighbour_counts, own.neighbour_counts)
    assert given.scales == {"inc": (base, base + 33)}


def test_float_bounds_of_an_integer_column_are_read_as_floats() -> None:
    # float(10^17 + 1000) is 10^17 + 992: as floats, the column lies within its own range.
    base = 10**17
    frame = pd.DataFrame({"q": ["a"] * 4, "inc": np.array([base, base + 8, base + 16,
                                                          base + 1000])})
    options = dict(quasi_identifiers=["q"], sensitive=["inc"], k=2, epsilon=0.1, delta=0.5)
    floats = (float(frame["inc"].min()), float(frame["inc"].max()))
    assert audit(frame, **options, sensitive_ranges={"inc": floats}).scales == {"inc": floats}
    with pytest.raises(ValueError, match=r"sensitive_ranges\['inc'\] max is too large"):
        audit(frame, **options, sensitive_ranges={"inc": (0, 10**400)})
