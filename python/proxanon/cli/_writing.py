"""What a subcommand writes: output paths checked before any work, the JSON report, the
summary lines, and files replaced atomically (docs/guide/command-line.md).

An output is never an input, a folder, a FIFO, a device or a socket, and exists only with
``--force``; a symbolic link is followed (the file it points to is written, the link kept).
Two outputs never name one file. Files are written to a new file renamed over the old one.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from proxanon.cli._status import STDIO, UsageError
from proxanon.tableio import (
    STDOUT,
    StandardOutput,
    atomic_write,
)


def summary_lines(report: object, published: pd.DataFrame, sensitive: list[str], *,
                  epsilon: float | None, metric: str, weights: list[float] | None, audit: Any,
                  taxonomies: set[str]) -> list[str]:
    """An anonymization's report as summary lines, with the line saying what epsilon allows
    in each sensitive column's own units below its privacy line (over the ``published``
    rows' typed columns, scaled as the audit's ``scales`` say; none where no column has
    units). ``published`` may hold no rows where every sensitive column is numeric (its
    scale then says it all: Dask's table)."""
    from proxanon._pipeline.verdict import epsilon_parts
    from proxanon.distances import resolve

    lines = str(report).split("\n")
    if audit is None or epsilon is None:  # None: no distance was checked (delta = 0)
        return lines
    relation = resolve(metric, weights, len(sensitive), len(published))
    parts = epsilon_parts(published, sensitive, relation, epsilon, audit.scales, taxonomies)
    at = next((i for i, line in enumerate(lines) if line.startswith("  privacy")), None)
    if parts and at is not None:
        label = "  epsilon means".ljust(lines[at].index(":"))  # aligned with the report's
        lines.insert(at + 1, f"{label}: rows are neighbours up to {', or '.join(parts)} (one "
                             "column alone, the others equal)")
    return lines


#: What an existing output that is not a regular file is, in words, by its mode.
_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def output_path(out: str, inputs: Sequence[str], force: bool) -> Path | StandardOutput:
    """Checks an output file name before any work: not an input, not a folder, its folder
    exists, and it is new unless ``force``. ``-`` is standard output
    (:data:`~proxanon.tableio.STDOUT`). A symbolic link is followed: the file it points to
    is written and the link kept. An existing FIFO, device or socket is refused, with or
    without ``force``: outputs are written to a new file renamed over the old one, which
    would replace it rather than write into it."""
    if out == STDIO:
        return STDOUT
    target = Path(os.path.realpath(out)) if os.path.islink(out) else Path(out)
    if target.exists():
        mode = target.stat().st_mode
        for test, what in _SPECIAL_FILES:
            if test(mode):
                raise UsageError(f"{out} is {what}, not a regular file; proxanon writes its "
                                 "outputs by replacing a file: give the path of a regular "
                                 "file, or - for standard output")
    for given in inputs:
        if given == STDIO:
            continue
        if target.exists() and Path(given).exists() and os.path.samefile(target, given):
            raise UsageError(f"refusing to write over the input file {given}; choose another "
                             "output name")
    if target.is_dir():
        raise UsageError(f"{out} is a folder; give the path of a file")
    if target.exists() and not force:
        raise UsageError(f"{out} exists; pass --force to overwrite it")
    if not target.parent.exists():
        raise UsageError(f"the folder of {out} does not exist")
    return target


def json_value(value: Any) -> Any:
    """A result's value as JSON: dataclasses by field, numpy scalars and arrays as Python
    numbers and lists, tuples as lists; non-finite floats (JSON has none) as null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return json_value(value.tolist())
    if isinstance(value, np.generic):
        return json_value(value.item())
    if isinstance(value, (list, tuple)):
        return [json_value(item) for item in value]
    if isinstance(value, enum.Enum):
        return json_value(value.value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"the JSON report cannot hold a {type(value).__name__} ({value!r})")


def report_json(command: str, report: Any, **context: Any) -> bytes:
    """The ``--report`` file: the command, its context and every field of ``report``."""
    from proxanon import __version__

    document = {"proxanon": __version__, "command": command, **json_value(context),
                "report": json_value(report)}
    return (json.dumps(document, indent=2, allow_nan=False) + "\n").encode()


def distinct_outputs(named: Sequence[tuple[str, Path | StandardOutput | None]]) -> None:
    """Refuses two output options (``(option, target)``, None where not given) that name
    the same file, or both standard output."""
    seen: list[tuple[str, Path | StandardOutput]] = []
    for option, target in named:
        if target is None:
            continue
        where = target if isinstance(target, StandardOutput) else target.resolve()
        for other, other_where in seen:
            if where == other_where:
                place = "standard output (-)" if where is STDOUT else "the same file"
                raise UsageError(f"{other} and {option} name {place}; give each output its "
                                 "own name")
        seen.append((option, where))


def write_bytes(target: Path | StandardOutput, content: bytes) -> None:
    def write(handle: IO[bytes]) -> None:
        handle.write(content)

    atomic_write(target, write)
