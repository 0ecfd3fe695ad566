"""Group "command-line": ``proxanon anonymize`` on census tables against the library's read +
anonymize + write of the same table in the same run (docs/performance.md#the-command-line).

The table is the scaling suites' census table with three untouched columns a user's file
holds (an id, ZIP codes with leading zeros, a note with a quoted comma), 2M and 10M rows
(10M is marked slow), as CSV and as Parquet. ``test_command_line`` times the command (a
fresh process, as a user runs it) and, in the same run, ``pd.read_csv`` / ``read_parquet`` +
``anonymize`` + ``to_csv`` / ``to_parquet``; both ``extra_info`` times and their ratio are
kept. The CLI's output is checked: every row written, the untouched columns byte for byte
(CSV) or value for value (Parquet). ``test_csv_parsing`` times the reader alone (records
found, every column split and decoded; MB/s in ``extra_info``), ``test_hierarchy_file`` the
read of a 100,000-leaf ZIP masking hierarchy.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_bench_scaling_suite import QI_COLUMNS, SENSITIVE_COLUMNS, census_frame

import proxanon
from proxanon.tableio import read_csv

SIZES = [pytest.param(2_000_000, id="2M"),
         pytest.param(10_000_000, id="10M", marks=pytest.mark.slow)]
PRIVACY = dict(k=10, epsilon=0.05, delta=0.6)


def user_table(n: int) -> pd.DataFrame:
    frame = census_frame(n)
    rng = np.random.default_rng(1)
    frame["id"] = np.arange(n)
    frame["zip"] = pd.Series(rng.integers(0, 99_999, n)).map("{:05d}".format)
    frame["note"] = "some text, with a comma"
    return frame


@pytest.fixture(scope="module", params=SIZES)
def files(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp(f"cli-{request.param}")
    frame = user_table(request.param)
    paths = {"csv": folder / "census.csv", "parquet": folder / "census.parquet"}
    frame.to_csv(paths["csv"], index=False)
    frame.to_parquet(paths["parquet"], index=False)
    return paths


def library_run(path: Path, out: Path) -> float:
    tic = time.perf_counter()
    if path.suffix == ".csv":
        data = pd.read_csv(path, dtype={"zip": str})
    else:
        data = pd.read_parquet(path)
    result = proxanon.anonymize(data, quasi_identifiers=list(QI_COLUMNS),
                                sensitive=list(SENSITIVE_COLUMNS), on_infeasible="best_effort",
                                **PRIVACY)
    if out.suffix == ".csv":
        result.table.to_csv(out, index=False)
    else:
        result.table.to_parquet(out, index=False)
    return time.perf_counter() - tic


def command(path: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "proxanon", "anonymize", str(path), "-o", str(out), "--force",
            "--qi", ",".join(QI_COLUMNS), "--sensitive", ",".join(SENSITIVE_COLUMNS),
            "--k", str(PRIVACY["k"]), "--epsilon", str(PRIVACY["epsilon"]),
            "--delta", str(PRIVACY["delta"]), "--best-effort"]


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_command_line(benchmark, files: dict[str, Path], form: str) -> None:
    benchmark.group = "command-line"
    path = files[form]
    out = path.with_name(f"out.{form}")
    library = library_run(path, path.with_name(f"library.{form}"))

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(command(path, out), capture_output=True, text=True, check=False)

    tic = time.perf_counter()
    done = benchmark.pedantic(run, rounds=1, iterations=1)
    seconds = time.perf_counter() - tic
    assert done.returncode in (0, 3), done.stderr
    if form == "csv":
        written = out.read_bytes().splitlines()
        original = path.read_bytes().splitlines()
        assert len(written) == len(original)
        # id, zip and note (the fields after the seven QI and sensitive ones; the note's
        # quoted comma splits it in two on both sides) are written as read, the group last.
        for line in (1, len(original) // 2, len(original) - 1):
            assert written[line].split(b",")[7:-1] == original[line].split(b",")[7:]
    else:
        table = pd.read_parquet(out)
        pd.testing.assert_series_equal(table["zip"], pd.read_parquet(path)["zip"])
    benchmark.extra_info.update(rows=len(pd.read_parquet(files["parquet"], columns=["id"])),
                                cli_s=seconds, library_s=library, ratio=seconds / library)


def test_csv_parsing(benchmark, files: dict[str, Path]) -> None:
    benchmark.group = "command-line-read"
    path = files["csv"]

    def parse() -> int:
        table = read_csv(path)
        return sum(len(codes) for codes, _ in table.coded_columns(table.names).values())

    cells = benchmark.pedantic(parse, rounds=3, warmup_rounds=0)
    assert cells == 10 * len(pd.read_parquet(files["parquet"], columns=["id"]))
    benchmark.extra_info.update(mb_per_s=path.stat().st_size / 1e6 / benchmark.stats["median"])


def test_hierarchy_file(benchmark, tmp_path: Path) -> None:
    benchmark.group = "command-line-read"
    path = tmp_path / "zip.csv"
    rows = []
    for z in range(100_000):
        code = f"{z:05d}"
        rows.append(";".join([code, *(code[:i] + "*" * (5 - i) for i in range(4, -1, -1))]))
    path.write_text("\n".join(rows) + "\n")
    hierarchy = benchmark.pedantic(proxanon.Hierarchy.from_csv, args=(path,), rounds=3)
    assert hierarchy.n_leaves == 100_000
