"""What every table reader and writer shares: the formats, the error types, and the
standard-output target (docs/guide/command-line.md).

A table read from standard input is named :data:`STDIN` in messages; :data:`STDOUT` is the
target that writes to standard output, in one piece. pyarrow is imported only where Parquet
is asked for (:func:`_pyarrow`), so CSV works without it.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

PARQUET_SUFFIXES = (".parquet", ".pq")


#: The first bytes of every Parquet file.
PARQUET_MAGIC = b"PAR1"


#: How messages name a table read from standard input (:func:`read_stream`).
STDIN = Path("standard input")


#: Formats a reader may be told: "auto" goes by the file's name (a stream: its first bytes).
FORMATS = ("auto", "csv", "parquet")


class TableReadError(ValueError):
    """A table file that cannot be read: the message names the file and, where there is one,
    the line (CSV, 1-based, the header is line 1) or the row (Parquet, 1-based)."""


class TableEncodingError(TableReadError):
    """A CSV file that is not text in the encoding it was read with."""

    def __init__(self, path: Path, encoding: str, offset: int, byte: int) -> None:
        super().__init__(f"cannot read {path}: byte 0x{byte:02x} at offset {offset} is not "
                         f"valid {encoding} text; name the file's encoding")
        self.path = path
        self.encoding = encoding
        self.offset = offset


class ParquetUnavailableError(ImportError):
    """Parquet was asked for, but pyarrow (the ``parquet`` extra) is not installed."""


class StandardOutput:
    """The output ``-``: standard output, written in one piece (:func:`atomic_write`)."""

    def __str__(self) -> str:
        return "standard output"

    def __repr__(self) -> str:
        return "STDOUT"


#: The target that writes to standard output.
STDOUT = StandardOutput()


#: Where a table or file is written: a path, or :data:`STDOUT`.
Target = str | os.PathLike[str] | StandardOutput


def is_parquet(path: Target) -> bool:
    """True when the file name says Parquet (``.parquet`` or ``.pq``)."""
    return not isinstance(path, StandardOutput) and Path(path).suffix.lower() in PARQUET_SUFFIXES


def _pyarrow() -> tuple[Any, Any]:
    # Imported by name: pyarrow ships no type information, so it is used as Any.
    try:
        return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")
    except ModuleNotFoundError as exc:
        raise ParquetUnavailableError(
            "reading or writing Parquet needs pyarrow: pip install 'proxanon[parquet]'"
        ) from exc


def _duplicates(path: Path, names: list[str]) -> None:
    seen: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if name in seen:
            raise TableReadError(
                f"column name {name!r} appears twice in the header of {path} (columns "
                f"{seen[name]} and {position}); give every column its own name")
        seen[name] = position
