"""``proxanon advise``: what can be proven about (k, epsilon, delta) on a table before any
run, with its sensitive columns read and scaled exactly as ``proxanon anonymize`` reads and
scales them (the same parsing, then :func:`proxanon.advise` on the DataFrame, which encodes
the columns as :func:`proxanon.anonymize` does)."""

from __future__ import annotations

import argparse
from typing import Any

from proxanon._engine.proofs import Advice
from proxanon.cli._options import (
    add_dates_option,
    add_input_options,
    add_privacy_options,
    floats,
    names,
    pairs,
)
from proxanon.cli._reading import position_unit, positions, read_input, text_option, typed_columns
from proxanon.cli._status import EXIT_INFEASIBLE, EXIT_OK, Outcome
from proxanon.cli._writing import output_path, report_json, write_bytes


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "advise", help="what can be proven about k, epsilon and delta before a run",
        description="Reads the table as 'proxanon anonymize' does, scales its sensitive "
                    "columns the same way, and prints the bounds and proofs of "
                    "proxanon.advise: the largest delta proven to succeed, the largest one "
                    "not refuted, and, with --delta, whether no table can satisfy. Exit "
                    f"status {EXIT_INFEASIBLE} when it proves that no table (no "
                    "partition into groups of at least k rows) satisfies the principle, "
                    f"{EXIT_OK} otherwise.")
    parser.add_argument("input", help="CSV file with a header row, or a .parquet file")
    add_privacy_options(parser, optional=True, judged=True)
    add_input_options(parser)
    add_dates_option(parser)
    parser.add_argument("--force", action="store_true", help="overwrite the --report file")
    parser.set_defaults(run=run)


def verdict(found: Advice) -> tuple[int, str]:
    """The exit status and the line that says what is proven at ``--delta``."""
    if found.delta is None:
        return EXIT_OK, ("no --delta given: the bounds above only; pass --delta for "
                                "a verdict")
    at = f"at delta = {found.delta:g}"
    if found.infeasible_for_any_partition:
        return EXIT_INFEASIBLE, (
            f"verdict {at}: proven that no table satisfies the principle (no partition into "
            f"groups of at least k = {found.k} rows does); proxanon anonymize would fail: try "
            + _smaller(found) + "leave rows out with --suppress")
    if found.provably_infeasible:
        return EXIT_OK, (
            f"verdict {at}: XColor's {found.m:,} groups of equal size cannot satisfy it; "
            "groups of other sizes are not ruled out, so proxanon anonymize may still find a "
            "table")
    if found.delta <= found.max_delta_proven:
        return EXIT_OK, f"verdict {at}: proven that proxanon anonymize succeeds"
    return EXIT_OK, (
        f"verdict {at}: not proven either way (success is proven up to delta = "
        f"{found.max_delta_proven:.4f}); only a run of proxanon anonymize can tell")


def run(args: argparse.Namespace) -> Outcome:
    from proxanon.advise import advise
    from proxanon.generalize import load_hierarchies

    report_target = (None if args.report is None
                     else output_path(args.report, [args.input], args.force))
    source = read_input(args.input, args)
    qi = names(args.qi, "--qi") if args.qi is not None else []
    sensitive = names(args.sensitive, "--sensitive")
    hierarchies = load_hierarchies(pairs(args.hierarchy, "--hierarchy"), qi + sensitive,
                                   source.names, sep=args.hierarchy_sep)
    columns = typed_columns(
        source, qi, sensitive, missing=args.missing,
        orders=pairs(args.order, "--order"), taxonomies=set(hierarchies),
        dates=set(names(args.dates, "--dates")) if args.dates else set(),
        text=text_option(args, source.names))
    found = advise(columns.frame, sensitive=sensitive, quasi_identifiers=qi or None,
                   hierarchies=hierarchies, k=args.k, epsilon=args.epsilon, delta=args.delta,
                   metric=args.metric,
                   weights=floats(args.weights, "--weights") if args.weights else None)
    status, line = verdict(found)
    if report_target is not None:
        write_bytes(report_target, report_json(
            "advise", found, input=str(args.input), verdict=line,
            positions=position_unit(source),
            rows_with_empty_cells=positions(source, columns.dropped)))
    lines = [str(found), line, *columns.notes]
    if columns.dropped.size:
        lines.append(f"left out {columns.dropped.size:,} row(s) with an empty or missing QI or "
                     "sensitive value (--missing drop)")
    return Outcome(status, tuple(lines))


def _smaller(found: Advice) -> str:
    """"a smaller --epsilon or --delta, or " for the parameters that can still be lowered
    (none at epsilon = 0 and delta = 0)."""
    flags = [f"--{name}" for name in found.relaxable() if name != "k"]
    return f"a smaller {' or '.join(flags)}, or " if flags else ""
