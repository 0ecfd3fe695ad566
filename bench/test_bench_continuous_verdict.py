"""Group "verdict": a quick verdict from ``proxanon.anonymize`` on skewed continuous values.

Every setting of a grid of epsilon and delta (k = 10, ``on_infeasible="raise"``) on
50,000 rows of log-normal sensitive values (1-D under L1, 3-D under L2; QIs age and zip)
and on the UCI Adult table (30,162 rows): ``fnlwgt`` alone (about 20k distinct values)
and with ``hours-per-week`` and ``capital-gain`` (L2; QIs age, sex, race,
marital-status). The verdict is a satisfied table, checked again by ``proxanon.audit``, or
an InfeasibleError; ``extra_info`` records which, whether it was proven before any repair,
and the time ``proxanon.advise`` takes on the same scaled values (where advise proves a
setting infeasible, anonymize's error comes from the same clique bound). Run with::

    python -m pytest bench/test_bench_continuous_verdict.py -p no:cacheprovider \\
        --benchmark-only --benchmark-columns=max

(``-k lognormal-1d``, ``-k adult`` and so on select a part; ``-m "not slow"`` leaves out
the 3-D log-normal cases.)
"""

from __future__ import annotations

import time
from functools import cache

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon import InfeasibleError
from tests.conftest import load_uci_adult

K = 10
EPSILONS = (0.002, 0.005, 0.01, 0.05, 0.1, 0.2)
DELTAS = (0.5, 0.7, 0.8, 0.9)
ROWS = 50_000


@cache
def table(name: str) -> tuple[pd.DataFrame, tuple[str, ...], tuple[str, ...], str]:
    """(frame, quasi-identifiers, sensitive columns, metric) of one data set."""
    if name.startswith("lognormal"):
        rng = np.random.default_rng(0)
        components = 1 if name == "lognormal-1d" else 3
        sensitive = tuple(f"income{j}" for j in range(components))
        frame = pd.DataFrame(np.round(rng.lognormal(10, 1, (ROWS, components)), 2),
                             columns=list(sensitive))
        frame["age"] = rng.integers(18, 90, ROWS)
        frame["zip"] = rng.integers(0, 500, ROWS)
        return frame, ("age", "zip"), sensitive, "l1" if components == 1 else "l2"
    adult = load_uci_adult()
    qis = ("age", "sex", "race", "marital-status")
    if name == "adult-fnlwgt":
        return adult, qis, ("fnlwgt",), "l1"
    return adult, qis, ("fnlwgt", "hours-per-week", "capital-gain"), "l2"


def scaled(frame: pd.DataFrame, columns: tuple[str, ...]) -> np.ndarray:
    values = frame[list(columns)].to_numpy(dtype=np.float64)
    return (values - values.min(axis=0)) / (values.max(axis=0) - values.min(axis=0))


#: The 3-D log-normal cases are slow (advise's exact clique alone takes up to a minute).
DATA = ("lognormal-1d", pytest.param("lognormal-3d", marks=pytest.mark.slow), "adult-fnlwgt",
        "adult-3")


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("data", DATA)
def test_verdict(benchmark, data, epsilon, delta):
    frame, qis, sensitive, metric = table(data)
    tic = time.perf_counter()
    advice = proxanon.advise(scaled(frame, sensitive), k=K, epsilon=epsilon, delta=delta,
                             metric=metric)
    advise_seconds = time.perf_counter() - tic

    def verdict() -> proxanon.Anonymization | InfeasibleError:
        try:
            return proxanon.anonymize(frame, quasi_identifiers=list(qis),
                                      sensitive=list(sensitive), k=K, epsilon=epsilon,
                                      delta=delta, metric=metric, on_infeasible="raise")
        except InfeasibleError as exc:
            return exc

    outcome = benchmark.pedantic(verdict, rounds=1, iterations=1)
    if isinstance(outcome, InfeasibleError):
        proven = "proven before any repair" in str(outcome)
        assert proven or outcome.partition is not None
        # A proof before any repair is advise's clique bound for any partition, or the
        # degree bound on a row it can reach without the ε relation (advise has every row's).
        assert proven or not advice.clique_size > advice.capacity_any(delta)
        assert not proven or advice.infeasible_for_any_partition
        found = "infeasible (proven)" if proven else "infeasible"
    else:
        check = proxanon.audit(outcome.table, quasi_identifiers=list(qis),
                               sensitive=list(sensitive), k=K, epsilon=epsilon, delta=delta,
                               metric=metric)
        assert outcome.satisfied and check.satisfied
        assert not advice.infeasible_for_any_partition
        found = "satisfied"
    benchmark.extra_info.update(verdict=found, advise_seconds=round(advise_seconds, 3),
                                clique=advice.clique_size, max_degree=advice.max_degree)
