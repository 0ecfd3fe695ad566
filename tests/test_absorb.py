"""Absorption of giant classes' rows into finer covering classes (issue 11,
cpp/src/absorb.cpp).

After ``anonymize`` has chosen its table, rows of classes above the cap (the larger of 2k
rows and 1/200 of the table) move into passing classes whose published tuples already cover
them. Checked here by brute force: every published class keeps passing, failing classes are
left alone, tuples stay pairwise distinct, no class grows past the cap, the largest class
never grows and the loss only falls.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon import Hierarchy, anonymize
from proxanon.distances import resolve
from proxanon.engine import run_specialize
from proxanon.generalize import encode_qi, summarize_groups
from tests.test_specialize import (
    SA,
    brute_violations,
    random_taxonomy,
    scaled_sensitive,
    tables,
    tuple_classes,
)

anonymize_module = importlib.import_module("proxanon.anonymize")


def total_loss(columns: list, classes: np.ndarray) -> float:
    """Sum over rows of the paper's loss of the row's class (SPEC §4)."""
    summary = summarize_groups(columns, classes)
    return float((summary.sizes * summary.cost.sum(axis=1)).sum())


def cap(n: int, k: int) -> int:
    return max(2 * k, -(-n // 200))


def run_both(frame: pd.DataFrame, hierarchies: dict[str, Hierarchy], quasi: list[str], k: int,
             epsilon: float, delta: float, method: str
             ) -> tuple[proxanon.Anonymization, proxanon.Anonymization]:
    kwargs: dict[str, Any] = dict(quasi_identifiers=quasi, sensitive=SA, k=k, epsilon=epsilon,
                                  delta=delta, hierarchies=hierarchies,
                                  on_infeasible="best_effort", method=method)
    result = anonymize(frame, **kwargs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(anonymize_module, "_absorb_classes", lambda *args: None)
        baseline = anonymize(frame, **kwargs)
    return result, baseline


@st.composite
def crowded_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, dict[str, Hierarchy], list[str],
                                              int, float, float]:
    """Tables where coarse classes form next to fine ones: many rows over deep taxonomies,
    k of 3 to 6, sensitive values that repeat (rows concentrated on a few leaves)."""
    n = draw(st.integers(80, 240))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = random_taxonomy(rng, "a", int(rng.integers(4, 14)))
    b = random_taxonomy(rng, "b", int(rng.integers(2, 8)))
    weights = rng.random(len(a.leaves)) ** 3
    frame = pd.DataFrame({
        "a": rng.choice(a.leaves, n, p=weights / weights.sum()),
        "b": rng.choice(b.leaves, n),
        "s1": rng.integers(0, draw(st.integers(3, 12)), n).astype(float),
        "s2": rng.integers(0, draw(st.integers(1, 4)), n).astype(float),
    })
    quasi = draw(st.sampled_from([["a", "b"], ["a"]]))
    return (frame, {"a": a, "b": b}, quasi, draw(st.integers(3, 6)),
            draw(st.sampled_from([0.0, 0.1])), draw(st.sampled_from([0.3, 0.5, 0.7])))


@settings(max_examples=100, deadline=None)
@given(case=st.one_of(tables(), crowded_tables()))
def test_absorption_keeps_every_class_private_and_only_lowers_loss(case) -> None:
    frame, hierarchies, quasi, k, epsilon, delta = case
    sens = scaled_sensitive(frame)
    for method in ("xcolor", "mondrian"):
        result, baseline = run_both(frame, hierarchies, quasi, k, epsilon, delta, method)
        # The published table: classes by published tuple are the group column, and the
        # report's verdict is the brute-force one; absorption never changes a verdict.
        classes = tuple_classes(result, quasi)
        pairs = pd.DataFrame({"g": result.table["group"].to_numpy(), "t": classes})
        assert pairs.drop_duplicates()["g"].is_unique
        assert pairs.drop_duplicates()["t"].is_unique
        bad, sized = brute_violations(sens, classes, k, epsilon, delta)
        assert result.satisfied == (bad == 0 and sized) == baseline.satisfied
        assert result.report.remaining_violations == bad

        # Absorption applied to the table published without it.
        old = baseline.groups
        columns = [encode_qi(frame, c, hierarchies.get(c)) for c in quasi]
        relation = resolve("l1", None, len(SA), len(frame))
        out = anonymize_module._absorb_classes(old, columns, sens, relation, k, epsilon, delta,
                                               None)
        new = old if out is None else out[0]
        moved = old != new
        assert moved.any() == (out is not None)
        # Tuples stay distinct and each class keeps its own.
        labels = summarize_groups(columns, new).labels
        before = summarize_groups(columns, old).labels
        for now, then in zip(labels, before, strict=True):
            assert (now == then).all()
        tuples = pd.DataFrame({str(j): column for j, column in enumerate(labels)})
        assert not tuples.duplicated().any()
        # Rows move only out of classes above the cap, into classes that stay within it;
        # the largest class never grows and the loss only falls.
        limit = cap(len(frame), k)
        old_sizes = np.bincount(old)
        new_sizes = np.bincount(new, minlength=old_sizes.size)
        assert (old_sizes[old[moved]] > limit).all()
        assert (new_sizes[new[moved]] <= limit).all()
        assert new_sizes.max() <= old_sizes.max()
        assert total_loss(columns, new) <= total_loss(columns, old) + 1e-9
        # Every class passes or fails as before (brute force); failing ones are untouched.
        old_bad, _ = brute_violations(sens, old, k, epsilon, delta)
        new_bad, new_sized = brute_violations(sens, new, k, epsilon, delta)
        assert new_bad == old_bad and new_sized
        failing = set(baseline.audit.violating_groups.tolist())
        assert not failing & (set(old[moved].tolist()) | set(new[moved].tolist()))


def leaf_classes(per_leaf: int, extra: int) -> tuple[pd.DataFrame, Hierarchy, np.ndarray]:
    """Four classes of ``per_leaf`` rows, one per leaf of a two-level taxonomy (each
    publishes its leaf), and one coarse class of ``4 * extra`` rows spread over all leaves
    (it publishes '*'); every row has its own far sensitive value."""
    tree = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    leaves = np.concatenate([np.repeat(["a1", "a2", "b1", "b2"], per_leaf),
                             np.tile(["a1", "a2", "b1", "b2"], extra)])
    frame = pd.DataFrame({"q": leaves, "s1": np.arange(leaves.size, dtype=float),
                          "s2": np.zeros(leaves.size)})
    classes = np.concatenate([np.repeat([1, 2, 3, 4], per_leaf),
                              np.zeros(4 * extra, dtype=np.int64)])
    return frame, tree, classes


def absorbed(frame: pd.DataFrame, tree: Hierarchy, classes: np.ndarray, k: int
             ) -> tuple[np.ndarray, int]:
    codes = tree.leaf_index(frame["q"].to_numpy()).astype(float)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    relation = resolve("l1", None, 2, len(frame))
    return run_specialize(classes, scaled_sensitive(frame), k, 0.001, 0.8, relation, None,
                          codes[:, None], [spec], keys, absorb_rows=True)


def test_rows_of_a_giant_class_move_to_the_finer_classes_that_cover_them() -> None:
    frame, tree, classes = leaf_classes(per_leaf=3, extra=15)
    moved_classes, moved = absorbed(frame, tree, classes, k=3)
    sizes = np.bincount(moved_classes)
    # The cap is 2k = 6: each leaf class takes 3 rows of its own leaf; the coarse class
    # keeps a row of the first and of the last leaf, so it still publishes '*'.
    assert moved == 12
    assert sizes.tolist() == [48, 6, 6, 6, 6]
    for c in range(1, 5):
        assert frame["q"][moved_classes == c].nunique() == 1
    coarse = frame["q"][moved_classes == 0]
    assert tree.lca_label(tree.leaf_index(coarse.to_numpy())) == "*"
    bad, sized = brute_violations(scaled_sensitive(frame), moved_classes, 3, 0.001, 0.8)
    assert bad == 0 and sized


def test_classes_at_the_cap_take_nothing() -> None:
    frame, tree, classes = leaf_classes(per_leaf=6, extra=15)
    moved_classes, moved = absorbed(frame, tree, classes, k=3)
    assert moved == 0
    assert (moved_classes == classes).all()


def test_a_taker_that_would_fail_takes_nothing() -> None:
    """The coarse class's rows all share one sensitive value with the leaf classes' rows:
    with delta = 0.8 a leaf class of 3 rows allows no neighbour, so no row can join it."""
    frame, tree, classes = leaf_classes(per_leaf=3, extra=15)
    frame["s1"] = np.where(classes == 0, 0.0, frame["s1"])
    frame.loc[0, "s1"] = 0.0
    moved_classes, moved = absorbed(frame, tree, classes, k=3)
    assert (moved_classes[classes != 0] == classes[classes != 0]).all()
    taken = moved_classes[(classes == 0) & (moved_classes != 0)]
    assert 1 not in taken.tolist()


def test_adult_with_the_arx_taxonomies_publishes_no_class_of_the_old_size() -> None:
    """Adult, ARX taxonomies on all four QIs, epsilon = 0.05, delta = 0.8, k = 10: the
    largest class held 6.6% of the rows (1,995) before absorption."""
    adult = proxanon.datasets.load_adult()
    qis = ["age", "sex", "race", "marital-status"]
    result = anonymize(adult.data, quasi_identifiers=qis,
                       sensitive=["education", "occupation", "workclass"], k=10, epsilon=0.05,
                       delta=0.8, hierarchies={c: adult.hierarchies[c] for c in qis})
    assert result.satisfied
    assert result.report.largest_class_share < 0.035
    classes = tuple_classes(result, qis)
    assert np.bincount(classes).max() == result.report.max_group_size
