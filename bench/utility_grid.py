"""Count-query error and GCP of ``anonymize`` against the Mondrian baselines over ε × δ.

Usage (from anywhere)::

    python bench/utility_grid.py [--rows N] [--queries Q] [--out FILE]

Writes ``FILE`` (default ``bench/UTILITY.md``): per table and (ε, δ), the mean relative error
of the paper's count queries (qd = 2, qs = 2, s = 0.1, seeded) and the GCP of

- the default ``anonymize`` (which publishes the cheaper by GCP of XColor's QI-aware table and
  the Mondrian-(ε, δ) cut, see ``Report.candidates``),
- ``anonymize(init="degree")`` (the paper's Algorithm 1 start, XColor only),
- Mondrian enforcing (ε, δ)^k (``method="mondrian"``),
- Mondrian-k and Mondrian with distinct l = 20 (ε and δ not enforced; audited),

every run with ``on_infeasible="best_effort"``: a table that does not satisfy (ε, δ)^k is
marked ✗. Tables: UCI Adult (as ``bench/reproduce.py`` loads it: QIs age, sex, race,
marital-status with the ARX taxonomies; sensitive education-num, hours-per-week) and a
synthetic census table shaped like the paper's SAL data (``bench/synthetic.py``: QIs age,
sex, race, marital status; sensitive education, work class, income).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

import proxanon

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import reproduce  # noqa: E402 (the Adult loader and hierarchies of the reproduction)
from synthetic import census_frame  # noqa: E402

EPSILONS = (0.02, 0.05, 0.1)
DELTAS = (0.6, 0.7, 0.8)
K = 10
QD = 2
S = 0.1
SEED = 0
MONDRIAN_L = 20
METHODS = ("default", "init=degree", "Mondrian-(ε, δ)", "Mondrian-k", "Mondrian l=20")


@dataclass(frozen=True)
class Table:
    """A table and how to anonymize it."""

    name: str
    frame: pd.DataFrame
    quasi_identifiers: list[str]
    sensitive: list[str]
    hierarchies: dict[str, proxanon.Hierarchy]


@dataclass(frozen=True)
class Cell:
    """One published table at one setting."""

    satisfied: bool
    error: float
    gcp: float
    groups: int
    note: str = ""

    def text(self) -> str:
        mark = "" if self.satisfied else " ✗"
        note = f" {self.note}" if self.note else ""
        return f"{100 * self.error:.1f}% / {self.gcp:.3f}{mark}{note}"


def adult(rows: int | None) -> Table:
    frame, _ = reproduce.load_table(reproduce.DEFAULT_DATA, rows)
    return Table("UCI Adult", frame, list(reproduce.QUASI_IDENTIFIERS),
                 list(reproduce.SENSITIVE), reproduce.hierarchies())


def census(rows: int) -> Table:
    return Table("synthetic census (SAL-shaped)", census_frame(rows, seed=SEED),
                 ["age", "sex", "race", "marital"], ["education", "workclass", "income"], {})


def error(table: Table, anon: proxanon.Anonymization, queries: int) -> float:
    return proxanon.evaluate.count_query_error(table.frame, anon, qd=QD, s=S,
                                               n_queries=queries, seed=SEED).mean_relative_error


def measure(table: Table, queries: int) -> dict[tuple[float, float], dict[str, Cell]]:
    common: dict[str, Any] = dict(quasi_identifiers=table.quasi_identifiers,
                                  sensitive=table.sensitive, k=K, hierarchies=table.hierarchies)
    sens = proxanon.scale_sensitive(table.frame, table.sensitive)
    fixed = {}
    for name, ell in (("Mondrian-k", None), ("Mondrian l=20", MONDRIAN_L)):
        anon = reproduce.mondrian_l(table.frame, table.sensitive, ell,
                                    **{o: v for o, v in common.items() if o != "sensitive"})
        fixed[name] = (anon, error(table, anon, queries))
    results: dict[tuple[float, float], dict[str, Cell]] = {}
    for eps in EPSILONS:
        for dlt in DELTAS:
            row: dict[str, Cell] = {}
            for name, extra in (("default", {}), ("init=degree", {"init": "degree"}),
                                ("Mondrian-(ε, δ)", {"method": "mondrian"})):
                tic = time.perf_counter()
                anon = proxanon.anonymize(table.frame, epsilon=eps, delta=dlt,
                                          on_infeasible="best_effort", **common, **extra)
                note = ""
                if name == "default":
                    other = [f"{m} {c:.3f}" for m, c in anon.report.candidates.items()
                             if m != anon.report.method]
                    note = (f"[{anon.report.method}"
                            + (f"; {other[0]}" if other else "")
                            + f"; {time.perf_counter() - tic:.0f} s]")
                row[name] = Cell(anon.satisfied, error(table, anon, queries), anon.report.gcp,
                                 anon.report.groups, note)
            for name, (anon, err) in fixed.items():
                check = proxanon.audit(sens, anon.groups, k=K, epsilon=eps, delta=dlt)
                row[name] = Cell(check.satisfied, err, anon.report.gcp, anon.report.groups,
                                 f"({check.vulnerability:.1%} vulnerable)"
                                 if not check.satisfied else "")
            results[(eps, dlt)] = row
            print(table.name, eps, dlt, {m: c.text() for m, c in row.items()}, flush=True)
    return results


def concordance(results: dict[tuple[float, float], dict[str, Cell]]) -> tuple[int, int]:
    """Pairs of satisfying tables at one setting that GCP and error rank the same way."""
    agree = total = 0
    for row in results.values():
        cells = [c for c in row.values() if c.satisfied]
        for i, a in enumerate(cells):
            for b in cells[i + 1:]:
                if a.gcp == b.gcp or a.error == b.error:
                    continue
                total += 1
                agree += (a.gcp < b.gcp) == (a.error < b.error)
    return agree, total


def markdown(tables: list[tuple[Table, dict[tuple[float, float], dict[str, Cell]]]],
             command: str, seconds: float) -> str:
    lines = [
        "# Utility of `anonymize` against Mondrian at the same (ε, δ)^k",
        "",
        f"Generated by `{command}` in {seconds:.0f} s (2 shared cores; times are noisy). "
        f"k = {K}; count queries qd = {QD}, qs = 2, s = {S}, seed {SEED}. Each cell: mean "
        "relative error / GCP; ✗: the table does not satisfy (ε, δ)^k (best effort, or a "
        "baseline that does not enforce it, with the share of its groups that violate). "
        "For the default: which table it published, the GCP of the other satisfying "
        "candidate it compared, and its time.",
        "",
    ]
    for table, results in tables:
        lines += [f"## {table.name}, {len(table.frame):,} rows", "",
                  f"QIs {', '.join(table.quasi_identifiers)}; sensitive "
                  f"{', '.join(table.sensitive)} (min-max scaled, L1, equal weights).", ""]
        lines += ["| ε | δ | " + " | ".join(METHODS) + " |",
                  "|---:|---:|" + "---|" * len(METHODS)]
        both = wins = 0
        for (eps, dlt), row in results.items():
            lines.append(f"| {eps:g} | {dlt:g} | "
                         + " | ".join(row[m].text() for m in METHODS) + " |")
            default, mondrian = row["default"], row["Mondrian-(ε, δ)"]
            if mondrian.satisfied:
                both += 1
                wins += default.satisfied and default.error <= mondrian.error + 1e-12
        agree, total = concordance(results)
        lines += ["", f"Where Mondrian-(ε, δ) satisfies ({both} settings), the default "
                      f"satisfies with an error no higher at {wins}. GCP and the error rank "
                      f"two satisfying tables of one setting the same way in {agree} of "
                      f"{total} pairs.", ""]
    return "\n".join(lines)


def run_grid(argv: Sequence[str], *, description: str, script: str, out: Path,
             census_rows: int, measure: Any, markdown: Any) -> int:
    """A grid script's command line: ``measure(table, queries)`` on Adult and the census
    table, written by ``markdown(tables, command, seconds)`` to ``--out`` (default ``out``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rows", type=int, default=None,
                        help="Adult: a seeded sample of this many rows (default: all)")
    parser.add_argument("--census-rows", type=int, default=census_rows)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tables = [(table, measure(table, args.queries))
              for table in (adult(args.rows), census(args.census_rows))]
    command = shlex.join(["python", script, *argv])
    args.out.write_text(markdown(tables, command, time.perf_counter() - started) + "\n",
                        encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def main(argv: Sequence[str]) -> int:
    return run_grid(argv, description=__doc__.splitlines()[0], script="bench/utility_grid.py",
                    out=BENCH_DIR / "UTILITY.md", census_rows=20000, measure=measure,
                    markdown=markdown)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
