"""Each sensitive column's own exposure (docs/design/privacy-model.md#each-column-alone):
the audit's per-column numbers against a brute force on random tables, under every metric
over components; min_component never leaves a column exposed where the model holds; and a
table that satisfies l1 while one column alone is exposed says so in the audit, the
anonymization's report, the command line's summary and the HTML report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon import audit


def brute_force(values: np.ndarray, groups: np.ndarray, metric: str, weight: float,
                epsilon: float, delta: float) -> tuple[float, int, int]:
    """(largest risk, violating classes, violating rows) of one column alone, pair by pair."""
    risks, bad_groups, bad_rows = [], 0, 0
    for g in np.unique(groups):
        x = values[groups == g]
        size = x.size
        gap = np.abs(x[:, None] - x[None, :])
        distance = np.sqrt(weight) * gap if metric == "l2" else weight * gap
        near = (distance <= epsilon + 1e-9 * max(1.0, epsilon)).sum(axis=1) - 1
        allowed = int(np.floor((1 - delta) * (size - 1) + 1e-9))
        risks.append(1.0 if size == 1 else near.max() / (size - 1))
        bad_groups += int(near.max() > allowed)
        bad_rows += int((near > allowed).sum())
    return max(risks), bad_groups, bad_rows


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["l1", "l2", "linf", "min_component"]),
       st.integers(2, 3), st.floats(0.0, 0.4), st.floats(0.0, 1.0))
def test_each_column_matches_brute_force(seed: int, metric: str, s: int, epsilon: float,
                                         delta: float) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 60))
    values = rng.integers(0, 6, size=(n, s)) / 5.0
    groups = rng.integers(0, max(1, n // 5), size=n)
    weights = rng.uniform(0.2, 1.0, size=s)
    report = audit(values, groups, k=1, epsilon=epsilon, delta=delta, metric=metric,
                   weights=weights)
    assert len(report.columns) == s
    for j, column in enumerate(report.columns):
        risk, bad_groups, bad_rows = brute_force(values[:, j], groups, metric, weights[j],
                                                 epsilon, delta)
        assert column.column == f"component {j}"
        assert column.max_risk == pytest.approx(risk)
        assert (column.violating_groups, column.violating_rows) == (bad_groups, bad_rows)
        assert column.exposed == (bad_groups > 0)
        # A neighbour on one column is a neighbour under min_component: where the joint
        # model holds, no column alone is exposed.
        if metric == "min_component" and not report.violating_groups.size:
            assert not column.exposed


def test_one_column_or_a_distance_function_reports_none() -> None:
    values = np.array([[0.0, 0.1], [0.2, 0.3], [0.4, 0.5], [0.6, 0.7]])
    groups = np.array([0, 0, 1, 1])
    assert audit(values[:, :1], groups, k=2, epsilon=0.1, delta=0.5).columns == ()
    assert audit(values, groups, k=2, epsilon=0.1, delta=0.5, metric="variational").columns == ()

    def l1(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.abs(x[:, None, :] - y[None, :, :]).sum(axis=2)

    assert audit(values, groups, k=2, epsilon=0.1, delta=0.5, metric=l1).columns == ()


def donors(n: int = 400, seed: int = 3) -> pd.DataFrame:
    """Three gift amounts: ``small`` nearly constant, the others spread, so that the joint
    l1 distance keeps rows apart while ``small`` alone does not."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(20, 80, n), "zip": rng.integers(0, 20, n).astype(str),
        "small": 5.0 + (rng.random(n) < 0.05) * rng.integers(1, 100, n),
        "total": rng.uniform(0, 5000, n), "gifts": rng.uniform(0, 200, n),
    })


def test_a_table_that_holds_jointly_names_the_exposed_column() -> None:
    data = donors()
    result = proxanon.anonymize(data, quasi_identifiers=["age", "zip"],
                                sensitive=["small", "total", "gifts"], k=10, epsilon=0.05,
                                delta=0.7)
    assert result.satisfied
    report = result.report
    assert list(report.column_risk) == ["small", "total", "gifts"]
    assert report.column_exposed["small"] > 0
    assert report.column_risk["small"] > 1 - 0.7
    again = audit(result.table, quasi_identifiers=["age", "zip"],
                  sensitive=["small", "total", "gifts"], k=10, epsilon=0.05, delta=0.7)
    assert [c.column for c in again.columns] == ["small", "total", "gifts"]
    assert {c.column: c.max_risk for c in again.columns} == pytest.approx(report.column_risk)
    assert {c.column: c.violating_groups for c in again.columns} == report.column_exposed
    text = str(report)
    assert "each column" in text and "small" in text and "min_component" in text
    assert "each column" in str(again)
    assert again.summary()["columns"][0]["exposed"] is True


def test_command_line_and_html_report_show_each_column(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    source = tmp_path / "donors.csv"
    donors().to_csv(source, index=False)
    done = subprocess.run(
        [sys.executable, "-m", "proxanon", "anonymize", str(source), "-o",
         str(tmp_path / "out.csv"), "--qi", "age,zip", "--text", "zip", "--sensitive",
         "small,total,gifts", "--k", "10", "--epsilon", "0.05", "--delta", "0.7",
         "--report", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    summary = done.stdout + done.stderr
    line = next(x for x in summary.splitlines() if "each column" in x)
    assert "small" in line and "alone above 1 - delta" in line
    numbers = json.loads((tmp_path / "r.json").read_text())
    assert numbers["report"]["column_exposed"]["small"] > 0
    page = (tmp_path / "r.html").read_text()
    assert "Each sensitive column alone" in page and "min_component" in page
