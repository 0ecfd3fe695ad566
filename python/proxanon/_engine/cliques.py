"""The cliques of the ε-neighbour graph Ψ that ``advise`` and the early verdict count, found
without building Ψ: ε/2 balls, orthants and one column's windows (docs/design/proofs.md).

Every set returned here is a proven clique: its rows are pairwise ε-neighbours (the
threshold of docs/design/privacy-model.md), whatever the partition. What makes each one a
clique:

- *Balls* (the true metrics: weighted L1, L2, L∞ with weights >= 0 obey the triangle
  inequality): rows within ε/2 of one row's value x are pairwise within ε. The ball radius
  r is set a little below ε/2 (see ``_clique_radius``) so that the neighbour threshold at r,
  ``thr(r) = r + 1e-9·max(1, r)``, counted twice, still fits inside the threshold at ε with
  room for float rounding: ``2·thr(r) = ε + 0.5e-9·max(1, ε)``, which is at most
  ``thr(ε) - 0.4e-9·max(1, ε)`` (checked in the code). Rows at exactly ε/2 from the centre
  are inside the ball. Without the triangle inequality only rows of one value are a clique.
- *Orthants* are cliques without the triangle inequality. The ε-neighbours y of a row a
  that lie on one side of it in every weighted component (y_i >= a_i in some components,
  y_i <= a_i in the others) are pairwise neighbours under Linf, and under every built-in
  distance when only one component is weighted: two such rows differ in each component by
  no more than the farther of them from a, and a computed difference never exceeds a larger
  one (rounding is monotone), so each weighted term of their distance is at most the larger
  one with a. With one weighted component the largest orthant over every anchor is the
  largest clique (the interval graph's), found by two pointers over the sorted values.
- *One column's window* (min_component on several columns): rows within ε of one another
  in one column alone are neighbours, as the distance is the smallest weighted component.

Cost: O(n log n) with one weighted component (``_core.largest_window``) and per column for
the windows; on several components the ε/2 relation in the structure ``partition`` would
pick, plus the orthants of every row on tables of at most ORTHANT_ALL_ROWS rows and of
SAMPLED_CENTRES rows beyond; ``_sampled_clique`` alone is O(SAMPLED_CENTRES · n).
Everything is deterministic, ties are settled by row order (``_largest_clique``), and the
caller's arrays are never modified (the rows returned are read-only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _core
from proxanon._engine.relations import metric as native_metric
from proxanon._engine.verdicts import too_dense
from proxanon._errors import GraphTooDenseError
from proxanon.distances import Relation, row_graph, value_graph


def _graph(sens: NDArray[np.float64], relation: Relation, radius: float,
           threads: int) -> dict[str, NDArray[Any]]:
    """Distinct values, multiplicities, value id per row and row degree per value (and, for
    a distance function or a precomputed graph, the CSR). A built-in metric is held in the
    structure ``partition`` would pick: many distinct values never make a stored graph."""
    if relation.kind == "builtin":
        try:
            return _core.value_relation(sens, *_metric(relation), radius,
                                        threads=threads)
        except GraphTooDenseError as exc:
            raise too_dense(radius, relation, exc) from None
    if relation.kind == "callable":
        row_value, offsets, targets, _ = value_graph(relation, sens, radius)
        values = np.unique(sens, axis=0)
    else:
        row_value, offsets, targets = row_graph(relation, sens.shape[0])
        values = sens
    counts = np.bincount(row_value, minlength=len(offsets) - 1).astype(np.int64)
    summed = np.concatenate(([0], np.cumsum(counts[targets])))
    degree = counts - 1 + summed[offsets[1:]] - summed[offsets[:-1]]
    return {"values": values, "counts": counts, "row_value": row_value, "offsets": offsets,
            "targets": targets, "value_degree": degree}



@dataclass(frozen=True)
class _Clique:
    """Rows proven pairwise ε-neighbours: a ball of radius about ε/2 around ``value`` (a
    metric), the ε-neighbours of ``value`` on one side of it in every component (an
    orthant), or one value."""

    radius: float | None
    size: int
    value: tuple[float, ...]
    rows: NDArray[np.int64]
    shape: str = "ball"  # "ball", "orthant", "value" or "column j" (_column_window)



def _largest_clique(sens: NDArray[np.float64], relation: Relation, eps: float, threads: int,
                    graph: dict[str, NDArray[Any]] | None = None,
                    window: dict[str, int] | None = None, sampled: bool = False) -> _Clique:
    """The largest such clique (ties: the one whose value a row holds first; a ball before
    an orthant); ``graph`` is the ε relation when the caller has it (used for the
    identical-value cliques). With one weighted component the largest orthant (a window of
    values from an anchor up) is the largest clique of all, found in O(n log n) (``window``:
    ``_core.largest_window``'s answer when the caller has it). ``sampled``: the caller has
    tried ``_sampled_clique`` already, whose orthants are those counted here beyond
    ORTHANT_ALL_ROWS rows, so they are not counted again."""
    if _weighted(relation, sens.shape[1]) == 1:
        if window is None:
            window = _core.largest_window(sens, *_metric(relation), eps)
        return _orthant(sens, relation, eps, window["anchor"], threads)
    # The ball of radius ~eps/2 is a clique only under the triangle inequality; without it
    # only identical values (always neighbours) are a proven clique.
    radius = _clique_radius(eps) if relation.is_metric else None
    if radius is None:
        source = graph if graph is not None else _graph(sens, relation, eps, threads)
        clique = np.asarray(source["counts"], dtype=np.int64)
    else:
        source = _graph(sens, relation, radius, threads)
        # The rows in the closed ball of a value: its row degree there, plus itself.
        clique = np.asarray(source["value_degree"], dtype=np.int64) + 1
    values = np.asarray(source["values"], dtype=np.float64)
    row_value = np.asarray(source["row_value"], dtype=np.int64)
    first_row = _first_rows(row_value, len(values))
    size = int(clique.max())
    centre = int(np.argmin(np.where(clique == size, first_row, len(sens))))
    value = tuple(float(x) for x in values[centre])
    if radius is not None and relation.kind == "builtin":
        found = _ball(sens, relation, radius, int(first_row[centre]), value, threads)
    else:
        members = [centre] if radius is None else _ball_members(source, centre)
        rows = np.flatnonzero(np.isin(row_value, members)).astype(np.int64)
        rows.setflags(write=False)
        found = _Clique(radius, size, value, rows, "ball" if radius is not None else "value")
    if _orthants_apply(relation, sens.shape[1]) and not (sampled and len(sens) > ORTHANT_ALL_ROWS):
        centres = (np.arange(len(sens)) if len(sens) <= ORTHANT_ALL_ROWS
                   else _sampled_centres(len(sens)))
        found = max(found, _largest_orthant(sens, relation, eps, centres, threads),
                    key=lambda c: c.size)
    one_column = _column_window(sens, relation, eps, threads)
    if one_column is not None and one_column.size > found.size:
        found = one_column
    return found



def _column_window(sens: NDArray[np.float64], relation: Relation, eps: float,
                   threads: int) -> _Clique | None:
    """Under min_component on several columns, rows within epsilon of one another in one
    column alone are pairwise neighbours (the distance is the smallest weighted component):
    the largest window of one column's values (equal values included), over the columns.
    None under any other metric. O(n log n) per column (``_core.largest_window``)."""
    if relation.name != "min_component" or relation.weights is None or sens.shape[1] < 2:
        return None
    best: _Clique | None = None
    for j in range(sens.shape[1]):
        column = np.ascontiguousarray(sens[:, j:j + 1])
        metric, weight = native_metric(relation.name), [float(relation.weights[j])]
        anchor = int(_core.largest_window(column, metric, weight, eps)["anchor"])
        rows = _core.balls(column, metric, weight, eps, [anchor], members=True,
                           threads=threads, shape="orthants")["rows"].astype(np.int64)
        rows.setflags(write=False)
        if best is None or rows.size > best.size:
            best = _Clique(None, int(rows.size), tuple(float(x) for x in sens[anchor]), rows,
                           f"column {j}")
    return best



#: Tables of at most this many rows have the orthant cliques of every row counted (Linf on
#: several components; O(2^s · n · rows in a slab)); larger ones those of SAMPLED_CENTRES rows.
ORTHANT_ALL_ROWS = 2048


def _weighted(relation: Relation, columns: int) -> int:
    """Components of positive weight of a built-in relation (0 for any other)."""
    if relation.kind != "builtin":
        return 0
    return columns if relation.weights is None else int(np.count_nonzero(relation.weights > 0))



def _orthants_apply(relation: Relation, columns: int) -> bool:
    """Whether orthants are cliques: Linf (each component on its own), or one weighted
    component under any built-in distance; at most 6 weighted components (2^s orthants)."""
    weighted = _weighted(relation, columns)
    return 0 < weighted <= 6 and (weighted == 1 or relation.name == "linf")



def _largest_orthant(sens: NDArray[np.float64], relation: Relation, eps: float,
                     centres: NDArray[np.int64], threads: int) -> _Clique:
    """The largest orthant clique anchored at one of ``centres`` (ties: the first)."""
    sizes = _core.balls(sens, *_metric(relation), eps, centres.tolist(),
                        threads=threads, shape="orthants")["sizes"]
    return _orthant(sens, relation, eps, int(centres[int(np.argmax(sizes))]), threads)


def _orthant(sens: NDArray[np.float64], relation: Relation, eps: float, anchor: int,
             threads: int) -> _Clique:
    """The largest orthant clique anchored at row ``anchor``, its rows ascending."""
    rows = _core.balls(sens, *_metric(relation), eps, [anchor], members=True,
                       threads=threads, shape="orthants")["rows"].astype(np.int64)
    rows.setflags(write=False)
    return _Clique(None, int(rows.size), tuple(float(x) for x in sens[anchor]), rows, "orthant")


def _sampled_centres(n: int) -> NDArray[np.int64]:
    return np.unique(np.linspace(0, n - 1, min(n, SAMPLED_CENTRES)).astype(np.int64))


#: Rows (evenly spaced in the table) whose ε/2 balls ``infeasibility_proof`` counts first on
#: several components, where the exact clique needs every value's ball (a grid scan each,
#: long where the values crowd): most of them fall where the rows are densest, so a proof
#: usually needs no more.
SAMPLED_CENTRES = 256


def _sampled_clique(sens: NDArray[np.float64], relation: Relation, eps: float,
                    threads: int) -> _Clique | None:
    """The largest ε/2 ball (and, where they are cliques, orthant) around SAMPLED_CENTRES
    rows (a clique, not the largest one), O(SAMPLED_CENTRES · n); None without a built-in
    metric or a positive radius."""
    radius = _clique_radius(eps)
    if radius is None or relation.kind != "builtin" or not relation.is_metric:
        return None
    centres = _sampled_centres(sens.shape[0])
    sizes = _core.balls(sens, *_metric(relation), radius,
                        centres.tolist(), threads=threads)["sizes"]
    best = int(centres[int(np.argmax(sizes))])
    found = _ball(sens, relation, radius, best, tuple(float(x) for x in sens[best]), threads)
    if _orthants_apply(relation, sens.shape[1]):
        found = max(found, _largest_orthant(sens, relation, eps, centres, threads),
                    key=lambda c: c.size)
    return found


def _ball(sens: NDArray[np.float64], relation: Relation, radius: float, centre: int,
          value: tuple[float, ...], threads: int) -> _Clique:
    """The rows within ``radius`` of row ``centre`` (a built-in metric), O(n)."""
    rows = _core.balls(sens, *_metric(relation), radius, [centre],
                       members=True, threads=threads)["rows"].astype(np.int64)
    rows.setflags(write=False)
    return _Clique(radius, int(rows.size), value, rows)


def _metric(relation: Relation) -> tuple[_core.Metric, list[float]]:
    """A built-in ``relation``'s native metric and weights, as ``_core``'s row kernels take them."""
    return native_metric(relation.name), _weights(relation)


def _weights(relation: Relation) -> list[float]:
    return [] if relation.weights is None else relation.weights.tolist()


def _ball_members(ball: dict[str, NDArray[Any]], centre: int) -> list[int]:
    """The values within the radius of ``ball`` (a CSR relation) of value ``centre``, itself
    included."""
    start, stop = int(ball["offsets"][centre]), int(ball["offsets"][centre + 1])
    return [centre] + [int(u) for u in ball["targets"][start:stop]]


def _first_rows(row_value: NDArray[np.int64], values: int) -> NDArray[np.int64]:
    """Lowest row index holding each value."""
    first = np.full(values, len(row_value), dtype=np.int64)
    np.minimum.at(first, row_value, np.arange(len(row_value), dtype=np.int64))
    return first


def _clique_radius(eps: float) -> float | None:
    """A ball radius r whose neighbour threshold, doubled, stays inside ε's.

    With ``thr(x) = x + 1e-9·max(1, x)`` (docs/design/privacy-model.md), rows a, b with computed
    distances ``d(x, a), d(x, b) <= thr(r)`` have ``d(a, b) <= 2·thr(r)`` by the triangle
    inequality. r is chosen so that ``2·thr(r) = ε + 0.5e-9·max(1, ε)``: distances of exactly ε/2
    are inside the ball, and ``thr(ε) - 2·thr(r) = 0.5e-9·max(1, ε)`` absorbs float rounding in
    the three computed distances (relative error about s·1e-16 each). None when that r is
    not positive (ε below about 1.5e-9); then only identical values form the clique.
    """
    scale = max(1.0, eps)
    target = eps / 2.0 + 0.25e-9 * scale  # the wanted thr(r)
    radius = target - 1e-9 * max(1.0, eps / 2.0)
    if radius <= 0.0:
        return None
    # max(1, r) was approximated by max(1, ε/2); make sure the margin really holds.
    limit = _core.neighbour_threshold(eps) - 0.4e-9 * scale
    while 2.0 * _core.neighbour_threshold(radius) > limit:
        radius -= 1e-12 * scale
    return radius
