"""The shape of the package: imports run one way (no cycles, no plan module importing the
repositories), and no module grows past about 600 lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "singletable"
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


# -- the twins stay twins ------------------------------------------------------------------


def _verbs(cls: type) -> dict[str, object]:
    return {
        name: member
        for name, member in vars(cls).items()
        if not name.startswith("_") and (callable(member) or isinstance(member, classmethod))
    }


def test_the_twins_offer_the_same_verbs_with_the_same_signatures_and_docs() -> None:
    """httpcore fails CI when its generated twin drifts; these twins are written by hand, so
    this test is that check: the same public verbs, the same signatures (``async`` aside; a
    transaction is a context manager on one and an async one on the other), and the same
    docstrings, so the API reference is as rich for async users."""
    import inspect

    from singletable import Repository
    from singletable.aio import AsyncRepository

    sync, aio = _verbs(Repository), _verbs(AsyncRepository)
    assert set(aio) - set(sync) == {"connect"}  # the async twin opens its own client
    assert set(sync) - set(aio) == set()
    for name in sorted(set(sync) & set(aio)):
        s, a = inspect.signature(sync[name]), inspect.signature(aio[name])  # type: ignore[arg-type]
        assert list(s.parameters.values()) == list(a.parameters.values()), name
        if name != "transaction":
            assert s.return_annotation == a.return_annotation, name
        s_doc = inspect.getdoc(sync[name]) or ""
        a_doc = inspect.getdoc(aio[name]) or ""
        if name == "transaction":  # "with" and "async with": the first words differ
            s_doc, a_doc = s_doc.replace("async with", "with"), a_doc.replace("async with", "with")
        first = [" ".join(doc.split("\n\n")[0].split()) for doc in (s_doc, a_doc)]
        assert first[0] == first[1], name  # the first paragraph, however it is wrapped
        assert s_doc, f"{name} has no docstring"


def test_the_repository_options_are_declared_once() -> None:
    """Both constructors take ``**options: Unpack[RepositoryOptions]``; a misspelt option is a
    TypeError naming it, as a keyword argument would be."""
    import inspect

    import pytest

    from singletable import Repository
    from singletable._repository_base import RepositoryOptions
    from singletable.aio import AsyncRepository
    from tests.models import Shop

    for twin in (Repository, AsyncRepository):
        params = inspect.signature(twin.__init__).parameters
        assert [p.name for p in params.values()] == ["self", "client", "options"]
    with pytest.raises(TypeError, match="'defualt_limit'"):
        Shop(defualt_limit=5)  # type: ignore[call-arg]
    assert "fast_path" in RepositoryOptions.__annotations__


# -- one rule, one room ----------------------------------------------------------------------


def _calls_of(function: str) -> set[str]:
    """The modules that call ``function`` by name."""
    return {
        name
        for name, path in modules().items()
        if any(
            isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == function
            for node in ast.walk(ast.parse(path.read_text()))
        )
    }


def test_ownership_is_decided_in_one_place() -> None:
    """ "Is this stored item a live E?" is ``EntitySpec.owns`` (with ``tagged``/``expired``);
    only the decoder inlines it for speed. Nothing else reads a stored TTL or tests an item's
    tag for membership in an entity's type tags."""
    assert _calls_of("ttl_passed") == {"singletable._entity_spec", "singletable._patterns.base"}
    testing_tags = set()
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Compare)
                and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
                and any(getattr(c, "attr", None) == "type_tags" for c in node.comparators)
            ):
                testing_tags.add(name)
    # (the command line also finds an entity class by a name the user typed, a type tag too)
    assert testing_tags == {"singletable._entity_spec", "singletable._tools.cli_backfill"}


def test_filter_strings_are_built_in_expressions_only() -> None:
    """A request's FilterExpression is compiled from ``Attr`` conditions in ``_expressions.py``
    (``add_filter``); the one other writer joins compiled conditions with its
    ``conjunction``, never text of its own."""
    writers = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Subscript)
                and getattr(target.slice, "value", None) == "FilterExpression"
                for target in node.targets
            ):
                writers.setdefault(name, []).append(node.value)
    assert "singletable._patterns.keyed" in writers  # the check looks where filters are set
    for name, values in writers.items():
        if name != "singletable._expressions":
            assert all(
                isinstance(v, ast.Call) and getattr(v.func, "id", None) == "conjunction"
                for v in values
            ), name


def test_update_keywords_are_call_keywords() -> None:
    from singletable._keys import CALL_KEYWORDS, UPDATE_KEYWORDS

    assert UPDATE_KEYWORDS <= CALL_KEYWORDS


TESTS = Path(__file__).resolve().parents[1]
# The fixtures that reach a DynamoDB backend (moto_fixtures.plugin and tests/conftest.py).
BACKEND_FIXTURES = {"backend", "client", "make_repo", "recorder", "table_name", "async_clients"}
BACKEND_FIXTURES |= {"shop_repo", "game_repo", "store"}


def test_unit_tests_mirror_the_source() -> None:
    """``tests/unit/<wing>/test_<module>[_topic].py`` tests ``singletable/_<wing>/_<module>.py``
    (or the top-level ``singletable/_<module>.py`` for ``tests/unit/test_<module>.py``)."""
    misplaced = []
    for path in sorted((TESTS / "unit").rglob("test_*.py")):
        wing = path.parent.relative_to(TESTS / "unit").parts
        source = PACKAGE.joinpath(*[w if w == "aws" else f"_{w}" for w in wing])
        names = {p.stem.lstrip("_") for p in source.iterdir()}
        stem = path.stem.removeprefix("test_")
        if not any(stem == n or stem.startswith(f"{n}_") for n in names):
            misplaced.append(str(path.relative_to(TESTS)))
    assert misplaced == [], f"unit tests named after no module of their wing: {misplaced}"


def test_unit_tests_use_no_backend() -> None:
    """A test under tests/unit asks for no backend fixture: those belong in tests/backend."""
    found = []
    for path in sorted((TESTS / "unit").rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        functions = [
            n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        # a fixture the file defines itself (a layout called ``store``) is not the backend's
        backend = BACKEND_FIXTURES - {n.name for n in functions if _is_fixture(n)}
        for node in functions:
            used = {a.arg for a in node.args.args} & backend
            if used and (node.name.startswith("test_") or _is_fixture(node)):
                found.append(f"{path.relative_to(TESTS)}::{node.name} {sorted(used)}")
    assert found == [], f"unit tests that reach a backend: {found}"


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in node.decorator_list)
