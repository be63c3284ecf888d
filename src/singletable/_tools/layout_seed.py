"""Seed data for the layout view, loaded through the repository.

The examples (and the packaged demo shop) keep their seed data in a ``data.json`` of their own
shape (``{"customers": [...], "orders": [...]}``) next to a ``seed(repo)`` function that builds
the entities and writes them through the repository, so keys, index keys and type tags are
computed exactly as the application computes them. ``items_from_file`` tells the two formats
apart (``layout_items.is_seed_data``: wire-format items are a JSON list or an object with an
``"Items"`` list; any other JSON object is seed data) and, for seed data, creates the table in
an embedded DynamoDB (moto in this process: the ``demo`` extra), runs ``seed(repo)`` on it and
scans the items back.

``seed(repo)`` reads its file through the module-level ``DATA`` path of the module that defines
it (the examples' convention: ``DATA = Path(__file__).with_name("data.json")``). While it runs,
that ``DATA`` names the file given, so a copy of ``data.json`` edited elsewhere is what gets
loaded; it is restored afterwards.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from .layout_items import ItemsError, is_seed_data, parse_items, read_document, scan_items

if TYPE_CHECKING:
    from .._repository import Repository

MOTO_MISSING = (
    'loading seed data needs the embedded DynamoDB (moto): pip install "singletable[demo]" '
    "(or pass wire-format items)"
)


def find_seed(
    repository: type[Repository], module: str | None = None, seed: str | None = None
) -> Callable[..., Any]:
    """The ``seed(repo)`` function: ``seed`` (``"MODULE:FUNCTION"``) when given, else ``seed`` in
    ``module`` (the module the repository was named from), else in the repository's own
    module."""
    if seed is not None:
        module_name, _, attribute = seed.partition(":")
        if not module_name or not attribute:
            raise ItemsError(f"--seed {seed!r}: expected MODULE:FUNCTION, e.g. myapp.data:seed")
        found = getattr(_module(module_name, f"--seed {seed!r}"), attribute, None)
        if not callable(found):
            raise ItemsError(f"--seed {seed!r}: {module_name} has no function {attribute!r}")
        return cast("Callable[..., Any]", found)
    searched: list[str] = []
    for name in (module, repository.__module__):
        if name is None or name in searched:
            continue
        searched.append(name)
        found = getattr(_module(name, name), "seed", None)
        if callable(found):
            return cast("Callable[..., Any]", found)
    raise ItemsError(
        f"no seed(repo) function in {' or '.join(searched)} to load the seed data with; give "
        '--seed MODULE:FUNCTION, or pass wire-format items (a JSON list, or {"Items": [...]})'
    )


def _module(name: str, context: str) -> ModuleType:
    try:
        return sys.modules.get(name) or importlib.import_module(name)
    except ImportError as exc:
        raise ItemsError(f"{context}: cannot import {name!r}: {exc}") from None


def _name(seed: Callable[..., Any]) -> str:
    return f"{getattr(seed, '__module__', '?')}.{getattr(seed, '__qualname__', 'seed')}"


@contextlib.contextmanager
def _reading(seed: Callable[..., Any], path: Path) -> Iterator[None]:
    """``seed``'s module-level ``DATA`` names ``path`` while the block runs."""
    namespace = getattr(inspect.unwrap(seed), "__globals__", None)
    current = namespace.get("DATA") if namespace is not None else None
    if namespace is None or not isinstance(current, Path):
        raise ItemsError(
            f"{_name(seed)} has no module-level DATA path (pathlib.Path) to point at {path}; "
            "layout loads seed data through a seed(repo) that reads its module's DATA, as the "
            "examples do"
        )
    namespace["DATA"] = path
    try:
        yield
    finally:
        namespace["DATA"] = current


def seed_items(
    repository: type[Repository],
    seed: Callable[..., Any],
    path: str | Path,
    *,
    max_items: int = 1000,
) -> list[dict[str, Any]]:
    """The items ``seed(repo)`` writes when it reads ``path``: the repository's table created in
    an embedded moto DynamoDB, seeded, scanned back (up to ``max_items``) and discarded."""
    from ..testing import local_table

    try:
        import moto  # noqa: F401  (the demo extra)
    except ImportError:
        raise ItemsError(MOTO_MISSING) from None
    table = repository.__singletable_table__
    name = f"{table.name}-layout-{uuid.uuid4().hex[:8]}"  # apart from any mock already running
    source = Path(path).resolve()
    with local_table(table, table_name=name) as client:
        repo = repository(client=client, table_name=name)
        with _reading(seed, source):
            try:
                seed(repo)
            except Exception as exc:  # the seed is user code: any failure is one line
                raise ItemsError(
                    f"{path}: {_name(seed)} failed on this seed data: {type(exc).__name__}: {exc}"
                ) from None
        return scan_items(client, name, max_items=max_items)


def items_from_file(
    repository: type[Repository],
    path: str | Path,
    *,
    module: str | None = None,
    seed: str | None = None,
    max_items: int = 1000,
) -> tuple[list[dict[str, Any]], str]:
    """The items of ``path`` and a description of where they came from: wire-format items as
    they are, seed data through the repository's ``seed(repo)`` (see ``find_seed``)."""
    document = read_document(path)
    if not is_seed_data(document):
        if seed is not None:
            raise ItemsError(
                f"{path} holds wire-format items, not seed data: --seed applies to seed data only"
            )
        return parse_items(document, str(path)), str(path)
    function = find_seed(repository, module, seed)
    items = seed_items(repository, function, path, max_items=max_items)
    return items, f"{path}, seeded through {_name(function)}"
