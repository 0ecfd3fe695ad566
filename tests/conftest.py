"""Shared helpers for the test suite: brute-force references that do not use the engine."""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.typing import NDArray

from proxanon.datasets import load_adult
from proxanon.tables import scale_sensitive


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``-m``, the tests marked slow are left out (the README's command runs the
    rest in minutes); ``-m slow`` runs them (CI does), ``-m "slow or not slow"`` all."""
    if config.option.markexpr:
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


#: The ARX copy of Adult and its hierarchy files, as the package bundles them.
ARX_ADULT = Path(str(resources.files("proxanon.datasets") / "adult"))

#: The original UCI copy of Adult (gzipped) and its taxonomy trees, shipped with the tests
#: (provenance and licence in SOURCE.md there).
UCI_ADULT = Path(__file__).resolve().parent / "data" / "adult-uci"

UCI_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]


def load_uci_adult() -> pd.DataFrame:
    """The UCI copy of Adult (``tests/data/adult-uci/adult.data.gz``), rows with '?' dropped."""
    frame = pd.read_csv(UCI_ADULT / "adult.data.gz", header=None, names=UCI_COLUMNS,
                        sep=",", skipinitialspace=True, na_values=["?"])
    return frame.dropna().reset_index(drop=True)


def brute_distance(x: NDArray[np.float64], y: NDArray[np.float64], metric: str,
                   w: NDArray[np.float64] | None = None) -> float:
    """Distance between two rows, written out per component (docs/design/definitions.md).

    ``w`` is required for l1, l2 and linf; min_component defaults to unit weights and
    variational (½ Σ |p_i − q_i|) takes none.
    """
    if metric == "variational":
        return 0.5 * float(sum(abs(a - b) for a, b in zip(x, y, strict=True)))
    if metric == "min_component" and w is None:
        w = np.ones(len(x))
    assert w is not None
    terms = [wi * abs(a - b) for a, b, wi in zip(x, y, w, strict=False)]
    if metric == "l1":
        return float(sum(terms))
    if metric == "l2":
        return float(sum(wi * (a - b) ** 2 for a, b, wi in zip(x, y, w, strict=False)) ** 0.5)
    if metric == "min_component":
        return float(min(terms))
    return float(max(terms))


def brute_neighbours(x: NDArray[np.float64], y: NDArray[np.float64], metric: str,
                     w: NDArray[np.float64], eps: float) -> bool:
    return brute_distance(x, y, metric, w) <= eps + 1e-9 * max(1.0, eps)


def brute_classes_satisfy(sens: NDArray[np.float64], classes: NDArray[np.int64], k: int,
                          epsilon: float, delta: float) -> bool:
    """(ε, δ)^k-dissimilarity of ``classes`` over sensitive values already on [0, 1], L1 with
    equal weights (docs/design/definitions.md and docs/design/privacy-model.md), pair by pair."""
    weights = np.full(sens.shape[1], 1.0 / sens.shape[1])
    for c in np.unique(classes):
        rows = np.flatnonzero(classes == c)
        if rows.size < k:
            return False
        allowed = math.floor((1 - delta) * (rows.size - 1) + 1e-9)
        for a in rows:
            near = sum(brute_neighbours(sens[a], sens[b], "l1", weights, epsilon)
                       for b in rows if b != a)
            if near > allowed:
                return False
    return True


def brute_potential(sensitive: NDArray[np.float64], groups: NDArray[np.int64], metric: str,
                    w: NDArray[np.float64], eps: float) -> int:
    """Number of monochromatic edges (pairs of rows in one group that are neighbours)."""
    total = 0
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        for i, a in enumerate(rows):
            for b in rows[i + 1:]:
                total += brute_neighbours(sensitive[a], sensitive[b], metric, w, eps)
    return total


@pytest.fixture(scope="session")
def uci_adult() -> pd.DataFrame:
    return load_uci_adult()


@pytest.fixture(scope="session")
def adult_frame():
    return load_adult().data


@pytest.fixture(scope="session")
def adult_sensitive(adult_frame):
    """The Adult SA of the real-data tests: education by rank, occupation and workclass codes, on
    [0, 1]."""
    return scale_sensitive(adult_frame, ["education", "occupation", "workclass"])


@pytest.fixture(scope="session")
def adult_qi(adult_frame):
    """QIs age, sex, race, marital-status as numbers (categoricals by code)."""
    columns = [adult_frame["age"].to_numpy(dtype=float)]
    columns += [adult_frame[c].cat.codes.to_numpy(dtype=float)
                for c in ("sex", "race", "marital-status")]
    return np.column_stack(columns)
