"""What the subcommands share: exit statuses, option parsing, reading the input table and
turning its QI and sensitive columns into the typed columns the library takes.

Only the QI and sensitive columns are parsed; the others stay as read (see
:mod:`proxanon.tableio`). Positions in messages are file lines (1-based, the header is line
1) for CSV and rows (1-based) for Parquet.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon.tableio import CsvTable, ParquetTable, atomic_write, read_table

#: Exit statuses of the ``proxanon`` command.
EXIT_OK = 0              # done; the table satisfies the principle
EXIT_INFEASIBLE = 1      # anonymize: no satisfying table was found, nothing written
EXIT_USAGE = 2           # bad options or input: one line on standard error
EXIT_NOT_SATISFIED = 3   # a table that does not satisfy it (--best-effort output, or audited)
EXIT_INTERRUPTED = 130   # Ctrl-C (128 + SIGINT): nothing written

#: The column ``anonymize`` adds to the published table.
GROUP_COLUMN = "group"

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?")


class UsageError(Exception):
    """Bad input found by the command line itself; printed without a traceback."""


@dataclass(frozen=True)
class Outcome:
    """What a subcommand did: its exit status and the lines it prints on standard output.

    The status is settled before anything is printed, so a reader that leaves early
    (``proxanon audit t.csv | head -1``) cannot turn a verdict into a success."""

    status: int
    lines: tuple[str, ...]


def names(text: str, option: str) -> list[str]:
    """A comma-separated list of column names."""
    found = [part.strip() for part in text.split(",") if part.strip()]
    if not found:
        raise UsageError(f"{option} needs at least one column name, e.g. {option} age,sex")
    return found


def floats(text: str, option: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(f"{option} must be comma-separated numbers, got {text!r}") from None


def pairs(items: Sequence[str] | None, option: str) -> dict[str, str]:
    """Repeated ``COLUMN=VALUE`` options as a dict."""
    found: dict[str, str] = {}
    for item in items or ():
        column, sep, value = item.partition("=")
        if not sep or not column.strip() or not value.strip():
            raise UsageError(f"{option} takes COLUMN=VALUE, got {item!r}")
        found[column.strip()] = value.strip()
    return found


def separator(text: str) -> str:
    """``--sep``: one character; ``\\t`` or ``tab`` for a tab."""
    sep = "\t" if text in ("\\t", "tab") else text
    if len(sep) != 1:
        raise argparse.ArgumentTypeError(f"the separator must be one character, got {text!r}")
    return sep


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """Options of every command that reads a table."""
    parser.add_argument("--sep", type=separator,
                        help="CSV separator (default: sniffed from the header); \\t for a tab")
    parser.add_argument("--encoding", default="utf-8",
                        help="text encoding of the CSV input and output (default utf-8)")
    parser.add_argument("--missing", choices=["error", "drop"], default="error",
                        help="an empty cell in a QI or sensitive column, or a missing-value "
                             "mark (NaN, NA, ?) in a column of numbers: error (default, "
                             "names the column and line) or drop (leave the row out)")
    parser.add_argument("--order", action="append", metavar="COL=LOW,...,HIGH",
                        help="order of a text sensitive column (repeatable)")
    parser.add_argument("--hierarchy", action="append", metavar="COL=FILE.csv",
                        help="ARX-format taxonomy of a column (repeatable): a QI column is "
                             "generalized along it, a sensitive one compared by taxonomy "
                             "distance")
    parser.add_argument("--hierarchy-sep", default=";", help="separator of hierarchy files (;)")
    parser.add_argument("--report", metavar="FILE.json",
                        help="also write every number of the result to this JSON file")


def add_privacy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qi", required=True, help="quasi-identifier columns, comma-separated")
    parser.add_argument("--sensitive", required=True, help="sensitive columns, comma-separated")
    parser.add_argument("--k", required=True, type=int, help="minimum group size")
    parser.add_argument("--epsilon", required=True, type=float, help="proximity threshold")
    parser.add_argument("--delta", required=True, type=float,
                        help="a group's risk may be at most 1 - delta")
    parser.add_argument("--metric", default="l1", type=str.lower,
                        choices=["l1", "l2", "linf", "min_component", "variational"],
                        help="l1 (default), l2, linf, min_component or variational")
    parser.add_argument("--weights", help="one weight per sensitive column, comma-separated")


def add_criteria_options(parser: argparse.ArgumentParser) -> None:
    """The privacy criteria besides (epsilon, delta)^k (docs/guide/criteria.md)."""
    group = parser.add_argument_group(
        "privacy criteria", "every published class must also satisfy these, on the column "
        "--criteria-column names (default: each sensitive column)")
    group.add_argument("--l-diversity", type=int, metavar="L",
                       help="l-diversity: L well-represented values per class")
    group.add_argument("--l-kind", default="distinct", choices=["distinct", "entropy",
                                                                "recursive"],
                       help="the l-diversity: distinct (default), entropy or recursive")
    group.add_argument("--l-c", type=float, metavar="C",
                       help="c of recursive (c, l)-diversity (with --l-kind recursive)")
    group.add_argument("--t-closeness", type=float, metavar="T",
                       help="t-closeness: each class within earth mover's distance T of the "
                            "table")
    group.add_argument("--beta-likeness", type=float, metavar="B",
                       help="basic beta-likeness: (q - p) / p <= B for every value")
    group.add_argument("--delta-disclosure", type=float, metavar="D",
                       help="delta-disclosure privacy: |ln(q / p)| <= D for every value held")
    group.add_argument("--criteria-column", metavar="COL",
                       help="the column the criteria protect: any column that is not a QI "
                            "(default: each sensitive column)")


def criteria_from(args: argparse.Namespace) -> list[Any]:
    """The criteria the options of :func:`add_criteria_options` ask for."""
    from proxanon._results.criteria import (
        BetaLikeness,
        DeltaDisclosure,
        LDiversity,
        TCloseness,
    )

    column = args.criteria_column
    if args.l_diversity is None and (args.l_kind != "distinct" or args.l_c is not None):
        raise UsageError("--l-kind and --l-c describe --l-diversity L: give it too")
    found: list[Any] = []
    try:
        if args.l_diversity is not None:
            found.append(LDiversity(args.l_diversity, kind=args.l_kind, c=args.l_c,
                                    column=column))
        if args.t_closeness is not None:
            found.append(TCloseness(args.t_closeness, column=column))
        if args.beta_likeness is not None:
            found.append(BetaLikeness(args.beta_likeness, column=column))
        if args.delta_disclosure is not None:
            found.append(DeltaDisclosure(args.delta_disclosure, column=column))
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    if column is not None and not found:
        raise UsageError("--criteria-column names the column of a criterion: give one "
                         "(--l-diversity, --t-closeness, --beta-likeness, --delta-disclosure)")
    return found


def read_input(path_text: str, args: argparse.Namespace) -> CsvTable | ParquetTable:
    path = Path(path_text)
    if not path.is_file():
        problem = "is a directory, not a file" if path.is_dir() else "not found"
        raise UsageError(f"input file {problem}: {path_text}")
    return read_table(path, args.sep, args.encoding)


def output_path(out: str, inputs: Sequence[str], force: bool) -> Path:
    """Checks an output file name before any work: not an input, not a folder, its folder
    exists, and it is new unless ``force``."""
    target = Path(out)
    for given in inputs:
        if target.exists() and Path(given).exists() and os.path.samefile(target, given):
            raise UsageError(f"refusing to write over the input file {given}; choose another "
                             "output name")
    if target.is_dir():
        raise UsageError(f"{out} is a folder; give the path of a file")
    if target.exists() and not force:
        raise UsageError(f"{out} exists; pass --force to overwrite it")
    if not target.parent.exists():
        raise UsageError(f"the folder of {out} does not exist")
    return target


@dataclass(frozen=True)
class Columns:
    """The QI and sensitive columns of the rows handed to the library.

    ``frame`` holds them typed (numbers, dates, text or ordered categoricals), with a fresh
    0-based index; ``rows[i]`` is the source's data row (0-based) of ``frame``'s row i;
    ``dropped`` the data rows left out for an empty cell or a missing-value mark
    (``--missing drop``).
    """

    frame: pd.DataFrame
    rows: NDArray[np.int64]
    dropped: NDArray[np.int64]


def _values(source: CsvTable | ParquetTable, columns: list[str]) -> dict[str, pd.Series]:
    if isinstance(source, CsvTable):
        text = source.text_columns(columns)
        return {c: pd.Series(text[c], dtype=object, name=c) for c in columns}
    return {c: source.column(c) for c in columns}


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


def typed_columns(source: CsvTable | ParquetTable, qi: list[str], sensitive: list[str], *,
                  missing: str, orders: Mapping[str, str], taxonomies: set[str],
                  dates: set[str] | None = None, extra: Sequence[str] = ()) -> Columns:
    """The QI and sensitive columns, parsed for the library, and the ``extra`` columns a
    criterion reads (numbers where every value is one, else text).

    QI text columns become dates (when named in ``dates`` or when every value is an ISO
    date), numbers (when every value is one) or stay text; ``dates=None`` leaves QI
    columns as read (the audit groups rows by the published text). Sensitive columns are
    text with a taxonomy, ordered categoricals with an order, numbers otherwise. Empty cells
    are an error naming the column and the position, or (``missing="drop"``) drop the row.
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
    values = _values(source, wanted)
    empty = np.zeros(source.n_rows, dtype=bool)
    for column in wanted:
        blank = _empty(values[column])
        marked = _missing_marks(values[column])
        if (blank | marked).any() and missing == "error":
            first = int(np.argmax(blank | marked))
            what = (f"a missing value ({values[column].iloc[first]!r} on "
                    f"{source.position(first)})" if marked[first]
                    else f"an empty cell on {source.position(first)}")
            raise UsageError(f"column {column!r} has {what}; fill it, or pass --missing drop "
                             "to leave such rows out")
        empty |= blank | marked
    rows = np.flatnonzero(~empty).astype(np.int64)
    if rows.size == 0:
        raise UsageError(f"every row of {source.path} has an empty cell in a QI or sensitive "
                         "column")
    frame = pd.DataFrame(index=pd.RangeIndex(rows.size))
    for column in wanted:
        series = values[column].iloc[rows].reset_index(drop=True)
        if column in qi and dates is not None and _is_text(series):
            series = _qi_column(series, column, source, rows, column in dates)
        elif column in sensitive and column in orders:
            series = _ordered(series, column, orders[column], source, rows)
        elif column in sensitive and column not in taxonomies and _is_text(series) and (
                column in (dates or set())
                or bool(series.astype(str).str.strip().str.fullmatch(_ISO_DATE).all())):
            series = _dates(series.astype(str).str.strip(), column, source, rows)
        elif column in sensitive and column not in taxonomies and _is_text(series):
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
            series = numbers
        elif column not in qi and column not in sensitive and _is_text(series):
            numbers = _number(series)
            series = series.astype(str) if numbers is None else numbers
        frame[column] = series
    return Columns(frame=frame, rows=rows, dropped=np.flatnonzero(empty).astype(np.int64))


def _qi_column(series: pd.Series, column: str, source: CsvTable | ParquetTable,
               rows: NDArray[np.int64], is_date: bool) -> pd.Series:
    text = series.astype(str).str.strip()
    if is_date or bool(text.str.fullmatch(_ISO_DATE).all()):
        return _dates(text, column, source, rows)
    numbers = _number(text)
    if numbers is None:
        return text
    _check_finite(numbers, column, text, source, rows)
    return numbers


def positions(source: CsvTable | ParquetTable, rows: NDArray[np.int64]) -> list[int]:
    """1-based file lines (CSV, the header is line 1) or rows (Parquet) of data rows."""
    if isinstance(source, CsvTable):
        return [source.lines[int(r)] for r in rows]
    return [int(r) + 1 for r in rows]


def position_unit(source: CsvTable | ParquetTable) -> str:
    if isinstance(source, CsvTable):
        return "file lines, 1-based, the header is line 1"
    return "rows, 1-based"


def json_value(value: Any) -> Any:
    """A result's value as JSON: dataclasses by field, numpy scalars and arrays as Python
    numbers and lists, tuples as lists; non-finite floats (JSON has none) as null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return json_value(value.tolist())
    if isinstance(value, np.generic):
        return json_value(value.item())
    if isinstance(value, (list, tuple)):
        return [json_value(item) for item in value]
    if isinstance(value, enum.Enum):
        return json_value(value.value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"the JSON report cannot hold a {type(value).__name__} ({value!r})")


def report_json(command: str, report: Any, **context: Any) -> bytes:
    """The ``--report`` file: the command, its context and every field of ``report``."""
    from proxanon import __version__

    document = {"proxanon": __version__, "command": command, **json_value(context),
                "report": json_value(report)}
    return (json.dumps(document, indent=2, allow_nan=False) + "\n").encode()


def write_bytes(target: Path, content: bytes) -> None:
    def write(handle: IO[bytes]) -> None:
        handle.write(content)

    atomic_write(target, write)
