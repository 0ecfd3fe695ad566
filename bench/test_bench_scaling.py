"""Group "scaling": proxanon.partition on synthetic census tables of 100k and 1M rows.

Tables come from ``synthetic.census_table`` (SAL-like, 3-component sensitive value, 4 QIs);
parameters are epsilon = 0.05, delta = 0.8, k = 10, with quasi-identifiers. Besides time,
each case measures memory once, in a fresh interpreter that builds the table and runs
partition (outside the timed rounds):

- ``peak_rss_mib``: the child's peak resident set after partition (interpreter, numpy, the
  table and the partition run together);
- ``table_rss_mib``: the child's resident set just before partition (interpreter plus
  table, reported separately);
- ``partition_rss_increase_mib``: ``peak_rss_mib - table_rss_mib``, what partition adds;
- ``peak_during_partition``: whether the peak was reached inside partition (if not, the
  peak was set while building the table and the increase is only an upper bound).

The peak is read from ``VmHWM`` in ``/proc/self/status`` on Linux, not from
``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries ``ru_maxrss`` across ``exec``, so a
child spawned by this (large) pytest process would report the *parent's* peak (Python's
subprocess spawns via vfork, whose exec records the parent's high-water mark). ``VmHWM``
belongs to the child's own address space, created fresh at ``exec``. Elsewhere the probe
falls back to ``ru_maxrss`` (macOS reports it in bytes; it is converted to KiB).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _common import DELTA, EPSILON, K, check_partition, partition_info
from synthetic import census_table

import proxanon

BENCH_DIR = Path(__file__).resolve().parent

SEED = 0

#: Source run by a fresh interpreter: argv[1] is n, argv[2] the bench directory.
_MEMORY_PROBE = """
import json, resource, sys
sys.path.insert(0, sys.argv[2])
import proxanon
from synthetic import census_table


def status_kib(field):
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # no /proc: the peak so far
    return peak // 1024 if sys.platform == "darwin" else peak


n = int(sys.argv[1])
sensitive, quasi_identifiers = census_table(n, seed=%(seed)d)
before = status_kib("VmRSS")
before_peak = status_kib("VmHWM")
result = proxanon.partition(
    sensitive, k=%(k)d, epsilon=%(epsilon)r, delta=%(delta)r, quasi_identifiers=quasi_identifiers
)
print(json.dumps({
    "satisfied": bool(result.satisfied),
    "rss_before_partition_kib": before,
    "peak_before_partition_kib": before_peak,
    "peak_rss_kib": status_kib("VmHWM"),
}))
""" % {"seed": SEED, "k": K, "epsilon": EPSILON, "delta": DELTA}


def measure_memory(n: int) -> dict[str, float]:
    """Peak RSS of a fresh process that builds census_table(n) and partitions it, in MiB."""
    completed = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(n), str(BENCH_DIR)],
        capture_output=True, text=True, check=True,
    )
    probe = json.loads(completed.stdout.strip().splitlines()[-1])
    assert probe["satisfied"]
    mib = 1024.0  # the probe reports KiB
    return {
        "peak_rss_mib": round(probe["peak_rss_kib"] / mib, 1),
        "table_rss_mib": round(probe["rss_before_partition_kib"] / mib, 1),
        "partition_rss_increase_mib": round(
            (probe["peak_rss_kib"] - probe["rss_before_partition_kib"]) / mib, 1
        ),
        # False if the high-water mark was set before partition ran (building the table
        # needed more than partition added on top of it).
        "peak_during_partition": probe["peak_rss_kib"] > probe["peak_before_partition_kib"],
    }


@pytest.mark.benchmark(group="scaling")
@pytest.mark.parametrize(
    ("n", "rounds"),
    [
        pytest.param(100_000, 10, id="100k"),
        pytest.param(1_000_000, 3, id="1M", marks=pytest.mark.slow),
    ],
)
def test_partition_census(benchmark, n: int, rounds: int) -> None:
    sensitive, quasi_identifiers = census_table(n, seed=SEED)
    result = benchmark.pedantic(
        proxanon.partition,
        args=(sensitive,),
        kwargs=dict(k=K, epsilon=EPSILON, delta=DELTA, quasi_identifiers=quasi_identifiers),
        rounds=rounds,
        iterations=1,
        warmup_rounds=1,
    )
    check_partition(result, n)
    benchmark.extra_info.update(partition_info(result))
    benchmark.extra_info.update(measure_memory(n))
