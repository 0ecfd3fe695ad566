"""The result of :func:`proxanon.anonymize`: the published table (:class:`Anonymization`)
and its privacy and utility numbers (:class:`Report`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._display import Summarized, html_writer
from proxanon._results.audit import AuditReport, column_exposure_text
from proxanon._results.measures import GroupSummary
from proxanon._results.partition import Partition
from proxanon.hierarchy import Hierarchy

#: The column the published table adds: each row's class.
GROUP_COLUMN = "group"


#: The cost ``anonymize`` gives XColor's table where it stopped it early: a lower bound.
_XCOLOR_BOUND = "xcolor (at least)"
#: ``Report.method`` of a table published by the hierarchy cut (docs/design/mondrian.md).
HIERARCHY_CUT = "hierarchy cut"
#: ``Report.method`` of a full-domain recoding (``recoding="global"``, docs/design/full-domain.md).
FULL_DOMAIN = "full-domain"
#: The candidate tables (``Report.candidates``) in words.
_CANDIDATE_WORDS = {"xcolor": "XColor's table", "mondrian": "the Mondrian cut",
                    HIERARCHY_CUT: "the hierarchy cut",
                    _XCOLOR_BOUND: "XColor's table",
                    "xcolor from the Mondrian cut": "XColor's repair of the Mondrian cut"}


@dataclass(frozen=True, repr=False)
class Report(Summarized):
    """The privacy and utility numbers of one anonymization; ``print(report)`` reads well.

    Every number describes the published table: its groups are its equivalence classes (rows
    that share the published QI values, the ``group`` column), whatever ``on_infeasible`` is.
    Privacy: ``satisfied``, ``max_risk``, ``vulnerability``, ``remaining_violations`` (rows)
    and ``violating_groups`` come from the independent audit of those classes, reading the
    sensitive columns as ``proxanon.audit(result.table, ...)`` does (scaled over the published
    rows); the engine's numbers (``max_degree``, ``bound``, ``initial_violations``, ``swaps``)
    describe how it got there. ``fallback``: the QI-aware groups failed and the plain
    partition's groups (:func:`proxanon.partition`'s defaults) were published.
    Utility (docs/design/publishing.md), over the published classes: ``loss`` is the paper's
    loss(G) = Σ_i |G.A_i| / |A_i| averaged over groups (0 to the number of QIs); ``gcp`` the
    global certainty penalty Σ_G |G|·Σ_i NCP_i(G) / (n·d) in [0, 1], where NCP is the same
    ratio except that a group with one category costs 0; ``ncp`` the per-column average NCP
    over rows; ``discernibility`` Σ_G |G|²; ``average_group_size`` n / groups.
    ``method``: how the published groups were formed, ``"xcolor"``, ``"mondrian"`` (also
    when the default ``anonymize`` published strict Mondrian's Mondrian-(ε, δ) cut),
    ``"hierarchy cut"`` (docs/design/mondrian.md#the-hierarchy-cut) or ``"full-domain"``
    (``recoding="global"``: ``levels`` gives the generalization level of each QI,
    ``lattice_nodes`` the nodes of its lattice and ``nodes_checked`` those whose classes the
    search checked); ``candidates``: the
    cost (GCP over all rows, a suppressed row counting as fully generalized) of each
    satisfying table ``anonymize`` compared before publishing the cheapest, empty when it
    compared none. ``"xcolor (at least)"`` is a lower bound of XColor's cost, given where
    it already exceeded the cut's: XColor's table was then not finished (see
    :func:`anonymize`).
    ``publish``: ``"generalize"`` (the QIs generalized per class) or ``"anatomy"`` (the QIs
    published exact beside a group id, docs/design/anatomy.md): there the groups are the
    classes, and loss, GCP and NCP measure how widely each group spans the QIs (what
    generalizing it would cost, and what spreads a count query's estimate), not a change to
    any published value.
    Each sensitive column alone (with two or more under l1, l2, linf or min_component;
    docs/design/privacy-model.md#each-column-alone): ``column_risk``, its largest share of a
    class within epsilon of a row on that column only, and ``column_exposed``, the classes
    where that share is above 1 - delta (0 everywhere under min_component, which counts a
    neighbour on any one column; possible under a joint distance, which protects the
    combination).
    Class sizes: ``min_group_size``, ``max_group_size``, ``largest_class_share`` (the
    largest class's share of the published rows) and ``class_size_quantiles`` (the sizes at
    the 50%, 90% and 99% quantiles of the classes, lower).
    """

    satisfied: bool
    n: int
    groups: int
    k: int
    epsilon: float
    delta: float
    metric: str
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    max_risk: float
    vulnerability: float
    max_degree: int
    bound: float
    bound_holds: bool
    initial_violations: int
    swaps: int
    merge_rounds: int
    remaining_violations: int
    violating_groups: tuple[int, ...]
    suppressed_rows: tuple[int, ...]
    loss: float
    gcp: float
    ncp: dict[str, float]
    discernibility: int
    average_group_size: float
    min_group_size: int
    max_group_size: int
    largest_class_share: float
    class_size_quantiles: dict[str, int]
    seconds: dict[str, float] = field(default_factory=dict)
    method: str = "xcolor"
    fallback: bool = False
    candidates: dict[str, float] = field(default_factory=dict)
    repair_capped: int = 0
    publish: str = "generalize"
    levels: dict[str, int] = field(default_factory=dict)
    lattice_nodes: int = 0
    nodes_checked: int = 0
    column_risk: dict[str, float] = field(default_factory=dict)
    column_exposed: dict[str, int] = field(default_factory=dict)

    def _summary_fields(self) -> list[tuple[str, Any]]:
        return [("satisfied", self.satisfied), ("rows", self.n), ("groups", self.groups),
                ("k", self.k), ("epsilon", self.epsilon), ("delta", self.delta),
                ("metric", self.metric), ("max_risk", self.max_risk),
                ("vulnerability", self.vulnerability),
                ("suppressed", len(self.suppressed_rows)), ("loss", self.loss),
                ("gcp", self.gcp), ("method", self.method), ("publish", self.publish)]

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values, ready for JSON."""
        return {
            name: (list(value) if isinstance(value, tuple) else
                   dict(value) if isinstance(value, dict) else value)
            for name, value in self.__dict__.items()
        }

    def _utility_line(self) -> str:
        """The utility numbers; for anatomy, what the numbers over the QIs mean there."""
        if self.publish == "anatomy":
            return (f"  utility        : anatomy: QIs published exact; the groups span, in the "
                    f"QIs, loss {self.loss:.4f} per group and GCP {self.gcp:.4f} (what "
                    f"generalizing them would cost); discernibility {self.discernibility:,}")
        return (f"  utility        : loss {self.loss:.4f} per group over "
                f"{len(self.quasi_identifiers)} QI(s); GCP {self.gcp:.4f}; "
                f"discernibility {self.discernibility:,}")

    def _privacy_lines(self) -> list[str]:
        """What was asked and the largest risk; without a distance check (k-anonymity and
        the criteria alone: δ = 0, or strict Mondrian without epsilon) the risk is measured,
        not bounded."""
        if math.isnan(self.delta) or self.delta == 0:
            return [f"  privacy        : k = {self.k} (k-anonymity and the criteria alone: no "
                    f"proximity checked); sensitive {', '.join(self.sensitive)}",
                    f"  max risk       : {self.max_risk:.4f} (rows within epsilon = "
                    f"{0.0 if math.isnan(self.epsilon) else self.epsilon:g} over {self.metric}; "
                    f"measured, not bounded); vulnerability {self.vulnerability:.2%}"]
        columns = ([] if not self.column_risk else [
            "  each column    : " + column_exposure_text(
                [(c, risk, self.column_exposed.get(c, 0)) for c, risk in
                 self.column_risk.items()], 1 - self.delta)])
        return [f"  privacy        : k = {self.k}, epsilon = {self.epsilon}, delta = "
                f"{self.delta}, {self.metric} over {', '.join(self.sensitive)}",
                f"  max risk       : {self.max_risk:.4f} (allowed 1 - delta = "
                f"{1 - self.delta:.4f}); vulnerability {self.vulnerability:.2%}", *columns]

    def _engine_line(self, bound: str) -> str:
        """How the groups were formed: XColor's run, or the Mondrian-(ε, δ) cut (which has no
        colouring, so no degree bound, INITIALIZE or swaps to report)."""
        rounds = ("groups never merged (anatomy publishes no QI tuple)"
                  if self.publish == "anatomy" else
                  f"{self.merge_rounds} round(s) merging groups that published the same QI "
                  "values")
        if self.method == "mondrian":
            return (f"  engine         : the Mondrian-(ε, δ) cut (no colouring); {rounds}; "
                    f"{self.remaining_violations:,} violating row(s) left")
        if self.method == FULL_DOMAIN:
            chosen = ", ".join(f"{c} {level}" for c, level in self.levels.items())
            return ("  engine         : full-domain recoding: generalization levels "
                    f"{chosen} for every row (the lowest loss within the suppression limit; "
                    f"{self.nodes_checked:,} of the lattice's {self.lattice_nodes:,} nodes "
                    f"checked); {self.remaining_violations:,} violating row(s) left")
        if self.method == HIERARCHY_CUT:
            return ("  engine         : the hierarchy cut (classes split along the taxonomies, "
                    f"each published at its tightest nodes); {rounds}; "
                    f"{self.remaining_violations:,} violating row(s) left")
        return (f"  engine         : max degree {self.max_degree:,} (inequality (4) bound "
                f"{self.bound:,.1f} {bound}); {self.initial_violations:,} violating row(s) after "
                f"INITIALIZE, {self.swaps:,} swap(s), {self.remaining_violations:,} left; "
                + rounds
                + (f"; repair capped: it stopped with {self.repair_capped:,} violating row(s) "
                   "once it cleared too few per unit of work" if self.repair_capped else "")
                + ("; the plain partition's groups (the QI-aware ones failed)" if self.fallback
                   else ""))

    def published_candidate(self) -> str:
        """The name in ``candidates`` of the table that was published: the cheapest one made
        by ``method`` (a bound, ``"xcolor (at least)"``, is never published)."""
        made = {name: cost for name, cost in self.candidates.items()
                if name.startswith(self.method) and name != _XCOLOR_BOUND}
        return min(made, key=made.__getitem__, default=self.method)

    def _published_line(self) -> str:
        """Which candidate was published and why, in words: "published : the Mondrian cut:
        the lowest GCP (0.2100 vs 0.2500 for XColor's table)"."""
        chosen = self.published_candidate()
        others = [f"{'at least ' if name == _XCOLOR_BOUND else ''}{cost:.4f} for "
                  f"{_CANDIDATE_WORDS.get(name, name)}"
                  for name, cost in self.candidates.items() if name != chosen]
        cost = self.candidates.get(chosen, self.gcp)
        why = (f"the lowest GCP ({cost:.4f} vs {', '.join(others)})" if others
               else f"the only satisfying candidate (GCP {cost:.4f})")
        return f"  published      : {_CANDIDATE_WORDS.get(chosen, chosen)}: {why}"

    def __str__(self) -> str:
        verdict = "satisfied" if self.satisfied else (
            f"NOT satisfied: {self.remaining_violations:,} violating row(s) in "
            f"{len(self.violating_groups):,} group(s)")
        bound = "holds" if self.bound_holds else "fails"
        ncp = ", ".join(f"{name} {value:.3f}" for name, value in self.ncp.items())
        seconds = ", ".join(f"{name} {value:.3f}" for name, value in self.seconds.items())
        return "\n".join([
            f"proxanon anonymization: {verdict}",
            f"  table          : {self.n:,} rows in {self.groups:,} groups "
            f"(sizes {self.min_group_size} to {self.max_group_size}, "
            f"average {self.average_group_size:.2f}; largest class "
            f"{self.largest_class_share:.2%} of the rows; sizes at the quantiles "
            + ", ".join(f"{q} {size}" for q, size in self.class_size_quantiles.items()) + ")"
            + (f"; {len(self.suppressed_rows):,} row(s) suppressed" if self.suppressed_rows
               else ""),
            *self._privacy_lines(),
            self._engine_line(bound),
            self._utility_line(),
            f"  NCP per column : {ncp}",
            *([self._published_line()] if self.candidates else []),
            f"  seconds        : {seconds}",
        ])


@dataclass(frozen=True, repr=False)
class Anonymization(Summarized):
    """The result of :func:`anonymize`.

    ``table``: a new DataFrame with the input's columns and row order (suppressed rows left
    out), QI columns generalized (strings), sensitive and other columns unchanged, plus a
    ``group`` column. ``groups``: int64 group id per input row, -1 for a suppressed row.
    ``report``: see :class:`Report`.
    ``sensitive_table``: None for a generalized release; for an anatomy release
    (``publish="anatomy"``, docs/design/anatomy.md) the sensitive table, ``group`` and the
    sensitive columns, while ``table`` is then the QI table: every other column as given,
    plus ``group``.
    ``hierarchies``: the taxonomy used for each categorical QI column (flat when none given).
    ``partition``: the engine's :class:`~proxanon.Partition`.
    ``audit``: the independent audit of the published rows (rows in ``table`` order).
    """

    table: pd.DataFrame
    groups: NDArray[np.int64]
    satisfied: bool
    report: Report
    hierarchies: dict[str, Hierarchy] = field(repr=False)
    partition: Partition = field(repr=False)
    audit: AuditReport | None = field(default=None, repr=False)
    sensitive_table: pd.DataFrame | None = field(default=None, repr=False)

    def to_html(self, path: Any, original: pd.DataFrame | None = None, *,
                queries: Mapping[str, Any] | None = None,
                frontier: pd.DataFrame | None = None, include_original: bool = False) -> None:
        """Writes the disclosure-risk report as one self-contained HTML file.

        ``original`` (the table that was anonymized) gives the utility measures; the page
        shows none of its values unless ``include_original`` (an internal version, marked as
        such: the QI columns before generalization beside the published ones); ``queries``
        (keyword arguments of :func:`proxanon.evaluate.count_query_error`, with
        ``original``) the count-query error; ``frontier`` (the frame of
        :func:`proxanon.explore`) where this release sits among the settings explored. See
        :func:`proxanon.html_report.anonymization_html`. Needs the ``report`` extra
        (matplotlib).
        """
        html_writer("anonymization")(self, path, original, queries=queries, frontier=frontier,
                                     include_original=include_original)

    def _summary_fields(self) -> list[tuple[str, Any]]:
        return [("satisfied", self.satisfied), ("rows", self.report.n),
                ("groups", self.report.groups),
                ("suppressed", len(self.report.suppressed_rows)),
                ("max_risk", self.report.max_risk), ("loss", self.report.loss)]


#: Quantiles (percent) of the published class sizes that the report gives.
_CLASS_SIZE_QUANTILES = (50, 90, 99)


def utility(summary: GroupSummary, columns: Sequence[str]) -> dict[str, Any]:
    """The report's utility numbers (docs/design/publishing.md) from the per-class summary."""
    return {
        "loss": summary.loss(),
        "gcp": summary.gcp(),
        "ncp": summary.ncp_by_column(columns),
        "discernibility": summary.discernibility(),
        "average_group_size": summary.average_group_size(),
        "min_group_size": int(summary.sizes.min()),
        "max_group_size": int(summary.sizes.max()),
        "largest_class_share": int(summary.sizes.max()) / int(summary.sizes.sum()),
        "class_size_quantiles": {
            f"{q}%": int(np.quantile(summary.sizes, q / 100, method="lower"))
            for q in _CLASS_SIZE_QUANTILES},
    }


@dataclass(frozen=True, kw_only=True)
class Asked:
    """What a table was anonymized against: the privacy parameters (``epsilon`` and
    ``delta`` NaN where no distance check was asked for), the relation's label and the
    columns."""

    k: int
    epsilon: float
    delta: float
    metric: str
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class EngineNumbers:
    """How the published groups were formed, as the report gives it: XColor's run (its
    maximum degree, inequality (4)'s bound, INITIALIZE's violations, swaps, and whether the
    repair was capped or the plain partition's groups were published), or the
    Mondrian-(ε, δ) cut (``method="mondrian"``: no colouring, so the defaults), and the
    rounds merging groups that published the same QI values."""

    method: str = "xcolor"
    max_degree: int = 0
    bound: float = float("nan")
    bound_holds: bool = False
    initial_violations: int = 0
    swaps: int = 0
    merge_rounds: int = 0
    repair_capped: int = 0
    fallback: bool = False
    levels: tuple[tuple[str, int], ...] = ()   # full-domain recoding: the level per QI
    lattice: tuple[int, int] = (0, 0)          # its lattice's nodes, and those checked


def build_report(asked: Asked, engine: EngineNumbers, check: AuditReport,
                 summary: GroupSummary, *, satisfied: bool, seconds: dict[str, float],
                 candidates: Mapping[str, float],
                 suppressed_rows: Sequence[int] | NDArray[np.int64] = (),
                 publish: str = "generalize") -> Report:
    """The :class:`Report` of a published table: ``asked``, ``engine``, the privacy numbers of
    ``check`` (the independent audit of the published classes), the class sizes and utility
    of ``summary`` (per published class, over the published rows); ``satisfied``: the
    verdict (the audit's, and any check it does not make); ``candidates``: the costs
    compared; ``suppressed_rows``: the input rows left out; ``publish``: how the groups are
    released (``"generalize"`` or ``"anatomy"``)."""
    named = check.named(asked.sensitive)
    return Report(
        satisfied=satisfied, n=int(summary.sizes.sum()), groups=int(summary.sizes.size),
        **vars(asked),
        max_risk=check.max_risk, vulnerability=check.vulnerability,
        max_degree=engine.max_degree, bound=engine.bound, bound_holds=engine.bound_holds,
        initial_violations=engine.initial_violations, swaps=engine.swaps,
        merge_rounds=engine.merge_rounds, remaining_violations=len(check.violating_rows),
        violating_groups=tuple(int(g) for g in check.violating_groups),
        suppressed_rows=tuple(int(r) for r in suppressed_rows), seconds=seconds,
        method=engine.method, fallback=engine.fallback, candidates=dict(candidates),
        repair_capped=engine.repair_capped, publish=publish, levels=dict(engine.levels),
        lattice_nodes=engine.lattice[0], nodes_checked=engine.lattice[1],
        column_risk={c.column: c.max_risk for c in named.columns},
        column_exposed={c.column: c.violating_groups for c in named.columns},
        **utility(summary, asked.quasi_identifiers),
    )
