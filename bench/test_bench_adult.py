"""Group "adult": proxanon.partition vs anonypy's Mondrian l-diversity on ARX Adult.

Both run on the 30,162-row Adult table with k = 10. proxanon enforces
(epsilon = 0.05, delta = 0.8)^k-dissimilarity under L1 over the composite sensitive value
(education, occupation, workclass); anonypy enforces distinct 2-diversity of education.
The privacy notions differ, so the ratio compares cost, not protection. The fair
comparison is partition *with* quasi-identifiers (age, sex, race, marital-status: the same
QIs Mondrian generalizes); the variant without QIs shows the cost of QI-aware swapping.
"""

from __future__ import annotations

import anonypy
import numpy as np
import pandas as pd
import pytest
from _common import (
    ADULT_CATEGORICAL_QIS,
    ADULT_QIS,
    ADULT_SENSITIVE,
    DELTA,
    EPSILON,
    K,
    check_partition,
    partition_info,
)
from numpy.typing import NDArray

import proxanon

#: anonypy's distinct l-diversity parameter and its sensitive column.
ANONYPY_L = 2
ANONYPY_SENSITIVE = "education"

PARTITION_ROUNDS = 20
ANONYPY_ROUNDS = 5


def _run_partition(
    benchmark, sensitive: NDArray[np.float64], quasi_identifiers: NDArray[np.float64] | None
) -> None:
    result = benchmark.pedantic(
        proxanon.partition,
        args=(sensitive,),
        kwargs=dict(
            k=K, epsilon=EPSILON, delta=DELTA, metric="l1", quasi_identifiers=quasi_identifiers
        ),
        rounds=PARTITION_ROUNDS,
        iterations=1,
        warmup_rounds=1,
    )
    check_partition(result, len(sensitive))
    benchmark.extra_info.update(partition_info(result))
    benchmark.extra_info["quasi_identifiers"] = quasi_identifiers is not None


@pytest.mark.benchmark(group="adult")
def test_partition_adult_with_qis(benchmark, adult_sensitive, adult_quasi_identifiers) -> None:
    _run_partition(benchmark, adult_sensitive, adult_quasi_identifiers)


@pytest.mark.benchmark(group="adult")
def test_partition_adult_without_qis(benchmark, adult_sensitive) -> None:
    _run_partition(benchmark, adult_sensitive, None)


@pytest.fixture(scope="module")
def anonypy_frame(adult_frame: pd.DataFrame) -> pd.DataFrame:
    """The QIs and the sensitive column in the dtypes anonypy expects: numeric age,
    categoricals as unordered 'category' dtype of strings."""
    frame = adult_frame[[*ADULT_QIS, ANONYPY_SENSITIVE]].copy()
    for column in (*ADULT_CATEGORICAL_QIS, ANONYPY_SENSITIVE):
        frame[column] = frame[column].astype(str).astype("category")
    return frame


def _anonymize(frame: pd.DataFrame) -> list[dict]:
    # A fresh Preserver per round: construction is part of what a user pays.
    preserver = anonypy.Preserver(frame, list(ADULT_QIS), ANONYPY_SENSITIVE)
    return preserver.anonymize_l_diversity(k=K, l=ANONYPY_L)


@pytest.mark.benchmark(group="adult")
def test_anonypy_adult_l_diversity(benchmark, anonypy_frame) -> None:
    rows = benchmark.pedantic(
        _anonymize, args=(anonypy_frame,), rounds=ANONYPY_ROUNDS, iterations=1, warmup_rounds=1
    )
    # anonypy returns one row per (equivalence class, sensitive value) with a count.
    released = pd.DataFrame(rows)
    key = released[list(ADULT_QIS)].astype(str).agg("|".join, axis=1)
    classes = released.groupby(key).agg(
        size=("count", "sum"), distinct=(ANONYPY_SENSITIVE, "nunique")
    )
    assert released["count"].sum() == len(anonypy_frame)
    assert classes["size"].min() >= K
    assert classes["distinct"].min() >= ANONYPY_L
    benchmark.extra_info.update(
        n=len(anonypy_frame),
        groups=len(classes),
        satisfied=True,
        released_rows=len(released),
        min_class_size=int(classes["size"].min()),
        min_distinct_sensitive=int(classes["distinct"].min()),
    )


def _run_anonymize(benchmark, frame: pd.DataFrame, hierarchies=None) -> proxanon.Anonymization:
    result = benchmark.pedantic(
        proxanon.anonymize,
        args=(frame,),
        kwargs={
            "quasi_identifiers": list(ADULT_QIS),
            "sensitive": list(ADULT_SENSITIVE),
            "k": K,
            "epsilon": EPSILON,
            "delta": DELTA,
            "hierarchies": hierarchies,
        },
        rounds=10,
        iterations=1,
        warmup_rounds=1,
    )
    assert result.satisfied
    report = result.report
    benchmark.extra_info.update(
        n=report.n, groups=report.groups, swaps=report.swaps, satisfied=report.satisfied,
        merge_rounds=report.merge_rounds, gcp=round(report.gcp, 4),
    )
    return result


@pytest.mark.benchmark(group="adult")
def test_anonymize_adult(benchmark, adult_frame) -> None:
    """The whole table job on the table anonypy gets: QIs age (interval), sex, race,
    marital-status (flat taxonomies); sensitive education, occupation, workclass."""
    _run_anonymize(benchmark, adult_frame)


@pytest.mark.benchmark(group="adult")
def test_anonymize_adult_with_hierarchies(benchmark, adult_frame) -> None:
    """The same with the ARX hierarchies for the four QIs (coarser published values)."""
    hierarchies = proxanon.datasets.load_adult().hierarchies
    _run_anonymize(benchmark, adult_frame,
                   {c: hierarchies[c] for c in ADULT_QIS})


#: The class-size rule's configurations (docs/design/publishing.md): Adult with the ARX hierarchies
#: on all four QIs (k = 10), the ARX copy with the composite sensitive value, the UCI copy with two
#: numeric ones.
CLASS_SIZE_CASES = [
    ("arx", ADULT_SENSITIVE, 0.05, 0.8),
    ("arx", ADULT_SENSITIVE, 0.1, 0.8),
    ("uci", ("education-num", "hours-per-week"), 0.05, 0.6),
]


@pytest.fixture(scope="module")
def uci_frame() -> pd.DataFrame:
    """The UCI copy of Adult as the tests load it (rows with '?' dropped)."""
    from tests.conftest import load_uci_adult

    return load_uci_adult()


@pytest.mark.benchmark(group="adult-hierarchies")
@pytest.mark.parametrize("method", ["xcolor", "mondrian"])
@pytest.mark.parametrize(("copy", "sensitive", "epsilon", "delta"), CLASS_SIZE_CASES)
def test_anonymize_adult_all_hierarchies(benchmark, adult_frame, uci_frame, method, copy,
                                         sensitive, epsilon, delta) -> None:
    """Every verdict, infeasible ones included (best effort), with the largest published
    class's share of the rows; compare with test_anonypy_adult_l_diversity."""
    frame = adult_frame if copy == "arx" else uci_frame
    hierarchies = proxanon.datasets.load_adult().hierarchies
    result = benchmark.pedantic(
        proxanon.anonymize,
        args=(frame,),
        kwargs={
            "quasi_identifiers": list(ADULT_QIS), "sensitive": list(sensitive), "k": K,
            "epsilon": epsilon, "delta": delta,
            "hierarchies": {c: hierarchies[c] for c in ADULT_QIS},
            "on_infeasible": "best_effort", "method": method,
        },
        rounds=3,
        iterations=1,
        warmup_rounds=0,
    )
    report = result.report
    assert report.n == len(frame)
    benchmark.extra_info.update(
        n=report.n, groups=report.groups, satisfied=report.satisfied,
        largest_class_share=round(report.largest_class_share, 4),
        class_size_quantiles=report.class_size_quantiles,
        remaining_violations=report.remaining_violations, gcp=round(report.gcp, 4),
        seconds={name: round(value, 3) for name, value in report.seconds.items()},
    )
