"""The end of ``anonymize``'s pipeline: the columns encoded (:func:`publish`), the table the
default path chose or strict Mondrian's generalized, audited and reported, or refused with
the verdict's text."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._errors import InfeasibleError
from proxanon._messages import Param, text
from proxanon._pipeline.candidates import _cost, _Published
from proxanon._pipeline.choose import _CutPicked, _Job
from proxanon._pipeline.classes import (
    ClassChecks,
    KeyInputs,
    _audit_groups,
    _published_key_inputs,
)
from proxanon._pipeline.criteria import CriteriaJob, class_audit, enforce_criteria
from proxanon._pipeline.inputs import AnonymizeSettings, _Inputs
from proxanon._pipeline.mondrian import _Cut, _mondrian_cut, _mondrian_table
from proxanon._pipeline.verdict import infeasible_text
from proxanon._progress import ProgressReporter
from proxanon._results.anonymization import (
    GROUP_COLUMN,
    Anonymization,
    Asked,
    EngineNumbers,
    build_report,
)
from proxanon._results.audit import AuditReport
from proxanon._results.measures import summarize_groups
from proxanon.generalize import QIColumn, encode_qi, load_hierarchies
from proxanon.hierarchy import Hierarchy
from proxanon.tables import encode_sensitive, numeric_scales


def _anonymize_mondrian(inputs: _Inputs, settings: AnonymizeSettings,
                        seconds: dict[str, float], started: float) -> Anonymization:
    """The table job with a cut: strict Mondrian's (``method="mondrian"``), or the hierarchy
    cut where δ is 0 (k-anonymity and the criteria alone: :func:`k_anonymity_only`); merge
    groups publishing the same values, generalize, and audit every check that was asked
    for."""
    distance = settings.checked and not k_anonymity_only(settings)

    def checks_of(job: _Inputs) -> ClassChecks:
        return ClassChecks.on(job.sens, job.relation, k=job.k,
                              eps=job.eps if distance else None,
                              dlt=job.dlt if distance else None, ell=settings.ell,
                              criteria=None if job.criteria is None else job.criteria.native,
                              failing=None if job.criteria is None else job.criteria.failing)

    def released(rows: NDArray[np.int64]) -> tuple[list[QIColumn], ClassChecks, KeyInputs]:
        job = inputs.released(rows)
        return job.columns, checks_of(job), (job.qi, job.taxonomies, job.node_keys)

    # With on_infeasible="suppress" at δ = 0, the hierarchy cut may leave out up to
    # max_suppression of the rows where that lowers the loss (a suppressed row costs 1).
    suppress = (int(inputs.budget * len(inputs.data))
                if settings.on_infeasible == "suppress" and k_anonymity_only(settings) else 0)
    tic = time.perf_counter()
    cut = _mondrian_cut(inputs.columns, checks_of(inputs),
                        (inputs.qi, inputs.taxonomies, inputs.node_keys),
                        threads=inputs.threads, follow_hierarchy=settings.method != "mondrian",
                        suppress=suppress, released=released)
    seconds["mondrian"] = time.perf_counter() - tic
    job = inputs if cut.released is None else inputs.released(cut.released)
    checks = checks_of(job)
    # The audit measures the risk at the epsilon given, as proxanon.audit of the table would.
    audited = checks if distance or not settings.checked else ClassChecks.on(
        job.sens, job.relation, k=job.k, eps=job.eps, dlt=job.dlt, ell=settings.ell)
    return _publish_mondrian(job, checks, cut, seconds, started,
                             on_infeasible=inputs.on_infeasible, audited=audited)


def _publish_mondrian(inputs: _Inputs, checks: ClassChecks, cut: _Cut,
                      seconds: dict[str, float], started: float, *, on_infeasible: str,
                      picked: _CutPicked | None = None,
                      audited: ClassChecks | None = None) -> Anonymization:
    """Mondrian's groups (:func:`_mondrian_cut`) generalized and audited against ``checks``
    (or ``audited``, where the audit measures at an epsilon the cut did not check: δ = 0);
    ``picked``: where ``anonymize`` chose this cut over XColor's table, the costs compared
    for the report, the audit of these groups (not run again) and the cut's table where its
    thread generalized it. Where the cut suppressed rows (``cut.released``), ``inputs`` and
    the checks are over the rows it kept, and the result's groups over every input row."""
    sens, relation, k, eps, dlt, ell = (audited or checks).unpacked()
    if inputs.criteria is not None:
        cut, picked = _cut_criteria(inputs, checks, cut, picked, seconds)
    part, groups, summary = cut.part, cut.groups, cut.summary
    generalized = picked.generalized if picked is not None else None
    table, seconds["generalize"] = generalized or _mondrian_table(inputs.data, inputs.columns,
                                                                  cut)
    tic = time.perf_counter()
    check = with_criteria(
        picked.check if picked is not None
        else _audit_groups(sens, groups, relation, k, eps, dlt, inputs.threads),
        inputs.criteria, groups)
    satisfied = bool(check.satisfied)
    seconds["audit"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started
    # The verdict and the violations are the audit's: only rows that violate are listed
    # (Mondrian itself flags every row when the whole table fails its checks).
    kept = cut.released
    all_groups = groups if kept is None else _over_all_rows(groups, kept, part.groups.size)
    part = replace(part, groups=all_groups, satisfied=satisfied,
                   violating_rows=check.violating_rows if kept is None
                   else kept[check.violating_rows],
                   violating_groups=check.violating_groups,
                   stats={**part.stats, "m": int(summary.sizes.size),
                          "remaining_violations": len(check.violating_rows),
                          "violating_groups": check.violating_groups.tolist()})
    if not satisfied and on_infeasible in ("raise", "suppress"):
        failed = [v for v in check.criteria if not v.satisfied]
        raise InfeasibleError(
            f"Mondrian's published groups fail the checks (k={k}, epsilon={eps}, "
            f"delta={dlt}): max risk {check.max_risk:.3f}, {len(check.violating_rows):,} "
            f"violating row(s) in {len(check.violating_groups):,} group(s)"
            + (f", {check.small_groups.size:,} group(s) smaller than k" if
               check.small_groups.size else "")
            + "".join(f", {v.criterion} fails on {v.column!r} in "
                      f"{v.failing_classes.size:,} group(s)" for v in failed)
            + (".\nRelax the parameters." if audited is not None
               else ".\nRelax the parameters or use method='xcolor'."), partition=part)
    report = build_report(
        asked_of(inputs, eps, dlt),
        EngineNumbers(method=cut.name(), merge_rounds=cut.rounds),
        check, summary, satisfied=satisfied, seconds=seconds,
        candidates=picked.costs if picked is not None else {},
        suppressed_rows=part.suppressed_rows)
    # The audit's scales are those of the rows published.
    return Anonymization(table=table, groups=all_groups, satisfied=satisfied, report=report,
                         hierarchies=hierarchies_of(inputs), partition=part,
                         audit=with_scales(check, inputs, inputs.data))


def _over_all_rows(groups: NDArray[np.int64], kept: NDArray[np.int64],
                   n_all: int) -> NDArray[np.int64]:
    """The groups of the rows ``kept`` as one id per input row, -1 where suppressed."""
    every = np.full(n_all, -1, dtype=np.int64)
    every[kept] = groups
    return every


def _cut_criteria(inputs: _Inputs, checks: ClassChecks, cut: _Cut, picked: _CutPicked | None,
                  seconds: dict[str, float]) -> tuple[_Cut, _CutPicked | None]:
    """The cut with its classes merged until each satisfies the criteria
    (:func:`enforce_criteria`); ``picked`` without its table and audit where they changed."""
    if inputs.criteria is None:
        return cut, picked
    sens, relation, k, eps, dlt, _ = checks.unpacked()
    tic = time.perf_counter()
    # The cuts checked the criteria in every class and merged equal tuples already: where
    # none fails, there is nothing to merge (enforce_criteria would only say so, slower).
    if not inputs.criteria.failing(cut.groups, np.ones(cut.groups.size, dtype=bool)).size:
        seconds["criteria"] = time.perf_counter() - tic
        return cut, picked
    groups, rounds = enforce_criteria(cut.groups, inputs.columns, inputs.criteria,
                                      class_audit(sens, relation, k, eps, dlt, inputs.threads))
    seconds["criteria"] = time.perf_counter() - tic
    if np.array_equal(groups, cut.groups):
        return cut, picked
    cut = replace(cut, groups=groups, summary=summarize_groups(inputs.columns, groups),
                  rounds=cut.rounds + rounds)
    if picked is None:
        return cut, None
    return cut, replace(picked, cut=cut, generalized=None,
                        check=_audit_groups(sens, groups, relation, k, eps, dlt,
                                            inputs.threads))


def with_criteria(check: AuditReport, job: CriteriaJob | None,
                   classes: NDArray[np.int64]) -> AuditReport:
    """``check`` with the verdict of each criterion of ``job`` on ``classes`` (the rows
    ``job`` holds), and satisfied only where they all hold."""
    if job is None:
        return check
    verdicts = tuple(job.verdicts(classes))
    return replace(check, criteria=verdicts,
                   satisfied=check.satisfied and all(v.satisfied for v in verdicts))


def asked_of(inputs: _Inputs, eps: float | None, dlt: float | None) -> Asked:
    """What the report says the table was anonymized against (``eps`` and ``dlt``: None
    where no distance check was asked for)."""
    return Asked(k=inputs.k, epsilon=eps if eps is not None else float("nan"),
                 delta=dlt if dlt is not None else float("nan"), metric=inputs.relation.label,
                 quasi_identifiers=tuple(c.name for c in inputs.columns),
                 sensitive=tuple(inputs.sens_cols))


def hierarchies_of(inputs: _Inputs) -> dict[str, Hierarchy]:
    """The taxonomy used for each categorical QI column, as the result gives them."""
    return {c.name: c.hierarchy for c in inputs.columns if c.hierarchy is not None}


def with_scales(check: AuditReport, inputs: _Inputs, audited: pd.DataFrame) -> AuditReport:
    """``check`` with the scales of the sensitive columns over the rows ``audited`` and the
    columns compared by tree distance, as ``proxanon.audit`` of the published table reads
    them, and each sensitive column's own exposure labelled with its name."""
    return replace(check.named(inputs.sens_cols), scales=scales_of(inputs, audited),
                   taxonomies=tuple(c for c in inputs.sens_cols if c in inputs.given))


def scales_of(inputs: _Inputs, audited: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """The (min, max) each numeric sensitive column is scaled by over the rows ``audited``."""
    return numeric_scales(audited, inputs.sens_cols, inputs.given, inputs.metric,
                          inputs.ranges)


def _criteria_job(data: pd.DataFrame, settings: AnonymizeSettings) -> CriteriaJob | None:
    """The criteria of ``settings`` over ``data``, None without any. With
    ``on_infeasible="raise"``, a criterion the whole table fails is raised at once (the
    proof that no partition meets it); otherwise the criteria the table can meet are
    enforced and the others reported failing."""
    if not settings.criteria:
        return None
    job = CriteriaJob.on(data, settings.criteria, settings.sensitive)
    if settings.on_infeasible == "raise":
        job.prove_feasible(len(data))
        return job
    failing = {v.criterion for v in job.infeasible(len(data))}
    return replace(job, enforced=tuple(c for c in job.criteria if c not in failing))


def prepare(data: pd.DataFrame, settings: AnonymizeSettings,
            reporter: ProgressReporter | None) -> tuple[_Inputs, dict[str, float]]:
    """What every release of ``data`` reads, from ``anonymize``'s checked arguments
    (``settings``): the columns encoded and the parameters (:class:`_Inputs`), and the seconds
    this took (``"prepare"``)."""
    tic = time.perf_counter()
    qi_cols, sens_cols = settings.quasi_identifiers, settings.sensitive
    given = load_hierarchies(settings.hierarchies, qi_cols + sens_cols,
                             [str(c) for c in data.columns])
    columns: list[QIColumn] = [encode_qi(data, c, given.get(c)) for c in qi_cols]
    encoded = _equality_order(data, sens_cols, given) if k_anonymity_only(settings) else data
    sens, relation = encode_sensitive(encoded, sens_cols, given, settings.metric,
                                      settings.weights, settings.ranges)
    qi, taxonomies, node_keys = _published_key_inputs(columns)
    seconds = {"prepare": time.perf_counter() - tic}
    if settings.on_infeasible == "suppress" and relation.kind == "graph":
        raise ValueError("on_infeasible='suppress' cannot be combined with a precomputed "
                         "neighbour graph (its rows would no longer line up); pass the "
                         "distance as a function instead")
    if settings.method == "mondrian" and settings.on_infeasible == "suppress":
        raise ValueError("on_infeasible='suppress' applies to method='xcolor' only")
    inputs = _Inputs(
        data=data, sens_cols=sens_cols, given=given, metric=settings.metric,
        weights=settings.weights,
        ranges=dict(settings.ranges) if settings.ranges is not None else None, columns=columns,
        sens=sens, relation=relation, qi=qi, taxonomies=taxonomies, node_keys=node_keys,
        k=settings.k, eps=settings.eps, dlt=settings.dlt, on_infeasible=settings.on_infeasible,
        limit=settings.limit, init=settings.init, moves=settings.moves, budget=settings.budget,
        neighbours=_validate.neighbours(settings.neighbours, builtin=relation.kind == "builtin",
                                       taxonomy=relation.taxonomy,
                                       components=sens.shape[1]), threads=settings.threads,
        reporter=reporter, criteria=_criteria_job(data, settings))
    return inputs, seconds


def publish(data: pd.DataFrame, settings: AnonymizeSettings, *,
            reporter: ProgressReporter | None, started: float) -> Anonymization:
    """The table job once ``anonymize`` has checked its arguments (``settings``): the
    columns encoded, then strict Mondrian's table, or the table the default path
    (:class:`proxanon._pipeline.choose._Job`) chooses, published. ``started``: when
    ``anonymize`` was called (the report's total seconds)."""
    inputs, seconds = prepare(data, settings, reporter)
    if settings.method == "mondrian" or k_anonymity_only(settings):
        return _anonymize_mondrian(inputs, settings, seconds, started)
    job = _Job(inputs, seconds)
    picked = job.run()
    if not isinstance(picked, _CutPicked) and inputs.criteria is not None:
        picked = _criteria_choice(inputs, job, *picked, seconds)
    if isinstance(picked, _CutPicked):
        checks = ClassChecks.on(inputs.sens, inputs.relation, k=inputs.k, eps=inputs.eps,
                                dlt=inputs.dlt)
        return _publish_mondrian(inputs, checks, picked.cut, seconds, started,
                                 on_infeasible="best_effort", picked=picked)
    chosen, candidates = picked
    return _publish_xcolor(inputs, chosen, candidates, seconds, started)


def _equality_order(data: pd.DataFrame, columns: list[str],
                    given: dict[str, Hierarchy]) -> pd.DataFrame:
    """``data`` with its text and unordered categorical sensitive columns read in the order
    of their sorted values (the input is not changed). At δ = 0 no distance is checked and
    the report's risk counts equal values only (ε = 0), which no order changes, so a column
    needs none there."""
    changed: dict[str, pd.Series] = {}
    for c in columns:
        series = data[c]
        if c in given:
            continue
        if isinstance(series.dtype, pd.CategoricalDtype) and not series.dtype.ordered:
            changed[c] = series.cat.as_ordered()
        elif ((series.dtype == object or pd.api.types.is_string_dtype(series.dtype))
              and not series.isna().any()):  # a missing value is refused as ever
            changed[c] = pd.Series(pd.Categorical(series.astype(str), ordered=True),
                                   index=series.index)
    return data.assign(**changed) if changed else data


def k_anonymity_only(settings: AnonymizeSettings) -> bool:
    """Whether the default path asks k-anonymity and the criteria alone: at δ = 0 every row
    may have all of its class's other rows within ε (t(G) = |G| - 1), so no distance is
    checked and the hierarchy cut publishes the table (docs/design/mondrian.md#the-
    hierarchy-cut), leaving out rows where ``on_infeasible="suppress"`` allows and that
    lowers the loss."""
    return settings.method == "xcolor" and settings.dlt == 0.0


def _criteria_choice(inputs: _Inputs, job: _Job, chosen: _Published,
                     candidates: dict[str, float], seconds: dict[str, float]
                     ) -> _CutPicked | tuple[_Published, dict[str, float]]:
    """XColor's table as the job chose it, its classes merged until each satisfies the
    criteria; or the Mondrian-(ε, δ) cut (which keeps the criteria as it cuts), repaired the
    same way, where that satisfies and XColor's does not or costs more (GCP): the job
    compared the two before the criteria were enforced."""
    released = chosen.released
    audited = inputs.data if released.size == len(inputs.data) else inputs.data.iloc[released]
    chosen = _chosen_criteria(inputs, chosen, audited, seconds)
    built = job.cut if job.cut_taken else None
    if built is None or released.size < len(inputs.data):
        return chosen, candidates
    checks = ClassChecks.on(inputs.sens, inputs.relation, k=inputs.k, eps=inputs.eps,
                            dlt=inputs.dlt)
    cut, _ = _cut_criteria(inputs, checks, built[0], None, seconds)
    check = with_criteria(_audit_groups(inputs.sens, cut.groups, inputs.relation, inputs.k,
                                         inputs.eps, inputs.dlt, inputs.threads),
                           inputs.criteria, cut.groups)
    costs = {"xcolor": _cost(chosen.summary, len(inputs.data)), cut.name(): cut.summary.gcp()}
    if not check.satisfied or (chosen.check.satisfied and costs["xcolor"] <= costs[cut.name()]):
        return chosen, {**candidates, **costs}
    return _CutPicked(cut, check, costs, None)


def _chosen_criteria(inputs: _Inputs, chosen: _Published, audited: pd.DataFrame,
                     seconds: dict[str, float]) -> _Published:
    """XColor's table with its classes merged until each satisfies the criteria
    (:func:`enforce_criteria`), summarized and audited again, the criteria's verdicts in its
    audit."""
    if inputs.criteria is None:
        return chosen
    job = inputs.criteria if len(audited) == len(inputs.data) else inputs.criteria.subset(
        audited)
    sens = inputs.sens[chosen.released]
    relation, k, eps, dlt = inputs.relation, inputs.k, inputs.eps, inputs.dlt
    tic = time.perf_counter()
    classes, rounds = enforce_criteria(chosen.classes, chosen.columns, job,
                                       class_audit(sens, relation, k, eps, dlt, inputs.threads))
    if not np.array_equal(classes, chosen.classes):
        chosen = replace(chosen, classes=classes,
                         summary=summarize_groups(chosen.columns, classes),
                         check=_audit_groups(sens, classes, relation, k, eps, dlt,
                                             inputs.threads), rounds=chosen.rounds + rounds)
    seconds["criteria"] = time.perf_counter() - tic
    return replace(chosen, check=with_criteria(chosen.check, job, classes))


def _publish_xcolor(inputs: _Inputs, chosen: _Published, candidates: dict[str, float],
                    seconds: dict[str, float], started: float) -> Anonymization:
    """One of XColor's tables, as the job chose it, generalized and reported; refused where it
    leaves out more rows than allowed, or fails without on_infeasible="best_effort"."""
    data, budget = inputs.data, inputs.budget
    n_all = len(data)
    released, classes, summary, check = (chosen.released, chosen.classes, chosen.summary,
                                         chosen.check)
    left_out = np.ones(n_all, dtype=bool)
    left_out[released] = False
    suppressed_rows = np.flatnonzero(left_out)
    if inputs.on_infeasible == "suppress" and suppressed_rows.size > budget * n_all:
        raise InfeasibleError(text(
            f"the suppression found leaves out {suppressed_rows.size} of {n_all} row(s) "
            f"({suppressed_rows.size / n_all:.2%}; a heuristic's count, not a proven minimum "
            "except on tables of at most 16 rows), more than ",
            Param("max_suppression", budget), f" allows ({int(budget * n_all)} row(s)); allow "
            "more suppression, or try a smaller ", Param("epsilon"), " or ", Param("delta")),
            partition=chosen.part)
    audited = data if suppressed_rows.size == 0 else data.iloc[released]
    if not check.satisfied and inputs.on_infeasible != "best_effort":
        raise InfeasibleError(infeasible_text(inputs, chosen, scales_of(inputs, audited)),
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

    stats = chosen.part.stats
    engine = EngineNumbers(
        max_degree=int(stats["max_degree"]), bound=float(stats["bound"]),
        bound_holds=bool(stats["bound_holds"]), initial_violations=chosen.initial_violations,
        swaps=chosen.swaps, merge_rounds=chosen.rounds,
        repair_capped=int(stats.get("repair_capped", 0)), fallback=chosen.plain)
    report = build_report(asked_of(inputs, inputs.eps, inputs.dlt), engine, check, summary,
                          satisfied=check.satisfied, seconds=seconds, candidates=candidates,
                          suppressed_rows=suppressed_rows)
    return Anonymization(
        table=table, groups=all_groups, satisfied=report.satisfied, report=report,
        hierarchies=hierarchies_of(inputs), partition=chosen.part,
        audit=with_scales(check, inputs, audited),
    )
