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
from proxanon._pipeline.anatomy import publish_anatomy
from proxanon._pipeline.full_domain import publish_full_domain
from proxanon._pipeline.inputs import AnonymizeSettings
from proxanon._pipeline.publish import prepare
from proxanon._pipeline.publish import publish as publish_table
from proxanon._progress import ProgressReporter
from proxanon._results.anonymization import GROUP_COLUMN as GROUP_COLUMN  # public
from proxanon._results.anonymization import Anonymization
from proxanon._results.criteria import Criterion, LDiversity, check_criteria
from proxanon._work_beside import within
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
    publish: str = "generalize",
    criteria: Sequence[Criterion] | None = None,
    max_seconds: float | None = None,
    recoding: str = "local",
) -> Anonymization:
    """Anonymize a table so that every group satisfies (ε, δ)^k-dissimilarity.

    ``quasi_identifiers``: columns an attacker may know; numeric or categorical (strings,
    pandas categoricals). ``sensitive``: numeric columns (scaled to [0, 1] by min-max) or
    ordered categoricals (by rank); compared with ``metric`` and ``weights`` as in
    :func:`proxanon.partition`. ``hierarchies``: per QI column, a :class:`Hierarchy` or the
    path of an ARX-format CSV file; a categorical QI without one gets the flat taxonomy
    (its value, or ``*``), a numeric QI without one its interval ``[min-max]``.
    ``on_infeasible``: ``"raise"`` (:class:`~proxanon.InfeasibleError`) or ``"best_effort"``.
    ``progress=True``: for calls that run more than a few seconds (large tables, or an
    infeasible setting, whose verdict can take a minute), show on standard error the
    phase, the violating rows repaired of those seen, and the elapsed and remaining time,
    from half a second into the run (a bar on a terminal, a line every 2 s elsewhere).
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

    ``delta=0`` asks k-anonymity and the criteria alone (every neighbour is then allowed):
    ``epsilon`` may be left out, the sensitive columns' distance is not read, and the table
    published is the cheaper (GCP) of the hierarchy cut, whose classes are split along the
    taxonomies and published at their tightest nodes, and strict Mondrian's cut
    (docs/design/mondrian.md#the-hierarchy-cut).
    With ``on_infeasible="raise"`` on more than 8192 rows and a built-in metric,
    :func:`proxanon.advise`'s clique bound is checked before any repair: when it proves
    that no partition into groups of at least ``k`` rows satisfies the principle,
    :class:`~proxanon.InfeasibleError` is raised at once with the proof in the columns' own
    units (no partition attached). ``"best_effort"`` and ``"suppress"`` always run.

    Groups that would publish the same QI values are one equivalence class to an attacker:
    they exchange rows, or are merged and repaired, until every class publishes a tuple of
    its own; classes of at least 2k rows are then split along the taxonomies; where the
    QI-aware groups fail, the plain partition's are tried (``report.fallback``); a failing
    best-effort table has its failing classes split into parts no riskier than they were
    (docs/design/publishing.md). Whatever ``on_infeasible`` is, the ``group`` column,
    ``satisfied`` and the report describe the published equivalence classes. A datetime64
    QI is published as its group's date range ``[first, last]``.

    Threads: with ``n_threads`` of 2 or more, the Mondrian-(ε, δ) cut is built on a thread
    of its own while XColor runs, and the degrees and audits split over the threads; which
    candidate is published never depends on which finished first.

    XColor's table is compared with the Mondrian-(ε, δ) cut by cost (GCP). Where a lower
    bound of XColor's cost already exceeds a satisfying cut's, the cut is published without
    finishing XColor's table: the report then names the bound ``"xcolor (at least)"``.

    ``publish``: ``"generalize"`` (default) or ``"anatomy"``: XColor's groups as found, as a QI
    table and ``result.sensitive_table`` (docs/design/anatomy.md).

    ``recoding``: ``"local"`` (default; each class at its own nodes) or ``"global"``
    (full-domain recoding, docs/design/full-domain.md): every QI column published at one
    level of its hierarchy for all kept rows (a numeric QI without one gets nested bands,
    given back in ``result.hierarchies``), the level vector of lowest loss (GCP, a
    suppressed row counting 1) whose failing classes, suppressed, are within
    ``max_suppression`` (with ``on_infeasible="suppress"``); ``report.levels`` names it.

    ``max_seconds``: a time limit; a run that has no table by then is stopped (its native
    work within about 0.1 s) and raises :class:`~proxanon.TimeLimitError`, publishing
    nothing.

    The input frame is never modified.
    """
    started = time.perf_counter()
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True or False, got {progress!r}")
    settings = _settings(
        data, quasi_identifiers, sensitive, k=k, epsilon=epsilon, delta=delta, metric=metric,
        weights=weights, hierarchies=hierarchies, on_infeasible=on_infeasible, init=init,
        search_limit=search_limit, moves=moves, max_suppression=max_suppression,
        method=method, ell=l, sensitive_ranges=sensitive_ranges, neighbours=neighbours,
        n_threads=n_threads, publish=publish, criteria=criteria, recoding=recoding)
    limit = None if max_seconds is None else _validate.seconds(max_seconds, "max_seconds")
    reporter = ProgressReporter() if progress else None
    with reporter if reporter is not None else contextlib.nullcontext():
        if limit is None:
            return _published(data, settings, reporter, started)
        return within(limit, lambda: _published(data, settings, reporter, started))


def _published(data: pd.DataFrame, settings: AnonymizeSettings,
               reporter: ProgressReporter | None, started: float) -> Anonymization:
    """The release ``settings`` ask for: an anatomy release, full-domain recoding, or the
    table job."""
    if settings.publish == "anatomy":
        inputs, seconds = prepare(data, settings, reporter)
        return publish_anatomy(inputs, seconds, started)
    if settings.recoding == "global":
        inputs, seconds = prepare(data, settings, reporter)
        return publish_full_domain(inputs, settings, seconds, started)
    return publish_table(data, settings, reporter=reporter, started=started)


def _settings(data: Any, quasi_identifiers: Any, sensitive: Any, *, k: Any, epsilon: Any,
              delta: Any, metric: Any, weights: Any, hierarchies: Any, on_infeasible: Any,
              init: Any, search_limit: Any, moves: Any, max_suppression: Any, method: Any,
              ell: Any, sensitive_ranges: Any, neighbours: Any, n_threads: Any, publish: Any,
              criteria: Any, recoding: Any) -> AnonymizeSettings:
    """``anonymize``'s arguments checked, each against what it may be and what it goes with."""
    qi_cols, sens_cols = _table_columns(data, quasi_identifiers, sensitive)
    on_infeasible = _validate.choice(on_infeasible, "on_infeasible", _validate.ON_INFEASIBLE)
    method = _method(method, epsilon, delta, publish)
    recoding = _recoding(recoding, method, publish, on_infeasible)
    policy = _policy(data, criteria, ell, qi_cols, sens_cols, publish)
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
        publish=publish, criteria=policy, recoding=recoding)
    if method == "mondrian" and settings.neighbours != "auto":
        raise ValueError("neighbours applies to method='xcolor' only (Mondrian's checks hold "
                         "no neighbour structure); leave it at 'auto'")
    return settings


def _recoding(recoding: Any, method: str, publish: str, on_infeasible: str) -> str:
    """``recoding`` checked with what it goes with: full-domain recoding publishes
    generalized tables of its own search (no method="mondrian", no anatomy), a node that
    holds or none (no best effort)."""
    chosen: str = _validate.choice(recoding, "recoding", ("local", "global"))
    if chosen == "global" and method == "mondrian":
        raise ValueError("recoding='global' searches the generalization lattice: it takes no "
                         "method='mondrian'; leave method at 'xcolor'")
    if chosen == "global" and publish == "anatomy":
        raise ValueError("publish='anatomy' publishes exact QIs beside group ids: it takes no "
                         "recoding='global'")
    if chosen == "global" and on_infeasible == "best_effort":
        raise ValueError("recoding='global' publishes a generalization level that holds, its "
                         "failing classes suppressed within max_suppression: use "
                         "on_infeasible='suppress' (or 'raise'), not 'best_effort'")
    return chosen


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
            sens_cols: list[str], publish: str) -> tuple[Criterion, ...]:
    """The criteria checked, with ``l`` folded in as distinct l-diversity of each sensitive
    column (one implementation: it is that criterion). An anatomy release publishes every
    other column exactly beside its group, so its criteria read sensitive columns only."""
    policy = check_criteria(criteria, [str(c) for c in data.columns], qi_cols, sens_cols)
    outside = [c.column for c in policy if c.column is not None and c.column not in sens_cols]
    if publish == "anatomy" and outside:
        raise ValueError(f"publish='anatomy' publishes column {outside[0]!r} exactly in the QI "
                         "table, so no criterion can protect it there: name a sensitive column "
                         "in the criterion, or make it sensitive")
    return policy if ell is None else (*policy, LDiversity(ell))


def _distinct_hint(policy: Sequence[Criterion], sens_cols: list[str]) -> int | None:
    """The distinct sensitive tuples Mondrian's cuts may require of each part: the largest l
    of the l-diversity criteria on sensitive columns (each kind needs at least l distinct
    values of its column, hence of the tuples), None without one."""
    ells = [c.l for c in policy if isinstance(c, LDiversity)
            and (c.column is None or c.column in sens_cols)]
    return max(ells) if ells else None


def _method(method: Any, epsilon: float | None, delta: float | None, publish: Any) -> str:
    """``method`` checked with the checks it takes: XColor's needs epsilon and delta;
    Mondrian's takes both epsilon and delta or neither, and no anatomy release (which
    publishes XColor's partition)."""
    chosen: str = _validate.choice(method, "method", _validate.METHODS)
    if _validate.choice(publish, "publish", _validate.PUBLISH) == "anatomy" and (
            chosen == "mondrian"):
        raise ValueError("publish='anatomy' publishes XColor's partition: it takes no "
                         "method='mondrian'; leave method at 'xcolor'")
    if chosen == "xcolor":
        if delta is None or (epsilon is None and delta != 0):
            raise TypeError("epsilon and delta are required for method='xcolor' (epsilon may "
                            "be left out at delta=0, which asks k-anonymity and the criteria "
                            "alone)")
    elif (epsilon is None) != (delta is None):
        raise ValueError("give both epsilon and delta to check (epsilon, delta)^k-"
                         "dissimilarity, or neither")
    return chosen

