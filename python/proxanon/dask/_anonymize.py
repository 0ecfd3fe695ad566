"""``anonymize`` on a dask DataFrame: the single-machine ``anonymize`` per part, then a global
pass for what crosses parts (docs/design/definitions.md; docs/guide/dask.md)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._errors import InfeasibleError
from proxanon._pipeline.anatomy import anatomy_order
from proxanon._results.anonymization import GROUP_COLUMN
from proxanon._results.audit import AuditReport
from proxanon._words import Text
from proxanon.anonymize import TABLE_SEARCH_LIMIT
from proxanon.anonymize import anonymize as anonymize_table
from proxanon.dask._audit import (
    audit,
    audit_known,
    check_columns,
    global_ranges,
    missing_counts,
    numeric_sensitive,
    refuse_missing,
)
from proxanon.tables import is_number

#: Hidden columns carried through every part: the row's place in the input (orders rows
#: within a part, so results do not depend on the order a shuffle delivers them), its
#: original index, its bucket, and each QI's original value (to anonymize a row again).
ROW = "_proxanon_row"
INDEX = "_proxanon_index"
BUCKET = "_proxanon_bucket"
ORIGINAL = "_proxanon_original_"

#: Rounds of repairing classes that collide across parts by re-anonymizing their rows
#: together; after these, colliding parts are merged whole (the piece count then falls every
#: round, so the pass ends).
TUPLE_REPAIR_ROUNDS = 4


@dataclass(frozen=True)
class DaskReport:
    """The numbers of one anonymization on Dask.

    ``satisfied``, ``max_risk``, ``vulnerability``, ``groups``: from the global audit of
    the published classes (:func:`proxanon.dask.audit`). ``partitions``: of the input;
    ``pieces``: the parts anonymized on their own at the end; ``joined``: buckets joined to a
    neighbour (fewer than k rows, or infeasible alone); ``colliding_classes``: classes found
    in more than one part and repaired; ``repair_rounds``: rounds of that global pass.
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


def _originals(published: pd.DataFrame, qi_cols: list[str]) -> pd.DataFrame:
    """A published part back as input rows: original QI values, no group column."""
    frame = published.drop(columns=[GROUP_COLUMN])
    for q in qi_cols:
        frame[q] = frame[ORIGINAL + q]
    return frame


def _prepare(frame: pd.DataFrame, offsets: NDArray[np.int64], key: str,
             cuts: NDArray[Any], qi_cols: list[str],
             partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    """Adds the hidden columns; the bucket is the row's quantile cell of the QI key."""
    start = 0 if partition_info is None else int(offsets[partition_info["number"]])
    out = frame.copy()
    out[ROW] = np.arange(start, start + len(frame), dtype=np.int64)
    values = (frame[key].astype(str).to_numpy() if cuts.dtype == object
              else frame[key].to_numpy(dtype=np.float64))
    out[BUCKET] = np.searchsorted(cuts, values, side="right").astype(np.int64)
    for q in qi_cols:
        out[ORIGINAL + q] = frame[q]
    out.index = pd.RangeIndex(len(out))
    out[INDEX] = frame.index.to_numpy()
    return out


def _run(parts: list[pd.DataFrame], qi_cols: list[str], index_name: Any,
         options: dict[str, Any], published: bool) -> tuple[pd.DataFrame | None, str | Text]:
    """Anonymizes the rows of ``parts`` together with the single-machine engine.

    Rows are put in input order first (deterministic whatever order they arrived in).
    Returns the published rows and "", or None and the single-machine error's message (its
    :class:`~proxanon._words.Text`, which names the options it suggests) when the rows are
    infeasible alone.
    """
    frame = pd.concat([_originals(p, qi_cols) if published else p for p in parts])
    frame = frame.sort_values(ROW, kind="stable")
    frame.index = pd.Index(frame.pop(INDEX).to_numpy(), name=index_name)
    try:
        with _validate.rows_in_table(frame[ROW].to_numpy(dtype=np.int64)):
            result = anonymize_table(frame, **options)
    except InfeasibleError as exc:
        return None, exc.text if str(exc) else "infeasible"
    table = result.table
    if result.sensitive_table is not None:  # anatomy: every column, beside the group
        released = result.groups >= 0
        table = frame[released].assign(**{GROUP_COLUMN: result.groups[released]})
    table[INDEX] = table.index.to_numpy()
    table.index = pd.RangeIndex(len(table))
    return table, ""


def _classes(table: pd.DataFrame, qi_cols: list[str], piece: int) -> pd.DataFrame:
    """The published tuples of a part, with their row counts."""
    rows = table.groupby(qi_cols, sort=False).size()
    return rows.rename("rows").reset_index().assign(piece=piece)


def _take(table: pd.DataFrame, qi_cols: list[str], tuples: pd.DataFrame, inside: bool
          ) -> pd.DataFrame:
    """The rows of ``table`` whose published tuple is (``inside``) or is not in ``tuples``."""
    hit = table[qi_cols].merge(tuples.assign(_hit=True), on=qi_cols, how="left")["_hit"]
    mask = hit.fillna(False).to_numpy(dtype=bool)
    return table[mask if inside else ~mask]


def _connected(where: pd.DataFrame, qi_cols: list[str], count: int) -> list[list[int]]:
    """The parts linked by sharing a published tuple, as lists of part numbers (union-find
    over ``count`` parts; each list ascending, lists in order of their first part)."""
    parent = list(range(count))

    def root(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for _, same in where.groupby(qi_cols, sort=False)["piece"]:
        members = [root(int(p)) for p in same]
        for m in members[1:]:
            a, b = root(m), root(members[0])
            parent[max(a, b)] = min(a, b)
    clusters: dict[int, list[int]] = {}
    for p in range(count):
        clusters.setdefault(root(p), []).append(p)
    return list(clusters.values())


def _finish(table: pd.DataFrame, offset: int, columns: list[str], index_name: Any
            ) -> pd.DataFrame:
    """The published part as the user sees it: input columns and index, global group ids."""
    table = table.sort_values(ROW, kind="stable")
    local = np.unique(table[GROUP_COLUMN].to_numpy(), return_inverse=True)[1]
    out = table[columns].copy()
    out[GROUP_COLUMN] = offset + local.astype(np.int64)
    out.index = pd.Index(table[INDEX].to_numpy(), name=index_name)
    return out


def _group_count(table: pd.DataFrame) -> tuple[int, int]:
    """A piece's classes and rows."""
    return int(table[GROUP_COLUMN].nunique()), len(table)


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """The settings every step of :func:`anonymize` reads, fixed on the driver by
    :func:`_plan`: the checked columns, the privacy settings of the global audit, the
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


@dataclass(frozen=True, kw_only=True)
class _Repair:
    """The outcome of the global pass over classes that cross parts (:func:`_repair`)."""

    pieces: list[Any]
    colliding: int
    rounds: int


def _plan(ddf: Any, *, quasi_identifiers: str | Sequence[str],
          sensitive: str | Sequence[str], k: int, epsilon: float, delta: float, metric: Any,
          weights: Any, hierarchies: Mapping[str, Any] | None, on_infeasible: str,
          engine: dict[str, Any]) -> _Plan:
    """Validates the call and makes the first pass (step 1 of :func:`anonymize`): missing
    values, the global range of each numeric sensitive column, partition lengths and the
    quantile cuts of the QI key. ``engine``: the remaining single-machine options."""
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
    return _Plan(qi_cols=qi_cols, sens_cols=sens_cols, k=k, epsilon=epsilon, delta=delta,
                 metric=metric, weights=weights, hierarchies=hierarchies,
                 on_infeasible=on_infeasible, options=options, meta=meta,
                 index_name=meta.index.name, n=n, parts=parts, key=key, cuts=cuts,
                 offsets=np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64))


def _arrange(ddf: Any, plan: _Plan, arrange: bool) -> tuple[list[Any], NDArray[np.int64]]:
    """The buckets (step 2 of :func:`anonymize`): a range shuffle puts each row in the
    bucket of its key (or, without ``arrange``, each input partition is a bucket). Returns
    the persisted buckets as delayed frames, and their row counts."""
    prepared = ddf.map_partitions(
        _prepare, plan.offsets, plan.key, plan.cuts, plan.qi_cols,
        meta=_prepare(plan.meta, plan.offsets, plan.key, plan.cuts, plan.qi_cols))
    if arrange:
        # A range shuffle as plain tasks: each partition cut into its buckets' rows, bucket
        # b the concatenation of every partition's share (the bucket is then the index).
        # Dask's set_index shuffle sorted and moved the whole table through its shuffle
        # service, about 5 of 7 s of this step on 2M rows; the rows of a bucket are the same
        # either way, and each part is put in input order before it is anonymized.
        buckets = len(plan.cuts) + 1
        shares = [dask.delayed(_bucket_shares, nout=buckets)(part, buckets)
                  for part in prepared.to_delayed()]
        inputs = list(dask.persist(*[dask.delayed(_bucket)([share[b] for share in shares])
                                     for b in range(buckets)]))
    else:
        inputs = prepared.map_partitions(pd.DataFrame.set_index, BUCKET).persist().to_delayed()
    sizes = np.asarray(dask.compute(*[dask.delayed(len)(p) for p in inputs]), dtype=np.int64)
    return inputs, sizes


def _bucket_shares(frame: pd.DataFrame, buckets: int) -> list[pd.DataFrame]:
    """The rows of ``frame`` in each bucket 0 .. buckets-1 (input order kept within each)."""
    codes = frame[BUCKET].to_numpy(dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(buckets + 1), side="left")
    return [frame.iloc[order[bounds[b]:bounds[b + 1]]] for b in range(buckets)]


def _bucket(shares: list[pd.DataFrame]) -> pd.DataFrame:
    """One bucket from every partition's share of it, indexed by the bucket."""
    return pd.concat(shares, ignore_index=True).set_index(BUCKET)


def _runs(bucket_sizes: NDArray[np.int64], k: int) -> tuple[list[list[int]], int]:
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


def _anonymize_runs(inputs: list[Any], runs: list[list[int]], plan: _Plan
                    ) -> tuple[list[Any], int]:
    """Each run of buckets anonymized by :func:`proxanon.anonymize` in a task (step 3 of
    :func:`anonymize`); a run infeasible alone is joined to its neighbour and redone.
    Returns the persisted pieces and how many joins that took."""
    runs = [list(run) for run in runs]
    joined = 0
    while True:
        tasks = [dask.delayed(_run, nout=2)([inputs[b] for b in run], plan.qi_cols,
                                            plan.index_name, plan.options, False)
                 for run in runs]
        persisted = dask.persist(*[t[0] for t in tasks])
        reasons = dask.compute(*[t[1] for t in tasks])
        failed = [i for i, reason in enumerate(reasons) if reason]
        if not failed:
            return list(persisted), joined
        if len(runs) == 1:  # the whole table is infeasible: the single-machine finding
            raise InfeasibleError(reasons[0])
        i = failed[0]
        j = i + 1 if i + 1 < len(runs) else i - 1
        lo, hi = min(i, j), max(i, j)
        runs[lo:hi + 1] = [runs[lo] + runs[hi]]
        joined += 1


def _repair_tuples(pieces: list[Any], where: pd.DataFrame, tuples: pd.DataFrame,
                   plan: _Plan) -> list[Any] | None:
    """The rows of colliding ``tuples`` from every part anonymized together: tuples in QI
    order, packed into jobs of about one bucket's rows. Returns the new pieces (the rest of
    each part, then the jobs' tables), or None when a job is infeasible."""
    qi_cols = plan.qi_cols
    job_rows = max(plan.k, -(-plan.n // plan.parts))  # a job holds about one bucket's rows
    sizes = where.groupby(qi_cols, sort=True)["rows"].sum().reset_index()
    batch = np.cumsum(sizes["rows"].to_numpy()) // job_rows
    jobs = []
    for b in np.unique(batch):
        chosen = sizes.loc[batch == b, qi_cols]
        holders = sorted(set(where.merge(chosen, on=qi_cols)["piece"].tolist()))
        jobs.append(dask.delayed(_run, nout=2)(
            [dask.delayed(_take)(pieces[p], qi_cols, chosen, True) for p in holders],
            qi_cols, plan.index_name, plan.options, True))
    tables = dask.persist(*[j[0] for j in jobs])
    if any(dask.compute(*[j[1] for j in jobs])):
        return None
    involved = set(where["piece"].tolist())
    rest = [dask.delayed(_take)(pieces[p], qi_cols, tuples, False)
            if p in involved else pieces[p] for p in range(len(pieces))]
    return list(dask.persist(*rest)) + list(tables)


def _merge_parts(pieces: list[Any], where: pd.DataFrame, plan: _Plan) -> list[Any]:
    """The parts that share a colliding tuple anonymized again whole (connected parts at
    once); raises :class:`InfeasibleError` when such a union is infeasible."""
    merged: list[tuple[Any, Any]] = []
    for members in _connected(where, plan.qi_cols, len(pieces)):
        if len(members) == 1:
            merged.append((pieces[members[0]], ""))
            continue
        table, reason = dask.delayed(_run, nout=2)([pieces[p] for p in members], plan.qi_cols,
                                                    plan.index_name, plan.options, True)
        merged.append((table, reason))
    done = dask.persist(*[t for t, _ in merged])
    failures = [r for r in dask.compute(*[r for _, r in merged]) if r]
    if failures:
        raise InfeasibleError(failures[0])
    return list(done)


def _repair(pieces: list[Any], plan: _Plan) -> _Repair:
    """The global pass (step 4 of :func:`anonymize`): classes that publish the same QI tuple
    in different parts are one class to an attacker; a groupby on the published tuple finds
    them, and their rows are anonymized again together (after
    :data:`TUPLE_REPAIR_ROUNDS` rounds, the colliding parts are merged whole)."""
    qi_cols = plan.qi_cols
    class_meta = pd.DataFrame({q: pd.Series(dtype=object) for q in qi_cols}).assign(
        rows=pd.Series(dtype=np.int64), piece=pd.Series(dtype=np.int64))
    colliding_total = 0
    rounds = 0
    while len(pieces) > 1:
        seen = dd.from_delayed([dask.delayed(_classes)(p, qi_cols, i)
                                for i, p in enumerate(pieces)], meta=class_meta,
                               verify_meta=False)
        counts = seen.groupby(qi_cols).piece.nunique()
        colliding = counts[counts > 1].compute()
        if colliding.empty:
            break
        rounds += 1
        tuples = colliding.index.to_frame(index=False).sort_values(qi_cols, ignore_index=True)
        colliding_total += len(tuples)
        where = seen.merge(tuples, on=qi_cols).compute().sort_values([*qi_cols, "piece"])
        repaired = (_repair_tuples(pieces, where, tuples, plan)
                    if rounds <= TUPLE_REPAIR_ROUNDS else None)
        pieces = _merge_parts(pieces, where, plan) if repaired is None else repaired
    return _Repair(pieces=pieces, colliding=colliding_total, rounds=rounds)


def _publish(pieces: list[Any], plan: _Plan) -> tuple[Any, NDArray[np.int64]]:
    """The published table (a persisted dask DataFrame): each piece with the input's columns
    and index, and group ids made global by offsetting each piece's own; and the rows of
    each of its partitions (one per piece)."""
    counts = np.asarray(dask.compute(*[dask.delayed(_group_count)(p) for p in pieces]),
                        dtype=np.int64).reshape(-1, 2)
    counts_per_piece, rows_per_piece = counts[:, 0], counts[:, 1]
    group_offsets = np.concatenate([[0], np.cumsum(counts_per_piece)[:-1]])
    columns = [c for c in plan.meta.columns]
    out_meta = plan.meta.assign(**{GROUP_COLUMN: np.zeros(0, dtype=np.int64)})
    for q in plan.qi_cols if plan.options["publish"] == "generalize" else []:
        out_meta[q] = out_meta[q].astype(object)
    # Dask would turn text columns into pyarrow strings; every column keeps its dtype.
    with dask.config.set({"dataframe.convert-string": False}):
        table = dd.from_delayed([dask.delayed(_finish)(p, int(o), columns, plan.index_name)
                                 for p, o in zip(pieces, group_offsets, strict=True)],
                                meta=out_meta, verify_meta=False).persist()
    return table, rows_per_piece


def _audit_published(table: Any, rows: NDArray[np.int64], plan: _Plan) -> AuditReport:
    """The global audit of the published classes (step 5 of :func:`anonymize`); the global
    pass left no tuple in two parts, so each class is whole in one partition. ``rows``: of
    each partition. When no row was left out, the published sensitive values are the
    input's, so their ranges are the first pass's and the audit needs no pass of its own
    for them (2M rows: about 1 s)."""
    # An anatomy release's classes are its groups (each whole in its piece's partition).
    classes = plan.qi_cols if plan.options["publish"] == "generalize" else [GROUP_COLUMN]
    common: dict[str, Any] = dict(
        sensitive=plan.sens_cols, k=plan.k, epsilon=plan.epsilon, delta=plan.delta,
        metric=plan.metric, weights=plan.weights, hierarchies=plan.hierarchies)
    if int(rows.sum()) == plan.n:
        return audit_known(table, quasi_identifiers=classes, sizes=rows,
                           ranges=plan.options["sensitive_ranges"], **common)
    return audit(table, quasi_identifiers=classes, classes_whole=True, **common)


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
       attacker: a groupby on the published tuple finds them, and their rows are
       anonymized again together (after a few rounds, the colliding parts are merged whole).
    5. The result is audited globally (:func:`proxanon.dask.audit`).

    The output keeps every input column and the index; rows are arranged by bucket, in input
    order within a bucket. Deterministic for a given partitioning.

    ``arrange=False`` skips the shuffle of step 2: each input partition is a bucket, for a
    table already partitioned by QI (e.g. a Parquet dataset partitioned by region).

    ``publish="anatomy"`` publishes each part's groups as found (docs/design/anatomy.md):
    no tuple is published, so step 4 has nothing to repair; see :class:`DaskAnonymization`.
    """
    started = time.perf_counter()
    plan = _plan(ddf, quasi_identifiers=quasi_identifiers, sensitive=sensitive, k=k,
                 epsilon=epsilon, delta=delta, metric=metric, weights=weights,
                 hierarchies=hierarchies, on_infeasible=on_infeasible,
                 engine=dict(init=init, search_limit=search_limit, moves=moves,
                             max_suppression=max_suppression,
                             publish=_validate.choice(publish, "publish", _validate.PUBLISH)))
    inputs, bucket_sizes = _arrange(ddf, plan, arrange)
    seconds = {"prepare": time.perf_counter() - started}
    runs, joined_small = _runs(bucket_sizes, k)
    tic = time.perf_counter()
    pieces, joined_infeasible = _anonymize_runs(inputs, runs, plan)
    seconds["parts"] = time.perf_counter() - tic
    tic = time.perf_counter()
    repair = (_repair(pieces, plan) if plan.options["publish"] == "generalize"
              else _Repair(pieces=pieces, colliding=0, rounds=0))
    seconds["repair"] = time.perf_counter() - tic
    tic = time.perf_counter()
    table, published_rows = _publish(repair.pieces, plan)
    seconds["publish"] = time.perf_counter() - tic
    tic = time.perf_counter()
    check = _audit_published(table, published_rows, plan)
    seconds["audit"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started
    released = int(check.neighbour_counts.shape[0])
    report = DaskReport(
        satisfied=check.satisfied, n=released, groups=check.n_groups, k=check.k,
        epsilon=check.epsilon, delta=check.delta, max_risk=check.max_risk,
        vulnerability=check.vulnerability, partitions=plan.parts, pieces=len(repair.pieces),
        joined=joined_small + joined_infeasible, colliding_classes=repair.colliding,
        repair_rounds=repair.rounds, suppressed_rows=plan.n - released, seconds=seconds)
    if not check.satisfied and on_infeasible == "raise":
        raise InfeasibleError(f"the published classes fail the global audit: max risk "
                              f"{check.max_risk:.4f}, {check.violating_groups.size} violating "
                              f"class(es); {report}")
    if plan.options["publish"] == "anatomy":
        return DaskAnonymization(
            table=table.drop(columns=plan.sens_cols), satisfied=check.satisfied,
            report=report, audit=check,
            sensitive_table=table.map_partitions(
                _sensitive_part, plan.sens_cols,
                meta=_sensitive_part(plan.meta.assign(**{GROUP_COLUMN: np.zeros(
                    0, dtype=np.int64)}), plan.sens_cols)))
    return DaskAnonymization(table=table, satisfied=check.satisfied, report=report,
                             audit=check)


def _sensitive_part(table: pd.DataFrame, sens_cols: list[str]) -> pd.DataFrame:
    """One partition's share of an anatomy release's sensitive table (its groups are whole
    in it): the group and the sensitive columns, in :func:`anatomy_order`, no index."""
    order = anatomy_order(table, sens_cols, table[GROUP_COLUMN].to_numpy(dtype=np.int64))
    return table[[GROUP_COLUMN, *sens_cols]].iloc[order].reset_index(drop=True)
