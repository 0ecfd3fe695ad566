"""The end of ``anonymize``'s pipeline: the columns encoded (:func:`publish`), the table the
default path chose or strict Mondrian's generalized, audited and reported, or refused with
the verdict's text."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._errors import InfeasibleError
from proxanon._pipeline.candidates import _Published
from proxanon._pipeline.choose import _CutPicked, _Job
from proxanon._pipeline.classes import _audit_groups, _published_key_inputs
from proxanon._pipeline.inputs import _Inputs
from proxanon._pipeline.mondrian import _Cut, _mondrian_cut, _mondrian_table
from proxanon._pipeline.verdict import infeasible_text
from proxanon._progress import ProgressReporter
from proxanon._results.anonymization import GROUP_COLUMN, Anonymization, Report, utility
from proxanon._results.audit import AuditReport
from proxanon.distances import Relation
from proxanon.generalize import QIColumn, encode_qi, load_hierarchies
from proxanon.tables import encode_sensitive, numeric_scales


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
    cut = _mondrian_cut(columns, sens, qi, taxonomies, relation, k, eps, dlt, ell, threads=threads)
    seconds["mondrian"] = time.perf_counter() - tic
    return _publish_mondrian(data, columns, sens_cols, sens, relation, k, eps, dlt, ell,
                             on_infeasible, seconds, started, cut, threads)


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
        **utility(summary, [c.name for c in columns]),
    )
    return Anonymization(table=table, groups=groups, satisfied=satisfied, report=report,
                         hierarchies={c.name: c.hierarchy for c in columns
                                      if c.hierarchy is not None}, partition=part,
                         audit=check)


def publish(data: pd.DataFrame, qi_cols: list[str], sens_cols: list[str], k: int,
               eps: float, dlt: float, metric: Any, weights: Any,
               hierarchies: Mapping[str, Any] | None, on_infeasible: str, limit: int,
               init: str, moves: str, budget: float, reporter: ProgressReporter | None,
               started: float, method: str = "xcolor", ell: int | None = None,
               checked: bool = True,
               ranges: Mapping[str, tuple[float, float]] | None = None,
               neighbours: str = "auto", threads: int = 1) -> Anonymization:
    """The table job once ``anonymize`` has checked its arguments: the columns encoded, then
    strict Mondrian's table, or the table the default path (:class:`proxanon._pipeline.choose._Job`)
    chooses, published."""
    tic = time.perf_counter()
    given = load_hierarchies(hierarchies, qi_cols + sens_cols, [str(c) for c in data.columns])
    columns: list[QIColumn] = [encode_qi(data, c, given.get(c)) for c in qi_cols]
    sens, relation = encode_sensitive(data, sens_cols, given, metric, weights, ranges)
    qi, taxonomies, node_keys = _published_key_inputs(columns)
    seconds = {"prepare": time.perf_counter() - tic}
    if on_infeasible == "suppress" and relation.kind == "graph":
        raise ValueError("on_infeasible='suppress' cannot be combined with a precomputed "
                         "neighbour graph (its rows would no longer line up); pass the "
                         "distance as a function instead")
    if method == "mondrian":
        if on_infeasible == "suppress":
            raise ValueError("on_infeasible='suppress' applies to method='xcolor' only")
        return _scaled(_anonymize_mondrian(
            data, columns, sens_cols, sens, qi, taxonomies, relation, k,
            eps if checked else None, dlt if checked else None, ell, on_infeasible, seconds,
            started, threads), numeric_scales(data, sens_cols, given, metric, ranges),
            tuple(c for c in sens_cols if c in given))
    inputs = _Inputs(
        data=data, sens_cols=sens_cols, given=given, metric=metric, weights=weights,
        ranges=dict(ranges) if ranges is not None else None, columns=columns, sens=sens,
        relation=relation, qi=qi, taxonomies=taxonomies,
        node_keys=node_keys, k=k, eps=eps, dlt=dlt, on_infeasible=on_infeasible, limit=limit,
        init=init, moves=moves, budget=budget,
        neighbours=_validate.neighbours(neighbours, builtin=relation.kind == "builtin",
                                       taxonomy=relation.taxonomy,
                                       components=sens.shape[1]), threads=threads,
        reporter=reporter)
    picked = _Job(inputs, seconds).run()
    if isinstance(picked, _CutPicked):
        return _scaled(_publish_mondrian(
            data, columns, sens_cols, sens, relation, k, eps, dlt, None, "best_effort",
            seconds, started, picked.cut, threads, picked.costs, picked.check,
            picked.generalized), numeric_scales(data, sens_cols, given, metric, ranges),
            tuple(c for c in sens_cols if c in given))
    chosen, candidates = picked
    return _publish_xcolor(inputs, chosen, candidates, seconds, started)


def _scaled(result: Anonymization, scales: dict[str, tuple[float, float]],
            taxonomies: tuple[str, ...]) -> Anonymization:
    """``result`` with its audit's scales (Mondrian publishes every row, so the input's)."""
    if result.audit is None:
        return result
    return replace(result, audit=replace(result.audit, scales=scales,
                                         taxonomies=taxonomies))


def _publish_xcolor(inputs: _Inputs, chosen: _Published, candidates: dict[str, float],
                    seconds: dict[str, float], started: float) -> Anonymization:
    """One of XColor's tables, as the job chose it, generalized and reported; refused where it
    leaves out more rows than allowed, or fails without on_infeasible="best_effort"."""
    data, sens_cols, budget = inputs.data, inputs.sens_cols, inputs.budget
    k, eps, dlt, relation = inputs.k, inputs.eps, inputs.dlt, inputs.relation
    n_all = len(data)
    released, classes, summary, check = (chosen.released, chosen.classes, chosen.summary,
                                         chosen.check)
    left_out = np.ones(n_all, dtype=bool)
    left_out[released] = False
    suppressed_rows = np.flatnonzero(left_out)
    if inputs.on_infeasible == "suppress" and suppressed_rows.size > budget * n_all:
        raise InfeasibleError(
            f"the suppression found leaves out {suppressed_rows.size} of {n_all} row(s) "
            f"({suppressed_rows.size / n_all:.2%}; a heuristic's count, not a proven minimum "
            f"except on tables of at most 16 rows), more than max_suppression={budget} allows "
            f"({int(budget * n_all)} row(s)); allow more suppression, or try a smaller epsilon "
            "or delta", partition=chosen.part)
    audited = data if suppressed_rows.size == 0 else data.iloc[released]
    scales = numeric_scales(audited, sens_cols, inputs.given, inputs.metric, inputs.ranges)
    if not check.satisfied and inputs.on_infeasible != "best_effort":
        raise InfeasibleError(
            infeasible_text(data, sens_cols, chosen, inputs.sens, relation, k, eps, dlt,
                            inputs.threads, scales, inputs.given),
            partition=chosen.part)

    if inputs.reporter is not None:
        inputs.reporter.phase = "generalize"
    tic = time.perf_counter()
    table = data.iloc[released].copy()
    for col, labels in zip(chosen.columns, summary.labels, strict=True):
        table[col.name] = pd.Series(labels[classes], index=table.index, dtype=object)
    table[GROUP_COLUMN] = classes
    all_groups = np.full(n_all, -1, dtype=np.int64)
    all_groups[released] = classes
    seconds["generalize"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started

    qi_cols = [c.name for c in inputs.columns]
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
        repair_capped=int(stats.get("repair_capped", 0)),
        **utility(summary, qi_cols),
    )
    check = replace(check, scales=scales,
                    taxonomies=tuple(c for c in sens_cols if c in inputs.given))
    return Anonymization(
        table=table, groups=all_groups, satisfied=report.satisfied, report=report,
        hierarchies={c.name: c.hierarchy for c in inputs.columns if c.hierarchy is not None},
        partition=chosen.part, audit=check,
    )
