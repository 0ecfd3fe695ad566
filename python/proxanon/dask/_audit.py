"""``audit`` on a dask DataFrame: the classes of a published table across all partitions.

Invariant: each part audited holds every row of each of its classes, in table order, so its
audit is exact, and :func:`assemble` joins disjoint parts into :func:`proxanon.audit`'s
report on the whole table. Cost: one pass for ranges and lengths and one shuffle by a hash
of the QI tuple (none when the caller knows both, as ``anonymize`` does); each part's audit
near linear in its rows; the driver holds one entry per class and one count per row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._results.audit import AuditReport, joined_exposures
from proxanon.audit import audit_arrays
from proxanon.dask._malloc import roomy
from proxanon.distances import as_arguments
from proxanon.generalize import load_hierarchies
from proxanon.hierarchy import Hierarchy
from proxanon.tables import (
    encode_sensitive,
    is_number,
    refuse_ranges_of_others,
    role_columns,
    scale_ranges,
    table_groups,
)

#: Hidden column: a row's position in the whole table (partition order, then row order).
POSITION = "_proxanon_position"


def check_columns(ddf: Any, quasi_identifiers: str | Sequence[str],
                  sensitive: str | Sequence[str]) -> tuple[list[str], list[str]]:
    """The QI and sensitive column names, checked against the frame's columns (its meta)."""
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"ddf must be a dask DataFrame, got {type(ddf).__name__}")
    meta = ddf._meta
    qi_cols, sens_cols = role_columns(meta, quasi_identifiers, sensitive)
    for name in sens_cols:
        if getattr(meta[name].dtype, "kind", None) in ("m", "M"):
            raise ValueError(f"sensitive column {name!r} holds dates or durations; on Dask "
                             "convert it to numbers first (e.g. .astype('int64'))")
    return qi_cols, sens_cols


def numeric_sensitive(meta: pd.DataFrame, sens_cols: list[str],
                      hierarchies: Mapping[str, Any] | None) -> list[str]:
    """The sensitive columns scaled by min-max (numeric, without a taxonomy)."""
    return [c for c in sens_cols
            if (hierarchies is None or c not in hierarchies) and is_number(meta[c].dtype)]


def missing_counts(ddf: Any, columns: list[str]) -> Any:
    """A lazy count of missing values per column."""
    return ddf[columns].isna().sum()


def refuse_missing(counts: pd.Series) -> None:
    """A clear error naming the columns with missing values (as one machine refuses them)."""
    bad = {str(c): int(v) for c, v in counts.items() if int(v) > 0}
    if bad:
        raise ValueError(f"column(s) with missing values (count per column): {bad}; drop or "
                         "fill those rows first (e.g. ddf.dropna(subset=[...]))")


def global_ranges(minima: pd.Series, maxima: pd.Series,
                  metric: Any) -> dict[str, tuple[float, float]]:
    """The ranges the numeric sensitive columns are scaled by: the whole table's (min, max)
    per column, but those :func:`proxanon.tables.scale_ranges` fixes for ``metric``. An
    infinite value is refused by column, as one machine refuses it."""
    # Integers stay exact (a float64 merges those beyond 2^53): scale_column scales an
    # integer column by whole-number bounds exactly.
    own = {c: (_validate.exact_number(minima[c]), _validate.exact_number(maxima[c]))
           for c in minima.index}
    for column, (low, high) in own.items():
        if not (math.isfinite(low) and math.isfinite(high)):
            raise ValueError(
                f"sensitive column {column!r} holds an infinite value (its range is {low} to "
                f"{high}); drop or replace those rows first (e.g. "
                f"ddf[np.isfinite(ddf[{column!r}])])")
    return {**own, **scale_ranges(metric, list(own), None)}


def starts(counts: Any) -> NDArray[np.int64]:
    """Where each of consecutive blocks of ``counts`` rows starts: 0, then running sums."""
    return np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))[:-1]]).astype(
        np.int64)


def in_order(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``frame`` with its rows in ascending order of ``column`` (stable; the frame itself
    when they already are, as they mostly are)."""
    values = frame[column].to_numpy()
    if np.any(values[1:] < values[:-1]):
        return frame.sort_values(column, kind="stable")
    return frame


@roomy
def _with_positions(frame: pd.DataFrame, offsets: NDArray[np.int64],
                    partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    start = 0 if partition_info is None else int(offsets[partition_info["number"]])
    return frame.assign(**{POSITION: np.arange(start, start + len(frame), dtype=np.int64)})


@dataclass(frozen=True, kw_only=True)
class PartAudit:
    """What the audit of each part (whole classes) reads: the columns, the whole table's ``ranges``
    of its numeric sensitive columns, the privacy settings and the loaded taxonomies."""

    qi_cols: list[str]
    sens_cols: list[str]
    ranges: Mapping[str, tuple[float, float]]
    k: int
    epsilon: float
    delta: float
    metric: Any
    weights: Any
    hierarchies: dict[str, Hierarchy]


@roomy
def _audit_part(frame: pd.DataFrame, settings: PartAudit) -> PartResult:
    """One hash bucket of classes (:func:`audit_rows` after putting its rows in table
    order)."""
    frame = in_order(frame, POSITION)  # a shuffle delivers rows in any order
    return audit_rows(frame, frame[POSITION].to_numpy(dtype=np.int64), settings)


#: What the audit of one part sends to the driver: its classes (first row's QI values,
#: size, risk, whether it violates), its rows' positions in the table and neighbour counts,
#: and its report without the per-row counts (None for an empty part).
PartResult = tuple[pd.DataFrame, NDArray[np.int64], NDArray[np.int64], AuditReport | None]


def audit_rows(frame: pd.DataFrame, positions: NDArray[np.int64], settings: PartAudit
               ) -> PartResult:
    """The audit of whole classes: ``frame`` holds every row of each of its classes, in
    table order (``positions``: each row's place in the table), so its audit is exact.
    Numeric sensitive columns are scaled by the whole table's ``ranges``, columns with a
    taxonomy compared by tree distance (as one machine encodes them)."""
    qi_cols = settings.qi_cols
    if len(frame) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return pd.DataFrame(columns=qi_cols), empty, empty, None
    groups = table_groups(frame, qi_cols)
    # One thread per task: a worker runs as many tasks at once as it has threads.
    values, relation = encode_sensitive(frame, settings.sens_cols, settings.hierarchies,
                                        settings.metric, settings.weights, settings.ranges)
    metric, weights = as_arguments(relation)
    report = audit_arrays(values, groups, k=settings.k, epsilon=settings.epsilon,
                          delta=settings.delta, metric=metric, weights=weights, n_threads=1)
    # Each class's first row, by id (ids are 0 .. classes-1; a hash pass, not a sort).
    firsts = pd.Series(groups).drop_duplicates()
    first_rows = firsts.index.to_numpy()[np.argsort(firsts.to_numpy())]
    classes = frame[qi_cols].iloc[first_rows].reset_index(drop=True).assign(
        size=report.group_sizes, risk=report.group_risk,
        violates=np.isin(report.group_ids, report.violating_groups))
    counts = np.asarray(report.neighbour_counts)
    return classes, positions, counts, replace(report, neighbour_counts=counts[:0])


def audit(ddf: Any, *, quasi_identifiers: str | Sequence[str], sensitive: str | Sequence[str],
          k: int, epsilon: float, delta: float, metric: Any = "l1", weights: Any = None,
          sensitive_ranges: Mapping[str, tuple[float, float]] | None = None,
          hierarchies: Any = None, classes_whole: bool = False) -> AuditReport:
    """Checks a published dask DataFrame against (epsilon, delta)^k-dissimilarity.

    Rows that share their published QI values are one class, wherever they lie: rows are
    shuffled by a hash of the QI tuple so that each class lands whole in one partition, and
    each partition is audited by :func:`proxanon.audit.audit_arrays` in a task. Sensitive
    columns are scaled by the whole table's range (``sensitive_ranges`` when given); those
    with a taxonomy in ``hierarchies`` are compared by tree distance, as
    :func:`proxanon.audit` compares them. The
    report is :func:`proxanon.audit`'s on the computed table: group ids in sorted order of
    the QI tuples, row arrays in the table's row order (partition by partition).
    ``classes_whole=True`` skips the shuffle: the caller knows that no published tuple
    occurs in two partitions (``anonymize`` ends its global pass only when no tuple is
    found in two pieces).

    Cost: one pass for ranges and partition lengths, one shuffle of the table; the driver
    holds one entry per class and one per row (``neighbour_counts``).
    """
    qi_cols, sens_cols = check_columns(ddf, quasi_identifiers, sensitive)
    lengths = ddf.map_partitions(len)
    taxonomies = load_hierarchies(hierarchies, sens_cols, list(ddf.columns))
    numeric = numeric_sensitive(ddf._meta, sens_cols, taxonomies)
    given = _validate.ranges(sensitive_ranges, sens_cols) or {}
    refuse_ranges_of_others(given, numeric)
    lengths_v, missing, minima, maxima = dask.compute(
        lengths, missing_counts(ddf, qi_cols + sens_cols), ddf[numeric].min(),
        ddf[numeric].max())
    refuse_missing(missing)
    sizes = np.asarray(lengths_v, dtype=np.int64)
    if int(sizes.sum()) == 0:
        raise ValueError("the table is empty: there is nothing to audit")
    # Every numeric column by one range over the whole table: its own, or the one given.
    ranges = {**global_ranges(minima, maxima, metric), **given}
    settings = known_settings(quasi_identifiers=qi_cols, sensitive=sens_cols,
                              columns=list(ddf.columns), k=k, epsilon=epsilon, delta=delta,
                              metric=metric, weights=weights, hierarchies=taxonomies,
                              ranges=ranges)
    return audit_parts(ddf, settings, sizes, classes_whole=classes_whole)


def known_settings(*, quasi_identifiers: list[str], sensitive: list[str], columns: list[Any],
                   k: int, epsilon: float, delta: float, metric: Any, weights: Any,
                   hierarchies: Any, ranges: Mapping[str, tuple[float, float]]) -> PartAudit:
    """The settings of :func:`audit` for a table (of ``columns``) whose numeric ranges
    (``ranges``, as :func:`global_ranges` gives them over the table) the caller knows, and
    that has no missing value: each part whose classes are whole is then audited by
    :func:`audit_rows` and the results joined by :func:`assemble`, without :func:`audit`'s
    first pass over the table. ``anonymize`` knows them when it left no row out."""
    taxonomies = load_hierarchies(hierarchies, sensitive, columns)
    return PartAudit(qi_cols=quasi_identifiers, sens_cols=sensitive, ranges=ranges, k=k,
                     epsilon=epsilon, delta=delta, metric=metric, weights=weights,
                     hierarchies=taxonomies)


def audit_parts(ddf: Any, settings: PartAudit, sizes: NDArray[np.int64], *,
                classes_whole: bool) -> AuditReport:
    """The audit of every part of ``ddf`` (partition lengths ``sizes``) as ``settings`` say,
    after a shuffle by the QI tuple unless ``classes_whole``, combined into one report."""
    qi_cols, sens_cols = settings.qi_cols, settings.sens_cols
    numeric = numeric_sensitive(ddf._meta, sens_cols, settings.hierarchies)
    offsets = starts(sizes)
    placed = ddf[qi_cols + sens_cols].map_partitions(
        _with_positions, offsets, meta=ddf._meta[qi_cols + sens_cols].assign(
            **{POSITION: np.zeros(0, dtype=np.int64)}))
    # The shuffle takes text column labels only: others travel under stand-in names.
    labels = {c: f"_proxanon_column_{i}" for i, c in enumerate(qi_cols + sens_cols)
              if not isinstance(c, str)}
    if labels and not classes_whole:
        placed = placed.rename(columns=labels)
    shuffled = placed if classes_whole else placed.shuffle(
        on=[labels.get(c, c) for c in qi_cols], npartitions=ddf.npartitions)
    restore = {} if classes_whole else {v: c for c, v in labels.items()}
    parts = [dask.delayed(_audit_part)(p.rename(columns=restore) if restore else p, settings)
             for p in shuffled.to_delayed()]
    return assemble(list(dask.compute(*parts)), settings, numeric, int(sizes.sum()))


def assemble(results: list[PartResult], settings: PartAudit, numeric: list[str], n: int
             ) -> AuditReport:
    """One report of ``n`` rows from the audits of its parts (disjoint sets of whole
    classes); ``numeric``: the sensitive columns scaled by their ranges."""
    report = combine([r for r in results if r[3] is not None], settings.qi_cols, n)
    return replace(report.named(settings.sens_cols),
                   scales={c: settings.ranges[c] for c in numeric},
                   taxonomies=tuple(c for c in settings.sens_cols if c in settings.hierarchies))


def combine(results: list[PartResult], qi_cols: list[str], n: int) -> AuditReport:
    """One report from the audits of disjoint sets of whole classes."""
    classes = pd.concat([r[0] for r in results], ignore_index=True)
    order = classes.sort_values(qi_cols, kind="stable").index.to_numpy()
    classes = classes.loc[order].reset_index(drop=True)
    ids = np.arange(len(classes), dtype=np.int64)
    counts = np.full(n, -1, dtype=np.int64)
    for _, positions, row_counts, _ in results:
        counts[positions] = row_counts
    violating_rows = np.sort(np.concatenate([
        r[1][r[3].violating_rows] for r in results if r[3] is not None]))
    first = next(r[3] for r in results if r[3] is not None)
    sizes = classes["size"].to_numpy(dtype=np.int64)
    violating = ids[classes["violates"].to_numpy(dtype=bool)]
    small = ids[sizes < first.k]
    frozen = [np.asarray(a) for a in (ids, sizes, classes["risk"].to_numpy(dtype=np.float64),
                                      violating, small, violating_rows.astype(np.int64), counts)]
    for array in frozen:
        array.setflags(write=False)
    return AuditReport(
        satisfied=bool(violating.size == 0 and small.size == 0),
        max_risk=float(frozen[2].max()), vulnerability=float(violating.size) / ids.size,
        n_groups=int(ids.size), k=first.k, epsilon=first.epsilon, delta=first.delta,
        metric=first.metric, group_ids=frozen[0], group_sizes=frozen[1],
        group_risk=frozen[2], violating_groups=frozen[3], small_groups=frozen[4],
        violating_rows=frozen[5], neighbour_counts=frozen[6], weights=first.weights,
        columns=joined_exposures([r[3].columns for r in results if r[3] is not None]))
