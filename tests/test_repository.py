"""The repository stands on its own: what its code, tests, benchmarks and docs cite is inside
it. Comments cite the project's specification (docs/design/) by path; nothing points at a
specification, paper file or issue tracker the repository does not hold."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".py", ".pyi", ".hpp", ".cpp", ".md", ".txt", ".toml", ".yml", ".cfg"}
# bench/HISTORY.md is the dated log: it quotes what past measurements were taken against.
EXEMPT = {"bench/HISTORY.md"}

# Each written in two pieces so that this file does not match itself.
OUTSIDE = {
    "a specification file outside the repository": re.compile("SPEC" + r"(\.md| §)"),
    "a paper file path": re.compile(r"(?<![\w-])" + "papers" + r"/[\w-]+"),
    "the workplace's shared folder": re.compile(r"\.\./" + "shared"),
    "an issue number": re.compile(r"(?i)\b" + "issue" + r"s? #?\d+"),
    "a wrong credit of the XColor paper": re.compile("Tao" + r" et al\.?,? \*?XColor"),
}


def _tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        if os.environ.get("CI"):
            pytest.fail("CI runs in a git clone: its tracked files must be listed")
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / name for name in listed
            if name and Path(name).suffix in TEXT_SUFFIXES and name not in EXEMPT
            and (ROOT / name).is_file()]


def test_nothing_cites_what_the_repository_does_not_hold() -> None:
    found = []
    for path in _tracked_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for what, pattern in OUTSIDE.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {what} ({match.group(0)!r})")
    assert not found, "\n".join(found)


def test_every_cited_docs_page_exists() -> None:
    cited = re.compile(r"(?<![\w/])docs/[\w/.-]+?\.md")
    missing = []
    for path in _tracked_files():
        if path.is_relative_to(ROOT / "docs"):
            continue  # pages link to each other relatively; mkdocs --strict checks those
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in cited.finditer(text):
            if not (ROOT / match.group(0)).is_file():
                missing.append(f"{path.relative_to(ROOT)}: {match.group(0)}")
    assert not missing, "\n".join(missing)


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 15_000
