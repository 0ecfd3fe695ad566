"""The steps of ``anonymize``'s default path that make and check one candidate table
(:class:`_Steps`): the proof of infeasibility, XColor's sessions and the tables published from
them, the failing classes of a best-effort table split, and the Mondrian-(ε, δ) cut with its
repair; :mod:`proxanon._pipeline.choose` runs them on its threads and chooses the table."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from proxanon._engine.classes import largest_class_rows
from proxanon._engine.options import Checks, EngineOptions, NativeRun
from proxanon._engine.proofs import early_proof
from proxanon._engine.runs import (
    CHECK_GRAPH_ENTRIES,
    Session,
    run_mondrian,
    run_session,
    run_specialize,
    search_for,
)
from proxanon._engine.verdicts import proven_before_repair
from proxanon._errors import GraphTooDenseError, InfeasibleError
from proxanon._pipeline.candidates import _Published
from proxanon._pipeline.classes import (
    ClassChecks,
    _absorb_classes,
    _audit_groups,
    _carried,
    _interchangeable_rows,
    _merge_equal_tuples,
    _published_key_inputs,
    _specialize_classes,
)
from proxanon._pipeline.inputs import _Inputs
from proxanon._pipeline.mondrian import RawCuts, _best_cut, _Cut
from proxanon._pipeline.verdict import epsilon_in_units, rows_by_value
from proxanon._progress import ProgressReporter
from proxanon._results.audit import AuditReport
from proxanon._results.measures import summarize_groups
from proxanon.distances import Relation
from proxanon.tables import encode_sensitive, numeric_scales

#: The largest share of rows that may violate in the Mondrian-(ε, δ) cut for ``anonymize`` to
#: try repairing it, and the merging rounds that repair may take: a cut that fails in few
#: rows is repaired in a fraction of a second (Adult, ARX taxonomies on all four QIs: 123
#: violating rows, 0.3 s); one that fails widely would cost minutes of merging rounds.
_CUT_REPAIR_SHARE = 0.01
_CUT_MERGE_ROUNDS = 8

#: The Mondrian-(ε, δ) cut and the audit of its classes.
CheckedCut = tuple[_Cut, AuditReport]



class _Steps:
    """The steps that make and check one candidate table, over the job's inputs.

    A step writes nothing of the job's but its times in ``seconds`` and the rows' ids
    (``interchangeable``); with ``beside``, it runs on the cut's thread beside the caller's
    work (:class:`proxanon._pipeline.threads._Threads`): on that thread's share of the
    threads, showing no progress.
    """

    def __init__(self, inputs: _Inputs, seconds: dict[str, float]) -> None:
        self.inputs = inputs
        # Seconds per step, for the report: each step writes its own as it ends (the cut's
        # thread writes "mondrian" only).
        self.seconds = seconds
        self.n_all = len(inputs.data)
        self.suppress = inputs.on_infeasible == "suppress"
        # The cut's thread's threads (the caller keeps the rest).
        self.beside_threads = max(1, inputs.threads // 2)
        # The rows interchangeable between groups (``interchangeable``): written once, by
        # whichever thread asks first, under the lock.
        self.ids_lock = threading.Lock()
        self.ids: NDArray[np.int64] | None = None

    def threads_for(self, beside: bool) -> int:
        """The threads a step takes: the cut's thread's share beside the caller, else all."""
        return self.beside_threads if beside else self.inputs.threads

    def progress_for(self, beside: bool) -> ProgressReporter | None:
        """Where a step's progress goes: the caller's reporter, never the cut's thread."""
        return None if beside else self.inputs.reporter

    # Checking and publishing

    def proof_of_infeasibility(self, beside: bool) -> str | None:
        """The proof that no table can satisfy, or None; None unless on_infeasible="raise".

        A proof that no partition into groups of >= k rows satisfies: neither path can
        publish a table."""
        inputs = self.inputs
        if inputs.on_infeasible != "raise":
            return None
        return early_proof(inputs.sens, inputs.k, inputs.eps, inputs.dlt, inputs.relation,
                           any_partition=True,
                           describe=rows_by_value(inputs.data, inputs.sens_cols),
                           threads=self.threads_for(beside))

    def proven(self, proof: str) -> InfeasibleError:
        """The error raised on ``proof``: epsilon in the columns' units, no partition."""
        inputs = self.inputs
        units = epsilon_in_units(
            inputs.data, inputs.sens_cols, inputs.relation, inputs.eps,
            numeric_scales(inputs.data, inputs.sens_cols, inputs.given, inputs.metric,
                           inputs.ranges), inputs.given)
        return InfeasibleError(proven_before_repair(proof, inputs.k, inputs.eps, inputs.dlt,
                                                    inputs.relation)
                               + ("\n" + units if units else ""))

    def interchangeable(self) -> NDArray[np.int64]:
        """An id per row, equal for rows interchangeable between groups; computed once.

        Rows with identical sensitive values; with a row-indexed neighbour graph, rows whose
        neighbours (themselves included) are the same. Computed by whichever thread asks
        first."""
        with self.ids_lock:
            if self.ids is None:
                self.ids = _interchangeable_rows(self.inputs.sens, self.inputs.relation)
            return self.ids

    def published_sensitive(self, released: NDArray[np.int64]
                            ) -> tuple[NDArray[np.float64], Relation]:
        """The sensitive columns of the rows ``released``, as audited, and their relation."""
        # The published table as any auditor reads it: its sensitive columns scaled over the
        # rows it holds (suppression can narrow a column's range).
        inputs = self.inputs
        if released.size < self.n_all:
            return encode_sensitive(inputs.data.iloc[released], inputs.sens_cols, inputs.given,
                                    inputs.metric, inputs.weights, inputs.ranges)
        return inputs.sens, inputs.relation

    def checks_on(self, sens: NDArray[np.float64], rel: Relation) -> ClassChecks:
        """The job's checks (k, epsilon, delta) on the sensitive values ``sens`` under ``rel``."""
        criteria = self.inputs.criteria
        own = criteria is not None and sens is self.inputs.sens
        return ClassChecks.on(sens, rel, k=self.inputs.k, eps=self.inputs.eps,
                              dlt=self.inputs.dlt,
                              criteria=criteria.native if own and criteria else None,
                              failing=criteria.failing if own and criteria else None)

    def audit_classes(self, sens: NDArray[np.float64], rel: Relation,
                      classes: NDArray[np.int64], used: int) -> AuditReport:
        """The independent audit of ``classes`` on ``used`` threads (the same on any number)."""
        return _audit_groups(sens, classes, rel, self.inputs.k, self.inputs.eps,
                             self.inputs.dlt, used)

    def session_of(self, plain: bool, start: NDArray[np.int64] | None = None,
                   max_rounds: int | None = None, beside: bool = False,
                   search: int | None = None) -> Session:
        """One native session's classes: each publishes its own tuple unless a repair fails.

        The engine's groups, with groups that publish one tuple merged and repaired until
        every class publishes its own tuple (or a repair fails), in one native session
        (:func:`proxanon._engine.runs.run_session`). ``plain``: the engine as
        :func:`proxanon.partition` runs it by default (no QI loss, Algorithm 1's start).
        ``start``: groups to repair instead of INITIALIZE's; ``max_rounds``: merging rounds at
        most (what still collides is then published as one class, and audited so);
        ``search``: classes examined per violation instead of the job's limit (0: all)."""
        inputs = self.inputs
        if search is None:
            search = search_for(inputs.limit, plain)
        shown = self.progress_for(beside)
        options = EngineOptions(
            k=inputs.k, delta=inputs.dlt, search_limit=search,
            init="degree" if plain else inputs.init, init_block=1, moves=inputs.moves,
            suppress=self.suppress, threads=self.threads_for(beside),
            progress=shown.counters if shown is not None else None)
        return run_session(inputs.sens,
                           NativeRun(options=options, eps=inputs.eps, relation=inputs.relation,
                                     neighbours=inputs.neighbours, reporter=shown,
                                     started=time.perf_counter()),
                           inputs.qi, inputs.taxonomies, inputs.node_keys,
                           self.interchangeable(), qi_aware=not plain, start=start,
                           max_rounds=max_rounds, budget=inputs.budget)

    def publish(self, plain: bool, start: NDArray[np.int64] | None = None,
                max_rounds: int | None = None, beside: bool = False) -> _Published:
        """``session_of``'s classes published (``finish``): specialized, absorbed, audited."""
        return self.finish(self.session_of(plain, start, max_rounds, beside), plain, beside)

    def finish(self, session: Session, plain: bool, beside: bool = False) -> _Published:
        """A session's classes published and audited; passing classes keep passing.

        Its classes specialized and their giant classes' rows absorbed, then audited (on the
        threads of ``beside``)."""
        inputs = self.inputs
        released, classes, formed_from = (session.released, session.classes,
                                          session.formed_from)
        times = dict(session.seconds)
        columns = [c.subset(released) for c in inputs.columns]
        # The session tells tuples apart by codes, and taxonomy nodes by label (node_keys); a
        # number's label is the shortest text that reads back as it, so distinct codes read
        # differently. A datetime's label is its instant's text: labels that read alike are
        # one class too (the summary for that costs 0.5 s at 3M rows, so only there).
        if any(c.instants is not None for c in columns):
            by_label = _merge_equal_tuples(summarize_groups(columns, classes).labels)
            if by_label.size and int(by_label.max()) + 1 < by_label.size:
                formed_from = np.bincount(by_label, weights=formed_from).astype(np.int64)
                classes = by_label[classes]
        tic = time.perf_counter()
        sens, rel = self.published_sensitive(released)
        keys = ((inputs.qi, inputs.taxonomies, inputs.node_keys)
                if released.size == self.n_all else _published_key_inputs(columns))
        checks = self.checks_on(sens, rel)
        classes, summary, formed_from = _specialize_classes(
            classes, formed_from, columns, checks, keys, self.threads_for(beside))
        times["specialize"] = time.perf_counter() - tic
        tic = time.perf_counter()
        absorbed = _absorb_classes(classes, columns, checks, keys)
        if absorbed is not None:
            classes, summary = absorbed, summarize_groups(columns, absorbed)
        times["absorb"] = time.perf_counter() - tic
        tic = time.perf_counter()
        check = self.audit_classes(sens, rel, classes, self.threads_for(beside))
        times["audit"] = time.perf_counter() - tic
        return _Published(session.last, released, classes, columns, summary, formed_from,
                          session.rounds, session.swaps, session.initial_violations, times,
                          check, plain)

    def split_failing(self, result: _Published) -> _Published:
        """A best-effort table with failing classes split; its violating rows never grow.

        The failing classes are split into parts of at least k rows that publish finer tuples
        of their own and hold no more violating rows in all (the rows no table protects
        otherwise gather in a few giant classes publishing coarse tuples), then rows of giant
        classes, failing ones too, absorbed into classes that cover them (``_absorb_classes``),
        then failing classes still above 2% of the rows dealt into parts of at most 2% but one
        (the covering split, after small classes publishing tuples those parts need are
        emptied into passing classes that cover their rows, in rounds with absorption),
        summarized and audited again; the same table when nothing changed."""
        inputs, seconds = self.inputs, self.seconds
        k, eps, dlt = inputs.k, inputs.eps, inputs.dlt
        tic = time.perf_counter()
        sens, rel = self.published_sensitive(result.released)
        keys = ((inputs.qi, inputs.taxonomies, inputs.node_keys)
                if result.released.size == self.n_all
                else _published_key_inputs(result.columns))
        classes, splits = run_specialize(result.classes, sens,
                                         Checks(k=k, eps=eps, dlt=dlt, relation=rel), *keys,
                                         step="split_failing", threads=inputs.threads)
        seconds["specialize"] = seconds.get("specialize", 0.0) + time.perf_counter() - tic
        tic = time.perf_counter()
        absorbed = _absorb_classes(classes, result.columns, self.checks_on(sens, rel), keys,
                                   True)
        seconds["absorb"] = seconds.get("absorb", 0.0) + time.perf_counter() - tic
        after = absorbed if absorbed is not None else classes
        covered = None
        if np.bincount(after).max() > largest_class_rows(after.size):
            tic = time.perf_counter()
            cover, covers = run_specialize(after, sens,
                                           Checks(k=k, eps=eps, dlt=dlt, relation=rel), *keys,
                                           step="cover_failing", threads=inputs.threads)
            seconds["specialize"] += time.perf_counter() - tic
            covered = cover if covers else None
        if not splits and absorbed is None and covered is None:
            return result
        # Per class, the merged count of a class its rows came from: absorbing and vacating
        # move rows between classes, so this is one source's (only an infeasible verdict's
        # text reads it, and a best effort shows none).
        merged = _carried(result.merged, result.classes, classes)
        if covered is not None:
            merged = _carried(merged, after, covered)
        classes = covered if covered is not None else after
        summary = summarize_groups(result.columns, classes)  # once, for what is published
        tic = time.perf_counter()
        check = self.audit_classes(sens, rel, classes, inputs.threads)
        seconds["audit"] = seconds.get("audit", 0.0) + time.perf_counter() - tic
        return replace(result, classes=classes, summary=summary, check=check, merged=merged)

    def acceptable(self, result: _Published) -> bool:
        """Whether ``result`` may be published: ``passes`` of its audit and released rows."""
        return self.passes(result.check, result.released)

    def passes(self, check: AuditReport, released: NDArray[np.int64]) -> bool:
        """Whether ``check`` is satisfied and ``released`` leaves out no more than the budget."""
        return check.satisfied and self.n_all - released.size <= self.inputs.budget * self.n_all

    # The Mondrian-(ε, δ) cut

    def raw_cut(self) -> RawCuts | None:
        """Mondrian's groups for the cut: the median cut and, where some QI has a hierarchy of
        more than one level, the hierarchy cut; None where the relation's graph is too dense.

        None where the relation's graph would hold more than CHECK_GRAPH_ENTRIES entries, since
        Mondrian's checks read every present value's neighbours at every cut (or search a
        grid), which took minutes on dense continuous values. Without such a hierarchy the
        hierarchy cut splits as the median cut does, at several times its cost (a synthetic
        census of 100,000 rows with flat text QIs: 0.9 s against 0.14 s)."""
        inputs = self.inputs
        checks = Checks(k=inputs.k, eps=inputs.eps, dlt=inputs.dlt, relation=inputs.relation,
                        criteria=None if inputs.criteria is None else inputs.criteria.native)
        deep = any(tax is not None and tax[0].size > tax[1] + 1 for tax in inputs.taxonomies)
        try:
            median, *hierarchy = [
                run_mondrian(inputs.sens, checks, inputs.qi, inputs.taxonomies,
                             on_infeasible="best_effort", started=time.perf_counter(),
                             grid_checks=False, max_graph_entries=CHECK_GRAPH_ENTRIES,
                             follow_hierarchy=follow)
                for follow in ((False, True) if deep else (False,))]
        except GraphTooDenseError:
            return None
        return RawCuts(median=median, hierarchy=hierarchy[0] if hierarchy else None)

    def finish_cut(self, raw: RawCuts | None, spent: float,
                   beside: bool) -> CheckedCut | None:
        """The cut with the audit of its classes, from Mondrian's groups; None without them.

        The Mondrian-(ε, δ) cut from ``raw`` (None: see ``raw_cut``): of its two cuts, the one
        :func:`proxanon._pipeline.mondrian._best_cut` picks, finished. ``spent``: seconds
        ``raw`` took."""
        inputs = self.inputs
        tic = time.perf_counter()
        if raw is None:
            return None
        cut = _best_cut(inputs.columns, self.checks_on(inputs.sens, inputs.relation),
                        (inputs.qi, inputs.taxonomies, inputs.node_keys), raw,
                        self.threads_for(beside))
        # The verdict is the audit's of the published classes (specialization may have
        # split a class that Mondrian's own cut left failing).
        check = self.audit_classes(inputs.sens, inputs.relation, cut.groups,
                                   self.threads_for(beside))
        self.seconds["mondrian"] = spent + time.perf_counter() - tic
        return cut, check

    def fails_widely(self, built: CheckedCut | None) -> bool:
        """Whether the cut fails in too many rows to be repaired (``repair_of`` skips it)."""
        return (built is not None and not built[1].satisfied
                and len(built[1].violating_rows) > _CUT_REPAIR_SHARE * self.n_all)

    def repair_of(self, built: CheckedCut | None, beside: bool) -> _Published | None:
        """The cut repaired by XColor where the result is acceptable, else None.

        With the default start, when the Mondrian-(ε, δ) cut fails in few rows (at most
        ``_CUT_REPAIR_SHARE`` of them): its classes as XColor's starting groups, repaired by
        the swap loop, merged at most ``_CUT_MERGE_ROUNDS`` times. Its classes follow the
        taxonomies' nodes, so they collide far less than groups cut from a QI order."""
        if self.suppress or built is None:
            return None
        cut, cut_check = built
        if cut_check.satisfied or self.fails_widely(built):
            return None
        shown = self.progress_for(beside)
        if shown is not None:
            shown.phase = "repair of the Mondrian cut"
        try:
            repaired = self.publish(plain=False, start=cut.start, max_rounds=_CUT_MERGE_ROUNDS,
                                    beside=beside)
        except InfeasibleError:
            return None
        return repaired if self.acceptable(repaired) else None
