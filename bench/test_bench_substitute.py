"""Group "substitute": proxanon.substitute on 50k rows x 3 Adult-like columns.

The case measured: segment_size=100, poi_fraction=0.1, 4000 walk iterations (target: under
60 s, aim 10 s). Memory is probed in fresh interpreters (Linux ``VmHWM``, the peak resident
set of the child alone) at 25k, 50k and 100k rows with a short walk (the walk allocates
nothing per step, so the peak does not depend on the iteration count): what substitute adds
on top of the table should double with the rows.

    python -m pytest bench/test_bench_substitute.py -p no:cacheprovider --benchmark-only
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import proxanon

BENCH_DIR = Path(__file__).resolve().parent
COLUMNS = ["age", "fnlwgt", "education-num"]


def adult_like(n: int, seed: int = 0) -> pd.DataFrame:
    """Integers shaped like Adult's age (many ties), fnlwgt (nearly distinct), education-num."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 91, n),
        "fnlwgt": np.round(rng.lognormal(12.0, 0.5, n)).astype(np.int64),
        "education-num": rng.integers(1, 17, n),
    })


_MEMORY_PROBE = """
import json, re, sys
sys.path.insert(0, sys.argv[2])
import proxanon
from test_bench_substitute import COLUMNS, adult_like

def kib(field):
    return int(re.search(field + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1))

table = adult_like(int(sys.argv[1]))
before = kib("VmRSS")
proxanon.substitute(table, COLUMNS, segment_size=100, poi_fraction=0.1, iterations=50,
                    n_threads=1)
print(json.dumps({"before_kib": before, "peak_kib": kib("VmHWM")}))
"""


def substitute_increase_mib(n: int) -> float:
    """Peak RSS minus the RSS with the table built, in a fresh interpreter, in MiB."""
    completed = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(n), str(BENCH_DIR)],
                               capture_output=True, text=True, check=True)
    probe = json.loads(completed.stdout.strip().splitlines()[-1])
    return round((probe["peak_kib"] - probe["before_kib"]) / 1024.0, 1)


@pytest.mark.benchmark(group="substitute")
def test_substitute_50k_rows(benchmark) -> None:  # type: ignore[no-untyped-def]
    table = adult_like(50_000)
    result = benchmark.pedantic(
        proxanon.substitute, args=(table, COLUMNS),
        kwargs={"segment_size": 100, "poi_fraction": 0.1, "iterations": 4000},
        rounds=1, iterations=1)
    assert result.table.shape == table.shape
    assert 0 < result.distortion < 1
    benchmark.extra_info.update({
        "seconds_per_column": {c: round(s, 2) for c, s in result.seconds_per_column.items()},
        "constraints": len(result.constraints),
        "localities_found": result.localities,
        "distortion": round(result.distortion, 4),
    })
    if sys.platform.startswith("linux"):
        benchmark.extra_info["substitute_rss_increase_mib"] = {
            n: substitute_increase_mib(n) for n in (25_000, 50_000, 100_000)}
