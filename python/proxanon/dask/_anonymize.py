"""``anonymize`` on a dask DataFrame: the single-machine ``anonymize`` per part, then a global
pass for what crosses parts (docs/design/definitions.md; docs/guide/dask.md).

The steps live by stage: the first pass and the buckets in ``_plan``, the tasks on one part
in ``_part``, the global pass in ``_repair``, the audit in ``_audit``; this module runs them
in order and publishes. Invariant: a result reported satisfied passed the audit of every
published class, each whole in one piece. Cost: one pass and one shuffle of the table, one
task per bucket (linear in its rows but for the engine's near n log n), and on the driver
8 bytes per class and one neighbour count per row.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from proxanon import _validate
from proxanon._errors import InfeasibleError
from proxanon._pipeline.anatomy import anatomy_order
from proxanon._results.anonymization import GROUP_COLUMN
from proxanon._results.audit import AuditReport
from proxanon.anonymize import TABLE_SEARCH_LIMIT
from proxanon.dask._audit import (
    PartAudit,
    PartResult,
    assemble,
    audit,
    audit_rows,
    numeric_sensitive,
    starts,
)
from proxanon.dask._malloc import roomy
from proxanon.dask._part import INDEX, Facts, persist_pairs, run
from proxanon.dask._plan import Plan, arrange_buckets, bucket_runs, plan_job
from proxanon.dask._repair import Repair, repair


@dataclass(frozen=True)
class DaskReport:
    """The numbers of one anonymization on Dask.

    ``satisfied``, ``max_risk``, ``vulnerability``, ``groups``: from the global audit of
    the published classes (equal to :func:`proxanon.audit` of the computed table).
    ``partitions``: of the input;
    ``pieces``: the parts anonymized on their own at the end; ``joined``: buckets joined to a
    neighbour (fewer than k rows, or infeasible alone); ``colliding_classes``: classes found
    in more than one part and repaired; ``repair_rounds``: rounds of that global pass;
    ``seconds``: wall time of ``prepare`` (steps 1 and 2 of :func:`anonymize`), ``parts``
    (step 3, the pieces' audits included), ``repair`` (4), ``publish`` (5) and ``total``.
    """

    satisfied: bool
    n: int
    groups: int
    k: int
    epsilon: float
    delta: float
    max_risk: float
    vulnerability: float
    partitions: int
    pieces: int
    joined: int
    colliding_classes: int
    repair_rounds: int
    suppressed_rows: int
    seconds: dict[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        verdict = "satisfied" if self.satisfied else "NOT satisfied"
        return "\n".join([
            f"proxanon anonymization on Dask: {verdict}",
            f"  table   : {self.n:,} rows in {self.groups:,} classes; "
            f"{self.suppressed_rows:,} row(s) suppressed",
            f"  privacy : k = {self.k}, epsilon = {self.epsilon}, delta = {self.delta}; "
            f"max risk {self.max_risk:.4f}, vulnerability {self.vulnerability:.2%}",
            f"  parts   : {self.partitions} partition(s) in, {self.pieces} piece(s) anonymized; "
            f"{self.joined} bucket(s) joined to a neighbour; {self.colliding_classes} "
            f"class(es) across parts repaired in {self.repair_rounds} round(s)",
            "  seconds : " + ", ".join(f"{k} {v:.3f}" for k, v in self.seconds.items()),
        ])


@dataclass(frozen=True)
class DaskAnonymization:
    """The result of :func:`anonymize`: ``table`` (a persisted dask DataFrame: the input's
    columns and index, QIs published, a global ``group`` column, rows arranged by QI
    buckets), ``satisfied``, ``report`` and ``audit`` (the global audit).

    For an anatomy release (``publish="anatomy"``), ``table`` is the QI table (every column
    but the sensitive ones, as given, and the index) and ``sensitive_table`` the group and
    the sensitive columns, ordered by group and within it by value, without the index."""

    table: Any
    satisfied: bool
    report: DaskReport
    audit: AuditReport = field(repr=False)
    sensitive_table: Any = None


@roomy
def _finish(table: pd.DataFrame, group_offset: int, row_offset: int, columns: list[str],
            index_name: Any, settings: PartAudit | None
            ) -> tuple[pd.DataFrame, PartResult | None]:
    """The published part as the user sees it (input columns and index, global group ids
    from ``group_offset``), and, given the audit's ``settings``, the audit of its classes
    (its rows are the table's from ``row_offset`` on). A piece is in input order already:
    :func:`~proxanon.dask._part.run` orders its rows and the repair's takes keep that
    order, so the audits made with the piece count its rows as they are here."""
    local = np.unique(table[GROUP_COLUMN].to_numpy(), return_inverse=True)[1]
    out = table[columns].assign(**{GROUP_COLUMN: group_offset + local.astype(np.int64)})
    out.index = pd.Index(table[INDEX].to_numpy(), name=index_name)
    if settings is None:
        return out, None
    positions = np.arange(row_offset, row_offset + len(out), dtype=np.int64)
    return out, audit_rows(out, positions, settings)


def _anonymize_runs(inputs: list[list[Any]], runs: list[list[int]], plan: Plan
                    ) -> tuple[list[Any], list[Facts], int]:
    """Each run of buckets anonymized by :func:`proxanon.anonymize` in a task (step 3 of
    :func:`anonymize`); a run infeasible alone is joined to its neighbour and redone.
    Returns the persisted pieces, their facts and how many joins that took."""
    runs = [list(r) for r in runs]
    joined = 0
    while True:
        tasks = [dask.delayed(run, nout=2)([p for b in r for p in inputs[b]], plan.qi_cols,
                                           plan.index_name, plan.options, False,
                                           plan.piece_audit)
                 for r in runs]
        persisted, outcomes = persist_pairs(tasks)
        failed = [i for i, o in enumerate(outcomes) if not isinstance(o, Facts)]
        if not failed:
            return persisted, outcomes, joined
        if len(runs) == 1:  # the whole table is infeasible: the single-machine finding
            raise InfeasibleError(outcomes[0])
        i = failed[0]
        j = i + 1 if i + 1 < len(runs) else i - 1
        lo, hi = min(i, j), max(i, j)
        runs[lo:hi + 1] = [runs[lo] + runs[hi]]
        joined += 1


def _publish(pieces: list[Any], facts: list[Facts], plan: Plan) -> tuple[Any, AuditReport]:
    """The published table (a persisted dask DataFrame: each piece with the input's columns
    and index, group ids made global by offsetting each piece's own) and its global audit
    (step 5 of :func:`anonymize`). The global pass left no tuple in two parts, so each class
    is whole in one partition. When no row was left out, the published sensitive values are
    the input's, whose ranges the first pass took: each piece's audit by those ranges is
    then the global audit's share, made by the task that published the piece (a generalized
    release) or by the one that finishes it (an anatomy release, whose group ids are only
    then global), with no pass of its own (2M rows: about 1 s saved)."""
    counts = np.asarray([(f.groups, f.rows) for f in facts], dtype=np.int64).reshape(-1, 2)
    group_offsets, row_offsets = starts(counts[:, 0]), starts(counts[:, 1])
    columns = [c for c in plan.meta.columns]
    out_meta = plan.meta.assign(**{GROUP_COLUMN: np.zeros(0, dtype=np.int64)})
    for q in plan.qi_cols if plan.options["publish"] == "generalize" else []:
        out_meta[q] = out_meta[q].astype(object)
    # An anatomy release's classes are its groups (each whole in its piece's partition).
    classes = plan.qi_cols if plan.options["publish"] == "generalize" else [GROUP_COLUMN]
    known = int(counts[:, 1].sum()) == plan.n
    # The pieces the task that made them audited need no second audit (their classes are
    # already whole in them); the others are audited in the task that finishes them.
    finished = [dask.delayed(_finish, nout=2)(
        p, int(g), int(r), columns, plan.index_name,
        plan.audit if known and f.audit is None else None)
        for p, f, g, r in zip(pieces, facts, group_offsets, row_offsets, strict=True)]
    parts, results = persist_pairs(finished)
    # Dask would turn text columns into pyarrow strings; every column keeps its dtype.
    with dask.config.set({"dataframe.convert-string": False}):
        table = dd.from_delayed(parts, meta=out_meta, verify_meta=False)
    if known:
        audits = [_shifted(f.audit, int(r)) if f.audit is not None else result
                  for f, result, r in zip(facts, results, row_offsets, strict=True)]
        numeric = numeric_sensitive(plan.meta, plan.sens_cols, plan.audit.hierarchies)
        return table, assemble(audits, plan.audit, numeric, plan.n)
    return table, audit(table, quasi_identifiers=classes, classes_whole=True,
                        sensitive=plan.sens_cols, k=plan.k, epsilon=plan.epsilon,
                        delta=plan.delta, metric=plan.metric, weights=plan.weights,
                        hierarchies=plan.hierarchies)


def _shifted(result: PartResult, offset: int) -> PartResult:
    """A piece's audit with its row positions counted from the table's first row."""
    classes, positions, counts, report = result
    return classes, positions + offset, counts, report


def anonymize(
    ddf: Any,
    *,
    quasi_identifiers: str | Sequence[str],
    sensitive: str | Sequence[str],
    k: int,
    epsilon: float,
    delta: float,
    metric: Any = "l1",
    weights: Any = None,
    hierarchies: Mapping[str, Any] | None = None,
    on_infeasible: str = "raise",
    init: str = "qi",
    search_limit: int | None = TABLE_SEARCH_LIMIT,
    moves: str = "auto",
    max_suppression: float = 0.0,
    arrange: bool = True,
    publish: str = "generalize",
) -> DaskAnonymization:
    """Anonymizes a dask DataFrame so that every published class satisfies
    (epsilon, delta)^k-dissimilarity; parameters as :func:`proxanon.anonymize`.

    1. One pass: missing values, the global range of each numeric sensitive column (every
       part is scaled by it), partition lengths, and quantile cuts of a QI key.
    2. A shuffle puts each row in the bucket of its key (one bucket per input partition),
       so each bucket holds QI-close rows. Buckets with fewer than k rows are joined to the
       next one.
    3. Each bucket is anonymized by :func:`proxanon.anonymize` in a task; a bucket that is
       infeasible alone is joined to its neighbour and redone.
    4. Classes that publish the same QI tuple in different parts are one class to an
       attacker: hashes of each part's tuples, then the tuples themselves, find them, and
       their rows are anonymized again together (after a few rounds, the colliding parts
       are merged whole).
    5. The result is audited globally: each class is then whole in one piece, so each
       piece's audit is its share of the global one (:func:`proxanon.dask.audit` when rows
       were left out, whose ranges need a pass of their own).

    The output keeps every input column and the index; rows are arranged by bucket, in input
    order within a bucket. Deterministic for a given partitioning.

    ``arrange=False`` skips the shuffle of step 2: each input partition is a bucket, for a
    table already partitioned by QI (e.g. a Parquet dataset partitioned by region).

    ``publish="anatomy"`` publishes each part's groups as found (docs/design/anatomy.md):
    no tuple is published, so step 4 has nothing to repair; see :class:`DaskAnonymization`.
    """
    started = time.perf_counter()
    job = plan_job(ddf, quasi_identifiers=quasi_identifiers, sensitive=sensitive, k=k,
               epsilon=epsilon, delta=delta, metric=metric, weights=weights,
               hierarchies=hierarchies, on_infeasible=on_infeasible,
               engine=dict(init=init, search_limit=search_limit, moves=moves,
                           max_suppression=max_suppression,
                           publish=_validate.choice(publish, "publish", _validate.PUBLISH)))
    inputs, bucket_sizes = arrange_buckets(ddf, job, arrange)
    seconds = {"prepare": time.perf_counter() - started}
    runs, joined_small = bucket_runs(bucket_sizes, k)
    tic = time.perf_counter()
    pieces, facts, joined_infeasible = _anonymize_runs(inputs, runs, job)
    seconds["parts"] = time.perf_counter() - tic
    tic = time.perf_counter()
    repaired = (repair(pieces, facts, job) if job.options["publish"] == "generalize"
                else Repair(pieces=pieces, facts=facts, colliding=0, rounds=0))
    seconds["repair"] = time.perf_counter() - tic
    tic = time.perf_counter()
    table, check = _publish(repaired.pieces, repaired.facts, job)
    seconds["publish"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started
    released = int(check.neighbour_counts.shape[0])
    report = DaskReport(
        satisfied=check.satisfied, n=released, groups=check.n_groups, k=check.k,
        epsilon=check.epsilon, delta=check.delta, max_risk=check.max_risk,
        vulnerability=check.vulnerability, partitions=job.parts, pieces=len(repaired.pieces),
        joined=joined_small + joined_infeasible, colliding_classes=repaired.colliding,
        repair_rounds=repaired.rounds, suppressed_rows=job.n - released, seconds=seconds)
    if not check.satisfied and on_infeasible == "raise":
        raise InfeasibleError(f"the published classes fail the global audit: max risk "
                              f"{check.max_risk:.4f}, {check.violating_groups.size} violating "
                              f"class(es); {report}")
    if job.options["publish"] == "anatomy":
        return DaskAnonymization(
            table=table.drop(columns=job.sens_cols), satisfied=check.satisfied,
            report=report, audit=check,
            sensitive_table=table.map_partitions(
                _sensitive_part, job.sens_cols,
                meta=_sensitive_part(job.meta.assign(**{GROUP_COLUMN: np.zeros(
                    0, dtype=np.int64)}), job.sens_cols)))
    return DaskAnonymization(table=table, satisfied=check.satisfied, report=report,
                             audit=check)


def _sensitive_part(table: pd.DataFrame, sens_cols: list[str]) -> pd.DataFrame:
    """One partition's share of an anatomy release's sensitive table (its groups are whole
    in it): the group and the sensitive columns, in :func:`anatomy_order`, no index."""
    order = anatomy_order(table, sens_cols, table[GROUP_COLUMN].to_numpy(dtype=np.int64))
    return table[[GROUP_COLUMN, *sens_cols]].iloc[order].reset_index(drop=True)
