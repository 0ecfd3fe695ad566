"""proxanon.dask on a LocalCluster with 2 workers: every result checked by a global audit of
the published classes on the computed table, and on small tables by a pairwise brute force."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import proxanon  # noqa: E402
import proxanon.dask as pdask  # noqa: E402

#: Minutes of work in all: run by CI (`pytest -m slow`), not by the README's command.
pytestmark = pytest.mark.slow

QI = ["age", "sex", "race"]
SA = ["edu", "work", "income"]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    # Worker processes: the memory of the tasks stays out of the pytest process (a later
    # test reads its peak RSS through a child process).
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def census(n: int, seed: int = 0) -> pd.DataFrame:
    """Census-like rows: skewed, heavily repeated values; a text column nobody transforms."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.rint(rng.normal(40, 13, n)), 17, 90)
    return pd.DataFrame({
        "age": age,
        "sex": rng.choice(["F", "M"], n),
        "race": np.clip(np.rint(rng.normal(1, 2, n)), 0, 8).astype(np.int64),
        "edu": np.clip(np.rint(rng.normal(9, 4, n)), 0, 16),
        "work": np.clip(np.rint(rng.normal(3, 2.5, n)), 0, 9) / 9.0,
        "income": np.clip(np.rint(rng.normal(17, 12, n)), 0, 49) * 1000.0,
        "note": [f"r{i}" for i in range(n)],
    }, index=pd.Index(np.arange(n, dtype=np.int64) * 7 + 3, name="id"))


def brute_force(table: pd.DataFrame, qi: list[str], sa: list[str], k: int, eps: float,
                delta: float, ranges: dict[str, tuple[float, float]]) -> bool:
    """(epsilon, delta)^k by definition: classes are rows sharing their published QIs;
    every pair of a class compared by weighted l1 on the globally scaled values."""
    scaled = np.column_stack([(table[c].to_numpy(float) - ranges[c][0])
                              / (ranges[c][1] - ranges[c][0]) for c in sa])
    for _, rows in table.groupby(qi, sort=False).indices.items():
        size = len(rows)
        if size < k:
            return False
        x = scaled[rows]
        dist = np.abs(x[:, None, :] - x[None, :, :]).sum(axis=2) / len(sa)
        neighbours = (dist <= eps + 1e-9).sum(axis=1) - 1
        if neighbours.max() > np.floor((1 - delta) * (size - 1) + 1e-9):
            return False
    return True


def check(result: Any, ddf: Any, k: int, eps: float, delta: float,
          pairwise: bool = True) -> pd.DataFrame:
    """The published table: every row kept, other columns and index untouched, satisfied by
    an audit independent of the Dask path (and, if asked, by a pairwise brute force)."""
    source = ddf.compute()  # the input as dask holds it (dask may convert text to pyarrow)
    out = result.table.compute()
    assert result.satisfied and result.report.satisfied
    assert len(out) == len(source) and out.index.is_unique
    assert sorted(out.index) == sorted(source.index)
    aligned = out.loc[source.index]
    others = [c for c in source.columns if c not in QI]
    pd.testing.assert_frame_equal(aligned[others], source[others])
    single = proxanon.audit(out, quasi_identifiers=QI, sensitive=SA, k=k, epsilon=eps,
                            delta=delta)
    assert single.satisfied
    assert single.n_groups == result.report.groups
    # One published tuple, one group id (the global pass left no class split across parts).
    assert (out.groupby(QI)["group"].nunique() == 1).all()
    if pairwise:
        ranges = {c: (float(source[c].min()), float(source[c].max())) for c in SA}
        assert brute_force(out, QI, SA, k, eps, delta, ranges)
    return out


def run(ddf: Any, **options: Any) -> Any:
    params: dict[str, Any] = dict(quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                                  delta=0.6)
    params.update(options)
    return pdask.anonymize(ddf, **params)


def test_census_in_8_partitions(client: Any) -> None:
    source = census(3000)
    ddf = dd.from_pandas(source, npartitions=8)
    result = run(ddf)
    check(result, ddf, 5, 0.05, 0.6)
    assert result.report.partitions == 8 and result.report.pieces >= 2


def test_deterministic_and_divisions_do_not_matter(client: Any) -> None:
    source = census(2000, seed=1)
    known = dd.from_pandas(source, npartitions=8)
    first = run(known).table.compute()
    again = run(known).table.compute()
    unknown = run(known.clear_divisions()).table.compute()
    pd.testing.assert_frame_equal(first, again)
    pd.testing.assert_frame_equal(first, unknown)


def shuffled_partitions(source: pd.DataFrame, parts: int, seed: int = 0) -> Any:
    """Each partition a random sample of the whole table: the same published tuples are
    likely in several partitions (the adversarial case for the global pass)."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, parts, len(source))
    frames = [source[label == p] for p in range(parts)]
    return dd.from_delayed([_delayed(f) for f in frames],
                           meta=source.iloc[:0], verify_meta=False)


def _delayed(frame: pd.DataFrame) -> Any:
    import dask

    return dask.delayed(frame.copy)()


def test_identical_tuples_in_different_partitions_are_one_class(client: Any) -> None:
    source = census(3000, seed=2).assign(age=lambda f: (f["age"] // 10) * 10)
    ddf = shuffled_partitions(source, 8)
    result = run(ddf, arrange=False)
    assert result.report.colliding_classes > 0
    check(result, ddf, 5, 0.05, 0.6)


def test_partition_infeasible_alone_is_joined(client: Any) -> None:
    source = census(2400, seed=3)
    frames = [source.iloc[i * 300:(i + 1) * 300].copy() for i in range(8)]
    # Every row of partition 3 has one sensitive value: alone, no group can satisfy delta.
    for c in SA:
        frames[3][c] = source[c].iloc[0]
    table = pd.concat(frames)
    with pytest.raises(proxanon.InfeasibleError):
        proxanon.anonymize(frames[3], quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                           delta=0.6, sensitive_ranges={c: (float(table[c].min()),
                                                            float(table[c].max())) for c in SA})
    ddf = dd.from_pandas(table, npartitions=8)
    result = run(ddf, arrange=False)
    assert result.report.joined >= 1
    check(result, ddf, 5, 0.05, 0.6)


def test_partition_with_fewer_than_k_rows_is_joined(client: Any) -> None:
    source = census(1603, seed=4)
    frames = [source.iloc[:3], source.iloc[3:800], source.iloc[800:]]
    ddf = dd.from_delayed([_delayed(f) for f in frames], meta=source.iloc[:0])
    result = run(ddf, arrange=False)
    assert result.report.joined >= 1
    check(result, ddf, 5, 0.05, 0.6)


def test_whole_table_infeasible_raises(client: Any) -> None:
    source = census(400, seed=5)
    source[SA] = source[SA].iloc[0].to_numpy()  # every row has the same sensitive values
    source.loc[source.index[0], "edu"] += 1.0
    with pytest.raises(proxanon.InfeasibleError):
        run(dd.from_pandas(source, npartitions=8))


def test_audit_matches_single_machine(client: Any) -> None:
    source = census(3000, seed=6)
    published = proxanon.anonymize(source, quasi_identifiers=QI, sensitive=SA, k=4,
                                   epsilon=0.05, delta=0.6).table.drop(columns=["group"])
    # A tighter delta than the table was made for: some classes violate. A range given for
    # one column: the others keep the whole table's (not each partition's).
    wider = {SA[0]: (float(published[SA[0]].min()) - 5, float(published[SA[0]].max()) + 5)}
    for delta, ranges in ((0.6, None), (0.9, None), (0.6, wider)):
        expected = proxanon.audit(published, quasi_identifiers=QI, sensitive=SA, k=4,
                                  epsilon=0.05, delta=delta, sensitive_ranges=ranges)
        got = pdask.audit(dd.from_pandas(published, npartitions=8), quasi_identifiers=QI,
                          sensitive=SA, k=4, epsilon=0.05, delta=delta,
                          sensitive_ranges=ranges)
        assert got.satisfied == expected.satisfied
        assert got.summary() == expected.summary()
        assert got.scales == expected.scales and set(got.scales) == set(SA)
        for name in ("group_ids", "group_sizes", "group_risk", "violating_groups",
                     "small_groups", "violating_rows", "neighbour_counts"):
            np.testing.assert_array_equal(getattr(got, name), getattr(expected, name))
        if delta == 0.9:
            assert not got.satisfied


@pytest.mark.parametrize("change, error, words", [
    (lambda f: f.drop(columns=["race"]), ValueError, "race"),
    (lambda f: f.assign(edu=f["edu"].where(f.index != f.index[5])), ValueError, "edu"),
    (lambda f: f.assign(age=f["age"].where(f.index != f.index[9])), ValueError, "age"),
    (lambda f: f.assign(edu=pd.Timestamp("2020-01-01") + pd.to_timedelta(f["edu"], "D")),
     ValueError, "edu"),
    (lambda f: f.assign(group=1), ValueError, "group"),
    (lambda f: f.assign(income=f["income"].where(f.index != f.index[300], np.inf)),
     ValueError, r"sensitive column 'income' holds an infinite value"),
    # Rows are counted in the whole table, not in the part that holds them.
    (lambda f: f.assign(race=f["race"].where(f.index != f.index[300], 2**60)),
     ValueError, r"column 'race' holds integers beyond 2\^53 .*at row 300 \(index label"),
])
def test_bad_input_is_named(client: Any, change: Any, error: type, words: str) -> None:
    source = change(census(400, seed=7))
    with pytest.raises(error, match=words):
        run(dd.from_pandas(source, npartitions=8))
    if "infinite" in words:  # the audit refuses it in the same words
        with pytest.raises(error, match=words):
            pdask.audit(dd.from_pandas(source, npartitions=8), quasi_identifiers=QI,
                        sensitive=SA, k=5, epsilon=0.05, delta=0.6)


def test_pandas_frame_is_refused() -> None:
    with pytest.raises(TypeError, match="dask DataFrame"):
        run(census(50))


def test_unreachable_scheduler_fails_fast() -> None:
    started = time.perf_counter()
    with pytest.raises(pdask.SchedulerUnreachableError, match="127.0.0.1:9"), \
            pdask.connect("tcp://127.0.0.1:9", timeout=2):
        pass
    assert time.perf_counter() - started < 30  # a bound on hanging, not a speed target


def test_import_proxanon_does_not_import_dask() -> None:
    code = "import sys, proxanon; print('dask' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_200k_rows(client: Any) -> None:
    source = census(200_000, seed=8)
    ddf = dd.from_pandas(source, npartitions=8)
    result = run(ddf, k=10, epsilon=0.05, delta=0.8)
    check(result, ddf, 10, 0.05, 0.8, pairwise=False)


def test_one_partition_matches_the_shape_of_one_machine(client: Any) -> None:
    source = census(600, seed=9)
    ddf = dd.from_pandas(source, npartitions=1)
    result = run(ddf)
    assert result.report.pieces == 1
    check(result, ddf, 5, 0.05, 0.6)


def test_suppression_stays_within_the_budget(client: Any) -> None:
    source = census(2400, seed=10)
    # 30% of the rows share one sensitive value; with delta = 0.8 and k = 5 a group holds
    # one of them in five, so some must be left out.
    same = np.random.default_rng(10).random(len(source)) < 0.3
    source.iloc[same, source.columns.get_indexer(SA)] = source[SA].iloc[0].to_numpy()
    ddf = dd.from_pandas(source, npartitions=8)
    result = run(ddf, delta=0.8, on_infeasible="suppress", max_suppression=0.2)
    out = result.table.compute()
    assert result.satisfied
    assert 0 < result.report.suppressed_rows <= 0.2 * len(source)
    assert len(out) + result.report.suppressed_rows == len(source)
    assert proxanon.audit(out, quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                          delta=0.8).satisfied
    pd.testing.assert_frame_equal(out[["note", *SA]], ddf.compute().loc[out.index][["note", *SA]])


def test_every_part_is_scaled_by_the_global_range(client: Any) -> None:
    """A part whose incomes span 2% of the whole range: scaled by its own range its rows
    would look far apart; by the global range (as the audit reads them) they are all
    neighbours, so the part is infeasible alone and must be joined."""
    rng = np.random.default_rng(13)
    narrow = pd.DataFrame({"age": rng.integers(20, 60, 100).astype(float),
                           "income": rng.uniform(0, 2000, 100)})
    wide = pd.DataFrame({"age": rng.integers(20, 60, 900).astype(float),
                         "income": rng.uniform(0, 100_000, 900)})
    table = pd.concat([narrow, wide], ignore_index=True)
    ddf = dd.from_delayed([_delayed(narrow), _delayed(wide.set_index(wide.index + 100))],
                          meta=table.iloc[:0])
    result = pdask.anonymize(ddf, quasi_identifiers=["age"], sensitive=["income"], k=5,
                             epsilon=0.05, delta=0.6, arrange=False)
    assert result.report.joined == 1
    out = result.table.compute()
    assert proxanon.audit(out, quasi_identifiers=["age"], sensitive=["income"], k=5,
                          epsilon=0.05, delta=0.6).satisfied
    ranges = {"income": (float(table["income"].min()), float(table["income"].max()))}
    assert brute_force(out, ["age"], ["income"], 5, 0.05, 0.6, ranges)


def test_a_sensitive_taxonomy_is_audited_as_the_parts_compared_it(client: Any) -> None:
    """The global audit compares a sensitive column with a taxonomy by tree distance, as
    every part did and as one machine's audit does (numeric and text leaves alike)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(20, 70, 200),
                          "inc": rng.choice([10, 20, 30, 40], 200),
                          "dept": rng.choice(["a1", "a2", "b1", "b2"], 200)})
    trees = {"inc": proxanon.Hierarchy.from_dict({"*": {"low": [10, 20], "high": [30, 40]}}),
             "dept": proxanon.Hierarchy.from_dict({"*": {"a": ["a1", "a2"],
                                                         "b": ["b1", "b2"]}})}
    for column in ("inc", "dept"):
        options = dict(quasi_identifiers=["age"], sensitive=[column], k=5, epsilon=0.5,
                       delta=0.5, hierarchies={column: trees[column]})
        result = pdask.anonymize(dd.from_pandas(frame, npartitions=2), **options)
        single = proxanon.audit(result.table.compute(), **options)
        assert result.satisfied and single.satisfied
        assert result.audit.max_risk == single.max_risk and result.audit.scales == {}
        np.testing.assert_array_equal(np.sort(result.audit.neighbour_counts),
                                      np.sort(single.neighbour_counts))


def test_audit_takes_any_column_labels_and_names_an_empty_table(client: Any) -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({0: rng.integers(20, 70, 200), 1: rng.normal(50, 10, 200)})
    options = dict(quasi_identifiers=[0], sensitive=[1], k=5, epsilon=0.05, delta=0.5)
    got = pdask.audit(dd.from_pandas(frame, npartitions=2), **options)
    expected = proxanon.audit(frame, **options)
    assert got.summary() == expected.summary() and got.scales == expected.scales
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match="the table is empty"):
        pdask.audit(ddf[ddf[0] > 1000], **options)


def test_integers_beyond_2_53_are_audited_exactly(client: Any) -> None:
    base = 10**17
    frame = pd.DataFrame({"q": ["a"] * 6 + ["b"] * 6,
                          "inc": np.array([base + 3 * i for i in range(12)])})
    options = dict(quasi_identifiers=["q"], sensitive=["inc"], k=2, epsilon=0.1, delta=0.5)
    got = pdask.audit(dd.from_pandas(frame, npartitions=3), **options)
    expected = proxanon.audit(frame, **options)
    assert got.neighbour_counts.tolist() == expected.neighbour_counts.tolist()
    assert got.neighbour_counts.max() == 2 and got.scales == expected.scales


def test_given_range_must_hold_the_values() -> None:
    frame = census(50)
    with pytest.raises(ValueError, match="income"):
        proxanon.anonymize(frame, quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                           delta=0.6, sensitive_ranges={"income": (0.0, 10.0)})


@pytest.mark.parametrize("options, words", [
    (dict(k=1), r"k=1 with delta=0.6 > 0"),
    (dict(delta=1.5), r"delta must lie in \[0, 1\]"),
    (dict(epsilon=-1.0), r"epsilon must be a finite number >= 0"),
])
def test_bad_parameters_are_named_before_any_pass(options: Any, words: str) -> None:
    """Checked on the driver before the table is read: a table whose reading fails is never
    read (no client needed)."""
    import dask

    meta = census(4, seed=7).iloc[:0]

    def unreadable() -> pd.DataFrame:
        raise RuntimeError("the table was read")

    ddf = dd.from_delayed([dask.delayed(unreadable)()], meta=meta)
    with pytest.raises(ValueError, match=words):
        run(ddf, **options)
    with pytest.raises(RuntimeError, match="the table was read"):  # good parameters read it
        run(ddf)


def test_anatomy_release_on_dask(client: Any) -> None:
    source = census(3000, seed=6).assign(age=lambda f: (f["age"] // 10) * 10)
    ddf = dd.from_pandas(source, npartitions=6)
    result = run(ddf, publish="anatomy")
    assert result.satisfied and result.report.colliding_classes == 0
    source = ddf.compute()  # the input as dask holds it (dask may convert text to pyarrow)
    qi_table = result.table.compute()
    sa_table = result.sensitive_table.compute()
    # The QI table: every other column and the index, unchanged; no sensitive column.
    assert list(qi_table.columns) == [*(c for c in source.columns if c not in SA), "group"]
    pd.testing.assert_frame_equal(qi_table.loc[source.index].drop(columns="group"),
                                  source.drop(columns=SA))
    # The sensitive table: per group, exactly the values of the group's rows, ordered by group.
    assert list(sa_table.columns) == ["group", *SA] and len(sa_table) == len(source)
    assert (np.diff(sa_table["group"].to_numpy()) >= 0).all()
    joined = source.loc[qi_table.index, SA].assign(group=qi_table["group"].to_numpy())
    for g, rows in joined.groupby("group"):
        mine = rows[SA].sort_values(SA).to_numpy()
        theirs = sa_table[sa_table["group"] == g][SA].sort_values(SA).to_numpy()
        assert np.array_equal(mine, theirs)
    # Groups of at least k rows, each passing the pairwise check on the global ranges.
    ranges = {c: (float(source[c].min()), float(source[c].max())) for c in SA}
    assert brute_force(joined, ["group"], SA, 5, 0.05, 0.6, ranges)
    assert joined.groupby("group").size().max() < 20  # never merged by equal QI tuples


def test_colliding_parts_merged_whole_after_the_tuple_rounds(client: Any,
                                                             monkeypatch: Any) -> None:
    """With no round of tuple repair allowed, the parts that share a published tuple are
    anonymized again whole: fewer pieces, and still one class per tuple."""
    import proxanon.dask._repair as repair_module

    monkeypatch.setattr(repair_module, "TUPLE_REPAIR_ROUNDS", 0)
    source = census(3000, seed=2).assign(age=lambda f: (f["age"] // 10) * 10)
    ddf = shuffled_partitions(source, 8)
    result = run(ddf, arrange=False)
    assert result.report.colliding_classes > 0 and result.report.repair_rounds >= 1
    assert result.report.pieces < 8
    check(result, ddf, 5, 0.05, 0.6)


def test_a_shared_hash_is_no_collision_unless_the_tuples_are_equal(monkeypatch: Any) -> None:
    """Pieces send hashes of their tuples; where hashes match, the tuples themselves are
    compared. With every tuple hashed alike, only the tuple both pieces hold collides."""
    import dask

    import proxanon.dask._repair as repair_module
    from proxanon.dask._part import facts_of

    monkeypatch.setattr(repair_module, "tuple_hashes",
                        lambda table, qi: np.zeros(len(table), dtype=np.uint64))
    first = pd.DataFrame({"a": ["x", "x", "y"], "b": [1, 1, 2], "group": [0, 0, 1]})
    second = pd.DataFrame({"a": ["y", "z"], "b": [2, 3], "group": [0, 1]})
    facts = [facts_of(t, ["a", "b"]) for t in (first, second)]
    facts = [type(f)(np.zeros(1, dtype=np.uint64), f.groups, f.rows) for f in facts]
    with dask.config.set(scheduler="sync"):
        where = repair_module._collisions([dask.delayed(first), dask.delayed(second)], facts,
                                          ["a", "b"])
    assert where[["a", "b", "piece", "rows"]].values.tolist() == [["y", 2, 0, 1],
                                                                   ["y", 2, 1, 1]]


def test_pieces_a_repair_empties_are_dropped(client: Any) -> None:
    """Every partition publishes the one tuple (all rows share their QIs): the repair moves
    every class to its jobs, and the parts it leaves without rows are not published."""
    source = census(1500, seed=3).assign(age=40.0, sex="F", race=1)
    ddf = shuffled_partitions(source, 4)
    result = run(ddf, arrange=False)
    assert result.report.colliding_classes >= 1
    sizes = result.table.map_partitions(len).compute().tolist()
    assert len(sizes) == result.report.pieces and min(sizes) > 0
    check(result, ddf, 5, 0.05, 0.6, pairwise=False)
