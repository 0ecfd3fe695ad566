"""The numbers of one native run, typed: :class:`EngineStats` mirrors ``_core.Stats``
(``XColorStats`` in the C++ core), field for field and in its order."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from proxanon import _core


@dataclass(frozen=True)
class EngineStats:
    """The statistics of one native run (INITIALIZE, the swap loop, the stronger repair,
    suppression and the exact search); ``Partition.stats`` holds them under the same names.
    The fields are those of ``_core.Stats``, in its order (the tests compare them with
    ``_core.ENGINE_STATS_FIELDS``)."""

    n: int
    m: int
    max_degree: int
    row_edges: int
    initial_violations: int
    initial_potential: int
    final_potential: int
    swaps: int
    set_aside: int
    classes_examined: int
    remaining_violations: int
    excess_moves: int
    transfers: int
    stalled_violations: int
    suppressed: int
    regrouped_size: int
    repair_capped: int
    exact_search: int
    seconds_suppress: float
    seconds_initialize: float
    seconds_repair: float

    @classmethod
    def of(cls, stats: _core.Stats) -> EngineStats:
        """The typed numbers of a native run's ``_core.Stats``."""
        return cls(**{name: getattr(stats, name) for name in STATS_FIELDS})

    def as_dict(self) -> dict[str, Any]:
        """The numbers as the ``Partition.stats`` entries of the same names."""
        return {name: getattr(self, name) for name in STATS_FIELDS}


#: The names of :class:`EngineStats`' fields, in order.
STATS_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(EngineStats))
