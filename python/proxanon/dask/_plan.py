"""Steps 1 and 2 of ``anonymize`` on Dask: the call checked and the first pass over the
table (:func:`plan_job`), then the rows put in buckets of QI-close rows (:func:`arrange_buckets`)
(docs/guide/dask.md).

Invariant: a bucket's shares, concatenated, hold its rows in input order; buckets are
disjoint and cover the table. Cost: one pass for counts, ranges and quantile cuts; one
range shuffle, which moves each row once (no sort); the driver holds a few numbers per
column and partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dask
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._results.anonymization import GROUP_COLUMN
from proxanon.dask._audit import (
    PartAudit,
    check_columns,
    global_ranges,
    known_settings,
    missing_counts,
    numeric_sensitive,
    refuse_missing,
    starts,
)
from proxanon.dask._part import bucket_shares, prepare
from proxanon.tables import is_number


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The settings every step of :func:`proxanon.dask.anonymize` reads, fixed on the driver by
    :func:`plan_job`: the checked columns, the privacy settings of the global audit, the
    keyword arguments of the single-machine :func:`proxanon.anonymize` for one part
    (``options``), and what the first pass found (rows, partitions, the bucket cuts)."""

    qi_cols: list[str]
    sens_cols: list[str]
    k: int
    epsilon: float
    delta: float
    metric: Any
    weights: Any
    hierarchies: Mapping[str, Any] | None
    on_infeasible: str
    options: dict[str, Any]
    meta: pd.DataFrame
    index_name: Any
    n: int
    parts: int
    key: str
    cuts: NDArray[Any]
    offsets: NDArray[np.int64]
    audit: PartAudit

    @property
    def piece_audit(self) -> PartAudit | None:
        """The audit each task runs on the piece it publishes: a generalized release's
        classes are its published tuples, whole in one piece once the global pass is done;
        an anatomy release's groups are audited once their ids are global."""
        return self.audit if self.options["publish"] == "generalize" else None


def plan_job(ddf: Any, *, quasi_identifiers: str | Sequence[str],
             sensitive: str | Sequence[str], k: int, epsilon: float, delta: float,
             metric: Any, weights: Any, hierarchies: Mapping[str, Any] | None,
             on_infeasible: str, engine: dict[str, Any]) -> Plan:
    """Validates the call and makes the first pass (step 1 of
    :func:`proxanon.dask.anonymize`): missing values, the global range of each numeric
    sensitive column, partition lengths and the quantile cuts of the QI key. ``engine``: the
    remaining single-machine options."""
    qi_cols, sens_cols = check_columns(ddf, quasi_identifiers, sensitive)
    # k, epsilon and delta checked before any pass over the table (its rows, counted later,
    # are taken to be k here: k > n is named when they are known).
    checked_k = _validate.integer(k, "k", minimum=1)
    _validate.privacy(checked_k, epsilon, delta, checked_k)
    meta = ddf._meta
    hidden = [c for c in meta.columns if str(c).startswith("_proxanon_")]
    if GROUP_COLUMN in meta.columns or hidden:
        raise ValueError(f"the table already has column(s) "
                         f"{[GROUP_COLUMN] if GROUP_COLUMN in meta.columns else hidden}, "
                         "which the published table uses; rename them first")
    numeric = numeric_sensitive(meta, sens_cols, hierarchies)
    # Rows are arranged by the first numeric QI, else by the text of the first QI.
    key = next((q for q in qi_cols if is_number(meta[q].dtype)), qi_cols[0])
    by_text = not is_number(meta[key].dtype)
    parts = ddf.npartitions
    key_values = ddf[key].astype(str) if by_text else ddf[key]
    lengths, missing, minima, maxima, distinct = dask.compute(
        ddf.map_partitions(len), missing_counts(ddf, qi_cols + sens_cols),
        ddf[numeric].min(), ddf[numeric].max(),
        key_values.drop_duplicates() if by_text or parts == 1 else key_values.quantile(
            np.arange(1, parts) / parts))
    refuse_missing(missing)
    sizes = np.asarray(lengths, dtype=np.int64)
    n = int(sizes.sum())
    if n == 0:
        raise ValueError("the table is empty: it needs at least one row")
    options: dict[str, Any] = dict(
        quasi_identifiers=qi_cols, sensitive=sens_cols, k=k, epsilon=epsilon, delta=delta,
        metric=metric, weights=weights, hierarchies=hierarchies, on_infeasible=on_infeasible,
        **engine, sensitive_ranges=global_ranges(minima, maxima, metric),
        # One thread per task: a worker runs as many tasks at once as it has threads.
        n_threads=1)
    if by_text:
        values = np.sort(np.asarray(distinct, dtype=object))
        cuts = values[np.linspace(0, values.size, parts + 1).astype(np.int64)[1:-1]]
    elif parts == 1:
        cuts = np.zeros(0)
    else:
        cuts = np.unique(np.asarray(distinct, dtype=np.float64))
    audit = known_settings(
        quasi_identifiers=qi_cols if engine["publish"] == "generalize" else [GROUP_COLUMN],
        sensitive=sens_cols, columns=[*meta.columns, GROUP_COLUMN], k=k, epsilon=epsilon,
        delta=delta, metric=metric, weights=weights, hierarchies=hierarchies,
        ranges=options["sensitive_ranges"])
    return Plan(qi_cols=qi_cols, sens_cols=sens_cols, k=k, epsilon=epsilon, delta=delta,
                metric=metric, weights=weights, hierarchies=hierarchies,
                on_infeasible=on_infeasible, options=options, meta=meta,
                index_name=meta.index.name, n=n, parts=parts, key=key, cuts=cuts,
                offsets=starts(sizes), audit=audit)


def arrange_buckets(ddf: Any, plan: Plan, arrange: bool
                    ) -> tuple[list[list[Any]], NDArray[np.int64]]:
    """The buckets (step 2 of :func:`proxanon.dask.anonymize`): a range shuffle puts each
    row in the bucket of its key (or, without ``arrange``, each input partition is a
    bucket). Returns each bucket as its persisted shares (delayed frames that, concatenated,
    hold its rows in input order), and the buckets' row counts."""
    parts = ddf.to_delayed()
    if not arrange:
        inputs = dask.persist(*[dask.delayed(prepare)(part, int(start))
                                for part, start in zip(parts, plan.offsets, strict=True)])
        sizes = dask.compute(*[dask.delayed(len)(p) for p in inputs])
        return [[p] for p in inputs], np.asarray(sizes, dtype=np.int64)
    # A range shuffle as plain tasks: each partition cut into its buckets' shares; the task
    # that anonymizes a bucket concatenates its shares, so no task pins a bucket to a worker
    # before the scheduler balances the anonymizing tasks. (Dask's set_index shuffle sorted
    # and moved the whole table through its shuffle service, about 5 of 7 s of this step on
    # 2M rows.)
    buckets = len(plan.cuts) + 1
    cut = [dask.delayed(bucket_shares, nout=buckets + 1)(
        part, int(start), plan.key, plan.cuts)
        for part, start in zip(parts, plan.offsets, strict=True)]
    # The row counts in the same call as the shares, so each partition is cut once.
    done = dask.persist(*[piece[b] for piece in cut for b in range(buckets)],
                        dask.delayed(np.sum)([piece[buckets] for piece in cut], axis=0))
    shares = [[done[p * buckets + b] for p in range(len(cut))] for b in range(buckets)]
    return shares, np.asarray(dask.compute(done[-1])[0], dtype=np.int64)


def bucket_runs(bucket_sizes: NDArray[np.int64], k: int) -> tuple[list[list[int]], int]:
    """Runs of adjacent buckets, each with at least k rows (empty buckets vanish), and how
    many buckets were joined to a neighbour to make them."""
    runs: list[list[int]] = []
    joined = 0
    for b in range(len(bucket_sizes)):
        if bucket_sizes[b] == 0:
            continue
        if runs and sum(bucket_sizes[r] for r in runs[-1]) < k:
            runs[-1].append(b)
            joined += 1
        else:
            runs.append([b])
    if len(runs) > 1 and sum(bucket_sizes[r] for r in runs[-1]) < k:
        runs[-2].extend(runs.pop())
        joined += 1
    return runs, joined
