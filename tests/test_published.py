"""What ``anonymize`` reports is what it publishes.

An attacker sees groups only through their published QI values, so the equivalence classes
of a published table are its rows that share those values. Whatever ``on_infeasible`` is, the
report, the ``group`` column and ``satisfied`` must describe those classes: the independent
audit of the published table, grouped by its QI columns, must give the report's numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import InfeasibleError, anonymize, audit, partition
from proxanon.tables import scale_sensitive

QI = ["sex", "age"]
SA = ["income"]


@st.composite
def small_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, int, float, float]:
    """Small tables with few QI values (so groups often publish the same tuple) and
    clustered sensitive values (so many instances are hard or infeasible)."""
    n = draw(st.integers(6, 36))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    ages = draw(st.integers(1, 6))
    levels = draw(st.integers(1, 10))
    frame = pd.DataFrame({
        "sex": rng.choice(["F", "M", "X"][:draw(st.integers(1, 3))], n),
        "age": rng.integers(30, 30 + ages, n),
        "income": rng.integers(0, levels, n) * 1000.0,
    })
    k = draw(st.integers(1, 5).filter(lambda value: value <= n))
    epsilon = draw(st.sampled_from([0.0, 0.05, 0.2]))
    delta = draw(st.sampled_from([0.3, 0.5, 0.8, 1.0]))
    # One-row groups have risk 1 (docs/design/privacy-model.md): k = 1 is refused with delta > 0.
    if k == 1:
        delta = 0.0
    return frame, k, epsilon, delta


def assert_report_is_the_published_table(result, k: int, epsilon: float, delta: float) -> None:
    table = result.table
    published = audit(table, quasi_identifiers=QI, sensitive=SA, k=k, epsilon=epsilon,
                      delta=delta)
    report = result.report
    assert report.satisfied == result.satisfied == published.satisfied
    assert report.groups == published.n_groups
    assert report.max_risk == pytest.approx(published.max_risk, abs=1e-12)
    assert report.vulnerability == pytest.approx(published.vulnerability, abs=1e-12)
    assert report.remaining_violations == len(published.violating_rows)
    assert len(report.violating_groups) == len(published.violating_groups)
    assert sorted(np.bincount(table["group"].to_numpy())) == sorted(published.group_sizes)
    assert report.min_group_size == published.group_sizes.min()
    assert report.max_group_size == published.group_sizes.max()
    # The group column and the published tuples define the same classes.
    tuples = table.groupby(QI, sort=False).ngroup().to_numpy()
    pairs = pd.DataFrame({"g": table["group"].to_numpy(), "t": tuples}).drop_duplicates()
    assert pairs["g"].is_unique and pairs["t"].is_unique
    # And the group column itself audits the same way.
    by_column = audit(table, groups="group", sensitive=SA, k=k, epsilon=epsilon, delta=delta)
    assert by_column.satisfied == report.satisfied
    assert by_column.max_risk == pytest.approx(report.max_risk, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(case=small_tables(),
       mode=st.sampled_from(["raise", "best_effort", "suppress", "mondrian"]))
def test_report_equals_the_audit_of_the_published_table(case, mode: str) -> None:
    frame, k, epsilon, delta = case
    before = frame.copy()
    extra: dict = {"on_infeasible": mode}
    if mode == "suppress":
        extra["max_suppression"] = 0.5
    if mode == "mondrian":
        extra = {"method": "mondrian", "on_infeasible": "best_effort"}
        mode = "best_effort"
    try:
        result = anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=k, epsilon=epsilon,
                           delta=delta, **extra)
    except InfeasibleError as exc:
        assert mode != "best_effort"
        # Raising is only right when the published table would not satisfy.
        assert exc.partition is not None
        pd.testing.assert_frame_equal(frame, before)
        return
    pd.testing.assert_frame_equal(frame, before)
    if mode != "best_effort":
        assert result.satisfied
    assert_report_is_the_published_table(result, k, epsilon, delta)


def test_best_effort_reports_the_merged_classes_it_publishes() -> None:
    """A case that once went wrong: the report said 8 groups, max risk 0.75, vulnerability 0.75,
    while the published table has 3 classes with max risk 0.786 and vulnerability 1."""
    rng = np.random.default_rng(1)
    n = 40
    frame = pd.DataFrame({"sex": rng.choice(["M", "F"], n),
                          "income": np.r_[np.zeros(30), rng.random(10)]})
    result = anonymize(frame, quasi_identifiers=["sex"], sensitive=SA, k=4, epsilon=0.05,
                       delta=0.5, on_infeasible="best_effort")
    published = audit(result.table, quasi_identifiers=["sex"], sensitive=SA, k=4,
                      epsilon=0.05, delta=0.5)
    assert result.report.groups == published.n_groups == result.table["sex"].nunique()
    assert result.report.max_risk == published.max_risk
    assert result.report.vulnerability == published.vulnerability


# ------------------------------------------------- anonymize succeeds wherever partition does


@settings(max_examples=60, deadline=None)
@given(n=st.integers(8, 40), k=st.integers(2, 5), seed=st.integers(0, 2**32 - 1),
       levels=st.integers(2, 12), epsilon=st.sampled_from([0.05, 0.1, 0.2]),
       delta=st.sampled_from([0.5, 0.7, 1.0]))
def test_anonymize_succeeds_wherever_partition_does_when_qis_tell_rows_apart(
        n: int, k: int, seed: int, levels: int, epsilon: float, delta: float) -> None:
    """With a numeric QI whose values are all distinct, any grouping publishes distinct
    tuples (a group's minimum names it), so nothing forces a merge: whenever ``partition``
    with the same SA and parameters satisfies, so does ``anonymize``."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.permutation(n) + 20,
                          "income": rng.integers(0, levels, n).astype(float)})
    plain = partition(scale_sensitive(frame, SA), k=min(k, n), epsilon=epsilon, delta=delta,
                      on_infeasible="best_effort")
    if not plain.satisfied:
        return
    result = anonymize(frame, quasi_identifiers="age", sensitive=SA, k=min(k, n),
                       epsilon=epsilon, delta=delta)
    assert result.satisfied
    published = audit(result.table, quasi_identifiers=["age"], sensitive=SA, k=min(k, n),
                      epsilon=epsilon, delta=delta)
    assert published.satisfied


def test_plain_partition_is_published_when_the_qi_aware_groups_fail() -> None:
    """An instance where the QI-aware path ends with violations (it raised before) and the
    plain partition satisfies: its groups are published, and the report says so."""
    # 18 rows: past the exact search (at most 16 rows), which would settle a smaller table.
    k, epsilon, delta = 3, 0.3, 0.6
    frame = pd.DataFrame({
        "age": [31, 22, 30, 28, 32, 37, 20, 29, 21, 34, 26, 27, 25, 23, 24, 35, 33, 36],
        "income": [7.0, 2, 6, 4, 5, 9, 8, 8, 5, 9, 9, 1, 2, 3, 5, 8, 4, 9]})
    assert partition(scale_sensitive(frame, SA), k=k, epsilon=epsilon, delta=delta).satisfied
    result = anonymize(frame, quasi_identifiers="age", sensitive=SA, k=k, epsilon=epsilon,
                       delta=delta)
    assert result.satisfied and result.report.fallback
    assert "the plain partition's groups" in str(result.report)
    assert audit(result.table, quasi_identifiers=["age"], sensitive=SA, k=k, epsilon=epsilon,
                 delta=delta).satisfied


def test_forced_merges_are_named_in_the_error() -> None:
    """With one QI of two values, at most three tuples can be published (F, M, *); the
    satisfying partition into ten groups cannot be published apart, and the error names the
    classes that were forced together."""
    n = 40
    frame = pd.DataFrame({"sex": np.repeat(["F", "M"], n // 2),
                          "income": np.r_[np.zeros(10), np.arange(1, 31) * 10.0]})
    sens = scale_sensitive(frame, SA)
    assert partition(sens, k=4, epsilon=0.01, delta=1.0).satisfied
    with pytest.raises(InfeasibleError) as caught:
        anonymize(frame, quasi_identifiers="sex", sensitive=SA, k=4, epsilon=0.01, delta=1.0)
    message = str(caught.value)
    summary, *rest = message.split("\n")
    assert summary.startswith("no table satisfying") and "published class(es)" in summary
    merged = next(line for line in rest if "Groups that publish the same" in line)
    assert merged.startswith("The quasi-identifiers take 2 distinct combinations over 40 rows")
    assert "forced: their quasi-identifiers are identical" in merged
    assert re.search(r"\(sex=[FM]\): \d+ rows, forced: their quasi-identifiers", merged)
    # Anatomy merges no groups: the message names it, and it is satisfied here.
    assert "publish='anatomy'" in merged
    assert anonymize(frame, quasi_identifiers="sex", sensitive=SA, k=4, epsilon=0.01, delta=1.0,
                     publish="anatomy").satisfied
