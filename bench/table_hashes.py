"""Hashes of the tables ``anonymize`` publishes over 16 configurations, with each run's time:
the check that a speed-up changed no published table.

Usage (from the repository's root)::

    python bench/table_hashes.py OUT.json [--against BEFORE.json]

Writes one entry per configuration (a hash of the published groups and table, whether it
satisfied, its largest class's share; or the error's type and first words) to OUT.json and
prints each with its seconds; with ``--against``, names the configurations whose entry
differs from BEFORE.json and exits non-zero if any does. Build BEFORE.json on the code before
a change and OUT.json after it.

Configurations: Adult (the ARX copy bundled in :mod:`proxanon.datasets`, k = 10, sensitive
education, occupation and workclass) with the ARX hierarchies on age, sex, race and
marital-status at five (ε, δ) in best effort and with suppression (at most 30%), two without
hierarchies; the UCI copy (``tests/data/adult-uci``) with education-num and hours-per-week,
on two threads and on one; synthetic census tables of 100,000 rows
(``bench/test_bench_scaling_suite.py``), feasible and in best effort. Together they run the
swap loop, the excess descent, suppression, merging rounds, the exchange step, specialization
and absorption, the Mondrian cut and the plain partition's session. About two minutes here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from _common import ADULT_QIS, ADULT_SENSITIVE  # noqa: E402
from test_bench_scaling_suite import QI_COLUMNS, SENSITIVE_COLUMNS, census_frame  # noqa: E402

import proxanon  # noqa: E402
from tests.conftest import load_uci_adult  # noqa: E402


def configurations() -> list[tuple[str, pd.DataFrame, dict[str, Any]]]:
    """(name, table, keyword arguments of ``anonymize``) per configuration."""
    adult = proxanon.datasets.load_adult()
    hierarchies = {c: adult.hierarchies[c] for c in ADULT_QIS}
    arx = dict(quasi_identifiers=list(ADULT_QIS), sensitive=list(ADULT_SENSITIVE), k=10)
    cases: list[tuple[str, pd.DataFrame, dict[str, Any]]] = []
    for eps, dlt in [(0.05, 0.8), (0.1, 0.8), (0.1, 0.7), (0.15, 0.9), (0.2, 0.6)]:
        cases.append((f"adult hierarchies eps {eps} delta {dlt} best effort", adult.data,
                      dict(arx, epsilon=eps, delta=dlt, hierarchies=hierarchies,
                           on_infeasible="best_effort")))
        cases.append((f"adult hierarchies eps {eps} delta {dlt} suppress", adult.data,
                      dict(arx, epsilon=eps, delta=dlt, hierarchies=hierarchies,
                           on_infeasible="suppress", max_suppression=0.3)))
    for eps in (0.05, 0.1):
        cases.append((f"adult eps {eps} delta 0.8 best effort", adult.data,
                      dict(arx, epsilon=eps, delta=0.8, on_infeasible="best_effort")))
    uci = load_uci_adult()
    numeric = dict(quasi_identifiers=list(ADULT_QIS),
                   sensitive=["education-num", "hours-per-week"], k=10, epsilon=0.05,
                   hierarchies=hierarchies, on_infeasible="best_effort")
    cases.append(("uci eps 0.05 delta 0.6", uci, dict(numeric, delta=0.6)))
    cases.append(("uci eps 0.05 delta 0.7 one thread", uci, dict(numeric, delta=0.7,
                                                                n_threads=1)))
    census = census_frame(100_000)
    synthetic = dict(quasi_identifiers=list(QI_COLUMNS), sensitive=list(SENSITIVE_COLUMNS),
                     k=10)
    cases.append(("census 100k eps 0.05 delta 0.8", census,
                  dict(synthetic, epsilon=0.05, delta=0.8)))
    cases.append(("census 100k eps 0.1 delta 0.6 best effort", census,
                  dict(synthetic, epsilon=0.1, delta=0.6, on_infeasible="best_effort")))
    return cases


def table_hash(result: proxanon.Anonymization) -> str:
    """A hash of the published groups and table (every cell as text)."""
    digest = hashlib.sha256(np.ascontiguousarray(result.groups).tobytes())
    cells = pd.util.hash_pandas_object(result.table.astype(str), index=True)
    digest.update(cells.to_numpy().tobytes())
    return digest.hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--against", type=Path, default=None)
    args = parser.parse_args()
    entries: dict[str, list[Any]] = {}
    for name, frame, kwargs in configurations():
        tic = time.perf_counter()
        try:
            result = proxanon.anonymize(frame, **kwargs)
            entry: list[Any] = [table_hash(result), bool(result.satisfied),
                                round(float(result.report.largest_class_share), 4)]
        except proxanon.InfeasibleError as exc:
            entry = [type(exc).__name__, str(exc)[:60]]
        entries[name] = entry
        print(f"{name:52s} {time.perf_counter() - tic:6.2f} s  {entry}", flush=True)
    args.out.write_text(json.dumps(entries, indent=1))
    if args.against is None:
        return 0
    before = json.loads(args.against.read_text())
    changed = [name for name in entries if before.get(name) != entries[name]]
    print("same tables" if not changed else "changed: " + "; ".join(changed))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
