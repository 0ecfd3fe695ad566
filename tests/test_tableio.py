"""proxanon.tableio: CSV read as text and written back byte for byte, Parquet with its Arrow
types, and output files that are replaced whole or not at all."""

from __future__ import annotations

import importlib
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import IO

import numpy as np
import pytest

from proxanon import tableio
from proxanon.tableio import (
    CsvTable,
    ParquetUnavailableError,
    TableEncodingError,
    TableReadError,
    atomic_write,
    read_csv,
    read_table,
    write_table,
)

# Raw fields as a user's file holds them; "age" is the column that gets replaced.
HEADER = ['"id"', "zip", "amount", "price", "note", "age", "city"]
ROWS = [
    ["1", "02134", "100.50", "7.00", '"a, b"', "39", "Zürich"],
    ["2", "00501", "", "7.10", '"say ""hi"""', "41", '"São Paulo"'],
    ["3", "99999", "1e3", "0007", "", "39", "東京"],
    ["4", "02134", " 12 ", "-0.0", '"two\nlines"', "50", "plain"],
]


def _write(path: Path, rows: list[list[str]], sep: str = ",", newline: str = "\n",
           encoding: str = "utf-8", bom: bool = False) -> bytes:
    text = newline.join(sep.join(fields) for fields in [HEADER, *rows]) + newline
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode(encoding)
    path.write_bytes(raw)
    return raw


def _expected(rows: list[list[str]], kept: list[int], ages: list[str], groups: list[int],
              sep: str = ",", newline: str = "\n") -> str:
    """The output by hand: every field as read except age, then the group."""
    lines = [sep.join([*HEADER, "group"])]
    for row, age, group in zip(kept, ages, groups, strict=True):
        fields = list(rows[row])
        fields[5] = age
        lines.append(sep.join([*fields, str(group)]))
    return newline.join(lines) + newline


@pytest.mark.parametrize(("sep", "newline", "bom"), [(",", "\n", False), (";", "\r\n", True),
                                                    ("\t", "\n", False)])
def test_untouched_columns_are_written_byte_for_byte(tmp_path: Path, sep: str, newline: str,
                                                     bom: bool) -> None:
    rows = [[field.replace(",", sep) if sep != "," else field for field in r] for r in ROWS]
    _write(tmp_path / "in.csv", rows, sep, newline, bom=bom)
    table = read_csv(tmp_path / "in.csv")
    assert table.sep == sep and table.names == ["id", *HEADER[1:]]
    assert table.text_columns(["zip", "amount", "note"]) == {
        "zip": ["02134", "00501", "99999", "02134"],
        "amount": ["100.50", "", "1e3", "12"],
        "note": [f"a{sep} b", 'say "hi"', "", "two\nlines"],
    }
    assert table.lines == [2, 3, 4, 5]  # 1-based file lines; row 4 spans lines 5-6

    kept = np.array([0, 1, 3], dtype=np.int64)
    write_table(table, tmp_path / "out.csv", kept, replace={"age": ["[39-50]", "41", "x, y"]},
                append={"group": np.array([0, 1, 0], dtype=np.int64)})
    out = (tmp_path / "out.csv").read_bytes()
    expected = _expected(rows, [0, 1, 3], ["[39-50]", "41", '"x, y"' if sep == "," else "x, y"],
                         [0, 1, 0], sep, newline)
    assert out == (b"\xef\xbb\xbf" if bom else b"") + expected.encode()


def test_other_encoding_is_read_and_written_in_it(tmp_path: Path) -> None:
    raw = _write(tmp_path / "in.csv", ROWS[:1], encoding="latin-1")
    with pytest.raises(TableEncodingError) as caught:
        read_csv(tmp_path / "in.csv")
    assert caught.value.encoding == "utf-8" and str(tmp_path / "in.csv") in str(caught.value)
    table = read_csv(tmp_path / "in.csv", encoding="latin-1")
    write_table(table, tmp_path / "out.csv", np.array([0]), replace={},
                append={"group": np.array([7])})
    assert (tmp_path / "out.csv").read_bytes() == raw.replace(b"\n", b",group\n", 1).replace(
        b"Z\xfcrich\n", b"Z\xfcrich,7\n")


@pytest.mark.parametrize(("content", "needles"), [
    (b"", ["empty"]),
    (b"a,b,c\n", ["header but no data rows"]),
    (b"a,b,a\n1,2,3\n", ["'a'", "columns 1 and 3"]),
    (b"a,b\n1,2\n\n3,4,5\n", ["line 4 of", "3 field(s)", "header has 2"]),
    (b'a,b\n1,"open\n', ["line 2 of", "never closed"]),
    (b'a,b\n1,"x"y\n', ["line 2 of", "not closed"]),
])
def test_bad_files_are_named_with_the_line(tmp_path: Path, content: bytes,
                                           needles: list[str]) -> None:
    (tmp_path / "in.csv").write_bytes(content)
    with pytest.raises(TableReadError) as caught:
        read_csv(tmp_path / "in.csv").text_columns(["a"])
    for needle in needles:
        assert needle in str(caught.value), (needle, str(caught.value))


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("error", [OSError(27, "File too large"), KeyboardInterrupt()])
def test_failed_write_leaves_the_old_file_and_no_partial_one(tmp_path: Path,
                                                             error: BaseException) -> None:
    target = tmp_path / "out.csv"
    target.write_bytes(b"previous\n")

    def half_then_fail(handle: IO[bytes]) -> None:
        handle.write(b"new,partial\n" * 1000)
        raise error

    with pytest.raises(type(error)):
        atomic_write(target, half_then_fail)
    assert target.read_bytes() == b"previous\n"
    assert _listing(tmp_path) == ["out.csv"]


def test_atomic_write_replaces_with_a_plain_file_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_bytes(b"previous\n")
    atomic_write(target, lambda handle: handle.write(b"new\n"))
    assert target.read_bytes() == b"new\n"
    assert _listing(tmp_path) == ["out.csv"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600


def test_parquet_keeps_untouched_arrow_types_and_values(tmp_path: Path) -> None:
    import datetime
    import decimal

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pa.table({
        "zip": pa.array(["02134", "00501", None, "02134"]),
        "amount": pa.array([decimal.Decimal("100.50"), decimal.Decimal("7.00"), None,
                            decimal.Decimal("1.25")], pa.decimal128(9, 2)),
        "when": pa.array([datetime.date(2020, 1, d) for d in (1, 2, 3, 4)], pa.date32()),
        "count": pa.array([1, None, 3, 4], pa.int16()),
        "age": pa.array([39, 41, 39, 50], pa.int64()),
    })
    pq.write_table(source, tmp_path / "in.parquet")
    table = read_table(tmp_path / "in.parquet")
    assert table.position(2) == f"row 3 of {tmp_path / 'in.parquet'}"
    assert str(table.column("when").dtype).startswith("datetime64")
    kept = np.array([3, 0, 2], dtype=np.int64)
    write_table(table, tmp_path / "out.parquet", kept,
                replace={"age": ["[39-50]", "[39-50]", "39"]},
                append={"group": np.array([0, 0, 1], dtype=np.int64)})
    out = pq.read_table(tmp_path / "out.parquet")
    untouched = ["zip", "amount", "when", "count"]
    assert out.select(untouched).equals(source.select(untouched).take(pa.array(kept)))
    assert out.schema.field("age").type == pa.string()
    assert out.column("group").to_pylist() == [0, 0, 1]
    # A CSV output of the same rows, from a Parquet source, goes through Arrow's writer.
    write_table(table, tmp_path / "out.csv", kept, replace={"age": ["a", "b", "c"]},
                append={"group": np.array([0, 0, 1], dtype=np.int64)})
    back = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert list(back["zip"]) == ["02134", "02134", ""]
    assert list(back["amount"]) == ["1.25", "100.50", ""]


def test_csv_to_parquet_types_numbers_and_keeps_text(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    _write(tmp_path / "in.csv", ROWS)
    write_table(read_csv(tmp_path / "in.csv"), tmp_path / "out.parquet",
                np.array([0, 1, 3], dtype=np.int64), replace={"age": ["39", "41", "50"]},
                append={"group": np.array([0, 0, 1], dtype=np.int64)})
    out = pq.read_table(tmp_path / "out.parquet")
    types = {field.name: field.type for field in out.schema}
    # Numbers as numbers (an empty cell a null), text with leading zeros as text; the
    # type comes from the whole column ("0007" makes price text, "-0.0" alone would not).
    assert types == {"id": pa.int64(), "zip": pa.string(), "amount": pa.float64(),
                     "price": pa.string(), "note": pa.string(), "age": pa.int64(),
                     "city": pa.string(), "group": pa.int64()}
    values = out.to_pydict()
    assert values["zip"] == ["02134", "00501", "02134"]
    assert values["amount"] == [100.5, None, 12.0] and values["id"] == [1, 2, 4]
    assert values["price"] == ["7.00", "7.10", "-0.0"]
    assert values["note"] == ["a, b", 'say "hi"', "two\nlines"]
    assert values["city"] == ["Zürich", "São Paulo", "plain"]


def test_columns_named_text_stay_text_in_parquet(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    _write(tmp_path / "in.csv", ROWS)
    write_table(read_csv(tmp_path / "in.csv"), tmp_path / "out.parquet",
                np.array([0, 1], dtype=np.int64), replace={"age": ["39", "41"]},
                append={"group": np.array([0, 1], dtype=np.int64)}, text={"id", "age"})
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema.field("id").type == pa.string() == out.schema.field("age").type
    assert out.column("id").to_pylist() == ["1", "2"]
    assert out.column("age").to_pylist() == ["39", "41"]
    assert out.schema.field("amount").type == pa.float64()


@pytest.mark.parametrize(("cells", "kind"), [
    (["1", "-20", "", "300"], "integer"), (["1", "2.5", "1e3", " 7 "], "decimal"),
    (["02134", "12"], "text"), (["0.5", "00.5"], "text"), ([".5"], "text"),
    (["1,5"], "text"), (["1" * 19], "text"), (["1" * 18], "integer"), (["", " "], "empty"),
    (["NaN", "1"], "text"), (["0", "-0"], "decimal"),
])
def test_text_kind(cells: list[str], kind: str) -> None:
    assert tableio.text_kind(cells) == kind


def test_missing_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    real = importlib.import_module

    def without_pyarrow(name: str, package: str | None = None) -> object:
        if name.startswith("pyarrow"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", without_pyarrow)
    (tmp_path / "in.parquet").write_bytes(b"PAR1")
    with pytest.raises(ParquetUnavailableError, match=r"proxanon\[parquet\]"):
        read_table(tmp_path / "in.parquet")
    _write(tmp_path / "in.csv", ROWS)
    table = read_table(tmp_path / "in.csv")
    assert isinstance(table, CsvTable)
    with pytest.raises(ParquetUnavailableError, match=r"proxanon\[parquet\]"):
        write_table(table, tmp_path / "out.parquet", np.array([0]), replace={},
                    append={"group": np.array([0])})
    assert not (tmp_path / "out.parquet").exists()


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_write_removes_the_partial_files_a_killed_writer_left(tmp_path) -> None:
    target = tmp_path / "out.csv"
    # A writer killed with SIGKILL in the middle of atomic_write leaves its partial file.
    script = textwrap.dedent(f"""
        import time
        from proxanon.tableio import atomic_write
        def write(handle):
            handle.write(b"half a table")
            handle.flush()
            print("writing", flush=True)
            time.sleep(60)
        atomic_write({str(target)!r}, write)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    child.kill()
    child.wait()
    left = list(tmp_path.glob(".out.csv.*.part"))
    assert len(left) == 1
    # Partial files of a running writer and of other targets are kept.
    running = tmp_path / f".out.csv.{os.getpid()}.abc.part"
    other = tmp_path / f".other.csv.{_dead_pid()}.abc.part"
    running.write_bytes(b"")
    other.write_bytes(b"")
    atomic_write(target, lambda handle: handle.write(b"a,b\n1,2\n"))
    assert target.read_bytes() == b"a,b\n1,2\n"
    assert not left[0].exists()
    assert running.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [target.name, running.name, other.name])


@pytest.mark.parametrize(("encoding", "city"), [
    ("utf-16", "Zürich"), ("utf-8-sig", "東京"), ("cp1252", "Zürich"), ("shift_jis", "東京"),
    ("koi8-r", "Москва")])
def test_every_encoding_round_trips_byte_for_byte(tmp_path: Path, encoding: str,
                                                  city: str) -> None:
    """Encodings whose bytes are split as they are (one byte per character) and those read
    through UTF-8 (UTF-16, Shift JIS, UTF-8 with a signature) read the same values and write
    an untouched row back as it was; a replaced field is written in the file's encoding."""
    text = f'id|city|age\r\n1|"{city} ""x"""|30\r\n2|{city}|40\r\n'
    raw = text.encode(encoding)
    (tmp_path / "in.csv").write_bytes(raw)
    table = read_csv(tmp_path / "in.csv", encoding=encoding)
    assert table.sep == "|" and table.names == ["id", "city", "age"]
    assert table.text_columns(["city"]) == {"city": [f'{city} "x"', city]}
    write_table(table, tmp_path / "out.csv", np.arange(2), replace={}, append={})
    assert (tmp_path / "out.csv").read_bytes() == raw
    write_table(table, tmp_path / "out.csv", np.array([1]), replace={"age": [city]},
                append={"group": np.array([7])})
    assert (tmp_path / "out.csv").read_bytes().decode(encoding) == (
        f"id|city|age|group\r\n2|{city}|{city}|7\r\n")
