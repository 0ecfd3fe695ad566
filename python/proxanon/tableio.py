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

import codecs
import contextlib
import csv
import dataclasses
import functools
import glob
import importlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine import kernels

__all__ = [
    "STDIN",
    "STDOUT",
    "CsvTable",
    "ParquetTable",
    "ParquetUnavailableError",
    "TableEncodingError",
    "TableReadError",
    "atomic_write",
    "is_parquet",
    "read_stream",
    "read_table",
    "refuse_nested",
    "text_kind",
    "write_table",
]

PARQUET_SUFFIXES = (".parquet", ".pq")
#: The first bytes of every Parquet file.
PARQUET_MAGIC = b"PAR1"
#: How messages name a table read from standard input (:func:`read_stream`).
STDIN = Path("standard input")
#: Formats a reader may be told: "auto" goes by the file's name (a stream: its first bytes).
FORMATS = ("auto", "csv", "parquet")
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


class StandardOutput:
    """The output ``-``: standard output, written in one piece (:func:`atomic_write`)."""

    def __str__(self) -> str:
        return "standard output"

    def __repr__(self) -> str:
        return "STDOUT"


#: The target that writes to standard output.
STDOUT = StandardOutput()

#: Where a table or file is written: a path, or :data:`STDOUT`.
Target = str | os.PathLike[str] | StandardOutput


def is_parquet(path: Target) -> bool:
    """True when the file name says Parquet (``.parquet`` or ``.pq``)."""
    return not isinstance(path, StandardOutput) and Path(path).suffix.lower() in PARQUET_SUFFIXES


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
    """A CSV file held as its bytes and where each record lies in them.

    ``data`` is the file's bytes where its encoding writes ASCII as ASCII, one byte per
    character or UTF-8 (``working`` is then ``encoding``), else its text in UTF-8
    (``working == "utf-8"``, written back in ``encoding``). ``begin[i]``/``end[i]`` bound
    record i in ``data`` without its line end, the header first (a quoted field may span
    lines), and ``line[i]`` is the 1-based file line it starts on. ``names`` are the header's
    column names, unquoted and stripped; ``header`` the raw header fields. ``newline`` and
    ``bom`` are written back as read. The records are found and split natively
    (``cpp/include/proxanon/io/csv.hpp``).
    """

    path: Path
    encoding: str
    sep: str
    newline: str
    bom: bool
    header: list[str]
    names: list[str]
    data: bytes = dataclasses.field(repr=False)
    working: str
    begin: NDArray[np.int64] = dataclasses.field(repr=False)
    end: NDArray[np.int64] = dataclasses.field(repr=False)
    line: NDArray[np.int64] = dataclasses.field(repr=False)

    @property
    def n_rows(self) -> int:
        return int(self.begin.size) - 1

    @property
    def lines(self) -> list[int]:
        """The 1-based file line each data row starts on."""
        return [int(n) for n in self.line[1:]]

    def position(self, row: int) -> str:
        """Where data row ``row`` (0-based) is, in the words of a message."""
        return f"line {int(self.line[row + 1])} of {self.path}"

    def _records(self) -> tuple[bytes, NDArray[np.int64], NDArray[np.int64], NDArray[np.int64],
                                str, int]:
        return self.data, self.begin, self.end, self.line, self.sep, len(self.header)

    def coded_columns(self, names: Sequence[str], strip: bool = True
                      ) -> dict[str, tuple[NDArray[np.int64], list[str]]]:
        """Per named column, ``(codes, texts)``: data row i's unquoted text (stripped where
        ``strip``) is ``texts[codes[i]]``, each distinct text given once in the order it first
        appears (in a column of very many distinct values, not all are shared). Every record
        is split, so a record with the wrong number of fields is an error whichever columns
        are asked for."""
        index = [self.names.index(name) for name in names]
        with _read_errors(self):
            columns = kernels.csv_columns(*self._records(), index, self.working, strip)
        return dict(zip(names, columns, strict=True))

    def text_columns(self, names: Sequence[str], strip: bool = True) -> dict[str, list[str]]:
        """The unquoted text (stripped where ``strip``) of the named columns, one entry per
        data row (see :meth:`coded_columns`)."""
        return {name: np.asarray(texts, dtype=object)[codes].tolist()
                for name, (codes, texts) in self.coded_columns(names, strip).items()}

    def column(self, name: str) -> pd.Series:
        """One column as a Series of stripped text (object dtype)."""
        return pd.Series(self.text_columns([name])[name], dtype=object, name=name)

    def to_arrow(self, text: Collection[str] = ()) -> Any:
        """Every column typed by its text (:func:`text_kind`): numbers as int64 or float64,
        the rest, and the columns named in ``text``, as strings (their unquoted text, spaces
        kept)."""
        pa, _ = _pyarrow()
        columns = self.text_columns(self.names, strip=False)
        return pa.table([typed_array(columns[name], "text" if name in text else None)
                         for name in self.names], names=self.names)

    def write_rows(self, handle: IO[bytes], rows: NDArray[np.int64],
                   replace: Mapping[str, Sequence[str]], append: Mapping[str, NDArray[np.int64]],
                   columns: Sequence[str] | None) -> None:
        """The header and the data rows ``rows`` as :func:`write_table` writes them: every
        field as read but those of ``replace`` (quoted where they must be), then the
        ``append`` columns, in the order of ``columns`` where given."""
        every = [*self.names, *append]
        order = list(range(len(every))) if columns is None else [every.index(c) for c in columns]
        header = [*self.header, *(_quote(name, self.sep) for name in append)]
        head = (("\ufeff" if self.bom else "") + self.sep.join(header[j] for j in order)
                + self.newline)
        replaced = []
        for name, values in replace.items():
            codes, texts = pd.factorize(pd.Series(values, dtype=object).astype(str))
            replaced.append((self.names.index(name), (
                [_quote(t, self.sep).encode(self.working) for t in texts],
                np.asarray(codes, dtype=np.int64))))
        with _read_errors(self):
            body = kernels.csv_write(*self._records(), np.asarray(rows, dtype=np.int64), order,
                                   replaced, [np.asarray(v, dtype=np.int64)
                                              for v in append.values()],
                                   self.newline.encode(self.working))
        if self.working == self.encoding:
            handle.write(head.encode(self.encoding))
            handle.write(body)
        else:  # the text was read in UTF-8: written back in its own encoding
            handle.write((head + body.decode("utf-8")).encode(self.encoding))


@contextlib.contextmanager
def _read_errors(table: CsvTable | Path) -> Iterator[None]:
    """The native reader's CsvError (its kind and where) as a TableReadError with words."""
    path = table.path if isinstance(table, CsvTable) else table
    try:
        yield
    except kernels.CsvError as exc:
        kind, line, count, after = exc.args
        if kind == "fields" and isinstance(table, CsvTable):
            raise TableReadError(
                f"line {line} of {path} has {count} field(s), the header has "
                f"{len(table.header)}; check the separator ({table.sep!r}) and the "
                "quoting") from None
        if kind == "quote":
            shown = after.decode("utf-8", errors="replace")
            raise TableReadError(
                f"line {line} of {path}: a quoted field is not closed right before "
                f"{shown!r}; a quote inside a quoted field is written \"\"") from None
        if kind == "unclosed":
            raise TableReadError(f"line {line} of {path}: a quoted field is never "
                                 "closed") from None
        raise TableReadError(f"{path} is empty: it needs a header row and data rows") from None


@functools.cache
def _keeps_ascii(encoding: str) -> bool:
    """Whether ``encoding`` writes text so that its bytes can be split as they are: UTF-8,
    ASCII, latin-1, or a table of one byte per character that maps ASCII to itself (cp1252,
    iso8859-15, ...). Other encodings (UTF-16, Shift JIS, ...) are read through UTF-8."""
    name = codecs.lookup(encoding).name
    if name in ("utf-8", "ascii", "latin-1", "iso8859-1"):
        return True
    try:
        table = importlib.import_module("encodings." + name.replace("-", "_")).decoding_table
    except (ImportError, AttributeError):
        return False
    return len(table) == 256 and table[:128] == "".join(map(chr, range(128)))


#: Cell texts by kind (:func:`text_kind`), matched by Arrow's regular expressions (RE2).
_INTEGER = r"^(0|-?[1-9][0-9]{0,17})$"
_LONG_INTEGER = r"^-?[1-9][0-9]{18,}$"  # beyond int64, and exact only as text
_DECIMAL = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$"
#: The kinds of :func:`text_kind`, narrowest first.
KINDS = ("empty", "integer", "decimal", "text")


def _kind_of(cells: Any) -> tuple[str, Any, Any]:
    """The kind of an Arrow array of cell texts, the cells trimmed, and which are filled."""
    pa, _ = _pyarrow()
    pc = importlib.import_module("pyarrow.compute")
    trimmed = pc.utf8_trim_whitespace(cells)
    filled = pc.not_equal(trimmed, "")
    if not pc.any(filled).as_py():
        return "empty", trimmed, filled

    def every(pattern: str, negate: bool = False) -> bool:
        hit = pc.match_substring_regex(trimmed, pattern)
        return bool(pc.all(pc.or_(pc.invert(hit) if negate else hit,
                                  pc.invert(filled))).as_py())

    if every(_INTEGER):
        return "integer", trimmed, filled
    if every(_DECIMAL) and every(_LONG_INTEGER, negate=True):
        return "decimal", trimmed, filled
    return "text", trimmed, filled


def text_kind(values: Sequence[str]) -> str:
    """How a column of cell texts reads as a whole (spaces around a cell ignored, empty cells
    skipped): "integer" when every cell is an integer written without leading zeros (and of
    at most 18 digits, so it fits int64), "decimal" when every cell is a number so written
    (``-12``, ``0.5``, ``100.50``, ``1e3``; not ``0007``, ``.5``, ``1,5`` or an integer of
    more digits), "text" otherwise, "empty" when no cell holds anything. Needs pyarrow."""
    pa, _ = _pyarrow()
    return _kind_of(pa.array(values, pa.string()))[0]


def widest_kind(kinds: Sequence[str]) -> str:
    """The kind of a column made of parts of these kinds (:func:`text_kind`)."""
    return KINDS[max((KINDS.index(kind) for kind in kinds), default=0)]


def typed_array(values: Sequence[str], kind: str | None = None) -> Any:
    """Cell texts as an Arrow array of their kind (:func:`text_kind`, found unless given):
    int64 or float64 with empty cells as nulls, or the texts as strings."""
    pa, _ = _pyarrow()
    pc = importlib.import_module("pyarrow.compute")
    cells = pa.array(values, pa.string())
    found, trimmed, filled = _kind_of(cells) if kind is None else (kind, None, None)
    if found not in ("integer", "decimal"):
        return cells
    if trimmed is None:
        trimmed = pc.utf8_trim_whitespace(cells)
        filled = pc.not_equal(trimmed, "")
    numbers = pc.if_else(filled, trimmed, pa.scalar(None, pa.string()))
    return pc.cast(numbers, pa.int64() if found == "integer" else pa.float64())


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
    return parse_csv(where.read_bytes(), where, sep, encoding)


def parse_csv(raw: bytes, where: Path, sep: str | None = None,
              encoding: str = "utf-8") -> CsvTable:
    """A CSV table from its bytes, as :func:`read_csv` reads a file (``where`` names it in
    messages)."""
    if sep is not None and len(sep) != 1:
        raise TableReadError(f"the separator must be one character, got {sep!r}")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise TableEncodingError(where, encoding, exc.start, raw[exc.start]) from None
    except LookupError:
        raise TableReadError(f"unknown encoding {encoding!r}") from None
    working = encoding if _keeps_ascii(encoding) else "utf-8"
    data = raw if working == encoding else text.encode("utf-8")
    del text
    bom = codecs.lookup(working).name == "utf-8" and data.startswith(codecs.BOM_UTF8)
    with _read_errors(where):
        found = kernels.csv_records(data, len(codecs.BOM_UTF8) if bom else 0)
    begin, end, line = found["begin"], found["end"], found["line"]
    head = data[int(begin[0]):int(end[0])].decode(working)
    used = sep if sep is not None else _sniff_sep(head)
    if len(used.encode(working)) != 1:
        raise TableReadError(f"the separator {used!r} is not one byte in {encoding}; use an "
                             "ASCII separator such as ',' or ';'")
    with _read_errors(where):
        cells = kernels.csv_fields(data, int(begin[0]), int(end[0]), used, int(line[0]))
    header = [cell.decode(working) for cell in cells]
    names = [_unquote(cell).strip() for cell in header]
    _duplicates(where, names)
    if begin.size == 1:
        raise TableReadError(f"{where} has a header but no data rows")
    return CsvTable(path=where, encoding=encoding, sep=used,
                    newline="\r\n" if found["crlf"] else "\n", bom=bom, header=header,
                    names=names, data=data, working=working, begin=begin, end=end, line=line)


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
        """One column as pandas sees it (dates as datetime64); a column of nested values
        (lists, structs, maps) is refused, naming it."""
        column = self.table.column(name)
        refuse_nested(name, column.type, self.path)
        return pd.Series(column.to_pandas(date_as_object=False), name=name)

    def to_arrow(self, text: Collection[str] = ()) -> Any:
        """The Arrow table as read (``text``: for the signature :class:`CsvTable` has)."""
        return self.table


def _nested(arrow_type: Any) -> bool:
    """Whether values of this Arrow type are lists, structs, maps or unions."""
    types = importlib.import_module("pyarrow.types")
    return bool(types.is_nested(arrow_type)
                or (types.is_dictionary(arrow_type) and types.is_nested(arrow_type.value_type)))


def _type_words(arrow_type: Any) -> str:
    """An Arrow type as a message names it: ``lists (list<element: int64>)``."""
    types = importlib.import_module("pyarrow.types")
    kind = next((words for test, words in (
        (types.is_list, "lists"), (types.is_large_list, "lists"),
        (types.is_fixed_size_list, "lists"), (types.is_struct, "structs"),
        (types.is_map, "maps"), (types.is_union, "unions")) if test(arrow_type)), "values")
    return f"{kind} ({arrow_type})"


def refuse_nested(name: str, arrow_type: Any, where: object) -> None:
    """Refuses a column of nested values (lists, structs, maps) where one value per row is
    needed, naming the column and the fix."""
    if _nested(arrow_type):
        raise TableReadError(
            f"column {name!r} of {where} holds {_type_words(arrow_type)}, which cannot be "
            "compared as one value; convert it to numbers, text or dates first (e.g. join a "
            "list's items into one text), or use another column")


def read_parquet(path: str | os.PathLike[str] | bytes, name: Path | None = None
                 ) -> ParquetTable:
    """Reads a Parquet file, or Parquet ``bytes`` (named ``name`` in messages); needs
    pyarrow."""
    pa, pq = _pyarrow()
    raw = isinstance(path, bytes)
    where = (name or STDIN) if isinstance(path, bytes) else Path(path)
    try:
        table = pq.read_table(pa.BufferReader(path) if raw else where)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise TableReadError(f"cannot read {where} as Parquet: {exc}") from None
    _duplicates(where, [str(name) for name in table.column_names])
    if table.num_rows == 0:
        raise TableReadError(f"{where} has columns but no rows")
    return ParquetTable(where, table)


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


def atomic_write(target: Target, write: Callable[[IO[bytes]], None]) -> None:
    """Calls ``write`` on a new temporary file in ``target``'s folder, then flushes, syncs
    and renames it over ``target`` (``os.replace``, atomic on POSIX and Windows).

    :data:`STDOUT`: ``write`` fills a buffer, written to standard output once it returns
    (an error or an interrupt before then writes nothing).

    On any exception, KeyboardInterrupt included, the temporary file is removed and
    ``target`` is left as it was. The new file gets the mode a plainly created file would.
    The temporary file is named ``.NAME.PID.RANDOM.part`` after the writing process; a writer
    killed outright (``kill -9``, a power cut) cannot remove it, so each write first removes
    the partial files of the same target whose process no longer runs (:func:`remove_stale`).
    """
    if isinstance(target, StandardOutput):
        buffer = io.BytesIO()
        write(buffer)
        sys.stdout.flush()
        sys.stdout.buffer.write(buffer.getvalue())
        sys.stdout.buffer.flush()
        return
    where = Path(target)
    remove_stale(where)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=where.parent,
                                                 prefix=f".{where.name}.{os.getpid()}.",
                                                 suffix=".part")
    except OSError as exc:  # named by the file asked for, not the temporary one
        raise OSError(f"cannot write {where}: its folder {where.parent} does not take a new "
                      f"file ({exc.strerror})") from None
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
