"""Group "continuous": continuous sensitive values, where distinct values are about the rows.

proxanon.partition on uniform sensitive values, k = 10, epsilon = 0.05, delta = 0.8:
1-D under L1 at 100k and 1M rows (the sorted structure), 3-D under L2 at 300k and 1M rows
(the grid). The graph over distinct values is never built: at 100k 1-D rows it was refused
after 2.6 GiB. And skewed values as incomes and amounts are, 2-D under L1 at epsilon = 0.01
(lognormal and gamma, scaled to [0, 1]: most values within a few hundredths, thousands of
neighbours each; the rows' degrees are then weighed by the box tree) at 200k and 1M rows.
Each case records the structure, the peak RSS of the process and the phase times, and
checks the result with ``proxanon.audit`` (a satisfied result must pass it). And the table
job on incomes: ``proxanon.anonymize`` of 100k and 300k rows (QIs age, zip and sex; one
lognormal income column, epsilon = 0.01 of its range, delta = 0.8, best effort), where
Mondrian cannot cut the dense middle of the incomes and its cut is specialized row by row;
the published table is audited by its QI tuples.
Run with::

    python -m pytest bench/test_bench_continuous.py -p no:cacheprovider --benchmark-only

and add ``-m "not slow"`` to skip the one-million-row cases.
"""

from __future__ import annotations

import resource

import numpy as np
import pandas as pd
import pytest

import proxanon

K, EPSILON, DELTA = 10, 0.05, 0.8

CASES = [
    pytest.param(100_000, 1, "l1", id="1d-100k"),
    pytest.param(1_000_000, 1, "l1", id="1d-1M", marks=pytest.mark.slow),
    pytest.param(300_000, 3, "l2", id="3d-300k"),
    pytest.param(1_000_000, 3, "l2", id="3d-1M", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("n", "components", "metric"), CASES)
def test_continuous_uniform(benchmark, n, components, metric):
    values = np.random.default_rng(0).random((n, components))
    run_and_check(benchmark, values[:, 0] if components == 1 else values, EPSILON, metric)


SKEWED = [
    pytest.param(200_000, id="skewed-200k"),
    pytest.param(1_000_000, id="skewed-1M", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("n", SKEWED)
def test_continuous_skewed(benchmark, n):
    rng = np.random.default_rng(0)
    raw = np.column_stack([rng.lognormal(10.0, 0.8, n), rng.gamma(2.0, 300.0, n)])
    values = (raw - raw.min(axis=0)) / np.ptp(raw, axis=0)
    run_and_check(benchmark, values, 0.01, "l1")


INCOMES = [
    pytest.param(100_000, id="incomes-100k"),
    pytest.param(300_000, id="incomes-300k", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("n", INCOMES)
def test_anonymize_incomes(benchmark, n):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(0, 500, n),
                          "sex": rng.choice(["F", "M"], n),
                          "income": np.round(rng.lognormal(10.5, 0.7, n), 2)})
    qis = ["age", "zip", "sex"]
    result = benchmark.pedantic(
        proxanon.anonymize, args=(frame,),
        kwargs=dict(quasi_identifiers=qis, sensitive=["income"], k=K, epsilon=0.01,
                    delta=DELTA, on_infeasible="best_effort"),
        rounds=1, iterations=1)
    report = proxanon.audit(result.table, sensitive=["income"], quasi_identifiers=qis, k=K,
                            epsilon=0.01, delta=DELTA)
    assert result.satisfied == report.satisfied
    assert result.satisfied
    benchmark.extra_info.update(
        method=result.report.method, classes=result.report.groups,
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        **{f"seconds_{phase}": round(value, 2) for phase, value in result.report.seconds.items()})


def run_and_check(benchmark, sensitive, epsilon, metric):
    """One partition of ``sensitive``, timed, audited (it must be satisfied), recorded."""
    result = benchmark.pedantic(
        proxanon.partition, args=(sensitive,),
        kwargs=dict(k=K, epsilon=epsilon, delta=DELTA, metric=metric,
                    on_infeasible="best_effort"),
        rounds=1, iterations=1)
    report = proxanon.audit(sensitive, result.groups, k=K, epsilon=epsilon, delta=DELTA,
                            metric=metric)
    assert result.satisfied == report.satisfied
    assert result.satisfied
    benchmark.extra_info.update(
        structure=result.stats["neighbours"],
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        seconds=result.stats["seconds"], swaps=result.stats["swaps"])
