"""Progress of long runs on standard error: the stage, how much of it is done, elapsed and
remaining time."""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from types import TracebackType
from typing import Any, TextIO

from proxanon._engine import kernels

#: Bar layouts: a stage with a known amount of work (the bar takes the width left over;
#: times are elapsed<remaining), and one without (time only).
_COUNTED = "{desc}: {n_fmt}/{total_fmt} rows repaired |{bar}| {elapsed}<{remaining}{postfix}"
_TIMED = "{desc} ({elapsed} elapsed)"


def _size(stream: TextIO) -> tuple[int, int]:
    """The terminal's columns and lines; 80 x 24 when it reports 0 x 0 (a fresh pseudo-
    terminal does), for which tqdm would draw nothing."""
    try:
        columns, lines = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        columns, lines = 0, 0
    return columns if columns > 0 else 80, lines if lines > 0 else 24


class ProgressReporter:
    """Polls the native engine's counters from a thread while it works (the GIL is released).

    Quiet for the first ``delay`` seconds (default 0.5, or the environment variable
    ``PROXANON_PROGRESS_DELAY``), so short runs print nothing. On a terminal, a tqdm bar is
    redrawn every ``interval`` seconds: the stage (``phase`` names the Python-side step when
    the engine is not running), and in the repair the violating rows repaired of those seen,
    with elapsed and remaining time. On any other stream a plain line is written every
    ``interval`` seconds at most.
    """

    def __init__(self, stream: TextIO | None = None, *, delay: float | None = None,
                 interval: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        if delay is None:
            try:
                delay = float(os.environ.get("PROXANON_PROGRESS_DELAY", "0.5"))
            except ValueError:
                delay = 0.5
        self.delay = delay
        self._started = time.monotonic()  # reset when the run starts (__enter__)
        self.interval = interval if interval is not None else (0.2 if self.tty else 2.0)
        self.counters = kernels.Progress()
        self.phase = "prepare"
        self.engine_running = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="proxanon-progress", daemon=True)
        self._bar: Any = None
        self._stage: tuple[bool, str] | None = None
        self._repair_total = 0

    def describe(self) -> str:
        if not self.engine_running:
            return f"proxanon: {self.phase}"
        c = self.counters
        if c.phase == "repair":
            return (f"proxanon: repair: {c.queued:,} violation(s) queued, "
                    f"{c.set_aside:,} set aside, {c.swaps:,} swap(s)")
        return f"proxanon: {c.phase}"

    def _draw(self) -> None:
        """Redraws the bar; a new stage restarts it (and its clock)."""
        # Imported by name: tqdm ships no type information, so it is used as Any.
        tqdm = importlib.import_module("tqdm").tqdm
        c = self.counters
        phase = c.phase if self.engine_running else self.phase
        stage = (self.engine_running, phase)
        repairing = stage == (True, "repair")
        left = int(c.queued + c.set_aside) if repairing else 0
        if self._bar is None:
            columns, lines = _size(self.stream)
            self._bar = tqdm(file=self.stream, leave=False, mininterval=0, smoothing=0,
                             bar_format=_TIMED, desc=f"proxanon: {phase}",
                             ncols=columns, nrows=lines)
        bar = self._bar
        if stage != self._stage:
            # The repair's workload is the most violations seen waiting at once in this run.
            self._stage, self._repair_total = stage, left
            bar.bar_format = _COUNTED if repairing else _TIMED
            bar.set_description_str(f"proxanon: {phase}", refresh=False)
            bar.reset(total=left if repairing else None)
        if repairing:
            self._repair_total = max(self._repair_total, left)
            bar.total = self._repair_total
            bar.set_postfix_str(f"{c.swaps:,} swap(s)", refresh=False)
            bar.update(self._repair_total - left - bar.n)
        bar.refresh()

    def _emit(self) -> None:
        if self.tty:
            self._draw()
        else:  # a line with the time the run has taken so far
            elapsed = time.monotonic() - self._started
            self.stream.write(f"{self.describe()} ({elapsed:.0f} s elapsed)\n")
            self.stream.flush()

    def _run(self) -> None:
        # With no delay, __enter__ has drawn the first stage already.
        if self._stop.wait(self.delay if self.delay > 0 else self.interval):
            return
        while True:
            self._emit()
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> ProgressReporter:
        self._started = time.monotonic()
        if self.delay <= 0:
            # Shown at once, from this thread: the drawing thread may first get the GIL only
            # after the short first stage has passed.
            self._emit()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        if self._bar is not None:
            self._bar.close()  # leave=False: the line is cleared
