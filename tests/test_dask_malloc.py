"""proxanon.dask._malloc: inside a proxanon task, a worker started the way Dask's nanny
starts it (``MALLOC_TRIM_THRESHOLD_`` set) reuses freed buffers instead of mapping and
faulting them in afresh; outside, the worker's own settings are back. (The probes read glibc's
behaviour, as the engine's own memory tests read Linux's /proc: the project runs on Linux.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

#: Minutes of work in all: run by CI (`pytest -m slow`), not by the README's command.
pytestmark = pytest.mark.slow

pytest.importorskip("dask")

PROBE = textwrap.dedent("""
    import resource
    import numpy as np
    from proxanon.dask._malloc import roomy

    def churn():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(40):
            buffer = np.ones(1 << 20)  # 8 MiB, above the fixed 128 KiB mmap threshold
            del buffer
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    outside = churn()
    inside = roomy(churn)()
    after = churn()
    nested = roomy(lambda: (roomy(churn)(), churn()))()
    print(outside, inside, after, *nested)
""")


#: More page faults than 40 buffers of 8 MiB take when each is faulted in afresh (about 500
#: each here: the kernel maps several pages a fault), and far more than when one is reused.
AFRESH = 40 * 100


def faults(environment: dict[str, str]) -> list[int]:
    """Page faults of 40 allocations of 8 MiB: outside a task, inside one, outside again,
    and inside a task nested in another, then in the outer task after it."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=environment, check=True)
    return [int(v) for v in done.stdout.split()]


def test_a_task_reuses_buffers_where_the_worker_would_map_them_afresh() -> None:
    environment = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536"}
    outside, inside, after, nested_inner, nested_outer = faults(environment)
    assert outside > AFRESH  # every buffer faulted in again: the worker's setting
    assert inside < outside // 10
    assert after > AFRESH  # the worker's setting is back once the task ends
    assert nested_inner < outside // 10 and nested_outer < outside // 10


def test_a_plain_process_is_left_as_it_is() -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    outside, inside, after, _, _ = faults(environment)
    # glibc's adaptive threshold already reuses the buffers, with or without a task.
    assert max(outside, inside, after) < AFRESH


def test_a_setting_it_cannot_read_leaves_the_task_alone(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    from proxanon.dask._malloc import _ALLOCATOR, roomy

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "not a number")
    assert _ALLOCATOR.settings() is None
    assert roomy(lambda x: x + 1)(41) == 42
    assert _ALLOCATOR.running == 0
