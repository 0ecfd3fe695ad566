"""A small TOML writer for job files: strings, booleans, integers, floats, lists of those,
and tables of them (nested tables become ``[a.b]`` sections). Python reads TOML with
:mod:`tomllib`; writing needs only these types, so no dependency is added."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _string(text: str) -> str:
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)  # the shortest text that reads back to the same float
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(item, where) for item in value) + "]"
    raise TypeError(f"{where}: a job file cannot hold a {type(value).__name__} ({value!r})")


def dumps(document: Mapping[str, Any], header: str = "") -> str:
    """The TOML text of ``document``: its plain keys first, then one section per table.

    ``header`` lines are written first as comments."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    _section(document, (), lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _section(table: Mapping[str, Any], name: tuple[str, ...], lines: list[str]) -> None:
    plain = {k: v for k, v in table.items() if not isinstance(v, Mapping)}
    if name and (plain or not any(isinstance(v, Mapping) for v in table.values())):
        lines.extend(["", "[" + ".".join(_key(part) for part in name) + "]"])
    for key, value in plain.items():
        lines.append(f"{_key(key)} = {_value(value, '.'.join((*name, key)))}")
    for key, value in table.items():
        if isinstance(value, Mapping):
            _section(value, (*name, key), lines)
