"""The frontier of the settings :func:`proxanon.explore` tried, drawn (docs/guide/explore.md).

:func:`frontier_figure` draws one panel per k: a cell per (ε, δ), coloured by the verdict and
labelled with the published table's GCP, the release's setting outlined. :func:`frontier_cells`
checks a frame (as ``explore`` returns it, or read back from its CSV file) and gives its rows;
:func:`release_cell` finds a release's setting among them. The HTML report
(:mod:`proxanon.html_report`) shows the same figure.

matplotlib is imported lazily, only here and in the HTML report: it is the optional extra
``report``.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The verdicts of a setting (``stopped``: no verdict within explore's ``max_seconds``).
SATISFIED, INFEASIBLE, PROVEN_INFEASIBLE = "satisfied", "infeasible", "proven infeasible"
STOPPED = "stopped"
VERDICTS = (SATISFIED, INFEASIBLE, PROVEN_INFEASIBLE, STOPPED)

#: The columns of ``explore``'s frame, in order (``rows_suppressed`` only where suppression
#: is allowed).
FRONTIER_COLUMNS = ("k", "epsilon", "delta", "verdict", "rows_suppressed", "gcp",
                    "largest_class_share", "seconds", "proof")

#: The columns a frame must have to be drawn.
_NEEDED = ("k", "epsilon", "delta", "verdict", "gcp")

_COLOURS = {SATISFIED: "#7fc98f", INFEASIBLE: "#f0b27a", PROVEN_INFEASIBLE: "#d9665b",
            STOPPED: "#c8ccd2"}


def frontier_cells(frame: Any) -> list[dict[str, Any]]:
    """The rows of an ``explore`` frame as dicts (NaN and missing values as None), checked:
    the columns ``k``, ``epsilon``, ``delta``, ``verdict`` and ``gcp`` present, a known
    verdict in every row, at least one row."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"the frontier must be the DataFrame proxanon.explore returns (or its "
                        f"CSV file read back), got {type(frame).__name__}")
    missing = [c for c in _NEEDED if c not in frame.columns]
    if missing:
        raise ValueError(f"the frontier lacks the column(s) {missing}; give the frame "
                         "proxanon.explore returns, or the CSV file 'proxanon explore' writes")
    if len(frame) == 0:
        raise ValueError("the frontier has no rows")
    unknown = sorted(set(frame["verdict"].astype(str)) - set(VERDICTS))
    if unknown:
        raise ValueError(f"the frontier's verdict column holds {unknown}; the verdicts are "
                         f"{list(VERDICTS)}")
    columns = [c for c in FRONTIER_COLUMNS if c in frame.columns]
    return [{c: _plain(row[c]) for c in columns} for _, row in frame.iterrows()]


def release_cell(cells: list[dict[str, Any]], k: int, epsilon: float,
                 delta: float) -> int | None:
    """The index of the cell with the release's (k, ε, δ) (ε and δ equal to 1e-9 relative,
    as a CSV file may round them), or None."""
    for i, cell in enumerate(cells):
        if (int(cell["k"]) == int(k) and math.isclose(cell["epsilon"], epsilon, rel_tol=1e-9)
                and math.isclose(cell["delta"], delta, rel_tol=1e-9)):
            return i
    return None


def frontier_figure(frame: pd.DataFrame, *,
                    release: tuple[int, float, float] | None = None) -> Figure:
    """One panel per k, a cell per (ε, δ): coloured by the verdict, labelled with the GCP of
    the published table (or the verdict), ``release`` outlined."""
    make = figure_class()
    cells = frontier_cells(frame)
    ks = sorted({int(c["k"]) for c in cells})
    epsilons = sorted({float(c["epsilon"]) for c in cells})
    deltas = sorted({float(c["delta"]) for c in cells})
    marked = None if release is None else release_cell(cells, *release)
    figure = make(figsize=(max(4.0, 1.1 * len(epsilons) * len(ks) + 1.5),
                                   0.7 * len(deltas) + 1.8))
    axes = [figure.add_subplot(1, len(ks), i + 1) for i in range(len(ks))]
    for ax, kk in zip(axes, ks, strict=True):
        for i, cell in enumerate(cells):
            if int(cell["k"]) != kk:
                continue
            x, y = epsilons.index(float(cell["epsilon"])), deltas.index(float(cell["delta"]))
            ax.add_patch(_patch(x, y, _COLOURS[str(cell["verdict"])], i == marked))
            ax.text(x, y, _label(cell), ha="center", va="center", fontsize=7)
        ax.set_xlim(-0.5, len(epsilons) - 0.5)
        ax.set_ylim(-0.5, len(deltas) - 0.5)
        ax.set_xticks(range(len(epsilons)), [f"{e:g}" for e in epsilons], fontsize=8)
        ax.set_yticks(range(len(deltas)), [f"{d:g}" for d in deltas], fontsize=8)
        ax.set_xlabel("ε", fontsize=9)
        ax.set_title(f"k = {kk}", fontsize=9)
    axes[0].set_ylabel("δ", fontsize=9)
    shown = {str(c["verdict"]) for c in cells} | {SATISFIED, INFEASIBLE, PROVEN_INFEASIBLE}
    handles = [_patch(0, 0, colour, False, label=verdict)
               for verdict, colour in _COLOURS.items() if verdict in shown]
    if marked is not None:
        handles.append(_patch(0, 0, "white", True, label="this release"))
    figure.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8,
                  frameon=False, bbox_to_anchor=(0.5, -0.02))
    figure.suptitle("Settings explored (label: GCP of the published table)", fontsize=9)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    return figure


def figure_class(purpose: str = "drawing the frontier") -> type[Figure]:
    """matplotlib's Figure; without matplotlib an ImportError that names ``purpose`` and the
    extra to install."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(f"{purpose} needs matplotlib, which is not installed: "
                          "pip install 'proxanon[report]'") from exc
    return Figure


def png_bytes(figure: Figure) -> bytes:
    """``figure`` as PNG (100 dpi, cropped to its content, no software tag: the same figure
    gives the same bytes)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight",
                   metadata={"Software": None})
    return buffer.getvalue()


def _patch(x: float, y: float, colour: str, outlined: bool, label: str | None = None) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.48, y - 0.45), 0.96, 0.9, facecolor=colour,
                     edgecolor="black" if outlined else "white",
                     linewidth=2.5 if outlined else 0.5, label=label)


def _label(cell: dict[str, Any]) -> str:
    if cell["verdict"] in (PROVEN_INFEASIBLE, STOPPED):
        return str(cell["verdict"]).replace(" ", "\n")
    gcp = cell["gcp"]
    if cell["verdict"] == SATISFIED:
        return "–" if gcp is None else f"{gcp:.3f}"
    return INFEASIBLE if gcp is None else f"{INFEASIBLE}\n{gcp:.3f}"


def _plain(value: Any) -> Any:
    """A frame's value as a plain Python one; NaN and missing values as None."""
    if value is None or (not isinstance(value, str) and bool(pd.isna(value))):
        return None
    return value.item() if hasattr(value, "item") else value
