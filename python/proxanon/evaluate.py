"""Utility of a published table: the paper's count-query workload and the report's measures.

docs/design/utility.md (Wang and Liu, XColor, §VI-B): random count queries
``select count(*) where A_1 ∈ I_1 and ... and A_q ∈ I_q`` are answered on the original table
and, assuming each generalized value spreads its rows uniformly over the domain values it
covers (LeFevre et al., Mondrian), on the published one; the workload's utility is the mean
relative error. The loss, GCP, NCP, discernibility and average group size of
docs/design/publishing.md are recomputed from the original table and the published groups
with the functions the report uses
(:class:`~proxanon._results.measures.GroupSummary`), so they are the numbers
:class:`~proxanon.Report` shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._results import measures as _measures
from proxanon._results.anonymization import Anonymization
from proxanon._results.measures import GroupSummary, summarize_groups
from proxanon._results.published import TableScore
from proxanon._results.published import score_table as _score_table
from proxanon._results.workload import (
    Attribute,
    Coverage,
    WorkloadResult,
    check_workload,
    group_extremes,
    run_workload,
    sensitive_attribute,
)
from proxanon.generalize import QIColumn, encode_qi
from proxanon.hierarchy import Hierarchy

__all__ = [
    "TableScore",
    "WorkloadResult",
    "average_group_size",
    "count_query_error",
    "discernibility",
    "discernibility_of_sizes",
    "distinct_l_diversity",
    "gcp",
    "k_anonymity_level",
    "loss",
    "ncp",
    "prosecutor_risk",
    "score_table",
    "small_class_share",
]

# ---------------------------------------------------------------------- input checks


def _check_anonymization(anonymization: Any) -> Anonymization:
    if not isinstance(anonymization, Anonymization):
        raise TypeError("anonymization must be the Anonymization returned by "
                        f"proxanon.anonymize, got {type(anonymization).__name__}")
    return anonymization


def _check_pair(original: Any, anonymization: Any) -> tuple[pd.DataFrame, Anonymization]:
    """The original table and its anonymization, checked to belong together."""
    if not isinstance(original, pd.DataFrame):
        raise TypeError("original must be the pandas DataFrame that was anonymized, got "
                        f"{type(original).__name__}")
    anon = _check_anonymization(anonymization)
    rows = len(anon.groups)
    if len(original) != rows:
        raise ValueError(f"original has {len(original):,} rows but the anonymization has "
                         f"{rows:,}: pass the table that was anonymized, in the same order")
    report = anon.report
    needed = [*report.quasi_identifiers, *report.sensitive]
    missing = [c for c in needed if c not in original.columns]
    if missing:
        raise ValueError(f"original lacks column(s) {missing} of the anonymization (its "
                         f"quasi-identifiers {list(report.quasi_identifiers)} and sensitive "
                         f"columns {list(report.sensitive)}): pass the table that was "
                         "anonymized")
    released = np.asarray(anon.groups) >= 0  # suppressed rows are not in the published table
    for column in report.sensitive:
        if column in anon.table.columns and not np.array_equal(
                original[column].to_numpy()[released], anon.table[column].to_numpy()):
            raise ValueError(f"original's sensitive column {column!r} differs from the "
                             "published one (sensitive columns are published unchanged): "
                             "pass the table that was anonymized, in the same order")
    return original, anon


def _qi_columns(original: pd.DataFrame, anon: Anonymization) -> list[QIColumn]:
    """The original QI columns encoded as the anonymization encoded them."""
    columns = []
    for name in anon.report.quasi_identifiers:
        column = encode_qi(original, name, anon.hierarchies.get(name))
        if column.hierarchy is not None and name not in anon.hierarchies:
            raise ValueError(f"original's quasi-identifier column {name!r} is not numeric, "
                             "but the anonymization published it as numeric intervals: pass "
                             "the table that was anonymized")
        columns.append(column)
    return columns


# ---------------------------------------------------------------------- report measures


def _summary(original: Any, anonymization: Any) -> tuple[GroupSummary, Anonymization]:
    """Per-group numbers of the published (not suppressed) rows."""
    original, anon = _check_pair(original, anonymization)
    released = np.asarray(anon.groups) >= 0
    columns = [c.subset(released) for c in _qi_columns(original, anon)]
    return summarize_groups(columns, np.asarray(anon.groups)[released]), anon


def loss(original: pd.DataFrame, anonymization: Anonymization) -> float:
    """The paper's loss(G) = Σ_i |G.A_i| / |A_i|, averaged over groups
    (docs/design/publishing.md)."""
    return _summary(original, anonymization)[0].loss()


def gcp(original: pd.DataFrame, anonymization: Anonymization) -> float:
    """Global certainty penalty Σ_G |G|·Σ_i NCP_i(G) / (n·d), in [0, 1]
    (docs/design/publishing.md)."""
    return _summary(original, anonymization)[0].gcp()


def ncp(original: pd.DataFrame, anonymization: Anonymization) -> dict[str, float]:
    """Per QI column, the NCP averaged over rows (docs/design/publishing.md)."""
    summary, anon = _summary(original, anonymization)
    return summary.ncp_by_column(anon.report.quasi_identifiers)


def discernibility(anonymization: Anonymization) -> int:
    """Σ_G |G|² over the published groups, the discernibility metric (docs/design/publishing.md);
    suppressed rows (group -1) belong to no published group and are not counted."""
    return _measures.discernibility(_published_sizes(anonymization))


def discernibility_of_sizes(sizes: Any) -> int:
    """Σ_G |G|² from the class sizes of a published table (docs/design/publishing.md)."""
    return _measures.discernibility(_class_sizes(sizes))


# ---------------------------------------------------------------------- re-identification
# The classic measures next to proximity risk, from the class sizes (or the classes and
# their sensitive values) of any published table.


def _class_sizes(sizes: Any) -> NDArray[np.int64]:
    array = np.asarray(sizes)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu" or (array < 1).any():
        raise ValueError("sizes must be a non-empty 1-D array of class sizes (integers >= 1)")
    return array.astype(np.int64)


def k_anonymity_level(sizes: Any) -> int:
    """The largest k for which the table is k-anonymous: its smallest class size."""
    return int(_class_sizes(sizes).min())


def prosecutor_risk(sizes: Any) -> float:
    """The largest prosecutor re-identification risk, 1 / smallest class size."""
    return 1.0 / k_anonymity_level(sizes)


def small_class_share(sizes: Any, limit: int) -> float:
    """Fraction of the rows that lie in classes of fewer than ``limit`` rows."""
    array = _class_sizes(sizes)
    return float(array[array < limit].sum() / array.sum())


def distinct_l_diversity(sensitive: Any, groups: Any) -> int:
    """The largest l for which the table is distinct l-diverse: the smallest number of
    distinct (composite) sensitive values in a class. ``sensitive``: a DataFrame of the
    sensitive columns or an (n, s) array; ``groups``: one class id per row (-1: suppressed,
    left out)."""
    frame = pd.DataFrame(sensitive).reset_index(drop=True)
    frame.columns = pd.RangeIndex(frame.shape[1])  # so no column can clash with "class"
    labels = np.asarray(groups, dtype=np.int64)
    if labels.shape != (len(frame),):
        raise ValueError(f"groups must hold one class id per row ({len(frame):,}), got shape "
                         f"{labels.shape}")
    kept = labels >= 0
    frame = frame[kept].assign(**{"class": labels[kept]})
    return int(frame.drop_duplicates().groupby("class").size().min())


def average_group_size(anonymization: Anonymization) -> float:
    """Published rows per published group (suppressed rows not counted)."""
    return _measures.average_group_size(_published_sizes(anonymization))


def _published_sizes(anonymization: Any) -> NDArray[np.int64]:
    groups = np.asarray(_check_anonymization(anonymization).groups)
    sizes = np.bincount(groups[groups >= 0]).astype(np.int64)
    return sizes[sizes > 0]


# ---------------------------------------------------------------------- count queries


def _qi_attribute(original: pd.DataFrame, column: QIColumn,
                  groups: NDArray[np.int64], count: int) -> tuple[Attribute, Coverage]:
    tree = column.hierarchy
    if tree is None:
        # Numeric: the sorted distinct values; a group's interval [min-max] (or its single
        # value) covers the contiguous run of distinct values from its min to its max.
        raw = original[column.name].to_numpy()
        if raw.dtype.kind not in "iuf":  # e.g. a nullable integer column: its float codes
            raw = column.codes
        values, inverse = np.unique(raw, return_inverse=True)
        index = inverse.reshape(-1).astype(np.int64)
        lo, hi = group_extremes(index, groups, count)
        domain = tuple(values.tolist())
    else:
        # Taxonomy: the leaves in DFS order; a group's LCA covers a contiguous leaf range.
        index = column.codes.astype(np.int64)
        low, high = group_extremes(index, groups, count)
        nodes = tree.lca(low, high)
        lo = np.asarray(tree.first_leaf)[nodes].astype(np.int64)
        hi = np.asarray(tree.last_leaf)[nodes].astype(np.int64)
        domain = tuple(tree.leaves)
    width = (hi - lo + 1).astype(np.float64)
    return Attribute(column.name, domain, index), Coverage(lo, hi, width)


def count_query_error(original: pd.DataFrame, anonymization: Anonymization, *, qd: int,
                      s: float, n_queries: int = 1000, seed: int = 0) -> WorkloadResult:
    """Mean relative error of random count queries answered on the published table.

    Each query (docs/design/utility.md; Wang and Liu, XColor, §VI-B) is ``select count(*) where A_1
    ∈ I_1 and ... and A_q ∈ I_q`` over ``q = qd + qs`` distinct attributes: ``qd`` quasi-identifiers
    and ``qs = 2`` sensitive columns, each set drawn at random (when the anonymization has
    fewer than 2 sensitive columns, every query uses all of them, so ``qs`` is 1). ``I_j``
    is a random contiguous range of ``max(1, round(|A_j| · s^(1/q)))`` values of ``A_j``'s
    ordered domain: for a numeric QI, the sorted distinct values of the original column; for
    a categorical QI, the leaves of its hierarchy in depth-first order (all leaves, used or
    not); for an ordered categorical sensitive column, its categories in order; otherwise the
    sorted distinct values.

    ``actual`` counts the original rows that satisfy every predicate. For an anatomy release
    (``publish="anatomy"``), whose QIs are exact, ``estimate`` sums over the groups the
    group's rows that satisfy every QI predicate times the share of the group's sensitive
    values that satisfy theirs (Xiao and Tao, Anatomy). Otherwise ``estimate`` assumes each
    published QI value spreads its rows uniformly over the domain values it covers (LeFevre
    et al.): a row contributes the product over QI predicates of ``|covered ∩ I_j| /
    |covered|`` if its (unchanged) sensitive values satisfy their predicates, and 0 otherwise.
    An interval ``[lo-hi]`` (or a single number) covers the distinct values of the column
    from the group's minimum to its maximum; a taxonomy label the leaves under the group's
    LCA. A query whose actual count is 0 is drawn again (``redraws`` counts them); after
    ``100 · n_queries`` draws without enough non-empty queries a ValueError says so.

    ``original`` is the table passed to :func:`~proxanon.anonymize`, rows in the same order.
    Queries come from ``numpy.random.default_rng(seed)``: the same inputs give the same
    numbers.
    """
    original, anon = _check_pair(original, anonymization)
    report = anon.report
    qi_names = list(report.quasi_identifiers)
    qd, sel, count, seed = check_workload(qd, s, n_queries, seed, len(qi_names))
    # Suppressed rows (-1) count in the true answer but are not published: they form one
    # more pseudo-group whose estimated share is 0.
    groups = np.asarray(anon.groups, dtype=np.int64)
    m = int(groups.max()) + 1
    groups = np.where(groups < 0, m, groups)
    hidden = m
    m += 1
    qi_pairs = [_qi_attribute(original, column, groups, m)
                for column in _qi_columns(original, anon)]
    return run_workload([attr for attr, _ in qi_pairs],
                        {attr.name: cover for attr, cover in qi_pairs},
                        [sensitive_attribute(original[c], c) for c in report.sensitive],
                        groups, hidden, anatomy=report.publish == "anatomy", qd=qd, sel=sel,
                        count=count, seed=seed)


# ---------------------------------------------------------------------- any published table


def score_table(original: pd.DataFrame, published: pd.DataFrame, *,
                quasi_identifiers: Sequence[str], sensitive: Sequence[str],
                hierarchies: Mapping[str, Hierarchy | str] | None = None,
                suppressed: Any = None, qd: int = 2, s: float = 0.1, n_queries: int = 1000,
                seed: int = 0) -> TableScore:
    """GCP, NCP, discernibility, classes and the count-query error of any published table,
    read from its labels (docs/design/utility.md), so that tables of other tools are
    measured by the same code as proxanon's.

    ``original``: the table before anonymization; ``published``: one row per original row,
    in the same order (or one per released row when ``suppressed`` marks the others), its
    QI columns holding what was published. A label of a column with a hierarchy (a
    :class:`~proxanon.Hierarchy` or an ARX-format file in ``hierarchies``) must be the row's
    value or a node above it, and stands for the leaves under that node; a numeric column's
    label is a number, a range ``[lo-hi]`` or ``*`` covering the row's value; another
    column's is the value or ``*``. A label that does not cover its row is a ValueError
    naming the column and the value. Classes are the released rows sharing their labels.
    ``qd``, ``s``, ``n_queries``, ``seed``: the workload of :func:`count_query_error`, with
    the same draws, so on proxanon's own tables (published at their classes' lowest common
    ancestors) the numbers equal :func:`gcp`, :func:`discernibility` and
    :func:`count_query_error`. A label coarser than its class needs (as a full-domain
    recoding publishes) costs what it covers."""
    if not isinstance(original, pd.DataFrame) or not isinstance(published, pd.DataFrame):
        raise TypeError("original and published must be pandas DataFrames")
    return _score_table(original, published, quasi_identifiers=quasi_identifiers,
                        sensitive=sensitive, hierarchies=hierarchies, suppressed=suppressed,
                        qd=qd, s=s, n_queries=n_queries, seed=seed)
