"""The native paths that only large tables take, against plain references: value ids past
65,536 distinct values (a radix ranking instead of a hash), Algorithm 1's initial colouring
with many classes (a 4-ary heap), the sorted structure's degrees across blocks of values (two
pointers), the largest window and a single centre's ball (no table of distinct values)."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from proxanon import _core

METRIC = _core.Metric.__members__  # the native metric of each built-in name
STRUCTURE = _core.Structure.__members__  # the native structure of each name


def lattice(n: int, levels: int, seed: int) -> np.ndarray:
    """``n`` values on a lattice of step 1/levels (distances never fall at epsilon's edge),
    with -0.0 beside 0.0."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, levels + 1, n) / levels
    values[rng.random(n) < 0.01] = -0.0
    return values


@pytest.mark.parametrize("values", [
    np.random.default_rng(1).random(200_000),
    lattice(200_000, 150_000, 2),
    np.concatenate([np.random.default_rng(3).random(100_000)] * 2),
], ids=["continuous", "lattice", "each-twice"])
def test_value_ids_of_many_distinct_values_are_their_ranks(values):
    distinct, inverse = np.unique(values, return_inverse=True)
    assert distinct.size > 65_536  # the radix ranking, not the hash
    np.testing.assert_array_equal(_core.value_ids(values[:, None]), inverse.reshape(-1))
    table = _core.value_relation(values[:, None], _core.Metric.l1, [1.0], 0.0,
                                 neighbours=_core.Structure.sorted)
    np.testing.assert_array_equal(table["values"][:, 0], distinct)
    assert not np.signbit(table["values"][table["values"] == 0.0]).any()  # -0.0 as 0.0
    np.testing.assert_array_equal(table["counts"], np.bincount(inverse.reshape(-1)))


def heap_initialize(degree: np.ndarray, m: int) -> np.ndarray:
    """Algorithm 1 over a binary heap of (degree sum, class) (the reference in
    tests/test_core_components.py scans every class, too slow for many)."""
    n = degree.size
    order = np.lexsort((np.arange(n), -degree))
    base = n // m
    heap = [(0, c) for c in range(m)]
    sums, sizes = [0] * m, [0] * m
    out = np.full(n, -1, dtype=np.int64)
    for i, r in enumerate(order.tolist()):
        if i == base * m:
            heap = [(sums[c], c) for c in range(m)]
            heapq.heapify(heap)
        total, c = heapq.heappop(heap)
        out[r] = c
        sums[c] = total + int(degree[r])
        sizes[c] += 1
        if i < base * m and sizes[c] < base:
            heapq.heappush(heap, (sums[c], c))
    return out


@pytest.mark.parametrize("m_of", [lambda n: n // 10, lambda n: n // 11, lambda n: n,
                                  lambda n: 1, lambda n: n // 2 + 1])
@pytest.mark.parametrize("kind", ["zipf", "spread", "few"])
def test_initialize_with_many_classes_follows_algorithm_one(kind, m_of):
    rng = np.random.default_rng(7)
    n = 30_011
    if kind == "zipf":  # few distinct degrees, one of them held by a quarter of the rows
        values = np.minimum(rng.zipf(1.3, n), 1000)
        degree = np.bincount(values)[values] - 1
    elif kind == "spread":
        degree = rng.integers(0, 5000, n)
    else:
        degree = rng.integers(0, 3, n)
    degree = degree.astype(np.int64)
    m = m_of(n)
    np.testing.assert_array_equal(_core.initialize(degree, m), heap_initialize(degree, m))


@pytest.mark.parametrize("metric", ["l1", "l2", "linf"])
@pytest.mark.parametrize("eps", [0.0, 0.0004, 0.003])
def test_sorted_degrees_across_blocks_match_the_graph(metric, eps):
    values = lattice(60_000, 20_000, 4)[:, None]
    got = {structure: _core.value_relation(values, METRIC[metric], [1.0], eps,
                                           neighbours=STRUCTURE[structure])
           for structure in ("sorted", "graph")}
    assert got["sorted"]["neighbours"] == "sorted" and got["graph"]["neighbours"] == "graph"
    assert got["sorted"]["values"].shape[0] > 3 * 4096  # several blocks
    np.testing.assert_array_equal(got["sorted"]["value_degree"], got["graph"]["value_degree"])


def test_largest_window_and_one_ball_match_counts_over_sorted_values():
    values = lattice(120_000, 50_000, 5)
    step = 1 / 50_000
    eps = 2.5 * step  # neighbours: up to two lattice steps apart
    ordered = np.sort(values)
    upper = np.searchsorted(ordered, ordered + eps, side="right")  # past the last neighbour
    lower = np.searchsorted(ordered, ordered - eps, side="left")
    window = _core.largest_window(values[:, None], _core.Metric.l1, [1.0], eps)
    assert window["size"] == int((upper - np.arange(values.size)).max())
    assert window["degree"] == int((upper - lower - 1).max())
    centre = int(np.argmin(np.abs(values - 0.5)))
    radius = 1.5 * step
    ball = _core.balls(values[:, None], _core.Metric.l1, [1.0], radius, [centre], members=True)
    inside = np.flatnonzero(np.abs(values - values[centre]) <= radius)
    assert ball["sizes"].tolist() == [inside.size]
    np.testing.assert_array_equal(ball["rows"], inside)


@pytest.mark.parametrize("levels", [7, 40, 2000])
def test_largest_window_names_the_lowest_row_of_ties(levels):
    """The window's anchor and the degree's row (ties: the lowest row) against the rows'
    definition, on values that repeat (the windows are then found over distinct values)."""
    values = lattice(3000, levels, levels)
    eps = 1.5 / levels
    at_or_after = ((values[None, :] > values[:, None])
                   | ((values[None, :] == values[:, None])
                      & (np.arange(3000)[None, :] >= np.arange(3000)[:, None])))
    near = np.abs(values[None, :] - values[:, None]) <= eps
    size = (near & at_or_after).sum(axis=1)
    degree = near.sum(axis=1) - 1
    window = _core.largest_window(values[:, None], _core.Metric.l1, [1.0], eps)
    assert (window["size"], window["anchor"]) == (size.max(), int(np.argmax(size)))
    assert (window["degree"], window["degree_row"]) == (degree.max(), int(np.argmax(degree)))
