"""What one native run is asked to do, as typed objects built once by the caller:
``EngineOptions`` crosses into C++; ``NativeRun`` adds what the Python side of an XColor run
or session needs; ``Checks`` are the checks Mondrian and specialization hold parts to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from proxanon import _core
from proxanon._engine import kernels
from proxanon._progress import ProgressReporter
from proxanon.distances import Relation


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

    @property
    def native_init(self) -> _core.Init:
        """``init`` as the core's enum, which names the starts (cpp/bindings/relation.cpp)."""
        return _core.Init.__members__[self.init]

    @property
    def native_moves(self) -> _core.Moves:
        """``moves`` as the core's enum."""
        return _core.Moves.__members__[self.moves]


@dataclass(frozen=True, kw_only=True)
class NativeRun:
    """One XColor run or session on validated inputs: ``options`` (k, delta and the engine's
    settings, for C++), epsilon and the relation it applies to, how the ε-neighbour relation
    is held (``neighbours``, one of _validate.NEIGHBOURS), the progress shown (None: none)
    and when the caller's work began (``time.perf_counter()``, for the total seconds)."""

    options: EngineOptions
    eps: float
    relation: Relation
    neighbours: str = "auto"
    reporter: ProgressReporter | None = None
    started: float = 0.0


def criterion_kind(name: str) -> int:
    """The native code of a criterion kind ("distinct", "entropy", "recursive",
    "t_closeness", "beta_likeness" or "delta_disclosure"): ``_core.CriterionKind``'s, the one
    list (cpp/bindings/relation.cpp)."""
    return int(_core.CriterionKind.__members__[name].value)


@dataclass(frozen=True)
class NativeCriteria:
    """Privacy criteria as the native checks take them (cpp/include/proxanon/mondrian/
    criteria_check.hpp): per column its codes 0..m-1 per row, m and whether numeric; per
    criterion (kind, value, c, column index), the kind a ``_core.CriterionKind``'s value."""

    codes: tuple[NDArray[np.int32], ...]
    values: tuple[int, ...]
    numeric: tuple[bool, ...]
    specs: tuple[tuple[int, float, float, int], ...]

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``_core.mondrian`` and ``_core.specialize``."""
        return {"criteria_codes": list(self.codes), "criteria_values": list(self.values),
                "criteria_numeric": list(self.numeric), "criteria": list(self.specs)}


@dataclass(frozen=True, kw_only=True)
class Checks:
    """The checks a part is held to (docs/design/privacy-model.md): at least ``k`` rows,
    (``eps``, ``dlt``)^k-dissimilarity under ``relation`` (``eps`` None: no distance checked)
    and, where ``ell`` is given, ``ell`` distinct sensitive values; ``criteria``: privacy
    criteria every part satisfies too (docs/guide/criteria.md), over the same rows."""

    k: int
    eps: float | None
    dlt: float | None
    relation: Relation
    ell: int | None = None
    criteria: NativeCriteria | None = None
