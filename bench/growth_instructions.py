"""One ``partition`` call of ``bench/test_bench_growth.py`` for an instruction count.

Usage (from the repository's root)::

    valgrind --tool=callgrind python bench/growth_instructions.py continuous 1000000 1
    valgrind --tool=callgrind python bench/growth_instructions.py continuous 1000000 0

The first run builds the values and calls ``partition`` on one thread; the second only
builds them. The difference of the two "Collected" totals is the call's instructions, a
measure of growth that the load of a shared machine does not move (bench/HISTORY.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_bench_growth import DISTRIBUTIONS, K, sensitive_values  # noqa: E402

import proxanon  # noqa: E402


def main(argv: list[str]) -> None:
    distribution, rows, call = argv[0], int(argv[1]), argv[2] == "1"
    values = sensitive_values(distribution, rows)
    epsilon, delta = DISTRIBUTIONS[distribution]
    if call:
        proxanon.partition(values, k=K, epsilon=epsilon, delta=delta, n_threads=1)


if __name__ == "__main__":
    main(sys.argv[1:])
