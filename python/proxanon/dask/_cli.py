"""``proxanon anonymize INPUT --dask [ADDRESS] -o FOLDER``: the command on a Dask cluster."""

from __future__ import annotations

import argparse
import glob
import os
import shutil
from pathlib import Path
from typing import Any

import dask.dataframe as dd

from proxanon.cli._common import (
    EXIT_NOT_SATISFIED,
    EXIT_OK,
    Outcome,
    UsageError,
    floats,
    names,
    pairs,
)
from proxanon.dask._anonymize import anonymize
from proxanon.dask._cluster import connect
from proxanon.generalize import load_hierarchies


def _inputs(pattern: str) -> list[str]:
    """The input files: a glob pattern, a file or a folder of Parquet files."""
    if Path(pattern).is_dir():
        found = sorted(str(p) for p in Path(pattern).glob("*.parquet"))
    else:
        found = sorted(glob.glob(pattern))
    if not found:
        raise UsageError(f"no input file matches {pattern!r}")
    return found


def _publish(table: Any, target: Path) -> None:
    """Writes the Parquet folder under a temporary name, then renames it: an interrupted or
    failed run leaves no half-written output (and a replaced one stays whole until then)."""
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    try:
        table.to_parquet(partial, write_index=True)
        if target.exists():
            os.replace(target, old)
        os.replace(partial, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def run_dask(args: argparse.Namespace) -> Outcome:
    """The runner of ``anonymize --dask``: reads with Dask, anonymizes on the cluster at
    ``args.dask`` (empty: a LocalCluster here, shut down at the end), writes a Parquet
    folder."""
    unsupported = [option for option, value in (
        ("--report", args.report), ("--html", args.html), ("--frontier", args.frontier),
        ("--dates", args.dates),
        ("--order", args.order), ("--missing drop", args.missing == "drop")) if value]
    if unsupported:
        raise UsageError(f"{', '.join(unsupported)} not available with --dask; drop the "
                         "option(s) or run without --dask")
    if args.suppress is not None and args.best_effort:
        raise UsageError("--suppress and --best-effort exclude each other: choose one")
    target = Path(args.output)
    if target.exists() and not args.force:
        raise UsageError(f"{args.output} exists; pass --force to replace it")
    if not target.parent.exists():
        raise UsageError(f"the folder of {args.output} does not exist")
    files = _inputs(args.input)
    if any(os.path.abspath(f) == os.path.abspath(target) for f in files):
        raise UsageError(f"refusing to write over the input {target}; choose another output")
    qi = names(args.qi, "--qi")
    sensitive = names(args.sensitive, "--sensitive")
    with connect(args.dask or None):
        if all(f.endswith(".parquet") for f in files):
            ddf = dd.read_parquet(files)
        else:
            ddf = dd.read_csv(files, sep=args.sep, encoding=args.encoding)
        hierarchies = load_hierarchies(pairs(args.hierarchy, "--hierarchy"), qi + sensitive,
                                       [str(c) for c in ddf.columns], sep=args.hierarchy_sep)
        result = anonymize(
            ddf, quasi_identifiers=qi, sensitive=sensitive, k=args.k, epsilon=args.epsilon,
            delta=args.delta, metric=args.metric,
            weights=floats(args.weights, "--weights") if args.weights else None,
            hierarchies=hierarchies,
            on_infeasible=("suppress" if args.suppress is not None
                           else "best_effort" if args.best_effort else "raise"),
            max_suppression=args.suppress if args.suppress is not None else 0.0,
            moves=args.moves)
        # Published QI values are text (object columns, which Parquet cannot type from meta).
        _publish(result.table.astype({q: str for q in qi}), target)
    return Outcome(EXIT_OK if result.satisfied else EXIT_NOT_SATISFIED, (
        str(result.report), f"wrote {result.report.n:,} rows to the Parquet folder {target}"))
