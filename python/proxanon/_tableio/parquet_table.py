"""Parquet tables through pyarrow, and the Arrow types of columns written from text.

A Parquet source keeps its Arrow table, so untouched columns keep their types and values.
Positions in messages are Parquet rows, 1-based. Cost: O(cells), in Arrow's kernels.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from proxanon._tableio.base import STDIN, TableReadError, _duplicates, _pyarrow


@dataclass(frozen=True)
class ParquetTable:
    """A Parquet file held as its Arrow table (``table``)."""

    path: Path
    table: Any

    @property
    def names(self) -> list[str]:
        return [str(name) for name in self.table.column_names]

    @property
    def n_rows(self) -> int:
        return int(self.table.num_rows)

    def position(self, row: int) -> str:
        return f"row {row + 1} of {self.path}"

    def column(self, name: str) -> pd.Series:
        """One column as pandas sees it (dates as datetime64); a column of nested values
        (lists, structs, maps) is refused, naming it."""
        column = self.table.column(name)
        refuse_nested(name, column.type, self.path)
        return pd.Series(column.to_pandas(date_as_object=False), name=name)

    def to_arrow(self, text: Collection[str] = ()) -> Any:
        """The Arrow table as read (``text``: for the signature :class:`CsvTable` has)."""
        return self.table


def _nested(arrow_type: Any) -> bool:
    """Whether values of this Arrow type are lists, structs, maps or unions."""
    types = importlib.import_module("pyarrow.types")
    return bool(types.is_nested(arrow_type)
                or (types.is_dictionary(arrow_type) and types.is_nested(arrow_type.value_type)))


def _type_words(arrow_type: Any) -> str:
    """An Arrow type as a message names it: ``lists (list<element: int64>)``."""
    types = importlib.import_module("pyarrow.types")
    kind = next((words for test, words in (
        (types.is_list, "lists"), (types.is_large_list, "lists"),
        (types.is_fixed_size_list, "lists"), (types.is_struct, "structs"),
        (types.is_map, "maps"), (types.is_union, "unions")) if test(arrow_type)), "values")
    return f"{kind} ({arrow_type})"


def refuse_nested(name: str, arrow_type: Any, where: object) -> None:
    """Refuses a column of nested values (lists, structs, maps) where one value per row is
    needed, naming the column and the fix."""
    if _nested(arrow_type):
        raise TableReadError(
            f"column {name!r} of {where} holds {_type_words(arrow_type)}, which cannot be "
            "compared as one value; convert it to numbers, text or dates first (e.g. join a "
            "list's items into one text), or use another column")


def read_parquet(path: str | os.PathLike[str] | bytes, name: Path | None = None
                 ) -> ParquetTable:
    """Reads a Parquet file, or Parquet ``bytes`` (named ``name`` in messages); needs
    pyarrow."""
    pa, pq = _pyarrow()
    raw = isinstance(path, bytes)
    where = (name or STDIN) if isinstance(path, bytes) else Path(path)
    try:
        table = pq.read_table(pa.BufferReader(path) if raw else where)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise TableReadError(f"cannot read {where} as Parquet: {exc}") from None
    _duplicates(where, [str(name) for name in table.column_names])
    if table.num_rows == 0:
        raise TableReadError(f"{where} has columns but no rows")
    return ParquetTable(where, table)
