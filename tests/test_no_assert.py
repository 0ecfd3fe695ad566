"""The package uses no ``assert`` for control flow: it vanishes under ``python -O``."""

from __future__ import annotations

import ast
from pathlib import Path

import proxanon

PACKAGE = Path(proxanon.__file__).parent


def test_no_assert_statements_in_the_package():
    found = [f"{path.relative_to(PACKAGE)}:{node.lineno}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Assert)]
    assert found == []
