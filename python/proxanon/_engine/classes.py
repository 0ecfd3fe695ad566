"""The native steps on published classes that are not runs: the absorption's size cap, the
largest class's size, the engine's value ids of rows, and the exchange of rows between
groups publishing one tuple."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from proxanon import _core
from proxanon.generalize import QIColumn


def absorb_cap(rows: int, k: int) -> int:
    """The class size above which absorption moves rows out of a class of a table of
    ``rows`` rows (the larger of 2k rows and 1/200 of the table; the C++ core owns the
    rule)."""
    return _core.absorb_cap(rows, k)


def largest_class_rows(rows: int) -> int:
    """The most rows a published class should hold in a table of ``rows`` rows (2%: the
    class-size rule of docs/design/publishing.md; the C++ core owns the rule): a best-effort
    table's failing classes above it are dealt into parts of at most that many."""
    return _core.largest_class_rows(rows)


def row_ids(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """An id per row of a 2-D array, equal exactly for equal rows, in the rows' sorted order
    (column by column): the engine's value ids, one native call (O(n) expected and a sort of
    the distinct rows)."""
    return _core.value_ids(np.ascontiguousarray(np.atleast_2d(values.T).T, dtype=np.float64))


def spread_equal_tuples(groups: NDArray[np.int64], columns: list[QIColumn],
                         sa_ids: NDArray[np.int64]) -> NDArray[np.int64]:
    """Groups with rows exchanged so that fewer of them publish the same QI tuple.

    Two rows with identical sensitive values (``sa_ids``) can trade groups without changing
    any group's multiset of sensitive values, so every group keeps its dissimilarity verdict
    exactly; only the published tuples change. The native exchange step (``exchange.hpp``)
    trades a row of a group whose tuple another group also publishes for a row of a nearby QI
    combination with the same sensitive value, when that gives it a tuple no group publishes,
    and never lifts a value of a taxonomy of several levels to a node covering more leaves.
    Greedy, deterministic, at most 8 candidate exchanges per row of the table. The native
    session (:func:`proxanon._engine.runs.run_session`) runs this step itself after its first
    run; this function gives the same step on its own (tests check its invariants with it).
    """
    if groups.size == 0 or not columns:
        return groups
    qi = np.ascontiguousarray(np.column_stack([c.codes for c in columns]))
    moved: NDArray[np.int64] = _core.exchange_rows(
        np.ascontiguousarray(groups, dtype=np.int64), qi, [c.taxonomy_spec() for c in columns],
        np.ascontiguousarray(sa_ids, dtype=np.int64))
    return moved
