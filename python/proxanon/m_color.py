"""``m_color``: the m-Color constraint (the m-Color paper) on top of :func:`anonymize`.

Rows carry a colour: their sensitive value, or the class ``colours`` maps it to. A group
satisfies the m-Color constraint when it holds at least m rows and no two of its rows share a
colour (the paper puts rows of one colour class into different QI groups), so an attacker who
finds a row's group learns its colour with probability at most 1/|G| <= 1/m. This is
(ε, δ)^k-dissimilarity with k = m, ε = 0 on the colour codes (neighbours are rows of the same
colour) and δ = 1, so that t(G) = floor((1 - δ)(|G| - 1)) = 0 neighbours are allowed
(docs/design/privacy-model.md). It is stronger than distinct m-diversity, which lets colours repeat
in a group once m of them are present.

Eligibility (the paper's Theorem 1): a partition exists iff no colour covers more than n/m
rows. If one does, every group of a partition has at least m rows, so there are at most
floor(n/m) groups and that colour must repeat in one of them; otherwise dealing the rows
sorted by colour round-robin into floor(n/m) groups gives one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from proxanon import _validate
from proxanon._pipeline.anatomy import anatomy_tables
from proxanon._results.anonymization import Anonymization
from proxanon.anonymize import TABLE_SEARCH_LIMIT, anonymize
from proxanon.generalize import load_hierarchies
from proxanon.hierarchy import Hierarchy
from proxanon.tables import column_list


class IneligibleError(ValueError):
    """No partition satisfies the m-Color constraint: one colour covers more than n/m rows.

    ``colour``, ``count`` and ``largest_m`` (the largest m this table allows) are attributes.
    """

    def __init__(self, colour: Hashable, count: int, n: int, m: int) -> None:
        self.colour = colour
        self.count = count
        self.largest_m = n // count
        super().__init__(
            f"the table is not {m}-eligible: colour {colour!r} covers {count} of {n} rows, "
            f"more than n/m = {n / m:.6g}, so some group would hold it twice; the largest m "
            f"that works is {self.largest_m}")


def _colour_labels(data: pd.DataFrame, sensitive: str, colours: Any,
                   hierarchies: Mapping[str, Any] | None) -> pd.Series:
    """The colour of every row (an object Series in row order)."""
    values = data[sensitive]
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(f"sensitive column {sensitive!r} has a missing value at row position "
                         f"{row}; drop or fill those rows first")
    if colours is None:
        return values.astype(object)
    if isinstance(colours, Mapping):
        uniques = pd.unique(values.astype(object))
        unknown = [v for v in uniques if v not in colours]
        if unknown:
            raise ValueError(f"colours has no class for value(s) {unknown[:5]} of sensitive "
                             f"column {sensitive!r}; map every value to a colour")
        return values.astype(object).map(dict(colours))
    if isinstance(colours, bool) or not isinstance(colours, int):
        raise TypeError("colours must be None, a dict from sensitive value to colour, or a "
                        f"taxonomy level (an int), got {colours!r}")
    level = _validate.integer(colours, "colours", minimum=0)
    tree = load_hierarchies(hierarchies, [sensitive], [str(c) for c in data.columns]).get(sensitive)
    if tree is None:
        raise ValueError(f"colours={level} is a taxonomy level, so hierarchies must hold a "
                         f"hierarchy for the sensitive column {sensitive!r}")
    return _level_labels(values, tree, level, sensitive)


def _level_labels(values: pd.Series, tree: Hierarchy, level: int, column: str) -> pd.Series:
    """The ancestor at depth ``level`` (0 = root) of each value; a shallower leaf is itself."""
    tree.leaf_index(values.to_numpy(), column=column)  # names any value missing from the tree
    ancestor = {}
    for value in pd.unique(values.astype(object)):
        path = tree.ancestors(value)[::-1]
        ancestor[value] = path[min(level, len(path) - 1)]
    return values.astype(object).map(ancestor)


def check_eligible(colour_labels: pd.Series, m: int) -> None:
    """Raises :class:`IneligibleError` unless every colour covers at most n/m rows."""
    counts = colour_labels.value_counts(sort=True)
    colour, count = counts.index[0], int(counts.iloc[0])
    if count * m > len(colour_labels):
        raise IneligibleError(colour, count, len(colour_labels), m)


def m_color(
    data: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    sensitive: str,
    m: int,
    colours: Mapping[Any, Hashable] | int | None = None,
    hierarchies: Mapping[str, Hierarchy | str] | None = None,
    on_infeasible: str = "raise",
    progress: bool = False,
    search_limit: int | None = TABLE_SEARCH_LIMIT,
    publish: str = "generalize",
) -> Anonymization:
    """Anonymize ``data`` so that every group has at least ``m`` rows of distinct colours.

    ``sensitive``: one column of any type (categories, strings, numbers); each distinct value
    is a colour unless ``colours`` says otherwise: a dict from sensitive value to colour
    class, or an int, the level (depth from the root) of ``hierarchies[sensitive]`` whose
    nodes are the colour classes. ``hierarchies`` also holds the QI taxonomies, as in
    :func:`anonymize`, and so do ``on_infeasible``, ``progress`` and ``search_limit``.

    The eligibility check runs first and raises :class:`IneligibleError` (a ValueError)
    naming the over-frequent colour, its count and the largest m that would work. The result
    is :func:`anonymize`'s with k = m, ε = 0 on the colours and δ = 1 (see the module doc);
    its table has the input's columns (QI generalized, the sensitive column as given) plus
    ``group``.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError("data is empty: it needs at least one row")
    (sens,) = column_list(data, [sensitive], "sensitive")
    qi = column_list(data, quasi_identifiers, "quasi_identifiers")
    if sens in qi:
        raise ValueError(f"column {sens!r} is both quasi-identifier and sensitive")
    m = _validate.integer(m, "m", minimum=1)
    if m == 1:
        raise ValueError("m must be at least 2: with m = 1 a group of one row already meets "
                         "the constraint and an attacker's confidence is bounded by 1, so it "
                         "protects nothing; for groups of at least k rows alone use "
                         "proxanon.anonymize(..., k=k, delta=0)")
    labels = _colour_labels(data, sens, colours, hierarchies)
    check_eligible(labels, m)

    colour_column = "__colour__"
    while colour_column in data.columns:
        colour_column += "_"
    codes, _ = pd.factorize(labels, sort=True)
    frame = data.copy()
    frame[colour_column] = codes.astype(np.int64)
    result = anonymize(frame, quasi_identifiers=qi, sensitive=colour_column, k=m, epsilon=0.0,
                       delta=1.0, metric="l1", hierarchies=hierarchies,
                       on_infeasible=on_infeasible, progress=progress,
                       search_limit=search_limit, publish=publish)
    report = dataclasses.replace(result.report, sensitive=(sens,))
    if result.sensitive_table is not None:  # anatomy: the sensitive column, not its colours
        released = np.flatnonzero(result.groups >= 0)
        qi_table, sensitive_table = anatomy_tables(data.iloc[released], [sens],
                                                   result.groups[released])
        return dataclasses.replace(result, table=qi_table, sensitive_table=sensitive_table,
                                   report=report)
    return dataclasses.replace(result, table=result.table.drop(columns=colour_column),
                               report=report)
