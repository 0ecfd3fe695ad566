"""The levels of the built taxonomies: masked codes, ordinal groups and calendar periods.

Each function takes a column's distinct values (missing values already refused) and returns
one root-first label path per leaf, leaves in their sorted order, for
:class:`proxanon.hierarchy.Hierarchy` to build its tree from (docs/guide/hierarchies.md).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from proxanon._taxonomy.labels import distinct_values, factorize, given_label

#: Calendar levels of :func:`date_paths`, finest first; each nests inside the next.
DATE_LEVELS = ("day", "month", "quarter", "year", "decade", "century")


def _code(value: Any, width: int | None) -> str:
    """One code as text of ``width`` characters (digits padded with zeros on the left)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, numbers.Real)):
        raise TypeError(f"values: {value!r} ({type(value).__name__}) is not a code; masking "
                        "takes codes written as text, such as '02134'")
    if not isinstance(value, str):
        whole = isinstance(value, numbers.Integral) or float(value).is_integer()
        if width is None or value < 0 or not whole:
            raise TypeError(
                f"values: {value!r} is a number, so its leading zeros may be lost; masking "
                "takes codes written as text (read the column as text), or pass width=N to "
                "write non-negative whole numbers with leading zeros to N digits")
        value = str(value if isinstance(value, numbers.Integral) else int(float(value)))
    text: str = value.strip()
    if not text:
        raise ValueError("values: an empty code cannot be a leaf; drop or fill it first")
    if width is not None and len(text) < width and text.isdigit():
        text = text.zfill(width)
    if width is not None and len(text) != width:
        raise ValueError(f"values: {text!r} has {len(text)} characters, not width={width}; "
                         "only codes of digits are padded with leading zeros")
    return text


def masking_paths(values: Iterable[Any], *, width: int | None, mask: str,
                  root: str) -> list[tuple[str, ...]]:
    """Codes of one width masked from the right, one more character per level.

    Level ``j`` (``j = 1`` just above the leaves) replaces the last ``j`` characters by
    ``mask``; the fully masked code is the root.
    """
    if width is not None and (isinstance(width, bool) or not isinstance(width, int)
                              or width < 1):
        raise ValueError(f"width must be a positive whole number of characters, got {width!r}")
    if not isinstance(mask, str) or len(mask) != 1:
        raise ValueError(f"mask must be one character such as '*', got {mask!r}")
    codes = sorted({_code(value, width) for value in values})
    lengths: dict[int, str] = {}
    for code in codes:
        lengths.setdefault(len(code), code)
        if mask in code:
            raise ValueError(f"values: {code!r} holds the mask character {mask!r}; pass "
                             "another mask, e.g. mask='#'")
    if len(lengths) > 1:
        (short, one), (long, other) = sorted(lengths.items())[0], sorted(lengths.items())[-1]
        raise ValueError(
            f"values have different lengths ({one!r} has {short} characters, {other!r} has "
            f"{long}); masking needs codes of one width: pass width={long} to pad codes of "
            "digits with leading zeros")
    size = len(codes[0])
    return [(root, *(code[:size - j] + mask * j for j in range(size - 1, 0, -1)), code)
            for code in codes]


def order_paths(leaves: Sequence[str], sizes: Sequence[int],
                root: str) -> list[tuple[str, ...]]:
    """Adjacent leaves grouped by ``sizes[0]``, those groups by ``sizes[1]``, and so on.

    A group is labelled ``[first, last]`` by its first and last leaf (``[first]`` when it
    holds one leaf); the last group of a level may be smaller, and one that holds a
    single group of the level below is that group (its leaves sit one level higher).
    """
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Iterable):
        raise TypeError(f"sizes must be a sequence of group sizes such as (2, 4), got {sizes!r}")
    checked: list[int] = []
    for position, size in enumerate(sizes):
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Integral) \
                or int(size) < 2:
            raise ValueError(f"sizes[{position}] = {size!r} must be a whole number of at least "
                             "2 (the groups of the level below that one group holds)")
        checked.append(int(size))
    group = np.arange(len(leaves))
    levels: list[list[str]] = []
    for size in checked:
        group = group // size
        first = np.searchsorted(group, group, side="left")
        last = np.searchsorted(group, group, side="right") - 1
        levels.append([f"[{leaves[a]}]" if a == b else f"[{leaves[a]}, {leaves[b]}]"
                       for a, b in zip(first.tolist(), last.tolist(), strict=True)])
    paths = []
    for i, leaf in enumerate(leaves):
        # A group holding a single group of the level below is that group: one node.
        labels = [level[i] for level in levels]
        kept = [label for j, label in enumerate(labels) if j == 0 or label != labels[j - 1]]
        paths.append((root, *reversed(kept), leaf))
    return paths


def _instant(value: Any) -> tuple[pd.Timestamp, str]:
    """A date's instant and its leaf label: text as written, else ISO (the date alone when
    it has no time of day)."""
    if isinstance(value, str):
        try:
            stamp = pd.Timestamp(pd.to_datetime(value.strip(), format="ISO8601"))
        except (ValueError, TypeError):
            raise ValueError(f"values: {value!r} is not an ISO date (YYYY-MM-DD)") from None
        return stamp, value.strip()
    stamp = None
    if not isinstance(value, (numbers.Real, np.bool_)):
        try:
            stamp = pd.Timestamp(value)
        except (ValueError, TypeError):
            stamp = None
    if stamp is None:
        raise TypeError(f"values: {value!r} ({type(value).__name__}) is not a date; pass "
                        "dates, datetime64 values or ISO date strings")
    if stamp is pd.NaT:
        raise ValueError("values contain a missing date (NaT); drop or impute it first")
    label = stamp.date().isoformat() if stamp == stamp.normalize() else stamp.isoformat()
    return stamp, label


def _period(stamp: pd.Timestamp, level: str) -> str:
    year = int(stamp.year)
    if level == "day":
        return str(stamp.date().isoformat())
    if level == "month":
        return f"{year:04d}-{int(stamp.month):02d}"
    if level == "quarter":
        return f"{year:04d}-Q{int(stamp.quarter)}"
    if level == "year":
        return f"{year:04d}"
    span = 10 if level == "decade" else 100
    start = year // span * span
    return f"{start:04d}-{start + span - 1:04d}"


def date_paths(values: Iterable[Any], levels: Sequence[str],
               root: str) -> list[tuple[str, ...]]:
    """Dates generalized to the calendar ``levels`` (finest first, from :data:`DATE_LEVELS`)."""
    if isinstance(levels, str):
        levels = [part.strip() for part in levels.split(",")]
    chosen = [str(level).strip().lower() for level in levels]
    unknown = [level for level in chosen if level not in DATE_LEVELS]
    if unknown:
        raise ValueError(f"levels: {unknown[0]!r} is not a calendar level; choose from "
                         f"{', '.join(DATE_LEVELS)}")
    ranks = [DATE_LEVELS.index(level) for level in chosen]
    if any(b <= a for a, b in zip(ranks, ranks[1:], strict=False)):
        raise ValueError(f"levels must go from finer to coarser without repeats, in the order "
                         f"{', '.join(DATE_LEVELS)}; got {', '.join(chosen)}")
    dated = sorted({label: stamp for stamp, label in map(_instant, values)}.items(),
                   key=lambda item: (item[1], item[0]))
    periods = {label: [_period(stamp, level) for level in chosen] for label, stamp in dated}
    # A value that is its own first period (a whole day at level "day") hangs directly
    # under the next level; only where every value is, the level repeats them all.
    own = [label for label, path in periods.items() if path and path[0] == label]
    if own and len(own) == len(dated):
        raise ValueError(f"levels: the values are whole days already (e.g. {own[0]!r}), so "
                         f"'{chosen[0]}' would repeat them; start from the next level")
    paths = []
    for label, _ in dated:
        path = periods[label]
        if path and path[0] == label:
            path = path[1:]
        paths.append((root, *reversed(path), label))
    return paths


def ordered_leaves(values: Any) -> list[str]:
    """The leaf labels of :func:`order_paths`, low to high: an ordered Categorical's
    categories, else ``values`` as given; a value given twice is refused."""
    if isinstance(values, (pd.Series, pd.Categorical)) and isinstance(
            values.dtype, pd.CategoricalDtype) and values.dtype.ordered:
        values = list(values.dtype.categories)
    codes, uniques = factorize(values, "values")
    distinct_values(values, (codes, uniques))
    repeated = pd.Series(codes).duplicated().to_numpy()
    if repeated.any():
        raise ValueError(f"values list {uniques[codes[int(np.argmax(repeated))]]!r} more "
                         "than once; give each value once, from low to high")
    return [given_label(value, "values") for value in uniques]
