"""CSV tables kept as their raw records: only the asked columns are split out as values,
and every column not replaced is written back with the bytes it was read with.

Record boundaries, field splitting and quoting are native (cpp/include/proxanon/io/csv.hpp):
reading finds every record once and splits each where columns are read (a record with the
wrong number of fields is an error whichever are asked for), each distinct value of a
column decoded once; writing splits the kept records again. Positions in messages are file
lines, 1-based, the header being line 1. Memory: the file's bytes (its text in UTF-8 where
its encoding is not byte-compatible), three int64 per record, the extracted columns.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import dataclasses
import functools
import importlib
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine import kernels
from proxanon._tableio.base import TableEncodingError, TableReadError, _duplicates, _pyarrow
from proxanon._tableio.kinds import typed_array

_QUOTE = '"'


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
