"""The native runs: XColor (``run_engine``), the session that merges and repairs groups
publishing one tuple (``run_session``), strict Mondrian (``run_mondrian``) and the
specialization of published classes (``run_specialize``); each converts its inputs once,
calls ``_core`` and wraps the result (Wang and Liu, XColor, §IV–V)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _core, _validate
from proxanon._engine.options import Checks, NativeRun
from proxanon._engine.proofs import early_verdict, feasibility_advice, inequality_4_bound
from proxanon._engine.relations import bind, structure
from proxanon._engine.stats import EngineStats
from proxanon._engine.verdicts import (
    infeasible_message,
    infeasible_summary,
    nothing_released,
    too_dense,
)
from proxanon._errors import GraphTooDenseError, InfeasibleError
from proxanon._messages import Param, text
from proxanon._results.partition import Partition

if TYPE_CHECKING:
    from proxanon._core import SpecializeStep

#: Adjacency entries the value-level neighbour graph may hold (4 bytes each) before
#: ``partition`` refuses epsilon as too large for the data; the C++ core owns the number.
MAX_GRAPH_ENTRIES: int = _core.MAX_GRAPH_ENTRIES

#: Classes examined per violation before the best partner seen so far is taken.
DEFAULT_SEARCH_LIMIT = 512


#: A run that a limited search leaves with this share of the rows violating, or fewer (at
#: least _FULL_SEARCH_FLOOR rows, at most _FULL_SEARCH_ROWS), is run again with every class
#: searched: each violation's search then reads every class once (a census extract of 53k
#: rows: 62 violating rows left by the limited search, none by the full one).
_FULL_SEARCH_SHARE = 0.01
_FULL_SEARCH_FLOOR = 256
_FULL_SEARCH_ROWS = 2000


def search_for(limit: int, plain: bool) -> int:
    """Classes examined per violation by a run of ``anonymize`` whose ``search_limit`` is
    ``limit`` (0: all): the limit on the QI-aware path, at least DEFAULT_SEARCH_LIMIT on the
    plain one (as :func:`proxanon.partition` searches)."""
    return limit if not plain or limit == 0 else max(limit, DEFAULT_SEARCH_LIMIT)


def full_search_worth(limit: int, violating: int, n: int) -> bool:
    """Whether a run limited to ``limit`` classes per violation (0: none) that left
    ``violating`` of ``n`` rows violating is worth running again with every class searched."""
    most = min(max(_FULL_SEARCH_SHARE * n, _FULL_SEARCH_FLOOR), _FULL_SEARCH_ROWS)
    return limit != 0 and 0 < violating <= most






def run_mondrian(sens: NDArray[np.float64], checks: Checks, qi: NDArray[np.float64],
                 qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] | None, *,
                 on_infeasible: str, started: float, grid_checks: bool = True,
                 max_graph_entries: int = MAX_GRAPH_ENTRIES,
                 follow_hierarchy: bool = False, max_suppressed: int = 0) -> Partition:
    """Strict multidimensional Mondrian with the checks asked for (see ``partition``; the
    values of ``checks`` as the user gave them, validated here). ``follow_hierarchy``: the
    hierarchy cut instead (docs/design/mondrian.md#the-hierarchy-cut), which may leave out
    up to ``max_suppressed`` rows where that lowers the cost (their group is -1, and they are
    the partition's ``suppressed_rows``). ``qi``: the QI codes, float64 of shape (n, d),
    checked at the public edge (read, not copied). ``grid_checks=False``:
    GraphTooDenseError where the relation's graph would hold more than ``max_graph_entries``
    entries (the checks would then search a grid at every cut)."""
    k, epsilon, delta, ell, relation = (checks.k, checks.eps, checks.dlt, checks.ell,
                                        checks.relation)
    n = sens.shape[0]
    dissimilar = epsilon is not None or delta is not None
    if dissimilar and (epsilon is None or delta is None):
        raise ValueError("give both epsilon and delta to check (epsilon, delta)^k-"
                         "dissimilarity, or neither")
    k, eps, dlt = _validate.privacy(k, epsilon if dissimilar else 0.0,
                                    delta if dissimilar else 0.0, n)
    ell_checked = 0 if ell is None else _validate.integer(ell, "l", minimum=1)
    on_infeasible = _validate.choice(on_infeasible, "on_infeasible", ("raise", "best_effort"))
    if dissimilar and relation.kind != "builtin":
        raise ValueError("method='mondrian' checks dissimilarity with the built-in metrics")
    raw = _core.mondrian(
        bind(relation, sens, eps if dissimilar else None).native, k, dlt, ell_checked, qi,
        qi_taxonomies or [], grid_checks, max_graph_entries,
        **({} if checks.criteria is None else checks.criteria.arguments()),
        follow_hierarchy=follow_hierarchy, max_suppressed=max_suppressed)
    groups = np.asarray(raw["groups"], dtype=np.int64)
    satisfied = bool(raw["satisfied"])
    violating_rows = np.asarray(raw["violating_rows"], dtype=np.int64)
    # Unsatisfied means uncut: the one group is the whole table.
    violating_groups = np.zeros(0 if satisfied else 1, dtype=np.int64)
    stats: dict[str, Any] = {
        "method": "mondrian", "n": n, "m": int(groups.max()) + 1, "k": k, "l": ell,
        "epsilon": eps if dissimilar else None, "delta": dlt if dissimilar else None,
        "metric": relation.label, "cuts": int(raw["cuts"]), "swaps": 0,
        "cut": "hierarchy" if follow_hierarchy else "median",
        "units": int(raw["units"]), "merged": int(raw["merged"]),
        "suppressed": int(raw["suppressed"]),
        "remaining_violations": int(violating_rows.size),
        "violating_groups": violating_groups.tolist(),
        "seconds": {"mondrian": float(raw["seconds"]), "total": time.perf_counter() - started},
    }
    result = Partition(groups=groups, satisfied=satisfied, stats=stats,
                       violating_rows=violating_rows, violating_groups=violating_groups,
                       suppressed_rows=np.flatnonzero(groups < 0))
    if not satisfied and on_infeasible == "raise":
        raise InfeasibleError(
            f"Mondrian cannot start: the whole table ({n} rows) already fails the checks "
            f"(k={k}, l={ell}, epsilon={epsilon}, delta={delta}), so no cut can keep both halves "
            "valid. Relax the parameters, or use method='xcolor'.", partition=result)
    return result


#: The largest neighbour graph (adjacency entries, 128 MiB) that the checks of Mondrian's cut
#: and of specialization build: they read the neighbours of every value of a part at every
#: cut, so over a denser relation a grid search per check is cheaper than building the graph
#: (Adult's fnlwgt, hours-per-week and capital-gain at epsilon = 0.1: a graph took 10 s per
#: specialization); Mondrian's cut as anonymize's candidate is not built at all beyond it.
CHECK_GRAPH_ENTRIES = 1 << 25


def run_specialize(classes: NDArray[np.int64], sens: NDArray[np.float64], checks: Checks,
                   qi: NDArray[np.float64],
                   qi_taxonomies: list[tuple[NDArray[np.int32], int] | None],
                   node_keys: list[NDArray[np.int32] | None], *, step: SpecializeStep = "split",
                   threads: int = 1) -> tuple[NDArray[np.int64], int]:
    """Published classes (ids 0 .. C-1, pairwise distinct published tuples) with every class
    of at least 2k rows split top-down into parts that publish finer, distinct tuples and pass
    ``checks`` (k; distinct ``ell``; (epsilon, delta)^k-dissimilarity unless epsilon is
    None); see cpp/include/proxanon/publish/specialize.hpp. ``node_keys[i]`` names the
    nodes of taxonomy column i by published label (None for a numeric column).
    Returns (class per row, classes split); the classes unchanged when the relation is too
    dense to hold as a graph. ``step="split_failing"`` (a table published as best effort):
    only failing classes are split, into parts of at least k rows that may fail but hold no
    more violating rows in all than the class (``SpecializeTarget::Failing``), and parts
    that pass as above. ``step="cover_failing"`` (the same table after absorption): only
    failing classes of more than 2% of the rows, by the covering split alone
    (cpp/include/proxanon/publish/cover_split.hpp), into parts of at most 2% (but the one keeping
    the class's tuple), each no riskier than its class, in rounds (at most three) that first
    empty small classes publishing tuples those parts need into passing classes that cover
    their rows (all of a class's rows or none; cpp/include/proxanon/publish/vacate.hpp) and end with
    the absorption of ``step="absorb_failing"`` again, while a class holds more than 2% of
    the rows; the second number then counts the classes split and emptied and the rows
    absorbed. ``step="absorb"``, instead of splitting: rows of classes
    above the cap (the larger of 2k rows and 1/200 of the table) move into passing classes
    whose finer tuples cover them (cpp/include/proxanon/publish/absorb.hpp; every id kept), and the
    second number is the rows moved; ``step="absorb_failing"`` (a table published as best effort):
    failing classes above the cap give rows too, each staying within its risk (worst D over
    size - 1) and keeping its rows' violations, into passing classes, or failing ones that
    stay within theirs and gain no violating row but the one taken. The splits run on
    ``threads`` threads (0: every core), with the same result for any number."""
    epsilon, delta, ell, relation = checks.eps, checks.dlt, checks.ell, checks.relation
    keys = [[] if key is None else key.tolist() for key in node_keys]
    common: dict[str, Any] = dict(
        classes=classes.astype(np.int32), quasi_identifiers=qi,
        qi_taxonomies=qi_taxonomies, node_keys=keys, k=checks.k,
        delta=0.0 if delta is None else delta, step=step, threads=threads)
    # A given graph is checked for k and (epsilon, delta) alone.
    given = relation.weights is None and epsilon is not None
    try:
        raw = _core.specialize(
            relation=bind(relation, sens, epsilon).native, l=0 if ell is None or given else ell,
            max_graph_entries=CHECK_GRAPH_ENTRIES, **common,
            **({} if checks.criteria is None or given else checks.criteria.arguments()))
    except GraphTooDenseError:
        return classes, 0
    return (np.asarray(raw["classes"], dtype=np.int64),
            int(raw["absorbed"] if step.startswith("absorb") else raw["splits"]))


def run_engine(sens: NDArray[np.float64], run: NativeRun, *,
               qi: NDArray[np.float64] | None = None,
               qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] | None = None,
               on_infeasible: str, initial_groups: NDArray[np.int64] | None = None,
               max_suppression: float = 0.0) -> Partition:
    """Runs the native engine on validated inputs and wraps its result (see ``partition``):
    ``run`` says how; ``on_infeasible`` what a run that leaves violations (or, suppressing,
    leaves out more than ``max_suppression`` of the rows) raises.

    ``initial_groups`` (ids 0..m-1, all used) replaces INITIALIZE as the starting colouring.

    ``qi_taxonomies`` marks QI columns that hold DFS leaf indices of a taxonomy, given as
    (parent of every node, number of leaves), so that their loss is the LCA's leaf share.
    """
    n = sens.shape[0]
    early_verdict(sens, run, on_infeasible=on_infeasible, initial_groups=initial_groups)
    data: dict[str, Any] = dict(
        quasi_identifiers=qi, qi_taxonomies=qi_taxonomies or [],
        initial_groups=initial_groups)
    options = run.options
    raw, calls = _call_native(
        run, sens,
        lambda relation: _core.partition(relation, options, max_graph_entries=MAX_GRAPH_ENTRIES,
                                         neighbours=structure(run.neighbours), **data))
    result = _partition_of(raw, run, calls)
    suppressed, stats = result.suppressed_rows, result.stats
    if on_infeasible == "suppress" and n - suppressed.size < options.k:
        raise InfeasibleError(nothing_released(n, suppressed.size, stats), partition=result)
    if on_infeasible == "suppress" and suppressed.size > max_suppression * n:
        needs = ("at least {} of {} row(s) must be left out (an exhaustive search over all "
                 "partitions found no release that keeps more)" if stats["exact_search"] else
                 "XColor's suppression left out {} of {} row(s)")
        raise InfeasibleError(text(
            f"{needs.format(suppressed.size, n)} ({suppressed.size / n:.2%}), more than ",
            Param("max_suppression", max_suppression),
            f" allows ({int(max_suppression * n)} row(s)). Allow more suppression, or try a "
            "smaller ", Param("epsilon"), " or ", Param("delta"), "."), partition=result)
    if not result.satisfied and on_infeasible == "raise":
        raise InfeasibleError(
            infeasible_summary(stats) + "\n" + infeasible_message(stats)
            + feasibility_advice(sens, stats, run.relation), partition=result)
    return result


def _call_native(run: NativeRun, sens: NDArray[np.float64],
                 call: Callable[[_core.Relation], dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """One native run (``call`` over the run's relation, bound here) and the distance
    function's calls; the time a callable's graph took is added to the run's "seconds_graph"
    (``raw["last"]`` for a session). GraphTooDenseError becomes the user's error."""
    relation, eps, reporter = run.relation, run.eps, run.reporter
    if reporter is not None:
        reporter.engine_running = True
    try:
        bound = bind(relation, sens, eps)
        raw = call(bound.native)
        (raw["last"] if "last" in raw else raw)["seconds_graph"] += bound.seconds
        return raw, bound.calls
    except GraphTooDenseError as exc:
        raise too_dense(eps, relation, exc) from None
    finally:
        if reporter is not None:
            reporter.engine_running = False


def _partition_of(raw: dict[str, Any], run: NativeRun, calls: int) -> Partition:
    """One native run's result (cpp/bindings/bind_engine.cpp, ``engine_dict``) as a Partition;
    ``calls``: the distance function's."""
    k, eps, dlt, trace = run.options.k, run.eps, run.options.delta, run.options.trace
    n = len(raw["groups"])
    stats = EngineStats.of(raw["stats"]).as_dict()
    stats.update(distinct_values=raw["distinct_values"], value_edges=raw["value_edges"],
                 neighbours=raw["neighbours"], seconds_graph=raw["seconds_graph"])
    bound = inequality_4_bound(n, k, dlt)
    violating_groups = np.asarray(raw["violating_groups"], dtype=np.int64)
    stats.update(
        k=k, epsilon=eps, delta=dlt, metric=run.relation.label, distance_calls=calls,
        bound=bound, bound_holds=bool(stats["max_degree"] <= bound),
        violating_groups=violating_groups.tolist(),
    )
    stats["seconds"] = {
        "graph": stats.pop("seconds_graph"),
        "initialize": stats.pop("seconds_initialize"),
        "repair": stats.pop("seconds_repair"),
        "suppress": stats.pop("seconds_suppress"),
        "total": time.perf_counter() - run.started,
    }
    stats["moves"] = run.options.moves
    return Partition(
        groups=np.asarray(raw["groups"], dtype=np.int64),
        satisfied=stats["remaining_violations"] == 0,
        stats=stats,
        violating_rows=np.asarray(raw["violating_rows"], dtype=np.int64),
        violating_groups=violating_groups,
        suppressed_rows=np.asarray(raw["suppressed_rows"], dtype=np.int64),
        initial_groups=np.asarray(raw["initial_groups"], dtype=np.int64) if trace else None,
        swap_log=np.asarray(raw["swap_log"], dtype=np.int64) if trace else None,
        move_log=np.asarray(raw["move_log"], dtype=np.int64) if trace else None,
    )


@dataclass(frozen=True)
class Session:
    """What one native session published (cpp/include/proxanon/publish/session.hpp): the rows it
    releases (ascending), the class of each (groups merged by published tuple, 0 .. C-1 in
    the order of their first group), per class the first-run groups it gathers, and its last
    run as a Partition over ``last_rows``."""

    released: NDArray[np.int64]
    classes: NDArray[np.int64]
    formed_from: NDArray[np.int64]
    last: Partition
    last_rows: NDArray[np.int64]
    rounds: int
    swaps: int
    initial_violations: int
    seconds: dict[str, float]


def run_session(sens: NDArray[np.float64], run: NativeRun, qi: NDArray[np.float64],
                qi_taxonomies: list[tuple[NDArray[np.int32], int] | None],
                node_keys: list[NDArray[np.int32] | None], sensitive_ids: NDArray[np.int64], *,
                qi_aware: bool, start: NDArray[np.int64] | None, max_rounds: int | None,
                budget: float) -> Session:
    """XColor's run (as ``run`` says) and the rounds that merge groups publishing one QI
    tuple and repair the merged classes, in one native call over structures built once
    (rebuilt only over the rows a suppressing run leaves in). ``qi_aware``: the runs price QI
    loss (False: the plain partition's path; the QIs still decide the tuples).
    ``max_rounds``: merging rounds at most; ``budget``: the share of rows that may be left
    out before merging stops. Raises InfeasibleError when a suppressing run leaves fewer
    than k rows."""
    keys = [[] if key is None else key.tolist() for key in node_keys]
    common: dict[str, Any] = dict(
        options=run.options, quasi_identifiers=qi, qi_taxonomies=qi_taxonomies, node_keys=keys,
        sensitive_ids=np.ascontiguousarray(sensitive_ids, dtype=np.int64), qi_aware=qi_aware,
        max_rounds=max_rounds, budget=budget,
        start=None if start is None else start.astype(np.int32))
    raw, calls = _call_native(
        run, sens,
        lambda relation: _core.session(relation, max_graph_entries=MAX_GRAPH_ENTRIES,
                                       neighbours=structure(run.neighbours), **common))
    last = _partition_of(raw["last"], run, calls)
    if raw["too_few"]:
        raise InfeasibleError(nothing_released(last.groups.size, last.suppressed_rows.size,
                                               last.stats), partition=last)
    first = EngineStats.of(raw["first"])
    seconds = {"graph": last.stats["seconds"]["graph"],
               "initialize": first.seconds_initialize, "repair": first.seconds_repair,
               "suppress": first.seconds_suppress, "merge": float(raw["seconds_merge"])}
    return Session(
        released=np.asarray(raw["released"], dtype=np.int64),
        classes=np.asarray(raw["classes"], dtype=np.int64),
        formed_from=np.asarray(raw["formed_from"], dtype=np.int64),
        last=last, last_rows=np.asarray(raw["last_rows"], dtype=np.int64),
        rounds=int(raw["rounds"]), swaps=int(raw["swaps"]),
        initial_violations=int(first.initial_violations), seconds=seconds)



