"""Ctrl-C during long native work stops the run with KeyboardInterrupt in every native phase,
promptly (the loops poll every 0.1 s; see SIGINT_WITHIN for the bound asserted)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

# A repair that runs for minutes: 300k rows on 200 levels, every row with ~6% of the table
# as neighbours, no two neighbours allowed in a group of 10, every class scanned.
LONG_REPAIR = textwrap.dedent("""
    import sys, numpy as np, proxanon
    values = np.random.default_rng(0).integers(0, 200, 300_000) / 200
    print("ready", flush=True)
    proxanon.partition(values, k=10, epsilon=0.03, delta=0.9, search_limit=None,
                       on_infeasible="best_effort")
    print("finished", flush=True)
""")

# A graph search that runs for a minute with little memory: in 6-D L1 the grid over three
# components leaves ~2e9 candidate pairs among 100k values, of which ~1e6 are neighbours, so
# the size check has to count them before building.
LONG_GRAPH = textwrap.dedent("""
    import numpy as np
    from proxanon import _core
    values = np.random.default_rng(0).random((100_000, 6))
    print("ready", flush=True)
    _core.neighbour_graph(values, "l1", [1 / 6] * 6, 0.05)
    print("finished", flush=True)
""")

# A Mondrian run of about 15 s: 1M rows on 5000 levels, every value with ~40% of the levels
# as neighbours, so each check of a part walks ~2000 neighbours of each value in it, and
# parts pass down to k = 2.
LONG_MONDRIAN = textwrap.dedent("""
    import numpy as np, proxanon
    rng = np.random.default_rng(0)
    values = rng.integers(0, 5000, 1_000_000) / 5000
    qi = rng.random(1_000_000)
    print("ready", flush=True)
    proxanon.partition(values, k=2, epsilon=0.2, delta=0.1, quasi_identifiers=qi,
                       method="mondrian", on_infeasible="best_effort")
    print("finished", flush=True)
""")


# A dense grid's row degrees for a minute: 600k values in 3-D L2, ~13k neighbours each,
# counted by the threads of a parallel section (Ctrl-C once waited seconds for a
# block of cells to end).
LONG_GRID = textwrap.dedent("""
    import numpy as np, proxanon
    values = np.random.default_rng(0).random((600_000, 3))
    print("ready", flush=True)
    proxanon.partition(values, k=10, epsilon=0.1, delta=0.8, metric="l2",
                       on_infeasible="best_effort")
    print("finished", flush=True)
""")

# Seconds from SIGINT to the child's exit. The native loops poll every 0.1 s (about 0.2 s to
# exit on an idle machine); the bound is loose so that a loaded machine's scheduling does
# not fail the test, while work that ignored SIGINT (tens of seconds here) still would.
SIGINT_WITHIN = 5.0


def _interrupt_after(args: list[str], delay: float) -> tuple[float, int, str, str]:
    """Starts `args`, sends SIGINT `delay` s after its "ready" line (or its start when it prints
    none: pass delay < 0 for that, its magnitude the wait); returns the seconds from the signal
    to the stop being reported (the first standard-error line after the signal: the
    traceback or the command's "interrupted" line, before the process frees its tables), the
    exit status, stdout and stderr."""
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []
    assert child.stderr is not None
    reader = threading.Thread(
        target=lambda: lines.extend((time.monotonic(), line) for line in child.stderr),
        daemon=True)
    reader.start()
    if delay >= 0:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    time.sleep(abs(delay))
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    outs: list[str] = []
    assert child.stdout is not None
    stdout = threading.Thread(target=lambda: outs.extend(child.stdout), daemon=True)
    stdout.start()
    try:
        child.wait(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        pytest.fail("the native work ignored SIGINT for 30 s")
    exited = time.monotonic()
    reader.join(timeout=30)
    stdout.join(timeout=30)
    reported = next((when for when, _ in lines if when >= sent), exited)
    return reported - sent, child.returncode, "".join(outs), "".join(line for _, line in lines)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
@pytest.mark.parametrize("delay", [0.3, 1.5, 4.0])
@pytest.mark.parametrize("script", [LONG_REPAIR, LONG_GRAPH, LONG_MONDRIAN, LONG_GRID],
                         ids=["repair", "graph", "mondrian", "grid"])
def test_sigint_stops_every_phase_within_a_second(script, delay):
    waited, status, out, err = _interrupt_after([sys.executable, "-c", script], delay)
    assert "finished" not in out
    assert "KeyboardInterrupt" in err, err[-2000:]
    assert status != 0
    assert waited < SIGINT_WITHIN, f"stopped {waited:.2f} s after SIGINT (sent {delay} s in)"


CENSUS_ROWS = 2_000_000


@pytest.fixture(scope="module")
def census_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2M-row census table (bench/synthetic.py), written once."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        from synthetic import census_frame
    finally:
        sys.path.pop(0)
    path = tmp_path_factory.mktemp("census") / "census.csv"
    census_frame(CENSUS_ROWS).to_csv(path, index=False)
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_cli_sigint_exits_130_within_a_second(census_csv: Path, tmp_path: Path):
    import shutil
    exe = shutil.which("proxanon")
    assert exe is not None, "the `proxanon` console script is not on PATH"
    args = [exe, "anonymize", str(census_csv), "-o", str(tmp_path / "out.csv"),
            "--qi", "age,sex,race", "--sensitive", "education,income", "--k", "10",
            "--epsilon", "0.1", "--delta", "0.8", "--best-effort"]
    for delay in (3.0, 7.0, 11.0):  # reading, Mondrian, the engine and its rounds
        waited, status, _, err = _interrupt_after(args, -delay)
        assert status == 130, err[-2000:]
        assert not (tmp_path / "out.csv").exists()
        assert waited < SIGINT_WITHIN, f"exited {waited:.2f} s after SIGINT (sent {delay} s in)"
