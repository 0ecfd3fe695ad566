"""``proxanon anonymize``: a CSV or Parquet table in, the published table out."""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import Any

import numpy as np
import pandas as pd

from proxanon.cli._common import (
    EXIT_NOT_SATISFIED,
    EXIT_OK,
    GROUP_COLUMN,
    Outcome,
    UsageError,
    add_criteria_options,
    add_input_options,
    add_privacy_options,
    criteria_from,
    floats,
    names,
    output_path,
    pairs,
    position_unit,
    positions,
    read_input,
    report_json,
    typed_columns,
    write_bytes,
)
from proxanon.tableio import CsvTable, ParquetTable, write_table


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "anonymize", help="anonymize a CSV or Parquet table",
        description="Publishes the table with its QI columns generalized and a group column; "
                    "every other column is written as it was read.")
    parser.add_argument("input", help="CSV file with a header row, or a .parquet file")
    add_privacy_options(parser)
    add_criteria_options(parser)
    add_input_options(parser)
    parser.add_argument("--dates", metavar="COL,...",
                        help="columns of ISO dates (YYYY-MM-DD): QI ones are published as "
                             "date ranges, sensitive ones compared over their time span "
                             "(default: a column whose every value is an ISO date)")
    parser.add_argument("-o", "--output", required=True,
                        help="where to write the table (.parquet: Parquet, else CSV)")
    parser.add_argument("--force", action="store_true", help="overwrite the output files")
    parser.add_argument("--best-effort", action="store_true",
                        help="write the table even when violations remain (flagged in the "
                             f"report, exit status {EXIT_NOT_SATISFIED})")
    parser.add_argument("--suppress", type=float, metavar="FRACTION",
                        help="leave out at most this fraction of the rows so that every group "
                             "satisfies the principle (e.g. 0.01)")
    parser.add_argument("--html", metavar="REPORT.html",
                        help="also write the disclosure-risk report (needs proxanon[report])")
    parser.add_argument("--moves", default="auto", choices=["auto", "swap"],
                        help="auto (default): stronger repair when swaps stall; swap: the "
                             "paper's pairwise swaps only")
    parser.add_argument("--dask", nargs="?", const="", metavar="SCHEDULER_ADDRESS",
                        help="run on Dask (needs proxanon[dask]): INPUT may be a glob of "
                             "Parquet or CSV files, -o names a Parquet folder; without an "
                             "address a local cluster (one worker per core) is started")
    parser.set_defaults(run=run)


def label_text(value: Any) -> str:
    """A published QI value as text: dates in ISO form, everything else as the library
    wrote it."""
    if isinstance(value, (pd.Timestamp, np.datetime64, datetime.date)):
        stamp = pd.Timestamp(value)
        text: str = (stamp.date().isoformat() if stamp == stamp.normalize()
                     else stamp.isoformat())
        return text
    return str(value)


def as_written(source: CsvTable | ParquetTable, frame: pd.DataFrame, kept: Any,
               rows: Any, table: pd.DataFrame, qi: list[str]) -> dict[str, list[str]]:
    """The QI columns' published text: where a class's rows all hold one number written one
    way in the CSV file (``02134``, ``1.50``), that text as written; else the library's label
    (an interval, or the number's shortest form where the rows wrote it differently). The
    file's text is read once, for the numeric columns."""
    out = {c: [label_text(v) for v in table[c]] for c in qi}
    numeric = [c for c in qi if pd.api.types.is_numeric_dtype(frame[c].dtype)
               and not pd.api.types.is_bool_dtype(frame[c].dtype)]
    if not isinstance(source, CsvTable) or not numeric:
        return out
    texts = source.text_columns(numeric)
    classes = table[GROUP_COLUMN].to_numpy()
    for column in numeric:
        written = np.asarray(texts[column], dtype=object)[rows]
        agree = pd.DataFrame({"class": classes, "value": frame[column].to_numpy()[kept],
                              "text": written}).groupby("class")[["value", "text"]].transform(
                                  "nunique")
        one = ((agree["value"] == 1) & (agree["text"] == 1)).to_numpy()
        out[column] = [text if same else label
                       for text, same, label in zip(written, one, out[column], strict=True)]
    return out


def _measures(result: Any, qi: list[str], columns: list[str]) -> Any:
    """The privacy measures of the published classes for the JSON report (as pycanon
    measures them; the reason where a column cannot be measured)."""
    from proxanon._results.privacy import published_measures

    kept = np.flatnonzero(result.groups >= 0)
    measured = published_measures(result.table.iloc[kept], qi, list(dict.fromkeys(columns)),
                                  result.table[GROUP_COLUMN].to_numpy(dtype=np.int64))
    return {"unavailable": measured} if isinstance(measured, str) else measured


def run(args: argparse.Namespace) -> Outcome:
    if args.dask is not None and criteria_from(args):
        raise UsageError("--dask does not enforce privacy criteria (--l-diversity, "
                         "--t-closeness, ...): run without --dask")
    if args.dask is not None:
        try:
            from proxanon.dask._cli import run_dask
        except ImportError as exc:
            raise ImportError('--dask needs the dask extra: pip install "proxanon[dask]"'
                              ) from exc
        return run_dask(args)
    from proxanon.anonymize import anonymize
    from proxanon.generalize import load_hierarchies

    if args.suppress is not None and args.best_effort:
        raise UsageError("--suppress and --best-effort exclude each other: choose one")
    target = output_path(args.output, [args.input], args.force)
    report_target = (None if args.report is None
                     else output_path(args.report, [args.input, args.output], args.force))
    html_target = (None if args.html is None
                   else output_path(args.html, [args.input, args.output], args.force))
    named = [(o, p.resolve()) for o, p in (("-o", target), ("--report", report_target),
                                            ("--html", html_target)) if p is not None]
    for i, (option, path) in enumerate(named):
        for other, other_path in named[:i]:
            if path == other_path:
                raise UsageError(f"{other} and {option} name the same file; give each output "
                                 "its own name")
    source = read_input(args.input, args)
    if GROUP_COLUMN in source.names:
        raise UsageError(f"{args.input} already has a column named {GROUP_COLUMN!r}, which the "
                         "published table adds; rename it first")
    qi = names(args.qi, "--qi")
    sensitive = names(args.sensitive, "--sensitive")
    criteria = criteria_from(args)
    hierarchies = load_hierarchies(pairs(args.hierarchy, "--hierarchy"), qi + sensitive,
                                   source.names, sep=args.hierarchy_sep)
    columns = typed_columns(source, qi, sensitive, missing=args.missing,
                            orders=pairs(args.order, "--order"), taxonomies=set(hierarchies),
                            dates=set(names(args.dates, "--dates")) if args.dates else set(),
                            extra=[args.criteria_column] if args.criteria_column else [])
    result = anonymize(
        columns.frame, quasi_identifiers=qi, sensitive=sensitive, k=args.k,
        epsilon=args.epsilon, delta=args.delta, metric=args.metric,
        weights=floats(args.weights, "--weights") if args.weights else None,
        hierarchies=hierarchies,
        on_infeasible=("suppress" if args.suppress is not None
                       else "best_effort" if args.best_effort else "raise"),
        max_suppression=args.suppress if args.suppress is not None else 0.0,
        moves=args.moves, progress=sys.stderr.isatty(), criteria=criteria,
    )
    kept = result.groups >= 0
    rows = columns.rows[kept]
    # Rendered before the table is written, so an interrupt cannot fall between the two files.
    report = None if report_target is None else report_json(
        "anonymize", result.report, input=str(args.input), output=str(target),
        positions=position_unit(source),
        rows_with_empty_cells=positions(source, columns.dropped),
        rows_suppressed=positions(source, columns.rows[~kept]),
        scales=None if result.audit is None else result.audit.scales,
        criteria=[] if result.audit is None else [v.to_dict() for v in result.audit.criteria],
        measures=_measures(result, qi, [*sensitive, *[c.column for c in criteria if c.column]]))
    page = None
    if html_target is not None:
        from proxanon.html_report import anonymization_html

        page = anonymization_html(result, columns.frame)
    write_table(source, target, rows,
                replace=as_written(source, columns.frame, kept, rows, result.table, qi),
                append={GROUP_COLUMN: result.table[GROUP_COLUMN].to_numpy(dtype=np.int64)})
    if report_target is not None and report is not None:
        write_bytes(report_target, report)
    if html_target is not None and page is not None:
        write_bytes(html_target, page.encode("utf-8"))
    lines = [str(result.report)]
    if result.audit is not None and result.audit.criteria:
        lines.append("  criteria       : " + "; ".join(str(v) for v in result.audit.criteria))
    if columns.dropped.size:
        lines.append(f"left out {columns.dropped.size:,} row(s) with an empty or missing QI or "
                     "sensitive value (--missing drop)")
    lines.append(f"wrote {rows.size:,} rows to {target}")
    if html_target is not None:
        lines.append(f"wrote the disclosure-risk report to {html_target}")
    return Outcome(EXIT_OK if result.satisfied else EXIT_NOT_SATISFIED, tuple(lines))
