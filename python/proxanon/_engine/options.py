"""What one native run is asked to do, as one typed object that crosses into C++."""

from __future__ import annotations

from dataclasses import dataclass, field

from proxanon._engine import kernels


@dataclass(frozen=True)
class EngineOptions:
    """What one native run is asked to do; mirrors ``XColorOptions``
    (cpp/include/proxanon/xcolor/xcolor.hpp) and crosses into C++ as one object. Validated by
    ``partition``."""

    k: int
    delta: float
    search_limit: int = 0           # classes per violation (0: all, the paper's full scan)
    trace: bool = False
    init: str = "degree"            # one of _validate.INITS
    init_block: int = 8             # classes per QI-local run (init="qi")
    moves: str = "swap"             # one of _validate.MOVES
    suppress: bool = False
    threads: int = 1                # for the row degrees; the result is the same for any number
    progress: kernels.Progress | None = field(default=None, compare=False)
