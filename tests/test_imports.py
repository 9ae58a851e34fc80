"""No import cycles among the project's own modules, not even ones hidden in function bodies.

The graph is read from the source with ast: every import of one of our modules, at module level
or inside a function (where an import may only be dodging a cycle), except those of an app's
``AppConfig.ready`` (which Django runs once the registry is ready) and those under
``if TYPE_CHECKING`` (never run). Any cycle in it fails, with the modules that form it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (of ours)
    line: int
    nested: bool  # inside a function or method body


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(root: Path, packages: list[str]) -> list[Import]:
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.parts:
                modules[module_name(root, path)] = path
    found: list[Import] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        _visit(tree, _Module(name, path.name == "__init__.py", modules), False, found)
    return found


@dataclass(frozen=True)
class _Module:
    name: str
    is_package: bool
    modules: dict[str, Path]

    def ours(self, name: str) -> str | None:
        """The module of ours that ``name`` is, or is an attribute of."""
        while name:
            if name in self.modules:
                return name
            name = name.rpartition(".")[0]
        return None

    def targets(self, node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            anchor = self.name if self.is_package else self.name.rpartition(".")[0]
            for _ in range(node.level - 1):
                anchor = anchor.rpartition(".")[0]
            base = f"{anchor}.{base}" if base else anchor
        named = [f"{base}.{alias.name}" for alias in node.names]
        return [target if self.ours(target) == target else base for target in named] or [base]


def _visit(node: ast.AST, module: _Module, nested: bool, found: list[Import]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child):
            continue  # read by the type checker only, never at run time
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            _visit(child, module, True, found)
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            for target in module.targets(child):
                resolved = module.ours(target)
                if resolved is not None and resolved != module.name:
                    found.append(Import(module.name, resolved, child.lineno, nested))
        _visit(child, module, nested, found)


def cycles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def connect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


ROOT = Path(__file__).resolve().parent.parent
SERVER = ["config", "evidence", "ledger", "dashboards"]


def _runtime_edges(root: Path, packages: list[str]) -> list[Import]:
    return [edge for edge in imports(root, packages) if not edge.source.endswith(".apps")]


def test_the_server_has_no_import_cycle():
    assert cycles(_runtime_edges(ROOT, SERVER)) == []


def test_the_client_has_no_import_cycle():
    assert cycles(_runtime_edges(ROOT / "client" / "src", ["freezedebt_ci"])) == []


def test_a_cycle_through_a_function_body_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from pkg.a import thing\n")
    (package / "c.py").write_text("from . import a\n")
    edges = _runtime_edges(tmp_path, ["pkg"])
    assert cycles(edges) == [["pkg.a", "pkg.b"]]
    assert [edge.nested for edge in edges if edge.source == "pkg.b"] == [True]


def test_imports_for_the_type_checker_only_are_no_cycle(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n"
    )
    assert cycles(_runtime_edges(tmp_path, ["pkg"])) == []
