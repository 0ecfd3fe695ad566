"""The HTML report's small pieces of text and markup (docs/guide/report.md): how a figure is
written (:func:`_number`, :func:`_percent`, :func:`_seconds_text`), a published value
(:func:`_published_text`, :func:`_values_text`), a figure bound to its entry in the numbers
block (:func:`_cell`, and the cards and table rows built on it), an inlined PNG, folded
sections, and the page's style sheet.

A figure shown through :func:`_cell` carries ``data-key`` (its path in the numbers block, a
JSON list) and ``data-value`` (the exact number) beside its rounded text, so the page can be
checked against :func:`proxanon.html_report.read_numbers`. The markup builders
(:func:`_cell`, :func:`_card`, :func:`_rows`, :func:`_explained`, :func:`_img`) escape the text
they are given; the text functions return plain text for the caller to escape, and markup
passed in (a table row's value, a folded part) is kept as given. These pieces read no table
and draw nothing.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Distinct sensitive values listed per class in the worst-classes table.
VALUES_SHOWN = 4


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


def _is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series.dtype)
                and not pd.api.types.is_bool_dtype(series.dtype))


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
