"""Group "local-recoding": k-anonymity (delta = 0) on Adult with the ARX hierarchies, the
table ARX's local recoding is compared with (docs/performance.md#local-recoding-against-arx).

Times ``anonymize(..., k=k, delta=0)`` (the hierarchy cut against strict Mondrian's, the
cheaper published) on 4 and 8 QIs at k = 5 and 10, on Adult (30,162 rows) and on Adult
repeated 10 times with ages jittered by up to 2 years (301,620 rows, the growth the issue
names). Each published table is checked from its labels (classes of at least k rows), and
its GCP and count-query error are kept in ``extra_info``. ``test_suppression_limit`` runs the
30k-row settings with and without a 5% suppression limit (group
"local-recoding-suppression"); ``test_dissimilarity_with_hierarchies``, (epsilon, delta)^k at
delta > 0 with the same hierarchies (group "dissimilarity-cut"). With
``PROXANON_ARX_COMPARE`` naming the ARX peer's comparison script (``compare_adult.py``,
which runs ARX 3.9 and proxanon on Adult and scores both tables by one label-based code)
and Java on PATH,
``test_arx_side_by_side`` runs it on the same four settings (no timing asserted; the tables
are printed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon.datasets import load_adult
from proxanon.evaluate import count_query_error, score_table

QI4 = ["age", "sex", "race", "marital-status"]
QI8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class"]
COMPARE = Path(os.environ.get("PROXANON_ARX_COMPARE", "compare_adult.py"))


def repeated(data: pd.DataFrame, times: int) -> pd.DataFrame:
    """``data`` repeated, ages moved by -2..2 years (kept within the hierarchy's leaves)."""
    rng = np.random.default_rng(0)
    out = pd.concat([data] * times, ignore_index=True)
    out["age"] = np.clip(out["age"] + rng.integers(-2, 3, len(out)), 17, 90)
    return out


@pytest.mark.parametrize("times", [1, 10], ids=["30k", "300k"])
@pytest.mark.parametrize("qis,k", [(QI4, 5), (QI4, 10), (QI8, 5), (QI8, 10)],
                         ids=["qi4-k5", "qi4-k10", "qi8-k5", "qi8-k10"])
def test_k_anonymity_with_hierarchies(benchmark, qis, k, times) -> None:
    benchmark.group = "local-recoding"
    adult = load_adult()
    data = adult.data if times == 1 else repeated(adult.data, times)
    hierarchies = {c: adult.hierarchies[c] for c in qis}

    def run() -> proxanon.Anonymization:
        return proxanon.anonymize(data, quasi_identifiers=qis, sensitive=["occupation"], k=k,
                                  delta=0, hierarchies=hierarchies)

    result = benchmark.pedantic(run, rounds=5 if times == 1 else 2, warmup_rounds=1)
    assert result.satisfied
    assert result.table.groupby(qis, observed=True).size().min() >= k
    benchmark.extra_info.update(
        rows=len(data), gcp=result.report.gcp, classes=int(result.groups.max()) + 1,
        cqe=count_query_error(data, result, qd=2, s=0.1, n_queries=1000,
                              seed=0).mean_relative_error)


@pytest.mark.parametrize("limit", [0.0, 0.05], ids=["none", "5%"])
@pytest.mark.parametrize("qis,k", [(QI4, 5), (QI4, 10), (QI8, 5), (QI8, 10)],
                         ids=["qi4-k5", "qi4-k10", "qi8-k5", "qi8-k10"])
def test_suppression_limit(benchmark, qis, k, limit) -> None:
    """A suppression limit at delta = 0: the rows left out and the GCP over every row (a
    suppressed row costing 1, as ARX counts it), beside the same setting without a limit."""
    benchmark.group = "local-recoding-suppression"
    adult = load_adult()
    hierarchies = {c: adult.hierarchies[c] for c in qis}
    extra = {"on_infeasible": "suppress", "max_suppression": limit} if limit else {}

    def run() -> proxanon.Anonymization:
        return proxanon.anonymize(adult.data, quasi_identifiers=qis, sensitive=["occupation"],
                                  k=k, delta=0, hierarchies=hierarchies, **extra)

    result = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert result.satisfied
    left_out = result.groups < 0
    assert left_out.sum() <= limit * len(adult.data)
    score = score_table(adult.data, result.table.drop(columns="group"), quasi_identifiers=qis,
                        sensitive=["occupation"], hierarchies=hierarchies, suppressed=left_out)
    benchmark.extra_info.update(suppressed=int(left_out.sum()), gcp_all_rows=score.gcp,
                                cqe=score.count_query.mean_relative_error)


@pytest.mark.parametrize("delta", [0.5, 0.6, 0.7])
@pytest.mark.parametrize("qis", [QI4, QI8], ids=["qi4", "qi8"])
def test_dissimilarity_with_hierarchies(benchmark, qis, delta) -> None:
    """(epsilon, delta)^k at delta > 0 with the ARX hierarchies (group "dissimilarity-cut"):
    occupation at epsilon 0, k = 10, where the Mondrian-(epsilon, delta) candidate is the
    cheaper of strict Mondrian's cut and the hierarchy cut (docs/design/mondrian.md#the-
    hierarchy-cut). The published table is checked by ``audit`` from its labels; its method,
    GCP and count-query error, and strict Mondrian's (``method="mondrian"``), are kept in
    ``extra_info``."""
    benchmark.group = "dissimilarity-cut"
    adult = load_adult()
    common = dict(quasi_identifiers=qis, sensitive=["occupation"], k=10, epsilon=0.0,
                  delta=delta, hierarchies={c: adult.hierarchies[c] for c in qis})

    def run() -> proxanon.Anonymization:
        return proxanon.anonymize(adult.data, **common)

    result = benchmark.pedantic(run, rounds=3, warmup_rounds=1)
    strict = proxanon.anonymize(adult.data, method="mondrian", **common)
    check = proxanon.audit(result.table, quasi_identifiers=qis, sensitive=["occupation"],
                           k=10, epsilon=0.0, delta=delta)
    assert result.satisfied and check.satisfied
    cqe = [count_query_error(adult.data, r, qd=2, s=0.1, n_queries=1000,
                             seed=0).mean_relative_error for r in (result, strict)]
    benchmark.extra_info.update(method=result.report.method, gcp=result.report.gcp, cqe=cqe[0],
                                mondrian_gcp=strict.report.gcp, mondrian_cqe=cqe[1])


@pytest.mark.skipif(not COMPARE.is_file() or shutil.which(os.environ.get("JAVA", "java")) is None,
                    reason="needs PROXANON_ARX_COMPARE (ARX's comparison script) and Java")
def test_arx_side_by_side(tmp_path: Path) -> None:
    out = tmp_path / "arx-vs-proxanon.md"
    subprocess.run([sys.executable, str(COMPARE), "--out", str(out), "--only", "adult-qi4-k5",
                    "adult-qi4-k10", "adult-qi8-k5", "adult-qi8-k10", "--runs", "3",
                    "--cold", "0", "--warmup", "1"], check=True, capture_output=True)
    text = out.read_text()
    assert "| local" in text and "| proxanon [" in text
    print(text)
