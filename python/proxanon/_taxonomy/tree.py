"""The tree of a taxonomy as flat arrays, built once from root-first label paths.

Nodes ``0 .. n_leaves-1`` are the leaves in depth-first order (children in order of first
appearance) and the inner nodes follow in depth-first pre-order, so the root is node
``n_leaves`` and every node covers a contiguous range ``first_leaf .. last_leaf`` of leaf
indices: the lowest common ancestor of a set of leaves is that of its smallest and largest
index (docs/design/publishing.md). A label names one node, a leaf label is unique, and no
node is both a leaf and an inner node; the build refuses paths that break this, naming
the rows. Cost: O(cells) to check and number, O(nodes × height) for the ranges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon._taxonomy.paths import describe_path


@dataclass(frozen=True)
class Tree:
    """The arrays of a taxonomy (read-only), as :class:`proxanon.hierarchy.Hierarchy`
    exposes them."""

    labels: tuple[str, ...]
    parent: NDArray[np.int32]
    depth: NDArray[np.int32]
    first_leaf: NDArray[np.int64]
    last_leaf: NDArray[np.int64]
    leaf_counts: NDArray[np.int64]
    root: str
    n_leaves: int

    @property
    def height(self) -> int:
        """The largest leaf depth (edges from the root)."""
        return int(self.depth[:self.n_leaves].max())

    def climb(self, low: NDArray[np.int64], high: NDArray[np.int64]) -> NDArray[np.int64]:
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
        """The lowest common ancestor of leaves ``a[i]`` and ``b[i]``, broadcast."""
        left = check_leaf_indices(a, self.n_leaves, "a")
        right = check_leaf_indices(b, self.n_leaves, "b")
        try:
            left, right = np.broadcast_arrays(left, right)
        except ValueError:
            raise ValueError(
                f"a and b must have the same (or broadcastable) shapes, got {left.shape} and "
                f"{right.shape}"
            ) from None
        low = np.minimum(left, right).ravel()
        high = np.maximum(left, right).ravel()
        return self.climb(low, high).reshape(left.shape)

    def lca_of(self, leaf_indices: Any) -> int:
        """The lowest common ancestor of a non-empty set of leaves: that of the smallest
        and the largest index, since leaves are numbered depth-first."""
        indices = check_leaf_indices(leaf_indices, self.n_leaves, "leaf_indices")
        if indices.size == 0:
            raise ValueError("leaf_indices is empty; the LCA needs at least one leaf")
        node = self.climb(
            np.array([indices.min()], dtype=np.int64), np.array([indices.max()], dtype=np.int64)
        )
        return int(node[0])

    def up(self, node: int) -> tuple[str, ...]:
        """The labels from ``node`` up to the root, both included."""
        labels = []
        while node >= 0:
            labels.append(self.labels[node])
            node = int(self.parent[node])
        return tuple(labels)


def build_tree(paths: Sequence[tuple[str, ...]], wheres: Sequence[str]) -> Tree:
    """The tree of root-first ``paths`` (one per leaf, in input order).

    Checks that leaf labels are unique, that no path both ends at a node (a leaf) and
    passes through it (an inner node) - e.g. rows 'A;*' and 'B;A;*' - and that no label
    names two nodes (rows 'M;F;*' and 'F;M;*' would make each value the other's parent,
    and a published 'F' would not say which node it is). Since a label names one node,
    nodes are kept by label: a label seen again under another parent names a second
    node. ``wheres[i]`` describes path i; it is read only for a message.
    """
    children = _inner_nodes(paths, wheres)
    return _numbered(children, len(paths), paths[0][0])


def _inner_nodes(paths: Sequence[tuple[str, ...]],
                 wheres: Sequence[str]) -> dict[str, list[str]]:
    """Each inner node's children by label, first seen first, after the checks."""
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
                f"root (path {describe_path(path)}), so a published {root_label!r} would "
                "not say whether it is that node or any value; rename it"
            )
        if leaf in leaf_at:
            other = leaf_at[leaf]
            raise ValueError(
                f"leaf {leaf!r} is listed twice: at {wheres[other]} "
                f"({describe_path(paths[other])}) and at {wheres[i]} "
                f"({describe_path(path)}); each value must be a leaf exactly once, so "
                "remove or rename one of them"
            )
        if leaf in children and path_of(leaf) == path:
            raise ValueError(
                f"{leaf!r} is a leaf at {wheres[i]} but an inner node at "
                f"{wheres[first_at[leaf]]} (path {describe_path(path)}); a value cannot "
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
                    f"label {label!r} names two nodes: {describe_path(path_of(label))} "
                    f"at {wheres[first_at[label]]} and {describe_path(path[:at + 1])} "
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
                    f"at {wheres[i]} (path {describe_path(path[:at + 1])}); a value "
                    "cannot be both, so rename one"
                )
        leaf_at[leaf] = i
    return children


def _numbered(children: dict[str, list[str]], n_leaves: int, root_label: str) -> Tree:
    """The arrays of the tree whose inner nodes have ``children``."""
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
    return Tree(labels=tuple(labels), parent=parent, depth=depth, first_leaf=first,
                last_leaf=last, leaf_counts=counts, root=root_label, n_leaves=n_leaves)


def check_leaf_indices(indices: Any, n_leaves: int, name: str) -> NDArray[np.int64]:
    """``indices`` as int64 after checking that each is a leaf of a tree of ``n_leaves``."""
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
    bad = (array < 0) | (array >= n_leaves)
    if bad.any():
        raise ValueError(
            f"{name} holds leaf index {int(array[bad].flat[0])}, outside 0..{n_leaves - 1}"
            f" (this hierarchy has {n_leaves} leaves)"
        )
    return array
