"""The disclosure-risk report: one self-contained HTML page a data steward can sign off.

:func:`anonymization_html` (an :class:`~proxanon.Anonymization`) and :func:`audit_html` (an
:class:`~proxanon.AuditReport` of any published table) build the page; :func:`write_html`
writes it atomically. The page shows what was asked and what holds, plots (class sizes,
per-class risk against 1 - delta, per-QI generalization, numeric sensitive values with the
epsilon window to scale), the worst classes with their published values, utility figures,
timings and the classic re-identification measures.

Every number comes from :mod:`proxanon.audit`, :mod:`proxanon.evaluate` or, for the GCP,
loss and NCP of an anonymization whose original table is not given, its
:class:`~proxanon.Report`; the report only arranges them. They are embedded once as a JSON
block (``<script type="application/json" id="proxanon-numbers">``, read back by
:func:`read_numbers`) and every figure shown carries ``data-key`` (its path in that block, a
JSON list) and ``data-value`` (the exact number).

The page references nothing outside itself: plots are PNG images inlined as base64 data, the
style sheet is inline, there is no script to run. Plots are drawn from binned data (at most
``BINS`` bins, ``RISK_POINTS`` points) and the worst-classes table is capped at
``max_classes`` rows, so the page of a million-row table stays small. Cost: O(n) numpy/pandas
passes over the table plus O(classes · BINS) for the uniform-spread histograms.

matplotlib is imported lazily, only for the plots: it is the optional extra ``report``.

The page is built in :mod:`proxanon._report`: ``formatting`` (figures as text, bound to the
numbers block), ``plots`` (the figures), ``numbers`` (the page's content and its numbers
block) and ``sections`` (the page itself); this module holds the entry points, checks their
arguments and registers the writers behind ``to_html``.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from proxanon import _validate, evaluate
from proxanon._display import register_html_writer
from proxanon._report.formatting import VALUES_SHOWN as VALUES_SHOWN
from proxanon._report.formatting import lookup
from proxanon._report.numbers import _NUMBERS_ID, _Content
from proxanon._report.numbers import MAX_CLASSES as MAX_CLASSES
from proxanon._report.numbers import measured_columns as measured_columns
from proxanon._report.plots import BINS as BINS
from proxanon._report.plots import RISK_POINTS as RISK_POINTS
from proxanon._report.plots import TOP_CATEGORIES as TOP_CATEGORIES
from proxanon._report.sections import _render
from proxanon._results.anonymization import GROUP_COLUMN, Anonymization
from proxanon._results.audit import AuditReport
from proxanon.frontier import frontier_cells
from proxanon.tableio import atomic_write
from proxanon.tables import column_list, table_groups

__all__ = ["anonymization_html", "audit_html", "lookup", "read_numbers", "write_html"]


def anonymization_html(anonymization: Anonymization, original: pd.DataFrame | None = None, *,
                       queries: Mapping[str, Any] | None = None,
                       max_classes: int = MAX_CLASSES, title: str | None = None,
                       frontier: pd.DataFrame | None = None,
                       include_original: bool = False) -> str:
    """The report of an :func:`~proxanon.anonymize` result, as HTML text.

    ``original``: the table that was anonymized (rows in the same order); with it GCP, loss
    and NCP come from :mod:`proxanon.evaluate`. The page is meant to be shared with the
    table, so it shows no original value unless ``include_original`` (an internal version,
    marked as such at its top): then each QI column is also shown before generalization
    (its most frequent exact values, its histogram). ``queries``: keyword arguments of
    :func:`proxanon.evaluate.count_query_error` (``qd``, ``s``, ``n_queries``, ``seed``); the
    count-query error is computed only when given, and needs ``original``. ``title``: what
    the page is about (e.g. the file name). ``frontier``: the settings
    :func:`proxanon.explore` tried on the same table (its frame, or its CSV file read back);
    the page then shows where this release's (k, ε, δ) sits among them.
    """
    if not isinstance(anonymization, Anonymization):
        raise TypeError("anonymization must be the Anonymization returned by "
                        f"proxanon.anonymize, got {type(anonymization).__name__}")
    check = anonymization.audit
    if check is None:
        raise ValueError("this Anonymization carries no audit (it was not made by "
                         "proxanon.anonymize); audit its table and use audit_html instead")
    if queries is not None and original is None:
        raise ValueError("queries (the count-query workload) needs original, the table that "
                         "was anonymized")
    if not isinstance(include_original, bool):
        raise TypeError(f"include_original must be True or False, got {include_original!r}")
    if include_original and original is None:
        raise ValueError("include_original shows the original table's values: pass original, "
                         "the table that was anonymized")
    max_classes = _validate.integer(max_classes, "max_classes", minimum=1)
    report = anonymization.report
    published = anonymization.table
    notes = []
    if anonymization.sensitive_table is not None:
        published = _anatomy_view(published, anonymization.sensitive_table, report.sensitive)
        notes.append("An anatomy release: the QIs are published exact beside a group id, and "
                     "the group's sensitive values in a table of their own. Below, each row of "
                     "a group is shown beside one of the group's sensitive values in that "
                     "table's order (by value), not as in the data; GCP, loss and NCP measure "
                     "how widely each group spans the QIs.")
    released = np.asarray(anonymization.groups) >= 0
    utility: dict[str, Any] = {
        "loss": report.loss, "gcp": report.gcp, "ncp": dict(report.ncp),
        "discernibility": report.discernibility,
    }
    seconds = dict(report.seconds)
    aligned = None
    if original is not None:
        tic = time.perf_counter()
        utility.update(loss=evaluate.loss(original, anonymization),
                       gcp=evaluate.gcp(original, anonymization),
                       ncp=evaluate.ncp(original, anonymization),
                       discernibility=evaluate.discernibility(anonymization))
        if queries is not None:
            workload = evaluate.count_query_error(original, anonymization, **dict(queries))
            utility["count_query_error"] = workload.mean_relative_error
            utility["count_queries"] = {"qd": workload.qd, "s": workload.s,
                                        "n_queries": workload.n_queries, "seed": workload.seed}
        seconds["evaluate"] = time.perf_counter() - tic
        aligned = original.iloc[np.flatnonzero(released)]
    if math.isnan(report.epsilon):
        notes.append("This anonymization asked for no (ε, δ) (Mondrian with k-anonymity and "
                     "ℓ-diversity only): it was audited with ε = 0 and δ = 0, under which no "
                     "class can violate; read the k-anonymity and ℓ-diversity levels instead.")
    content = _Content(
        title=title or f"proxanon anonymization ({report.method}"
        + (", anatomy)" if report.publish == "anatomy" else ")"), check=check, table=published,
        groups=published[GROUP_COLUMN].to_numpy(dtype=np.int64),
        quasi_identifiers=list(report.quasi_identifiers), sensitive=list(report.sensitive),
        original=aligned if include_original else None,
        scale_source=aligned if aligned is not None else published,
        utility=utility, seconds=seconds, notes=notes, max_classes=max_classes,
        frontier=frontier, internal=include_original,
        recoding=None if not report.levels else {
            "levels": dict(report.levels), "lattice_nodes": report.lattice_nodes,
            "nodes_checked": report.nodes_checked,
            "suppressed_rows": len(report.suppressed_rows)})
    if frontier is not None:
        frontier_cells(frontier)  # checked before any plot is drawn
    return _render(content)


def _anatomy_view(qi_table: pd.DataFrame, sensitive_table: pd.DataFrame,
                  sensitive: Sequence[str]) -> pd.DataFrame:
    """The QI table with, beside each row, one of its group's sensitive values: the rows of a
    group in their order meet the group's values in the sensitive table's order (which is by
    value), so the view links no row to its own value."""
    order = np.argsort(qi_table[GROUP_COLUMN].to_numpy(), kind="stable")
    at = np.empty(order.size, dtype=np.int64)
    at[order] = np.arange(order.size)
    values = sensitive_table.iloc[at]
    return qi_table.assign(**{c: values[c].to_numpy() for c in sensitive})


def audit_html(check: AuditReport, table: pd.DataFrame | None = None, *,
               quasi_identifiers: Any = None, sensitive: Any = None, groups: Any = None,
               seconds: Mapping[str, float] | None = None,
               max_classes: int = MAX_CLASSES, title: str | None = None) -> str:
    """The report of an :func:`~proxanon.audit`, as HTML text.

    ``table``: the audited DataFrame (any published table); with it the page lists the
    published QI and sensitive values of the worst classes and plots the columns.
    ``quasi_identifiers`` and ``sensitive`` name its columns as in the audit; the classes are
    ``groups`` (a column name or one id per row) when given, else the rows sharing their QI
    values, exactly as :func:`~proxanon.audit` forms them. ``seconds``: timings to show;
    ``title``: what the page is about (e.g. the file name).
    """
    title = title or "proxanon audit"
    max_classes = _validate.integer(max_classes, "max_classes", minimum=1)
    if not isinstance(check, AuditReport):
        raise TypeError(f"check must be an AuditReport, got {type(check).__name__}")
    if table is None:
        content = _Content(title=title, check=check, table=None, groups=None,
                           quasi_identifiers=[], sensitive=[], seconds=dict(seconds or {}),
                           max_classes=max_classes)
        content.notes.append("No table was given: pass the audited table to see the published "
                             "values of the worst classes and the column plots.")
        return _render(content)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    if sensitive is None:
        raise TypeError("sensitive is required with a table: the names of its sensitive columns")
    sens_cols = column_list(table, sensitive, "sensitive")
    qi_cols = ([] if quasi_identifiers is None
               else column_list(table, quasi_identifiers, "quasi_identifiers"))
    rows = int(check.neighbour_counts.shape[0])
    if len(table) != rows:
        raise ValueError(f"table has {len(table):,} rows but the audit covered {rows:,}: pass "
                         "the table that was audited")
    if groups is None:
        if not qi_cols:
            raise TypeError("give quasi_identifiers (the published QI columns that define the "
                            "classes) or groups (a column name or one id per row)")
        labels = table_groups(table, qi_cols)
    elif isinstance(groups, str):
        labels = table[column_list(table, [groups], "groups")[0]].to_numpy(dtype=np.int64)
    else:
        labels = np.asarray(groups, dtype=np.int64)
    kept = labels >= 0
    if not np.array_equal(np.unique(labels[kept]), check.group_ids):
        raise ValueError("the classes of table (its groups or quasi-identifiers) are not the "
                         "ones audited: pass the same table and columns as to audit")
    content = _Content(
        title=title, check=check, table=table.iloc[np.flatnonzero(kept)],
        groups=labels[kept], quasi_identifiers=qi_cols, sensitive=sens_cols,
        scale_source=table.iloc[np.flatnonzero(kept)], seconds=dict(seconds or {}),
        max_classes=max_classes)
    return _render(content)


def write_html(text: str, path: Any) -> Path:
    """Writes ``text`` to ``path`` atomically (a temporary file beside it, then a rename)."""
    target = Path(os.fspath(path))
    if target.is_dir():
        raise ValueError(f"{target} is a folder; give the path of an .html file")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"the folder of {target} does not exist")
    data = text.encode("utf-8")

    def write(out: IO[bytes]) -> None:
        out.write(data)

    atomic_write(target, write)
    return target


def read_numbers(page: str | os.PathLike[str]) -> dict[str, Any]:
    """The numbers embedded in a report (a path or the HTML text), as a dict."""
    text = str(page)
    if not text.lstrip().startswith("<"):
        text = Path(text).read_text(encoding="utf-8")
    match = re.search(rf'<script type="application/json" id="{_NUMBERS_ID}">(.*?)</script>',
                      text, re.DOTALL)
    if match is None:
        raise ValueError("no proxanon numbers block in this page: is it a proxanon report?")
    numbers: dict[str, Any] = json.loads(match.group(1))
    return numbers


def _write_anonymization(anonymization: Anonymization, path: Any,
                         original: pd.DataFrame | None = None, *,
                         queries: Mapping[str, Any] | None = None,
                         frontier: pd.DataFrame | None = None,
                         include_original: bool = False) -> None:
    """``Anonymization.to_html``: :func:`anonymization_html` written to ``path``."""
    write_html(anonymization_html(anonymization, original, queries=queries,
                                  frontier=frontier, include_original=include_original), path)


def _write_audit(check: AuditReport, path: Any, table: pd.DataFrame | None = None, *,
                 quasi_identifiers: Any = None, sensitive: Any = None,
                 groups: Any = None) -> None:
    """``AuditReport.to_html``: :func:`audit_html` written to ``path``."""
    write_html(audit_html(check, table, quasi_identifiers=quasi_identifiers,
                          sensitive=sensitive, groups=groups), path)


register_html_writer("anonymization", _write_anonymization)
register_html_writer("audit", _write_audit)
