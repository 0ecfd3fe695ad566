"""The native substitution of one numeric column (the property-preserving anonymization
paper's Algorithm 1 and its random walk, §4): see :func:`proxanon.substitute`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _core


def substitute_column(values: NDArray[np.float64], bounds: tuple[float, float], *,
                      segment_size: int, poi_fraction: float, iterations: int, seed: int,
                      stream: int, threads: int) -> dict[str, Any]:
    """One column's substituted values, its kept constraints (``i``, ``j``, ``k``,
    ``relation``), its localities and seconds, from checked arguments; ``stream``: the
    column's position in the table, which with ``seed`` fixes its random numbers."""
    lo, hi = bounds
    return _core.substitute_column(values, lo, hi, segment_size, poi_fraction, iterations,
                                   seed, stream, threads)
