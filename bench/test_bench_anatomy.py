"""Group "anatomy": ``anonymize(publish="anatomy")`` against the generalized release on the
synthetic SAL-shaped census table (``bench/synthetic.py``, 53,000 rows, k = 10).

Times each release; checks (not times) that both satisfy and that anatomy's count-query
error (qd = 2, s = 0.1) is no higher, and records both errors. The full grid over ε × δ, on
Adult too: ``python bench/anatomy_grid.py`` (writes ``bench/ANATOMY.md``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from synthetic import census_frame

import proxanon

ROWS = 53_000
ROUNDS = 3
OPTIONS: dict[str, Any] = dict(quasi_identifiers=["age", "sex", "race", "marital"],
                               sensitive=["education", "workclass", "income"], k=10,
                               epsilon=0.05, delta=0.7)


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    return census_frame(ROWS, seed=0)


@pytest.mark.benchmark(group="anatomy")
@pytest.mark.parametrize("publish", ["generalize", "anatomy"])
def test_release(benchmark, census: pd.DataFrame, publish: str) -> None:
    result = benchmark.pedantic(proxanon.anonymize, args=(census,),
                                kwargs=dict(OPTIONS, publish=publish), rounds=ROUNDS,
                                iterations=1)
    assert result.satisfied
    other = proxanon.anonymize(census, **OPTIONS,
                               publish="anatomy" if publish == "generalize" else "generalize")
    errors = {r.report.publish: proxanon.evaluate.count_query_error(
        census, r, qd=2, s=0.1, n_queries=500).mean_relative_error for r in (result, other)}
    assert errors["anatomy"] <= errors["generalize"]
    benchmark.extra_info.update(errors)
