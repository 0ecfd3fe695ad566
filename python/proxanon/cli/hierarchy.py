"""``proxanon hierarchy``: builds a generalization hierarchy from a column of a table and
writes it as an ARX file for ``--hierarchy`` (docs/guide/hierarchies.md)."""

from __future__ import annotations

import argparse
from typing import Any

import pandas as pd

from proxanon.cli._options import floats, names, separator
from proxanon.cli._reading import read_input
from proxanon.cli._status import EXIT_OK, Outcome, UsageError
from proxanon.cli._writing import output_path, write_bytes
from proxanon.hierarchy import Hierarchy

#: The builders that take a value: option, its metavar and its help.
_KINDS = (
    ("--intervals", "W1,W2,...",
     "nested numeric bands of these widths, each a multiple of the one before (e.g. 5,10,20)"),
    ("--order", "S1,S2,...",
     "groups of adjacent values in order: S1 values per group, then S2 of those groups, ... "
     "(e.g. 2,4)"),
    ("--dates", "LEVEL,...",
     "calendar periods, finest first: day, month, quarter, year, decade, century "
     "(e.g. month,year)"),
)


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "hierarchy", help="build a hierarchy file from a column of a table",
        description="Builds a generalization hierarchy over the values of one column and "
                    "writes it in ARX's format (leaf;level1;...;root), ready for "
                    "--hierarchy COL=FILE. CSV cells are read as text, so codes keep their "
                    "leading zeros.")
    parser.add_argument("input", help="CSV file with a header row, or a .parquet file")
    parser.add_argument("--column", required=True, help="the column to build it for")
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--masking", action="store_true",
                      help="codes masked from the right, one character per level "
                           "(02134, 0213*, 021**, ..., *)")
    for option, metavar, text in _KINDS:
        kind.add_argument(option, metavar=metavar, help=text)
    parser.add_argument("--width", type=int,
                        help="--masking: pad codes of digits with leading zeros to this width")
    parser.add_argument("--mask", default="*", help="--masking: the mask character (*)")
    parser.add_argument("--origin", type=float, default=0.0,
                        help="--intervals: where the bands start (default 0)")
    parser.add_argument("--values", metavar="LOW,...,HIGH",
                        help="--order: the values from low to high (default: ascending, as "
                             "numbers when every value is one)")
    parser.add_argument("--root", default="*", help="label of the root (*)")
    parser.add_argument("-o", "--output", required=True, help="the hierarchy file to write")
    parser.add_argument("--force", action="store_true", help="overwrite the output file")
    parser.add_argument("--sep", type=separator,
                        help="CSV separator of the input (default: sniffed from the header)")
    parser.add_argument("--encoding", default="utf-8",
                        help="text encoding of the CSV input and of the output (utf-8)")
    parser.add_argument("--hierarchy-sep", default=";",
                        help="separator of the hierarchy file (;)")
    parser.set_defaults(run=run)


def _options_fit(args: argparse.Namespace) -> None:
    """Each builder's own options only go with it."""
    owners = (("--width", args.width is not None, args.masking, "--masking"),
              ("--mask", args.mask != "*", args.masking, "--masking"),
              ("--origin", args.origin != 0.0, args.intervals is not None, "--intervals"),
              ("--values", args.values is not None, args.order is not None, "--order"))
    for option, given, chosen, owner in owners:
        if given and not chosen:
            raise UsageError(f"{option} goes with {owner}")


def _masking(values: pd.Series, args: argparse.Namespace) -> Hierarchy:
    if pd.api.types.is_numeric_dtype(values.dtype) and args.width is None:
        raise UsageError(
            f"column {args.column!r} of {args.input} holds numbers, which have no leading "
            "zeros; pass --width N to write them with leading zeros to N digits")
    if args.width is None:
        lengths = values.astype(str).str.len()
        if lengths.nunique() > 1:
            short, long = values.iloc[int(lengths.argmin())], values.iloc[int(lengths.argmax())]
            raise UsageError(
                f"column {args.column!r} holds codes of different lengths ({short!r}, "
                f"{long!r}); masking needs one width: pass --width {int(lengths.max())} to "
                "pad codes of digits with leading zeros")
    return Hierarchy.from_masking(values, width=args.width, mask=args.mask, root=args.root)


def _numbers(values: pd.Series, args: argparse.Namespace, option: str) -> pd.Series | None:
    """The column as numbers; None when a value is not a number (an error for
    ``--intervals``)."""
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna().to_numpy()
    if not bad.any():
        return numbers
    if option == "--intervals":
        raise UsageError(
            f"--intervals needs numbers, but column {args.column!r} holds "
            f"{values.iloc[int(bad.argmax())]!r}; use --order or --masking for text")
    return None


def _ordered_values(values: pd.Series, args: argparse.Namespace) -> list[Any]:
    if args.values is not None:
        given = [part.strip() for part in args.values.split(",")]
        absent = sorted(set(values.astype(str)) - set(given))
        if absent:
            raise UsageError(
                f"--values lacks {len(absent)} value(s) of column {args.column!r}, e.g. "
                f"{absent[:5]}; list every value once, from low to high")
        return given
    numbers = _numbers(values, args, "--order")
    if numbers is None:
        return sorted(set(values.astype(str)))
    # Each distinct text once, in the order of its number (then of its text).
    return [text for _, text in sorted(set(zip(numbers.tolist(), values.tolist(),
                                               strict=True)))]


def build(values: pd.Series, args: argparse.Namespace) -> Hierarchy:
    """The hierarchy the options ask for, over the column's non-empty values."""
    if args.masking:
        return _masking(values, args)
    if args.intervals is not None:
        numbers = _numbers(values, args, "--intervals")
        return Hierarchy.from_intervals(numbers, floats(args.intervals, "--intervals"),
                                        origin=args.origin, root=args.root)
    if args.order is not None:
        try:
            sizes = [int(part) for part in args.order.split(",")]
        except ValueError:
            raise UsageError(
                f"--order takes whole numbers such as 2,4, got {args.order!r}") from None
        return Hierarchy.from_order(_ordered_values(values, args), sizes, root=args.root)
    return Hierarchy.from_dates(values, names(args.dates, "--dates"), root=args.root)


def run(args: argparse.Namespace) -> Outcome:
    _options_fit(args)
    target = output_path(args.output, [args.input], args.force)
    source = read_input(args.input, args)
    if args.column not in source.names:
        raise UsageError(f"column {args.column!r} is not in {args.input}; its "
                                f"columns are {source.names}")
    column = source.column(args.column)
    empty = column.isna().to_numpy() | (column.astype(str).str.strip() == "").to_numpy()
    values = column[~empty].reset_index(drop=True)
    if values.empty:
        raise UsageError(f"column {args.column!r} of {args.input} has no values")
    hierarchy = build(values, args)
    write_bytes(target, hierarchy.csv_bytes(args.hierarchy_sep, args.encoding,
                                                   str(target)))
    lines = [f"wrote the hierarchy of column {args.column!r} to {target}: "
             f"{hierarchy.n_leaves:,} leaves, height {hierarchy.height}, e.g. "
             f"{args.hierarchy_sep.join(hierarchy.rows()[0])}"]
    if empty.any():
        lines.append(f"left out {int(empty.sum()):,} empty cell(s) of column {args.column!r}")
    return Outcome(EXIT_OK, tuple(lines))
