"""Progress lines for long runs: the phase and the violations left, on standard error."""

from __future__ import annotations

import os
import sys
import threading
from types import TracebackType
from typing import TextIO

from proxanon import _core


class ProgressReporter:
    """Polls the native engine's counters from a thread while it works (the GIL is released).

    Quiet for the first ``delay`` seconds (default 0.5, or the environment variable
    ``PROXANON_PROGRESS_DELAY``), so short runs print nothing. On a terminal one line is
    rewritten in place; on any other stream a plain line is written every ``interval`` seconds
    at most. ``phase`` names the Python-side step when the engine is not running.
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
        self.interval = interval if interval is not None else (0.2 if self.tty else 2.0)
        self.counters = _core.Progress()
        self.phase = "prepare"
        self.engine_running = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="proxanon-progress", daemon=True)
        self._printed = False

    def describe(self) -> str:
        if not self.engine_running:
            return f"proxanon: {self.phase}"
        c = self.counters
        if c.phase == "repair":
            return (f"proxanon: repair: {c.queued:,} violation(s) queued, "
                    f"{c.set_aside:,} set aside, {c.swaps:,} swap(s)")
        return f"proxanon: {c.phase}"

    def _emit(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r" + text.ljust(78))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._printed = True

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            self._emit(self.describe())
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> ProgressReporter:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        if self._printed and self.tty:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
