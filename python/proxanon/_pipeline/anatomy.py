"""The anatomy release of ``anonymize(..., publish="anatomy")`` (docs/design/anatomy.md):
XColor's partition published as found, as a QI table and a sensitive table joined by the
group id.

Invariant: every released group is one of the engine's groups, audited independently on the
published rows; no two groups are merged, since none publishes a QI tuple. Cost: one native
run (a second, the plain partition's, only where the QI-aware start fails), one audit, and
O(n log n) to order the sensitive table.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine.options import EngineOptions, NativeRun
from proxanon._engine.proofs import feasibility_advice
from proxanon._engine.runs import full_search_worth, run_engine, search_for
from proxanon._engine.verdicts import infeasible_message, infeasible_summary
from proxanon._errors import InfeasibleError
from proxanon._pipeline.classes import _audit_groups
from proxanon._pipeline.criteria import class_audit, enforce_criteria
from proxanon._pipeline.inputs import _Inputs
from proxanon._pipeline.job import _Steps
from proxanon._pipeline.publish import (
    asked_of,
    hierarchies_of,
    scales_of,
    with_criteria,
    with_scales,
)
from proxanon._pipeline.verdict import epsilon_in_units
from proxanon._results.anonymization import (
    GROUP_COLUMN,
    Anonymization,
    EngineNumbers,
    build_report,
)
from proxanon._results.measures import summarize_groups
from proxanon._results.partition import Partition
from proxanon.tables import encode_sensitive, ordered_domain


def publish_anatomy(inputs: _Inputs, seconds: dict[str, float],
                    started: float) -> Anonymization:
    """The anatomy release of ``inputs``: XColor's groups (the QI-aware start, then the plain
    partition's where that fails) audited and published as two tables."""
    part, plain = _groups(inputs)
    released = np.flatnonzero(part.groups >= 0)
    n_all = len(inputs.data)
    groups = _in_order(part.groups[released])
    audited = inputs.data if released.size == n_all else inputs.data.iloc[released]

    tic = time.perf_counter()
    if released.size == n_all:
        sens, relation = inputs.sens, inputs.relation
    else:  # the published rows as any auditor reads them: scaled over the rows released
        sens, relation = encode_sensitive(audited, inputs.sens_cols, inputs.given,
                                          inputs.metric, inputs.weights, inputs.ranges)
    job = None
    if inputs.criteria is not None:  # groups merged until each satisfies the criteria
        job = inputs.criteria if released.size == n_all else inputs.criteria.subset(audited)
        merged, _ = enforce_criteria(groups, [c.subset(released) for c in inputs.columns], job,
                                     class_audit(sens, relation, inputs.k, inputs.eps,
                                                 inputs.dlt, inputs.threads))
        groups = _in_order(merged)
    check = with_criteria(_audit_groups(sens, groups, relation, inputs.k, inputs.eps,
                                        inputs.dlt, inputs.threads), job, groups)
    seconds["audit"] = time.perf_counter() - tic
    if not check.satisfied and inputs.on_infeasible != "best_effort":
        units = epsilon_in_units(audited, inputs.sens_cols, relation, inputs.eps,
                                 scales_of(inputs, audited), inputs.given)
        raise InfeasibleError(
            f"the anatomy release's groups fail the audit: {len(check.violating_rows):,} "
            f"violating row(s) in {len(check.violating_groups):,} group(s)"
            + ("\n" + units if units else ""), partition=part)

    tic = time.perf_counter()
    qi_table, sensitive_table = anatomy_tables(audited, inputs.sens_cols, groups)
    all_groups = np.full(n_all, -1, dtype=np.int64)
    all_groups[released] = groups
    summary = summarize_groups([c.subset(released) for c in inputs.columns], groups)
    seconds["publish"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started
    stats = part.stats
    engine = EngineNumbers(
        max_degree=int(stats["max_degree"]), bound=float(stats["bound"]),
        bound_holds=bool(stats["bound_holds"]),
        initial_violations=int(stats["initial_violations"]), swaps=int(stats["swaps"]),
        repair_capped=int(stats.get("repair_capped", 0)), fallback=plain)
    report = build_report(asked_of(inputs, inputs.eps, inputs.dlt), engine, check, summary,
                          satisfied=check.satisfied, seconds=seconds, candidates={},
                          suppressed_rows=np.flatnonzero(part.groups < 0), publish="anatomy")
    return Anonymization(table=qi_table, groups=all_groups, satisfied=check.satisfied,
                         report=report, hierarchies=hierarchies_of(inputs), partition=part,
                         audit=with_scales(check, inputs, audited),
                         sensitive_table=sensitive_table)


def _in_order(groups: NDArray[np.int64]) -> NDArray[np.int64]:
    """Dense group ids 0..m-1, in the order of each group's first row."""
    _, first, dense = np.unique(groups, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[dense.reshape(-1)]


def anatomy_tables(released: pd.DataFrame, sens_cols: list[str],
                   groups: NDArray[np.int64]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two tables of an anatomy release of the rows ``released`` in ``groups``.

    The QI table: every column but the sensitive ones, unchanged and in the input's row
    order, plus ``group``. The sensitive table: ``group`` and the sensitive columns, ordered
    by group and, within a group, by the sensitive values themselves. That order is a
    function of the group's values alone, so a row's place in one table says nothing of its
    place in the other (a seeded shuffle would not do: anyone who knows the seed can redo
    it)."""
    qi_table = released.drop(columns=sens_cols)
    qi_table[GROUP_COLUMN] = groups
    order = anatomy_order(released, sens_cols, groups)
    sensitive_table = released[sens_cols].iloc[order].reset_index(drop=True)
    sensitive_table.insert(0, GROUP_COLUMN, groups[order])
    return qi_table, sensitive_table


def anatomy_order(released: pd.DataFrame, sens_cols: list[str],
                  groups: NDArray[np.int64]) -> NDArray[np.int64]:
    """The rows of ``released`` in the sensitive table's order: by group, then by the
    sensitive columns' values in their order (see :func:`anatomy_tables`)."""
    keys = [ordered_domain(released[c])[0] for c in reversed(sens_cols)]
    return np.lexsort((*keys, groups)).astype(np.int64)


def _groups(inputs: _Inputs) -> tuple[Partition, bool]:
    """XColor's groups for the release, and whether they are the plain partition's.

    The QI-aware start (``init``, the QIs' loss guiding the swaps) first; where it leaves a
    few rows violating, the same with every class searched; where that fails too, the
    plain partition (Algorithm 1's start, as :func:`proxanon.partition` runs by default), so
    that anatomy is satisfied wherever ``partition`` is; then, where asked, groups of distinct
    values (``_dealt``). A proof of infeasibility is raised before any run; with
    ``on_infeasible="raise"``, the runs' verdict after them."""
    qi_aware = inputs.init == "qi"
    steps = _Steps(inputs, {})
    proof = steps.proof_of_infeasibility(beside=False)
    if proof is not None:
        raise steps.proven(proof)
    first = _run(inputs, plain=False)
    if first.satisfied:
        return first, False
    left = int(first.stats["remaining_violations"])
    if full_search_worth(inputs.limit, left, len(inputs.data)):
        # A few rows left violating by the limited search: every class searched, so that
        # the release keeps the QIs' locality where a full search finds a partition.
        wider = _run(inputs, plain=False, search=0)
        if wider.satisfied:
            return wider, False
        if int(wider.stats["remaining_violations"]) < left:
            first = wider
    second = _run(inputs, plain=True) if qi_aware else first
    better = int(second.stats["remaining_violations"]) < int(first.stats["remaining_violations"])
    best, plain = (second, True) if better else (first, False)
    dealt = _dealt(inputs) if not best.satisfied else None
    if dealt is not None:
        part = _run(inputs, plain=False, start=dealt)
        if part.satisfied:
            return part, False
    if not best.satisfied and inputs.on_infeasible == "raise":
        stats = best.stats
        raise InfeasibleError(infeasible_summary(stats) + "\n" + infeasible_message(stats)
                              + feasibility_advice(inputs.sens, stats, inputs.relation),
                              partition=best)
    return best, plain


def _dealt(inputs: _Inputs) -> NDArray[np.int64] | None:
    """Groups in which no two rows have equal sensitive values, where that is what is asked
    and possible, else None.

    At epsilon 0 and delta 1 under a distance that is 0 only between equal values, a group
    may hold no two equal values. Rows sorted by value (then in the QIs' order) and dealt in
    turn into floor(n / k) groups give every group at least k rows and, where no value is
    held by more rows than there are groups, no value twice (the m-Color paper's Theorem 1).
    The swap loop can miss such a partition when the most frequent value nearly fills every
    group."""
    relation, n = inputs.relation, len(inputs.data)
    if (inputs.eps != 0.0 or inputs.dlt != 1.0 or relation.kind != "builtin"
            or relation.name == "min_component" or inputs.on_infeasible == "suppress"):
        return None
    _, value, counts = np.unique(inputs.sens, axis=0, return_inverse=True,
                                 return_counts=True)
    slots = n // inputs.k
    if slots == 0 or int(counts.max()) > slots:
        return None
    order = np.lexsort((*inputs.qi.T[::-1], value.reshape(-1)))
    groups = np.empty(n, dtype=np.int64)
    groups[order] = np.arange(n, dtype=np.int64) % slots
    return groups


def _run(inputs: _Inputs, *, plain: bool, start: NDArray[np.int64] | None = None,
         search: int | None = None) -> Partition:
    """One native XColor run over every row: QI-aware (``init`` as given, or the groups
    ``start``, the QIs' loss guiding the swaps) or plain (Algorithm 1's start, no QIs);
    ``search``: classes examined per violation instead of the job's limit (0: all)."""
    options = EngineOptions(
        k=inputs.k, delta=inputs.dlt,
        search_limit=search_for(inputs.limit, plain) if search is None else search,
        init="degree" if plain else inputs.init, init_block=1, moves=inputs.moves,
        suppress=inputs.on_infeasible == "suppress", threads=inputs.threads,
        progress=inputs.reporter.counters if inputs.reporter is not None else None)
    run = NativeRun(options=options, eps=inputs.eps, relation=inputs.relation,
                    neighbours=inputs.neighbours, reporter=inputs.reporter,
                    started=time.perf_counter())
    return run_engine(inputs.sens, run, qi=None if plain else inputs.qi,
                      qi_taxonomies=None if plain else inputs.taxonomies,
                      on_infeasible=("best_effort" if start is not None
                                     or inputs.on_infeasible == "raise"
                                     else inputs.on_infeasible),
                      initial_groups=start, max_suppression=inputs.budget)
