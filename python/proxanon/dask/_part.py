"""The tasks that run on one part of a table on Dask: cutting an input partition into bucket
shares, anonymizing a bucket with the single-machine engine, and the facts the driver keeps
of each published piece (docs/guide/dask.md).

Invariant: every row carries its place in the input (``ROW``), so a part is anonymized in
input order whatever order its shares arrived in, and the result does not depend on the
order a shuffle delivers rows. Cost: each task is linear in its rows, but the sort a part
joined from several buckets needs, and the engine itself (near n log n).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import dask
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon import _validate
from proxanon._errors import InfeasibleError
from proxanon._messages import Text
from proxanon._results.anonymization import GROUP_COLUMN
from proxanon.anonymize import anonymize as anonymize_table
from proxanon.dask._audit import PartAudit, PartResult, audit_rows, in_order
from proxanon.dask._malloc import roomy

#: Hidden columns carried through every part: the row's place in the input (orders rows
#: within a part), its original index, and each QI's original value (to anonymize a row
#: again).
ROW = "_proxanon_row"
INDEX = "_proxanon_index"
ORIGINAL = "_proxanon_original_"


@dataclass(frozen=True)
class Facts:
    """What the driver keeps of a published piece without reading it: the 64-bit hashes of
    its distinct published tuples (sorted; none for an anatomy release, which publishes no
    tuple), its groups and its rows; and, where the task that made the piece audited it,
    that audit (row positions counted from the piece's first row)."""

    keys: NDArray[np.uint64]
    groups: int
    rows: int
    audit: PartResult | None = None


#: A run's second output: the facts of its published piece, or, when its rows are
#: infeasible alone, the single-machine error's message (its :class:`~proxanon._messages.Text`
#: names the options it suggests).
Outcome = Facts | str | Text


def tuple_hashes(table: pd.DataFrame, qi_cols: list[str]) -> NDArray[np.uint64]:
    """Each row's published tuple as a 64-bit hash. Published QI values are labels (text,
    in object columns, in every piece), so equal tuples hash alike in every piece."""
    hashes: NDArray[np.uint64] = pd.util.hash_pandas_object(
        table[qi_cols], index=False).to_numpy()
    return hashes


def facts_of(table: pd.DataFrame, tuples: list[str] | None, audit: PartAudit | None = None
             ) -> Facts:
    """The :class:`Facts` of a published piece; ``tuples``: its published QI columns, or
    None for an anatomy release; ``audit``: the settings to audit its classes by (classes
    by ``tuples``), if any."""
    audited = (None if audit is None
               else audit_rows(table, np.arange(len(table), dtype=np.int64), audit))
    # A generalized piece's audit classes are its distinct published tuples, a row each.
    distinct = table if audited is None else audited[0]
    keys = (np.unique(tuple_hashes(distinct, tuples)) if tuples
            else np.zeros(0, dtype=np.uint64))
    return Facts(keys, int(table[GROUP_COLUMN].nunique()), len(table), audited)


def persist_pairs(tasks: list[Any]) -> tuple[list[Any], list[Any]]:
    """The first outputs of two-output tasks (a table, and its facts or audit), persisted,
    and their second outputs, computed: both go in one call, so each task runs once (a
    second call would run it again once the first had released it)."""
    done = dask.persist(*[t[0] for t in tasks], *[t[1] for t in tasks])
    return list(done[:len(tasks)]), list(dask.compute(*done[len(tasks):]))


def _hidden(frame: pd.DataFrame, rows: NDArray[np.int64]) -> pd.DataFrame:
    """``frame``'s rows with the hidden columns of a share (their places ``rows`` in the
    input and their index), on a fresh RangeIndex. The original QI values are added by
    :func:`run`, so that shares move between workers without them."""
    out = frame.reset_index(drop=True)
    return out.assign(**{ROW: rows, INDEX: frame.index.to_numpy()})


@roomy
def prepare(frame: pd.DataFrame, start: int) -> pd.DataFrame:
    """An input partition (its first row is the input's ``start``) as one bucket."""
    return _hidden(frame, np.arange(start, start + len(frame), dtype=np.int64))


@roomy
def bucket_shares(frame: pd.DataFrame, start: int, key: str, cuts: NDArray[Any]
                  ) -> list[Any]:
    """An input partition (its first row is the input's ``start``) cut by bucket: the rows
    in each bucket 0 .. len(cuts), in input order and with the hidden columns, then the
    row count of each. A row's bucket is its quantile cell of the QI ``key``."""
    values = (frame[key].astype(str).to_numpy() if cuts.dtype == object
              else frame[key].to_numpy(dtype=np.float64))
    codes = np.searchsorted(cuts, values, side="right")
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(cuts) + 2), side="left")
    # One copy in bucket order; the shares are slices of it.
    arranged = _hidden(frame.iloc[order], start + order)
    shares: list[Any] = [arranged.iloc[lo:hi] for lo, hi in itertools.pairwise(bounds)]
    return [*shares, np.diff(bounds)]


def _originals(published: pd.DataFrame, qi_cols: list[str]) -> pd.DataFrame:
    """A published part back as input rows: original QI values, no group column."""
    frame = published.drop(columns=[GROUP_COLUMN])
    for q in qi_cols:
        frame[q] = frame[ORIGINAL + q]
    return frame


@roomy
def run(parts: list[pd.DataFrame], qi_cols: list[str], index_name: Any,
        options: dict[str, Any], published: bool, audit: PartAudit | None
        ) -> tuple[pd.DataFrame | None, Outcome]:
    """Anonymizes the rows of ``parts`` (bucket shares, or published pieces when
    ``published``) together with the single-machine engine, in input order.

    Returns the published rows and their :class:`Facts` (with the audit of their classes by
    ``audit``, if given), or None and the single-machine error's message when the rows are
    infeasible alone.
    """
    frames = [_originals(p, qi_cols) if published else p for p in parts]
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    if not published:  # each QI's original value, to anonymize the row again if need be
        frame = frame.assign(**{ORIGINAL + q: frame[q] for q in qi_cols})
    frame = in_order(frame, ROW)  # a bucket is in input order; joined parts may not be
    frame = frame.drop(columns=[INDEX]).set_axis(
        pd.Index(frame[INDEX].to_numpy(), name=index_name), axis=0)
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
    return table, facts_of(table, None if result.sensitive_table is not None else qi_cols,
                           audit)


@roomy
def take(table: pd.DataFrame, qi_cols: list[str], tuples: pd.DataFrame, inside: bool
         ) -> pd.DataFrame:
    """The rows of ``table`` whose published tuple is (``inside``) or is not in ``tuples``."""
    hit = table[qi_cols].merge(tuples.assign(_hit=True), on=qi_cols, how="left")["_hit"]
    mask = hit.fillna(False).to_numpy(dtype=bool)
    return table[mask if inside else ~mask]


@roomy
def rest(table: pd.DataFrame, qi_cols: list[str], tuples: pd.DataFrame,
         audit: PartAudit | None) -> tuple[pd.DataFrame, Facts]:
    """The rows of ``table`` outside ``tuples``, and their facts (audited by ``audit``)."""
    kept = take(table, qi_cols, tuples, False)
    return kept, facts_of(kept, qi_cols, audit)
