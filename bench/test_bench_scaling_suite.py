"""Group "scaling-suite": the three entry points on synthetic census tables, 10k to 1M rows.

Tables come from ``synthetic.census_table(n, seed=0)`` (SAL-like: QIs age, sex, race,
marital status; a 3-component sensitive value on [0, 1]). Each size runs

- ``partition`` with its defaults and the quasi-identifiers (XColor, ``init="degree"``);
- ``anonymize`` with its defaults on a DataFrame of the same arrays (QI columns ``age``,
  ``sex``, ``race``, ``marital`` as integers, published as intervals; sensitive columns
  ``education``, ``workclass``, ``income``), so the cost of preparing, generalizing and
  auditing a table is included;
- ``partition(method="mondrian", l=2)``: strict Mondrian with k-anonymity and distinct
  2-diversity, no dissimilarity check (the paper's baseline at its cheapest).

XColor runs use epsilon = 0.05, delta = 0.8, k = 10 (as the "scaling" group). Sizes of 300k
rows and more are marked ``slow``. Each case records ``satisfied`` and ``groups`` in
``extra_info``; nothing is asserted about time.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from _common import DELTA, EPSILON, K, partition_info
from numpy.typing import NDArray
from synthetic import census_table

import proxanon

SEED = 0
MONDRIAN_L = 2
QI_COLUMNS = ("age", "sex", "race", "marital")
SENSITIVE_COLUMNS = ("education", "workclass", "income")

#: (n, rounds): fewer rounds as the tables grow.
SIZES = [
    pytest.param(10_000, 10, id="10k"),
    pytest.param(30_000, 10, id="30k"),
    pytest.param(100_000, 5, id="100k"),
    pytest.param(300_000, 3, id="300k", marks=pytest.mark.slow),
    pytest.param(1_000_000, 3, id="1M", marks=pytest.mark.slow),
]


def warmup(rounds: int) -> int:
    """One untimed warm-up round when several are timed; none for the single-round sizes."""
    return 1 if rounds > 1 else 0


@functools.cache
def census(n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(sensitive, quasi_identifiers)``; built once per size and shared by the cases."""
    return census_table(n, seed=SEED)


def census_frame(n: int) -> pd.DataFrame:
    """census_table(n) as the table ``anonymize`` takes: integer QIs, sensitive on [0, 1]."""
    sensitive, quasi_identifiers = census(n)
    columns = {name: quasi_identifiers[:, j].astype(np.int64)
               for j, name in enumerate(QI_COLUMNS)}
    columns.update({name: sensitive[:, j] for j, name in enumerate(SENSITIVE_COLUMNS)})
    return pd.DataFrame(columns)


def check_groups(groups: NDArray[np.int64], n: int, k: int) -> None:
    """Every row is in a group of at least k rows."""
    assert groups.shape == (n,)
    assert groups.min() >= 0
    assert np.bincount(groups).min() >= k


@pytest.mark.benchmark(group="scaling-suite")
@pytest.mark.parametrize(("n", "rounds"), SIZES)
def test_partition_scaling(benchmark, n: int, rounds: int) -> None:
    sensitive, quasi_identifiers = census(n)
    result = benchmark.pedantic(
        proxanon.partition,
        args=(sensitive,),
        kwargs=dict(k=K, epsilon=EPSILON, delta=DELTA, quasi_identifiers=quasi_identifiers),
        rounds=rounds, iterations=1, warmup_rounds=warmup(rounds),
    )
    check_groups(result.groups, n, K)
    benchmark.extra_info.update(partition_info(result))


@pytest.mark.benchmark(group="scaling-suite")
@pytest.mark.parametrize(("n", "rounds"), SIZES)
def test_anonymize_scaling(benchmark, n: int, rounds: int) -> None:
    frame = census_frame(n)
    result = benchmark.pedantic(
        proxanon.anonymize,
        args=(frame,),
        kwargs=dict(quasi_identifiers=list(QI_COLUMNS), sensitive=list(SENSITIVE_COLUMNS),
                    k=K, epsilon=EPSILON, delta=DELTA),
        rounds=rounds, iterations=1, warmup_rounds=warmup(rounds),
    )
    check_groups(result.groups, n, K)
    report = result.report
    benchmark.extra_info.update(
        n=n, groups=report.groups, satisfied=result.satisfied, swaps=report.swaps,
        merge_rounds=report.merge_rounds, max_risk=report.max_risk, gcp=report.gcp,
        **{f"seconds_{phase}": value for phase, value in report.seconds.items()},
    )


@pytest.mark.benchmark(group="scaling-suite")
@pytest.mark.parametrize(("n", "rounds"), SIZES)
def test_mondrian_scaling(benchmark, n: int, rounds: int) -> None:
    sensitive, quasi_identifiers = census(n)
    result = benchmark.pedantic(
        proxanon.partition,
        args=(sensitive,),
        kwargs=dict(k=K, quasi_identifiers=quasi_identifiers, method="mondrian",
                    l=MONDRIAN_L),
        rounds=rounds, iterations=1, warmup_rounds=warmup(rounds),
    )
    check_groups(result.groups, n, K)
    distinct = pd.DataFrame(sensitive).assign(group=result.groups).drop_duplicates()
    assert distinct.groupby("group").size().min() >= MONDRIAN_L
    stats = result.stats
    benchmark.extra_info.update(
        n=n, groups=stats["m"], satisfied=result.satisfied, l=MONDRIAN_L, cuts=stats["cuts"],
        seconds_total=stats["seconds"]["total"],
    )
