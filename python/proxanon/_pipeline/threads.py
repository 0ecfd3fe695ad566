"""The cut's thread of ``anonymize``'s default path (:class:`_Threads`): with two threads or
more, the Mondrian-(ε, δ) cut is built and repaired on a thread beside XColor's run, the
proof of infeasibility is sought there on large tables, and the plain partition's session
runs there where it is likely needed; each result reaches the caller's thread in a future.
On one thread the same steps run on the caller's. Which table is published never depends on
which thread finished first."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import pandas as pd

from proxanon._engine import kernels
from proxanon._engine.runs import Session
from proxanon._pipeline.candidates import _Published
from proxanon._pipeline.inputs import _Inputs
from proxanon._pipeline.job import CheckedCut, _Steps
from proxanon._pipeline.mondrian import RawCuts, _mondrian_table, _Unwanted
from proxanon._work_beside import Beside

#: Share of the rows that fail in Mondrian's groups above which the plain partition's session
#: is started beside the QI-aware one, before the cut is specialized (after it, with
#: suppression): a guess of which work will be needed, never a change of the table. On Adult
#: the QI-aware path succeeds where at most about 5% of the rows fail and fails where 30% or
#: more do, and then needs the plain session, which is cheaper started early.
_HARD_SHARE = 0.2
#: Rows above which ``anonymize`` on two threads or more seeks the proof of infeasibility
#: beside XColor's run rather than before it: from there on the proof costs more than
#: starting a thread and stopping XColor's run (docs/performance.md), below it less.
_PROOF_BESIDE_ROWS = 1 << 18



class _Threads(_Steps):
    """The steps of :class:`proxanon._pipeline.job._Steps`, with the cut's thread: the
    Mondrian-(ε, δ) cut built and repaired beside the caller's work (:meth:`cut_and_repair`),
    which hands what it finds to the caller in futures, and the plain partition's session
    computed there where it is likely needed (:meth:`plain_ahead`)."""

    def __init__(self, inputs: _Inputs, seconds: dict[str, float]) -> None:
        super().__init__(inputs, seconds)
        # The default path compares XColor's table with the Mondrian-(ε, δ) cut (built-in
        # metrics): with two threads or more, the cut is built and repaired beside XColor's run.
        self.cut_wanted = inputs.init == "qi" and inputs.relation.kind == "builtin"
        self.cut_beside = self.cut_wanted and inputs.threads > 1
        self.proof_beside = self.cut_beside and self.n_all > _PROOF_BESIDE_ROWS

        # Beside XColor's run (two threads or more): the cut and its repair where one is
        # wanted. Where Mondrian's groups fail in many rows (_HARD_SHARE), the QI-aware path
        # usually fails too and then needs the plain partition's session: that thread runs it
        # before finishing the cut (after it, with suppression, where the caller compares
        # with the cut as soon as its session ends), unless the caller's thread asked for it
        # already; the caller stops it when it is not needed. Only the order of work changes,
        # never a table.
        # Set by the cut's thread: the cut with its audit and its repair (``cut_and_repair``),
        # and the plain session where it computes it (``plain_ahead``).
        self.cut_ready: Future[tuple[CheckedCut | None, _Published | None]] = Future()
        self.plain_ready: Future[Session] = Future()
        self.plain_stop = kernels.StopRequest()  # set by the caller: no plain session needed
        # Under plain_lock: whether the cut's thread computes the plain session (written by
        # that thread, once, in ``plain_ahead``), and whether the caller has asked for it
        # (written by the caller, in ``plain_partition``); whichever comes first decides.
        self.plain_lock = threading.Lock()
        self.plain_beside = False
        self.plain_claimed = False
        # Also from that thread, for ``cut_over_session``: whether Mondrian's groups fail
        # widely (the thread then runs the plain session first), and the cut with its audit.
        self.hard_ready: Future[bool] = Future()
        self.built_ready: Future[CheckedCut | None] = Future()
        # Beside XColor's run, on tables over _PROOF_BESIDE_ROWS rows, the proof of
        # infeasibility comes first (it ends long before XColor's run): where there is one,
        # XColor's run is stopped (main_stop) and the caller raises it, as if it had been
        # found before the run.
        self.proof_ready: Future[str | None] = Future()
        self.main_stop = kernels.StopRequest()
        # Set by the cut's thread last: the cut's table where it generalized it, else None.
        self.table_ready: Future[tuple[pd.DataFrame, float] | None] = Future()
        self.ended = threading.Event()  # set once the caller's work has ended (any way out)
        # The cut's thread, started by ``run``; None on one thread or off the default path.
        self.cut_ahead: Beside[None] | None = None

        # On the caller's thread, once ``mondrian_cut`` has taken them (built here on one
        # thread, from the cut's thread on more): the cut with its audit, and (from the cut's
        # thread, else once ``repaired_cut`` has computed it) its repair; None: there is none.
        self.cut_taken = False
        self.cut: CheckedCut | None = None
        self.repair_taken = False
        self.repair: _Published | None = None
        # On one thread (no cut's thread): whether Mondrian's groups fail widely (``hard``),
        # written by ``build_cut``; None until then.
        self.cut_hard: bool | None = None

    # The Mondrian-(ε, δ) cut, on its thread or on the caller's

    def hard(self, part: RawCuts | None) -> bool:
        """Whether Mondrian's groups fail in > _HARD_SHARE of the rows; never with suppression."""
        return (part is not None and not self.suppress
                and part.remaining_violations() > _HARD_SHARE * self.n_all)

    def build_cut(self) -> CheckedCut | None:
        """The cut and its audit, built on the caller's thread; sets ``cut_hard``.

        ``raw_cut`` and ``finish_cut``; ``cut_hard`` records whether Mondrian's groups failed
        widely."""
        tic = time.perf_counter()
        part = self.raw_cut()
        self.cut_hard = self.hard(part)
        return self.finish_cut(part, time.perf_counter() - tic, beside=False)

    def cut_and_repair(self) -> None:
        """The cut's thread's work; on any way out, every future the caller waits for is set.

        The proof (where sought beside), then Mondrian's groups, the plain session where they
        fail widely, the cut, its repair and its table, each handed to the caller as soon as
        it is known."""
        try:
            try:
                proof = self.proof_of_infeasibility(beside=True) if self.proof_beside else None
            except BaseException as exc:  # the caller raises it, as it would have
                self.proof_ready.set_exception(exc)
                self.main_stop.set()
                raise
            self.proof_ready.set_result(proof)
            if proof is not None:
                self.main_stop.set()
                self.cut_ready.set_result((None, None))
                self.table_ready.set_result(None)
                return
            tic = time.perf_counter()
            part = self.raw_cut()
            spent = time.perf_counter() - tic
            self.hard_ready.set_result(self.hard(part))
            if not self.suppress:  # the plain session first: the cut waits for XColor's table
                self.plain_ahead(part)
            built = self.finish_cut(part, spent, beside=True)
            self.built_ready.set_result(built)
            if self.suppress:  # the cut first: the caller compares with it when its session ends
                self.plain_ahead(part)
            repaired = self.repair_of(built, beside=True)
        except BaseException as exc:  # handed to whoever waits for the cut
            if not self.cut_ready.done():
                self.cut_ready.set_exception(exc)
            self.table_ready.set_result(None)
            raise
        finally:  # no comparison ahead on a way out without a cut
            if not self.hard_ready.done():
                self.hard_ready.set_result(True)
            if not self.built_ready.done():
                self.built_ready.set_result(None)
        self.cut_ready.set_result((built, repaired))
        # A cut that satisfies is published when it costs no more than XColor's table (as on
        # census-like tables): its table is generalized here while XColor's run goes on,
        # off the caller's path.
        generalized = None  # else the caller generalizes it, if it needs it
        try:
            if built is not None and built[1].satisfied:
                generalized = _mondrian_table(self.inputs.data, self.inputs.columns, built[0],
                                              self.ended)
        except _Unwanted:
            pass
        finally:
            self.table_ready.set_result(generalized)

    def mondrian_cut(self) -> CheckedCut | None:
        """The cut and its audit, built or taken once; None off the default path.

        Built here on one thread, taken from its thread on more; off the default path:
        another start, or no built-in metric."""
        if not self.cut_wanted:
            return None
        if not self.cut_taken:
            if self.cut_ahead is None:
                self.cut = self.build_cut()
            else:
                self.cut, self.repair = self.cut_ready.result()
                self.repair_taken = True
            self.cut_taken = True
        return self.cut

    def easy_cut(self) -> CheckedCut | None:
        """The cut and its audit unless Mondrian's groups fail widely; the same on any thread count.

        From its thread, or built here once; None where Mondrian's groups fail widely (never
        with suppression): the thread beside then computes the plain session before the cut,
        and waiting for its cut would keep this thread idle (not waited for, and not taken on
        one thread either, so that the choice is the same on any thread count)."""
        if self.cut_ahead is not None:
            return None if self.hard_ready.result() else self.built_ready.result()
        built = self.mondrian_cut()
        return built if self.cut_hard is False else None

    def cut_table(self) -> tuple[pd.DataFrame, float] | None:
        """The cut's table and seconds where its thread generalized it (waited for), else None."""
        return self.table_ready.result() if self.cut_ahead is not None else None

    # The plain partition's table (XColor as ``partition`` runs it by default)

    def plain_ahead(self, part: RawCuts | None) -> None:
        """On the cut's thread: the plain session, where it is likely needed and not claimed.

        The plain session, computed into ``plain_ready`` where Mondrian's groups fail in
        more than _HARD_SHARE of the rows and the caller has not asked for it (with
        suppression too: there the QI-aware path fails where its suppression exceeds
        the budget, and the plain one decides)."""
        wanted = (part is not None
                  and part.remaining_violations() > _HARD_SHARE * self.n_all)
        with self.plain_lock:
            self.plain_beside = wanted and not self.plain_claimed
        if self.plain_beside:
            try:
                with self.plain_stop:
                    self.plain_ready.set_result(self.session_of(plain=True, beside=True))
            except BaseException as exc:  # stopped (unwanted), or handed to the caller
                self.plain_ready.set_exception(exc)

    def plain_partition(self) -> _Published:
        """The plain partition's table, its session taken from the cut's thread if that
        computes it, else computed here."""
        with self.plain_lock:
            self.plain_claimed = True
        if self.plain_beside:
            return self.finish(self.plain_ready.result(), plain=True)
        return self.publish(plain=True)

    def settle_proof(self) -> None:
        """Raises the proof of infeasibility found beside, if any (waiting for it)."""
        if self.proof_beside:
            proof = self.proof_ready.result()
            if proof is not None:
                raise self.proven(proof) from None
