"""The progress bar of long runs (drawn with tqdm on a terminal): stage, done/total in the
repair, elapsed and remaining time."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace

from proxanon._progress import ProgressReporter


def test_repair_shows_done_of_total_with_elapsed_and_remaining() -> None:
    stream = io.StringIO()
    reporter = ProgressReporter(stream, delay=0.0)
    reporter.phase = "prepare"
    reporter._draw()
    assert stream.getvalue().split("\r")[-1].startswith("proxanon: prepare (00:00 elapsed)")

    counters = SimpleNamespace(phase="graph", queued=0, set_aside=0, swaps=0)
    reporter.counters = counters  # type: ignore[assignment]
    reporter.engine_running = True
    reporter._draw()
    assert stream.getvalue().split("\r")[-1].startswith("proxanon: graph (")

    counters.phase, counters.queued, counters.set_aside = "repair", 80, 20
    reporter._draw()
    counters.queued, counters.set_aside, counters.swaps = 25, 5, 1234
    reporter._draw()
    line = stream.getvalue().split("\r")[-1]
    assert line.startswith("proxanon: repair: 70/100 rows repaired |"), line
    assert re.search(r"\| \d\d:\d\d<[\d:?]+, 1,234 swap\(s\)", line), line  # elapsed<left

    # More violations waiting than at the start: the total grows, never below what is done.
    counters.queued = 150
    reporter._draw()
    assert "0/155" in stream.getvalue().split("\r")[-1]
    reporter._bar.close()
