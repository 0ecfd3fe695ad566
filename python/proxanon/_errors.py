"""Exceptions raised by proxanon."""

from proxanon._engine import kernels

#: The epsilon-neighbour graph would exceed ``_core.MAX_GRAPH_ENTRIES`` adjacency entries; a
#: ValueError raised (from C++) before the graph is allocated, its message giving the size
#: and memory it would need. Use a smaller epsilon.
GraphTooDenseError = kernels.GraphTooDenseError


class InfeasibleError(ValueError):
    """No partition satisfying the requested privacy could be found.

    Raised with ``on_infeasible="raise"``. The message carries the numbers (violations left,
    maximum degree, the bound of inequality (4)) and what to try; ``partition`` holds the
    best-effort result so a caller can still inspect it.
    """

    def __init__(self, message: str, partition: object | None = None) -> None:
        super().__init__(message)
        self.partition = partition
