"""Messages that name the caller's options, each interface in its own words.

A message is held as pieces: plain text, the options it names (:class:`Param`: a
parameter, and a value where one is meant) and the functions it points to (:class:`Call`).
``str()`` words them as Python does (``on_infeasible='best_effort'``,
``proxanon.advise``); the command line words the same message with its flags and
subcommands (``--best-effort``, ``proxanon advise``) by passing its own wordings to
:meth:`Text.render`. Errors that carry such a message keep it as their ``text`` attribute
(:func:`worded`), so an interface maps the parameter it names by type, never by reading
the message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class _NoValue:
    """The value of a :class:`Param` that names the parameter alone."""

    def __repr__(self) -> str:
        return "NO_VALUE"

    def __reduce__(self) -> str:
        return "NO_VALUE"  # unpickled as this module's one instance


NO_VALUE: Any = _NoValue()


@dataclass(frozen=True)
class Param:
    """An option a message names: the Python parameter ``name`` and, where the message means
    one setting of it, its ``value`` (``Param("on_infeasible", "best_effort")``)."""

    name: str
    value: Any = NO_VALUE

    def python(self) -> str:
        """As a Python call writes it: ``epsilon``, or ``on_infeasible='best_effort'``."""
        return self.name if self.value is NO_VALUE else f"{self.name}={self.value!r}"


@dataclass(frozen=True)
class Call:
    """A function of the package a message points to (``Call("advise")``)."""

    name: str

    def python(self) -> str:
        """As Python names it: ``proxanon.advise``."""
        return f"proxanon.{self.name}"


Wording = Callable[[Param], str]
CallWording = Callable[[Call], str]


@dataclass(frozen=True)
class Text:
    """A message as text and the options it names, in order."""

    pieces: tuple[str | Param | Call, ...]

    def render(self, word: Wording = Param.python, call: CallWording = Call.python) -> str:
        """The message with each option worded by ``word`` and each function by ``call``
        (Python's words by default)."""
        return "".join(p if isinstance(p, str) else word(p) if isinstance(p, Param)
                       else call(p) for p in self.pieces)

    @property
    def params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Param))

    def __str__(self) -> str:
        return self.render()

    def __bool__(self) -> bool:
        return any(not isinstance(p, str) or p for p in self.pieces)

    def __add__(self, other: str | Text) -> Text:
        return Text(self.pieces + (other.pieces if isinstance(other, Text) else (other,)))

    def __radd__(self, other: str) -> Text:
        return Text((other, *self.pieces))


def text(*pieces: str | Param | Call | Text) -> Text:
    """A message from its pieces: strings, options, functions, and other messages."""
    flat: list[str | Param | Call] = []
    for piece in pieces:
        flat.extend(piece.pieces if isinstance(piece, Text) else (piece,))
    return Text(tuple(flat))


def worded(error: BaseException, word: Wording, call: CallWording = Call.python) -> str:
    """An error's message in the words of an interface: its ``text`` rendered by ``word``
    and ``call`` where it carries one, else its plain message."""
    message = getattr(error, "text", None)
    return message.render(word, call) if isinstance(message, Text) else str(error)
