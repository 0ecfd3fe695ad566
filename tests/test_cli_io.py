"""The command line's input and output: columns it does not transform come out as they went
in, Parquet, empty cells, header errors, the JSON report, the audit of taxonomy output, and
output files that are complete or absent (a failed write, a file size limit, Ctrl-C).

Most tests call ``proxanon.cli.main`` in-process (fast); the ones about processes (exit on
SIGINT, a file size limit) run the installed console script.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon import tableio
from proxanon._results.anonymization import Report
from proxanon._results.audit import AuditReport
from proxanon.cli import main
from proxanon.cli._writing import json_value
from tests.test_cli import run_on_a_terminal

#: The ARX occupation taxonomy shipped with the package's Adult data.
OCCUPATION_TAXONOMY = Path(str(resources.files("proxanon.datasets"))) / "adult" / (
    "adult_hierarchy_occupation.csv")
PRIVACY = ["--k", "5", "--epsilon", "0.05", "--delta", "0.5"]
COLUMNS = ["--qi", "age,sex", "--sensitive", "income"]
# Untouched columns in the forms pandas' default reader would rewrite or unquote.
TRICKY = {
    "zip": ["02134", "00501", "10001"],
    "amount": ["100.50", "7.00", "1e3"],
    "note": ['"a, b"', '"say ""hi"""', ""],
    "city": ["Zürich", '"São Paulo"', "東京"],
}


def _raw_rows(n: int, seed: int = 3) -> tuple[list[str], list[list[str]]]:
    """Header and raw fields: numeric QI age, text QI sex, numeric SA income, tricky rest."""
    rng = np.random.default_rng(seed)
    header = ["id", "zip", "age", "amount", "sex", "note", "income", "city"]
    rows = []
    for i in range(n):
        pick = {name: values[i % len(values)] for name, values in TRICKY.items()}
        rows.append([f"{i:04d}", pick["zip"], str(int(rng.integers(18, 80))), pick["amount"],
                     str(rng.choice(["M", "F"])), pick["note"], f"{rng.random():.3f}",
                     pick["city"]])
    return header, rows


def _write_raw(path: Path, header: list[str], rows: list[list[str]], sep: str = ",") -> None:
    path.write_text("".join(sep.join(r) + "\n" for r in [header, *rows]), encoding="utf-8")


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _one_line_error(status: int, err: str, expected: int, *needles: str) -> None:
    assert status == expected, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("proxanon: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# --- untouched columns --------------------------------------------------------------------


@pytest.mark.parametrize("sep", [",", ";"])
def test_untouched_columns_come_out_byte_for_byte(tmp_path: Path, capsys, sep: str) -> None:
    header, rows = _raw_rows(120)
    if sep != ",":
        rows = [[f.replace(",", sep) for f in r] for r in rows]
    _write_raw(tmp_path / "in.csv", header, rows, sep)
    status, out, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                            str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY, "--sep", sep)
    assert status == 0, err
    text = (tmp_path / "out.csv").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == sep.join([*header, "group"])
    published = list(csv.reader(lines[1:], delimiter=sep))
    assert len(published) == len(rows)
    for raw, line, values in zip(rows, lines[1:], published, strict=True):
        # The published line is the input line with the QI fields (age, sex) replaced.
        expected = list(raw)
        expected[2], expected[4] = values[2], values[4]
        assert line == sep.join([*expected, values[-1]])
    # The groups really are published: each group shows one (age, sex) tuple.
    frame = pd.DataFrame(published, columns=[*header, "group"])
    assert (frame.groupby("group")[["age", "sex"]].nunique() == 1).all().all()
    assert frame.groupby("group").size().min() >= 5


def test_pandas_default_reader_would_have_changed_them(tmp_path: Path) -> None:
    """What the test above guards against: the previous reader (pandas' defaults)."""
    header, rows = _raw_rows(6)
    _write_raw(tmp_path / "in.csv", header, rows)
    frame = pd.read_csv(tmp_path / "in.csv")
    assert frame["zip"].iloc[0] == 2134 and frame["amount"].iloc[1] == 7.0


def test_parquet_in_and_out_keeps_arrow_types(tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    header, rows = _raw_rows(90)
    frame = pd.DataFrame(rows, columns=header)
    source = pa.table({
        "zip": pa.array(frame["zip"]),
        "age": pa.array(frame["age"].astype(int), pa.int32()),
        "sex": pa.array(frame["sex"]),
        "income": pa.array(frame["income"].astype(float)),
        "amount": pa.array([None if i % 7 == 0 else i * 0.25 for i in range(90)], pa.float32()),
        "day": pa.array(pd.to_datetime("2021-03-01") + pd.to_timedelta(np.arange(90), "D")),
    })
    pq.write_table(source, tmp_path / "in.parquet")
    status, out, err = _cli(capsys, "anonymize", str(tmp_path / "in.parquet"), "-o",
                            str(tmp_path / "out.parquet"), *COLUMNS, *PRIVACY)
    assert status == 0, err
    published = pq.read_table(tmp_path / "out.parquet")
    untouched = ["zip", "income", "amount", "day"]
    assert published.select(untouched).equals(source.select(untouched))
    assert published.schema.field("age").type == pa.string()
    back = pd.read_parquet(tmp_path / "out.parquet")  # pandas' schema note stays consistent
    assert back["group"].dtype == np.int64 and list(back.columns) == [*source.column_names,
                                                                      "group"]


# --- empty cells, headers, options --------------------------------------------------------


def test_empty_cell_is_an_error_naming_column_and_line(tmp_path: Path, capsys) -> None:
    header, rows = _raw_rows(60)
    rows[6][6] = ""  # income of data row 6: file line 8 (the header is line 1)
    rows[9][2] = "  "
    _write_raw(tmp_path / "in.csv", header, rows)
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY)
    _one_line_error(status, err, 2, "'age'", "line 11 of", "--missing drop")
    assert not (tmp_path / "out.csv").exists()

    report = tmp_path / "report.json"
    status, out, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                            str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY, "--missing", "drop",
                            "--report", str(report))
    assert status == 0, err
    assert "left out 2 row(s)" in out
    published = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert sorted(set(range(60)) - set(published["id"].astype(int))) == [6, 9]
    document = json.loads(report.read_text())
    assert document["rows_with_empty_cells"] == [8, 11]
    assert document["positions"].startswith("file lines, 1-based")


@pytest.mark.parametrize(("content", "needles"), [
    ("id,age,age,sex,income\n1,2,3,M,0.5\n", ["'age'", "columns 2 and 3"]),
    ("id,age,sex,income\n", ["header but no data rows"]),
    ("id,age,sex,income,group\n1,30,M,0.5,0\n", ["'group'", "rename"]),
    ("id,age,sex,income\n1,30,M,0.5\n2,31,F\n", ["line 3 of", "3 field(s)"]),
    ("id,age,sex,income\n1,30,M,inf\n", ["'income'", "'inf'", "line 2 of"]),
])
def test_bad_tables_get_one_clear_line(tmp_path: Path, capsys, content: str,
                                       needles: list[str]) -> None:
    (tmp_path / "in.csv").write_text(content, encoding="utf-8")
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), *COLUMNS, "--k", "1", "--epsilon", "0.1",
                          "--delta", "0")
    _one_line_error(status, err, 2, *needles)
    assert not (tmp_path / "out.csv").exists()


def test_text_sensitive_column_needs_an_order_unless_delta_is_zero(tmp_path: Path,
                                                                    capsys) -> None:
    """A sensitive column of text has no distance: refused with the column, the value, the
    line and the fix where (ε, δ) is checked; taken as it is at --delta 0 (k-anonymity and
    the criteria alone compare values for equality only)."""
    rows = "".join(f"{i},{30 + i % 3},{'MF'[i % 2]},{['high', 'low'][i % 2]}\n"
                   for i in range(12))
    (tmp_path / "in.csv").write_text("id,age,sex,income\n" + rows, encoding="utf-8")
    common = ["anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"),
              *COLUMNS, "--k", "2"]
    status, _, err = _cli(capsys, *common, "--epsilon", "0.1", "--delta", "0.5")
    _one_line_error(status, err, 2, "'income'", "'high'", "line 2 of", "--order")
    assert not (tmp_path / "out.csv").exists()
    status, _, err = _cli(capsys, *common, "--delta", "0")
    assert status == 0, err
    written = (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()
    assert [line.split(",")[3] for line in written[1:]] == [
        line.split(",")[3] for line in rows.splitlines()]


def test_encoding_option(tmp_path: Path, capsys) -> None:
    header, rows = _raw_rows(40)
    text = "".join(",".join(r) + "\n" for r in [header, *rows]).replace("東京", "Paris")
    (tmp_path / "in.csv").write_bytes(text.replace("São", "S\u00e3o").encode("latin-1"))
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY)
    _one_line_error(status, err, 2, "utf-8", "--encoding")
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY, "--encoding", "latin-1")
    assert status == 0, err
    out = (tmp_path / "out.csv").read_bytes()
    assert b"S\xe3o Paulo" in out and b"Z\xfcrich" in out


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == f"proxanon {proxanon.__version__}"


# --- dates --------------------------------------------------------------------------------


def _dates_csv(path: Path, n: int = 60) -> None:
    rng = np.random.default_rng(5)
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 300, n), unit="D")
    pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "code": [str(100 + i) for i in range(n)],
                  "income": rng.random(n).round(3)}).to_csv(path, index=False)


def test_iso_date_qi_reaches_the_library_as_datetime64(tmp_path: Path, capsys,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _dates_csv(tmp_path / "in.csv")
    seen: dict[str, Any] = {}

    def capture(data: pd.DataFrame, **kwargs: Any) -> None:
        seen["dtypes"] = dict(data.dtypes.astype(str))
        raise ValueError("stop here")

    monkeypatch.setattr(sys.modules["proxanon.anonymize"], "anonymize", capture)
    for extra in ([], ["--dates", "day"]):
        _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"),
             "--qi", "day,code", "--sensitive", "income", *PRIVACY, *extra)
        assert seen["dtypes"]["day"].startswith("datetime64"), seen
        assert seen["dtypes"]["code"] == "int64"  # a QI of digits (no leading zeros) is numeric


def test_date_column_with_a_bad_date(tmp_path: Path, capsys) -> None:
    (tmp_path / "in.csv").write_text("day,income\n2020-01-01,1\n2020-02-30,2\n",
                                     encoding="utf-8")
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), "--qi", "day", "--sensitive", "income",
                          "--k", "1", "--epsilon", "0.1", "--delta", "0")
    _one_line_error(status, err, 2, "'2020-02-30'", "line 3 of")


def test_date_qi_is_published_as_date_ranges(tmp_path: Path, capsys) -> None:
    _dates_csv(tmp_path / "in.csv")
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), "--qi", "day", "--sensitive", "income",
                          *PRIVACY)
    assert status == 0, err
    source = pd.read_csv(tmp_path / "in.csv", dtype=str)
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    for (_, label), members in out.groupby(["group", "day"]):
        dates = pd.to_datetime(source.loc[members.index, "day"])
        assert label != "*"
        assert dates.min().date().isoformat() in label
        assert dates.max().date().isoformat() in label


# --- report, audit ------------------------------------------------------------------------


def test_json_value_is_generic_and_typed() -> None:
    @dataclasses.dataclass
    class Inner:
        counts: np.ndarray
        ratio: np.float32

    @dataclasses.dataclass
    class Outer:
        n: np.int64
        flags: tuple[bool, ...]
        inner: Inner
        by_name: dict[str, float]

    value = Outer(np.int64(3), (True, False), Inner(np.array([[1, 2]]), np.float32(0.5)),
                  {"a": float("nan"), "b": 1.5})
    assert json_value(value) == {"n": 3, "flags": [True, False],
                                 "inner": {"counts": [[1, 2]], "ratio": 0.5},
                                 "by_name": {"a": None, "b": 1.5}}
    with pytest.raises(TypeError, match="object"):
        json_value(object())


def test_report_json_holds_every_field(tmp_path: Path, capsys) -> None:
    header, rows = _raw_rows(120)
    _write_raw(tmp_path / "in.csv", header, rows)
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY, "--report",
                          str(tmp_path / "anon.json"))
    assert status == 0, err
    document = json.loads((tmp_path / "anon.json").read_text())
    assert document["command"] == "anonymize" and document["proxanon"] == proxanon.__version__
    report = document["report"]
    assert set(report) == {f.name for f in dataclasses.fields(Report)}
    assert report["satisfied"] is True and report["n"] == 120
    assert report["quasi_identifiers"] == ["age", "sex"]
    income = pd.read_csv(tmp_path / "in.csv", skipinitialspace=True)["income"]
    assert document["scales"] == {"income": [income.min(), income.max()]}

    status, out, err = _cli(capsys, "audit", str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY,
                            "--report", str(tmp_path / "audit.json"))
    assert status == 0, err
    audited = json.loads((tmp_path / "audit.json").read_text())["report"]
    assert set(audited) == {f.name for f in dataclasses.fields(AuditReport)}
    published = pd.read_csv(tmp_path / "out.csv")
    assert sorted(audited["group_sizes"]) == sorted(published.groupby("group").size())
    assert audited["max_risk"] == pytest.approx(report["max_risk"])
    assert audited["scales"] == {"income": [published["income"].min(),
                                            published["income"].max()]}


def test_audit_prints_the_worst_groups_published_values(tmp_path: Path, capsys) -> None:
    header, rows = _raw_rows(80)
    _write_raw(tmp_path / "in.csv", header, rows)
    status, out, _ = _cli(capsys, "audit", str(tmp_path / "in.csv"), *COLUMNS, *PRIVACY)
    assert status == 3  # raw rows: groups far below k
    listed = [line.split(": ", 1)[1].split(" | ") for line in out.splitlines()
              if line.startswith("    group ") and " | " in line]
    assert len(listed) == 5
    tuples = {(r[2], r[4]) for r in rows}
    for age, sex in listed:
        assert (age, sex) in tuples


def test_audit_with_a_sensitive_taxonomy(tmp_path: Path, capsys) -> None:
    """Anonymize with a taxonomy on the sensitive column, then audit the output with it."""
    rng = np.random.default_rng(11)
    n = 300
    occupations = pd.read_csv(OCCUPATION_TAXONOMY, sep=";",
                              header=None)[0].tolist()
    pd.DataFrame({"age": rng.integers(18, 80, n), "occupation": rng.choice(occupations, n)}
                 ).to_csv(tmp_path / "in.csv", index=False)
    taxonomy = ["--hierarchy", f"occupation={OCCUPATION_TAXONOMY}"]
    args = ["--qi", "age", "--sensitive", "occupation", "--k", "10", "--epsilon", "0",
            "--delta", "0.7", *taxonomy]
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), *args)
    assert status == 0, err
    status, out, err = _cli(capsys, "audit", str(tmp_path / "out.csv"), *args)
    assert status == 0, (out, err)
    assert "NOT satisfied" not in out
    # The same table audited without the taxonomy cannot compare text.
    status, _, err = _cli(capsys, "audit", str(tmp_path / "out.csv"), *args[:-2])
    _one_line_error(status, err, 2, "occupation", "--hierarchy")


def test_infeasible_message_comes_from_the_error_type_not_its_text(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI words an InfeasibleError from the partition it carries, whatever the
    library's message says (no rewriting of message text)."""
    part = proxanon.partition(np.zeros((20, 1)), k=5, epsilon=0.1, delta=0.5,
                              on_infeasible="best_effort")

    def infeasible(data: pd.DataFrame, **kwargs: Any) -> None:
        raise proxanon.InfeasibleError("library wording: pass on_infeasible='best_effort'",
                                       partition=part)

    monkeypatch.setattr(sys.modules["proxanon.anonymize"], "anonymize", infeasible)
    header, rows = _raw_rows(20)
    _write_raw(tmp_path / "in.csv", header, rows)
    status, out, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                            str(tmp_path / "out.csv"), *COLUMNS, *PRIVACY)
    _one_line_error(status, err, 1, "infeasible", "20 row(s) in 4 of 4 group(s)",
                    "--best-effort", "--suppress FRACTION")
    assert "library wording" not in err and "on_infeasible" not in err
    assert out == "" and not (tmp_path / "out.csv").exists()


def test_missing_report_extra_is_one_line(tmp_path: Path, capsys,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    header, rows = _raw_rows(40)
    _write_raw(tmp_path / "in.csv", header, rows)
    status, _, err = _cli(capsys, "report", str(tmp_path / "in.csv"), *COLUMNS, *PRIVACY,
                          "-o", str(tmp_path / "r.html"))
    _one_line_error(status, err, 2, "proxanon[report]")
    assert not (tmp_path / "r.html").exists()


# --- output files: complete or absent -----------------------------------------------------


def test_failed_write_keeps_the_previous_output(tmp_path: Path, capsys,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    header, rows = _raw_rows(60)
    _write_raw(tmp_path / "in.csv", header, rows)
    (tmp_path / "out.csv").write_bytes(b"previous output\n")
    real = tableio.CsvTable.write_rows

    def fail_midway(self: tableio.CsvTable, handle: Any, *args: Any) -> None:
        real(self, handle, *args)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tableio.CsvTable, "write_rows", fail_midway)
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                          str(tmp_path / "out.csv"), "--force", *COLUMNS, *PRIVACY)
    _one_line_error(status, err, 2, "No space left")
    assert (tmp_path / "out.csv").read_bytes() == b"previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


def _exe() -> str:
    path = shutil.which("proxanon")
    assert path is not None, "the proxanon console script is not installed"
    return path


def test_file_size_limit_leaves_no_partial_file(tmp_path: Path) -> None:
    header, rows = _raw_rows(3000)
    _write_raw(tmp_path / "in.csv", header, rows)
    (tmp_path / "out.csv").write_bytes(b"previous output\n")
    limit = (tmp_path / "in.csv").stat().st_size // 2

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run([_exe(), "anonymize", "in.csv", "-o", "out.csv", "--force", *COLUMNS,
                           *PRIVACY], capture_output=True, text=True, cwd=tmp_path,
                          preexec_fn=limited, timeout=300, check=False)
    _one_line_error(proc.returncode, proc.stderr, 2, "too large")
    assert (tmp_path / "out.csv").read_bytes() == b"previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


@pytest.mark.slow
def test_ctrl_c_exits_130_and_writes_nothing(tmp_path: Path) -> None:
    """SIGINT once the native engine is working (its stage shows on a pseudo-terminal):
    exit 130, the one-line message, no output or temporary file. Whether the native loop
    stops at once or at its next return to Python, the outcome is the same."""
    # A dense best effort (every value near a third of the others): seconds of repair, so
    # the engine is still working when the signal comes, however fast the engine gets.
    rng = np.random.default_rng(0)
    n = 400_000
    pd.DataFrame({"a": rng.integers(0, 90, n), "b": rng.integers(0, 5, n),
                  "s": rng.random(n)}).to_csv(tmp_path / "in.csv", index=False)
    sent = []

    def interrupt_in_the_engine(seen: bytes, proc: subprocess.Popen[bytes]) -> None:
        # A timed stage shows "stage (", the repair its count, "repair: ".
        if not sent and any(marker.encode() in seen for marker in (
                "proxanon: graph (", "proxanon: initialize (", "proxanon: repair: ")):
            proc.send_signal(signal.SIGINT)
            sent.append(True)

    status, seen = run_on_a_terminal(
        ["anonymize", "in.csv", "-o", "out.csv", "--qi", "a,b", "--sensitive", "s", "--k",
         "10", "--epsilon", "0.5", "--delta", "0.8", "--best-effort"], tmp_path,
        interrupt_in_the_engine)
    assert sent, "the run ended before the engine started"
    assert status == 130, seen[-500:]
    assert b"proxanon: interrupted" in seen and b"Traceback" not in seen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_python_dash_m_runs_the_same_main(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "proxanon", "--version"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60, check=False,
                          env={**os.environ})
    assert proc.returncode == 0 and proc.stdout.strip() == f"proxanon {proxanon.__version__}"


def test_metric_each_on_the_command_line_is_min_component(tmp_path: Path, capsys) -> None:
    """``--metric each`` publishes what ``--metric min_component`` does, and --help lists it."""
    header, rows = _raw_rows(120)
    _write_raw(tmp_path / "in.csv", header, rows)
    tables = []
    for metric in ("each", "min_component"):
        out = tmp_path / f"{metric}.csv"
        status, _, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o", str(out),
                              "--qi", "age,sex", "--sensitive", "income,amount", "--k", "5",
                              "--epsilon", "0.05", "--delta", "0.5", "--best-effort",
                              "--metric", metric)
        assert status in (0, 3), err
        tables.append(out.read_bytes())
    assert tables[0] == tables[1]
    with pytest.raises(SystemExit):
        main(["anonymize", "--help"])
    assert "'each'" in capsys.readouterr().out
