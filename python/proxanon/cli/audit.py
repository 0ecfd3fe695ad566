"""``proxanon audit``: checks a published table against (epsilon, delta)^k-dissimilarity."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._results.audit import AuditReport
from proxanon._results.privacy import PrivacyMeasures
from proxanon.cli._job import provenance
from proxanon.cli._options import (
    add_criteria_options,
    add_input_options,
    add_privacy_options,
    criteria_from,
    floats,
    names,
    pairs,
)
from proxanon.cli._reading import (
    Columns,
    position_unit,
    positions,
    read_input,
    read_line,
    text_option,
    typed_columns,
)
from proxanon.cli._status import EXIT_NOT_SATISFIED, EXIT_OK, GROUP_COLUMN, Outcome, UsageError
from proxanon.cli._writing import output_path, report_json, write_bytes
from proxanon.tableio import CsvTable, ParquetTable


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "audit", help="check a published CSV or Parquet table",
        description="Groups the rows by their published QI values and checks every group. "
                    f"Exit status {EXIT_OK} when the table satisfies the principle, "
                    f"{EXIT_NOT_SATISFIED} when it does not.")
    parser.add_argument("table", help="CSV file with a header row, or a .parquet file")
    add_privacy_options(parser, judged=True)
    add_criteria_options(parser)
    add_input_options(parser)
    parser.add_argument("--sensitive-table", metavar="PATH",
                        help="audit an anatomy release: TABLE is its QI table and PATH its "
                             "sensitive table, joined by their group column")
    parser.add_argument("--force", action="store_true", help="overwrite the --report file")
    parser.add_argument("--measures", action="store_true",
                        help="also print the privacy measures of the published classes "
                             "(k, l-diversity kinds, t-closeness, delta-disclosure, "
                             "beta-likeness, re-identification risk; as pycanon measures "
                             "them, over the sensitive columns and --criteria-column) and add "
                             "them to --report")
    parser.add_argument("--risk-threshold", type=float, default=None, metavar="R",
                        help="with --measures: count the records whose re-identification "
                             "risk 1/|class| exceeds R (default 0.2)")
    parser.add_argument("--epsilon-m", type=float, default=None, metavar="E",
                        help="with --measures: m of (epsilon, m)-anonymity for numeric "
                             "sensitive columns, epsilon E in the columns' own units")
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class Audited:
    """An audit of a table file, with what the reports show next to it."""

    check: AuditReport
    columns: Columns
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

    if getattr(args, "sensitive_table", None) is not None:  # `report` takes no pair
        return _audited_pair(args)
    source = read_input(args.table, args)
    qi = names(args.qi, "--qi")
    sensitive = names(args.sensitive, "--sensitive")
    criteria = criteria_from(args)
    # Only the sensitive columns' taxonomies matter: the groups are the published QI values.
    hierarchies = load_hierarchies(pairs(args.hierarchy, "--hierarchy"), sensitive,
                                   source.names, sep=args.hierarchy_sep)
    columns = typed_columns(source, qi, sensitive, missing=args.missing,
                                   orders=pairs(args.order, "--order"),
                                   taxonomies=set(hierarchies),
                                   text=text_option(args, source.names),
                                   extra=[args.criteria_column] if args.criteria_column else [])
    groups = table_groups(columns.frame, qi)
    check = audit(columns.frame, groups, k=args.k, epsilon=args.epsilon, delta=args.delta,
                  metric=args.metric, sensitive=sensitive, hierarchies=hierarchies,
                  weights=floats(args.weights, "--weights") if args.weights else None,
                  criteria=criteria, quasi_identifiers=qi)
    return Audited(check, columns, groups, qi, sensitive, source)


def _audited_pair(args: argparse.Namespace) -> Audited:
    """An anatomy release read and audited: the groups are the QI table's group column, the
    sensitive values the sensitive table's (``proxanon.audit``'s pair form)."""
    from proxanon.audit import audit
    from proxanon.generalize import load_hierarchies

    qi_source = read_input(args.table, args)
    source = read_input(args.sensitive_table, args)
    qi = names(args.qi, "--qi")
    sensitive = names(args.sensitive, "--sensitive")
    for where, needed in ((qi_source, [*qi, GROUP_COLUMN]),
                          (source, [GROUP_COLUMN])):
        absent = [c for c in needed if c not in where.names]
        if absent:
            raise UsageError(f"column(s) {absent} not in {where.path}; its columns are "
                                    f"{where.names}")
    hierarchies = load_hierarchies(pairs(args.hierarchy, "--hierarchy"), sensitive,
                                   source.names, sep=args.hierarchy_sep)
    qi_columns = typed_columns(qi_source, [GROUP_COLUMN], [], missing="error",
                                      orders={}, taxonomies=set())
    columns = typed_columns(source, [GROUP_COLUMN], sensitive,
                                   missing=args.missing,
                                   orders=pairs(args.order, "--order"),
                                   taxonomies=set(hierarchies))
    check = audit(qi_columns.frame, GROUP_COLUMN, sensitive_table=columns.frame,
                  k=args.k, epsilon=args.epsilon, delta=args.delta, metric=args.metric,
                  sensitive=sensitive, hierarchies=hierarchies,
                  weights=floats(args.weights, "--weights") if args.weights else None)
    # The ids the audit gave the groups (in order of first appearance in the sensitive table).
    groups = pd.factorize(columns.frame[GROUP_COLUMN])[0].astype(np.int64)
    return Audited(check, columns, groups, [GROUP_COLUMN], sensitive, source)


def run(args: argparse.Namespace) -> Outcome:
    report_target = (None if args.report is None
                     else output_path(args.report, [args.table], args.force))
    result = audited(args)
    report, columns, qi = result.check, result.columns, result.qi
    measures = _measures(args, result) if args.measures else None
    if report_target is not None:
        extra = {} if measures is None else {"measures": measures}
        write_bytes(report_target, report_json(
            "audit", report, input=str(args.table),
            positions=position_unit(result.source),
            rows_with_empty_cells=positions(result.source, columns.dropped),
            **provenance(args, args.table), **extra))
    lines = [str(report), *columns.notes]
    if args.sensitive_table is None:  # an anatomy release publishes no QI values per group
        published = columns.frame[qi].assign(_group=result.groups).drop_duplicates(
            "_group").set_index("_group")
        lines.append(f"  published QI values of the worst groups ({' | '.join(qi)}):")
        for group in report.worst_groups().tolist():
            values = " | ".join(_text(v) for v in published.loc[group, qi])
            lines.append(f"    group {group}: {values}")
    if columns.dropped.size:
        lines.append(f"left out {columns.dropped.size:,} row(s) with an empty or missing QI or "
                     "sensitive value (--missing drop)")
    if measures is not None:
        lines.extend(measure_lines(measures))
    return Outcome(EXIT_OK if report.satisfied else EXIT_NOT_SATISFIED,
                          tuple(lines), details=(read_line(result.source, args.table),))


def _measures(args: argparse.Namespace, result: Audited) -> PrivacyMeasures:
    """The privacy measures of the audited table's classes (its published QI values)."""
    from proxanon import privacy_measures

    options: dict[str, Any] = {}
    if args.risk_threshold is not None:
        options["risk_threshold"] = args.risk_threshold
    if args.epsilon_m is not None:
        options["epsilon_m"] = args.epsilon_m
    frame = result.columns.frame
    extra = [args.criteria_column] if args.criteria_column not in (None, *result.sensitive) else []
    return privacy_measures(frame.assign(**{q: frame[q].astype(str) for q in result.qi}),
                            quasi_identifiers=result.qi, sensitive=[*result.sensitive, *extra],
                            **options)


def measure_lines(m: PrivacyMeasures) -> list[str]:
    """The measures as the summary prints them, one model a line."""
    c, l_of_c = m.recursive_c_l_diversity
    alpha, k_of_alpha = m.alpha_k_anonymity
    lines = [
        f"privacy measures over {m.n_classes:,} class(es) of {m.n_records:,} rows "
        f"(sensitive: {', '.join(m.sensitive)}):",
        f"  k-anonymity          : {m.k_anonymity}",
        f"  l-diversity          : distinct {m.l_diversity}, entropy {m.entropy_l_diversity}, "
        f"recursive (c, l) = ({c:g}, {l_of_c})",
        f"  (alpha, k)-anonymity : alpha {alpha:.4f}, k {k_of_alpha}",
        f"  t-closeness          : {m.t_closeness:.4f}",
        f"  delta-disclosure     : {m.delta_disclosure:.4f}",
        f"  beta-likeness        : basic {m.basic_beta_likeness:.4f}, enhanced "
        f"{m.enhanced_beta_likeness:.4f}",
        f"  prosecutor risk      : max {m.prosecutor_risk_max:.4f}, mean "
        f"{m.prosecutor_risk_mean:.4f}; marketer risk {m.marketer_risk:.4f}",
        f"  records at risk      : {m.records_at_risk:,} ({m.records_at_risk_share:.2%}) above "
        f"{m.risk_threshold:g}; sample uniques {m.sample_uniques:,} "
        f"({m.sample_uniques_share:.2%})",
    ]
    if m.epsilon_m_anonymity is not None:
        lines.append(f"  (epsilon, m)         : m {m.epsilon_m_anonymity} at epsilon "
                     f"{m.epsilon_m:g}")
    return lines


def _text(value: Any) -> str:
    return "(missing)" if value is None or value is pd.NA else str(value)
