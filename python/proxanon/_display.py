"""Short text and HTML summaries of result objects, for the REPL and notebooks.

A result's ``repr`` names its verdict and headline numbers, never its arrays (a table of a
million rows must not print a million ids); ``print(result)`` gives the full text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from html import escape
from typing import Any

Fields = Sequence[tuple[str, Any]]


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str):
        return repr(value)
    return str(value)


class Summarized(ABC):
    """``__repr__`` and ``_repr_html_`` from the few fields ``_summary_fields`` names.

    A dataclass using it must say ``repr=False`` (else its generated repr wins)."""

    @abstractmethod
    def _summary_fields(self) -> Fields:
        """(name, value) pairs, in display order."""

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={_text(value)}" for name, value in self._summary_fields())
        return f"{type(self).__name__}({inner})"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style=\"text-align:left\">{escape(name)}</th>"
            f"<td style=\"text-align:left\">{escape(_text(value))}</td></tr>"
            for name, value in self._summary_fields())
        return (f"<table><caption style=\"text-align:left\"><b>{escape(type(self).__name__)}"
                f"</b></caption>{rows}</table>")
