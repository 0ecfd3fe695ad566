"""Sizes that keep the code readable one part at a time (docs/design/architecture.md): no
Python module over 600 lines, no Python class over 300, no C++ function over 120.

Python is measured with ``ast`` (a class from its ``class`` line, decorators excluded, to its
last line). C++ is scanned after comments, strings and character literals are blanked: a
function body is a ``{`` at namespace or class level whose code before it ends with the
closing parenthesis of a parameter list (optionally ``const``, ``noexcept``, ``override`` or a
trailing return type), measured to its matching ``}``; braces inside a body (blocks,
lambdas, initializers) belong to it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "proxanon"
CPP = ROOT / "cpp"

MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300
MAX_CPP_FUNCTION_LINES = 120

#: What is still longer than its limit, to be split: nothing may join the list, and a part
#: that is split must leave it (the tests fail either way). Every part is within its limit.
STILL_LONG: set[str] = set()

_CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\(.*\)\s*$")
_AFTER_PARAMETERS = re.compile(
    r"\)\s*(const|noexcept|override|final|mutable|\s|->\s*[\w:<>,\s*&]+)*$")


def _blanked(text: str) -> str:
    """``text`` with comments, strings and character literals emptied, lines kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'R"\((.*?)\)"', lambda m: '""' + "\n" * m.group().count("\n"), text,
                  flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def cpp_functions(text: str) -> Iterator[tuple[str, int, int]]:
    """(name, first line, lines) of every function body in C++ source ``text``."""
    text = _blanked(text)
    stack: list[tuple[bool, int, str]] = []  # (a function body, its line, its name)
    inside = 0  # open braces since the innermost function body began
    line, last = 1, 0
    for match in re.finditer(r"[{};\n]", text):
        char = match.group()
        if char == "\n":
            line += 1
            continue
        if char == "{":
            head = text[last:match.start()].strip()
            tail = head.split("\n")[-1]
            body = (inside == 0 and bool(_AFTER_PARAMETERS.search(head))
                    and not _CONTROL.search(tail) and "=" not in tail.split("(")[0])
            names = re.findall(r"([\w:~<>]+)\s*\(", head)
            stack.append((body, line, names[0] if names else "?"))
            inside += 1 if body or inside else 0
        elif char == "}" and stack:
            body, start, name = stack.pop()
            inside = max(inside - 1, 0) if inside else 0
            if body:
                yield name, start, line - start + 1
        last = match.end()


def test_modules_are_short() -> None:
    lengths = {path: len(path.read_text(encoding="utf-8").splitlines())
               for path in sorted(PACKAGE.rglob("*.py"))}
    long = {str(path.relative_to(ROOT)) for path, n in lengths.items()
            if n > MAX_MODULE_LINES}
    known = {name for name in STILL_LONG if name.startswith("python/")}
    assert long == known, f"too long: {sorted(long - known)}; split: {sorted(known - long)}"


def test_classes_are_short() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_CLASS_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines")
    assert not long, "\n".join(long)


def test_cpp_functions_are_short() -> None:
    sources = sorted(p for p in CPP.rglob("*") if p.suffix in (".cpp", ".hpp"))
    found = [(path, *function) for path in sources
             for function in cpp_functions(path.read_text(encoding="utf-8"))]
    assert len(found) > 300, "the scan finds the core's functions"
    long = {f"{path.relative_to(ROOT)} {name}"
            for path, name, start, n in found if n > MAX_CPP_FUNCTION_LINES}
    known = {name for name in STILL_LONG if name.startswith("cpp/")}
    assert long == known, f"too long: {sorted(long - known)}; split: {sorted(known - long)}"


SAMPLE = """\
namespace a {
// a comment with a brace {
int f(int x) {
    if (x > 0) {
        auto g = [&](int y) { return y + 1; };
        return g(x);
    }
    const char* s = "}";
    return 0;
}
struct S {
    int v[2] = {1, 2};
    int get() const noexcept { return v[0]; }
    auto h() -> int
    {
        for (int i = 0; i < 2; ++i) { }
        return 1;
    }
};
}  // namespace a
"""


def test_the_cpp_scan_measures_each_body() -> None:
    assert list(cpp_functions(SAMPLE)) == [("f", 3, 8), ("get", 13, 1), ("h", 15, 4)]
