"""``anonymize``'s early verdict (advise's clique bound before any repair) and its
``neighbours=`` pass-through, checked by exhaustive search and brute force."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from proxanon import InfeasibleError, _core, anonymize, partition
from proxanon._engine import proofs as proofs_module
from proxanon._engine.proofs import infeasibility_proof
from proxanon.distances import resolve
from tests.conftest import brute_neighbours
from tests.test_small_instances import largest_coverable, small_instances

METRIC = _core.Metric.__members__  # the native metric of each built-in name


def spec_t(size: int, delta: float) -> int:
    return math.floor((1.0 - delta) * (size - 1) + 1e-9)


def satisfies(values: np.ndarray, classes: np.ndarray, k: int, eps: float, delta: float,
              metric: str) -> bool:
    """(eps, delta)^k-dissimilarity of the classes, pair by pair (docs/design/privacy-model.md)."""
    w = np.full(values.shape[1], 1.0 / values.shape[1])
    for c in np.unique(classes):
        rows = np.flatnonzero(classes == c)
        if rows.size < k:
            return False
        allowed = spec_t(rows.size, delta)
        for a in rows:
            near = sum(brute_neighbours(values[a], values[b], metric, w, eps)
                       for b in rows if b != a)
            if near > allowed:
                return False
    return True


@pytest.mark.parametrize("seed", [11, 12])
def test_every_proof_is_confirmed_by_exhaustive_search(seed):
    proofs = degrees = 0
    for values, k, eps, delta, metric in small_instances(300, seed):
        n = len(values)
        described: list[np.ndarray] = []

        def describe(rows: np.ndarray, seen: list[np.ndarray] = described) -> str:
            seen.append(rows)
            return f"rows {rows.tolist()}"

        relation = resolve(metric, None, values.shape[1], n)
        proof = infeasibility_proof(values, relation, k, eps, delta, any_partition=True,
                                    describe=describe)
        if proof is None:
            continue
        proofs += 1
        # No partition of all the rows into satisfying groups of >= k rows exists ...
        assert largest_coverable(values, k, eps, delta, metric) < n
        # ... and the certificate holds (the rows named last are the proof's).
        rows = described[-1]
        assert f"rows {rows.tolist()}" in proof
        w = np.full(values.shape[1], 1.0 / values.shape[1])
        if "epsilon-neighbours among" in proof:
            # The degree bound: the one row named has too few non-neighbours for any group
            # of >= k rows (s - 1 - t(s) of them, smallest at s = k).
            (row,) = rows
            degree = sum(brute_neighbours(values[row], values[b], metric, w, eps)
                         for b in range(n) if b != row)
            assert n - 1 - degree < k - 1 - spec_t(k, delta)
            degrees += 1
            continue
        # The clique bound: the named rows are pairwise neighbours, more than any partition
        # into groups of >= k rows can hold (t + 1 per group).
        assert all(brute_neighbours(values[a], values[b], metric, w, eps)
                   for a in rows for b in rows)
        most = max(sum(spec_t(size, delta) + 1 for size in sizes)
                   for sizes in partitions_of(n, k))
        assert rows.size > most
    assert proofs >= 20  # the instances exercise the proof, not only its absence
    assert degrees >= 1  # and the degree bound among them


def partitions_of(n: int, k: int) -> list[list[int]]:
    """Every multiset of group sizes >= k summing to n."""
    if n == 0:
        return [[]]
    return [[size, *rest] for size in range(k, n + 1)
            for rest in partitions_of(n - size, size) if all(r >= size for r in rest)]


def small_frames(count: int, seed: int):
    rng = np.random.default_rng(seed)
    for values, k, eps, delta, metric in small_instances(count, seed):
        frame = pd.DataFrame(values * 1000, columns=[f"s{j}" for j in range(values.shape[1])])
        frame["age"] = rng.integers(20, 30, len(frame))
        yield frame, k, eps, delta, metric


def test_anonymize_raises_the_proof_at_once_and_it_is_right(monkeypatch):
    # The early verdict runs above EARLY_VERDICT_ROWS rows; lowered, small tables take it and
    # every proof can be checked against an exhaustive search.
    monkeypatch.setattr(proofs_module, "EARLY_VERDICT_ROWS", 0)
    proofs = 0
    for frame, k, eps, delta, metric in small_frames(150, 21):
        sens = [c for c in frame.columns if c.startswith("s")]
        args = dict(quasi_identifiers=["age"], sensitive=sens, k=k, epsilon=eps, delta=delta,
                    metric=metric)
        values = np.column_stack([
            (frame[c] - frame[c].min()) / max(frame[c].max() - frame[c].min(), 1e-300)
            for c in sens])
        try:
            result = anonymize(frame, on_infeasible="raise", **args)
        except InfeasibleError as exc:
            if "proven before any repair" not in str(exc):
                continue
            proofs += 1
            assert exc.partition is None
            assert largest_coverable(values, k, eps, delta, metric) < len(frame)
            # best_effort still runs, and publishes a table that does not satisfy.
            assert not anonymize(frame, on_infeasible="best_effort", **args).satisfied
        else:
            assert satisfies(values, result.groups, k, eps, delta, metric)
    assert proofs >= 10


def test_a_large_skewed_table_gets_the_proof_in_its_own_units():
    n, k, eps, delta = 50_000, 10, 0.05, 0.8
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"income": np.round(rng.lognormal(10, 1, n)),
                          "age": rng.integers(18, 90, n), "zip": rng.integers(0, 500, n)})
    with pytest.raises(InfeasibleError, match="proven before any repair") as caught:
        anonymize(frame, quasi_identifiers=["age", "zip"], sensitive="income", k=k,
                  epsilon=eps, delta=delta)
    assert caught.value.partition is None
    text = str(caught.value)
    assert "no partition into groups of at least k rows satisfies it" in text
    # "the rows with income LO to HI (...) are C pairwise neighbours": check it from the
    # table alone. Rows spanning at most epsilon (scaled) are pairwise neighbours in 1-D,
    # and any partition into groups of >= k holds at most floor((1-δ)(n - n//k)) + n//k.
    head = text.split("the rows with income ")[1]
    lo, hi = (float(x.replace(",", "")) for x in head.split(" (")[0].split(" to "))
    count = int(head.split(" are ")[1].split(" pairwise")[0].replace(",", ""))
    income = frame["income"].to_numpy()
    assert count == int(((income >= lo) & (income <= hi)).sum())
    span = income.max() - income.min()
    assert (hi - lo) / span <= eps
    assert count > math.floor((1 - delta) * (n - n // k) + 1e-9) + n // k
    assert "in income with the other columns equal" in text  # epsilon in dollars


@pytest.mark.parametrize(("components", "metric", "structures"), [
    (1, "l1", ("graph", "sorted", "grid")),
    (2, "l2", ("graph", "grid")),
    (2, "linf", ("graph", "grid")),
])
def test_anonymize_gives_the_same_result_with_every_structure(components, metric, structures):
    rng = np.random.default_rng(components)
    for trial in range(6):
        n = int(rng.integers(12, 40))
        frame = pd.DataFrame(np.round(rng.random((n, components)) * 20) / 20,
                             columns=[f"s{j}" for j in range(components)])
        frame["age"] = rng.integers(20, 60, n)
        sens = [f"s{j}" for j in range(components)]
        args = dict(quasi_identifiers=["age"], sensitive=sens, k=3, epsilon=0.1,
                    delta=float(rng.choice([0.3, 0.5, 0.7])), metric=metric,
                    on_infeasible="best_effort")
        results = {name: anonymize(frame, neighbours=name, **args)
                   for name in ("auto", *structures)}
        first = results["auto"]
        for name, result in results.items():
            np.testing.assert_array_equal(result.groups, first.groups, err_msg=name)
            pd.testing.assert_frame_equal(result.table, first.table)
        values = frame[sens].to_numpy()
        values = (values - values.min(axis=0)) / np.maximum(np.ptp(values, axis=0), 1e-300)
        assert first.satisfied == satisfies(values, first.groups, 3, 0.1, args["delta"],
                                            metric), trial


@pytest.mark.parametrize(("kwargs", "error", "pattern"), [
    (dict(neighbours="kdtree"), ValueError,
     r"neighbours must be one of 'auto', 'graph', 'sorted', 'grid'"),
    (dict(neighbours="sorted", sensitive=["s0", "s1"]), ValueError,
     r"neighbours='sorted' needs a sensitive attribute of one component, got 2"),
    (dict(neighbours="grid", metric=lambda a, b: abs(a - b).sum()), ValueError,
     r"neighbours='grid' needs a built-in metric"),
    (dict(neighbours="grid", method="mondrian"), ValueError,
     r"neighbours applies to method='xcolor' only"),
])
def test_a_structure_that_cannot_hold_the_relation_is_a_named_error(kwargs, error, pattern):
    frame = pd.DataFrame({"s0": np.arange(8.0), "s1": np.arange(8.0)[::-1],
                          "age": np.arange(8)})
    args = dict(quasi_identifiers=["age"], sensitive=["s0"], k=2, epsilon=0.1, delta=0.5)
    args.update(kwargs)
    with pytest.raises(error, match=pattern):
        anonymize(frame, **args)


@pytest.mark.parametrize("metric", ["l1", "l2", "linf"])
@pytest.mark.parametrize("w", [(1 / 3, 1 / 3, 1 / 3), (0.0, 0.75, 0.25), (0.0, 0.0, 0.0)])
@pytest.mark.parametrize(("rows", "levels"), [(60, 8), (300, 2)])
def test_balls_are_the_rows_within_the_radius(metric, w, rows, levels):
    # Several centres: the values are scanned in the slab of the narrowest component (one
    # centre: every value), so distances of exactly the radius sit on the slab's edge. With
    # 2 levels, 300 rows share at most 27 values: each value weighs its rows.
    rng = np.random.default_rng(3)
    values = np.round(rng.random((rows, 3)) * levels) / levels
    w = np.asarray(w)
    centres = [0, 17, rows - 1, 5]
    for radius in (0.0, 0.1, 0.125, 0.25, 0.5):
        got = _core.balls(values, METRIC[metric], w.tolist(), radius, centres, members=True)
        for i, centre in enumerate(centres):
            inside = [r for r in range(rows)
                      if brute_neighbours(values[centre], values[r], metric, w, radius)]
            assert got["sizes"][i] == len(inside)
            if i == 0:
                np.testing.assert_array_equal(got["rows"], inside)
        alone = _core.balls(values, METRIC[metric], w.tolist(), radius, [centres[1]], members=True)
        assert alone["sizes"][0] == got["sizes"][1]


@pytest.mark.parametrize("levels", [8, 2])
def test_orthants_are_the_neighbours_on_one_side_of_the_anchor(levels):
    # Linf on three components: per anchor, the largest of the 8 orthants of its neighbours
    # (rows at or above / at or below it in every component), rows of one value weighed.
    rng = np.random.default_rng(4)
    values = np.round(rng.random((200, 3)) * levels) / levels
    weights = [1.0, 1.0, 1.0]
    centres = [0, 33, 199]
    for eps in (0.0, 0.125, 0.5):
        got = _core.balls(values, _core.Metric.linf, weights, eps, centres, members=True,
                          shape="orthants")
        for i, centre in enumerate(centres):
            near = [r for r in range(200)
                    if brute_neighbours(values[centre], values[r], "linf", np.ones(3), eps)]
            orthants = []
            for o in range(8):
                orthants.append([r for r in near if all(
                    values[r][j] >= values[centre][j] if o >> j & 1
                    else values[r][j] <= values[centre][j] for j in range(3))])
            assert got["sizes"][i] == max(len(rows) for rows in orthants)
            if i == 0:
                np.testing.assert_array_equal(got["rows"], max(orthants, key=len))


def test_sampled_balls_prove_a_crowded_3d_table_pairwise_checked():
    # 9,000 log-normal rows in three components (L2): the proof comes from the balls of a
    # few sampled rows; its clique is checked pair by pair and against the bound.
    n, k, eps, delta = 9_000, 10, 0.05, 0.8
    rng = np.random.default_rng(0)
    raw = rng.lognormal(10, 1, (n, 3))
    values = (raw - raw.min(axis=0)) / (raw.max(axis=0) - raw.min(axis=0))
    seen: list[np.ndarray] = []
    proof = infeasibility_proof(values, resolve("l2", None, 3, n), k, eps, delta,
                                any_partition=True,
                                describe=lambda rows: seen.append(rows) or "those rows")
    assert proof is not None and len(seen) == 1
    clique = values[seen[0]]
    threshold = eps + 1e-9 * max(1.0, eps)
    for start in range(0, len(clique), 500):
        block = clique[start:start + 500]
        dist = np.sqrt((((block[:, None, :] - clique[None, :, :]) ** 2) / 3).sum(axis=2))
        assert (dist <= threshold).all()
    assert len(clique) > math.floor((1 - delta) * (n - n // k) + 1e-9) + n // k
    frame = pd.DataFrame(raw, columns=["a", "b", "c"]).assign(age=rng.integers(18, 90, n))
    with pytest.raises(InfeasibleError, match="proven before any repair"):
        anonymize(frame, quasi_identifiers=["age"], sensitive=["a", "b", "c"], k=k,
                  epsilon=eps, delta=delta, metric="l2")


def test_the_degree_bound_answers_before_any_repair():
    # 100k uniform values at epsilon = 0.5: a value near 0.5 is a neighbour of all but a few
    # rows, and no group of at least k rows can give it k - 1 - t(k) non-neighbours. No clique
    # proves it (a window of width 0.5 holds about half the rows, fewer than the 54,545 places
    # of any partition: 6 of every 11 rows), so the proof is the degree bound's, checked here
    # by counting.
    values = np.random.default_rng(0).random(100_000)
    with pytest.raises(InfeasibleError, match="proven before any repair") as caught:
        partition(values, k=10, epsilon=0.5, delta=0.5)
    assert caught.value.partition is None
    message = str(caught.value)
    row = int(message.split("row ")[1].split(" ")[0])
    degree = int(np.count_nonzero(np.abs(values - values[row]) <= 0.5 + 1e-9)) - 1
    assert f"has {degree:,} epsilon-neighbours" in message
    assert "pairwise neighbours" not in message
    assert len(values) - 1 - degree < 10 - 1 - spec_t(10, 0.5)
