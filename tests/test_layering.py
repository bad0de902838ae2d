"""The layers import one way, and no two files import each other in a circle.

schedcheck.reference knows nothing of the harness; schedcheck.scenario (documents in and out),
schedcheck.model and schedcheck.invariants read the reference; generators write documents; the
application (runner, gate, conform, minimise, reports, CLI) sits on top. Imports under
`if TYPE_CHECKING:` are annotations only and are left out; imports inside functions count.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent

# layer -> the layers it may import (besides itself and the standard library / third parties)
ALLOWED = {
    "schedcheck.reference": set(),
    "schedcheck.scenario": {"schedcheck.reference"},
    "schedcheck.model": {"schedcheck.reference"},
    "schedcheck.invariants": {"schedcheck.reference", "schedcheck.model"},
    # generators write documents and drive sessions (the stateful machines check every invariant as they go)
    "schedcheck.generators": {"schedcheck.reference", "schedcheck.scenario", "schedcheck.invariants"},
}
APP = "schedcheck"  # everything else under schedcheck: may import any layer


def _package_dirs() -> dict[str, Path]:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: ROOT / path for name, path in conf["package-dir"].items()}


def modules() -> dict[str, Path]:
    """Every module schedcheck installs, by dotted name."""
    found: dict[str, Path] = {}
    dirs = _package_dirs()
    for package in sorted(dirs, key=len, reverse=True):
        base = dirs[package]
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((package, *rel))
            # a folder mapped to its own package belongs to that package, not to its parent's tree
            if any(name.startswith(other + ".") or name == other for other in dirs
                   if other != package and other.startswith(package + ".")):
                continue
            found.setdefault(name, path)
    return found


def layer_of(module: str) -> str:
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return APP


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for stmt in child.orelse:
                    visit(stmt)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("schedcheck"):
                        target = resolve(alias.name)
                        if target:
                            found.add(target)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = name if is_package else name.rpartition(".")[0]
                    for _ in range(child.level - 1):
                        base = base.rpartition(".")[0]
                    module = f"{base}.{child.module}" if child.module else base
                else:
                    module = child.module or ""
                if module.startswith("schedcheck"):
                    for alias in child.names:
                        target = resolve(f"{module}.{alias.name}")
                        if target:
                            found.add(target)
            visit(child)

    visit(tree)
    found.discard(name)
    return found


def import_graph() -> nx.DiGraph:
    known = modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for name, path in known.items():
        for target in imports_of(name, path, known):
            graph.add_edge(name, target)
    return graph


def test_every_package_folder_is_installed():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert packages == set(conf["packages"])


def test_layers_import_only_downward():
    wrong = []
    for source, target in import_graph().edges:
        src, dst = layer_of(source), layer_of(target)
        if src == dst or src == APP:
            continue
        if dst not in ALLOWED[src]:
            wrong.append(f"{source} ({src}) imports {target} ({dst})")
    assert wrong == []


def test_no_import_circle_between_files():
    graph = import_graph()
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == []


def test_the_checker_sees_a_planted_upward_import(tmp_path):
    fake = tmp_path / "m.py"
    fake.write_text("def f():\n    from schedcheck.runner import run_scenario\n")
    known = {"schedcheck.reference.m": fake, "schedcheck.runner": ROOT / "schedcheck" / "runner.py"}
    targets = imports_of("schedcheck.reference.m", fake, known)
    assert targets == {"schedcheck.runner"}
    assert layer_of("schedcheck.runner") not in ALLOWED[layer_of("schedcheck.reference.m")]


def test_the_checker_ignores_annotation_only_imports(tmp_path):
    fake = tmp_path / "m.py"
    fake.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from schedcheck.runner import X\n")
    assert imports_of("schedcheck.reference.m", fake, {"schedcheck.runner": fake}) == set()
