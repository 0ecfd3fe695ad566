"""Every form of metric= (docs/design/definitions.md): built-ins, callables, precomputed graphs,
taxonomies."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import Hierarchy, advise, audit, partition
from proxanon.distances import componentwise, resolve, taxonomy_distance
from tests.conftest import brute_distance

TOL = 1e-9

# XColor paper, Table I (syndrome: allergy, asthma, myocarditis), groups 1 and 2.
XCOLOR_TABLE = np.array([
    [0.8, 0.0, 0.0], [0.6, 0.4, 0.4], [0.7, 0.1, 0.1], [1.0, 0.2, 0.2], [0.1, 0.9, 0.9],
    [0.2, 0.5, 0.2], [0.8, 0.1, 0.9], [0.4, 0.3, 0.5], [0.6, 0.9, 0.3], [1.0, 0.7, 0.7],
])
# General proximity principle paper, Table I (Disease: flu, asthma, bronchitis, none).
GENERAL_TABLE = np.array([
    [0.5, 0.3, 0.1, 0.1], [0.4, 0.3, 0.2, 0.1], [0.4, 0.2, 0.2, 0.2], [0.3, 0.4, 0.2, 0.1],
    [0.2, 0.7, 0.1, 0.0], [0.2, 0.6, 0.2, 0.0], [0.8, 0.1, 0.0, 0.1], [0.3, 0.1, 0.5, 0.1],
])


def test_xcolor_table_one_min_component():
    # Example 2 / Fig. 1: with eps = 0.1, #3 = (0.7, 0.1, 0.1) neighbours #1, #2 and #4
    # (|0.7-0.8| = 0.1, |0.1-0.4| ... min 0.1, |0.1-0.2| = 0.1); #5 is 0.6 away at least.
    groups = np.repeat([0, 1], 5)
    report = audit(XCOLOR_TABLE, groups, k=5, epsilon=0.1, delta=0.5, metric="min_component")
    assert report.neighbour_counts[2] == 3
    assert report.group_risk[0] == pytest.approx(0.75)  # 3 / (5 - 1)
    assert 0 in report.violating_groups  # 0.75 > 1 - 0.5 (t = 2 < 3)


def test_general_principle_table_one_variational():
    # #2 = (0.4, 0.3, 0.2, 0.1) is within variational distance 0.1 of #1, #3 and #4.
    groups = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    report = audit(GENERAL_TABLE, groups, k=3, epsilon=0.1, delta=0.5, metric="variational")
    assert report.neighbour_counts[1] == 3
    assert report.group_risk[0] == pytest.approx(0.75)
    for i, j in [(1, 0), (1, 2), (1, 3)]:
        assert brute_distance(GENERAL_TABLE[i], GENERAL_TABLE[j], "variational") <= 0.1 + TOL
    assert brute_distance(GENERAL_TABLE[1], GENERAL_TABLE[4], "variational") > 0.1


@st.composite
def tables(draw):
    n = draw(st.integers(4, 40))
    s = draw(st.integers(1, 3))
    cells = draw(st.lists(st.integers(0, 10), min_size=n * s, max_size=n * s))
    values = np.array(cells, dtype=float).reshape(n, s) / 10
    k = draw(st.integers(2, max(2, n // 3)))  # k = 1 with delta > 0 is refused
    eps = draw(st.sampled_from([0.0, 0.1, 0.2, 0.3]))
    delta = draw(st.sampled_from([0.3, 0.5, 0.8, 1.0]))
    return values, k, eps, delta


@settings(max_examples=150, deadline=None)
@given(tables(), st.sampled_from(["min_component", "variational"]))
def test_new_builtins_against_brute_force(case, name):
    values, k, eps, delta = case
    result = partition(values, k=k, epsilon=eps, delta=delta, metric=name,
                       on_infeasible="best_effort")
    groups = result.groups
    report = audit(values, groups, k=k, epsilon=eps, delta=delta, metric=name)
    for r in range(len(values)):
        members = np.flatnonzero(groups == groups[r])
        count = sum(brute_distance(values[r], values[q], name) <= eps + TOL * max(1, eps)
                    for q in members if q != r)
        assert report.neighbour_counts[r] == count
    assert result.satisfied == report.satisfied
    np.testing.assert_array_equal(result.violating_rows, report.violating_rows)


def l1_function(x, y):
    """The default-weighted L1 written as a distance function over blocks."""
    return np.abs(x[:, None, :] - y[None, :, :]).mean(axis=2)


@settings(max_examples=100, deadline=None)
@given(tables(), st.sampled_from(["auto", "swap"]))
def test_callable_and_graph_give_the_builtin_groups(case, moves):
    values, k, eps, delta = case
    builtin = partition(values, k=k, epsilon=eps, delta=delta, moves=moves,
                        on_infeasible="best_effort")
    by_function = partition(values, k=k, epsilon=eps, delta=delta, metric=l1_function,
                            moves=moves, on_infeasible="best_effort")
    np.testing.assert_array_equal(builtin.groups, by_function.groups)
    # the same relation as a row-level sparse graph (identical values included)
    n = len(values)
    d = l1_function(values, values)
    graph = sparse.csr_matrix(d <= eps + TOL * max(1, eps))
    by_graph = partition(values, k=k, delta=delta, metric=graph, moves=moves,
                         on_infeasible="best_effort")
    np.testing.assert_array_equal(builtin.groups, by_graph.groups)
    assert by_graph.stats["n"] == n
    for form in (l1_function, graph):
        report = audit(values, by_graph.groups, k=k, epsilon=eps, delta=delta, metric=form)
        assert report.satisfied == builtin.satisfied


def test_callable_is_called_on_blocks_of_distinct_values(adult_sensitive):
    calls = []

    def counting_l1(x, y):
        calls.append((len(x), len(y)))
        return np.abs(x[:, None, :] - y[None, :, :]).mean(axis=2)

    rows = adult_sensitive[:6000]
    result = partition(rows, k=10, epsilon=0.05, delta=0.8, metric=counting_l1)
    distinct = len(np.unique(rows, axis=0))
    assert len(calls) <= 3 and max(a for a, _ in calls) <= distinct
    assert result.stats["distance_calls"] == len(calls)
    builtin = partition(rows, k=10, epsilon=0.05, delta=0.8)
    np.testing.assert_array_equal(result.groups, builtin.groups)


def test_graph_form_needs_no_epsilon_and_ignores_it():
    values = np.repeat(np.arange(5) / 4, 8).reshape(-1, 1)
    graph = sparse.csr_matrix(values == values.T)
    a = partition(values, k=4, delta=0.7, metric=graph)
    b = partition(values, k=4, epsilon=123.0, delta=0.7, metric=graph)
    np.testing.assert_array_equal(a.groups, b.groups)
    assert a.satisfied
    with pytest.raises(ValueError, match="shape"):
        partition(values, k=4, delta=0.7, metric=sparse.csr_matrix((3, 3)))
    with pytest.raises(TypeError, match="epsilon is required"):
        partition(values, k=4, delta=0.7)


def test_taxonomy_distance_is_lca_height_over_tree_height():
    tree = Hierarchy.from_dict({"*": {"A": {"A1": ["a", "b"], "A2": ["c"]}, "B": ["d"]}})
    f = taxonomy_distance(tree)
    codes = tree.leaf_index(["a", "b", "c", "d"]).astype(float)
    d = f(codes, codes)
    # heights: a, b, c, d leaves 0; A1 1, A2 1, A 2, B 1, root 3
    assert d[0, 1] == pytest.approx(1 / 3)  # LCA A1
    assert d[0, 2] == pytest.approx(2 / 3)  # LCA A
    assert d[0, 3] == pytest.approx(1.0)    # LCA root
    assert d[2, 2] == 0.0
    # epsilon = 0 is exact-value diversity: with delta = 1 no value may repeat in a group
    labels = np.array(["a", "a", "b", "b", "c", "c", "d", "d"])
    result = partition(tree.leaf_index(labels).astype(float), k=4, epsilon=0.0, delta=1.0,
                       metric=f)
    for g in np.unique(result.groups):
        assert len(set(labels[result.groups == g])) == (result.groups == g).sum()


def test_weights_are_refused_where_they_do_not_apply():
    values = np.linspace(0, 1, 20).reshape(10, 2)
    with pytest.raises(ValueError, match="variational distance takes no weights"):
        partition(values, k=2, epsilon=0.1, delta=0.5, metric="variational", weights=[1, 1])
    with pytest.raises(ValueError, match="min_component weights must be > 0"):
        partition(values, k=2, epsilon=0.1, delta=0.5, metric="min_component", weights=[1, 0])
    with pytest.raises(ValueError, match="weights do not apply to a distance function"):
        partition(values, k=2, epsilon=0.1, delta=0.5, metric=l1_function, weights=[1, 1])
    with pytest.raises(ValueError, match="returned shape"):
        partition(values, k=2, epsilon=0.1, delta=0.5, metric=lambda x, y: np.zeros(3))


@settings(max_examples=60, deadline=None)
@given(tables(), st.sampled_from(["min_component", "variational", "function", "graph"]))
def test_advise_degree_for_every_form(case, form):
    values, k, eps, _ = case
    n = len(values)
    if form == "function":
        metric, dist = l1_function, l1_function(values, values)
    elif form == "graph":
        dist = l1_function(values, values)
        metric = sparse.csr_matrix(dist <= eps + TOL * max(1, eps))
    else:
        metric = form
        dist = np.array([[brute_distance(a, b, form) for b in values] for a in values])
    near = dist <= eps + TOL * max(1, eps)
    if form != "graph":
        near |= (values[:, None, :] == values[None, :, :]).all(axis=2)
    degrees = near.sum(axis=1) - 1
    a = advise(values, k=k, epsilon=None if form == "graph" else eps, metric=metric)
    assert a.max_degree == int(degrees.max())
    assert a.row == int(np.argmax(degrees))  # the lowest row attaining Θ
    assert a.value == tuple(values[a.row])
    assert a.n == n


@pytest.mark.slow
def test_anonymize_accepts_every_form(uci_adult):
    """A table job with a distance function and with a precomputed graph: same relation as the
    built-in, so the same published groups from the engine; the graph form refuses
    suppression clearly. (With the default start a built-in metric also has the
    Mondrian-(ε, δ) cut compared, which the other forms do not: the engine's path alone,
    init="degree", is compared here.)"""
    from proxanon import anonymize

    sample = uci_adult.head(1500).reset_index(drop=True)
    args = {"quasi_identifiers": ["age", "sex"], "sensitive": ["education-num"], "k": 10,
            "epsilon": 0.05, "delta": 0.5, "init": "degree"}
    assert anonymize(sample, **{**args, "init": "qi"}).satisfied
    builtin = anonymize(sample, **args)
    values = builtin.table["education-num"].to_numpy(dtype=float)
    scaled = ((values - values.min()) / (values.max() - values.min())).reshape(-1, 1)
    near = np.abs(scaled - scaled.T) <= 0.05 + TOL
    by_graph = anonymize(sample, metric=sparse.csr_matrix(near), **args)
    by_function = anonymize(sample, metric=l1_function, **args)
    assert builtin.satisfied
    for other in (by_graph, by_function):
        assert other.satisfied
        np.testing.assert_array_equal(other.groups, builtin.groups)
    with pytest.raises(ValueError, match="cannot be combined with a precomputed"):
        anonymize(sample, metric=sparse.csr_matrix(near), on_infeasible="suppress",
                  max_suppression=0.1, **args)


def test_variational_tables_compare_the_probabilities_as_given() -> None:
    """Columns of probabilities are not rescaled by their own range under the variational
    distance: (0.5, 0.5) and (0.45, 0.55) are 0.05 apart, not 1.0, so at epsilon 0.1 and
    delta 1 every class of two rows violates; anonymize, audit and the Dask audit agree.
    Values outside [0, 1] are refused as not probabilities."""
    import pandas as pd

    from proxanon import anonymize

    frame = pd.DataFrame({"q": range(20), "p1": [0.5] * 10 + [0.45] * 10,
                          "p2": [0.5] * 10 + [0.55] * 10})
    kw = dict(sensitive=["p1", "p2"], k=2, epsilon=0.1, delta=1.0, metric="variational")
    result = anonymize(frame, quasi_identifiers=["q"], on_infeasible="best_effort", **kw)
    assert not result.satisfied and result.report.max_risk == 1.0
    assert not audit(result.table, quasi_identifiers=["q"], **kw).satisfied
    pairs = np.arange(20) % 10  # row i with row i + 10: (0.5, 0.5) with (0.45, 0.55)
    assert not audit(frame, groups=pairs, **kw).satisfied
    assert audit(frame, groups=pairs, **{**kw, "epsilon": 0.04}).satisfied
    with pytest.raises(ValueError, match=r"'p1' has values in \[1.2, 1.3\].*variational.*"
                                         r"probabilities"):
        anonymize(frame.assign(p1=frame["p1"] * 2 + 0.3), quasi_identifiers=["q"], **kw)


# What a user's distance function or graph may hold.

LINE = np.linspace(0, 1, 12)


def gap(x, y):
    return np.abs(x[:, :1] - y[:, 0])


def complex_gap(x, y):
    return gap(x, y) + 1j


def negative_gap(x, y):
    return -gap(x, y)


def text_gap(x, y):
    return np.full((len(x), len(y)), "near")


def nan_gap(x, y):
    d = gap(x, y)
    d[0, -1] = np.nan
    return d


def object_gap(x, y):
    return np.full((len(x), len(y)), None, dtype=object)


@pytest.mark.parametrize("function, problem", [
    (complex_gap, r"returned complex numbers \(complex128\)"),
    (negative_gap, r"returned a negative distance \(-0\.0909"),
    (text_gap, r"returned values of dtype <U4, which are not distances"),
    (nan_gap, r"returned NaN \(nan\) between the values \[0\.0\] and \[1\.0\]"),
    (object_gap, r"returned NaN"),
])
def test_a_distance_function_returning_no_distances_is_refused_by_name(function, problem):
    message = rf"the distance function '{function.__name__}' {problem}"
    with pytest.raises(ValueError, match=message):
        partition(LINE, k=3, epsilon=0.1, delta=0.5, metric=function)
    with pytest.raises(ValueError, match=message):
        audit(LINE, np.repeat(np.arange(4), 3), k=3, epsilon=0.1, delta=0.5, metric=function)


def test_a_valid_distance_function_still_partitions():
    result = partition(LINE, k=3, epsilon=0.1, delta=0.5, metric=gap)
    assert audit(LINE, result.groups, k=3, epsilon=0.1, delta=0.5).satisfied


def test_a_dense_matrix_as_metric_is_named_by_type_and_shape():
    with pytest.raises(ValueError) as caught:
        partition(LINE, k=3, epsilon=0.1, delta=0.5, metric=np.zeros((12, 12)))
    message = str(caught.value)
    assert message.startswith("unknown metric ndarray of shape (12, 12)")
    assert "csr_matrix" in message and len(message) < 400


def test_a_neighbour_graph_with_nan_entries_is_refused():
    graph = sparse.csr_matrix(np.full((12, 12), np.nan))
    with pytest.raises(ValueError, match=r"neighbour graph \(metric\) has 144 NaN entries"):
        partition(LINE, k=3, delta=0.5, metric=graph)
    with pytest.raises(ValueError, match=r"neighbour graph \(metric\) has 144 NaN entries"):
        audit(LINE, np.repeat(np.arange(4), 3), k=3, epsilon=0.1, delta=0.5, metric=graph)


def test_componentwise_refuses_a_relation_without_components():
    relation = resolve(gap, None, 1, 12)
    with pytest.raises(TypeError, match=r"built-in metric .* got the gap"):
        componentwise(relation, [None])


def test_one_job_builds_a_callables_graph_once(uci_adult, monkeypatch) -> None:
    """The steps of one ``anonymize`` (sessions, specializations, absorption) share the graph
    a distance function gives: its pairs are evaluated once per job, not once per native
    call, and the table is the one the built-in metric publishes with the same start."""
    from proxanon import anonymize
    from proxanon._engine import relations

    built: list[int] = []
    real = relations.value_graph

    def counted(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(relations, "value_graph", counted)
    sample = uci_adult.head(3000).reset_index(drop=True)
    args = {"quasi_identifiers": ["age", "sex", "race"], "sensitive": ["education-num"],
            "k": 10, "epsilon": 0.05, "delta": 0.6, "on_infeasible": "best_effort"}
    by_function = anonymize(sample, metric=l1_function, **args)
    assert len(built) == 1
    second = anonymize(sample, metric=l1_function, **args)  # a new job resolves anew
    assert len(built) == 2
    np.testing.assert_array_equal(second.groups, by_function.groups)
    assert audit(by_function.table, quasi_identifiers=args["quasi_identifiers"],
                 sensitive=args["sensitive"], k=10, epsilon=0.05,
                 delta=0.6).satisfied == by_function.satisfied


def test_the_names_of_what_to_protect_resolve_to_the_metric_that_protects_it(uci_adult):
    """metric="each" is min_component (each sensitive column's value protected alone) and
    "combination" is l1 (the columns together): the same tables, the report naming the
    metric; an unknown name is refused with every name listed."""
    from proxanon import anonymize

    sample = uci_adult.head(2000).reset_index(drop=True)
    args = {"quasi_identifiers": ["age", "sex", "race"],
            "sensitive": ["education-num", "hours-per-week"], "k": 10, "epsilon": 0.02,
            "delta": 0.6, "on_infeasible": "best_effort"}
    for intent, metric in (("each", "min_component"), ("Combination", "l1")):
        named = anonymize(sample, metric=intent, **args)
        direct = anonymize(sample, metric=metric, **args)
        np.testing.assert_array_equal(named.groups, direct.groups)
        assert named.report.metric == direct.report.metric
        assert named.satisfied == direct.satisfied
    each = audit(anonymize(sample, metric="each", **args).table,
                 quasi_identifiers=args["quasi_identifiers"], sensitive=args["sensitive"],
                 k=10, epsilon=0.02, delta=0.6, metric="each")
    # Under min_component a neighbour on any one column is a neighbour: no column alone is
    # riskier than the classes are.
    assert each.columns and all(c.max_risk <= each.max_risk + 1e-12 for c in each.columns)
    with pytest.raises(ValueError, match="each, combination"):
        resolve("every", None, 2, 10)
