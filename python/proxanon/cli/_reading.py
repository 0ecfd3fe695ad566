"""The input table as a subcommand reads it, and its QI and sensitive columns typed.

Only the QI and sensitive columns are parsed; the others stay as read (see
:mod:`proxanon.tableio`), so every byte of a column the user did not ask to transform is
kept. A column is read as numbers, ISO dates, ordered text (``--order``) or text: codes with
leading zeros stay text. Positions in messages are file lines (1-based, the header is line
1) for CSV and rows (1-based) for Parquet (docs/guide/command-line.md). Cost: O(rows) per
typed column, vectorized in pandas.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon.cli._options import names, pairs
from proxanon.cli._status import STDIO, UsageError
from proxanon.tableio import (
    CsvTable,
    ParquetTable,
    read_stream,
    read_table,
)

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?")


def read_line(source: CsvTable | ParquetTable, given: str) -> str:
    """What was read, for -v."""
    if isinstance(source, CsvTable):
        kind = f"CSV, separator {source.sep!r}, {source.encoding}"
    else:
        kind = "Parquet"
    where = "standard input" if given == STDIO else given
    return f"read {source.n_rows:,} rows and {len(source.names)} columns from {where} ({kind})"


def read_input(path_text: str, args: argparse.Namespace) -> CsvTable | ParquetTable:
    """The table at ``path_text``; ``-`` reads all of standard input (CSV, or Parquet when
    it starts as Parquet does or ``--format parquet`` says so)."""
    kind = getattr(args, "format", "auto")
    if path_text == STDIO:
        if sys.stdin.isatty():
            raise UsageError("- reads the table from standard input, which is a terminal here; "
                             "pipe or redirect a table in (e.g. < in.csv)")
        return read_stream(sys.stdin.buffer.read(), args.sep, args.encoding, kind)
    path = Path(path_text)
    if not path.is_file():
        problem = "is a directory, not a file" if path.is_dir() else "not found"
        raise UsageError(f"input file {problem}: {path_text}")
    return read_table(path, args.sep, args.encoding, kind)


@dataclass(frozen=True)
class Columns:
    """The QI and sensitive columns of the rows handed to the library.

    ``frame`` holds them typed (numbers, dates, text or ordered categoricals), with a fresh
    0-based index; ``rows[i]`` is the source's data row (0-based) of ``frame``'s row i;
    ``dropped`` the data rows left out for an empty cell or a missing-value mark
    (``--missing drop``); ``notes`` what the command says about how a column was read
    (codes with leading zeros kept as text).
    """

    frame: pd.DataFrame
    rows: NDArray[np.int64]
    dropped: NDArray[np.int64]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Coded:
    """A column read as its distinct values (``values``, in the order they first appear)
    and, per row, the index of its value (``codes``): typing reads each value once."""

    codes: NDArray[np.int64]
    values: pd.Series

    def kept(self, rows: NDArray[np.int64]) -> tuple[_Coded, NDArray[np.int64]]:
        """The column over ``rows`` only, and the first of ``rows`` holding each value."""
        codes = self.codes[rows]
        present = np.zeros(len(self.values), dtype=bool)
        present[codes] = True
        renumber = np.cumsum(present) - 1
        kept = renumber[codes]
        first = np.full(int(present.sum()), rows.size, dtype=np.int64)
        np.minimum.at(first, kept, np.arange(rows.size, dtype=np.int64))
        values = self.values.iloc[np.flatnonzero(present)].reset_index(drop=True)
        return _Coded(kept, values), rows[first]


def _values(source: CsvTable | ParquetTable, columns: list[str]) -> dict[str, _Coded]:
    if isinstance(source, CsvTable):
        return {c: _Coded(codes, pd.Series(texts, dtype=object, name=c))
                for c, (codes, texts) in source.coded_columns(columns).items()}
    out = {}
    for c in columns:
        codes, values = pd.factorize(source.column(c), use_na_sentinel=False)
        out[c] = _Coded(np.asarray(codes, dtype=np.int64), pd.Series(values, name=c))
    return out


def _empty(series: pd.Series) -> NDArray[np.bool_]:
    empty = np.array(series.isna(), dtype=bool)
    if _is_text(series):
        empty |= (series.astype(str).str.strip() == "").to_numpy(dtype=bool)
    return empty


def _is_text(series: pd.Series) -> bool:
    return bool(series.dtype == object or pd.api.types.is_string_dtype(series.dtype))


def _number(series: pd.Series) -> pd.Series | None:
    """The column as numbers, or None when some value is not a number."""
    numbers = pd.to_numeric(series, errors="coerce")
    return None if bool(numbers.isna().any()) else numbers


def _dates(series: pd.Series, column: str, source: CsvTable | ParquetTable,
           rows: NDArray[np.int64]) -> pd.Series:
    parsed = pd.to_datetime(series, format="ISO8601", errors="coerce")
    bad = parsed.isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise UsageError(f"date column {column!r}: {series.iloc[i]!r} on "
                         f"{source.position(int(rows[i]))} is not an ISO date (YYYY-MM-DD)")
    return parsed


def _check_finite(numbers: pd.Series, column: str, text: pd.Series,
                  source: CsvTable | ParquetTable, rows: NDArray[np.int64]) -> None:
    finite = np.isfinite(numbers.to_numpy(dtype=np.float64))
    if not finite.all():
        i = int(np.argmax(~finite))
        raise UsageError(f"column {column!r} has the value {text.iloc[i]!r} on "
                         f"{source.position(int(rows[i]))}; only finite numbers can be compared")


def _ordered(series: pd.Series, column: str, spec: str, source: CsvTable | ParquetTable,
             rows: NDArray[np.int64]) -> pd.Series:
    levels = [level.strip() for level in spec.split(",")]
    repeated = sorted({level for level in levels if levels.count(level) > 1})
    if repeated:
        raise UsageError(f"--order {column}: {', '.join(map(repr, repeated))} given more than "
                         "once; list each value once, from low to high")
    text = series.astype(str).str.strip()
    unknown = ~text.isin(levels).to_numpy()
    if unknown.any():
        i = int(np.argmax(unknown))
        missing = sorted(set(text[unknown]))
        raise UsageError(f"--order {column}: value(s) {missing[:5]} are not in the order given "
                         f"(first on {source.position(int(rows[i]))})")
    return pd.Series(pd.Categorical(text, categories=levels, ordered=True), name=column)


#: Cell texts that mean "missing" rather than a value.
_MISSING_MARKS = frozenset({"nan", "-nan", "na", "n/a", "<na>", "null", "none", "?"})


def _missing_marks(series: pd.Series) -> NDArray[np.bool_]:
    """The cells of a column of numbers that read as a missing-value mark (``NaN``, ``NA``,
    ``?``, ...): one of them would otherwise make the whole column text. A column with any
    other text keeps such cells as values (``?`` may be a category)."""
    none = np.zeros(len(series), dtype=bool)
    if not _is_text(series):
        return none
    text = series.astype(str).str.strip()
    marks = text.str.lower().isin(_MISSING_MARKS).to_numpy(dtype=bool)
    if not marks.any():
        return none
    rest = text[~marks & (text != "").to_numpy(dtype=bool)]
    if rest.empty or bool(pd.to_numeric(rest, errors="coerce").isna().any()):
        return none
    return np.asarray(marks, dtype=bool)


#: A number written with leading zeros (``02134``, ``-007``): a code rather than an amount.
_LEADING_ZERO = re.compile(r"[+-]?0\d")


def leading_zeros(series: pd.Series) -> str | None:
    """The first value written with leading zeros (``02134``), or None: such a column holds
    codes, which numbers would change (``2134``)."""
    if not _is_text(series):
        return None
    text = series.astype(str).str.strip()
    found = text.str.match(_LEADING_ZERO).to_numpy(dtype=bool)
    return str(text.iloc[int(np.argmax(found))]) if found.any() else None


def text_option(args: argparse.Namespace, names_in_table: Sequence[str]) -> set[str]:
    """``--text COL,...``: columns kept as text, each a column of the table."""
    if not getattr(args, "text", None):
        return set()
    given = names(args.text, "--text")
    unknown = [c for c in given if c not in names_in_table]
    if unknown:
        raise UsageError(f"--text names column(s) {unknown}, which are not in the table; its "
                         f"columns are {list(names_in_table)}")
    return set(given)


@dataclass(frozen=True)
class _Typing:
    """How :func:`typed_columns` types each column: what the options say."""

    qi: list[str]
    sensitive: list[str]
    orders: Mapping[str, str]
    taxonomies: set[str]
    dates: set[str] | None
    text: set[str]
    equality: bool = False  # sensitive values are compared for equality only (δ = 0)


def typed_columns(source: CsvTable | ParquetTable, qi: list[str], sensitive: list[str], *,
                  missing: str, orders: Mapping[str, str], taxonomies: set[str],
                  dates: set[str] | None = None, text: set[str] | None = None,
                  extra: Sequence[str] = (), equality: bool = False) -> Columns:
    """The QI and sensitive columns, parsed for the library, and the ``extra`` columns a
    criterion reads (numbers where every value is one, else text).

    QI text columns stay text when they have a taxonomy, are named in ``text`` (``--text``)
    or hold a value written with leading zeros (``02134``: a code, see ``notes``); else
    they become dates (when named in ``dates`` or when every value is an ISO date), numbers
    (when every value is one) or stay text; ``dates=None`` leaves QI columns as read (the
    audit groups rows by the published text). Sensitive columns are text with a taxonomy,
    ordered categoricals with an order, numbers otherwise (a ``text`` one needs one of the
    first two), except with ``equality`` (``anonymize --delta 0``: k-anonymity and the
    criteria alone, which compare sensitive values for equality only), where text stays
    text. Empty cells are an error naming the column and the position, or
    (``missing="drop"``) drop the row.
    """
    wanted = list(dict.fromkeys([*qi, *sensitive, *extra]))
    absent = [c for c in wanted if c not in source.names]
    if absent:
        raise UsageError(f"column(s) {absent} not in {source.path}; its columns are "
                         f"{source.names}")
    for option, given in (("--order", orders), ("--dates", dates or set())):
        unknown = sorted(set(given) - set(source.names))
        if unknown:
            raise UsageError(f"{option} names column(s) {unknown}, which are not in "
                             f"{source.path}")
    typing = _Typing(qi, sensitive, orders, taxonomies, dates, set(text or ()), equality)
    both = sorted(typing.text & (dates or set()))
    if both:
        raise UsageError(f"column(s) {both} are named in both --text and --dates; choose one")
    values = _values(source, wanted)
    empty = np.zeros(source.n_rows, dtype=bool)
    for column in wanted:
        coded = values[column]
        marked = _missing_marks(coded.values)
        left_out = (_empty(coded.values) | marked)[coded.codes]
        if left_out.any() and missing == "error":
            first = int(np.argmax(left_out))
            what = (f"a missing value ({coded.values.iloc[coded.codes[first]]!r} on "
                    f"{source.position(first)})" if marked[coded.codes[first]]
                    else f"an empty cell on {source.position(first)}")
            raise UsageError(f"column {column!r} has {what}; fill it, or pass --missing drop "
                             "to leave such rows out")
        empty |= left_out
    rows = np.flatnonzero(~empty).astype(np.int64)
    if rows.size == 0:
        raise UsageError(f"every row of {source.path} has an empty cell in a QI or sensitive "
                         "column")
    frame = pd.DataFrame(index=pd.RangeIndex(rows.size))
    notes: list[str] = []
    for column in wanted:
        # Each distinct value is typed once (with the first row that holds it, for
        # messages), then spread over the rows.
        coded, holders = values[column].kept(rows)
        typed = _typed(coded.values, column, typing, source, holders, notes)
        frame[column] = typed.take(coded.codes).reset_index(drop=True)
    return Columns(frame=frame, rows=rows, dropped=np.flatnonzero(empty).astype(np.int64),
                   notes=tuple(notes))


def _typed(series: pd.Series, column: str, typing: _Typing, source: CsvTable | ParquetTable,
           rows: NDArray[np.int64], notes: list[str]) -> pd.Series:
    """One QI or sensitive column typed as :func:`typed_columns` says; a note on a column
    of codes kept as text, or of numbers written with leading zeros, goes to ``notes``."""
    as_text = column in typing.text or column in typing.taxonomies
    if column in typing.qi and as_text:
        return series.astype(str).str.strip() if _is_text(series) else series.astype(str)
    if column in typing.qi and typing.dates is not None and _is_text(series):
        return _qi_column(series, column, source, rows, column in typing.dates, notes)
    if column in typing.sensitive and column in typing.orders:
        return _ordered(series, column, typing.orders[column], source, rows)
    if column in typing.sensitive and column in typing.taxonomies:
        return series
    if column in typing.sensitive and typing.equality and (
            column in typing.text or (_is_text(series) and _number(series) is None)):
        return series.astype(str)
    if column in typing.sensitive and column in typing.text:
        raise UsageError(f"--text {column}: a sensitive column of text is compared by its "
                         f"order or taxonomy; give --order {column}=LOW,...,HIGH or "
                         f"--hierarchy {column}=FILE.csv")
    if column in typing.sensitive and _is_text(series) and (
            column in (typing.dates or set())
            or bool(series.astype(str).str.strip().str.fullmatch(_ISO_DATE).all())):
        return _dates(series.astype(str).str.strip(), column, source, rows)
    if column in typing.sensitive and _is_text(series):
        numbers = _number(series)
        if numbers is None:
            bad = int(np.argmax(pd.to_numeric(series, errors="coerce").isna().to_numpy()))
            if str(series.iloc[bad]).strip().lower() in _MISSING_MARKS:
                raise UsageError(
                    f"sensitive column {column!r} has a missing value "
                    f"({series.iloc[bad]!r} on {source.position(int(rows[bad]))}); fill "
                    "it, or empty such cells and pass --missing drop to leave those rows "
                    "out")
            raise UsageError(
                f"sensitive column {column!r} holds text ({series.iloc[bad]!r} on "
                f"{source.position(int(rows[bad]))}); give its order from low to high with "
                f"--order {column}=LOW,...,HIGH, a taxonomy with --hierarchy, or use a "
                "numeric column")
        _check_finite(numbers, column, series, source, rows)
        zeros = leading_zeros(series)
        if zeros is not None:
            notes.append(f"sensitive column {column!r} is compared as numbers, though values "
                         f"such as {zeros!r} are written with leading zeros (its cells are "
                         "written as read); if they are codes, compare them as text with "
                         f"--hierarchy {column}=FILE.csv or --order")
        return numbers
    if column not in typing.qi and column not in typing.sensitive and _is_text(series):
        numbers = _number(series)  # a column a criterion reads (``extra``)
        return series.astype(str) if numbers is None else numbers
    return series


@dataclass(frozen=True)
class Input:
    """The input table as a command reads it: the source, the QI and sensitive columns named,
    their hierarchies (loaded) and the typed columns handed to the library."""

    source: CsvTable | ParquetTable
    qi: list[str]
    sensitive: list[str]
    hierarchies: dict[str, Any]
    columns: Columns


def read_columns(args: argparse.Namespace) -> Input:
    """``args.input`` read, and its ``--qi`` and ``--sensitive`` columns typed with
    ``--hierarchy``, ``--order``, ``--dates`` and ``--missing`` (``proxanon anonymize`` and
    ``proxanon explore``)."""
    from proxanon.generalize import load_hierarchies

    source = read_input(args.input, args)
    qi = names(args.qi, "--qi")
    sensitive = names(args.sensitive, "--sensitive")
    hierarchies = load_hierarchies(pairs(args.hierarchy, "--hierarchy"), qi + sensitive,
                                   source.names, sep=args.hierarchy_sep)
    columns = typed_columns(source, qi, sensitive, missing=args.missing,
                            orders=pairs(args.order, "--order"), taxonomies=set(hierarchies),
                            dates=set(names(args.dates, "--dates")) if args.dates else set(),
                            text=text_option(args, source.names),
                            extra=([args.criteria_column]
                                   if getattr(args, "criteria_column", None) else []),
                            equality=getattr(args, "epsilon_optional", False)
                            and args.delta == 0)
    return Input(source, qi, sensitive, dict(hierarchies), columns)


def read_frontier(path: str | None, html: str | None) -> pd.DataFrame | None:
    """``--frontier``: the CSV file ``proxanon explore`` wrote, read and checked (it goes
    with ``--html``); None without it."""
    if path is None:
        return None
    if html is None:
        raise UsageError("--frontier marks the release in the HTML report: give --html too")
    from proxanon.frontier import frontier_cells

    if not Path(path).is_file():
        raise UsageError(f"--frontier file not found: {path}")
    try:
        frame = pd.read_csv(path)
    except (ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"--frontier {path} is not a CSV file 'proxanon explore' wrote "
                         f"({exc})") from None
    try:
        frontier_cells(frame)
    except ValueError as exc:
        raise UsageError(f"--frontier {path}: {exc}") from None
    return frame


def _qi_column(series: pd.Series, column: str, source: CsvTable | ParquetTable,
               rows: NDArray[np.int64], is_date: bool, notes: list[str]) -> pd.Series:
    text = series.astype(str).str.strip()
    if is_date or bool(text.str.fullmatch(_ISO_DATE).all()):
        return _dates(text, column, source, rows)
    numbers = _number(text)
    if numbers is None:
        return text
    zeros = leading_zeros(text)
    if zeros is not None:
        notes.append(f"QI column {column!r} is read as text, as written: values such as "
                     f"{zeros!r} are codes with leading zeros, not numbers (published as "
                     f"themselves or '*'; --hierarchy {column}=FILE.csv gives levels between)")
        return text
    _check_finite(numbers, column, text, source, rows)
    codes = numbers.to_numpy(dtype=np.float64)
    if len(codes) <= _FEW_CODES and bool((codes == np.round(codes)).all()):
        notes.append(f"QI column {column!r} holds {len(codes)} distinct whole number(s), read "
                     f"as numbers and published as ranges such as [{int(codes.min())}-"
                     f"{int(codes.max())}]; if they are codes (race, marital status), pass "
                     f"--text {column} (published as themselves or '*') or a --hierarchy")
    return numbers


#: A numeric QI column with at most this many distinct whole numbers is noted as likely codes.
_FEW_CODES = 12


def positions(source: CsvTable | ParquetTable, rows: NDArray[np.int64]) -> list[int]:
    """1-based file lines (CSV, the header is line 1) or rows (Parquet) of data rows."""
    if isinstance(source, CsvTable):
        return [int(source.line[int(r) + 1]) for r in rows]
    return [int(r) + 1 for r in rows]


def position_unit(source: CsvTable | ParquetTable) -> str:
    if isinstance(source, CsvTable):
        return "file lines, 1-based, the header is line 1"
    return "rows, 1-based"
