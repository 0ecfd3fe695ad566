"""Group "interrupt": how long ``proxanon anonymize`` takes to exit after Ctrl-C
(docs/performance.md#interrupts), the promise the tests check only with a loose bound.

The command and its moments are the interrupt test's (``tests/test_interrupt.py``,
``census_run``): best effort on the 2M-row census table, stopped just after the
interpreter's start-up and at a quarter, half and three quarters of one run to the end.
Each stop is checked there (status 130, one "interrupted" line, no output file); the
seconds from the signal to the exit are kept in ``extra_info`` (``latency``, the largest
as ``worst``). No time is asserted: it depends on the machine and its load.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from synthetic import census_frame

from tests.test_interrupt import CENSUS_ROWS, census_run, stopped


@pytest.fixture(scope="module")
def census_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("interrupt") / "census.csv"
    census_frame(CENSUS_ROWS).to_csv(path, index=False)
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_sigint_latency(benchmark, census_csv: Path, tmp_path: Path) -> None:
    benchmark.group = "interrupt"
    out = tmp_path / "out.csv"
    args, moments = census_run(census_csv, out)
    latency: list[float] = []

    def stops() -> None:
        latency[:] = [round(stopped(args, delay, out), 3) for delay in moments]

    benchmark.pedantic(stops, rounds=1, iterations=1)
    benchmark.extra_info.update(moments=[round(m, 2) for m in moments], latency=latency,
                                worst=max(latency))
    print(f"\nSIGINT at {[round(m, 2) for m in moments]} s: exited after {latency} s")
