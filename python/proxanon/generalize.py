"""Quasi-identifier columns as the engine sees them, and as a published table shows them.

SPEC §4: a numeric QI is published as its group's interval ``[min-max]`` (the value itself
when all members agree); a date or time QI (datetime64) as its range ``[first, last]`` (a
dash would be ambiguous inside dates; the date itself when all members agree); a categorical
QI as the lowest common ancestor of its group's values in the column's taxonomy (a flat
taxonomy, ``*`` over the values, when none is given).
Each column's cost in a group depends only on the group's smallest and largest code, so all
per-group numbers below come from one sort of the rows by group. The utility measures of a
partition (loss, GCP, NCP, discernibility, average group size) are computed here once, for the
report and for :mod:`proxanon.evaluate` alike.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _core, _validate
from proxanon.hierarchy import Hierarchy
from proxanon.tables import real_values, span_fraction


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
    if hierarchy is None and pd.api.types.is_datetime64_any_dtype(series.dtype):
        timezone = getattr(series.dtype, "tz", None)
        utc = series.dt.tz_convert("UTC").dt.tz_localize(None) if timezone else series
        _check_nanosecond_range(utc, column)
        instants = utc.to_numpy(dtype="datetime64[ns]").view(np.int64)
        return QIColumn(column, _instant_codes(instants, column), None, instants, timezone)
    if hierarchy is None and numeric:
        if pd.api.types.is_integer_dtype(series.dtype):
            _check_exact_integers(series, column)
        return QIColumn(column, real_values(series, column, "quasi-identifier"), None)
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


#: Integers a float64 holds exactly: QI codes are float64.
_EXACT_INTEGERS = 2**53


def _check_exact_integers(series: pd.Series, column: str) -> None:
    """Refuses an integer QI column with a value beyond 2^53 in magnitude: its float64 code
    would merge it with its neighbours, and the published bounds would be numbers that are
    not in the data. Reads the column's extremes; the values only where one is beyond."""
    if -_EXACT_INTEGERS <= int(series.min()) and int(series.max()) <= _EXACT_INTEGERS:
        return
    unsigned = pd.api.types.is_unsigned_integer_dtype(series.dtype)
    values = series.to_numpy(dtype=np.uint64 if unsigned else np.int64)
    beyond = values > _EXACT_INTEGERS
    if not unsigned:
        beyond |= values < -_EXACT_INTEGERS
    _refuse_first(column, series.index, values, beyond, "integers beyond 2^53 in magnitude",
                  "which its float64 codes cannot hold exactly: publish it as text "
                  "(.astype(str), one category per value) or coarsen it (e.g. // 1000) first")


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
                  what: str, fix: str) -> None:
    """Raises, naming the column and the first value where ``bad`` holds, if any."""
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"quasi-identifier column {column!r} holds {what} ({values[row]} at "
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


@dataclass(frozen=True)
class GroupSummary:
    """Per group and QI column: published label, the paper's cost and NCP (SPEC §4).

    The methods are the utility measures of the partition (SPEC §4), the one implementation
    that the report and :mod:`proxanon.evaluate` share. The labels are formatted when first
    read: a candidate table that is compared by its costs and not published never needs
    them (0.3 s of text at 3M rows).
    """

    cost: NDArray[np.float64]           # (groups, d): |G.A_i| / |A_i|
    ncp: NDArray[np.float64]            # (groups, d): as cost, but one category costs 0
    sizes: NDArray[np.int64]
    format_labels: Callable[[], list[NDArray[np.object_]]] = field(repr=False, compare=False)

    @cached_property
    def labels(self) -> list[NDArray[np.object_]]:
        """Per column, one published label per group."""
        return self.format_labels()

    def loss(self) -> float:
        """The paper's loss(G) = Σ_i |G.A_i| / |A_i|, averaged over groups."""
        return float(self.cost.sum(axis=1).mean())

    def gcp(self) -> float:
        """Global certainty penalty Σ_G |G|·Σ_i NCP_i(G) / (n·d), in [0, 1]."""
        n = int(self.sizes.sum())
        return float((self.sizes[:, None] * self.ncp).sum() / (n * self.ncp.shape[1]))

    def ncp_by_column(self, names: Sequence[str]) -> dict[str, float]:
        """Per QI column, its NCP averaged over rows."""
        n = int(self.sizes.sum())
        return {c: float((self.sizes * self.ncp[:, j]).sum() / n) for j, c in enumerate(names)}

    def discernibility(self) -> int:
        """Σ_G |G|² over the published groups."""
        return discernibility(self.sizes)

    def average_group_size(self) -> float:
        return average_group_size(self.sizes)


def discernibility(sizes: NDArray[np.int64]) -> int:
    """Σ_G |G|², the discernibility metric, from the group sizes."""
    return int((sizes.astype(np.int64) ** 2).sum())


def average_group_size(sizes: NDArray[np.int64]) -> float:
    """Rows per group."""
    return int(sizes.sum()) / sizes.size


def _pair_labels(lo: NDArray[Any], hi: NDArray[Any],
                 text: Callable[[NDArray[Any]], list[str]], joined: str) -> NDArray[np.object_]:
    """Per group, the label of its extremes: the value alone when ``lo == hi``, else the two
    joined as ``[a{joined}b]``. Each distinct value and each distinct pair is formatted once
    (``text`` formats an array of values), so the cost is O(m log m) numpy work plus Python
    work in the distinct pairs, not in the groups."""
    values, inverse = np.unique(np.concatenate([lo, hi]), return_inverse=True)
    words = text(values)
    first, last = inverse[:lo.size], inverse[lo.size:]
    pairs, pair_of = np.unique(first.astype(np.int64) * values.size + last, return_inverse=True)
    labels = np.array([words[a] if a == b else f"[{words[a]}{joined}{words[b]}]"
                       for a, b in zip((pairs // values.size).tolist(),
                                       (pairs % values.size).tolist(), strict=True)],
                      dtype=object)
    out: NDArray[np.object_] = labels[pair_of.reshape(-1)]
    return out


def summarize_groups(columns: list[QIColumn], groups: NDArray[np.int64],
                     rows: NDArray[np.int64] | None = None) -> GroupSummary:
    """Published labels and costs of every group, from each column's per-group extremes.
    ``rows``: the groups are those of these rows only (``groups`` gives one per entry),
    costed against the whole columns' ranges."""
    groups = np.asarray(groups)
    if rows is not None and len(rows) != groups.size:
        raise ValueError(f"{groups.size} group ids for {len(rows)} rows")
    if groups.size and groups.min() < 0:
        raise ValueError("group ids must be 0 .. m-1")
    sizes = np.bincount(groups) if groups.size else np.zeros(0, dtype=np.int64)
    if (sizes == 0).any():
        raise ValueError("group ids must be 0 .. m-1")
    order = _core.order_by_label(groups)
    starts = np.r_[0, np.cumsum(sizes)[:-1]] if sizes.size else np.zeros(0, dtype=np.int64)
    texts: list[Callable[[], NDArray[np.object_]]] = []  # per column, its labels when asked
    cost = np.zeros((sizes.size, len(columns)))
    ncp = np.zeros((sizes.size, len(columns)))
    for j, whole in enumerate(columns):
        col = whole if rows is None else whole.subset(rows)
        ordered = col.codes[order]
        lo = np.minimum.reduceat(ordered, starts) if sizes.size else ordered
        hi = np.maximum.reduceat(ordered, starts) if sizes.size else ordered
        if col.hierarchy is None:
            cost[:, j] = span_fraction(lo, hi, float(whole.codes.min()),
                                       float(whole.codes.max()))
            ncp[:, j] = cost[:, j]
            if col.instants is None:
                texts.append(partial(_pair_labels, lo, hi, _format_numbers, "-"))
            else:
                exact = col.instants[order]
                texts.append(partial(_pair_labels, np.minimum.reduceat(exact, starts),
                                     np.maximum.reduceat(exact, starts),
                                     partial(format_instants, timezone=col.timezone), ", "))
        else:
            tree = col.hierarchy
            nodes = tree.lca(lo.astype(np.int64), hi.astype(np.int64))
            cost[:, j] = np.asarray(tree.leaf_counts)[nodes] / tree.n_leaves
            ncp[:, j] = np.where(lo == hi, 0.0, cost[:, j])
            texts.append(partial(_node_labels, tree, nodes))
    return GroupSummary(cost=cost, ncp=ncp, sizes=sizes.astype(np.int64),
                        format_labels=lambda: [text() for text in texts])


def _format_numbers(values: NDArray[Any]) -> list[str]:
    return [format_number(x) for x in values]


def _node_labels(tree: Hierarchy, nodes: NDArray[np.int64]) -> NDArray[np.object_]:
    labels: NDArray[np.object_] = np.asarray(tree.labels, dtype=object)[nodes]
    return labels
