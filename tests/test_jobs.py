"""Jobs: ``anonymize --save-job`` writes every parameter with the files' SHA-256,
``proxanon run`` repeats the run byte for byte or refuses changed files, and JSON reports
carry the version, the parameters and the input's hash."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon.cli._job import job_argv, job_text, toml_loads
from proxanon.cli._main import parser
from proxanon.cli._toml import dumps
from tests.test_hierarchy_builders import cli

EDU = ["none", "primary", "secondary", "college", "master", "doctorate"]
PRIVACY = ["--k", "5", "--epsilon", "0.01", "--delta", "0.5"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def table(tmp_path: Path) -> Path:
    rng = np.random.default_rng(11)
    n = 400
    frame = pd.DataFrame({
        "zip": rng.choice(["A2134", "A2139", "B0001", "B0002", "C0501"], n),
        "edu": rng.choice(EDU, n), "age": rng.integers(18, 90, n),
        "income": rng.uniform(0, 1e5, n).round(2), "note": rng.choice(["x", "y z"], n)})
    path = tmp_path / "data" / "donors.csv"
    path.parent.mkdir()
    frame.to_csv(path, index=False)
    return path


@pytest.fixture()
def edu_tree(tmp_path: Path, table: Path, capsys) -> Path:
    target = tmp_path / "data" / "edu.csv"
    status, _, err = cli(capsys, "hierarchy", table, "--column", "edu", "--order", "2,2",
                         "--values", ",".join(EDU), "-o", target)
    assert status == 0, err
    return target


def anonymize_args(table: Path, tree: Path, out: Path) -> list[str | Path]:
    return ["anonymize", table, "--qi", "zip,edu,age", "--sensitive", "income", *PRIVACY,
            "--hierarchy", f"edu={tree}", "-o", out]


def test_a_saved_job_is_repeated_byte_for_byte(tmp_path, table, edu_tree, capsys):
    out, job = tmp_path / "out" / "published.csv", tmp_path / "jobs" / "job.toml"
    out.parent.mkdir()
    job.parent.mkdir()
    status, printed, err = cli(capsys, *anonymize_args(table, edu_tree, out), "--save-job", job)
    assert status == 0, err
    assert f"proxanon run {job}" in printed
    saved = toml_loads(job.read_text(encoding="utf-8"))
    assert saved["proxanon"] == proxanon.__version__
    # Paths are relative to the job's folder; hashes are those of the files.
    assert (job.parent / saved["input"]["path"]).resolve() == table.resolve()
    assert saved["input"]["sha256"] == sha(table)
    assert (job.parent / saved["output"]["path"]).resolve() == out.resolve()
    assert saved["hierarchies"]["edu"]["sha256"] == sha(edu_tree)
    params = saved["parameters"]
    assert (params["qi"], params["sensitive"], params["k"], params["epsilon"],
            params["delta"], params["metric"]) == ("zip,edu,age", "income", 5, 0.01, 0.5, "l1")

    again = tmp_path / "again.csv"
    status, printed, err = cli(capsys, "run", job, "--output", again)
    assert status == 0, err
    assert again.read_bytes() == out.read_bytes()
    # Without --output the job's own output is written, over the first one with --force.
    first = out.read_bytes()
    status, _, err = cli(capsys, "run", job)
    assert status == 2 and "--force" in err
    status, _, err = cli(capsys, "run", job, "--force")
    assert status == 0, err
    assert out.read_bytes() == first


def test_a_parquet_job_is_repeated_byte_for_byte(tmp_path, table, edu_tree, capsys):
    source = table.with_suffix(".parquet")
    pd.read_csv(table, dtype={"zip": str}).to_parquet(source)
    out, job = tmp_path / "out.parquet", tmp_path / "job.toml"
    status, _, err = cli(capsys, *anonymize_args(source, edu_tree, out), "--save-job", job)
    assert status == 0, err
    status, _, err = cli(capsys, "run", job, "-o", tmp_path / "again.parquet")
    assert status == 0, err
    assert (tmp_path / "again.parquet").read_bytes() == out.read_bytes()


def test_every_anonymize_option_survives_the_job(tmp_path, table, edu_tree):
    """The job turns back into the same command: every option as parsed, whatever its kind
    (flags, repeated options, numbers, text)."""
    out, job = tmp_path / "o.csv", tmp_path / "job.toml"
    argv = [str(a) for a in anonymize_args(table, edu_tree, out)] + [
        "--suppress", "0.05", "--weights", "1", "--metric", "L2", "--moves", "swap",
        "--missing", "drop", "--sep", ",", "--order", "note=x,y z", "--dates", "age",
        "--hierarchy-sep", ";", "--epsilon", "1e-05"]
    args = parser().parse_args(argv)
    job.write_text(job_text(args, job), encoding="utf-8")
    repeated, note = job_argv(job, output=str(out), any_version=False)
    again = parser().parse_args(repeated)
    assert note == ""
    for name in ("input", "hierarchy", "run"):
        delattr(args, name)
        delattr(again, name)
    assert vars(again) == vars(args)


def test_run_refuses_changed_files(tmp_path, table, edu_tree, capsys):
    out, job = tmp_path / "o.csv", tmp_path / "job.toml"
    status, _, err = cli(capsys, *anonymize_args(table, edu_tree, out), "--save-job", job)
    assert status == 0, err
    original = table.read_bytes()
    table.write_bytes(original.replace(b"A2134", b"A2135", 1))
    status, _, err = cli(capsys, "run", job, "-o", tmp_path / "again.csv")
    assert status == 2
    assert "input" in err and "changed since the job was saved" in err
    assert not (tmp_path / "again.csv").exists()
    table.write_bytes(original)
    edu_tree.write_text(edu_tree.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    status, _, err = cli(capsys, "run", job, "-o", tmp_path / "again.csv")
    assert status == 2 and "hierarchy file of column 'edu'" in err
    assert not (tmp_path / "again.csv").exists()


def test_run_refuses_another_version_unless_told(tmp_path, table, edu_tree, capsys):
    out, job = tmp_path / "o.csv", tmp_path / "job.toml"
    status, _, err = cli(capsys, *anonymize_args(table, edu_tree, out), "--save-job", job)
    assert status == 0, err
    text = job.read_text(encoding="utf-8")
    job.write_text(text.replace(f'proxanon = "{proxanon.__version__}"', 'proxanon = "0.0.1"'),
                   encoding="utf-8")
    status, _, err = cli(capsys, "run", job, "-o", tmp_path / "a.csv")
    assert status == 2 and "0.0.1" in err and "--any-version" in err
    status, printed, err = cli(capsys, "run", job, "-o", tmp_path / "a.csv", "--any-version")
    assert status == 0, err
    assert "saved by proxanon 0.0.1" in printed
    assert (tmp_path / "a.csv").read_bytes() == out.read_bytes()


def test_run_refuses_bad_jobs_in_one_line(tmp_path, table, edu_tree, capsys):
    out, job = tmp_path / "o.csv", tmp_path / "job.toml"
    status, _, err = cli(capsys, *anonymize_args(table, edu_tree, out), "--save-job", job)
    assert status == 0, err
    text = job.read_text(encoding="utf-8")
    for broken, needle in ((text.replace("k = 5", 'k = "five"'), "--k"),
                           (text.replace('moves = "auto"', "colour = 1"), "--colour"),
                           (text.replace('[output]\npath = "o.csv"\n', ""), "[output]"),
                           (text.replace(f'proxanon = "{proxanon.__version__}"\n', ""),
                            "which proxanon version"),
                           ("k = [", "not a TOML file")):
        job.write_text(broken, encoding="utf-8")
        status, _, err = cli(capsys, "run", job)
        assert status == 2, broken
        assert len(err.strip().splitlines()) == 1 and needle in err, err
    status, _, err = cli(capsys, "run", tmp_path / "none.toml")
    assert status == 2 and "not found" in err
    status, _, err = cli(capsys, *anonymize_args(table, edu_tree, tmp_path / "d"), "--dask",
                         "--save-job", tmp_path / "j2.toml")
    assert status == 2 and "--save-job" in err


def test_json_reports_carry_version_parameters_and_input_hash(tmp_path, table, edu_tree,
                                                              capsys):
    out, report = tmp_path / "o.csv", tmp_path / "r.json"
    status, _, err = cli(capsys, *anonymize_args(table, edu_tree, out), "--report", report)
    assert status == 0, err
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["proxanon"] == proxanon.__version__
    assert document["input_sha256"] == sha(table)
    assert document["parameters"]["k"] == 5 and document["parameters"]["epsilon"] == 0.01
    assert document["hierarchies"]["edu"]["sha256"] == sha(edu_tree)
    audit_report = tmp_path / "a.json"
    status, _, err = cli(capsys, "audit", out, "--qi", "zip,edu,age", "--sensitive", "income",
                         *PRIVACY, "--report", audit_report)
    assert status == 0, err
    audited = json.loads(audit_report.read_text(encoding="utf-8"))
    assert audited["proxanon"] == proxanon.__version__
    assert audited["input_sha256"] == sha(out)
    assert audited["parameters"]["delta"] == 0.5
    page_report = tmp_path / "p.json"
    status, _, err = cli(capsys, "report", out, "--qi", "zip,edu,age", "--sensitive", "income",
                         *PRIVACY, "-o", tmp_path / "p.html", "--report", page_report)
    assert status == 0, err
    paged = json.loads(page_report.read_text(encoding="utf-8"))
    assert paged["proxanon"] == proxanon.__version__ and paged["input_sha256"] == sha(out)
    assert paged["parameters"]["k"] == 5


# ------------------------------------------------------------------------------ TOML writer

_scalars = (st.text() | st.booleans() | st.integers(-2**63, 2**63 - 1)
            | st.floats(allow_nan=False))
_keys = st.text(min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _scalars | st.lists(_scalars, max_size=3)
                       | st.dictionaries(_keys, _scalars | st.dictionaries(_keys, _scalars),
                                         max_size=3), max_size=5))
@pytest.mark.slow
def test_the_toml_writer_is_read_back_by_the_reader(document):
    assert toml_loads(dumps(document, "a comment\nover two lines")) == document


def test_the_toml_writer_keeps_special_floats_and_refuses_other_types():
    loaded = toml_loads(dumps({"a": math.inf, "b": -math.inf, "c": 1e16, "d": 5e-324}))
    assert loaded == {"a": math.inf, "b": -math.inf, "c": 1e16, "d": 5e-324}
    assert math.isnan(toml_loads(dumps({"n": math.nan}))["n"])
    with pytest.raises(TypeError, match="cannot hold a"):
        dumps({"x": os})
