"""``anonymize``: a pandas table in, a published table out (docs/design/definitions.md,
docs/design/publishing.md)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from numpy.typing import ArrayLike

from proxanon import _validate
from proxanon._pipeline.inputs import AnonymizeSettings
from proxanon._pipeline.publish import publish
from proxanon._progress import ProgressReporter
from proxanon._results.anonymization import GROUP_COLUMN as GROUP_COLUMN  # public
from proxanon._results.anonymization import Anonymization
from proxanon._results.criteria import Criterion, LDiversity, check_criteria
from proxanon.hierarchy import Hierarchy
from proxanon.tables import role_columns

#: Classes examined per violation in ``anonymize``: with the QI-aware start, classes near a
#: violation's own (in the QI order) are examined first, and a few dozen suffice.
TABLE_SEARCH_LIMIT = 64


def anonymize(
    data: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    sensitive: str | Sequence[str],
    k: int,
    epsilon: float | None = None,
    delta: float | None = None,
    metric: Any = "l1",
    weights: ArrayLike | None = None,
    hierarchies: Mapping[str, Hierarchy | str] | None = None,
    on_infeasible: str = "raise",
    progress: bool = False,
    init: str = "qi",
    search_limit: int | None = TABLE_SEARCH_LIMIT,
    moves: str = "auto",
    max_suppression: float = 0.0,
    method: str = "xcolor",
    l: int | None = None,  # noqa: E741 (the name the literature and the API use)
    sensitive_ranges: Mapping[str, tuple[float, float]] | None = None,
    neighbours: str = "auto",
    n_threads: int | None = None,
    criteria: Sequence[Criterion] | None = None,
) -> Anonymization:
    """Anonymize a table so that every group satisfies (ε, δ)^k-dissimilarity.

    ``quasi_identifiers``: columns an attacker may know; numeric or categorical (strings,
    pandas categoricals). ``sensitive``: numeric columns (scaled to [0, 1] by min-max) or
    ordered categoricals (by rank); compared with ``metric`` and ``weights`` as in
    :func:`proxanon.partition`. ``hierarchies``: per QI column, a :class:`Hierarchy` or the
    path of an ARX-format CSV file; a categorical QI without one gets the flat taxonomy
    (its value, or ``*``), a numeric QI without one its interval ``[min-max]``.
    ``on_infeasible``: ``"raise"`` (:class:`~proxanon.InfeasibleError`) or ``"best_effort"``.
    ``progress``: show the phase and the violations left on standard error in long runs.
    ``init``: ``"qi"`` (default) starts from groups of QI-close rows, ``"degree"`` from the
    paper's Algorithm 1; ``moves``: ``"auto"`` (default) or ``"swap"`` (see
    :func:`proxanon.partition`). ``on_infeasible="suppress"`` leaves rows out of the published
    table (at most ``max_suppression`` of them, a fraction) until every group satisfies the
    principle; they are listed in ``report.suppressed_rows`` and their ``groups`` entry is -1.
    ``sensitive_ranges``: per numeric sensitive column, the ``(min, max)`` to scale it by
    instead of its own (``proxanon.dask`` passes the whole table's range to each part); the
    audit of the published rows uses it too, after suppression as well, and records it in
    ``audit.scales``.
    ``neighbours``: how the engine holds the ε-neighbour relation, ``"auto"`` (default),
    ``"graph"``, ``"sorted"`` (one numeric sensitive column) or ``"grid"``; the result
    does not depend on it (see :func:`proxanon.partition`). ``n_threads``: threads to use,
    default every core this process may use; the result is the same for any number (see
    "Threads" below).

    ``criteria``: LDiversity, TCloseness, BetaLikeness, DeltaDisclosure every class satisfies
    too (docs/guide/criteria.md); ``l``: shorthand for ``LDiversity(l)``.
    With ``on_infeasible="raise"`` on more than 8192 rows and a built-in metric,
    :func:`proxanon.advise`'s clique bound is checked before any repair: when it proves
    that no partition into groups of at least ``k`` rows satisfies the principle,
    :class:`~proxanon.InfeasibleError` is raised at once with the proof in the columns' own
    units (no partition attached). ``"best_effort"`` and ``"suppress"`` always run.

    Groups that would publish the same QI values are one equivalence class to an attacker.
    First, groups exchange rows with identical sensitive values (which leaves every group's
    verdict unchanged) so that their published values differ; groups that still collide are
    merged and the merged classes repaired until every group publishes its own
    values; ``report.merge_rounds`` counts those rounds. Then every class of at least 2k rows
    is split top-down along the taxonomies and at numeric medians into parts that pass the
    same checks and publish finer tuples of their own (no class grows, violating rows never
    grow; ``method="mondrian"`` does the same). When this QI-aware path ends with
    violations, the plain partition's groups (as :func:`proxanon.partition` builds them by
    default) are tried the same way and published if they do better (``report.fallback``):
    where the QIs tell the rows apart, ``anonymize`` then succeeds wherever ``partition``
    does. With the default ``method="xcolor"``, a table published as ``"best_effort"`` that
    still fails has its failing classes split the same way into parts that may fail but are
    each no riskier than their class and hold no more violating rows in all (the rows no
    table protects otherwise gather in a few classes publishing coarse values; a class whose
    every cut would leave a part riskier stays whole). Whatever ``on_infeasible`` is, the
    ``group`` column, ``satisfied`` and the report describe the published equivalence
    classes (rows that share the published QI values). A datetime64 QI is published as its
    group's date range ``[first, last]``.

    Threads: with ``n_threads`` of 2 or more, the default path builds the Mondrian-(ε, δ)
    cut on a thread of its own while XColor runs (the two candidates are independent and
    their native work releases the GIL), on tables over 262,144 rows after seeking there the
    proof of infeasibility (which, when found, stops XColor's run and is raised), and the
    row degrees and the audits split over the threads; which candidate is published never
    depends on which finished first.

    XColor's table is compared with the Mondrian-(ε, δ) cut by cost (GCP). Where the cut
    satisfies and a lower bound of XColor's cost already exceeds the cut's (its classes of
    fewer than 2k rows, which specialization leaves as they are, over a sample of at most
    16,384 of them), and XColor's classes pass the audit, the cut is published without
    specializing XColor's classes, which could not change the outcome: the report then names
    the bound ``"xcolor (at least)"`` (census-like tables: 0.9 s of 5.8 s at 3M rows).

    The input frame is never modified.
    """
    started = time.perf_counter()
    qi_cols, sens_cols = _table_columns(data, quasi_identifiers, sensitive)
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True or False, got {progress!r}")
    on_infeasible = _validate.choice(on_infeasible, "on_infeasible", _validate.ON_INFEASIBLE)
    method = _method(method, epsilon, delta)
    policy = _policy(data, criteria, l, qi_cols, sens_cols)
    k, eps, dlt = _validate.privacy(k, 0.0 if epsilon is None else epsilon,
                                    0.0 if delta is None else delta, len(data))
    settings = AnonymizeSettings(
        quasi_identifiers=qi_cols, sensitive=sens_cols, k=k, eps=eps, dlt=dlt,
        checked=epsilon is not None,
        ell=_distinct_hint(policy, sens_cols) if method == "mondrian" else None,
        metric=metric, weights=weights, hierarchies=hierarchies, on_infeasible=on_infeasible,
        limit=_validate.search_limit(search_limit),
        init=_validate.choice(init, "init", _validate.INITS),
        moves=_validate.choice(moves, "moves", _validate.MOVES),
        budget=_validate.suppression(max_suppression, on_infeasible), method=method,
        neighbours=_validate.choice(neighbours, "neighbours", _validate.NEIGHBOURS),
        threads=_validate.threads(n_threads), ranges=_validate.ranges(sensitive_ranges, sens_cols),
        criteria=policy)
    if method == "mondrian" and settings.neighbours != "auto":
        raise ValueError("neighbours applies to method='xcolor' only (Mondrian's checks hold "
                         "no neighbour structure); leave it at 'auto'")
    reporter = ProgressReporter() if progress else None
    with reporter if reporter is not None else contextlib.nullcontext():
        return publish(data, settings, reporter=reporter, started=started)


def _table_columns(data: Any, quasi_identifiers: str | Sequence[str],
                   sensitive: str | Sequence[str]) -> tuple[list[str], list[str]]:
    """``anonymize``'s table checked (a non-empty DataFrame of distinct column names, without
    the column the published table adds) and its QI and sensitive columns."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError("data is empty: it needs at least one row")
    _validate.unique_columns(data, "data")
    qi_cols, sens_cols = role_columns(data, quasi_identifiers, sensitive)
    if GROUP_COLUMN in data.columns:
        raise ValueError(f"data already has a column named {GROUP_COLUMN!r}, which the "
                         "published table adds; rename it first")
    return qi_cols, sens_cols


def _policy(data: pd.DataFrame, criteria: Any, ell: Any, qi_cols: list[str],
            sens_cols: list[str]) -> tuple[Criterion, ...]:
    """The criteria checked, with ``l`` folded in as distinct l-diversity of each sensitive
    column (one implementation: it is that criterion)."""
    policy = check_criteria(criteria, [str(c) for c in data.columns], qi_cols, sens_cols)
    return policy if ell is None else (*policy, LDiversity(ell))


def _distinct_hint(policy: Sequence[Criterion], sens_cols: list[str]) -> int | None:
    """The distinct sensitive tuples Mondrian's cuts may require of each part: the largest l
    of the l-diversity criteria on sensitive columns (each kind needs at least l distinct
    values of its column, hence of the tuples), None without one."""
    ells = [c.l for c in policy if isinstance(c, LDiversity)
            and (c.column is None or c.column in sens_cols)]
    return max(ells) if ells else None


def _method(method: Any, epsilon: float | None, delta: float | None) -> str:
    """``method`` checked with the checks it takes: XColor's needs epsilon and delta;
    Mondrian's takes both epsilon and delta or neither."""
    chosen: str = _validate.choice(method, "method", _validate.METHODS)
    if chosen == "xcolor":
        if epsilon is None or delta is None:
            raise TypeError("epsilon and delta are required for method='xcolor'")
    elif (epsilon is None) != (delta is None):
        raise ValueError("give both epsilon and delta to check (epsilon, delta)^k-"
                         "dissimilarity, or neither")
    return chosen

