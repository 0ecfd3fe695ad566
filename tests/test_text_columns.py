"""Text stays text: codes written with leading zeros, columns with a hierarchy and columns
named in ``--text`` are read as written, matched to a hierarchy's leaves as written, and a
mismatch that is only leading zeros names the fix (on the command line and in Python)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon._errors import LeadingZerosError
from proxanon.cli import main

ZIPS = ["02134", "02139", "02140", "08225", "10001", "10002"]
PRIVACY = ["--k", "5", "--epsilon", "0.01", "--delta", "0.5"]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _table(folder: Path, n: int = 60) -> Path:
    """ZIP codes (leading zeros), ages and incomes; each ZIP on n / 6 rows."""
    rng = np.random.default_rng(1)
    lines = ["zip,age,income"] + [f"{ZIPS[i % 6]},{20 + i % 30},{int(rng.integers(1000, 90000))}"
                                  for i in range(n)]
    path = folder / "in.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _hierarchy(folder: Path, zeros: bool = True) -> Path:
    """The ARX-format ZIP hierarchy: code, 3-digit prefix, first digit, *."""
    path = folder / "zip.csv"
    rows = [f"{z if zeros else z.lstrip('0')};{z[:3]}**;{z[:1]}****;*" for z in ZIPS]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _fields(path: Path, column: str) -> list[str]:
    """The raw text of one column, field by field (no type conversion)."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    j = rows[0].index(column)
    return [row[j] for row in rows[1:]]


def test_codes_with_leading_zeros_stay_text_through_the_cli(tmp_path: Path, capsys) -> None:
    """A QI of codes written with leading zeros is published as each code, byte for byte, or
    as ``*``: never as a number (2134) or an interval; the summary says it was read as
    text."""
    source = _table(tmp_path)
    status, out, err = _cli(capsys, "anonymize", str(source), "-o", str(tmp_path / "out.csv"),
                            "--qi", "zip,age", "--sensitive", "income", *PRIVACY)
    assert status == 0, err
    assert "QI column 'zip' is read as text" in out and "'02134'" in out
    given, published = _fields(source, "zip"), _fields(tmp_path / "out.csv", "zip")
    assert len(published) == len(given)
    assert all(p in (g, "*") for g, p in zip(given, published, strict=True)), published
    assert any(p == g for g, p in zip(given, published, strict=True))
    # The bytes of the rows published as written are the input's.
    raw_in = (tmp_path / "in.csv").read_bytes().splitlines()[1:]
    raw_out = (tmp_path / "out.csv").read_bytes().splitlines()[1:]
    kept = [i for i, (g, p) in enumerate(zip(given, published, strict=True)) if g == p]
    assert all(raw_out[i].split(b",")[0] == raw_in[i].split(b",")[0] for i in kept)


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_a_column_with_a_hierarchy_is_matched_as_written(tmp_path: Path, capsys,
                                                         form: str) -> None:
    """ZIP codes of CSV text, or of a Parquet string column, find the leaves ``02134``...:
    every published value is the row's code or one of its ancestors in the hierarchy."""
    source = _table(tmp_path)
    if form == "parquet":
        frame = pd.read_csv(source, dtype={"zip": str})
        source = tmp_path / "in.parquet"
        frame.to_parquet(source)
    taxonomy = _hierarchy(tmp_path)
    out = tmp_path / "out.csv"
    status, _, err = _cli(capsys, "anonymize", str(source), "-o", str(out), "--qi", "zip,age",
                          "--sensitive", "income", "--hierarchy", f"zip={taxonomy}", *PRIVACY)
    assert status == 0, err
    ancestors = {z: {z, f"{z[:3]}**", f"{z[:1]}****", "*"} for z in ZIPS}
    given = pd.read_csv(tmp_path / "in.csv", dtype=str)["zip"].tolist()
    published = _fields(out, "zip")
    assert all(p in ancestors[g] for g, p in zip(given, published, strict=True)), published
    assert any(p == g for g, p in zip(given, published, strict=True))


def test_text_option_keeps_a_column_of_digits_as_text(tmp_path: Path, capsys) -> None:
    """``--text age``: published as each age or ``*`` (a taxonomy of its values), never an
    interval; without it the same column is published as intervals. The audit and the
    other table commands take --text too."""
    source = _table(tmp_path)
    runs = {}
    for extra in ([], ["--text", "age"]):
        out = tmp_path / f"out{len(extra)}.csv"
        status, _, err = _cli(capsys, "anonymize", str(source), "-o", str(out), "--qi",
                              "zip,age", "--sensitive", "income", *PRIVACY, *extra)
        assert status == 0, err
        runs[bool(extra)] = _fields(out, "age")
    given = _fields(source, "age")
    assert all(p in (g, "*") for g, p in zip(given, runs[True], strict=True)), runs[True]
    assert any(p.startswith("[") for p in runs[False])
    status, _, err = _cli(capsys, "audit", str(tmp_path / "out2.csv"), "--qi", "zip,age",
                          "--sensitive", "income", "--text", "age", *PRIVACY)
    assert status == 0, err


def test_text_option_is_checked(tmp_path: Path, capsys) -> None:
    source = _table(tmp_path)
    common = [str(source), "-o", str(tmp_path / "out.csv"), "--qi", "zip,age", "--sensitive",
              "income", *PRIVACY]
    status, _, err = _cli(capsys, "anonymize", *common, "--text", "nope")
    assert status == 2 and "--text names column(s) ['nope']" in err
    status, _, err = _cli(capsys, "anonymize", *common, "--text", "income")
    assert status == 2 and "--order income=" in err and "--hierarchy income=" in err
    status, _, err = _cli(capsys, "anonymize", *common, "--text", "age", "--dates", "age")
    assert status == 2 and "both --text and --dates" in err
    assert not (tmp_path / "out.csv").exists()


def test_a_sensitive_column_written_with_leading_zeros_is_not_converted_silently(
        tmp_path: Path, capsys) -> None:
    """Compared as numbers (it has no order or taxonomy), but the summary says so, and its
    cells are written as read."""
    lines = ["q,score"] + [f"{i % 4},{i % 12:03d}" for i in range(48)]
    (tmp_path / "in.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out, err = _cli(capsys, "anonymize", str(tmp_path / "in.csv"), "-o",
                            str(tmp_path / "out.csv"), "--qi", "q", "--sensitive", "score",
                            "--k", "4", "--epsilon", "0.01", "--delta", "0.5")
    assert status == 0, err
    assert "sensitive column 'score' is compared as numbers" in out and "'000'" in out
    assert _fields(tmp_path / "out.csv", "score") == [line.split(",")[1] for line in lines[1:]]


def test_a_mismatch_of_leading_zeros_names_the_fix_on_the_command_line(tmp_path: Path,
                                                                       capsys) -> None:
    """Data that lost its zeros (2134 for the leaf 02134), and a hierarchy that lost them:
    one line saying which side lost them and what to do, exit status 2."""
    source = _table(tmp_path)
    stripped = tmp_path / "stripped.csv"
    text = source.read_text(encoding="utf-8").splitlines()
    stripped.write_text("\n".join([text[0], *(line.lstrip("0") for line in text[1:])]) + "\n",
                        encoding="utf-8")
    common = ["-o", str(tmp_path / "out.csv"), "--qi", "zip,age", "--sensitive", "income",
              *PRIVACY]
    status, _, err = _cli(capsys, "anonymize", str(stripped), *common, "--hierarchy",
                          f"zip={_hierarchy(tmp_path)}")
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert "'2134' for the leaf '02134'" in err
    assert "write the column as text with its zeros" in err
    status, _, err = _cli(capsys, "anonymize", str(source), *common, "--hierarchy",
                          f"zip={_hierarchy(tmp_path, zeros=False)}")
    assert status == 2, err
    assert "'02134' for the leaf '2134'" in err and "the hierarchy file lost them" in err


def test_a_mismatch_of_leading_zeros_names_the_fix_in_python(tmp_path: Path) -> None:
    """pandas reads ZIP codes as numbers: the error names ``dtype={'zip': str}``, and that
    fix works."""
    source, taxonomy = _table(tmp_path), _hierarchy(tmp_path)
    args = {"quasi_identifiers": ["zip", "age"], "sensitive": "income", "k": 5,
            "epsilon": 0.01, "delta": 0.5, "hierarchies": {"zip": str(taxonomy)}}
    numbers = pd.read_csv(source)
    with pytest.raises(LeadingZerosError, match=r"dtype=\{'zip': str\}") as caught:
        proxanon.anonymize(numbers, **args)
    assert caught.value.column == "zip" and caught.value.data_lost_zeros
    assert ("2134", "02134") in caught.value.examples
    assert isinstance(caught.value, ValueError)
    fixed = proxanon.anonymize(pd.read_csv(source, dtype={"zip": str}), **args)
    assert fixed.satisfied
    assert set(fixed.table["zip"]) <= {"*", *ZIPS, *(f"{z[:3]}**" for z in ZIPS),
                                       *(f"{z[:1]}****" for z in ZIPS)}
    # A value that is no leaf with or without zeros keeps the plain message.
    tree = proxanon.Hierarchy.from_csv(taxonomy)
    with pytest.raises(ValueError, match="not in its hierarchy") as plain:
        tree.leaf_index([99999], column="zip")
    assert not isinstance(plain.value, LeadingZerosError)


@pytest.mark.slow
def test_the_dask_path_reads_a_column_with_a_hierarchy_as_text(tmp_path: Path, capsys) -> None:
    """``--dask`` reads the CSV with Dask, which would type ZIP codes as numbers: a column with
    a hierarchy (or named in --text) is read as text, so its codes find their leaves."""
    source, taxonomy = _table(tmp_path), _hierarchy(tmp_path)
    out = tmp_path / "out"
    status, _, err = _cli(capsys, "anonymize", str(source), "--dask", "-o", str(out), "--qi",
                          "zip,age", "--sensitive", "income", "--hierarchy", f"zip={taxonomy}",
                          "--text", "age", *PRIVACY)
    assert status == 0, err
    published = pd.read_parquet(out).sort_index()
    given = pd.read_csv(source, dtype=str)
    ancestors = {z: {z, f"{z[:3]}**", f"{z[:1]}****", "*"} for z in ZIPS}
    assert all(p in ancestors[g] for g, p in zip(given["zip"], published["zip"], strict=True))
    assert all(p in (g, "*") for g, p in zip(given["age"], published["age"], strict=True))


@pytest.mark.slow
def test_the_summary_notes_integer_codes_and_a_large_class(tmp_path) -> None:
    """A numeric QI of a few distinct whole numbers (race coded 1..5) is published as ranges:
    the summary says so and names --text; a QI of many values (age) gets no such note, nor
    one named in --text. A class above --large-class of the rows (default 2%) is noted."""
    import subprocess
    import sys

    rng = np.random.default_rng(4)
    n = 600
    pd.DataFrame({"age": rng.integers(18, 90, n), "race": rng.integers(1, 6, n),
                  "pay": rng.integers(0, 50, n) * 100}).to_csv(tmp_path / "in.csv", index=False)
    base = [sys.executable, "-m", "proxanon", "anonymize", str(tmp_path / "in.csv"), "--qi",
            "age,race", "--sensitive", "pay", "--k", "10", "--delta", "0", "-o",
            str(tmp_path / "out.csv"), "--force"]

    def run(*extra: str) -> str:
        done = subprocess.run([*base, *extra], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    coded = run()
    assert "QI column 'race' holds 5 distinct whole number(s)" in coded and "--text race" in coded
    assert "QI column 'age' holds" not in coded
    assert "QI column 'race' holds" not in run("--text", "race")
    assert "note: the largest class holds" in coded  # classes of 10 to 20 of 600 rows: > 2%
    assert "note: the largest class holds" not in run("--large-class", "0.5")
