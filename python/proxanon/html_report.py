"""The disclosure-risk report: one self-contained HTML page a data steward can sign off.

:func:`anonymization_html` (an :class:`~proxanon.Anonymization`) and :func:`audit_html` (an
:class:`~proxanon.AuditReport` of any published table) build the page; :func:`write_html`
writes it atomically. The page shows what was asked and what holds, plots (class sizes,
per-class risk against 1 - delta, per-QI generalization, numeric sensitive values with the
epsilon window to scale), the worst classes with their published values, utility figures,
timings and the classic re-identification measures.

Every number comes from :mod:`proxanon.audit`, :mod:`proxanon.evaluate` or, for the GCP,
loss and NCP of an anonymization whose original table is not given, its
:class:`~proxanon.Report`; this module only arranges them. They are embedded once as a JSON
block (``<script type="application/json" id="proxanon-numbers">``, read back by
:func:`read_numbers`) and every figure shown carries ``data-key`` (its path in that block, a
JSON list) and ``data-value`` (the exact number).

The page references nothing outside itself: plots are PNG images inlined as base64 data, the
style sheet is inline, there is no script to run. Plots are drawn from binned data (at most
``BINS`` bins, ``RISK_POINTS`` points) and the worst-classes table is capped at
``max_classes`` rows, so the page of a million-row table stays small. Cost: O(n) numpy/pandas
passes over the table plus O(classes · BINS) for the uniform-spread histograms.

matplotlib is imported lazily, only here: it is the optional extra ``report``.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate, evaluate
from proxanon._display import register_html_writer
from proxanon._groups import group_runs
from proxanon._results.anonymization import GROUP_COLUMN, Anonymization
from proxanon._results.audit import AuditReport
from proxanon._results.privacy import PrivacyMeasures, published_measures
from proxanon.distances import box_radius
from proxanon.frontier import (
    figure_class,
    frontier_cells,
    frontier_figure,
    png_bytes,
    release_cell,
)
from proxanon.tableio import atomic_write
from proxanon.tables import column_list, table_groups

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["anonymization_html", "audit_html", "lookup", "read_numbers", "write_html"]

#: Bins of every histogram.
BINS = 40
#: Points of the sorted per-class risk curve.
RISK_POINTS = 1000
#: Categories shown per categorical bar chart.
TOP_CATEGORIES = 12
#: Distinct sensitive values listed per class in the worst-classes table.
VALUES_SHOWN = 4
#: Rows of the worst-classes table, unless asked otherwise.
MAX_CLASSES = 10

_NUMBERS_ID = "proxanon-numbers"
_BEFORE, _AFTER, _BAD, _LINE = "#7f9cc2", "#e07b39", "#c0392b", "#333333"


# ---------------------------------------------------------------------- the page's content


@dataclass
class _Content:
    """Everything the page shows; rows of ``table`` are the audited rows, in order."""

    title: str
    check: AuditReport
    table: pd.DataFrame | None
    groups: NDArray[np.int64] | None
    quasi_identifiers: list[str]
    sensitive: list[str]
    original: pd.DataFrame | None = None
    scale_source: pd.DataFrame | None = None
    utility: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    max_classes: int = MAX_CLASSES
    frontier: pd.DataFrame | None = None  # proxanon.explore's settings, this release among them
    internal: bool = False  # the page shows original values (include_original)
    #: Full-domain recoding's node: {"levels": {QI: level}, "lattice_nodes", "nodes_checked",
    #: "suppressed_rows"}; None for local recoding.
    recoding: dict[str, Any] | None = None


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


# ---------------------------------------------------------------------- numbers


def _numbers(c: _Content) -> dict[str, Any]:
    """Every figure of the page, by section (the JSON block)."""
    check = c.check
    sizes = check.group_sizes
    reident: dict[str, Any] = {
        "k_anonymity": evaluate.k_anonymity_level(sizes),
        "prosecutor_risk": evaluate.prosecutor_risk(sizes),
        "small_class_share_2k": evaluate.small_class_share(sizes, 2 * check.k),
        "l_diversity": None,
    }
    if c.table is not None and c.groups is not None:
        reident["l_diversity"] = evaluate.distinct_l_diversity(c.table[c.sensitive], c.groups)
    utility = {"discernibility": evaluate.discernibility_of_sizes(sizes),
               "average_class_size": float(sizes.mean()), **c.utility}
    return {
        "privacy_measures": _measures(c),
        "criteria": [v.to_dict() for v in check.criteria],
        "parameters": {"k": check.k, "epsilon": check.epsilon, "delta": check.delta,
                       "metric": check.metric, "quasi_identifiers": c.quasi_identifiers,
                       "sensitive": c.sensitive},
        "audit": {**check.summary(), "n_suppressed_rows": int(check.suppressed_rows.shape[0])},
        "reidentification": reident,
        "scaling": _scaling(c),
        "utility": utility,
        "seconds": dict(c.seconds),
        "worst_classes": [
            {"group": int(check.group_ids[i]), "size": int(sizes[i]),
             "risk": float(check.group_risk[i])} for i in _worst(check, c.max_classes)],
        **({} if c.frontier is None else {"frontier": _frontier_numbers(c)}),
        **({} if c.recoding is None else {"recoding": c.recoding}),
    }


def _frontier_numbers(c: _Content) -> dict[str, Any]:
    """The settings explored, and the index of this release's among them (None if absent)."""
    cells = frontier_cells(c.frontier)
    check = c.check
    return {"settings": [{key: value for key, value in cell.items() if key != "proof"}
                         for cell in cells],
            "release": release_cell(cells, check.k, check.epsilon, check.delta)}


def measured_columns(check: AuditReport, sensitive: Sequence[str]) -> list[str]:
    """The columns whose privacy measures a report shows: the sensitive ones and those the
    criteria read."""
    return list(dict.fromkeys([*sensitive, *(v.column for v in check.criteria)]))


def _measures(c: _Content) -> dict[str, Any] | None:
    """The privacy measures of the page's table (its classes), as plain values."""
    if c.table is None or c.groups is None:
        return None
    measured = published_measures(c.table, c.quasi_identifiers,
                                  measured_columns(c.check, c.sensitive), c.groups)
    if isinstance(measured, str):
        return {"unavailable": measured}
    values = {name: getattr(measured, name) for name in PrivacyMeasures.__dataclass_fields__}
    values["risk_histogram"] = [vars(b) for b in measured.risk_histogram]
    for name in ("quasi_identifiers", "sensitive", "recursive_c_l_diversity",
                 "alpha_k_anonymity"):
        values[name] = list(values[name])
    return {name: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for name, v in values.items()}


def _measures_section(numbers: Mapping[str, Any]) -> list[str]:
    """The privacy measures (as pycanon measures them), the criteria's verdicts and the
    distribution of re-identification risk."""
    parts: list[str] = []
    if numbers["criteria"]:
        parts.append("<h2>Privacy criteria</h2><table>")
        parts.append(_rows([
            (f"{v['criterion']} of {v['column']}",
             _cell(numbers, ("criteria", i, "satisfied"),
                   "holds" if v["satisfied"] else f"FAILS in {v['failing_classes']:,} "
                   "class(es)") + f" (measure {_number(v['value'])})")
            for i, v in enumerate(numbers["criteria"])]))
        parts.append("</table>")
    measures = numbers["privacy_measures"]
    if measures is None:
        return parts
    if "unavailable" in measures:
        parts.append("<h2>Privacy measures</h2><p class=\"note\">Not measured: "
                     f"{html.escape(measures['unavailable'])}</p>")
        return parts
    key = "privacy_measures"
    parts += [
        "<h2>Privacy measures</h2><p class=\"note\">As pycanon 1.3.6 measures them, over "
        f"{html.escape(', '.join(measures['sensitive']))} (the worst column).</p>",
        "<table><tr><th>measure</th><th>value</th><th>what it says</th></tr>",
        _explained([
            ("k-anonymity", (key, "k_anonymity"), "the smallest class"),
            ("distinct ℓ-diversity", (key, "l_diversity"),
             "the fewest distinct values of one sensitive column in a class"),
            ("entropy ℓ-diversity", (key, "entropy_l_diversity"),
             "e to the smallest entropy of a column's values in a class (1: a class holds "
             "one value)"),
            ("recursive (c, ℓ)-diversity: c", (key, "recursive_c_l_diversity", 0),
             "the smallest c for which the most frequent value is below c times the rest"),
            ("(α, k)-anonymity: α", (key, "alpha_k_anonymity", 0),
             "the largest share of one value in a class"),
            ("t-closeness", (key, "t_closeness"),
             "the largest distance between a class's distribution and the table's (0 to 1)"),
            ("δ-disclosure", (key, "delta_disclosure"),
             "the largest |log| ratio of a value's share in a class to its share overall"),
            ("basic β-likeness", (key, "basic_beta_likeness"),
             "the largest relative gain of a value's share in a class over its share "
             "overall (large where a rare value gathers in a class)"),
            ("enhanced β-likeness", (key, "enhanced_beta_likeness"),
             "β-likeness with the gain of rare values capped by their log"),
            ("prosecutor risk, largest", (key, "prosecutor_risk_max"),
             "1 / the smallest class: the best chance of picking a known person's row"),
            ("prosecutor risk, mean", (key, "prosecutor_risk_mean"), "its mean over rows"),
            ("marketer risk", (key, "marketer_risk"),
             "classes / rows: the share of people re-identified when matching everyone"),
            ("sample uniques", (key, "sample_uniques"), "rows alone in their class"),
            (f"records at risk (above {_number(measures['risk_threshold'])})",
             (key, "records_at_risk"), "rows whose prosecutor risk is above the threshold"),
        ], numbers), "</table>",
        "<h2>Distribution of re-identification risk</h2><p class=\"note\">Records by "
        "prosecutor risk 1 / |class|.</p><table><tr><th>risk in</th><th>records</th>"
        "<th>share</th></tr>",
        "".join(f"<tr><td>({_number(b['low'])}, {_number(b['high'])}]</td>"
                f"<td class=\"n\">{_cell(numbers, (key, 'risk_histogram', i, 'records'))}</td>"
                f"<td class=\"n\">{_cell(numbers, (key, 'risk_histogram', i, 'share'))}</td></tr>"
                for i, b in enumerate(measures["risk_histogram"])),
        "</table>",
    ]
    return parts


def _folded(section: list[str]) -> list[str]:
    """Each part of ``section`` that starts with an ``<h2>`` title, from there to the next,
    as a collapsed ``<details>`` block under that title (long sections fold away)."""
    out: list[str] = []
    for part in section:
        if part.startswith("<h2>"):
            if out:
                out.append("</details>")
            title, rest = part[len("<h2>"):].split("</h2>", 1)
            out += [f"<details><summary>{title}</summary>", rest]
        else:
            out.append(part)
    return [*out, "</details>"] if out else out


def _explained(rows: list[tuple[str, Sequence[str | int], str]],
               numbers: Mapping[str, Any]) -> str:
    """Rows of (label, key of the figure, one line on what it says)."""
    return "".join(f"<tr><th>{html.escape(label)}</th><td>{_cell(numbers, key)}</td>"
                   f'<td class="note">{html.escape(meaning)}</td></tr>'
                   for label, key, meaning in rows)


def _worst(check: AuditReport, count: int) -> NDArray[np.int64]:
    """Indices of the worst classes: violating first, then small ones, then by risk (highest
    first), then by size (smallest first)."""
    violates = np.isin(check.group_ids, check.violating_groups)
    small = check.group_sizes < check.k
    order = np.lexsort((check.group_ids, check.group_sizes, -check.group_risk, ~small,
                        ~violates))
    worst: NDArray[np.int64] = np.asarray(order[:count], dtype=np.int64)
    return worst


def _scaling(c: _Content) -> list[dict[str, Any]]:
    """Per sensitive column: how it is scaled to [0, 1], its weight, and epsilon in its units.

    epsilon in a column's units is the largest difference in that column alone (the others
    equal) that still makes two rows neighbours: ``epsilon · range / w`` for L1, L∞ and
    min-component, ``epsilon · range / sqrt(w)`` for L2 (the weighted distances of
    docs/design/definitions.md).
    """
    if c.scale_source is None:
        return []
    weights = c.check.weights
    rows = []
    for j, name in enumerate(c.sensitive):
        series = c.scale_source[name]
        entry: dict[str, Any] = {"column": name, "weight": None, "epsilon_units": None}
        if isinstance(series.dtype, pd.CategoricalDtype) and series.dtype.ordered:
            entry.update(kind="ordered categorical", low=str(series.dtype.categories[0]),
                         high=str(series.dtype.categories[-1]), unit="rank steps",
                         span=float(len(series.dtype.categories) - 1))
        elif name in c.check.taxonomies:
            entry.update(kind="taxonomy", low=None, high=None, unit="", span=None)
        elif _is_numeric(series):
            # The range the check scaled by (given, fixed by the metric, or the column's own
            # over the rows it audited); a report of arrays carries none.
            low, high = c.check.scales.get(name) or (float(series.min()), float(series.max()))
            entry.update(kind="numeric", low=low, high=high, unit="", span=high - low)
        elif (pd.api.types.is_datetime64_any_dtype(series.dtype)
              or pd.api.types.is_timedelta64_dtype(series.dtype)):
            # Dates and durations: min-max over their time span, read in days.
            low, high = series.min(), series.max()
            entry.update(kind="date" if pd.api.types.is_datetime64_any_dtype(series.dtype)
                         else "duration", low=str(low), high=str(high), unit="days",
                         span=pd.Timedelta(high - low) / pd.Timedelta(days=1))
        else:
            entry.update(kind="taxonomy", low=None, high=None, unit="", span=None)
        if weights is not None and entry["span"] is not None and j < weights.shape[0]:
            w = float(weights[j])
            entry["weight"] = w
            if w > 0:
                entry["epsilon_units"] = box_radius(c.check.metric, w,
                                                    c.check.epsilon * entry["span"])
        rows.append(entry)
    return rows


# ---------------------------------------------------------------------- plots


def _figure_class() -> type[Figure]:
    return figure_class("the HTML report (its plots)")


def _png(figure: Figure) -> str:
    return base64.b64encode(png_bytes(figure)).decode("ascii")


def _axes(width: float = 5.0, height: float = 3.0, columns: int = 1) -> tuple[Figure, list[Axes]]:
    figure = _figure_class()(figsize=(width, height), layout="constrained")  # titles fit
    axes = [figure.add_subplot(1, columns, i + 1) for i in range(columns)]
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=8)
    return figure, axes


def _plot_sizes(check: AuditReport) -> str:
    sizes = check.group_sizes
    figure, (ax,) = _axes()
    low, high = int(sizes.min()), int(sizes.max())
    if high - low < BINS:
        values, counts = np.unique(sizes, return_counts=True)
        ax.bar(values, counts, width=0.8, color=_BEFORE)
    else:
        counts, edges = np.histogram(sizes, bins=BINS)
        ax.stairs(counts, edges, fill=True, color=_BEFORE)
    if counts.max() >= 100 * max(1, counts[counts > 0].min()):
        ax.set_yscale("log")  # a few huge classes next to many small ones
    ax.axvline(check.k, color=_BAD, linestyle="--", label=f"k = {check.k}")
    ax.axvline(2 * check.k, color=_LINE, linestyle=":", label=f"2k = {2 * check.k}")
    ax.set_xlabel("class size (rows)")
    ax.set_ylabel("classes")
    ax.set_title("Published class sizes", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    return _png(figure)


def _plot_risk(check: AuditReport) -> str:
    risk = np.sort(check.group_risk)[::-1]
    positions = np.unique(np.linspace(0, risk.shape[0] - 1, RISK_POINTS).astype(np.int64))
    share = positions / max(1, risk.shape[0] - 1)
    figure, (ax,) = _axes()
    allowed = 1.0 - check.delta
    ax.axhspan(allowed, 1.0, color=_BAD, alpha=0.08)
    ax.plot(share, risk[positions], color=_BEFORE, drawstyle="steps-post", linewidth=1.8,
            label="class risk, sorted")
    ax.axhline(allowed, color=_BAD, linestyle="--", label=f"1 - delta = {allowed:.3g}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("share of classes (worst first)")
    ax.set_ylabel("risk: largest neighbour share")
    ax.set_title(f"Proximity risk of {check.n_groups:,} classes", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    return _png(figure)


def _plot_ncp(ncp: Mapping[str, float]) -> str:
    names = list(ncp)
    figure, (ax,) = _axes(height=0.5 + 0.35 * len(names))
    ax.barh(names[::-1], [ncp[n] for n in names[::-1]], color=_AFTER)
    ax.set_xlim(0, 1)
    ax.set_xlabel("NCP (0: published exactly, 1: fully generalized)")
    ax.set_title("How much each quasi-identifier was generalized", fontsize=10)
    return _png(figure)


def _legend_below(ax: Axes) -> None:
    """The legend under the x label, where it hides no data."""
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(0.0, -0.25))


def _is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series.dtype)
                and not pd.api.types.is_bool_dtype(series.dtype))


def _edges(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """At most ``BINS`` bins; whole-number data gets bins centred on whole numbers, so no
    bin is empty merely because it holds no integer (e.g. ages)."""
    if values.size == 0:  # nothing finite to draw: one empty bin keeps the plot well-formed
        return np.array([0.0, 1.0])
    low, high = float(values.min()), float(values.max())
    if np.array_equal(values, np.round(values)) and high > low:
        step = math.ceil((high - low + 1) / BINS)
        edges: NDArray[np.float64] = np.arange(low - 0.5, high + step, step, dtype=np.float64)
        return edges
    return np.histogram_bin_edges(values, bins=BINS)


def _class_extremes(values: NDArray[np.float64], groups: NDArray[np.int64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Per class: smallest and largest value, and size."""
    order, _, starts, sizes = group_runs(groups)
    ordered = values[order]
    return (np.minimum.reduceat(ordered, starts), np.maximum.reduceat(ordered, starts), sizes)


def _spread(values: NDArray[np.float64], groups: NDArray[np.int64],
            edges: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows per bin when each class's rows spread uniformly over its [min, max] interval
    (the reading of a published interval the count-query estimate assumes)."""
    lo, hi, sizes = _class_extremes(values, groups)
    point = hi == lo
    counts, _ = np.histogram(lo[point], bins=edges, weights=sizes[point].astype(np.float64))
    lo, hi, sizes = lo[~point], hi[~point], sizes[~point]
    cumulative = np.zeros(edges.shape[0], dtype=np.float64)
    for i, edge in enumerate(edges):  # BINS + 1 vectorized passes over the classes
        cumulative[i] = float((sizes * np.clip((edge - lo) / (hi - lo), 0.0, 1.0)).sum())
    result: NDArray[np.float64] = counts + np.diff(cumulative)
    return result


def _top_counts(series: pd.Series) -> tuple[pd.Series, str]:
    """The ``TOP_CATEGORIES`` most frequent values with their rows, and a caption for the
    rest."""
    counts = series.astype(str).value_counts(sort=True)
    rest = counts.iloc[TOP_CATEGORIES:]
    caption = (f" (top {TOP_CATEGORIES} of {counts.shape[0]:,} values; "
               f"{int(rest.sum()):,} rows in the others)" if rest.shape[0] else "")
    return counts.iloc[:TOP_CATEGORIES], caption


def _plot_qi(name: str, published: pd.Series, original: pd.Series | None,
             groups: NDArray[np.int64]) -> str:
    if original is not None and _is_numeric(original):
        values = original.to_numpy(dtype=np.float64)
        finite = np.isfinite(values)
        figure, (ax,) = _axes()
        edges = _edges(values[finite])
        before, _ = np.histogram(values[finite], bins=edges)
        ax.stairs(before, edges, fill=True, color=_BEFORE, alpha=0.7, label="original")
        ax.stairs(_spread(values[finite], groups[finite], edges), edges, color=_AFTER,
                  linewidth=2, label="published (rows spread over their interval)")
        ax.set_xlabel(name)
        ax.set_ylabel("rows")
        ax.set_title(f"{name}: before and after generalization", fontsize=10)
        _legend_below(ax)
        return _png(figure)
    if original is None and _is_numeric(published):
        figure, (ax,) = _axes()
        values = published.to_numpy(dtype=np.float64)
        values = values[np.isfinite(values)]
        counts, edges = np.histogram(values, bins=_edges(values))
        ax.stairs(counts, edges, fill=True, color=_AFTER)
        ax.set_xlabel(name)
        ax.set_ylabel("rows")
        ax.set_title(f"{name}: published values", fontsize=10)
        return _png(figure)
    panels = ([("original", _top_counts(original), _BEFORE)] if original is not None else [])
    panels.append(("published", _top_counts(published), _AFTER))
    figure, axes = _axes(width=7.0 if len(panels) == 2 else 4.2,
                         height=0.9 + 0.22 * max(len(p[1][0]) for p in panels),
                         columns=len(panels))
    for ax, (label, (counts, caption), colour) in zip(axes, panels, strict=True):
        ax.barh([_short(str(v)) for v in counts.index[::-1]], counts.to_numpy()[::-1],
                color=colour)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel(f"rows{caption}", fontsize=8, wrap=True)
    figure.suptitle(name, fontsize=10)
    return _png(figure)


def _plot_sensitive(name: str, series: pd.Series, window: float | None) -> str:
    values = series.to_numpy(dtype=np.float64)
    values = values[np.isfinite(values)]
    figure, (ax,) = _axes()
    counts, edges = np.histogram(values, bins=_edges(values))
    ax.stairs(counts, edges, fill=True, color=_BEFORE)
    if window is not None and math.isfinite(window):
        centre = float(np.median(values))
        ax.axvspan(centre - window, centre + window, color=_AFTER, alpha=0.3,
                   label=f"neighbours of the median: ±{_number(window)}")
        ax.axvline(centre, color=_AFTER, linewidth=1)
        _legend_below(ax)
    ax.set_xlabel(name)
    ax.set_ylabel("rows")
    ax.set_title(f"{name}: distribution, ε window to scale", fontsize=10)
    return _png(figure)


# ---------------------------------------------------------------------- HTML


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;margin:0;
background:#f4f5f7;color:#1d232b;line-height:1.45}
main{max-width:1080px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:1.6rem;margin:0 0 4px}h2{font-size:1.15rem;margin:28px 0 10px;
border-bottom:2px solid #d8dce2;padding-bottom:4px}
.verdict{display:inline-block;padding:6px 14px;border-radius:6px;font-weight:700;
font-size:1.05rem;margin:8px 0}
.ok{background:#dff3e4;color:#1e6b34}.bad{background:#fbe1de;color:#9b2318}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:10px 14px;
min-width:150px}.card .v{font-size:1.35rem;font-weight:700}.card .l{font-size:.8rem;
color:#5a6470}
table{border-collapse:collapse;background:#fff;font-size:.88rem;margin:6px 0}
th,td{border:1px solid #dde1e6;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef0f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.violates td{background:#fdf0ee}tr.release td{font-weight:700;background:#eef6ff}
table.worst{width:100%;font-size:.8rem}
.plots{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
.plots img{background:#fff;border:1px solid #dde1e6;border-radius:6px;max-width:100%}
.note{color:#5a6470;font-size:.85rem}
details>summary{font-size:1.15rem;font-weight:700;margin:28px 0 10px;cursor:pointer;
border-bottom:2px solid #d8dce2;padding-bottom:4px}
"""


def _number(value: Any) -> str:
    """A figure as the page shows it (the exact value is in ``data-value``)."""
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    number = float(value)
    if not math.isfinite(number):
        return str(number)
    if number != 0 and (abs(number) >= 1e7 or abs(number) < 1e-3):
        return f"{number:.4g}"
    return f"{number:,.4f}".rstrip("0").rstrip(".")


def _percent(value: Any) -> str:
    """A share in [0, 1] as a percentage, to a tenth of a percent ("0.0%" only for none)."""
    share = float(value)
    if 0 < share < 0.0005:
        return "<0.1%"
    return f"{share:.1%}"


def _seconds_text(value: Any) -> str:
    """A timing rounded for reading: hundredths below 10 s, tenths below 100 s, else whole
    seconds (the exact value is in ``data-value``)."""
    seconds = float(value)
    if seconds < 0.005:
        return "<0.01"
    return f"{seconds:.2f}" if seconds < 10 else f"{seconds:.1f}" if seconds < 100 else (
        f"{seconds:,.0f}")


def _published_text(value: Any) -> str:
    """A published QI value as ``proxanon audit`` prints it ("(missing)" for none)."""
    return "(missing)" if value is None or value is pd.NA or (
        isinstance(value, float) and math.isnan(value)) else str(value)


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def lookup(numbers: Mapping[str, Any], key: Sequence[str | int]) -> Any:
    """The entry of the numbers block at ``key``, a path such as ``["audit", "max_risk"]``."""
    value: Any = numbers
    for part in key:
        value = value[part]
    return value


def _cell(numbers: Mapping[str, Any], key: Sequence[str | int], text: str | None = None) -> str:
    """A figure bound to its entry in the numbers block: ``data-key`` holds its path as a
    JSON list (column names may hold any character), ``data-value`` the exact number."""
    value = lookup(numbers, key)
    shown = _number(value) if text is None else text
    return (f'<span data-key="{html.escape(json.dumps(list(key)))}" '
            f'data-value="{html.escape(json.dumps(value))}">{html.escape(shown)}</span>')


def _card(numbers: Mapping[str, Any], key: Sequence[str | int], label: str,
          text: str | None = None) -> str:
    return (f'<div class="card"><div class="v">{_cell(numbers, key, text)}</div>'
            f'<div class="l">{html.escape(label)}</div></div>')


def _rows(pairs: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><th>{html.escape(label)}</th><td>{value}</td></tr>"
                   for label, value in pairs)


def _img(data: str, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _values_text(series: pd.Series) -> str:
    """The most frequent values of a class, numbers to 6 significant digits."""
    counts = series.value_counts(sort=True)
    numeric = _is_numeric(series)
    shown = []
    for value, count in counts.iloc[:VALUES_SHOWN].items():
        text = f"{float(value):.6g}" if numeric else str(value)
        shown.append(f"{text} ×{count}" if count > 1 else text)
    more = counts.shape[0] - VALUES_SHOWN
    return ", ".join(shown) + (f" … (+{more} more distinct)" if more > 0 else "")


def _worst_table(c: _Content, numbers: Mapping[str, Any]) -> str:
    check = c.check
    worst = numbers["worst_classes"]
    if not worst:
        return ""
    ids = np.array([w["group"] for w in worst], dtype=np.int64)
    violating = set(check.violating_groups.tolist())
    head = ["group", "rows", "risk", "verdict"]
    members: dict[int, pd.DataFrame] = {}
    if c.table is not None and c.groups is not None:
        head += [f"{q} (published)" for q in c.quasi_identifiers] + c.sensitive
        selected = np.isin(c.groups, ids)
        rows = c.table[c.quasi_identifiers + c.sensitive].iloc[np.flatnonzero(selected)]
        for gid, part in rows.groupby(c.groups[selected], sort=False):
            members[int(gid)] = part
    lines = ['<table class="worst"><tr>'
             + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for i, entry in enumerate(worst):
        gid = int(entry["group"])
        bad = gid in violating
        small = entry["size"] < check.k
        verdict = ("violates" if bad else "") + (" small" if small else "") or "holds"
        cells = [f'<td class="n">{_cell(numbers, ("worst_classes", i, "group"))}</td>',
                 f'<td class="n">{_cell(numbers, ("worst_classes", i, "size"))}</td>',
                 f'<td class="n">{_cell(numbers, ("worst_classes", i, "risk"))}</td>',
                 f"<td>{verdict.strip()}</td>"]
        part = members.get(gid)
        if part is not None:
            cells += [f"<td>{html.escape(_published_text(part[q].iloc[0]))}</td>"
                      for q in c.quasi_identifiers]
            cells += [f"<td>{html.escape(_values_text(part[s]))}</td>" for s in c.sensitive]
        lines.append(f'<tr class="{"violates" if bad or small else ""}">' + "".join(cells)
                     + "</tr>")
    lines.append("</table>")
    return "".join(lines)


def _render(c: _Content) -> str:
    tic = time.perf_counter()
    _figure_class()  # fail early, with the extra's name, when matplotlib is missing
    numbers = _numbers(c)
    check = c.check
    verdict = ("satisfied" if check.satisfied else "NOT satisfied")
    allowed = 1.0 - check.delta
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{html.escape(c.title)}: disclosure-risk report</title>",
        f"<style>{_STYLE}</style></head><body><main>",
        f"<h1>Disclosure-risk report</h1><div class=\"note\">{html.escape(c.title)}</div>",
        ('<div class="verdict bad" id="internal">Internal version: this page shows values of '
         "the original table (the quasi-identifiers before generalization). Do not share it "
         "with the published table.</div>" if c.internal else ""),
        f'<div class="verdict {"ok" if check.satisfied else "bad"}">(ε, δ)<sup>k</sup>-'
        "dissimilarity" + (" and privacy criteria" if check.criteria else "") + ": "
        + _cell(numbers, ("audit", "satisfied"), verdict) + "</div>",
        "".join(f'<p class="note">{html.escape(n)}</p>' for n in c.notes),
        "<h2>What was asked</h2><table>",
        _rows([
            ("k (smallest class)", _cell(numbers, ("parameters", "k"))),
            ("ε (proximity threshold, on the [0, 1] scale)",
             _cell(numbers, ("parameters", "epsilon"))),
            ("δ (a class's risk may be at most 1 − δ)", _cell(numbers, ("parameters", "delta"))),
            ("metric", _cell(numbers, ("parameters", "metric"), str(check.metric))),
            ("quasi-identifiers", html.escape(", ".join(c.quasi_identifiers) or "–")),
            ("sensitive columns", html.escape(", ".join(c.sensitive) or "–")),
        ]),
        "</table>",
    ]
    if "recoding" in numbers:
        parts.append(_recoding_table(numbers))
    if numbers["scaling"]:
        parts.append(_scaling_table(numbers))
    parts += [
        "<h2>What holds</h2><div class=\"cards\">",
        _card(numbers, ("audit", "max_risk"), f"largest class risk (allowed 1 − δ = "
              f"{_number(allowed)})"),
        _card(numbers, ("audit", "vulnerability"), "share of classes that violate",
              _percent(numbers["audit"]["vulnerability"])),
        _card(numbers, ("audit", "n_violating_groups"), "violating classes"),
        _card(numbers, ("audit", "n_violating_rows"), "rows with too many neighbours"),
        _card(numbers, ("audit", "n_small_groups"), f"classes smaller than k = {check.k}"),
        _card(numbers, ("audit", "n_groups"), "classes"),
        _card(numbers, ("audit", "n_rows"), "rows audited"),
        _card(numbers, ("audit", "n_suppressed_rows"), "suppressed rows"),
        "</div>",
        *_columns_alone(numbers, allowed),
        "<h2>Re-identification risk</h2><div class=\"cards\">",
        _card(numbers, ("reidentification", "small_class_share_2k"),
              f"share of rows in classes smaller than 2k = {2 * check.k}",
              _percent(numbers["reidentification"]["small_class_share_2k"])),
        _card(numbers, ("reidentification", "prosecutor_risk"),
              "largest prosecutor risk (1 / smallest class)"),
        _card(numbers, ("reidentification", "k_anonymity"), "k-anonymity level reached"),
        _card(numbers, ("reidentification", "l_diversity"),
              "distinct ℓ-diversity of the sensitive columns together"),
        "</div>",
        "<p class=\"note\">Classes smaller than 2k are near the smallest size allowed; a "
        "table cut as finely as k allows has most of its rows there, which is expected, not "
        "a fault. The ℓ here counts each combination of the sensitive columns' values once; "
        "the privacy measures below take the worst single column, so they can be lower.</p>",
        "<h2>Classes and their risk</h2><div class=\"plots\">",
        _img(_plot_sizes(check), "distribution of published class sizes"),
        _img(_plot_risk(check), "risk of each class against 1 - delta"),
        "</div>",
    ]
    parts += _folded(_measures_section(numbers))
    parts += _utility_section(c, numbers)
    parts += _frontier_section(c, numbers)
    parts += _folded(_columns_section(c, numbers))
    parts += _folded([
        f"<h2>Worst classes (up to {c.max_classes})</h2>",
        "<p class=\"note\">Each class is named by its group, as <code>proxanon audit</code> "
        "names it (for a published table: its group column), with its published QI values. "
        "Violating classes first, then small ones, then by risk. A class's "
        "risk is the largest share of its other rows within ε of one of its rows.</p>",
        _worst_table(c, numbers),
    ])
    numbers["seconds"]["report"] = time.perf_counter() - tic
    parts += _folded([
        "<h2>Timings (seconds)</h2><table>",
        _rows([(name, _cell(numbers, ("seconds", name),
                            _seconds_text(numbers["seconds"][name])))
               for name in numbers["seconds"]]),
        "</table>"])
    block = json.dumps(numbers, indent=1, sort_keys=True).replace("</", "<\\/")
    parts.append(f'<script type="application/json" id="{_NUMBERS_ID}">{block}</script>')
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def _columns_alone(numbers: Mapping[str, Any], allowed: float) -> list[str]:
    """Each sensitive column's own exposure beside the joint verdict (none with one
    column, or a distance not over components)."""
    columns = numbers["audit"]["columns"]
    if not columns:
        return []
    exposed = any(entry["exposed"] for entry in columns)
    lines = ["<h2>Each sensitive column alone</h2>",
             "<p class=\"note\">The verdict above is for the distance over all the sensitive "
             "columns together. Here each column is checked on its own: the largest share of "
             "a class's other rows within ε of one of its rows on that column alone (the "
             "metric's distance between two rows that differ in that column only), against "
             f"1 − δ = {_number(allowed)}."
             + (" A column above it is exposed on its own: an attacker learns that value "
                "closely even though the combination is protected. The metric "
                "<code>min_component</code> protects each column's value." if exposed else "")
             + "</p><table><tr><th>column</th><th>largest share alone</th>"
             "<th>classes above 1 − δ on this column alone</th></tr>"]
    for j, entry in enumerate(columns):
        lines.append(
            f"<tr><td>{html.escape(entry['column'])}</td>"
            f'<td class="n">{_cell(numbers, ("audit", "columns", j, "max_risk"))}</td>'
            f'<td class="n">{_cell(numbers, ("audit", "columns", j, "violating_groups"))}'
            "</td></tr>")
    lines.append("</table>")
    return lines


def _recoding_table(numbers: Mapping[str, Any]) -> str:
    """Full-domain recoding's node: the level of each QI, and how much of the lattice the
    search checked."""
    recoding = numbers["recoding"]
    lines = ["<h2>Full-domain recoding</h2>",
             "<p class=\"note\">Every published row shows each quasi-identifier at one level "
             "of its hierarchy (0: the value itself, higher: coarser), the same level in every "
             "row: the node of the generalization lattice of lowest loss that satisfies every "
             "check within the suppression limit. "
             + _cell(numbers, ("recoding", "nodes_checked")) + " of the lattice's "
             + _cell(numbers, ("recoding", "lattice_nodes")) + " nodes were checked (the "
             "others were settled by bounds); "
             + _cell(numbers, ("recoding", "suppressed_rows")) + " row(s) were suppressed."
             "</p><table><tr><th>quasi-identifier</th><th>level</th></tr>"]
    for name in recoding["levels"]:
        lines.append(f"<tr><td>{html.escape(name)}</td>"
                     f'<td class="n">{_cell(numbers, ("recoding", "levels", name))}</td></tr>')
    lines.append("</table>")
    return "".join(lines)


def _scaling_table(numbers: Mapping[str, Any]) -> str:
    head = ["column", "kind", "range", "weight", "ε in the column's units"]
    lines = ["<h2>Sensitive columns and their scale</h2>",
             "<p class=\"note\">Each sensitive column is scaled to [0, 1] before distances are "
             "taken. ε in a column's units is the largest difference in that column alone "
             "(the others equal) for which two rows are still neighbours.</p><table><tr>"
             + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for j, entry in enumerate(numbers["scaling"]):
        span = ("–" if entry["low"] is None
                else f"{_number(entry['low'])} to {_number(entry['high'])}")
        units = entry["epsilon_units"]
        shown = "–" if units is None else f"{_number(units)} {entry['unit']}".strip()
        lines.append(
            f"<tr><td>{html.escape(entry['column'])}</td><td>{entry['kind']}</td>"
            f"<td>{html.escape(span)}</td>"
            f'<td class="n">{_cell(numbers, ("scaling", j, "weight"))}</td>'
            f'<td class="n">{_cell(numbers, ("scaling", j, "epsilon_units"), shown)}</td></tr>')
    lines.append("</table>")
    return "".join(lines)


def _utility_section(c: _Content, numbers: Mapping[str, Any]) -> list[str]:
    utility = numbers["utility"]
    parts = ["<h2>Utility</h2><div class=\"cards\">"]
    labels = {"gcp": "GCP (0 best, 1 worst)", "loss": "loss per class (paper)",
              "discernibility": "discernibility Σ|G|²",
              "average_class_size": "average class size",
              "count_query_error": "count-query mean relative error"}
    parts += [_card(numbers, ("utility", key), label) for key, label in labels.items()
              if key in utility]
    parts.append("</div>")
    if "count_queries" in utility:
        q = utility["count_queries"]
        parts.append(f'<p class="note">Count queries: {q["n_queries"]:,} queries over '
                     f'{q["qd"]} QI(s), selectivity {q["s"]:g}, seed {q["seed"]}.</p>')
    if "ncp" in utility:
        parts.append("<table><tr><th>quasi-identifier</th><th>NCP</th></tr>")
        parts += [f'<tr><td>{html.escape(name)}</td><td class="n">'
                  f'{_cell(numbers, ("utility", "ncp", name))}</td></tr>'
                  for name in utility["ncp"]]
        parts.append("</table>")
        parts.append(f'<div class="plots">{_img(_plot_ncp(utility["ncp"]), "NCP per QI")}</div>')
    elif c.table is not None:
        parts.append('<p class="note">GCP and NCP compare the published table with the '
                     "original one; they are shown for proxanon.anonymize results.</p>")
    return parts


def _frontier_section(c: _Content, numbers: Mapping[str, Any]) -> list[str]:
    """Where this release's (k, ε, δ) sits among the settings proxanon.explore tried."""
    if c.frontier is None:
        return []
    found = numbers["frontier"]
    release = found["release"]
    check = c.check
    parts = ["<h2>Among the settings explored</h2>"]
    if release is None:
        parts.append(f'<p class="note">This release\'s setting (k = {check.k}, ε = '
                     f"{_number(check.epsilon)}, δ = {_number(check.delta)}) is not among "
                     "the settings explored.</p>")
    marked = None if release is None else (check.k, check.epsilon, check.delta)
    parts.append('<div class="plots">' + _img(
        base64.b64encode(png_bytes(frontier_figure(c.frontier, release=marked))).decode(
            "ascii"), "the settings explored, coloured by verdict") + "</div>")
    head = ["k", "ε", "δ", "verdict", "GCP", "largest class share", "seconds"]
    keys = ["k", "epsilon", "delta", "verdict", "gcp", "largest_class_share", "seconds"]
    lines = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for i in range(len(found["settings"])):
        row = "".join(f'<td class="n">{_cell(numbers, ("frontier", "settings", i, key))}</td>'
                      for key in keys)
        lines.append(f'<tr class="{"release" if i == release else ""}">{row}</tr>')
    lines.append("</table>")
    parts.append("".join(lines))
    return parts


def _columns_section(c: _Content, numbers: Mapping[str, Any]) -> list[str]:
    if c.table is None or c.groups is None:
        return []
    parts = ["<h2>Quasi-identifiers before and after</h2>" if c.internal
             else "<h2>Quasi-identifiers as published</h2>"]
    if c.original is None:
        parts.append('<p class="note">The published values only: this page shows no value of '
                     "the original table (include_original=True, or --include-original, makes "
                     "an internal version that does).</p>")
    parts.append('<div class="plots">')
    for name in c.quasi_identifiers:
        before = None if c.original is None else c.original[name]
        parts.append(_img(_plot_qi(name, c.table[name], before, c.groups), name))
    parts.append("</div>")
    windows = {entry["column"]: entry["epsilon_units"] for entry in numbers["scaling"]}
    numeric = [s for s in c.sensitive if _is_numeric(c.table[s])]
    if numeric:
        parts.append("<h2>Numeric sensitive columns</h2><p class=\"note\">The shaded band is "
                     "the ε window drawn to scale around the median: two rows whose values "
                     "differ by at most its half-width (the other sensitive columns equal) "
                     "are neighbours.</p><div class=\"plots\">")
        parts += [_img(_plot_sensitive(s, c.table[s], windows.get(s)), s) for s in numeric]
        parts.append("</div>")
    return parts


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
