"""Top-down specialization of published classes (docs/design/publishing.md,
cpp/src/publish/specialize.cpp).

After the merge loop, ``anonymize`` (and Mondrian) split every class of at least 2k rows
into parts that publish finer, pairwise distinct tuples. The published table must still be
what the report says: each class by published QI tuple passes (epsilon, delta)^k by a
brute-force check when the result is satisfied, satisfied results stay satisfied, violating
rows never grow, and every class lies inside one class of the table published without the
step (no class grows).
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
from proxanon._engine.options import Checks
from proxanon._engine.runs import run_specialize
from proxanon._results.measures import summarize_groups
from proxanon.distances import resolve

SA = ["s1", "s2"]

#: Where ``anonymize`` looks up the functions patched here: the module of the steps on
#: classes, the module of the Mondrian-(ε, δ) cut, and the module of one candidate's steps.
step_modules = [importlib.import_module("proxanon._pipeline.classes"),
                importlib.import_module("proxanon._pipeline.mondrian"),
                importlib.import_module("proxanon._pipeline.job")]
#: Where ``anonymize`` looks up ``run_specialize``: the steps on classes, and one candidate's.
specialize_modules = [step_modules[0], step_modules[2]]


def random_taxonomy(rng: np.random.Generator, name: str, leaves: int) -> Hierarchy:
    """A taxonomy of several levels over leaves ``name0 .. name{leaves-1}``: the leaves are
    cut into runs, recursively, with every leaf at the same depth."""
    labels = [f"{name}{i}" for i in range(leaves)]

    def subtree(block: list[str], depth: int, path: str) -> Any:
        if depth == 0 or len(block) == 1:
            return list(block)
        parts = int(rng.integers(2, 4))
        cuts = sorted({int(c) for c in rng.integers(1, len(block), parts - 1)})
        pieces = np.split(np.array(block, dtype=object), cuts)
        return {f"{path}.{i}": subtree(list(piece), depth - 1, f"{path}.{i}")
                for i, piece in enumerate(pieces)}

    return Hierarchy.from_dict({"*": subtree(labels, 3, name)})


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, dict[str, Hierarchy], list[str], int,
                                      float, float]:
    """Small tables: two categorical QIs with random taxonomies of several levels, one
    numeric QI, and a two-component sensitive attribute with few values."""
    n = draw(st.integers(20, 90))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = random_taxonomy(rng, "a", int(rng.integers(2, 12)))
    b = random_taxonomy(rng, "b", int(rng.integers(2, 8)))
    frame = pd.DataFrame({
        "a": rng.choice(a.leaves, n),
        "b": rng.choice(b.leaves, n),
        "x": rng.integers(0, draw(st.integers(1, 30)), n).astype(float),
        "s1": rng.integers(0, draw(st.integers(2, 12)), n).astype(float),
        "s2": rng.integers(0, draw(st.integers(1, 6)), n).astype(float),
    })
    quasi = draw(st.sampled_from([["a", "b", "x"], ["a", "b"], ["a"], ["x", "a"]]))
    k = draw(st.integers(2, 5))
    epsilon = draw(st.sampled_from([0.0, 0.05, 0.15, 0.3]))
    delta = draw(st.sampled_from([0.3, 0.5, 0.8]))
    return frame, {"a": a, "b": b}, quasi, k, epsilon, delta


def scaled_sensitive(frame: pd.DataFrame) -> np.ndarray:
    values = frame[SA].to_numpy(dtype=float)
    lo, hi = values.min(axis=0), values.max(axis=0)
    return np.where(hi > lo, (values - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0)


def brute_violations(sens: np.ndarray, classes: np.ndarray, k: int, epsilon: float,
                     delta: float) -> tuple[int, bool]:
    """(violating rows, every class has k rows) by pairwise distances: L1 with weights 1/s,
    neighbours within epsilon (with the slack of docs/design/privacy-model.md),
    t(G) = floor((1 - delta)(|G| - 1))."""
    bad, sized = 0, True
    for c in np.unique(classes):
        rows = sens[classes == c]
        size = len(rows)
        sized &= size >= k
        distance = np.abs(rows[:, None, :] - rows[None, :, :]).mean(axis=2)
        near = (distance <= epsilon + 1e-9 * max(1.0, epsilon)).sum(axis=1) - 1
        allowed = np.floor((1 - delta) * (size - 1) + 1e-9)
        bad += int((near > allowed).sum())
    return bad, sized


def tuple_classes(result: proxanon.Anonymization, quasi: list[str]) -> np.ndarray:
    """Class per published row by its published QI values, as an attacker groups them."""
    ids: np.ndarray = result.table.groupby(quasi, sort=False).ngroup().to_numpy()
    return ids


def brute_both(result: proxanon.Anonymization, baseline: proxanon.Anonymization,
               frame: pd.DataFrame, quasi: list[str], k: int, epsilon: float, delta: float
               ) -> tuple[tuple[int, bool], tuple[int, bool]]:
    """``brute_violations`` of both tables' classes by published tuple, once the group column
    of ``result`` is checked to be those classes."""
    sens = scaled_sensitive(frame)
    classes = tuple_classes(result, quasi)
    pairs = pd.DataFrame({"g": result.table["group"].to_numpy(), "t": classes}).drop_duplicates()
    assert pairs["g"].is_unique and pairs["t"].is_unique
    return (brute_violations(sens, classes, k, epsilon, delta),
            brute_violations(sens, tuple_classes(baseline, quasi), k, epsilon, delta))


def without_step(monkeypatch: pytest.MonkeyPatch) -> None:
    def unchanged(classes, formed_from, columns, *args):  # type: ignore[no-untyped-def]
        return classes, summarize_groups(columns, classes), formed_from

    for module in step_modules:
        monkeypatch.setattr(module, "_specialize_classes", unchanged)


def check_against_baseline(frame: pd.DataFrame, hierarchies: dict[str, Hierarchy],
                           quasi: list[str], k: int, epsilon: float, delta: float,
                           method: str) -> None:
    kwargs: dict[str, Any] = dict(quasi_identifiers=quasi, sensitive=SA, k=k, epsilon=epsilon,
                                  delta=delta, hierarchies=hierarchies,
                                  on_infeasible="best_effort", method=method)
    # Absorption (tests/test_absorb.py) moves rows between classes after this step: off in
    # both runs, so that every class can be compared with the one it came from.
    with pytest.MonkeyPatch.context() as patch:
        for module in step_modules:
            patch.setattr(module, "_absorb_classes", lambda *args, **kwargs: None)
        result = anonymize(frame, **kwargs)
        without_step(patch)
        without_failing_split(patch)
        baseline = anonymize(frame, **kwargs)
    (bad, sized), (base_bad, base_sized) = brute_both(result, baseline, frame, quasi, k,
                                                      epsilon, delta)
    assert result.satisfied == (bad == 0 and sized)
    assert result.report.remaining_violations == bad
    if baseline.satisfied:
        assert result.satisfied
    assert bad <= base_bad
    assert sized or not base_sized
    if (result.report.fallback != baseline.report.fallback
            or result.report.method != baseline.report.method):
        # The step changed which path or table publishes (e.g. it split the QI-aware path's
        # failing classes into passing ones, or made the Mondrian-(ε, δ) cut the cheaper
        # table): the classes come from other groups, but no worse.
        return
    # Every class lies inside one class of the baseline: no class grows.
    inside = pd.DataFrame({"new": result.groups, "old": baseline.groups}).drop_duplicates()
    assert inside["new"].is_unique
    assert result.report.max_group_size <= baseline.report.max_group_size
    assert result.report.gcp <= baseline.report.gcp + 1e-12


@settings(max_examples=60, deadline=None)
@given(case=tables())
@pytest.mark.slow
def test_xcolor_classes_stay_private_and_only_shrink(case) -> None:
    frame, hierarchies, quasi, k, epsilon, delta = case
    check_against_baseline(frame, hierarchies, quasi, k, epsilon, delta, "xcolor")


@settings(max_examples=60, deadline=None)
@given(case=tables())
def test_mondrian_classes_stay_private_and_only_shrink(case) -> None:
    frame, hierarchies, quasi, k, epsilon, delta = case
    check_against_baseline(frame, hierarchies, quasi, k, epsilon, delta, "mondrian")


def two_level_table(rows_per_leaf: int = 10) -> tuple[pd.DataFrame, Hierarchy]:
    """Four leaves under two nodes; every row has its own far sensitive value."""
    tree = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    leaves = np.repeat(["a1", "a2", "b1", "b2"], rows_per_leaf)
    frame = pd.DataFrame({"q": leaves, "s1": np.arange(leaves.size, dtype=float),
                          "s2": np.zeros(leaves.size)})
    return frame, tree


def test_one_class_splits_down_the_taxonomy_to_its_leaves() -> None:
    frame, tree = two_level_table()
    sens = scaled_sensitive(frame)
    codes = tree.leaf_index(frame["q"].to_numpy()).astype(float)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    relation = resolve("l1", None, 2, len(frame))
    classes, splits = run_specialize(np.zeros(len(frame), dtype=np.int64), sens,
                                     Checks(k=10, eps=0.01, dlt=0.8, relation=relation),
                                     codes[:, None], [spec], keys)
    # * -> {A, B} -> the four leaves: three splits, one class per leaf.
    assert splits == 3
    assert pd.DataFrame({"c": classes, "q": frame["q"]}).drop_duplicates().shape[0] == 4
    assert np.bincount(classes).tolist() == [10, 10, 10, 10]


def test_native_call_takes_row_arrays_and_names_a_misshapen_one() -> None:
    frame, tree = two_level_table()
    sens = scaled_sensitive(frame)
    codes = tree.leaf_index(frame["q"].to_numpy()).astype(float)[:, None]
    common: dict[str, Any] = dict(
        quasi_identifiers=codes, qi_taxonomies=[(np.asarray(tree.parent, np.int32),
                                                 tree.n_leaves)],
        node_keys=[list(range(len(tree.labels)))],
        relation=proxanon._core.Relation(sens, proxanon._core.Metric.l1, [0.5, 0.5], 0.01), k=10,
        l=0, delta=0.8)
    classes = np.zeros(len(frame), dtype=np.int32)
    as_array = proxanon._core.specialize(classes=classes, **common)["classes"]
    as_list = proxanon._core.specialize(classes=classes.tolist(), **common)["classes"]
    assert np.array_equal(as_array, as_list) and len(np.unique(as_array)) == 4
    with pytest.raises(ValueError, match="classes must be 1-D"):
        proxanon._core.specialize(classes=classes.reshape(2, -1), **common)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_peeling_on_a_line_splits_as_the_same_relation_given_as_a_graph(seed: int) -> None:
    # One continuous component (incomes): peeling finds the relief of its many violating
    # values from runs of neighbours on the line; given as a graph, by pair tests. Both
    # must make the same splits, and what they publish passes by brute force.
    rng = np.random.default_rng(seed)
    n, k, eps, delta = 1200, 10, 0.02, 0.8
    values = np.round(rng.lognormal(0.0, 0.6, n), 3)
    sens = ((values - values.min()) / (values.max() - values.min()))[:, None]
    qi = rng.integers(0, 40, n).astype(float)[:, None]
    start = np.zeros(n, dtype=np.int32)
    common: dict[str, Any] = dict(quasi_identifiers=qi, qi_taxonomies=[None], node_keys=[[]],
                                  k=k, delta=delta)
    l1 = proxanon._core.Metric.l1
    on_line = proxanon._core.specialize(
        classes=start, relation=proxanon._core.Relation(sens, l1, [1.0], eps), l=0, **common)
    graph = proxanon._core.neighbour_graph(sens, l1, [1.0], eps, 1 << 30)
    as_graph = proxanon._core.specialize(
        classes=start, relation=proxanon._core.Relation(graph["row_value"], graph["offsets"],
                                                        graph["targets"]), l=0, **common)
    assert on_line["splits"] > 0
    assert np.array_equal(on_line["classes"], as_graph["classes"])
    classes = np.asarray(on_line["classes"])
    before, _ = brute_violations(np.repeat(sens, 2, axis=1), np.zeros(n, dtype=np.int64), k,
                                 eps, delta)
    after, sized = brute_violations(np.repeat(sens, 2, axis=1), classes, k, eps, delta)
    assert sized and after <= before


def test_a_class_that_would_fail_is_not_split() -> None:
    frame, tree = two_level_table()
    frame["s1"] = np.where(frame["q"].str.startswith("a"), 0.0, np.arange(len(frame)))
    sens = scaled_sensitive(frame)
    codes = tree.leaf_index(frame["q"].to_numpy()).astype(float)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    relation = resolve("l1", None, 2, len(frame))
    # The 20 rows under A share one sensitive value: no part holding them passes, and with
    # delta = 0.5 the whole class passes only while they are mixed with the B rows.
    classes, _ = run_specialize(np.zeros(len(frame), dtype=np.int64), sens,
                                Checks(k=10, eps=0.01, dlt=0.5, relation=relation),
                                codes[:, None], [spec], keys)
    bad, sized = brute_violations(sens, classes, 10, 0.01, 0.5)
    assert bad == 0 and sized


def test_sorted_structure_counts_large_parts() -> None:
    """One sensitive component with more distinct values than the graph holds: the sorted
    structure counts each part's neighbours."""
    rng = np.random.default_rng(7)
    n = 9000
    tree = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    leaves = rng.choice(["a1", "a2", "b1", "b2"], n)
    sens = np.sort(rng.random(n))[rng.permutation(n)][:, None]
    codes = tree.leaf_index(leaves).astype(float)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    relation = resolve("l1", None, 1, n)
    classes, splits = run_specialize(np.zeros(n, dtype=np.int64), sens,
                                     Checks(k=10, eps=0.001, dlt=0.8, relation=relation),
                                     codes[:, None], [spec], keys)
    assert splits >= 1
    for c in np.unique(classes):
        values = np.sort(sens[classes == c, 0])
        within = 0.001 + 1e-9
        near = (np.searchsorted(values, values + within, side="right")
                - np.searchsorted(values, values - within, side="left") - 1)
        assert (near <= np.floor(0.2 * (values.size - 1) + 1e-9)).all()
        assert values.size >= 10


def test_report_gives_the_class_size_distribution() -> None:
    frame, tree = two_level_table()
    result = anonymize(frame, quasi_identifiers=["q"], sensitive=SA, k=10, epsilon=0.01,
                       delta=0.8, hierarchies={"q": tree})
    report = result.report
    assert report.largest_class_share == report.max_group_size / report.n
    assert set(report.class_size_quantiles) == {"50%", "90%", "99%"}
    assert "largest class" in str(report)
    assert report.to_dict()["class_size_quantiles"] == report.class_size_quantiles


def mixed_crowds(together: bool) -> tuple[pd.DataFrame, Hierarchy]:
    """40 rows under leaves a1, a2, b1, b2 (nodes A, B), on two sensitive values far apart:
    ``together``, each leaf holds 5 rows of each; else every row under A has the first."""
    frame, tree = two_level_table()
    if together:
        frame["s1"] = np.tile(np.repeat([0.0, 1.0], 5), 4)
    else:
        frame["s1"] = np.where(frame["q"].str.startswith("a"), 0.0, 1.0)
    frame["s2"] = 0.0
    return frame, tree


def specialize_one_class(frame: pd.DataFrame, tree: Hierarchy, step: Any, k: int = 10,
                         delta: float = 0.8, epsilon: float = 0.01) -> np.ndarray:
    sens = scaled_sensitive(frame)
    codes = tree.leaf_index(frame["q"].to_numpy()).astype(float)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    relation = resolve("l1", None, 2, len(frame))
    classes, _ = run_specialize(np.zeros(len(frame), dtype=np.int64), sens,
                                Checks(k=k, eps=epsilon, dlt=delta, relation=relation),
                                codes[:, None], [spec], keys, step=step)
    return classes


def brute_risk(sens: np.ndarray, rows: np.ndarray, epsilon: float) -> float:
    """docs/design/privacy-model.md: the largest D_G(v) over |G| - 1 (1 for one row), by pairwise
    distances."""
    part = sens[rows]
    if len(part) == 1:
        return 1.0
    distance = np.abs(part[:, None, :] - part[None, :, :]).mean(axis=2)
    near = (distance <= epsilon + 1e-9 * max(1.0, epsilon)).sum(axis=1) - 1
    return float(near.max()) / (len(part) - 1)


def test_a_failing_class_splits_into_parts_no_riskier() -> None:
    # Every row violates (each has 19 of 39 others on its value; t = 7), and no passing part
    # exists (a part of two values passes only with at most 2 rows of each). Each leaf holds
    # both values equally, so its risk 4/9 is below the whole's 19/39.
    frame, tree = mixed_crowds(together=True)
    assert np.unique(specialize_one_class(frame, tree, "split")).size == 1
    classes = specialize_one_class(frame, tree, "split_failing")
    assert pd.DataFrame({"c": classes, "q": frame["q"]}).drop_duplicates().shape[0] == 4
    assert np.bincount(classes).tolist() == [10, 10, 10, 10]
    sens = scaled_sensitive(frame)
    whole = brute_risk(sens, np.arange(len(frame)), 0.01)
    for c in np.unique(classes):
        assert brute_risk(sens, np.flatnonzero(classes == c), 0.01) <= whole
    bad, sized = brute_violations(sens, classes, 10, 0.01, 0.8)
    assert sized and bad == len(frame)


def test_a_failing_class_is_not_split_where_a_part_would_be_riskier() -> None:
    # Split along the taxonomy, A and B each hold one value only (risk 1 against the whole's
    # 19/39), and so does every leaf: the failing class stays whole.
    frame, tree = mixed_crowds(together=False)
    assert np.unique(specialize_one_class(frame, tree, "split_failing")).size == 1


def test_a_failing_split_never_adds_violating_rows() -> None:
    # 80 rows, 20 per leaf: 6 of each leaf on one crowded value (24 in all, D = 23 > t = 15:
    # they violate), 5 of a1 on a second value (D = 4: within t in A's 40 rows, over t = 3 in
    # a1's 20), every other row far from all. {A, B}: 24 violating rows, as the whole; B into
    # its leaves: 12 as B; A into its leaves: 17 against A's 12, so A stays whole.
    frame, tree = two_level_table(rows_per_leaf=20)
    values = np.arange(2.0, 82.0)
    for leaf in range(4):
        values[20 * leaf:20 * leaf + 6] = 0.0
    values[6:11] = 1.0
    frame["s1"] = values
    classes = specialize_one_class(frame, tree, "split_failing", epsilon=0.001)
    published = pd.DataFrame({"c": classes, "q": frame["q"]}).drop_duplicates()
    assert sorted(published.groupby("c")["q"].apply(lambda q: "".join(sorted(q)))) == [
        "a1a2", "b1", "b2"]
    sens = scaled_sensitive(frame)
    bad, sized = brute_violations(sens, classes, 10, 0.001, 0.8)
    assert sized and bad == 24


def test_a_failing_split_leaves_other_classes_and_their_tuples_alone() -> None:
    # The mixed class of test_a_failing_class_splits_into_parts_no_riskier, beside a passing
    # class of 20 more rows under a1 that publishes "a1". The failing class splits into A and
    # B; B into its leaves; A's part under a1 would publish "a1" too, and what is left of A
    # cannot have a tuple of its own, so A stays whole. The passing class is not tried.
    frame, tree = mixed_crowds(together=True)
    extra = pd.DataFrame({"q": ["a1"] * 20, "s1": np.linspace(0.1, 0.9, 20), "s2": 0.0})
    frame = pd.concat([frame, extra], ignore_index=True)
    sens = scaled_sensitive(frame)
    codes = tree.leaf_index(frame["q"].to_numpy()).astype(float)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    relation = resolve("l1", None, 2, len(frame))
    start = np.r_[np.zeros(40), np.ones(20)].astype(np.int64)
    classes, splits = run_specialize(start, sens,
                                     Checks(k=10, eps=0.01, dlt=0.8, relation=relation),
                                     codes[:, None], [spec], keys, step="split_failing")
    assert splits == 2
    assert np.unique(classes[40:]).size == 1 and not np.isin(classes[40:], classes[:40]).any()
    leaves = pd.DataFrame({"c": classes[:40], "q": frame["q"][:40]})
    published = leaves.groupby("c")["q"].apply(lambda q: "".join(sorted(set(q))))
    assert sorted(published) == ["a1a2", "b1", "b2"]
    bad, sized = brute_violations(sens, classes, 10, 0.01, 0.8)
    assert sized and bad == 40


def test_covering_deals_a_failing_class_into_parts_of_at_most_two_percent() -> None:
    # 1,280 rows, 20 under each of 64 leaves (8 nodes of 8 leaves): 8 of each leaf on one
    # sensitive value (D = 511 > t = 255: they violate, risk 511/1279), the others on values
    # of their own, far from all. The covering split deals the class into parts of at most
    # 25 rows (2%) under nodes and leaves, each no riskier than the class, no more violating
    # rows, and every part's published tuple its own.
    leaves = [f"l{i}" for i in range(64)]
    tree = Hierarchy.from_rows([[leaf, f"n{i // 8}", "*"] for i, leaf in enumerate(leaves)])
    own = np.linspace(0.1, 1.0, 1280)
    frame = pd.DataFrame({"q": np.repeat(leaves, 20),
                          "s1": np.where(np.tile(np.arange(20), 64) < 8, 0.0, own), "s2": 0.0})
    classes = specialize_one_class(frame, tree, "cover_failing", epsilon=0.0001)
    sizes = np.bincount(classes)
    assert sizes.size > 50 and sizes.max() <= len(frame) // 50
    sens = scaled_sensitive(frame)
    whole = brute_risk(sens, np.arange(len(frame)), 0.0001)
    for c in range(sizes.size):
        assert brute_risk(sens, np.flatnonzero(classes == c), 0.0001) <= whole
    bad, sized = brute_violations(sens, classes, 10, 0.0001, 0.8)
    assert sized and bad <= 8 * 64
    codes = tree.leaf_index(frame["q"].to_numpy())
    published = [tree.lca_label(codes[classes == c]) for c in range(sizes.size)]
    assert len(set(published)) == sizes.size
    # The same table and parameters deal it alike.
    assert np.array_equal(specialize_one_class(frame, tree, "cover_failing", epsilon=0.0001),
                          classes)
    # A passing class is not dealt.
    frame["s1"] = own
    assert np.unique(specialize_one_class(frame, tree, "cover_failing", epsilon=0.0001)).size == 1


def owner_case(receiver_rows: int) -> tuple[pd.DataFrame, Hierarchy, np.ndarray]:
    """The failing class of the test above (class 0), a passing class of 10 rows on leaves l0
    and l1 that publishes their node n0 (class 1), and passing classes of ``receiver_rows``
    rows on l0 and on l1 (classes 2 and 3); every value but the crowded one far from all."""
    leaves = [f"l{i}" for i in range(64)]
    tree = Hierarchy.from_rows([[leaf, f"n{i // 8}", "*"] for i, leaf in enumerate(leaves)])
    q = np.r_[np.repeat(leaves, 20), ["l0", "l1"] * 5, ["l0"] * receiver_rows,
              ["l1"] * receiver_rows]
    own = np.linspace(0.1, 1.0, q.size)
    crowded = np.r_[np.tile(np.arange(20), 64) < 8, np.zeros(q.size - 1280, dtype=bool)]
    frame = pd.DataFrame({"q": q, "s1": np.where(crowded, 0.0, own), "s2": 0.0})
    start = np.r_[np.zeros(1280), np.ones(10), np.full(receiver_rows, 2),
                  np.full(receiver_rows, 3)].astype(np.int64)
    return frame, tree, start


def cover_owner_case(frame: pd.DataFrame, tree: Hierarchy, start: np.ndarray) -> np.ndarray:
    sens = scaled_sensitive(frame)
    codes = tree.leaf_index(frame["q"].to_numpy()).astype(float)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    relation = resolve("l1", None, 2, len(frame))
    classes, _ = run_specialize(start, sens,
                                Checks(k=10, eps=0.0001, dlt=0.8, relation=relation),
                                codes[:, None], [spec], keys, step="cover_failing")
    # Every class is no riskier than the failing class or passes, the violating rows are no
    # more, and each publishes a tuple of its own.
    whole = brute_risk(sens, np.arange(1280), 0.0001)
    for c in np.unique(classes):
        rows = np.flatnonzero(classes == c)
        if brute_violations(sens[rows], np.zeros(rows.size, np.int64), 10, 0.0001, 0.8)[0]:
            assert brute_risk(sens, rows, 0.0001) <= whole
    bad, sized = brute_violations(sens, classes, 10, 0.0001, 0.8)
    assert sized and bad <= 8 * 64
    codes_int = codes.astype(np.int64)
    published = [tree.lca_label(codes_int[classes == c]) for c in np.unique(classes)]
    assert len(set(published)) == len(published)
    return classes


def test_covering_vacates_a_small_class_that_publishes_a_tuple_it_needs() -> None:
    # The class publishing n0 (10 rows) holds the node that the failing class's rows under
    # l0 and l1 need (their leaves are published by classes 2 and 3): its rows move into
    # classes 2 and 3, which cover them and still pass, and a part of the failing class
    # publishes n0.
    frame, tree, start = owner_case(receiver_rows=12)
    classes = cover_owner_case(frame, tree, start)
    owner = np.arange(1280, 1290)
    receivers = classes[1290:1302][0], classes[1302:][0]
    assert (classes[owner[::2]] == receivers[0]).all()
    assert (classes[owner[1::2]] == receivers[1]).all()
    codes = tree.leaf_index(frame["q"].to_numpy())
    n0 = [c for c in np.unique(classes) if tree.lca_label(codes[classes == c]) == "n0"]
    assert len(n0) == 1 and (np.flatnonzero(classes == n0[0]) < 1280).all()
    sizes = np.bincount(classes)
    assert sizes.max() <= len(frame) // 50
    # Where classes 2 and 3 hold 2% of the rows already, none of its rows moves (all or
    # none): it keeps them and n0.
    frame, tree, start = owner_case(receiver_rows=26)
    classes = cover_owner_case(frame, tree, start)
    kept = np.unique(classes[1280:1290])
    assert kept.size == 1 and not np.isin(kept, classes[1290:]).any()
    codes = tree.leaf_index(frame["q"].to_numpy())
    assert tree.lca_label(codes[classes == kept[0]]) == "n0"


def test_covering_refuses_class_ids_it_cannot_read() -> None:
    # The rounds read the classes before the covering split does: ids that skip one or fall
    # below 0 are refused as the split refuses them, not read out of bounds.
    frame, tree, start = owner_case(receiver_rows=12)
    for bad, message in ((np.where(start == 3, 5, start), "every one used"),
                         (np.r_[start[:-1], -1], ">= 0")):
        with pytest.raises(ValueError, match=message):
            cover_owner_case(frame, tree, bad)


def test_covering_rounds_absorb_from_a_passing_class_above_two_percent() -> None:
    # A passing class of 600 rows publishing n0 (75 rows on each of its leaves) beside
    # passing classes of 12 rows on l0 and on l1, every value far from all: no class fails,
    # so nothing is vacated or dealt, but the rounds' absorption moves rows of the large class
    # into the small ones that cover them; every class keeps its id and tuple and passes.
    leaves = [f"l{i}" for i in range(64)]
    tree = Hierarchy.from_rows([[leaf, f"n{i // 8}", "*"] for i, leaf in enumerate(leaves)])
    q = np.r_[np.repeat(leaves[:8], 75), ["l0"] * 12, ["l1"] * 12]
    frame = pd.DataFrame({"q": q, "s1": np.linspace(0.0, 1.0, q.size), "s2": 0.0})
    start = np.r_[np.zeros(600), np.ones(12), np.full(12, 2)].astype(np.int64)
    sens = scaled_sensitive(frame)
    assert brute_violations(sens, start, 10, 0.0001, 0.8) == (0, True)
    codes = tree.leaf_index(frame["q"].to_numpy())
    spec = (np.asarray(tree.parent, dtype=np.int32), tree.n_leaves)
    keys = [pd.factorize(np.asarray(tree.labels, dtype=object))[0].astype(np.int32)]
    classes, changes = run_specialize(start, sens,
                                      Checks(k=10, eps=0.0001, dlt=0.8,
                                             relation=resolve("l1", None, 2, len(frame))),
                                      codes[:, None].astype(float), [spec], keys,
                                      step="cover_failing")
    assert changes > 0 and np.bincount(classes)[0] < 600
    assert brute_violations(sens, classes, 10, 0.0001, 0.8) == (0, True)
    assert [tree.lca_label(codes[classes == c]) for c in range(3)] == ["n0", "l0", "l1"]


def test_failing_split_refuses_checks_it_cannot_weigh() -> None:
    frame, tree = mixed_crowds(together=True)
    common: dict[str, Any] = dict(
        classes=np.zeros(len(frame), dtype=np.int32),
        quasi_identifiers=tree.leaf_index(frame["q"].to_numpy()).astype(float)[:, None],
        qi_taxonomies=[(np.asarray(tree.parent, np.int32), tree.n_leaves)],
        node_keys=[list(range(len(tree.labels)))], k=10, delta=0.8, step="split_failing")
    sens = scaled_sensitive(frame)

    def relation(epsilon: float | None) -> proxanon._core.Relation:
        return proxanon._core.Relation(sens, proxanon._core.Metric.l1, [0.5, 0.5], epsilon)

    with pytest.raises(ValueError, match="needs epsilon and no l"):
        proxanon._core.specialize(relation=relation(0.01), l=2, **common)
    with pytest.raises(ValueError, match="needs epsilon and no l"):
        proxanon._core.specialize(relation=relation(None), l=0, **common)
    with pytest.raises(ValueError, match="step must be"):
        proxanon._core.specialize(relation=relation(0.01), l=0, **{**common, "step": "split_all"})


def test_best_effort_on_adult_splits_a_failing_class() -> None:
    """The first 2,000 rows of the bundled Adult table with its taxonomies, at a setting no
    table satisfies: the failing split (and the absorption from failing classes after it)
    makes more classes, or fewer violating rows, than the same run without it, each passing
    or no riskier than the
    classes of that run its rows come from, with no more violating rows (brute force over the
    classes by published tuple)."""
    adult = proxanon.datasets.load_adult()
    quasi = ["age", "sex", "race", "marital-status"]
    sensitive = ["education", "occupation", "workclass"]
    frame = adult.data.iloc[:2000]
    kwargs: dict[str, Any] = dict(quasi_identifiers=quasi, sensitive=sensitive, k=10,
                                  epsilon=0.1, delta=0.7, on_infeasible="best_effort",
                                  hierarchies={c: adult.hierarchies[c] for c in quasi})
    result = anonymize(frame, **kwargs)
    with pytest.MonkeyPatch.context() as patch:
        without_failing_split(patch)
        baseline = anonymize(frame, **kwargs)
    assert not result.satisfied and not baseline.satisfied
    # The failing steps changed the table: more classes, or fewer violating rows.
    assert (result.report.groups > baseline.report.groups
            or result.report.remaining_violations < baseline.report.remaining_violations)
    sens = proxanon.scale_sensitive(frame, sensitive)
    classes = tuple_classes(result, quasi)
    bad, sized = brute_violations(sens, classes, 10, 0.1, 0.7)
    base_bad, _ = brute_violations(sens, tuple_classes(baseline, quasi), 10, 0.1, 0.7)
    assert sized and bad <= base_bad and result.report.remaining_violations == bad
    check_no_riskier_than_sources(result, baseline, sens, 10, 0.1, 0.7)


@pytest.mark.slow
def test_best_effort_on_adult_publishes_no_class_above_two_percent() -> None:
    """The class-size rule (docs/design/publishing.md) on the bundled Adult table with the ARX
    taxonomies on all four QIs at epsilon 0.1, delta 0.8, where no table is found: the best effort's
    classes by published tuple hold at most 2% of the rows each (1,233 rows, 4.1%, before owners of
    the tuples its failing classes need were vacated), and the report's violating rows are those a
    brute-force audit of those classes finds."""
    adult = proxanon.datasets.load_adult()
    quasi = ["age", "sex", "race", "marital-status"]
    sensitive = ["education", "occupation", "workclass"]
    result = anonymize(adult.data, quasi_identifiers=quasi, sensitive=sensitive, k=10,
                       epsilon=0.1, delta=0.8, on_infeasible="best_effort",
                       hierarchies={c: adult.hierarchies[c] for c in quasi})
    assert not result.satisfied
    classes = tuple_classes(result, quasi)
    assert np.bincount(classes).max() * 50 <= len(adult.data)
    bad, sized = brute_violations(proxanon.scale_sensitive(adult.data, sensitive), classes, 10,
                                  0.1, 0.8)
    assert sized and result.report.remaining_violations == bad


def without_failing_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """``anonymize`` as if the failing split found nothing to split, failing classes no
    row to give (the absorption after it), and the covering split nothing to deal."""
    specialize = run_specialize

    def passing_only(classes, *args, step="split", **kwargs):  # type: ignore[no-untyped-def]
        if step in ("split_failing", "absorb_failing", "cover_failing"):
            return classes, 0
        return specialize(classes, *args, step=step, **kwargs)

    for module in specialize_modules:
        monkeypatch.setattr(module, "run_specialize", passing_only)


@settings(max_examples=30, deadline=None)
@given(case=tables())
def test_best_effort_splits_failing_classes_without_more_risk(case) -> None:
    """``anonymize``'s best-effort table against the same run without the failing split:
    violating rows never grow, every class lies inside one of the other table's classes and
    is no riskier than it, and the report agrees with a brute-force audit of the classes by
    published tuple. (Small tables rarely have a failing class that splits without a riskier
    part: the native test below generates ones that do.)"""
    frame, hierarchies, quasi, k, epsilon, delta = case
    kwargs: dict[str, Any] = dict(quasi_identifiers=quasi, sensitive=SA, k=k, epsilon=epsilon,
                                  delta=delta, hierarchies=hierarchies,
                                  on_infeasible="best_effort")
    result = anonymize(frame, **kwargs)
    with pytest.MonkeyPatch.context() as patch:
        without_failing_split(patch)
        baseline = anonymize(frame, **kwargs)
    (bad, sized), (base_bad, _) = brute_both(result, baseline, frame, quasi, k, epsilon, delta)
    assert result.report.remaining_violations == bad
    assert result.satisfied == (bad == 0 and sized)
    assert result.satisfied or not baseline.satisfied
    assert bad <= base_bad
    check_no_riskier_than_sources(result, baseline, scaled_sensitive(frame), k, epsilon, delta)
    assert result.report.max_risk <= baseline.report.max_risk + 1e-12
    assert result.report.max_group_size <= baseline.report.max_group_size


def check_no_riskier_than_sources(result: proxanon.Anonymization,
                                  baseline: proxanon.Anonymization, sens: np.ndarray, k: int,
                                  epsilon: float, delta: float) -> None:
    """Every class of ``result`` passes (brute force) or is no riskier than the riskiest class
    of ``baseline`` its rows come from: the failing split's parts lie inside one class, and
    the absorption from failing classes after it moves rows only into passing classes that
    keep passing or failing ones that stay within their own risk."""
    for new in np.unique(result.groups):
        rows = np.flatnonzero(result.groups == new)
        if brute_violations(sens[rows], np.zeros(rows.size, np.int64), k, epsilon, delta)[0] == 0:
            continue
        sources = np.unique(baseline.groups[rows])
        assert brute_risk(sens, rows, epsilon) <= max(
            brute_risk(sens, np.flatnonzero(baseline.groups == old), epsilon)
            for old in sources) + 1e-12


def check_failing_split(frame: pd.DataFrame, hierarchies: dict[str, Any], quasi: list[str],
                        k: int, delta: float) -> np.ndarray:
    """One failing class (every row of ``frame``) split by the failing target; asserts by
    brute force that every part has k rows and a published tuple of its own, is no riskier
    than the class, and that the parts' violating rows are no more than the class's. Returns
    the classes."""
    from proxanon._pipeline.classes import _published_key_inputs
    from proxanon.generalize import encode_qi

    n = len(frame)
    columns = [encode_qi(frame, c, hierarchies[c]) for c in quasi]
    sens = scaled_sensitive(frame)
    relation = resolve("l1", None, 2, n)
    whole = np.zeros(n, dtype=np.int64)
    classes, splits = run_specialize(whole, sens,
                                     Checks(k=k, eps=0.05, dlt=delta, relation=relation),
                                     *_published_key_inputs(columns), step="split_failing")
    before, _ = brute_violations(sens, whole, k, 0.05, delta)
    after, sized = brute_violations(sens, classes, k, 0.05, delta)
    assert sized and after <= before
    assert (splits > 0) == (classes.max() > 0)
    if before == 0:
        assert splits == 0  # a passing class is not tried
    labels = summarize_groups(columns, classes).labels
    tuples = {tuple(column[c] for column in labels) for c in range(int(classes.max()) + 1)}
    assert len(tuples) == int(classes.max()) + 1
    risk = brute_risk(sens, np.arange(n), 0.05)
    for c in range(int(classes.max()) + 1):
        assert brute_risk(sens, np.flatnonzero(classes == c), 0.05) <= risk + 1e-12
    return classes


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(40, 200), values=st.integers(2, 4),
       k=st.integers(2, 6), delta=st.sampled_from([0.6, 0.8, 0.9]),
       quasi=st.sampled_from([["a", "b", "x"], ["a", "b"], ["a"], ["x"]]))
def test_failing_split_against_brute_force(seed: int, n: int, values: int, k: int,
                                           delta: float, quasi: list[str]) -> None:
    """One failing class of random rows (QIs under random taxonomies, a few sensitive values
    mixed at random) split by the failing target (about a quarter of these split)."""
    rng = np.random.default_rng(seed)
    hierarchies = {"a": random_taxonomy(rng, "a", int(rng.integers(4, 12))),
                   "b": random_taxonomy(rng, "b", int(rng.integers(2, 8))), "x": None}
    frame = pd.DataFrame({
        "a": rng.choice(hierarchies["a"].leaves, n),  # type: ignore[union-attr]
        "b": rng.choice(hierarchies["b"].leaves, n),  # type: ignore[union-attr]
        "x": rng.integers(0, 20, n).astype(float),
        "s1": rng.integers(0, values, n).astype(float), "s2": np.zeros(n)})
    check_failing_split(frame, hierarchies, quasi, k, delta)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(400, 900), k=st.integers(2, 4),
       crowd=st.floats(0.5, 0.95), delta=st.sampled_from([0.7, 0.8]),
       quasi=st.sampled_from([["a", "x"], ["a", "b"], ["a"]]))
def test_balanced_failing_split_against_brute_force(seed: int, n: int, k: int, crowd: float,
                                                    delta: float, quasi: list[str]) -> None:
    """Larger failing classes whose crowded sensitive values sit under some QI leaves (cuts
    along the QIs leave pieces more crowded than the class, so the balanced split of
    balanced_split.hpp is what splits them): the same brute-force checks."""
    rng = np.random.default_rng(seed)
    hierarchies = {"a": random_taxonomy(rng, "a", int(rng.integers(4, 12))),
                   "b": random_taxonomy(rng, "b", int(rng.integers(2, 8))), "x": None}
    a = rng.choice(hierarchies["a"].leaves, n)  # type: ignore[union-attr]
    dense = np.isin(a, hierarchies["a"].leaves[: len(hierarchies["a"].leaves) // 2])  # type: ignore[index]
    crowded = rng.random(n) < np.where(dense, crowd, 0.1)
    frame = pd.DataFrame({
        "a": a, "b": rng.choice(hierarchies["b"].leaves, n),  # type: ignore[union-attr]
        "x": rng.integers(0, 20, n).astype(float),
        "s1": np.where(crowded, rng.integers(0, 2, n), rng.integers(3, 20, n)).astype(float),
        "s2": np.zeros(n)})
    check_failing_split(frame, hierarchies, quasi, k, delta)


def test_balanced_split_of_a_correlated_class() -> None:
    # 800 rows under 8 leaves, half of them on one crowded value: 70% of the rows under the
    # first four leaves, 30% under the others. Every QI cut leaves a piece more crowded than
    # the class (the cuts of failing_along find no split), yet the balanced split finds
    # parts (k = 4: leaves of 200 rows), none riskier than the class.
    rng = np.random.default_rng(11)
    tree = Hierarchy.from_dict({"*": {"A": {"A1": ["a0", "a1"], "A2": ["a2", "a3"]},
                                      "B": {"B1": ["a4", "a5"], "B2": ["a6", "a7"]}}})
    a = rng.choice([f"a{i}" for i in range(8)], 800)
    crowded = rng.random(800) < np.where(np.isin(a, ["a0", "a1", "a2", "a3"]), 0.7, 0.3)
    frame = pd.DataFrame({"a": a, "s1": np.where(crowded, 0.0, rng.integers(3, 20, 800)),
                          "s2": np.zeros(800)})
    classes = check_failing_split(frame, {"a": tree}, ["a"], 4, 0.8)
    assert classes.max() > 0
