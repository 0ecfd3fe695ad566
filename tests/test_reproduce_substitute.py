"""The helpers of bench/reproduce_substitute.py: the per-column calibration's bisection,
converged k-means and its CE floor, the nearest-neighbour linkage rate and the affine/residual
decomposition of a column's shift (small arrays, no data files)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import reproduce_substitute as rs  # noqa: E402

from proxanon.substitute import distortion  # noqa: E402


def test_bisect_scale_hits_the_target() -> None:
    assert rs.bisect_scale(lambda a: a**2, 9.0) == pytest.approx(3.0, rel=1e-4)
    assert rs.bisect_scale(lambda a: 0.001 * a, 5.0) == pytest.approx(5000.0, rel=1e-4)
    assert rs.bisect_scale(lambda a: a, 0.0) == 0.0


def test_perturb_per_column_matches_each_column() -> None:
    rng = np.random.default_rng(3)
    original = np.column_stack([rng.uniform(1, 2, 500), rng.uniform(100, 900, 500)])
    targets = [0.2, 0.001]
    released, scales = rs.perturb_per_column(original, targets, seed=1)
    for j, target in enumerate(targets):
        assert distortion(original[:, j], released[:, j]) == pytest.approx(target, rel=0.01)
    assert np.all(scales > 0)


def test_converged_kmeans_has_no_floor() -> None:
    rng = np.random.default_rng(0)
    points = np.concatenate([rng.normal(c, 1.0, (200, 2)) for c in (0.0, 4.0, 8.0)])
    for k in (3, 5, 7):
        centroids, labels = rs.kmeans(points, k, range(3))
        _, again, _ = rs.lloyd(points, centroids)
        assert np.array_equal(labels, again)
        assert rs.clustering_error(labels, again, k) == 0.0


def test_clustering_error_matches_relabelled_clusters() -> None:
    labels = np.array([0, 0, 1, 1, 2, 2])
    assert rs.clustering_error(labels, np.array([2, 2, 0, 0, 1, 1]), 3) == 0.0
    assert rs.clustering_error(labels, np.array([2, 2, 0, 0, 1, 0]), 3) == pytest.approx(1 / 6)


def test_linkage_rate() -> None:
    rng = np.random.default_rng(1)
    original = rng.uniform(0, 1, (300, 3))
    assert rs.linkage_rate(original, original) == 1.0
    assert rs.linkage_rate(original, original + rng.normal(0, 5, original.shape)) < 0.1
    twins = np.concatenate([original[:10], original[:10]])  # each row tied with its twin
    assert rs.linkage_rate(twins, twins) == pytest.approx(0.5)


def test_decompose_separates_affine_drift() -> None:
    rng = np.random.default_rng(2)
    d = rng.integers(1, 17, 200).astype(float)
    none = pd.DataFrame({"i": [], "j": [], "k": [], "relation": []})
    affine = rs.decompose(d, 0.9 * d + 0.5, none, 100)
    assert affine["affine_share"] == pytest.approx(1.0)
    assert affine["free_dst_share"] == pytest.approx(1.0)
    residual = np.where(np.arange(200) % 2 == 0, 0.01, -0.01)
    residual -= np.polyval(np.polyfit(d[:100], residual[:100], 1), d) * (np.arange(200) < 100)
    residual -= np.polyval(np.polyfit(d[100:], residual[100:], 1), d) * (np.arange(200) >= 100)
    assert rs.decompose(d, d + residual, none, 100)["affine_share"] == pytest.approx(0, abs=1e-9)
