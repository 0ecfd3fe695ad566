"""Work run beside the caller's, on a thread of its own.

The native calls release the GIL, so two independent jobs (``anonymize``'s candidates) run
on two cores. What either returns never depends on the other or on timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from proxanon._engine import kernels
from proxanon._errors import TimeLimitError

T = TypeVar("T")


class Beside(Generic[T]):
    """Starts ``work(*args)`` on a thread at once. :meth:`result` waits for it and returns
    its value, or raises what it raised; :meth:`stop` (for a caller that no longer needs the
    result: an error, Ctrl-C, which Python delivers to the main thread only) asks its native
    calls to stop, within about 0.1 s, and waits for the thread to end."""

    def __init__(self, work: Callable[..., T], *args: object) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._stop = kernels.StopRequest()

        def run() -> None:
            try:
                with self._stop:
                    self._value = work(*args)
            except BaseException as exc:  # handed to the caller by result()
                self._error = exc

        self._thread = threading.Thread(target=run, name="proxanon-beside")
        self._thread.start()

    def wait(self, seconds: float) -> bool:
        """Waits at most ``seconds`` for the work to end; whether it ended."""
        self._thread.join(seconds)
        return not self._thread.is_alive()

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def stop(self) -> None:
        """Stops the work if it still runs (its result is dropped); at once if it ended."""
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()


def within(seconds: float, work: Callable[[], T]) -> T:
    """``work()`` run beside this thread for at most ``seconds``: its value, or what it
    raised; past the limit its native calls are stopped (within about 0.1 s) and
    TimeLimitError is raised. Ctrl-C while waiting stops the work too."""
    beside = Beside(work)
    try:
        ended = beside.wait(seconds)
    except BaseException:
        beside.stop()
        raise
    if not ended:
        beside.stop()
        raise TimeLimitError(seconds)
    return beside.result()
