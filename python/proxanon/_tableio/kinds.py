"""The Arrow type of a column written from text (:func:`text_kind`).

Integers written without leading zeros become int64, other plain numbers float64,
everything else text (``02134``, ``0007`` and ``1,5`` stay text), and empty cells nulls in
a column of numbers; a replaced column of one kind per part takes the widest kind
(:func:`widest_kind`). The cells are matched by Arrow's regular expressions (RE2), so the
cost is O(cells) in Arrow's kernels.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from proxanon._tableio.base import _pyarrow

#: Cell texts by kind (:func:`text_kind`), matched by Arrow's regular expressions (RE2).
_INTEGER = r"^(0|-?[1-9][0-9]{0,17})$"


_LONG_INTEGER = r"^-?[1-9][0-9]{18,}$"  # beyond int64, and exact only as text


_DECIMAL = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$"


#: The kinds of :func:`text_kind`, narrowest first.
KINDS = ("empty", "integer", "decimal", "text")


def _kind_of(cells: Any) -> tuple[str, Any, Any]:
    """The kind of an Arrow array of cell texts, the cells trimmed, and which are filled."""
    pa, _ = _pyarrow()
    pc = importlib.import_module("pyarrow.compute")
    trimmed = pc.utf8_trim_whitespace(cells)
    filled = pc.not_equal(trimmed, "")
    if not pc.any(filled).as_py():
        return "empty", trimmed, filled

    def every(pattern: str, negate: bool = False) -> bool:
        hit = pc.match_substring_regex(trimmed, pattern)
        return bool(pc.all(pc.or_(pc.invert(hit) if negate else hit,
                                  pc.invert(filled))).as_py())

    if every(_INTEGER):
        return "integer", trimmed, filled
    if every(_DECIMAL) and every(_LONG_INTEGER, negate=True):
        return "decimal", trimmed, filled
    return "text", trimmed, filled


def text_kind(values: Sequence[str]) -> str:
    """How a column of cell texts reads as a whole (spaces around a cell ignored, empty cells
    skipped): "integer" when every cell is an integer written without leading zeros (and of
    at most 18 digits, so it fits int64), "decimal" when every cell is a number so written
    (``-12``, ``0.5``, ``100.50``, ``1e3``; not ``0007``, ``.5``, ``1,5`` or an integer of
    more digits), "text" otherwise, "empty" when no cell holds anything. Needs pyarrow."""
    pa, _ = _pyarrow()
    return _kind_of(pa.array(values, pa.string()))[0]


def widest_kind(kinds: Sequence[str]) -> str:
    """The kind of a column made of parts of these kinds (:func:`text_kind`)."""
    return KINDS[max((KINDS.index(kind) for kind in kinds), default=0)]


def typed_array(values: Sequence[str], kind: str | None = None) -> Any:
    """Cell texts as an Arrow array of their kind (:func:`text_kind`, found unless given):
    int64 or float64 with empty cells as nulls, or the texts as strings."""
    pa, _ = _pyarrow()
    pc = importlib.import_module("pyarrow.compute")
    cells = pa.array(values, pa.string())
    found, trimmed, filled = _kind_of(cells) if kind is None else (kind, None, None)
    if found not in ("integer", "decimal"):
        return cells
    if trimmed is None:
        trimmed = pc.utf8_trim_whitespace(cells)
        filled = pc.not_equal(trimmed, "")
    numbers = pc.if_else(filled, trimmed, pa.scalar(None, pa.string()))
    return pc.cast(numbers, pa.int64() if found == "integer" else pa.float64())
