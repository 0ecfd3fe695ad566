"""Group "dask": proxanon.dask.anonymize on a census-like table in 8 partitions, on a
LocalCluster of 1 and of 2 single-threaded worker processes, and proxanon.anonymize on the
same table on one machine (the ratio that matters).

Table: ``synthetic.census_table`` (QIs age, sex, race, marital; a 3-component sensitive
value), 2,000,000 rows by default (``PROXANON_BENCH_DASK_ROWS`` sets another size);
k = 10, epsilon = 0.05, delta = 0.8. Each case runs once (one round): the cluster is
started before the timed call and shut down after it. ``extra_info`` records the verdict
of the global audit and the load average around the run, since the machine may be shared.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _common import DELTA, EPSILON, K
from synthetic import census_table

import proxanon

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import proxanon.dask as pdask  # noqa: E402

ROWS = int(os.environ.get("PROXANON_BENCH_DASK_ROWS", "2000000"))
PARTITIONS = 8
QI = ["age", "sex", "race", "marital"]
SA = ["education", "workclass", "income"]


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    sensitive, qi = census_table(ROWS, seed=0)
    return pd.DataFrame(np.column_stack([qi, sensitive]), columns=QI + SA)


def _load() -> float:
    return os.getloadavg()[0]


def _audited(table: pd.DataFrame) -> bool:
    """The published table by the single-machine audit (outside the timed call)."""
    return proxanon.audit(table, quasi_identifiers=QI, sensitive=SA, k=K, epsilon=EPSILON,
                          delta=DELTA).satisfied


@pytest.mark.slow
def test_single_machine(benchmark: Any, census: pd.DataFrame) -> None:
    load = _load()
    result = benchmark.pedantic(
        lambda: proxanon.anonymize(census, quasi_identifiers=QI, sensitive=SA, k=K,
                                   epsilon=EPSILON, delta=DELTA), rounds=1, iterations=1)
    benchmark.extra_info.update(rows=ROWS, satisfied=result.satisfied, load_before=load,
                                load_after=_load())
    assert result.satisfied


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_dask_workers(benchmark: Any, census: pd.DataFrame, workers: int) -> None:
    ddf = dd.from_pandas(census, npartitions=PARTITIONS)
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        load = _load()
        result = benchmark.pedantic(
            lambda: pdask.anonymize(ddf, quasi_identifiers=QI, sensitive=SA, k=K,
                                    epsilon=EPSILON, delta=DELTA), rounds=1, iterations=1)
        benchmark.extra_info.update(
            rows=ROWS, partitions=PARTITIONS, workers=workers, satisfied=result.satisfied,
            pieces=result.report.pieces, colliding_classes=result.report.colliding_classes,
            load_before=load, load_after=_load(),
            seconds={name: round(value, 3) for name, value in result.report.seconds.items()})
        table = result.table.compute()
    assert result.satisfied and len(table) == ROWS and _audited(table)
