"""Pairwise swaps (``moves="swap"``, the paper's Algorithm 2) vs the default stronger repair
(``moves="auto"``) on real data, over a grid of (epsilon, delta, k) where swaps stall.

Usage (from anywhere)::

    python bench/repair_grid.py [--quick] [--out FILE.md]

Data, both under L1 with equal weights:

* ``arx``: the ARX copy of Adult (``proxanon.datasets.load_adult``, 30,162 rows), sensitive
  education, occupation, workclass (by category rank, scaled to [0, 1]);
* ``uci``: the UCI copy (``tests/data/adult-uci/adult.data.gz``, rows with '?' dropped, as
  ``tests/conftest.py`` loads it), sensitive education-num, hours-per-week (scaled to [0, 1]).

For every grid point ``moves="swap"`` runs first; the point is kept only if swaps leave
violating rows ("swaps stall"). Kept points are run again with ``moves="auto"``; both runs use
``on_infeasible="best_effort"``. Every result's ``remaining_violations`` is checked against
an independent :func:`proxanon.audit` of its groups, and :func:`proxanon.advise` says whether
the point is provably infeasible for the ``n // k`` equitable groups swaps keep, or for any
partition into groups of at least ``k`` rows. Points where swaps succeed are also run with
``moves="auto"`` to check that it succeeds there too.

Prints (and writes to ``--out``, default ``bench/results/repair_grid.md``) a markdown table
and totals. Exits 1 if auto solves fewer instances than swap, if auto leaves more than 70%
of the violating rows swaps leave (``MAX_RATIO``), if no point stalls, or if a run disagrees
with the audit. Progress goes to standard error.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if str(ROOT) not in sys.path:  # tests/ is a package beside bench/: its UCI loader
    sys.path.insert(0, str(ROOT))

import proxanon  # noqa: E402
from proxanon.datasets import load_adult  # noqa: E402
from proxanon.tables import scale_sensitive  # noqa: E402

DEFAULT_OUT = BENCH_DIR / "results" / "repair_grid.md"

#: The claim under test: auto leaves at most this share of the violating rows swaps leave.
MAX_RATIO = 0.7

EPSILONS = (0.05, 0.1, 0.15)
DELTAS = (0.7, 0.8, 0.9)
KS = (5, 10, 20)

#: ``--quick``: (copy, epsilon, delta, k) points where swaps stall, for CI-speed checks
#: (auto solves the third; the fourth is proven infeasible for any partition).
QUICK_GRID = (
    ("arx", 0.1, 0.8, 10),
    ("arx", 0.05, 0.9, 20),
    ("uci", 0.05, 0.7, 10),
    ("uci", 0.1, 0.8, 10),
)

ARX_SENSITIVE = ["education", "occupation", "workclass"]
UCI_SENSITIVE = ["education-num", "hours-per-week"]


def load_arx() -> NDArray[np.float64]:
    return scale_sensitive(load_adult().data, ARX_SENSITIVE)


def load_uci() -> NDArray[np.float64]:
    from tests.conftest import load_uci_adult

    return scale_sensitive(load_uci_adult(), UCI_SENSITIVE)


COPIES: dict[str, Callable[[], NDArray[np.float64]]] = {"arx": load_arx, "uci": load_uci}


@dataclass
class Run:
    """One partition run, checked against the audit."""

    violating: int
    solved: bool
    seconds: float
    regrouped_size: int
    groups: int


@dataclass
class Row:
    copy: str
    n: int
    epsilon: float
    delta: float
    k: int
    swap: Run
    auto: Run
    infeasible_equitable: bool
    infeasible_any: bool


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(sensitive: NDArray[np.float64], eps: float, dlt: float, k: int, moves: str) -> Run:
    """Partitions with ``moves``, best effort, and checks the result with ``audit``."""
    result = proxanon.partition(sensitive, k=k, epsilon=eps, delta=dlt, metric="l1",
                                moves=moves, on_infeasible="best_effort")
    stats = result.stats
    report = proxanon.audit(sensitive, result.groups, k=k, epsilon=eps, delta=dlt)
    audited = len(report.violating_rows)
    if stats["remaining_violations"] != audited or report.satisfied != result.satisfied:
        raise AssertionError(
            f"moves={moves!r} eps={eps} delta={dlt} k={k}: partition reports "
            f"{stats['remaining_violations']} violating rows (satisfied={result.satisfied}), "
            f"audit finds {audited} (satisfied={report.satisfied})")
    return Run(violating=audited, solved=bool(result.satisfied),
               seconds=float(stats["seconds"]["total"]),
               regrouped_size=int(stats["regrouped_size"]), groups=int(stats["m"]))


def grid(quick: bool) -> list[tuple[str, float, float, int]]:
    if quick:
        return list(QUICK_GRID)
    return [(copy, eps, dlt, k) for copy in COPIES
            for eps, dlt, k in itertools.product(EPSILONS, DELTAS, KS)]


def measure(points: list[tuple[str, float, float, int]]) -> tuple[list[Row], list[str]]:
    """Runs the grid; returns the stalled points and the swap-solved points auto failed."""
    data: dict[str, NDArray[np.float64]] = {}
    rows: list[Row] = []
    auto_failed: list[str] = []
    swap_solved = 0
    for i, (copy, eps, dlt, k) in enumerate(points, 1):
        if copy not in data:
            log(f"loading {copy} ...")
            data[copy] = COPIES[copy]()
        sensitive = data[copy]
        label = f"[{i}/{len(points)}] {copy} eps={eps} delta={dlt} k={k}"
        swap = run(sensitive, eps, dlt, k, "swap")
        auto = run(sensitive, eps, dlt, k, "auto")
        if swap.violating == 0:
            swap_solved += 1
            log(f"{label}: swaps solve ({swap.seconds:.2f} s); auto "
                f"{'solves' if auto.solved else f'leaves {auto.violating}'} "
                f"({auto.seconds:.2f} s)")
            if not auto.solved:
                auto_failed.append(f"{copy} eps={eps} delta={dlt} k={k}")
            continue
        advice = proxanon.advise(sensitive, k=k, epsilon=eps, metric="l1", delta=dlt)
        rows.append(Row(copy, len(sensitive), eps, dlt, k, swap, auto,
                        bool(advice.provably_infeasible),
                        bool(advice.infeasible_for_any_partition)))
        log(f"{label}: swap leaves {swap.violating} ({swap.seconds:.2f} s), auto leaves "
            f"{auto.violating} ({auto.seconds:.2f} s)")
    log(f"{swap_solved} of {len(points)} point(s) solved by swaps (excluded), "
        f"{len(rows)} stall")
    return rows, auto_failed


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


def totals(rows: list[Row]) -> tuple[int, int, int, int, float | None]:
    solved_swap = sum(r.swap.solved for r in rows)
    solved_auto = sum(r.auto.solved for r in rows)
    viol_swap = sum(r.swap.violating for r in rows)
    viol_auto = sum(r.auto.violating for r in rows)
    ratio = viol_auto / viol_swap if viol_swap else None
    return solved_swap, solved_auto, viol_swap, viol_auto, ratio


def totals_line(title: str, rows: list[Row]) -> str:
    solved_swap, solved_auto, viol_swap, viol_auto, ratio = totals(rows)
    shown = "n/a" if ratio is None else f"{ratio:.3f}"
    return (f"| {title} | {len(rows)} | {solved_swap} | {solved_auto} | {viol_swap:,} | "
            f"{viol_auto:,} | {shown} |")


def render(rows: list[Row], points: int, auto_failed: list[str], quick: bool) -> str:
    suffix = " (quick grid)" if quick else ""
    lines = [
        f"# Repair: pairwise swaps vs the default (moves=\"auto\"){suffix}",
        "",
        "ARX Adult: sensitive education, occupation, workclass; UCI Adult: education-num, "
        "hours-per-week; L1, equal weights, `on_infeasible=\"best_effort\"`. "
        + ("Grid: a few fixed points where swaps stall"
           if quick else
           f"Grid: epsilon in {list(EPSILONS)}, delta in {list(DELTAS)}, k in {list(KS)}, "
           "both copies")
        + f"; {points} point(s), {len(rows)} where swaps stall (listed). Violating rows are "
        "checked with `proxanon.audit`. Infeasible columns are `proxanon.advise`'s proofs: "
        "for the n // k equitable groups swaps keep, and for any partition into groups of "
        "at least k rows.",
        "",
        "| copy | n | ε | δ | k | swap violating | auto violating | swap solved | "
        "auto solved | auto regrouped size | swap s | auto s | infeasible (equitable) | "
        "infeasible (any partition) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        size = str(r.auto.regrouped_size) if r.auto.regrouped_size else "—"
        lines.append(
            f"| {r.copy} | {r.n:,} | {r.epsilon:g} | {r.delta:g} | {r.k} | "
            f"{r.swap.violating:,} | {r.auto.violating:,} | {yes(r.swap.solved)} | "
            f"{yes(r.auto.solved)} | {size} | {r.swap.seconds:.2f} | {r.auto.seconds:.2f} | "
            f"{yes(r.infeasible_equitable)} | {yes(r.infeasible_any)} |")
    feasible = [r for r in rows if not r.infeasible_any]
    solved_swap, solved_auto, viol_swap, viol_auto, ratio = totals(rows)
    shown = "n/a" if ratio is None else f"{ratio:.3f}"
    lines += [
        "",
        "| instances | count | solved by swap | solved by auto | violating rows (swap) | "
        "violating rows (auto) | auto / swap |",
        "|---|---:|---:|---:|---:|---:|---:|",
        totals_line("all where swaps stall", rows),
        totals_line("not proven infeasible for any partition", feasible),
        *(totals_line(f"{copy} only{label}", [r for r in subset if r.copy == copy])
          for copy in COPIES
          for label, subset in (("", rows), (", not proven infeasible for any partition",
                                             feasible))),
        "",
        f"Totals: solved {solved_swap} (swap) vs {solved_auto} (auto) of {len(rows)}; "
        f"violating rows {viol_swap:,} (swap) vs {viol_auto:,} (auto), ratio {shown} "
        f"(claim: at most {MAX_RATIO}).",
        "",
        f"Points where swaps succeed ({points - len(rows)}): auto succeeds on "
        f"{points - len(rows) - len(auto_failed)}"
        + (f"; fails on {', '.join(auto_failed)}." if auto_failed else "."),
    ]
    return "\n".join(lines) + "\n"


def verdict(rows: list[Row], auto_failed: list[str]) -> list[str]:
    """The failed checks of the claim (empty when it holds)."""
    if not rows:
        return ["no grid point stalls swaps: nothing was compared"]
    solved_swap, solved_auto, _, _, ratio = totals(rows)
    failures = []
    if solved_auto < solved_swap:
        failures.append(f"auto solves {solved_auto} instance(s), swap {solved_swap}")
    if ratio is not None and ratio > MAX_RATIO:
        failures.append(f"auto leaves {ratio:.3f} of swap's violating rows (> {MAX_RATIO})")
    if auto_failed:
        failures.append(f"auto fails where swaps succeed: {', '.join(auto_failed)}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"only the {len(QUICK_GRID)} points of QUICK_GRID")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="markdown file to write (default: %(default)s)")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    points = grid(args.quick)
    try:
        rows, auto_failed = measure(points)
    except AssertionError as exc:
        log(f"FAILED: {exc}")
        return 1
    markdown = render(rows, len(points), auto_failed, args.quick)
    print(markdown, end="")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown, encoding="utf-8")
    log(f"wrote {args.out} ({time.perf_counter() - started:.0f} s)")

    failures = verdict(rows, auto_failed)
    for failure in failures:
        log(f"FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
