"""Hierarchy: loading ARX/UCI taxonomies, DFS leaf numbering, LCA, value lookup, errors.

The references here do not use the class under test: taxonomy rows are re-read with a plain
``split(';')``, and LCAs are computed by brute force as the longest common prefix of the
root-first label paths of all the leaves involved (nodes are compared by path, not label).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon.datasets import load_adult
from proxanon.hierarchy import Hierarchy
from tests.conftest import ARX_ADULT as DATA
from tests.conftest import UCI_ADULT

ARX_FILES = sorted(DATA.glob("adult_hierarchy_*.csv"))
UCI_FILES = sorted(UCI_ADULT.glob("adult_*.txt"))
ALL_FILES = ARX_FILES + UCI_FILES
FILE_IDS = [f"{path.parent.name}/{path.name}" for path in ALL_FILES]


def read_rows(path: Path) -> list[list[str]]:
    """The file's rows (leaf first), parsed independently of Hierarchy."""
    text = path.read_text(encoding="utf-8")
    return [[f.strip() for f in line.split(";")] for line in text.splitlines() if line.strip()]


@cache
def load(path: Path) -> Hierarchy:
    return Hierarchy.from_csv(path)


def node_path(h: Hierarchy, node: int) -> tuple[str, ...]:
    """Root-first labels of a node, by walking the parent array."""
    labels = []
    while node >= 0:
        labels.append(h.labels[node])
        node = int(h.parent[node])
    return tuple(reversed(labels))


def common_prefix(paths: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The deepest node shared by all the root-first paths: the brute-force LCA."""
    prefix: list[str] = []
    for level in zip(*paths, strict=False):
        if any(label != level[0] for label in level):
            break
        prefix.append(level[0])
    return tuple(prefix)


def leaf_paths(rows: Sequence[Sequence[str]]) -> dict[str, tuple[str, ...]]:
    return {row[0]: tuple(reversed(row)) for row in rows}


def test_the_shipped_taxonomy_files_are_there():
    # Guards the parametrized tests below against silently running on zero files: the ARX
    # hierarchies are the package's own (what load_adult reads), the UCI trees ship with the
    # tests.
    assert len(ARX_FILES) == 9
    assert sorted(load_adult().hierarchy_files.values()) == ARX_FILES
    assert [path.name for path in UCI_FILES] == [
        f"adult_{name}.txt" for name in ("marital_status", "native_country", "occupation",
                                         "race", "relationship", "sex", "workclass")]


# --------------------------------------------------------------------------- loading files


@pytest.mark.parametrize("path", ALL_FILES, ids=FILE_IDS)
def test_taxonomy_files_load_and_read_back(path):
    rows = read_rows(path)
    h = load(path)
    assert set(h.leaves) == {row[0] for row in rows}
    assert len(h.leaves) == len(rows) == h.n_leaves == len(h)
    assert h.height == max(len(row) for row in rows) - 1
    assert h.root == "*"
    assert h.labels[: h.n_leaves] == h.leaves
    for row in rows:
        assert h.ancestors(row[0]) == row
        leaf = int(h.leaf_index([row[0]])[0])
        assert h.leaves[leaf] == row[0]
        assert node_path(h, leaf) == tuple(reversed(row))
        assert h.depth[leaf] == len(row) - 1
        for label in row:
            assert h.covers(label, row[0])


def test_arx_files_have_uniform_rows_and_uci_workclass_is_ragged():
    for path in ARX_FILES:
        assert len({len(row) for row in read_rows(path)}) == 1, path
    workclass = load(UCI_ADULT / "adult_workclass.txt")
    private, self_emp = workclass.leaf_index(["Private", "Self-emp-inc"])
    assert workclass.depth[private] == 1
    assert workclass.depth[self_emp] == 2
    assert workclass.height == 2
    assert workclass.ancestors("Self-emp-inc") == ["Self-emp-inc", "Self-employ", "*"]


def test_arx_hierarchies_contain_every_value_of_the_data():
    frame = pd.read_csv(DATA / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    assert len(frame) == 30162
    for column in frame.columns:
        h = load(DATA / f"adult_hierarchy_{column}.csv")
        index = h.leaf_index(frame[column], column)
        assert index.dtype == np.int64
        assert (np.asarray(h.leaves, dtype=object)[index] == frame[column].to_numpy()).all()
    # age as numbers: int64 and float64 columns find the same leaves as the strings
    age = load(DATA / "adult_hierarchy_age.csv")
    as_text = age.leaf_index(frame["age"], "age")
    assert (age.leaf_index(frame["age"].astype("int64"), "age") == as_text).all()
    assert (age.leaf_index(frame["age"].astype("float64").to_numpy(), "age") == as_text).all()


def test_bundled_adult_categoricals_match_their_hierarchies(adult_frame):
    bundled = load_adult()
    for column, file in bundled.hierarchy_files.items():
        h = Hierarchy.from_csv(file)
        index = h.leaf_index(adult_frame[column], column)  # Categorical (or int64 for age)
        expected = adult_frame[column].astype(str).to_numpy()
        assert (np.asarray(h.leaves, dtype=object)[index] == expected).all()


# --------------------------------------------------------------------------- DFS structure


def check_structure(h: Hierarchy) -> None:
    """Every node's leaf range is exactly the set of leaves below it; arrays agree."""
    n_nodes = len(h.labels)
    below: list[set[int]] = [set() for _ in range(n_nodes)]
    for leaf in range(h.n_leaves):
        node = leaf
        while node >= 0:
            below[node].add(leaf)
            node = int(h.parent[node])
    for node in range(n_nodes):
        first, last = int(h.first_leaf[node]), int(h.last_leaf[node])
        assert below[node] == set(range(first, last + 1)), h.labels[node]
        assert h.leaf_counts[node] == len(below[node])
        up = int(h.parent[node])
        assert h.depth[node] == (0 if up < 0 else h.depth[up] + 1)
    roots = np.flatnonzero(h.parent == -1)
    assert roots.tolist() == [h.n_leaves]
    assert h.labels[h.n_leaves] == h.root
    assert h.leaf_counts[h.n_leaves] == h.n_leaves
    assert (h.leaf_counts[: h.n_leaves] == 1).all()
    assert (h.leaf_counts[h.n_leaves:] > 0).all()  # no childless inner node
    for name in ("parent", "depth", "first_leaf", "last_leaf"):
        array = getattr(h, name)
        assert len(array) == n_nodes
    assert h.parent.dtype == h.depth.dtype == np.int32
    assert h.leaf_counts.dtype == h.first_leaf.dtype == h.last_leaf.dtype == np.int64
    assert h.height == int(h.depth[: h.n_leaves].max())


@pytest.mark.parametrize("path", ALL_FILES, ids=FILE_IDS)
def test_leaf_ranges_are_contiguous_for_files(path):
    check_structure(load(path))


def test_leaves_are_numbered_depth_first_with_children_in_first_appearance_order():
    h = Hierarchy.from_rows([
        ("a", "X", "*"), ("b", "Y", "*"), ("c", "X", "*"), ("d", "*"), ("e", "Z", "Y", "*"),
    ])
    assert h.leaves == ("a", "c", "b", "e", "d")
    assert h.labels[h.n_leaves:] == ("*", "X", "Y", "Z")
    check_structure(h)
    x = h.labels.index("X")
    assert (h.first_leaf[x], h.last_leaf[x]) == (0, 1)


def test_arrays_are_read_only():
    h = load(DATA / "adult_hierarchy_education.csv")
    with pytest.raises(ValueError):
        h.parent[0] = 3
    with pytest.raises(ValueError):
        h.leaf_counts[0] = 3


# --------------------------------------------------------------------------- LCA


@st.composite
def random_rows(draw: st.DrawFn) -> list[list[str]]:
    """Rows of a random ragged tree: branches share inner nodes, each labelled by its path
    (a label names one node), and leaves are unique."""
    n = draw(st.integers(1, 25))
    rows = []
    for i in range(n):
        steps = draw(st.lists(st.sampled_from(["A", "B", "C", "Other"]), max_size=4))
        inner = ["/".join(steps[:depth]) for depth in range(1, len(steps) + 1)]
        rows.append([f"L{i}", *reversed(inner), "*"])
    return draw(st.permutations(rows))


def check_lca(h: Hierarchy, rows: Sequence[Sequence[str]], data: st.DataObject) -> None:
    paths = leaf_paths(rows)
    labels = sorted(paths)
    subset = data.draw(st.lists(st.sampled_from(labels), min_size=1, max_size=12, unique=True))
    expected = common_prefix([paths[leaf] for leaf in subset])
    index = h.leaf_index(subset)
    assert h.lca_label(index) == expected[-1]
    node = int(h.lca(index.min(), index.max()))
    assert node_path(h, node) == expected
    assert h.leaf_counts[node] == sum(path[: len(expected)] == expected for path in paths.values())

    pairs = data.draw(st.lists(st.tuples(st.sampled_from(labels), st.sampled_from(labels)),
                               min_size=1, max_size=20))
    a = h.leaf_index([p for p, _ in pairs])
    b = h.leaf_index([q for _, q in pairs])
    nodes = h.lca(a, b)
    assert nodes.shape == a.shape
    for (p, q), got in zip(pairs, nodes.tolist(), strict=True):
        assert node_path(h, got) == common_prefix([paths[p], paths[q]])


@settings(max_examples=150, deadline=None)
@given(path=st.sampled_from(ALL_FILES), data=st.data())
def test_lca_matches_brute_force_on_the_adult_taxonomies(path, data):
    check_lca(load(path), read_rows(path), data)


@settings(max_examples=200, deadline=None)
@given(rows=random_rows(), data=st.data())
def test_lca_matches_brute_force_on_random_trees(rows, data):
    h = Hierarchy.from_rows(rows)
    check_structure(h)
    assert h.height == max(len(row) for row in rows) - 1
    for row in rows:
        assert h.ancestors(row[0]) == list(row)
    check_lca(h, rows, data)


def test_lca_of_a_leaf_with_itself_is_the_leaf_and_shapes_broadcast():
    h = load(UCI_ADULT / "adult_workclass.txt")
    assert h.lca([2, 5], [2, 5]).tolist() == [2, 5]
    grid = h.lca(np.arange(8)[:, None], np.arange(8)[None, :])
    assert grid.shape == (8, 8)
    assert (grid == grid.T).all()
    assert h.lca_label([h.leaves.index("Private")]) == "Private"
    assert h.lca_label(h.leaf_index(["Self-emp-inc", "Self-emp-not-inc"])) == "Self-employ"
    assert h.lca_label(h.leaf_index(["Self-emp-inc", "Private"])) == "*"


def test_lca_rejects_bad_indices():
    h = load(DATA / "adult_hierarchy_sex.csv")
    with pytest.raises(ValueError, match=r"a holds leaf index 2, outside 0\.\.1"):
        h.lca([2], [0])
    with pytest.raises(ValueError, match="leaf_indices is empty"):
        h.lca_label([])
    with pytest.raises(TypeError, match="integer leaf indices"):
        h.lca_label(["Male"])


# --------------------------------------------------------------------------- same labels


def test_a_label_on_a_leaf_and_on_another_branch_is_refused():
    # A published 'Other' would not say whether it is the leaf 'Other' or the class {x, y}.
    with pytest.raises(ValueError, match="label 'Other' names two nodes"):
        Hierarchy.from_rows([("Other", "Misc", "*"), ("x", "Other", "*"), ("y", "Other", "*"),
                             ("z", "Misc", "*")])


def test_covers():
    h = load(DATA / "adult_hierarchy_education.csv")
    assert h.covers("Masters", "Masters")
    assert h.covers("Graduate", "Masters")
    assert h.covers("Higher education", "Masters")
    assert h.covers("*", "Masters")
    assert not h.covers("Undergraduate", "Masters")
    assert not h.covers("Secondary education", "Masters")
    assert not h.covers("Doctorate", "Masters")
    assert not h.covers("no such label", "Masters")
    with pytest.raises(ValueError, match="'Graduate' is not a leaf.*inner node"):
        h.covers("*", "Graduate")


# --------------------------------------------------------------------------- leaf_index


def test_leaf_index_accepts_common_containers_and_canonical_numbers():
    age = load(DATA / "adult_hierarchy_age.csv")
    i39 = age.leaves.index("39")
    inputs = [
        [39, 39.0, "39", np.int64(39), np.float32(39.0), " 39 "],
        np.array([39, 39]), np.array([39.0, 39.0]), pd.Series([39, 39]),
        pd.Series(["39", "39"], dtype="category"), pd.Index([39.0]), (39,),
        pd.array([39, 39], dtype="Int64"),
    ]
    for values in inputs:
        result = age.leaf_index(values, "age")
        assert result.dtype == np.int64
        assert result.tolist() == [i39] * len(values)
    assert age.leaf_index(39).tolist() == [i39]
    assert age.leaf_index([]).tolist() == []


def test_leaf_index_ignores_unused_categories():
    sex = load(DATA / "adult_hierarchy_sex.csv")
    values = pd.Categorical(["Male", "Female", "Male"], categories=["Female", "Male", "Other"])
    assert sex.leaf_index(values, "sex").tolist() == [0, 1, 0]


def test_leaf_index_on_a_million_values():
    h = load(DATA / "adult_hierarchy_native-country.csv")
    rng = np.random.default_rng(0)
    codes = rng.integers(0, h.n_leaves, 1_000_000)
    values = pd.Series(np.asarray(h.leaves, dtype=object)[codes])
    assert (h.leaf_index(values, "native-country") == codes).all()


def test_leaf_index_names_the_column_and_the_first_five_unknown_values():
    age = load(DATA / "adult_hierarchy_age.csv")
    values = [30, 150, 151, 7.5, 150, 152, 153, 154, 155, 40]
    with pytest.raises(ValueError) as error:
        age.leaf_index(values, "age")
    message = str(error.value)
    assert message.startswith("column 'age': 7 value(s) not in its hierarchy, e.g. "
                              "'150', '151', '7.5', '152', '153', ...; add them as leaves")
    assert "'154'" not in message
    assert "missing" not in message
    with pytest.raises(ValueError, match=r"^values: 1 value\(s\) not in the hierarchy, e\.g\. "
                                         r"'0'; add them"):
        age.leaf_index(np.array([0, 1]))


@pytest.mark.parametrize("values", [
    [30, None], [30.0, float("nan")], np.array([30.0, np.nan]), pd.Series(["30", None]),
    pd.Series([30, None], dtype="Int64"), pd.Categorical(["30", None]),
])
def test_leaf_index_reports_missing_values(values):
    age = load(DATA / "adult_hierarchy_age.csv")
    with pytest.raises(ValueError, match=r"^column 'age': 1 missing value\(s\) \(None/NaN\), "
                                         r"first at position 1; .*drop or impute"):
        age.leaf_index(values, "age")


def test_leaf_index_reports_unknown_and_missing_values_together():
    age = load(DATA / "adult_hierarchy_age.csv")
    with pytest.raises(ValueError, match=r"'200'.*; also 2 missing value\(s\)"):
        age.leaf_index([None, 200, np.nan], "age")


def test_leaf_index_rejects_bad_shapes_and_types():
    h = load(DATA / "adult_hierarchy_sex.csv")
    with pytest.raises(ValueError, match="one-dimensional"):
        h.leaf_index(np.array([["Male"], ["Female"]]), "sex")
    with pytest.raises(TypeError, match="pass a single column"):
        h.leaf_index(pd.DataFrame({"sex": ["Male"]}), "sex")
    with pytest.raises(TypeError, match="column 'sex'.*cannot be matched"):
        h.leaf_index([b"Male"], "sex")


def test_ancestors_of_an_unknown_leaf():
    h = load(DATA / "adult_hierarchy_sex.csv")
    with pytest.raises(ValueError, match="leaf 'Unknown' is not a leaf"):
        h.ancestors("Unknown")


# --------------------------------------------------------------------------- row errors


def test_duplicate_leaf_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"leaf 'a' is listed twice: at row 1 .* row 3"):
        Hierarchy.from_rows([("a", "X", "*"), ("b", "X", "*"), ("a", "X", "*")])
    with pytest.raises(ValueError, match=r"leaf 'a' is listed twice: at row 1 .* row 2"):
        Hierarchy.from_rows([("a", "X", "*"), ("a", "Y", "*")])


def test_mismatched_roots_name_both_roots_and_the_row():
    with pytest.raises(ValueError, match=r"row 3 ends at root 'ALL' but row 1 ends at root '\*'"):
        Hierarchy.from_rows([("a", "*"), ("b", "*"), ("c", "ALL")])


def test_empty_field_and_single_field_rows():
    with pytest.raises(ValueError, match=r"row 2 has an empty field at position 2 of 3"):
        Hierarchy.from_rows([("a", "X", "*"), ("b", " ", "*")])
    with pytest.raises(ValueError, match=r"row 2 has an empty field at position 1"):
        Hierarchy.from_rows([("a", "*"), ("", "*")])
    with pytest.raises(ValueError, match=r"row 2 has a single label 'b'"):
        Hierarchy.from_rows([("a", "*"), ("b",)])
    with pytest.raises(ValueError, match=r"row 1 has a single label '\*'"):
        Hierarchy.from_rows([("*",)])


def test_a_label_cannot_be_both_leaf_and_inner_node_on_the_same_path():
    with pytest.raises(ValueError, match=r"'A' is a leaf at row 1 but an inner node at row 2"):
        Hierarchy.from_rows([("A", "*"), ("B", "A", "*")])
    with pytest.raises(ValueError, match=r"'A' is a leaf at row 2 but an inner node at row 1"):
        Hierarchy.from_rows([("B", "A", "*"), ("A", "*")])


def test_rows_must_be_sequences_and_not_empty():
    with pytest.raises(TypeError, match="row 1 is a string"):
        Hierarchy.from_rows(["a;*"])
    with pytest.raises(ValueError, match="no rows"):
        Hierarchy.from_rows([])
    with pytest.raises(ValueError, match="no rows"):
        Hierarchy.from_rows([(), ("", "")])


def test_blank_rows_are_skipped_and_fields_stripped():
    h = Hierarchy.from_rows([("a ", "\tX", "*\r"), (), ("b", "X", "*", "")])
    assert h.leaves == ("a", "b")
    assert h.ancestors("b") == ["b", "X", "*"]
    assert Hierarchy(iter([("a", "*")])).leaves == ("a",)
    assert Hierarchy.from_rows([(1, "0-4", "*"), (2.0, "0-4", "*")]).leaves == ("1", "2")


def test_from_csv_handles_crlf_bom_blank_lines_and_names_the_file(tmp_path):
    good = tmp_path / "good.csv"
    good.write_bytes("\ufeffa;X;*\r\n\r\nb;*;\r\nc;X;*".encode())
    h = Hierarchy.from_csv(good)
    assert h.leaves == ("a", "c", "b")
    assert h.ancestors("a") == ["a", "X", "*"]
    assert Hierarchy.from_csv(str(good)).leaves == h.leaves

    comma = tmp_path / "comma.csv"
    comma.write_text("a,X,*\nb,X,*\n")
    assert Hierarchy.from_csv(comma, sep=",").leaves == ("a", "b")

    bad = tmp_path / "bad.csv"
    bad.write_text("a;X;*\n\nb;;*\n")
    with pytest.raises(ValueError, match=re.escape(f"{bad}: row 3 has an empty field")):
        Hierarchy.from_csv(bad)
    with pytest.raises(ValueError, match="sep must be a non-empty string"):
        Hierarchy.from_csv(good, sep="")


# --------------------------------------------------------------------------- from_dict, flat


def test_from_dict():
    h = Hierarchy.from_dict({"*": {"Government": ["Federal-gov", "State-gov"], "Private": None}})
    assert h.leaves == ("Federal-gov", "State-gov", "Private")
    assert h.root == "*"
    assert h.height == 2
    assert h.ancestors("State-gov") == ["State-gov", "Government", "*"]
    assert h.ancestors("Private") == ["Private", "*"]
    check_structure(h)

    implicit = Hierarchy.from_dict({"Gov": {"Fed": ("a", "b"), "c": None}, "d": None})
    assert implicit.root == "*"
    assert implicit.leaves == ("a", "b", "c", "d")
    assert implicit.ancestors("a") == ["a", "Fed", "Gov", "*"]
    assert Hierarchy.from_dict({"ALL": ["x", "y"]}).root == "ALL"


def test_from_dict_errors():
    with pytest.raises(ValueError, match="single top-level key 'x' is taken as the root"):
        Hierarchy.from_dict({"x": None})
    with pytest.raises(TypeError, match="sets have no order"):
        Hierarchy.from_dict({"*": {"a", "b"}})
    with pytest.raises(ValueError, match="'\\*' > 'G' has an empty collection of children"):
        Hierarchy.from_dict({"*": {"G": [], "b": None}})
    with pytest.raises(TypeError, match="may hold only leaf labels"):
        Hierarchy.from_dict({"*": ["a", {"b": None}]})
    with pytest.raises(ValueError, match=r"leaf 'a' is listed twice.*'G' > 'a'.*'H' > 'a'"):
        Hierarchy.from_dict({"G": ["a"], "H": ["a"]})
    with pytest.raises(ValueError, match="empty mapping"):
        Hierarchy.from_dict({})


def test_flat():
    h = Hierarchy.flat([10, 2, 2.0, 33, 10])
    assert h.leaves == ("2", "10", "33")
    assert h.height == 1
    assert all(h.ancestors(leaf) == [leaf, "*"] for leaf in h.leaves)
    assert Hierarchy.flat(["b", "a", 10, "b"], root="ALL").leaves == ("10", "a", "b")
    assert Hierarchy.flat(pd.Series(["x", "y"], dtype="category")).root == "*"
    with pytest.raises(ValueError, match=r"1 missing value\(s\)"):
        Hierarchy.flat(["a", None])
    with pytest.raises(ValueError, match="values is empty"):
        Hierarchy.flat([])


# --------------------------------------------------------------------------- from_intervals


def test_from_intervals_reproduces_the_arx_age_bands():
    # ARX puts ages 1..5 in one band but labels it "0-4" (6..10 is "5-9", and so on at every
    # level). origin=1 gives exactly ARX's bands; only the labels are one higher.
    rows = read_rows(DATA / "adult_hierarchy_age.csv")
    h = Hierarchy.from_intervals(range(1, 101), [5, 10, 20], origin=1)
    assert h.leaves == tuple(row[0] for row in rows)
    assert h.height == 4

    def shifted(label: str) -> str:
        if label == "*":
            return label
        low, high = (int(x) for x in label.split("-"))
        return f"{low + 1}-{high + 1}"

    for row in rows:
        assert h.ancestors(row[0]) == [row[0], *(shifted(label) for label in row[1:])]
    # same tree shape: at every level, the same leaves are grouped together
    arx = load(DATA / "adult_hierarchy_age.csv")
    for level in range(1, 4):
        arx_groups = {frozenset(r[0] for r in rows if r[level] == row[level]) for row in rows}
        ours = {row[0]: h.ancestors(row[0])[level] for row in rows}
        our_groups = {frozenset(k for k in ours if ours[k] == ours[row[0]]) for row in rows}
        assert arx_groups == our_groups
    assert arx.leaf_counts[arx.n_leaves:].tolist() == h.leaf_counts[h.n_leaves:].tolist()
    # with the default origin 0 the bands differ from ARX's: 5 starts a new band
    assert Hierarchy.from_intervals(range(1, 101), [5, 10, 20]).ancestors(5)[1] == "5-9"


def test_from_intervals_labels():
    h = Hierarchy.from_intervals([17, 23, 90, 23], [10, 50])
    assert h.leaves == ("17", "23", "90")
    assert h.ancestors(17) == ["17", "10-19", "0-49", "*"]
    assert h.ancestors("90") == ["90", "90-99", "50-99", "*"]

    f = Hierarchy.from_intervals([0.05, 0.3, 0.31, 0.99, -0.2], [0.1, 0.5], root="any")
    assert f.leaves == ("-0.2", "0.05", "0.3", "0.31", "0.99")
    assert f.ancestors(0.3) == ["0.3", "[0.3, 0.4)", "[0, 0.5)", "any"]
    assert f.ancestors(-0.2) == ["-0.2", "[-0.2, -0.1)", "[-0.5, 0)", "any"]
    assert f.ancestors(0.99) == ["0.99", "[0.9, 1)", "[0.5, 1)", "any"]

    # a non-integral origin gives interval labels even for integer values
    assert Hierarchy.from_intervals([1, 2], [2], origin=0.5).ancestors(1)[1] == "[0.5, 2.5)"
    # no widths: flat
    assert Hierarchy.from_intervals([3, 1], []).labels == ("1", "3", "*")
    # bands that :g would print alike get full-precision labels
    fine = Hierarchy.from_intervals([1e6 + 0.25, 1e6 + 0.75], [0.5])
    assert fine.ancestors(1e6 + 0.25)[1] != fine.ancestors(1e6 + 0.75)[1]


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=40),
    base=st.integers(1, 7),
    ratios=st.lists(st.integers(2, 4), max_size=3),
    origin=st.integers(-50, 50),
)
def test_integer_intervals_contain_their_values_and_nest(values, base, ratios, origin):
    widths = [base]
    for ratio in ratios:
        widths.append(widths[-1] * ratio)
    h = Hierarchy.from_intervals(values, widths, origin=origin)
    check_structure(h)
    assert h.n_leaves == len(set(values))
    assert h.height == len(widths) + 1
    for value in set(values):
        chain = h.ancestors(value)[1:-1]
        bounds = [tuple(int(x) for x in re.fullmatch(r"(-?\d+)-(-?\d+)", c).groups())
                  for c in chain]
        for (low, high), width in zip(bounds, widths, strict=True):
            assert low <= value <= high
            assert high - low + 1 == width
            assert (low - origin) % width == 0
        for (low, high), (up_low, up_high) in zip(bounds, bounds[1:], strict=False):
            assert up_low <= low and high <= up_high


def test_from_intervals_errors():
    with pytest.raises(ValueError, match=r"widths\[1\] = 12 is not an integer multiple of "
                                         r"widths\[0\] = 5.*would not nest"):
        Hierarchy.from_intervals([1, 2], [5, 12])
    with pytest.raises(ValueError, match="strictly increasing"):
        Hierarchy.from_intervals([1, 2], [10, 5])
    with pytest.raises(ValueError, match="strictly increasing"):
        Hierarchy.from_intervals([1, 2], [5, 5])
    with pytest.raises(ValueError, match=r"widths\[0\] = 0 must be positive"):
        Hierarchy.from_intervals([1, 2], [0, 5])
    with pytest.raises(ValueError, match=r"widths\[1\] = -5 must be positive"):
        Hierarchy.from_intervals([1, 2], [5, -5])
    with pytest.raises(ValueError, match=r"values contains 1 missing value\(s\)"):
        Hierarchy.from_intervals([1.0, float("nan")], [5])
    with pytest.raises(ValueError, match=r"values contains 1 missing value\(s\)"):
        Hierarchy.from_intervals(pd.Series([1, None], dtype="Int64"), [5])
    with pytest.raises(TypeError, match="values must be numbers"):
        Hierarchy.from_intervals(["a", "b"], [5])
    with pytest.raises(TypeError, match="widths must be a sequence"):
        Hierarchy.from_intervals([1, 2], 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="values is empty"):
        Hierarchy.from_intervals([], [5])


def test_repr_and_len():
    h = load(DATA / "adult_hierarchy_race.csv")
    assert len(h) == 5
    assert repr(h).startswith("Hierarchy(root='*', n_leaves=5, height=1, nodes=6, leaves=['White'")


# --------------------------------------------------------------------------- bad input at the edges


def test_a_file_in_another_encoding_is_named_with_its_column_line_and_the_fix(tmp_path):
    path = tmp_path / "city.csv"
    path.write_bytes("Paris;France;*\nK\u00f6ln;Germany;*\n".encode("latin-1"))
    with pytest.raises(ValueError, match=(
            rf"{re.escape(str(path))} \(hierarchy of column 'city'\): line 2 is not valid "
            r"utf-8 \(byte 0xf6 at offset 16\); pass the file's encoding, e.g. "
            r"encoding='latin-1'")):
        Hierarchy.from_csv(path, column="city")
    h = Hierarchy.from_csv(path, encoding="latin-1")
    assert h.leaves == ("Paris", "K\u00f6ln")
    with pytest.raises(ValueError, match=r"city.csv: unknown encoding 'utf-9'"):
        Hierarchy.from_csv(path, encoding="utf-9")


def test_a_node_labelled_like_the_root_is_refused_where_it_is(tmp_path):
    # A published '*' must mean "any value": a leaf or inner node also called '*' would make
    # it ambiguous.
    path = tmp_path / "star.csv"
    path.write_text("a;*\n*;*\n", encoding="utf-8")
    with pytest.raises(ValueError, match=(
            rf"{re.escape(str(path))}: row 2: a leaf below the root is labelled '\*' like "
            r"the root \(path '\*' > '\*'\)")):
        Hierarchy.from_csv(path)
    with pytest.raises(ValueError, match=r"row 2: an inner node below the root is labelled '\*'"):
        Hierarchy.from_rows([["a", "*"], ["b", "*", "*"]])
    with pytest.raises(ValueError, match=r"flat: value '\*': a leaf below the root"):
        Hierarchy.flat(["a", "*"])
    with pytest.raises(ValueError, match=r"a leaf below the root is labelled 'Any'"):
        Hierarchy.from_dict({"Any": {"x": ["Any", "y"]}})


@pytest.mark.parametrize(
    ("values", "origin", "widths"),
    [
        ([1e308, -1e308, 0.5], 0, [10]),    # band numbers past int64 (were cast to garbage)
        ([0.5, 1.5], 1e300, [10]),          # far from origin
        ([2**62, 0], 0, [10]),              # integers whose band ends would leave int64
    ],
    ids=["huge floats", "far origin", "huge integers"],
)
def test_from_intervals_refuses_values_whose_bands_cannot_be_numbered(values, origin, widths):
    with pytest.raises(ValueError, match=r"too large or too far from origin to number its band"):
        Hierarchy.from_intervals(np.array(values), widths, origin=origin)


def test_booleans_and_the_numbers_one_and_zero_stay_apart():
    # pandas hashes True like 1: a mixed column matched the number 1 to the leaf "True".
    for values in (np.array([True, 1, 0, False, 1.0], dtype=object),
                   np.array([1, True, 0, False, "x"], dtype=object)):
        h = Hierarchy.flat(values)
        assert set(h.leaves) == {"0", "1", "False", "True"} | ({"x"} & set(values))
        want = [str(v) for v in values]
        assert [h.leaves[i] for i in h.leaf_index(values)] == [w.removesuffix(".0")
                                                               for w in want]


def test_from_intervals_refuses_what_int64_band_numbers_cannot_hold():
    with pytest.raises(ValueError, match=r"values holds 18446744073709551615, beyond int64"):
        Hierarchy.from_intervals(np.array([2**64 - 1, 0], dtype=np.uint64), [5])
    with pytest.raises(ValueError, match=r"widths\[1\] = 1e\+300 is more than 2\*\*53 times"):
        Hierarchy.from_intervals([1.5, 2.0], [1e-300, 1e300])


@pytest.mark.parametrize("rows, line", [
    ([["M", "F", "*"], ["F", "M", "*"]], "row 2"),
    ([["a", "x", "*"], ["b", "y", "*"], ["c", "x", "q", "*"]], "row 3"),
    ([["a", "g", "*"], ["b", "g", "h", "*"]], "row 2"),
])
def test_a_label_naming_two_nodes_is_refused_with_its_row(rows, line):
    with pytest.raises(ValueError, match=f"names two nodes: .* at {line}; .*rename one"):
        Hierarchy.from_rows(rows)


def test_a_cyclic_csv_file_is_refused_naming_its_lines(tmp_path):
    path = tmp_path / "sex.csv"
    path.write_text("M;F;*\nF;M;*\n")
    with pytest.raises(ValueError, match="names two nodes") as caught:
        Hierarchy.from_csv(path)
    assert "line" in str(caught.value) or "row" in str(caught.value)


@st.composite
def taxonomy_files(draw: st.DrawFn) -> str:
    """The text of an ARX-style taxonomy file, well formed or not: labels drawn from a few
    names (so that some repeat, name two nodes or sit at two depths), white space around
    fields, trailing separators, blank lines and CRLF line ends."""
    names = ["a", "b", "c", "x y", "*", "b2"]
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        depth = draw(st.integers(0, 3))
        row = [draw(st.sampled_from(names)) for _ in range(depth)] + ["*"]
        pad = draw(st.sampled_from(["", " ", "\t"]))
        text = ";".join(f"{pad}{label}{pad}" for label in row)
        text += draw(st.sampled_from(["", ";", "; ;", "\r"]))
        lines.append(text if draw(st.booleans()) else "")
    return "\n".join(lines)


@settings(max_examples=300, deadline=None)
@given(text=taxonomy_files())
def test_a_file_reads_as_its_rows_do(tmp_path_factory, text: str) -> None:
    """``from_csv`` (which reads a file's text in one pass) builds the same taxonomy as
    ``from_rows`` of the same rows split by hand, and refuses the same files with the same
    words (the file's name aside)."""
    path = tmp_path_factory.mktemp("tax") / "t.csv"
    path.write_text(text, encoding="utf-8", newline="")
    rows = [line.split(";") for line in text.split("\n")]
    try:
        expected = Hierarchy.from_rows(rows)
    except ValueError as exc:
        with pytest.raises(ValueError) as raised:
            Hierarchy.from_csv(path)
        # from_rows names no file: its rows are "rows", the file's are the file.
        assert str(raised.value).replace(f"{path}: ", "") == str(exc).removeprefix("rows: ")
        return
    read = Hierarchy.from_csv(path)
    assert read.labels == expected.labels
    assert np.array_equal(read.parent, expected.parent)
    assert np.array_equal(read.first_leaf, expected.first_leaf)
    # Each row is its leaf's path to the root, leaves in the order of the rows.
    kept = [[f.strip() for f in row] for row in rows if any(f.strip() for f in row)]
    kept = [row[:max(i for i, f in enumerate(row) if f) + 1] for row in kept]
    assert list(read.leaves) == [row[0] for row in kept]
    for leaf, row in enumerate(kept):
        walked, node = [], leaf
        while node >= 0:
            walked.append(read.labels[node])
            node = int(read.parent[node])
        assert walked == row
