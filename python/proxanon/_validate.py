"""Input checks shared by the public functions.

Every check names the parameter (and the column, row or value at fault) and says what would
fix it. Arrays are copied into fresh float64 C-contiguous buffers, so callers' objects are
never modified and never aliased by results.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

METRICS = ("l1", "l2", "linf")
ON_INFEASIBLE = ("raise", "best_effort", "suppress")
MOVES = ("auto", "swap")


def float_matrix(value: Any, name: str, *, rows: int | None = None) -> NDArray[np.float64]:
    """A copy of ``value`` as a 2-D float64 array (a 1-D input becomes one column)."""
    if value is None:
        raise TypeError(f"{name} is required: pass an array of shape (n,) or (n, columns)")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, not a string")
    try:
        array = np.array(value, dtype=np.float64, copy=True, order="C")
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be a numeric array of shape (n,) or (n, columns); "
            f"it could not be converted to floats ({exc})"
        ) from None
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2:
        raise ValueError(
            f"{name} must have shape (n,) or (n, columns); got an array with shape {array.shape}"
        )
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty: it needs at least one row")
    if array.shape[1] == 0:
        raise ValueError(f"{name} has no columns: it needs at least one")
    if rows is not None and array.shape[0] != rows:
        raise ValueError(
            f"{name} has {array.shape[0]} rows but sensitive has {rows}: "
            "pass one row per record, in the same order"
        )
    finite = np.isfinite(array)
    if not finite.all():
        row, column = (int(i) for i in np.argwhere(~finite)[0])
        bad = array[row, column]
        count = int((~finite).sum())
        raise ValueError(
            f"{name} contains {count} non-finite value(s) ({bad} at row {row}, column {column}); "
            "drop or impute those rows first"
        )
    return array


def integer(value: Any, name: str, *, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; bools and non-integral numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    result = int(value)
    if result < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {result}")
    return result


def real(value: Any, name: str) -> float:
    """``value`` as a float; bools and non-numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large for a float64, got {value!r}") from None


def privacy(k: Any, epsilon: Any, delta: Any, n: int) -> tuple[int, float, float]:
    """Checks (k, epsilon, delta) against a table of n rows."""
    k = integer(k, "k", minimum=1)
    if n < k:
        raise ValueError(
            f"k={k} is larger than the number of rows ({n}): no group of {k} rows can be "
            f"formed; use k <= {n}"
        )
    eps = real(epsilon, "epsilon")
    if math.isnan(eps) or eps < 0 or math.isinf(eps):
        raise ValueError(
            f"epsilon must be a finite number >= 0, got {epsilon!r}; with the default weights "
            "built-in distances lie in [0, 1], so epsilon >= 1 already makes every pair neighbours"
        )
    d = real(delta, "delta")
    if math.isnan(d) or not 0.0 <= d <= 1.0:
        raise ValueError(
            f"delta must lie in [0, 1], got {delta!r}: a group's risk may be at most 1 - delta"
        )
    return k, eps, d


def metric(value: Any) -> str:
    """The metric name, one of METRICS."""
    if not isinstance(value, str) or value.lower() not in METRICS:
        raise ValueError(f"unknown metric {value!r}; choose one of {', '.join(METRICS)}")
    return value.lower()


def weights(value: Any, columns: int) -> NDArray[np.float64]:
    """Metric weights: one finite non-negative number per sensitive column; default 1/s."""
    if value is None:
        return np.full(columns, 1.0 / columns)
    try:
        w = np.array(value, dtype=np.float64, copy=True).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"weights must be a sequence of {columns} numbers, got {value!r}") from None
    if w.shape[0] != columns:
        raise ValueError(
            f"weights has {w.shape[0]} entries but sensitive has {columns} column(s): "
            "give one weight per sensitive column"
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weights must be finite and >= 0, got {w.tolist()}")
    return w


def choice(value: Any, name: str, options: tuple[str, ...]) -> str:
    """One of ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def group_labels(value: Any, rows: int) -> NDArray[np.int64]:
    """A copy of a group-id array: one integer per row."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise TypeError("groups must be an array of integer group ids, one per row") from None
    if raw.ndim != 1:
        raise ValueError(f"groups must be 1-D (one id per row); got shape {raw.shape}")
    if raw.shape[0] != rows:
        raise ValueError(
            f"groups has {raw.shape[0]} entries but sensitive has {rows} rows: "
            "give one group id per row"
        )
    if raw.dtype.kind not in "iu":
        if raw.dtype.kind == "f" and np.isfinite(raw).all() and (raw == np.round(raw)).all():
            raw = raw.astype(np.int64)
        else:
            raise TypeError(f"groups must hold integer group ids; got dtype {raw.dtype}")
    labels = np.array(raw, dtype=np.int64, copy=True)
    if (labels < -1).any():
        row = int(np.argmax(labels < -1))
        raise ValueError(
            f"groups must be >= 0, or -1 for a suppressed row; row {row} has group {labels[row]}"
        )
    return labels
