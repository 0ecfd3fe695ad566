"""Generalization taxonomies (hierarchies) for quasi-identifier columns (docs/design/publishing.md).

A :class:`Hierarchy` is a tree over one column's values: the leaves are the values, every
inner node is a generalization of the leaves below it, and the root (``*`` by convention)
stands for "any value". A categorical quasi-identifier of a group is published as the lowest
common ancestor (LCA) of its values, and the group's loss for that column is the number of
leaves under that LCA divided by the number of leaves of the tree.

The tree is stored as flat NumPy arrays so the engine can work on integer codes:

* nodes ``0 .. n_leaves-1`` are the leaves, numbered in depth-first order (children in
  order of first appearance), and the inner nodes follow in depth-first pre-order, so the
  root is node ``n_leaves``;
* because leaves are numbered depth-first, every node covers a contiguous range
  ``first_leaf[n] .. last_leaf[n]`` of leaf indices, and the LCA of any set of leaves is the
  LCA of its smallest and largest index. That makes the LCA of a group two reductions
  (``min`` and ``max``) plus a short climb.

A node is identified by its path from the root, not by its label: the same label may occur
in several places (for example a leaf ``Other`` under one branch and an inner node ``Other``
under another). Leaf labels must be unique, because data values are matched to leaves by
label.

Taxonomy files use ARX's format (one row per leaf, ``leaf;level1;...;root``); rows may have
different lengths (a "ragged" tree), as in the UCI Adult taxonomies of Basic Mondrian.
"""

from __future__ import annotations

import fractions
import math
import numbers
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pandas.api.extensions import ExtensionArray

from proxanon._errors import LeadingZerosError
from proxanon._hierarchy_levels import date_paths, masking_paths, order_paths
from proxanon._validate import DECIMAL_TOLERANCE

__all__ = ["Hierarchy"]

#: Largest magnitude up to which every integer is exactly representable as a float64.
_EXACT_FLOAT_INT = 2.0**53



def _own_label(value: Any) -> str | None:
    """The leaf label of a column's own value (:meth:`Hierarchy.flat_column`)."""
    if isinstance(value, str):
        return value
    if (isinstance(value, numbers.Real)
            and not isinstance(value, (numbers.Integral, float, np.floating))):
        try:
            number = float(value)
        except OverflowError:  # beyond any float: its own text
            return str(value)
        # Its float's text only where that text reads back as exactly this value.
        if not math.isnan(number) and fractions.Fraction(_canonical(number) or "nan") != value:
            return str(value)
    return _canonical(value)


def _canonical(value: Any) -> str | None:
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


def _label(value: Any, where: str) -> str:
    """A taxonomy label given by the caller (from_rows, from_dict): a string or a number."""
    label = _canonical(value) if isinstance(value, (str, numbers.Real, np.bool_)) else None
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


def _factorize(values: Any, name: str) -> tuple[NDArray[np.intp], list[Any]]:
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


def _decode(data: bytes, encoding: str, source: str) -> str:
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


def _leading_zeros_error(name: str, column: str | None, problems: list[str],
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


def _distinct(values: Any,
              factorized: tuple[NDArray[np.intp], list[Any]] | None = None) -> list[Any]:
    """The distinct values of ``values`` in order of first occurrence; a missing value, or
    none at all, is refused."""
    codes, uniques = factorized if factorized is not None else _factorize(values, "values")
    if (codes < 0).any():
        missing = int((codes < 0).sum())
        raise ValueError(
            f"values contain {missing} missing value(s) (None/NaN), first at position "
            f"{int(np.flatnonzero(codes < 0)[0])}; drop or impute them first"
        )
    if not uniques:
        raise ValueError("values is empty; a hierarchy needs at least one value")
    return uniques


def _encode(text: str, encoding: str, target: str) -> bytes:
    """The bytes of a file's text; a character the encoding lacks names the file and fix."""
    try:
        return text.encode(encoding)
    except LookupError:
        raise ValueError(f"{target}: unknown encoding {encoding!r}; pass a Python codec name "
                         "such as 'utf-8'") from None
    except UnicodeEncodeError as exc:
        raise ValueError(f"{target}: {exc.object[exc.start]!r} cannot be written in "
                         f"{encoding}; pass encoding='utf-8'") from None


def _format_examples(labels: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(label) for label in labels[:limit])
    return shown + (", ..." if len(labels) > limit else "")


def _clean_row(row: Any, where: str | _RowPlace) -> tuple[str, ...] | None:
    """A taxonomy row as stripped labels (leaf first), or None for a blank row.

    Trailing empty fields (a trailing separator) are ignored; an empty field before the last
    label is an error, as is a row with a single label (a leaf needs a root above it).
    """
    if isinstance(row, (str, bytes)):
        raise TypeError(
            f"{where} is a string ({row!r}); each row must be a sequence of labels "
            "(leaf, parent, ..., root), e.g. line.split(';')"
        )
    if not isinstance(row, Iterable):
        raise TypeError(
            f"{where} must be a sequence of labels (leaf, parent, ..., root), "
            f"got {type(row).__name__}"
        )
    fields = [field.strip() if isinstance(field, str) else field for field in row]
    while fields and fields[-1] == "":
        fields.pop()
    if not fields:
        return None
    # A stripped string is its own label (_canonical): only other values need converting.
    labels = (tuple(fields) if all(type(field) is str for field in fields)
              else tuple(_label(field, str(where)) for field in fields))
    if "" in labels:
        position = labels.index("")
        raise ValueError(
            f"{where} has an empty field at position {position + 1} of {len(labels)} "
            f"({';'.join(labels)!r}); every level between the leaf and the root needs a label"
        )
    if len(labels) == 1:
        raise ValueError(
            f"{where} has a single label {labels[0]!r}; a row must list the leaf and then its "
            "ancestors up to the root (e.g. 'value;*'), since the root alone cannot be a leaf"
        )
    return labels


@dataclass(frozen=True)
class _RowPlace:
    """Row ``number`` of ``source`` in the words of a message, formatted only when shown."""

    source: str
    number: int

    def __str__(self) -> str:
        return f"{self.source}: row {self.number}" if self.source else f"row {self.number}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


class _RowPlaces(Sequence[str]):
    """Where each kept row is (``numbers``: their 1-based row numbers), as messages say it."""

    def __init__(self, source: str, numbers: list[int]) -> None:
        self._source, self._numbers = source, numbers

    def __len__(self) -> int:
        return len(self._numbers)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return [str(_RowPlace(self._source, n)) for n in self._numbers[i]]
        return str(_RowPlace(self._source, self._numbers[i]))


def _rows_to_paths(
    rows: Iterable[Any], source: str
) -> tuple[list[tuple[str, ...]], Sequence[str]]:
    """Root-first paths and their row descriptions from leaf-first rows; checks the root.

    ``source`` (a file name, or "" for in-memory rows) prefixes the row numbers in errors.
    """
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
        raise TypeError(
            "rows must be an iterable of rows, each a sequence of labels "
            f"(leaf, parent, ..., root); got {type(rows).__name__}"
        )
    return _labels_to_paths(((number, _clean_row(row, _RowPlace(source, number)))
                             for number, row in enumerate(rows, start=1)), source)


def _text_rows(text: str, sep: str, source: str
               ) -> Iterator[tuple[int, tuple[str, ...] | None]]:
    """The rows of a taxonomy file's ``text`` as :func:`_clean_row` makes them, per row
    number: white space around separators and at the ends removed, then trailing
    separators; a row that is still not plain labels goes to :func:`_clean_row` (its
    error)."""
    s = re.escape(sep)
    if re.search(rf"[^\S\n]{s}|{s}[^\S\n]", text):
        text = re.sub(rf"[^\S\n]*{s}[^\S\n]*", sep, text)
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        while line.endswith(sep):
            line = line[:-len(sep)]
        if not line:
            yield number, None
            continue
        labels = tuple(line.split(sep))
        if len(labels) < 2 or "" in labels:
            yield number, _clean_row(list(labels), _RowPlace(source, number))
            continue
        yield number, labels


def _labels_to_paths(rows: Iterable[tuple[int, tuple[str, ...] | None]], source: str
                     ) -> tuple[list[tuple[str, ...]], Sequence[str]]:
    """Root-first paths and their row descriptions from cleaned leaf-first rows (None: a
    blank row) by row number; checks the root."""
    paths: list[tuple[str, ...]] = []
    row_numbers: list[int] = []
    wheres = _RowPlaces(source, row_numbers)
    root: str | None = None
    for number, labels in rows:
        if labels is None:
            continue
        if root is None:
            root = labels[-1]
        elif labels[-1] != root:
            raise ValueError(
                f"{_RowPlace(source, number)} ends at root {labels[-1]!r} but {wheres[0]} ends "
                f"at root {root!r}; every row must end at the same root label"
            )
        paths.append(labels[::-1])
        row_numbers.append(number)
    if not paths:
        raise ValueError(
            f"{source or 'rows'}: no rows; a hierarchy needs at least one row "
            "'leaf;...;root'"
        )
    return paths, wheres


def _describe_path(path: Sequence[str]) -> str:
    return " > ".join(repr(label) for label in path)


class Hierarchy:
    """A generalization taxonomy (tree) over one column's values.

    Build one with :meth:`from_csv` (ARX files), :meth:`from_rows`, :meth:`from_dict`,
    :meth:`from_intervals` (nested numeric bands), :meth:`from_masking` (codes masked from
    the right), :meth:`from_order` (groups of ordered values), :meth:`from_dates` (calendar
    periods) or :meth:`flat`; ``Hierarchy(rows)`` is the same as ``Hierarchy.from_rows(rows)``.
    :meth:`to_csv` writes any of them as an ARX file.

    Attributes (the arrays are read-only):

    ``leaves``
        leaf labels in depth-first order; leaf ``i`` is node ``i``.
    ``labels``
        the label of every node: the leaves first, then the inner nodes in depth-first
        pre-order (the root is node ``n_leaves``).
    ``parent``, ``depth``
        int32 per node; the root has parent -1 and depth 0.
    ``leaf_counts``, ``first_leaf``, ``last_leaf``
        int64 per node: the number of leaves under the node and the contiguous range of leaf
        indices it covers (a leaf covers itself).
    ``root``, ``height``, ``n_leaves``
        the root label, the largest leaf depth (edges from the root) and the number of
        leaves.
    """

    leaves: tuple[str, ...]
    labels: tuple[str, ...]
    parent: NDArray[np.int32]
    depth: NDArray[np.int32]
    leaf_counts: NDArray[np.int64]
    first_leaf: NDArray[np.int64]
    last_leaf: NDArray[np.int64]
    root: str
    height: int
    n_leaves: int

    def __init__(self, rows: Iterable[Sequence[str]]) -> None:
        paths, wheres = _rows_to_paths(rows, "")
        self._build(paths, wheres)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_csv(
        cls, path: str | os.PathLike[str], sep: str = ";", encoding: str = "utf-8",
        *, column: str | None = None,
    ) -> Hierarchy:
        """Reads a taxonomy file in ARX's format: one ``leaf;level1;...;root`` row per leaf.

        Rows may have different lengths (ragged trees). Blank lines are skipped, fields are
        stripped of whitespace, LF and CRLF line endings and a UTF-8 byte-order mark are
        accepted, and a trailing separator is ignored. There is no quoting: a label cannot
        contain ``sep``. The file is decoded with ``encoding`` (e.g. ``"latin-1"`` for an
        older ARX export). Errors name the file, the row (line) number and, when given,
        the ``column`` the taxonomy is for.
        """
        if not isinstance(sep, str) or sep == "":
            raise ValueError(f"sep must be a non-empty string such as ';', got {sep!r}")
        source = os.fspath(path)
        if column is not None:
            source = f"{source} (hierarchy of column {column!r})"
        with open(path, "rb") as handle:
            data = handle.read()
        text = _decode(data, encoding, source)
        text = text.removeprefix("\ufeff")
        hierarchy = cls.__new__(cls)
        paths, wheres = _labels_to_paths(_text_rows(text, sep, source), source)
        hierarchy._build(paths, wheres)
        return hierarchy

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[str]]) -> Hierarchy:
        """A taxonomy from rows ``(leaf, parent, ..., root)``, as in an ARX file.

        Rows may differ in length; all must end at the same root. Labels may be strings or
        numbers (numbers are written as :meth:`leaf_index` matches them, e.g. ``39.0`` ->
        ``"39"``). Empty rows are skipped; errors name the (1-based) row number.
        """
        return cls(rows)

    @classmethod
    def from_dict(cls, tree: Mapping[Any, Any]) -> Hierarchy:
        """A taxonomy from nested mappings: ``{label: children}``.

        ``children`` is a mapping (a subtree), a list or tuple of leaf labels, or None (the
        label is a leaf). Children keep the mapping's / list's order. If the top-level
        mapping has exactly one key, that key is the root; otherwise its keys hang under an
        implicit root ``"*"``. Example::

            Hierarchy.from_dict({"*": {"Government": ["Federal-gov", "State-gov"],
                                       "Private": None}})
        """
        if not isinstance(tree, Mapping):
            raise TypeError(
                f"from_dict expects a mapping {{label: children}}, got {type(tree).__name__}"
            )
        if not tree:
            raise ValueError("from_dict got an empty mapping; a hierarchy needs at least one leaf")
        if len(tree) == 1:
            (key, children), = tree.items()
            root = _label(key, "from_dict: the root")
            if root == "":
                raise ValueError("from_dict: the root label is empty; use e.g. '*'")
            if children is None:
                raise ValueError(
                    f"from_dict: the single top-level key {root!r} is taken as the root, but "
                    f"it has no children; give it children or wrap it, e.g. "
                    f"{{'*': {{{root!r}: None}}}}"
                )
        else:
            root, children = "*", tree
        paths: list[tuple[str, ...]] = []
        wheres: list[str] = []
        stack: list[tuple[tuple[str, ...], Any]] = [((root,), children)]
        while stack:
            prefix, node_children = stack.pop()
            where = f"from_dict: {_describe_path(prefix)}"
            if node_children is None:
                paths.append(prefix)
                wheres.append("from_dict")  # errors about a leaf also print its path
                continue
            if isinstance(node_children, Mapping):
                items = [
                    (prefix + (_label(key, where),), sub) for key, sub in node_children.items()
                ]
            elif isinstance(node_children, (list, tuple)):
                items = []
                for item in node_children:
                    if isinstance(item, (Mapping, list, tuple, set)):
                        raise TypeError(
                            f"{where}: a list of children may hold only leaf labels, got "
                            f"{type(item).__name__} {item!r}; use a mapping for subtrees"
                        )
                    items.append((prefix + (_label(item, where),), None))
            else:
                hint = "; sets have no order, use a list" if isinstance(
                    node_children, (set, frozenset)
                ) else ""
                raise TypeError(
                    f"{where}: children must be a mapping (subtree), a list/tuple of leaf "
                    f"labels or None (a leaf), got {type(node_children).__name__}{hint}"
                )
            if not items:
                raise ValueError(
                    f"{where} has an empty collection of children; use None to make it a leaf"
                )
            for item_path, _ in items:
                if item_path[-1] == "":
                    raise ValueError(f"{where} has a child with an empty label")
            stack.extend(reversed(items))
        hierarchy = cls.__new__(cls)
        hierarchy._build(paths, wheres)
        return hierarchy

    @classmethod
    def from_intervals(
        cls,
        values: Any,
        widths: Sequence[float],
        *,
        origin: float = 0,
        root: str = "*",
    ) -> Hierarchy:
        """A numeric taxonomy of nested intervals (bands) over the distinct ``values``.

        The leaves are the distinct values in ascending order. Level ``j`` (``j = 0`` just
        above the leaves) puts a value ``v`` in the band starting at
        ``a = origin + floor((v - origin) / widths[j]) * widths[j]``; the root is on top.
        The widths must be positive, strictly increasing, and each an integer multiple of the
        previous one, so that every band lies inside one band of the next level. Bands are
        labelled ``"a-b"`` with ``b = a + width - 1`` when the values, origin and widths are
        all integers (ARX style, e.g. ``"35-39"``), else ``"[a, a + width)"``; for floats, a
        value within a relative ``DECIMAL_TOLERANCE`` (1e-9) below a boundary counts as on
        it (so ``0.3`` is in ``[0.3, 0.4)`` with width ``0.1``). An empty ``widths`` gives a
        flat hierarchy.

        ARX's age hierarchy puts 1..5 in a band it labels ``"0-4"``; ``origin=1`` gives the
        same bands, labelled ``"1-5"``.
        """
        numbers_, integral = _numeric_values(values, "values")
        origin_value = _finite_real(origin, "origin")
        width_values = _check_widths(widths)
        root_label = _root_label(root)
        integral = (
            integral
            and float(origin_value).is_integer()
            and all(float(w).is_integer() for w in width_values)
        )
        distinct = np.unique(numbers_)
        leaf_labels = [_canonical(v) or "" for v in distinct.tolist()]
        levels: list[list[str]] = []
        _check_band_range(distinct, origin_value, width_values, integral)
        if integral:
            ints = distinct.astype(np.int64)
            start = int(origin_value)
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
        else:
            floats = distinct.astype(np.float64)
            start_f = float(origin_value)
            previous = None
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
        paths = [
            (root_label, *(level[i] for level in reversed(levels)), leaf_labels[i])
            for i in range(len(leaf_labels))
        ]
        wheres = [f"from_intervals: value {label!r}" for label in leaf_labels]
        hierarchy = cls.__new__(cls)
        hierarchy._build(paths, wheres)
        return hierarchy

    @classmethod
    def from_masking(cls, values: Any, *, width: int | None = None, mask: str = "*",
                     root: str = "*") -> Hierarchy:
        """Codes masked from the right: ``02134`` -> ``0213*`` -> ``021**`` -> ... -> root.

        The leaves are the distinct codes, sorted; level ``j`` above them hides their last
        ``j`` characters behind ``mask``, and the fully masked code is the root (pass
        ``root="*****"`` for ARX's look). Codes are text and keep their leading zeros; all
        must have one width. A number, or codes of several widths, are refused (a ZIP code
        read as the number 2134 has lost its zero) unless ``width`` is given: then whole
        numbers and codes of digits are padded with zeros on the left to ``width``
        characters, and the data must then be written the same way to match the leaves.
        """
        root_label = _root_label(root)
        return cls._from_paths(masking_paths(_distinct(values), width=width, mask=mask,
                                             root=root_label), "from_masking")

    @classmethod
    def from_order(cls, values: Any, sizes: Sequence[int], *, root: str = "*") -> Hierarchy:
        """Ordered values in groups of adjacent ones, as ARX's order-based builder makes.

        ``values`` are the distinct values from low to high (an ordered pandas Categorical
        gives its categories), and they are the leaves in that order. ``sizes[0]`` values
        make a group of the first level, ``sizes[1]`` of those groups one of the second, and
        so on; the last group of a level may be smaller. Groups are labelled by their first
        and last value, ``[first, last]`` (``[first]`` for one value). ``sizes=(2, 4)`` over
        ten values gives groups of 2 values, then of 8, under the root.
        """
        if isinstance(values, (pd.Series, pd.Categorical)) and isinstance(
                values.dtype, pd.CategoricalDtype) and values.dtype.ordered:
            values = list(values.dtype.categories)
        codes, uniques = _factorize(values, "values")
        _distinct(values, (codes, uniques))
        repeated = pd.Series(codes).duplicated().to_numpy()
        if repeated.any():
            raise ValueError(f"values list {uniques[codes[int(np.argmax(repeated))]]!r} more "
                             "than once; give each value once, from low to high")
        leaves = [_label(value, "values") for value in uniques]
        return cls._from_paths(order_paths(leaves, sizes, _root_label(root)), "from_order")

    @classmethod
    def from_dates(cls, values: Any, levels: Sequence[str] = ("month", "year"), *,
                   root: str = "*") -> Hierarchy:
        """Dates generalized to calendar periods, finest first.

        ``values`` are dates, datetimes, ``datetime64`` values or ISO date strings
        (``YYYY-MM-DD``, with a time of day or not). The leaves are the distinct values in
        time order, labelled as written for strings (so they match the column's text) and
        in ISO form otherwise. ``levels`` are taken from ``day`` (``2024-03-05``, for
        values with a time of day), ``month`` (``2024-03``), ``quarter`` (``2024-Q1``),
        ``year`` (``2024``), ``decade`` (``2020-2029``) and ``century`` (``2000-2099``), in
        that order; each period lies inside one period of the next level.
        """
        return cls._from_paths(date_paths(_distinct(values), levels, _root_label(root)),
                               "from_dates")

    @classmethod
    def _from_paths(cls, paths: list[tuple[str, ...]], builder: str) -> Hierarchy:
        hierarchy = cls.__new__(cls)
        hierarchy._build(paths, [f"{builder}: value {path[-1]!r}" for path in paths])
        return hierarchy

    @classmethod
    def flat(cls, values: Any, root: str = "*") -> Hierarchy:
        """A one-level taxonomy: the distinct values as leaves directly under ``root``.

        Values are matched as in :meth:`leaf_index` (``39`` and ``39.0`` are one leaf
        ``"39"``). Leaves are sorted numerically when every value is a number, else as
        strings. Only values that occur are leaves (unused categories of a Categorical are
        not).
        """
        hierarchy, _ = cls._flat_of(values, root, _canonical)
        return hierarchy

    @classmethod
    def flat_column(cls, values: Any, root: str = "*") -> tuple[Hierarchy, NDArray[np.int64]]:
        """A one-level taxonomy of a column's own values, and each value's leaf index.

        As :meth:`flat`, but a string is its own leaf exactly as given: ``"a"`` and ``"a "``
        are two leaves, each published as itself (``flat`` and :meth:`leaf_index` strip
        strings to match the labels of a taxonomy written by hand). Numbers are matched as
        in ``flat``, but an exact number whose float's text is not exactly it
        (``Fraction(1, 3)``, ``Fraction(1, 2**60)``) is its own leaf, published as its own
        text (``1/3``, ``1/1152921504606846976``).
        """
        return cls._flat_of(values, root, _own_label)

    @classmethod
    def _flat_of(cls, values: Any, root: str,
                 label_of: Callable[[Any], str | None]) -> tuple[Hierarchy, NDArray[np.int64]]:
        """The flat taxonomy of ``values`` with each distinct value's leaf labelled
        ``label_of(value)`` (values with one label share a leaf), and every value's leaf."""
        root_label = _root_label(root)
        codes, uniques = _factorize(values, "values")
        _distinct(values, (codes, uniques))
        labels: dict[str, Any] = {}
        label_of_unique: list[str] = []
        for value in uniques:
            label = label_of(value)
            if label is None or label.strip() == "":
                raise ValueError(
                    f"values contain {value!r}, which cannot be a label; drop or replace it"
                )
            labels.setdefault(label, value)
            label_of_unique.append(label)
        numeric = all(
            isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
            for v in labels.values()
        )
        if numeric:
            ordered = sorted(labels, key=lambda label: labels[label])  # exact, any size
        else:
            ordered = sorted(labels)
        paths = [(root_label, label) for label in ordered]
        wheres = [f"flat: value {label!r}" for label in ordered]
        hierarchy = cls.__new__(cls)
        hierarchy._build(paths, wheres)
        leaf = np.array([hierarchy._leaf_of[label] for label in label_of_unique], dtype=np.int64)
        return hierarchy, leaf[codes]

    # ------------------------------------------------------------------ construction

    def _build(self, paths: Sequence[tuple[str, ...]], wheres: Sequence[str]) -> None:
        """Builds the arrays from root-first paths (one per leaf, in input order).

        Checks that leaf labels are unique, that no path both ends at a node (a leaf) and
        passes through it (an inner node) - e.g. rows 'A;*' and 'B;A;*' - and that no label
        names two nodes (rows 'M;F;*' and 'F;M;*' would make each value the other's parent,
        and a published 'F' would not say which node it is). Since a label names one node,
        nodes are kept by label: a label seen again under another parent names a second
        node. ``wheres[i]`` describes path i; it is read only for a message. O(cells).
        """
        parent_of: dict[str, str] = {}      # each node below the root: its parent's label
        first_at: dict[str, int] = {}       # the path where each label first appears
        children: dict[str, list[str]] = {}  # inner nodes: their children, first seen first
        leaf_at: dict[str, int] = {}
        root_label = paths[0][0]
        children[root_label] = []

        def path_of(label: str) -> tuple[str, ...]:
            path = [label]
            while path[-1] in parent_of:
                path.append(parent_of[path[-1]])
            return tuple(reversed(path))

        previous: tuple[str, ...] = ()
        for i, path in enumerate(paths):
            leaf = path[-1]
            if path.count(root_label) > 1:
                what = "a leaf" if leaf == root_label else "an inner node"
                raise ValueError(
                    f"{wheres[i]}: {what} below the root is labelled {root_label!r} like the "
                    f"root (path {_describe_path(path)}), so a published {root_label!r} would "
                    "not say whether it is that node or any value; rename it"
                )
            if leaf in leaf_at:
                other = leaf_at[leaf]
                raise ValueError(
                    f"leaf {leaf!r} is listed twice: at {wheres[other]} "
                    f"({_describe_path(paths[other])}) and at {wheres[i]} "
                    f"({_describe_path(path)}); each value must be a leaf exactly once, so "
                    "remove or rename one of them"
                )
            if leaf in children and path_of(leaf) == path:
                raise ValueError(
                    f"{leaf!r} is a leaf at {wheres[i]} but an inner node at "
                    f"{wheres[first_at[leaf]]} (path {_describe_path(path)}); a value cannot "
                    "be both, so rename one"
                )
            # The inner nodes this path shares with the one before were checked there.
            start, shared = 1, min(len(path), len(previous)) - 1
            while start < shared and path[start] == previous[start]:
                start += 1
            previous = path
            for at in range(start, len(path)):
                label, above = path[at], path[at - 1]
                known = parent_of.setdefault(label, above)
                if known != above:
                    raise ValueError(
                        f"label {label!r} names two nodes: {_describe_path(path_of(label))} "
                        f"at {wheres[first_at[label]]} and {_describe_path(path[:at + 1])} "
                        f"at {wheres[i]}; each label must name one node (a cycle such as rows "
                        "'M;F;*' and 'F;M;*' does this), so rename one of them"
                    )
                if label not in first_at:
                    first_at[label] = i
                    children[above].append(label)
                    if at < len(path) - 1:
                        children[label] = []
                elif at < len(path) - 1 and label in leaf_at:
                    raise ValueError(
                        f"{label!r} is a leaf at {wheres[leaf_at[label]]} but an inner node "
                        f"at {wheres[i]} (path {_describe_path(path[:at + 1])}); a value "
                        "cannot be both, so rename one"
                    )
            leaf_at[leaf] = i

        n_leaves = len(paths)
        n_nodes = n_leaves + len(children)
        labels: list[str] = [""] * n_nodes
        parent = np.full(n_nodes, -1, dtype=np.int32)
        depth = np.zeros(n_nodes, dtype=np.int32)
        next_leaf, next_inner = 0, n_leaves
        stack: list[tuple[str, int, int]] = [(root_label, -1, 0)]
        while stack:
            label, parent_id, level = stack.pop()
            if label in children:
                node, next_inner = next_inner, next_inner + 1
                stack.extend((child, node, level + 1) for child in reversed(children[label]))
            else:
                node, next_leaf = next_leaf, next_leaf + 1
            labels[node] = label
            parent[node] = parent_id
            depth[node] = level

        # Leaves cover themselves; an inner node covers the union of its children's ranges.
        # Propagate one depth level at a time, deepest first (children before parents).
        first = np.full(n_nodes, n_leaves, dtype=np.int64)
        last = np.full(n_nodes, -1, dtype=np.int64)
        first[:n_leaves] = np.arange(n_leaves)
        last[:n_leaves] = np.arange(n_leaves)
        for level in range(int(depth.max()), 0, -1):
            nodes = np.flatnonzero(depth == level)
            np.minimum.at(first, parent[nodes], first[nodes])
            np.maximum.at(last, parent[nodes], last[nodes])
        counts = last - first + 1

        for array in (parent, depth, first, last, counts):
            array.setflags(write=False)
        self.labels = tuple(labels)
        self.leaves = self.labels[:n_leaves]
        self.parent = parent
        self.depth = depth
        self.first_leaf = first
        self.last_leaf = last
        self.leaf_counts = counts
        self.root = root_label
        self.n_leaves = n_leaves
        self.height = int(depth[:n_leaves].max())
        self._leaf_of = {label: index for index, label in enumerate(self.leaves)}

    # ------------------------------------------------------------------ queries

    def leaf_index(self, values: Any, column: str | None = None) -> NDArray[np.int64]:
        """The depth-first leaf index of every value (int64, same length as ``values``).

        ``values`` may be a list, NumPy array, pandas Series/Index/Categorical of strings or
        numbers; numbers match labels as ``str(int(v))`` when integral (``39.0`` -> ``"39"``)
        and ``str(float(v))`` otherwise, and strings are stripped. Only distinct values are
        looked up, so long columns are cheap. A value that is not a leaf, or a missing value
        (None/NaN), raises ValueError naming ``column`` (if given) and up to five of the
        offending values in order of first occurrence.
        """
        name = f"column {column!r}" if column is not None else "values"
        codes, uniques = _factorize(values, name)
        lookup = np.empty(len(uniques), dtype=np.int64)
        unknown: list[str] = []
        for position, value in enumerate(uniques):
            try:
                label = _canonical(value)
            except TypeError as exc:
                raise TypeError(f"{name}: {exc}") from None
            index = self._leaf_of.get(label, -1) if label is not None else -1
            if index < 0 and label is not None and label not in unknown:
                unknown.append(label)
            lookup[position] = index
        missing = codes < 0
        problems: list[str] = []
        if unknown:
            whose = "its" if column is not None else "the"
            problems.append(
                f"{len(unknown)} value(s) not in {whose} hierarchy, e.g. "
                f"{_format_examples(unknown)}; add them as leaves of the hierarchy file or "
                "fix the data"
            )
        if missing.any():
            problems.append(
                f"{int(missing.sum())} missing value(s) (None/NaN), first at position "
                f"{int(np.flatnonzero(missing)[0])}; a hierarchy has no leaf for a missing "
                "value, so drop or impute those rows first"
            )
        if problems:
            zeros = self._zeros_apart(unknown)
            if zeros:
                raise _leading_zeros_error(name, column, problems, zeros)
            raise ValueError(f"{name}: " + "; also ".join(problems))
        return lookup[codes]

    def _zeros_apart(self, unknown: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """``(value, leaf)`` for the unknown values made of digits that match a leaf once
        leading zeros are added or removed (``2134`` and ``02134``), the first five."""
        digits = [label for label in unknown if label.isdigit()]
        if not digits:
            return ()
        by_number: dict[str, str] = {}
        for leaf in self.leaves:
            if leaf.isdigit():
                by_number.setdefault(leaf.lstrip("0") or "0", leaf)
        found = [(label, by_number[label.lstrip("0") or "0"]) for label in digits
                 if (label.lstrip("0") or "0") in by_number]
        return tuple(found[:5])

    def _check_leaf_indices(self, indices: Any, name: str) -> NDArray[np.int64]:
        array = np.asarray(indices)
        if array.dtype.kind not in "iu":
            if array.size == 0 and array.dtype.kind == "f":
                array = array.astype(np.int64)
            else:
                raise TypeError(
                    f"{name} must hold integer leaf indices (from leaf_index), got dtype "
                    f"{array.dtype}"
                )
        array = array.astype(np.int64, copy=False)
        bad = (array < 0) | (array >= self.n_leaves)
        if bad.any():
            raise ValueError(
                f"{name} holds leaf index {int(array[bad].flat[0])}, outside 0..{self.n_leaves - 1}"
                f" (this hierarchy has {self.n_leaves} leaves)"
            )
        return array

    def _climb(self, low: NDArray[np.int64], high: NDArray[np.int64]) -> NDArray[np.int64]:
        """Deepest ancestor of leaf ``low`` whose leaf range reaches ``high`` (>= low)."""
        node: NDArray[np.int64] = low.copy()
        parent = self.parent.astype(np.int64)
        for _ in range(self.height):
            short = self.last_leaf[node] < high
            if not short.any():
                break
            node = np.where(short, parent[node], node).astype(np.int64, copy=False)
        return node

    def lca(self, a: Any, b: Any) -> NDArray[np.int64]:
        """Node id of the lowest common ancestor of leaves ``a[i]`` and ``b[i]`` (vectorized).

        ``a`` and ``b`` are leaf indices (as returned by :meth:`leaf_index`) of broadcastable
        shapes; the result has the broadcast shape. The LCA of a leaf with itself is the leaf.
        """
        left = self._check_leaf_indices(a, "a")
        right = self._check_leaf_indices(b, "b")
        try:
            left, right = np.broadcast_arrays(left, right)
        except ValueError:
            raise ValueError(
                f"a and b must have the same (or broadcastable) shapes, got {left.shape} and "
                f"{right.shape}"
            ) from None
        low = np.minimum(left, right).ravel()
        high = np.maximum(left, right).ravel()
        return self._climb(low, high).reshape(left.shape)

    def lca_label(self, leaf_indices: Any) -> str:
        """Label of the lowest common ancestor of a non-empty set of leaf indices.

        Leaves are numbered depth-first, so this is the LCA of the smallest and the largest
        index.
        """
        indices = self._check_leaf_indices(leaf_indices, "leaf_indices")
        if indices.size == 0:
            raise ValueError("leaf_indices is empty; the LCA needs at least one leaf")
        node = self._climb(
            np.array([indices.min()], dtype=np.int64), np.array([indices.max()], dtype=np.int64)
        )
        return self.labels[int(node[0])]

    def _leaf_node(self, leaf: Any, name: str) -> int:
        label = _canonical(leaf)
        index = self._leaf_of.get(label, -1) if label is not None else -1
        if index < 0:
            inner = " (it is an inner node's label)" if label in self.labels else ""
            raise ValueError(
                f"{name} {leaf!r} is not a leaf of this hierarchy{inner}; leaves are e.g. "
                f"{_format_examples(self.leaves, 3)}"
            )
        return index

    def ancestors(self, leaf: str | float) -> list[str]:
        """Labels from ``leaf`` up to the root, both included (a leaf's row in an ARX file)."""
        node = self._leaf_node(leaf, "leaf")
        result = []
        while node >= 0:
            result.append(self.labels[node])
            node = int(self.parent[node])
        return result

    def rows(self) -> list[tuple[str, ...]]:
        """One row per leaf, in leaf order: the leaf, then its ancestors up to the root (the
        rows of an ARX file)."""
        rows = []
        for leaf in range(self.n_leaves):
            labels, node = [], leaf
            while node >= 0:
                labels.append(self.labels[node])
                node = int(self.parent[node])
            rows.append(tuple(labels))
        return rows

    def to_csv(self, path: str | os.PathLike[str], sep: str = ";",
               encoding: str = "utf-8") -> None:
        """Writes the taxonomy in ARX's format (:meth:`rows`, one ``leaf;...;root`` line
        each), which :meth:`from_csv` reads back to the same tree.

        A label holding ``sep`` or a line break, or starting or ending with a space, cannot
        be written (the format has no quoting and the reader strips fields).
        """
        content = self.csv_bytes(sep, encoding, os.fspath(path))
        with open(path, "wb") as handle:
            handle.write(content)

    def csv_bytes(self, sep: str = ";", encoding: str = "utf-8",
                  target: str = "the hierarchy file") -> bytes:
        """What :meth:`to_csv` writes, as bytes (``target`` names the file in errors)."""
        if not isinstance(sep, str) or sep == "" or "\n" in sep or "\r" in sep:
            raise ValueError(f"sep must be a non-empty string such as ';', got {sep!r}")
        for label in self.labels:
            if sep in label or "\n" in label or "\r" in label or label != label.strip():
                raise ValueError(
                    f"label {label!r} cannot be written to an ARX file with separator "
                    f"{sep!r} (no quoting, fields are stripped); pass another sep or rename it"
                )
        text = "".join(sep.join(row) + "\n" for row in self.rows())
        return _encode(text, encoding, target)

    def covers(self, label: str, leaf: str | float) -> bool:
        """True iff ``label`` is ``leaf`` itself or the label of one of its ancestors."""
        return _canonical(label) in self.ancestors(leaf)

    def __len__(self) -> int:
        return self.n_leaves

    def __repr__(self) -> str:
        return (
            f"Hierarchy(root={self.root!r}, n_leaves={self.n_leaves}, height={self.height}, "
            f"nodes={len(self.labels)}, leaves=[{_format_examples(self.leaves, 4)}])"
        )


# ---------------------------------------------------------------------- from_intervals helpers


def _finite_real(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return result


def _root_label(root: Any) -> str:
    if not isinstance(root, str) or not root.strip():
        raise ValueError(f"root must be a non-empty string label such as '*', got {root!r}")
    return root.strip()


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
