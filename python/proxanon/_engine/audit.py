"""The independent verifier of (epsilon, delta)^k-dissimilarity: its counts and its report
(docs/design/privacy-model.md; Wang and Liu, XColor, §II).

:func:`proxanon.audit` takes a table's sensitive values and a partition of its rows into
groups and says, for every group and every row, whether the privacy principle holds. For the
built-in metrics the neighbour counts inside groups come from the one native implementation
that the engine's class counts also use (``class_counts.hpp``: pairwise tests on a group's few
distinct values, an index over its own values beyond that, so a class of m rows costs
O(m log m) plus its candidate pairs, never m^2 distance tests); the tests check it against an
independent brute force. User distance functions and precomputed graphs are counted here, in
blocks. The reading of the inputs is shared with the engine too: the parameter checks
(``_validate``, ``_validate.epsilon``) and how a ``metric`` argument becomes a distance
(``distances.resolve``, and ``distances.pairwise`` for user functions and graphs).

What is computed (docs/design/definitions.md and docs/design/privacy-model.md):

- Distance between two rows x, y with weights w (docs/design/definitions.md):
  ``l1 = sum_i w_i |x_i - y_i|``, ``l2 = sqrt(sum_i w_i (x_i - y_i)^2)``,
  ``linf = max_i w_i |x_i - y_i|``.
- x and y are epsilon-neighbours iff ``distance <= epsilon + 1e-9 * max(1, epsilon)``.
  Identical values are neighbours; a row is not its own neighbour.
- For a group G and member v, ``D_G(v)`` is the number of other members of G that are
  epsilon-neighbours of v, and ``t(G) = floor((1 - delta) * (|G| - 1) + 1e-9)``.
  v *violates* when ``D_G(v) > t(G)``; G violates (epsilon, delta)-dissimilarity when one of
  its members does.
- ``risk(G) = max_v D_G(v) / (|G| - 1)``, and 1 when |G| = 1. D_G(v) <= t(G) is the same
  test as ``risk(G) <= 1 - delta`` (up to 1e-9) for every group of two or more rows. A group
  of one row has risk 1 by convention but no neighbours, so it never *violates*; it fails the
  principle only by being small (|G| < k, i.e. whenever k >= 2).
- G is *small* when ``|G| < k``. The partition satisfies (epsilon, delta)^k-dissimilarity iff
  no group is small and no group violates.
- ``vulnerability`` is the fraction of groups that violate (epsilon, delta)-dissimilarity,
  not counting smallness (paper §VI, Fig. 4).

Cost (built-in metrics): O(n log n · s) plus the candidate pairs of large groups, on all
cores; a distance function or graph: O(sum_G |G|^2) evaluations in chunks of at most
``_CHUNK_ROWS`` x ``_CHUNK_ROWS``, so memory stays bounded whatever the group sizes.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _core, _validate
from proxanon._engine.relations import metric as native_metric
from proxanon._group_runs import group_runs
from proxanon._results.audit import AuditReport, ColumnExposure
from proxanon.distances import Relation, pairwise, resolve

#: Rows per chunk when a distance function or a graph is audited (chunk x chunk at most).
_CHUNK_ROWS = 1024




def audit_arrays(
    sensitive: Any,
    groups: Any,
    *,
    k: int,
    epsilon: float,
    delta: float,
    metric: Any = "l1",
    weights: Any = None,
    n_threads: int | None = None,
) -> AuditReport:
    """Checks a partition against (epsilon, delta)^k-dissimilarity (docs/design/privacy-model.md;
    Wang and Liu, XColor, §II).

    Args:
        sensitive: sensitive values, shape (n, s) or (n,), already on a common scale
            (the built-in metrics expect components in [0, 1]). Not modified.
        groups: one integer group id per row, or -1 for a row left out of the release
            (suppressed); ids need not be contiguous. Not modified.
        k: minimum group size.
        epsilon: proximity threshold; rows within ``epsilon`` (inclusive, with the
            tolerance ``_validate.NEIGHBOUR_TOLERANCE``) are neighbours.
        delta: in [0, 1]; a group's risk may be at most ``1 - delta``.
        metric: ``"l1"``, ``"l2"`` or ``"linf"``, weighted as in docs/design/definitions.md.
        weights: one non-negative weight per sensitive column; default ``1/s`` each.
        n_threads: threads over which classes are counted (built-in metrics); default
            every core this process may use. The report is the same for any number.

    Returns:
        An :class:`AuditReport` with the verdict, per-group risk and per-row neighbour
        counts ``D_G(v)``.

    Raises:
        ValueError, TypeError: on malformed input; the message names the parameter.

    Cost: see the module docstring; memory O(n * s) plus bounded blocks of distances.
    """
    sens = _validate.float_matrix(sensitive, "sensitive")
    labels = _validate.group_labels(groups, sens.shape[0])
    return audit_owned(sens, labels, k=k, epsilon=epsilon, delta=delta, metric=metric,
                       weights=weights, n_threads=n_threads)


def audit_owned(sens: NDArray[np.float64], labels: NDArray[np.int64], *, k: int,
                epsilon: float, delta: float, metric: Any = "l1", weights: Any = None,
                n_threads: int | None = None) -> AuditReport:
    """:func:`audit_arrays` on arrays already checked, which it reads without copying:
    ``sens`` finite float64 of shape (n, s), ``labels`` int64 group ids >= -1 (the
    package's own arrays: at 3M rows the two copies were 100 MB of fresh memory per
    audit)."""
    n, s = sens.shape
    relation = resolve(metric, weights, s, n)
    threads = _validate.threads(n_threads)
    kept = labels >= 0
    if not kept.all():
        # Rows labelled -1 were suppressed (left out of the release): audit the others, with
        # a precomputed graph cut down to the pairs among them.
        rows = np.flatnonzero(kept)
        if rows.size == 0:
            raise ValueError("groups: every row is suppressed (-1); there is nothing to audit")
        if relation.kind == "graph":
            metric = relation.matrix.tocsr()[rows][:, rows]
        inner = audit_owned(sens[rows], labels[rows], k=k, epsilon=epsilon, delta=delta,
                            metric=metric, weights=weights, n_threads=threads)
        counts = np.full(n, -1, dtype=np.int64)
        counts[rows] = inner.neighbour_counts
        return replace(inner, violating_rows=_frozen(rows[inner.violating_rows]),
                       neighbour_counts=_frozen(counts),
                       suppressed_rows=_frozen(np.flatnonzero(~kept).astype(np.int64)))
    eps = _validate.epsilon(epsilon, graph=relation.kind == "graph")
    k, eps, d = _validate.privacy(k, eps, delta, n, measured=True, judged=True)
    metric = relation.name
    threshold = relation.threshold(eps)

    order, group_ids, starts, sizes = group_runs(labels)

    if relation.weights is None:  # a distance function or a graph
        sorted_counts = np.zeros(n, dtype=np.int64)
        _count_by_relation(relation, sens[order], starts, sizes, threshold, sorted_counts,
                           order)
    else:
        w = relation.weights
        # Zero-weight columns add exactly 0 to every distance (and never raise a maximum);
        # min_component has positive weights only.
        used = [j for j in range(s) if w[j] != 0.0]
        columns = [sens[:, j] for j in used]
        col_weights = [float(w[j]) for j in used]
        _check_no_overflow(columns, col_weights, metric, threshold)
        # Counted in the order of the runs: no second ordering by label, no gather.
        sorted_counts = _core.class_counts(np.ascontiguousarray(sens), native_metric(metric),
                                           [float(x) for x in w], eps, order, starts,
                                           threads=threads)
    exposures = _column_exposures(sens, relation, eps, d, order, starts, sizes, threads)

    neighbour_counts = np.empty(n, dtype=np.int64)
    neighbour_counts[order] = sorted_counts

    max_per_group = np.maximum.reduceat(sorted_counts, starts)
    t = _allowed(sizes, d)
    group_risk = np.ones(group_ids.shape[0], dtype=np.float64)
    multi = sizes > 1
    group_risk[multi] = max_per_group[multi] / (sizes[multi] - 1).astype(np.float64)

    # A group of one row has no neighbours but risk 1 (docs/design/privacy-model.md): it fails where
    # delta > 0.
    alone = (sizes == 1) & _validate.single_row_violates(d)
    group_violates = (max_per_group > t) | alone
    row_t = np.repeat(t, sizes)
    violating_rows = np.sort(order[(sorted_counts > row_t) | np.repeat(alone, sizes)]
                             ).astype(np.int64)
    violating_groups = group_ids[group_violates]
    small_groups = group_ids[sizes < k]

    n_groups = int(group_ids.shape[0])
    return AuditReport(
        satisfied=bool(violating_groups.shape[0] == 0 and small_groups.shape[0] == 0),
        max_risk=float(group_risk.max()),
        vulnerability=float(violating_groups.shape[0]) / n_groups,
        n_groups=n_groups,
        k=k,
        epsilon=eps,
        delta=d,
        metric=relation.label,
        group_ids=_frozen(group_ids),
        group_sizes=_frozen(sizes),
        group_risk=_frozen(group_risk),
        violating_groups=_frozen(violating_groups),
        small_groups=_frozen(small_groups),
        violating_rows=_frozen(violating_rows),
        neighbour_counts=_frozen(neighbour_counts),
        weights=None if relation.weights is None else _frozen(relation.weights.copy()),
        columns=exposures,
    )


#: Built-in metrics over components, under which one column alone has a distance: the
#: metric's between two values that differ in that column only.
_COMPONENT_METRICS = ("l1", "l2", "linf", "min_component")


def _column_exposures(sens: NDArray[np.float64], relation: Relation, eps: float, d: float,
                      order: NDArray[np.int64], starts: NDArray[np.int64],
                      sizes: NDArray[np.int64], threads: int) -> tuple[ColumnExposure, ...]:
    """Each sensitive column's own exposure (docs/design/privacy-model.md#each-column-alone):
    the class counts of that column alone, under the metric's distance between values that
    differ in it only (``w_j |x_j - y_j|``; L2: ``sqrt(w_j) |x_j - y_j|``, the same one
    column under L2 with weight w_j). Empty with one column or a metric that is not a
    built-in over components. Cost: one class count per column, as the joint audit's."""
    s = sens.shape[1]
    if (s < 2 or relation.weights is None or relation.label not in _COMPONENT_METRICS
            or relation.name not in _COMPONENT_METRICS):
        return ()
    t = _allowed(sizes, d)
    row_t = np.repeat(t, sizes)
    out = []
    for j in range(s):
        counts = _core.class_counts(np.ascontiguousarray(sens[:, j:j + 1]),
                                    native_metric(relation.name),
                                    [float(relation.weights[j])], eps, order, starts,
                                    threads=threads)
        most = np.maximum.reduceat(counts, starts)
        multi = sizes > 1
        risk = np.ones(sizes.shape[0], dtype=np.float64)
        risk[multi] = most[multi] / (sizes[multi] - 1).astype(np.float64)
        out.append(ColumnExposure(column=f"component {j}", max_risk=float(risk.max()),
                                  violating_groups=int((most > t).sum()),
                                  violating_rows=int((counts > row_t).sum())))
    return tuple(out)


def _allowed(sizes: NDArray[np.int64], d: float) -> NDArray[np.int64]:
    """t(G) per group of ``sizes`` rows: the most epsilon-neighbours a row may have."""
    allowed: NDArray[np.int64] = np.floor((1.0 - d) * (sizes - 1).astype(np.float64)
                                          + _validate.ALLOWANCE_TOLERANCE).astype(np.int64)
    return allowed


def _check_no_overflow(columns: list[NDArray[np.float64]], col_weights: list[float],
                       metric: str, threshold: float) -> None:
    """Refuses data whose distances may overflow to inf when inf could be the wrong verdict.

    Every term of a pair's distance is at most the same term between the column minimum and
    maximum, so when those terms and their sum are finite nothing overflows. Otherwise a
    term that overflows is truly at least ``min(1, w) * MAX`` (L2: ``sqrt`` of that) with
    ``w`` the smallest weight, so reading it as inf ("not a neighbour") is still right for
    any threshold well below that; above it, refuse.
    """
    if not columns:
        return
    weights = np.array(col_weights)
    with np.errstate(over="ignore"):
        spans = np.array([column.max() - column.min() for column in columns])
        terms = weights * (spans * spans if metric == "l2" else spans)
        total = terms.sum()
    if np.isfinite(spans).all() and np.isfinite(terms).all() and np.isfinite(total):
        return
    floor = min(1.0, float(weights.min())) * float(np.finfo(np.float64).max)
    safe = math.sqrt(floor) if metric == "l2" else floor
    if threshold >= 0.5 * safe:
        raise ValueError(
            f"epsilon={threshold:g} is so large that distances between these sensitive "
            "values overflow floats before they can be compared with it; put the values on a "
            "common scale such as [0, 1] (docs/design/definitions.md) and epsilon with them"
        )


def _count_by_relation(relation: Relation, ordered: NDArray[np.float64],
                       starts: NDArray[np.int64], sizes: NDArray[np.int64], threshold: float,
                       sorted_counts: NDArray[np.int64], order: NDArray[np.int64]) -> None:
    """D_G(v) for a distance function or a precomputed graph, over rows sorted by group.

    Consecutive groups are taken together in chunks of about ``_CHUNK_ROWS`` rows, so a
    function is called once per chunk (not per group or pair); only pairs inside one group
    count. A group larger than a chunk is compared in row blocks.
    """
    group_of = np.repeat(np.arange(sizes.shape[0]), sizes)
    ends = starts + sizes
    g = 0
    while g < sizes.shape[0]:
        first = g
        rows = 0
        while g < sizes.shape[0] and (rows == 0 or rows + sizes[g] <= _CHUNK_ROWS):
            rows += int(sizes[g])
            g += 1
        lo, hi = int(starts[first]), int(ends[g - 1])
        same = group_of[lo:hi]
        for a in range(lo, hi, _CHUNK_ROWS):
            b = min(a + _CHUNK_ROWS, hi)
            near = _near(relation, ordered, order, slice(a, b), slice(lo, hi), threshold)
            near &= same[a - lo:b - lo, None] == same[None, :]
            sorted_counts[a:b] += np.count_nonzero(near, axis=1) - 1  # minus the row itself


def _near(relation: Relation, ordered: NDArray[np.float64], order: NDArray[np.int64],
          left: slice, right: slice, threshold: float) -> NDArray[np.bool_]:
    """Neighbour matrix between two blocks of the group-sorted rows (a row is its own)."""
    if relation.kind == "graph":
        matrix = relation.matrix.tocsr()
        rows, cols = order[left], order[right]
        block = matrix[rows][:, cols].toarray() != 0
        block |= matrix[cols][:, rows].toarray().T != 0
        block |= rows[:, None] == cols[None, :]
        return np.asarray(block)
    near = pairwise(relation, ordered[left], ordered[right]) <= threshold
    x, y = ordered[left], ordered[right]
    identical = (x[:, None, :] == y[None, :, :]).all(axis=2)  # same value: always neighbours
    return np.asarray(near | identical)


def _frozen(array: NDArray[Any]) -> NDArray[Any]:
    array.setflags(write=False)
    return array
