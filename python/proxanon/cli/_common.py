"""What the subcommands share: exit statuses, option parsing, reading the input table and
turning its QI and sensitive columns into the typed columns the library takes.

Only the QI and sensitive columns are parsed; the others stay as read (see
:mod:`proxanon.tableio`). Positions in messages are file lines (1-based, the header is line
1) for CSV and rows (1-based) for Parquet.

Conventions every subcommand gets from here and from :mod:`proxanon.cli._main`
(docs/guide/command-line.md): ``-`` as an input reads standard input and as an output
writes standard output (:func:`read_input`, :func:`output_path`); ``-q``/``-v``
(:func:`add_verbosity_options`); privacy parameters checked before any input is read
(:func:`check_parameters`); library messages worded with the command's flags
(:func:`flag_words`).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import enum
import json
import math
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._words import NO_VALUE, Call, Param
from proxanon.tableio import (
    FORMATS,
    STDOUT,
    CsvTable,
    ParquetTable,
    StandardOutput,
    atomic_write,
    read_stream,
    read_table,
)

#: Exit statuses of the ``proxanon`` command.
EXIT_OK = 0              # done; the table satisfies the principle
EXIT_INFEASIBLE = 1      # anonymize: no satisfying table was found, nothing written;
                         # advise: it is proven that no table satisfies
EXIT_USAGE = 2           # bad options or input: one line on standard error
EXIT_NOT_SATISFIED = 3   # a table that does not satisfy it (--best-effort output, or audited)
EXIT_STOPPED = 4         # anonymize: stopped at --max-seconds without a table, nothing written
EXIT_INTERRUPTED = 130   # Ctrl-C (128 + SIGINT): nothing written

#: The column ``anonymize`` adds to the published table.
GROUP_COLUMN = "group"

#: The name that stands for standard input (as an input) or standard output (as an output).
STDIO = "-"
#: Options whose value names an output file: with ``-`` as any of them, the summary goes to
#: standard error, so that standard output holds only what was written there.
OUTPUT_OPTIONS = ("output", "report", "html", "constraints", "plot", "save_job")

#: How much a subcommand says (``-q``, default, ``-v``).
QUIET, NORMAL, VERBOSE = -1, 0, 1

#: The flag of each library parameter a message may name (:func:`flag_words`).
FLAGS: dict[str, str] = {
    "k": "--k", "epsilon": "--epsilon", "delta": "--delta", "metric": "--metric",
    "weights": "--weights", "sensitive": "--sensitive", "quasi_identifiers": "--qi",
    "hierarchies": "--hierarchy", "max_suppression": "--suppress", "moves": "--moves",
    "segment_size": "--segment-size", "poi_fraction": "--poi-fraction",
    "iterations": "--iterations", "seed": "--seed",
}
#: Flags that stand for one setting of a library parameter.
SETTINGS: dict[tuple[str, str], str] = {
    ("on_infeasible", "best_effort"): "--best-effort",
    ("on_infeasible", "suppress"): "--suppress FRACTION",
}

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?")


class UsageError(Exception):
    """Bad input found by the command line itself; printed without a traceback."""


@dataclass(frozen=True)
class Outcome:
    """What a subcommand did: its exit status and the lines it prints on standard output
    (standard error when standard output holds the table; none with -q).

    The status is settled before anything is printed, so a reader that leaves early
    (``proxanon audit t.csv | head -1``) cannot turn a verdict into a success."""

    status: int
    lines: tuple[str, ...]
    #: More lines, printed with -v only.
    details: tuple[str, ...] = ()


def flag_words(param: Param) -> str:
    """How the command line names a library parameter a message names (:mod:`proxanon._words`):
    its flag, with the value where the message means one (``--best-effort``, ``--k 1``); a
    parameter without a flag keeps its Python words."""
    value = param.value
    if isinstance(value, str) and (param.name, value) in SETTINGS:
        return SETTINGS[param.name, value]
    flag = FLAGS.get(param.name)
    if flag is None:
        return param.python()
    if value is NO_VALUE:
        return flag
    return f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}"


def command_words(call: Call) -> str:
    """How the command line names a function a message points to: its subcommand."""
    return f"proxanon {call.name}"


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    """``-q``/``-v``, which :mod:`proxanon.cli._main` gives every subcommand."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=QUIET,
                       default=NORMAL, help="print errors only (no summary, no progress)")
    group.add_argument("-v", "--verbose", dest="verbosity", action="store_const",
                       const=VERBOSE, help="print more detail, and the libraries' warnings")


def verbosity(args: argparse.Namespace) -> int:
    return int(getattr(args, "verbosity", NORMAL))


def show_progress(args: argparse.Namespace) -> bool:
    """Whether a long run shows its progress on standard error: a bar on a terminal, unless
    ``-q``; elsewhere (a pipe, a log file) a line every 2 s with ``-v``."""
    return ((sys.stderr.isatty() and verbosity(args) > QUIET)
            or verbosity(args) >= VERBOSE)


def writes_stdout(args: argparse.Namespace) -> bool:
    """Whether an output option (:data:`OUTPUT_OPTIONS`) is ``-``."""
    return any(getattr(args, option, None) == STDIO for option in OUTPUT_OPTIONS)


def check_parameters(args: argparse.Namespace) -> None:
    """The privacy parameters a subcommand was given (single values of ``--k``,
    ``--epsilon``, ``--delta``, ``--suppress`` and ``--weights``), checked before any input
    is read; a subcommand that only judges groups (``judged=True`` in
    :func:`add_privacy_options`) may ask for k = 1 and any epsilon. Raises
    :class:`~proxanon._errors.ParameterError` (its message worded by :func:`flag_words`)."""
    k, epsilon, delta = (getattr(args, name, None) for name in ("k", "epsilon", "delta"))
    judged = bool(getattr(args, "judged", False))
    if epsilon is None and getattr(args, "epsilon_optional", False):
        if delta != 0:
            raise UsageError("--epsilon is required unless --delta is 0 (k-anonymity and the "
                             "criteria alone), e.g. --epsilon 0.05")
        epsilon = 0.0
    if isinstance(k, int) and isinstance(epsilon, float) and (delta is None
                                                              or isinstance(delta, float)):
        # Without a delta (optional where only bounds are asked for), k and epsilon alone.
        _validate.privacy(k, epsilon, 0.0 if delta is None else delta, k,
                          measured=judged or delta is None)
        sensitive = getattr(args, "sensitive", None)
        if not judged and isinstance(sensitive, str) and isinstance(delta, float):
            columns = len(names(sensitive, "--sensitive"))
            weights = getattr(args, "weights", None)
            check_epsilon(epsilon, delta, getattr(args, "metric", "l1"),
                          None if weights is None else floats(weights, "--weights"), columns)
    suppress = getattr(args, "suppress", None)
    if isinstance(suppress, float):
        _validate.suppression(suppress, "suppress")


def check_epsilon(epsilon: float, delta: float, metric: str, weights: list[float] | None,
                  columns: int) -> None:
    """Refuses an epsilon at which every two rows are neighbours (at least the largest
    distance ``metric`` gives between rows whose ``columns`` sensitive values are scaled to
    [0, 1]) where delta lets no group hold such rows; checks the weights."""
    from proxanon.distances import pairwise, resolve

    relation = resolve(metric, weights, columns, 1)
    largest = float(pairwise(relation, np.zeros((1, columns)), np.ones((1, columns)))[0, 0])
    if epsilon >= largest and _validate.single_row_violates(delta):
        raise UsageError(
            f"--epsilon {epsilon:g} makes every two rows neighbours: the {metric} distance "
            f"between rows is at most {largest:g} (each sensitive column scaled to [0, 1]), "
            f"so no group satisfies --delta {delta:g}; use an --epsilon below {largest:g}")


def summary_lines(report: object, published: pd.DataFrame, sensitive: list[str], *,
                  epsilon: float | None, metric: str, weights: list[float] | None, audit: Any,
                  taxonomies: set[str]) -> list[str]:
    """An anonymization's report as summary lines, with the line saying what epsilon allows
    in each sensitive column's own units below its privacy line (over the ``published``
    rows' typed columns, scaled as the audit's ``scales`` say; none where no column has
    units). ``published`` may hold no rows where every sensitive column is numeric (its
    scale then says it all: Dask's table)."""
    from proxanon._pipeline.verdict import epsilon_parts
    from proxanon.distances import resolve

    lines = str(report).split("\n")
    if audit is None or epsilon is None:  # None: no distance was checked (delta = 0)
        return lines
    relation = resolve(metric, weights, len(sensitive), len(published))
    parts = epsilon_parts(published, sensitive, relation, epsilon, audit.scales, taxonomies)
    at = next((i for i, line in enumerate(lines) if line.startswith("  privacy")), None)
    if parts and at is not None:
        label = "  epsilon means".ljust(lines[at].index(":"))  # aligned with the report's
        lines.insert(at + 1, f"{label}: rows are neighbours up to {', or '.join(parts)} (one "
                             "column alone, the others equal)")
    return lines


def kept_as_text(args: argparse.Namespace) -> set[str]:
    """The columns a subcommand keeps as text whatever they hold: those with a
    ``--hierarchy``, and those named in ``--text`` where the subcommand has it; Parquet
    output writes them as text (:func:`proxanon.tableio.write_table`)."""
    text = getattr(args, "text", None)
    named = set(names(text, "--text")) if text else set()
    return named | set(pairs(getattr(args, "hierarchy", None), "--hierarchy"))


def read_line(source: CsvTable | ParquetTable, given: str) -> str:
    """What was read, for -v."""
    if isinstance(source, CsvTable):
        kind = f"CSV, separator {source.sep!r}, {source.encoding}"
    else:
        kind = "Parquet"
    where = "standard input" if given == STDIO else given
    return f"read {source.n_rows:,} rows and {len(source.names)} columns from {where} ({kind})"


def names(text: str, option: str) -> list[str]:
    """A comma-separated list of column names; a name holding a comma is written in double
    quotes, as in a CSV record (``--qi 'age,"zip, code"'``), a quote inside one doubled."""
    try:
        fields = next(csv.reader([text], skipinitialspace=True, strict=True))
    except (csv.Error, StopIteration):
        raise UsageError(f"{option}: {text!r} is not a list of names; write a name holding "
                         'a comma in double quotes, e.g. age,"zip, code"') from None
    found = [part.strip() for part in fields if part.strip()]
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
    add_format_option(parser)
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
    parser.add_argument("--text", metavar="COL,...",
                        help="columns kept as text, as written (e.g. codes such as ZIP "
                             "02134): a QI one is published as its value, its taxonomy node "
                             "or *, never as an interval. A column with a --hierarchy, or "
                             "whose values have leading zeros, is text anyway")
    parser.add_argument("--report", metavar="FILE.json",
                        help="also write every number of the result to this JSON file")


def add_dates_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dates", metavar="COL,...",
                        help="columns of ISO dates (YYYY-MM-DD): QI ones are published as "
                             "date ranges, sensitive ones compared over their time span "
                             "(default: a column whose every value is an ISO date)")


def add_format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="auto",
                        help="format of the input: auto (default: Parquet for a .parquet or "
                             ".pq name, and for standard input that starts as Parquet does; "
                             "CSV otherwise), csv or parquet")


def add_privacy_options(parser: argparse.ArgumentParser, *, optional: bool = False,
                        judged: bool = False, epsilon_optional: bool = False) -> None:
    """``--qi``, ``--sensitive``, ``--k``, ``--epsilon``, ``--delta``, ``--metric`` and
    ``--weights``; ``optional``: ``--qi`` and ``--delta`` may be left out (``advise``);
    ``judged``: the subcommand judges given groups or settings (an audit, advise), which
    may be asked about k = 1 and any epsilon (:func:`check_parameters`);
    ``epsilon_optional``: ``--epsilon`` may be left out with ``--delta 0`` (``anonymize``:
    k-anonymity and the criteria alone)."""
    parser.set_defaults(judged=judged, epsilon_optional=epsilon_optional)
    parser.add_argument("--qi", required=not optional,
                        help="quasi-identifier columns, comma-separated"
                             + (" (optional: rows with an empty one are left out as "
                                "anonymize leaves them, with --missing drop)" if optional
                                else ""))
    parser.add_argument("--sensitive", required=True, help="sensitive columns, comma-separated")
    parser.add_argument("--k", required=True, type=int, help="minimum group size")
    parser.add_argument("--epsilon", required=not epsilon_optional, type=float,
                        help="proximity threshold" + (
                            " (may be left out with --delta 0: k-anonymity and the criteria "
                            "alone)" if epsilon_optional else ""))
    parser.add_argument("--delta", required=not optional, type=float,
                        help="a group's risk may be at most 1 - delta"
                             + (" (optional: without it, the bounds only)" if optional
                                else ""))
    parser.add_argument("--metric", default="l1", type=str.lower,
                        choices=["l1", "l2", "linf", "min_component", "variational"],
                        help="l1 (default), l2, linf, min_component or variational. With "
                             "several sensitive columns, l1, l2 and linf protect their "
                             "combination (a column alone may stay close: the summary's 'each "
                             "column' line says where); min_component protects each column's "
                             "value")
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


#: What an existing output that is not a regular file is, in words, by its mode.
_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def output_path(out: str, inputs: Sequence[str], force: bool) -> Path | StandardOutput:
    """Checks an output file name before any work: not an input, not a folder, its folder
    exists, and it is new unless ``force``. ``-`` is standard output
    (:data:`~proxanon.tableio.STDOUT`). A symbolic link is followed: the file it points to
    is written and the link kept. An existing FIFO, device or socket is refused, with or
    without ``force``: outputs are written to a new file renamed over the old one, which
    would replace it rather than write into it."""
    if out == STDIO:
        return STDOUT
    target = Path(os.path.realpath(out)) if os.path.islink(out) else Path(out)
    if target.exists():
        mode = target.stat().st_mode
        for test, what in _SPECIAL_FILES:
            if test(mode):
                raise UsageError(f"{out} is {what}, not a regular file; proxanon writes its "
                                 "outputs by replacing a file: give the path of a regular "
                                 "file, or - for standard output")
    for given in inputs:
        if given == STDIO:
            continue
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


def distinct_outputs(named: Sequence[tuple[str, Path | StandardOutput | None]]) -> None:
    """Refuses two output options (``(option, target)``, None where not given) that name
    the same file, or both standard output."""
    seen: list[tuple[str, Path | StandardOutput]] = []
    for option, target in named:
        if target is None:
            continue
        where = target if isinstance(target, StandardOutput) else target.resolve()
        for other, other_where in seen:
            if where == other_where:
                place = "standard output (-)" if where is STDOUT else "the same file"
                raise UsageError(f"{other} and {option} name {place}; give each output its "
                                 "own name")
        seen.append((option, where))


def write_bytes(target: Path | StandardOutput, content: bytes) -> None:
    def write(handle: IO[bytes]) -> None:
        handle.write(content)

    atomic_write(target, write)
