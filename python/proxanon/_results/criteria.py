"""Privacy criteria a release policy adds to (epsilon, delta)^k-dissimilarity: l-diversity
(distinct, entropy, recursive), t-closeness, beta-likeness and delta-disclosure
(docs/guide/criteria.md).

Each criterion is a small frozen dataclass; :func:`criteria_verdicts` holds every class of a
table to it, with the per-class measures of :mod:`proxanon._results.privacy` (the ones
:func:`proxanon.privacy_measures` reports the worst of), so that a table satisfies a
criterion exactly when pycanon's measure of it does:

* distinct l-diversity: ``l_diversity >= l``; entropy: ``entropy_l_diversity >= l``
  (pycanon's ``int(e ** H)``); recursive (c, l): in every class r_1 < c (r_l + ... + r_m),
  the counts from the most frequent down (Machanavajjhala et al.; pycanon's reported c is
  another quantity, see :class:`proxanon.PrivacyMeasures`);
* t-closeness: ``t_closeness <= t``; beta-likeness: ``basic_beta_likeness <= beta``;
  delta-disclosure: ``delta_disclosure <= delta``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._results.privacy import _Sensitive, column_codes

__all__ = ["BetaLikeness", "Criterion", "CriterionVerdict", "DeltaDisclosure", "LDiversity",
           "TCloseness", "check_criteria", "criteria_verdicts"]

L_KINDS = ("distinct", "entropy", "recursive")


def _positive(value: Any, name: str, owner: str, *, integer: bool = False,
              minimum: float = 0.0, strict: bool = False) -> Any:
    """``value`` checked as a number (an int where ``integer``) at least ``minimum`` (above it
    where ``strict``); the message names ``owner``'s parameter."""
    kinds: tuple[type, ...] = (int, np.integer) if integer else (int, float, np.integer,
                                                                  np.floating)
    is_number = not isinstance(value, bool) and isinstance(value, kinds)
    if not is_number:
        raise TypeError(f"{owner}: {name} must be {'an integer' if integer else 'a number'}, "
                        f"got {value!r}")
    number: float = int(value) if integer else float(value)
    if not math.isfinite(number) or number < minimum or (strict and number == minimum):
        raise ValueError(f"{owner}: {name} must be a finite number "
                         f"{'above' if strict else 'at least'} {minimum:g}, got {value!r}")
    return number


def _column(column: Any, owner: str) -> str | None:
    if column is not None and not isinstance(column, str):
        raise TypeError(f"{owner}: column must be a column name (str) or None (each sensitive "
                        f"column), got {column!r}")
    return column


@dataclass(frozen=True)
class LDiversity:
    """Every class holds ``l`` well-represented values of ``column`` (None: of each
    sensitive column). ``kind``: ``"distinct"`` (at least ``l`` distinct values),
    ``"entropy"`` (``int(e ** H) >= l``, H the class's entropy, as pycanon computes it) or
    ``"recursive"`` (r_1 < ``c`` (r_l + ... + r_m), the counts from the most frequent down;
    ``c`` required, and only then)."""

    l: int  # noqa: E741 (the name the literature uses)
    kind: str = "distinct"
    c: float | None = None
    column: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "l", _positive(self.l, "l", "LDiversity", integer=True,
                                                minimum=1))
        if self.kind not in L_KINDS:
            raise ValueError(f"LDiversity: kind must be one of {', '.join(L_KINDS)}, got "
                             f"{self.kind!r}")
        if self.kind == "recursive":
            if self.c is None:
                raise TypeError("LDiversity: kind='recursive' needs c, the constant of "
                                "recursive (c, l)-diversity (r_1 < c (r_l + ... + r_m))")
            object.__setattr__(self, "c", _positive(self.c, "c", "LDiversity", strict=True))
        elif self.c is not None:
            raise ValueError(f"LDiversity: c applies to kind='recursive' only, not "
                             f"kind={self.kind!r}")
        _column(self.column, "LDiversity")

    @property
    def model(self) -> str:
        """The model and its parameters, without the column."""
        return (f"recursive ({self.c:g}, {self.l})-diversity" if self.kind == "recursive"
                else f"{self.kind} {self.l}-diversity")

    def __str__(self) -> str:
        return _on(self.model, self.column)


class _Bounded:
    """A criterion with one bound, a number at least 0 named ``_bound``; its model's text is
    ``_model`` with the bound."""

    _bound: ClassVar[str]
    _model: ClassVar[str]
    column: str | None

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, self._bound, _positive(getattr(self, self._bound), self._bound,
                                                        owner))
        _column(self.column, owner)

    @property
    def model(self) -> str:
        """The model and its parameter, without the column."""
        return self._model.format(getattr(self, self._bound))

    def __str__(self) -> str:
        return _on(self.model, self.column)


@dataclass(frozen=True)
class TCloseness(_Bounded):
    """Every class's distribution of ``column`` (None: each sensitive column) is within
    earth mover's distance ``t`` of the table's (ordered distance for numbers, equal
    distance for text, as pycanon)."""

    _bound: ClassVar[str] = "t"
    _model: ClassVar[str] = "{:g}-closeness"
    t: float
    column: str | None = None


@dataclass(frozen=True)
class BetaLikeness(_Bounded):
    """Basic beta-likeness: in every class, each value of ``column`` (None: each sensitive
    column) is at most ``(1 + beta)`` times as frequent as in the table, (q - p) / p <= beta."""

    _bound: ClassVar[str] = "beta"
    _model: ClassVar[str] = "basic {:g}-likeness"
    beta: float
    column: str | None = None


@dataclass(frozen=True)
class DeltaDisclosure(_Bounded):
    """Delta-disclosure privacy: in every class, |ln(q / p)| <= ``delta`` for each value of
    ``column`` (None: each sensitive column) the class holds (pycanon's measure)."""

    _bound: ClassVar[str] = "delta"
    _model: ClassVar[str] = "{:g}-disclosure privacy"
    delta: float
    column: str | None = None


Criterion: TypeAlias = LDiversity | TCloseness | BetaLikeness | DeltaDisclosure
CRITERIA = (LDiversity, TCloseness, BetaLikeness, DeltaDisclosure)


def _on(model: str, column: str | None) -> str:
    return model + (" of each sensitive column" if column is None else f" of {column!r}")


def check_criteria(criteria: Any, columns: Sequence[str], quasi_identifiers: Sequence[str],
                   sensitive: Sequence[str]) -> tuple[Criterion, ...]:
    """``criteria`` checked against a table's ``columns``: a list of criteria, each naming
    a column of the table that is not a quasi-identifier (or None)."""
    if criteria is None:
        return ()
    if isinstance(criteria, CRITERIA) or not isinstance(criteria, (list, tuple)):
        raise TypeError("criteria must be a list of proxanon.LDiversity, TCloseness, "
                        f"BetaLikeness or DeltaDisclosure, got {criteria!r}")
    for criterion in criteria:
        if not isinstance(criterion, CRITERIA):
            raise TypeError("criteria must list proxanon.LDiversity, TCloseness, BetaLikeness "
                            f"or DeltaDisclosure objects, got {criterion!r}")
        if criterion.column is None:
            continue
        if criterion.column not in columns:
            raise ValueError(f"{criterion}: {criterion.column!r} is not a column of the "
                             f"table; its columns are {list(columns)!r}")
        if criterion.column in quasi_identifiers:
            raise ValueError(f"{criterion}: {criterion.column!r} is a quasi-identifier; a "
                             "criterion protects a column the attacker does not know")
    if not sensitive and any(c.column is None for c in criteria):
        raise ValueError("a criterion with column=None applies to each sensitive column, "
                         "and none was given: name its column")
    return tuple(dict.fromkeys(criteria))


def criterion_columns(criteria: Sequence[Criterion], sensitive: Sequence[str]) -> list[str]:
    """The columns the criteria read, each once, in order."""
    names = [name for c in criteria for name in ([c.column] if c.column else sensitive)]
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class CriterionVerdict:
    """One criterion on one column of a table: whether every class satisfies it, the
    table's measure (the worst class's; for recursive l-diversity the share of classes that
    fail), and the classes that fail (their ids, ascending)."""

    criterion: Criterion
    column: str
    satisfied: bool
    value: float
    failing_classes: NDArray[np.int64]

    def __str__(self) -> str:
        verdict = "holds" if self.satisfied else (
            f"FAILS in {self.failing_classes.size:,} class(es)")
        return f"{self.criterion.model} of {self.column!r}: {verdict} (measure {self.value:g})"

    def to_dict(self) -> dict[str, Any]:
        """The verdict as plain values (the JSON reports)."""
        return {"criterion": self.criterion.model, "column": self.column,
                "satisfied": self.satisfied, "value": self.value,
                "failing_classes": int(self.failing_classes.size)}


class CodedColumns:
    """The columns criteria read, coded once (:func:`column_codes`), so that the classes
    of many candidate partitions of the same rows are measured without coding them again."""

    def __init__(self, table: pd.DataFrame, names: Sequence[str]) -> None:
        self.codes = {name: column_codes(table[name], name) for name in names}
        self.counts = {name: np.bincount(values, minlength=m).astype(np.int64)
                       for name, (values, m, _) in self.codes.items()}

    def measures(self, name: str, classes: NDArray[np.int64],
                 rows: NDArray[np.bool_] | None = None) -> _Sensitive:
        """The per-class measures of column ``name`` over ``classes`` (0..m-1, each used),
        of the ``rows`` given (a mask; the classes of those rows, whole) or all."""
        values, m, numeric = self.codes[name]
        if rows is not None:
            values = values[rows]
        return _Sensitive(values, m, numeric, classes, np.bincount(classes),
                          global_counts=self.counts[name])


def criteria_verdicts(coded: CodedColumns, classes: NDArray[np.int64],
                      criteria: Sequence[Criterion], sensitive: Sequence[str],
                      rows: NDArray[np.bool_] | None = None) -> list[CriterionVerdict]:
    """Each criterion on each column it reads, over ``classes`` (an id per row, any
    integers): vectorized over the classes, one measure per column. ``rows``: a mask of the
    rows whose classes (whole) are measured, against the distribution of all rows; the
    verdicts then cover those classes only."""
    given = np.asarray(classes) if rows is None else np.asarray(classes)[rows]
    ids, dense = np.unique(given, return_inverse=True)
    dense = dense.astype(np.int64)
    measured: dict[str, _Sensitive] = {}
    verdicts = []
    for criterion in criteria:
        for name in ([criterion.column] if criterion.column else sensitive):
            if name not in measured:
                measured[name] = coded.measures(name, dense, rows)
            ok, value = _holds(criterion, measured[name])
            failing = (ids[~ok] if ids.dtype.kind in "iu" else np.flatnonzero(~ok)).astype(
                np.int64)
            verdicts.append(CriterionVerdict(criterion, name, bool(ok.all()), value, failing))
    return verdicts


def _holds(criterion: Criterion, column: _Sensitive) -> tuple[NDArray[np.bool_], float]:
    """Per class, whether it satisfies ``criterion`` on ``column``; and the table's
    measure."""
    if isinstance(criterion, LDiversity):
        if criterion.kind == "distinct":
            return column.distinct >= criterion.l, float(column.distinct.min())
        if criterion.kind == "entropy":
            per_class = column.entropy_l_per_class()
            return per_class >= criterion.l, float(per_class.min())
        # LDiversity refuses kind="recursive" without c, so c is set here.
        ok = column.recursive_holds_per_class(criterion.l, float(criterion.c or 0.0))
        return ok, float(np.mean(~ok))
    if isinstance(criterion, TCloseness):
        t = column.t_per_class()
        return t <= criterion.t, float(t.max())
    if isinstance(criterion, BetaLikeness):
        return (column.beta_per_class <= criterion.beta,
                float(column.beta_per_class.max()))
    return (column.delta_per_class <= criterion.delta, float(column.delta_per_class.max()))
