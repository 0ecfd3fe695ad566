"""Quasi-identifier columns as the engine sees them, and as a published table shows them.

docs/design/publishing.md: a numeric QI is published as its group's interval ``[min-max]`` (the
value itself when all members agree); a date or time QI (datetime64) as its range ``[first, last]``
(a dash would be ambiguous inside dates; the date itself when all members agree); a categorical
QI as the lowest common ancestor of its group's values in the column's taxonomy (a flat
taxonomy, ``*`` over the values, when none is given).
The groups' labels and utility measures are computed from these columns in
:mod:`proxanon._results.measures`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon.hierarchy import Hierarchy
from proxanon.tables import holds_python_dates, real_values


@dataclass(frozen=True)
class QIColumn:
    """One QI column encoded for the engine.

    ``codes`` are the raw numbers of a numeric column, nanoseconds since 1970 of a datetime
    column, or the DFS leaf index of each row's value in ``hierarchy`` (then the published
    value is an LCA label). ``instants`` keeps a datetime column's exact int64 nanoseconds
    (float codes round beyond 2**53 ns) and ``timezone`` its zone, for the published labels.
    """

    name: str
    codes: NDArray[np.float64]
    hierarchy: Hierarchy | None
    instants: NDArray[np.int64] | None = None
    timezone: Any = None

    def subset(self, rows: NDArray[np.int64] | NDArray[np.bool_]) -> QIColumn:
        """The same column restricted to ``rows``."""
        return replace(self, codes=self.codes[rows],
                       instants=None if self.instants is None else self.instants[rows])

    @property
    def numeric(self) -> bool:
        return self.hierarchy is None

    def taxonomy_spec(self) -> tuple[NDArray[np.int32], int] | None:
        """(parent of every node, number of leaves) for the native loss model."""
        if self.hierarchy is None:
            return None
        return np.asarray(self.hierarchy.parent, dtype=np.int32), self.hierarchy.n_leaves


def load_hierarchies(hierarchies: Mapping[str, Any] | None, quasi_identifiers: list[str],
                     columns: list[str], sep: str = ";") -> dict[str, Hierarchy]:
    """Hierarchy objects for the QI columns; paths are read as ARX-format CSV files.

    Hierarchies of other columns of the table are accepted and left out (a data set's full
    set of hierarchies can be passed as is); one for a column the table lacks is an error.
    """
    if hierarchies is None:
        return {}
    if not isinstance(hierarchies, Mapping):
        raise TypeError("hierarchies must be a dict mapping a column name to a Hierarchy or a "
                        "path of an ARX-format CSV file")
    loaded: dict[str, Hierarchy] = {}
    for column, given in hierarchies.items():
        if column not in columns:
            raise ValueError(
                f"a hierarchy is given for column {column!r}, which is not in the table; "
                f"its columns are {columns}"
            )
        if column not in quasi_identifiers:
            continue
        if isinstance(given, Hierarchy):
            loaded[column] = given
        elif isinstance(given, (str, os.PathLike)):
            if not os.path.isfile(given):
                problem = "is a directory, not a file" if os.path.isdir(given) else "not found"
                raise ValueError(f"hierarchy file for column {column!r} {problem}: {given}")
            loaded[column] = Hierarchy.from_csv(given, sep=sep)
        else:
            raise TypeError(
                f"hierarchy for column {column!r} must be a Hierarchy or a file path, "
                f"got {type(given).__name__}"
            )
    return loaded


def encode_qi(frame: pd.DataFrame, column: str, hierarchy: Hierarchy | None) -> QIColumn:
    """Encodes one QI column: numeric as is, datetime by its instant, and with a hierarchy or
    categorical by leaf index."""
    series = frame[column]
    missing = series.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"quasi-identifier column {column!r} has {int(missing.sum())} missing value(s), "
            f"first at {_validate.row_of(series.index, int(np.argmax(missing)))}; drop or fill "
            "those rows first"
        )
    numeric = (pd.api.types.is_numeric_dtype(series.dtype)
               and not pd.api.types.is_bool_dtype(series.dtype)
               and not isinstance(series.dtype, pd.CategoricalDtype))
    if hierarchy is None and series.dtype == object:
        series = _python_dates_as_datetimes(series)
    if hierarchy is None and pd.api.types.is_datetime64_any_dtype(series.dtype):
        timezone = getattr(series.dtype, "tz", None)
        utc = series.dt.tz_convert("UTC").dt.tz_localize(None) if timezone else series
        _check_nanosecond_range(utc, column)
        instants = utc.to_numpy(dtype="datetime64[ns]").view(np.int64)
        return QIColumn(column, _instant_codes(instants, column), None, instants, timezone)
    if hierarchy is None and numeric:
        if pd.api.types.is_integer_dtype(series.dtype):
            check_exact_integers(series, column)
        return QIColumn(column, real_values(series, column, "quasi-identifier"), None)
    if hierarchy is None and (getattr(series.dtype, "kind", None) == "m"
                              or isinstance(series.dtype, pd.PeriodDtype)):
        raise TypeError(
            f"quasi-identifier column {column!r} (dtype {series.dtype}) holds durations or "
            "periods, which are neither numbers, dates nor labels; convert the column first, "
            "e.g. durations with .dt.total_seconds(), periods with .dt.start_time")
    values = series.astype(object) if isinstance(series.dtype, pd.CategoricalDtype) else series
    try:
        if hierarchy is None:  # the column's own values, each published as it is
            try:
                hierarchy, leaves = Hierarchy.flat_column(values.to_numpy())
            except ValueError as exc:
                raise ValueError(f"quasi-identifier column {column!r}: {exc}") from None
        else:
            leaves = hierarchy.leaf_index(values.to_numpy(), column=column)
        codes = leaves.astype(np.float64)
    except TypeError as exc:
        raise TypeError(
            f"quasi-identifier column {column!r} (dtype {series.dtype}) holds values that are "
            f"not strings, numbers or dates ({exc}); convert the column first, e.g. durations "
            "with .dt.total_seconds(), periods with .dt.start_time, other objects with "
            ".astype(str)") from None
    return QIColumn(column, codes, hierarchy)


def _python_dates_as_datetimes(series: pd.Series) -> pd.Series:
    """An object column of ``datetime.date`` (or ``datetime.datetime``) values as the
    datetime64 column it stands for, so that it is generalized as dates; any other column as
    it is."""
    if not holds_python_dates(series):
        return series
    try:
        return pd.Series(pd.to_datetime(series.to_numpy()), index=series.index,
                         name=series.name)
    except (TypeError, ValueError):  # mixed time zones: refused below as other objects are
        return series


#: Integers a float64 holds exactly: QI codes are float64.
_EXACT_INTEGERS = 2**53


def check_exact_integers(series: pd.Series, column: str, *,
                         role: str = "quasi-identifier column",
                         fix: str = "publish it as text (.astype(str), one category per value) "
                                    "or coarsen it (e.g. // 1000) first") -> None:
    """Refuses an integer column with a value beyond 2^53 in magnitude, where the column is
    worked on in float64 (QI codes, substituted values): such values would merge with their
    neighbours, and what is published would be numbers that are not in the data. Reads the
    column's extremes; the values only where one is beyond."""
    if -_EXACT_INTEGERS <= int(series.min()) and int(series.max()) <= _EXACT_INTEGERS:
        return
    unsigned = pd.api.types.is_unsigned_integer_dtype(series.dtype)
    values = series.to_numpy(dtype=np.uint64 if unsigned else np.int64)
    beyond = values > _EXACT_INTEGERS
    if not unsigned:
        beyond |= values < -_EXACT_INTEGERS
    _refuse_first(column, series.index, values, beyond, "integers beyond 2^53 in magnitude",
                  f"which float64 cannot hold exactly: {fix}", role=role)


def _check_nanosecond_range(times: pd.Series, column: str) -> None:
    """Refuses a date QI column outside 1677-09-22 .. 2262-04-11 (to the second): QI dates
    are published as nanosecond instants, which hold no date outside that range (they would
    wrap around)."""
    ticks = times.to_numpy().astype("datetime64[s]")
    # From 1677-09-22: a published date is read at its midnight too, and 1677-09-21's
    # midnight is before the first nanosecond instant.
    outside = ((ticks < np.datetime64("1677-09-22T00:00:00"))
               | (ticks > np.datetime64("2262-04-11T23:47:16")))
    _refuse_first(column, times.index, ticks, outside,
                  "a date outside 1677-09-22 00:00:00 .. 2262-04-11 23:47:16",
                  "beyond the nanosecond instants QI dates are published as: give it as years "
                  "(numbers) or as text (one category per date)")


def _instant_codes(instants: NDArray[np.int64], column: str) -> NDArray[np.float64]:
    """The float64 codes of a date QI column: nanoseconds since its earliest instant, exact
    over a span of 2^53 ns (104 days), and told apart at any span for instants of whole
    milliseconds; instants no float64 tells apart (nanoseconds over years) are refused, since
    the engine would take them for one value."""
    if instants.size == 0:
        return instants.astype(np.float64)
    offsets = (instants - instants.min()).view(np.uint64)  # wraps: the span fits 64 bits
    codes: NDArray[np.float64] = offsets.astype(np.float64)
    with np.errstate(invalid="ignore"):  # a code rounded up to 2^64 does not cast back
        exact = bool((codes.astype(np.uint64) == offsets).all())
    if int(offsets.max()) <= _EXACT_INTEGERS or exact:
        return codes
    distinct = np.unique(instants)
    merged = np.flatnonzero(np.diff(_instant_codes_of(distinct, instants.min())) == 0)
    if merged.size:
        pair = distinct[merged[0]:merged[0] + 2].astype("datetime64[ns]")
        raise ValueError(
            f"quasi-identifier column {column!r} holds instants too close for its span to be "
            f"told apart ({pair[0]} and {pair[1]}: 64-bit floats over a span of more than 104 "
            "days keep fewer digits than nanoseconds); round it first, e.g. "
            ".dt.floor('us'), or give it as text")
    return codes


def _instant_codes_of(instants: NDArray[np.int64], base: np.int64) -> NDArray[np.float64]:
    """Nanoseconds since ``base`` as float64 (see :func:`_instant_codes`)."""
    return (instants - base).view(np.uint64).astype(np.float64)


def _refuse_first(column: str, index: pd.Index, values: NDArray[Any], bad: NDArray[np.bool_],
                  what: str, fix: str, *, role: str = "quasi-identifier column") -> None:
    """Raises, naming the column and the first value where ``bad`` holds, if any."""
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"{role} {column!r} holds {what} ({values[row]} at "
                         f"{_validate.row_of(index, row)}), {fix}")


def format_number(x: float) -> str:
    """Shortest text that reads back as x: 39 for 39.0, 2.5 for 2.5."""
    return np.format_float_positional(float(x), trim="-")


def format_instants(instants: NDArray[np.int64], timezone: Any) -> list[str]:
    """ISO text of nanosecond instants: dates alone when every one is a midnight."""
    times = pd.DatetimeIndex(instants.astype("datetime64[ns]"))
    if timezone is not None:
        times = times.tz_localize("UTC").tz_convert(timezone)
    if (times == times.normalize()).all():
        return list(times.strftime("%Y-%m-%d"))
    return [t.isoformat() for t in times]


