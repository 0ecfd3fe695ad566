"""The installed package: one version, written once (pyproject.toml), seen everywhere; and the
build pip keeps in the clone, reused by the next pip install."""

from __future__ import annotations

import os
import re
from importlib.metadata import version
from pathlib import Path

import pytest

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


def _scikit_build_table() -> str:
    text = PYPROJECT.read_text(encoding="utf-8")
    table = text[text.index("\n[tool.scikit-build]\n"):]
    return table[:table.index("\n[", 1)]


def test_pip_builds_in_a_folder_of_the_clone_kept_between_builds():
    # Without build-dir, scikit-build-core builds in a temporary folder and every
    # `pip install` (an extra after a plain install, say) recompiles the whole C++ core.
    found = re.findall(r'^build-dir = "([^"]+)"$', _scikit_build_table(), flags=re.MULTILINE)
    assert len(found) == 1, "[tool.scikit-build] must set build-dir"
    build_dir = Path(found[0])
    assert not build_dir.is_absolute() and ".." not in build_dir.parts, build_dir
    # One folder per Python ABI: a build for another interpreter must not reuse these objects.
    assert "{wheel_tag}" in found[0] or "{cache_tag}" in found[0], build_dir


def test_objects_survive_the_cache_clearing_of_a_new_build_environment():
    # Each isolated pip build makes scikit-build-core delete <build>/CMakeCache.txt and
    # <build>/CMakeFiles/ (a new environment): no object may live there, or it is compiled
    # again. cpp/CMakeLists.txt makes the targets so that they live under <build>/cpp/.
    root = PYPROJECT.parent
    builds = [info.parent for info in root.glob("build/*/.skbuild-info.json")]
    if not builds:
        if os.environ.get("CI"):
            pytest.fail("CI installs the clone with pip, which must leave its build in build/")
        pytest.skip("no pip build in this clone (pip install . builds in build/<wheel tag>)")
    for build in builds:
        cleared = [p for p in (build / "CMakeFiles").rglob("*") if p.suffix in (".o", ".gch")]
        assert not cleared, cleared[:5]
        kept = [p for p in (build / "cpp" / "CMakeFiles").rglob("*.o")]
        assert any(p.parent.name == "common" for p in kept), build
        assert any(p.name == "module.cpp.o" for p in kept), build
