"""``proxanon anonymize --publish anatomy`` and ``proxanon audit --sensitive-table``: the two
files of an anatomy release, as a user writes and checks them (docs/guide/anatomy.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.test_cli import COLUMNS, PRIVACY, SAMPLE_ROWS, SENSITIVE, assert_usage_error

pytest_plugins = ["tests.test_cli"]

RELEASE = ["--publish", "anatomy", "-o", "qi.csv", "--sensitive-output", "sa.csv"]


@pytest.mark.slow
def test_anatomy_release_and_its_audit(run, sample: pd.DataFrame, sample_csv: Path,
                                       tmp_path: Path) -> None:
    raw = sample_csv.read_bytes().decode().splitlines()
    proc = run("anonymize", sample_csv.name, *RELEASE, *COLUMNS, *PRIVACY,
               "--report", "r.json")
    assert proc.returncode == 0, proc.stderr
    assert "satisfied" in proc.stdout and "anatomy: QIs published exact" in proc.stdout
    qi_table = pd.read_csv(tmp_path / "qi.csv", dtype=str, keep_default_na=False)
    sa_table = pd.read_csv(tmp_path / "sa.csv", dtype=str, keep_default_na=False)
    # The QI file: every other column's text as read, in the input's order, plus the group.
    others = [c for c in sample.columns if c not in SENSITIVE]
    assert list(qi_table.columns) == [*others, "group"]
    header = raw[0].split(",")
    keep = [header.index(c) for c in others]
    expected = [",".join(line.split(",")[j] for j in keep) for line in raw[1:]]
    written = (tmp_path / "qi.csv").read_text().splitlines()[1:]
    assert [line.rsplit(",", 1)[0] for line in written] == expected
    # The sensitive file: the group and the sensitive columns, per group the group's values.
    assert list(sa_table.columns) == ["group", *SENSITIVE] and len(sa_table) == SAMPLE_ROWS
    for g, rows in qi_table.groupby("group").groups.items():
        mine = sorted(map(tuple, sample.loc[rows, SENSITIVE].astype(str).to_numpy()))
        theirs = sorted(map(tuple, sa_table.loc[sa_table["group"] == g, SENSITIVE].to_numpy()))
        assert mine == theirs
    assert '"publish": "anatomy"' in (tmp_path / "r.json").read_text()

    check = run("audit", "qi.csv", "--sensitive-table", "sa.csv", *COLUMNS, *PRIVACY)
    assert check.returncode == 0, (check.stdout, check.stderr)
    strict = run("audit", "qi.csv", "--sensitive-table", "sa.csv", *COLUMNS, "--k", "10",
                 "--epsilon", "0.05", "--delta", "0.95")
    assert strict.returncode == 3 and "NOT satisfied" in strict.stdout


def test_anatomy_parquet_keeps_column_types(run, sample: pd.DataFrame, tmp_path: Path) -> None:
    sample.to_parquet(tmp_path / "in.parquet")
    proc = run("anonymize", "in.parquet", "--publish", "anatomy", "-o", "qi.parquet",
               "--sensitive-output", "sa.parquet", *COLUMNS, *PRIVACY)
    assert proc.returncode == 0, proc.stderr
    qi_table = pd.read_parquet(tmp_path / "qi.parquet")
    sa_table = pd.read_parquet(tmp_path / "sa.parquet")
    assert qi_table["age"].dtype == sample["age"].dtype
    assert sa_table["hours-per-week"].dtype == sample["hours-per-week"].dtype
    pd.testing.assert_frame_equal(qi_table.drop(columns="group"),
                                  sample.drop(columns=SENSITIVE))
    assert np.array_equal(np.sort(sa_table["group"].to_numpy()),
                          np.sort(qi_table["group"].to_numpy()))


@pytest.mark.slow
def test_anatomy_options_are_checked(run, sample_csv: Path) -> None:
    assert_usage_error(run("anonymize", sample_csv.name, "--publish", "anatomy", "-o", "q.csv",
                           *COLUMNS, *PRIVACY), "--sensitive-output")
    assert_usage_error(run("anonymize", sample_csv.name, "-o", "q.csv", "--sensitive-output",
                           "s.csv", *COLUMNS, *PRIVACY), "--publish anatomy")
    assert_usage_error(run("anonymize", sample_csv.name, "--publish", "anatomy", "-o", "q.csv",
                           "--sensitive-output", "q.csv", *COLUMNS, *PRIVACY), "same file")
