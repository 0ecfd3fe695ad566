"""The count-query workload of docs/design/utility.md (Wang and Liu, XColor, §VI-B), over
attributes and what each published class covers of their domains: the one implementation
behind :func:`proxanon.evaluate.count_query_error` (classes as an anonymization formed them)
and :func:`proxanon.evaluate.score_table` (classes and coverage read from published labels).
Cost: O(n) per query (one pass over the rows in class order)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._group_runs import group_runs
from proxanon.tables import ordered_domain

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



@dataclass(frozen=True)
class Attribute:
    """One attribute as the workload sees it: its ordered domain and each row's index in it.

    For a QI column, :class:`Coverage` holds what its groups publish.
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
class Coverage:
    """The range ``[lo, hi]`` of domain indices a QI column's published value covers in every
    group, and its width: the published value stands for exactly those domain values."""

    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    width: NDArray[np.float64]


def group_extremes(index: NDArray[np.int64], groups: NDArray[np.int64], count: int
                    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Smallest and largest ``index`` of every group id 0 .. count-1 (0 for an absent id)."""
    order, ids, starts, _ = group_runs(groups)
    ordered = index[order]
    lo = np.zeros(count, dtype=np.int64)
    hi = np.zeros_like(lo)
    lo[ids] = np.minimum.reduceat(ordered, starts)
    hi[ids] = np.maximum.reduceat(ordered, starts)
    return lo, hi


def sensitive_attribute(series: pd.Series, name: str) -> Attribute:
    index, domain = ordered_domain(series)
    return Attribute(name, domain, index)


@dataclass(frozen=True)
class Estimator:
    """A count query's estimate on the published table, from the rows in group order: the
    runs of each group (``present`` ids, ``starts``, ``sizes``; ``hidden``: the id of the
    suppressed rows' pseudo-group) and what each group's QIs publish (``coverage``)."""

    coverage: dict[str, Coverage]
    present: NDArray[np.int64]
    starts: NDArray[np.int64]
    sizes: NDArray[np.int64]
    hidden: int
    anatomy: bool

    def estimate(self, chosen: list[Attribute], query: dict[str, tuple[int, int]],
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


def check_workload(qd: Any, s: Any, n_queries: Any, seed: Any,
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



def run_workload(qi_attrs: list[Attribute], coverage: dict[str, Coverage],
                 sens_attrs: list[Attribute], groups: NDArray[np.int64], hidden: int, *,
                 anatomy: bool, qd: int, sel: float, count: int, seed: int) -> WorkloadResult:
    """``count`` random queries (checked by :func:`check_workload`) over ``qd`` of
    ``qi_attrs`` and up to ``QS`` of ``sens_attrs``, answered on the original rows and
    estimated from ``coverage`` (per QI attribute, what each class id of ``groups`` covers;
    ``hidden``: the id of the rows not published, which estimate nothing); ``anatomy``: the
    QIs are exact beside their group (Xiao and Tao, Anatomy)."""
    qs = min(QS, len(sens_attrs))
    q = qd + qs
    # Rows in group order, so a group's matching rows are counted by one reduceat over
    # contiguous runs (several times faster than a bincount over scattered group ids).
    order, present, starts, sizes = group_runs(groups)
    qi_attrs = [replace(a, index=a.index[order]) for a in qi_attrs]
    sens_attrs = [replace(a, index=a.index[order]) for a in sens_attrs]
    lengths = {a.name: max(1, round(len(a.domain) * sel ** (1.0 / q)))
               for a in (*qi_attrs, *sens_attrs)}

    estimator = Estimator(coverage, present, starts, sizes, hidden, anatomy=anatomy)
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
