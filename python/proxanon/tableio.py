"""Table files in and out as the user wrote them: CSV read as text, Parquet through pyarrow,
and every output file written whole or not at all.

CSV: each record is kept as its raw text. Only the columns a caller asks for are split out
as values; on output, every column that is not replaced is written back with the bytes it
was read with (quotes and spaces included), so ``02134``, ``100.50`` and ``"a, b"`` stay as
they are. Parquet: the Arrow table is kept, so untouched columns keep their Arrow types and
values. :func:`atomic_write` writes a temporary file in the target's folder and renames it
over the target only when complete and synced, so a failure or an interrupt leaves the
previous file as it was and no partial file behind.

Standard streams: :func:`read_stream` reads a table from bytes (standard input: Parquet when
they start with Parquet's magic ``PAR1``, CSV otherwise), and the target :data:`STDOUT` writes
to standard output, in one piece once the whole table is formatted.

Parquet written from CSV types each column by its text (:func:`text_kind`): integers written
without leading zeros as int64, other plain numbers as float64, everything else as text
(``02134``, ``0007`` and ``1,5`` stay text), empty cells as nulls in a column of numbers.

Positions in messages are file lines, 1-based and counting the header ("line 7 of in.csv"),
or Parquet rows, 1-based ("row 7 of in.parquet").

Cost: the records are found, split and written natively (cpp/include/proxanon/io/csv.hpp):
reading finds every record once and splits every one where columns are read (a record with
the wrong number of fields is an error whichever are asked for), each distinct value of a
column decoded once; writing splits the kept records again. Memory: the file's bytes (its
text in UTF-8 where its encoding is not byte-compatible), three int64 per record, the
extracted columns and the written bytes.
"""

from __future__ import annotations

import importlib
import io
import json
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._tableio.base import (
    FORMATS,
    PARQUET_MAGIC,
    STDIN,
    STDOUT,
    ParquetUnavailableError,
    StandardOutput,
    TableEncodingError,
    TableReadError,
    Target,
    _pyarrow,
    is_parquet,
)
from proxanon._tableio.csv_table import CsvTable, parse_csv, read_csv
from proxanon._tableio.files import atomic_write
from proxanon._tableio.kinds import text_kind, typed_array, widest_kind
from proxanon._tableio.parquet_table import (
    ParquetTable,
    _nested,
    _type_words,
    read_parquet,
    refuse_nested,
)

__all__ = [
    "FORMATS",
    "STDIN",
    "STDOUT",
    "CsvTable",
    "ParquetTable",
    "ParquetUnavailableError",
    "StandardOutput",
    "TableEncodingError",
    "TableReadError",
    "atomic_write",
    "check_writable",
    "is_parquet",
    "read_csv",
    "read_stream",
    "read_table",
    "refuse_nested",
    "text_kind",
    "widest_kind",
    "write_table",
]

def read_table(path: str | os.PathLike[str], sep: str | None = None,
               encoding: str = "utf-8", kind: str = "auto") -> CsvTable | ParquetTable:
    """``kind`` "parquet", "csv", or "auto": Parquet when the name ends in ``.parquet`` or
    ``.pq``, CSV otherwise."""
    if kind == "parquet" or (kind == "auto" and is_parquet(path)):
        return read_parquet(path)
    return read_csv(path, sep, encoding)


def read_stream(raw: bytes, sep: str | None = None, encoding: str = "utf-8",
                kind: str = "auto", name: Path = STDIN) -> CsvTable | ParquetTable:
    """A table from bytes, e.g. all of standard input (``name`` in messages): ``kind``
    "parquet", "csv", or "auto": Parquet when the bytes start with Parquet's magic, CSV
    otherwise."""
    if kind == "parquet" or (kind == "auto" and raw.startswith(PARQUET_MAGIC)):
        return read_parquet(raw, name)
    return parse_csv(raw, name, sep, encoding)


def _published_arrow(source: CsvTable | ParquetTable, rows: NDArray[np.int64],
                     replace: Mapping[str, Sequence[str]],
                     append: Mapping[str, NDArray[np.int64]], text: Collection[str]) -> Any:
    """The kept rows of the source's Arrow table, replaced columns typed by their text
    (:func:`text_kind`; those named in ``text`` as strings), appended columns as int64;
    pandas metadata (if any) updated to match."""
    pa, _ = _pyarrow()
    table = source.to_arrow(text)
    if not np.array_equal(rows, np.arange(table.num_rows)):
        table = table.take(pa.array(rows, pa.int64()))
    for name, values in replace.items():
        j = table.column_names.index(name)
        # Typed once per distinct text (a column's kind is that of its distinct texts).
        codes, texts = pd.factorize(pd.Series(values, dtype=object).astype(str))
        array = typed_array([str(t) for t in texts], "text" if name in text else None).take(
            pa.array(codes, pa.int64()))
        table = table.set_column(j, pa.field(name, array.type), array)
    for name, ints in append.items():
        table = table.append_column(pa.field(name, pa.int64()), pa.array(ints, pa.int64()))
    metadata = dict(table.schema.metadata or {})
    if b"pandas" in metadata:
        replaced = {name: str(table.schema.field(name).type) for name in replace}
        metadata[b"pandas"] = _patched_pandas_metadata(metadata[b"pandas"], replaced, append)
        table = table.replace_schema_metadata(metadata)
    return table


#: pandas' schema note for the Arrow types a replaced column gets (:func:`typed_array`).
_PANDAS_TYPES = {"int64": ("int64", "int64"), "double": ("float64", "float64"),
                 "string": ("unicode", "object")}


def _patched_pandas_metadata(raw: bytes, replaced: Mapping[str, str],
                             append: Mapping[str, NDArray[np.int64]]) -> bytes:
    """pandas' schema note with the replaced columns of their new Arrow types (``replaced``)
    and the appended ones int64 (pandas reads a column with the dtype the note gives)."""
    note = json.loads(raw)
    described = note.get("columns", [])
    for entry in described:
        if entry.get("name") in replaced:
            pandas_type, numpy_type = _PANDAS_TYPES[replaced[entry["name"]]]
            entry.update(pandas_type=pandas_type, numpy_type=numpy_type, metadata=None)
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


def writes_parquet(source: CsvTable | ParquetTable, target: Target) -> bool:
    """Whether :func:`write_table` writes Parquet: a ``.parquet`` or ``.pq`` name, or
    :data:`STDOUT` from a Parquet source (a table piped through keeps its format)."""
    if isinstance(target, StandardOutput):
        return isinstance(source, ParquetTable)
    return is_parquet(target)


def check_writable(source: CsvTable | ParquetTable, target: Target) -> None:
    """Refuses, before any work, a CSV ``target`` for a Parquet source with a column that CSV
    cannot hold (lists, structs, maps), naming the column and the fix."""
    if writes_parquet(source, target) or isinstance(source, CsvTable):
        return
    for entry in source.table.schema:
        if _nested(entry.type):
            raise TableReadError(
                f"column {entry.name!r} of {source.path} holds {_type_words(entry.type)}, "
                f"which a CSV file cannot hold; write Parquet (a .parquet name) instead of "
                f"{target}, or convert the column to text first (e.g. join a list's items)")


def _arrow_write(table: Any, target: Target, write: Callable[[Any, IO[bytes]], None],
                 what: str) -> None:
    """Writes the Arrow ``table`` with ``write``; a column Arrow cannot write as ``what`` is
    named in the error (Arrow's own message names none)."""
    pa, _ = _pyarrow()
    try:
        atomic_write(target, lambda handle: write(table, handle))
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        for name in table.column_names:
            try:
                write(table.select([name]), io.BytesIO())
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
                raise TableReadError(
                    f"column {name!r} ({table.schema.field(name).type}) cannot be written as "
                    f"{what} ({exc}); convert it to numbers, text or dates first, or write "
                    "another format") from None
        raise


def write_table(source: CsvTable | ParquetTable, target: Target,
                rows: NDArray[np.int64], replace: Mapping[str, Sequence[str]],
                append: Mapping[str, NDArray[np.int64]], text: Collection[str] = (),
                columns: Sequence[str] | None = None) -> None:
    """Writes ``source``'s rows ``rows`` (0-based data rows, in that order) to ``target``,
    atomically (:func:`atomic_write`); Parquet where :func:`writes_parquet` says so.

    ``replace`` gives new text for some columns (one value per written row), ``append`` new
    integer columns at the end; ``columns``, where given, the columns written and their order
    (names of the source's columns and of ``append``). Every other column is written as read:
    CSV to CSV byte for byte, Parquet to Parquet with its Arrow type. A Parquet target from a
    CSV source, and a replaced column in Parquet, are typed by their text (:func:`text_kind`:
    numbers as numbers, text with leading zeros as text; the columns named in ``text`` as
    text whatever they hold); a CSV target from a Parquet source is written by Arrow's CSV
    writer (UTF-8, quoted where needed) after :func:`check_writable`.
    """
    if writes_parquet(source, target):
        _, pq = _pyarrow()
        table = _published_arrow(source, rows, replace, append, text)
        table = table if columns is None else _selected(table, columns)
        _arrow_write(table, target, lambda t, handle: pq.write_table(t, handle), "Parquet")
    elif isinstance(source, CsvTable):
        atomic_write(target, lambda handle: source.write_rows(handle, rows, replace, append,
                                                              columns))
    else:
        check_writable(source, target)
        _pyarrow()
        arrow_csv = importlib.import_module("pyarrow.csv")
        table = _published_arrow(source, rows, replace, append, text)
        table = table if columns is None else _selected(table, columns)
        options = arrow_csv.WriteOptions(quoting_style="needed")
        _arrow_write(table, target,
                     lambda t, handle: arrow_csv.write_csv(t, handle, options), "CSV")
