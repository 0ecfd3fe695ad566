"""The installed package: one version, written once (pyproject.toml), seen everywhere."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import proxanon

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_version_is_the_one_in_pyproject_and_the_installed_distribution():
    text = PYPROJECT.read_text(encoding="utf-8")
    project = text[text.index("\n[project]\n"):]
    project = project[:project.index("\n[", 1)]
    written = re.findall(r'^version = "([^"]+)"$', project, flags=re.MULTILINE)
    assert len(written) == 1, "pyproject.toml's [project] must give the version once"
    assert proxanon.__version__ == written[0] == version("proxanon")
    assert re.fullmatch(r"\d+\.\d+\.\d+", proxanon.__version__)


def test_the_version_is_not_written_in_the_package_source():
    package = Path(proxanon.__file__).resolve().parent
    for path in package.rglob("*.py"):
        assert not re.search(r'__version__\s*=\s*["\']', path.read_text(encoding="utf-8")), path
