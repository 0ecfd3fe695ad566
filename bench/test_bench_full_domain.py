"""Group "full-domain": ``anonymize(..., recoding="global")`` on Adult with the ARX hierarchies
(docs/performance.md#full-domain-recoding-against-arx), against ARX's optimal full-domain
search (Flash) on the same settings.

``test_full_domain`` times proxanon on 4 and 8 QIs, k = 5 and 10, suppression limits 0 and 5%,
k = 10 with distinct l = 3 and with t = 0.2 (5%), and keeps the node, the rows suppressed,
the nodes checked and the GCP and count-query error (``proxanon.evaluate.score_table``) in
``extra_info``. Each published table is checked: every QI column at one level, classes of
at least k rows. With ``PROXANON_ARX_COMPARE`` naming the ARX peer's comparison script
(``compare_adult.py``) and Java on PATH, ``test_arx_side_by_side`` runs ARX's global
variants through its harness on the same settings and scores both tables by the
comparison script's own label-based code (no timing asserted; the table is printed).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import proxanon
from proxanon import LDiversity, TCloseness
from proxanon.datasets import load_adult
from proxanon.evaluate import score_table

QI4 = ["age", "sex", "race", "marital-status"]
QI8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class"]
COMPARE = Path(os.environ.get("PROXANON_ARX_COMPARE", "compare_adult.py"))
SETTINGS = [
    pytest.param(QI4, 5, 0.0, None, id="qi4-k5-0%"),
    pytest.param(QI4, 5, 0.05, None, id="qi4-k5-5%"),
    pytest.param(QI4, 10, 0.0, None, id="qi4-k10-0%"),
    pytest.param(QI4, 10, 0.05, None, id="qi4-k10-5%"),
    pytest.param(QI8, 5, 0.0, None, id="qi8-k5-0%"),
    pytest.param(QI8, 5, 0.05, None, id="qi8-k5-5%"),
    pytest.param(QI8, 10, 0.0, None, id="qi8-k10-0%"),
    pytest.param(QI8, 10, 0.05, None, id="qi8-k10-5%"),
    pytest.param(QI4, 10, 0.05, "l3", id="qi4-k10-l3-5%"),
    pytest.param(QI4, 10, 0.05, "t0.2", id="qi4-k10-t0.2-5%"),
]


def run(data, qis, k, limit, criterion, hierarchies) -> proxanon.Anonymization:
    criteria = ([LDiversity(3, column="occupation")] if criterion == "l3"
                else [TCloseness(0.2, column="occupation")] if criterion == "t0.2" else [])
    extra = {"on_infeasible": "suppress", "max_suppression": limit} if limit else {}
    return proxanon.anonymize(data, quasi_identifiers=qis, sensitive=["occupation"], k=k,
                              delta=0, hierarchies={c: hierarchies[c] for c in qis},
                              recoding="global", criteria=criteria, **extra)


@pytest.mark.parametrize(("qis", "k", "limit", "criterion"), SETTINGS)
def test_full_domain(benchmark, qis, k, limit, criterion) -> None:
    benchmark.group = "full-domain"
    adult = load_adult()
    result = benchmark.pedantic(run, args=(adult.data, qis, k, limit, criterion,
                                           adult.hierarchies), rounds=3, warmup_rounds=1)
    assert result.table.groupby(qis, observed=True).size().min() >= k
    score = score_table(adult.data, result.table.drop(columns="group"), quasi_identifiers=qis,
                        sensitive=["occupation"], hierarchies=adult.hierarchies,
                        suppressed=result.groups < 0)
    benchmark.extra_info.update(
        levels=result.report.levels, suppressed=len(result.report.suppressed_rows),
        classes=result.report.groups, gcp=score.gcp,
        cqe=score.count_query.mean_relative_error, satisfied=result.satisfied,
        nodes_checked=result.report.nodes_checked, lattice_nodes=result.report.lattice_nodes)


def _compare_module():
    spec = importlib.util.spec_from_file_location("compare_adult", COMPARE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_adult"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not COMPARE.is_file() or shutil.which(os.environ.get("JAVA", "java")) is None,
                    reason="needs PROXANON_ARX_COMPARE (ARX's comparison script) and Java")
def test_arx_side_by_side(capsys) -> None:
    compare = _compare_module()
    compare.WORK = Path(tempfile.mkdtemp(prefix="full-domain-"))
    (compare.WORK / "out").mkdir()
    original = compare.read_original()
    hierarchies = load_adult().hierarchies
    lines, rows = [], []
    for param in SETTINGS:
        qis, k, limit, criterion = param.values
        sc = compare.Scenario("adult", tuple(qis), k, l=3 if criterion == "l3" else None,
                              t=0.2 if criterion == "t0.2" else None)
        variant = "global-5%" if limit else "global-0%"
        out = compare.WORK / "out" / f"{param.id}.csv"
        lines.append(compare.arx_job(sc, variant, warmup=1, runs=3, out=out)
                     .replace("name=adult|", f"name={param.id}|"))
        rows.append((param, sc, out))
    results, _ = compare.run_arx(lines, "full-domain")
    table = ["| setting | ARX Flash: GCP / CQE / suppressed / warm s | proxanon: GCP / CQE / "
             "suppressed / warm s |", "|---|---|---|"]
    for (param, sc, out), arx in zip(rows, results, strict=True):
        qis, k, limit, criterion = param.values
        ev = compare.Evaluator(original, sc.qis, compare.load_trees(sc.qis))
        arx_table, suppressed = compare.read_arx_output(out)
        theirs = ev.metrics(arx_table, suppressed)
        times = []
        for _ in range(3):
            tic = time.perf_counter()
            result = run(original, qis, k, limit, criterion, hierarchies)
            times.append(time.perf_counter() - tic)
        left_out = result.groups < 0
        labels = original[list(sc.qis)].copy()
        labels.loc[~left_out, list(sc.qis)] = result.table[list(sc.qis)].astype(str).to_numpy()
        ours = ev.metrics(labels, left_out)
        table.append(
            f"| {param.id} | {theirs['gcp']:.4f} / {theirs['count_query_error']:.3f} / "
            f"{theirs['suppressed']} / {np.median(np.array(arx['total_ms']) / 1000):.2f} | "
            f"{ours['gcp']:.4f} / {ours['count_query_error']:.3f} / {ours['suppressed']} / "
            f"{np.median(times):.2f} |")
    with capsys.disabled():
        print("\n".join(table))
