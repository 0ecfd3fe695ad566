"""``proxanon anonymize INPUT --dask [ADDRESS] -o FOLDER``: the command on a Dask cluster.

The Parquet folder keeps the input's types as the single-machine command does
(:mod:`proxanon.tableio`): CSV input is read as text and each column typed by its text over
all files (numbers as numbers, text with leading zeros as text), published QI columns the
same way; Parquet columns keep their Arrow types, lists and structs included. The index is
written only where it is a named column of the input (no ``__null_dask_index__``).
"""

from __future__ import annotations

import argparse
import glob
import importlib
import os
import shutil
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd

from proxanon.cli._options import floats, kept_as_text, names, pairs
from proxanon.cli._status import EXIT_NOT_SATISFIED, EXIT_OK, STDIO, Outcome, UsageError
from proxanon.cli._writing import summary_lines
from proxanon.dask._anonymize import anonymize
from proxanon.dask._cluster import connect
from proxanon.generalize import load_hierarchies
from proxanon.tableio import refuse_nested, text_kind, widest_kind


def _inputs(pattern: str) -> list[str]:
    """The input files: a glob pattern, a file or a folder of Parquet files."""
    if Path(pattern).is_dir():
        found = sorted(str(p) for p in Path(pattern).glob("*.parquet"))
    else:
        found = sorted(glob.glob(pattern))
    if not found:
        raise UsageError(f"no input file matches {pattern!r}")
    return found


def _kinds_of(frame: pd.DataFrame) -> pd.DataFrame:
    """Per column of a part: its kind (:func:`proxanon.tableio.text_kind`) and whether it
    has an empty cell."""
    found: dict[str, list[Any]] = {}
    for column in frame.columns:
        cells = ["" if pd.isna(v) else str(v) for v in frame[column].tolist()]
        found[column] = [text_kind(cells), any(not c.strip() for c in cells)]
    return pd.DataFrame(found, index=["kind", "empty"], dtype=object)


def _typed(frame: pd.DataFrame, kinds: dict[str, str], empty: dict[str, bool]) -> pd.DataFrame:
    """A part's text columns typed by their kind over the whole table: integers as int64
    (nullable Int64 where some cell is empty), other numbers as float64, text as read."""
    out = frame.copy()
    for column, kind in kinds.items():
        if kind not in ("integer", "decimal"):
            continue
        cells = frame[column].astype(object).map(
            lambda v: None if pd.isna(v) or not str(v).strip() else str(v).strip())
        numbers = pd.to_numeric(cells)
        out[column] = (numbers.astype("Int64" if empty[column] else "int64")
                       if kind == "integer" else numbers.astype("float64"))
    return out


def _typed_by_text(ddf: Any, columns: list[str]) -> Any:
    """``columns`` of ``ddf`` (text) typed by their text over all parts (one pass)."""
    if not columns:
        return ddf
    found = ddf[columns].map_partitions(
        _kinds_of, meta=pd.DataFrame({c: pd.Series(dtype=object) for c in columns})).compute()
    is_kind = (found.index == "kind")
    kinds = {c: widest_kind(found.loc[is_kind, c].tolist()) for c in columns}
    empty = {c: bool(found.loc[~is_kind, c].any()) for c in columns}
    meta = _typed(ddf._meta, kinds, empty)
    return ddf.map_partitions(_typed, kinds, empty, meta=meta)


def _is_parquet(files: list[str]) -> bool:
    return all(f.endswith(".parquet") for f in files)


def _object_columns(files: list[str]) -> dict[str, Any]:
    """The Arrow type of each column of Parquet input that pandas holds as Python objects
    (lists, structs, maps, decimals, binary), read from the first file's schema: written
    back with that type (Dask would otherwise write objects as text)."""
    if not _is_parquet(files):
        return {}
    schema = importlib.import_module("pyarrow.parquet").read_schema(files[0])
    types = importlib.import_module("pyarrow.types")
    return {field.name: field.type for field in schema
            if any(test(field.type) for test in (
                types.is_nested, types.is_decimal, types.is_binary, types.is_large_binary,
                types.is_fixed_size_binary))}


def _read(files: list[str], args: argparse.Namespace) -> Any:
    """The input as a dask DataFrame; CSV is read as text and typed by its text (every
    file's), but for the columns kept as text (:func:`kept_as_text`)."""
    if _is_parquet(files):
        return dd.read_parquet(files)
    ddf = dd.read_csv(files, sep=args.sep, encoding=args.encoding, dtype=str,
                      keep_default_na=False)
    kept = kept_as_text(args)
    return _typed_by_text(ddf, [str(c) for c in ddf.columns if str(c) not in kept])


def _full_schema(meta: pd.DataFrame, given: dict[str, Any]) -> Any:
    """The Arrow schema of a table with ``meta``'s columns (and its index where named): the
    ``given`` types, the others inferred from their dtypes. Whole, because Dask would infer
    every column first, and cannot from an object column's placeholder values."""
    pa = importlib.import_module("pyarrow")
    frame = meta.reset_index() if meta.index.name is not None else meta
    plain = [c for c in frame.columns if c not in given]
    inferred = pa.Schema.from_pandas(frame[plain], preserve_index=False)
    return pa.schema([pa.field(c, given[c]) if c in given else inferred.field(c)
                      for c in frame.columns])


def _publish(table: Any, target: Path, schema: dict[str, Any]) -> None:
    """Writes the Parquet folder under a temporary name, then renames it: an interrupted or
    failed run leaves no half-written output (and a replaced one stays whole until then).
    The index is written where it is a named column; ``schema`` gives the Arrow types of
    columns that pandas holds as objects (lists, structs)."""
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    try:
        table.to_parquet(partial, write_index=table.index.name is not None,
                         schema=_full_schema(table._meta, schema) if schema else "infer")
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
    if (args.publish == "anatomy") != (args.sensitive_output is not None):
        raise UsageError("--publish anatomy writes two tables: give --sensitive-output with "
                         "it, and only with it")
    if STDIO in (args.input, args.output):
        raise UsageError("--dask reads files and writes a Parquet folder: '-' (standard input "
                         "or output) is not available with it; run without --dask")
    target = Path(args.output)
    sensitive_target = None if args.sensitive_output is None else Path(args.sensitive_output)
    for given, path in ((args.output, target), (args.sensitive_output, sensitive_target)):
        if path is None:
            continue
        if path.exists() and not args.force:
            raise UsageError(f"{given} exists; pass --force to replace it")
        if not path.parent.exists():
            raise UsageError(f"the folder of {given} does not exist")
    if sensitive_target is not None and sensitive_target.resolve() == target.resolve():
        raise UsageError("-o and --sensitive-output name the same folder; give each its own")
    files = _inputs(args.input)
    if any(os.path.abspath(f) == os.path.abspath(target) for f in files):
        raise UsageError(f"refusing to write over the input {target}; choose another output")
    qi = names(args.qi, "--qi")
    sensitive = names(args.sensitive, "--sensitive")
    objects = _object_columns(files)
    for column in qi + sensitive:
        if column in objects:
            refuse_nested(column, objects[column], files[0])
    with connect(args.dask or None):
        ddf = _read(files, args)
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
            moves=args.moves, publish=args.publish)
        kept = kept_as_text(args)
        if sensitive_target is not None:  # anatomy: QIs as read; the sensitive table unindexed
            _publish(result.table, target,
                     {name: kind for name, kind in objects.items() if name not in sensitive})
            _publish(result.sensitive_table, sensitive_target,
                     {name: kind for name, kind in objects.items() if name in sensitive})
        else:
            # Published QI values are text, typed as CSV text is (numbers where all are).
            _publish(_typed_by_text(result.table.astype({q: str for q in qi}),
                                    [q for q in qi if q not in kept]), target,
                     {name: kind for name, kind in objects.items() if name not in qi})
    shown = result.sensitive_table if sensitive_target is not None else result.table
    lines = summary_lines(result.report, shown._meta, sensitive, epsilon=args.epsilon,
                          metric=args.metric,
                          weights=floats(args.weights, "--weights") if args.weights else None,
                          audit=result.audit, taxonomies=set(hierarchies))
    written = f"wrote {result.report.n:,} rows to the Parquet folder {target}"
    if sensitive_target is not None:
        written += f" (the QI table) and to {sensitive_target} (the sensitive table)"
    return Outcome(EXIT_OK if result.satisfied else EXIT_NOT_SATISFIED, (*lines, written))
