"""The package's layers: every import points down, no import circles, only the native
adapters import ``_core``, and functions stay short with few positional parameters.

Every module under ``python/proxanon`` is parsed with ``ast``; its imports (at module level
and inside functions alike, in every form: ``import proxanon.x``, ``from proxanon import x``,
``from proxanon.x import y``, ``from . import x``) are mapped to modules, and each module to
its layer by :data:`LAYERS`. A module may import modules of its own layer or of lower ones.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "proxanon"

#: The layers, bottom first: a module name (relative to ``proxanon``, "" for the package's
#: ``__init__``), or a package name ending in ".*" for all of its modules.
LAYERS: list[tuple[str, list[str]]] = [
    ("native kernels", ["_core", "_engine", "_engine.kernels"]),
    ("foundations", ["_startup", "_messages", "_errors", "_validate", "_display", "_progress",
                     "_work_beside", "_group_runs", "_tableio", "_tableio.*", "tableio"]),
    ("data models", ["_taxonomy", "_taxonomy.*", "hierarchy", "distances", "tables", "generalize"]),
    ("measures and results", ["_results", "_results.measures", "_results.workload",
                              "_results.published",
                              "_results.partition",
                              "_results.audit", "_results.anonymization",
                              "_results.privacy", "_results.criteria"]),
    ("native adapters", ["_engine.options", "_engine.stats", "_engine.verdicts",
                         "_engine.proofs", "_engine.cliques", "_engine.infeasibility",
                         "_engine.proof_texts", "_engine.runs", "_engine.classes", "_engine.audit",
                         "_engine.substitution", "_engine.lattice", "_engine.relations"]),
    ("anonymize pipeline", ["_pipeline", "_pipeline.inputs", "_pipeline.classes",
                            "_pipeline.mondrian", "_pipeline.candidates", "_pipeline.job",
                            "_pipeline.threads", "_pipeline.choose", "_pipeline.publish",
                            "_pipeline.verdict", "_pipeline.criteria", "_pipeline.anatomy",
                            "_pipeline.full_domain"]),
    ("renderers", ["html_report", "_report", "_report.*", "evaluate", "frontier"]),
    ("entry points", ["", "__main__", "anonymize", "partition", "audit", "advise",
                      "substitute", "m_color", "datasets", "explore", "cli", "cli.*", "dask",
                      "dask.*"]),
]

#: The only modules that may import ``proxanon._core``.
NATIVE_ADAPTERS = "_engine"

#: The longest function, in lines, and the most positional parameters one may take.
MAX_FUNCTION_LINES = 120
MAX_POSITIONAL = 8


def module_name(path: Path) -> str:
    """``proxanon.a.b`` for ``python/proxanon/a/b.py`` (the package for an ``__init__``)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


MODULES = package_modules()
#: Modules without Python source: the extension.
KNOWN = set(MODULES) | {"proxanon._core"}


def layer_of(module: str) -> int:
    """The index in LAYERS of ``module`` (a full name); a module not declared fails."""
    short = module.removeprefix("proxanon").removeprefix(".")
    found = [i for i, (_, names) in enumerate(LAYERS) for name in names
             if name == short or (name.endswith(".*")
                                  and short.startswith(name.removesuffix("*")))]
    assert len(found) == 1, f"{module} must be declared in exactly one layer of LAYERS"
    return found[0]


def imported(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(module imported, line) for every import of a package module in ``path``."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "proxanon" or alias.name.startswith("proxanon."):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source != "proxanon" and not source.startswith("proxanon."):
                continue
            for alias in node.names:
                name = f"{source}.{alias.name}"
                yield (name if name in KNOWN else source), node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """Per module, the package modules it imports (the nearest known enclosing module of a
    name) and the line of the first such import."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        targets: dict[str, int] = {}
        for target, line in imported(module, path):
            while target not in KNOWN and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != module:
                targets.setdefault(target, line)
        graph[module] = targets
    return graph


GRAPH = import_graph()


def test_every_module_is_in_one_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_point_down() -> None:
    upward = [
        f"{module}:{line} imports {target} ({LAYERS[layer_of(target)][0]} above "
        f"{LAYERS[layer_of(module)][0]})"
        for module, targets in GRAPH.items() for target, line in targets.items()
        if layer_of(target) > layer_of(module)]
    assert not upward, "\n".join(upward)


def test_no_import_circles() -> None:
    circles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in GRAPH.get(module, {}):
            if state.get(target) == 1:
                circles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in GRAPH:
        if module not in state:
            visit(module)
    assert not circles, "\n".join(circles)


def test_only_the_native_adapters_import_the_core() -> None:
    importers = [f"{module}:{line}" for module, targets in GRAPH.items()
                 for target, line in targets.items() if target == "proxanon._core"
                 and not module.startswith(f"proxanon.{NATIVE_ADAPTERS}.")]
    assert not importers, "\n".join(importers)


def functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{module}:{node.lineno} {node.name}", node


def positional(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Positional parameters, ``self`` and ``cls`` not counted."""
    names = [a.arg for a in node.args.posonlyargs + node.args.args]
    return len(names) - (1 if names and names[0] in ("self", "cls") else 0)


def test_functions_are_short() -> None:
    long = [f"{where}: {node.end_lineno - node.lineno + 1} lines"
            for where, node in functions()
            if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, "\n".join(long)


def test_functions_take_few_positional_parameters() -> None:
    many = [f"{where}: {positional(node)} positional parameters"
            for where, node in functions() if positional(node) > MAX_POSITIONAL]
    assert not many, "\n".join(many)
