"""``proxanon demo``: anonymizes the bundled Adult census data and says where it wrote it."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from proxanon.cli._status import EXIT_NOT_SATISFIED, EXIT_OK, Outcome, show_progress
from proxanon.cli._writing import output_path, report_json, summary_lines, write_bytes


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("demo", help="anonymize the bundled Adult census data")
    parser.add_argument("-o", "--output", help="where to write the table (default: a new "
                                               "temporary folder)")
    parser.add_argument("--force", action="store_true", help="overwrite the output files")
    parser.add_argument("--report", metavar="FILE.json",
                        help="also write every number of the result to this JSON file")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> Outcome:
    from proxanon.anonymize import anonymize
    from proxanon.datasets import load_adult

    target = None if args.output is None else output_path(args.output, [], args.force)
    report_target = (None if args.report is None
                     else output_path(args.report, [] if target is None else [str(target)],
                                      args.force))
    adult = load_adult()
    qi = ["age", "sex", "race", "marital-status"]
    sensitive = ["education", "occupation", "workclass"]
    # Age is published as each group's exact interval: the ARX age hierarchy's fixed 5-, 10-
    # and 20-year bands force most groups to '*' and so merge them into a few huge classes.
    taxonomies = ["sex", "race", "marital-status"]
    result = anonymize(
        adult.data, quasi_identifiers=qi, sensitive=sensitive, k=10, epsilon=0.05, delta=0.8,
        hierarchies={c: adult.hierarchies[c] for c in taxonomies}, progress=show_progress(args),
    )
    if target is None:  # made only now, so a failed run leaves no empty folder behind
        target = Path(tempfile.mkdtemp(prefix="proxanon-demo-")) / "adult-anonymized.csv"
    report = None if report_target is None else report_json(
        "demo", result.report, output=str(target),
        scales=None if result.audit is None else result.audit.scales)
    write_bytes(target, result.table.to_csv(sep=";", index=False).encode())
    if report_target is not None and report is not None:
        write_bytes(report_target, report)
    return Outcome(EXIT_OK if result.satisfied else EXIT_NOT_SATISFIED, (
        "Adult census data (UCI, CC BY 4.0): 30,162 rows",
        "  quasi-identifiers: age (published as intervals), sex, race, marital-status "
        "(ARX hierarchies)",
        f"  sensitive: {', '.join(sensitive)} (by rank, each on [0, 1]), L1 distance",
        "  privacy: k = 10, epsilon = 0.05, delta = 0.8: in every group of at least 10 rows,",
        "  no row has more than 20% of the others within distance 0.05 of it\n",
        *summary_lines(result.report, adult.data.iloc[np.flatnonzero(result.groups >= 0)],
                       sensitive, epsilon=0.05, metric="l1", weights=None, audit=result.audit,
                       taxonomies=set()),
        f"\nwrote the anonymized table ({len(result.table):,} rows) to {target}"))
