"""Hierarchy builders (masking, order, dates), their ARX files, and their use by anonymize.

References are computed without the builders: common prefixes of codes, runs of positions,
calendar fields read with ``datetime``.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from proxanon import anonymize
from proxanon.cli import main
from proxanon.hierarchy import Hierarchy

ZIPS = ["02134", "02139", "02201", "10001", "10002", "00501", "02134"]


def same_tree(a: Hierarchy, b: Hierarchy) -> bool:
    return (a.labels == b.labels and np.array_equal(a.parent, b.parent)
            and np.array_equal(a.depth, b.depth))


def common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


# ---------------------------------------------------------------------------------- masking


def test_masking_keeps_leading_zeros_and_masks_one_character_per_level():
    h = Hierarchy.from_masking(ZIPS)
    assert h.leaves == tuple(sorted(set(ZIPS)))
    assert h.height == 5  # four masked levels, then the root
    for row in h.rows():
        leaf = row[0]
        assert [len(label) for label in row[:-1]] == [5] * 5
        for j, label in enumerate(row[:-1]):
            assert label == leaf[:5 - j] + "*" * j
        assert row[-1] == "*"
    # The LCA of two codes shows their longest common prefix, the rest masked.
    for a in h.leaves:
        for b in h.leaves:
            shared = common_prefix(a, b)
            expected = "*" if shared == "" else (shared + "*" * (5 - len(shared)))
            got = h.lca_label(h.leaf_index([a, b]))
            assert got == expected, (a, b)


def test_masking_refuses_numbers_and_mixed_widths_unless_a_width_pads_them():
    with pytest.raises(TypeError, match="width=N"):
        Hierarchy.from_masking([2134, 10001])
    with pytest.raises(ValueError, match="pass width=5"):
        Hierarchy.from_masking(["2134", "10001"])
    padded = Hierarchy.from_masking([2134, "10001", "501"], width=5)
    assert padded.leaves == ("00501", "02134", "10001")
    with pytest.raises(ValueError, match="6 characters, not width=5"):
        Hierarchy.from_masking(["100011"], width=5)
    with pytest.raises(ValueError, match="mask character"):
        Hierarchy.from_masking(["02*34"])
    with pytest.raises(ValueError, match="missing"):
        Hierarchy.from_masking(["02134", None])
    custom = Hierarchy.from_masking(["AB1", "AB2"], mask="#", root="###")
    assert custom.rows()[0] == ("AB1", "AB#", "A##", "###")


# ------------------------------------------------------------------------------------ order


@pytest.mark.parametrize("n, sizes", [(10, (2, 4)), (7, (3,)), (12, (2, 3, 2)), (5, ())])
def test_order_groups_runs_of_adjacent_values(n, sizes):
    values = [f"v{i:02d}" for i in range(n)][::-1]  # the order given, not sorted
    h = Hierarchy.from_order(values, sizes)
    assert h.leaves == tuple(values)
    span = 1
    for size in sizes:
        span *= size
        for i in range(n):
            for j in range(n):
                # Positions in one run of `span` share a group of this level, so their LCA
                # covers at most the run; positions in two runs meet above a full run.
                together = i // span == j // span
                assert (int(h.leaf_counts[h.lca(i, j).item()]) <= span) == together
    for row in h.rows():
        for label in row[1:-1]:
            assert label.startswith("[") and label.endswith("]")


def test_order_labels_and_ordered_categoricals():
    h = Hierarchy.from_order(["low", "mid", "high", "top", "max"], (2, 2))
    assert h.ancestors("mid") == ["mid", "[low, mid]", "[low, top]", "*"]
    assert h.ancestors("max") == ["max", "[max]", "*"]  # a lone group is one node
    cat = pd.Series(pd.Categorical(["b", "a"], categories=["c", "b", "a"], ordered=True))
    assert Hierarchy.from_order(cat, (2,)).leaves == ("c", "b", "a")
    with pytest.raises(ValueError, match="'a' more than once"):
        Hierarchy.from_order(["a", "b", "a"], (2,))
    with pytest.raises(ValueError, match=r"sizes\[1\]"):
        Hierarchy.from_order(["a", "b", "c"], (2, 1))


# ------------------------------------------------------------------------------------ dates


def test_dates_levels_follow_the_calendar():
    given = ["2024-03-05", "2019-12-31", "1999-01-01", "2024-03-06", "2024-11-30"]
    h = Hierarchy.from_dates(given, ("month", "quarter", "year", "decade", "century"))
    assert h.leaves == tuple(sorted(given))
    for leaf in h.leaves:
        day = datetime.date.fromisoformat(leaf)
        decade = day.year // 10 * 10
        century = day.year // 100 * 100
        assert h.ancestors(leaf) == [
            leaf, f"{day.year}-{day.month:02d}", f"{day.year}-Q{(day.month - 1) // 3 + 1}",
            str(day.year), f"{decade}-{decade + 9}", f"{century}-{century + 99}", "*"]


def test_dates_from_date_objects_and_timestamps():
    days = Hierarchy.from_dates([datetime.date(2024, 3, 5), np.datetime64("2023-01-02")],
                                ("year",))
    assert days.rows() == [("2023-01-02", "2023", "*"), ("2024-03-05", "2024", "*")]
    times = Hierarchy.from_dates(pd.to_datetime(["2024-03-05 10:00", "2024-03-05 11:30"]),
                                 ("day", "month"))
    assert times.ancestors("2024-03-05T11:30:00") == [
        "2024-03-05T11:30:00", "2024-03-05", "2024-03", "*"]
    with pytest.raises(ValueError, match="whole days already"):
        Hierarchy.from_dates(["2024-03-05"], ("day",))
    with pytest.raises(ValueError, match="not a calendar level"):
        Hierarchy.from_dates(["2024-03-05"], ("week",))
    with pytest.raises(ValueError, match="finer to coarser"):
        Hierarchy.from_dates(["2024-03-05"], ("year", "month"))
    with pytest.raises(ValueError, match="not an ISO date"):
        Hierarchy.from_dates(["05/03/2024"])
    with pytest.raises(TypeError, match="not a date"):
        Hierarchy.from_dates([20240305])


# ----------------------------------------------------------------------------- ARX round trip


@pytest.mark.parametrize("build", [
    lambda: Hierarchy.from_masking(ZIPS),
    lambda: Hierarchy.from_order([f"e{i}" for i in range(11)], (3, 2)),
    lambda: Hierarchy.from_dates(["2024-03-05", "2019-12-31", "2024-03-06"],
                                 ("month", "year", "decade")),
    lambda: Hierarchy.from_intervals(range(17, 90), [5, 10, 20]),
], ids=["masking", "order", "dates", "intervals"])
def test_to_csv_is_read_back_to_the_same_tree(build, tmp_path):
    h = build()
    path = tmp_path / "h.csv"
    h.to_csv(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == h.n_leaves
    assert [tuple(line.split(";")) for line in lines] == h.rows()
    assert same_tree(Hierarchy.from_csv(path), h)
    h.to_csv(tmp_path / "tab.csv", sep="\t")
    assert same_tree(Hierarchy.from_csv(tmp_path / "tab.csv", sep="\t"), h)


def test_to_csv_refuses_labels_it_cannot_write(tmp_path):
    h = Hierarchy.from_rows([["a;b", "*"], ["c", "*"]])
    with pytest.raises(ValueError, match="'a;b'"):
        h.to_csv(tmp_path / "h.csv")
    assert not os.path.exists(tmp_path / "h.csv")
    h.to_csv(tmp_path / "h.csv", sep="|")
    assert same_tree(Hierarchy.from_csv(tmp_path / "h.csv", sep="|"), h)


# -------------------------------------------------------------------------- used by anonymize


def test_built_hierarchies_anonymize_text_columns():
    rng = np.random.default_rng(7)
    n = 600
    zips = np.array(["02134", "02139", "02201", "02215", "10001", "10002", "00501", "00544"])
    edu = ["none", "primary", "secondary", "college", "master", "doctorate"]
    days = pd.date_range("2018-01-01", "2023-12-31", freq="17D").strftime("%Y-%m-%d")
    frame = pd.DataFrame({
        "zip": rng.choice(zips, n), "edu": rng.choice(edu, n),
        "born": rng.choice(np.asarray(days), n), "income": rng.uniform(0, 100_000, n)})
    before = frame.copy()
    trees = {"zip": Hierarchy.from_masking(frame["zip"]),
             "edu": Hierarchy.from_order(edu, (2, 2)),
             "born": Hierarchy.from_dates(frame["born"], ("month", "year"))}
    result = anonymize(frame, quasi_identifiers=["zip", "edu", "born"], sensitive="income",
                       k=5, epsilon=0.01, delta=0.5, hierarchies=trees)
    pd.testing.assert_frame_equal(frame, before)
    assert result.satisfied
    for column, tree in trees.items():
        published = result.table[column].astype(str)
        assert all(tree.covers(label, value)
                   for label, value in zip(published, frame[column], strict=True))
    # Leading zeros survive: a published ZIP is a code or a masked code of five characters.
    assert set(result.table["zip"].astype(str).str.len()) <= {1, 5}
    assert result.table.groupby("group").size().min() >= 5



# --------------------------------------------------------------------- proxanon hierarchy


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture()
def codes(tmp_path: Path) -> Path:
    path = tmp_path / "t.csv"
    path.write_text("zip;born;edu;age\n02134;2020-03-05;low;39\n00501;2021-04-01;mid;41\n"
                    "10001;2020-03-07;high;7\n;2019-12-31;low;22\n02134;2020-03-05;mid;39\n",
                    encoding="utf-8")
    return path


def test_cli_masking_keeps_the_column_as_text(tmp_path, codes, capsys):
    target = tmp_path / "zip.csv"
    status, out, err = cli(capsys, "hierarchy", codes, "--column", "zip", "--masking",
                           "-o", target)
    assert status == 0, err
    written = Hierarchy.from_csv(target)
    assert same_tree(written, Hierarchy.from_masking(["02134", "00501", "10001"]))
    assert "3 leaves" in out and "left out 1 empty cell" in out
    assert target.read_text(encoding="utf-8").splitlines()[0] == "00501;0050*;005**;00***;0****;*"


def test_cli_builders_match_the_library(tmp_path, codes, capsys):
    cases = [
        (["--column", "age", "--intervals", "5,10"],
         Hierarchy.from_intervals([39, 41, 7, 22], [5, 10])),
        (["--column", "age", "--order", "2"], Hierarchy.from_order(["7", "22", "39", "41"], (2,))),
        (["--column", "edu", "--order", "2", "--values", "low,mid,high"],
         Hierarchy.from_order(["low", "mid", "high"], (2,))),
        (["--column", "born", "--dates", "month,year", "--root", "any"],
         Hierarchy.from_dates(["2020-03-05", "2021-04-01", "2020-03-07", "2019-12-31"],
                              ("month", "year"), root="any")),
        (["--column", "age", "--masking", "--width", "3"],
         Hierarchy.from_masking(["039", "041", "007", "022"])),
    ]
    for number, (options, expected) in enumerate(cases):
        target = tmp_path / f"h{number}.csv"
        status, _, err = cli(capsys, "hierarchy", codes, *options, "-o", target)
        assert status == 0, (options, err)
        assert same_tree(Hierarchy.from_csv(target), expected), options


@pytest.mark.parametrize("options, needle", [
    (["--column", "age", "--masking"], "--width 2"),
    (["--column", "edu", "--intervals", "5"], "--intervals needs numbers"),
    (["--column", "edu", "--order", "2", "--values", "low,mid"], "'high'"),
    (["--column", "edu", "--order", "two"], "--order takes whole numbers"),
    (["--column", "zip", "--order", "2", "--width", "5"], "--width goes with --masking"),
    (["--column", "nope", "--masking"], "'nope' is not in"),
    (["--column", "born", "--dates", "week"], "not a calendar level"),
])
def test_cli_hierarchy_errors_are_one_line(tmp_path, codes, capsys, options, needle):
    status, _, err = cli(capsys, "hierarchy", codes, *options, "-o", tmp_path / "h.csv")
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "h.csv").exists()
