"""Run the benchmark suites and print a markdown summary.

Usage (from anywhere)::

    python bench/report.py [extra pytest args, e.g. -m "not slow"]

Runs ``python -m pytest bench -p no:cacheprovider --benchmark-only
--benchmark-json=bench/results/latest.json`` from the repository root, then prints, as
markdown, the median time of every benchmark and the derived numbers: anonypy's median over
partition's (with and without quasi-identifiers), time(1M) / time(100k) of the scaling
suite, and peak memory at 1M rows. Exits with pytest's status when pytest fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results" / "latest.json"

PARTITION_WITH_QIS = "test_partition_adult_with_qis"
PARTITION_WITHOUT_QIS = "test_partition_adult_without_qis"
ANONYPY = "test_anonypy_adult_l_diversity"
ANONYMIZE = "test_anonymize_adult"
ANONYMIZE_HIERARCHIES = "test_anonymize_adult_with_hierarchies"
CENSUS_100K = "test_partition_census[100k]"
CENSUS_1M = "test_partition_census[1M]"


def run_pytest(extra: list[str]) -> int:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "pytest", str(BENCH_DIR.relative_to(ROOT)),
        "-p", "no:cacheprovider", "--benchmark-only",
        f"--benchmark-json={RESULTS.relative_to(ROOT)}", *extra,
    ]
    print("$", " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT).returncode


def ratio(numerator: float | None, denominator: float | None) -> str:
    if numerator is None or denominator is None or denominator == 0:
        return "n/a"
    return f"{numerator / denominator:.1f}x"


def render(results: dict) -> str:
    benchmarks = {b["name"]: b for b in results["benchmarks"]}
    median = {name: b["stats"]["median"] for name, b in benchmarks.items()}

    lines = [
        "| benchmark | group | rounds | median (s) | groups | swaps | satisfied |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for b in sorted(results["benchmarks"], key=lambda b: (b["group"] or "", b["name"])):
        info = b.get("extra_info", {})
        lines.append(
            f"| {b['name']} | {b['group']} | {b['stats']['rounds']} "
            f"| {b['stats']['median']:.4f} | {info.get('groups', '')} "
            f"| {info.get('swaps', '—')} | {info.get('satisfied', '')} |"
        )

    anonypy = median.get(ANONYPY)
    derived = [
        ("anonypy / partition, Adult, with QIs", ratio(anonypy, median.get(PARTITION_WITH_QIS))),
        (
            "anonypy / partition, Adult, without QIs",
            ratio(anonypy, median.get(PARTITION_WITHOUT_QIS)),
        ),
        ("anonypy / anonymize, Adult", ratio(anonypy, median.get(ANONYMIZE))),
        (
            "anonypy / anonymize, Adult, ARX hierarchies",
            ratio(anonypy, median.get(ANONYMIZE_HIERARCHIES)),
        ),
        (
            "time(1M) / time(100k), census, with QIs",
            ratio(median.get(CENSUS_1M), median.get(CENSUS_100K)),
        ),
    ]
    for name, label in ((CENSUS_100K, "100k"), (CENSUS_1M, "1M")):
        info = benchmarks.get(name, {}).get("extra_info", {})
        if "peak_rss_mib" in info:
            derived += [
                (f"peak RSS at {label} (MiB, whole process)", f"{info['peak_rss_mib']:.1f}"),
                (
                    f"RSS before partition at {label} (MiB, interpreter + table)",
                    f"{info['table_rss_mib']:.1f}",
                ),
                (
                    f"partition RSS increase at {label} (MiB)",
                    f"{info['partition_rss_increase_mib']:.1f}",
                ),
            ]
        else:
            derived.append((f"peak RSS at {label} (MiB)", "n/a"))
    lines += ["", "| derived | value |", "|---|---:|"]
    lines += [f"| {name} | {value} |" for name, value in derived]

    machine = results.get("machine_info", {})
    cpu = machine.get("cpu", {}).get("brand_raw", machine.get("processor", "?"))
    lines += [
        "",
        f"Python {machine.get('python_version', '?')} on {cpu}; "
        f"results in {RESULTS.relative_to(ROOT)}",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    status = run_pytest(argv)
    if status != 0:
        print(f"pytest failed with status {status}", file=sys.stderr)
        return status
    with RESULTS.open(encoding="utf-8") as handle:
        results = json.load(handle)
    print()
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
