"""Group "coarse-qis": ``anonymize`` with suppression where the QIs publish few tuples.

Two coarse QIs (3 x 2 tuples) and one continuous sensitive value of which half the rows
crowd near one point (normal, sd 1, on a range of 1,000) and half spread evenly; k = 10,
epsilon = 0.002 on the scaled value, delta = 0.7, ``on_infeasible="suppress"`` with at most
90% of the rows left out. Every group XColor forms publishes one of a handful of tuples, so
the merging rounds repair a few classes of thousands of rows, each with the same crowd.
This is the case README's "Known limitations" names: the time grows faster than the rows
(the swap loop's searches and retries read every row of the few merged classes they
examine). Every result is checked satisfied by ``proxanon.audit``; ``extra_info`` records
the rows published, the largest class's share and the phase times. Run with::

    python -m pytest bench/test_bench_coarse_qis.py -p no:cacheprovider --benchmark-only

The 80k case takes about a minute; it is marked ``slow``.

``test_coarse_qis_best_effort`` runs the same kind of table in best effort with the sensitive
value in whole units (about 1,000 distinct values): no table satisfies, and the rows that
cannot be protected gather in one class of nearly every row until the balanced split
(``balanced_split.hpp``) splits it; ``extra_info`` records the largest class's share (at
best one of the six tuples' share, about 1/6) and the violating rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import proxanon

K = 10
EPSILON = 0.002
DELTA = 0.7


def coarse_frame(n: int, decimals: int = 1) -> pd.DataFrame:
    """n rows: QIs ``region`` (3 values) and ``sex`` (2), sensitive ``amount`` rounded to
    ``decimals``."""
    rng = np.random.default_rng(0)
    region, sex = rng.integers(0, 3, n), rng.integers(0, 2, n)
    crowd = rng.random(n) < 0.5
    amount = np.where(crowd, rng.normal(50, 1, n), rng.uniform(0, 1000, n)).round(decimals)
    return pd.DataFrame({"region": region, "sex": sex, "amount": amount})


@pytest.mark.benchmark(group="coarse-qis")
@pytest.mark.parametrize("n", [pytest.param(20_000, id="20k"), pytest.param(40_000, id="40k"),
                               pytest.param(80_000, id="80k", marks=pytest.mark.slow)])
def test_coarse_qis_suppress(benchmark, n: int) -> None:
    frame = coarse_frame(n)
    result = benchmark.pedantic(
        proxanon.anonymize, args=(frame,),
        kwargs=dict(quasi_identifiers=["region", "sex"], sensitive=["amount"], k=K,
                    epsilon=EPSILON, delta=DELTA, on_infeasible="suppress",
                    max_suppression=0.9, n_threads=1),
        rounds=1, iterations=1, warmup_rounds=0,
    )
    check = proxanon.audit(result.table, quasi_identifiers=["region", "sex"],
                           sensitive=["amount"], k=K, epsilon=EPSILON, delta=DELTA)
    assert result.satisfied and check.satisfied
    report = result.report
    benchmark.extra_info.update(
        n=n, published=len(result.table), classes=report.groups,
        largest_class_share=round(report.largest_class_share, 4),
        merge_rounds=report.merge_rounds,
        **{f"seconds_{phase}": round(value, 2) for phase, value in report.seconds.items()},
    )


@pytest.mark.benchmark(group="coarse-qis-best-effort")
@pytest.mark.parametrize("n", [pytest.param(40_000, id="40k"), pytest.param(200_000, id="200k")])
def test_coarse_qis_best_effort(benchmark, n: int) -> None:
    frame = coarse_frame(n, decimals=0)
    result = benchmark.pedantic(
        proxanon.anonymize, args=(frame,),
        kwargs=dict(quasi_identifiers=["region", "sex"], sensitive=["amount"], k=K,
                    epsilon=EPSILON, delta=DELTA, on_infeasible="best_effort", n_threads=1),
        rounds=1, iterations=1, warmup_rounds=0,
    )
    check = proxanon.audit(result.table, quasi_identifiers=["region", "sex"],
                           sensitive=["amount"], k=K, epsilon=EPSILON, delta=DELTA)
    report = result.report
    assert not result.satisfied and len(check.violating_rows) == report.remaining_violations
    benchmark.extra_info.update(
        n=n, classes=report.groups, largest_class_share=round(report.largest_class_share, 4),
        violating_rows=report.remaining_violations, max_risk=round(report.max_risk, 4),
        **{f"seconds_{phase}": round(value, 2) for phase, value in report.seconds.items()},
    )
