"""Group "dask": proxanon.dask.anonymize on a census-like table in 8 partitions, on a
LocalCluster of worker processes, against proxanon.anonymize on the same table in one process
with as many threads (the ratios that matter: Dask's overhead, and what a second worker
gains).

Tables: ``synthetic.census_table`` (QIs age, sex, race, marital; a 3-component sensitive
value), 2,000,000 rows by default (``PROXANON_BENCH_DASK_ROWS`` sets another size); and the
same rows with QIs zip, sex, race, where ``zip`` has 900 distinct values
(``default_rng(1).integers(0, 900)``). k = 10, epsilon = 0.05, delta = 0.8.

Cases: one process with 1 and 2 threads (``n_threads``); Dask with 1 worker of 1 thread, 1
worker of 2 threads, and 2 workers of 1 thread. The input is persisted on the cluster before
the timed call, as a table read by the workers would be, and the workers have imported
``proxanon.dask`` (the single process likewise has the table in memory and proxanon
imported). Each case runs once (one round); ``extra_info`` records the verdict, Dask's
phases and the load average around the run, since the machine may be shared.
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
SA = ["education", "workclass", "income"]
#: The two QI sets: the census table's own, and one with a 900-value zip code.
QIS = {"census": ["age", "sex", "race", "marital"], "zip": ["zip", "sex", "race"]}


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    sensitive, qi = census_table(ROWS, seed=0)
    table = pd.DataFrame(np.column_stack([qi, sensitive]), columns=QIS["census"] + SA)
    return table.assign(zip=np.random.default_rng(1).integers(0, 900, ROWS))


def _load() -> float:
    return os.getloadavg()[0]


def _audited(table: pd.DataFrame, qi: list[str]) -> bool:
    """The published table by the single-machine audit (outside the timed call)."""
    return proxanon.audit(table, quasi_identifiers=qi, sensitive=SA, k=K, epsilon=EPSILON,
                          delta=DELTA).satisfied


@pytest.mark.slow
@pytest.mark.parametrize("qis", list(QIS))
@pytest.mark.parametrize("threads", [1, 2])
def test_single_machine(benchmark: Any, census: pd.DataFrame, qis: str, threads: int) -> None:
    load = _load()
    result = benchmark.pedantic(
        lambda: proxanon.anonymize(census, quasi_identifiers=QIS[qis], sensitive=SA, k=K,
                                   epsilon=EPSILON, delta=DELTA, n_threads=threads),
        rounds=1, iterations=1)
    benchmark.extra_info.update(rows=ROWS, qis=qis, threads=threads,
                                satisfied=result.satisfied, load_before=load,
                                load_after=_load())
    assert result.satisfied


@pytest.mark.slow
@pytest.mark.parametrize("qis", list(QIS))
@pytest.mark.parametrize(("workers", "threads"), [(1, 1), (1, 2), (2, 1)])
def test_dask_workers(benchmark: Any, census: pd.DataFrame, qis: str, workers: int,
                      threads: int) -> None:
    qi = QIS[qis]
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=threads,
                                  processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        ddf = dd.from_pandas(census[qi + SA], npartitions=PARTITIONS).persist()
        distributed.wait(ddf)
        # The workers import what the tasks run, as the single process has imported it
        # (a fresh worker takes about 0.7 s, once, for pandas' and proxanon's modules).
        client.run(exec, "import dask.dataframe, proxanon.dask")
        load = _load()
        result = benchmark.pedantic(
            lambda: pdask.anonymize(ddf, quasi_identifiers=qi, sensitive=SA, k=K,
                                    epsilon=EPSILON, delta=DELTA), rounds=1, iterations=1)
        benchmark.extra_info.update(
            rows=ROWS, qis=qis, partitions=PARTITIONS, workers=workers, threads=threads,
            satisfied=result.satisfied, pieces=result.report.pieces,
            colliding_classes=result.report.colliding_classes, load_before=load,
            load_after=_load(),
            seconds={name: round(value, 3) for name, value in result.report.seconds.items()})
        table = result.table.compute()
    assert result.satisfied and len(table) == ROWS and _audited(table, qi)
