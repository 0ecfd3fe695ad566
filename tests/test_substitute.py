"""``proxanon.substitute``: every kept property and bound is re-checked here from the output
alone, with plain numpy, and Algorithm 1's output against brute force over all triples."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon import _core
from proxanon.substitute import RELATIONS, Substitution, distortion


def check_constraints(original: pd.DataFrame, result: Substitution) -> None:
    """Every constraint holds in the substituted table (float64, as written) and held in the
    original; localities held strictly; bounds hold."""
    assert list(result.constraints.columns) == ["column", "i", "j", "k", "relation"]
    for column, rows in result.constraints.groupby("column", sort=False):
        before = original[column].to_numpy(dtype=np.float64)
        after = result.table[column].to_numpy()
        i, j, k = (rows[c].to_numpy() for c in ("i", "j", "k"))
        relation = rows["relation"].to_numpy()
        for values, strict in ((before, True), (after, False)):
            near = np.abs(values[i] - values[j])
            far = np.abs(values[j] - values[np.where(k >= 0, k, 0)])
            closer, farther = relation == "<=", relation == ">="
            order, equal = relation == "order", relation == "equal"
            assert (closer | farther | order | equal).all()
            if strict:
                assert (near[closer] < far[closer]).all()
                assert (near[farther] > far[farther]).all()
            else:
                assert (near[closer] <= far[closer]).all()
                assert (near[farther] >= far[farther]).all()
            assert (values[i[order]] <= values[j[order]]).all()
            assert (values[i[equal]] == values[j[equal]]).all()
            assert (k[order | equal] == -1).all()
    for column, (lo, hi) in result.bounds.items():
        after = result.table[column].to_numpy()
        assert (after >= lo).all() and (after <= hi).all()


def reaches(above: dict[int, set[int]], a: int, b: int) -> bool:
    """Whether a chain of order constraints leads from row a up to row b."""
    stack, seen = [a], {a}
    while stack:
        for nxt in above[stack.pop()]:
            if nxt == b:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def implied_orders_cover_localities(constraints: pd.DataFrame) -> None:
    """Each locality's x_i <= x_j <= x_k follows from the order constraints by transitivity."""
    for _, rows in constraints.groupby("column"):
        above: dict[int, set[int]] = defaultdict(set)
        for a, b in rows.loc[rows.relation == "order", ["i", "j"]].itertuples(index=False):
            above[a].add(b)
        localities = rows[rows.relation.isin(["<=", ">="])]
        for i, j, k in localities[["i", "j", "k"]].itertuples(index=False):
            assert reaches(above, i, j) and reaches(above, j, k)


def small_table(rows: int = 240, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 90, rows),           # ties
        "weight": rng.normal(70.0, 12.0, rows),      # distinct values
        "name": [f"p{r}" for r in range(rows)],
        "code": rng.integers(0, 5, rows).astype(np.int8),
    })


def test_every_kept_property_and_bound_holds_exactly() -> None:
    data = small_table()
    result = proxanon.substitute(data, ["age", "weight"], segment_size=40, poi_fraction=0.3,
                                 iterations=800, seed=5)
    check_constraints(data, result)
    implied_orders_cover_localities(result.constraints)
    assert set(result.constraints.relation) == set(RELATIONS)
    assert result.localities["age"] > 0 and result.localities["weight"] > 0
    for column in ("age", "weight"):  # the walk moved the values
        assert (result.table[column].to_numpy() != data[column].to_numpy()).mean() > 0.5


def test_other_columns_untouched_and_input_unchanged() -> None:
    data = small_table()
    copy = data.copy(deep=True)
    result = proxanon.substitute(data, "weight", segment_size=30, iterations=200)
    pd.testing.assert_frame_equal(data, copy)
    for column in ("age", "name", "code"):
        assert result.table[column].dtype == data[column].dtype
        assert result.table[column].equals(data[column])
    assert list(result.table.columns) == list(data.columns)
    assert result.table.index.equals(data.index)
    assert result.table["weight"].dtype == np.float64


def test_same_seed_same_output_any_thread_count() -> None:
    data = small_table(rows=500)
    runs = [proxanon.substitute(data, ["age", "weight"], segment_size=50, iterations=300,
                                seed=11, n_threads=threads) for threads in (1, 2, 3)]
    for other in runs[1:]:
        pd.testing.assert_frame_equal(runs[0].table, other.table, check_exact=True)
        pd.testing.assert_frame_equal(runs[0].constraints, other.constraints)
    different = proxanon.substitute(data, ["age", "weight"], segment_size=50, iterations=300,
                                    seed=12)
    assert not different.table["weight"].equals(runs[0].table["weight"])


def test_segments_are_independent_blocks_of_rows() -> None:
    data = small_table(rows=250)
    result = proxanon.substitute(data, "weight", segment_size=100, poi_fraction=1.0,
                                 iterations=50)
    rows = result.constraints
    # 250 rows, size 100: segments [0, 100) and [100, 250) (the last takes the remainder)
    segment = np.where(rows[["i", "j"]].to_numpy() < 100, 0, 1)
    assert (segment[:, 0] == segment[:, 1]).all()
    assert rows.i.max() >= 200


def test_distortion_is_equation_6() -> None:
    data = small_table()
    result = proxanon.substitute(data, ["age", "weight"], segment_size=40, iterations=300)
    entries = [(t, a) for c in ("age", "weight")
               for t, a in zip(data[c].to_numpy(dtype=float), result.table[c], strict=True)]
    expected = sum(abs(t - a) / abs(t) for t, a in entries if t != 0) / sum(
        1 for t, _ in entries if t != 0)
    assert result.distortion == pytest.approx(expected, rel=1e-12)
    assert result.distortion > 0
    assert distortion(np.array([0.0, 2.0]), np.array([5.0, 3.0])) == 0.5
    assert np.isnan(distortion(np.zeros(3), np.ones(3)))


def brute_force_localities(u: list[float]) -> list[tuple[int, int, int, str]]:
    """All strict localities (i < j < k) of strictly increasing values."""
    out = []
    for i, j, k in itertools.combinations(range(len(u)), 3):
        near, far = u[j] - u[i], u[k] - u[j]
        if near < far:
            out.append((i, j, k, "<="))
        elif near > far:
            out.append((i, j, k, ">="))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=3, max_size=14, unique=True))
def test_algorithm_1_implies_every_locality_with_two_per_pair(values: list[int]) -> None:
    u = sorted(float(v) for v in values)
    got = _core.extract_localities(np.array(u))
    kept = {(int(i), int(j), int(k), RELATIONS[int(r)])
            for i, j, k, r in zip(got["i"], got["j"], got["k"], got["relation"], strict=True)}
    truth = brute_force_localities(u)
    assert kept <= set(truth)
    per_pair: dict[tuple[int, int], int] = defaultdict(int)
    for i, j, _, _ in kept:
        per_pair[i, j] += 1
    assert max(per_pair.values(), default=0) <= 2
    # Rule 1 and 2: (i, j, k) follows from a kept (i, j, k') with k' <= k ("<=": x_k only
    # grows) or k' >= k (">=").
    for i, j, k, relation in truth:
        if relation == "<=":
            assert any((i, j, q, "<=") in kept for q in range(j + 1, k + 1))
        else:
            assert any((i, j, q, ">=") in kept for q in range(k, len(u)))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e9, 1e9, allow_subnormal=True), min_size=3, max_size=25))
def test_any_float_values_keep_their_properties(values: list[float]) -> None:
    data = pd.DataFrame({"x": values})
    result = proxanon.substitute(data, "x", segment_size=5, poi_fraction=1.0, iterations=80,
                                 n_threads=1)
    check_constraints(data, result)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=3, max_size=30),
       st.integers(3, 8), st.floats(0.05, 1.0), st.integers(0, 2**63))
def test_random_small_columns_keep_their_properties(values: list[int], size: int,
                                                    fraction: float, seed: int) -> None:
    data = pd.DataFrame({"x": values})
    result = proxanon.substitute(data, "x", segment_size=size, poi_fraction=fraction,
                                 iterations=60, seed=seed, n_threads=1)
    check_constraints(data, result)
    implied_orders_cover_localities(result.constraints)


def test_custom_bounds_are_kept() -> None:
    data = small_table()
    result = proxanon.substitute(data, "age", bounds={"age": (0, 120)}, segment_size=20,
                                 iterations=500)
    assert result.bounds == {"age": (0.0, 120.0)}
    check_constraints(data, result)


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"columns": "missing"}, ValueError, "missing"),
    ({"columns": "name"}, TypeError, "'name'"),
    ({"columns": "age", "segment_size": 2}, ValueError, "segment_size"),
    ({"columns": "age", "poi_fraction": 0.0}, ValueError, "poi_fraction"),
    ({"columns": "age", "poi_fraction": 1.5}, ValueError, "poi_fraction"),
    ({"columns": "age", "iterations": -1}, ValueError, "iterations"),
    ({"columns": "age", "bounds": {"age": (20, 50)}}, ValueError, "bounds['age']"),
    ({"columns": "age", "bounds": {"weight": (0, 1)}}, ValueError, "weight"),
    ({"columns": "age", "seed": -1}, ValueError, "seed"),
])
def test_bad_input_names_the_parameter(kwargs: dict[str, object], error: type[Exception],
                                       words: str) -> None:
    data = small_table()
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        proxanon.substitute(data, **kwargs)  # type: ignore[arg-type]


def test_nan_names_the_column_and_row() -> None:
    data = small_table()
    data.loc[7, "weight"] = np.nan
    with pytest.raises(ValueError, match=r"'weight'.*row position 7"):
        proxanon.substitute(data, "weight")


def test_cli_writes_untouched_columns_as_read(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from proxanon.cli import main

    source = tmp_path / "in.csv"
    rows = ["id, age,zip,note, fnlwgt"] + [
        f"{r:03d}, {20 + r % 50},0{r % 7}123,\"x, {r}\", {1000 + 37 * r % 900}.50"
        for r in range(120)]
    source.write_text("\n".join(rows) + "\n", encoding="utf-8")
    target = tmp_path / "out.csv"
    kept = tmp_path / "constraints.csv"
    code = main(["substitute", str(source), "--columns", "age,fnlwgt", "-o", str(target),
                 "--constraints", str(kept), "--segment-size", "40", "--iterations", "200"])
    assert code == 0, capsys.readouterr().err
    before = pd.read_csv(source, dtype=str, keep_default_na=False)
    after = pd.read_csv(target, dtype=str, keep_default_na=False)
    assert list(after.columns) == list(before.columns)  # header as read, spaces and all
    for column in ("id", "zip", "note"):
        assert after[column].tolist() == before[column].tolist()
    after.columns = before.columns = [c.strip() for c in before.columns]
    numbers = before[["age", "fnlwgt"]].astype(float)
    result = Substitution(
        table=after[["age", "fnlwgt"]].astype(float), constraints=pd.read_csv(kept),
        distortion=0.0, bounds={c: (numbers[c].min(), numbers[c].max()) for c in numbers},
        localities={}, seconds=0.0, seconds_per_column={})
    check_constraints(numbers, result)
    assert main(["substitute", str(source), "--columns", "note", "-o",
                 str(tmp_path / "x.csv")]) == 2
    assert "'note' is not numeric" in capsys.readouterr().err


def test_integers_beyond_float_precision_are_refused_by_column_and_row() -> None:
    big = pd.DataFrame({"id": np.arange(10, dtype=np.int64) + 2**60,
                        "age": np.arange(10, dtype=np.int64)})
    with pytest.raises(ValueError, match=r"column 'id' holds integers beyond 2\^53 .* at row 0"):
        proxanon.substitute(big, ["id"], segment_size=5)
    kept = proxanon.substitute(big, ["age"], segment_size=5).table  # a column left out is untouched
    assert kept["id"].tolist() == big["id"].tolist()
