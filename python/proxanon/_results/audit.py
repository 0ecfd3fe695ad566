"""The result of :func:`proxanon.audit`: the verdict of (epsilon, delta)^k-dissimilarity,
per group and per row (docs/design/privacy-model.md)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._display import Summarized, html_writer
from proxanon._results.criteria import CriterionVerdict

#: How many of the worst groups ``str(report)`` lists.
_WORST_SHOWN = 5


@dataclass(frozen=True)
class ColumnExposure:
    """One sensitive column's own exposure under the audited partition: the checks of
    (epsilon, delta)^k-dissimilarity with two rows counted as neighbours when they are
    within epsilon on this column alone (the metric's distance between two values that
    differ in this column only; docs/design/privacy-model.md#each-column-alone).

    Attributes:
        column: the sensitive column's name (``"component j"`` for arrays).
        max_risk: the largest share of a class's other rows within epsilon of one of its
            rows on this column alone.
        violating_groups: classes in which a row has more than t(G) such neighbours: the
            column alone is exposed beyond 1 - delta there.
        violating_rows: rows with more than t(G) such neighbours.
    """

    column: str
    max_risk: float
    violating_groups: int
    violating_rows: int

    @property
    def exposed(self) -> bool:
        """Whether the column alone is exposed beyond 1 - delta in some class."""
        return self.violating_groups > 0

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, "max_risk": float(self.max_risk),
                "violating_groups": int(self.violating_groups),
                "violating_rows": int(self.violating_rows), "exposed": self.exposed}


@dataclass(frozen=True, eq=False, repr=False)
class AuditReport(Summarized):
    """The outcome of :func:`audit`: verdict, per-group and per-row detail
    (docs/design/privacy-model.md).

    Arrays are read-only. Group-level arrays (``group_ids``, ``group_sizes``,
    ``group_risk``) are aligned with each other, in ascending group id order; row-level
    ``neighbour_counts`` is in the table's row order.

    Attributes:
        satisfied: True iff every group has at least ``k`` rows, no row has more than
            ``t(G)`` epsilon-neighbours in its group, and every criterion in ``criteria``
            holds.
        max_risk: the largest ``risk(G)`` over all groups (the risk of the partition).
        vulnerability: fraction of groups violating (epsilon, delta)-dissimilarity, small
            groups not counted as violations (paper §VI, Fig. 4).
        n_groups: number of distinct group ids.
        k, epsilon, delta, metric: the parameters the table was checked against.
        group_ids: the distinct group ids, ascending (int64).
        group_sizes: ``|G|`` per group (int64).
        group_risk: ``risk(G)`` per group (float64); 1.0 for a group of one row.
        violating_groups: ids of groups with a member whose ``D_G(v) > t(G)``, ascending.
        small_groups: ids of groups with ``|G| < k``, ascending.
        violating_rows: row indices with ``D_G(v) > t(G)``, ascending.
        neighbour_counts: ``D_G(v)`` for every row (int64); -1 for a suppressed row.
        suppressed_rows: rows whose group id is -1 (left out of the release), ascending;
            they are not part of any group and not audited.
        weights: the weight of each sensitive component under a built-in metric
            (docs/design/definitions.md), None for a distance function or a neighbour graph.
        scales: per numeric sensitive column of a table, the ``(low, high)`` it was scaled
            to [0, 1] by (its own min and max, the ``sensitive_ranges`` given, or (0, 1) under
            the variational distance); empty when arrays were audited.
        taxonomies: the sensitive columns of a table compared by tree distance (their
            ``hierarchies``), which no range scales.
        criteria: the verdict of each privacy criterion checked besides (epsilon, delta)^k
            (``audit(..., criteria=[...])``, docs/guide/criteria.md), one per criterion and
            column it reads; empty when none was asked for.
        columns: with two or more sensitive columns under a built-in metric over
            components (l1, l2, linf, min_component), each column's own exposure
            (:class:`ColumnExposure`), in the order of the columns; else empty. The verdict
            is the joint one: a column alone may be exposed where the table satisfies the
            model (a joint distance protects the combination, min_component each value).
    """

    satisfied: bool
    max_risk: float
    vulnerability: float
    n_groups: int
    k: int
    epsilon: float
    delta: float
    metric: str
    group_ids: NDArray[np.int64]
    group_sizes: NDArray[np.int64]
    group_risk: NDArray[np.float64]
    violating_groups: NDArray[np.int64]
    small_groups: NDArray[np.int64]
    violating_rows: NDArray[np.int64]
    neighbour_counts: NDArray[np.int64]
    suppressed_rows: NDArray[np.int64] = field(
        default_factory=lambda: np.zeros(0, dtype=np.int64))
    weights: NDArray[np.float64] | None = None
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    taxonomies: tuple[str, ...] = ()
    criteria: tuple[CriterionVerdict, ...] = ()
    columns: tuple[ColumnExposure, ...] = ()

    def named(self, names: Any) -> AuditReport:
        """This report with its columns' exposures labelled by ``names`` (the sensitive
        columns, in order); none where the audited components are not one per name."""
        labels = [str(name) for name in names]
        if len(labels) != len(self.columns):
            return replace(self, columns=())
        return replace(self, columns=tuple(replace(c, column=name)
                                           for c, name in zip(self.columns, labels, strict=True)))

    def to_html(self, path: Any, table: Any = None, *, quasi_identifiers: Any = None,
                sensitive: Any = None, groups: Any = None) -> None:
        """Writes the disclosure-risk report of this audit as one self-contained HTML file.

        ``table`` (the audited DataFrame, with ``quasi_identifiers`` and ``sensitive``)
        adds the published values of the worst classes and the plots of the columns; see
        :func:`proxanon.html_report.audit_html`. Needs the ``report`` extra (matplotlib).
        """
        html_writer("audit")(self, path, table, quasi_identifiers=quasi_identifiers,
                             sensitive=sensitive, groups=groups)

    def _summary_fields(self) -> list[tuple[str, Any]]:
        return [("satisfied", self.satisfied), ("rows", int(self.neighbour_counts.shape[0])),
                ("groups", self.n_groups), ("k", self.k), ("epsilon", self.epsilon),
                ("delta", self.delta), ("metric", self.metric), ("max_risk", self.max_risk),
                ("vulnerability", self.vulnerability),
                ("violating_groups", int(self.violating_groups.shape[0])),
                ("small_groups", int(self.small_groups.shape[0])),
                ("suppressed", int(self.suppressed_rows.shape[0])),
                *((str(v.criterion), v.satisfied) for v in self.criteria)]

    def summary(self) -> dict[str, Any]:
        """The scalar results as plain Python values (JSON-serializable).

        Holds every scalar field plus ``n_rows`` and the counts of violating groups,
        violating rows and small groups.
        """
        return {
            "satisfied": bool(self.satisfied),
            "max_risk": float(self.max_risk),
            "vulnerability": float(self.vulnerability),
            "n_groups": int(self.n_groups),
            "k": int(self.k),
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "metric": str(self.metric),
            "n_rows": int(self.neighbour_counts.shape[0]),
            "n_violating_groups": int(self.violating_groups.shape[0]),
            "n_violating_rows": int(self.violating_rows.shape[0]),
            "n_small_groups": int(self.small_groups.shape[0]),
            "criteria": [v.to_dict() for v in self.criteria],
            "columns": [c.to_dict() for c in self.columns],
        }

    def worst_groups(self, count: int = _WORST_SHOWN) -> NDArray[np.int64]:
        """Ids of the ``count`` riskiest groups, highest risk first and ties by ascending id:
        the groups ``str(report)`` lists, in its order."""
        return self.group_ids[self._worst_positions(count)]

    def _worst_positions(self, count: int) -> NDArray[np.int64]:
        count = _validate.integer(count, "count", minimum=0)
        order: NDArray[np.int64] = np.lexsort((self.group_ids, -self.group_risk))[:count]
        return order

    def __str__(self) -> str:
        n_rows = int(self.neighbour_counts.shape[0])
        verdict = "satisfied" if self.satisfied else "NOT satisfied"
        allowed = 1.0 - self.delta
        sizes = self.group_sizes
        if int(sizes.min()) == int(sizes.max()):
            size_text = f"all of size {int(sizes.min())}"
        else:
            size_text = f"sizes {int(sizes.min())} to {int(sizes.max())}"
        risk_note = ("within" if self.max_risk <= allowed + _validate.ALLOWANCE_TOLERANCE
                     else "above")
        parameters = (
            f"k = {self.k}, epsilon = {self.epsilon:g}, delta = {self.delta:g}, "
            f"metric = {self.metric}"
        )
        n_bad_groups = self.violating_groups.shape[0]
        n_bad_rows = self.violating_rows.shape[0]
        lines = [
            f"(epsilon, delta)^k-dissimilarity: {verdict}" if not self.criteria else
            f"(epsilon, delta)^k-dissimilarity and criteria: {verdict}",
            f"  parameters     : {parameters}",
            f"  groups         : {self.n_groups:,} over {n_rows:,} rows ({size_text})",
            f"  max risk       : {self.max_risk:.4f} ({risk_note} 1 - delta = {allowed:.4f})",
            f"  vulnerability  : {100.0 * self.vulnerability:.2f}% of groups violate "
            + "(epsilon, delta)-dissimilarity",
            f"  violations     : {n_bad_groups:,} group(s), {n_bad_rows:,} row(s) with more "
            + "than t(G) neighbours",
            f"  small groups   : {self.small_groups.shape[0]:,} with fewer than k = {self.k} rows",
        ]
        order = self._worst_positions(_WORST_SHOWN)
        lines.append(f"  worst groups   : (id, size, risk), {order.shape[0]} of {self.n_groups:,}")
        for i in order:
            lines.append(
                f"    group {int(self.group_ids[i])}: {int(self.group_sizes[i])} rows, "
                f"risk {float(self.group_risk[i]):.4f}"
            )
        if self.columns:
            lines.append("  each column    : " + column_exposure_text(
                [(c.column, c.max_risk, c.violating_groups) for c in self.columns], allowed))
        if self.criteria:
            lines.append("  criteria       : (each class must satisfy each)")
            lines.extend(f"    {v}" for v in self.criteria)
        return "\n".join(lines)


def joined_exposures(parts: list[tuple[ColumnExposure, ...]]) -> tuple[ColumnExposure, ...]:
    """Each column's exposure over disjoint sets of whole classes (a Dask table's parts),
    from each part's: the largest risk, the classes and rows summed."""
    present = [p for p in parts if p]
    if not present or len({len(p) for p in present}) != 1:
        return ()
    return tuple(ColumnExposure(column=column[0].column,
                                max_risk=max(c.max_risk for c in column),
                                violating_groups=sum(c.violating_groups for c in column),
                                violating_rows=sum(c.violating_rows for c in column))
                 for column in zip(*present, strict=True))


def column_exposure_text(columns: list[tuple[str, float, int]], allowed: float) -> str:
    """One line of each sensitive column's own exposure (name, largest share, classes where
    it alone is above 1 - delta) beside ``allowed`` = 1 - delta, and what protects each
    value where a column alone is exposed."""
    parts = [f"{name} {risk:.4f}"
             + (f" (alone above 1 - delta in {classes:,} class(es))" if classes else "")
             for name, risk, classes in columns]
    text = "; ".join(parts) + f"; allowed {allowed:.4f}"
    if any(classes for _, _, classes in columns):
        text += ("; the distance joins the columns, so it protects their combination: "
                 "metric min_component (--metric min_component) protects each column's value")
    return text
