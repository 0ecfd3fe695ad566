"""The hierarchy cut (docs/design/mondrian.md#the-hierarchy-cut): at δ = 0 ``anonymize``
publishes k-anonymous tables (plus criteria) whose classes are split along the taxonomies and
published at their tightest nodes. Each published table is checked here from its labels alone,
against the original rows."""

from __future__ import annotations

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
    table = result.table
    assert result.satisfied
    for column in ("note", "job", "pay"):
        pd.testing.assert_series_equal(table[column], frame[column])
    for rows in brute_classes(frame, table):
        assert rows.size >= k
        if ell > 1:
            assert frame["job"].iloc[rows].nunique() >= ell
    for label, value in zip(table["region"], frame["region"], strict=True):
        assert covers(label, value)
    for label, value in zip(table["age"], frame["age"], strict=True):
        assert in_range(label, float(value))
    for label, value in zip(table["sex"], frame["sex"], strict=True):
        assert label in (value, "*")
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


def test_same_table_for_any_thread_count() -> None:
    adult = load_adult()
    common = adult_setting(["age", "sex", "race", "marital-status", "education"])
    one = anonymize(adult.data, k=5, delta=0, n_threads=1, **common)
    two = anonymize(adult.data, k=5, delta=0, n_threads=2, **common)
    pd.testing.assert_frame_equal(one.table, two.table)


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
