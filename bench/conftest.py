"""Shared fixtures for the proxanon benchmark suites (pytest-benchmark).

These are benchmarks, not tests: they never assert on timing, only on the correctness of
what was timed. Run them with::

    python -m pytest bench -p no:cacheprovider --benchmark-only

(``bench`` must be named explicitly: the project's ``testpaths`` is ``tests``.) Add
``-m "not slow"`` to skip the one-million-row scaling case; ``python bench/report.py`` runs
both suites and prints a summary table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _common import ADULT_CATEGORICAL_QIS, ADULT_SENSITIVE
from numpy.typing import NDArray

from proxanon.datasets import load_adult
from proxanon.tables import scale_sensitive


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: a long-running benchmark (deselect with -m 'not slow')"
    )


@pytest.fixture(scope="session")
def adult_frame() -> pd.DataFrame:
    """The ARX Adult table (30,162 rows); ordered categoricals, integer ``age``."""
    return load_adult().data


@pytest.fixture(scope="session")
def adult_sensitive(adult_frame: pd.DataFrame) -> NDArray[np.float64]:
    """(n, 3) matrix on [0, 1]: education, occupation, workclass by category rank."""
    return scale_sensitive(adult_frame, list(ADULT_SENSITIVE))


@pytest.fixture(scope="session")
def adult_quasi_identifiers(adult_frame: pd.DataFrame) -> NDArray[np.float64]:
    """(n, 4) float matrix: age, then the rank codes of sex, race and marital-status."""
    columns = [adult_frame["age"].to_numpy(dtype=np.float64)]
    columns += [
        adult_frame[c].cat.codes.to_numpy().astype(np.float64) for c in ADULT_CATEGORICAL_QIS
    ]
    return np.column_stack(columns)
