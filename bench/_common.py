"""Constants and checks shared by the benchmark suites (imported as a plain module: pytest
puts ``bench/`` on ``sys.path`` because the directory has no ``__init__.py``)."""

from __future__ import annotations

import numpy as np

from proxanon import Partition

#: Privacy parameters of every partition benchmark (the paper's defaults, §VI).
K = 10
EPSILON = 0.05
DELTA = 0.8

#: Sensitive attribute of the Adult runs: a composite of three ordered categoricals.
ADULT_SENSITIVE = ("education", "occupation", "workclass")

#: Quasi-identifiers of Adult: numeric ``age`` and three categoricals.
ADULT_CATEGORICAL_QIS = ("sex", "race", "marital-status")
ADULT_QIS = ("age", *ADULT_CATEGORICAL_QIS)


def check_partition(result: Partition, n: int, k: int = K) -> None:
    """Asserts that a benchmarked run is a valid, satisfying partition of n rows."""
    assert result.satisfied, result
    assert result.groups.shape == (n,)
    sizes = np.bincount(result.groups)
    assert len(sizes) == n // k == result.n_groups
    assert sizes.min() >= k


def partition_info(result: Partition) -> dict[str, object]:
    """The numbers of one run worth keeping in ``benchmark.extra_info``."""
    s = result.stats
    return {
        "n": s["n"],
        "groups": s["m"],
        "satisfied": result.satisfied,
        "swaps": s["swaps"],
        "initial_violations": s["initial_violations"],
        "max_degree": s["max_degree"],
        "bound_holds": s["bound_holds"],
        "seconds_graph": s["seconds"]["graph"],
        "seconds_initialize": s["seconds"]["initialize"],
        "seconds_repair": s["seconds"]["repair"],
        "seconds_total": s["seconds"]["total"],
    }
