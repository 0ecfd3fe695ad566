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

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon._taxonomy.intervals import interval_paths
from proxanon._taxonomy.labels import (
    canonical,
    checked_root,
    distinct_values,
    format_examples,
    leaf_lookup,
    own_label,
)
from proxanon._taxonomy.levels import date_paths, masking_paths, order_paths, ordered_leaves
from proxanon._taxonomy.paths import (
    arx_bytes,
    dict_paths,
    flat_paths,
    read_arx,
    rows_to_paths,
)
from proxanon._taxonomy.tree import build_tree

__all__ = ["Hierarchy"]


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

    def __init__(self, rows: Iterable[Sequence[str]]) -> None:
        self._build(*rows_to_paths(rows, ""))

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
        return cls._of(*read_arx(path, sep, encoding, column))

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
        return cls._of(*dict_paths(tree))

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
        return cls._of(*interval_paths(values, widths, origin=origin, root=root))

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
        root_label = checked_root(root)
        return cls._from_paths(masking_paths(distinct_values(values), width=width, mask=mask,
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
        leaves = ordered_leaves(values)
        return cls._from_paths(order_paths(leaves, sizes, checked_root(root)), "from_order")

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
        return cls._from_paths(date_paths(distinct_values(values), levels, checked_root(root)),
                               "from_dates")

    @classmethod
    def _from_paths(cls, paths: list[tuple[str, ...]], builder: str) -> Hierarchy:
        return cls._of(paths, [f"{builder}: value {path[-1]!r}" for path in paths])

    @classmethod
    def _of(cls, paths: Sequence[tuple[str, ...]], wheres: Sequence[str]) -> Hierarchy:
        hierarchy = cls.__new__(cls)
        hierarchy._build(paths, wheres)
        return hierarchy

    @classmethod
    def flat(cls, values: Any, root: str = "*") -> Hierarchy:
        """A one-level taxonomy: the distinct values as leaves directly under ``root``.

        Values are matched as in :meth:`leaf_index` (``39`` and ``39.0`` are one leaf
        ``"39"``). Leaves are sorted numerically when every value is a number, else as
        strings. Only values that occur are leaves (unused categories of a Categorical are
        not).
        """
        paths, wheres, _, _ = flat_paths(values, root, canonical)
        return cls._of(paths, wheres)

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
        paths, wheres, label_of_unique, codes = flat_paths(values, root, own_label)
        hierarchy = cls._of(paths, wheres)
        leaf = np.array([hierarchy._leaf_of[label] for label in label_of_unique], dtype=np.int64)
        return hierarchy, leaf[codes]

    # ------------------------------------------------------------------ construction

    def _build(self, paths: Sequence[tuple[str, ...]], wheres: Sequence[str]) -> None:
        """Sets the arrays of the tree of root-first ``paths`` (``wheres[i]`` says where
        path i came from, for the messages of the tree's checks)."""
        tree = self._tree = build_tree(paths, wheres)
        self.labels: tuple[str, ...] = tree.labels
        self.leaves: tuple[str, ...] = self.labels[:tree.n_leaves]
        self.parent: NDArray[np.int32] = tree.parent
        self.depth: NDArray[np.int32] = tree.depth
        self.first_leaf: NDArray[np.int64] = tree.first_leaf
        self.last_leaf: NDArray[np.int64] = tree.last_leaf
        self.leaf_counts: NDArray[np.int64] = tree.leaf_counts
        self.root: str = tree.root
        self.n_leaves: int = tree.n_leaves
        self.height: int = tree.height
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
        return leaf_lookup(self._leaf_of, self.leaves, values, column)


    def lca(self, a: Any, b: Any) -> NDArray[np.int64]:
        """Node id of the lowest common ancestor of leaves ``a[i]`` and ``b[i]`` (vectorized).

        ``a`` and ``b`` are leaf indices (as returned by :meth:`leaf_index`) of broadcastable
        shapes; the result has the broadcast shape. The LCA of a leaf with itself is the leaf.
        """
        return self._tree.lca(a, b)

    def lca_label(self, leaf_indices: Any) -> str:
        """Label of the lowest common ancestor of a non-empty set of leaf indices.

        Leaves are numbered depth-first, so this is the LCA of the smallest and the largest
        index.
        """
        return self.labels[self._tree.lca_of(leaf_indices)]

    def _leaf_node(self, leaf: Any, name: str) -> int:
        label = canonical(leaf)
        index = self._leaf_of.get(label, -1) if label is not None else -1
        if index < 0:
            inner = " (it is an inner node's label)" if label in self.labels else ""
            raise ValueError(
                f"{name} {leaf!r} is not a leaf of this hierarchy{inner}; leaves are e.g. "
                f"{format_examples(self.leaves, 3)}"
            )
        return index

    def ancestors(self, leaf: str | float) -> list[str]:
        """Labels from ``leaf`` up to the root, both included (a leaf's row in an ARX file)."""
        return list(self._tree.up(self._leaf_node(leaf, "leaf")))

    def rows(self) -> list[tuple[str, ...]]:
        """One row per leaf, in leaf order: the leaf, then its ancestors up to the root (the
        rows of an ARX file)."""
        return [self._tree.up(leaf) for leaf in range(self.n_leaves)]

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
        return arx_bytes(self.labels, self.rows(), sep=sep, encoding=encoding, target=target)

    def covers(self, label: str, leaf: str | float) -> bool:
        """True iff ``label`` is ``leaf`` itself or the label of one of its ancestors."""
        return canonical(label) in self.ancestors(leaf)

    def __len__(self) -> int:
        return self.n_leaves

    def __repr__(self) -> str:
        return (
            f"Hierarchy(root={self.root!r}, n_leaves={self.n_leaves}, height={self.height}, "
            f"nodes={len(self.labels)}, leaves=[{format_examples(self.leaves, 4)}])"
        )
