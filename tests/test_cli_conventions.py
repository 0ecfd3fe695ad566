"""The command line's conventions, which every subcommand gets from the shared machinery:
``-`` for standard input and output, ``-q``/``-v``, a bare ``proxanon``, parameters refused
before any input is read, one-line usage errors, messages in the command's flags, Parquet
output that keeps the input's types (also with ``--dask``), and Parquet type errors that name
their column.

Most tests call ``proxanon.cli.main`` in-process; the stdin/stdout round trip runs the
installed console script with real pipes.
"""

from __future__ import annotations

import io
import pickle
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon._errors import InfeasibleError
from proxanon._messages import Call, Param, text, worded
from proxanon.cli import main
from proxanon.cli._status import command_words, flag_words
from tests.test_cli_io import COLUMNS, PRIVACY, _cli, _one_line_error, _raw_rows, _write_raw


def _exe() -> str:
    path = shutil.which("proxanon")
    assert path is not None, "the proxanon console script is not installed"
    return path


def _table(tmp_path: Path, n: int = 90) -> Path:
    header, rows = _raw_rows(n)
    _write_raw(tmp_path / "in.csv", header, rows)
    return tmp_path / "in.csv"


class _Unreadable:
    """A standard input that fails the test if anything reads it."""

    def isatty(self) -> bool:
        raise AssertionError("standard input was looked at")

    @property
    def buffer(self) -> Any:
        raise AssertionError("standard input was read")

    def read(self, *args: Any) -> Any:
        raise AssertionError("standard input was read")


# --- standard input and output ------------------------------------------------------------


@pytest.mark.slow
def test_stdin_to_stdout_writes_what_the_file_run_writes(tmp_path: Path) -> None:
    source = _table(tmp_path)
    by_file = subprocess.run([_exe(), "anonymize", "in.csv", "-o", "out.csv", *COLUMNS,
                              *PRIVACY], cwd=tmp_path, capture_output=True, timeout=300,
                             check=False)
    assert by_file.returncode == 0, by_file.stderr
    piped = subprocess.run([_exe(), "anonymize", "-", "-o", "-", *COLUMNS, *PRIVACY],
                           cwd=tmp_path, input=source.read_bytes(), capture_output=True,
                           timeout=300, check=False)
    assert piped.returncode == 0, piped.stderr
    # Standard output holds the table alone, byte for byte; the summary went to stderr.
    assert piped.stdout == (tmp_path / "out.csv").read_bytes()
    summary = piped.stderr.decode()
    assert "proxanon anonymization: satisfied" in summary
    assert "wrote 90 rows to standard output" in summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


def test_parquet_through_stdin_and_stdout(tmp_path: Path, capsysbinary,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    header, rows = _raw_rows(90)
    frame = pd.DataFrame(rows, columns=header).astype({"age": int, "income": float})
    frame.to_parquet(tmp_path / "in.parquet", index=False)
    assert main(["anonymize", str(tmp_path / "in.parquet"), "-o",
                 str(tmp_path / "out.parquet"), *COLUMNS, *PRIVACY]) == 0
    capsysbinary.readouterr()
    # Bytes that start as Parquet does are read as Parquet; the output keeps the format.
    raw = (tmp_path / "in.parquet").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    assert main(["anonymize", "-", "-o", "-", *COLUMNS, *PRIVACY]) == 0
    out, err = capsysbinary.readouterr()
    assert pq.read_table(pa.BufferReader(out)).equals(pq.read_table(tmp_path / "out.parquet"))
    assert b"wrote 90 rows to standard output" in err
    # --format parquet reads a Parquet file whatever its name.
    shutil.copy(tmp_path / "in.parquet", tmp_path / "in.data")
    assert main(["anonymize", str(tmp_path / "in.data"), "--format", "parquet", "-o",
                 str(tmp_path / "again.parquet"), *COLUMNS, *PRIVACY]) == 0
    assert pq.read_table(tmp_path / "again.parquet").equals(
        pq.read_table(tmp_path / "out.parquet"))


def test_stdin_from_a_terminal_is_refused_not_waited_for(capsys,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(_Unreadable):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    status, out, err = _cli(capsys, "anonymize", "-", "-o", "-", *COLUMNS, *PRIVACY)
    assert out == ""
    _one_line_error(status, err, 2, "standard input", "terminal", "< in.csv")


def test_two_outputs_on_stdout_are_refused(tmp_path: Path, capsys) -> None:
    status, _, err = _cli(capsys, "anonymize", str(_table(tmp_path)), "-o", "-", "--report",
                          "-", *COLUMNS, *PRIVACY)
    _one_line_error(status, err, 2, "-o and --report", "standard output")


# --- -q, -v, a bare proxanon, usage errors ------------------------------------------------


def test_quiet_prints_errors_only(tmp_path: Path, capsys) -> None:
    source = str(_table(tmp_path))
    status, out, err = _cli(capsys, "anonymize", source, "-o", str(tmp_path / "out.csv"),
                            "-q", *COLUMNS, *PRIVACY)
    assert (status, out, err) == (0, "", "")
    assert (tmp_path / "out.csv").stat().st_size > 0
    status, out, err = _cli(capsys, "audit", str(tmp_path / "out.csv"), "--quiet", *COLUMNS,
                            *PRIVACY)
    assert (status, out, err) == (0, "", "")
    status, out, err = _cli(capsys, "anonymize", source, "-o", str(tmp_path / "out.csv"),
                            "-q", *COLUMNS, *PRIVACY)
    assert out == ""
    _one_line_error(status, err, 2, "--force")


def test_library_warnings_show_with_verbose_only(tmp_path: Path, capsys,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    module = sys.modules["proxanon.anonymize"]
    real = module.anonymize

    def noisy(*args: Any, **kwargs: Any) -> Any:
        warnings.warn("a note from a library", UserWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "anonymize", noisy)
    source = str(_table(tmp_path))
    status, out, err = _cli(capsys, "anonymize", source, "-o", str(tmp_path / "a.csv"),
                            *COLUMNS, *PRIVACY)
    assert status == 0 and "a note from a library" not in out + err
    assert "read 90 rows" not in out
    status, out, err = _cli(capsys, "anonymize", source, "-o", str(tmp_path / "b.csv"), "-v",
                            *COLUMNS, *PRIVACY)
    assert status == 0
    shown = [line for line in err.splitlines() if "a note from a library" in line]
    assert len(shown) == 1 and shown[0].startswith("proxanon: warning: "), err
    assert f"read 90 rows and 8 columns from {source} (CSV, separator ',', utf-8)" in out


def test_bare_proxanon_prints_the_help(capsys) -> None:
    status, out, err = _cli(capsys)
    assert status == 2 and out == ""
    assert err.startswith("usage: proxanon")
    for command in ("anonymize", "audit", "report", "demo", "substitute", "exit status"):
        assert command in err


@pytest.mark.parametrize(("args", "needles"), [
    (["anonymize", "in.csv", "--qi", "a"], ["required", "--sensitive",
                                            "see 'proxanon anonymize --help'"]),
    (["anonymize", "in.csv", "-o", "o.csv", *COLUMNS, *PRIVACY, "--kk", "3"],
     ["--kk", "see 'proxanon anonymize --help'"]),
    (["audit", "in.csv", *COLUMNS, "--k", "x", "--epsilon", "0.1", "--delta", "0.5"],
     ["--k", "'x'", "see 'proxanon audit --help'"]),
    (["frobnicate"], ["'frobnicate'", "see 'proxanon --help'"]),
])
def test_a_usage_error_is_one_line_and_a_pointer_to_help(capsys, args: list[str],
                                                         needles: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and "usage:" not in err, err
    assert lines[0].startswith("proxanon"), lines
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# --- parameters refused before any input is read ------------------------------------------


@pytest.mark.parametrize(("given", "needles"), [
    ({"--epsilon": "5"}, ["--epsilon 5", "every two rows neighbours", "below 1"]),
    ({"--epsilon": "-0.1"}, ["--epsilon must be a finite number >= 0"]),
    ({"--epsilon": "inf"}, ["--epsilon must be a finite number"]),
    ({"--k": "0"}, ["--k must be >= 1, got 0"]),
    ({"--k": "1"}, ["--k 1 with --delta 0.5", "--k >= 2"]),
    ({"--delta": "1.5"}, ["--delta must lie in [0, 1], got 1.5"]),
    ({"--delta": "nan"}, ["--delta must lie in [0, 1]"]),
    ({"--suppress": "2"}, ["--suppress must be a fraction of the rows in [0, 1]"]),
    ({"--sensitive": "s,t", "--weights": "1"}, ["--weights has 1 entries but --sensitive "
                                                "has 2 column(s)"]),
    # L-infinity with the default weights 1/2 over two columns: no distance exceeds 0.5.
    ({"--sensitive": "s,t", "--metric": "linf", "--epsilon": "0.6"},
     ["--epsilon 0.6", "linf distance between rows is at most 0.5"]),
])
@pytest.mark.parametrize("source", ["missing.csv", "-"])
def test_out_of_range_parameters_are_refused_before_reading(
        capsys, monkeypatch: pytest.MonkeyPatch, source: str, given: dict[str, str],
        needles: list[str]) -> None:
    monkeypatch.setattr(sys, "stdin", _Unreadable())
    options = {"--qi": "q", "--sensitive": "s", "--k": "5", "--epsilon": "0.1",
               "--delta": "0.5", **given}
    status, out, err = _cli(capsys, "anonymize", source, "-o", "-",
                            *[part for pair in options.items() for part in pair])
    assert out == "" and "not found" not in err
    _one_line_error(status, err, 2, *needles)


@pytest.mark.parametrize(("option", "value", "needle"), [
    ("--poi-fraction", "0", "--poi-fraction must lie in (0, 1], got 0.0"),
    ("--segment-size", "2", "--segment-size must be >= 3, got 2"),
    ("--iterations", "-1", "--iterations must be >= 0, got -1"),
])
def test_substitute_settings_are_refused_before_reading(capsys, option: str, value: str,
                                                        needle: str) -> None:
    status, _, err = _cli(capsys, "substitute", "missing.csv", "--columns", "a", "-o", "-",
                          option, value)
    _one_line_error(status, err, 2, needle)


def test_an_audit_may_ask_about_any_epsilon_and_k_1(capsys) -> None:
    status, _, err = _cli(capsys, "audit", "missing.csv", "--qi", "q", "--sensitive", "s",
                          "--k", "1", "--epsilon", "5", "--delta", "0.5")
    _one_line_error(status, err, 2, "input file not found: missing.csv")


# --- messages in the command's flags ------------------------------------------------------


def test_messages_name_options_as_typed_pieces() -> None:
    message = text("try a smaller ", Param("epsilon"), ", or pass ",
                   Param("on_infeasible", "best_effort"), " or ",
                   Param("on_infeasible", "suppress"), "; at most ",
                   Param("max_suppression", 0.25), " (", Param("threads", 2), "); ",
                   Call("advise"), " proves more")
    error = InfeasibleError(message)
    assert str(error) == ("try a smaller epsilon, or pass on_infeasible='best_effort' or "
                          "on_infeasible='suppress'; at most max_suppression=0.25 (threads=2); "
                          "proxanon.advise proves more")
    assert worded(error, flag_words, command_words) == (
        "try a smaller --epsilon, or pass --best-effort or --suppress FRACTION; at most "
        "--suppress 0.25 (threads=2); proxanon advise proves more")
    assert worded(ValueError("plain"), flag_words) == "plain"
    again = pickle.loads(pickle.dumps(error))  # as a Dask worker sends it
    assert worded(again, flag_words, command_words) == worded(error, flag_words, command_words)


def test_proven_before_repair_speaks_flags_in_the_cli_and_python_in_python(
        tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(1)
    n = 9000  # above the size where the proof is tried before any repair
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "inc": rng.random(n).round(4)})
    frame.to_csv(tmp_path / "in.csv", index=False)
    privacy = dict(k=10, epsilon=0.3, delta=0.9)
    with pytest.raises(InfeasibleError) as raised:
        proxanon.anonymize(frame, quasi_identifiers=["age"], sensitive=["inc"], **privacy)
    assert "proven before any repair" in str(raised.value)
    assert "on_infeasible='best_effort'" in str(raised.value)
    status, out, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                            str(tmp_path / "out.csv"), "--qi", "age", "--sensitive", "inc",
                            *[part for key, value in privacy.items()
                              for part in (f"--{key}", str(value))])
    _one_line_error(status, err, 1, "proven before any repair", "--best-effort",
                    "--suppress FRACTION", "smaller --epsilon or --delta")
    assert "on_infeasible" not in err and "max_suppression" not in err
    assert not (tmp_path / "out.csv").exists()


# --- plain words in the summary -----------------------------------------------------------


def test_summary_gives_epsilon_in_units_and_why_the_table_was_published(tmp_path: Path,
                                                                        capsys) -> None:
    source = _table(tmp_path, 200)
    status, out, _ = _cli(capsys, "anonymize", str(source), "-o", str(tmp_path / "out.csv"),
                          *COLUMNS, *PRIVACY)
    assert status == 0
    lines = out.splitlines()
    privacy = next(i for i, line in enumerate(lines) if line.startswith("  privacy"))
    assert lines[privacy + 1].startswith("  epsilon means  : rows are neighbours up to ")
    incomes = pd.read_csv(source)["income"]
    width = 0.05 * (incomes.max() - incomes.min())
    assert f"{float(f'{width:.6g}'):g} in income" in lines[privacy + 1]
    published = next(line for line in lines if line.startswith("  published      : "))
    assert "the lowest GCP" in published or "the only satisfying candidate" in published
    assert "XColor's" in published or "the Mondrian cut" in published


# --- Parquet output keeps the input's types -----------------------------------------------


def _typed_csv(path: Path, n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({
        "zip": [f"{z:05d}" for z in rng.integers(500, 3000, n)],
        "code": rng.integers(-5, 400, n).astype(str),
        "amount": [f"{a:.2f}" for a in rng.random(n) * 100],
        "note": [f"r{i}" for i in range(n)],
        "age": rng.integers(18, 80, n).astype(str),
        "sex": rng.choice(["M", "F"], n),
        "income": [f"{v:.3f}" for v in rng.random(n)],
    })
    frame.to_csv(path, index=False)
    return frame


def _assert_types_kept(published: pd.DataFrame, source: pd.DataFrame, order: Any) -> None:
    assert list(published.columns) == [*source.columns, "group"]
    back = published.set_index(order).sort_index()
    assert back["zip"].tolist() == source["zip"].tolist()  # leading zeros kept, as text
    assert back["code"].tolist() == source["code"].astype(int).tolist()
    assert back["amount"].tolist() == source["amount"].astype(float).tolist()
    assert back["income"].tolist() == source["income"].astype(float).tolist()


def test_parquet_from_csv_keeps_numbers_and_text(tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = _typed_csv(tmp_path / "in.csv")
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.parquet"), *COLUMNS, *PRIVACY)
    assert status == 0, err
    table = pq.read_table(tmp_path / "out.parquet")
    types = {field.name: field.type for field in table.schema}
    assert types["zip"] == pa.string() and types["note"] == pa.string()
    assert types["code"] == pa.int64() and types["group"] == pa.int64()
    assert types["amount"] == pa.float64() and types["income"] == pa.float64()
    published = table.to_pandas()
    _assert_types_kept(published, source, pd.RangeIndex(len(source)))
    # A QI column is a number column where every class kept its value, text otherwise.
    ages = published["age"].astype(str)
    assert (types["age"] == pa.int64()) == bool(ages.str.fullmatch(r"-?\d+").all())


@pytest.mark.slow
def test_dask_parquet_keeps_types_and_adds_no_index_column(tmp_path: Path, capsys) -> None:
    pytest.importorskip("distributed")
    import pyarrow.parquet as pq

    folder = tmp_path / "in"
    folder.mkdir()
    source = _typed_csv(folder / "a.csv", 200)
    half = len(source) // 2
    source.iloc[half:].to_csv(folder / "b.csv", index=False)
    source.iloc[:half].to_csv(folder / "a.csv", index=False)
    status, out, err = _cli(capsys, "anonymize", str(folder / "*.csv"), "--dask", "-o",
                            str(tmp_path / "out"), *COLUMNS, *PRIVACY)
    assert status == 0, err
    assert "WARNING" not in err and "distributed" not in err
    incomes = source["income"].astype(float)
    width = 0.05 * (incomes.max() - incomes.min())
    assert f"epsilon means: rows are neighbours up to {float(f'{width:.6g}'):g} in income" in out
    table = pq.read_table(tmp_path / "out")
    assert "__null_dask_index__" not in table.column_names
    published = table.to_pandas()
    assert published.index.equals(pd.RangeIndex(len(source)))
    order = published["note"].str[1:].astype(int)
    _assert_types_kept(published, source, order)


# --- Parquet type errors name their column ------------------------------------------------


def _with_a_list_column(path: Path, n: int = 90) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    header, rows = _raw_rows(n)
    frame = pd.DataFrame(rows, columns=header).astype({"age": int, "income": float})
    table = pa.Table.from_pandas(frame, preserve_index=False)
    tags = pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int64()))
    pq.write_table(table.append_column("tags", tags), path)


def test_a_list_column_is_named_with_the_fix(tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    _with_a_list_column(tmp_path / "in.parquet")
    source = str(tmp_path / "in.parquet")
    status, _, err = _cli(capsys, "anonymize", source, "-o", str(tmp_path / "out.csv"),
                          *COLUMNS, *PRIVACY)
    _one_line_error(status, err, 2, "column 'tags'", "list<", "write Parquet")
    assert "Unsupported Type" not in err
    status, _, err = _cli(capsys, "anonymize", source, "-o", str(tmp_path / "out.parquet"),
                          "--qi", "age,sex", "--sensitive", "tags", *PRIVACY)
    _one_line_error(status, err, 2, "column 'tags'", "lists", "convert it")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]
    # To Parquet, the list column is kept as it was.
    status, _, err = _cli(capsys, "anonymize", source, "-o", str(tmp_path / "out.parquet"),
                          *COLUMNS, *PRIVACY)
    assert status == 0, err
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema.field("tags").type == pa.list_(pa.int64())
    assert out.column("tags").equals(pq.read_table(source).column("tags"))


@pytest.mark.slow
def test_dask_refuses_a_list_qi_by_name_and_keeps_an_untouched_one(tmp_path: Path,
                                                                   capsys) -> None:
    pytest.importorskip("distributed")
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "in"
    folder.mkdir()
    _with_a_list_column(folder / "a.parquet", 200)
    status, _, err = _cli(capsys, "anonymize", str(folder / "*.parquet"), "--dask", "-o",
                          str(tmp_path / "bad"), "--qi", "tags,sex", "--sensitive", "income",
                          *PRIVACY)
    _one_line_error(status, err, 2, "column 'tags'", "lists", "convert it")
    status, _, err = _cli(capsys, "anonymize", str(folder / "*.parquet"), "--dask", "-o",
                          str(tmp_path / "out"), *COLUMNS, *PRIVACY)
    assert status == 0, err
    out = pq.read_table(tmp_path / "out")
    assert out.schema.field("tags").type == pa.list_(pa.int64())
    assert "__null_dask_index__" not in out.column_names
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]
