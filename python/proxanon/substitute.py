"""``substitute``: publish numeric QI columns as substituted values that keep chosen
properties of the originals (the property-preserving anonymization paper, its Algorithm 1 and §4).

Each column is cut into segments of ``segment_size`` consecutive rows (the last segment also
takes the remainder). In a segment, Algorithm 1 lists the localities among the distinct
values; a fraction ``poi_fraction`` of them is kept; a random walk of ``iterations`` steps
then moves the values inside the polytope those constraints and the bounds define.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._engine.substitution import substitute_column
from proxanon._errors import ParameterError
from proxanon._messages import Param, text
from proxanon.generalize import check_exact_integers
from proxanon.tables import column_list

#: The ``relation`` of a constraint, indexed by the core's code for it.
RELATIONS = ("<=", ">=", "order", "equal")

CONSTRAINT_COLUMNS = ("column", "i", "j", "k", "relation")


@dataclass(frozen=True)
class Substitution:
    """The result of :func:`substitute`.

    ``table``: a copy of the input with each substituted column replaced by float64 values;
    every other column is the input's own, values and dtype.
    ``constraints``: one row per kept property, columns ``column, i, j, k, relation``, where
    i, j, k are 0-based row positions in the input (not index labels):

    - ``"<="``: |x_i - x_j| <= |x_j - x_k|; ``">="``: |x_i - x_j| >= |x_j - x_k| (localities,
      the properties of interest);
    - ``"order"``: x_i <= x_j (k = -1), the order a locality needs to be a linear constraint;
    - ``"equal"``: x_i == x_j (k = -1), rows of one segment that had equal values.

    Each of them held in the input and holds exactly (float64) in ``table``, as do the
    ``bounds`` (lo <= value <= hi per column).
    ``distortion``: Dst of the paper's equation 6, the mean relative change
    |t - t'| / |t| over the substituted entries (entries whose original is 0 are left out,
    their relative change being undefined; NaN if every entry is 0).
    ``localities``: per column, how many localities Algorithm 1 found before sampling.
    ``seconds``: wall time of the whole call; ``seconds_per_column``: the native core's time.
    """

    table: pd.DataFrame
    constraints: pd.DataFrame
    distortion: float
    bounds: dict[str, tuple[float, float]]
    localities: dict[str, int]
    seconds: float
    seconds_per_column: dict[str, float] = field(repr=False)

    def __repr__(self) -> str:
        return (f"Substitution(rows={len(self.table)}, columns={list(self.bounds)}, "
                f"constraints={len(self.constraints)}, distortion={self.distortion:.4g})")


def distortion(original: NDArray[np.float64], substituted: NDArray[np.float64]) -> float:
    """Dst (equation 6): mean of |t - t'| / |t| over entries with t != 0 (NaN if none)."""
    t = np.asarray(original, dtype=np.float64)
    nonzero = t != 0
    if not nonzero.any():
        return math.nan
    change = np.abs(t[nonzero] - np.asarray(substituted, dtype=np.float64)[nonzero])
    with np.errstate(over="ignore"):  # a change relative to a subnormal value may be inf
        return float(np.mean(change / np.abs(t[nonzero])))


def _numeric_column(data: pd.DataFrame, column: str) -> NDArray[np.float64]:
    series = data[column]
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise TypeError(f"column {column!r} has dtype {series.dtype}, not a number: "
                        "substitution applies to numeric columns only")
    if pd.api.types.is_integer_dtype(series.dtype) and len(series):
        check_exact_integers(series, column, role="column",
                             fix="substitution works in float64; scale it down (e.g. // 1000) "
                                 "or leave it out of columns")
    values: NDArray[np.float64] = series.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"column {column!r} has {int(bad.sum())} missing or non-finite "
                         f"value(s) (first at row position {row}); drop or impute them first")
    return values


def _bounds(bounds: Mapping[str, Any] | None, columns: list[str],
            values: dict[str, NDArray[np.float64]]) -> dict[str, tuple[float, float]]:
    given = dict(bounds or {})
    unknown = [c for c in given if c not in columns]
    if unknown:
        raise ValueError(f"bounds: column(s) {unknown} are not among the substituted columns "
                         f"{columns}")
    out: dict[str, tuple[float, float]] = {}
    for column in columns:
        column_values = values[column]
        low, high = float(column_values.min()), float(column_values.max())
        if column in given:
            pair = given[column]
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise TypeError(f"bounds[{column!r}] must be a pair (lo, hi), got {pair!r}")
            lo = _validate.real(pair[0], f"bounds[{column!r}] lo")
            hi = _validate.real(pair[1], f"bounds[{column!r}] hi")
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise ValueError(f"bounds[{column!r}] must be finite with lo <= hi, got "
                                 f"({lo}, {hi})")
            if low < lo or high > hi:
                raise ValueError(f"bounds[{column!r}] = ({lo}, {hi}) must contain the column's "
                                 f"values, which span [{low}, {high}]; widen the bounds")
            low, high = lo, hi
        out[column] = (low, high)
    return out


def checked_settings(segment_size: Any, poi_fraction: Any, iterations: Any, seed: Any
                     ) -> tuple[int, float, int, int]:
    """:func:`substitute`'s settings checked (before any data is read, on the command line);
    :class:`~proxanon._errors.ParameterError` names the one out of range."""
    size = _validate.integer(segment_size, "segment_size", minimum=3)
    fraction = _validate.real(poi_fraction, "poi_fraction")
    if not 0.0 < fraction <= 1.0:
        raise ParameterError(text(Param("poi_fraction"), f" must lie in (0, 1], got "
                                  f"{fraction}"), "poi_fraction")
    steps = _validate.integer(iterations, "iterations", minimum=0)
    seed_value = _validate.integer(seed, "seed", minimum=0)
    if seed_value >= 2**64:
        raise ParameterError(text(Param("seed"), f" must be below 2**64, got {seed_value}"),
                             "seed")
    return size, fraction, steps, seed_value


def substitute(
    data: pd.DataFrame,
    columns: str | Sequence[str],
    *,
    segment_size: int = 100,
    poi_fraction: float = 0.1,
    iterations: int = 4000,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    seed: int = 0,
    n_threads: int | None = None,
) -> Substitution:
    """Replace numeric ``columns`` by values that keep a sample of their localities.

    A locality of three values d_i < d_j < d_k of a segment says whether
    |d_i - d_j| <= |d_j - d_k| or >=. Algorithm 1 lists, for every pair (i, j), the two
    localities that imply all others; each is kept with probability ``poi_fraction``
    (σ in the paper, in (0, 1]). A locality is linear only once the order of its three values
    is fixed, so the order constraints x_i <= x_j <= x_k it needs are kept too (reduced
    to the fewest that imply them). Rows of a segment with equal values keep equal values;
    localities among three equidistant values are not kept (as constraints that hold with
    equality they would pin the walk). The random walk starts at the original values; each
    step takes a direction of normal samples scaled to unit length and a length drawn
    uniformly from [0, l], l being the longest step the constraints and the bounds allow.

    ``bounds``: per column a pair (lo, hi) containing its values; default the column's min
    and max. ``seed``: same seed, same output (on every platform; ``n_threads``, default
    all cores, only splits the segments among threads). Cost per segment of s rows: O(s²)
    to extract, O(s + kept constraints) per walk step. The input frame is never modified.
    """
    started = time.perf_counter()
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError("data is empty: it needs at least one row")
    names = column_list(data, columns, "columns")
    size, fraction, steps, seed_value = checked_settings(segment_size, poi_fraction,
                                                         iterations, seed)
    threads = _validate.threads(n_threads)
    labels = list(data.columns)
    repeated = [c for c in names if labels.count(c) > 1]
    if repeated:
        raise ValueError(f"columns: the table has several columns named {repeated}; "
                         "rename them first")
    values = {c: _numeric_column(data, c) for c in names}
    limits = _bounds(bounds, names, values)

    table = data.copy()
    frames = []
    localities: dict[str, int] = {}
    seconds: dict[str, float] = {}
    for column in names:
        out = substitute_column(values[column], limits[column], segment_size=size,
                                poi_fraction=fraction, iterations=steps, seed=seed_value,
                                stream=labels.index(column), threads=threads)
        table[column] = pd.Series(out["values"], index=data.index, name=column)
        frames.append(pd.DataFrame({
            "column": column,
            "i": out["i"],
            "j": out["j"],
            "k": out["k"],
            "relation": np.asarray(RELATIONS, dtype=object)[out["relation"]],
        }))
        localities[column] = int(out["localities"])
        seconds[column] = float(out["seconds"])
    constraints = pd.concat(frames, ignore_index=True)
    dst = distortion(np.concatenate([values[c] for c in names]),
                     np.concatenate([table[c].to_numpy() for c in names]))
    return Substitution(table=table, constraints=constraints, distortion=dst, bounds=limits,
                        localities=localities, seconds=time.perf_counter() - started,
                        seconds_per_column=seconds)
