"""The result of :func:`proxanon.partition`: the groups XColor found and the numbers of its
run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Partition:
    """The groups XColor found, whether they satisfy (ε, δ)^k-dissimilarity, and how.

    ``groups[i]`` is the group (colour class) of row ``i``: ids are ``0 .. m-1`` with
    ``m = n // k``; sizes are ``n // m`` or ``n // m + 1``.
    ``satisfied`` is True iff every row has at most ``t(G)`` ε-neighbours in its group.
    ``stats`` holds the numbers of the run (see ``partition``).
    ``suppressed_rows`` (with ``on_infeasible="suppress"``) are the rows left out; their
    group is -1.
    With ``trace=True``, ``initial_groups`` is the colouring INITIALIZE built, ``swap_log``
    one row ``(v, v', Λ)`` per pairwise swap, in order, and ``move_log`` one row
    ``(v, v' or -1, target group, change of E)`` per move of the stronger repair.
    """

    groups: NDArray[np.int64]
    satisfied: bool
    stats: dict[str, Any]
    violating_rows: NDArray[np.int64]
    violating_groups: NDArray[np.int64]
    suppressed_rows: NDArray[np.int64] = field(
        default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    initial_groups: NDArray[np.int64] | None = field(default=None, repr=False)
    swap_log: NDArray[np.int64] | None = field(default=None, repr=False)
    move_log: NDArray[np.int64] | None = field(default=None, repr=False)

    @property
    def n_groups(self) -> int:
        return int(self.stats["m"])

    def __repr__(self) -> str:
        s = self.stats
        verdict = "satisfied" if self.satisfied else f"{s['remaining_violations']} violating rows"
        if s.get("repair_capped"):
            verdict += f" (repair capped with {s['repair_capped']} left)"
        method = "" if s.get("method", "xcolor") == "xcolor" else f"method={s['method']}, "
        return (
            f"Partition({method}n={s['n']}, groups={s['m']}, k={s['k']}, "
            f"epsilon={s['epsilon']}, delta={s['delta']}, {verdict}, swaps={s['swaps']}, "
            f"seconds={s['seconds']['total']:.3f})"
        )
