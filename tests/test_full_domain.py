"""Full-domain recoding (``recoding="global"``, docs/design/full-domain.md): one hierarchy level
per quasi-identifier for every kept row, the level vector of lowest loss within the
suppression limit. Each result is checked against every node of the lattice enumerated here,
and on Adult against the nodes ARX's optimal search (Flash) publishes."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import Hierarchy, InfeasibleError, LDiversity, anonymize, audit
from proxanon.datasets import load_adult
from proxanon.evaluate import score_table

REGION = Hierarchy.from_dict({"*": {"north": ["n1", "n2", "n3"], "south": ["s1", "s2"],
                                    "east": ["e1", "e2", "e3", "e4"]}})
AGE = Hierarchy.from_intervals(list(range(20, 40)), [5, 10, 20], origin=20)
SEX = Hierarchy.from_dict({"*": ["F", "M"]})
TREES = {"region": REGION, "age": AGE, "sex": SEX}
QI = ["region", "age", "sex"]


def ancestor(tree: Hierarchy, leaf: int, level: int) -> int:
    node = leaf
    for _ in range(level):
        node = node if tree.parent[node] < 0 else int(tree.parent[node])
    return node


def brute_force(frame: pd.DataFrame, k: int, ell: int, budget: int) -> float:
    """The lowest loss (NCP sum over rows, d per suppressed row) of a node within the budget,
    every node of the lattice tried; inf where none holds."""
    leaves = {c: [TREES[c].leaves.index(str(v)) for v in frame[c]] for c in QI}
    best = np.inf
    for levels in itertools.product(*(range(TREES[c].height + 1) for c in QI)):
        keys = [tuple(ancestor(TREES[c], leaves[c][r], lv) for c, lv in zip(QI, levels,
                                                                            strict=True))
                for r in range(len(frame))]
        classes: dict[tuple[int, ...], list[int]] = {}
        for r, key in enumerate(keys):
            classes.setdefault(key, []).append(r)
        cost, left_out = 0.0, 0
        for key, rows in classes.items():
            if len(rows) < k or (ell > 1 and frame["job"].iloc[rows].nunique() < ell):
                left_out += len(rows)
                cost += len(rows) * len(QI)
                continue
            for c, node in zip(QI, key, strict=True):
                tree = TREES[c]
                cost += len(rows) * (0.0 if node < tree.n_leaves
                                     else tree.leaf_counts[node] / tree.n_leaves)
        if left_out <= budget:
            best = min(best, cost)
    return best


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, int, int, float]:
    n = draw(st.integers(4, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frame = pd.DataFrame({
        "region": rng.choice(REGION.leaves[:draw(st.integers(1, 9))], n),
        "age": rng.integers(20, 20 + draw(st.integers(1, 20)), n),
        "sex": rng.choice(["F", "M"][:draw(st.integers(1, 2))], n),
        "job": rng.choice(list("abcd"), n),
        "pay": rng.integers(0, 5, n) * 1000.0,
    })
    k = draw(st.integers(1, 6).filter(lambda value: value <= n))
    return frame, k, draw(st.sampled_from([0, 0, 2])), draw(st.sampled_from([0.0, 0.1, 0.3]))


@settings(max_examples=60, deadline=None)
@given(case=tables())
@pytest.mark.slow
def test_the_node_published_is_the_lowest_loss_node_that_holds(case) -> None:
    """On small random tables, the published node's loss (over every row, a suppressed row
    costing 1 per QI) is the lowest of every node of the lattice that holds within the limit;
    each QI column holds nodes of the level the report names; the classes hold k and the
    criterion; the audit of the published table holds."""
    frame, k, ell, share = case
    before = frame.copy()
    criteria = [LDiversity(ell, column="job")] if ell > 1 else []
    extra = {"on_infeasible": "suppress", "max_suppression": share} if share else {}
    best = brute_force(frame, k, ell, int(share * len(frame)))
    common = dict(quasi_identifiers=QI, sensitive=["pay"], k=k, delta=0, hierarchies=TREES,
                  criteria=criteria, recoding="global", **extra)
    if not np.isfinite(best):
        with pytest.raises(InfeasibleError, match="row"):
            anonymize(frame, **common)
        return
    result = anonymize(frame, **common)
    pd.testing.assert_frame_equal(frame, before)
    kept = np.flatnonzero(result.groups >= 0)
    score = score_table(frame, result.table.drop(columns="group"), quasi_identifiers=QI,
                        sensitive=["pay"], hierarchies=TREES, suppressed=result.groups < 0)
    assert score.gcp * len(frame) * len(QI) == pytest.approx(best, abs=1e-9)
    assert result.report.method == "full-domain" and set(result.report.levels) == set(QI)
    released = frame.iloc[kept]
    for c in QI:
        tree, level = TREES[c], result.report.levels[c]
        expected = [tree.labels[ancestor(tree, tree.leaves.index(str(v)), level)]
                    for v in released[c]]
        assert list(result.table[c]) == expected
    for rows in result.table.groupby(QI).indices.values():
        assert len(rows) >= k
        if ell > 1:
            assert released["job"].iloc[rows].nunique() >= ell
    assert audit(result.table, k=k, epsilon=0.0, delta=0.0, sensitive=["pay"],
                 quasi_identifiers=QI, criteria=criteria).satisfied


@pytest.mark.parametrize(("limit", "levels", "gcp", "left_out"), [
    (0.0, {"age": 4, "sex": 0, "race": 0, "marital-status": 1}, 0.379, 0),
    (0.05, {"age": 2, "sex": 0, "race": 0, "marital-status": 0}, 0.0422, 531),
])
def test_adult_finds_arx_flash_nodes(limit, levels, gcp, left_out) -> None:
    """Adult, four QIs with the ARX hierarchies, k = 10: with no suppression and with a 5%
    limit, the node ARX's optimal full-domain search publishes (levels 0/4/0/1 in ARX's
    column order, GCP 0.379; 0/2/0/0 with 531 rows suppressed, GCP 0.042)."""
    adult = load_adult()
    quasi = ["age", "sex", "race", "marital-status"]
    extra = {"on_infeasible": "suppress", "max_suppression": limit} if limit else {}
    result = anonymize(adult.data, quasi_identifiers=quasi, sensitive=["occupation"], k=10,
                       delta=0, hierarchies={c: adult.hierarchies[c] for c in quasi},
                       recoding="global", **extra)
    assert result.report.levels == levels
    assert len(result.report.suppressed_rows) == left_out
    score = score_table(adult.data, result.table.drop(columns="group"), quasi_identifiers=quasi,
                        sensitive=["occupation"], hierarchies=adult.hierarchies,
                        suppressed=result.groups < 0)
    assert score.gcp == pytest.approx(gcp, abs=5e-4)
    assert result.report.nodes_checked <= result.report.lattice_nodes == 60


def test_epsilon_delta_and_numeric_columns_without_a_hierarchy() -> None:
    """(ε, δ)^k with full-domain recoding: the published table passes the audit; a numeric QI
    without a hierarchy gets nested bands, given back in result.hierarchies."""
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame({"age": rng.integers(18, 80, n), "region": rng.choice(REGION.leaves, n),
                          "pay": rng.integers(0, 40, n) * 1000.0})
    result = anonymize(frame, quasi_identifiers=["age", "region"], sensitive=["pay"], k=8,
                       epsilon=0.05, delta=0.5, hierarchies={"region": REGION},
                       recoding="global", on_infeasible="suppress", max_suppression=0.1)
    assert result.satisfied
    bands = result.hierarchies["age"]
    assert set(result.table["age"]) <= set(bands.labels)
    check = audit(result.table, k=8, epsilon=0.05, delta=0.5, sensitive=["pay"],
                  quasi_identifiers=["age", "region"],
                  sensitive_ranges={"pay": (frame["pay"].min(), frame["pay"].max())})
    assert check.satisfied


def test_refusals_name_what_to_change() -> None:
    adult = load_adult()
    common = dict(quasi_identifiers=["age", "sex"], sensitive=["occupation"], k=10, delta=0,
                  hierarchies={c: adult.hierarchies[c] for c in ("age", "sex")},
                  recoding="global")
    with pytest.raises(ValueError, match="method='mondrian'"):
        anonymize(adult.data, method="mondrian", **{**common, "delta": None})
    with pytest.raises(ValueError, match="best_effort"):
        anonymize(adult.data, on_infeasible="best_effort", **common)
    with pytest.raises(ValueError, match="recoding"):
        anonymize(adult.data, **{**common, "recoding": "full"})
    # Every row within epsilon of every other: no class of any node holds at delta 0.5, and
    # the message says how many rows the top node leaves out against the limit.
    same = pd.DataFrame({"age": adult.data["age"], "sex": adult.data["sex"], "pay": 1.0})
    with pytest.raises(InfeasibleError, match="30,162 of 30,162 row") as raised:
        anonymize(same, **{**common, "sensitive": ["pay"], "epsilon": 0.1, "delta": 0.5})
    assert "dissimilarity" in str(raised.value)  # the property the top node fails


def test_command_line_recoding_global(tmp_path) -> None:
    """``--recoding global --suppress 0.05`` on Adult: every QI column at one level, the
    summary names the levels, the rows left out within the limit."""
    from tests.conftest import ARX_ADULT

    quasi = ["age", "sex", "race", "marital-status"]
    out = tmp_path / "out.csv"
    done = subprocess.run(
        [sys.executable, "-m", "proxanon", "anonymize", str(ARX_ADULT / "adult.csv"),
         "--qi", ",".join(quasi), "--sensitive", "occupation", "--k", "10", "--delta", "0",
         *(f"--hierarchy={c}={ARX_ADULT / f'adult_hierarchy_{c}.csv'}" for c in quasi),
         "--recoding", "global", "--suppress", "0.05", "-o", str(out)],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "full-domain recoding: generalization levels age 2" in done.stdout
    published = pd.read_csv(out, sep=";", dtype=str)
    assert len(published) == 30_162 - 531
    assert published.groupby(quasi).size().min() >= 10
    assert set(published["marital-status"]) <= set(load_adult().data["marital-status"])


def test_the_html_report_shows_the_node() -> None:
    """The report of a full-domain release names each QI's level and the lattice nodes
    checked, each figure bound to its entry in the numbers block."""
    pytest.importorskip("matplotlib")
    from proxanon.html_report import anonymization_html, read_numbers

    adult = load_adult()
    quasi = ["age", "sex", "race", "marital-status"]
    result = anonymize(adult.data.head(4000), quasi_identifiers=quasi, sensitive=["occupation"],
                       k=10, delta=0, hierarchies={c: adult.hierarchies[c] for c in quasi},
                       recoding="global", on_infeasible="suppress", max_suppression=0.05)
    page = anonymization_html(result)
    numbers = read_numbers(page)["recoding"]
    assert numbers["levels"] == result.report.levels
    assert numbers["nodes_checked"] == result.report.nodes_checked
    assert numbers["suppressed_rows"] == len(result.report.suppressed_rows)
    assert "<h2>Full-domain recoding</h2>" in page
    for name in quasi:
        assert f"<td>{name}</td>" in page
    local = anonymize(adult.data.head(4000), quasi_identifiers=quasi, sensitive=["occupation"],
                      k=10, delta=0, hierarchies={c: adult.hierarchies[c] for c in quasi})
    assert "Full-domain recoding" not in anonymization_html(local)
