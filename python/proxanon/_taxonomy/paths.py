"""Root-first label paths, one per leaf, from what a user gives a taxonomy as.

Every constructor of :class:`proxanon.hierarchy.Hierarchy` turns its input (ARX-format rows
or a file's text, nested mappings, a column's distinct values) into paths
``(root, ..., leaf)`` and, per path, the words that say where it came from (a row number, a
mapping key), which the tree's checks print (docs/guide/hierarchies.md). Every row's own
checks (blank rows, empty fields, one root) are made here; the checks across rows
(a label naming two nodes) are the tree's. Cost: O(cells).
"""

from __future__ import annotations

import numbers
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from proxanon._taxonomy.labels import (
    checked_root,
    decode,
    distinct_values,
    encode,
    factorize,
    given_label,
)


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
    # A stripped string is its own label (canonical): only other values need converting.
    labels = (tuple(fields) if all(type(field) is str for field in fields)
              else tuple(given_label(field, str(where)) for field in fields))
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


def rows_to_paths(
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
    return labels_to_paths(((number, _clean_row(row, _RowPlace(source, number)))
                             for number, row in enumerate(rows, start=1)), source)


def text_rows(text: str, sep: str, source: str
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


def labels_to_paths(rows: Iterable[tuple[int, tuple[str, ...] | None]], source: str
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


def describe_path(path: Sequence[str]) -> str:
    return " > ".join(repr(label) for label in path)

def read_arx(path: str | os.PathLike[str], sep: str, encoding: str,
             column: str | None) -> tuple[list[tuple[str, ...]], Sequence[str]]:
    """The paths of a taxonomy file in ARX's format (:meth:`Hierarchy.from_csv`)."""
    if not isinstance(sep, str) or sep == "":
        raise ValueError(f"sep must be a non-empty string such as ';', got {sep!r}")
    source = os.fspath(path)
    if column is not None:
        source = f"{source} (hierarchy of column {column!r})"
    with open(path, "rb") as handle:
        data = handle.read()
    text = decode(data, encoding, source)
    text = text.removeprefix("\ufeff")
    return labels_to_paths(text_rows(text, sep, source), source)


def arx_bytes(labels: Sequence[str], rows: Iterable[Sequence[str]], *, sep: str,
              encoding: str, target: str) -> bytes:
    """The bytes of an ARX file of ``rows`` (leaf first), after checking that every one
    of the tree's ``labels`` can be written with ``sep``."""
    if not isinstance(sep, str) or sep == "" or "\n" in sep or "\r" in sep:
        raise ValueError(f"sep must be a non-empty string such as ';', got {sep!r}")
    for label in labels:
        if sep in label or "\n" in label or "\r" in label or label != label.strip():
            raise ValueError(
                f"label {label!r} cannot be written to an ARX file with separator "
                f"{sep!r} (no quoting, fields are stripped); pass another sep or rename it"
            )
    text = "".join(sep.join(row) + "\n" for row in rows)
    return encode(text, encoding, target)


def dict_paths(tree: Mapping[Any, Any]) -> tuple[list[tuple[str, ...]], list[str]]:
    """The paths of nested mappings ``{label: children}`` (:meth:`Hierarchy.from_dict`),
    children in the mappings' and lists' order."""
    if not isinstance(tree, Mapping):
        raise TypeError(
            f"from_dict expects a mapping {{label: children}}, got {type(tree).__name__}"
        )
    if not tree:
        raise ValueError("from_dict got an empty mapping; a hierarchy needs at least one leaf")
    if len(tree) == 1:
        (key, children), = tree.items()
        root = given_label(key, "from_dict: the root")
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
        if node_children is None:
            paths.append(prefix)
            wheres.append("from_dict")  # errors about a leaf also print its path
            continue
        items = _children(prefix, node_children)
        stack.extend(reversed(items))
    return paths, wheres


def _children(prefix: tuple[str, ...], node_children: Any) -> list[tuple[tuple[str, ...], Any]]:
    """The paths of the children of the node at ``prefix`` and each one's own children."""
    where = f"from_dict: {describe_path(prefix)}"
    if isinstance(node_children, Mapping):
        items = [
            (prefix + (given_label(key, where),), sub) for key, sub in node_children.items()
        ]
    elif isinstance(node_children, (list, tuple)):
        items = []
        for item in node_children:
            if isinstance(item, (Mapping, list, tuple, set)):
                raise TypeError(
                    f"{where}: a list of children may hold only leaf labels, got "
                    f"{type(item).__name__} {item!r}; use a mapping for subtrees"
                )
            items.append((prefix + (given_label(item, where),), None))
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
    return items


def flat_paths(values: Any, root: str, label_of: Callable[[Any], str | None]
               ) -> tuple[list[tuple[str, ...]], list[str], list[str], NDArray[np.intp]]:
    """The paths of a one-level taxonomy of ``values`` (:meth:`Hierarchy.flat`), each
    distinct value's leaf labelled ``label_of(value)`` (values with one label share a
    leaf); with each distinct value's label and every value's code into them."""
    root_label = checked_root(root)
    codes, uniques = factorize(values, "values")
    distinct_values(values, (codes, uniques))
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
    paths: list[tuple[str, ...]] = [(root_label, label) for label in ordered]
    wheres = [f"flat: value {label!r}" for label in ordered]
    return paths, wheres, label_of_unique, codes
