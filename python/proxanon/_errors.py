"""Exceptions raised by proxanon."""

from __future__ import annotations

from proxanon._engine import kernels
from proxanon._messages import Text, text

#: The epsilon-neighbour graph would exceed ``_core.MAX_GRAPH_ENTRIES`` adjacency entries; a
#: ValueError raised (from C++) before the graph is allocated, its message giving the size
#: and memory it would need. Use a smaller epsilon.
GraphTooDenseError = kernels.GraphTooDenseError


class InfeasibleError(ValueError):
    """No partition satisfying the requested privacy could be found.

    Raised with ``on_infeasible="raise"``. The message carries the numbers (violations left,
    maximum degree, the bound of inequality (4)) and what to try; ``partition`` holds the
    best-effort result so a caller can still inspect it.

    The message is also kept as :class:`proxanon._messages.Text` (``text``), which names the
    options it suggests apart from its words (see :mod:`proxanon._messages`).
    """

    def __init__(self, message: str | Text, partition: object | None = None) -> None:
        super().__init__(str(message))
        self.text = text(message)
        self.partition = partition

    def __reduce__(self) -> tuple[type, tuple[Text, object]]:
        # Pickled (a Dask worker's error) with its message's pieces and its partition.
        return type(self), (self.text, self.partition)


class ParameterError(ValueError):
    """A parameter out of its range, refused before any work: ``parameter`` is its Python
    name, ``text`` the message naming it apart from its words (:mod:`proxanon._messages`)."""

    def __init__(self, message: str | Text, parameter: str) -> None:
        super().__init__(str(message))
        self.text = text(message)
        self.parameter = parameter

    def __reduce__(self) -> tuple[type, tuple[Text, str]]:
        return type(self), (self.text, self.parameter)


class LeadingZerosError(ValueError):
    """Values of a column that match leaves of its hierarchy only once leading zeros are
    added or removed (the data say ``2134`` where the hierarchy says ``02134``, or the other
    way round): one of the two lost its zeros, typically a column of codes read as numbers.

    ``column`` names the column (None when unnamed), ``examples`` holds ``(value, leaf)``
    pairs as text, and ``data_lost_zeros`` says which side is the shorter one. The message
    names the fix in Python terms; the command line words it in its own."""

    def __init__(self, message: str, column: str | None,
                 examples: tuple[tuple[str, str], ...], data_lost_zeros: bool) -> None:
        super().__init__(message)
        self.column = column
        self.examples = examples
        self.data_lost_zeros = data_lost_zeros


class TimeLimitError(RuntimeError):
    """A run stopped at its time limit (``max_seconds``) before it had a table: nothing was
    published. ``seconds``: the limit."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"stopped after {seconds:g} s (max_seconds) without a table; allow "
                         "more time, or try a larger epsilon or a smaller delta, which run "
                         "faster")
        self.seconds = seconds


class ExploreInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`proxanon.explore` or :func:`proxanon.find_epsilon`: the settings
    finished before it, as a frame of :data:`proxanon.FRONTIER_COLUMNS` (``frontier``), so a
    caller can keep them (the command line writes them before it exits with status 130)."""

    def __init__(self, frontier: object) -> None:
        super().__init__("interrupted; the settings finished so far are in .frontier")
        self.frontier = frontier
