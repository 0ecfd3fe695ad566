"""``proxanon report``: audits a published table and writes its disclosure-risk report
(one self-contained HTML page)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from proxanon.cli._job import provenance
from proxanon.cli._options import add_criteria_options, add_input_options, add_privacy_options
from proxanon.cli._reading import read_line
from proxanon.cli._status import EXIT_NOT_SATISFIED, EXIT_OK, Outcome
from proxanon.cli._writing import distinct_outputs, output_path, report_json, write_bytes
from proxanon.cli.audit import audited


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "report", help="write the disclosure-risk report (HTML) of a published table",
        description="Audits the table as 'proxanon audit' does (same exit status) and writes "
                    "the report; needs the report extra (matplotlib).")
    parser.add_argument("table", help="CSV file with a header row, or a .parquet file")
    add_privacy_options(parser, judged=True)
    add_criteria_options(parser)
    add_input_options(parser)
    parser.add_argument("-o", "--output", required=True, help="where to write the HTML page")
    parser.add_argument("--force", action="store_true", help="overwrite the output files")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> Outcome:
    from proxanon.html_report import audit_html

    target = output_path(args.output, [args.table], args.force)
    report_target = (None if args.report is None
                     else output_path(args.report, [args.table], args.force))
    distinct_outputs([("-o", target), ("--report", report_target)])
    tic = time.perf_counter()
    result = audited(args)
    seconds = {"audit": time.perf_counter() - tic}
    page = audit_html(result.check, result.columns.frame, quasi_identifiers=result.qi,
                      sensitive=result.sensitive, groups=result.groups, seconds=seconds,
                      title=f"audit of {args.table}")
    if report_target is not None:
        write_bytes(report_target, report_json(
            "report", result.check, input=str(args.table), **provenance(args, args.table)))
    write_bytes(target, page.encode("utf-8"))
    return Outcome(
        EXIT_OK if result.check.satisfied else EXIT_NOT_SATISFIED,
        (str(result.check), f"wrote the disclosure-risk report to {target}"),
        details=(read_line(result.source, args.table),))
