"""Group "anonymize-large": ``anonymize`` on synthetic census tables of 1M, 3M and 10M rows.

The tables and parameters are the "scaling-suite" group's (``census_frame``: QIs age, sex,
race, marital as integers; a 3-column sensitive value on [0, 1]; k = 10, epsilon = 0.05,
delta = 0.8, L1). Three rounds up to 3M rows (one round of a few seconds varies by 10-30% on
a shared machine: compare medians), one at 10M (a run takes half a minute or more); every
result is checked satisfied, with every published class of at least k rows. ``extra_info``
records the largest published class, the phase times and the process's peak resident memory
so far (it includes the input table, built in the same process). ``test_threads`` times the
1M table on one thread and on two (``n_threads``; the published tables are checked
identical). Run with::

    python -m pytest bench/test_bench_anonymize_large.py -p no:cacheprovider --benchmark-only

The 10M case needs about 8 GiB; it is marked ``slow`` like the other sizes here.
"""

from __future__ import annotations

import resource

import numpy as np
import pytest
from _common import DELTA, EPSILON, K
from test_bench_scaling_suite import QI_COLUMNS, SENSITIVE_COLUMNS, census_frame

import proxanon


def _rounds(n: int) -> int:
    """Rounds per size (see the module's docstring)."""
    return 3 if n <= 3_000_000 else 1


@pytest.mark.slow
@pytest.mark.benchmark(group="anonymize-large")
@pytest.mark.parametrize("n", [pytest.param(1_000_000, id="1M"),
                               pytest.param(3_000_000, id="3M"),
                               pytest.param(10_000_000, id="10M")])
def test_anonymize_large(benchmark, n: int) -> None:
    frame = census_frame(n)
    result = benchmark.pedantic(
        proxanon.anonymize, args=(frame,),
        kwargs=dict(quasi_identifiers=list(QI_COLUMNS), sensitive=list(SENSITIVE_COLUMNS),
                    k=K, epsilon=EPSILON, delta=DELTA),
        rounds=_rounds(n), iterations=1, warmup_rounds=0,
    )
    assert result.satisfied
    sizes = np.bincount(result.groups)
    assert sizes.min() >= K
    report = result.report
    benchmark.extra_info.update(
        n=n, classes=report.groups, largest_class=int(sizes.max()),
        merge_rounds=report.merge_rounds,
        peak_rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        **{f"seconds_{phase}": round(value, 2) for phase, value in report.seconds.items()},
    )


_PUBLISHED: dict[int, object] = {}


@pytest.mark.slow
@pytest.mark.benchmark(group="anonymize-threads")
@pytest.mark.parametrize("threads", [1, 2])
def test_threads(benchmark, threads: int) -> None:
    """The 1M census table on one thread and on two: the same table, published faster."""
    frame = census_frame(1_000_000)
    result = benchmark.pedantic(
        proxanon.anonymize, args=(frame,),
        kwargs=dict(quasi_identifiers=list(QI_COLUMNS), sensitive=list(SENSITIVE_COLUMNS),
                    k=K, epsilon=EPSILON, delta=DELTA, n_threads=threads),
        rounds=_rounds(1_000_000), iterations=1, warmup_rounds=0,
    )
    assert result.satisfied
    _PUBLISHED[threads] = result.table
    if len(_PUBLISHED) == 2:
        assert _PUBLISHED[1].equals(_PUBLISHED[2])
    benchmark.extra_info.update(
        threads=threads, method=result.report.method,
        **{f"seconds_{phase}": round(value, 2) for phase, value in result.report.seconds.items()},
    )
