"""Group "utility": the default ``anonymize`` against Mondrian-(ε, δ) on UCI Adult.

The table of ``bench/reproduce.py`` (QIs age, sex, race, marital-status with the ARX
taxonomies; sensitive education-num, hours-per-week), k = 10, at one setting where
Mondrian's cut wins and one where XColor's table does. Times one call; checks (not times)
that the default satisfies with a count-query error no higher than Mondrian-(ε, δ)'s, and
records both errors and the table published. The full grid: ``python bench/utility_grid.py``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
import reproduce

import proxanon

K = 10
ROUNDS = 3


@pytest.fixture(scope="module")
def uci_table() -> pd.DataFrame:
    return reproduce.load_table(reproduce.DEFAULT_DATA, None)[0]


@pytest.mark.benchmark(group="utility")
@pytest.mark.parametrize(("epsilon", "delta"), [(0.02, 0.6), (0.05, 0.6)])
def test_default_against_mondrian(benchmark, uci_table: pd.DataFrame, epsilon: float,
                                  delta: float) -> None:
    options: dict[str, Any] = dict(
        quasi_identifiers=list(reproduce.QUASI_IDENTIFIERS), sensitive=list(reproduce.SENSITIVE),
        k=K, epsilon=epsilon, delta=delta, hierarchies=reproduce.hierarchies())
    result = benchmark.pedantic(proxanon.anonymize, args=(uci_table,), kwargs=options,
                                rounds=ROUNDS, iterations=1)
    mondrian = proxanon.anonymize(uci_table, method="mondrian", on_infeasible="best_effort",
                                  **options)
    errors = [proxanon.evaluate.count_query_error(uci_table, anon, qd=2, s=0.1)
              .mean_relative_error for anon in (result, mondrian)]
    assert result.satisfied and mondrian.satisfied
    assert errors[0] <= errors[1] + 1e-12
    benchmark.extra_info.update({
        "published": result.report.method, "candidates": result.report.candidates,
        "error": errors[0], "mondrian_error": errors[1], "gcp": result.report.gcp})
