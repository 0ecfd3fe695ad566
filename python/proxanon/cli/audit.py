"""``proxanon audit``: checks a published table against (epsilon, delta)^k-dissimilarity."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._results.audit import AuditReport
from proxanon.cli import _common as common
from proxanon.tableio import CsvTable, ParquetTable


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "audit", help="check a published CSV or Parquet table",
        description="Groups the rows by their published QI values and checks every group. "
                    f"Exit status {common.EXIT_OK} when the table satisfies the principle, "
                    f"{common.EXIT_NOT_SATISFIED} when it does not.")
    parser.add_argument("table", help="CSV file with a header row, or a .parquet file")
    common.add_privacy_options(parser)
    common.add_input_options(parser)
    parser.add_argument("--force", action="store_true", help="overwrite the --report file")
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class Audited:
    """An audit of a table file, with what the reports show next to it."""

    check: AuditReport
    columns: common.Columns
    groups: NDArray[np.int64]
    qi: list[str]
    sensitive: list[str]
    source: CsvTable | ParquetTable


def audited(args: argparse.Namespace) -> Audited:
    """Reads ``args.table`` and audits it: groups are the rows sharing published QI values,
    sensitive columns compared as ``--metric``, ``--order`` and ``--hierarchy`` say."""
    from proxanon.audit import audit
    from proxanon.generalize import load_hierarchies
    from proxanon.tables import table_groups

    source = common.read_input(args.table, args)
    qi = common.names(args.qi, "--qi")
    sensitive = common.names(args.sensitive, "--sensitive")
    # Only the sensitive columns' taxonomies matter: the groups are the published QI values.
    hierarchies = load_hierarchies(common.pairs(args.hierarchy, "--hierarchy"), sensitive,
                                   source.names, sep=args.hierarchy_sep)
    columns = common.typed_columns(source, qi, sensitive, missing=args.missing,
                                   orders=common.pairs(args.order, "--order"),
                                   taxonomies=set(hierarchies))
    groups = table_groups(columns.frame, qi)
    check = audit(columns.frame, groups, k=args.k, epsilon=args.epsilon, delta=args.delta,
                  metric=args.metric, sensitive=sensitive, hierarchies=hierarchies,
                  weights=common.floats(args.weights, "--weights") if args.weights else None)
    return Audited(check, columns, groups, qi, sensitive, source)


def run(args: argparse.Namespace) -> common.Outcome:
    report_target = (None if args.report is None
                     else common.output_path(args.report, [args.table], args.force))
    result = audited(args)
    report, columns, qi = result.check, result.columns, result.qi
    if report_target is not None:
        common.write_bytes(report_target, common.report_json(
            "audit", report, input=str(args.table),
            positions=common.position_unit(result.source),
            rows_with_empty_cells=common.positions(result.source, columns.dropped)))
    lines = [str(report)]
    published = columns.frame[qi].assign(_group=result.groups).drop_duplicates(
        "_group").set_index("_group")
    lines.append(f"  published QI values of the worst groups ({' | '.join(qi)}):")
    for group in report.worst_groups().tolist():
        values = " | ".join(_text(v) for v in published.loc[group, qi])
        lines.append(f"    group {group}: {values}")
    if columns.dropped.size:
        lines.append(f"left out {columns.dropped.size:,} row(s) with an empty or missing QI or "
                     "sensitive value (--missing drop)")
    return common.Outcome(common.EXIT_OK if report.satisfied else common.EXIT_NOT_SATISFIED,
                          tuple(lines))


def _text(value: Any) -> str:
    return "(missing)" if value is None or value is pd.NA else str(value)
