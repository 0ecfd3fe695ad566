"""Labels of a taxonomy: how a data value is matched to a leaf, and a file's text.

A data value is matched to a leaf by its *canonical label* (:func:`canonical`): a stripped
string, or a number's integer or float text, so that ``39``, ``39.0`` and ``" 39"`` all find
the leaf ``"39"`` (docs/guide/hierarchies.md). Columns are factorized first, so every
function here handles each distinct value once: cost O(rows) in pandas plus O(distinct) in
Python.
"""

from __future__ import annotations

import fractions
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pandas.api.extensions import ExtensionArray

from proxanon._errors import LeadingZerosError


def own_label(value: Any) -> str | None:
    """The leaf label of a column's own value (:meth:`proxanon.hierarchy.Hierarchy.flat_column`)."""
    if isinstance(value, str):
        return value
    if (isinstance(value, numbers.Real)
            and not isinstance(value, (numbers.Integral, float, np.floating))):
        try:
            number = float(value)
        except OverflowError:  # beyond any float: its own text
            return str(value)
        # Its float's text only where that text reads back as exactly this value.
        if not math.isnan(number) and fractions.Fraction(canonical(number) or "nan") != value:
            return str(value)
    return canonical(value)


def canonical(value: Any) -> str | None:
    """The label a data value is matched against, or None for a missing value.

    Strings are stripped (taxonomy labels are stripped too, so surrounding whitespace could
    never match). Integral numbers, including floats such as ``39.0``, become ``str(int(v))``
    so that an age read as a float still finds the leaf ``"39"``; other floats become
    ``str(float(v))``. Booleans become ``"True"``/``"False"``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return None
        if number.is_integer():
            return str(int(number))
        return str(number)
    if value is pd.NA or value is pd.NaT:
        return None
    raise TypeError(
        f"value {value!r} of type {type(value).__name__} cannot be matched to a hierarchy "
        "label: convert the column to strings or numbers first"
    )


def given_label(value: Any, where: str) -> str:
    """A taxonomy label given by the caller (from_rows, from_dict): a string or a number."""
    label = canonical(value) if isinstance(value, (str, numbers.Real, np.bool_)) else None
    if label is not None:
        return label
    raise TypeError(
        f"{where}: a label must be a string or a number, got {value!r} "
        f"({type(value).__name__})"
    )


def _mixes_booleans(data: Any) -> bool:
    """True for an object column holding booleans among other values (scanned only then)."""
    if not pd.api.types.is_object_dtype(getattr(data, "dtype", None)):
        return False
    if pd.api.types.infer_dtype(data, skipna=True) not in ("mixed", "mixed-integer"):
        return False
    return any(isinstance(value, (bool, np.bool_)) for value in data)


def factorize(values: Any, name: str) -> tuple[NDArray[np.intp], list[Any]]:
    """Codes (-1 for missing) and the distinct raw values in order of first occurrence.

    Works on lists, tuples, NumPy arrays, pandas Series/Index/Categorical; a scalar is
    treated as a one-element sequence. Hashing is done by pandas, so only the distinct
    values are handled in Python.
    """
    if isinstance(values, pd.DataFrame):
        raise TypeError(f"{name}: got a DataFrame; pass a single column, e.g. frame['column']")
    data: Any
    if isinstance(values, (pd.Series, pd.Index, ExtensionArray, np.ndarray)):
        data = values.reshape(1) if isinstance(values, np.ndarray) and values.ndim == 0 else values
    elif isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        data = pd.Series([values], dtype=object)
    else:
        items = list(values)
        data = pd.Series(items, dtype=None if items else object)
    if np.ndim(data) != 1:
        raise ValueError(
            f"{name} must be one-dimensional (one value per row); got shape {np.shape(data)}"
        )
    try:
        codes, uniques = pd.factorize(data, use_na_sentinel=True)
        found = list(uniques.tolist())
        if _mixes_booleans(data):
            # Hashing makes True == 1 and False == 0, so the first of them seen would stand
            # for both (1 published as "True"): tell booleans apart.
            keys = pd.Series(data, dtype=object).map(
                lambda x: ("bool", bool(x)) if isinstance(x, (bool, np.bool_)) else x
            )
            codes, uniques = pd.factorize(keys, use_na_sentinel=True)
            found = [x[1] if isinstance(x, tuple) else x for x in uniques.tolist()]
    except TypeError as exc:  # unhashable elements, e.g. lists
        raise TypeError(f"{name}: values must be strings or numbers ({exc})") from None
    return np.asarray(codes, dtype=np.intp), found


def decode(data: bytes, encoding: str, source: str) -> str:
    """The text of a file's bytes; a bad byte's error names the file, its line and the fix."""
    try:
        return data.decode(encoding)
    except LookupError:
        raise ValueError(
            f"{source}: unknown encoding {encoding!r}; pass a Python codec name such as "
            "'utf-8' or 'latin-1'"
        ) from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{source}: line {line} is not valid {encoding} (byte 0x{data[exc.start]:02x} at "
            f"offset {exc.start}); pass the file's encoding, e.g. encoding='latin-1', or "
            f"save it as {encoding}"
        ) from None


def leading_zeros_error(name: str, column: str | None, problems: list[str],
                        zeros: tuple[tuple[str, str], ...]) -> LeadingZerosError:
    """The mismatch of values that are leaves but for their leading zeros, with the fix."""
    pairs = ", ".join(f"{value!r} for the leaf {leaf!r}" for value, leaf in zeros)
    data_lost = len(zeros[0][0]) < len(zeros[0][1])
    if data_lost:
        how = (f"read the column as text so that it keeps them, e.g. pd.read_csv(path, "
               f"dtype={{{column!r}: str}})" if column is not None
               else "read the values as text so that they keep them (dtype=str)")
        fix = f"the values lost their leading zeros ({pairs}): {how}"
    else:
        fix = (f"the hierarchy's leaves lost their leading zeros ({pairs}): write its file "
               "with the zeros, as the data has them")
    return LeadingZerosError(f"{name}: " + "; also ".join(problems) + f"; {fix}",
                             column, zeros, data_lost)


def distinct_values(values: Any,
              factorized: tuple[NDArray[np.intp], list[Any]] | None = None) -> list[Any]:
    """The distinct values of ``values`` in order of first occurrence; a missing value, or
    none at all, is refused."""
    codes, uniques = factorized if factorized is not None else factorize(values, "values")
    if (codes < 0).any():
        missing = int((codes < 0).sum())
        raise ValueError(
            f"values contain {missing} missing value(s) (None/NaN), first at position "
            f"{int(np.flatnonzero(codes < 0)[0])}; drop or impute them first"
        )
    if not uniques:
        raise ValueError("values is empty; a hierarchy needs at least one value")
    return uniques


def encode(text: str, encoding: str, target: str) -> bytes:
    """The bytes of a file's text; a character the encoding lacks names the file and fix."""
    try:
        return text.encode(encoding)
    except LookupError:
        raise ValueError(f"{target}: unknown encoding {encoding!r}; pass a Python codec name "
                         "such as 'utf-8'") from None
    except UnicodeEncodeError as exc:
        raise ValueError(f"{target}: {exc.object[exc.start]!r} cannot be written in "
                         f"{encoding}; pass encoding='utf-8'") from None


def format_examples(labels: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(label) for label in labels[:limit])
    return shown + (", ..." if len(labels) > limit else "")


def checked_root(root: Any) -> str:
    if not isinstance(root, str) or not root.strip():
        raise ValueError(f"root must be a non-empty string label such as '*', got {root!r}")
    return root.strip()

def leaf_lookup(leaf_of: Mapping[str, int], leaves: Sequence[str], values: Any,
                column: str | None) -> NDArray[np.int64]:
    """The leaf index of every value (:meth:`Hierarchy.leaf_index`); ``leaf_of`` maps a
    leaf label to its index. An unknown or missing value raises, naming ``column``."""
    name = f"column {column!r}" if column is not None else "values"
    codes, uniques = factorize(values, name)
    lookup = np.empty(len(uniques), dtype=np.int64)
    unknown: list[str] = []
    for position, value in enumerate(uniques):
        try:
            label = canonical(value)
        except TypeError as exc:
            raise TypeError(f"{name}: {exc}") from None
        index = leaf_of.get(label, -1) if label is not None else -1
        if index < 0 and label is not None and label not in unknown:
            unknown.append(label)
        lookup[position] = index
    missing = codes < 0
    problems: list[str] = []
    if unknown:
        whose = "its" if column is not None else "the"
        problems.append(
            f"{len(unknown)} value(s) not in {whose} hierarchy, e.g. "
            f"{format_examples(unknown)}; add them as leaves of the hierarchy file or "
            "fix the data"
        )
    if missing.any():
        problems.append(
            f"{int(missing.sum())} missing value(s) (None/NaN), first at position "
            f"{int(np.flatnonzero(missing)[0])}; a hierarchy has no leaf for a missing "
            "value, so drop or impute those rows first"
        )
    if problems:
        zeros = _zeros_apart(leaves, unknown)
        if zeros:
            raise leading_zeros_error(name, column, problems, zeros)
        raise ValueError(f"{name}: " + "; also ".join(problems))
    return lookup[codes]


def _zeros_apart(leaves: Sequence[str],
                 unknown: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(value, leaf)`` for the unknown values made of digits that match a leaf once
    leading zeros are added or removed (``2134`` and ``02134``), the first five."""
    digits = [label for label in unknown if label.isdigit()]
    if not digits:
        return ()
    by_number: dict[str, str] = {}
    for leaf in leaves:
        if leaf.isdigit():
            by_number.setdefault(leaf.lstrip("0") or "0", leaf)
    found = [(label, by_number[label.lstrip("0") or "0"]) for label in digits
             if (label.lstrip("0") or "0") in by_number]
    return tuple(found[:5])
