"""Nested numeric bands (:meth:`proxanon.hierarchy.Hierarchy.from_intervals`).

Level ``j`` puts a value ``v`` in the band starting at
``origin + floor((v - origin) / widths[j]) * widths[j]``. The widths must be positive,
increasing, and each a whole multiple of the one below, so every band lies inside one band
of the next level (docs/guide/hierarchies.md). Band numbers are exact: int64 arithmetic
for whole values, floats with a relative ``DECIMAL_TOLERANCE`` below a boundary counting as
on it otherwise, and values too far from the origin to number exactly are refused.
Cost: O(values log values) for the distinct values, then O(distinct × levels).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pandas.api.extensions import ExtensionArray

from proxanon._taxonomy.labels import canonical, checked_root
from proxanon._validate import DECIMAL_TOLERANCE

#: Largest magnitude up to which every integer is exactly representable as a float64.
_EXACT_FLOAT_INT = 2.0**53


def interval_paths(values: Any, widths: Sequence[float], *, origin: float,
                   root: str) -> tuple[list[tuple[str, ...]], list[str]]:
    """The root-first paths of the bands over the distinct ``values``, leaves ascending."""
    numbers_, integral = _numeric_values(values, "values")
    origin_value = _finite_real(origin, "origin")
    width_values = _check_widths(widths)
    root_label = checked_root(root)
    integral = (
        integral
        and float(origin_value).is_integer()
        and all(float(w).is_integer() for w in width_values)
    )
    distinct = np.unique(numbers_)
    leaf_labels = [canonical(v) or "" for v in distinct.tolist()]
    _check_band_range(distinct, origin_value, width_values, integral)
    if integral:
        levels = _whole_bands(distinct.astype(np.int64), int(origin_value), width_values)
    else:
        levels = _decimal_bands(distinct.astype(np.float64), float(origin_value),
                                width_values)
    paths = [
        (root_label, *(level[i] for level in reversed(levels)), leaf_labels[i])
        for i in range(len(leaf_labels))
    ]
    return paths, [f"from_intervals: value {label!r}" for label in leaf_labels]


def _whole_bands(ints: NDArray[np.int64], start: int,
                 width_values: list[float]) -> list[list[str]]:
    """Per level, the ``"a-b"`` label of each value's band (whole values and widths)."""
    levels: list[list[str]] = []
    previous: NDArray[np.int64] | None = None
    previous_width = 1
    for width_float in width_values:
        width = int(width_float)
        if previous is None:
            index = (ints - start) // width
        else:
            index = previous // (width // previous_width)
        previous, previous_width = index, width
        starts = start + index * width
        levels.append([f"{a}-{a + width - 1}" for a in starts.tolist()])
    return levels


def _decimal_bands(floats: NDArray[np.float64], start_f: float,
                   width_values: list[float]) -> list[list[str]]:
    """Per level, the ``"[a, a + width)"`` label of each value's band."""
    levels: list[list[str]] = []
    previous: NDArray[np.int64] | None = None
    previous_width_f = 1.0
    for width_f in width_values:
        if previous is None:
            # A value a rounding error below a boundary belongs to the band above
            # (0.3 with width 0.1 goes to [0.3, 0.4) although 0.3 / 0.1 < 3 in
            # floating point), so decimal boundaries behave as written.
            quotient = (floats - start_f) / width_f
            slack = DECIMAL_TOLERANCE * np.maximum(1.0, np.abs(quotient))
            index = np.floor(quotient + slack).astype(np.int64)
        else:
            index = previous // int(round(width_f / previous_width_f))
        previous, previous_width_f = index, width_f
        starts_f = (start_f + index * width_f).tolist()
        levels.append(_interval_labels(starts_f, width_f, index.tolist()))
    return levels


def _finite_real(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return result


def _check_widths(widths: Any) -> list[float]:
    """The interval widths as floats after checking that their intervals nest."""
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Iterable):
        raise TypeError(
            f"widths must be a sequence of band widths such as [5, 10, 20], got {widths!r}"
        )
    result: list[float] = []
    for position, width in enumerate(widths):
        value = _finite_real(width, f"widths[{position}]")
        if value <= 0:
            raise ValueError(f"widths[{position}] = {width!r} must be positive")
        if result:
            below = result[-1]
            if value <= below:
                raise ValueError(
                    f"widths must be strictly increasing (each level groups more values than "
                    f"the one below); got widths[{position}] = {width!r} after "
                    f"widths[{position - 1}] = {below:g}"
                )
            ratio = value / below
            if not ratio < _EXACT_FLOAT_INT:
                raise ValueError(
                    f"widths[{position}] = {width!r} is more than 2**53 times widths"
                    f"[{position - 1}] = {below:g}, too many bands to number exactly; use "
                    "fewer, closer levels"
                )
            if abs(ratio - round(ratio)) > DECIMAL_TOLERANCE * ratio:
                raise ValueError(
                    f"widths[{position}] = {width!r} is not an integer multiple of "
                    f"widths[{position - 1}] = {below:g}, so its intervals would not nest "
                    f"(a band of the lower level would straddle two bands above it); use e.g. "
                    f"{below * math.ceil(ratio):g}"
                )
        result.append(value)
    return result


def _numeric_values(values: Any, name: str) -> tuple[NDArray[Any], bool]:
    """Finite numeric values as int64 (when all integral and exact) or float64."""
    if isinstance(values, pd.DataFrame):
        raise TypeError(f"{name}: got a DataFrame; pass a single column, e.g. frame['age']")
    if isinstance(values, (pd.Series, pd.Index, ExtensionArray)):
        array = np.asarray(values)
    elif isinstance(values, np.ndarray):
        array = values
    elif isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    else:
        array = np.asarray(list(values), dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} is empty; a hierarchy needs at least one value")
    if array.dtype.kind == "b" or array.dtype.kind not in "iufO":
        raise TypeError(
            f"{name} must be numbers, got dtype {array.dtype}; for labels use "
            "Hierarchy.flat or Hierarchy.from_rows"
        )
    if array.dtype.kind == "O":
        for item in array:
            if item is not None and (
                isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real)
            ) and item is not pd.NA:
                raise TypeError(
                    f"{name} must be numbers, got {item!r} ({type(item).__name__}); for labels "
                    "use Hierarchy.flat or Hierarchy.from_rows"
                )
        array = np.array([np.nan if v is None or v is pd.NA else float(v) for v in array])
    if array.dtype.kind == "u" and int(array.max()) >= 2**63:
        raise ValueError(
            f"{name} holds {int(array.max())}, beyond int64; rescale the column first"
        )
    if array.dtype.kind in "iu":
        return array.astype(np.int64), True
    floats = array.astype(np.float64)
    missing = np.isnan(floats)
    if missing.any():
        raise ValueError(
            f"{name} contains {int(missing.sum())} missing value(s) (NaN/None), first at "
            f"position {int(np.flatnonzero(missing)[0])}; drop or impute them first"
        )
    if not np.isfinite(floats).all():
        raise ValueError(f"{name} contains an infinite value; intervals need finite values")
    integral = bool(
        np.all(np.floor(floats) == floats) and np.all(np.abs(floats) < _EXACT_FLOAT_INT)
    )
    if integral:
        return floats.astype(np.int64), True
    return floats, False


def _check_band_range(distinct: NDArray[Any], origin: float, widths: list[float],
                      integral: bool) -> None:
    """Refuses values so far from ``origin`` that band numbers would not be exact.

    Bands are numbered by ``floor((v - origin) / width)``: in int64 arithmetic for integers
    (values, origin and widths must stay well inside int64), else in floats (past 2**53
    bands, or with an offset that overflows, neighbouring values would share a band number
    by rounding alone).
    """
    if not widths:
        return
    for value in (distinct[0], distinct[-1]):
        if integral:  # with every term below 2**61, band starts and ends fit in int64
            offset = float(int(value) - int(origin))
            fits = max(abs(float(value)), abs(origin), widths[-1]) < 2.0**61
        else:
            with np.errstate(over="ignore"):
                offset = float(np.float64(value) - np.float64(origin))
            fits = abs(offset / widths[0]) < _EXACT_FLOAT_INT
        if not fits:
            raise ValueError(
                f"values: {value} (at {offset:g} from origin {origin:g}) is too large or too "
                f"far from origin to number its band of width {widths[0]:g} exactly; rescale "
                "the column, move origin near the values or use wider bands"
            )


def _interval_labels(starts: list[float], width: float, index: list[int]) -> list[str]:
    """``[a, a + width)`` labels, with full precision if ``:g`` would merge two bands."""
    labels = [f"[{a:g}, {a + width:g})" for a in starts]
    band_of: dict[str, int] = {}
    for label, band in zip(labels, index, strict=True):
        if band_of.setdefault(label, band) != band:
            return [f"[{a!r}, {a + width!r})" for a in starts]
    return labels