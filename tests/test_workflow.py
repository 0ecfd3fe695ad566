"""The steward's workflow of docs/guide/workflow.md, with the command line alone: a table
of ZIP codes with leading zeros to a checked release repeated byte for byte."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

COLUMNS = ["--qi", "zip,age,sex", "--sensitive", "income,hours"]


def people(path: Path, n: int = 1500) -> None:
    rng = np.random.default_rng(0)
    codes = rng.choice(["02134", "02135", "02138", "02139", "01001", "01002"], n)
    pd.DataFrame({"zip": codes, "age": rng.integers(18, 90, n), "sex": rng.choice(["F", "M"], n),
                  "income": np.round(rng.lognormal(10.5, 0.5, n), -2),
                  "hours": rng.integers(10, 70, n)}).to_csv(path, index=False)


@pytest.mark.slow
def test_the_whole_workflow_from_the_command_line(tmp_path: Path) -> None:
    exe = shutil.which("proxanon")
    if exe is None:
        pytest.fail("the `proxanon` console script is not on PATH; install the package")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path,
                              timeout=300, check=False)

    people(tmp_path / "people.csv")
    step = run("hierarchy", "people.csv", "--column", "zip", "--masking", "-o", "zip.csv")
    assert step.returncode == 0, step.stderr
    assert "01001;0100*;010**;01***;0****;*" in (tmp_path / "zip.csv").read_text()

    step = run("advise", "people.csv", "--sensitive", "income,hours", "--k", "10",
               "--epsilon", "0.02", "--delta", "0.8")
    assert step.returncode == 0, step.stderr
    impossible = run("advise", "people.csv", "--sensitive", "income,hours", "--k", "10",
                     "--epsilon", "0.9", "--delta", "0.95")
    assert impossible.returncode == 1, impossible.stdout + impossible.stderr

    step = run("explore", "people.csv", *COLUMNS, "--hierarchy", "zip=zip.csv", "--k", "10",
               "--epsilon", "0.01,0.02", "--delta", "0.6,0.8", "-o", "frontier.csv")
    assert step.returncode == 0, step.stderr
    frontier = pd.read_csv(tmp_path / "frontier.csv")
    assert len(frontier) == 4 and (frontier["verdict"] == "satisfied").any()

    step = run("anonymize", "people.csv", *COLUMNS, "--hierarchy", "zip=zip.csv", "--k", "10",
               "--epsilon", "0.02", "--delta", "0.6", "-o", "release.csv", "--html",
               "release.html", "--frontier", "frontier.csv", "--report", "release.json",
               "--save-job", "release.toml")
    assert step.returncode == 0, step.stderr
    release = pd.read_csv(tmp_path / "release.csv", dtype=str)
    assert release["zip"].str.len().eq(5).all()  # codes kept as text, zeros and all
    source = pd.read_csv(tmp_path / "people.csv", dtype=str)
    pd.testing.assert_frame_equal(release[["income", "hours"]], source[["income", "hours"]])
    report = json.loads((tmp_path / "release.json").read_text())
    assert report["input_sha256"] and report["parameters"]["epsilon"] == 0.02

    step = run("audit", "release.csv", *COLUMNS, "--k", "10", "--epsilon", "0.02",
               "--delta", "0.6")
    assert step.returncode == 0, step.stdout + step.stderr
    first = (tmp_path / "release.csv").read_bytes()
    step = run("run", "release.toml", "--force")
    assert step.returncode == 0, step.stderr
    assert (tmp_path / "release.csv").read_bytes() == first
