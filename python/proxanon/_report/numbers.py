"""The HTML report's content and its numbers block (docs/guide/report.md): :class:`_Content`
(everything a page shows) and :func:`_numbers`, every figure of the page by section, which
the page embeds once as ``<script type="application/json" id="proxanon-numbers">``.

Every number comes from :mod:`proxanon.audit`, :mod:`proxanon.evaluate` or, for the GCP,
loss and NCP of an anonymization whose original table is not given, its
:class:`~proxanon.Report`; this module only gathers them as plain JSON values (a privacy
measure that is not finite becomes None). ε in a column's units follows the weighted
distances of docs/design/definitions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import evaluate
from proxanon._report.formatting import _is_numeric
from proxanon._results.audit import AuditReport
from proxanon._results.privacy import PrivacyMeasures, published_measures
from proxanon.distances import box_radius
from proxanon.frontier import frontier_cells, release_cell

#: Rows of the worst-classes table, unless asked otherwise.
MAX_CLASSES = 10

_NUMBERS_ID = "proxanon-numbers"


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
