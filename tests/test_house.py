"""The shape of the package: imports run one way (no cycles, no plan module importing the
repositories), and no module grows past about 600 lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "singletable"
MAX_LINES = 650  # "about 600"
REPOSITORIES = {"singletable._repository", "singletable.aio", "singletable._repository_base"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The package's modules ``name`` imports at run time (module or function level);
    ``from package import submodule`` counts as importing the submodule only."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("singletable"):
                submodules = [f"{target}.{a.name}" for a in node.names]
                found = [m for m in submodules if m in known]
                yield from found or [target]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("singletable"):
                    yield alias.name


def runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (imports for type checkers only)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for other in node.orelse:
                yield other
                yield from runtime_nodes(other)
            continue
        yield node
        yield from runtime_nodes(node)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {t for t in imports_of(name, path, known) if t in known and t != name}
        for name, path in known.items()
    }


def test_no_import_cycles() -> None:
    edges = graph()
    # the package __init__ is a lazy table of names (PEP 562): it imports only for type checkers
    edges = {name: targets - {"singletable"} for name, targets in edges.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycle = [*path[path.index(target) :], target]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_plans_never_import_the_repositories() -> None:
    for name, targets in graph().items():
        if name.startswith(("singletable._patterns", "singletable._verbs")) or name in (
            "singletable._flows",
            "singletable._context",
            "singletable._verbs.transactions",
            "singletable._executor",
        ):
            assert not targets & REPOSITORIES, f"{name} imports {targets & REPOSITORIES}"


def test_no_module_is_over_about_600_lines() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, path in modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_only_codegen_executes_generated_source() -> None:
    users = [
        name
        for name, path in modules().items()
        if any(
            isinstance(node, ast.Call) and getattr(node.func, "id", None) == "exec"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    ]
    assert users == ["singletable._codegen"]
