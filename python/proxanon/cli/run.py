"""``proxanon run JOB.toml``: repeats an ``anonymize`` run saved with ``--save-job``
(docs/guide/jobs.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

from proxanon.cli import anonymize
from proxanon.cli._job import job_argv
from proxanon.cli._status import Outcome, UsageError


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "run", help="repeat an anonymize run saved with --save-job",
        description="Runs the anonymize command a job file records, after checking that its "
                    "input and hierarchy files have the SHA-256 it recorded; the same "
                    "proxanon version writes the same bytes.")
    parser.add_argument("job", help="the job file (TOML) written by anonymize --save-job")
    parser.add_argument("-o", "--output",
                        help="where to write the table (default: the job's output file)")
    parser.add_argument("--force", action="store_true", help="overwrite the output files")
    parser.add_argument("--report", metavar="FILE.json",
                        help="also write every number of the result to this JSON file")
    parser.add_argument("--html", metavar="REPORT.html",
                        help="also write the disclosure-risk report (needs proxanon[report])")
    parser.add_argument("--include-original", action="store_true",
                        help="with --html: an internal report that also shows the original QI "
                             "values (marked as such)")
    parser.add_argument("--any-version", action="store_true",
                        help="run a job saved by another proxanon version (its output may "
                             "differ)")
    parser.set_defaults(run=run)


class _JobParser(argparse.ArgumentParser):
    """Parses a job's command line: a bad entry is a usage error, not an exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"the job's parameters are not valid: {message}")


def run(args: argparse.Namespace) -> Outcome:
    job = Path(args.job)
    if not job.is_file():
        raise UsageError(f"job file not found: {args.job}")
    argv, note = job_argv(job, output=args.output, any_version=args.any_version)
    argv += [*(["--force"] if args.force else []),
             *([f"--report={args.report}"] if args.report else []),
             *([f"--html={args.html}"] if args.html else []),
             *(["--include-original"] if args.include_original else [])]
    parser = _JobParser(prog="proxanon")
    anonymize.add_parser(parser.add_subparsers(dest="command", required=True))
    try:
        repeated = parser.parse_args(argv)
    except UsageError as exc:
        raise UsageError(f"job {job}: {exc}") from None
    # From here on this is the anonymize command: the failure messages of proxanon's main
    # read its options from these arguments.
    repeated.job_file = str(job)
    vars(args).update(vars(repeated))
    outcome = anonymize.run(repeated)
    return Outcome(outcome.status, (*outcome.lines, note) if note else outcome.lines)
