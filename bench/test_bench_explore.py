"""Group "explore": a 4 x 2 grid of (epsilon, delta) settings through ``proxanon.explore``.

The ARX copy of Adult with its hierarchies on the four QIs (age, sex, race, marital-status)
and the composite sensitive value (education, occupation, workclass) under L1, k = 10, on
the bundled table (30,162 rows) and on two copies of it (60,324 rows, the size of the
63k-row table the target speaks of: a whole 4 x 2 grid within 3 minutes on 2 cores). The
grid holds every verdict: satisfied settings, two that ``anonymize`` finds no table for
(the costly kind) and one that advise's proof settles in milliseconds. A third case runs the
UCI copy's numeric sensitive columns with ``max_seconds``. Run once with::

    python -m pytest bench/test_bench_explore.py -p no:cacheprovider --benchmark-only \\
        --benchmark-columns=max

``extra_info`` records the verdicts and each setting's seconds.
"""

from __future__ import annotations

import pandas as pd
import pytest
from _common import ADULT_QIS, ADULT_SENSITIVE, K

import proxanon
from proxanon.datasets import load_adult

EPSILONS = (0.005, 0.02, 0.1, 0.2)
DELTAS = (0.5, 0.8)


@pytest.mark.benchmark(group="explore")
@pytest.mark.parametrize("copies", [1, 2])
def test_explore_adult_grid(benchmark, copies: int) -> None:
    adult = load_adult()
    frame = pd.concat([adult.data] * copies, ignore_index=True)
    hierarchies = {c: adult.hierarchies[c] for c in ADULT_QIS}
    result = benchmark.pedantic(
        proxanon.explore, args=(frame,),
        kwargs={"quasi_identifiers": list(ADULT_QIS), "sensitive": list(ADULT_SENSITIVE),
                "k": K, "epsilon": list(EPSILONS), "delta": list(DELTAS),
                "hierarchies": hierarchies},
        rounds=1, iterations=1, warmup_rounds=0)
    assert len(result) == len(EPSILONS) * len(DELTAS)
    assert set(result["verdict"]) <= {"satisfied", "infeasible", "proven infeasible"}
    assert (result["verdict"] == "satisfied").any()
    benchmark.extra_info.update(
        n=len(frame), settings=len(result),
        verdicts=result["verdict"].value_counts().to_dict(),
        seconds={f"{e:g}/{d:g}": round(s, 3) for e, d, s in
                 zip(result["epsilon"], result["delta"], result["seconds"], strict=True)})


#: The UCI copy's numeric sensitive columns (skewed, thousands of distinct values), where
#: ``anonymize`` can search for minutes near the frontier before it finds no table; a
#: setting is stopped after MAX_SECONDS (its verdict "stopped").
NUMERIC_SENSITIVE = ("fnlwgt", "hours-per-week")
NUMERIC_EPSILONS = (0.002, 0.005, 0.02, 0.05)
MAX_SECONDS = 20.0


@pytest.mark.benchmark(group="explore")
def test_explore_uci_numeric_grid_with_a_time_limit(benchmark) -> None:
    from tests.conftest import load_uci_adult

    frame = load_uci_adult()
    hierarchies = {c: load_adult().hierarchies[c] for c in ADULT_QIS}
    result = benchmark.pedantic(
        proxanon.explore, args=(frame,),
        kwargs={"quasi_identifiers": list(ADULT_QIS), "sensitive": list(NUMERIC_SENSITIVE),
                "k": K, "epsilon": list(NUMERIC_EPSILONS), "delta": list(DELTAS),
                "hierarchies": hierarchies, "max_seconds": MAX_SECONDS},
        rounds=1, iterations=1, warmup_rounds=0)
    assert len(result) == len(NUMERIC_EPSILONS) * len(DELTAS)
    assert (result["seconds"] < MAX_SECONDS + 5).all()
    benchmark.extra_info.update(
        n=len(frame), settings=len(result),
        verdicts=result["verdict"].value_counts().to_dict(),
        seconds={f"{e:g}/{d:g}": round(s, 3) for e, d, s in
                 zip(result["epsilon"], result["delta"], result["seconds"], strict=True)})
