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

import numpy as np
import pytest

#: Minutes of work in all: run by CI (`pytest -m slow`), not by the README's command.
pytestmark = pytest.mark.slow

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
    _core.neighbour_graph(values, _core.Metric.l1, [1 / 6] * 6, 0.05)
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


def census_run(census_csv: Path, out: Path) -> tuple[list[str], list[float]]:
    """The command the interrupt test (and bench/test_bench_interrupt.py) stops: best effort
    on the 2M-row census table, written to ``out``; and the moments to stop it, from one run
    to the end. The first is just after the interpreter's own start-up: until its site
    module is imported (an editable install's import hooks take a while there), CPython
    handles SIGINT itself ("init_import_site", exit 1) and no code of any package has run.
    Then a quarter, half and three quarters of the way (reading, the cuts, the engine and its
    rounds, writing)."""
    import shutil
    exe = shutil.which("proxanon")
    assert exe is not None, "the `proxanon` console script is not on PATH"
    args = [exe, "anonymize", str(census_csv), "-o", str(out), "--qi", "age,sex,race",
            "--sensitive", "education,income", "--k", "10", "--epsilon", "0.1", "--delta",
            "0.8", "--best-effort"]
    tic = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    interpreter = time.monotonic() - tic
    tic = time.monotonic()
    assert subprocess.run(args, capture_output=True, check=False).returncode in (0, 3)
    whole = time.monotonic() - tic
    out.unlink()
    return args, [interpreter + 0.1, whole / 4, whole / 2, 3 * whole / 4]


def stopped(args: list[str], delay: float, out: Path) -> float:
    """The command stopped by SIGINT ``delay`` s after its start, checked (status 130, one
    "interrupted" line, no traceback, no output file); the seconds it took to report it."""
    waited, status, _, err = _interrupt_after(args, -delay)
    assert status == 130, (delay, err[-2000:])
    assert err.strip().splitlines()[-1].startswith("proxanon: interrupted"), err[-2000:]
    assert "Traceback" not in err
    assert not out.exists()
    return waited


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_cli_sigint_exits_130_within_a_second(census_csv: Path, tmp_path: Path):
    out = tmp_path / "out.csv"
    args, moments = census_run(census_csv, out)
    for delay in moments:
        waited = stopped(args, delay, out)
        assert waited < SIGINT_WITHIN, f"exited {waited:.2f} s after SIGINT (sent {delay} s in)"


def test_sigint_while_writing_a_csv_table_leaves_no_file(census_csv: Path,
                                                          tmp_path: Path) -> None:
    """Ctrl-C while the native writer formats a 2M-row table: KeyboardInterrupt, promptly,
    and neither the target nor a temporary file is left."""
    import os

    from proxanon.tableio import read_csv, write_table

    table = read_csv(census_csv)
    rows = np.arange(table.n_rows, dtype=np.int64)
    target = tmp_path / "out.csv"
    tic = time.monotonic()
    write_table(table, target, rows, replace={}, append={"group": rows})
    whole = time.monotonic() - tic
    target.unlink()
    timer = threading.Timer(whole / 3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    tic = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        for _ in range(50):  # the signal comes during one of these writes
            write_table(table, target, rows, replace={}, append={"group": rows})
            target.unlink()
    timer.join()
    assert time.monotonic() - tic < whole + SIGINT_WITHIN
    assert list(tmp_path.iterdir()) == []


def test_max_seconds_stops_a_long_run_with_a_clear_verdict(tmp_path: Path) -> None:
    """``anonymize(max_seconds=...)`` on a setting that runs for minutes (300k rows, two
    sensitive columns under min_component, best effort) raises TimeLimitError, publishing
    nothing, soon after the limit; ``--max-seconds`` exits 4 with one line and writes
    nothing. The bound asserted is generous (a loaded machine meets it)."""
    rng = np.random.default_rng(0)
    n = 300_000
    columns = (rng.integers(0, 50, n), rng.integers(0, 200, n), rng.random(n))
    (tmp_path / "in.csv").write_text("q,s,t\n" + "".join(
        f"{q},{s / 200},{t:.6f}\n" for q, s, t in zip(*columns, strict=True)))
    setting = ["--qi", "q", "--sensitive", "s,t", "--metric", "min_component", "--k", "10",
               "--epsilon", "0.05", "--delta", "0.9", "--best-effort"]
    script = textwrap.dedent(f"""
        import time, pandas as pd, proxanon
        data = pd.read_csv({str(tmp_path / "in.csv")!r})
        tic = time.perf_counter()
        try:
            proxanon.anonymize(data, quasi_identifiers=["q"], sensitive=["s", "t"], k=10,
                               epsilon=0.05, delta=0.9, metric="min_component",
                               on_infeasible="best_effort", max_seconds=1)
        except proxanon.TimeLimitError as exc:
            print("stopped", exc.seconds, time.perf_counter() - tic)
        else:
            print("finished", time.perf_counter() - tic)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    verdict, *numbers = done.stdout.split()
    assert verdict == "stopped", done.stdout
    assert float(numbers[0]) == 1.0 and float(numbers[1]) < 30
    cli = subprocess.run([sys.executable, "-m", "proxanon", "anonymize", str(tmp_path / "in.csv"),
                          *setting, "--max-seconds", "1", "-o", str(tmp_path / "out.csv")],
                         capture_output=True, text=True, timeout=300, check=False)
    assert cli.returncode == 4, cli.stderr
    assert cli.stderr.count("\n") == 1 and "--max-seconds" in cli.stderr
    assert "Traceback" not in cli.stderr and not (tmp_path / "out.csv").exists()


def test_verbose_runs_show_progress_lines_when_not_on_a_terminal(tmp_path: Path) -> None:
    """With ``-v`` and standard error not a terminal (a pipe, a log), a long run writes a
    plain progress line every couple of seconds; without ``-v`` it writes none."""
    import os

    rng = np.random.default_rng(0)
    n = 300_000
    columns = (rng.integers(0, 50, n), rng.integers(0, 200, n), rng.random(n))
    (tmp_path / "in.csv").write_text("q,s,t\n" + "".join(
        f"{q},{s / 200},{t:.6f}\n" for q, s, t in zip(*columns, strict=True)))
    args = [sys.executable, "-m", "proxanon", "anonymize", str(tmp_path / "in.csv"),
            "--qi", "q", "--sensitive", "s,t", "--metric", "min_component", "--k", "10",
            "--epsilon", "0.05", "--delta", "0.9", "--best-effort", "--max-seconds", "3",
            "-o", str(tmp_path / "out.csv")]
    env = {**os.environ, "PROXANON_PROGRESS_DELAY": "0.2"}
    verbose = subprocess.run([*args, "-v"], capture_output=True, text=True, timeout=300,
                             env=env, check=False)
    quiet = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env,
                           check=False)
    assert verbose.returncode == quiet.returncode == 4
    progress = [line for line in verbose.stderr.splitlines() if "elapsed" in line]
    assert progress, verbose.stderr
    assert not [line for line in quiet.stderr.splitlines() if "elapsed" in line]
