"""Synthetic census-like tables for the scaling benchmarks.

Shaped like the paper's SAL data (§VI-A): QIs age (17..90), sex, race (9), marital status (6);
a composite sensitive value of education (17 levels), work class (10) and income (50 bands),
each drawn from a skewed distribution so that values repeat heavily, as in real census data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray


def _skewed(rng: np.random.Generator, levels: int, n: int, peak: float) -> NDArray[np.int64]:
    """Draws 0..levels-1 from a discretized normal centred at peak * levels."""
    draws = rng.normal(loc=peak * levels, scale=levels / 4.0, size=n)
    return np.clip(np.rint(draws), 0, levels - 1).astype(np.int64)


def census_table(n: int, seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(sensitive, quasi_identifiers)`` for n rows: sensitive is (n, 3) on [0, 1]."""
    rng = np.random.default_rng(seed)
    education = _skewed(rng, 17, n, 0.55)
    workclass = _skewed(rng, 10, n, 0.3)
    income = _skewed(rng, 50, n, 0.35)
    sensitive = np.column_stack([education / 16.0, workclass / 9.0, income / 49.0])
    age = np.clip(np.rint(rng.normal(40, 13, n)), 17, 90)
    sex = rng.integers(0, 2, n)
    race = _skewed(rng, 9, n, 0.1)
    marital = rng.integers(0, 6, n)
    quasi_identifiers = np.column_stack([age, sex, race, marital]).astype(np.float64)
    return sensitive, quasi_identifiers


def census_frame(n: int, seed: int = 0) -> pd.DataFrame:
    """:func:`census_table` as a table: QIs age (integer), sex, race, marital (strings) and the
    sensitive columns education, workclass, income as their integer levels."""
    sens, qi = census_table(n, seed)
    return pd.DataFrame({
        "age": qi[:, 0].astype(np.int64),
        "sex": np.where(qi[:, 1] == 0, "F", "M"),
        "race": [f"r{int(v)}" for v in qi[:, 2]],
        "marital": [f"m{int(v)}" for v in qi[:, 3]],
        "education": np.rint(sens[:, 0] * 16).astype(np.int64),
        "workclass": np.rint(sens[:, 1] * 9).astype(np.int64),
        "income": np.rint(sens[:, 2] * 49).astype(np.int64),
    })
