"""Full-domain (global) recoding (docs/design/full-domain.md): every quasi-identifier published
at one level of its hierarchy for every kept row, the level vector chosen by the lattice
search (cpp/include/proxanon/global/lattice.hpp), classes that fail the checks suppressed
within ``max_suppression``; the table, its audit and its report.

Invariant: each QI column of the published table holds nodes of one level only, and the node
is the one of lowest loss (GCP, a suppressed row counting 1) among those within the limit.
Cost: O(n) to form the weighted units, one native call, O(n) to publish.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine.lattice import LatticeColumn, LatticeFound, run_lattice
from proxanon._engine.options import Checks
from proxanon._errors import InfeasibleError
from proxanon._pipeline.classes import _audit_groups
from proxanon._pipeline.inputs import AnonymizeSettings, _Inputs
from proxanon._pipeline.publish import asked_of, hierarchies_of, with_criteria, with_scales
from proxanon._results.anonymization import (
    FULL_DOMAIN,
    GROUP_COLUMN,
    Anonymization,
    EngineNumbers,
    build_report,
)
from proxanon._results.measures import GroupSummary
from proxanon._results.partition import Partition
from proxanon.generalize import QIColumn, encode_qi
from proxanon.hierarchy import Hierarchy

#: Bands a numeric quasi-identifier without a hierarchy is given at least: the first width is
#: the power of ten at or below its range over this, then each level doubles it.
_FIRST_BANDS = 32


def interval_hierarchy(values: pd.Series) -> Hierarchy:
    """The hierarchy full-domain recoding gives a numeric column without one: its distinct
    values in bands of width w, 2w, 4w, ... up to one band over the whole range, w the power
    of ten at or below the range / 32 (``result.hierarchies`` holds it; pass one of your own
    in ``hierarchies`` to choose the bands)."""
    low, high = float(values.min()), float(values.max())
    span = high - low
    if span <= 0:
        return Hierarchy.from_intervals(values, [])
    base = 10.0 ** math.floor(math.log10(span / _FIRST_BANDS))
    if float(values.sub(values.round()).abs().max()) == 0.0:  # integers: bands of whole units
        base = max(base, 1.0)
    widths = []
    width = 2 * base
    while width / 2 < span:
        widths.append(width)
        width *= 2
    origin = math.floor(low / widths[0]) * widths[0] if widths else 0.0
    return Hierarchy.from_intervals(values, widths, origin=origin)


def level_column(hierarchy: Hierarchy) -> LatticeColumn:
    """A hierarchy's levels: at level l each leaf is its ancestor l steps up (the root where
    the leaf is shallower); a leaf costs 0, an inner node its share of the leaves."""
    parent = np.asarray(hierarchy.parent, dtype=np.int64)
    node = np.arange(hierarchy.n_leaves, dtype=np.int64)
    levels = [node.astype(np.int32)]
    for _ in range(hierarchy.height):
        node = np.where(parent[node] >= 0, parent[node], node)
        levels.append(node.astype(np.int32))
    counts = np.asarray(hierarchy.leaf_counts, dtype=np.float64)
    ncp = np.where(np.arange(counts.size) < hierarchy.n_leaves, 0.0, counts / hierarchy.n_leaves)
    return LatticeColumn(levels, ncp)


def _units(columns: list[QIColumn], criteria_codes: list[NDArray[np.int32]]
           ) -> tuple[NDArray[np.int32], NDArray[np.int64], NDArray[np.int32]]:
    """Identical rows (leaf codes and criterion codes) as weighted units: their leaf codes
    (units x d), and their rows as CSR offsets and rows, in input order within a unit."""
    stacked = np.column_stack([c.codes.astype(np.int64) for c in columns]
                              + [np.asarray(c, dtype=np.int64) for c in criteria_codes])
    spans = stacked.max(axis=0) + 1
    if float(np.prod(spans.astype(np.float64))) < 2.0 ** 62:  # one int64 key per row
        key = stacked @ np.concatenate([np.cumprod(spans[::-1])[::-1][1:], [1]])
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    rows = np.argsort(inverse, kind="stable").astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(inverse))]).astype(np.int64)
    leaf = np.ascontiguousarray(stacked[first][:, :len(columns)], dtype=np.int32)
    return leaf, offsets, rows


def full_domain_columns(inputs: _Inputs) -> tuple[list[QIColumn], dict[str, Hierarchy]]:
    """The QI columns as leaf codes of their hierarchies (a numeric one without a hierarchy
    gets :func:`interval_hierarchy`; a date or a column of other values without one is
    refused, naming it), and the hierarchy of each."""
    columns, made = [], {}
    for column in inputs.columns:
        if column.hierarchy is not None:
            columns.append(column)
            continue
        series = inputs.data[column.name]
        if column.instants is not None or not pd.api.types.is_numeric_dtype(series.dtype):
            raise ValueError(f"recoding='global' publishes one level of a hierarchy per column: "
                             f"give quasi-identifier {column.name!r} one (hierarchies=, e.g. "
                             "Hierarchy.from_dates for dates)")
        made[column.name] = interval_hierarchy(series.astype(np.float64))
        columns.append(encode_qi(inputs.data.assign(**{column.name: series.astype(np.float64)}),
                                 column.name, made[column.name]))
    return columns, made


def publish_full_domain(inputs: _Inputs, settings: AnonymizeSettings,
                        seconds: dict[str, float], started: float) -> Anonymization:
    """The full-domain table of ``inputs``: the node the lattice search finds (at δ = 0,
    k and the criteria; else also (ε, δ)^k), its failing classes suppressed within the
    budget, audited and reported; InfeasibleError where no node holds."""
    tic = time.perf_counter()
    columns, made = full_domain_columns(inputs)
    distance = settings.checked and settings.dlt > 0
    native = None if inputs.criteria is None else inputs.criteria.native
    checks = Checks(k=inputs.k, eps=inputs.eps if distance else None,
                    dlt=inputs.dlt if distance else None, relation=inputs.relation,
                    criteria=native)
    if distance and inputs.relation.kind != "builtin":
        raise ValueError("recoding='global' checks (epsilon, delta)^k with the built-in "
                         "metrics; pass metric='l1', 'l2', 'linf' or 'min_component'")
    n = len(inputs.data)
    budget = int(inputs.budget * n) if settings.on_infeasible == "suppress" else 0
    lattice = [level_column(_tree(c)) for c in columns]
    found = run_lattice(inputs.sens, checks, lattice,
                        _units(columns, [] if native is None else list(native.codes)), budget)
    seconds["lattice"] = time.perf_counter() - tic
    if not found.found:
        raise InfeasibleError(_nothing_holds(inputs, checks, found, budget))
    return _published(inputs, (columns, lattice), made, found, seconds, started)


def _nothing_holds(inputs: _Inputs, checks: Checks, found: LatticeFound, budget: int) -> str:
    """Why no node of the lattice holds: what the top node (every column at its root: the
    whole table one class) fails, and the rows it leaves out against the limit."""
    n = len(inputs.data)
    whole = np.zeros(n, dtype=np.int64)
    failed = []
    if checks.eps is not None:
        check = _audit_groups(inputs.sens, whole, inputs.relation, inputs.k, checks.eps,
                              checks.dlt, inputs.threads)
        if not check.satisfied:
            failed.append(f"(epsilon={checks.eps:g}, delta={checks.dlt:g})^k-dissimilarity "
                          f"(risk {check.max_risk:.3f} against {1 - (checks.dlt or 0):.3f})")
    if inputs.criteria is not None:
        failed += [f"{v.criterion.model} of {v.column!r}"
                   for v in inputs.criteria.verdicts(whole) if not v.satisfied]
    what = " and ".join(failed) if failed else f"k={inputs.k}"
    return (f"no generalization level holds within the suppression limit: at the top node "
            f"(every quasi-identifier at its root, the whole table one class) {what} fails, "
            f"leaving out {found.top_suppressed:,} of {n:,} row(s) where the limit allows "
            f"{budget:,}; allow that many with on_infeasible='suppress' and max_suppression "
            "(--suppress), or relax the parameters")


def _tree(column: QIColumn) -> Hierarchy:
    """The hierarchy of a column :func:`full_domain_columns` gave one."""
    if column.hierarchy is None:
        raise ValueError(f"quasi-identifier {column.name!r} has no hierarchy")
    return column.hierarchy


def _published(inputs: _Inputs, qis: tuple[list[QIColumn], list[LatticeColumn]],
               made: dict[str, Hierarchy], found: LatticeFound, seconds: dict[str, float],
               started: float) -> Anonymization:
    """The table of the node ``found``: the kept rows, each QI column at its level, the
    group column; audited as proxanon.audit reads it and reported. ``qis``: the columns
    and their levels, as the search read them."""
    tic = time.perf_counter()
    columns, lattice = qis
    kept = np.flatnonzero(found.groups >= 0)
    classes = found.groups[kept]
    job = inputs if kept.size == len(inputs.data) else inputs.released(kept)
    table = job.data.copy()
    sizes = np.bincount(classes)
    first = np.full(sizes.size, -1, dtype=np.int64)
    first[classes[::-1]] = np.arange(classes.size)[::-1]
    cost = np.zeros((sizes.size, len(columns)))
    ncp = np.zeros((sizes.size, len(columns)))
    labels = []
    for j, (column, level) in enumerate(zip(columns, found.levels, strict=True)):
        tree = _tree(column)
        nodes = lattice[j].levels[level][column.codes[kept].astype(np.int64)]
        per_class = nodes[first]
        cost[:, j] = np.asarray(tree.leaf_counts, dtype=np.float64)[per_class] / tree.n_leaves
        ncp[:, j] = lattice[j].ncp[per_class]
        names = np.asarray(tree.labels, dtype=object)
        labels.append(names[per_class])
        table[column.name] = pd.Series(names[nodes], index=table.index, dtype=object)
    table[GROUP_COLUMN] = classes
    summary = GroupSummary(cost=cost, ncp=ncp, sizes=sizes, format_labels=lambda: labels)
    seconds["generalize"] = time.perf_counter() - tic
    tic = time.perf_counter()
    check = with_criteria(_audit_groups(job.sens, classes, job.relation, job.k, job.eps,
                                        job.dlt, job.threads), job.criteria, classes)
    seconds["audit"] = time.perf_counter() - tic
    seconds["total"] = time.perf_counter() - started
    left_out = np.flatnonzero(found.groups < 0)
    part = Partition(groups=found.groups, satisfied=check.satisfied,
                     stats={"method": FULL_DOMAIN, "n": len(inputs.data),
                            "m": int(sizes.size), "k": inputs.k,
                            "levels": dict(zip((c.name for c in columns), found.levels,
                                               strict=True)),
                            "lattice_nodes": found.nodes, "nodes_checked": found.checked,
                            "seconds": dict(seconds)},
                     violating_rows=kept[check.violating_rows],
                     violating_groups=check.violating_groups, suppressed_rows=left_out)
    engine = EngineNumbers(method=FULL_DOMAIN,
                           levels=tuple(zip((c.name for c in columns), found.levels,
                                            strict=True)),
                           lattice=(found.nodes, found.checked))
    report = build_report(asked_of(inputs, inputs.eps, inputs.dlt), engine, check, summary,
                          satisfied=check.satisfied, seconds=seconds, candidates={},
                          suppressed_rows=left_out)
    hierarchies = {**hierarchies_of(inputs), **made}
    return Anonymization(table=table, groups=found.groups, satisfied=check.satisfied,
                         report=report, hierarchies=hierarchies, partition=part,
                         audit=with_scales(check, job, job.data))
