"""Groups "privacy-measures-adult" and "privacy-measures-scaling": proxanon vs pycanon 1.3.6.

Adult (30,162 rows), classes of (age, sex, race, marital-status), sensitive occupation: the
nine pycanon measures (k-anonymity, l-diversity, entropy l-diversity, recursive (c, l),
(alpha, k), t-closeness, delta-disclosure, basic and enhanced beta-likeness) by
``proxanon.privacy_measures`` (which also computes the re-identification
risk) and by pycanon's nine functions, timed once (about 20 s). The values must agree.

Scaling: Adult ten times over, each copy's ages shifted by 100 so that the classes grow
tenfold with the rows; ``extra_info["ratio"]`` is its time over Adult's (10 is linear).
"""

from __future__ import annotations

import math
import time
import warnings

import pandas as pd
import pytest

from proxanon._results.privacy import PrivacyMeasures, privacy_measures

QIS = ["age", "sex", "race", "marital-status"]
SENSITIVE = ["occupation"]
PYCANON = ("k_anonymity", "l_diversity", "entropy_l_diversity", "recursive_c_l_diversity",
           "alpha_k_anonymity", "t_closeness", "delta_disclosure", "basic_beta_likeness",
           "enhanced_beta_likeness")
ROUNDS = 20


def _measure(table: pd.DataFrame) -> PrivacyMeasures:
    return privacy_measures(table, quasi_identifiers=QIS, sensitive=SENSITIVE)


def _pycanon(table: pd.DataFrame) -> dict[str, object]:
    anonymity = pytest.importorskip("pycanon.anonymity")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: getattr(anonymity, name)(table, QIS) if name == "k_anonymity"
                else getattr(anonymity, name)(table, QIS, SENSITIVE) for name in PYCANON}


def _agree(ours: object, theirs: object) -> bool:
    if isinstance(theirs, tuple) and isinstance(ours, tuple):
        return all(_agree(a, b) for a, b in zip(ours, theirs, strict=True))
    a, b = float(ours), float(theirs)  # type: ignore[arg-type]
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)


@pytest.mark.benchmark(group="privacy-measures-adult")
def test_privacy_measures_adult(benchmark, adult_frame: pd.DataFrame) -> None:
    result = benchmark.pedantic(_measure, args=(adult_frame,), rounds=ROUNDS, iterations=1,
                                warmup_rounds=1)
    assert result.n_records == len(adult_frame)
    benchmark.extra_info.update({name: repr(getattr(result, name)) for name in PYCANON})


@pytest.mark.benchmark(group="privacy-measures-adult")
def test_pycanon_adult(benchmark, adult_frame: pd.DataFrame) -> None:
    theirs = benchmark.pedantic(_pycanon, args=(adult_frame,), rounds=1, iterations=1)
    ours = _measure(adult_frame)
    for name in PYCANON:
        assert _agree(getattr(ours, name), theirs[name]), name
    benchmark.extra_info.update({name: repr(theirs[name]) for name in PYCANON})


def _tenfold(table: pd.DataFrame) -> pd.DataFrame:
    copies = [table.assign(age=table["age"] + 100 * i) for i in range(10)]
    return pd.concat(copies, ignore_index=True)


@pytest.mark.benchmark(group="privacy-measures-scaling")
def test_privacy_measures_scaling(benchmark, adult_frame: pd.DataFrame) -> None:
    big = _tenfold(adult_frame)
    result = benchmark.pedantic(_measure, args=(big,), rounds=5, iterations=1,
                                warmup_rounds=1)
    small = _measure(adult_frame)
    assert result.n_classes == 10 * small.n_classes
    assert result.k_anonymity == small.k_anonymity
    base = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        _measure(adult_frame)
        base.append(time.perf_counter() - start)
    benchmark.extra_info["rows"] = len(big)
    benchmark.extra_info["adult_seconds"] = min(base)
    benchmark.extra_info["ratio"] = benchmark.stats.stats.min / min(base)
