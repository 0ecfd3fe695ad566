"""Input checks shared by the public functions.

Every check names the parameter (and the column, row or value at fault) and says what would
fix it. Arrays are copied into fresh float64 C-contiguous buffers, so callers' objects are
never modified and never aliased by results.
"""

from __future__ import annotations

import datetime
import math
import numbers
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon._engine import kernels
from proxanon._errors import ParameterError
from proxanon._messages import Param, text

#: Float tolerance of the neighbour test (docs/design/privacy-model.md): x and y are
#: epsilon-neighbours iff ``distance <= epsilon + NEIGHBOUR_TOLERANCE * max(1, epsilon)``. Without
#: it the paper's own example fails in float64 (``|0.7 - 0.8| = 0.10000000000000009 > 0.1``). The
#: C++ core owns the number (tolerance.hpp); Python reads it so the two can never differ.
NEIGHBOUR_TOLERANCE: float = kernels.NEIGHBOUR_SLACK

#: Float tolerance of the allowance (docs/design/privacy-model.md):
#: ``t(G) = floor((1 - delta)(|G| - 1) + ALLOWANCE_TOLERANCE)``, so that
#: ``(1 - 0.8) * 10 = 1.9999999999999996`` still allows 2. Owned by the C++ core, like the
#: neighbour tolerance.
ALLOWANCE_TOLERANCE: float = kernels.ALLOWANCE_SLACK

#: Relative float tolerance of exact-looking decimal arithmetic on user numbers: a quotient
#: this close (relatively) to an integer is taken as that integer (hierarchy band boundaries
#: and nesting widths, e.g. ``0.3 / 0.1`` is 2.9999999999999996).
DECIMAL_TOLERANCE = 1e-9

#: Group ids are int64; floats and unsigned integers at or beyond this do not fit.
_INT64_LIMIT = 2.0**63

#: Elements of an object array that numpy would read as numbers, or fail on, wrongly.
_NOT_REAL_TYPES = (str, bytes, datetime.date, datetime.timedelta, np.datetime64,
                   np.timedelta64)

METRICS = ("l1", "l2", "linf")
ON_INFEASIBLE = ("raise", "best_effort", "suppress")
#: The repair's moves, and the starting colourings (Algorithm 1 as published, or the
#: QI-aware start): the core's enums name them.
MOVES = tuple(kernels.Moves.__members__)
INITS = tuple(kernels.Init.__members__)
#: Partitioning algorithms.
METHODS = ("xcolor", "mondrian")
#: How a table's groups are released (docs/design/publishing.md).
PUBLISH = ("generalize", "anatomy")
#: Neighbour structures (see ``partition``), as the core's enum names them; the rule of
#: "auto" lives in the core too.
NEIGHBOURS = tuple(kernels.Structure.__members__)
#: The largest search_limit: groups are numbered by 32-bit ids, so any limit this large
#: already examines every group.
MAX_SEARCH_LIMIT = 2**31 - 1


def float_matrix(value: Any, name: str, *, rows: int | None = None) -> NDArray[np.float64]:
    """A copy of ``value`` as a 2-D float64 array (a 1-D input becomes one column)."""
    if value is None:
        raise TypeError(f"{name} is required: pass an array of shape (n,) or (n, columns)")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, not a string")
    _check_unmasked(value, name)
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise _not_floats(name, exc) from None
    _check_real_numbers(raw, name)
    try:
        array = np.array(raw, dtype=np.float64, copy=True, order="C")
    except (TypeError, ValueError) as exc:
        raise _not_floats(name, exc) from None
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


def _check_unmasked(value: Any, name: str) -> None:
    """Refuses a numpy masked array with masked entries (np.asarray would unmask them)."""
    if isinstance(value, np.ma.MaskedArray):
        mask = np.asarray(value.mask, dtype=bool) | np.zeros(value.shape, dtype=bool)
        if mask.any():
            where = tuple(int(i) for i in np.argwhere(mask)[0])
            raise ValueError(
                f"{name} has {int(mask.sum())} masked (missing) entries, the first at index "
                f"{where[0] if len(where) == 1 else where}; drop or fill them first"
            )


def _scalar(value: Any) -> Any:
    """A 0-d array's element (np.array(0.1) is a number to a user)."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _not_floats(name: str, exc: Exception) -> TypeError:
    return TypeError(
        f"{name} must be a numeric array of shape (n,) or (n, columns); "
        f"it could not be converted to floats ({exc})"
    )


def _check_real_numbers(raw: NDArray[Any], name: str) -> None:
    """Refuses arrays that numpy would turn into floats silently but wrongly.

    Complex numbers would lose their imaginary part; dates and durations would become
    counts of their unit (days or nanoseconds, a different epsilon for each); text would be
    parsed ("1" becomes 1.0) or fail halfway. Object arrays are scanned for text and times.
    """
    kind = raw.dtype.kind
    if kind == "O":  # the kind of the first text or time element decides the message
        odd = next((x for x in raw.flat if isinstance(x, _NOT_REAL_TYPES)), None)
        if isinstance(odd, (str, bytes)):
            kind = "U"
        elif odd is not None:
            kind = "M"
    if kind == "c":
        raise TypeError(
            f"{name} holds complex numbers ({raw.dtype}); distances are taken over real "
            "values: pass the real and imaginary parts as two columns, or the magnitude"
        )
    if kind in "mM":
        raise TypeError(
            f"{name} holds dates or durations ({raw.dtype}), which as floats would count "
            "their unit; "
            "put them on a common scale first, e.g. (t - t.min()) / (t.max() - t.min()) "
            "(anonymize and audit scale a DataFrame's date column that way)"
        )
    if kind in "USV":
        raise TypeError(
            f"{name} must be a numeric array; it holds text (dtype {raw.dtype}): convert "
            "it to numbers first (e.g. pd.to_numeric), on a common scale"
        )


def integer(value: Any, name: str, *, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; bools and non-integral numbers are refused."""
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    result = int(value)
    if result < minimum:
        raise ParameterError(text(Param(name), f" must be >= {minimum}, got {result}"), name)
    return result


def threads(value: Any, name: str = "n_threads") -> int:
    """Threads for the native work: ``None`` is every core this process may run on; else an
    int >= 1. Results never depend on it."""
    if value is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return os.cpu_count() or 1
    return integer(value, name, minimum=1)


def real(value: Any, name: str) -> float:
    """``value`` as a float; bools and non-numbers are refused."""
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large for a float64, got {value!r}") from None


def positive(value: Any, name: str) -> float:
    """A finite number > 0."""
    number = real(value, name)
    if not number > 0 or math.isinf(number):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def seconds(value: Any, name: str) -> float:
    """A time limit: a finite number of seconds > 0."""
    number = real(value, name)
    if not number > 0 or math.isinf(number):
        raise ValueError(f"{name} must be a finite number of seconds > 0, got {value!r}")
    return number


def ranges(value: Any, columns: Sequence[str],
           name: str = "sensitive_ranges") -> dict[str, tuple[float, float]] | None:
    """``sensitive_ranges``: None, or a mapping from sensitive columns to finite
    ``(min, max)`` pairs with min <= max, as floats."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping from sensitive column to (min, max), got "
                        f"{type(value).__name__}")
    out: dict[str, tuple[float, float]] = {}
    for column, pair in value.items():
        if column not in columns:
            raise ValueError(f"{name} names {column!r}, which is not a sensitive column "
                             f"(they are {list(columns)})")
        where = f"{name}[{column!r}]"
        if (isinstance(pair, (str, bytes, Mapping)) or not isinstance(pair, (Sequence, np.ndarray))
                or len(pair) != 2):
            raise TypeError(f"{where} must be a (min, max) pair of numbers, got {pair!r}")
        lo, hi = (_exact_real(pair[0], f"{where} min"), _exact_real(pair[1], f"{where} max"))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"{where} must be finite, got ({lo}, {hi})")
        if lo > hi:
            raise ValueError(f"{where} is ({lo}, {hi}): its min is above its max; give (min, max)")
        out[column] = (lo, hi)
    return out


#: Where the rows being read lie in a larger table (the Dask path reads a table in parts):
#: ``row_of`` then counts rows in that table, not in the part. Set by :func:`rows_in_table`.
_TABLE_ROWS: ContextVar[NDArray[np.int64] | None] = ContextVar("table_rows", default=None)


@contextmanager
def rows_in_table(positions: NDArray[np.int64]) -> Iterator[None]:
    """Within the block, the row at position i of the frame being read is row
    ``positions[i]`` of the table it came from (for messages)."""
    token = _TABLE_ROWS.set(positions)
    try:
        yield
    finally:
        _TABLE_ROWS.reset(token)


def exact_number(value: Any) -> float:
    """A number as Python keeps it exactly: an int where it is an integer (a float64 merges
    integers beyond 2^53; ``tables.scale_column`` scales an integer column by integer bounds
    exactly), else a float."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    return float(value)


def _exact_real(value: Any, name: str) -> float:
    """``real(value)`` (which refuses, by name, what is no finite-sized real number), kept
    exact by :func:`exact_number`."""
    real(value, name)
    return exact_number(value)


def row_of(index: Any, position: int) -> str:
    """``row 2`` for the row at ``position`` (rows counted from 0 in the table's order), with
    its index label where that is not the position: ``row 2 (index label 0)``. Inside
    :func:`rows_in_table`, the row's place in the whole table."""
    label = index[position]
    table_rows = _TABLE_ROWS.get()
    if table_rows is not None and len(table_rows) == len(index):
        position = int(table_rows[position])
    if isinstance(label, np.generic):
        label = label.item()
    if isinstance(label, int) and not isinstance(label, bool) and label == position:
        return f"row {position}"
    return f"row {position} (index label {label!r})"


def privacy(k: Any, epsilon: Any, delta: Any, n: int,
            measured: bool = False, *, judged: bool = False) -> tuple[int, float, float]:
    """Checks (k, epsilon, delta) against a table of n rows. Groups to be formed (not
    ``measured`` ones, which an audit only reports on) need k >= 2 where delta > 0: a group of
    one row has risk 1 (docs/design/privacy-model.md), above 1 - delta. A grouping that is
    ``judged`` (an audit of groups given) may hold fewer than k rows: its groups then fail."""
    k = integer(k, "k", minimum=1)
    if n < k and not judged:
        raise ParameterError(text(
            Param("k", k), f" is larger than the number of rows ({n}): no group of {k} rows "
            f"can be formed; use k <= {n}"), "k")
    eps = real(epsilon, "epsilon")
    if math.isnan(eps) or eps < 0 or math.isinf(eps):
        raise ParameterError(text(
            Param("epsilon"), f" must be a finite number >= 0, got {epsilon!r}; with the "
            "default weights built-in distances lie in [0, 1], so epsilon >= 1 already makes "
            "every pair neighbours"), "epsilon")
    d = real(delta, "delta")
    if math.isnan(d) or not 0.0 <= d <= 1.0:
        raise ParameterError(text(
            Param("delta"), f" must lie in [0, 1], got {delta!r}: a group's risk may be at "
            "most 1 - delta"), "delta")
    if k == 1 and single_row_violates(d) and not measured:
        raise ParameterError(text(
            Param("k", 1), " with ", Param("delta", delta), " > 0: a group of one row "
            "publishes its sensitive value as it is (risk 1, above 1 - delta), so no group of "
            "one row satisfies; use ", Param("k"), " >= 2 (or ", Param("delta", 0),
            " for k-anonymity alone)"), "k")
    return k, eps, d


def single_row_violates(delta: float) -> bool:
    """Whether a group of one row fails at ``delta``: its risk is 1 (docs/design/privacy-model.md),
    above 1 - delta beyond the allowance's tolerance."""
    return 1.0 > 1.0 - delta + ALLOWANCE_TOLERANCE


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
        raise ParameterError(text(
            Param("weights"), f" has {w.shape[0]} entries but ", Param("sensitive"),
            f" has {columns} column(s): give one weight per sensitive column"), "weights")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ParameterError(text(Param("weights"), f" must be finite and >= 0, got "
                                  f"{w.tolist()}"), "weights")
    return w


def choice(value: Any, name: str, options: tuple[str, ...]) -> str:
    """One of ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def group_labels(value: Any, rows: int) -> NDArray[np.int64]:
    """A copy of a group-id array: one integer per row."""
    _check_unmasked(value, "groups")
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
    if raw.dtype.kind == "f":
        # Whole floats (e.g. ids read from a CSV with gaps) are ids; anything else is named.
        bad = ~np.isfinite(raw) | (raw != np.round(raw)) | (np.abs(raw) >= _INT64_LIMIT)
        if bad.any():
            row = int(np.argmax(bad))
            raise TypeError(
                f"groups must hold integer group ids (or -1 for a suppressed row); row {row} "
                f"has {float(raw[row])}: give every row a whole-number id"
            )
    elif raw.dtype.kind == "u" and raw.size and int(raw.max()) >= _INT64_LIMIT:
        raise ValueError(f"groups holds the id {int(raw.max())}, beyond int64; renumber the "
                         "groups, e.g. with pd.factorize")
    elif raw.dtype.kind != "i":
        raise TypeError(f"groups must hold integer group ids; got dtype {raw.dtype} (labels "
                        "of any kind become ids with pd.factorize(labels)[0])")
    labels = np.array(raw, dtype=np.int64, copy=True)
    if (labels < -1).any():
        row = int(np.argmax(labels < -1))
        raise ValueError(
            f"groups must be >= 0, or -1 for a suppressed row; row {row} has group {labels[row]}"
        )
    return labels


def epsilon(value: Any, *, graph: bool) -> float:
    """epsilon, which a precomputed neighbour graph (``graph``) does not need (it is then
    ignored)."""
    if graph:
        return 0.0
    if value is None:
        raise TypeError("epsilon is required (the distance within which values are "
                        "neighbours), unless metric is a precomputed neighbour graph")
    return real(value, "epsilon")


def search_limit(value: Any) -> int:
    """``search_limit`` checked, as the engine takes it: 0 for None (every group)."""
    if value is None:
        return 0
    limit = integer(value, "search_limit", minimum=1)
    if limit > MAX_SEARCH_LIMIT:
        raise ValueError(
            f"search_limit must be at most {MAX_SEARCH_LIMIT} (any limit at least the number "
            f"of groups examines them all; None does the same), got {value}")
    return limit


def neighbours(value: Any, *, builtin: bool, taxonomy: bool, components: int) -> str:
    """``neighbours`` checked against the relation it would hold: ``builtin`` (a built-in
    metric), ``taxonomy`` (some column compared by its taxonomy) and its ``components``."""
    structure = choice(value, "neighbours", NEIGHBOURS)
    if not builtin and structure not in ("auto", "graph"):
        held = ("a sensitive column compared by its taxonomy" if taxonomy
                else "a distance function or a precomputed graph")
        raise ValueError(f"neighbours={structure!r} needs a built-in metric; {held} is held "
                         "as a graph: use 'auto' or 'graph'")
    if structure == "sorted" and components != 1:
        raise ValueError(f"neighbours='sorted' needs a sensitive attribute of one component, "
                         f"got {components}; use 'grid' or 'auto'")
    return structure


def suppression(value: Any, on_infeasible: str) -> float:
    """``max_suppression`` checked: a fraction in [0, 1], meaningful with "suppress"."""
    budget = real(value, "max_suppression")
    if not 0.0 <= budget <= 1.0:
        raise ParameterError(text(Param("max_suppression"), " must be a fraction of the rows "
                                  f"in [0, 1], got {value!r}"), "max_suppression")
    if budget > 0.0 and on_infeasible != "suppress":
        raise ParameterError(text(Param("max_suppression"), " applies only with ",
                                  Param("on_infeasible", "suppress")), "max_suppression")
    return budget


def unique_columns(table: Any, argument: str) -> None:
    """A table whose column names repeat is ambiguous (``table[name]`` is then a table):
    refused with the names that repeat."""
    repeated = table.columns[table.columns.duplicated()].unique()
    if len(repeated):
        names = ", ".join(repr(str(c)) for c in repeated)
        raise ValueError(
            f"{argument} has more than one column named {names}; "
            "give every column its own name (e.g. table.set_axis([...], axis=1))")
