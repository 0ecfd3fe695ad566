"""``audit``: the independent verifier of (epsilon, delta)^k-dissimilarity, for arrays or a
published table (docs/design/privacy-model.md; Wang and Liu, XColor, §II).

What is computed, and at what cost, is described in :mod:`proxanon._engine.audit`, which
counts the neighbours; this module reads the two forms of input.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._engine.audit import audit_arrays
from proxanon._results.anonymization import GROUP_COLUMN
from proxanon._results.audit import AuditReport
from proxanon._results.criteria import (
    CodedColumns,
    check_criteria,
    criteria_verdicts,
    criterion_columns,
)
from proxanon.distances import as_arguments, is_sparse
from proxanon.generalize import load_hierarchies
from proxanon.tables import column_list, encode_sensitive, numeric_scales, table_groups

__all__ = ["AuditReport", "audit", "audit_arrays"]


def audit(
    data: Any = None,
    groups: Any = None,
    *,
    k: int,
    epsilon: float,
    delta: float,
    metric: Any = "l1",
    weights: Any = None,
    sensitive: Any = None,
    quasi_identifiers: Any = None,
    n_threads: int | None = None,
    hierarchies: Any = None,
    sensitive_ranges: Any = None,
    sensitive_table: Any = None,
    criteria: Any = None,
) -> AuditReport:
    """Checks a partition, or a published table, against (epsilon, delta)^k-dissimilarity.

    Two forms:

    - ``audit(sensitive, groups, k=..., epsilon=..., delta=...)``: ``sensitive`` a float array
      ``(n, s)`` or ``(n,)`` on a common scale and ``groups`` one group id per row.
    - ``audit(table, quasi_identifiers=[...], sensitive=[...], k=..., ...)``: ``table`` a
      pandas DataFrame, e.g. one published by proxanon or any other tool. Its groups are the
      rows that share the same (generalized) values in the ``quasi_identifiers`` columns, or
      ``groups`` (a column name or an array) when given. The ``sensitive`` columns are scaled
      to [0, 1] as docs/design/definitions.md says (numeric by min-max, ordered categoricals by
      rank); a sensitive column with a taxonomy in ``hierarchies`` (as :func:`proxanon.anonymize`
      takes them: a Hierarchy or an ARX-format file per column) is compared by taxonomy
      distance, as ``anonymize`` compared it. ``sensitive_ranges``, as ``anonymize`` takes it,
      scales the numeric columns it names by the given ``(min, max)`` instead of their own.

    - ``audit(qi_table, sensitive_table=..., sensitive=[...], k=..., ...)``: an anatomy
      release (docs/design/anatomy.md), both tables holding the ``group`` column (or the
      column ``groups`` names). Each group must hold as many rows in one table as in the
      other; its sensitive values are those of the sensitive table.

    ``criteria`` (a table only): privacy criteria (:class:`~proxanon.LDiversity`,
    :class:`~proxanon.TCloseness`, :class:`~proxanon.BetaLikeness`,
    :class:`~proxanon.DeltaDisclosure`) every group must satisfy too; ``report.criteria``
    holds each one's verdict and ``report.satisfied`` requires them all
    (docs/guide/criteria.md).

    Inputs are never modified. See :func:`audit_arrays` for what is computed, and for
    ``n_threads``.
    """
    if sensitive_table is not None:
        data, groups = _anatomy_pair(data, sensitive_table, groups)
    if isinstance(data, pd.DataFrame):
        return _audit_table(data, groups, k=k, epsilon=epsilon, delta=delta, metric=metric,
                            weights=weights, sensitive=sensitive,
                            quasi_identifiers=quasi_identifiers, n_threads=n_threads,
                            hierarchies=hierarchies, ranges=sensitive_ranges,
                            criteria=criteria)
    for name, given in (("hierarchies", hierarchies), ("sensitive_ranges", sensitive_ranges),
                        ("criteria", criteria)):
        if given is not None:
            raise TypeError(f"{name} applies to a table's sensitive columns: pass a pandas "
                            "DataFrame as the first argument")
    if quasi_identifiers is not None:
        raise TypeError(
            "quasi_identifiers names columns of a table: pass a pandas DataFrame as the first "
            "argument, or pass groups for an array of sensitive values"
        )
    if data is None:
        data = sensitive
    elif sensitive is not None:
        raise TypeError("sensitive was given twice: positionally and as a keyword")
    if groups is None:
        raise TypeError("groups is required: one group id per row of sensitive")
    return audit_arrays(data, groups, k=k, epsilon=epsilon, delta=delta, metric=metric,
                        weights=weights, n_threads=n_threads)


def _anatomy_pair(qi_table: Any, sensitive_table: Any,
                  groups: Any) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    """The sensitive table of an anatomy release and its rows' group ids, once the pair is
    checked to agree: every group holds as many rows in one table as in the other."""
    for name, table in (("data (the QI table)", qi_table), ("sensitive_table", sensitive_table)):
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame for an anatomy release, got "
                            f"{type(table).__name__}")
    column = GROUP_COLUMN if groups is None else groups
    if not isinstance(column, str):
        raise TypeError("groups must name the group column of both tables of an anatomy "
                        f"release, got {type(column).__name__}")
    for name, table in (("the QI table", qi_table), ("sensitive_table", sensitive_table)):
        if column not in table.columns:
            raise ValueError(f"{name} has no {column!r} column: an anatomy release joins its "
                             "tables by the group; pass groups= to name the column")
    mine = qi_table[column].value_counts(dropna=False)
    theirs = sensitive_table[column].value_counts(dropna=False)
    differ = mine.sub(theirs, fill_value=0)
    if (differ != 0).any():
        group = differ.index[int(np.flatnonzero((differ != 0).to_numpy())[0])]
        shown = group.item() if isinstance(group, np.generic) else group  # 12, not np.int64(12)
        raise ValueError(
            f"the tables do not belong together: group {shown!r} holds "
            f"{int(mine.get(group, 0))} row(s) in the QI table and "
            f"{int(theirs.get(group, 0))} in sensitive_table; pass the two tables of one "
            "release")
    return sensitive_table, pd.factorize(sensitive_table[column])[0].astype(np.int64)


def _audit_table(
    table: Any, groups: Any, *, k: int, epsilon: float, delta: float, metric: Any,
    weights: Any, sensitive: Any, quasi_identifiers: Any, n_threads: int | None,
    hierarchies: Any = None, ranges: Any = None, criteria: Any = None,
) -> AuditReport:
    """The DataFrame form of :func:`audit`."""
    _validate.unique_columns(table, "table")
    if sensitive is None:
        raise TypeError("sensitive is required with a table: the names of its sensitive columns")
    sens_cols = column_list(table, sensitive, "sensitive")
    given = load_hierarchies(hierarchies, sens_cols, list(table.columns))
    ranges = _validate.ranges(ranges, sens_cols)
    qis = [] if quasi_identifiers is None else column_list(table, quasi_identifiers,
                                                            "quasi_identifiers")
    policy = check_criteria(criteria, [str(c) for c in table.columns], qis, sens_cols)
    if groups is None:
        if quasi_identifiers is None:
            raise TypeError(
                "give quasi_identifiers (the published QI columns that define the groups) "
                "or groups (a column name or one id per row)"
            )
        groups = table_groups(table, qis)
    elif isinstance(groups, str):
        groups = column_list(table, [groups], "groups")[0]
        groups = table[groups].to_numpy()
    # Rows left out (group -1) are not audited, so they do not widen a column's range either:
    # the rows audited are scaled as a table of only them would be.
    ids = np.asarray(groups)
    audited = table
    if (ids.ndim == 1 and ids.shape[0] == len(table) and ids.dtype.kind in "iu"
            and (ids < 0).any() and not is_sparse(metric)):
        audited = table.iloc[np.flatnonzero(ids >= 0)]
    values, relation = encode_sensitive(audited, sens_cols, given, metric, weights, ranges)
    if audited is not table:
        every = np.zeros((len(table), values.shape[1]), dtype=np.float64)
        every[ids >= 0] = values
        values = every
    scales = numeric_scales(audited, sens_cols, given, metric, ranges)
    metric, weights = as_arguments(relation)
    report = audit_arrays(values, groups, k=k, epsilon=epsilon, delta=delta, metric=metric,
                          weights=weights, n_threads=n_threads)
    report = replace(report.named(sens_cols), scales=scales,
                     taxonomies=tuple(c for c in sens_cols if c in given))
    if not policy:
        return report
    kept = np.flatnonzero(np.asarray(groups).reshape(-1) >= 0) if audited is not table else None
    rows = table if kept is None else table.iloc[kept]
    ids = np.asarray(groups).reshape(-1) if kept is None else np.asarray(groups)[kept]
    coded = CodedColumns(rows, criterion_columns(policy, sens_cols))
    verdicts = tuple(criteria_verdicts(coded, ids, policy, sens_cols))
    return replace(report, criteria=verdicts,
                   satisfied=report.satisfied and all(v.satisfied for v in verdicts))
