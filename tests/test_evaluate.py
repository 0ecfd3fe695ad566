"""``proxanon.evaluate``: the count-query workload (docs/design/utility.md) and the report's utility
measures.

The workload is checked against a brute-force estimator that reads the published labels
row by row, so the vectorized per-group interval arithmetic must agree with what the labels
say (the uniform-spread estimate of docs/design/utility.md, after LeFevre, DeWitt and
Ramakrishnan's Mondrian).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

from proxanon import Hierarchy, anonymize
from proxanon.evaluate import (
    WorkloadResult,
    count_query_error,
    discernibility,
    gcp,
    loss,
    ncp,
)
from tests.conftest import ARX_ADULT

QI = ["age", "zip", "job"]
SENSITIVE = ["salary", "grade"]
GRADES = ["F", "E", "D", "C", "B", "A"]  # "E" never occurs: the domain still holds it

JOBS = Hierarchy.from_dict({"*": {
    "Office": {"Admin": ["clerk", "secretary"], "manager": None},
    "Field": ["farmer", "fisher", "miner"],
    "Tech": ["engineer", "developer"],  # "developer" never occurs
}})


def small_table(seed: int = 7, n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    used_jobs = [leaf for leaf in JOBS.leaves if leaf != "developer"]
    used_grades = [g for g in GRADES if g != "E"]
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(20, 70, n),
        "zip": rng.choice([1000, 1001, 1003, 1004, 1010, 1020], n),
        "job": rng.choice(used_jobs, n),
        "salary": rng.integers(1, 30, n) * 1000,
        "grade": pd.Categorical(rng.choice(used_grades, n), categories=GRADES, ordered=True),
    })


def anonymize_small(frame: pd.DataFrame, k: int = 3, delta: float = 0.5):
    return anonymize(frame, quasi_identifiers=QI, sensitive=SENSITIVE, k=k, epsilon=0.1,
                     delta=delta, hierarchies={"job": JOBS}, on_infeasible="best_effort")


@pytest.fixture(scope="module")
def small():
    frame = small_table()
    return frame, anonymize_small(frame)


# ---------------------------------------------------------------------- brute force


def expected_domains(frame: pd.DataFrame) -> dict[str, list]:
    return {
        "age": sorted(set(frame["age"].tolist())),
        "zip": sorted(set(frame["zip"].tolist())),
        "job": list(JOBS.leaves),
        "salary": sorted(set(frame["salary"].tolist())),
        "grade": list(GRADES),
    }


def covered_values(column: str, label: str, domain: list) -> set:
    """The domain values a published label stands for, read from the label itself."""
    if column == "job":
        return {leaf for leaf in domain if JOBS.covers(label, leaf)}
    if label.startswith("["):
        lo, hi = (float(x) for x in label[1:-1].split("-"))
    else:
        lo = hi = float(label)
    return {v for v in domain if lo <= v <= hi}


def brute_force(frame: pd.DataFrame, table: pd.DataFrame, ranges: dict[str, tuple[int, int]],
                domains: dict[str, list]) -> tuple[int, float]:
    """Actual and estimated count of one query, one row at a time."""
    chosen = {c: set(domains[c][a:b + 1]) for c, (a, b) in ranges.items()}
    original = {c: frame[c].tolist() for c in chosen}
    published = {c: table[c].tolist() for c in chosen}
    actual, estimate = 0, 0.0
    for i in range(len(frame)):
        if all(original[c][i] in values for c, values in chosen.items()):
            actual += 1
        contribution = 1.0
        for c, values in chosen.items():
            if c in QI:
                covered = covered_values(c, published[c][i], domains[c])
                contribution *= len(covered & values) / len(covered)
            elif published[c][i] not in values:
                contribution = 0.0
        estimate += contribution
    return actual, estimate


# ---------------------------------------------------------------------- the workload


def test_small_anonymization_generalizes(small):
    """The fixture is a real test case: groups of several rows, intervals and inner nodes."""
    _, result = small
    assert result.report.groups < 60
    assert result.table["age"].str.startswith("[").any()
    assert (~result.table["job"].isin(JOBS.leaves)).any()


@pytest.mark.parametrize("qd, s", [(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.4), (3, 1.0)])
def test_matches_brute_force(small, qd, s):
    frame, result = small
    work = count_query_error(frame, result, qd=qd, s=s, n_queries=200, seed=11)
    domains = expected_domains(frame)
    assert {c: list(v) for c, v in work.domains.items()} == domains
    assert len(work.ranges) == len(work.attributes) == 200
    q = qd + 2
    for attrs, ranges in zip(work.attributes, work.ranges, strict=True):
        assert len(attrs) == len(set(attrs)) == q
        assert set(attrs[:qd]) <= set(QI) and set(attrs[qd:]) == set(SENSITIVE)
        assert tuple(ranges) == attrs
        for c, (a, b) in ranges.items():
            size = len(domains[c])
            assert 0 <= a <= b < size
            assert b - a + 1 == max(1, round(size * s ** (1 / q)))
    for i in range(200):
        actual, estimate = brute_force(frame, result.table, work.ranges[i], domains)
        assert work.actual[i] == actual > 0
        assert work.estimate[i] == pytest.approx(estimate, rel=1e-12, abs=1e-12)
    errors = np.abs(work.estimate - work.actual) / work.actual
    np.testing.assert_allclose(work.errors, errors)
    assert work.mean_relative_error == pytest.approx(errors.mean())
    assert (work.qd, work.s, work.n_queries, work.seed) == (qd, s, 200, 11)
    if qd == 0:  # sensitive values are published unchanged: exact answers
        np.testing.assert_array_equal(work.estimate, work.actual)
    elif s < 1.0:
        assert (work.errors > 0).any()  # generalization does cost accuracy
    if s == 1.0:  # every range is the whole domain
        assert (work.actual == len(frame)).all()
        np.testing.assert_allclose(work.estimate, len(frame))
        assert work.redraws == 0


def test_deterministic(small):
    frame, result = small
    first = count_query_error(frame, result, qd=2, s=0.1, n_queries=300, seed=3)
    again = count_query_error(frame, result, qd=2, s=0.1, n_queries=300, seed=3)
    assert first.ranges == again.ranges and first.attributes == again.attributes
    np.testing.assert_array_equal(first.errors, again.errors)
    np.testing.assert_array_equal(first.estimate, again.estimate)
    np.testing.assert_array_equal(first.actual, again.actual)
    assert first.redraws == again.redraws
    assert first.mean_relative_error == again.mean_relative_error
    other = count_query_error(frame, result, qd=2, s=0.1, n_queries=300, seed=4)
    assert other.ranges != first.ranges


def test_empty_queries_are_redrawn():
    """A sensitive column with many never-used categories makes most ranges match no row."""
    frame = small_table()
    rare = [f"c{i:02d}" for i in range(20)]
    frame["grade"] = pd.Categorical(np.where(frame["id"] % 2 == 0, "c00", "c01"),
                                    categories=rare, ordered=True)
    result = anonymize_small(frame)
    work = count_query_error(frame, result, qd=1, s=0.1, n_queries=50, seed=0)
    assert work.redraws > 0
    assert (work.actual > 0).all()
    for ranges in work.ranges:
        assert ranges["grade"][0] <= 1  # a range starting past c01 matches no row
    more = count_query_error(frame, result, qd=1, s=0.1, n_queries=100, seed=0)
    assert more.redraws >= work.redraws
    assert more.ranges[:50] == work.ranges  # accepted queries keep their order


def test_too_few_nonempty_queries_is_a_clear_error():
    frame = small_table()
    rare = [f"c{i:05d}" for i in range(20_000)]
    frame["grade"] = pd.Categorical(["c00000"] * len(frame), categories=rare, ordered=True)
    result = anonymize_small(frame)
    with pytest.raises(ValueError, match=r"n_queries=3 .* 300 draws.*raise s"):
        count_query_error(frame, result, qd=0, s=1e-6, n_queries=3, seed=0)


def test_identity_anonymization_has_no_error():
    frame = small_table()
    result = anonymize_small(frame, k=1, delta=0.0)
    # Groups that publish one tuple hold rows with equal QI values: estimates are exact.
    assert not result.table["age"].str.startswith("[").any()
    assert result.table["job"].isin(JOBS.leaves).all()
    for qd in (0, 1, 3):
        work = count_query_error(frame, result, qd=qd, s=0.2, n_queries=200, seed=qd)
        np.testing.assert_array_equal(work.estimate, work.actual)
        assert (work.errors == 0).all() and work.mean_relative_error == 0.0


def test_one_sensitive_column_is_used_alone():
    frame = small_table()
    result = anonymize(frame, quasi_identifiers=QI, sensitive=["salary"], k=3, epsilon=0.1,
                       delta=0.5, hierarchies={"job": JOBS}, on_infeasible="best_effort")
    work = count_query_error(frame, result, qd=2, s=0.2, n_queries=50, seed=1)
    assert all(len(a) == 3 and a[2] == "salary" for a in work.attributes)
    for ranges in work.ranges:
        size = len(work.domains["salary"])
        a, b = ranges["salary"]
        assert b - a + 1 == max(1, round(size * 0.2 ** (1 / 3)))


def test_result_prints_on_one_line(small):
    frame, result = small
    work = count_query_error(frame, result, qd=1, s=0.1, n_queries=20)
    assert isinstance(work, WorkloadResult)
    text = str(work)
    assert "\n" not in text and "20 queries" in text and f"{work.mean_relative_error:.4f}" in text
    with pytest.raises(AttributeError):
        work.redraws = 3  # type: ignore[misc]


# ---------------------------------------------------------------------- utility measures


def check_measures(frame: pd.DataFrame, result) -> None:
    report = result.report
    assert loss(frame, result) == pytest.approx(report.loss, rel=1e-12)
    assert gcp(frame, result) == pytest.approx(report.gcp, rel=1e-12)
    measured = ncp(frame, result)
    assert list(measured) == list(report.ncp)
    for column, value in report.ncp.items():
        assert measured[column] == pytest.approx(value, rel=1e-12, abs=1e-15)
    assert discernibility(result) == report.discernibility
    assert isinstance(discernibility(result), int)


def test_measures_equal_the_report(small):
    check_measures(*small)


# ---------------------------------------------------------------------- Adult

ADULT_QI = ["age", "sex", "race", "marital-status"]
ADULT_SENSITIVE = ["education-num", "hours-per-week"]


@pytest.fixture(scope="module")
def adult(uci_adult):
    return uci_adult, anonymize(uci_adult, quasi_identifiers=ADULT_QI, sensitive=ADULT_SENSITIVE,
                                k=10, epsilon=0.05, delta=0.6)


def test_adult_workload(adult):
    frame, result = adult
    started = time.perf_counter()
    work = count_query_error(frame, result, qd=2, s=0.1)
    seconds = time.perf_counter() - started
    assert seconds < 2.0  # about 0.07 s on a laptop-class machine
    assert len(work.errors) == 1000
    assert math.isfinite(work.mean_relative_error) and work.mean_relative_error > 0
    # The paper's trend: wider queries (larger s) are answered more accurately.
    narrow = count_query_error(frame, result, qd=2, s=0.05)
    wide = count_query_error(frame, result, qd=2, s=0.25)
    assert narrow.mean_relative_error > wide.mean_relative_error


def test_adult_measures_equal_the_report(adult, uci_adult):
    check_measures(*adult)
    hierarchies = {c: Hierarchy.from_csv(ARX_ADULT / f"adult_hierarchy_{c}.csv")
                   for c in ADULT_QI}
    result = anonymize(uci_adult, quasi_identifiers=ADULT_QI, sensitive=ADULT_SENSITIVE, k=10,
                       epsilon=0.05, delta=0.6, hierarchies=hierarchies)
    check_measures(uci_adult, result)
    work = count_query_error(uci_adult, result, qd=4, s=0.1, n_queries=200)
    assert work.domains["age"] == hierarchies["age"].leaves
    assert math.isfinite(work.mean_relative_error) and work.mean_relative_error > 0


# ---------------------------------------------------------------------- validation


@pytest.mark.parametrize("kwargs, error, name", [
    ({"qd": -1}, ValueError, "qd"),
    ({"qd": 4}, ValueError, "qd"),
    ({"qd": 1.5}, TypeError, "qd"),
    ({"qd": True}, TypeError, "qd"),
    ({"s": 0}, ValueError, "s"),
    ({"s": -0.1}, ValueError, "s"),
    ({"s": 1.5}, ValueError, "s"),
    ({"s": float("nan")}, ValueError, "s"),
    ({"s": "0.1"}, TypeError, "s"),
    ({"n_queries": 0}, ValueError, "n_queries"),
    ({"n_queries": 2.0}, TypeError, "n_queries"),
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": "1"}, TypeError, "seed"),
])
def test_bad_parameters(small, kwargs, error, name):
    frame, result = small
    arguments = {"qd": 1, "s": 0.1, "n_queries": 10, "seed": 0, **kwargs}
    with pytest.raises(error, match=rf"^{name} "):
        count_query_error(frame, result, **arguments)


def test_mismatched_inputs(small):
    frame, result = small
    with pytest.raises(TypeError, match="original"):
        count_query_error(frame.to_numpy(), result, qd=1, s=0.1)
    with pytest.raises(TypeError, match="anonymization"):
        count_query_error(frame, result.table, qd=1, s=0.1)
    with pytest.raises(ValueError, match="original has 59 rows"):
        count_query_error(frame.iloc[1:], result, qd=1, s=0.1)
    with pytest.raises(ValueError, match=r"original lacks column\(s\) \['zip'\]"):
        count_query_error(frame.drop(columns="zip"), result, qd=1, s=0.1)
    shuffled = frame.iloc[::-1].reset_index(drop=True)
    with pytest.raises(ValueError, match="original's sensitive column"):
        count_query_error(shuffled, result, qd=1, s=0.1)
    as_text = frame.assign(age=frame["age"].astype(str))
    with pytest.raises(ValueError, match="original's quasi-identifier column 'age'"):
        count_query_error(as_text, result, qd=1, s=0.1)
    for measure in (loss, gcp, ncp):
        with pytest.raises(ValueError, match="original has 59 rows"):
            measure(frame.iloc[1:], result)
        with pytest.raises(TypeError, match="anonymization"):
            measure(frame, "result")
    with pytest.raises(TypeError, match="anonymization"):
        discernibility(frame)


def test_suppressed_rows_count_in_the_truth_not_in_the_estimate(uci_adult):
    """A table with rows left out: actual counts cover every original row, estimates only the
    published ones, so the estimate never exceeds what the published rows can explain."""
    import proxanon
    from proxanon.evaluate import count_query_error, gcp

    sample = uci_adult.head(3000)
    result = proxanon.anonymize(sample, quasi_identifiers=["age", "sex", "race"],
                                sensitive=["education-num", "hours-per-week"], k=10,
                                epsilon=0.1, delta=0.6, on_infeasible="suppress",
                                max_suppression=0.2)
    left_out = np.flatnonzero(result.groups < 0)
    assert left_out.size > 0 and len(result.table) == len(sample) - left_out.size
    workload = count_query_error(sample, result, qd=1, s=0.2, n_queries=200)
    assert np.isfinite(workload.mean_relative_error)
    published = sample.drop(index=sample.index[left_out])
    assert workload.actual.max() <= len(sample)
    assert workload.estimate.sum() <= len(published) * len(workload.estimate)
    assert gcp(sample, result) == pytest.approx(result.report.gcp)


def test_measures_of_a_suppressed_anonymization_equal_the_report():
    """Discernibility once raised "'list' argument must have no negative elements"
    for any anonymization with suppressed rows (group -1). Every measure, evaluated on the
    table, equals the report's number; suppressed rows belong to no published group."""
    from proxanon.evaluate import average_group_size

    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame({"age": rng.integers(20, 30, n), "zip": rng.integers(0, 3, n),
                          "job": rng.choice(["farmer", "miner", "clerk"], n),
                          "salary": np.r_[np.zeros(25), rng.random(n - 25)],
                          "grade": pd.Categorical(np.r_[["C"] * 25, rng.choice(GRADES, n - 25)],
                                                  categories=GRADES, ordered=True)})
    # 25 identical sensitive values, at most one per group of 3 to 5 (two per group of 6):
    # 20 fit in 60 rows, the others are left out.
    result = anonymize(frame, quasi_identifiers=QI, sensitive=SENSITIVE, k=3, epsilon=0.05,
                       delta=0.8, hierarchies={"job": JOBS}, on_infeasible="suppress",
                       max_suppression=0.5)
    kept = result.groups[result.groups >= 0]
    assert kept.size < n  # rows were left out
    check_measures(frame, result)
    sizes = np.bincount(kept)
    assert discernibility(result) == int((sizes ** 2).sum())
    assert average_group_size(result) == result.report.average_group_size == kept.size / sizes.size
