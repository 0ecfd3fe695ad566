"""Where the tasks run: a scheduler at an address, or a LocalCluster on this machine."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

#: Seconds to wait for a scheduler before giving up (an address nobody answers at must fail
#: fast, not hang).
CONNECT_TIMEOUT = 10.0


class SchedulerUnreachableError(ConnectionError):
    """No Dask scheduler answered at the given address within the timeout."""


@contextlib.contextmanager
def connect(address: str | None = None, *, timeout: float = CONNECT_TIMEOUT,
            workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` for the duration of the block.

    ``address``: a scheduler (``tcp://host:8786``); None starts a LocalCluster here with
    ``workers`` single-threaded worker processes (default: one per core) and shuts it down
    on exit.
    """
    from distributed import Client, LocalCluster

    if address is None:
        count = workers if workers is not None else (os.cpu_count() or 1)
        with LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnreachableError(
            f"no Dask scheduler answered at {address!r} within {timeout:g} s ({exc}); check "
            "the address and that the scheduler is running, or omit it to start a local "
            "cluster") from exc
    with client:
        yield client
