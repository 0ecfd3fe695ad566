"""Turning table columns into the numbers the engine compares (docs/design/definitions.md)."""

from __future__ import annotations

import datetime
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from proxanon import _validate
from proxanon.distances import Relation, componentwise, resolve
from proxanon.hierarchy import Hierarchy


def scale_column(series: pd.Series, name: str | None = None,
                 bounds: tuple[float, float] | None = None) -> NDArray[np.float64]:
    """One sensitive column on [0, 1], as docs/design/definitions.md prescribes for the built-in
    metrics.

    Numeric: ``(x - min) / (max - min)`` (a constant column maps to 0), computed so that it
    stays finite when ``max - min`` overflows (see :func:`span_fraction`). Ordered
    categorical: rank in the given order over ``(number of categories - 1)``, unused
    categories included. Dates and durations (numpy or pyarrow, timezone-aware or not):
    min-max over the time axis, which does not depend on the unit (days or nanoseconds give
    the same numbers up to rounding), so epsilon is a fraction of the column's time span.
    Anything else (text, booleans, complex numbers, unordered categoricals) is refused with a
    message that says what to do; so is a missing or non-finite value. ``bounds``: the
    ``(min, max)`` of a numeric column over a larger table this frame is part of (the Dask
    path scales every partition by the global range); every value must lie within.
    """
    label = name if name is not None else str(series.name)
    if len(series) == 0:
        raise ValueError(f"sensitive column {label!r} is empty: the table needs at least one row")
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        if not dtype.ordered:
            raise ValueError(
                f"sensitive column {label!r} is an unordered categorical; proximity needs an "
                "order: pass pd.Categorical(values, categories=[...], ordered=True)"
            )
        codes = series.cat.codes.to_numpy()
        if (codes < 0).any():
            row = int(np.argmax(codes < 0))
            raise ValueError(
                f"sensitive column {label!r} has a missing or unknown category at "
                f"{_validate.row_of(series.index, row)}; "
                "drop or fill those rows first"
            )
        top = len(dtype.categories) - 1
        return codes.astype(np.float64) / top if top > 0 else np.zeros(len(series))
    if getattr(dtype, "kind", None) in ("m", "M"):  # numpy, pandas and pyarrow times alike
        if bounds is not None:
            raise ValueError(f"sensitive column {label!r} holds dates or durations; a given "
                             "range applies to numeric columns (convert with .astype('int64'))")
        return _scale_times(series, label)
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        hint = (" (convert text that holds numbers with pd.to_numeric)"
                if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
                else "")
        if holds_python_dates(series):
            hint = (" (it holds datetime.date objects: convert them with "
                    f"frame[{label!r}] = pd.to_datetime(frame[{label!r}]))")
        raise ValueError(
            f"sensitive column {label!r} has dtype {dtype}; it must be numeric, a date or "
            "duration, or an ordered categorical (pd.Categorical(values, categories=[...], "
            f"ordered=True)){hint}"
        )
    if pd.api.types.is_integer_dtype(dtype) and (bounds is None or _whole(bounds)):
        return _scale_integers(series, label, bounds)
    values = real_values(series, label, "sensitive")
    lo, hi = float(values.min()), float(values.max())
    if bounds is not None:
        _refuse_outside(label, lo, hi, bounds)
        lo, hi = float(bounds[0]), float(bounds[1])
    return span_fraction(lo, values, lo, hi)


def _whole(bounds: tuple[float, float]) -> bool:
    """Bounds an integer column is scaled by exactly: integers (a float bound keeps the float
    path, compared in floats as given) less than 2^64 apart (the differences are taken in
    64-bit unsigned integers)."""
    return (all(isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_))
                for b in bounds)
            and int(bounds[1]) - int(bounds[0]) < 2**64)


def _refuse_outside(label: str, lo: Any, hi: Any, bounds: tuple[float, float]) -> None:
    if not bounds[0] <= lo <= hi <= bounds[1]:
        raise ValueError(
            f"sensitive column {label!r} has values in [{lo}, {hi}], outside the range "
            f"[{bounds[0]}, {bounds[1]}] it is scaled by (sensitive_ranges, or [0, 1] under "
            "the variational distance, which compares probabilities); pass the column's "
            "true minimum and maximum, or probabilities")


def real_values(series: pd.Series, label: str, role: str) -> NDArray[np.float64]:
    """A numeric column (numpy or pandas/pyarrow extension dtype) as finite float64 values.

    Complex numbers are refused (their imaginary part would be dropped), and so is a missing
    (NA, NaN) or infinite value; messages name the ``role`` ("sensitive",
    "quasi-identifier"), the column and the row.
    """
    if pd.api.types.is_complex_dtype(series.dtype):
        raise ValueError(
            f"{role} column {label!r} holds complex numbers ({series.dtype}); distances and "
            "ranges are taken over real values: split it into two columns (real and "
            "imaginary part) or pass its magnitude"
        )
    values: NDArray[np.float64] = series.to_numpy(dtype=np.float64, na_value=np.nan)
    finite = np.isfinite(values)
    if not finite.all():
        row = int(np.argmax(~finite))
        raise ValueError(
            f"{role} column {label!r} has a missing or non-finite value at "
            f"{_validate.row_of(series.index, row)}; "
            "drop or impute those rows first"
        )
    return values


def _scale_integers(series: pd.Series, label: str,
                    bounds: tuple[float, float] | None = None) -> NDArray[np.float64]:
    """Min-max scaling of an integer column, exact in its integers: beyond 2^53, converting
    the values to floats first would merge or move some (1e17 + 10 and 1e17 + 16 are one
    float), and their differences with them. ``bounds``: integers to scale by instead of
    the column's own min and max (see :func:`_whole`)."""
    missing = series.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"sensitive column {label!r} has a missing or non-finite value at "
            f"{_validate.row_of(series.index, int(np.argmax(missing)))}; drop or impute those "
            "rows first"
        )
    unsigned = pd.api.types.is_unsigned_integer_dtype(series.dtype)
    ticks = series.to_numpy(dtype=np.uint64 if unsigned else np.int64)
    if bounds is None:
        return _exact_min_max(ticks)
    lo, hi = int(bounds[0]), int(bounds[1])
    if ticks.size:
        _refuse_outside(label, int(ticks.min()), int(ticks.max()), (lo, hi))
    return _exact_min_max(ticks, lo, hi)


def _exact_min_max(ticks: NDArray[Any], lo: int | None = None,
                   hi: int | None = None) -> NDArray[np.float64]:
    """``(x - lo) / (hi - lo)`` of 64-bit integers, by default their own min and max, each
    difference exact before its one rounding: as unsigned integers they lie in [0, 2**64)
    even when hi - lo exceeds the int64 range (uint64 arithmetic wraps)."""
    if lo is None or hi is None:
        lo, hi = int(ticks.min()), int(ticks.max())
    offsets = ticks.astype(np.uint64) - np.uint64(lo % 2**64)
    span = float(hi - lo)
    return offsets.astype(np.float64) / span if span > 0 else np.zeros(len(ticks))


def _scale_times(series: pd.Series, label: str) -> NDArray[np.float64]:
    """Min-max scaling of dates or durations, exact in the column's integer ticks."""
    missing = series.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"sensitive column {label!r} has a missing date or duration (NaT) at "
            f"{_validate.row_of(series.index, int(np.argmax(missing)))}; drop or impute those "
            "rows first"
        )
    return _exact_min_max(series.astype(np.int64).to_numpy())  # the unit's ticks (UTC if zoned)


def span_fraction(start: ArrayLike, stop: ArrayLike, lo: float, hi: float
                  ) -> NDArray[np.float64]:
    """``(stop - start) / (hi - lo)`` for ``lo <= start <= stop <= hi``, finite whatever the range.

    The one min-max ratio of the package: a value's place in its column is
    ``span_fraction(lo, x, lo, hi)``, a group's share of a column's range
    ``span_fraction(group_min, group_max, lo, hi)``. When ``hi - lo`` overflows (e.g.
    ``lo = -1e308, hi = 1e308``), numerator and denominator are taken on halved operands,
    which cannot overflow. Halving is exact for normal floats, and a subnormal operand lies
    far below the rounding unit of a difference with a bound that large, so each halved
    difference is the true one halved and rounded once, as in the plain formula: the ratio is
    as accurate and lies in [0, 1]. ``hi == lo`` gives 0.
    """
    a = np.asarray(start, dtype=np.float64)
    b = np.asarray(stop, dtype=np.float64)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if not hi > lo:
        return np.zeros(shape)
    with np.errstate(over="ignore"):
        span = np.float64(hi) - np.float64(lo)
    if np.isfinite(span):
        return np.asarray((b - a) / span, dtype=np.float64)
    return np.asarray((b / 2 - a / 2) / (hi / 2 - lo / 2), dtype=np.float64)


def role_columns(frame: pd.DataFrame, quasi_identifiers: str | Sequence[str],
                 sensitive: str | Sequence[str]) -> tuple[list[str], list[str]]:
    """The quasi-identifier and sensitive column names, each checked by :func:`column_list`;
    a column may play one role only."""
    qi_cols = column_list(frame, quasi_identifiers, "quasi_identifiers")
    sens_cols = column_list(frame, sensitive, "sensitive")
    both = [c for c in qi_cols if c in sens_cols]
    if both:
        raise ValueError(f"column(s) {both} are both quasi-identifier and sensitive; each "
                         "column plays one role")
    return qi_cols, sens_cols


def column_list(frame: pd.DataFrame, columns: str | Sequence[str], role: str) -> list[str]:
    """``columns`` (one name or several) checked against ``frame``: present, unique, non-empty."""
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names:
        raise ValueError(f"{role}: give at least one column name")
    unhashable = [c for c in names if not isinstance(c, Hashable)]
    if unhashable:
        raise TypeError(f"{role}: {unhashable[0]!r} is not a column label; give each column "
                        "by its label (e.g. 'age'), in one flat list")
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{role}: column(s) {missing} not in the table; its columns are "
            f"{list(frame.columns)}"
        )
    repeated = list(dict.fromkeys(c for c in names if names.count(c) > 1))
    if repeated:
        raise ValueError(f"{role}: column(s) {repeated} named more than once")
    for name in names:
        if not isinstance(frame.columns.get_loc(name), int):
            raise ValueError(
                f"{role}: {name!r} names {frame[name].shape[1]} columns of the table (a "
                "duplicated name, or a level of a MultiIndex); give each column a unique name"
            )
    return names


def scale_sensitive(frame: pd.DataFrame, columns: str | Sequence[str],
                    metric: Any = None) -> NDArray[np.float64]:
    """The sensitive columns of ``frame`` as an ``(n, len(columns))`` float array on [0, 1]
    (by :func:`scale_ranges` for ``metric``)."""
    names = column_list(frame, columns, "sensitive")
    ranges = scale_ranges(metric, names, None)
    return np.column_stack([scale_column(frame[c], c, ranges.get(c)) for c in names])


def scale_ranges(metric: Any, columns: Sequence[str],
                 ranges: Mapping[str, tuple[float, float]] | None,
                 ) -> dict[str, tuple[float, float]]:
    """The ranges sensitive columns are scaled by instead of their own: ``ranges`` where
    given; under the variational distance, which compares probability vectors, [0, 1] for
    every other column (rescaled by their own range, probabilities 0.45 and 0.5 would be 1.0
    apart)."""
    if not (isinstance(metric, str) and metric.lower() == "variational"):
        return dict(ranges or {})
    return {**{c: (0.0, 1.0) for c in columns}, **(ranges or {})}


def is_number(dtype: Any) -> bool:
    """Numbers proper, the sensitive columns scaled by a (min, max): not booleans, not
    categoricals."""
    return bool(pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
                and not isinstance(dtype, pd.CategoricalDtype))


def refuse_ranges_of_others(ranges: Mapping[str, tuple[float, float]] | None,
                            numeric: Sequence[str]) -> None:
    """A ``sensitive_ranges`` entry for a column that no range scales (an ordered
    categorical, a date or duration, a column with a taxonomy) is refused by name: it would
    be ignored."""
    for column in ranges or {}:
        if column not in numeric:
            raise ValueError(
                f"sensitive_ranges names {column!r}, which is not scaled by a range (an ordered "
                "categorical goes by rank, a date or duration by its time span, a column "
                "with a taxonomy by tree distance); a range applies to numeric sensitive "
                f"columns only: drop {column!r} from sensitive_ranges")


def numeric_scales(data: pd.DataFrame, columns: Sequence[str], hierarchies: Mapping[str, Any],
                   metric: Any, ranges: Mapping[str, tuple[float, float]] | None,
                   ) -> dict[str, tuple[float, float]]:
    """Per numeric sensitive column without a taxonomy, the ``(low, high)`` that
    :func:`scale_column` maps onto [0, 1]: the fixed range of :func:`scale_ranges` where there
    is one, else the column's own min and max. A report reads epsilon in a column's units
    from it."""
    fixed = scale_ranges(metric, columns, ranges)
    scales = {}
    for column in columns:
        if column in hierarchies or not is_number(data[column].dtype):
            continue
        scales[column] = fixed.get(column) or (_validate.exact_number(data[column].min()),
                                               _validate.exact_number(data[column].max()))
    return scales


def encode_sensitive(data: pd.DataFrame, columns: list[str], hierarchies: dict[str, Hierarchy],
                     metric: Any, weights: Any,
                     ranges: Mapping[str, tuple[float, float]] | None = None,
                     ) -> tuple[NDArray[np.float64], Relation]:
    """Sensitive columns as numbers, and the relation that compares them.

    A column with a hierarchy is coded by leaf index and compared by taxonomy distance
    (height of the LCA over the tree height; with epsilon = 0 this is exact-value
    diversity); the others are scaled to [0, 1] (docs/design/definitions.md), by ``ranges[column]``
    where given.
    """
    taxonomies = [hierarchies.get(c) for c in columns]
    refuse_ranges_of_others(ranges, [c for c in columns
                                     if c not in hierarchies and is_number(data[c].dtype)])
    ranges = scale_ranges(metric, columns, ranges)
    codes = []
    for column, tree in zip(columns, taxonomies, strict=True):
        if tree is None:
            codes.append(scale_column(data[column], column, ranges.get(column)))
        else:
            values = data[column]
            if isinstance(values.dtype, pd.CategoricalDtype):
                values = values.astype(object)
            codes.append(tree.leaf_index(values.to_numpy(), column=column).astype(np.float64))
    sens = np.column_stack(codes)
    relation = resolve(metric, weights, len(columns), len(data))
    if any(t is not None for t in taxonomies):
        if relation.kind != "builtin" or relation.label == "variational":
            raise ValueError(
                "sensitive columns with a hierarchy are compared by taxonomy distance, which "
                "combines with metric 'l1', 'l2', 'linf' or 'min_component' only")
        relation = componentwise(relation, taxonomies)
    return sens, relation


def table_groups(table: Any, quasi_identifiers: list[str]) -> NDArray[np.int64]:
    """Group id per row of a published table: rows sharing their QI values, ids in sorted
    order of those values (how :func:`audit` groups a table)."""
    labels = table.groupby(quasi_identifiers, sort=True, dropna=False, observed=True).ngroup()
    ids: NDArray[np.int64] = labels.to_numpy(dtype=np.int64)
    return ids


def holds_python_dates(series: pd.Series) -> bool:
    """Whether an object column holds only ``datetime.date`` (or ``datetime.datetime``)
    values: pandas keeps those as objects, though they stand for a datetime column."""
    values = series.to_numpy()
    return (series.dtype == object and len(values) > 0
            and all(isinstance(v, datetime.date) for v in values))


def ordered_domain(series: pd.Series) -> tuple[NDArray[np.int64], tuple[Any, ...]]:
    """Each value's index in the column's ordered domain (-1 for a missing value), and that
    domain: an ordered categorical's categories in their order (unused ones included);
    otherwise the sorted distinct values, or, for values of mixed types, the distinct values
    sorted by their text."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype) and dtype.ordered:
        return (series.cat.codes.to_numpy().astype(np.int64),
                tuple(dtype.categories.tolist()))
    values = series.astype(object) if isinstance(dtype, pd.CategoricalDtype) else series
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # values of mixed types: order them by their text
        codes, raw = pd.factorize(values)
        order = sorted(range(len(raw)), key=lambda i: str(raw[i]))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
        uniques = [raw[i] for i in order]
    return np.asarray(codes, dtype=np.int64), tuple(pd.Index(uniques).tolist())

