"""Reproduce Fig. 3 and Fig. 4 of the property-preserving anonymization paper on UCI Adult.

Usage (from anywhere)::

    python bench/reproduce_substitute.py [--rows N] [--out DIR] [--data FILE]

Data: the first N rows (default 30,000, as in the paper) of UCI Adult with '?' rows dropped
(``shared/data/adult/uci/adult.data`` beside the repository); columns ``age``, ``fnlwgt``,
``education-num``. Writes ``DIR/substitute_fig3_time.png``, ``DIR/substitute_fig4_ce.png``
and ``DIR/SUBSTITUTE.md`` (the command, one table per figure, and the paper's claims checked
against the numbers).

- Fig. 3(a): time of Algorithm 1 per segment against the segment size s (100 to 900):
  substitute with no walk (iterations=0) and a tiny poi_fraction, so that sorting and
  extraction dominate; native time / segments, per column. The claim: quadratic in s.
- Fig. 3(b): time of the walk (4000 iterations, s = 100) per segment against the number of
  kept constraints, varying σ = poi_fraction on the first 5,000 rows. The claim: linear.
- Fig. 4: k-means clustering error CE of substituted data (s = 100, 4000 iterations) against
  uniform random perturbation (each column plus a·range·U(-1, 1), a found by bisection so
  that its Dst is at most the substitution's and within 1% of it), k ∈ {3, 5, 7}, varying σ.
  All three columns are standardized with the original's mean and deviation; k-means
  (scipy ``kmeans2``, k-means++, seed 0) runs on the original, and on each released table
  from the original's centroids, so the two clusterings differ only through the data;
  clusters are matched by the assignment with most common rows, and CE = 1 - matched / n
  (the paper's (1/2n) Σ |C_i ∪ C'_i| - |C_i ∩ C'_i|). The claim: substitution's CE is lower.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from reproduce import DEFAULT_DATA, UCI_COLUMNS, markdown_table  # noqa: E402
from scipy.cluster.vq import kmeans2  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402

import proxanon  # noqa: E402
from proxanon.substitute import Substitution, distortion  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
COLUMNS = ["age", "fnlwgt", "education-num"]
SEGMENT_SIZES = [100, 300, 500, 700, 900]
FRACTIONS_TIME = [0.05, 0.1, 0.2, 0.3, 0.4]
FRACTIONS_CE = [0.02, 0.05, 0.1, 0.2, 0.4]
KS = [3, 5, 7]
REPEATS = 3


def load(path: Path, rows: int) -> pd.DataFrame:
    frame = pd.read_csv(path, header=None, names=list(UCI_COLUMNS), sep=",",
                        skipinitialspace=True, na_values=["?"])
    return frame.dropna().reset_index(drop=True)[COLUMNS].head(rows)


def fastest(table: pd.DataFrame, **kwargs: float) -> tuple[Substitution, dict[str, float]]:
    """One single-threaded run, and per column the least native time of REPEATS runs (the
    machine is shared: the minimum is the least disturbed)."""
    runs = [proxanon.substitute(table, COLUMNS, n_threads=1, **kwargs)  # type: ignore[arg-type]
            for _ in range(REPEATS)]
    return runs[0], {c: min(r.seconds_per_column[c] for r in runs) for c in COLUMNS}


def fig3a(table: pd.DataFrame) -> pd.DataFrame:
    out = []
    for size in SEGMENT_SIZES:
        result, seconds = fastest(table, segment_size=size, poi_fraction=1e-6, iterations=0)
        segments = max(1, len(table) // size)
        for column in COLUMNS:
            out.append({"segment_size": size, "column": column,
                        "ms_per_segment": 1e3 * seconds[column] / segments,
                        "localities_per_segment": result.localities[column] / segments})
    return pd.DataFrame(out)


def fig3b(table: pd.DataFrame) -> pd.DataFrame:
    out = []
    for fraction in FRACTIONS_TIME:
        result, seconds = fastest(table, segment_size=100, poi_fraction=fraction,
                                  iterations=4000)
        segments = max(1, len(table) // 100)
        counts = result.constraints.groupby("column").size()
        for column in COLUMNS:
            out.append({"poi_fraction": fraction, "column": column,
                        "constraints_per_segment": counts.get(column, 0) / segments,
                        "ms_per_segment": 1e3 * seconds[column] / segments})
    return pd.DataFrame(out)


def perturb_to(table: pd.DataFrame, target: float, seed: int) -> tuple[pd.DataFrame, float]:
    """Uniform noise a·range·U(-1, 1) per column, a bisected so Dst <= target (within 1%)."""
    rng = np.random.default_rng(seed)
    original = table.to_numpy(dtype=np.float64)
    noise = rng.uniform(-1.0, 1.0, original.shape) * np.ptp(original, axis=0)
    low, high = 0.0, 1.0
    while distortion(original.ravel(), (original + high * noise).ravel()) < target:
        high *= 2.0
    for _ in range(60):
        mid = (low + high) / 2.0
        if distortion(original.ravel(), (original + mid * noise).ravel()) <= target:
            low = mid
        else:
            high = mid
    released = original + low * noise
    return pd.DataFrame(released, columns=table.columns), distortion(original.ravel(),
                                                                    released.ravel())


def clustering_error(original: np.ndarray, released: np.ndarray, k: int) -> float:
    mean, std = original.mean(axis=0), original.std(axis=0)
    a, b = (original - mean) / std, (released - mean) / std
    centroids, labels = kmeans2(a, k, minit="++", seed=0)
    _, released_labels = kmeans2(b, centroids, minit="matrix", iter=10)
    overlap = np.zeros((k, k), dtype=np.int64)
    np.add.at(overlap, (labels, released_labels), 1)
    rows, cols = linear_sum_assignment(-overlap)
    return 1.0 - overlap[rows, cols].sum() / len(original)


def fig4(table: pd.DataFrame) -> pd.DataFrame:
    original = table.to_numpy(dtype=np.float64)
    out = []
    for fraction in FRACTIONS_CE:
        result = proxanon.substitute(table, COLUMNS, segment_size=100, poi_fraction=fraction,
                                     iterations=4000)
        perturbed, dst_perturbed = perturb_to(table, result.distortion, seed=1)
        by_column = ", ".join(
            f"{col} {distortion(table[col].to_numpy(float), result.table[col].to_numpy()):.3f}"
            for col in COLUMNS)
        for k in KS:
            out.append({
                "poi_fraction": fraction, "k": k, "dst_substitute": result.distortion,
                "dst_perturb": dst_perturbed, "dst_by_column": by_column,
                "ce_substitute": clustering_error(original, result.table[COLUMNS].to_numpy(), k),
                "ce_perturb": clustering_error(original, perturbed.to_numpy(), k),
            })
    return pd.DataFrame(out)


def plot(a: pd.DataFrame, b: pd.DataFrame, c: pd.DataFrame, out: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for column, rows in a.groupby("column", sort=False):
        axes[0].plot(rows.segment_size, rows.ms_per_segment, marker="o", label=column)
    axes[0].set(xlabel="segment size s", ylabel="ms per segment",
                title="(a) locality extraction")
    for column, rows in b.groupby("column", sort=False):
        axes[1].plot(rows.constraints_per_segment, rows.ms_per_segment, marker="o", label=column)
    axes[1].set(xlabel="kept constraints per segment", ylabel="ms per segment",
                title="(b) random walk, 4000 iterations")
    for axis in axes:
        axis.legend()
        axis.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "substitute_fig3_time.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(KS), figsize=(12, 4), sharey=True)
    for axis, k in zip(axes, KS, strict=True):
        rows = c[c.k == k]
        axis.plot(rows.poi_fraction, rows.ce_substitute, marker="o", label="substitution")
        axis.plot(rows.poi_fraction, rows.ce_perturb, marker="s", label="perturbation")
        axis.set(xlabel="σ (poi_fraction)", title=f"k = {k}")
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("clustering error CE")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out / "substitute_fig4_ce.png", dpi=120)
    plt.close(fig)


def frame_markdown(frame: pd.DataFrame, digits: int) -> str:
    return "\n".join(markdown_table(list(frame.columns),
                                     frame.round(digits).itertuples(index=False)))


def growth_exponent(x: pd.Series, y: pd.Series) -> float:
    """Slope of log y against log x (2 for quadratic, 1 for linear growth)."""
    return float(np.polyfit(np.log(x.to_numpy(float)), np.log(y.to_numpy(float)), 1)[0])


def report(argv: Sequence[str], rows: int, a: pd.DataFrame, b: pd.DataFrame,
           c: pd.DataFrame) -> str:
    lines = ["# Property-preserving substitution: the paper's Fig. 3 and Fig. 4 on Adult", "",
             f"Command: `{shlex.join(['python', 'bench/reproduce_substitute.py', *argv])}`", "",
             f"Data: first {rows:,} rows of UCI Adult ('?' rows dropped), columns "
             f"{', '.join(COLUMNS)}. Times are single-threaded, on this machine.", ""]
    lines += ["## Fig. 3(a): locality extraction per segment", "",
              frame_markdown(a, 3), ""]
    exponents_a = {col: growth_exponent(r.segment_size, r.ms_per_segment)
                   for col, r in a.groupby("column", sort=False)}
    fnlwgt = exponents_a["fnlwgt"]
    lines += [f"Growth exponent of time in s (log-log slope): "
              f"{', '.join(f'{k} {v:.2f}' for k, v in exponents_a.items())}. Claim "
              f"'quadratic in the segment size' (for fnlwgt, nearly all values distinct): "
              f"**{'agrees' if 1.6 <= fnlwgt <= 2.4 else 'does not agree'}** "
              f"(slope {fnlwgt:.2f}). age and education-num have at most 73 and 16 distinct "
              "values per segment, and the extraction runs over distinct values.", ""]
    lines += ["## Fig. 3(b): random walk per segment (s = 100, 4000 iterations)", "",
              frame_markdown(b, 3), ""]
    rows_b = b[b.column == "fnlwgt"]
    x, y = rows_b.constraints_per_segment.to_numpy(), rows_b.ms_per_segment.to_numpy()
    slope, intercept = np.polyfit(x, y, 1)
    r2 = 1.0 - float(np.sum((y - (slope * x + intercept)) ** 2) / np.sum((y - y.mean()) ** 2))
    lines += [f"Least-squares line for fnlwgt: {intercept:.2f} ms + {1e3 * slope:.2f} µs per "
              f"kept constraint, R² = {r2:.3f} (the intercept is the per-step cost of the "
              "direction and the bounds, linear in the variables). Claim 'linear in the "
              f"number of PoIs': **{'agrees' if r2 >= 0.9 and slope > 0 else 'does not agree'}**.",
              ""]
    lines += ["## Fig. 4: k-means clustering error at equal distortion", "",
              frame_markdown(c, 4), ""]
    wins = int((c.ce_substitute < c.ce_perturb).sum())
    verdict = "agrees" if wins == len(c) else "partly agrees" if wins else "does not agree"
    lines += [f"Claim 'substitution's CE is lower than perturbation's at the same Dst': "
              f"substitution is lower in {wins} of {len(c)} cases: **{verdict}**. Localities "
              "and orders are invariant under x -> a·x + b (a > 0), so they pin a segment's "
              "values only up to such a map and the walk moves whole segments within the "
              "bounds; a column with few distinct values per segment has few constraints and "
              "moves farthest (Dst per column, substitution: "
              f"{c.dst_by_column.iloc[len(KS) * (len(FRACTIONS_CE) // 2)]} at σ = "
              f"{FRACTIONS_CE[len(FRACTIONS_CE) // 2]}). Uniform perturbation at the same mean "
              "relative error moves every value a little, which k-means tolerates better.", ""]
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=30_000, help="rows of Adult (30,000)")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "reproduction",
                        help="output directory (bench/reproduction)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="UCI adult.data")
    args = parser.parse_args(argv)
    table = load(args.data, args.rows)
    args.out.mkdir(parents=True, exist_ok=True)
    a = fig3a(table)
    print(a.to_string(index=False), flush=True)
    b = fig3b(table.head(5_000))
    print(b.to_string(index=False), flush=True)
    c = fig4(table)
    print(c.to_string(index=False), flush=True)
    plot(a, b, c, args.out)
    (args.out / "SUBSTITUTE.md").write_text(report(argv, len(table), a, b, c) + "\n",
                                           encoding="utf-8")
    print(f"wrote {args.out}/substitute_fig3_time.png, substitute_fig4_ce.png, SUBSTITUTE.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
