"""glibc's allocator loosened while a proxanon task runs in a Dask worker.

Dask's nanny starts each worker process with ``MALLOC_TRIM_THRESHOLD_`` set (65536 by
default) so that freed memory goes back to the system at once. Setting that variable also
fixes glibc's mmap threshold at 128 KiB, where it would otherwise grow with use: every buffer
larger than 128 KiB is then mapped afresh on each allocation and page-faulted on first use.
The engine allocates many such buffers, and ran about a quarter slower in a worker than in a
plain process (2M census rows in 8 parts, one thread: 7.0 s against 5.7 s).

:func:`roomy` wraps a task: while at least one wrapped task runs in the process, the mmap
threshold is raised to 32 MiB and the trim threshold to 256 MiB, so freed buffers are reused;
when the last one ends, both are set back to what the environment gave, so the next free at
the top of the heap returns the memory to the system as Dask intends. (Trimming the whole
heap at once cost the next task as much as it saved: its pages were faulted in again.)
Without the variable (a plain process keeps glibc's adaptive threshold) or without glibc,
nothing changes.

Bound: glibc keeps one heap (arena) per thread, and each may hold up to 256 MiB of free
memory while tasks run; a worker whose threads always overlap proxanon tasks never drops the
raised thresholds, so it may hold up to that much free memory per thread until they pause.

Cost: a lock and an environment read per task, and four calls into the C library when the
first task starts or the last one ends.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

#: glibc's ``mallopt`` parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: The thresholds while a task runs: buffers up to 32 MiB (glibc's largest mmap threshold on
#: 64-bit) come from the heap, which keeps up to 256 MiB of free memory between them.
ROOMY_MMAP = 32 * 1024 * 1024
ROOMY_TRIM = 256 * 1024 * 1024
#: glibc's mmap threshold when the environment fixes it without naming it.
GLIBC_MMAP_DEFAULT = 128 * 1024

F = TypeVar("F", bound=Callable[..., Any])


def _find_mallopt() -> Any:
    """The C library's ``mallopt`` (glibc and musl have one), or None."""
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # TypeError: on Windows, by the name None
        return None


_MALLOPT = _find_mallopt()


class _Allocator:
    """The process's glibc allocator settings, counted in and out by running tasks."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0

    def settings(self) -> tuple[Any, int, int] | None:
        """(mallopt, trim, mmap) as the environment set them, or None when it set no trim
        threshold or the C library has no ``mallopt``."""
        if _MALLOPT is None:
            return None
        try:
            trim = int(os.environ["MALLOC_TRIM_THRESHOLD_"])
            mmap = int(os.environ.get("MALLOC_MMAP_THRESHOLD_", GLIBC_MMAP_DEFAULT))
        except (KeyError, ValueError):
            return None
        return _MALLOPT, trim, mmap

    def enter(self) -> None:
        with self.lock:
            self.running += 1
            found = self.settings() if self.running == 1 else None
            if found is not None:
                mallopt = found[0]
                mallopt(M_MMAP_THRESHOLD, ROOMY_MMAP)
                mallopt(M_TRIM_THRESHOLD, ROOMY_TRIM)

    def leave(self) -> None:
        with self.lock:
            self.running -= 1
            found = self.settings() if self.running == 0 else None
            if found is not None:
                mallopt, trim, mmap = found
                mallopt(M_MMAP_THRESHOLD, mmap)
                mallopt(M_TRIM_THRESHOLD, trim)


_ALLOCATOR = _Allocator()


def roomy(task: F) -> F:
    """``task`` with the allocator loosened while it runs (see the module's text)."""

    @functools.wraps(task)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _ALLOCATOR.enter()
        try:
            return task(*args, **kwargs)
        finally:
            _ALLOCATOR.leave()

    return wrapped  # type: ignore[return-value]
