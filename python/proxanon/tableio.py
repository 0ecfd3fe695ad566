"""Table files in and out as the user wrote them: CSV read as text, Parquet through pyarrow,
and every output file written whole or not at all.

CSV: each record is kept as its raw text. Only the columns a caller asks for are split out
as values; on output, every column that is not replaced is written back with the bytes it
was read with (quotes and spaces included), so ``02134``, ``100.50`` and ``"a, b"`` stay as
they are. Parquet: the Arrow table is kept, so untouched columns keep their Arrow types and
values. :func:`atomic_write` writes a temporary file in the target's folder and renames it
over the target only when complete and synced, so a failure or an interrupt leaves the
previous file as it was and no partial file behind.

Positions in messages are file lines, 1-based and counting the header ("line 7 of in.csv"),
or Parquet rows, 1-based ("row 7 of in.parquet").

Cost: reading splits every record once to check its field count (a plain ``str.split`` for
records without quotes, a regular-expression scan for the rest); writing splits the kept
records again. Memory: the file's text plus the extracted columns.
"""

from __future__ import annotations

import csv
import glob
import importlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = [
    "CsvTable",
    "ParquetTable",
    "ParquetUnavailableError",
    "TableEncodingError",
    "TableReadError",
    "atomic_write",
    "is_parquet",
    "read_table",
    "write_table",
]

PARQUET_SUFFIXES = (".parquet", ".pq")
#: Rows formatted per ``write`` call when writing CSV.
_WRITE_BATCH = 8192
_QUOTE = '"'


class TableReadError(ValueError):
    """A table file that cannot be read: the message names the file and, where there is one,
    the line (CSV, 1-based, the header is line 1) or the row (Parquet, 1-based)."""


class TableEncodingError(TableReadError):
    """A CSV file that is not text in the encoding it was read with."""

    def __init__(self, path: Path, encoding: str, offset: int, byte: int) -> None:
        super().__init__(f"cannot read {path}: byte 0x{byte:02x} at offset {offset} is not "
                         f"valid {encoding} text; name the file's encoding")
        self.path = path
        self.encoding = encoding
        self.offset = offset


class ParquetUnavailableError(ImportError):
    """Parquet was asked for, but pyarrow (the ``parquet`` extra) is not installed."""


def is_parquet(path: str | os.PathLike[str]) -> bool:
    """True when the file name says Parquet (``.parquet`` or ``.pq``)."""
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def _pyarrow() -> tuple[Any, Any]:
    # Imported by name: pyarrow ships no type information, so it is used as Any.
    try:
        return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")
    except ModuleNotFoundError as exc:
        raise ParquetUnavailableError(
            "reading or writing Parquet needs pyarrow: pip install 'proxanon[parquet]'"
        ) from exc


def _duplicates(path: Path, names: list[str]) -> None:
    seen: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if name in seen:
            raise TableReadError(
                f"column name {name!r} appears twice in the header of {path} (columns "
                f"{seen[name]} and {position}); give every column its own name")
        seen[name] = position


def _unquote(field: str) -> str:
    if len(field) >= 2 and field[0] == _QUOTE and field[-1] == _QUOTE:
        return field[1:-1].replace('""', _QUOTE)
    return field


def _quote(value: str, sep: str) -> str:
    """``value`` as one CSV field: quoted only when it must be (or it would lose spaces)."""
    if (sep in value or _QUOTE in value or "\n" in value or "\r" in value
            or value != value.strip()):
        return _QUOTE + value.replace(_QUOTE, '""') + _QUOTE
    return value


@dataclass(frozen=True)
class CsvTable:
    """A CSV file held as its raw records.

    ``records[i]`` is data row i's text without its line terminator (a quoted field may
    span lines); ``lines[i]`` the 1-based file line it starts on (the header is line 1).
    ``names`` are the header's column names, unquoted and stripped; ``header`` the raw
    header fields. ``newline`` and ``bom`` are written back as read.
    """

    path: Path
    encoding: str
    sep: str
    newline: str
    bom: bool
    header: list[str]
    names: list[str]
    records: list[str]
    lines: list[int]

    @property
    def n_rows(self) -> int:
        return len(self.records)

    def position(self, row: int) -> str:
        """Where data row ``row`` (0-based) is, in the words of a message."""
        return f"line {self.lines[row]} of {self.path}"

    def split(self, row: int) -> list[str]:
        """The raw fields of data row ``row``, exactly as in the file."""
        record = self.records[row]
        fields = (record.split(self.sep) if _QUOTE not in record
                  else _split_record(record, self.sep, self.lines[row], self.path))
        if len(fields) != len(self.header):
            raise TableReadError(
                f"{self.position(row)} has {len(fields)} field(s), the header has "
                f"{len(self.header)}; check the separator ({self.sep!r}) and the quoting")
        return fields

    def text_columns(self, names: Sequence[str]) -> dict[str, list[str]]:
        """The unquoted, stripped text of the named columns, one entry per data row.

        Every record is split, so a record with the wrong number of fields is an error
        whichever columns are asked for."""
        index = [(name, self.names.index(name)) for name in names]
        out: dict[str, list[str]] = {name: [] for name in names}
        split = self.split
        for row in range(self.n_rows):
            fields = split(row)
            for name, j in index:
                field = fields[j]
                out[name].append((_unquote(field) if field[:1] == _QUOTE else field).strip())
        return out

    def column(self, name: str) -> pd.Series:
        """One column as a Series of stripped text (object dtype)."""
        return pd.Series(self.text_columns([name])[name], dtype=object, name=name)

    def to_arrow(self) -> Any:
        """Every column as Arrow strings (their unquoted text, spaces kept)."""
        pa, _ = _pyarrow()
        columns: list[list[str]] = [[] for _ in self.names]
        for row in range(self.n_rows):
            for j, field in enumerate(self.split(row)):
                columns[j].append(_unquote(field))
        return pa.table([pa.array(c, pa.string()) for c in columns], names=self.names)


_FIELD_PATTERNS: dict[str, re.Pattern[str]] = {}


def _field_pattern(sep: str) -> re.Pattern[str]:
    """One field at a position: quoted (with "" for a quote), unquoted, or empty."""
    if sep not in _FIELD_PATTERNS:
        s = re.escape(sep)
        _FIELD_PATTERNS[sep] = re.compile(rf'"(?:[^"]|"")*"|[^{s}"][^{s}]*|')
    return _FIELD_PATTERNS[sep]


def _split_record(record: str, sep: str, line: int, path: Path) -> list[str]:
    """Fields of a record that holds a quote: quoted fields matched whole."""
    pattern = _field_pattern(sep)
    fields: list[str] = []
    pos = 0
    while True:
        match = pattern.match(record, pos)
        end = match.end() if match is not None else pos
        fields.append(record[pos:end])
        if end == len(record):
            return fields
        if record[end] != sep:
            raise TableReadError(
                f"line {line} of {path}: a quoted field is not closed right before "
                f"{record[end:end + 10]!r}; a quote inside a quoted field is written \"\"")
        pos = end + 1


def _sniff_sep(header: str) -> str:
    try:
        return csv.Sniffer().sniff(header, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def read_csv(path: str | os.PathLike[str], sep: str | None = None,
             encoding: str = "utf-8") -> CsvTable:
    """Reads a CSV file with a header row as text; ``sep`` is sniffed from the header unless
    given. Blank lines are skipped; a field may span lines inside quotes."""
    where = Path(path)
    if sep is not None and len(sep) != 1:
        raise TableReadError(f"the separator must be one character, got {sep!r}")
    raw = where.read_bytes()
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise TableEncodingError(where, encoding, exc.start, raw[exc.start]) from None
    except LookupError:
        raise TableReadError(f"unknown encoding {encoding!r}") from None
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    pieces = text.split("\n")
    newline = "\r\n" if pieces[0].endswith("\r") else "\n"
    records: list[str] = []
    lines: list[int] = []
    i = 0
    while i < len(pieces):
        start = i
        record = pieces[i]
        # An odd number of quotes means a quoted field goes on to the next line.
        while record.count(_QUOTE) % 2 == 1:
            i += 1
            if i == len(pieces):
                raise TableReadError(f"line {start + 1} of {where}: a quoted field is never "
                                     "closed")
            record += "\n" + pieces[i]
        i += 1
        if record.endswith("\r"):
            record = record[:-1]
        if record.strip():
            records.append(record)
            lines.append(start + 1)
    if not records:
        raise TableReadError(f"{where} is empty: it needs a header row and data rows")
    used = sep if sep is not None else _sniff_sep(records[0])
    header = _split_record(records[0], used, lines[0], where)
    names = [_unquote(field).strip() for field in header]
    _duplicates(where, names)
    if len(records) == 1:
        raise TableReadError(f"{where} has a header but no data rows")
    return CsvTable(path=where, encoding=encoding, sep=used, newline=newline, bom=bom,
                    header=header, names=names, records=records[1:], lines=lines[1:])


@dataclass(frozen=True)
class ParquetTable:
    """A Parquet file held as its Arrow table (``table``)."""

    path: Path
    table: Any

    @property
    def names(self) -> list[str]:
        return [str(name) for name in self.table.column_names]

    @property
    def n_rows(self) -> int:
        return int(self.table.num_rows)

    def position(self, row: int) -> str:
        return f"row {row + 1} of {self.path}"

    def column(self, name: str) -> pd.Series:
        """One column as pandas sees it (dates as datetime64)."""
        series = self.table.column(name).to_pandas(date_as_object=False)
        return pd.Series(series, name=name)

    def to_arrow(self) -> Any:
        return self.table


def read_parquet(path: str | os.PathLike[str]) -> ParquetTable:
    """Reads a Parquet file; needs pyarrow."""
    _, pq = _pyarrow()
    where = Path(path)
    try:
        table = pq.read_table(where)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise TableReadError(f"cannot read {where} as Parquet: {exc}") from None
    _duplicates(where, [str(name) for name in table.column_names])
    if table.num_rows == 0:
        raise TableReadError(f"{where} has columns but no rows")
    return ParquetTable(where, table)


def read_table(path: str | os.PathLike[str], sep: str | None = None,
               encoding: str = "utf-8") -> CsvTable | ParquetTable:
    """Parquet when the name ends in ``.parquet`` or ``.pq``, CSV otherwise."""
    if is_parquet(path):
        return read_parquet(path)
    return read_csv(path, sep, encoding)


def atomic_write(target: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> None:
    """Calls ``write`` on a new temporary file in ``target``'s folder, then flushes, syncs
    and renames it over ``target`` (``os.replace``, atomic on POSIX and Windows).

    On any exception, KeyboardInterrupt included, the temporary file is removed and
    ``target`` is left as it was. The new file gets the mode a plainly created file would.
    The temporary file is named ``.NAME.PID.RANDOM.part`` after the writing process; a writer
    killed outright (``kill -9``, a power cut) cannot remove it, so each write first removes
    the partial files of the same target whose process no longer runs (:func:`remove_stale`).
    """
    where = Path(target)
    remove_stale(where)
    descriptor, temporary = tempfile.mkstemp(dir=where.parent,
                                             prefix=f".{where.name}.{os.getpid()}.",
                                             suffix=".part")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, where)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_stale(target: Path) -> list[Path]:
    """Removes the partial files :func:`atomic_write` left beside ``target`` in a process that
    no longer runs on this machine; returns them. Partial files of running writers, and files
    not named as :func:`atomic_write` names them, are left alone."""
    removed: list[Path] = []
    prefix = f".{target.name}."
    try:
        candidates = list(target.parent.glob(f"{glob.escape(prefix)}*.part"))
    except OSError:
        return removed
    for path in candidates:
        pid_text = path.name[len(prefix):].split(".", 1)[0]
        if not pid_text.isdigit() or _running(int(pid_text)):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    """Whether a process with this id runs here (one we may not signal counts as running)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def _write_csv_records(handle: IO[bytes], source: CsvTable, rows: NDArray[np.int64],
                       replace: Mapping[str, Sequence[str]],
                       append: Mapping[str, NDArray[np.int64]],
                       columns: Sequence[str] | None) -> None:
    def emit(text: str) -> None:
        handle.write(text.encode(source.encoding))

    sep, newline = source.sep, source.newline
    index = [(source.names.index(name), values) for name, values in replace.items()]
    extra = list(append.values())
    header = [*source.header, *(_quote(name, sep) for name in append)]
    every = [*source.names, *append]
    picked = (None if columns is None
              else [every.index(name) for name in columns])
    if picked is not None:
        header = [header[j] for j in picked]
    emit(("\ufeff" if source.bom else "") + sep.join(header) + newline)
    batch: list[str] = []
    for position, row in enumerate(rows.tolist()):
        fields = source.split(row)
        for j, values in index:
            fields[j] = _quote(str(values[position]), sep)
        fields.extend(str(int(values[position])) for values in extra)
        if picked is not None:
            fields = [fields[j] for j in picked]
        batch.append(sep.join(fields) + newline)
        if len(batch) == _WRITE_BATCH:
            emit("".join(batch))
            batch.clear()
    emit("".join(batch))


def _published_arrow(source: CsvTable | ParquetTable, rows: NDArray[np.int64],
                     replace: Mapping[str, Sequence[str]],
                     append: Mapping[str, NDArray[np.int64]]) -> Any:
    """The kept rows of the source's Arrow table, replaced columns as strings, appended
    columns as int64; pandas metadata (if any) updated to match."""
    pa, _ = _pyarrow()
    table = source.to_arrow().take(pa.array(rows, pa.int64()))
    for name, values in replace.items():
        j = table.column_names.index(name)
        table = table.set_column(j, pa.field(name, pa.string()),
                                 pa.array([str(v) for v in values], pa.string()))
    for name, ints in append.items():
        table = table.append_column(pa.field(name, pa.int64()), pa.array(ints, pa.int64()))
    metadata = dict(table.schema.metadata or {})
    if b"pandas" in metadata:
        metadata[b"pandas"] = _patched_pandas_metadata(metadata[b"pandas"], replace, append)
        table = table.replace_schema_metadata(metadata)
    return table


def _patched_pandas_metadata(raw: bytes, replace: Mapping[str, Sequence[str]],
                             append: Mapping[str, NDArray[np.int64]]) -> bytes:
    """pandas' schema note with the replaced columns now text and the appended ones int64
    (pandas reads a column with the dtype the note gives)."""
    note = json.loads(raw)
    described = note.get("columns", [])
    for entry in described:
        if entry.get("name") in replace:
            entry.update(pandas_type="unicode", numpy_type="object", metadata=None)
    for name in append:
        described.append({"name": name, "field_name": name, "pandas_type": "int64",
                          "numpy_type": "int64", "metadata": None})
    return json.dumps(note).encode()


def _selected(table: Any, columns: Sequence[str]) -> Any:
    """The Arrow ``table``'s ``columns``, in that order, without pandas' note of the whole
    table's columns and index (which would no longer describe it)."""
    chosen = table.select(list(columns))
    metadata = {key: value for key, value in (chosen.schema.metadata or {}).items()
                if key != b"pandas"}
    return chosen.replace_schema_metadata(metadata or None)


def write_table(source: CsvTable | ParquetTable, target: str | os.PathLike[str],
                rows: NDArray[np.int64], replace: Mapping[str, Sequence[str]],
                append: Mapping[str, NDArray[np.int64]],
                columns: Sequence[str] | None = None) -> None:
    """Writes ``source``'s rows ``rows`` (0-based data rows, in that order) to ``target``,
    atomically (:func:`atomic_write`).

    ``replace`` gives new text for some columns (one value per written row), ``append`` new
    integer columns at the end; ``columns``, where given, the columns written and their order
    (names of the source's columns and of ``append``). Every other column is written as
    read: CSV to CSV byte for byte, Parquet to Parquet with its Arrow type. A ``.parquet``
    target from a CSV source holds every column as text; a CSV target from a Parquet source
    is written by Arrow's CSV writer (UTF-8, quoted where needed).
    """
    if is_parquet(target):
        _, pq = _pyarrow()
        table = _published_arrow(source, rows, replace, append)
        table = table if columns is None else _selected(table, columns)
        atomic_write(target, lambda handle: pq.write_table(table, handle))
    elif isinstance(source, CsvTable):
        atomic_write(target, lambda handle: _write_csv_records(handle, source, rows, replace,
                                                               append, columns))
    else:
        _pyarrow()
        arrow_csv = importlib.import_module("pyarrow.csv")
        table = _published_arrow(source, rows, replace, append)
        table = table if columns is None else _selected(table, columns)
        options = arrow_csv.WriteOptions(quoting_style="needed")
        atomic_write(target, lambda handle: arrow_csv.write_csv(table, handle, options))
