"""Strict Mondrian (docs/design/mondrian.md): every result passes its own checks; it is a real
alternative."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import InfeasibleError, anonymize, audit, partition
from proxanon.datasets import load_adult
from proxanon.evaluate import count_query_error

QI = ["age", "sex", "race", "marital-status"]


@st.composite
def tables(draw):
    n = draw(st.integers(4, 80))
    sens = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)),
                    dtype=float).reshape(n, 1) / 6
    d = draw(st.integers(1, 3))
    qi = np.array(draw(st.lists(st.integers(0, 9), min_size=n * d, max_size=n * d)),
                  dtype=float).reshape(n, d)
    k = draw(st.integers(1, max(1, n // 4)))
    ell = draw(st.sampled_from([None, 1, 2, 3]))
    check = draw(st.booleans())
    return sens, qi, k, ell, check


@settings(max_examples=200, deadline=None)
@given(tables())
def test_mondrian_groups_pass_their_checks(case):
    sens, qi, k, ell, check = case
    # One-row groups have risk 1 (docs/design/privacy-model.md): k = 1 refuses delta > 0.
    check = check and k > 1
    extra = {"epsilon": 0.1, "delta": 0.5} if check else {}
    result = partition(sens, k=k, quasi_identifiers=qi, method="mondrian", l=ell,
                       on_infeasible="best_effort", **extra)
    groups = result.groups
    whole = len(np.unique(sens)) >= (ell or 1)
    if check:
        whole = whole and audit(sens, np.zeros(len(sens), dtype=int), k=k, **extra).satisfied
    # It fails only when the whole table fails and cannot be cut; then it lists exactly the
    # rows that violate: all of them without l distinct values, else the audit's.
    if whole:
        assert result.satisfied
    if not result.satisfied:
        assert result.n_groups == 1
        if len(np.unique(sens)) < (ell or 1):
            np.testing.assert_array_equal(result.violating_rows, np.arange(len(sens)))
        else:
            np.testing.assert_array_equal(
                result.violating_rows, audit(sens, groups, k=k, **extra).violating_rows)
        return
    sizes = np.bincount(groups)
    assert sizes.min() >= k
    for g in range(len(sizes)):
        assert len(np.unique(sens[groups == g])) >= (ell or 1)
    if check:
        assert audit(sens, groups, k=k, **extra).satisfied
    # strict: the groups are disjoint boxes, so no box holds a point of another's interior
    boxes = [(qi[groups == g].min(0), qi[groups == g].max(0)) for g in range(len(sizes))]
    for g, (lo, hi) in enumerate(boxes):
        inside = np.all((qi > lo) & (qi < hi), axis=1)
        assert np.all(groups[inside] == g)


def test_mondrian_l_diversity_on_adult_is_vulnerable_to_proximity():
    """The paper's Fig. 4 point: l = 20 Mondrian tables still leak proximity."""
    adult = load_adult().data
    sens = np.column_stack([adult[c].cat.codes / (len(adult[c].cat.categories) - 1)
                            for c in ("education", "occupation", "workclass")])
    qi = np.column_stack([adult["age"]] + [adult[c].cat.codes for c in QI[1:]]).astype(float)
    result = partition(sens, k=10, quasi_identifiers=qi, method="mondrian", l=20)
    assert result.satisfied
    report = audit(sens, result.groups, k=10, epsilon=0.1, delta=0.8)
    assert report.vulnerability > 0.3


@pytest.mark.slow
def test_anonymize_qi_start_halves_the_count_query_error(uci_adult):
    """The target was init='qi' with at most half the error of init='degree' at the same
    privacy; since every published class is specialized down the taxonomies,
    which narrows the paper's start's few giant classes most, so 'qi' is still better but
    no longer by half. Mondrian enforcing the same (epsilon, delta)^k, specialized the same
    way, publishes many small classes and beats the paper's start."""
    hierarchies = {c: load_adult().hierarchies[c] for c in QI}
    common = {"quasi_identifiers": QI, "sensitive": ["education-num", "hours-per-week"],
              "k": 10, "epsilon": 0.05, "delta": 0.6, "hierarchies": hierarchies}
    local = anonymize(uci_adult, init="qi", **common)
    paper = anonymize(uci_adult, init="degree", **common)
    mondrian = anonymize(uci_adult, method="mondrian", on_infeasible="best_effort", **common)
    assert local.satisfied and paper.satisfied and mondrian.satisfied
    errors = {name: count_query_error(uci_adult, result, qd=2, s=0.1).mean_relative_error
              for name, result in (("qi", local), ("degree", paper), ("mondrian", mondrian))}
    assert errors["qi"] < errors["degree"]
    assert errors["mondrian"] < errors["degree"]
    assert mondrian.report.largest_class_share < 0.05


def test_anonymize_mondrian_publishes_one_tuple_per_group(uci_adult):
    result = anonymize(uci_adult.head(5000), quasi_identifiers=QI, sensitive="education-num",
                       k=5, method="mondrian", l=3)
    table = result.table
    tuples = table.groupby(QI, sort=False).ngroup().to_numpy()
    pairs = pd.DataFrame({"g": result.groups, "t": tuples}).drop_duplicates()
    assert pairs["g"].is_unique and pairs["t"].is_unique
    assert table.groupby("group")["education-num"].nunique().min() >= 3
    assert result.report.method == "mondrian"


def test_mondrian_refuses_what_it_cannot_start():
    # One sensitive value cannot give any group l = 2 distinct values, not even the whole
    # table; with l = 1 the same table starts, and the medians of 40 distinct QI values cut
    # it into 8 groups of 5.
    with pytest.raises(InfeasibleError, match="whole table"):
        partition(np.zeros(40), k=5, quasi_identifiers=np.arange(40.0), method="mondrian", l=2)
    started = partition(np.zeros(40), k=5, quasi_identifiers=np.arange(40.0), method="mondrian",
                        l=1)
    assert started.satisfied
    assert sorted(np.bincount(started.groups)) == [5] * 8
    with pytest.raises(ValueError, match="quasi_identifiers"):
        partition(np.zeros(40), k=5, method="mondrian")
    with pytest.raises(ValueError, match="both epsilon and delta"):
        partition(np.zeros(40), k=5, quasi_identifiers=np.arange(40.0), method="mondrian",
                  epsilon=0.1)
    with pytest.raises(ValueError, match="method='mondrian' only"):
        partition(np.zeros(40), k=5, epsilon=0.1, delta=0.5, l=2)


@pytest.mark.slow
def test_checks_never_build_a_graph_too_dense_to_hold():
    """25,000 distinct values at epsilon = 0.5: their graph would need far more than
    MAX_GRAPH_ENTRIES adjacency entries (refused), so Mondrian's checks, and the default
    anonymize that compares Mondrian's cut, use the sorted structure; what they publish
    is what the audit of the published table says."""
    from proxanon import GraphTooDenseError, _core

    rng = np.random.default_rng(3)
    n = 25_000
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.random(n)})
    values = frame[["income"]].to_numpy()
    with pytest.raises(GraphTooDenseError):
        _core.neighbour_graph(values, _core.Metric.l1, [1.0], 0.5)
    common = dict(quasi_identifiers="age", sensitive="income", k=10, epsilon=0.5, delta=0.3,
                  on_infeasible="best_effort")
    for method in ("mondrian", "xcolor"):
        result = anonymize(frame, method=method, **common)
        check = audit(result.table, quasi_identifiers=["age"], sensitive=["income"], k=10,
                      epsilon=0.5, delta=0.3)
        assert check.satisfied == result.satisfied
        assert check.max_risk == pytest.approx(result.report.max_risk)


@pytest.mark.slow
def test_the_default_path_asks_for_no_grid_checks():
    """Where the relation is too dense to store (21,000 3-D values, epsilon = 1: every pair),
    Mondrian's checks would search a grid at every cut; the default anonymize asks for
    grid_checks=False and gets GraphTooDenseError at once, and then compares no Mondrian
    candidate."""
    from proxanon import GraphTooDenseError
    from proxanon._engine.options import Checks
    from proxanon._engine.runs import run_mondrian
    from proxanon.distances import resolve

    rng = np.random.default_rng(5)
    values = rng.random((21_000, 3))
    quasi = rng.integers(18, 90, (21_000, 1)).astype(float)
    with pytest.raises(GraphTooDenseError):
        run_mondrian(values, Checks(k=10, eps=1.0, dlt=0.5,
                                    relation=resolve("l1", None, 3, 21_000)), quasi, None,
                     on_infeasible="best_effort", started=0.0, grid_checks=False)


# Four near-identical values: the whole table fails (3 neighbours each, t = 2 of 5), but
# the halves by QI hold two of them each (1 neighbour, t = 1 of 2) and pass.
NEAR_SENS = np.array([0.0, 0.01, 0.02, 0.03, 0.5, 0.9])
NEAR_QI = np.array([0.0, 3.0, 1.0, 4.0, 2.0, 5.0])
NEAR_CHECKS = {"epsilon": 0.1, "delta": 0.5}


def test_mondrian_lists_only_the_rows_that_violate():
    result = partition(NEAR_SENS, k=6, quasi_identifiers=NEAR_QI, method="mondrian",
                       on_infeasible="best_effort", **NEAR_CHECKS)
    assert not result.satisfied
    expected = audit(NEAR_SENS, result.groups, k=6, **NEAR_CHECKS).violating_rows
    np.testing.assert_array_equal(expected, [0, 1, 2, 3])
    np.testing.assert_array_equal(result.violating_rows, expected)
    assert result.stats["remaining_violations"] == 4


def test_mondrian_cut_of_a_failing_whole_table_is_satisfied():
    result = partition(NEAR_SENS, k=3, quasi_identifiers=NEAR_QI, method="mondrian", **NEAR_CHECKS)
    assert result.satisfied and result.n_groups == 2
    assert result.violating_rows.size == 0
    assert audit(NEAR_SENS, result.groups, k=3, **NEAR_CHECKS).satisfied
