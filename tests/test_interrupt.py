"""Ctrl-C during long native work stops the run with KeyboardInterrupt."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

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


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
@pytest.mark.parametrize("script", [LONG_REPAIR, LONG_GRAPH, LONG_MONDRIAN],
                         ids=["repair", "graph", "mondrian"])
def test_sigint_stops_native_work_promptly(script):
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    time.sleep(1.5)  # well into the native work
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        out, err = child.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("the native work ignored SIGINT for 30 s")
    waited = time.monotonic() - sent
    assert "finished" not in out
    assert "KeyboardInterrupt" in err, err[-2000:]
    assert child.returncode != 0
    # Generous: the poll runs every 0.1 s; a loaded machine may add seconds.
    assert waited < 10, f"stopped {waited:.1f} s after SIGINT"
