"""``partition``: the XColor engine's Python entry point (paper §IV–V, SPEC §2–3)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from proxanon import _core, _validate
from proxanon._errors import GraphTooDenseError, InfeasibleError
from proxanon._progress import ProgressReporter
from proxanon._results.partition import Partition
from proxanon.distances import Relation, resolve, row_graph, value_graph

if TYPE_CHECKING:
    from proxanon._core import SpecializeStep

#: Adjacency entries the value-level neighbour graph may hold (4 bytes each) before
#: ``partition`` refuses epsilon as too large for the data; the C++ core owns the number.
MAX_GRAPH_ENTRIES: int = _core.MAX_GRAPH_ENTRIES

#: Classes examined per violation before the best partner seen so far is taken.
DEFAULT_SEARCH_LIMIT = 512


@dataclass(frozen=True)
class EngineOptions:
    """What one native run is asked to do; mirrors ``XColorOptions`` (cpp/include/proxanon/
    xcolor.hpp) and crosses into C++ as one object. Validated by ``partition``."""

    k: int
    delta: float
    search_limit: int = 0           # classes per violation (0: all, the paper's full scan)
    trace: bool = False
    init: str = "degree"            # one of _validate.INITS
    init_block: int = 8             # classes per QI-local run (init="qi")
    moves: str = "swap"             # one of _validate.MOVES
    suppress: bool = False
    threads: int = 1                # for the row degrees; the result is the same for any number
    progress: _core.Progress | None = field(default=None, compare=False)


def stats_dict(stats: _core.Stats) -> dict[str, Any]:
    """The typed numbers of a run as the ``Partition.stats`` entries of the same names."""
    return {name: getattr(stats, name) for name in STATS_FIELDS}


#: The fields of ``_core.Stats`` (``XColorStats``), in the order the C++ struct lists them.
STATS_FIELDS = (
    "n", "m", "max_degree", "row_edges", "initial_violations", "initial_potential",
    "final_potential", "swaps", "set_aside", "classes_examined", "remaining_violations",
    "excess_moves", "transfers", "stalled_violations", "suppressed", "regrouped_size",
    "exact_search", "seconds_suppress", "seconds_initialize", "seconds_repair",
)


def inequality_4_bound(n: int, k: int, delta: float) -> float:
    """Right-hand side of the paper's inequality (4): n/2 · (1 − (1 − 1/k) · δ).

    The paper derives it from Lemma 2 (Θ ≤ m(t+1)/2) but drops the floor in t and assumes
    k divides n, so as printed it is not a guarantee (``proxanon.advise`` has a 9-row
    counterexample and the bound that is proven). Reported as the paper's yardstick.
    """
    return n / 2.0 * (1.0 - (1.0 - 1.0 / k) * delta)


def partition(
    sensitive: ArrayLike,
    *,
    k: int,
    epsilon: float | None = None,
    delta: float | None = None,
    metric: Any = "l1",
    weights: ArrayLike | None = None,
    quasi_identifiers: ArrayLike | None = None,
    on_infeasible: str = "raise",
    search_limit: int | None = DEFAULT_SEARCH_LIMIT,
    trace: bool = False,
    progress: bool = False,
    init: str = "degree",
    moves: str = "auto",
    max_suppression: float = 0.0,
    method: str = "xcolor",
    l: int | None = None,  # noqa: E741 (the name the literature and the API use)
    neighbours: str = "auto",
    n_threads: int | None = None,
) -> Partition:
    """Partition rows into groups of at least ``k`` that satisfy (ε, δ)^k-dissimilarity.

    Parameters
    ----------
    sensitive
        Float array ``(n, s)`` or ``(n,)``: the sensitive attribute's components, already on a
        common scale (SPEC §1: normalize each to [0, 1]).
    k, epsilon, delta
        Every group has at least ``k`` rows, and no row has more than
        ``t(G) = floor((1 − δ)(|G| − 1))`` other rows within distance ``epsilon`` in its group,
        i.e. the proximity risk of every group is at most ``1 − delta``.
    metric, weights
        ``"l1"``, ``"l2"``, ``"linf"`` (weighted; weights default to ``1/s`` each),
        ``"min_component"``, ``"variational"``, a function ``f(X, Y) -> distances`` (called
        on blocks of distinct values), or a scipy.sparse n × n matrix whose nonzeros are the
        neighbour pairs (then ``epsilon`` may be omitted). See :mod:`proxanon.distances`.
    quasi_identifiers
        Optional float array ``(n, d)``. When given, swaps are chosen to keep each group's
        QI ranges narrow (the loss of §V-B); without it the swap that lowers the potential
        most is taken.
    on_infeasible
        ``"raise"`` (default): raise :class:`InfeasibleError` when violations remain; on
        tables of more than 8192 rows with a built-in metric, :func:`proxanon.advise`'s
        clique bound is checked first and a proof raises at once (no partition attached).
        ``"best_effort"``: return the partition with ``satisfied=False`` and the violating
        rows and groups listed. ``"suppress"``: leave rows out (group -1) until every group
        satisfies the principle, at most ``max_suppression`` of them (a fraction of n),
        else raise :class:`InfeasibleError` with the numbers.
    moves
        ``"auto"`` (default): when the paper's pairwise swaps stall, regroup into the group
        size ``s >= k`` that allows the most neighbours per row (``t`` is a floor, so sizes
        of exactly ``k`` can waste allowance), keep the better of the two, then run a local
        search that swaps or transfers rows while the total excess
        ``E = Σ max(0, D_G(v) − t(G))`` falls (sizes stay ``>= k``; E drops every move, so it
        ends). A table of at most 16 rows that these heuristics leave unsatisfied is then
        searched exhaustively: it gets the satisfying partition of least QI loss if one
        exists (with ``on_infeasible="suppress"``: the one leaving out the fewest rows), or
        a proof that none does (``stats["exact_search"] == 1``).
        ``"swap"``: the paper's pairwise exchanges only; sizes stay equitable.
    max_suppression
        With ``on_infeasible="suppress"``: the largest fraction of rows that may be left out.
    method, l
        ``"xcolor"`` (default) or ``"mondrian"``: strict multidimensional Mondrian (the
        paper's baseline), which needs ``quasi_identifiers`` and cuts at QI medians while both
        halves keep ``k`` rows, at least ``l`` distinct sensitive values (when ``l`` is
        given) and (ε, δ)^k-dissimilarity (when ``epsilon`` and ``delta`` are given).
    search_limit
        Classes examined per violation before settling for the best partner seen; ``None``
        examines every class (the paper's full scan). A violation with no partner among the
        first classes always continues through all of them, so a partner is never missed.
    trace
        Keep the initial colouring and every swap (for verification).
    progress
        Show the phase and the violations left on standard error while a run is long.
    init
        ``"degree"`` (default): Algorithm 1 as published, which ignores the QIs.
        ``"qi"``: start from groups of QI-close rows (rows ordered by recursive median splits
        on the widest QI, as Mondrian does, cut into equitable groups), then repair the same
        way; groups stay narrow in the QIs. Needs ``quasi_identifiers``.

    neighbours
        How the ε-neighbour relation is held (the result does not depend on it). ``"graph"``:
        the graph over distinct values, materialized (refused with GraphTooDenseError past
        MAX_GRAPH_ENTRIES). ``"sorted"`` (one-component sensitive attribute): values sorted,
        neighbourhoods found by binary search, O(n) memory. ``"grid"``: a grid of cell size ε
        (per-component windows for ``min_component``), queried on demand, O(n) memory.
        ``"auto"`` (default): the graph up to 8192 distinct values, else sorted for one
        component and the grid for more, or the graph where it holds at most 64
        row-weighted adjacency entries per row (many coded values with few neighbours
        each). Distance functions and precomputed graphs always use the graph.
    n_threads
        Threads for the work that splits (row degrees on the implicit structures, the
        clique bound); ``None`` (default): every core this process may use. The result is
        the same for any number.

    Returns
    -------
    Partition
        ``stats`` has ``n``, ``m``, ``k``, ``epsilon``, ``delta``, ``metric``,
        ``distinct_values``, ``value_edges``, ``row_edges``, ``max_degree`` (Θ), ``bound``
        and ``bound_holds`` (inequality 4), ``initial_violations``, ``initial_potential``,
        ``swaps``, ``final_potential``, ``set_aside``, ``remaining_violations``,
        ``violating_groups``, ``exact_search`` and ``seconds`` (graph, initialize, repair,
        total).

    Raises
    ------
    GraphTooDenseError
        (a ValueError) when epsilon makes the neighbour graph larger than
        ``_core.MAX_GRAPH_ENTRIES`` adjacency entries; raised before the graph is allocated,
        with the entries and memory it would need.
    KeyboardInterrupt
        on Ctrl-C: the native work checks for signals about every 0.1 s and stops.
    """
    started = time.perf_counter()
    sens = _validate.float_matrix(sensitive, "sensitive")
    n, s = sens.shape
    relation = resolve(metric, weights, s, n)
    method = _validate.choice(method, "method", _validate.METHODS)
    if method == "mondrian":
        return run_mondrian(sens, k, epsilon, delta, relation, l, quasi_identifiers,
                            None, on_infeasible, started)
    if l is not None:
        raise ValueError("l (distinct l-diversity) applies to method='mondrian' only")
    if delta is None:
        raise TypeError("delta is required: a group's risk may be at most 1 - delta")
    eps = _validate.epsilon(epsilon, graph=relation.kind == "graph")
    k, eps, dlt = _validate.privacy(k, eps, delta, n)
    qi = None
    if quasi_identifiers is not None:
        qi = _validate.float_matrix(quasi_identifiers, "quasi_identifiers", rows=n)
    on_infeasible = _validate.choice(on_infeasible, "on_infeasible", _validate.ON_INFEASIBLE)
    limit = _validate.search_limit(search_limit)
    for flag, name in ((trace, "trace"), (progress, "progress")):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    init = _validate.choice(init, "init", _validate.INITS)
    moves = _validate.choice(moves, "moves", _validate.MOVES)
    budget = _validate.suppression(max_suppression, on_infeasible)
    structure = _validate.neighbours(neighbours, builtin=relation.kind == "builtin",
                                     taxonomy=relation.taxonomy, components=s)
    if init == "qi" and qi is None:
        raise ValueError("init='qi' builds groups from the quasi-identifiers: pass "
                         "quasi_identifiers, or use init='degree'")
    threads = _validate.threads(n_threads)
    reporter = ProgressReporter() if progress else None
    if reporter is None:
        return run_engine(sens, k, eps, dlt, relation, qi, None, on_infeasible, limit, trace,
                          None, started, init=init, moves=moves, max_suppression=budget,
                          neighbours=structure, threads=threads)
    with reporter:
        return run_engine(sens, k, eps, dlt, relation, qi, None, on_infeasible, limit, trace,
                          reporter, started, init=init, moves=moves, max_suppression=budget,
                          neighbours=structure, threads=threads)


def run_mondrian(sens: NDArray[np.float64], k: Any, epsilon: Any, delta: Any,
                 relation: Relation, ell: Any, quasi_identifiers: Any,
                 qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] | None,
                 on_infeasible: str, started: float, grid_checks: bool = True,
                 max_graph_entries: int = MAX_GRAPH_ENTRIES) -> Partition:
    """Strict multidimensional Mondrian with the checks asked for (see ``partition``).
    ``grid_checks=False``: GraphTooDenseError where the relation's graph would hold more
    than ``max_graph_entries`` entries (the checks would then search a grid at every cut)."""
    n = sens.shape[0]
    if quasi_identifiers is None:
        raise ValueError("method='mondrian' cuts along the quasi-identifiers: pass "
                         "quasi_identifiers")
    qi = _validate.float_matrix(quasi_identifiers, "quasi_identifiers", rows=n)
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
        sens, relation.name, [] if relation.weights is None else relation.weights.tolist(),
        eps if dissimilar else None, k, dlt, ell_checked, qi, qi_taxonomies or [], grid_checks,
        max_graph_entries)
    groups = np.asarray(raw["groups"], dtype=np.int64)
    satisfied = bool(raw["satisfied"])
    violating_rows = np.asarray(raw["violating_rows"], dtype=np.int64)
    # Unsatisfied means uncut: the one group is the whole table.
    violating_groups = np.zeros(0 if satisfied else 1, dtype=np.int64)
    stats: dict[str, Any] = {
        "method": "mondrian", "n": n, "m": int(groups.max()) + 1, "k": k, "l": ell,
        "epsilon": eps if dissimilar else None, "delta": dlt if dissimilar else None,
        "metric": relation.label, "cuts": int(raw["cuts"]), "swaps": 0,
        "remaining_violations": int(violating_rows.size),
        "violating_groups": violating_groups.tolist(),
        "seconds": {"mondrian": float(raw["seconds"]), "total": time.perf_counter() - started},
    }
    result = Partition(groups=groups, satisfied=satisfied, stats=stats,
                       violating_rows=violating_rows, violating_groups=violating_groups)
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


def run_specialize(classes: NDArray[np.int64], sens: NDArray[np.float64], k: int,
                   epsilon: float | None, delta: float | None, relation: Relation,
                   ell: int | None, qi: NDArray[np.float64],
                   qi_taxonomies: list[tuple[NDArray[np.int32], int] | None],
                   node_keys: list[NDArray[np.int32] | None], step: SpecializeStep = "split",
                   threads: int = 1) -> tuple[NDArray[np.int64], int]:
    """Published classes (ids 0 .. C-1, pairwise distinct published tuples) with every class
    of at least 2k rows split top-down into parts that publish finer, distinct tuples and pass
    the checks asked for (k; distinct ``ell``; (epsilon, delta)^k-dissimilarity unless
    epsilon is None); see cpp/include/proxanon/specialize.hpp. ``node_keys[i]`` names the
    nodes of taxonomy column i by published label (None for a numeric column).
    Returns (class per row, classes split); the classes unchanged when the relation is too
    dense to hold as a graph. ``step="split_failing"`` (a table published as best effort):
    only failing classes are split, into parts of at least k rows that may fail but hold no
    more violating rows in all than the class (``SpecializeTarget::Failing``), and parts
    that pass as above. ``step="cover_failing"`` (the same table after absorption): only
    failing classes of more than 2% of the rows, by the covering split alone
    (cpp/include/proxanon/cover_split.hpp), into parts of at most 2% (but the one keeping the
    class's tuple), each no riskier than its class, in rounds (at most three) that first
    empty small classes publishing tuples those parts need into passing classes that cover
    their rows (all of a class's rows or none; cpp/include/proxanon/vacate.hpp) and end with
    the absorption of ``step="absorb_failing"`` again, while a class holds more than 2% of
    the rows; the second number then counts the classes split and emptied and the rows
    absorbed. ``step="absorb"``, instead of splitting: rows of classes
    above the cap (the larger of 2k rows and 1/200 of the table) move into passing classes
    whose finer tuples cover them (cpp/include/proxanon/absorb.hpp; every id kept), and the
    second number is the rows moved; ``step="absorb_failing"`` (a table published as best effort):
    failing classes above the cap give rows too, each staying within its risk (worst D over
    size - 1) and keeping its rows' violations, into passing classes, or failing ones that
    stay within theirs and gain no violating row but the one taken. The splits run on
    ``threads`` threads (0: every core), with the same result for any number."""
    keys = [[] if key is None else key.tolist() for key in node_keys]
    common: dict[str, Any] = dict(
        classes=classes.astype(np.int32), quasi_identifiers=qi,
        qi_taxonomies=qi_taxonomies, node_keys=keys, k=k, delta=0.0 if delta is None else delta,
        step=step, threads=threads)
    try:
        if relation.weights is not None or epsilon is None:  # a built-in metric, or no distance
            raw = _core.specialize(
                sensitive=sens, metric=relation.name if relation.weights is not None else "l1",
                weights=[] if relation.weights is None else relation.weights.tolist(),
                epsilon=epsilon, l=0 if ell is None else ell,
                max_graph_entries=CHECK_GRAPH_ENTRIES, **common)
        else:
            if relation.kind == "callable":
                row_value, offsets, targets, _ = value_graph(relation, sens, epsilon)
            else:
                row_value, offsets, targets = row_graph(relation, sens.shape[0])
            raw = _core.specialize_graph(row_value=row_value, offsets=offsets, targets=targets,
                                         **common)
    except GraphTooDenseError:
        return classes, 0
    return (np.asarray(raw["classes"], dtype=np.int64),
            int(raw["absorbed"] if step.startswith("absorb") else raw["splits"]))


def run_engine(
    sens: NDArray[np.float64],
    k: int,
    eps: float,
    dlt: float,
    relation: Relation,
    qi: NDArray[np.float64] | None,
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] | None,
    on_infeasible: str,
    limit: int,
    trace: bool,
    reporter: ProgressReporter | None,
    started: float,
    initial_groups: NDArray[np.int64] | None = None,
    init: str = "degree",
    init_block: int = 1,
    moves: str = "auto",
    max_suppression: float = 0.0,
    neighbours: str = "auto",
    threads: int = 1,
) -> Partition:
    """Runs the native engine on validated inputs and wraps its result (see ``partition``).

    ``initial_groups`` (ids 0..m-1, all used) replaces INITIALIZE as the starting colouring.

    ``qi_taxonomies`` marks QI columns that hold DFS leaf indices of a taxonomy, given as
    (parent of every node, number of leaves), so that their loss is the LCA's leaf share.
    """
    n = sens.shape[0]
    early_verdict(sens, k, eps, dlt, relation, on_infeasible, moves, initial_groups, threads)
    options = EngineOptions(
        k=k, delta=dlt, search_limit=limit, trace=trace, init=init, init_block=init_block,
        moves=moves, suppress=on_infeasible == "suppress", threads=threads,
        progress=reporter.counters if reporter is not None else None)
    data: dict[str, Any] = dict(
        quasi_identifiers=qi, qi_taxonomies=qi_taxonomies or [],
        initial_groups=initial_groups)
    raw, calls = _call_native(
        relation, sens, eps, reporter,
        lambda name, weights: _core.partition(sens, name, weights, eps, options,
                                              max_graph_entries=MAX_GRAPH_ENTRIES,
                                              neighbours=neighbours, **data),
        lambda row_value, offsets, targets: _core.partition_graph(
            row_value, offsets, targets, options, **data))
    result = _partition_of(raw, k, eps, dlt, relation, moves, calls, started, trace)
    suppressed, stats = result.suppressed_rows, result.stats
    if on_infeasible == "suppress" and n - suppressed.size < k:
        raise InfeasibleError(nothing_released(n, suppressed.size, stats), partition=result)
    if on_infeasible == "suppress" and suppressed.size > max_suppression * n:
        needs = ("at least {} of {} row(s) must be left out (an exhaustive search over all "
                 "partitions found no release that keeps more)" if stats["exact_search"] else
                 "XColor's suppression left out {} of {} row(s)")
        raise InfeasibleError(
            f"{needs.format(suppressed.size, n)} ({suppressed.size / n:.2%}), more than "
            f"max_suppression={max_suppression} allows ({int(max_suppression * n)} row(s)). "
            "Allow more suppression, or try a smaller epsilon or delta.", partition=result)
    if not result.satisfied and on_infeasible == "raise":
        raise InfeasibleError(
            infeasible_summary(stats) + "\n" + infeasible_message(stats)
            + feasibility_advice(sens, stats, relation), partition=result)
    return result


def _call_native(relation: Relation, sens: NDArray[np.float64], eps: float,
                 reporter: ProgressReporter | None,
                 builtin: Callable[[str, list[float]], dict[str, Any]],
                 graph: Callable[[NDArray[np.int32], NDArray[np.int64], NDArray[np.int32]],
                                 dict[str, Any]]
                 ) -> tuple[dict[str, Any], int]:
    """One native run (``builtin`` with a built-in metric's name and weights, else ``graph``
    with the value ids per row and the CSR between values, evaluated here) and the distance
    function's calls; the graph's building time is added to the run's "seconds_graph"
    (``raw["last"]`` for a session). GraphTooDenseError becomes the user's error."""
    if reporter is not None:
        reporter.engine_running = True
    calls = 0
    try:
        if relation.weights is not None:  # a built-in metric
            return builtin(relation.name, relation.weights.tolist()), calls
        tic = time.perf_counter()
        if relation.kind == "callable":
            row_value, offsets, targets, calls = value_graph(relation, sens, eps)
        else:
            row_value, offsets, targets = row_graph(relation, sens.shape[0])
        built = time.perf_counter() - tic
        raw = graph(row_value, offsets, targets)
        (raw["last"] if "last" in raw else raw)["seconds_graph"] += built
        return raw, calls
    except GraphTooDenseError as exc:
        raise too_dense(eps, relation, exc) from None
    finally:
        if reporter is not None:
            reporter.engine_running = False


def _partition_of(raw: dict[str, Any], k: int, eps: float, dlt: float, relation: Relation,
                  moves: str, calls: int, started: float, trace: bool) -> Partition:
    """One native run's result (cpp/bindings/bind_engine.cpp, ``engine_dict``) as a Partition."""
    n = len(raw["groups"])
    stats = stats_dict(raw["stats"])
    stats.update(distinct_values=raw["distinct_values"], value_edges=raw["value_edges"],
                 neighbours=raw["neighbours"], seconds_graph=raw["seconds_graph"])
    bound = inequality_4_bound(n, k, dlt)
    violating_groups = np.asarray(raw["violating_groups"], dtype=np.int64)
    stats.update(
        k=k, epsilon=eps, delta=dlt, metric=relation.label, distance_calls=calls,
        bound=bound, bound_holds=bool(stats["max_degree"] <= bound),
        violating_groups=violating_groups.tolist(),
    )
    stats["seconds"] = {
        "graph": stats.pop("seconds_graph"),
        "initialize": stats.pop("seconds_initialize"),
        "repair": stats.pop("seconds_repair"),
        "suppress": stats.pop("seconds_suppress"),
        "total": time.perf_counter() - started,
    }
    stats["moves"] = moves
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
    """What one native session published (cpp/include/proxanon/session.hpp): the rows it
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


def run_session(sens: NDArray[np.float64], k: int, eps: float, dlt: float, relation: Relation,
                qi: NDArray[np.float64], qi_taxonomies: list[tuple[NDArray[np.int32], int] | None],
                node_keys: list[NDArray[np.int32] | None], sensitive_ids: NDArray[np.int64],
                options: EngineOptions, qi_aware: bool, start: NDArray[np.int64] | None,
                max_rounds: int | None, budget: float, neighbours: str,
                reporter: ProgressReporter | None, started: float) -> Session:
    """XColor's run and the rounds that merge groups publishing one QI tuple and repair the
    merged classes, in one native call over structures built once (rebuilt only over the rows
    a suppressing run leaves in). ``qi_aware``: the runs price QI loss (False: the plain
    partition's path; the QIs still decide the tuples). ``max_rounds``: merging rounds at
    most; ``budget``: the share of rows that may be left out before merging stops. Raises
    InfeasibleError when a suppressing run leaves fewer than k rows."""
    keys = [[] if key is None else key.tolist() for key in node_keys]
    common: dict[str, Any] = dict(
        options=options, quasi_identifiers=qi, qi_taxonomies=qi_taxonomies, node_keys=keys,
        sensitive_ids=np.ascontiguousarray(sensitive_ids, dtype=np.int64), qi_aware=qi_aware,
        max_rounds=max_rounds, budget=budget,
        start=None if start is None else start.astype(np.int32))
    raw, calls = _call_native(
        relation, sens, eps, reporter,
        lambda name, weights: _core.session(sens, name, weights, eps,
                                            max_graph_entries=MAX_GRAPH_ENTRIES,
                                            neighbours=neighbours, **common),
        lambda row_value, offsets, targets: _core.session_graph(
            row_value, offsets, targets, **common))
    last = _partition_of(raw["last"], k, eps, dlt, relation, options.moves, calls, started,
                         options.trace)
    if raw["too_few"]:
        raise InfeasibleError(nothing_released(last.groups.size, last.suppressed_rows.size,
                                               last.stats), partition=last)
    first = stats_dict(raw["first"])
    seconds = {"graph": last.stats["seconds"]["graph"],
               "initialize": first["seconds_initialize"], "repair": first["seconds_repair"],
               "suppress": first["seconds_suppress"], "merge": float(raw["seconds_merge"])}
    return Session(
        released=np.asarray(raw["released"], dtype=np.int64),
        classes=np.asarray(raw["classes"], dtype=np.int64),
        formed_from=np.asarray(raw["formed_from"], dtype=np.int64),
        last=last, last_rows=np.asarray(raw["last_rows"], dtype=np.int64),
        rounds=int(raw["rounds"]), swaps=int(raw["swaps"]),
        initial_violations=int(first["initial_violations"]), seconds=seconds)


#: Rows above which ``on_infeasible="raise"`` checks the clique bound before any repair: a
#: repair that cannot succeed is long on large tables (each violation scans every group),
#: while on small ones it is quick and its best-effort partition travels with the error.
EARLY_VERDICT_ROWS = 8192


def early_verdict(sens: NDArray[np.float64], k: int, eps: float, dlt: float,
                  relation: Relation, on_infeasible: str, moves: str,
                  initial_groups: NDArray[np.int64] | None, threads: int = 1) -> None:
    """Raises InfeasibleError (with no partition) when advise's clique bound already proves
    that the repair cannot succeed: no equitable partition into n // k groups for
    ``moves="swap"``, no partition into groups of at least k for ``"auto"`` (which may
    regroup). Only for ``on_infeasible="raise"`` and no given start (see ``early_proof``)."""
    if on_infeasible != "raise" or initial_groups is not None:
        return
    proof = early_proof(sens, k, eps, dlt, relation, any_partition=moves == "auto",
                        threads=threads)
    if proof is not None:
        raise InfeasibleError(proven_before_repair(proof, k, eps, dlt, relation))


def early_proof(sens: NDArray[np.float64], k: int, eps: float, dlt: float,
                relation: Relation, any_partition: bool,
                describe: Callable[[NDArray[np.int64]], str] | None = None,
                threads: int = 1) -> str | None:
    """advise's clique bound before any repair (``proxanon.advise.infeasibility_proof``:
    O(n log n) in one dimension, the implicit structures beyond), on tables of more than
    EARLY_VERDICT_ROWS rows with a built-in metric: the proof, or None."""
    if (relation.kind != "builtin" or not relation.is_metric
            or sens.shape[0] <= EARLY_VERDICT_ROWS):
        return None
    from proxanon.advise import infeasibility_proof

    return infeasibility_proof(sens, relation, k, eps, dlt, any_partition, describe, threads)


def proven_before_repair(proof: str, k: int, eps: float, dlt: float,
                         relation: Relation) -> str:
    """The message of an InfeasibleError raised on ``early_proof``'s proof."""
    return (f"proven before any repair (k={k}, epsilon={eps}, delta={dlt}, "
            f"metric={relation.label}): {proof}. Try a smaller epsilon or delta, or pass "
            "on_infeasible='best_effort' or 'suppress' to run the repair anyway.")


def too_dense(epsilon: float, relation: Relation, exc: ValueError) -> ValueError:
    """The refusal of a graph too dense to build, with the epsilon and metric that made it."""
    return GraphTooDenseError(
        f"epsilon={epsilon} makes the neighbour graph over the {relation.label} distances too "
        f"dense: {exc}; use a smaller epsilon")


def feasibility_advice(sens: NDArray[np.float64], stats: dict[str, Any],
                       relation: Relation) -> str:
    """What :func:`proxanon.advise` can prove about these parameters, as a sentence."""
    from proxanon.advise import advise

    if relation.kind != "builtin" or not relation.is_metric:
        return ""  # the clique proof needs the triangle inequality of a known metric
    try:
        advice = advise(sens, k=stats["k"], epsilon=stats["epsilon"], metric=relation.label,
                        weights=None if relation.label == "variational" else relation.weights,
                        delta=stats["delta"])
    except GraphTooDenseError:  # the epsilon/2 graph is too dense to build: no proof to offer
        return ""
    if advice.reason:
        return " Proof: " + advice.reason + "."
    return (f" proxanon.advise: success is proven for delta <= {advice.max_delta_proven:.4f}, "
            f"and no delta up to {advice.largest_delta_not_refuted:.4f} is ruled out.")


def nothing_released(n: int, left_out: int, stats: dict[str, Any]) -> str:
    """Why suppression released nothing: proven (small tables) or where the heuristic ended."""
    k = stats["k"]
    settings = (f"k={k}, epsilon={stats['epsilon']}, delta={stats['delta']}, "
                f"metric={stats['metric']}")
    if stats["exact_search"]:
        return (f"no group of {k} or more of the {n} rows satisfies the principle on its own "
                f"({settings}; an exhaustive search over all partitions), so every row would "
                "have to be left out and nothing can be released. Try a smaller epsilon, "
                "delta or k.")
    return (f"XColor's suppression kept {n - left_out} of {n} row(s), fewer than k={k}, so "
            f"nothing could be released ({settings}; the largest number of epsilon-"
            f"neighbours of a row is {stats['max_degree']}). This is where the heuristic "
            "ended, not a proof: proxanon.advise can prove what no partition achieves. Try "
            "a smaller epsilon, delta or k.")


def infeasible_summary(stats: dict[str, Any]) -> str:
    """The one line that opens ``partition``'s InfeasibleError, in anonymize's words."""
    return (f"no partition satisfying (epsilon={stats['epsilon']:g}, delta={stats['delta']:g})"
            f"^k-dissimilarity with k={stats['k']} was found: "
            f"{stats['remaining_violations']:,} row(s) violate in "
            f"{len(stats['violating_groups']):,} of {stats['m']:,} group(s).")


def infeasible_message(stats: dict[str, Any]) -> str:
    """Explains an unsatisfied run: what is left, the degree bound, and what to change."""
    holds = "holds" if stats["bound_holds"] else "fails"
    proof = (f"An exhaustive search over all partitions of these {stats['n']} rows proves "
             "that none satisfies the principle. " if stats.get("exact_search") else "")
    return proof + (
        f"XColor left {stats['remaining_violations']} violating row(s) in "
        f"{len(stats['violating_groups'])} of {stats['m']} group(s) "
        f"(k={stats['k']}, epsilon={stats['epsilon']}, delta={stats['delta']}, "
        f"metric={stats['metric']}). The largest number of epsilon-neighbours of a row is "
        f"max_degree={stats['max_degree']}; the paper's inequality (4) asks for at most "
        f"n/2*(1-(1-1/k)*delta)={stats['bound']:.1f} and {holds} (proxanon.advise gives the "
        "bound that is proven, and can prove that no partition exists). "
        "Try a smaller epsilon or delta, or a k whose groups allow more neighbours per row "
        "(t = floor((1-delta)(|G|-1)) relative to |G|; a larger k gives fewer groups, which "
        "can hold fewer near-identical rows). Or pass on_infeasible='best_effort' to get "
        "this partition with the violations flagged, or on_infeasible='suppress' with a "
        "max_suppression budget to leave the violating rows out."
    )
