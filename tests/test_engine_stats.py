"""``EngineStats``: the typed numbers of a native run, field for field those of ``_core.Stats``."""

from __future__ import annotations

import dataclasses

import numpy as np

from proxanon import _core, partition
from proxanon._engine.stats import STATS_FIELDS, EngineStats


def test_fields_are_the_cores() -> None:
    assert tuple(f.name for f in dataclasses.fields(EngineStats)) == _core.ENGINE_STATS_FIELDS


def test_every_field_is_read_from_a_run() -> None:
    result = partition(np.linspace(0.0, 1.0, 60), k=5, epsilon=0.05, delta=0.5)
    assert STATS_FIELDS == tuple(f.name for f in dataclasses.fields(EngineStats))
    assert all(hasattr(_core.Stats, name) for name in STATS_FIELDS)
    assert {name for name in STATS_FIELDS if not name.startswith("seconds_")} <= set(result.stats)
    assert result.stats["n"] == 60 and result.stats["m"] == 12
