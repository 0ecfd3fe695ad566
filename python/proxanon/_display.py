"""Short text and HTML summaries of result objects, for the REPL and notebooks, and the
registry through which a result reaches its HTML report.

A result's ``repr`` names its verdict and headline numbers, never its arrays (a table of a
million rows must not print a million ids); ``print(result)`` gives the full text.

``to_html`` on a result looks its writer up here by kind (:func:`html_writer`) instead of
importing the renderer, which sits above the result types and reads them: the renderer
registers its writers when imported (:func:`register_html_writer`), and ``proxanon``'s
``__init__`` imports it, so they are registered whenever the package is. pandas finds its
plotting backend by a lookup of the same kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
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


#: Writers of a result's HTML report by kind ("anonymization", "audit"), registered by the
#: renderer (``proxanon.html_report``) when it is imported.
_HTML_WRITERS: dict[str, Callable[..., None]] = {}


def register_html_writer(kind: str, writer: Callable[..., None]) -> None:
    """Makes ``writer(result, path, ...)`` the writer of the reports of ``kind``."""
    _HTML_WRITERS[kind] = writer


def html_writer(kind: str) -> Callable[..., None]:
    """The writer registered for ``kind``; ``proxanon.html_report`` registers them all."""
    try:
        return _HTML_WRITERS[kind]
    except KeyError:
        raise RuntimeError(f"no HTML writer is registered for {kind!r} results: import "
                           "proxanon.html_report, which registers them") from None
