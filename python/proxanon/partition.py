"""``partition``: the XColor engine's Python entry point (Wang and Liu, XColor, §IV–V;
docs/design/privacy-model.md, docs/design/xcolor.md)."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from proxanon import _validate
from proxanon._engine.options import Checks, EngineOptions, NativeRun
from proxanon._engine.runs import DEFAULT_SEARCH_LIMIT, run_engine, run_mondrian
from proxanon._progress import ProgressReporter
from proxanon._results.partition import Partition
from proxanon.distances import Relation, resolve

__all__ = ["Partition", "partition"]


def partition(sensitive: ArrayLike, *, k: int, epsilon: float | None = None,
              delta: float | None = None, metric: Any = "l1", weights: ArrayLike | None = None,
              quasi_identifiers: ArrayLike | None = None, on_infeasible: str = "raise",
              search_limit: int | None = DEFAULT_SEARCH_LIMIT, trace: bool = False,
              progress: bool = False, init: str = "degree", moves: str = "auto",
              max_suppression: float = 0.0, method: str = "xcolor",
              l: int | None = None,  # noqa: E741 (the name the literature and the API use)
              neighbours: str = "auto", n_threads: int | None = None) -> Partition:
    """Partition rows into groups of at least ``k`` that satisfy (ε, δ)^k-dissimilarity.

    Parameters
    ----------
    sensitive
        Float array ``(n, s)`` or ``(n,)``: the sensitive attribute's components, already on a
        common scale (docs/design/definitions.md: normalize each to [0, 1]).
    k, epsilon, delta
        Every group has at least ``k`` rows, and no row has more than
        ``t(G) = floor((1 − δ)(|G| − 1))`` other rows within distance ``epsilon`` in its group,
        i.e. the proximity risk of every group is at most ``1 − delta``.
    metric, weights
        ``"l1"``, ``"l2"``, ``"linf"`` (weighted; weights default to ``1/s`` each),
        ``"min_component"``, ``"variational"``, a function ``f(X, Y) -> distances`` (called
        on blocks of distinct values), or a scipy.sparse n × n matrix whose nonzeros are the
        neighbour pairs (then ``epsilon`` may be omitted); or ``"each"`` (min_component) or
        ``"combination"`` (l1), what to protect. See :mod:`proxanon.distances`.
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
        ``violating_groups``, ``exact_search``, ``repair_capped`` (violating rows left
        because best effort stopped a repair that cleared too few of them per unit of work;
        0 where the repair ran to its end) and ``seconds`` (graph, initialize, repair,
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
    relation = resolve(metric, weights, sens.shape[1], sens.shape[0])
    if _validate.choice(method, "method", _validate.METHODS) == "mondrian":
        return run_mondrian(sens, Checks(k=k, eps=epsilon, dlt=delta, relation=relation, ell=l),
                            _mondrian_qi(quasi_identifiers, sens.shape[0]), None,
                            on_infeasible=on_infeasible, started=started)
    if l is not None:
        raise ValueError("l (distinct l-diversity) applies to method='mondrian' only")
    request = _xcolor_request(
        sens, relation, started, k=k, epsilon=epsilon, delta=delta,
        quasi_identifiers=quasi_identifiers, on_infeasible=on_infeasible,
        search_limit=search_limit, trace=trace, progress=progress, init=init, moves=moves,
        max_suppression=max_suppression, neighbours=neighbours, n_threads=n_threads)
    return _run_xcolor(sens, request)


@dataclass(frozen=True, kw_only=True)
class _XColorRequest:
    """``partition``'s arguments for XColor, validated: the run, the quasi-identifiers (None:
    none), what an infeasible run does and the share of rows it may leave out."""

    run: NativeRun
    qi: NDArray[np.float64] | None
    on_infeasible: str
    max_suppression: float


def _xcolor_request(sens: NDArray[np.float64], relation: Relation, started: float, *,
                    k: int, epsilon: float | None, delta: float | None,
                    quasi_identifiers: ArrayLike | None, on_infeasible: str,
                    search_limit: int | None, trace: bool, progress: bool, init: str,
                    moves: str, max_suppression: float, neighbours: str,
                    n_threads: int | None) -> _XColorRequest:
    """``partition``'s arguments for XColor checked (raising as ``partition`` documents) and
    gathered into one request; ``started``: when ``partition`` was called."""
    n, s = sens.shape
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
    options = EngineOptions(
        k=k, delta=dlt, search_limit=limit, trace=trace, init=init, init_block=1, moves=moves,
        suppress=on_infeasible == "suppress", threads=threads,
        progress=reporter.counters if reporter is not None else None)
    run = NativeRun(options=options, eps=eps, relation=relation, neighbours=structure,
                    reporter=reporter, started=started)
    return _XColorRequest(run=run, qi=qi, on_infeasible=on_infeasible, max_suppression=budget)


def _run_xcolor(sens: NDArray[np.float64], request: _XColorRequest) -> Partition:
    """The XColor run ``request`` describes, its progress shown while it runs (if asked)."""
    reporter = request.run.reporter
    with reporter if reporter is not None else nullcontext():
        return run_engine(sens, request.run, qi=request.qi, on_infeasible=request.on_infeasible,
                          max_suppression=request.max_suppression)


def _mondrian_qi(quasi_identifiers: ArrayLike | None, n: int) -> NDArray[np.float64]:
    """The QI codes Mondrian's cut reads, checked once here at the public edge."""
    if quasi_identifiers is None:
        raise ValueError("method='mondrian' cuts along the quasi-identifiers: pass "
                         "quasi_identifiers")
    return _validate.float_matrix(quasi_identifiers, "quasi_identifiers", rows=n)
