"""Follow-ups to issues 9 and 16: what a user's distance function or graph may hold."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from proxanon import audit, partition
from proxanon.distances import componentwise, resolve

SENS = np.linspace(0, 1, 12)


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
        partition(SENS, k=3, epsilon=0.1, delta=0.5, metric=function)
    with pytest.raises(ValueError, match=message):
        audit(SENS, np.repeat(np.arange(4), 3), k=3, epsilon=0.1, delta=0.5, metric=function)


def test_a_valid_distance_function_still_partitions():
    result = partition(SENS, k=3, epsilon=0.1, delta=0.5, metric=gap)
    assert audit(SENS, result.groups, k=3, epsilon=0.1, delta=0.5).satisfied


def test_a_dense_matrix_as_metric_is_named_by_type_and_shape():
    with pytest.raises(ValueError) as caught:
        partition(SENS, k=3, epsilon=0.1, delta=0.5, metric=np.zeros((12, 12)))
    message = str(caught.value)
    assert message.startswith("unknown metric ndarray of shape (12, 12)")
    assert "csr_matrix" in message and len(message) < 400


def test_a_neighbour_graph_with_nan_entries_is_refused():
    graph = sp.csr_matrix(np.full((12, 12), np.nan))
    with pytest.raises(ValueError, match=r"neighbour graph \(metric\) has 144 NaN entries"):
        partition(SENS, k=3, delta=0.5, metric=graph)
    with pytest.raises(ValueError, match=r"neighbour graph \(metric\) has 144 NaN entries"):
        audit(SENS, np.repeat(np.arange(4), 3), k=3, epsilon=0.1, delta=0.5, metric=graph)


def test_componentwise_refuses_a_relation_without_components():
    relation = resolve(gap, None, 1, 12)
    with pytest.raises(TypeError, match=r"built-in metric .* got the gap"):
        componentwise(relation, [None])
