"""``proxanon explore``: which (k, epsilon, delta) settings work on a table, as a CSV file (and
a PNG of the frontier); docs/guide/explore.md."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from proxanon.cli._options import (
    METRIC_HELP,
    add_criteria_options,
    add_input_options,
    add_metric_option,
    criteria_from,
    floats,
)
from proxanon.cli._reading import read_columns
from proxanon.cli._status import EXIT_INFEASIBLE, EXIT_OK, STDIO, Outcome, UsageError, show_progress
from proxanon.cli._writing import distinct_outputs, output_path, report_json, write_bytes


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "explore", help="try a grid of (k, epsilon, delta) settings on a table",
        description="Tries every (k, epsilon, delta) of the lists given and writes one CSV row "
                    "per setting: satisfied, infeasible, or proven infeasible (proxanon "
                    "advise's proofs, tried first: such settings cost milliseconds), with the "
                    "GCP and largest class share of the published table and the seconds spent. "
                    f"Exit status {EXIT_OK} when some setting is satisfied, {EXIT_INFEASIBLE} "
                    "when none is (the CSV file is written either way).")
    parser.add_argument("input", help="CSV file with a header row, or a .parquet file")
    parser.add_argument("--qi", required=True, help="quasi-identifier columns, comma-separated")
    parser.add_argument("--sensitive", required=True, help="sensitive columns, comma-separated")
    parser.add_argument("--k", required=True,
                        help="minimum group size(s), comma-separated (e.g. 5,10)")
    parser.add_argument("--epsilon", required=True,
                        help="proximity threshold(s), comma-separated (e.g. 0.002,0.005,0.02); "
                             "with --find, the largest one to try")
    parser.add_argument("--find", type=float, metavar="STEP",
                        help="for each k and delta, find the largest epsilon among STEP, "
                             "2*STEP, ... up to --epsilon that holds (bisection, the proofs "
                             "first); the CSV file gets every setting tried")
    parser.add_argument("--append", action="store_true",
                        help="add to the CSV file -o names if it exists (made by explore on "
                             "the same input and options), reusing its settings")
    parser.add_argument("--delta", required=True,
                        help="delta(s), comma-separated (e.g. 0.5,0.8): a group's risk may be "
                             "at most 1 - delta")
    add_metric_option(parser, METRIC_HELP)
    parser.add_argument("--weights", help="one weight per sensitive column, comma-separated")
    add_input_options(parser)
    parser.add_argument("--dates", metavar="COL,...",
                        help="columns of ISO dates (YYYY-MM-DD), as for proxanon anonymize")
    parser.add_argument("-o", "--output", required=True, metavar="FRONTIER.csv",
                        help="where to write the settings, one CSV row each")
    parser.add_argument("--plot", metavar="FRONTIER.png",
                        help="also draw the frontier as PNG (needs proxanon[report])")
    parser.add_argument("--force", action="store_true", help="overwrite the output files")
    parser.add_argument("--method", default="xcolor", choices=["xcolor", "mondrian"],
                        help="xcolor (default) or mondrian, as for proxanon anonymize")
    parser.add_argument("--best-effort", action="store_true",
                        help="give the GCP of the best-effort table of settings that fail")
    parser.add_argument("--suppress", type=float, metavar="FRACTION",
                        help="allow leaving out at most this fraction of the rows (the CSV "
                             "then has a rows_suppressed column; no proof is tried)")
    parser.add_argument("--max-seconds", type=float, metavar="SECONDS",
                        help="stop a setting that runs this long (its verdict is then "
                             "'stopped'); default no limit")
    parser.add_argument("--moves", default="auto", choices=["auto", "swap"],
                        help="auto (default) or swap, as for proxanon anonymize")
    parser.add_argument("--recoding", default="local", choices=["local", "global"],
                        help="local (default) or global (full-domain), as for proxanon "
                             "anonymize")
    add_criteria_options(parser)
    parser.set_defaults(run=run)


def _grid_values(args: argparse.Namespace) -> tuple[list[int], list[float], list[float]]:
    """--k, --epsilon and --delta as lists, each value checked before any input is read."""
    from proxanon import _validate

    ks = []
    for part in args.k.split(","):
        try:
            ks.append(int(part))
        except ValueError:
            raise UsageError(f"--k must be comma-separated whole numbers, got {args.k!r}"
                             ) from None
    epsilons = floats(args.epsilon, "--epsilon")
    deltas = floats(args.delta, "--delta")
    for option, value in [("--epsilon", e) for e in epsilons] + [("--delta", d) for d in deltas]:
        try:
            _validate.privacy(2, value if option == "--epsilon" else 0.0,
                              value if option == "--delta" else 0.0, sys.maxsize)
        except ValueError as exc:
            raise UsageError(f"{option} {value:g}: {exc}") from None
    for kk in ks:
        if kk < 1:
            raise UsageError(f"--k must be at least 1, got {kk}")
    if args.max_seconds is not None and not 0 < args.max_seconds < math.inf:
        raise UsageError(f"--max-seconds must be a number of seconds > 0, got {args.max_seconds:g}")
    return ks, epsilons, deltas


def run(args: argparse.Namespace) -> Outcome:
    from proxanon.explore import explore_plot
    from proxanon.frontier import figure_class, frontier_cells, png_bytes

    if args.suppress is not None and args.best_effort:
        raise UsageError("--suppress and --best-effort exclude each other: choose one")
    ks, epsilons, deltas = _grid_values(args)
    if args.find is not None and (len(epsilons) != 1 or not 0 < args.find <= epsilons[0]):
        raise UsageError("--find STEP takes one --epsilon, the largest to try, and a STEP > 0 "
                         f"not above it; got --find {args.find:g} --epsilon {args.epsilon}")
    appending = args.append and args.output != STDIO and Path(args.output).is_file()
    target = output_path(args.output, [args.input], args.force or appending)
    job = _job_key(args)
    known = _known(target, job) if appending else None
    others = [args.input, args.output]
    plot_target = (None if args.plot is None
                   else output_path(args.plot, others, args.force))
    report_target = (None if args.report is None
                     else output_path(args.report, others + [args.plot or ""],
                                             args.force))
    distinct_outputs([("-o", target), ("--plot", plot_target),
                             ("--report", report_target)])
    if plot_target is not None:
        figure_class("--plot")  # fail before the work, naming the extra, without matplotlib
    given = read_columns(args)
    found, frame = _settle(args, given, ks, epsilons, deltas, known, target, job)
    lines = ([_table(frame)] if found is None else [_largest_table(found)])
    frame = _write(target, frame, known, job, args.encoding)  # the file's settings, all
    lines.append(f"wrote {len(frame):,} settings to {target}"
                 + (f" ({len(known):,} of them there before)" if known is not None else ""))
    if plot_target is not None:
        write_bytes(plot_target, png_bytes(explore_plot(frame)))
        lines.append(f"wrote the frontier to {plot_target}")
    if report_target is not None:
        write_bytes(report_target, report_json(
            "explore", frontier_cells(frame), input=str(args.input),
            output=str(target)))
    satisfied = bool((frame["verdict"] == "satisfied").any())
    if not satisfied:
        lines.append("no setting is satisfied: try smaller epsilons or deltas (or a smaller k)")
    return Outcome(EXIT_OK if satisfied else EXIT_INFEASIBLE, tuple(lines))


def _settle(args: argparse.Namespace, given: Any, ks: list[int], epsilons: list[float],
            deltas: list[float], known: pd.DataFrame | None, target: Any,
            job: str) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """The grid explored, or with --find the largest epsilon searched; on Ctrl-C the
    settings finished are written to ``target`` before the interrupt goes on (status 130)."""
    from proxanon._errors import ExploreInterrupted
    from proxanon.explore import explore, find_epsilon

    common_args: dict[str, Any] = dict(
        quasi_identifiers=given.qi, sensitive=given.sensitive, k=ks, delta=deltas,
        metric=args.metric,
        weights=floats(args.weights, "--weights") if args.weights else None,
        hierarchies=given.hierarchies,
        on_infeasible=("suppress" if args.suppress is not None
                       else "best_effort" if args.best_effort else "raise"),
        max_suppression=args.suppress if args.suppress is not None else 0.0,
        method=args.method, moves=args.moves, max_seconds=args.max_seconds,
        progress=show_progress(args), criteria=criteria_from(args),
        recoding=args.recoding, known=known)
    try:
        if args.find is None:
            return None, explore(given.columns.frame, epsilon=epsilons, **common_args)
        search = find_epsilon(given.columns.frame, step=args.find, epsilon_max=epsilons[0],
                              **common_args)
        return search.largest, search.settings
    except ExploreInterrupted as stop:
        frontier = stop.frontier
        if isinstance(frontier, pd.DataFrame) and len(frontier):
            written = _write(target, frontier, known, job, args.encoding)
            print(f"proxanon: wrote {len(written):,} settings (those finished) to {target}",
                  file=sys.stderr)
        raise KeyboardInterrupt from None


#: The options that do not change a setting's verdict or numbers: a frontier file made with
#: other values of these can take more settings.
_NOT_THE_JOB = frozenset({"k", "epsilon", "delta", "find", "append", "output", "plot",
                          "report", "force", "quiet", "verbose", "run", "command", "job_file"})


def _job_key(args: argparse.Namespace) -> str:
    """A key of the input file's bytes and every option that shapes a setting's result,
    written in the CSV file's ``job`` column: --append adds only to a file of the same key."""
    import hashlib
    import json

    from proxanon.cli._job import sha256

    content = "stdin" if args.input == STDIO else sha256(args.input)
    options = {name: value for name, value in sorted(vars(args).items())
               if name not in _NOT_THE_JOB}
    text = json.dumps([content, options], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _known(target: Any, job: str) -> pd.DataFrame:
    """The settings of the frontier file --append adds to, checked to be of this job."""
    from proxanon.frontier import frontier_cells

    try:
        frame = pd.read_csv(target, keep_default_na=True)
        frontier_cells(frame)
    except (ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"--append: {target} is not a CSV file proxanon explore wrote "
                         f"({exc})") from None
    if "job" not in frame.columns or set(frame["job"].astype(str)) != {job}:
        raise UsageError(f"--append: {target} was written for another input file or other "
                         "options (its job column differs): give another -o, or --force "
                         "without --append to replace it")
    return frame.drop(columns="job")


def _write(target: Any, frame: pd.DataFrame, known: pd.DataFrame | None, job: str,
           encoding: str) -> pd.DataFrame:
    """The settings (after those of ``known``, each setting once) written with their job
    key; returns them (without it)."""
    rows = frame if known is None else pd.concat([known, frame], ignore_index=True)
    rows = rows.drop_duplicates(subset=["k", "epsilon", "delta"], keep="first")
    write_bytes(target, rows.assign(job=job).to_csv(index=False).encode(encoding))
    return rows.reset_index(drop=True)


def _largest_table(found: pd.DataFrame) -> str:
    """--find's answer: per k and delta the largest epsilon that holds and the next step."""
    return str(found.to_string(index=False, na_rep="-", float_format=_number))


def _table(frame: pd.DataFrame) -> str:
    """The settings as a text table (the proofs are in the CSV file)."""
    shown = frame.drop(columns="proof")
    return str(shown.to_string(index=False, na_rep="-", float_format=_number))


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4g}"
