"""The ``proxanon`` command: anonymize and audit CSV files, or run the demo.

Exit status: 0 success (``audit``: the table satisfies the principle), 1 ``audit`` found
violations, 2 usage errors and bad input (one message on standard error, no traceback).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from proxanon._errors import InfeasibleError

EXIT_OK, EXIT_VIOLATED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input found by the command line itself; printed without a traceback."""


def _names(text: str, option: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise UsageError(f"{option} needs at least one column name, e.g. {option} age,sex")
    return names


def _floats(text: str, option: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(f"{option} must be comma-separated numbers, got {text!r}") from None


def _pairs(items: Sequence[str] | None, option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items or ():
        column, sep, value = item.partition("=")
        if not sep or not column or not value:
            raise UsageError(f"{option} takes COLUMN=VALUE, got {item!r}")
        pairs[column.strip()] = value.strip()
    return pairs


def _sniff_sep(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as handle:
        head = handle.readline()
    try:
        return csv.Sniffer().sniff(head, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def read_table(path_text: str, sep: str | None) -> tuple[pd.DataFrame, str]:
    """Reads a CSV file with a header row; the separator is sniffed unless given."""
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"input file not found: {path_text}")
    used = sep
    try:
        used = sep if sep is not None else _sniff_sep(path)
        frame = pd.read_csv(path, sep=used, skipinitialspace=True, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read {path_text}: it is not UTF-8 text ({exc})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UsageError(f"cannot read {path_text} as CSV with separator {used!r}: {exc}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, used


def _apply_orders(frame: pd.DataFrame, orders: dict[str, str]) -> pd.DataFrame:
    """Makes the named text columns ordered categoricals (for sensitive columns)."""
    if not orders:
        return frame
    frame = frame.copy()
    for column, spec in orders.items():
        if column not in frame.columns:
            raise UsageError(f"--order names column {column!r}, which is not in the table")
        levels = [level.strip() for level in spec.split(",")]
        values = frame[column].astype(str).str.strip()
        unknown = sorted(set(values) - set(levels))
        if unknown:
            raise UsageError(f"--order {column}: value(s) {unknown[:5]} are not in the order given")
        frame[column] = pd.Categorical(values, categories=levels, ordered=True)
    return frame


def _check_sensitive_text(frame: pd.DataFrame, sensitive: list[str]) -> None:
    for column in sensitive:
        if column not in frame.columns:
            continue
        dtype = frame[column].dtype
        # pandas >= 3 reads text columns as the ``str`` dtype, older pandas as ``object``.
        if not isinstance(dtype, pd.CategoricalDtype) and (
                pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)):
            raise UsageError(
                f"sensitive column {column!r} holds text; give its order from low to high with "
                f"--order {column}=LOW,...,HIGH or use a numeric column"
            )


def _output_path(out: str, inputs: Sequence[str], force: bool) -> Path:
    target = Path(out)
    for given in inputs:
        if target.exists() and Path(given).exists() and os.path.samefile(target, given):
            raise UsageError(f"refusing to write over the input file {given}; choose another -o")
    if target.is_dir():
        raise UsageError(f"{out} is a folder; give the path of a file with -o")
    if target.exists() and not force:
        raise UsageError(f"{out} exists; pass --force to overwrite it")
    if not target.parent.exists():
        raise UsageError(f"the folder of {out} does not exist")
    return target


def _add_privacy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qi", required=True, help="quasi-identifier columns, comma-separated")
    parser.add_argument("--sensitive", required=True, help="sensitive columns, comma-separated")
    parser.add_argument("--k", required=True, type=int, help="minimum group size")
    parser.add_argument("--epsilon", required=True, type=float, help="proximity threshold")
    parser.add_argument("--delta", required=True, type=float,
                        help="a group's risk may be at most 1 - delta")
    parser.add_argument("--metric", default="l1", help="l1 (default), l2 or linf")
    parser.add_argument("--weights", help="one weight per sensitive column, comma-separated")
    parser.add_argument("--sep", help="CSV separator (default: sniffed from the header)")
    parser.add_argument("--order", action="append", metavar="COL=LOW,...,HIGH",
                        help="order of a text sensitive column (repeatable)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="proxanon",
        description="Anonymize tables against proximity breaches ((epsilon, delta)^k-"
                    "dissimilarity, XColor).")
    commands = parser.add_subparsers(dest="command", required=True)

    anon = commands.add_parser("anonymize", help="anonymize a CSV file")
    anon.add_argument("input", help="CSV file with a header row")
    _add_privacy(anon)
    anon.add_argument("--hierarchy", action="append", metavar="COL=FILE.csv",
                      help="ARX-format taxonomy of a column (repeatable): a QI column is "
                           "generalized along it, a sensitive one compared by taxonomy distance")
    anon.add_argument("--hierarchy-sep", default=";", help="separator of hierarchy files (;)")
    anon.add_argument("-o", "--output", required=True, help="where to write the table")
    anon.add_argument("--force", action="store_true", help="overwrite the output file")
    anon.add_argument("--best-effort", action="store_true",
                      help="write the table even when violations remain (flagged in the report)")
    anon.add_argument("--suppress", type=float, metavar="FRACTION",
                      help="leave out at most this fraction of the rows so that every group "
                           "satisfies the principle (e.g. 0.01)")
    anon.add_argument("--moves", default="auto", choices=["auto", "swap"],
                      help="auto (default): stronger repair when swaps stall; swap: the "
                           "paper's pairwise swaps only")

    check = commands.add_parser("audit", help="check a published CSV table")
    check.add_argument("table", help="CSV file with a header row")
    _add_privacy(check)

    demo = commands.add_parser("demo", help="anonymize the bundled Adult census data")
    demo.add_argument("-o", "--output", help="where to write the table (default: a new "
                                             "temporary folder)")
    demo.add_argument("--force", action="store_true", help="overwrite the output file")
    _add_substitute(commands)
    return parser


def _run_anonymize(args: argparse.Namespace) -> int:
    from proxanon.anonymize import anonymize
    from proxanon.generalize import load_hierarchies

    if args.suppress is not None and args.best_effort:
        raise UsageError("--suppress and --best-effort exclude each other: choose one")
    target = _output_path(args.output, [args.input], args.force)
    frame, sep = read_table(args.input, args.sep)
    qi = _names(args.qi, "--qi")
    sensitive = _names(args.sensitive, "--sensitive")
    frame = _apply_orders(frame, _pairs(args.order, "--order"))
    hierarchies = load_hierarchies(_pairs(args.hierarchy, "--hierarchy"), qi + sensitive,
                                   [str(c) for c in frame.columns], sep=args.hierarchy_sep)
    _check_sensitive_text(frame, [c for c in sensitive if c not in hierarchies])
    result = anonymize(
        frame, quasi_identifiers=qi, sensitive=sensitive, k=args.k, epsilon=args.epsilon,
        delta=args.delta, metric=args.metric,
        weights=_floats(args.weights, "--weights") if args.weights else None,
        hierarchies=hierarchies,
        on_infeasible=("suppress" if args.suppress is not None
                       else "best_effort" if args.best_effort else "raise"),
        max_suppression=args.suppress if args.suppress is not None else 0.0,
        moves=args.moves,
        progress=sys.stderr.isatty(),
    )
    result.table.to_csv(target, sep=sep, index=False)
    print(result.report)
    print(f"wrote {len(result.table):,} rows to {target}")
    return EXIT_OK


def _run_audit(args: argparse.Namespace) -> int:
    from proxanon.audit import audit

    frame, _ = read_table(args.table, args.sep)
    sensitive = _names(args.sensitive, "--sensitive")
    frame = _apply_orders(frame, _pairs(args.order, "--order"))
    _check_sensitive_text(frame, sensitive)
    report = audit(frame, quasi_identifiers=_names(args.qi, "--qi"), sensitive=sensitive,
                   k=args.k, epsilon=args.epsilon, delta=args.delta, metric=args.metric,
                   weights=_floats(args.weights, "--weights") if args.weights else None)
    print(report)
    return EXIT_OK if report.satisfied else EXIT_VIOLATED


def _run_demo(args: argparse.Namespace) -> int:
    from proxanon.anonymize import anonymize
    from proxanon.datasets import load_adult

    target = None if args.output is None else _output_path(args.output, [], args.force)
    adult = load_adult()
    qi = ["age", "sex", "race", "marital-status"]
    sensitive = ["education", "occupation", "workclass"]
    # Age is published as each group's exact interval: the ARX age hierarchy's fixed 5-, 10-
    # and 20-year bands force most groups to '*' and so merge them into a few huge classes.
    taxonomies = ["sex", "race", "marital-status"]
    print("Adult census data (UCI, CC BY 4.0): 30,162 rows")
    print("  quasi-identifiers: age (published as intervals), sex, race, marital-status "
          "(ARX hierarchies)")
    print(f"  sensitive: {', '.join(sensitive)} (by rank, each on [0, 1]), L1 distance")
    print("  privacy: k = 10, epsilon = 0.05, delta = 0.8: in every group of at least 10 rows,")
    print("  no row has more than 20% of the others within distance 0.05 of it\n")
    result = anonymize(
        adult.data, quasi_identifiers=qi, sensitive=sensitive, k=10, epsilon=0.05, delta=0.8,
        hierarchies={c: adult.hierarchies[c] for c in taxonomies}, progress=sys.stderr.isatty(),
    )
    if target is None:  # made only now, so a failed run leaves no empty folder behind
        target = Path(tempfile.mkdtemp(prefix="proxanon-demo-")) / "adult-anonymized.csv"
    result.table.to_csv(target, sep=";", index=False)
    print(result.report)
    print(f"\nwrote the anonymized table ({len(result.table):,} rows) to {target}")
    return EXIT_OK


def _add_substitute(commands: Any) -> None:
    sub = commands.add_parser("substitute", help="publish numeric columns as substituted "
                                                 "values that keep their localities")
    sub.add_argument("input", help="CSV file with a header row")
    sub.add_argument("--columns", required=True, help="numeric columns, comma-separated")
    sub.add_argument("-o", "--output", required=True, help="where to write the table")
    sub.add_argument("--constraints", help="also write the kept constraints to this CSV file")
    sub.add_argument("--segment-size", type=int, default=100, help="rows per segment (100)")
    sub.add_argument("--poi-fraction", type=float, default=0.1,
                     help="fraction of the localities kept, in (0, 1] (0.1)")
    sub.add_argument("--iterations", type=int, default=4000, help="random-walk steps (4000)")
    sub.add_argument("--seed", type=int, default=0, help="random seed (0)")
    sub.add_argument("--sep", help="CSV separator (default: sniffed from the header)")
    sub.add_argument("--force", action="store_true", help="overwrite the output file")


def _run_substitute(args: argparse.Namespace) -> int:
    """Every cell is read as text, so the columns not substituted are written back as read."""
    from proxanon.substitute import substitute

    target = _output_path(args.output, [args.input], args.force)
    extra = None
    if args.constraints is not None:
        extra = _output_path(args.constraints, [args.input, args.output], args.force)
    path = Path(args.input)
    if not path.is_file():
        raise UsageError(f"input file not found: {args.input}")
    sep = args.sep if args.sep is not None else _sniff_sep(path)
    try:
        text = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read {args.input}: it is not UTF-8 text ({exc})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UsageError(f"cannot read {args.input} as CSV with separator {sep!r}: {exc}") from None
    columns = _names(args.columns, "--columns")
    header = {str(c).strip(): c for c in text.columns}  # the header is written back as read
    missing = [c for c in columns if c not in header]
    if missing:
        raise UsageError(f"--columns: column(s) {missing} not in {args.input}; its columns are "
                         f"{list(header)}")
    numbers = pd.DataFrame(index=text.index)
    for column in columns:
        cells = text[header[column]]
        parsed = pd.to_numeric(cells.str.strip(), errors="coerce")
        bad = parsed.isna().to_numpy()
        if bad.any():
            row = int(bad.argmax())
            raise UsageError(f"column {column!r} is not numeric: {cells.iloc[row]!r} at "
                             f"data row {row + 1}; substitute numeric columns only")
        numbers[column] = parsed.astype("float64")
    result = substitute(numbers, columns, segment_size=args.segment_size,
                        poi_fraction=args.poi_fraction, iterations=args.iterations,
                        seed=args.seed)
    out = text.copy()
    for column in columns:
        out[header[column]] = [repr(float(v)) for v in result.table[column]]
    out.to_csv(target, sep=sep, index=False)
    if extra is not None:
        result.constraints.to_csv(extra, index=False)
    print(f"{result!r} in {result.seconds:.2f} s")
    print(f"wrote {len(out):,} rows to {target}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``proxanon`` console script."""
    args = _parser().parse_args(argv)
    runners = {"anonymize": _run_anonymize, "audit": _run_audit, "demo": _run_demo,
               "substitute": _run_substitute}
    try:
        return runners[args.command](args)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error of ours. Point stdout at devnull
        # so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except InfeasibleError as exc:
        command = "" if args.command == "anonymize" else " to proxanon anonymize"
        message = (str(exc)
                   .replace("pass on_infeasible='best_effort'", f"pass --best-effort{command}")
                   .replace("on_infeasible='suppress' with a max_suppression budget",
                            f"--suppress FRACTION{command}")
                   .replace("max_suppression=", "--suppress "))
        print(f"proxanon: infeasible: {_one_line(message)}", file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, ValueError, TypeError, OSError) as exc:
        print(f"proxanon: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE


def _one_line(message: str) -> str:
    """The message on one line (pandas' parser errors, for one, end with a newline)."""
    return " ".join(message.split())


if __name__ == "__main__":
    sys.exit(main())
