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

import math
import numbers
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._groups import group_runs
from proxanon._results import measures as _measures
from proxanon._results.anonymization import Anonymization
from proxanon._results.measures import GroupSummary, summarize_groups
from proxanon.generalize import QIColumn, encode_qi
from proxanon.tables import ordered_domain

__all__ = [
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
    "small_class_share",
]

#: Sensitive attributes per query (the paper's qs).
QS = 2

#: A query workload gives up after this many draws per requested query.
MAX_DRAWS_PER_QUERY = 100


@dataclass(frozen=True, eq=False)
class WorkloadResult:
    """The outcome of :func:`count_query_error`.

    Per query ``i``: ``attributes[i]`` (the QI columns first, then the sensitive ones),
    ``ranges[i]`` (per attribute, the inclusive range ``(first, last)`` of indices into
    ``domains[attribute]``, the attribute's ordered domain), ``actual[i]`` (count on the
    original table, always > 0), ``estimate[i]`` (on the published table) and ``errors[i]``
    (``|estimate - actual| / actual``). ``redraws`` counts the queries drawn and discarded
    because their actual count was 0.
    """

    mean_relative_error: float
    errors: NDArray[np.float64]
    actual: NDArray[np.int64]
    estimate: NDArray[np.float64]
    attributes: list[tuple[str, ...]]
    ranges: list[dict[str, tuple[int, int]]]
    domains: dict[str, tuple[Any, ...]]
    redraws: int
    qd: int
    s: float
    n_queries: int
    seed: int

    def __str__(self) -> str:
        qs = len(self.attributes[0]) - self.qd if self.attributes else 0
        return (f"count-query workload: {self.n_queries:,} queries over {self.qd} QI + {qs} "
                f"sensitive attribute(s), s = {self.s:g}, seed {self.seed}: mean relative "
                f"error {self.mean_relative_error:.4f} ({self.redraws:,} redraw(s) of "
                f"queries with no matching row)")


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


@dataclass(frozen=True)
class _Attribute:
    """One attribute as the workload sees it: its ordered domain and each row's index in it.

    For a QI column, :class:`_Coverage` holds what its groups publish.
    """

    name: str
    domain: tuple[Any, ...]
    index: NDArray[np.int64]

    @property
    def packed(self) -> NDArray[np.unsignedinteger[Any]]:
        """``index`` in the smallest unsigned type that holds ``len(domain)``, a missing
        value (-1) as ``len(domain)``: :meth:`select` then needs one subtraction and one
        comparison on a narrow array per query."""
        cached: NDArray[np.unsignedinteger[Any]] | None = self.__dict__.get("_packed")
        if cached is None:
            size = len(self.domain)
            dtype = np.min_scalar_type(size)
            cached = np.where(self.index >= 0, self.index, size).astype(dtype)
            object.__setattr__(self, "_packed", cached)
        return cached

    def select(self, first: int, last: int, out: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Into ``out``: whether each row's value lies in domain range ``[first, last]``.

        Unsigned wrap-around sends values below ``first`` above ``last - first``."""
        packed = self.packed
        shifted = np.subtract(packed, packed.dtype.type(first))
        np.less_equal(shifted, packed.dtype.type(last - first), out=out)
        return out


@dataclass(frozen=True)
class _Coverage:
    """The range ``[lo, hi]`` of domain indices a QI column's published value covers in every
    group, and its width: the published value stands for exactly those domain values."""

    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    width: NDArray[np.float64]


def _group_extremes(index: NDArray[np.int64], groups: NDArray[np.int64], count: int
                    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Smallest and largest ``index`` of every group id 0 .. count-1 (0 for an absent id)."""
    order, ids, starts, _ = group_runs(groups)
    ordered = index[order]
    lo = np.zeros(count, dtype=np.int64)
    hi = np.zeros_like(lo)
    lo[ids] = np.minimum.reduceat(ordered, starts)
    hi[ids] = np.maximum.reduceat(ordered, starts)
    return lo, hi


def _qi_attribute(original: pd.DataFrame, column: QIColumn,
                  groups: NDArray[np.int64], count: int) -> tuple[_Attribute, _Coverage]:
    tree = column.hierarchy
    if tree is None:
        # Numeric: the sorted distinct values; a group's interval [min-max] (or its single
        # value) covers the contiguous run of distinct values from its min to its max.
        raw = original[column.name].to_numpy()
        if raw.dtype.kind not in "iuf":  # e.g. a nullable integer column: its float codes
            raw = column.codes
        values, inverse = np.unique(raw, return_inverse=True)
        index = inverse.reshape(-1).astype(np.int64)
        lo, hi = _group_extremes(index, groups, count)
        domain = tuple(values.tolist())
    else:
        # Taxonomy: the leaves in DFS order; a group's LCA covers a contiguous leaf range.
        index = column.codes.astype(np.int64)
        low, high = _group_extremes(index, groups, count)
        nodes = tree.lca(low, high)
        lo = np.asarray(tree.first_leaf)[nodes].astype(np.int64)
        hi = np.asarray(tree.last_leaf)[nodes].astype(np.int64)
        domain = tuple(tree.leaves)
    width = (hi - lo + 1).astype(np.float64)
    return _Attribute(column.name, domain, index), _Coverage(lo, hi, width)


def _sensitive_attribute(series: pd.Series, name: str) -> _Attribute:
    index, domain = ordered_domain(series)
    return _Attribute(name, domain, index)


@dataclass(frozen=True)
class _Estimator:
    """A count query's estimate on the published table, from the rows in group order: the
    runs of each group (``present`` ids, ``starts``, ``sizes``; ``hidden``: the id of the
    suppressed rows' pseudo-group) and what each group's QIs publish (``coverage``)."""

    coverage: dict[str, _Coverage]
    present: NDArray[np.int64]
    starts: NDArray[np.int64]
    sizes: NDArray[np.int64]
    hidden: int
    anatomy: bool

    def estimate(self, chosen: list[_Attribute], query: dict[str, tuple[int, int]],
                 match: NDArray[np.bool_]) -> float:
        """The estimate of ``query`` over the QI attributes ``chosen``, given the rows whose
        sensitive values satisfy their predicates (``match``)."""
        per_group = np.add.reduceat(match.view(np.uint8), self.starts, dtype=np.int64)
        if self.anatomy:
            # Per group: its rows inside every QI range (the QIs are exact) over its size,
            # times its rows whose sensitive values match (Xiao and Tao, Anatomy).
            inside = np.ones(match.size, dtype=bool)
            scratch = np.empty(match.size, dtype=bool)
            for attr in chosen:
                inside &= attr.select(*query[attr.name], out=scratch)
            share = np.add.reduceat(inside.view(np.uint8), self.starts,
                                    dtype=np.int64) / self.sizes
            share[self.present == self.hidden] = 0.0
            return float(share @ per_group)
        # Per group: the fraction of its covered QI domain values inside every QI range.
        covered = np.ones(self.hidden + 1, dtype=np.float64)
        for attr in chosen:
            cover = self.coverage[attr.name]
            first, last = query[attr.name]
            overlap = np.minimum(cover.hi, last) - np.maximum(cover.lo, first) + 1
            covered *= np.maximum(overlap, 0) / cover.width
        covered[self.hidden] = 0.0
        return float(covered[self.present] @ per_group)


def _check_workload(qd: Any, s: Any, n_queries: Any, seed: Any,
                    n_qi: int) -> tuple[int, float, int, int]:
    qd = _validate.integer(qd, "qd", minimum=0)
    if qd > n_qi:
        raise ValueError(f"qd must be at most the number of quasi-identifiers ({n_qi}), "
                         f"got {qd}")
    if isinstance(s, bool) or not isinstance(s, numbers.Real):
        raise TypeError(f"s must be a number in (0, 1], got {s!r} ({type(s).__name__})")
    sel = float(s)
    if math.isnan(sel) or not 0.0 < sel <= 1.0:
        raise ValueError(f"s (the query selectivity) must lie in (0, 1], got {s!r}")
    count = _validate.integer(n_queries, "n_queries", minimum=1)
    seed = _validate.integer(seed, "seed", minimum=0)
    return qd, sel, count, seed


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
    sens_names = list(report.sensitive)
    qd, sel, count, seed = _check_workload(qd, s, n_queries, seed, len(qi_names))
    qs = min(QS, len(sens_names))
    q = qd + qs

    # Suppressed rows (-1) count in the true answer but are not published: they form one
    # more pseudo-group whose estimated share is 0.
    groups = np.asarray(anon.groups, dtype=np.int64)
    m = int(groups.max()) + 1
    groups = np.where(groups < 0, m, groups)
    hidden = m
    m += 1
    qi_pairs = [_qi_attribute(original, column, groups, m)
                for column in _qi_columns(original, anon)]
    coverage = {attr.name: cover for attr, cover in qi_pairs}
    qi_attrs = [attr for attr, _ in qi_pairs]
    sens_attrs = [_sensitive_attribute(original[c], c) for c in sens_names]
    # Rows in group order, so a group's matching rows are counted by one reduceat over
    # contiguous runs (several times faster than a bincount over scattered group ids).
    order, present, starts, sizes = group_runs(groups)
    qi_attrs = [replace(a, index=a.index[order]) for a in qi_attrs]
    sens_attrs = [replace(a, index=a.index[order]) for a in sens_attrs]
    lengths = {a.name: max(1, round(len(a.domain) * sel ** (1.0 / q)))
               for a in (*qi_attrs, *sens_attrs)}

    estimator = _Estimator(coverage, present, starts, sizes, hidden,
                           anatomy=report.publish == "anatomy")
    rng = np.random.default_rng(seed)
    attributes: list[tuple[str, ...]] = []
    ranges: list[dict[str, tuple[int, int]]] = []
    actual = np.zeros(count, dtype=np.int64)
    estimate = np.zeros(count, dtype=np.float64)
    scratch = np.empty(len(groups), dtype=bool)
    draws, limit = 0, MAX_DRAWS_PER_QUERY * count
    while len(attributes) < count:
        if draws == limit:
            raise ValueError(
                f"only {len(attributes)} of n_queries={count} count queries matched any "
                f"original row in {limit:,} draws (qd={qd}, s={sel:g}): the query ranges are "
                "too narrow for this table; raise s or lower qd"
            )
        draws += 1
        chosen = [qi_attrs[i] for i in rng.choice(len(qi_attrs), size=qd, replace=False)]
        chosen_sens = [sens_attrs[i] for i in rng.choice(len(sens_attrs), size=qs,
                                                         replace=False)]
        query: dict[str, tuple[int, int]] = {}
        for attr in (*chosen, *chosen_sens):
            length = lengths[attr.name]
            first = int(rng.integers(0, len(attr.domain) - length + 1))
            query[attr.name] = (first, first + length - 1)

        # Rows whose sensitive values satisfy their predicates (published unchanged).
        match = np.ones(len(groups), dtype=bool)
        for attr in chosen_sens:
            match &= attr.select(*query[attr.name], out=scratch)
        exact = match.copy()
        for attr in chosen:
            exact &= attr.select(*query[attr.name], out=scratch)
        hits = int(np.count_nonzero(exact))
        if hits == 0:
            continue

        estimate_value = estimator.estimate(chosen, query, match)
        i = len(attributes)
        actual[i] = hits
        estimate[i] = estimate_value
        attributes.append(tuple(query))
        ranges.append(query)

    errors = np.abs(estimate - actual) / actual
    return WorkloadResult(
        mean_relative_error=float(errors.mean()), errors=errors, actual=actual,
        estimate=estimate, attributes=attributes, ranges=ranges,
        domains={a.name: a.domain for a in (*qi_attrs, *sens_attrs)},
        redraws=draws - count, qd=qd, s=sel, n_queries=count, seed=seed,
    )
