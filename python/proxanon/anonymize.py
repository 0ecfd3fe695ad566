"""``anonymize``: a pandas table in, a published table out (SPEC §1, §4)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from proxanon import _validate
from proxanon._classes import (
    _audit_groups,
    _Cut,
    _mondrian_cut,
    _mondrian_table,
    _published_key_inputs,
)
from proxanon._errors import InfeasibleError
from proxanon._infeasible import infeasible_text
from proxanon._job import _CutPicked, _Job
from proxanon._progress import ProgressReporter
from proxanon._published import _Published
from proxanon._results.anonymization import GROUP_COLUMN as GROUP_COLUMN  # public
from proxanon._results.anonymization import Anonymization, Report, utility
from proxanon._results.audit import AuditReport
from proxanon._steps import _Inputs
from proxanon.distances import Relation
from proxanon.generalize import QIColumn, encode_qi, load_hierarchies
from proxanon.hierarchy import Hierarchy
from proxanon.tables import encode_sensitive, numeric_scales, role_columns

#: Classes examined per violation in ``anonymize``: with the QI-aware start, classes near a
#: violation's own (in the QI order) are examined first, and a few dozen suffice.
TABLE_SEARCH_LIMIT = 64


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
    instead of its own (``proxanon.dask`` passes the whole table's range to each part); the
    audit of the published rows uses it too, after suppression as well, and records it in
    ``audit.scales``.
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
    _validate.unique_columns(data, "data")
    qi_cols, sens_cols = role_columns(data, quasi_identifiers, sensitive)
    if GROUP_COLUMN in data.columns:
        raise ValueError(f"data already has a column named {GROUP_COLUMN!r}, which the "
                         "published table adds; rename it first")
    for flag, name in ((progress, "progress"),):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    on_infeasible = _validate.choice(on_infeasible, "on_infeasible", _validate.ON_INFEASIBLE)
    method = _validate.choice(method, "method", _validate.METHODS)
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
    limit = _validate.search_limit(search_limit)
    init = _validate.choice(init, "init", _validate.INITS)
    moves = _validate.choice(moves, "moves", _validate.MOVES)
    budget = _validate.suppression(max_suppression, on_infeasible)
    structure = _validate.choice(neighbours, "neighbours", _validate.NEIGHBOURS)
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
    """The table job once ``anonymize`` has checked its arguments: the columns encoded, then
    strict Mondrian's table, or the table the default path (:class:`proxanon._job._Job`)
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
        **utility(summary, qi_cols),
    )
    check = replace(check, scales=scales,
                    taxonomies=tuple(c for c in sens_cols if c in inputs.given))
    return Anonymization(
        table=table, groups=all_groups, satisfied=report.satisfied, report=report,
        hierarchies={c.name: c.hierarchy for c in inputs.columns if c.hierarchy is not None},
        partition=chosen.part, audit=check,
    )
