"""The HTML report's page, section by section (docs/guide/report.md): :func:`_render` lays
out what was asked and what holds, the re-identification risk and the class plots, then the
sections built here: the privacy criteria and measures, utility, the settings explored, the
columns, the worst classes and the timings.

Each figure shown in a card or a table cell is read from the numbers block through
:func:`_cell`, so it is what :func:`proxanon.html_report.read_numbers` reads back; the
content (:class:`_Content`) supplies the titles, notes, labels, the worst classes' published
values and the plots' data. The page references nothing outside itself (plots inlined as
base64 PNG, the style sheet inline, no script to run); long sections fold away and the
worst-classes table is capped at ``max_classes`` rows.
"""

from __future__ import annotations

import base64
import html
import json
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from proxanon._report.formatting import (
    _STYLE,
    _card,
    _cell,
    _explained,
    _folded,
    _img,
    _is_numeric,
    _number,
    _percent,
    _published_text,
    _rows,
    _seconds_text,
    _values_text,
)
from proxanon._report.numbers import _NUMBERS_ID, _Content, _numbers
from proxanon._report.plots import (
    _figure_class,
    _plot_ncp,
    _plot_qi,
    _plot_risk,
    _plot_sensitive,
    _plot_sizes,
)
from proxanon.frontier import frontier_figure, png_bytes


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
