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
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from proxanon import _validate
from proxanon._engine.infeasibility import infeasibility_proof
from proxanon._engine.proofs import advice
from proxanon._errors import (
    ExploreInterrupted,
    GraphTooDenseError,
    InfeasibleError,
    TimeLimitError,
)
from proxanon._pipeline.verdict import rows_by_value
from proxanon.anonymize import _table_columns, anonymize
from proxanon.distances import Relation
from proxanon.frontier import (
    FRONTIER_COLUMNS,
    INFEASIBLE,
    PROVEN_INFEASIBLE,
    SATISFIED,
    STOPPED,
    frontier_cells,
    frontier_figure,
    png_bytes,
)
from proxanon.generalize import load_hierarchies
from proxanon.hierarchy import Hierarchy
from proxanon.tableio import atomic_write
from proxanon.tables import encode_sensitive

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["BEYOND", "FRONTIER_COLUMNS", "LARGEST_COLUMNS", "EpsilonSearch", "explore",
           "explore_plot", "find_epsilon"]

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
    known: pd.DataFrame | None = None,
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
    ``progress``: print a line on standard error as each setting is settled. ``known``:
    settings already tried (a frame this function returned for the same table and options,
    or its CSV file read back): their rows are reused, not run again. Ctrl-C raises
    :class:`~proxanon.ExploreInterrupted`, whose ``frontier`` holds the settings finished.
    Every value is checked before any work starts; the input frame is never modified. The
    grid is explored one setting after another, each on ``n_threads`` threads.
    """
    settings = _Settings(data, quasi_identifiers=quasi_identifiers, sensitive=sensitive,
                         hierarchies=hierarchies, metric=metric, weights=weights,
                         sensitive_ranges=sensitive_ranges, on_infeasible=on_infeasible,
                         n_threads=n_threads, max_seconds=max_seconds, progress=progress,
                         known=known, options=options)
    grid = _grid(k, epsilon, delta, len(data))
    try:
        for setting in grid:
            settings.row(*setting, total=len(grid))
    except KeyboardInterrupt:
        raise ExploreInterrupted(settings.frame()) from None
    return settings.frame()


@dataclass(frozen=True)
class EpsilonSearch:
    """What :func:`find_epsilon` found: ``largest``, one row per (k, δ) with the largest ε
    of the steps that holds and the next step's verdict, and ``settings``, every setting it
    tried (a frame of :data:`FRONTIER_COLUMNS`, as :func:`explore` returns, to append to a
    frontier file or draw)."""

    largest: pd.DataFrame
    settings: pd.DataFrame


#: The columns of :attr:`EpsilonSearch.largest`.
LARGEST_COLUMNS = ("k", "delta", "epsilon", "gcp", "largest_class_share", "next_epsilon",
                   "next_verdict", "tried")
#: ``next_verdict`` where the largest step holds: nothing above it was tried.
BEYOND = "beyond epsilon_max"


def find_epsilon(
    data: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    sensitive: str | Sequence[str],
    k: int | Iterable[int],
    delta: float | Iterable[float],
    step: float,
    epsilon_max: float = 1.0,
    hierarchies: Mapping[str, Hierarchy | str] | None = None,
    metric: Any = "l1",
    weights: ArrayLike | None = None,
    sensitive_ranges: Mapping[str, tuple[float, float]] | None = None,
    on_infeasible: str = "raise",
    n_threads: int | None = None,
    max_seconds: float | None = None,
    progress: bool = False,
    known: pd.DataFrame | None = None,
    **options: Any,
) -> EpsilonSearch:
    """For each k and δ, the largest ε among ``step, 2·step, ..., epsilon_max`` at which
    :func:`proxanon.anonymize` publishes a satisfying table (docs/guide/explore.md#finding-
    the-largest-epsilon).

    A larger ε makes more rows neighbours, so a setting is harder: the search bisects the
    steps. The proofs come first (milliseconds each; a proof at ε holds at every larger ε),
    then ``anonymize`` runs on the steps below the first proven one, about log2(steps)
    runs per (k, δ). The answer is exact for the proofs and for ``anonymize``'s verdicts at
    the steps tried: the step above the largest one returned was proven or found infeasible
    (or stopped by ``max_seconds``, which counts as not holding). ``largest``: per (k, δ),
    ``epsilon`` (NaN where even ``step`` does not hold), the ``gcp`` and
    ``largest_class_share`` of its table, ``next_epsilon`` and ``next_verdict`` (the step
    above and its verdict; :data:`BEYOND` where ``epsilon_max`` holds) and ``tried`` (the
    settings it took). ``known``: settings already tried (an :func:`explore` frame of the
    same table and options), reused instead of run again; the other arguments are
    :func:`explore`'s. Ctrl-C raises :class:`~proxanon.ExploreInterrupted`, which holds the
    settings finished.
    """
    step = _validate.positive(step, "step")
    epsilon_max = _validate.positive(epsilon_max, "epsilon_max")
    if step > epsilon_max:
        raise ValueError(f"step ({step:g}) is larger than epsilon_max ({epsilon_max:g}): no "
                         "epsilon to try")
    steps = int(math.floor(epsilon_max / step + 1e-9))
    settings = _Settings(data, quasi_identifiers=quasi_identifiers, sensitive=sensitive,
                         hierarchies=hierarchies, metric=metric, weights=weights,
                         sensitive_ranges=sensitive_ranges, on_infeasible=on_infeasible,
                         n_threads=n_threads, max_seconds=max_seconds, progress=progress,
                         known=known, options=options)
    pairs = [(kk, dlt) for kk, _, dlt in _grid(k, step, delta, len(data))]
    rows = []
    try:
        for kk, dlt in pairs:
            rows.append(_largest(settings, kk, dlt, step, steps))
    except KeyboardInterrupt:
        raise ExploreInterrupted(settings.frame()) from None
    return EpsilonSearch(pd.DataFrame(rows, columns=list(LARGEST_COLUMNS)), settings.frame())


def _largest(settings: _Settings, k: int, delta: float, step: float,
             steps: int) -> dict[str, Any]:
    """One (k, δ) of :func:`find_epsilon`: the proofs bisected first, then ``anonymize``."""
    before = len(settings.rows)
    epsilon = [round(i * step, 12) for i in range(steps + 1)]
    low, high = 0, steps + 1  # low holds (0: none known), high does not (steps + 1: beyond)
    proof_low = 0
    while high - proof_low > 1:  # the first proven step
        mid = (proof_low + high) // 2
        if settings.proof(k, epsilon[mid], delta) is None:
            proof_low = mid
        else:
            high = mid
    if high <= steps:
        settings.row(k, epsilon[high], delta)  # recorded as proven
    while high - low > 1:
        mid = (low + high) // 2
        if settings.row(k, epsilon[mid], delta)["verdict"] == SATISFIED:
            low = mid
        else:
            high = mid
    found = settings.known_row(k, epsilon[low], delta) if low else None
    after = settings.known_row(k, epsilon[high], delta) if high <= steps else None
    return {"k": k, "delta": delta, "epsilon": epsilon[low] if low else math.nan,
            "gcp": found["gcp"] if found else math.nan,
            "largest_class_share": found["largest_class_share"] if found else math.nan,
            "next_epsilon": epsilon[high] if high <= steps else math.nan,
            "next_verdict": after["verdict"] if after else BEYOND,
            "tried": len(settings.rows) - before}


class _Settings:
    """The settings of one table and one set of options, each settled once: the sensitive
    columns encoded and scaled once, as ``anonymize`` encodes them, the hierarchies loaded
    once, the proofs tried before ``anonymize``, and every setting's row kept (those of
    ``known`` reused) in the order they were settled."""

    def __init__(self, data: pd.DataFrame, *, quasi_identifiers: Any, sensitive: Any,
                 hierarchies: Any, metric: Any, weights: Any, sensitive_ranges: Any,
                 on_infeasible: str, n_threads: int | None, max_seconds: float | None,
                 progress: bool, known: pd.DataFrame | None, options: dict[str, Any]) -> None:
        qi_cols, sens_cols = _table_columns(data, quasi_identifiers, sensitive)
        unknown = sorted(set(options) - (set(inspect.signature(anonymize).parameters) - _OWN))
        if unknown:
            raise TypeError(f"explore got unknown argument(s) {unknown}; the others it takes "
                            "are proxanon.anonymize's")
        self.on_infeasible = _validate.choice(on_infeasible, "on_infeasible",
                                              _validate.ON_INFEASIBLE)
        self.threads = _validate.threads(n_threads)
        self.limit = (None if max_seconds is None
                      else _validate.seconds(max_seconds, "max_seconds"))
        if not isinstance(progress, bool):
            raise TypeError(f"progress must be True or False, got {progress!r}")
        self.progress = progress
        self.data = data
        given = load_hierarchies(hierarchies, qi_cols + sens_cols,
                                 [str(c) for c in data.columns])
        self.sens, self.relation = encode_sensitive(
            data, sens_cols, given, metric, weights,
            _validate.ranges(sensitive_ranges, sens_cols))
        self.describe = rows_by_value(data, sens_cols)
        self.run = dict(options, quasi_identifiers=qi_cols, sensitive=sens_cols,
                        hierarchies=given, metric=metric, weights=weights,
                        sensitive_ranges=sensitive_ranges, on_infeasible=self.on_infeasible,
                        n_threads=self.threads)
        self.known = _known_rows(known)
        self.rows: list[dict[str, Any]] = []
        self._proofs: dict[tuple[int, float, float], tuple[str | None, float]] = {}

    def proof(self, k: int, eps: float, dlt: float) -> str | None:
        """The proof that no partition satisfies the setting, or None (none is tried where
        rows may be suppressed: a proof about the whole table says nothing of its subsets)."""
        if self.on_infeasible == "suppress":
            return None
        key = (k, eps, dlt)
        if key not in self._proofs:
            tic = time.perf_counter()
            found = _proof(self.sens, self.relation, k, eps, dlt, self.describe, self.threads)
            self._proofs[key] = (found, time.perf_counter() - tic)
        return self._proofs[key][0]

    def known_row(self, k: int, eps: float, dlt: float) -> dict[str, Any] | None:
        return next((row for row in self.rows if _same(row, k, eps, dlt)), None)

    def row(self, k: int, eps: float, dlt: float, total: int | None = None) -> dict[str, Any]:
        """The setting's row: one already settled, else the proof's, else ``anonymize``'s."""
        done = self.known_row(k, eps, dlt)
        if done is not None:
            return done
        reused = next((row for row in self.known if _same(row, k, eps, dlt)), None)
        if reused is not None:
            self.rows.append(reused)
            return reused
        earlier = self._proofs.get((k, eps, dlt), (None, 0.0))[1]  # a proof tried before
        tic = time.perf_counter()
        proof = self.proof(k, eps, dlt)
        row = (_proven(proof) if proof is not None
               else _anonymized(self.data, self.run, (k, eps, dlt), self.limit))
        self.rows.append({"k": k, "epsilon": eps, "delta": dlt, **row,
                          "seconds": earlier + time.perf_counter() - tic})
        if self.progress:
            count = f"{len(self.rows)}/{total}" if total else f"{len(self.rows)}"
            print(f"proxanon explore: {count} k={k} epsilon={eps:g} delta={dlt:g}: "
                  f"{row['verdict']} ({self.rows[-1]['seconds']:.1f} s)", file=sys.stderr,
                  flush=True)
        return self.rows[-1]

    def frame(self) -> pd.DataFrame:
        """The settled rows as :func:`explore` returns them."""
        frame = pd.DataFrame(self.rows, columns=list(FRONTIER_COLUMNS))
        frame["k"] = frame["k"].astype("int64")
        frame["rows_suppressed"] = frame["rows_suppressed"].astype("Int64")
        if self.on_infeasible != "suppress":
            frame = frame.drop(columns="rows_suppressed")
        return frame


def _same(row: Mapping[str, Any], k: int, eps: float, dlt: float) -> bool:
    """Whether ``row`` is the setting (k, eps, dlt), its floats read back from text."""
    return (int(row["k"]) == k and math.isclose(float(row["epsilon"]), eps, rel_tol=1e-12)
            and math.isclose(float(row["delta"]), dlt, rel_tol=1e-12))


def _known_rows(known: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The rows of an earlier frontier, checked to be one (None: none)."""
    if known is None:
        return []
    if not isinstance(known, pd.DataFrame):
        raise TypeError(f"known must be a DataFrame that explore returned, got "
                        f"{type(known).__name__}")
    frontier_cells(known)  # its columns and verdicts, or a ValueError naming them
    rows = []
    for row in known.to_dict("records"):
        entry = {c: row.get(c) for c in FRONTIER_COLUMNS}
        entry["proof"] = "" if pd.isna(entry["proof"]) else str(entry["proof"])
        rows.append(entry)
    return rows


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
