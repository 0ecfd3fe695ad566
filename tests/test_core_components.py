"""Unit tests of the native components, through the bindings in ``proxanon._core``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon import _core
from tests.conftest import brute_neighbours

METRIC = _core.Metric.__members__  # the native metric of each built-in name

METRICS = ("l1", "l2", "linf")


@st.composite
def value_tables(draw):
    n = draw(st.integers(1, 40))
    s = draw(st.integers(1, 3))
    grid = draw(st.sampled_from([4, 10, 20]))
    cells = draw(st.lists(st.integers(0, grid), min_size=n * s, max_size=n * s))
    values = np.array(cells, dtype=float).reshape(n, s) / grid
    weights = np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=s,
                                     max_size=s)))
    metric = draw(st.sampled_from(METRICS))
    eps = draw(st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.5]))
    return values, weights, metric, eps


@settings(max_examples=300, deadline=None)
@given(value_tables())
def test_neighbour_graph_matches_brute_force(case):
    values, weights, metric, eps = case
    graph = _core.neighbour_graph(values, METRIC[metric], weights.tolist(), eps)
    distinct, counts, row_value = graph["values"], graph["counts"], graph["row_value"]
    offsets, targets = graph["offsets"], graph["targets"]
    # The value table: distinct rows in lexicographic order, with multiplicities.
    expected = np.unique(values, axis=0)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(distinct[row_value], values)
    np.testing.assert_array_equal(counts, np.bincount(row_value, minlength=len(distinct)))
    # The CSR adjacency: exactly the pairs of different values within epsilon, sorted.
    for u in range(len(distinct)):
        got = targets[offsets[u]:offsets[u + 1]].tolist()
        want = [v for v in range(len(distinct))
                if v != u and brute_neighbours(distinct[u], distinct[v], metric, weights, eps)]
        assert got == want
    # Row-level degree: identical values plus the multiplicities of neighbouring values.
    for r in range(len(values)):
        degree = sum(brute_neighbours(values[r], values[q], metric, weights, eps)
                     for q in range(len(values)) if q != r)
        assert graph["value_degree"][row_value[r]] == degree


@settings(max_examples=150, deadline=None)
@given(value_tables())
def test_value_ids_rank_rows_among_the_distinct_rows(case):
    """``value_ids`` (the exchange step's interchangeable rows): a row's id is the place of
    its value among the distinct rows sorted column by column, as numpy's unique finds it."""
    values = case[0]
    distinct, inverse = np.unique(values, axis=0, return_inverse=True)
    ids = _core.value_ids(np.ascontiguousarray(values))
    np.testing.assert_array_equal(ids, inverse.reshape(-1))
    assert ids.max() + 1 == distinct.shape[0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 40), max_size=300), st.sampled_from([1, 7, 2**40, 2**62]))
def test_order_by_label_is_the_stable_argsort(labels, scale):
    """``order_by_label`` (group runs, summaries): numpy's stable argsort, both for labels in
    a range of fewer than 4n (counted) and for wider ones (radix order), negatives too."""
    values = np.asarray(labels, dtype=np.int64) * scale
    np.testing.assert_array_equal(_core.order_by_label(values),
                                  np.argsort(values, kind="stable"))


def test_order_by_label_takes_the_whole_int64_range():
    values = np.array([np.iinfo(np.int64).max, -1, np.iinfo(np.int64).min, 0, -1],
                      dtype=np.int64)
    np.testing.assert_array_equal(_core.order_by_label(values), [2, 1, 4, 3, 0])


def test_neighbour_graph_tolerance_matches_paper_table_one():
    # |0.7 - 0.8| = 0.10000000000000009 in float64, yet the paper counts it as within 0.1.
    values = np.array([[0.7], [0.8], [0.9000001]])
    graph = _core.neighbour_graph(values, _core.Metric.l1, [1.0], 0.1)
    assert graph["targets"][graph["offsets"][0]:graph["offsets"][1]].tolist() == [1]
    assert graph["targets"][graph["offsets"][2]:graph["offsets"][3]].tolist() == []


def test_neighbour_graph_refuses_too_dense_a_graph():
    values = np.linspace(0, 1, 300).reshape(-1, 1)
    with pytest.raises(proxanon.GraphTooDenseError, match="adjacency entries"):
        _core.neighbour_graph(values, _core.Metric.l1, [1.0], 1.0, max_entries=1000)


def reference_initialize(degree: np.ndarray, m: int) -> np.ndarray:
    """Algorithm 1 written directly: scan classes for the smallest degree sum."""
    n = len(degree)
    order = sorted(range(n), key=lambda r: (-degree[r], r))
    base = n // m
    sums = [0] * m
    sizes = [0] * m
    out = np.full(n, -1)
    for i, r in enumerate(order):
        cap = base if i < base * m else base + 1
        c = min((c for c in range(m) if sizes[c] < cap), key=lambda c: (sums[c], c))
        out[r] = c
        sums[c] += degree[r]
        sizes[c] += 1
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=60), st.data())
def test_initialize_follows_algorithm_one(degrees, data):
    degree = np.array(degrees, dtype=np.int64)
    m = data.draw(st.integers(1, len(degree)))
    classes = _core.initialize(degree, m)
    np.testing.assert_array_equal(classes, reference_initialize(degree, m))
    sizes = np.bincount(classes, minlength=m)
    assert sizes.min() == len(degree) // m and sizes.max() == math.ceil(len(degree) / m)


def test_equitable_sizes():
    assert _core.equitable_sizes(29, 2) == [15, 14]
    assert _core.equitable_sizes(30, 3) == [10, 10, 10]
    with pytest.raises(ValueError):
        _core.equitable_sizes(3, 4)


def test_allowed_neighbours_guards_float_error():
    # (1 - 0.8) * 10 = 1.9999999999999996 must give t = 2 (docs/design/privacy-model.md).
    assert _core.allowed_neighbours(11, 0.8) == 2
    assert _core.allowed_neighbours(10, 1.0) == 0
    assert _core.allowed_neighbours(10, 0.0) == 9
    assert _core.allowed_neighbours(1, 0.5) == 0


class ReferenceQueue:
    """The queue's contract in plain Python: highest bucket first, FIFO within a bucket."""

    def __init__(self):
        self.entries: dict[int, tuple[int, int]] = {}  # row -> (bucket, arrival)
        self.clock = 0

    def push(self, row, bucket):
        self.entries[row] = (bucket, self.clock)
        self.clock += 1

    def update(self, row, bucket):
        if self.entries[row][0] != bucket:
            self.push(row, bucket)

    def pop(self):
        row = min(self.entries, key=lambda r: (-self.entries[r][0], self.entries[r][1]))
        del self.entries[row]
        return row


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["push", "remove", "update", "pop"]),
                          st.integers(0, 15), st.integers(0, 4)), max_size=120))
def test_violation_queue_matches_reference(operations):
    queue = _core.ViolationQueue(16, 5)
    reference = ReferenceQueue()
    for op, row, bucket in operations:
        if op == "push" and row not in reference.entries:
            queue.push(row, bucket)
            reference.push(row, bucket)
        elif op == "remove" and row in reference.entries:
            queue.remove(row)
            del reference.entries[row]
        elif op == "update" and row in reference.entries:
            queue.update(row, bucket)
            reference.update(row, bucket)
        elif op == "pop" and reference.entries:
            assert queue.pop() == reference.pop()
        assert len(queue) == len(reference.entries)
        for r in range(16):
            assert (r in queue) == (r in reference.entries)
    while reference.entries:
        assert queue.pop() == reference.pop()
    assert len(queue) == 0


def test_violation_queue_rejects_misuse():
    queue = _core.ViolationQueue(4, 2)
    with pytest.raises(IndexError):
        queue.pop()
    with pytest.raises(IndexError):
        queue.push(4, 0)
    with pytest.raises(IndexError):
        queue.push(0, 2)
    queue.push(0, 1)
    with pytest.raises(ValueError):
        queue.push(0, 1)
    with pytest.raises(ValueError):
        queue.remove(1)


def test_violation_queue_is_amortized_constant():
    # A million operations finish quickly only if each is O(1): a smoke check of the cost,
    # sized so a quadratic queue would take minutes (no timing assertion).
    queue = _core.ViolationQueue(200_000, 1024)
    for r in range(200_000):
        queue.push(r, (r * 7919) % 1024)
    popped = [queue.pop() for _ in range(200_000)]
    assert sorted(popped) == list(range(200_000))
    buckets = [(r * 7919) % 1024 for r in popped]
    assert buckets == sorted(buckets, reverse=True)


def test_class_counts_take_runs_of_every_row_once() -> None:
    """``class_counts`` (the audit's native count) counts classes given as runs of an order of
    the rows, in that order, and refuses an order or starts that do not describe one."""
    sens = np.array([[0.0], [0.5], [0.0], [0.04], [0.5]])
    order = np.array([0, 2, 3, 1, 4], dtype=np.int64)  # classes {0, 2, 3} and {1, 4}
    starts = np.array([0, 3], dtype=np.int64)
    counts = _core.class_counts(sens, _core.Metric.l1, [1.0], 0.05, order, starts)
    assert counts.tolist() == [2, 2, 2, 1, 1]
    bad = [(np.array([0, 2, 2, 1, 4]), starts, "every row once"),
           (np.array([0, 2, 3, 1]), starts, "every row once"),
           (np.array([0, 2, 3, 1, 5]), starts, "every row once"),
           (order, np.array([1, 3]), "rise from 0"),
           (order, np.array([0, 3, 3]), "rise from 0"),
           (order, np.array([0, 5]), "rise from 0"),
           (order, np.array([], dtype=np.int64), "rise from 0")]
    for given_order, given_starts, message in bad:
        with pytest.raises(ValueError, match=message):
            _core.class_counts(sens, _core.Metric.l1, [1.0], 0.05, given_order.astype(np.int64),
                               given_starts.astype(np.int64))
