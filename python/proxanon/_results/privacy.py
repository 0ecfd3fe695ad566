"""Privacy measures of a table, as pycanon 1.3.6 measures them, in O(n log n).

:func:`privacy_measures` reports in one frozen :class:`PrivacyMeasures`:

* the nine measures of pycanon 1.3.6 (``pycanon.anonymity``), each attribute named as
  pycanon's function and equal to its value on the same table with pycanon's defaults
  (``gen=True``: with several sensitive columns the classes are those of the quasi-identifiers
  alone and each measure takes the worst over the sensitive columns);
* re-identification risk as ARX (prosecutor, journalist and marketer risk; sample uniques;
  records at risk) and sdcMicro (``measure_risk``: the per-record risk 1/|class| and the
  expected number of re-identifications) define it;
* the m of (epsilon, m)-anonymity (Li, Tao and Xiao, "Preservation of proximity privacy in
  publishing numerical sensitive data", SIGMOD 2008) for numeric sensitive columns.

Everything is computed over integer class codes with vectorized numpy: one ``np.unique`` of
(class, sensitive value) pairs per sensitive column and sorts; no Python loop over classes.

Classes are the rows that share every quasi-identifier value (``groupby(..., dropna=False)``):
a missing QI value is a value of its own. pycanon's ``groupby`` drops such rows, so on a table
with missing QI values the two differ (pycanon's classes then leave those rows out). Missing
*sensitive* values are refused: pycanon counts them inconsistently (one distinct value for
l-diversity, zero rows for the frequencies), so no measure of them would match it.

pycanon labels rows by position (``data.iloc`` of ``groupby(...).groups``' index labels): its
values equal these only on a table with the default ``RangeIndex``; these do not depend on the
index at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["DEFAULT_RISK_THRESHOLD", "PrivacyMeasures", "RiskBin", "privacy_measures",
           "published_measures"]

#: Default of ``risk_threshold``: a record is at risk when its prosecutor risk 1/|class|
#: exceeds 0.2, that is when its class has fewer than 5 records.
DEFAULT_RISK_THRESHOLD = 0.2

#: Edges of :attr:`PrivacyMeasures.risk_histogram`'s bins ``(low, high]`` of record risk: class
#: sizes >= 1000, 100-999, 20-99, 10-19, 5-9, 4, 3, 2 and 1.
RISK_BIN_EDGES: tuple[float, ...] = (0.0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.25, 1 / 3, 0.5, 1.0)

_E = np.exp(1)  # pycanon's base for entropy l-diversity: ``np.exp(1) ** entropy``

_Ints = NDArray[np.int64]
_Floats = NDArray[np.float64]


@dataclass(frozen=True)
class RiskBin:
    """Records whose prosecutor risk 1/|class| lies in ``(low, high]``."""

    low: float
    high: float
    records: int
    share: float


@dataclass(frozen=True)
class PrivacyMeasures:
    """The privacy measures of one table; see :func:`privacy_measures`.

    The first nine attributes are named as pycanon 1.3.6's functions and equal their values
    (with ``gen=True``, pycanon's default); the risk attributes follow ARX and sdcMicro.
    """

    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    n_records: int
    n_classes: int
    # --- pycanon.anonymity ---
    #: k of k-anonymity: the size of the smallest class.
    k_anonymity: int
    #: l of l-diversity: the fewest distinct sensitive values in a class (worst column).
    l_diversity: int
    #: l of entropy l-diversity: ``int(min over classes of e ** H)``, H the class's entropy
    #: of its sensitive values (worst column). pycanon truncates ``np.exp(1) ** H``, which
    #: falls just under an integer for most uniform classes: two values once each give 1.
    entropy_l_diversity: int
    #: (c, l) of recursive (c, l)-diversity: l is :attr:`l_diversity`; c is nan when l <= 1.
    recursive_c_l_diversity: tuple[float, int]
    #: (alpha, k) of (alpha, k)-anonymity: alpha the largest frequency of one sensitive value
    #: in a class, k :attr:`k_anonymity`.
    alpha_k_anonymity: tuple[float, int]
    #: t of t-closeness: the largest earth mover's distance between a class's distribution and
    #: the table's (ordered distance for numeric columns, equal distance for text).
    t_closeness: float
    #: delta of delta-disclosure privacy: max |ln(q / p)| over the values a class holds.
    delta_disclosure: float
    #: beta of basic beta-likeness: max (q - p) / p.
    basic_beta_likeness: float
    #: beta of enhanced beta-likeness, as pycanon computes it: min(basic beta, -ln(min p)).
    enhanced_beta_likeness: float
    # --- re-identification risk (ARX; sdcMicro measure_risk) ---
    #: Highest prosecutor risk: 1 / the smallest class size.
    prosecutor_risk_max: float
    #: Mean prosecutor risk over the records, sum 1/|class| / n = classes / n.
    prosecutor_risk_mean: float
    #: Highest journalist risk, 1 / |matching population class|; None without a population.
    journalist_risk_max: float | None
    #: Mean journalist risk over the sample's records; None without a population.
    journalist_risk_mean: float | None
    #: Marketer risk: the expected share of records re-identified. Without a population
    #: classes / n; with one sum over sample classes of |class| / |population class|, over n.
    marketer_risk: float
    #: Expected number of re-identified records (sdcMicro's ``global_risk_ER``):
    #: ``marketer_risk * n_records``.
    expected_reidentifications: float
    #: Records alone in their class (risk 1), and their share of the table.
    sample_uniques: int
    sample_uniques_share: float
    #: The threshold and the records whose prosecutor risk exceeds it (ARX "records at risk").
    risk_threshold: float
    records_at_risk: int
    records_at_risk_share: float
    #: Records by prosecutor risk, in the bins of :data:`RISK_BIN_EDGES`.
    risk_histogram: tuple[RiskBin, ...]
    # --- (epsilon, m)-anonymity ---
    #: The epsilon given (units of the numeric sensitive columns), or None.
    epsilon_m: float | None
    #: m of (epsilon, m)-anonymity: min over classes G and numeric sensitive columns of
    #: floor(|G| / max over x in G of |{y in G : x - eps <= y <= x + eps}|); None without
    #: ``epsilon_m``.
    epsilon_m_anonymity: int | None


def privacy_measures(
    table: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[str] | str,
    sensitive: Sequence[str] | str,
    population: pd.DataFrame | None = None,
    risk_threshold: float = DEFAULT_RISK_THRESHOLD,
    epsilon_m: float | None = None,
) -> PrivacyMeasures:
    """Measure the privacy of ``table`` as pycanon 1.3.6 does, with re-identification risk.

    Args:
        table: the (published) table, one row per record.
        quasi_identifiers: the QI columns; the classes are the rows sharing all their values
            (a missing value is a value of its own).
        sensitive: the sensitive columns, numeric or text (pycanon's test: pandas'
            ``is_numeric_dtype``, else ``is_string_dtype``, which a Categorical of strings
            passes). With several, each pycanon measure is the worst over them (pycanon's
            default ``gen=True``; its ``gen=False``, classes refined by the other sensitive
            columns, is not offered). They may hold no missing value.
        population: the population the table samples, with the QI columns, for the
            journalist risk (ARX's journalist model). Every sample class must occur in it, at
            least as often. Without it the journalist risk is None and the marketer risk is
            the prosecutor model's.
        risk_threshold: a record is "at risk" when its prosecutor risk 1/|class| exceeds
            this (ARX's records at risk); 0.2 by default, classes of fewer than 5 records.
        epsilon_m: the epsilon of (epsilon, m)-anonymity, absolute, in the units of the numeric
            sensitive columns (text ones are left out of it); None skips the measure.

    pycanon's defaults are kept and mirrored, surprising parts included: recursive (c, l)
    takes its l from l-diversity and sorts a class's counts ascending, so c is
    ``floor(r_least / sum(r[l-1:]) + 1)`` with r the counts from the least frequent up (not
    the paper's most frequent value); enhanced beta-likeness is min(basic beta, -ln(min p))
    over the table rather than per class; t-closeness on a numeric column holding a single
    value (where pycanon divides by zero) is 0 here.

    Raises:
        TypeError: ``table`` is not a DataFrame, a column list is not a list of labels, a
            parameter is not a number, or a sensitive column is neither numeric nor text.
        ValueError: a column is missing, a column is both QI and sensitive or named twice, the
            table is empty, a sensitive column has missing values, a sample class is absent
            from (or rarer in) the population, or a parameter is out of range.
    """
    qis = _column_list(table, quasi_identifiers, "quasi_identifiers")
    sens = _column_list(table, sensitive, "sensitive")
    both = [c for c in qis if c in sens]
    if both:
        raise ValueError(f"{both[0]!r} is both a quasi-identifier and a sensitive column: "
                         "give it one role")
    if len(table) == 0:
        raise ValueError("table is empty: the measures need at least one row")
    threshold = _number(risk_threshold, "risk_threshold")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"risk_threshold is a probability in [0, 1], got {threshold!r}")
    eps = None if epsilon_m is None else _number(epsilon_m, "epsilon_m")
    if eps is not None and not (eps >= 0.0 and math.isfinite(eps)):
        raise ValueError(f"epsilon_m must be a finite number >= 0, got {eps!r}")

    n = len(table)
    cls = _class_codes(table, qis)
    sizes = np.bincount(cls)
    n_classes = len(sizes)
    columns = [_Sensitive.of(table[name], name, cls, sizes) for name in sens]

    l_div = min(c.l_div for c in columns)
    # gen=True: per class the lowest entropy over the columns, then e ** H over the classes.
    entropy = np.min(np.stack([c.entropy for c in columns]), axis=0)
    ent_l = int(np.min(_E ** entropy))
    c_div: float = max(c.recursive_c(l_div) for c in columns) if l_div > 1 else math.nan
    k = int(sizes.min())

    risk = _risk(table, qis, cls, sizes, population, threshold)
    m = None if eps is None else _epsilon_m(table, sens, cls, sizes, eps)
    return PrivacyMeasures(
        quasi_identifiers=tuple(qis),
        sensitive=tuple(sens),
        n_records=n,
        n_classes=n_classes,
        k_anonymity=k,
        l_diversity=l_div,
        entropy_l_diversity=ent_l,
        recursive_c_l_diversity=(c_div, l_div),
        alpha_k_anonymity=(max(c.alpha for c in columns), k),
        t_closeness=max(c.t_closeness() for c in columns),
        delta_disclosure=max(c.delta for c in columns),
        basic_beta_likeness=max(c.basic_beta for c in columns),
        enhanced_beta_likeness=max(c.enhanced_beta for c in columns),
        epsilon_m=eps,
        epsilon_m_anonymity=m,
        **risk,
    )


def published_measures(table: pd.DataFrame, quasi_identifiers: Sequence[str],
                       columns: Sequence[str], groups: _Ints | None = None
                       ) -> PrivacyMeasures | str:
    """:func:`proxanon.privacy_measures` of a published table's classes (its published QI
    values as text, or ``groups``), or why they cannot be measured (a column neither numeric
    nor text, missing values)."""
    if groups is not None:
        frame = table[list(columns)].assign(_class=groups)
        qis = ["_class"]
    else:
        frame = table.assign(**{q: table[q].astype(str) for q in quasi_identifiers})
        qis = list(quasi_identifiers)
    try:
        return privacy_measures(frame, quasi_identifiers=qis, sensitive=list(columns))
    except (TypeError, ValueError) as exc:
        return str(exc)


def _column_list(table: pd.DataFrame, names: Sequence[str] | str, role: str) -> list[str]:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    listed = [names] if isinstance(names, str) else list(names)
    if not listed:
        raise ValueError(f"{role} is empty: name at least one column")
    for name in listed:
        if not isinstance(name, str):
            raise TypeError(f"{role} must list column names (str), got {name!r}")
        if name not in table.columns:
            raise ValueError(f"{role}: {name!r} is not a column of the table; its columns "
                             f"are {list(table.columns)!r}")
    repeated = sorted({c for c in listed if listed.count(c) > 1})
    if repeated:
        raise ValueError(f"{role} names {repeated[0]!r} twice: list each column once")
    return listed


def _number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    return float(value)


def _class_codes(table: pd.DataFrame, qis: list[str]) -> _Ints:
    """Class of each row (0..classes-1, in order of first appearance)."""
    groups = table.groupby(qis, dropna=False, sort=False, observed=True)
    return np.asarray(groups.ngroup(), dtype=np.int64)


def _class_starts(pair_class: _Ints) -> _Ints:
    """First index of each class in a class-sorted array in which every class occurs."""
    return np.flatnonzero(np.r_[True, pair_class[1:] != pair_class[:-1]]).astype(np.int64)


class _Sensitive:
    """One sensitive column's (class, value) pairs, its measures per class (the ``*_per_class``
    arrays and methods, which :mod:`proxanon._results.criteria` holds classes to) and its
    pycanon measures (their worst over the classes)."""

    def __init__(self, values: _Ints, m: int, numeric: bool, cls: _Ints, sizes: _Ints,
                 global_counts: _Ints | None = None) -> None:
        """``values``: the column's codes 0..m-1 in pycanon's order (:func:`column_codes`);
        ``cls``: each row's class, 0..len(sizes)-1, every class present; ``global_counts``:
        the rows per value of the table these rows are classes of (default: these rows)."""
        self.numeric = numeric
        self.m = m
        key = cls * m + values
        pair_key, counts = np.unique(key, return_counts=True)
        self.pair_class = pair_key // m
        self.pair_value = pair_key % m
        self.counts = counts.astype(np.int64)
        self.starts = _class_starts(self.pair_class)
        self.sizes = sizes
        self.global_counts = (np.bincount(values, minlength=m).astype(np.int64)
                              if global_counts is None else global_counts)
        # pycanon's frequencies: len(rows of s in class) / len(class) and len(rows of s) / n
        self.q = self.counts / sizes[self.pair_class]
        self.p = self.global_counts / int(self.global_counts.sum())
        p_pair = self.p[self.pair_value]
        #: Distinct values per class.
        self.distinct = np.diff(np.r_[self.starts, len(pair_key)])
        self.l_div = int(self.distinct.min())
        self.alpha = float(self.q.max())
        #: Entropy of each class's values (pycanon's, bit for bit where int(e ** H) needs it).
        self.entropy = self._entropy(self.distinct)
        #: Per class: max |ln(q / p)| (delta-disclosure) and max (q - p) / p (basic beta).
        self.delta_per_class = np.maximum.reduceat(np.abs(np.log(self.q / p_pair)),
                                                   self.starts)
        self.beta_per_class = np.maximum.reduceat((self.q - p_pair) / p_pair, self.starts)
        self.delta = float(self.delta_per_class.max())
        self.basic_beta = float(self.beta_per_class.max())
        self.enhanced_beta = min(self.basic_beta, float(np.max(-np.log(self.p))))

    @classmethod
    def of(cls, column: pd.Series, name: str, classes: _Ints, sizes: _Ints) -> _Sensitive:
        """The column ``name`` of a table, checked (:func:`column_codes`), over ``classes``."""
        values, m, numeric = column_codes(column, name)
        return cls(values, m, numeric, classes, sizes)

    def entropy_l_per_class(self) -> _Ints:
        """pycanon's entropy l of each class: ``int(e ** H)``."""
        per_class: _Ints = np.floor(_E ** self.entropy).astype(np.int64)
        return per_class

    def _entropy(self, distinct: _Ints) -> _Floats:
        """Each class's -sum(p log p), bit for bit as pycanon's ``np.sum`` where it matters.

        The sum's rounding depends on its order (numpy's pairwise sum); only int(e ** H)
        is reported, so H must match pycanon exactly where e ** H is near an integer. A
        uniform class of d values always is (H = ln d): its H is pycanon's own expression on
        d equal frequencies (1/d rounded, whatever the class size). Any other class near an
        integer (rare) is recomputed by pycanon's expression alone.
        """
        q = self.q
        h = -np.add.reduceat(q * np.log(q), self.starts)
        uniform = (np.minimum.reduceat(self.counts, self.starts)
                   == np.maximum.reduceat(self.counts, self.starts))
        for d in np.unique(distinct[uniform]):
            freq = [1 / int(d)] * int(d)
            h[uniform & (distinct == d)] = -np.sum(freq * np.log(freq))
        power = _E ** h
        near = ~uniform & (np.abs(power - np.round(power)) <= 1e-9 * np.maximum(power, 1.0))
        ends = np.r_[self.starts[1:], len(q)]
        for c in np.flatnonzero(near):
            freq = list(q[self.starts[c]:ends[c]])
            h[c] = -np.sum(freq * np.log(freq))
        return h

    def recursive_c(self, l_div: int) -> int:
        """pycanon's c: per class floor(r[0] / sum(r[l-1:]) + 1), r the counts ascending."""
        least = np.minimum.reduceat(self.counts, self.starts)
        rest = self.sizes - self._ranked_sum(l_div - 1, descending=False)
        return int(np.max(np.floor(least / rest + 1)))

    def recursive_holds_per_class(self, ell: int, c: float) -> NDArray[np.bool_]:
        """Per class, recursive (c, l)-diversity as Machanavajjhala et al. define it: with r
        the counts from the most frequent value down, r_1 < c (r_l + ... + r_m) (so at least
        l values)."""
        most = np.maximum.reduceat(self.counts, self.starts)
        tail = self.sizes - self._ranked_sum(ell - 1, descending=True)
        holds: NDArray[np.bool_] = (self.distinct >= ell) & (most < c * tail)
        return holds

    def _ranked_sum(self, top: int, *, descending: bool) -> _Ints:
        """Per class, the sum of its ``top`` first counts in rank order (ascending or
        descending counts)."""
        ranked_by = -self.counts if descending else self.counts
        order = np.lexsort((ranked_by, self.pair_class))
        ranked = self.counts[order]
        rank = np.arange(len(ranked)) - self.starts[self.pair_class[order]]
        return np.bincount(self.pair_class[order], weights=np.where(rank < top, ranked, 0),
                           minlength=len(self.sizes)).astype(np.int64)

    def t_closeness(self) -> float:
        """Largest EMD: ordered distance for numbers, equal distance for text (pycanon's)."""
        return float(np.max(self.t_per_class()))

    def t_per_class(self) -> _Floats:
        """Each class's EMD to the table's distribution (pycanon's t-closeness per class)."""
        if not self.numeric:
            # 0.5 * sum |q - p| over all values = sum over the class's values of max(q - p, 0)
            gain = np.maximum(self.q - self.p[self.pair_value], 0.0)
            return np.add.reduceat(gain, self.starts)
        m = self.m
        if m == 1:
            return np.zeros(len(self.sizes))  # pycanon: ZeroDivisionError (1 / (m - 1))
        # pycanon: sum over the m values of |Q_i - P_i|, Q and P the cumulative frequencies of
        # the class and the table, over m - 1. Q is a step function of the class's values, so
        # each step [a, b) at level L adds sum |L - P_i|, P non-decreasing: split at the first
        # i with P_i >= L and use the prefix sums of P.
        cum_p = np.cumsum(self.global_counts) / float(self.global_counts.sum())
        prefix = np.r_[0.0, np.cumsum(cum_p)]
        within = np.cumsum(self.counts)
        before = (within[self.starts] - self.counts[self.starts])[self.pair_class]
        level = (within - before) / self.sizes[self.pair_class]
        low = self.pair_value
        high = np.r_[self.pair_value[1:], m]
        last = np.r_[self.starts[1:] - 1, len(low) - 1]
        high[last] = m
        split = np.clip(np.searchsorted(cum_p, level, side="left"), low, high)
        below = level * (split - low) - (prefix[split] - prefix[low])
        above = (prefix[high] - prefix[split]) - level * (high - split)
        head = prefix[self.pair_value[self.starts]]  # before the class's first value, Q = 0
        emd: _Floats = (head + np.add.reduceat(below + above, self.starts)) / (m - 1)
        return emd


def column_codes(column: pd.Series, name: str) -> tuple[_Ints, int, bool]:
    """A sensitive column checked as pycanon takes it (no missing value; numeric or text) and
    coded: its codes 0..m-1 in ``np.unique``'s (pycanon's) order, m, and whether numeric."""
    if column.isna().any():
        raise ValueError(f"sensitive column {name!r} has {int(column.isna().sum())} missing "
                         "values: drop or fill those rows first (pycanon counts them "
                         "inconsistently, so no measure of them would match it)")
    numeric = bool(pd.api.types.is_numeric_dtype(column))
    if not numeric and not pd.api.types.is_string_dtype(column):
        raise TypeError(f"sensitive column {name!r} ({column.dtype}) is neither numeric nor "
                        "text, which t-closeness needs (as pycanon's): cast it with "
                        ".astype(str) or to numbers")
    codes, uniques = pd.factorize(column, sort=False)
    try:
        order = np.argsort(np.asarray(uniques), kind="stable")  # object: by Python <
    except TypeError:
        raise TypeError(f"sensitive column {name!r} mixes values that cannot be ordered "
                        "(pycanon's np.unique fails on it too): cast it with .astype(str)"
                        ) from None
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank[np.asarray(codes, dtype=np.int64)], len(order), numeric


def _risk(table: pd.DataFrame, qis: list[str], cls: _Ints, sizes: _Ints,
          population: pd.DataFrame | None, threshold: float) -> dict[str, Any]:
    """Re-identification risk: ARX's prosecutor, journalist and marketer models, as the
    fields of :class:`PrivacyMeasures` they fill (by name).

    ARX: prosecutor risk 1/|class| (the attacker knows the record is in the table),
    journalist risk 1/|population class| (the attacker knows it is in the population),
    marketer risk the expected share re-identified; sdcMicro ``measure_risk``: the same
    per-record risk and ``global_risk_ER``, the expected number of re-identifications.
    """
    n = len(cls)
    record_risk = 1.0 / sizes[cls]
    journalist_max: float | None = None
    journalist_mean: float | None = None
    marketer = len(sizes) / n
    if population is not None:
        pop_sizes = _population_sizes(table, qis, cls, sizes, population)
        journalist = 1.0 / pop_sizes[cls]
        journalist_max = float(journalist.max())
        journalist_mean = float(journalist.mean())
        marketer = float(np.sum(sizes / pop_sizes)) / n
    uniques = int(np.count_nonzero(sizes[cls] == 1))
    at_risk = int(np.count_nonzero(record_risk > threshold))
    edges = np.asarray(RISK_BIN_EDGES)
    per_bin = np.bincount(np.searchsorted(edges, record_risk, side="left") - 1,
                          minlength=len(edges) - 1)
    histogram = tuple(RiskBin(low=float(edges[i]), high=float(edges[i + 1]),
                              records=int(per_bin[i]), share=int(per_bin[i]) / n)
                      for i in range(len(edges) - 1))
    return {
        "prosecutor_risk_max": float(1.0 / sizes.min()),
        "prosecutor_risk_mean": float(record_risk.mean()),
        "journalist_risk_max": journalist_max,
        "journalist_risk_mean": journalist_mean,
        "marketer_risk": marketer,
        "expected_reidentifications": marketer * n,
        "sample_uniques": uniques,
        "sample_uniques_share": uniques / n,
        "risk_threshold": threshold,
        "records_at_risk": at_risk,
        "records_at_risk_share": at_risk / n,
        "risk_histogram": histogram,
    }


def _population_sizes(table: pd.DataFrame, qis: list[str], cls: _Ints, sizes: _Ints,
                      population: pd.DataFrame) -> _Ints:
    """|population class| of each sample class; refuses a class absent from the population."""
    if not isinstance(population, pd.DataFrame):
        raise TypeError(f"population must be a pandas DataFrame, got {type(population).__name__}")
    missing = [c for c in qis if c not in population.columns]
    if missing:
        raise ValueError(f"population has no quasi-identifier column {missing[0]!r}: it needs "
                         f"all of {qis!r}")
    both = pd.concat([table[qis], population[qis]], ignore_index=True)
    joint = _class_codes(both, qis)
    sample_joint = np.zeros(len(sizes), dtype=np.int64)
    sample_joint[cls] = joint[: len(table)]
    pop_counts = np.bincount(joint[len(table):], minlength=int(joint.max()) + 1)
    pop_sizes = pop_counts[sample_joint].astype(np.int64)
    short = np.flatnonzero(pop_sizes < sizes)
    if len(short):
        row = int(np.flatnonzero(cls == short[0])[0])
        values = {c: _plain(table[c].iloc[row]) for c in qis}
        found = int(pop_sizes[short[0]])
        raise ValueError(f"the sample class {values!r} ({int(sizes[short[0]])} records) "
                         + ("is absent from the population" if found == 0 else
                            f"has only {found} records in the population")
                         + ": the population must contain every sample record")
    return pop_sizes


def _plain(value: object) -> object:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _epsilon_m(table: pd.DataFrame, sens: list[str], cls: _Ints, sizes: _Ints,
               eps: float) -> int:
    """m of (epsilon, m)-anonymity (Li, Tao and Xiao, SIGMOD 2008), the worst numeric column.

    For a class G and each value x, N(x) counts the class's values in [x - eps, x + eps]
    (x itself included); the class allows m = floor(|G| / max N(x)). Sort by (class, value)
    once; each bound is then a rank in a merged sort: O(n log n).
    """
    numeric = [c for c in sens if pd.api.types.is_numeric_dtype(table[c])]
    if not numeric:
        raise ValueError(f"epsilon_m needs a numeric sensitive column; {sens!r} has none: "
                         "pass epsilon_m=None")
    return min(_epsilon_m_column(table[c].to_numpy(dtype=np.float64), cls, sizes, eps)
               for c in numeric)


def _epsilon_m_column(values: _Floats, cls: _Ints, sizes: _Ints, eps: float) -> int:
    order = np.lexsort((values, cls))
    c = cls[order]
    x = values[order]
    upper = _count_at_most(c, x, x + eps, inclusive=True)
    lower = _count_at_most(c, x, x - eps, inclusive=False)
    neighbours = upper - lower
    starts = _class_starts(c)
    widest = np.maximum.reduceat(neighbours, starts)
    return int(np.min(sizes[c[starts]] // widest))


def _count_at_most(c: _Ints, x: _Floats, bound: _Floats, *, inclusive: bool) -> _Ints:
    """For each i, how many j with c[j] == c[i] have x[j] <= bound[i] (< if not inclusive).

    ``(c, x)`` is sorted; queries and values are merged in one lexicographic sort, a query
    after the equal values when inclusive, before them otherwise.
    """
    n = len(x)
    kind = np.r_[np.zeros(n, dtype=np.int8), np.ones(n, dtype=np.int8)]
    if not inclusive:
        kind = 1 - kind
    merged = np.lexsort((kind, np.r_[x, bound], np.r_[c, c]))
    is_value = merged < n
    values_so_far = np.cumsum(is_value)
    query = ~is_value
    counts = np.empty(n, dtype=np.int64)
    counts[merged[query] - n] = values_so_far[query]
    class_start = np.searchsorted(c, c, side="left")
    return counts - class_start
