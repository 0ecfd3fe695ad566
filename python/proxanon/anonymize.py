"""``anonymize``: a pandas table in, a published table out (SPEC §1, §4)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from proxanon import _core, _validate
from proxanon._beside import Beside
from proxanon._display import Summarized
from proxanon._errors import GraphTooDenseError, InfeasibleError
from proxanon._infeasible import epsilon_in_units, infeasible_text, rows_by_value
from proxanon._progress import ProgressReporter
from proxanon._published import _better, _cost, _cost_floor, _Published
from proxanon.audit import AuditReport, audit_owned, refuse_duplicate_columns
from proxanon.distances import Relation, as_arguments, componentwise, resolve
from proxanon.engine import (
    CHECK_GRAPH_ENTRIES,
    DEFAULT_SEARCH_LIMIT,
    INITS,
    MAX_GRAPH_ENTRIES,
    METHODS,
    NEIGHBOURS,
    EngineOptions,
    Partition,
    Session,
    checked_neighbours,
    checked_search_limit,
    early_proof,
    proven_before_repair,
    run_mondrian,
    run_session,
    run_specialize,
    suppression_budget,
)
from proxanon.generalize import (
    GroupSummary,
    QIColumn,
    encode_qi,
    load_hierarchies,
    summarize_groups,
)
from proxanon.hierarchy import Hierarchy
from proxanon.tables import role_columns, scale_column

GROUP_COLUMN = "group"

#: Classes examined per violation in ``anonymize``: with the QI-aware start, classes near a
#: violation's own (in the QI order) are examined first, and a few dozen suffice.
TABLE_SEARCH_LIMIT = 64


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
    Utility (SPEC §4), over the published classes: ``loss`` is the paper's
    loss(G) = Σ_i |G.A_i| / |A_i| averaged over groups (0 to the number of QIs); ``gcp`` the
    global certainty penalty Σ_G |G|·Σ_i NCP_i(G) / (n·d) in [0, 1], where NCP is the same
    ratio except that a group with one category costs 0; ``ncp`` the per-column average NCP
    over rows; ``discernibility`` Σ_G |G|²; ``average_group_size`` n / groups.
    ``method``: how the published groups were formed, ``"xcolor"`` or ``"mondrian"`` (also
    when the default ``anonymize`` published the Mondrian-(ε, δ) cut); ``candidates``: the
    cost (GCP over all rows, a suppressed row counting as fully generalized) of each
    satisfying table ``anonymize`` compared before publishing the cheapest, empty when it
    compared none. ``"xcolor (at least)"`` is a lower bound of XColor's cost, given where
    it already exceeded the cut's: XColor's table was then not finished (see
    :func:`anonymize`).
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

    def _summary_fields(self) -> list[tuple[str, Any]]:
        return [("satisfied", self.satisfied), ("rows", self.n), ("groups", self.groups),
                ("k", self.k), ("epsilon", self.epsilon), ("delta", self.delta),
                ("metric", self.metric), ("max_risk", self.max_risk),
                ("vulnerability", self.vulnerability),
                ("suppressed", len(self.suppressed_rows)), ("loss", self.loss),
                ("gcp", self.gcp), ("method", self.method)]

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values, ready for JSON."""
        return {
            name: (list(value) if isinstance(value, tuple) else
                   dict(value) if isinstance(value, dict) else value)
            for name, value in self.__dict__.items()
        }

    def _engine_line(self, bound: str) -> str:
        """How the groups were formed: XColor's run, or the Mondrian-(ε, δ) cut (which has no
        colouring, so no degree bound, INITIALIZE or swaps to report)."""
        rounds = (f"{self.merge_rounds} round(s) merging groups that published the same QI "
                  "values")
        if self.method == "mondrian":
            return (f"  engine         : the Mondrian-(ε, δ) cut (no colouring); {rounds}; "
                    f"{self.remaining_violations:,} violating row(s) left")
        return (f"  engine         : max degree {self.max_degree:,} (inequality (4) bound "
                f"{self.bound:,.1f} {bound}); {self.initial_violations:,} violating row(s) after "
                f"INITIALIZE, {self.swaps:,} swap(s), {self.remaining_violations:,} left; "
                + rounds
                + ("; the plain partition's groups (the QI-aware ones failed)" if self.fallback
                   else ""))

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
            f"  privacy        : k = {self.k}, epsilon = {self.epsilon}, delta = {self.delta}, "
            f"{self.metric} over {', '.join(self.sensitive)}",
            f"  max risk       : {self.max_risk:.4f} (allowed 1 - delta = {1 - self.delta:.4f}); "
            f"vulnerability {self.vulnerability:.2%}",
            self._engine_line(bound),
            f"  utility        : loss {self.loss:.4f} per group over "
            f"{len(self.quasi_identifiers)} QI(s); GCP {self.gcp:.4f}; "
            f"discernibility {self.discernibility:,}",
            f"  NCP per column : {ncp}",
            *([f"  published      : {self.method}; satisfying tables compared by GCP: "
               + ", ".join(f"{name} {cost:.4f}" for name, cost in self.candidates.items())]
              if self.candidates else []),
            f"  seconds        : {seconds}",
        ])


@dataclass(frozen=True, repr=False)
class Anonymization(Summarized):
    """The result of :func:`anonymize`.

    ``table``: a new DataFrame with the input's columns and row order (suppressed rows left
    out), QI columns generalized (strings), sensitive and other columns unchanged, plus a
    ``group`` column. ``groups``: int64 group id per input row, -1 for a suppressed row.
    ``report``: see :class:`Report`.
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

    def to_html(self, path: Any, original: pd.DataFrame | None = None, *,
                queries: Mapping[str, Any] | None = None) -> None:
        """Writes the disclosure-risk report as one self-contained HTML file.

        ``original`` (the table that was anonymized) adds the before/after plots of the QI
        columns; ``queries`` (keyword arguments of :func:`proxanon.evaluate.count_query_error`,
        with ``original``) the count-query error. See :func:`proxanon.html_report.
        anonymization_html`. Needs the ``report`` extra (matplotlib).
        """
        from proxanon.html_report import anonymization_html, write_html

        write_html(anonymization_html(self, original, queries=queries), path)

    def _summary_fields(self) -> list[tuple[str, Any]]:
        return [("satisfied", self.satisfied), ("rows", self.report.n),
                ("groups", self.report.groups),
                ("suppressed", len(self.report.suppressed_rows)),
                ("max_risk", self.report.max_risk), ("loss", self.report.loss)]


#: Quantiles (percent) of the published class sizes that the report gives.
_CLASS_SIZE_QUANTILES = (50, 90, 99)


def _utility(summary: GroupSummary, columns: Sequence[str]) -> dict[str, Any]:
    """The report's utility numbers (SPEC §4) from the per-class summary."""
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


@dataclass(frozen=True)
class _Cut:
    """Mondrian's table: its partition, the published classes and their summary, and the
    classes before absorption (the start a repair by the swap loop takes)."""

    part: Partition
    groups: NDArray[np.int64]
    summary: GroupSummary
    start: NDArray[np.int64]


def _mondrian_cut(columns: list[QIColumn], sens: NDArray[np.float64], qi: NDArray[np.float64],
                  taxonomies: list[tuple[NDArray[np.int32], int] | None], relation: Relation,
                  k: int, eps: float | None, dlt: float | None, ell: int | None,
                  grid_checks: bool = True, max_graph_entries: int = MAX_GRAPH_ENTRIES,
                  part: Partition | None = None) -> _Cut:
    """Strict Mondrian's groups, those that publish the same values merged (one pass: a union
    keeps its tuple), classes of 2k rows or more specialized, giant classes' rows absorbed
    (:func:`_absorb_classes`), and their summary (``part.stats["merge_rounds"]``: 1 when the
    pass merged). Three native calls; O(n log n) per level of cuts. ``grid_checks``,
    ``max_graph_entries``: as :func:`proxanon.engine.run_mondrian`; ``part``: Mondrian's
    groups where the caller has them already."""
    if part is None:
        part = run_mondrian(sens, k, eps, dlt, relation, ell, qi, taxonomies, "best_effort",
                            time.perf_counter(), grid_checks, max_graph_entries)
    # Mondrian's boxes are disjoint, but two can still publish the same LCA labels; the
    # union of such groups is one equivalence class.
    merged = _merge_equal_tuples(summarize_groups(columns, part.groups).labels)[part.groups]
    rounds = int(part.stats["m"] != int(merged.max()) + 1)
    # Median cuts on leaf codes rarely fall on a taxonomy node's boundary, so many boxes
    # publish one coarse node: split those classes top-down along the taxonomies.
    inputs = (qi, taxonomies, _node_keys(columns))
    start, summary, _ = _specialize_classes(merged, np.ones(int(merged.max()) + 1, np.int64),
                                            columns, sens, relation, k, eps, dlt, ell, inputs)
    absorbed = _absorb_classes(start, columns, sens, relation, k, eps, dlt, ell, inputs)
    groups, summary = ((absorbed, summarize_groups(columns, absorbed)) if absorbed is not None
                       else (start, summary))
    return _Cut(replace(part, stats={**part.stats, "merge_rounds": rounds}), groups, summary,
                start)


def _anonymize_mondrian(data: pd.DataFrame, columns: list[QIColumn], sens_cols: list[str],
                        sens: NDArray[np.float64],
                        qi: NDArray[np.float64],
                        taxonomies: list[tuple[NDArray[np.int32], int] | None],
                        relation: Relation, k: int, eps: float | None, dlt: float | None,
                        ell: int | None, on_infeasible: str, seconds: dict[str, float],
                        started: float, threads: int) -> Anonymization:
    """The table job with strict Mondrian: cut, merge groups publishing the same values,
    generalize, and audit every check that was asked for."""
    tic = time.perf_counter()
    cut = _mondrian_cut(columns, sens, qi, taxonomies, relation, k, eps, dlt, ell)
    seconds["mondrian"] = time.perf_counter() - tic
    return _publish_mondrian(data, columns, sens_cols, sens, relation, k, eps, dlt, ell,
                             on_infeasible, seconds, started, cut, threads)


def _audit_groups(sens: NDArray[np.float64], groups: NDArray[np.int64], relation: Relation,
                  k: int, eps: float | None, dlt: float | None, threads: int) -> AuditReport:
    """The independent audit of published groups (no distance check without epsilon)."""
    metric_arg, weights_arg = as_arguments(relation)
    return audit_owned(np.ascontiguousarray(sens, dtype=np.float64),
                       np.asarray(groups, dtype=np.int64), k=k,
                       epsilon=0.0 if eps is None else eps, delta=0.0 if dlt is None else dlt,
                       metric=metric_arg, weights=weights_arg, n_threads=threads)


class _Unwanted(Exception):
    """Work beside the caller's that the caller no longer needs (it has ended)."""


def _mondrian_table(data: pd.DataFrame, columns: list[QIColumn], cut: _Cut,
                    unwanted: threading.Event | None = None) -> tuple[pd.DataFrame, float]:
    """The published table of Mondrian's groups (every row, its QIs generalized, the group
    column added), and the seconds it took. Raises _Unwanted once ``unwanted`` is set
    (checked between columns: work beside the caller's ends within a column's time)."""
    tic = time.perf_counter()
    table = data.copy()
    for col, labels in zip(columns, cut.summary.labels, strict=True):
        if unwanted is not None and unwanted.is_set():
            raise _Unwanted
        table[col.name] = pd.Series(labels[cut.groups], index=table.index, dtype=object)
    table[GROUP_COLUMN] = cut.groups
    return table, time.perf_counter() - tic


def _publish_mondrian(data: pd.DataFrame, columns: list[QIColumn], sens_cols: list[str],
                      sens: NDArray[np.float64], relation: Relation, k: int, eps: float | None,
                      dlt: float | None, ell: int | None, on_infeasible: str,
                      seconds: dict[str, float], started: float,
                      cut: _Cut, threads: int,
                      candidates: Mapping[str, float] | None = None,
                      check: AuditReport | None = None,
                      generalized: tuple[pd.DataFrame, float] | None = None) -> Anonymization:
    """Mondrian's groups (:func:`_mondrian_cut`) generalized and audited; ``candidates``: the
    report's comparison when ``anonymize`` chose this table over XColor's; ``check``: the
    audit of these groups when the caller has it (it is not run again); ``generalized``:
    :func:`_mondrian_table` and its seconds, where the caller has them."""
    part, groups, summary = cut.part, cut.groups, cut.summary
    rounds = int(part.stats["merge_rounds"])
    table, seconds["generalize"] = generalized or _mondrian_table(data, columns, cut)
    tic = time.perf_counter()
    if check is None:
        check = _audit_groups(sens, groups, relation, k, eps, dlt, threads)
    # Distinct sensitive values per group, counted only where l-diversity was asked for.
    diverse = ell is None or int(
        pd.DataFrame(sens).assign(g=groups).drop_duplicates().groupby("g").size().min()) >= ell
    satisfied = bool(check.satisfied and diverse)
    seconds["audit"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started
    # The verdict and the violations are the audit's: only rows that violate are listed
    # (Mondrian itself flags every row when the whole table fails its checks).
    part = replace(part, groups=groups, satisfied=satisfied,
                   violating_rows=check.violating_rows,
                   violating_groups=check.violating_groups,
                   stats={**part.stats, "m": int(summary.sizes.size),
                          "remaining_violations": len(check.violating_rows),
                          "violating_groups": check.violating_groups.tolist()})
    if not satisfied and on_infeasible == "raise":
        raise InfeasibleError(
            f"Mondrian's published groups fail the checks (k={k}, l={ell}, epsilon={eps}, "
            f"delta={dlt}): max risk {check.max_risk:.3f}, {len(check.violating_rows):,} "
            f"violating row(s) in {len(check.violating_groups):,} group(s)"
            + (f", {check.small_groups.size:,} group(s) smaller than k" if
               check.small_groups.size else "")
            + ("" if diverse else f", a group with fewer than l={ell} distinct sensitive "
               "values")
            + ".\nRelax the parameters or use method='xcolor'.", partition=part)
    sizes = summary.sizes
    n = len(data)
    report = Report(
        satisfied=satisfied, n=n, groups=int(sizes.size), k=k,
        epsilon=eps if eps is not None else float("nan"),
        delta=dlt if dlt is not None else float("nan"), metric=relation.label,
        quasi_identifiers=tuple(c.name for c in columns),
        sensitive=tuple(sens_cols),
        max_risk=check.max_risk, vulnerability=check.vulnerability, max_degree=0,
        bound=float("nan"), bound_holds=False, initial_violations=0, swaps=0,
        merge_rounds=rounds,
        remaining_violations=len(check.violating_rows),
        violating_groups=tuple(int(g) for g in check.violating_groups), suppressed_rows=(),
        seconds=seconds, method="mondrian", candidates=dict(candidates or {}),
        **_utility(summary, [c.name for c in columns]),
    )
    return Anonymization(table=table, groups=groups, satisfied=satisfied, report=report,
                         hierarchies={c.name: c.hierarchy for c in columns
                                      if c.hierarchy is not None}, partition=part,
                         audit=check)


def encode_sensitive(data: pd.DataFrame, columns: list[str], hierarchies: dict[str, Hierarchy],
                     metric: Any, weights: Any,
                     ranges: Mapping[str, tuple[float, float]] | None = None,
                     ) -> tuple[NDArray[np.float64], Relation]:
    """Sensitive columns as numbers, and the relation that compares them.

    A column with a hierarchy is coded by leaf index and compared by taxonomy distance
    (height of the LCA over the tree height; with epsilon = 0 this is exact-value
    diversity); the others are scaled to [0, 1] (SPEC §1), by ``ranges[column]`` where given.
    """
    taxonomies = [hierarchies.get(c) for c in columns]
    codes = []
    for column, tree in zip(columns, taxonomies, strict=True):
        if tree is None:
            codes.append(scale_column(data[column], column, (ranges or {}).get(column)))
        else:
            values = data[column]
            if isinstance(values.dtype, pd.CategoricalDtype):
                values = values.astype(object)
            codes.append(tree.leaf_index(values.to_numpy(), column=column).astype(np.float64))
    sens = np.column_stack(codes)
    relation = resolve(metric, weights, len(columns), len(data))
    if any(t is not None for t in taxonomies):
        if relation.kind != "builtin" or relation.label == "variational":
            raise ValueError(
                "sensitive columns with a hierarchy are compared by taxonomy distance, which "
                "combines with metric 'l1', 'l2', 'linf' or 'min_component' only")
        relation = componentwise(relation, taxonomies)
    return sens, relation


KeyInputs = tuple[NDArray[np.float64], list[tuple[NDArray[np.int32], int] | None],
                  list[NDArray[np.int32] | None]]


def _specialize_classes(classes: NDArray[np.int64], formed_from: NDArray[np.int64],
                        columns: list[QIColumn], sens: NDArray[np.float64], relation: Relation,
                        k: int, eps: float | None, dlt: float | None, ell: int | None,
                        inputs: KeyInputs | None = None
                        ) -> tuple[NDArray[np.int64], GroupSummary, NDArray[np.int64]]:
    """The published classes with every class of at least 2k rows split top-down into parts
    that pass the same checks and publish finer tuples no other class publishes (a taxonomy
    of several levels otherwise gathers many groups under one coarse node); see
    :func:`proxanon.engine.run_specialize`. Returns the classes, their summary, and per class
    the ``formed_from`` of the class it came from. ``inputs``: ``_published_key_inputs``
    of ``columns`` where the caller has them."""
    split, _ = run_specialize(classes, sens, k, eps, dlt, relation, ell,
                              *(inputs or _published_key_inputs(columns)))
    return split, summarize_groups(columns, split), _carried(formed_from, classes, split)


def _carried(formed_from: NDArray[np.int64], classes: NDArray[np.int64],
             split: NDArray[np.int64]) -> NDArray[np.int64]:
    """Per class of ``split`` (each inside one class of ``classes``), the ``formed_from``
    of the class it came from."""
    carried = np.zeros(int(split.max()) + 1, dtype=np.int64)
    carried[split] = formed_from[classes]
    return carried


def _published_key_inputs(columns: list[QIColumn]) -> KeyInputs:
    """The QI codes, taxonomies and node keys (nodes with one label share a key) from which
    the native code computes published tuples."""
    qi = np.ascontiguousarray(np.column_stack([c.codes for c in columns]))
    return qi, [c.taxonomy_spec() for c in columns], _node_keys(columns)


def _node_keys(columns: list[QIColumn]) -> list[NDArray[np.int32] | None]:
    """Per taxonomy column, a key per node, shared by nodes with one label (None otherwise)."""
    return [None if c.hierarchy is None else
            pd.factorize(np.asarray(c.hierarchy.labels, dtype=object))[0].astype(np.int32)
            for c in columns]


def _absorb_classes(classes: NDArray[np.int64], columns: list[QIColumn],
                    sens: NDArray[np.float64], relation: Relation, k: int, eps: float | None,
                    dlt: float | None, ell: int | None, inputs: KeyInputs | None = None,
                    failing: bool = False) -> NDArray[np.int64] | None:
    """The published classes with rows of giant classes (above the larger of 2k rows and
    1/200 of the table) moved into passing classes whose finer tuples already cover them;
    None when no row moved (the caller summarizes what it publishes). Every class keeps its
    id and its tuple, passing classes keep passing, failing ones are not touched, the
    table's loss only falls, no class grows past twice the cap and the largest class never grows
    (cpp/include/proxanon/absorb.hpp). With ``failing`` (a table published as best effort),
    failing giant classes give rows too, to passing classes or to failing ones, and no
    failing class becomes riskier than it was nor the table's violating rows more. One
    native call, and none when no class is above the cap."""
    if np.bincount(classes).max() <= _core.absorb_cap(classes.size, k):
        return None
    moved, count = run_specialize(classes, sens, k, eps, dlt, relation, ell,
                                  *(inputs or _published_key_inputs(columns)),
                                  step="absorb_failing" if failing else "absorb")
    return moved if count else None


def _interchangeable_rows(sens: NDArray[np.float64], relation: Relation) -> NDArray[np.int64]:
    """An id per row, equal for rows that are interchangeable between groups: rows with
    identical sensitive values; with a row-indexed neighbour graph, rows whose neighbours
    (themselves included) are the same."""
    if relation.kind != "graph":
        return _row_ids(sens)
    from scipy import sparse  # only a graph relation needs it (a slow import)

    n = sens.shape[0]
    near = relation.matrix.astype(bool).tocsr() + sparse.identity(n, dtype=bool, format="csr")
    near.sort_indices()
    ids: NDArray[np.int64] = pd.factorize(pd.Series(
        [near.indices[near.indptr[i]:near.indptr[i + 1]].tobytes()
         for i in range(n)]))[0].astype(np.int64)
    return ids


def _row_ids(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """An id per row of a 2-D array, equal exactly for equal rows, in the rows' sorted order
    (column by column): the engine's value ids, one native call (O(n) expected and a sort of
    the distinct rows)."""
    return _core.value_ids(np.ascontiguousarray(np.atleast_2d(values.T).T, dtype=np.float64))


def _merge_equal_tuples(labels: list[NDArray[np.object_]]) -> NDArray[np.int64]:
    """Class id per group such that groups with the same published tuple share a class;
    ids follow the first group of each class, so they are 0 .. classes-1 in group order."""
    frame = pd.DataFrame({str(j): column for j, column in enumerate(labels)})
    ids: NDArray[np.int64] = frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy(
        dtype=np.int64)
    return ids


def anonymize(
    data: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    sensitive: str | Sequence[str],
    k: int,
    epsilon: float | None = None,
    delta: float | None = None,
    metric: Any = "l1",
    weights: ArrayLike | None = None,
    hierarchies: Mapping[str, Hierarchy | str] | None = None,
    on_infeasible: str = "raise",
    progress: bool = False,
    init: str = "qi",
    search_limit: int | None = TABLE_SEARCH_LIMIT,
    moves: str = "auto",
    max_suppression: float = 0.0,
    method: str = "xcolor",
    l: int | None = None,  # noqa: E741 (the name the literature and the API use)
    sensitive_ranges: Mapping[str, tuple[float, float]] | None = None,
    neighbours: str = "auto",
    n_threads: int | None = None,
) -> Anonymization:
    """Anonymize a table so that every group satisfies (ε, δ)^k-dissimilarity.

    ``quasi_identifiers``: columns an attacker may know; numeric or categorical (strings,
    pandas categoricals). ``sensitive``: numeric columns (scaled to [0, 1] by min-max) or
    ordered categoricals (by rank); compared with ``metric`` and ``weights`` as in
    :func:`proxanon.partition`. ``hierarchies``: per QI column, a :class:`Hierarchy` or the
    path of an ARX-format CSV file; a categorical QI without one gets the flat taxonomy
    (its value, or ``*``), a numeric QI without one its interval ``[min-max]``.
    ``on_infeasible``: ``"raise"`` (:class:`~proxanon.InfeasibleError`) or ``"best_effort"``.
    ``progress``: show the phase and the violations left on standard error in long runs.
    ``init``: ``"qi"`` (default) starts from groups of QI-close rows, ``"degree"`` from the
    paper's Algorithm 1; ``moves``: ``"auto"`` (default) or ``"swap"`` (see
    :func:`proxanon.partition`). ``on_infeasible="suppress"`` leaves rows out of the published
    table (at most ``max_suppression`` of them, a fraction) until every group satisfies the
    principle; they are listed in ``report.suppressed_rows`` and their ``groups`` entry is -1.
    ``sensitive_ranges``: per numeric sensitive column, the ``(min, max)`` to scale it by
    instead of its own (``proxanon.dask`` passes the whole table's range to each part).
    ``neighbours``: how the engine holds the ε-neighbour relation, ``"auto"`` (default),
    ``"graph"``, ``"sorted"`` (one numeric sensitive column) or ``"grid"``; the result
    does not depend on it (see :func:`proxanon.partition`). ``n_threads``: threads to use,
    default every core this process may use; the result is the same for any number (see
    "Threads" below).

    With ``on_infeasible="raise"`` on more than 8192 rows and a built-in metric,
    :func:`proxanon.advise`'s clique bound is checked before any repair: when it proves
    that no partition into groups of at least ``k`` rows satisfies the principle,
    :class:`~proxanon.InfeasibleError` is raised at once with the proof in the columns' own
    units (no partition attached). ``"best_effort"`` and ``"suppress"`` always run.

    Groups that would publish the same QI values are one equivalence class to an attacker.
    First, groups exchange rows with identical sensitive values (which leaves every group's
    verdict unchanged) so that their published values differ; groups that still collide are
    merged and the merged classes repaired until every group publishes its own
    values; ``report.merge_rounds`` counts those rounds. Then every class of at least 2k rows
    is split top-down along the taxonomies and at numeric medians into parts that pass the
    same checks and publish finer tuples of their own (no class grows, violating rows never
    grow; ``method="mondrian"`` does the same). When this QI-aware path ends with
    violations, the plain partition's groups (as :func:`proxanon.partition` builds them by
    default) are tried the same way and published if they do better (``report.fallback``):
    where the QIs tell the rows apart, ``anonymize`` then succeeds wherever ``partition``
    does. With the default ``method="xcolor"``, a table published as ``"best_effort"`` that
    still fails has its failing classes split the same way into parts that may fail but are
    each no riskier than their class and hold no more violating rows in all (the rows no
    table protects otherwise gather in a few classes publishing coarse values; a class whose
    every cut would leave a part riskier stays whole). Whatever ``on_infeasible`` is, the
    ``group`` column, ``satisfied`` and the report describe the published equivalence
    classes (rows that share the published QI values). A datetime64 QI is published as its
    group's date range ``[first, last]``.

    Threads: with ``n_threads`` of 2 or more, the default path builds the Mondrian-(ε, δ)
    cut on a thread of its own while XColor runs (the two candidates are independent and
    their native work releases the GIL), on tables over 262,144 rows after seeking there the
    proof of infeasibility (which, when found, stops XColor's run and is raised), and the
    row degrees and the audits split over the threads; which candidate is published never
    depends on which finished first.

    XColor's table is compared with the Mondrian-(ε, δ) cut by cost (GCP). Where the cut
    satisfies and a lower bound of XColor's cost already exceeds the cut's (its classes of
    fewer than 2k rows, which specialization leaves as they are, over a sample of at most
    16,384 of them), and XColor's classes pass the audit, the cut is published without
    specializing XColor's classes, which could not change the outcome: the report then names
    the bound ``"xcolor (at least)"`` (census-like tables: 0.9 s of 5.8 s at 3M rows).

    The input frame is never modified.
    """
    started = time.perf_counter()
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError("data is empty: it needs at least one row")
    refuse_duplicate_columns(data, "data")
    qi_cols, sens_cols = role_columns(data, quasi_identifiers, sensitive)
    if GROUP_COLUMN in data.columns:
        raise ValueError(f"data already has a column named {GROUP_COLUMN!r}, which the "
                         "published table adds; rename it first")
    for flag, name in ((progress, "progress"),):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    on_infeasible = _validate.choice(on_infeasible, "on_infeasible", _validate.ON_INFEASIBLE)
    method = _validate.choice(method, "method", METHODS)
    if method == "xcolor":
        if l is not None:
            raise ValueError("l (distinct l-diversity) applies to method='mondrian' only")
        if epsilon is None or delta is None:
            raise TypeError("epsilon and delta are required for method='xcolor'")
    elif (epsilon is None) != (delta is None):
        raise ValueError("give both epsilon and delta to check (epsilon, delta)^k-"
                         "dissimilarity, or neither")
    k, eps, dlt = _validate.privacy(k, 0.0 if epsilon is None else epsilon,
                                    0.0 if delta is None else delta, len(data))
    checked = epsilon is not None
    ell = None if l is None else _validate.integer(l, "l", minimum=1)
    limit = checked_search_limit(search_limit)
    init = _validate.choice(init, "init", INITS)
    moves = _validate.choice(moves, "moves", _validate.MOVES)
    budget = suppression_budget(max_suppression, on_infeasible)
    structure = _validate.choice(neighbours, "neighbours", NEIGHBOURS)
    threads = _validate.threads(n_threads)
    sensitive_ranges = _validate.ranges(sensitive_ranges, sens_cols)
    if method == "mondrian" and structure != "auto":
        raise ValueError("neighbours applies to method='xcolor' only (Mondrian's checks hold "
                         "no neighbour structure); leave it at 'auto'")

    reporter = ProgressReporter() if progress else None
    if reporter is None:
        return _anonymize(data, qi_cols, sens_cols, k, eps, dlt, metric, weights, hierarchies,
                          on_infeasible, limit, init, moves, budget, None, started,
                          method, ell, checked, sensitive_ranges, structure, threads)
    with reporter:
        return _anonymize(data, qi_cols, sens_cols, k, eps, dlt, metric, weights, hierarchies,
                          on_infeasible, limit, init, moves, budget, reporter, started,
                          method, ell, checked, sensitive_ranges, structure, threads)


def _anonymize(data: pd.DataFrame, qi_cols: list[str], sens_cols: list[str], k: int,
               eps: float, dlt: float, metric: Any, weights: Any,
               hierarchies: Mapping[str, Any] | None, on_infeasible: str, limit: int,
               init: str, moves: str, budget: float, reporter: ProgressReporter | None,
               started: float, method: str = "xcolor", ell: int | None = None,
               checked: bool = True,
               ranges: Mapping[str, tuple[float, float]] | None = None,
               neighbours: str = "auto", threads: int = 1) -> Anonymization:
    tic = time.perf_counter()
    given = load_hierarchies(hierarchies, qi_cols + sens_cols, [str(c) for c in data.columns])
    all_columns: list[QIColumn] = [encode_qi(data, c, given.get(c)) for c in qi_cols]
    all_sens, relation = encode_sensitive(data, sens_cols, given, metric, weights, ranges)
    all_qi, taxonomies, node_keys = _published_key_inputs(all_columns)
    seconds = {"prepare": time.perf_counter() - tic}
    n_all = len(data)
    suppress = on_infeasible == "suppress"
    if suppress and relation.kind == "graph":
        raise ValueError("on_infeasible='suppress' cannot be combined with a precomputed "
                         "neighbour graph (its rows would no longer line up); pass the "
                         "distance as a function instead")
    if method == "mondrian":
        if on_infeasible == "suppress":
            raise ValueError("on_infeasible='suppress' applies to method='xcolor' only")
        return _anonymize_mondrian(data, all_columns, sens_cols, all_sens, all_qi, taxonomies,
                                   relation,
                                   k, eps if checked else None, dlt if checked else None, ell,
                                   on_infeasible, seconds, started, threads)
    structure = checked_neighbours(neighbours, relation, all_sens.shape[1])
    # The default path compares XColor's table with the Mondrian-(ε, δ) cut (built-in
    # metrics): with two threads or more, the cut is built and repaired beside XColor's run.
    cut_wanted = init == "qi" and relation.kind == "builtin"
    cut_beside = cut_wanted and threads > 1
    proof_beside = cut_beside and n_all > _PROOF_BESIDE_ROWS

    def proof_of_infeasibility(used: int) -> str | None:
        """With on_infeasible="raise": the proof that no partition into groups of >= k rows
        satisfies (neither path can publish a table), or None."""
        if on_infeasible != "raise":
            return None
        return early_proof(all_sens, k, eps, dlt, relation, any_partition=True,
                           describe=rows_by_value(data, sens_cols), threads=used)

    def proven(proof: str) -> InfeasibleError:
        units = epsilon_in_units(data, sens_cols, relation, eps)
        return InfeasibleError(proven_before_repair(proof, k, eps, dlt, relation)
                               + ("\n" + units if units else ""))

    if not proof_beside:
        proof = proof_of_infeasibility(threads)
        if proof is not None:
            raise proven(proof)
    ids_lock = threading.Lock()
    ids_cache: list[NDArray[np.int64]] = []

    def interchangeable() -> NDArray[np.int64]:
        """An id per row, equal for rows that are interchangeable between groups: rows with
        identical sensitive values; with a row-indexed neighbour graph, rows whose
        neighbours (themselves included) are the same. Computed once, by whichever thread
        asks first."""
        with ids_lock:
            if not ids_cache:
                ids_cache.append(_interchangeable_rows(all_sens, relation))
            return ids_cache[0]

    def published_sensitive(released: NDArray[np.int64]) -> tuple[NDArray[np.float64],
                                                                    Relation]:
        # The published table as any auditor reads it: its sensitive columns scaled over the
        # rows it holds (suppression can narrow a column's range).
        if released.size < n_all:
            return encode_sensitive(data.iloc[released], sens_cols, given, metric, weights)
        return all_sens, relation

    def audit_classes(sens: NDArray[np.float64], rel: Relation,
                      classes: NDArray[np.int64], used: int = threads) -> AuditReport:
        return _audit_groups(sens, classes, rel, k, eps, dlt, used)

    def session_of(plain: bool, start: NDArray[np.int64] | None = None,
                   max_rounds: int | None = None, used: int = threads,
                   shown: ProgressReporter | None = reporter) -> Session:
        """The engine's groups, with groups that publish one tuple merged and repaired until
        every class publishes its own tuple (or a repair fails), in one native session
        (:func:`proxanon.engine.run_session`). ``plain``: the engine as
        :func:`proxanon.partition` runs it by default (no QI loss, Algorithm 1's start).
        ``start``: groups to repair instead of INITIALIZE's; ``max_rounds``: merging rounds
        at most (what still collides is then published as one class, and audited so).
        ``used``: threads; ``shown``: where progress goes (None beside the caller's work)."""
        search = limit if not plain else (0 if limit == 0 else max(limit, DEFAULT_SEARCH_LIMIT))
        options = EngineOptions(
            k=k, delta=dlt, search_limit=search, init="degree" if plain else init,
            init_block=1, moves=moves, suppress=suppress, threads=used,
            progress=shown.counters if shown is not None else None)
        return run_session(all_sens, k, eps, dlt, relation, all_qi, taxonomies, node_keys,
                           interchangeable(), options, qi_aware=not plain, start=start,
                           max_rounds=max_rounds, budget=budget, neighbours=structure,
                           reporter=shown, started=time.perf_counter())

    def publish(plain: bool, start: NDArray[np.int64] | None = None,
                max_rounds: int | None = None, used: int = threads,
                shown: ProgressReporter | None = reporter) -> _Published:
        """``session_of``'s classes published: see ``finish``."""
        return finish(session_of(plain, start, max_rounds, used, shown), plain, used)

    def finish(session: Session, plain: bool, used: int = threads) -> _Published:
        """A session's classes specialized, their giant classes' rows absorbed, and audited
        (on ``used`` threads)."""
        released, classes, formed_from = (session.released, session.classes,
                                          session.formed_from)
        times = dict(session.seconds)
        columns = [c.subset(released) for c in all_columns]
        # The session tells tuples apart by codes, and taxonomy nodes by label (node_keys); a
        # number's label is the shortest text that reads back as it, so distinct codes read
        # differently. A datetime's label is its instant's text: labels that read alike are
        # one class too (the summary for that costs 0.5 s at 3M rows, so only there).
        if any(c.instants is not None for c in columns):
            by_label = _merge_equal_tuples(summarize_groups(columns, classes).labels)
            if by_label.size and int(by_label.max()) + 1 < by_label.size:
                formed_from = np.bincount(by_label, weights=formed_from).astype(np.int64)
                classes = by_label[classes]
        tic = time.perf_counter()
        sens, rel = published_sensitive(released)
        inputs = ((all_qi, taxonomies, node_keys) if released.size == n_all
                  else _published_key_inputs(columns))
        classes, summary, formed_from = _specialize_classes(classes, formed_from, columns, sens,
                                                            rel, k, eps, dlt, None, inputs)
        times["specialize"] = time.perf_counter() - tic
        tic = time.perf_counter()
        absorbed = _absorb_classes(classes, columns, sens, rel, k, eps, dlt, None, inputs)
        if absorbed is not None:
            classes, summary = absorbed, summarize_groups(columns, absorbed)
        times["absorb"] = time.perf_counter() - tic
        tic = time.perf_counter()
        check = audit_classes(sens, rel, classes, used)
        times["audit"] = time.perf_counter() - tic
        return _Published(session.last, released, classes, columns, summary, formed_from,
                          session.rounds, session.swaps, session.initial_violations, times,
                          check, plain)

    def split_failing(result: _Published) -> _Published:
        """A table published as best effort with its failing classes split into parts of at
        least k rows that publish finer tuples of their own and hold no more violating rows
        in all (the rows no table protects otherwise gather in a few giant classes publishing
        coarse tuples), then rows of giant classes, failing ones too, absorbed into classes
        that cover them (``_absorb_classes``), then failing classes still above 2% of the
        rows dealt into parts of at most 2% but one (the covering split), summarized and
        audited again; the same table when nothing changed."""
        tic = time.perf_counter()
        sens, rel = published_sensitive(result.released)
        inputs = ((all_qi, taxonomies, node_keys) if result.released.size == n_all
                  else _published_key_inputs(result.columns))
        classes, splits = run_specialize(result.classes, sens, k, eps, dlt, rel, None, *inputs,
                                         step="split_failing")
        seconds["specialize"] = seconds.get("specialize", 0.0) + time.perf_counter() - tic
        tic = time.perf_counter()
        absorbed = _absorb_classes(classes, result.columns, sens, rel, k, eps, dlt, None, inputs,
                                   True)
        seconds["absorb"] = seconds.get("absorb", 0.0) + time.perf_counter() - tic
        after = absorbed if absorbed is not None else classes
        covered = None
        if np.bincount(after).max() * 50 > after.size:  # a class above 2% of the rows
            tic = time.perf_counter()
            cover, covers = run_specialize(after, sens, k, eps, dlt, rel, None, *inputs,
                                           step="cover_failing")
            seconds["specialize"] += time.perf_counter() - tic
            covered = cover if covers else None
        if not splits and absorbed is None and covered is None:
            return result
        merged = _carried(result.merged, result.classes, classes)  # absorbing keeps the ids
        if covered is not None:
            merged = _carried(merged, after, covered)
        classes = covered if covered is not None else after
        summary = summarize_groups(result.columns, classes)  # once, for what is published
        tic = time.perf_counter()
        check = audit_classes(sens, rel, classes)
        seconds["audit"] = seconds.get("audit", 0.0) + time.perf_counter() - tic
        return replace(result, classes=classes, summary=summary, check=check, merged=merged)

    def acceptable(result: _Published) -> bool:
        return passes(result.check, result.released)

    def passes(check: AuditReport, released: NDArray[np.int64]) -> bool:
        return check.satisfied and n_all - released.size <= budget * n_all

    Cut = tuple[_Cut, AuditReport]

    def raw_cut() -> Partition | None:
        """Mondrian's groups for the cut; None where the relation's graph would hold more
        than CHECK_GRAPH_ENTRIES entries, since Mondrian's checks read every present value's
        neighbours at every cut (or search a grid), which took minutes on dense continuous
        values."""
        try:
            return run_mondrian(all_sens, k, eps, dlt, relation, None, all_qi, taxonomies,
                                "best_effort", time.perf_counter(), False, CHECK_GRAPH_ENTRIES)
        except GraphTooDenseError:
            return None

    def build_cut(used: int) -> Cut | None:
        """The Mondrian-(ε, δ) cut: ``raw_cut`` and ``finish_cut`` (on the caller's thread;
        ``cut_hard`` records whether Mondrian's groups failed widely)."""
        tic = time.perf_counter()
        part = raw_cut()
        cut_hard.append(hard(part))
        return finish_cut(used, part, time.perf_counter() - tic)

    def finish_cut(used: int, part: Partition | None, spent: float) -> Cut | None:
        """The Mondrian-(ε, δ) cut (specialized) from ``part``, Mondrian's groups, and the
        audit of its classes (on ``used`` threads); None without groups (``raw_cut``).
        ``spent``: seconds ``part`` took."""
        tic = time.perf_counter()
        if part is None:
            return None
        cut = _mondrian_cut(all_columns, all_sens, all_qi, taxonomies, relation, k, eps, dlt,
                            None, part=part)
        # The verdict is the audit's of the published classes (specialization may have
        # split a class that Mondrian's own cut left failing).
        check = audit_classes(all_sens, relation, cut.groups, used)
        seconds["mondrian"] = spent + time.perf_counter() - tic
        return cut, check

    def fails_widely(built: Cut | None) -> bool:
        """Whether the cut fails in too many rows to be repaired (``repair_of`` skips it)."""
        return (built is not None and not built[1].satisfied
                and len(built[1].violating_rows) > _CUT_REPAIR_SHARE * n_all)

    def repair_of(built: Cut | None, used: int,
                  shown: ProgressReporter | None) -> _Published | None:
        """With the default start, when the Mondrian-(ε, δ) cut fails in few rows (at most
        ``_CUT_REPAIR_SHARE`` of them): its classes as XColor's starting groups, repaired by
        the swap loop, merged at most ``_CUT_MERGE_ROUNDS`` times, if that is acceptable.
        Its classes follow the taxonomies' nodes, so they collide far less than groups cut
        from a QI order."""
        if suppress or built is None:
            return None
        cut, cut_check = built
        if cut_check.satisfied or fails_widely(built):
            return None
        if shown is not None:
            shown.phase = "repair of the Mondrian cut"
        try:
            repaired = publish(plain=False, start=cut.start, max_rounds=_CUT_MERGE_ROUNDS,
                               used=used, shown=shown)
        except InfeasibleError:
            return None
        return repaired if acceptable(repaired) else None

    # Beside XColor's run (two threads or more): the cut and its repair where one is wanted.
    # Where Mondrian's groups fail in many rows (_HARD_SHARE), the QI-aware path usually fails
    # too and then needs the plain partition's session: that thread runs it before finishing
    # the cut (after it, with suppression, where the caller compares with the cut as soon as
    # its session ends), unless the caller's thread asked for it already; the caller stops it
    # when it is not needed. Only the order of work changes, never a table (Adult, ARX
    # taxonomies, eps 0.1: 0.67 s instead of 0.88 s).
    cut_ready: Future[tuple[Cut | None, _Published | None]] = Future()
    plain_ready: Future[Session] = Future()
    plain_stop = _core.StopRequest()
    plain_lock = threading.Lock()
    plain_state = {"ahead": False, "claimed": False}
    # Also from that thread, for ``cut_over_session``: whether Mondrian's groups fail widely
    # (the thread then runs the plain session first), and the cut with its audit.
    hard_ready: Future[bool] = Future()
    built_ready: Future[Cut | None] = Future()

    def hard(part: Partition | None) -> bool:
        """Whether Mondrian's groups fail in more than _HARD_SHARE of the rows."""
        return (part is not None and not suppress
                and part.stats["remaining_violations"] > _HARD_SHARE * n_all)

    def plain_ahead(part: Partition | None, used: int) -> None:
        """The plain session, computed into ``plain_ready`` where Mondrian's groups fail in
        more than _HARD_SHARE of the rows (with suppression too: there the QI-aware path
        fails where its suppression exceeds the budget, and the plain one decides)."""
        wanted = (part is not None
                  and part.stats["remaining_violations"] > _HARD_SHARE * n_all)
        with plain_lock:
            plain_state["ahead"] = wanted and not plain_state["claimed"]
        if plain_state["ahead"]:
            try:
                with plain_stop:
                    plain_ready.set_result(session_of(plain=True, used=used, shown=None))
            except BaseException as exc:  # stopped (unwanted), or handed to the caller
                plain_ready.set_exception(exc)

    # Beside XColor's run, on tables over _PROOF_BESIDE_ROWS rows, the proof of infeasibility
    # comes first (it ends long before XColor's run): where there is one, XColor's run is
    # stopped (main_stop) and the caller raises it, as if it had been found before the run.
    proof_ready: Future[str | None] = Future()
    main_stop = _core.StopRequest()

    table_ready: Future[tuple[pd.DataFrame, float] | None] = Future()
    ended = threading.Event()  # set once the caller's work has ended (any way out)

    def cut_and_repair(used: int) -> None:
        try:
            try:
                proof = proof_of_infeasibility(used) if proof_beside else None
            except BaseException as exc:  # the caller raises it, as it would have
                proof_ready.set_exception(exc)
                main_stop.set()
                raise
            proof_ready.set_result(proof)
            if proof is not None:
                main_stop.set()
                cut_ready.set_result((None, None))
                table_ready.set_result(None)
                return
            tic = time.perf_counter()
            part = raw_cut()
            spent = time.perf_counter() - tic
            hard_ready.set_result(hard(part))
            if not suppress:  # the plain session first: the cut waits for XColor's table
                plain_ahead(part, used)
            built = finish_cut(used, part, spent)
            built_ready.set_result(built)
            if suppress:  # the cut first: the caller compares with it when its session ends
                plain_ahead(part, used)
            repaired = repair_of(built, used, None)
        except BaseException as exc:  # handed to whoever waits for the cut
            if not cut_ready.done():
                cut_ready.set_exception(exc)
            table_ready.set_result(None)
            raise
        finally:  # no comparison ahead on a way out without a cut
            if not hard_ready.done():
                hard_ready.set_result(True)
            if not built_ready.done():
                built_ready.set_result(None)
        cut_ready.set_result((built, repaired))
        # A cut that satisfies is published when it costs no more than XColor's table (as on
        # census-like tables): its table is generalized here while XColor's run goes on
        # (0.1 s at 1M rows, off the caller's path).
        generalized = None  # else the caller generalizes it, if it needs it
        try:
            if built is not None and built[1].satisfied:
                generalized = _mondrian_table(data, all_columns, built[0], ended)
        except _Unwanted:
            pass
        finally:
            table_ready.set_result(generalized)

    beside_threads = max(1, threads // 2)  # the cut's thread's (the caller keeps the rest)
    cut_ahead = Beside(cut_and_repair, beside_threads) if cut_beside else None
    cut_cache: list[Cut | None] = []
    cut_hard: list[bool] = []  # on one thread: ``hard`` of Mondrian's groups
    repair_cache: list[_Published | None] = []

    def mondrian_cut() -> Cut | None:
        """The Mondrian-(ε, δ) cut and its audit, built once (or taken from its thread);
        None off the default path (another start, or no built-in metric)."""
        if not cut_wanted:
            return None
        if not cut_cache:
            if cut_ahead is None:
                cut_cache.append(build_cut(threads))
            else:
                built, repaired = cut_ready.result()
                cut_cache.append(built)
                repair_cache.append(repaired)
        return cut_cache[0]

    def easy_cut() -> Cut | None:
        """The Mondrian-(ε, δ) cut and its audit (from its thread, or built here once), None
        where Mondrian's groups fail widely (never with suppression): the thread beside then
        computes the plain session before the cut, and waiting for its cut would keep this
        thread idle (not waited for, and not taken on one thread either, so that the choice
        is the same on any thread count)."""
        if cut_ahead is not None:
            return None if hard_ready.result() else built_ready.result()
        built = mondrian_cut()
        return built if cut_hard and not cut_hard[0] else None

    def cut_over_session(session: Session) -> Anonymization | None:
        """The Mondrian-(ε, δ) cut, published without finishing XColor's table when that
        table cannot cost less: specialization and absorption leave its classes under 2k
        rows as they are (``_cost_floor`` bounds its cost from below by them), and keep
        passing classes passing, so once the cut satisfies, costs less than that bound, and
        XColor's classes pass the audit, ``mondrian_instead`` would publish the cut. At 3M
        census rows that spares XColor's specialization, summary and audit (0.9 s).
        The report names XColor's cost "xcolor (at least)": the bound."""
        if (suppress or not cut_wanted or session.released.size < n_all
                or any(c.instants is not None for c in all_columns)):
            return None
        if reporter is not None:
            reporter.phase = "Mondrian cut"
        # Where the cut's thread is still at work, this thread would wait for it: the bound
        # and the audit of XColor's classes are taken meanwhile, on the threads the cut's
        # thread leaves (the same audit on any number), and used only if the cut satisfies
        # (1M census rows: 0.2 s of a 2 s run no longer follows the wait).
        floor: float | None = None
        check: AuditReport | None = None
        if cut_ahead is not None and not hard_ready.result() and not built_ready.done():
            floor = _cost_floor(all_columns, session.classes, k, n_all)
            check = audit_classes(all_sens, relation, session.classes, threads - beside_threads)
        built = easy_cut()
        if built is None or not built[1].satisfied:
            return None
        cut, cut_check = built
        if floor is None:
            floor = _cost_floor(all_columns, session.classes, k, n_all)
        if not floor > cut.summary.gcp() * (1 + 1e-9):
            return None
        if check is None:
            check = audit_classes(all_sens, relation, session.classes)
        if not passes(check, session.released):
            return None
        costs = {"xcolor (at least)": floor, "mondrian": cut.summary.gcp()}
        seconds.update(session.seconds)  # the audit's time is the cut's (_publish_mondrian)
        generalized = table_ready.result() if cut_ahead is not None else None
        published = _publish_mondrian(data, all_columns, sens_cols, all_sens, relation, k, eps,
                                      dlt, None, "best_effort", seconds, started, cut, threads,
                                      costs, cut_check, generalized)
        return published if published.satisfied else None

    def plain_partition() -> _Published:
        """The plain partition's table, its session taken from the cut's thread if that
        computes it, else computed here."""
        with plain_lock:
            plain_state["claimed"] = True
        if plain_state["ahead"]:
            return finish(plain_ready.result(), plain=True)
        return publish(plain=True)

    def repaired_cut(xcolor: _Published | None) -> tuple[_Published | None, dict[str, float]]:
        """The repaired Mondrian-(ε, δ) cut (``repair_of``), published instead of XColor's
        own table when it costs less (GCP); and the costs compared."""
        cut = mondrian_cut()
        if not repair_cache:
            repair_cache.append(repair_of(cut, threads, reporter))
        repaired = repair_cache[0]
        if repaired is None:
            return None, {}
        costs = {"xcolor from the Mondrian cut": _cost(repaired.summary, n_all)}
        if xcolor is not None and acceptable(xcolor):
            costs = {"xcolor": _cost(xcolor.summary, n_all), **costs}
            if costs["xcolor"] <= costs["xcolor from the Mondrian cut"]:
                return None, costs
        return repaired, costs

    def mondrian_instead(xcolor: _Published | None
                         ) -> tuple[Anonymization | None, dict[str, float]]:
        """With the default start: the Mondrian-(ε, δ) cut when it satisfies and XColor's
        table (None: its path failed) is not acceptable or costs more (GCP, see
        :func:`_cost`); and the costs compared. Mondrian needs a built-in metric."""
        built = mondrian_cut()
        if built is None:
            return None, {}
        cut, cut_check = built
        if not cut_check.satisfied:
            return None, {}
        costs = {"mondrian": cut.summary.gcp()}
        if xcolor is not None and acceptable(xcolor):
            costs = {"xcolor": _cost(xcolor.summary, n_all), **costs}
            if costs["xcolor"] <= costs["mondrian"]:
                return None, costs
        generalized = table_ready.result() if cut_ahead is not None else None
        published = _publish_mondrian(data, all_columns, sens_cols, all_sens, relation, k, eps,
                                      dlt, None, "best_effort", seconds, started, cut, threads,
                                      costs, cut_check, generalized)
        return (published, costs) if published.satisfied else (None, {})

    def choose() -> Anonymization | tuple[_Published, dict[str, float]]:
        """The table to publish: Mondrian's, or one of XColor's with the costs compared
        (see the docstring of :func:`anonymize`)."""
        failure: InfeasibleError | None = None
        try:
            session = session_of(plain=False)
        except InfeasibleError as exc:  # suppression left fewer than k rows on this path
            failure = exc
        else:
            instead = cut_over_session(session)
            if instead is not None:
                return instead
            chosen = finish(session, plain=False)
        if failure is None and acceptable(chosen):
            plain_stop.set()
        else:
            # The QI-aware path failed: the plain partition's groups may still satisfy (and
            # when the QIs tell rows apart, they publish distinct tuples).
            if reporter is not None:
                reporter.phase = "plain partition"
            try:
                plain = plain_partition()
            except InfeasibleError:
                if failure is not None:
                    instead, _ = mondrian_instead(None)
                    if instead is not None:
                        return instead
                    raise failure from None
            else:
                if failure is not None or _better(plain, chosen, acceptable):
                    chosen = plain
        repaired, repair_costs = repaired_cut(chosen)
        if repaired is not None:
            chosen = repaired
        seconds.update(chosen.seconds)
        instead, candidates = mondrian_instead(chosen)
        return instead if instead is not None else (chosen, candidates or repair_costs)

    def settle_proof() -> None:
        """Raises the proof of infeasibility found beside, if any (waiting for it)."""
        if proof_beside:
            proof = proof_ready.result()
            if proof is not None:
                raise proven(proof) from None

    try:  # the cut's thread, if any, is stopped on any way out
        try:
            with main_stop:
                interchangeable()  # computed here, once the thread beside has started
                picked = choose()
        except Exception:
            settle_proof()  # a proof found beside stopped this thread's run
            raise
        settle_proof()
        if isinstance(picked, Anonymization):
            return picked
        chosen, candidates = picked
    finally:
        plain_stop.set()
        ended.set()
        if cut_ahead is not None:
            cut_ahead.stop()

    if not chosen.check.satisfied and on_infeasible == "best_effort":
        chosen = split_failing(chosen)
    released, classes, summary, check = (chosen.released, chosen.classes, chosen.summary,
                                         chosen.check)
    left_out = np.ones(n_all, dtype=bool)
    left_out[released] = False
    suppressed_rows = np.flatnonzero(left_out)
    if suppress and suppressed_rows.size > budget * n_all:
        raise InfeasibleError(
            f"the suppression found leaves out {suppressed_rows.size} of {n_all} row(s) "
            f"({suppressed_rows.size / n_all:.2%}; a heuristic's count, not a proven minimum "
            f"except on tables of at most 16 rows), more than max_suppression={budget} allows "
            f"({int(budget * n_all)} row(s)); allow more suppression, or try a smaller epsilon "
            "or delta", partition=chosen.part)
    if not check.satisfied and on_infeasible != "best_effort":
        raise InfeasibleError(
            infeasible_text(data, sens_cols, chosen, all_sens, relation, k, eps, dlt, threads),
            partition=chosen.part)

    if reporter is not None:
        reporter.phase = "generalize"
    tic = time.perf_counter()
    table = data.iloc[released].copy()
    for col, labels in zip(chosen.columns, summary.labels, strict=True):
        table[col.name] = pd.Series(labels[classes], index=table.index, dtype=object)
    table[GROUP_COLUMN] = classes
    all_groups = np.full(n_all, -1, dtype=np.int64)
    all_groups[released] = classes
    seconds["generalize"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started

    stats = chosen.part.stats
    report = Report(
        satisfied=check.satisfied,
        n=len(released), groups=int(summary.sizes.size), k=k, epsilon=eps, delta=dlt,
        metric=relation.label, quasi_identifiers=tuple(qi_cols), sensitive=tuple(sens_cols),
        max_risk=check.max_risk, vulnerability=check.vulnerability,
        max_degree=int(stats["max_degree"]), bound=float(stats["bound"]),
        bound_holds=bool(stats["bound_holds"]),
        initial_violations=chosen.initial_violations, swaps=chosen.swaps,
        merge_rounds=chosen.rounds,
        remaining_violations=len(check.violating_rows),
        violating_groups=tuple(int(g) for g in check.violating_groups),
        suppressed_rows=tuple(int(r) for r in suppressed_rows),
        seconds=seconds, fallback=chosen.plain, candidates=candidates,
        **_utility(summary, qi_cols),
    )
    return Anonymization(
        table=table, groups=all_groups, satisfied=report.satisfied, report=report,
        hierarchies={c.name: c.hierarchy for c in all_columns if c.hierarchy is not None},
        partition=chosen.part, audit=check,
    )


#: The largest share of rows that may violate in the Mondrian-(ε, δ) cut for ``anonymize`` to
#: try repairing it, and the merging rounds that repair may take: a cut that fails in few
#: rows is repaired in a fraction of a second (Adult, ARX taxonomies on all four QIs: 123
#: violating rows, 0.3 s); one that fails widely would cost minutes of merging rounds.
_CUT_REPAIR_SHARE = 0.01
#: Share of the rows that fail in Mondrian's groups above which the plain partition's session
#: is started beside the QI-aware one, before the cut is specialized (after it, with
#: suppression): a guess of which work will be needed, never a change of the table. On Adult
#: the QI-aware path succeeded where at most 5.4% failed and failed where 30% or more did
#: (with at most 30% suppressed at epsilon 0.1, delta 0.8 it fails too: the verdict took
#: 6.6-8.3 s with the plain session after the QI-aware one, 3.6-4.6 s with it beside; at
#: delta 0.7, where the QI-aware path succeeds, 4.6-5.3 s either way).
_HARD_SHARE = 0.2
_CUT_MERGE_ROUNDS = 8
#: Rows above which ``anonymize`` on two threads or more seeks the proof of infeasibility
#: beside XColor's run rather than before it: there the proof takes 25 ms or more (0.1 s at
#: 1M census rows), more than the thread's start and XColor's stop cost (5-30 ms, which
#: made proven verdicts on 30k-50k rows take 17-90 ms instead of 12-57 ms).
_PROOF_BESIDE_ROWS = 1 << 18


def _spread_equal_tuples(groups: NDArray[np.int64], columns: list[QIColumn],
                         sa_ids: NDArray[np.int64]) -> NDArray[np.int64]:
    """Groups with rows exchanged so that fewer of them publish the same QI tuple.

    Two rows with identical sensitive values (``sa_ids``) can trade groups without changing
    any group's multiset of sensitive values, so every group keeps its dissimilarity verdict
    exactly; only the published tuples change. The native exchange step (``exchange.hpp``)
    trades a row of a group whose tuple another group also publishes for a row of a nearby QI
    combination with the same sensitive value, when that gives it a tuple no group publishes,
    and never lifts a value of a taxonomy of several levels to a node covering more leaves.
    Greedy, deterministic, at most 8 candidate exchanges per row of the table. The native
    session (:func:`proxanon.engine.run_session`) runs this step itself after its first run;
    this function gives the same step on its own (tests check its invariants with it).
    """
    if groups.size == 0 or not columns:
        return groups
    qi = np.ascontiguousarray(np.column_stack([c.codes for c in columns]))
    moved: NDArray[np.int64] = _core.exchange_rows(
        np.ascontiguousarray(groups, dtype=np.int64), qi, [c.taxonomy_spec() for c in columns],
        np.ascontiguousarray(sa_ids, dtype=np.int64))
    return moved
