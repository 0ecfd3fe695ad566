"""What the lower layers of the package read from the C++ core: its tolerances, the
exceptions it raises, the names of its starts, moves and neighbour structures (enums), its
progress counters and stop requests, two small kernels, and the
CSV records reader and writer (cpp/include/proxanon/io/csv.hpp) that ``tableio`` uses.

The bottom of the package: it imports only ``proxanon._core``, and every module below the
native adapters (foundations, data models, result types) reaches the core through it.
"""

from __future__ import annotations

from proxanon._core import (
    ALLOWANCE_SLACK,
    NEIGHBOUR_SLACK,
    CsvError,
    GraphTooDenseError,
    Init,
    Moves,
    Progress,
    StopRequest,
    Structure,
    csv_columns,
    csv_fields,
    csv_records,
    csv_write,
    neighbour_threshold,
    order_by_label,
)

__all__ = [
    "ALLOWANCE_SLACK",
    "NEIGHBOUR_SLACK",
    "CsvError",
    "GraphTooDenseError",
    "Init",
    "Moves",
    "Progress",
    "StopRequest",
    "Structure",
    "csv_columns",
    "csv_fields",
    "csv_records",
    "csv_write",
    "neighbour_threshold",
    "order_by_label",
]
