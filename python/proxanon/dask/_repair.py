"""Step 4 of ``anonymize`` on Dask: classes that publish the same QI tuple in different
pieces are one class to an attacker, so their rows are anonymized again together
(docs/guide/dask.md).

Invariant: when :func:`repair` returns, no published tuple occurs in two pieces, so each
class is whole in one piece and the pieces can be audited one by one. Cost per round: the
driver compares the hashes of every piece's distinct tuples (8 bytes a class, already in
the pieces' :class:`~proxanon.dask._part.Facts`); only pieces holding a hash seen twice
send those tuples; the repair jobs move only the rows of colliding classes. After
:data:`TUPLE_REPAIR_ROUNDS` rounds, colliding pieces are merged whole, so the piece count
falls every round and the pass ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dask
import numpy as np
import pandas as pd

from proxanon._errors import InfeasibleError
from proxanon.dask._malloc import roomy
from proxanon.dask._part import Facts, persist_pairs, rest, run, take, tuple_hashes
from proxanon.dask._plan import Plan

#: Rounds of repairing classes that collide across parts by re-anonymizing their rows
#: together; after these, colliding parts are merged whole (the piece count then falls every
#: round, so the pass ends).
TUPLE_REPAIR_ROUNDS = 4


@dataclass(frozen=True, kw_only=True)
class Repair:
    """The outcome of the global pass (:func:`repair`): the pieces (persisted) and their
    facts, the colliding classes found, and the rounds it took."""

    pieces: list[Any]
    facts: list[Facts]
    colliding: int
    rounds: int


@roomy
def _classes(table: pd.DataFrame, qi_cols: list[str], piece: int,
             keys: np.ndarray) -> pd.DataFrame:
    """The published tuples of a piece whose hash is among ``keys``, with their row counts."""
    chosen = table[np.isin(tuple_hashes(table, qi_cols), keys)]
    rows = chosen.groupby(qi_cols, sort=False).size()
    return rows.rename("rows").reset_index().assign(piece=piece)


def _collisions(pieces: list[Any], facts: list[Facts], qi_cols: list[str]) -> pd.DataFrame:
    """The published tuples found in more than one piece: one row per tuple and piece, with
    its row count there (columns ``qi_cols``, ``rows``, ``piece``), sorted by tuple then
    piece. Tuples are compared whole after their hashes matched (a hash shared by two
    different tuples is no collision)."""
    every = np.concatenate([f.keys for f in facts])
    owner = np.repeat(np.arange(len(facts)), [f.keys.size for f in facts])
    distinct, seen = np.unique(every, return_counts=True)
    shared = distinct[seen > 1]
    holders = np.unique(owner[np.isin(every, shared)]).tolist()
    found = list(dask.compute(*[dask.delayed(_classes)(pieces[p], qi_cols, p, shared)
                                for p in holders]))
    if not found:
        return pd.DataFrame(columns=[*qi_cols, "rows", "piece"])
    classes = pd.concat(found, ignore_index=True)
    pieces_per_tuple = classes.groupby(qi_cols, sort=False)["piece"].transform("nunique")
    return classes[pieces_per_tuple.to_numpy() > 1].sort_values(
        [*qi_cols, "piece"], ignore_index=True)


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


def _repair_tuples(pieces: list[Any], facts: list[Facts], where: pd.DataFrame,
                   tuples: pd.DataFrame, plan: Plan) -> tuple[list[Any], list[Facts]] | None:
    """The rows of colliding ``tuples`` from every part anonymized together: tuples in QI
    order, packed into jobs of about one bucket's rows. Returns the new pieces and their
    facts (the rest of each part, then the jobs' tables), or None when a job is
    infeasible."""
    qi_cols = plan.qi_cols
    job_rows = max(plan.k, -(-plan.n // plan.parts))  # a job holds about one bucket's rows
    sizes = where.groupby(qi_cols, sort=True)["rows"].sum().reset_index()
    batch = np.cumsum(sizes["rows"].to_numpy()) // job_rows
    jobs = []
    for b in np.unique(batch):
        chosen = sizes.loc[batch == b, qi_cols]
        holders = sorted(set(where.merge(chosen, on=qi_cols)["piece"].tolist()))
        jobs.append(dask.delayed(run, nout=2)(
            [dask.delayed(take)(pieces[p], qi_cols, chosen, True) for p in holders],
            qi_cols, plan.index_name, plan.options, True, plan.piece_audit))
    tables, outcomes = persist_pairs(jobs)
    if not all(isinstance(o, Facts) for o in outcomes):
        return None
    involved = sorted(set(where["piece"].tolist()))
    kept, kept_facts = persist_pairs([
        dask.delayed(rest, nout=2)(pieces[p], qi_cols, tuples, plan.piece_audit)
        for p in involved])
    new_pieces, new_facts = list(pieces), list(facts)
    for p, table, fact in zip(involved, kept, kept_facts, strict=True):
        new_pieces[p], new_facts[p] = table, fact
    return new_pieces + tables, new_facts + outcomes


def _merge_parts(pieces: list[Any], facts: list[Facts], where: pd.DataFrame, plan: Plan
                 ) -> tuple[list[Any], list[Facts]]:
    """The parts that share a colliding tuple anonymized again whole (connected parts at
    once); raises :class:`InfeasibleError` when such a union is infeasible."""
    kept: dict[int, tuple[Any, Facts]] = {}
    jobs: list[tuple[int, Any]] = []
    for members in _connected(where, plan.qi_cols, len(pieces)):
        if len(members) == 1:
            kept[members[0]] = (pieces[members[0]], facts[members[0]])
            continue
        jobs.append((members[0], dask.delayed(run, nout=2)(
            [pieces[p] for p in members], plan.qi_cols, plan.index_name, plan.options, True,
            plan.piece_audit)))
    tables, outcomes = persist_pairs([job for _, job in jobs])
    failures = [o for o in outcomes if not isinstance(o, Facts)]
    if failures:
        raise InfeasibleError(failures[0])
    kept.update({first: (table, fact)
                 for (first, _), table, fact in zip(jobs, tables, outcomes, strict=True)})
    ordered = [kept[first] for first in sorted(kept)]
    return [table for table, _ in ordered], [fact for _, fact in ordered]


def repair(pieces: list[Any], facts: list[Facts], plan: Plan) -> Repair:
    """The global pass: finds the tuples published in more than one piece and anonymizes
    their rows again together, until none is left."""
    colliding_total = 0
    rounds = 0
    while len(pieces) > 1:
        where = _collisions(pieces, facts, plan.qi_cols)
        if where.empty:
            break
        rounds += 1
        tuples = where[plan.qi_cols].drop_duplicates(ignore_index=True)
        colliding_total += len(tuples)
        repaired = (_repair_tuples(pieces, facts, where, tuples, plan)
                    if rounds <= TUPLE_REPAIR_ROUNDS else None)
        pieces, facts = (_merge_parts(pieces, facts, where, plan) if repaired is None
                         else repaired)
    # A repair can leave a piece without rows (all its classes moved to the jobs).
    kept = [i for i, fact in enumerate(facts) if fact.rows > 0] or [0]
    return Repair(pieces=[pieces[i] for i in kept], facts=[facts[i] for i in kept],
                  colliding=colliding_total, rounds=rounds)
