"""Turning table columns into the numbers the engine compares (SPEC §1)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray


def scale_column(series: pd.Series, name: str | None = None) -> NDArray[np.float64]:
    """One sensitive column on [0, 1], as SPEC §1 prescribes for the built-in metrics.

    Numeric: ``(x - min) / (max - min)`` (a constant column maps to 0). Ordered categorical:
    rank in the given order over ``(number of categories - 1)``. Anything else is refused
    with a message that says how to give it an order.
    """
    label = name if name is not None else str(series.name)
    if isinstance(series.dtype, pd.CategoricalDtype):
        if not series.dtype.ordered:
            raise ValueError(
                f"sensitive column {label!r} is an unordered categorical; proximity needs an "
                "order: pass pd.Categorical(values, categories=[...], ordered=True)"
            )
        codes = series.cat.codes.to_numpy()
        if (codes < 0).any():
            row = int(np.argmax(codes < 0))
            raise ValueError(
                f"sensitive column {label!r} has a missing or unknown category at row {row}; "
                "drop or fill those rows first"
            )
        top = len(series.dtype.categories) - 1
        return codes.astype(np.float64) / top if top > 0 else np.zeros(len(series))
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series.dtype):
        raise ValueError(
            f"sensitive column {label!r} has dtype {series.dtype}; it must be numeric or an "
            "ordered categorical (pd.Categorical(values, categories=[...], ordered=True))"
        )
    values = series.to_numpy(dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        row = int(np.argmax(~finite))
        raise ValueError(
            f"sensitive column {label!r} has a missing or non-finite value at row {row}; "
            "drop or impute those rows first"
        )
    lo, hi = values.min(), values.max()
    return (values - lo) / (hi - lo) if hi > lo else np.zeros(len(values))


def column_list(frame: pd.DataFrame, columns: str | Sequence[str], role: str) -> list[str]:
    """``columns`` (one name or several) checked against ``frame``: present, unique, non-empty."""
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names:
        raise ValueError(f"{role}: give at least one column name")
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{role}: column(s) {missing} not in the table; its columns are "
            f"{[str(c) for c in frame.columns]}"
        )
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise ValueError(f"{role}: column(s) {repeated} named more than once")
    return names


def scale_sensitive(frame: pd.DataFrame, columns: str | Sequence[str]) -> NDArray[np.float64]:
    """The sensitive columns of ``frame`` as an ``(n, len(columns))`` float array on [0, 1]."""
    names = column_list(frame, columns, "sensitive")
    return np.column_stack([scale_column(frame[c], c) for c in names])
