"""The HTML report's plots (docs/guide/report.md): published class sizes against k and 2k,
the sorted per-class risk against 1 - δ, NCP per quasi-identifier, each quasi-identifier as
published (and before generalization, in an internal page) and each numeric sensitive
column with its ε window drawn to scale.

Each ``_plot_*`` draws one matplotlib figure and returns it as base64 PNG text for an
``<img>`` (:func:`proxanon.frontier.png_bytes`: no software tag, so the same data gives the
same bytes). Plots are drawn from binned data (at most ``BINS`` bins, ``RISK_POINTS``
points, ``TOP_CATEGORIES`` bars), so the page of a million-row table stays small. Cost: O(n)
numpy/pandas passes over a column plus O(classes · BINS) for the uniform-spread histograms
(:func:`_spread`).

matplotlib is imported lazily, through :func:`proxanon.frontier.figure_class`: it is the
optional extra ``report``, named in the error when it is missing.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._group_runs import group_runs
from proxanon._report.formatting import _is_numeric, _number, _short
from proxanon._results.audit import AuditReport
from proxanon.frontier import figure_class, png_bytes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Bins of every histogram.
BINS = 40
#: Points of the sorted per-class risk curve.
RISK_POINTS = 1000
#: Categories shown per categorical bar chart.
TOP_CATEGORIES = 12

_BEFORE, _AFTER, _BAD, _LINE = "#7f9cc2", "#e07b39", "#c0392b", "#333333"


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
