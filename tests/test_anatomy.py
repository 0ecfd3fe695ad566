"""Anatomy releases (``anonymize(..., publish="anatomy")``, docs/design/anatomy.md): the two
tables hold exactly the input's rows, every group passes a brute-force check, the release is
satisfied wherever ``partition`` is, and count queries are estimated as the Anatomy paper
does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import InfeasibleError, anonymize, audit, m_color, partition
from proxanon.datasets import load_adult
from proxanon.evaluate import count_query_error
from proxanon.m_color import IneligibleError
from proxanon.tables import scale_sensitive

from .conftest import brute_classes_satisfy
from .test_candidates import small_tables

QI = ["sex", "age"]
SA = ["income", "hours"]


def check_release(frame: pd.DataFrame, result, k: int, epsilon: float, delta: float) -> None:
    """The two tables hold exactly the released rows, and the groups are the release's."""
    released = np.flatnonzero(result.groups >= 0)
    qi_table, sa_table = result.table, result.sensitive_table
    # The QI table: every non-sensitive column unchanged, rows in the input's order.
    expected = frame.drop(columns=SA).iloc[released]
    pd.testing.assert_frame_equal(qi_table.drop(columns="group"), expected)
    assert np.array_equal(qi_table["group"].to_numpy(), result.groups[released])
    # The sensitive table: per group, the multiset of the group's sensitive values.
    assert list(sa_table.columns) == ["group", *SA]
    assert np.all(np.diff(sa_table["group"].to_numpy()) >= 0)
    for g, rows in qi_table.groupby("group").groups.items():
        mine = frame.loc[rows, SA].sort_values(SA).to_numpy()
        published = sa_table[sa_table["group"] == g][SA].to_numpy()
        assert np.array_equal(published, mine)  # sorted by value within the group
    if result.satisfied:
        sens = scale_sensitive(frame.iloc[released], SA)
        assert brute_classes_satisfy(sens, result.groups[released], k, epsilon, delta)


@settings(max_examples=80, deadline=None)
@given(case=small_tables())
@pytest.mark.slow
def test_two_tables_hold_the_rows_and_groups_pass_brute_force(case) -> None:
    frame, k, epsilon, delta = case
    frame = frame.assign(note=[f"r{i:03d}" for i in range(len(frame))])
    before = frame.copy()
    result = anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=k, epsilon=epsilon,
                       delta=delta, on_infeasible="best_effort", publish="anatomy")
    pd.testing.assert_frame_equal(frame, before)
    check_release(frame, result, k, epsilon, delta)
    # The report's verdict is the independent audit of the sensitive table's groups.
    again = audit(result.sensitive_table, "group", sensitive=SA, k=k, epsilon=epsilon,
                  delta=delta)
    assert again.satisfied == result.satisfied == result.report.satisfied
    # Satisfied wherever partition (its defaults) is.
    plain = partition(scale_sensitive(frame, SA), k=k, epsilon=epsilon, delta=delta,
                      on_infeasible="best_effort")
    if plain.satisfied:
        assert result.satisfied


@settings(max_examples=40, deadline=None)
@given(case=small_tables())
def test_suppressed_rows_are_in_neither_table(case) -> None:
    frame, k, epsilon, delta = case
    frame = frame.assign(note=[f"r{i:03d}" for i in range(len(frame))])
    try:
        result = anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=k, epsilon=epsilon,
                           delta=delta, on_infeasible="suppress", max_suppression=0.5,
                           publish="anatomy")
    except InfeasibleError:
        return
    left_out = np.flatnonzero(result.groups < 0)
    assert list(result.report.suppressed_rows) == left_out.tolist()
    assert len(result.table) == len(result.sensitive_table) == len(frame) - left_out.size
    assert not set(result.table["note"]) & set(frame["note"].iloc[left_out])
    assert result.satisfied
    check_release(frame, result, k, epsilon, delta)


def census(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Few QIs with many rows sharing them (the case where generalization merges groups)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(30, 34, n),
        "income": np.round(rng.lognormal(10, 0.6, n), -2),
        "hours": rng.integers(20, 60, n).astype(float),
    })


def test_census_like_table_equal_tuples_are_never_merged() -> None:
    frame = census()
    result = anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=10, epsilon=0.05,
                       delta=0.6, publish="anatomy")
    assert result.satisfied
    sizes = np.bincount(result.groups)
    # 8 distinct QI tuples, yet hundreds of groups of about k rows.
    assert sizes.size >= len(frame) // 20 and sizes.max() < 20
    assert result.report.publish == "anatomy" and result.report.groups == sizes.size
    check_release(frame, result, 10, 0.05, 0.6)


def test_same_input_same_release_and_row_order_links_nothing() -> None:
    frame = census(600, seed=1)
    args = dict(quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05, delta=0.6,
                publish="anatomy")
    first, second = anonymize(frame, **args), anonymize(frame, n_threads=1, **args)
    pd.testing.assert_frame_equal(first.table, second.table)
    pd.testing.assert_frame_equal(first.sensitive_table, second.sensitive_table)
    # Within a group the sensitive rows are in value order, not in the QI table's order.
    for _, rows in first.sensitive_table.groupby("group"):
        values = rows[SA].to_numpy()
        assert all(tuple(a) <= tuple(b) for a, b in zip(values, values[1:], strict=False))


def brute_estimate(frame: pd.DataFrame, groups: np.ndarray,
                   ranges: dict[str, tuple[int, int]], domains: dict[str, tuple]) -> float:
    """A count query on an anatomy release, row by row: per group, its rows matching the QI
    predicates times the share of its sensitive values matching theirs."""
    def inside(column: str, value) -> bool:
        first, last = ranges[column]
        return value in domains[column][first:last + 1]

    estimate = 0.0
    for g in np.unique(groups[groups >= 0]):
        rows = frame[groups == g]
        qi_hits = sum(all(inside(c, row[c]) for c in ranges if c in QI)
                      for _, row in rows.iterrows())
        sa_hits = sum(all(inside(c, row[c]) for c in ranges if c in SA)
                      for _, row in rows.iterrows())
        estimate += qi_hits * sa_hits / len(rows)
    return estimate


@pytest.mark.slow
def test_count_query_estimate_matches_brute_force() -> None:
    frame = census(400, seed=2)
    result = anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                       delta=0.6, publish="anatomy")
    work = count_query_error(frame, result, qd=2, s=0.2, n_queries=40, seed=5)
    for i in range(40):
        expected = brute_estimate(frame, result.groups, work.ranges[i], work.domains)
        assert work.estimate[i] == pytest.approx(expected)


def test_anatomy_errors_name_the_fix() -> None:
    frame = census(200)
    common = dict(sensitive=SA, k=5, epsilon=0.05, delta=0.6)
    with pytest.raises(ValueError, match="publish"):
        anonymize(frame, quasi_identifiers=QI, publish="tables", **common)
    with pytest.raises(ValueError, match="method='mondrian'"):
        anonymize(frame, quasi_identifiers=QI, publish="anatomy", method="mondrian", **common)
    with pytest.raises(ValueError, match="income"):
        anonymize(frame, quasi_identifiers=["sex", "income"], publish="anatomy", **common)
    with pytest.raises(ValueError, match="'group'"):
        anonymize(frame.assign(group=1), quasi_identifiers=QI, publish="anatomy", **common)


def test_infeasible_anatomy_raises_with_the_proof() -> None:
    frame = census(9000, seed=3).assign(hours=40.0, income=50_000.0)
    with pytest.raises(InfeasibleError, match="proven"):
        anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=10, epsilon=0.05, delta=0.6,
                  publish="anatomy")


def set_partitions(items: list[int]):
    """Every partition of ``items`` into blocks (Bell(n) of them)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for blocks in set_partitions(rest):
        yield [[first], *blocks]
        for i in range(len(blocks)):
            yield [*blocks[:i], [first, *blocks[i]], *blocks[i + 1:]]


def exists_m_colouring(colours: list[str], m: int) -> bool:
    """Exhaustive search: a partition into blocks of at least m rows of distinct colours."""
    return any(all(len(b) >= m and len({colours[i] for i in b}) == len(b) for b in blocks)
               for blocks in set_partitions(list(range(len(colours)))))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 8), m=st.integers(2, 4), seed=st.integers(0, 2**32 - 1),
       palette=st.integers(1, 5))
def test_m_color_anatomy_publishes_every_eligible_table(n, m, seed, palette) -> None:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 25, n),
                          "job": rng.choice(list("abcde"[:palette]), n)})
    possible = exists_m_colouring(frame["job"].tolist(), m)
    try:
        result = m_color(frame, quasi_identifiers=["age"], sensitive="job", m=m,
                         publish="anatomy", on_infeasible="best_effort")
    except IneligibleError:
        assert not possible
        return
    assert result.satisfied == possible
    if possible:
        table = result.sensitive_table
        for _, rows in table.groupby("group"):
            assert len(rows) >= m and rows["job"].is_unique
        assert len(table) == n
        pd.testing.assert_frame_equal(result.table.drop(columns="group"),
                                      frame.drop(columns="job"))


def test_m_color_anatomy_on_adult_where_generalizing_fails() -> None:
    adult = load_adult()
    qi = ["age", "sex", "race", "marital-status"]
    with pytest.raises(InfeasibleError):
        m_color(adult.data, quasi_identifiers=qi, sensitive="occupation", m=7,
                hierarchies=adult.hierarchies)
    result = m_color(adult.data, quasi_identifiers=qi, sensitive="occupation", m=7,
                     hierarchies=adult.hierarchies, publish="anatomy")
    assert result.satisfied
    groups = result.sensitive_table.groupby("group")["occupation"]
    assert groups.size().min() >= 7 and groups.nunique().equals(groups.size())
    assert len(result.sensitive_table) == len(adult.data)


def test_audit_of_the_pair_checks_they_belong_together() -> None:
    frame = census(300, seed=4)
    result = anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                       delta=0.6, publish="anatomy")
    report = audit(result.table, sensitive_table=result.sensitive_table, sensitive=SA, k=5,
                   epsilon=0.05, delta=0.6)
    assert report.satisfied and report.max_risk == result.report.max_risk
    # A row moved to another group in one table only: the pair no longer agrees.
    other = result.sensitive_table.copy()
    other.loc[0, "group"] = other["group"].max()
    with pytest.raises(ValueError, match="belong together"):
        audit(result.table, sensitive_table=other, sensitive=SA, k=5, epsilon=0.05, delta=0.6)
    # Groups judged from the sensitive table: putting every row into one group changes it.
    merged = result.sensitive_table.assign(group=0)
    with pytest.raises(ValueError, match="belong together"):
        audit(result.table, sensitive_table=merged, sensitive=SA, k=5, epsilon=0.05, delta=0.6)
    with pytest.raises(ValueError, match="no 'group' column"):
        audit(result.table.drop(columns="group"), sensitive_table=result.sensitive_table,
              sensitive=SA, k=5, epsilon=0.05, delta=0.6)


def test_html_report_of_an_anatomy_release(tmp_path) -> None:
    frame = census(500, seed=5)
    result = anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                       delta=0.6, publish="anatomy")
    path = tmp_path / "r.html"
    result.to_html(path, frame, queries={"qd": 1, "s": 0.2, "n_queries": 50})
    page = path.read_text(encoding="utf-8")
    assert "anatomy" in page and "An anatomy release" in page
    # The JSON-ready report says how the groups were released.
    assert result.report.to_dict()["publish"] == "anatomy"


def test_anatomy_with_criteria_merges_groups_until_they_hold() -> None:
    from proxanon import LDiversity

    frame = census(800, seed=7).assign(job=lambda f: np.where(f["hours"] < 30, "a", "b"))
    frame["job"] = pd.Categorical(np.where(frame["income"] > 30000, frame["job"], "c"),
                                  categories=["a", "b", "c"], ordered=True)
    common = dict(quasi_identifiers=QI, k=5, epsilon=0.05, delta=0.6, publish="anatomy")
    result = anonymize(frame, sensitive=[*SA, "job"], criteria=[LDiversity(3, column="job")],
                       **common)
    assert result.satisfied and result.audit.criteria
    per_group = result.sensitive_table.groupby("group")["job"].nunique()
    assert per_group.min() >= 3
    with pytest.raises(ValueError, match="'job'"):
        anonymize(frame, sensitive=SA, criteria=[LDiversity(2, column="job")], **common)
