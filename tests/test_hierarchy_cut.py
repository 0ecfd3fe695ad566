"""The hierarchy cut (docs/design/mondrian.md#the-hierarchy-cut): at δ = 0 ``anonymize``
publishes k-anonymous tables (plus criteria) whose classes are split along the taxonomies and
published at their tightest nodes. Each published table is checked here from its labels alone,
against the original rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import Hierarchy, LDiversity, anonymize
from proxanon.datasets import load_adult
from proxanon.evaluate import count_query_error

REGION = Hierarchy.from_dict({"*": {"north": ["n1", "n2", "n3"], "south": ["s1", "s2"],
                                    "east": ["e1", "e2", "e3", "e4"]}})
LEAVES = ["n1", "n2", "n3", "s1", "s2", "e1", "e2", "e3", "e4"]
QI = ["region", "age", "sex"]


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, int, int]:
    n = draw(st.integers(2, 120))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frame = pd.DataFrame({
        "region": rng.choice(LEAVES[:draw(st.integers(1, 9))], n),
        "age": rng.integers(20, 20 + draw(st.integers(1, 40)), n),
        "sex": rng.choice(["F", "M"][:draw(st.integers(1, 2))], n),
        "job": rng.choice(["a", "b", "c", "d"][:draw(st.integers(1, 4))], n),
        "pay": rng.integers(0, 5, n) * 1000.0,
        "note": [f"row {i}" for i in range(n)],
    })
    k = draw(st.integers(1, 8).filter(lambda value: value <= n))
    ell = draw(st.integers(0, 3))
    return frame, k, ell


def brute_classes(original: pd.DataFrame, table: pd.DataFrame) -> list[np.ndarray]:
    """Rows sharing their published QI labels, as positions."""
    ids = table.groupby(QI, sort=False).ngroup().to_numpy()
    return [np.flatnonzero(ids == g) for g in range(int(ids.max()) + 1)]


def covers(label: str, value: str) -> bool:
    return label in REGION.ancestors(value)


def in_range(label: object, value: float) -> bool:
    text = str(label)
    if text.startswith("["):
        lo, hi = text[1:-1].split("-")
        return float(lo) <= value <= float(hi)
    return float(text) == value


def check_published(released: pd.DataFrame, table: pd.DataFrame, k: int, ell: int) -> None:
    """The published ``table`` of the input rows ``released``, from its labels: other columns
    as they were, classes of k rows with ``ell`` distinct jobs, labels that cover the rows."""
    for column in ("note", "job", "pay"):
        pd.testing.assert_series_equal(table[column], released[column])
    for rows in brute_classes(released, table):
        assert rows.size >= k
        if ell > 1:
            assert released["job"].iloc[rows].nunique() >= ell
    for label, value in zip(table["region"], released["region"], strict=True):
        assert covers(label, value)
    for label, value in zip(table["age"], released["age"], strict=True):
        assert in_range(label, float(value))
    for label, value in zip(table["sex"], released["sex"], strict=True):
        assert label in (value, "*")


@settings(max_examples=60, deadline=None)
@given(case=tables())
def test_published_classes_are_k_anonymous_diverse_and_cover_their_rows(case) -> None:
    frame, k, ell = case
    before = frame.copy()
    criteria = [LDiversity(ell, column="job")] if ell > 1 else []
    feasible = ell <= 1 or frame["job"].nunique() >= ell
    common = dict(quasi_identifiers=QI, sensitive=["pay"], k=k, delta=0,
                  hierarchies={"region": REGION}, criteria=criteria)
    if not feasible:
        with pytest.raises(Exception, match="job"):
            anonymize(frame, **common)
        return
    result = anonymize(frame, **common)
    pd.testing.assert_frame_equal(frame, before)  # the input is never changed
    assert result.satisfied
    check_published(frame, result.table, k, ell)
    # Never costlier than strict Mondrian's cut of the same table.
    mondrian = anonymize(frame, method="mondrian", **{**common, "delta": None})
    assert result.report.gcp <= mondrian.report.gcp + 1e-12


def adult_setting(quasi: list[str]) -> dict:
    adult = load_adult()
    return dict(quasi_identifiers=quasi, sensitive=["occupation"],
                hierarchies={c: adult.hierarchies[c] for c in quasi})


@pytest.mark.parametrize("k", [5, 10])
def test_adult_with_its_hierarchies_is_far_finer_than_strict_mondrian(k: int) -> None:
    """Adult, the ARX hierarchies on the four QIs: classes split along the taxonomies keep most
    rows at their exact values (strict Mondrian's median cuts on leaf codes publish coarse
    nodes): a third of its GCP or less, and a lower count-query error."""
    adult = load_adult()
    common = adult_setting(["age", "sex", "race", "marital-status"])
    cut = anonymize(adult.data, k=k, delta=0, **common)
    mondrian = anonymize(adult.data, k=k, method="mondrian", **common)
    assert cut.satisfied and mondrian.satisfied
    assert cut.report.gcp * 3 <= mondrian.report.gcp
    errors = [count_query_error(adult.data, r, qd=2, s=0.1).mean_relative_error
              for r in (cut, mondrian)]
    assert errors[0] < errors[1]
    sizes = cut.table.groupby(common["quasi_identifiers"]).size()
    assert sizes.min() >= k


@pytest.mark.slow
def test_delta_zero_needs_no_epsilon_and_ignores_the_sensitive_columns_type() -> None:
    """At δ = 0 the model is k-anonymity (and the criteria): epsilon may be left out, and a
    taxonomy on the sensitive column changes neither the table nor its classes."""
    adult = load_adult()
    common = adult_setting(["age", "sex", "race", "marital-status"])
    data = adult.data.copy()
    data["occupation"] = pd.Categorical(data["occupation"], ordered=True)
    plain = anonymize(data, k=10, delta=0, **common)
    with_eps = anonymize(data, k=10, epsilon=0.05, delta=0, **common)
    tree = anonymize(adult.data, k=10, delta=0, **{
        **common, "hierarchies": {**common["hierarchies"],
                                  "occupation": adult.hierarchies["occupation"]}})
    for other in (with_eps, tree):
        pd.testing.assert_frame_equal(plain.table.drop(columns="occupation"),
                                      other.table.drop(columns="occupation"))
        assert np.array_equal(plain.groups, other.groups)
    with pytest.raises(TypeError, match="epsilon"):
        anonymize(data, k=10, delta=0.5, **common)


@pytest.mark.slow
def test_same_table_for_any_thread_count() -> None:
    adult = load_adult()
    common = adult_setting(["age", "sex", "race", "marital-status", "education"])
    one = anonymize(adult.data, k=5, delta=0, n_threads=1, **common)
    two = anonymize(adult.data, k=5, delta=0, n_threads=2, **common)
    pd.testing.assert_frame_equal(one.table, two.table)


@pytest.mark.slow
def test_command_line_takes_delta_zero_without_epsilon(tmp_path) -> None:
    """``proxanon anonymize --delta 0`` needs no ``--epsilon``; the published classes hold k
    rows each and the summary names the hierarchy cut; ``--delta 0.5`` without it is refused
    (exit 2) with the flag named."""
    import subprocess
    import sys

    from tests.conftest import ARX_ADULT

    hierarchies = [f"--hierarchy={c}={ARX_ADULT / f'adult_hierarchy_{c}.csv'}"
                   for c in ("age", "sex", "race", "marital-status")]
    order = "education=" + ",".join(load_adult().data["education"].cat.categories)
    base = [sys.executable, "-m", "proxanon", "anonymize", str(ARX_ADULT / "adult.csv"),
            "--qi", "age,sex,race,marital-status", "--sensitive", "education",
            "--order", order, "--k", "10", *hierarchies]
    out = tmp_path / "out.csv"
    done = subprocess.run([*base, "--delta", "0", "-o", str(out)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "hierarchy cut" in done.stdout and "epsilon means" not in done.stdout
    table = pd.read_csv(out, sep=";", dtype=str)
    assert table.groupby(["age", "sex", "race", "marital-status"]).size().min() >= 10
    refused = subprocess.run([*base, "--delta", "0.5", "-o", str(tmp_path / "no.csv")],
                             capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    assert "--epsilon" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "no.csv").exists()


@pytest.mark.slow
def test_delta_zero_takes_a_text_sensitive_column_and_leaves_the_input_unchanged() -> None:
    """At δ = 0 no distance is read, so a sensitive column needs no order: text and unordered
    categoricals are taken (the risk counts equal values only), the input is not changed,
    and the classes are those of the same column made an ordered categorical."""
    adult = load_adult()
    common = adult_setting(["age", "sex", "race", "marital-status"])
    text = adult.data.assign(occupation=adult.data["occupation"].astype(str).astype(object))
    unordered = adult.data.assign(occupation=adult.data["occupation"].cat.as_unordered())
    before = text.copy()
    results = [anonymize(frame, k=10, delta=0, **common)
               for frame in (text, unordered, adult.data)]
    pd.testing.assert_frame_equal(text, before)
    assert all(r.satisfied for r in results)
    for r in results[:2]:
        assert np.array_equal(r.groups, results[2].groups)
        assert r.report.max_risk == pytest.approx(results[2].report.max_risk)
    assert results[0].table["occupation"].dtype == object
    with pytest.raises(ValueError, match="occupation"):
        anonymize(text, k=10, epsilon=0.1, delta=0.5, **common)


@settings(max_examples=50, deadline=None)
@given(case=tables(), share=st.sampled_from([0.05, 0.2, 0.5]))
@pytest.mark.slow
def test_a_suppression_limit_leaves_out_rows_only_where_that_lowers_the_loss(case,
                                                                            share) -> None:
    """``max_suppression`` at δ = 0: at most that share of the rows is left out, the rows
    published are exactly the others, each class still holds k rows and the criteria, and the
    loss over every input row (a suppressed row fully generalized) is never above the table
    that suppresses nothing."""
    from proxanon import audit
    from proxanon.evaluate import score_table

    frame, k, ell = case
    criteria = [LDiversity(ell, column="job")] if ell > 1 else []
    if ell > 1 and frame["job"].nunique() < ell:
        return
    common = dict(quasi_identifiers=QI, sensitive=["pay"], k=k, delta=0,
                  hierarchies={"region": REGION}, criteria=criteria)
    before = frame.copy()
    plain = anonymize(frame, **common)
    result = anonymize(frame, on_infeasible="suppress", max_suppression=share, **common)
    pd.testing.assert_frame_equal(frame, before)
    left_out = np.flatnonzero(result.groups < 0)
    kept = np.flatnonzero(result.groups >= 0)
    assert result.satisfied
    assert left_out.size <= int(share * len(frame))
    assert list(result.report.suppressed_rows) == left_out.tolist()
    table = result.table
    assert table.index.tolist() == kept.tolist()
    check_published(frame.iloc[kept], table, k, ell)
    checked = audit(table, k=k, epsilon=0.0, delta=0.0, sensitive=["pay"],
                    quasi_identifiers=QI, hierarchies={"region": REGION}, criteria=criteria)
    assert checked.satisfied
    scores = [score_table(frame, r.table.drop(columns="group"), quasi_identifiers=QI,
                          sensitive=["pay"], hierarchies={"region": REGION},
                          suppressed=r.groups < 0).gcp for r in (plain, result)]
    assert scores[1] <= scores[0] + 1e-12


@pytest.mark.slow
def test_adult_suppression_limit_buys_utility_and_is_reported(tmp_path) -> None:
    """Adult, four QIs with their hierarchies, k=10: a 5% suppression limit leaves a few rows
    out, no more than 5%, and the table costs less counted over every row (a suppressed row
    fully generalized); the report and the command line's summary name the rows left out,
    and the command line takes the text sensitive column as it is."""
    import subprocess
    import sys

    from proxanon.evaluate import score_table
    from tests.conftest import ARX_ADULT

    adult = load_adult()
    quasi = ["age", "sex", "race", "marital-status"]
    common = adult_setting(quasi)
    plain = anonymize(adult.data, k=10, delta=0, **common)
    limited = anonymize(adult.data, k=10, delta=0, on_infeasible="suppress",
                        max_suppression=0.05, **common)
    n_left = len(limited.report.suppressed_rows)
    assert 0 < n_left <= 0.05 * len(adult.data)
    assert limited.satisfied and limited.report.method == "hierarchy cut"
    assert len(limited.table) == len(adult.data) - n_left
    assert limited.table.groupby(quasi).size().min() >= 10
    scores = [score_table(adult.data, r.table.drop(columns="group"), quasi_identifiers=quasi,
                          sensitive=["occupation"], hierarchies=common["hierarchies"],
                          suppressed=r.groups < 0) for r in (plain, limited)]
    assert scores[1].gcp < scores[0].gcp
    assert scores[1].suppressed == n_left
    hierarchies = [f"--hierarchy={c}={ARX_ADULT / f'adult_hierarchy_{c}.csv'}" for c in quasi]
    out = tmp_path / "out.csv"
    # At --delta 0 a sensitive column of text needs no --order (values compared for equality).
    done = subprocess.run(
        [sys.executable, "-m", "proxanon", "anonymize", str(ARX_ADULT / "adult.csv"),
         "--qi", ",".join(quasi), "--sensitive", "occupation", "--k", "10",
         *hierarchies, "--delta", "0", "--suppress", "0.05", "-o", str(out)],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "suppressed" in done.stdout
    published = pd.read_csv(out, sep=";", dtype=str)
    assert 0 < len(adult.data) - len(published) <= 0.05 * len(adult.data)


def test_absorption_keeps_the_criteria_it_does_not_read() -> None:
    """A table hypothesis found: at k = 1 every class above 2 rows is giant, and absorption
    (which moves rows by the sensitive values alone) once left a class of one job. Where a
    class it changed fails a criterion, no row moves: every class keeps two jobs, no repair
    merges classes afterwards, and the table costs no more than strict Mondrian's."""
    frame = pd.read_csv(Path(__file__).parent / "data" / "absorb_criteria.csv",
                        dtype={"region": str, "sex": str, "job": str})
    common = dict(quasi_identifiers=QI, sensitive=["pay"], k=1, delta=0,
                  hierarchies={"region": REGION}, criteria=[LDiversity(2, column="job")])
    result = anonymize(frame, **common)
    assert result.satisfied and result.report.merge_rounds == 0
    assert (frame.groupby(result.groups)["job"].nunique() >= 2).all()
    mondrian = anonymize(frame, method="mondrian", **{**common, "delta": None})
    assert result.report.gcp <= mondrian.report.gcp + 1e-12
