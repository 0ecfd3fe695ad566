"""Neighbour structures (graph, sorted, grid) against brute force, and the engine on each."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxanon import InfeasibleError, _core, audit, partition
from tests.conftest import brute_neighbours
from tests.test_partition import instances

METRIC = _core.Metric.__members__  # the native metric of each built-in name
STRUCTURE = _core.Structure.__members__  # the native structure of each name

METRICS = ("l1", "l2", "linf", "min_component")


def structures(components: int) -> list[str]:
    """The structures that can hold a relation over this many components."""
    return ["graph", "sorted", "grid"] if components == 1 else ["graph", "grid"]


@st.composite
def relations(draw):
    """Small tables on a lattice (so that distances fall exactly at epsilon), with repeated
    values, sometimes a constant column, and weights that may be zero (positive for
    min_component, as the API requires)."""
    n = draw(st.integers(1, 40))
    s = draw(st.integers(1, 3))
    levels = draw(st.sampled_from([2, 5, 10, 20]))
    cells = draw(st.lists(st.integers(0, levels), min_size=n * s, max_size=n * s))
    sensitive = np.array(cells, dtype=float).reshape(n, s) / levels
    if draw(st.booleans()):
        sensitive[:, draw(st.integers(0, s - 1))] = draw(st.integers(0, levels)) / levels
    metric = draw(st.sampled_from(METRICS))
    allowed = [0.5, 1.0, 2.0] if metric == "min_component" else [0.0, 0.5, 1.0, 2.0]
    weights = np.array(draw(st.lists(st.sampled_from(allowed), min_size=s, max_size=s)))
    eps = draw(st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.5]))
    members = draw(st.lists(st.integers(0, n - 1), max_size=12))
    return sensitive, metric, weights, eps, members


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(relations())
@pytest.mark.slow
def test_every_structure_answers_as_brute_force(case):
    sensitive, metric, weights, eps, members = case
    n, s = sensitive.shape
    near = np.array([[a == b or np.array_equal(sensitive[a], sensitive[b])
                      or brute_neighbours(sensitive[a], sensitive[b], metric, weights, eps)
                      for b in range(n)] for a in range(n)])
    pairs = [(a, b) for a in range(n) for b in range(n)]
    for structure in structures(s):
        got = _core.neighbour_queries(sensitive, METRIC[metric], weights.tolist(), eps,
                                      STRUCTURE[structure],
                                      [r for pair in pairs for r in pair], members,
                                      list(range(n)))
        assert got["neighbours"] == structure
        np.testing.assert_array_equal(got["degree"], near.sum(axis=1) - 1, err_msg=structure)
        np.testing.assert_array_equal(got["adjacent"].astype(bool), near.reshape(-1),
                                      err_msg=structure)
        expected = [int(near[r, members].sum()) for r in range(n)]
        np.testing.assert_array_equal(got["counts"], expected, err_msg=structure)


def test_values_exactly_epsilon_apart_are_neighbours_in_every_structure():
    # 0.7 - 0.6 = 0.09999999999999998 and 0.8 - 0.7 = 0.10000000000000009: both at epsilon.
    values = np.array([[0.6], [0.7], [0.8], [0.95]])
    for structure in structures(1):
        got = _core.neighbour_queries(values, _core.Metric.l1, [1.0], 0.1, STRUCTURE[structure],
                                      [], [], [])
        np.testing.assert_array_equal(got["degree"], [1, 2, 1, 0], err_msg=structure)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_engine_gives_the_same_partition_on_every_structure(case):
    # test_partition's property test, run on each structure: every result agrees with the
    # independent audit, and the structure never changes the result (it holds one relation).
    sensitive, k, eps, delta, metric, qi, limit, init, moves = case
    assert_same_on_every_structure(sensitive, k=k, epsilon=eps, delta=delta, metric=metric,
                                   quasi_identifiers=qi, search_limit=limit, init=init,
                                   moves=moves)


def assert_same_on_every_structure(sensitive, *, k, epsilon, delta, metric, **options):
    """partition on each structure that can hold the relation: every result agrees with the
    audit, and all give the graph's groups."""
    runs = {}
    for structure in structures(sensitive.shape[1]):
        result = partition(sensitive, k=k, epsilon=epsilon, delta=delta, metric=metric,
                           on_infeasible="best_effort", neighbours=structure, **options)
        assert result.stats["neighbours"] == structure
        report = audit(sensitive, result.groups, k=k, epsilon=epsilon, delta=delta,
                       metric=metric)
        assert result.satisfied == report.satisfied
        np.testing.assert_array_equal(result.violating_rows, report.violating_rows)
        runs[structure] = result.groups
    for groups in runs.values():
        np.testing.assert_array_equal(groups, runs["graph"])


@pytest.mark.parametrize(("metric", "eps", "delta"), [("min_component", 0.15, 0.9),
                                                       ("l1", 0.4, 0.8)])
def test_suppression_runs_on_the_implicit_structures(metric, eps, delta):
    values = np.random.default_rng(3).random((300, 2))
    runs = []
    for structure in structures(2):
        result = partition(values, k=5, epsilon=eps, delta=delta, metric=metric,
                           on_infeasible="suppress", max_suppression=1.0, neighbours=structure)
        kept = result.groups >= 0
        assert result.stats["suppressed"] > 0
        report = audit(values[kept], result.groups[kept], k=5, epsilon=eps, delta=delta,
                       metric=metric)
        assert report.satisfied
        runs.append(result.groups)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_continuous_one_dimensional_values_at_scale_are_satisfied_not_refused():
    # 100k distinct values at epsilon=0.05 used to be refused as too dense (after 2.6 GiB);
    # groups of values 0.1 apart have no neighbours at all.
    values = np.random.default_rng(0).random(100_000)
    result = partition(values, k=10, epsilon=0.05, delta=0.8, metric="l1")
    assert result.stats["neighbours"] == "sorted"
    assert result.satisfied
    assert audit(values, result.groups, k=10, epsilon=0.05, delta=0.8).satisfied


def test_auto_holds_few_values_or_few_neighbours_as_a_graph_and_else_implicitly():
    rng = np.random.default_rng(1)
    few = np.round(rng.random(20_000) * 100) / 100
    many = rng.random((20_000, 2))
    assert partition(few, k=10, epsilon=0.05, delta=0.5,
                     on_infeasible="best_effort").stats["neighbours"] == "graph"
    # 20,000 distinct values: about 25 neighbours each at epsilon = 0.02 (a graph of at
    # most 64 row-weighted entries per row is stored), about 630 at epsilon = 0.1 (a grid).
    sparse = partition(many, k=10, epsilon=0.02, delta=0.5, metric="l2",
                       on_infeasible="best_effort").stats
    assert sparse["neighbours"] == "graph"
    assert 0 < sparse["value_edges"] <= 32 * many.shape[0]
    assert partition(many, k=10, epsilon=0.1, delta=0.5, metric="l2",
                     on_infeasible="best_effort").stats["neighbours"] == "grid"


@pytest.mark.parametrize(("kwargs", "pattern"), [
    (dict(neighbours="kdtree"), r"neighbours must be one of 'auto', 'graph', 'sorted', 'grid'"),
    (dict(neighbours="sorted", sensitive=np.zeros((4, 2))),
     r"neighbours='sorted' needs a sensitive attribute of one component, got 2"),
    (dict(neighbours="grid", metric=lambda a, b: abs(a - b).sum()),
     r"neighbours='grid' needs a built-in metric"),
])
def test_a_structure_that_cannot_hold_the_relation_is_a_named_error(kwargs, pattern):
    args = dict(sensitive=np.zeros(4), k=2, epsilon=0.1, delta=0.5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=pattern):
        partition(**args)


@pytest.mark.parametrize(("components", "metric"), [(1, "l1"), (3, "l2"), (2, "min_component")])
def test_degrees_are_the_same_for_any_number_of_threads(components, metric):
    # More values than one parallel block (1024), so that every thread gets work.
    values = np.round(np.random.default_rng(2).random((5000, components)) * 400) / 400
    weights = [1.0] * components
    structure = "sorted" if components == 1 else "grid"
    runs = [_core.neighbour_queries(values, METRIC[metric], weights, 0.03, STRUCTURE[structure],
                                    [], [], [],
                                    threads=threads)["degree"] for threads in (1, 2, 3, 7)]
    for degree in runs[1:]:
        np.testing.assert_array_equal(degree, runs[0])
    brute = [sum(brute_neighbours(values[r], values[o], metric, np.ones(components), 0.03)
                 for o in range(len(values)) if o != r) for r in range(0, 5000, 499)]
    np.testing.assert_array_equal(runs[0][::499], brute)


def test_raise_gives_the_clique_proof_before_any_repair_on_a_large_table():
    # 100k continuous values at epsilon=0.5, delta=0.9: half the rows lie within 0.25 of the
    # middle. The repair could never succeed (and used to be refused as too dense); the
    # proof now comes first, with no partition.
    n, k, eps, delta = 100_000, 10, 0.5, 0.9
    values = np.random.default_rng(0).random(n)
    with pytest.raises(InfeasibleError, match="proven before any repair") as caught:
        partition(values, k=k, epsilon=eps, delta=delta)
    assert caught.value.partition is None
    assert "no partition into groups of at least k rows satisfies it" in str(caught.value)
    # Independently: in one dimension, rows whose values span at most epsilon are pairwise
    # neighbours, and any partition into groups of at least k holds at most
    # floor((1 - delta)(n - n // k)) + n // k of them.
    ordered = np.sort(values)
    window = np.searchsorted(ordered, ordered + eps, side="right") - np.arange(n)
    assert window.max() > np.floor((1 - delta) * (n - n // k) + 1e-9) + n // k


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_large_classes_are_counted_alike_on_every_structure(data):
    # Classes of more than 64 rows are counted through an index over their own values on the
    # implicit structures (not by testing every pair): the partition must not change.
    s = data.draw(st.integers(1, 3), label="components")
    k = data.draw(st.integers(65, 120), label="k")
    n = data.draw(st.integers(k, 3 * k), label="n")
    levels = data.draw(st.sampled_from([5, 20, 200]), label="levels")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    sensitive = rng.integers(0, levels + 1, size=(n, s)) / levels
    metric = data.draw(st.sampled_from(METRICS), label="metric")
    eps = data.draw(st.sampled_from([0.0, 0.05, 0.1, 0.3]), label="epsilon")
    delta = data.draw(st.sampled_from([0.5, 0.8, 0.95]), label="delta")
    assert_same_on_every_structure(sensitive, k=k, epsilon=eps, delta=delta, metric=metric)
