"""``anonymize``'s default path as one job over explicit state (:class:`_Job`): XColor's table,
the Mondrian-(ε, δ) cut (built and repaired beside it on the cut's thread,
:mod:`proxanon._pipeline.threads`), the plain partition's table where the QI-aware one fails,
and the choice of the table to publish."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from proxanon._engine.runs import Session, full_search_worth
from proxanon._errors import InfeasibleError
from proxanon._pipeline.candidates import _better, _cost, _cost_floor, _Published
from proxanon._pipeline.mondrian import _Cut
from proxanon._pipeline.threads import _Threads
from proxanon._results.audit import AuditReport
from proxanon._work_beside import Beside


@dataclass(frozen=True)
class _CutPicked:
    """The Mondrian-(ε, δ) cut chosen to be published: the cut, the audit of its classes, the
    costs compared, and its table where the cut's thread generalized it."""

    cut: _Cut
    check: AuditReport
    costs: dict[str, float]
    generalized: tuple[pd.DataFrame, float] | None


class _Job(_Threads):
    """One run of ``anonymize``'s default path: :meth:`run` returns the table to publish.

    It runs the steps of :class:`proxanon._pipeline.job._Steps`; with two threads or more
    the Mondrian-(ε, δ) cut is built and repaired on the cut's thread
    (:class:`proxanon._pipeline.threads._Threads`) while the caller's thread runs XColor
    (:meth:`choose`). Which table is published never depends on which thread finished
    first.
    """

    def cut_over_session(self, session: Session) -> _CutPicked | None:
        """The cut where XColor's table, unfinished, cannot cost less; else None.

        The Mondrian-(ε, δ) cut, published without finishing XColor's table when that table
        cannot cost less: specialization and absorption leave its classes under 2k rows as they are
        (``_cost_floor`` bounds its cost from below by them), and keep passing classes
        passing, so once the cut satisfies, costs less than that bound, and XColor's classes
        pass the audit, ``mondrian_instead`` would publish the cut. At 3M census rows that
        spares XColor's specialization, summary and audit (0.9 s). The report names XColor's
        cost "xcolor (at least)": the bound."""
        inputs = self.inputs
        if (self.suppress or not self.cut_wanted or session.released.size < self.n_all
                or any(c.instants is not None for c in inputs.columns)):
            return None
        if inputs.reporter is not None:
            inputs.reporter.phase = "Mondrian cut"
        # Where the cut's thread is still at work, this thread would wait for it: the bound
        # and the audit of XColor's classes are taken meanwhile, on the threads the cut's
        # thread leaves (the same audit on any number), and used only if the cut satisfies
        # (1M census rows: 0.2 s of a 2 s run no longer follows the wait).
        floor: float | None = None
        check: AuditReport | None = None
        if (self.cut_ahead is not None and not self.hard_ready.result()
                and not self.built_ready.done()):
            floor = _cost_floor(inputs.columns, session.classes, inputs.k, self.n_all)
            check = self.audit_classes(inputs.sens, inputs.relation, session.classes,
                                       inputs.threads - self.beside_threads)
        built = self.easy_cut()
        if built is None or not built[1].satisfied:
            return None
        cut, cut_check = built
        if floor is None:
            floor = _cost_floor(inputs.columns, session.classes, inputs.k, self.n_all)
        if not floor > cut.summary.gcp() * (1 + 1e-9):
            return None
        if check is None:
            check = self.audit_classes(inputs.sens, inputs.relation, session.classes,
                                       inputs.threads)
        if not self.passes(check, session.released):
            return None
        costs = {"xcolor (at least)": floor, cut.name(): cut.summary.gcp()}
        self.seconds.update(session.seconds)  # the audit's time is the cut's (_publish_mondrian)
        return _CutPicked(cut, cut_check, costs, self.cut_table())

    def repaired_cut(self, xcolor: _Published | None
                     ) -> tuple[_Published | None, dict[str, float]]:
        """The repaired cut where it costs less than XColor's table, else None; the costs.

        The repaired Mondrian-(ε, δ) cut (``repair_of``), published instead of XColor's own
        table when it costs less (GCP); and the costs compared."""
        cut = self.mondrian_cut()
        if not self.repair_taken:
            self.repair = self.repair_of(cut, beside=False)
            self.repair_taken = True
        repaired = self.repair
        if repaired is None:
            return None, {}
        costs = {"xcolor from the Mondrian cut": _cost(repaired.summary, self.n_all)}
        if xcolor is not None and self.acceptable(xcolor):
            costs = {"xcolor": _cost(xcolor.summary, self.n_all), **costs}
            if costs["xcolor"] <= costs["xcolor from the Mondrian cut"]:
                return None, costs
        return repaired, costs

    def mondrian_instead(self, xcolor: _Published | None
                         ) -> tuple[_CutPicked | None, dict[str, float]]:
        """The cut where it satisfies and beats XColor's table, else None; the costs.

        With the default start: the Mondrian-(ε, δ) cut when it satisfies and XColor's
        table (None: its path failed) is not acceptable or costs more (GCP, see
        :func:`_cost`); and the costs compared. Mondrian needs a built-in metric."""
        built = self.mondrian_cut()
        if built is None:
            return None, {}
        cut, cut_check = built
        if not cut_check.satisfied:
            return None, {}
        costs = {cut.name(): cut.summary.gcp()}
        if xcolor is not None and self.acceptable(xcolor):
            costs = {"xcolor": _cost(xcolor.summary, self.n_all), **costs}
            if costs["xcolor"] <= costs[cut.name()]:
                return None, costs
        return _CutPicked(cut, cut_check, costs, self.cut_table()), costs

    # Choosing

    def wider_search_helps(self, chosen: _Published) -> bool:
        """Whether the QI-aware run is tried again with every class searched
        (:func:`proxanon._engine.runs.full_search_worth`), all rows released."""
        return (not self.suppress and chosen.released.size == self.n_all
                and full_search_worth(self.inputs.limit, len(chosen.check.violating_rows),
                                      self.n_all))

    def choose(self) -> _CutPicked | tuple[_Published, dict[str, float]]:
        """The table to publish, with the costs compared; the same on any thread count.

        Mondrian's, or one of XColor's with the costs compared (see the docstring of
        :func:`anonymize`)."""
        reporter = self.inputs.reporter
        failure: InfeasibleError | None = None
        try:
            session = self.session_of(plain=False)
        except InfeasibleError as exc:  # suppression left fewer than k rows on this path
            failure = exc
        else:
            instead = self.cut_over_session(session)
            if instead is not None:
                return instead
            chosen = self.finish(session, plain=False)
        if failure is None and not self.acceptable(chosen) and self.wider_search_helps(chosen):
            # A few rows left violating by a search limited to the classes near each: every
            # class searched before the plain partition is tried.
            if reporter is not None:
                reporter.phase = "QI-aware, every class searched"
            wider = self.finish(self.session_of(plain=False, search=0), plain=False)
            if _better(wider, chosen, self.acceptable):
                chosen = wider
        if failure is None and self.acceptable(chosen):
            self.plain_stop.set()
        else:
            # The QI-aware path failed: the plain partition's groups may still satisfy (and
            # when the QIs tell rows apart, they publish distinct tuples).
            if reporter is not None:
                reporter.phase = "plain partition"
            try:
                plain = self.plain_partition()
            except InfeasibleError:
                if failure is not None:
                    instead, _ = self.mondrian_instead(None)
                    if instead is not None:
                        return instead
                    raise failure from None
            else:
                if failure is not None or _better(plain, chosen, self.acceptable):
                    chosen = plain
        repaired, repair_costs = self.repaired_cut(chosen)
        if repaired is not None:
            chosen = repaired
        self.seconds.update(chosen.seconds)
        instead, candidates = self.mondrian_instead(chosen)
        return instead if instead is not None else (chosen, candidates or repair_costs)

    def run(self) -> _CutPicked | tuple[_Published, dict[str, float]]:
        """The table to publish; on any way out, the cut's thread, if any, has ended.

        ``choose``'s table; one of XColor's that fails, as best effort, with its failing
        classes split."""
        if not self.proof_beside:
            proof = self.proof_of_infeasibility(beside=False)
            if proof is not None:
                raise self.proven(proof)
        if self.cut_beside:
            self.cut_ahead = Beside(self.cut_and_repair)
        try:  # the cut's thread, if any, is stopped on any way out
            try:
                with self.main_stop:
                    self.interchangeable()  # computed here, once the thread beside has started
                    picked = self.choose()
            except Exception:
                self.settle_proof()  # a proof found beside stopped this thread's run
                raise
            self.settle_proof()
        finally:
            self.plain_stop.set()
            self.ended.set()
            if self.cut_ahead is not None:
                self.cut_ahead.stop()
        if isinstance(picked, _CutPicked):
            return picked
        chosen, candidates = picked
        if not chosen.check.satisfied and self.inputs.on_infeasible == "best_effort":
            chosen = self.split_failing(chosen)
        return chosen, candidates
