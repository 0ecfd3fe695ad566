"""What the lower layers of the package read from the C++ core: its tolerances, the
exception it raises, its progress counters and stop requests, and two small kernels.

The bottom of the package: it imports only ``proxanon._core``, and every module below the
native adapters (foundations, data models, result types) reaches the core through it.
"""

from __future__ import annotations

from proxanon._core import (
    ALLOWANCE_SLACK,
    NEIGHBOUR_SLACK,
    GraphTooDenseError,
    Progress,
    StopRequest,
    neighbour_threshold,
    order_by_label,
)

__all__ = [
    "ALLOWANCE_SLACK",
    "NEIGHBOUR_SLACK",
    "GraphTooDenseError",
    "Progress",
    "StopRequest",
    "neighbour_threshold",
    "order_by_label",
]
