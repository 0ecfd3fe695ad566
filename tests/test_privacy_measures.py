"""privacy_measures against pycanon 1.3.6 (the oracle), brute-force risk and (epsilon, m)."""

from __future__ import annotations

import math
import os
import warnings
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import proxanon
from proxanon._results.privacy import (
    RISK_BIN_EDGES,
    PrivacyMeasures,
    privacy_measures,
)

PYCANON = ("k_anonymity", "l_diversity", "entropy_l_diversity", "recursive_c_l_diversity",
           "alpha_k_anonymity", "t_closeness", "delta_disclosure", "basic_beta_likeness",
           "enhanced_beta_likeness")
ADULT_QI = ["age", "sex", "race", "marital-status"]


def _pycanon_anonymity() -> Any:
    """pycanon's measures; installed beside the test extra with --no-deps (its own pins would
    hold numpy and pandas back), as the README's test command does. CI must have it."""
    try:
        import pycanon.anonymity as anonymity
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI must install pycanon 1.3.6 (the README's test command does)")
        pytest.skip('pycanon is not installed: pip install --no-deps "pycanon==1.3.6"')
    return anonymity


def pycanon_values(table: pd.DataFrame, qis: list[str], sens: list[str]) -> dict[str, Any]:
    """The nine measures as pycanon computes them, with its defaults."""
    anonymity = _pycanon_anonymity()
    values: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' FutureWarnings inside pycanon
        for name in PYCANON:
            function = getattr(anonymity, name)
            try:
                values[name] = function(table, qis) if name == "k_anonymity" else function(
                    table, qis, sens)
            except ZeroDivisionError:  # t-closeness of a numeric column with one value
                values[name] = ZeroDivisionError if len(sens) == 1 else max(
                    _zero_if_one_value(function, table, qis, [column]) for column in sens)
    return values


def _zero_if_one_value(function: Any, table: pd.DataFrame, qis: list[str],
                       sens: list[str]) -> float:
    """pycanon's measure of one sensitive column; 0 where it divides by zero (a numeric
    column with one value is as close as can be)."""
    try:
        return float(function(table, qis, sens))
    except ZeroDivisionError:
        return 0.0


def same(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, tuple):
        return (isinstance(ours, tuple) and len(ours) == len(theirs)
                and all(same(a, b) for a, b in zip(ours, theirs, strict=True)))
    if isinstance(theirs, (int, np.integer)):
        return isinstance(ours, int) and ours == int(theirs)
    if math.isnan(theirs):
        return math.isnan(ours)
    return math.isclose(ours, float(theirs), rel_tol=1e-12, abs_tol=1e-12)


def assert_matches_pycanon(table: pd.DataFrame, qis: list[str], sens: list[str]) -> None:
    ours = privacy_measures(table, quasi_identifiers=qis, sensitive=sens)
    theirs = pycanon_values(table, qis, sens)
    for name in PYCANON:
        if theirs[name] is ZeroDivisionError:
            assert ours.t_closeness == 0.0
            continue
        assert same(getattr(ours, name), theirs[name]), (name, getattr(ours, name), theirs[name])


# --- pycanon on Adult ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return proxanon.datasets.load_adult().data


@pytest.fixture(scope="module")
def anonymized_adult() -> pd.DataFrame:
    data = proxanon.datasets.load_adult()
    result = proxanon.anonymize(
        data.data, quasi_identifiers=ADULT_QI, sensitive=["occupation"], k=5, epsilon=0.05,
        delta=0.8, hierarchies={c: data.hierarchies[c] for c in ("sex", "race", "marital-status")})
    table = result.table.drop(columns="group")
    table["age"] = table["age"].astype(str)  # generalized ages mix ints and "[52-54]"
    return table


@pytest.mark.slow
def test_adult_matches_pycanon(adult: pd.DataFrame) -> None:
    assert_matches_pycanon(adult, ADULT_QI, ["occupation"])


@pytest.mark.slow
def test_anonymized_adult_matches_pycanon(anonymized_adult: pd.DataFrame) -> None:
    measures = privacy_measures(anonymized_adult, quasi_identifiers=ADULT_QI,
                                sensitive=["occupation"])
    assert measures.k_anonymity >= 5 and measures.l_diversity > 1  # c is defined
    assert_matches_pycanon(anonymized_adult, ADULT_QI, ["occupation"])


@pytest.mark.slow
def test_adult_sample_numeric_and_text_sensitive_match_pycanon(adult: pd.DataFrame) -> None:
    sample = adult.sample(800, random_state=7).reset_index(drop=True)
    assert_matches_pycanon(sample, ["sex", "race", "marital-status", "education"],
                           ["age", "occupation"])


# --- pycanon on random tables -------------------------------------------------------------

@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, list[str], list[str]]:
    n = draw(st.integers(2, 40))
    qi_card = draw(st.integers(1, 4))
    frame = pd.DataFrame({
        "q1": draw(st.lists(st.integers(0, qi_card), min_size=n, max_size=n)),
        "q2": draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n)),
        "num": draw(st.lists(st.integers(0, draw(st.integers(1, 6))), min_size=n,
                             max_size=n)),
        "flt": draw(st.lists(st.sampled_from([-1.5, 0.25, 0.3, 2.0, 7.75]), min_size=n,
                             max_size=n)),
        "txt": draw(st.lists(st.sampled_from(["x", "yy", "z", "w"]), min_size=n,
                             max_size=n)),
    })
    qis = draw(st.sampled_from([["q1"], ["q2"], ["q1", "q2"]]))
    sens = draw(st.lists(st.sampled_from(["num", "flt", "txt"]), min_size=1, max_size=3,
                         unique=True))
    return frame, qis, sens


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
@pytest.mark.slow
def test_random_tables_match_pycanon(drawn: tuple[pd.DataFrame, list[str], list[str]]) -> None:
    assert_matches_pycanon(*drawn)


def test_uniform_classes_keep_pycanons_truncated_entropy() -> None:
    # Two classes, each with d values once: H = ln d, and pycanon's int(np.exp(1) ** H)
    # falls to d - 1 for d = 2, 3, 4 (and stays d for 5).
    for d, expected in [(2, 1), (3, 2), (4, 3), (5, 5)]:
        table = pd.DataFrame({"q": [0] * d + [1] * d, "s": [f"v{i}" for i in range(d)] * 2})
        measures = privacy_measures(table, quasi_identifiers=["q"], sensitive=["s"])
        assert measures.entropy_l_diversity == expected
        assert_matches_pycanon(table, ["q"], ["s"])


def test_numeric_column_with_one_value_has_t_zero() -> None:
    table = pd.DataFrame({"q": [0, 0, 1], "s": [3, 3, 3]})
    assert privacy_measures(table, quasi_identifiers=["q"], sensitive=["s"]).t_closeness == 0.0


def test_measures_do_not_depend_on_the_index(adult: pd.DataFrame) -> None:
    sample = adult.sample(500, random_state=1)  # a shuffled index, where pycanon errs
    measures = privacy_measures(sample, quasi_identifiers=ADULT_QI, sensitive=["occupation"])
    again = privacy_measures(sample.reset_index(drop=True), quasi_identifiers=ADULT_QI,
                             sensitive=["occupation"])
    assert measures == again


# --- re-identification risk, brute force --------------------------------------------------

def brute_risk(table: pd.DataFrame, qis: list[str], threshold: float,
               population: pd.DataFrame | None = None) -> dict[str, Any]:
    rows = [tuple(r) for r in table[qis].itertuples(index=False)]
    sizes = Counter(rows)
    risk = [1 / sizes[r] for r in rows]
    n = len(rows)
    out: dict[str, Any] = {
        "prosecutor_risk_max": max(risk),
        "prosecutor_risk_mean": sum(risk) / n,
        "sample_uniques": sum(1 for r in rows if sizes[r] == 1),
        "records_at_risk": sum(1 for x in risk if x > threshold),
        "marketer_risk": len(sizes) / n,
        "histogram": [sum(1 for x in risk if lo < x <= hi)
                      for lo, hi in zip(RISK_BIN_EDGES, RISK_BIN_EDGES[1:], strict=False)],
    }
    if population is not None:
        pop = Counter(tuple(r) for r in population[qis].itertuples(index=False))
        journalist = [1 / pop[r] for r in rows]
        out["journalist_risk_max"] = max(journalist)
        out["journalist_risk_mean"] = sum(journalist) / n
        out["marketer_risk"] = sum(sizes[c] / pop[c] for c in sizes) / n
    return out


def check_risk(measures: PrivacyMeasures, expected: dict[str, Any]) -> None:
    for name, value in expected.items():
        if name == "histogram":
            assert [b.records for b in measures.risk_histogram] == value
            continue
        assert getattr(measures, name) == pytest.approx(value, rel=1e-12), name
    n = measures.n_records
    assert measures.sample_uniques_share == measures.sample_uniques / n
    assert measures.records_at_risk_share == measures.records_at_risk / n
    assert measures.expected_reidentifications == pytest.approx(measures.marketer_risk * n)
    assert sum(b.records for b in measures.risk_histogram) == n


@settings(max_examples=60, deadline=None)
@given(tables(), st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]), st.integers(0, 3))
def test_risk_matches_brute_force(drawn: tuple[pd.DataFrame, list[str], list[str]],
                                  threshold: float, extra: int) -> None:
    table, qis, sens = drawn
    # a population holding the sample and, for some classes, more of the same
    population = pd.concat([table] + [table.iloc[::2]] * extra, ignore_index=True)
    measures = privacy_measures(table, quasi_identifiers=qis, sensitive=sens,
                                population=population, risk_threshold=threshold)
    check_risk(measures, brute_risk(table, qis, threshold, population))
    alone = privacy_measures(table, quasi_identifiers=qis, sensitive=sens,
                             risk_threshold=threshold)
    assert alone.journalist_risk_max is None and alone.journalist_risk_mean is None
    check_risk(alone, brute_risk(table, qis, threshold))


def test_adult_risk_matches_brute_force(adult: pd.DataFrame) -> None:
    measures = privacy_measures(adult, quasi_identifiers=ADULT_QI, sensitive=["occupation"])
    check_risk(measures, brute_risk(adult, ADULT_QI, measures.risk_threshold))
    assert measures.marketer_risk == measures.n_classes / measures.n_records


def test_missing_qi_value_is_a_class_of_its_own() -> None:
    table = pd.DataFrame({"q": [1.0, np.nan, np.nan, 2.0, 1.0], "s": list("abcab")})
    measures = privacy_measures(table, quasi_identifiers=["q"], sensitive=["s"])
    assert measures.n_classes == 3
    assert measures.k_anonymity == 1
    assert measures.sample_uniques == 1


def test_a_sample_class_absent_from_the_population_is_refused() -> None:
    table = pd.DataFrame({"q": [1, 1, 2], "r": ["a", "a", "b"], "s": list("xyz")})
    population = pd.DataFrame({"q": [1, 1, 1, 3], "r": ["a", "a", "a", "b"]})
    with pytest.raises(ValueError, match=r"\{'q': 2, 'r': 'b'\}.*absent from the population"):
        privacy_measures(table, quasi_identifiers=["q", "r"], sensitive="s",
                         population=population)
    with pytest.raises(ValueError, match="has only 1 records in the population"):
        privacy_measures(table, quasi_identifiers=["q", "r"], sensitive="s",
                         population=population.iloc[2:].assign(q=[1, 2]))
    with pytest.raises(ValueError, match="population has no quasi-identifier column 'r'"):
        privacy_measures(table, quasi_identifiers=["q", "r"], sensitive="s",
                         population=population[["q"]])


# --- (epsilon, m)-anonymity ---------------------------------------------------------------

def brute_epsilon_m(table: pd.DataFrame, qis: list[str], column: str, eps: float) -> int:
    m = None
    for _, group in table.groupby(qis, dropna=False, observed=True):
        values = group[column].to_numpy(dtype=float)
        widest = max(int(np.sum((values >= x - eps) & (values <= x + eps))) for x in values)
        class_m = len(values) // widest
        m = class_m if m is None else min(m, class_m)
    assert m is not None
    return m


@settings(max_examples=80, deadline=None)
@given(tables(), st.sampled_from([0.0, 0.05, 0.3, 1.0, 2.5, 100.0]))
def test_epsilon_m_matches_brute_force(drawn: tuple[pd.DataFrame, list[str], list[str]],
                                       eps: float) -> None:
    table, qis, _ = drawn
    for sens in (["num"], ["flt"], ["num", "flt", "txt"]):
        measures = privacy_measures(table, quasi_identifiers=qis, sensitive=sens,
                                    epsilon_m=eps)
        expected = min(brute_epsilon_m(table, qis, c, eps) for c in sens if c != "txt")
        assert measures.epsilon_m_anonymity == expected
        assert measures.epsilon_m == eps


def test_epsilon_m_on_adult_ages(adult: pd.DataFrame) -> None:
    qis = ["sex", "race", "marital-status", "education"]
    measures = privacy_measures(adult, quasi_identifiers=qis, sensitive=["age"], epsilon_m=3)
    assert measures.epsilon_m_anonymity == brute_epsilon_m(adult, qis, "age", 3)


# --- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"quasi_identifiers": ["nope"]}, ValueError, "quasi_identifiers: 'nope' is not a column"),
    ({"sensitive": ["s", "nope"]}, ValueError, "sensitive: 'nope' is not a column"),
    ({"sensitive": ["q"]}, ValueError, "'q' is both a quasi-identifier and a sensitive"),
    ({"quasi_identifiers": []}, ValueError, "quasi_identifiers is empty"),
    ({"sensitive": ["s", "s"]}, ValueError, "sensitive names 's' twice"),
    ({"quasi_identifiers": [0]}, TypeError, "must list column names"),
    ({"risk_threshold": 1.5}, ValueError, "risk_threshold is a probability"),
    ({"risk_threshold": "high"}, TypeError, "risk_threshold must be a number"),
    ({"epsilon_m": -1}, ValueError, "epsilon_m must be a finite number >= 0"),
    ({"epsilon_m": 1.0}, ValueError, "epsilon_m needs a numeric sensitive column"),
    ({"population": [1, 2]}, TypeError, "population must be a pandas DataFrame"),
])
def test_bad_input_names_the_parameter(kwargs: dict[str, Any], error: type[Exception],
                                       message: str) -> None:
    table = pd.DataFrame({"q": [1, 1, 2], "s": ["a", "b", "c"]})
    arguments: dict[str, Any] = {"quasi_identifiers": ["q"], "sensitive": ["s"], **kwargs}
    with pytest.raises(error, match=message):
        privacy_measures(table, **arguments)


def test_bad_tables_are_refused() -> None:
    with pytest.raises(TypeError, match="table must be a pandas DataFrame"):
        privacy_measures([[1, 2]], quasi_identifiers=["q"], sensitive=["s"])  # type: ignore[arg-type]
    empty = pd.DataFrame({"q": [], "s": []})
    with pytest.raises(ValueError, match="table is empty"):
        privacy_measures(empty, quasi_identifiers=["q"], sensitive=["s"])
    missing = pd.DataFrame({"q": [1, 2], "s": ["a", None]})
    with pytest.raises(ValueError, match="sensitive column 's' has 1 missing values"):
        privacy_measures(missing, quasi_identifiers=["q"], sensitive=["s"])
    mixed = pd.DataFrame({"q": [1, 2], "s": ["a", 3]})
    with pytest.raises(TypeError, match="sensitive column 's'"):
        privacy_measures(mixed, quasi_identifiers=["q"], sensitive=["s"])
    dates = pd.DataFrame({"q": [1, 2], "s": pd.to_datetime(["2020-01-01", "2021-01-01"])})
    with pytest.raises(TypeError, match="neither numeric nor text"):
        privacy_measures(dates, quasi_identifiers=["q"], sensitive=["s"])


def test_one_valued_numeric_column_beside_another_keeps_the_others_t() -> None:
    # pycanon divides by zero on the one-valued column; the other column's t stands.
    table = pd.DataFrame({"q1": [0, 0, 1, 1, 1], "num": [3] * 5,
                          "txt": ["x", "yy", "x", "z", "x"]})
    assert_matches_pycanon(table, ["q1"], ["num", "txt"])
    assert privacy_measures(table, quasi_identifiers=["q1"], sensitive=["num", "txt"]
                            ).t_closeness > 0
