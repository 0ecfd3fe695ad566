"""``explore``: which (k, ε, δ) settings work on a table, and at what cost (docs/guide/explore.md).

Every setting of the grid gets one row. The proofs of :func:`proxanon.advise`
(:mod:`proxanon._engine.proofs`, docs/design/proofs.md) are tried first on the sensitive
columns encoded and scaled once, as :func:`proxanon.anonymize` encodes them: a setting they
settle is ``"proven infeasible"`` in milliseconds, since no partition of the table into
groups of at least k rows satisfies it, so no table can. :func:`proxanon.anonymize` runs only
on the settings no proof settles, with the hierarchies loaded once for the whole grid.
"""

from __future__ import annotations

import inspect
import itertools
import math
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from proxanon import _validate
from proxanon._engine.proofs import advice, infeasibility_proof
from proxanon._errors import GraphTooDenseError, InfeasibleError, TimeLimitError
from proxanon._pipeline.verdict import rows_by_value
from proxanon.anonymize import _table_columns, anonymize
from proxanon.distances import Relation
from proxanon.frontier import (
    FRONTIER_COLUMNS,
    INFEASIBLE,
    PROVEN_INFEASIBLE,
    SATISFIED,
    STOPPED,
    frontier_figure,
    png_bytes,
)
from proxanon.generalize import load_hierarchies
from proxanon.hierarchy import Hierarchy
from proxanon.tableio import atomic_write
from proxanon.tables import encode_sensitive

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FRONTIER_COLUMNS", "explore", "explore_plot"]

#: ``anonymize``'s arguments that ``explore`` sets itself (the grid's axes and the table).
_OWN = frozenset({"data", "quasi_identifiers", "sensitive", "k", "epsilon", "delta",
                  "hierarchies", "metric", "weights", "sensitive_ranges", "on_infeasible",
                  "n_threads", "progress", "max_seconds"})


def explore(
    data: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    sensitive: str | Sequence[str],
    k: int | Iterable[int],
    epsilon: float | Iterable[float],
    delta: float | Iterable[float],
    hierarchies: Mapping[str, Hierarchy | str] | None = None,
    metric: Any = "l1",
    weights: ArrayLike | None = None,
    sensitive_ranges: Mapping[str, tuple[float, float]] | None = None,
    on_infeasible: str = "raise",
    n_threads: int | None = None,
    max_seconds: float | None = None,
    progress: bool = False,
    **options: Any,
) -> pd.DataFrame:
    """One row per setting of the grid ``k × epsilon × delta`` (each a number or a list):
    whether :func:`proxanon.anonymize` publishes a satisfying table, and at what cost.

    Columns: ``k``, ``epsilon``, ``delta``; ``verdict``: ``"satisfied"``, ``"infeasible"``
    (``anonymize`` found no satisfying table) or ``"proven infeasible"`` (a proof of
    :func:`proxanon.advise` shows that no partition into groups of at least k rows satisfies;
    ``anonymize`` was not run) or ``"stopped"`` (see ``max_seconds``); ``rows_suppressed``
    (only with ``on_infeasible="suppress"``); ``gcp`` and ``largest_class_share`` of the
    published table (NaN where none was published); ``seconds`` spent on the setting;
    ``proof``, the proof's text for proven settings (else empty). Rows come in the order of
    the lists, ``k`` first, then ``epsilon``, then ``delta``.

    The other arguments are :func:`proxanon.anonymize`'s, passed on to every run
    (``method``, ``max_suppression``, ``moves``, ...). ``on_infeasible``: ``"raise"``
    (default: a setting without a satisfying table is ``"infeasible"``, without GCP),
    ``"best_effort"`` (its best-effort table's GCP is shown) or ``"suppress"`` (rows may be
    left out, up to ``max_suppression``; no proof is tried, since one about the whole table
    says nothing about its subsets). ``max_seconds``: stop ``anonymize`` on a setting after
    this long (within about 0.1 s more); the setting's verdict is then ``"stopped"``, which
    depends on the machine's speed (default None: no limit, every verdict deterministic).
    ``progress``: print a line on standard error as each setting is settled. Every value is
    checked before any work starts; the input frame is never modified. The grid is explored
    one setting after another, each on ``n_threads`` threads.
    """
    qi_cols, sens_cols = _table_columns(data, quasi_identifiers, sensitive)
    unknown = sorted(set(options) - (set(inspect.signature(anonymize).parameters) - _OWN))
    if unknown:
        raise TypeError(f"explore got unknown argument(s) {unknown}; the others it takes are "
                        "proxanon.anonymize's")
    on_infeasible = _validate.choice(on_infeasible, "on_infeasible", _validate.ON_INFEASIBLE)
    grid = _grid(k, epsilon, delta, len(data))
    threads = _validate.threads(n_threads)
    limit = None if max_seconds is None else _validate.seconds(max_seconds, "max_seconds")
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True or False, got {progress!r}")
    # Encoded once for the whole grid, as anonymize encodes them: the same hierarchies (loaded
    # once) and the same scales.
    given = load_hierarchies(hierarchies, qi_cols + sens_cols, [str(c) for c in data.columns])
    sens, relation = encode_sensitive(data, sens_cols, given, metric, weights,
                                      _validate.ranges(sensitive_ranges, sens_cols))
    prove = on_infeasible != "suppress"
    describe = rows_by_value(data, sens_cols)
    run = dict(options, quasi_identifiers=qi_cols, sensitive=sens_cols, hierarchies=given,
               metric=metric, weights=weights, sensitive_ranges=sensitive_ranges,
               on_infeasible=on_infeasible, n_threads=threads)
    rows = []
    for kk, eps, dlt in grid:
        tic = time.perf_counter()
        proof = _proof(sens, relation, kk, eps, dlt, describe, threads) if prove else None
        row = (_proven(proof) if proof is not None
               else _anonymized(data, run, (kk, eps, dlt), limit))
        rows.append({"k": kk, "epsilon": eps, "delta": dlt, **row,
                     "seconds": time.perf_counter() - tic})
        if progress:
            print(f"proxanon explore: {len(rows)}/{len(grid)} k={kk} epsilon={eps:g} "
                  f"delta={dlt:g}: {row['verdict']} ({rows[-1]['seconds']:.1f} s)",
                  file=sys.stderr, flush=True)
    frame = pd.DataFrame(rows, columns=list(FRONTIER_COLUMNS))
    frame["k"] = frame["k"].astype("int64")
    frame["rows_suppressed"] = frame["rows_suppressed"].astype("Int64")
    if on_infeasible != "suppress":
        frame = frame.drop(columns="rows_suppressed")
    return frame


def explore_plot(frame: pd.DataFrame, path: str | Path | None = None, *,
                 release: tuple[int, float, float] | None = None) -> Figure:
    """The frontier of an :func:`explore` frame as a matplotlib figure: per k, a cell per
    (ε, δ) coloured by its verdict and labelled with its GCP; ``release``: a ``(k, epsilon,
    delta)`` to outline. With ``path``, also written there as PNG. Needs the report extra
    (matplotlib)."""
    figure = frontier_figure(frame, release=release)
    if path is not None:
        image = png_bytes(figure)

        def write(handle: IO[bytes]) -> None:
            handle.write(image)

        atomic_write(Path(path), write)
    return figure


def _values(given: Any, name: str) -> list[Any]:
    """A number or a list of them, as a non-empty list without repeats."""
    values = (list(np.asarray(given).ravel()) if isinstance(given, np.ndarray)
              else list(given) if isinstance(given, Iterable) and not isinstance(given, str)
              else [given])  # a number (checked with the grid), or what is not one
    if not values:
        raise ValueError(f"{name}: give at least one value")
    repeated = sorted({v for v in values if values.count(v) > 1}, key=repr)
    if repeated:
        raise ValueError(f"{name}: value(s) {repeated} given more than once; list each once")
    return values


def _grid(k: Any, epsilon: Any, delta: Any, n: int) -> list[tuple[int, float, float]]:
    """Every (k, epsilon, delta) of the grid, each checked as ``anonymize`` checks it."""
    ks, epsilons, deltas = (_values(k, "k"), _values(epsilon, "epsilon"),
                            _values(delta, "delta"))
    return [_validate.privacy(kk, eps, dlt, n)
            for kk, eps, dlt in itertools.product(ks, epsilons, deltas)]


def _proof(sens: NDArray[np.float64], relation: Relation, k: int, eps: float, dlt: float,
           describe: Any, threads: int) -> str | None:
    """The proof that no partition into groups of at least k rows satisfies, or None:
    ``anonymize``'s own early proof for a built-in metric, advise's otherwise."""
    if relation.kind == "builtin" and relation.is_metric:
        return infeasibility_proof(sens, relation, k, eps, dlt, True, describe, threads)
    try:
        found = advice(sens, relation, k, eps, dlt, threads)
    except GraphTooDenseError:  # the relation is too dense to build: no proof to offer
        return None
    return found.reason if found.infeasible_for_any_partition else None


def _proven(proof: str) -> dict[str, Any]:
    return {**_unpublished(PROVEN_INFEASIBLE), "proof": proof}


def _unpublished(verdict: str) -> dict[str, Any]:
    return {"verdict": verdict, "rows_suppressed": None, "gcp": math.nan,
            "largest_class_share": math.nan, "proof": ""}


def _anonymized(data: pd.DataFrame, run: dict[str, Any], setting: tuple[int, float, float],
                limit: float | None) -> dict[str, Any]:
    """One setting through ``anonymize``: its verdict and the published table's numbers;
    with a ``limit``, run beside this thread and stopped after ``limit`` seconds."""
    k, eps, dlt = setting
    try:
        result = anonymize(data, k=k, epsilon=eps, delta=dlt, max_seconds=limit, **run)
    except TimeLimitError:
        return _unpublished(STOPPED)
    except InfeasibleError:
        return _unpublished(INFEASIBLE)
    report = result.report
    return {"verdict": SATISFIED if result.satisfied else INFEASIBLE,
            "rows_suppressed": len(report.suppressed_rows), "gcp": float(report.gcp),
            "largest_class_share": float(report.largest_class_share), "proof": ""}
