"""Group "report": the disclosure-risk report (HTML) of big results, 100k and 1M rows.

The table is ``synthetic.census_table(n, seed=0)`` as in the "scaling-suite" group, anonymized
once per size (not timed) with k = 10, epsilon = 0.05, delta = 0.8. Two cases per size:

- ``anonymization``: :func:`proxanon.html_report.anonymization_html` with the original table
  (so GCP, loss and NCP are recomputed by :mod:`proxanon.evaluate` and every QI gets its
  before/after plot), then :func:`~proxanon.html_report.write_html`;
- ``audit``: what ``proxanon report`` does after reading the CSV: the page of an
  :func:`~proxanon.audit` of the published table (its classes formed from the QI values).

``extra_info`` records the page's size in bytes; the page is checked to be under
``MAX_BYTES`` and to carry the audit's numbers. Nothing is asserted about time.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _common import DELTA, EPSILON, K
from synthetic import census_table

import proxanon
from proxanon.html_report import anonymization_html, audit_html, read_numbers, write_html

SEED = 0
QI_COLUMNS = ["age", "sex", "race", "marital"]
SENSITIVE_COLUMNS = ["education", "workclass", "income"]
#: "Under a few MB": the bound every page must meet.
MAX_BYTES = 3_000_000

SIZES = [
    pytest.param(100_000, 3, id="100k"),
    pytest.param(1_000_000, 3, id="1M", marks=pytest.mark.slow),
]


@functools.cache
def anonymized(n: int) -> tuple[pd.DataFrame, proxanon.Anonymization]:
    """The census table of n rows and its anonymization; built once per size."""
    sensitive, quasi_identifiers = census_table(n, seed=SEED)
    columns = {name: quasi_identifiers[:, j].astype(np.int64)
               for j, name in enumerate(QI_COLUMNS)}
    columns.update({name: sensitive[:, j] for j, name in enumerate(SENSITIVE_COLUMNS)})
    frame = pd.DataFrame(columns)
    result = proxanon.anonymize(frame, quasi_identifiers=QI_COLUMNS,
                                sensitive=SENSITIVE_COLUMNS, k=K, epsilon=EPSILON, delta=DELTA)
    return frame, result


def _check_page(path: Path, summary: dict[str, object], benchmark) -> None:
    size = path.stat().st_size
    benchmark.extra_info.update(bytes=size)
    assert size < MAX_BYTES
    assert read_numbers(path)["audit"] == {**summary, "n_suppressed_rows": 0}


@pytest.mark.benchmark(group="report")
@pytest.mark.parametrize(("n", "rounds"), SIZES)
def test_report_of_an_anonymization(benchmark, tmp_path: Path, n: int, rounds: int) -> None:
    frame, result = anonymized(n)
    path = tmp_path / "report.html"
    benchmark.pedantic(lambda: write_html(anonymization_html(result, frame), path),
                       rounds=rounds, iterations=1)
    assert result.audit is not None
    _check_page(path, result.audit.summary(), benchmark)
    benchmark.extra_info.update(n=n, groups=result.report.groups)


@pytest.mark.benchmark(group="report")
@pytest.mark.parametrize(("n", "rounds"), SIZES)
def test_report_of_an_audit(benchmark, tmp_path: Path, n: int, rounds: int) -> None:
    _, result = anonymized(n)
    table = result.table.drop(columns="group")
    check = proxanon.audit(table, quasi_identifiers=QI_COLUMNS, sensitive=SENSITIVE_COLUMNS,
                           k=K, epsilon=EPSILON, delta=DELTA)
    path = tmp_path / "report.html"
    benchmark.pedantic(
        lambda: write_html(audit_html(check, table, quasi_identifiers=QI_COLUMNS,
                                      sensitive=SENSITIVE_COLUMNS), path),
        rounds=rounds, iterations=1)
    _check_page(path, check.summary(), benchmark)
    benchmark.extra_info.update(n=n, groups=check.n_groups)
