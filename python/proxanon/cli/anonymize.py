"""``proxanon anonymize``: a CSV or Parquet table in, the published table out."""

from __future__ import annotations

import argparse
import datetime
import math
from typing import Any

import numpy as np
import pandas as pd

from proxanon.cli._job import job_text, provenance
from proxanon.cli._options import (
    add_criteria_options,
    add_dates_option,
    add_input_options,
    add_privacy_options,
    criteria_from,
    floats,
    kept_as_text,
)
from proxanon.cli._reading import position_unit, positions, read_columns, read_frontier, read_line
from proxanon.cli._status import (
    EXIT_NOT_SATISFIED,
    EXIT_OK,
    EXIT_STOPPED,
    GROUP_COLUMN,
    Outcome,
    UsageError,
    show_progress,
)
from proxanon.cli._writing import (
    distinct_outputs,
    output_path,
    report_json,
    summary_lines,
    write_bytes,
)
from proxanon.tableio import (
    CsvTable,
    ParquetTable,
    StandardOutput,
    check_writable,
    write_table,
)


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "anonymize", help="anonymize a CSV or Parquet table",
        description="Publishes the table with its QI columns generalized and a group column; "
                    "every other column is written as it was read.")
    parser.add_argument("input", help="CSV file with a header row, or a .parquet file; - "
                                      "reads standard input")
    add_privacy_options(parser, epsilon_optional=True)
    add_criteria_options(parser)
    add_input_options(parser)
    add_dates_option(parser)
    parser.add_argument("-o", "--output", required=True,
                        help="where to write the table (.parquet: Parquet, else CSV); - "
                             "writes standard output (in the input's format) and the summary "
                             "to standard error")
    parser.add_argument("--publish", default="generalize", choices=["generalize", "anatomy"],
                        help="generalize (default): one table, QI columns generalized; "
                             "anatomy: -o gets every column but the sensitive ones, as read, "
                             "plus the group, and --sensitive-output the group and the "
                             "sensitive columns")
    parser.add_argument("--recoding", default="local", choices=["local", "global"],
                        help="local (default): each class at its own nodes; global: "
                             "full-domain recoding, one hierarchy level per QI for every row "
                             "(with --suppress FRACTION, the failing classes left out)")
    parser.add_argument("--sensitive-output", metavar="PATH",
                        help="with --publish anatomy: where to write the sensitive table "
                             "(.parquet: Parquet, else CSV)")
    parser.add_argument("--force", action="store_true", help="overwrite the output files")
    parser.add_argument("--best-effort", action="store_true",
                        help="write the table even when violations remain (flagged in the "
                             f"report, exit status {EXIT_NOT_SATISFIED})")
    parser.add_argument("--suppress", type=float, metavar="FRACTION",
                        help="leave out at most this fraction of the rows so that every group "
                             "satisfies the principle (e.g. 0.01)")
    parser.add_argument("--html", metavar="REPORT.html",
                        help="also write the disclosure-risk report (needs proxanon[report])")
    parser.add_argument("--large-class", type=float, default=0.02, metavar="SHARE",
                        help="note a class above this share of the rows (default 0.02)")
    parser.add_argument("--max-seconds", type=float, metavar="SECONDS",
                        help="stop a run that has no table after this long (exit status "
                             f"{EXIT_STOPPED}, nothing written); default no limit")
    parser.add_argument("--include-original", action="store_true",
                        help="with --html: an internal report that also shows the original QI "
                             "values (marked as such); by default the report shows none, so "
                             "that it can be shared with the table")
    parser.add_argument("--frontier", metavar="FRONTIER.csv",
                        help="with --html: show where this release sits among the settings "
                             "'proxanon explore' wrote to this file")
    parser.add_argument("--moves", default="auto", choices=["auto", "swap"],
                        help="auto (default): stronger repair when swaps stall; swap: the "
                             "paper's pairwise swaps only")
    parser.add_argument("--save-job", metavar="JOB.toml",
                        help="also write the run as a job file (every parameter, the input's "
                             "and the hierarchies' SHA-256) that proxanon run repeats")
    parser.add_argument("--dask", nargs="?", const="", metavar="SCHEDULER_ADDRESS",
                        help="run on Dask (needs proxanon[dask]): INPUT may be a glob of "
                             "Parquet or CSV files, -o names a Parquet folder; without an "
                             "address a local cluster (one worker per core) is started")
    # job_file: the job file `proxanon run` read these options from (an input too).
    parser.set_defaults(run=run, job_file=None)


def label_text(value: Any) -> str:
    """A published QI value as text: dates in ISO form, everything else as the library
    wrote it."""
    if isinstance(value, (pd.Timestamp, np.datetime64, datetime.date)):
        stamp = pd.Timestamp(value)
        text: str = (stamp.date().isoformat() if stamp == stamp.normalize()
                     else stamp.isoformat())
        return text
    return str(value)


def _label_texts(labels: pd.Series) -> list[str]:
    """:func:`label_text` of each published label, formatted once per distinct label."""
    codes, distinct = pd.factorize(labels, use_na_sentinel=False)
    texts = np.asarray([label_text(v) for v in distinct], dtype=object)
    return texts[codes].tolist()  # type: ignore[no-any-return]


def as_written(source: CsvTable | ParquetTable, frame: pd.DataFrame, kept: Any,
               rows: Any, table: pd.DataFrame, qi: list[str]) -> dict[str, list[str]]:
    """The QI columns' published text: where a class's rows all hold one number written one
    way in the CSV file (``02134``, ``1.50``), that text as written; else the library's label
    (an interval, or the number's shortest form where the rows wrote it differently). The
    file's text is read once, for the numeric columns."""
    out = {c: _label_texts(table[c]) for c in qi}
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


def write_anatomy(source: CsvTable | ParquetTable, targets: tuple[Any, Any], rows: Any,
                  groups: Any, released: tuple[pd.DataFrame, list[str]],
                  text: Any = frozenset()) -> None:
    """The two tables of an anatomy release: to ``targets[0]`` the source's ``rows`` with
    every column but the sensitive ones, as read, plus the group; to ``targets[1]`` the group
    and the sensitive columns, in the order of :func:`anatomy_order` over the rows as the
    library read them (``released``: those rows and the sensitive columns' names); ``text``:
    the columns a Parquet target keeps as text (:func:`proxanon.tableio.write_table`)."""
    from proxanon._pipeline.anatomy import anatomy_order

    frame, sensitive = released
    write_table(source, targets[0], rows, replace={}, append={GROUP_COLUMN: groups},
                columns=[*(c for c in source.names if c not in sensitive), GROUP_COLUMN],
                text=text)
    order = anatomy_order(frame, sensitive, groups)
    write_table(source, targets[1], rows[order], replace={},
                append={GROUP_COLUMN: groups[order]}, columns=[GROUP_COLUMN, *sensitive],
                text=text)


def _measures(result: Any, qi: list[str], columns: list[str]) -> Any:
    """The privacy measures of the published classes for the JSON report (as pycanon
    measures them; the reason where a column cannot be measured)."""
    from proxanon._results.privacy import published_measures

    if result.sensitive_table is not None:  # anatomy: the classes are the groups
        table = result.sensitive_table
        measured = published_measures(table, [GROUP_COLUMN], list(dict.fromkeys(columns)),
                                      table[GROUP_COLUMN].to_numpy(dtype=np.int64))
    else:
        kept = np.flatnonzero(result.groups >= 0)
        measured = published_measures(result.table.iloc[kept], qi,
                                      list(dict.fromkeys(columns)),
                                      result.table[GROUP_COLUMN].to_numpy(dtype=np.int64))
    return {"unavailable": measured} if isinstance(measured, str) else measured


def _dask_options(args: argparse.Namespace) -> None:
    """Refuses, naming them, the options a run on Dask does not take."""
    if criteria_from(args):
        raise UsageError("--dask does not enforce privacy criteria (--l-diversity, "
                         "--t-closeness, ...): run without --dask")
    if args.recoding != "local":
        raise UsageError("--dask publishes local recoding only: run --recoding global "
                         "without --dask")
    if args.max_seconds is not None:
        raise UsageError("--max-seconds stops a run on this machine: it does not go with "
                         "--dask (the scheduler's own limits apply there)")
    if args.save_job is not None:
        raise UsageError("--save-job records one input file and its hash, so it does not "
                         "go with --dask")


def _check_options(args: argparse.Namespace) -> None:
    """Refuses, naming them, options that exclude each other or are out of range."""
    if args.suppress is not None and args.best_effort:
        raise UsageError("--suppress and --best-effort exclude each other: choose one")
    if (args.publish == "anatomy") != (args.sensitive_output is not None):
        raise UsageError("--publish anatomy writes two tables: give --sensitive-output with "
                         "it, and only with it")
    if not 0 < args.large_class <= 1:
        raise UsageError(f"--large-class must be a share of the rows in (0, 1], got "
                         f"{args.large_class:g}")
    if args.max_seconds is not None and not 0 < args.max_seconds < math.inf:
        raise UsageError(f"--max-seconds must be a number of seconds > 0, got "
                         f"{args.max_seconds:g}")
    if args.include_original and args.html is None:
        raise UsageError("--include-original puts the original values in the HTML report: "
                         "give --html too")


def run(args: argparse.Namespace) -> Outcome:
    if args.dask is not None:
        _dask_options(args)
        try:
            from proxanon.dask._cli import run_dask
        except ImportError as exc:
            raise ImportError('--dask needs the dask extra: pip install "proxanon[dask]"'
                              ) from exc
        return run_dask(args)
    from proxanon.anonymize import anonymize

    _check_options(args)
    # Every file the job reads is guarded against being written over: the table, its
    # hierarchies, the frontier and the job file that `proxanon run` read.
    read = [args.input, *[given.split("=", 1)[1] for given in args.hierarchy or []
                          if "=" in given], *([args.frontier] if args.frontier else []),
            *([args.job_file] if args.job_file else [])]
    target = output_path(args.output, read, args.force)
    report_target = (None if args.report is None
                     else output_path(args.report, [*read, args.output], args.force))
    html_target = (None if args.html is None
                   else output_path(args.html, [*read, args.output], args.force))
    sensitive_target = (None if args.sensitive_output is None
                        else output_path(args.sensitive_output, read, args.force))
    job_target = (None if args.save_job is None
                  else output_path(args.save_job, [*read, args.output], args.force))
    if isinstance(job_target, StandardOutput):
        raise UsageError("--save-job needs a file name: the job records paths relative to "
                         "its own folder")
    distinct_outputs([("-o", target), ("--report", report_target), ("--html", html_target),
                      ("--sensitive-output", sensitive_target), ("--save-job", job_target)])
    # The job records the files as they are before they are read.
    job = None if job_target is None else job_text(args, job_target)
    frontier = read_frontier(args.frontier, args.html)
    given = read_columns(args)
    source, qi, sensitive, hierarchies, columns = (
        given.source, given.qi, given.sensitive, given.hierarchies, given.columns)
    check_writable(source, target)
    if GROUP_COLUMN in source.names:
        raise UsageError(f"{args.input} already has a column named {GROUP_COLUMN!r}, which the "
                         "published table adds; rename it first")
    criteria = criteria_from(args)
    result = anonymize(
        columns.frame, quasi_identifiers=qi, sensitive=sensitive, k=args.k,
        epsilon=args.epsilon, delta=args.delta, metric=args.metric,
        weights=floats(args.weights, "--weights") if args.weights else None,
        hierarchies=hierarchies,
        on_infeasible=("suppress" if args.suppress is not None
                       else "best_effort" if args.best_effort else "raise"),
        max_suppression=args.suppress if args.suppress is not None else 0.0,
        moves=args.moves, progress=show_progress(args), publish=args.publish,
        criteria=criteria, max_seconds=args.max_seconds, recoding=args.recoding,
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
        **provenance(args, args.input),
        criteria=[] if result.audit is None else [v.to_dict() for v in result.audit.criteria],
        measures=_measures(result, qi, [*sensitive, *[c.column for c in criteria if c.column]]))
    page = None
    if html_target is not None:
        from proxanon.html_report import anonymization_html

        page = anonymization_html(result, columns.frame, frontier=frontier,
                                  include_original=args.include_original)
    groups = result.table[GROUP_COLUMN].to_numpy(dtype=np.int64)
    if sensitive_target is not None:
        write_anatomy(source, (target, sensitive_target), rows, groups,
                      (columns.frame[kept], sensitive), kept_as_text(args))
    else:
        write_table(source, target, rows,
                    replace=as_written(source, columns.frame, kept, rows, result.table, qi),
                    append={GROUP_COLUMN: groups}, text=kept_as_text(args))
    if report_target is not None and report is not None:
        write_bytes(report_target, report)
    if html_target is not None and page is not None:
        write_bytes(html_target, page.encode("utf-8"))
    if job_target is not None and job is not None:
        write_bytes(job_target, job.encode("utf-8"))
    lines = summary_lines(result.report, columns.frame.iloc[np.flatnonzero(kept)], sensitive,
                          epsilon=None if args.delta == 0 else args.epsilon,
                          metric=args.metric,
                          weights=floats(args.weights, "--weights") if args.weights else None,
                          audit=result.audit, taxonomies=set(hierarchies))
    lines += list(columns.notes)
    if result.report.largest_class_share > args.large_class:
        lines.append(f"note: the largest class holds {result.report.largest_class_share:.1%} "
                     f"of the rows published, above {args.large_class:.1%} (--large-class): "
                     "its rows are described by coarse values; a hierarchy on the QIs of its "
                     "rows, or a smaller k, can split it")
    if result.audit is not None and result.audit.criteria:
        lines.append("  criteria       : " + "; ".join(str(v) for v in result.audit.criteria))
    if columns.dropped.size:
        lines.append(f"left out {columns.dropped.size:,} row(s) with an empty or missing QI or "
                     "sensitive value (--missing drop)")
    lines.append(f"wrote {rows.size:,} rows to {target}"
                 + ("" if sensitive_target is None else
                    f" (the QI table) and to {sensitive_target} (the sensitive table)"))
    if html_target is not None:
        lines.append(f"wrote the disclosure-risk report to {html_target}")
    if job_target is not None:
        lines.append(f"wrote the job to {job_target}; proxanon run {job_target} repeats it")
    return Outcome(EXIT_OK if result.satisfied else EXIT_NOT_SATISFIED, tuple(lines),
                   details=(read_line(source, args.input),))
