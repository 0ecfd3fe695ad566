"""``anonymize``: a real table in, a published table out (the bars it clears on Adult)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from proxanon import Hierarchy, InfeasibleError, anonymize, audit, scale_sensitive
from proxanon.datasets import load_adult
from tests.conftest import ARX_ADULT, brute_classes_satisfy

QI = ["age", "sex", "race", "marital-status"]
SENSITIVE = ["education-num", "hours-per-week"]


def arx_hierarchies(columns=QI) -> dict[str, Hierarchy]:
    return {c: Hierarchy.from_csv(ARX_ADULT / f"adult_hierarchy_{c}.csv") for c in columns}


def parse_interval(text: str) -> tuple[float, float]:
    if text.startswith("["):
        lo, hi = text[1:-1].split("-")
        return float(lo), float(hi)
    return float(text), float(text)


def check_published(original: pd.DataFrame, result, qi, hierarchies, sensitive, k, eps, delta):
    """The bars on Adult: audit passes on the published table, one tuple per group, each
    published value covers every member's value, sensitive columns unchanged."""
    table = result.table
    assert list(table.columns) == [*original.columns, "group"]
    assert table.index.equals(original.index)
    np.testing.assert_array_equal(table["group"].to_numpy(), result.groups)
    for column in original.columns:
        if column not in qi:
            pd.testing.assert_series_equal(table[column], original[column])
    # Grouping the published table by its QI values gives exactly the engine's groups,
    # and each group publishes one tuple.
    tuples = table.groupby(qi, sort=False).ngroup().to_numpy()
    assert len(np.unique(tuples)) == len(np.unique(result.groups))
    pairs = pd.DataFrame({"g": result.groups, "t": tuples}).drop_duplicates()
    assert pairs["g"].is_unique and pairs["t"].is_unique
    # Each published value covers every member's true value.
    for column in qi:
        published = table[column].to_numpy()
        values = original[column].to_numpy()
        if column in hierarchies:
            tree = hierarchies[column]
            for label, value in set(zip(published, values, strict=True)):
                assert tree.covers(label, value), (column, label, value)
        else:
            for label, value in set(zip(published, values, strict=True)):
                lo, hi = parse_interval(label)
                assert lo <= value <= hi, (column, label, value)
    report = audit(table, quasi_identifiers=qi, sensitive=sensitive, k=k, epsilon=eps,
                   delta=delta)
    assert report.satisfied
    assert report.max_risk <= 1 - delta + 1e-9
    assert result.satisfied


def test_uci_adult_with_arx_taxonomies(uci_adult):
    before = uci_adult.copy()
    hierarchies = arx_hierarchies()
    result = anonymize(uci_adult, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                       epsilon=0.05, delta=0.6, hierarchies=hierarchies)
    pd.testing.assert_frame_equal(uci_adult, before)  # input untouched
    check_published(uci_adult, result, QI, hierarchies, SENSITIVE, 10, 0.05, 0.6)


def test_uci_adult_numeric_age_and_flat_categoricals(uci_adult):
    result = anonymize(uci_adult, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                       epsilon=0.05, delta=0.6)
    flat = {c: result.hierarchies[c] for c in QI if c != "age"}
    assert all(tree.height == 1 for tree in flat.values())
    check_published(uci_adult, result, QI, flat, SENSITIVE, 10, 0.05, 0.6)


def test_hierarchy_paths_are_read_as_arx_files(uci_adult):
    sample = uci_adult.head(2000)
    paths = {c: str(ARX_ADULT / f"adult_hierarchy_{c}.csv") for c in ("sex", "race")}
    by_path = anonymize(sample, quasi_identifiers=QI, sensitive=SENSITIVE, k=5, epsilon=0.05,
                        delta=0.5, hierarchies=paths)
    by_object = anonymize(sample, quasi_identifiers=QI, sensitive=SENSITIVE, k=5,
                          epsilon=0.05, delta=0.5, hierarchies=arx_hierarchies(["sex", "race"]))
    pd.testing.assert_frame_equal(by_path.table, by_object.table)


@pytest.mark.slow
def test_ordered_categorical_sensitive_columns_from_the_bundled_data():
    adult = load_adult()
    result = anonymize(adult.data, quasi_identifiers=QI,
                       sensitive=["education", "occupation", "workclass"], k=10, epsilon=0.05,
                       delta=0.8, hierarchies={c: adult.hierarchies[c] for c in QI})
    check_published(adult.data, result, QI, {c: adult.hierarchies[c] for c in QI},
                    ["education", "occupation", "workclass"], 10, 0.05, 0.8)
    assert result.table["education"].dtype == adult.data["education"].dtype


def test_report_numbers_are_consistent(uci_adult):
    result = anonymize(uci_adult, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                       epsilon=0.05, delta=0.6)
    report = result.report
    sizes = np.bincount(result.groups)
    assert report.n == len(uci_adult) and report.groups == len(sizes)
    assert report.discernibility == int((sizes**2).sum())
    assert report.average_group_size == pytest.approx(len(uci_adult) / len(sizes))
    assert report.min_group_size == sizes.min() >= 10
    assert 0 <= report.gcp <= 1
    assert set(report.ncp) == set(QI)
    assert report.gcp == pytest.approx(np.mean(list(report.ncp.values())))
    assert 0 <= report.loss <= len(QI)
    assert {"prepare", "graph", "initialize", "repair", "generalize", "audit", "total"} <= set(
        report.seconds)
    text = str(report)
    for needle in ("satisfied", "max risk", "GCP", "discernibility", "NCP per column"):
        assert needle in text
    assert report.to_dict()["quasi_identifiers"] == QI


def test_numeric_generalization_and_loss_by_hand():
    # Two groups are forced by k = 2 and four rows; check the published intervals and loss.
    frame = pd.DataFrame({"age": [20, 30, 40, 50], "city": ["a", "a", "b", "b"],
                          "salary": [0.0, 1.0, 0.0, 1.0]})
    result = anonymize(frame, quasi_identifiers=["age", "city"], sensitive="salary", k=2,
                       epsilon=0.1, delta=1.0)
    table = result.table
    for g in np.unique(result.groups):
        members = frame[result.groups == g]
        published = table[result.groups == g]
        lo, hi = members["age"].min(), members["age"].max()
        expect = str(lo) if lo == hi else f"[{lo}-{hi}]"
        assert set(published["age"]) == {expect}
        cities = set(members["city"])
        assert set(published["city"]) == {cities.pop() if len(cities) == 1 else "*"}
        # every group mixes the two salaries (delta = 1: no two neighbours together)
        assert set(members["salary"]) == {0.0, 1.0}
    # paper's loss: age width / 30 plus the city's leaves under the LCA over 2 leaves
    expected = np.mean([
        (frame.age[result.groups == g].max() - frame.age[result.groups == g].min()) / 30
        + (1.0 if frame.city[result.groups == g].nunique() > 1 else 0.5)
        for g in np.unique(result.groups)])
    assert result.report.loss == pytest.approx(expected)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"quasi_identifiers": ["nope"]}, ValueError, r"quasi_identifiers: column\(s\) \['nope'\]"),
        ({"sensitive": ["nope"]}, ValueError, r"sensitive: column\(s\) \['nope'\]"),
        ({"sensitive": ["sex"]}, ValueError, r"both quasi-identifier and sensitive"),
        ({"sensitive": ["workclass"]}, ValueError, r"sensitive column 'workclass'.*ordered"),
        ({"hierarchies": {"nope": Hierarchy.flat([1])}}, ValueError,
         r"'nope', which is not in the table"),
        ({"hierarchies": {"race": 3}}, TypeError, r"hierarchy for column 'race'"),
        ({"hierarchies": {"race": "/no/such/file.csv"}}, ValueError, r"not found"),
        ({"k": 0}, ValueError, r"k must be >= 1"),
        ({"delta": 2}, ValueError, r"delta must lie in \[0, 1\]"),
        ({"on_infeasible": "skip"}, ValueError, r"on_infeasible must be one of"),
    ],
)
def test_bad_input_is_refused_clearly(uci_adult, kwargs, error, pattern):
    args = {"quasi_identifiers": QI, "sensitive": SENSITIVE, "k": 10, "epsilon": 0.05,
            "delta": 0.6}
    args.update(kwargs)
    with pytest.raises(error, match=pattern):
        anonymize(uci_adult.head(500), **args)


def test_value_missing_from_its_taxonomy_is_named(uci_adult):
    tree = Hierarchy.from_dict({"*": ["White", "Black"]})
    with pytest.raises(ValueError, match=r"column 'race'.*not in its hierarchy.*Asian-Pac"):
        anonymize(uci_adult.head(3000), quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                  epsilon=0.05, delta=0.6, hierarchies={"race": tree})


def test_missing_qi_values_and_group_column_are_refused():
    frame = pd.DataFrame({"age": [20.0, None, 40.0, 50.0], "s": [0.0, 1.0, 0.0, 1.0]})
    with pytest.raises(ValueError, match=r"column 'age' has 1 missing value.*row 1"):
        anonymize(frame, quasi_identifiers="age", sensitive="s", k=2, epsilon=0.1, delta=0.5)
    clash = pd.DataFrame({"age": [1, 2], "s": [0.0, 1.0], "group": [0, 0]})
    with pytest.raises(ValueError, match="already has a column named 'group'"):
        anonymize(clash, quasi_identifiers="age", sensitive="s", k=1, epsilon=0.1, delta=0.5)
    with pytest.raises(TypeError, match="DataFrame"):
        anonymize(clash.to_numpy(), quasi_identifiers="age", sensitive="s", k=1, epsilon=0.1,
                  delta=0.5)


def test_infeasible_raises_or_reports():
    frame = pd.DataFrame({"age": np.arange(20), "s": np.zeros(20)})
    with pytest.raises(InfeasibleError, match="violating row"):
        anonymize(frame, quasi_identifiers="age", sensitive="s", k=5, epsilon=0.1, delta=1.0)
    result = anonymize(frame, quasi_identifiers="age", sensitive="s", k=5, epsilon=0.1,
                       delta=1.0, on_infeasible="best_effort")
    assert not result.satisfied and not result.report.satisfied
    assert "NOT satisfied" in str(result.report)


def test_same_input_same_output(uci_adult):
    sample = uci_adult.head(5000)
    runs = [anonymize(sample, quasi_identifiers=QI, sensitive=SENSITIVE, k=10, epsilon=0.05,
                      delta=0.6, hierarchies=arx_hierarchies()) for _ in range(2)]
    pd.testing.assert_frame_equal(runs[0].table, runs[1].table)


def test_progress_reporter_writes_phases_to_its_stream():
    import io
    import time

    from proxanon._progress import ProgressReporter

    stream = io.StringIO()
    with ProgressReporter(stream, delay=0.0, interval=0.01) as reporter:
        reporter.phase = "prepare"
        time.sleep(0.05)
    lines = stream.getvalue().splitlines()
    # Off a terminal: the phase and the time taken so far, a line per interval.
    assert lines and all(re.fullmatch(r"proxanon: prepare \(\d+ s elapsed\)", line)
                         for line in lines)
    quiet = io.StringIO()
    with ProgressReporter(quiet, delay=5.0):
        pass
    assert quiet.getvalue() == ""


def test_taxonomy_distance_for_categorical_sensitive_columns():
    """With a hierarchy, a categorical sensitive column is compared by taxonomy distance;
    epsilon = 0 then means exact-value diversity (no two equal values beyond t(G))."""
    adult = load_adult()
    sample = adult.data.head(4000)
    result = anonymize(sample, quasi_identifiers=QI, sensitive="occupation", k=10,
                       epsilon=0.0, delta=0.8, hierarchies=adult.hierarchies)
    assert result.satisfied and "taxonomy" in result.report.metric
    table = result.table
    for _, members in table.groupby("group"):
        t = int(np.floor(0.2 * (len(members) - 1) + 1e-9))
        assert members["occupation"].value_counts().max() <= t + 1  # exact-value diversity
    # The published table audits the same way, by taxonomy distance.
    from proxanon.distances import taxonomy_distance

    tree = adult.hierarchies["occupation"]
    codes = tree.leaf_index(table["occupation"].astype(object).to_numpy(), column="occupation")
    report = audit(codes.astype(float), table["group"].to_numpy(), k=10, epsilon=0.0,
                   delta=0.8, metric=taxonomy_distance(tree))
    assert report.satisfied


# ---------------------------------------------------------------------- pandas in, pandas out


def mixed_frame(n: int = 36) -> pd.DataFrame:
    """Every kind of column a user's table holds; the index is not 0..n-1."""
    rng = np.random.default_rng(5)
    return pd.DataFrame({
        "age": rng.integers(20, 40, n),
        "sex": pd.Categorical(rng.choice(["F", "M"], n)),
        "visit": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 60, n), "D"),
        "income": rng.integers(0, 20, n) * 1000.0,
        "zip": np.array([f"{z:05d}" for z in rng.integers(0, 3000, n)], dtype=object),
        "label": pd.Categorical(rng.choice(["x", "y"], n), categories=["y", "x", "z"]),
        "note": pd.array(rng.choice(["a", "b", None], n), dtype="string"),
        "count": pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 9, n)),
                          dtype="Int64"),
        "stamp": pd.date_range("2021-03-04 05:06:07", periods=n, freq="37min", tz="UTC"),
        "payload": np.array([{"id": i} if i % 3 else "7.00" for i in range(n)], dtype=object),
        "ratio": rng.random(n).astype(np.float32),
        "flag": rng.random(n) < 0.5,
    }, index=pd.RangeIndex(100, 100 + n) * 2)


@pytest.mark.parametrize("options", [
    {}, {"on_infeasible": "suppress", "max_suppression": 0.5}, {"method": "mondrian"},
    {"on_infeasible": "best_effort", "delta": 1.0}])
def test_untouched_columns_keep_dtype_and_values_and_the_input_is_unchanged(options):
    frame = mixed_frame()
    before = frame.copy(deep=True)
    args = {"quasi_identifiers": ["age", "sex", "visit"], "sensitive": "income", "k": 3,
            "epsilon": 0.05, "delta": 0.5, **options}
    result = anonymize(frame, **args)
    pd.testing.assert_frame_equal(frame, before, check_exact=True)  # input untouched
    released = result.groups >= 0
    table = result.table
    for column in frame.columns.drop(["age", "sex", "visit"]):
        original = frame[column][released]
        assert table[column].dtype == original.dtype, column
        pd.testing.assert_series_equal(table[column], original, check_exact=True)
        objects = original.to_numpy(dtype=object)
        assert all(a is b or a == b or (pd.isna(a) and pd.isna(b))
                   for a, b in zip(table[column].to_numpy(dtype=object), objects, strict=True))


def test_date_qis_are_published_as_date_ranges():
    frame = mixed_frame(40)
    result = anonymize(frame, quasi_identifiers=["visit"], sensitive="income", k=4,
                       epsilon=0.05, delta=0.5)
    published = result.table["visit"]
    for group, members in frame.groupby(result.groups):
        first, last = members["visit"].min(), members["visit"].max()
        expect = (first.strftime("%Y-%m-%d") if first == last else
                  f"[{first:%Y-%m-%d}, {last:%Y-%m-%d}]")
        assert set(published[result.groups == group]) == {expect}
    # Loss is the time span over the column's span, as for a number.
    span = (frame["visit"].max() - frame["visit"].min()).total_seconds()
    expected = np.mean([(m["visit"].max() - m["visit"].min()).total_seconds() / span
                        for _, m in frame.groupby(result.groups)])
    assert result.report.loss == pytest.approx(expected)
    # Times of day and zones are kept in the label.
    timed = anonymize(frame, quasi_identifiers=["stamp"], sensitive="income", k=4,
                      epsilon=0.05, delta=0.5)
    first = frame["stamp"][timed.groups == 0].min()
    assert timed.table["stamp"][timed.groups == 0].iloc[0].startswith(f"[{first.isoformat()}, ")


def test_duplicate_column_names_are_named_in_the_error():
    frame = pd.DataFrame([[30, 1.0, 2, 3], [31, 2.0, 4, 5]], columns=["age", "s", "x", "x"])
    with pytest.raises(ValueError, match=r"data has more than one column named 'x'"):
        anonymize(frame, quasi_identifiers="age", sensitive="s", k=1, epsilon=0.1, delta=0.5)
    with pytest.raises(ValueError, match=r"table has more than one column named 'x'"):
        audit(frame, quasi_identifiers="age", sensitive="s", k=1, epsilon=0.1, delta=0.5)


def test_reports_have_short_reprs_and_html():
    from proxanon import advise
    from proxanon.tables import scale_sensitive

    frame = mixed_frame(400)
    result = anonymize(frame, quasi_identifiers=["age", "sex"], sensitive="income", k=5,
                       epsilon=0.05, delta=0.5, on_infeasible="suppress", max_suppression=1.0)
    published = audit(result.table, quasi_identifiers=["age", "sex"], sensitive="income",
                      k=5, epsilon=0.05, delta=0.5)
    advice = advise(scale_sensitive(frame, ["income"]), k=5, epsilon=0.05, delta=0.5)
    for obj, name in ((result, "Anonymization"), (result.report, "Report"),
                      (published, "AuditReport"), (advice, "Advice")):
        text = repr(obj)
        assert text.startswith(f"{name}(satisfied=" if name != "Advice" else "Advice(n=400")
        assert len(text) < 400 and "array" not in text and "\n" not in text
        html = obj._repr_html_()
        assert html.startswith("<table>") and html.count("<tr>") <= 15
        assert f"<b>{name}</b>" in html


# ---------------------------------------------------------------------- messages, Mondrian


def test_infeasible_error_is_a_summary_line_then_a_proof_in_the_tables_units():
    frame = pd.DataFrame({"age": np.arange(20), "income": np.r_[np.full(12, 52_000.0),
                                                                np.linspace(60_000, 90_000, 8)]})
    with pytest.raises(InfeasibleError) as caught:
        anonymize(frame, quasi_identifiers="age", sensitive="income", k=4, epsilon=0.05,
                  delta=0.8)
    summary, proof, units, *_ = str(caught.value).split("\n")
    assert summary.startswith("no table satisfying (epsilon=0.05, delta=0.8)^k-dissimilarity")
    assert summary.endswith("published class(es).")
    # The clique is described by the column's own values (dollars), not by [0, 1] numbers.
    assert proof.startswith("Proof: the rows with income 52000 (all within epsilon of one row's "
                            "value, on one side of it)")
    assert "12 pairwise neighbours" in proof
    # epsilon = 0.05 of the 38,000-dollar range:
    assert "a difference of at most 1900 in income" in units


def _units_line(frame: pd.DataFrame, sensitive: str, **options: object) -> str:
    with pytest.raises(InfeasibleError) as caught:
        anonymize(frame, quasi_identifiers="age", sensitive=sensitive, k=5, epsilon=0.1,
                  delta=0.6, **options)
    return next(line for line in str(caught.value).split("\n") if line.startswith("Units:"))


def test_epsilon_in_units_reads_the_scale_the_check_used():
    # Thirty equal values among forty rows: no table satisfies. The given range, not the
    # column's own (2 to 60), is what epsilon is a fraction of; dates and durations read
    # epsilon in time (0.1 of a 765-day span).
    rng = np.random.default_rng(0)
    days = np.r_[np.zeros(30), [765.0], rng.integers(1, 765, 9)]
    frame = pd.DataFrame({"age": rng.integers(20, 60, 40), "income": 2 + days * (58 / 765),
                          "when": pd.Timestamp("2020-01-01") + pd.to_timedelta(days, "D"),
                          "took": pd.to_timedelta(days, "D")})
    assert "at most 100 in income" in _units_line(
        frame, "income", sensitive_ranges={"income": (0.0, 1000.0)})
    assert "at most 5.8 in income" in _units_line(frame, "income")
    for column in ("when", "took"):
        assert f"at most 76 days 12:00:00 in {column}" in _units_line(frame, column)


def test_unsatisfied_mondrian_lists_only_the_rows_that_violate():
    # The whole table fails (ten equal incomes, t = 7 of 19), so Mondrian cannot cut: one
    # group, in which only the ten equal rows violate.
    frame = pd.DataFrame({"age": np.arange(20),
                          "income": np.r_[np.zeros(10), np.linspace(0.5, 1, 10)]})
    result = anonymize(frame, quasi_identifiers="age", sensitive="income", k=2,
                       epsilon=0.01, delta=0.6, method="mondrian", on_infeasible="best_effort")
    assert not result.satisfied
    np.testing.assert_array_equal(result.partition.violating_rows, np.arange(10))
    assert result.report.remaining_violations == 10
    assert result.partition.stats["remaining_violations"] == 10
    # The cut has no colouring: its report names it instead of a degree bound of nan.
    engine = next(line for line in str(result.report).splitlines() if "engine" in line)
    assert "Mondrian-(ε, δ) cut" in engine and "10 violating row(s) left" in engine
    assert "nan" not in str(result.report).split("seconds")[0]


def test_a_limited_search_that_leaves_few_violations_is_searched_in_full() -> None:
    """tests/data/limited_search.csv (110 rows; k, epsilon and delta in its last columns): with
    one class searched per violation the QI-aware run leaves one row violating; searched in
    full it satisfies. Both releases keep the QI-aware groups (no plain fallback), and the
    published classes pass a pair-by-pair check."""
    frame = pd.read_csv(Path(__file__).parent / "data" / "limited_search.csv")
    k, eps, dlt = int(frame["k"][0]), float(frame["eps"][0]), float(frame["dlt"][0])
    frame = frame.drop(columns=["k", "eps", "dlt"])
    common = dict(quasi_identifiers=["a", "b"], sensitive=["s", "t"], k=k, epsilon=eps,
                  delta=dlt, search_limit=1, on_infeasible="best_effort")
    for publish in ("generalize", "anatomy"):
        result = anonymize(frame, publish=publish, **common)
        assert result.satisfied and not result.report.fallback
        classes = (result.table.groupby(["a", "b"], sort=False).ngroup().to_numpy()
                   if publish == "generalize" else result.groups)
        assert brute_classes_satisfy(scale_sensitive(frame, ["s", "t"]), classes, k, eps, dlt)
