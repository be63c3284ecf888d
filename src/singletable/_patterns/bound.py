"""Patterns read from a repository instance: the typed call surface of each twin.

A bound pattern holds the pattern and the repository. Each call builds the pattern's flow
and hands it to ``repo.run``; the sync twin returns the result, the async twin returns a
coroutine of it. ``.params(**kw)`` is the same pure request on both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, Protocol, TypeVar

from .._paging import Collection, Page

if TYPE_CHECKING:
    from .._context import PlanContext
    from .._flows import Flow
    from .base import AsyncRunner, DeclaredPattern, SyncRunner

    # (used in the quoted base classes below, which linters do not read)
    from .collection import CollectionPattern  # noqa: F401
    from .get import GetPattern  # noqa: F401
    from .query import OneQueryPattern  # noqa: F401

E = TypeVar("E")  # what a get or one=True pattern returns (an entity or a projection)
T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
PatternT = TypeVar("PatternT")


class PagedPattern(Protocol[T]):
    """A pattern that reads pages of ``T``: a query (one Query, or a scatter's Queries) or a
    sparse-index scan (one Scan)."""

    def params(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> dict[str, Any]: ...
    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Page[T]]: ...
    def first(
        self, ctx: PlanContext, kwargs: Mapping[str, Any], max_pages: int
    ) -> Flow[T | None]: ...
    def count(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[int]: ...


class Bound(Generic[PatternT]):
    """A pattern plus the sync repository that runs it."""

    __slots__ = ("pattern", "repo")

    def __init__(self, pattern: PatternT, repo: SyncRunner) -> None:
        self.pattern: PatternT = pattern
        self.repo = repo


class AsyncBound(Generic[PatternT]):
    """A pattern plus the async repository that runs it."""

    __slots__ = ("pattern", "repo")

    def __init__(self, pattern: PatternT, repo: AsyncRunner) -> None:
        self.pattern: PatternT = pattern
        self.repo = repo


# -- get ------------------------------------------------------------------------------------


class BoundGet(Bound["GetPattern[E]"], Generic[E]):
    """A get pattern on a repository: call it with the key fields."""

    def params(self, **keys: Any) -> dict[str, Any]:
        """The exact GetItem request (no I/O)."""
        return self.pattern.params(self.repo.context, keys)

    def __call__(self, **keys: Any) -> E | None:
        """The entity, or None: exactly one GetItem."""
        return self.repo.run(self.pattern.flow(self.repo.context, keys))


class AsyncBoundGet(AsyncBound["GetPattern[E]"], Generic[E]):
    """A get pattern on an async repository: ``await repo.customer(customer_id=...)``."""

    def params(self, **keys: Any) -> dict[str, Any]:
        """The exact GetItem request (no I/O)."""
        return self.pattern.params(self.repo.context, keys)

    def __call__(self, **keys: Any) -> Coroutine[Any, Any, E | None]:
        """The entity, or None: exactly one GetItem."""
        return self.repo.run(self.pattern.flow(self.repo.context, keys))


# -- query ----------------------------------------------------------------------------------


class BoundQuery(Bound["PagedPattern[T]"], Generic[T]):
    """A query (or sparse-index scan) pattern on a repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.params(self.repo.context, kwargs)

    def __call__(self, **kwargs: Any) -> Page[T]:
        """One page: the requests explain states (one Query; ``hydrate=True``: plus one
        BatchGetItem; a scatter: one Query per value; a sparse-index scan: one Scan)."""
        return self.repo.run(self.pattern.page(self.repo.context, kwargs))

    def pages(self, **kwargs: Any) -> Iterator[Page[T]]:
        """Every page in turn, following cursors until DynamoDB reports the end."""
        while True:
            page = self(**kwargs)
            yield page
            if page.cursor is None:
                return
            kwargs = {**kwargs, "cursor": page.cursor}

    def all(self, **kwargs: Any) -> Iterator[T]:
        """Every item across every page (lazily, a page at a time)."""
        for page in self.pages(**kwargs):
            yield from page.items

    def first(self, *, max_pages: int = 10, **kwargs: Any) -> T | None:
        """The first item, paging past empty pages (filters, expired items), at most
        ``max_pages`` requests."""
        return self.repo.run(self.pattern.first(self.repo.context, kwargs, max_pages))

    def count(self, **kwargs: Any) -> int:
        """The number of matching items (``Select=COUNT``; pages until the end)."""
        return self.repo.run(self.pattern.count(self.repo.context, kwargs))


class AsyncBoundQuery(AsyncBound["PagedPattern[T]"], Generic[T]):
    """A query (or sparse-index scan) pattern on an async repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.params(self.repo.context, kwargs)

    def __call__(self, **kwargs: Any) -> Coroutine[Any, Any, Page[T]]:
        """One page: the requests explain states (one Query; ``hydrate=True``: plus one
        BatchGetItem; a scatter: one Query per value; a sparse-index scan: one Scan)."""
        return self.repo.run(self.pattern.page(self.repo.context, kwargs))

    async def pages(self, **kwargs: Any) -> AsyncIterator[Page[T]]:
        """Every page in turn, following cursors until DynamoDB reports the end."""
        while True:
            page = await self(**kwargs)
            yield page
            if page.cursor is None:
                return
            kwargs = {**kwargs, "cursor": page.cursor}

    async def all(self, **kwargs: Any) -> AsyncIterator[T]:
        """Every item across every page (lazily, a page at a time)."""
        async for page in self.pages(**kwargs):
            for item in page.items:
                yield item

    def first(self, *, max_pages: int = 10, **kwargs: Any) -> Coroutine[Any, Any, T | None]:
        """The first item, paging past empty pages, at most ``max_pages`` requests."""
        return self.repo.run(self.pattern.first(self.repo.context, kwargs, max_pages))

    def count(self, **kwargs: Any) -> Coroutine[Any, Any, int]:
        """The number of matching items (``Select=COUNT``; pages until the end)."""
        return self.repo.run(self.pattern.count(self.repo.context, kwargs))


class BoundOne(Bound["OneQueryPattern[E]"], Generic[E]):
    """A ``one=True`` query on a repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.params(self.repo.context, kwargs)

    def __call__(self, **kwargs: Any) -> E | None:
        """The one matching entity, None, or :class:`MultipleResultsError`."""
        return self.repo.run(self.pattern.one(self.repo.context, kwargs))


class AsyncBoundOne(AsyncBound["OneQueryPattern[E]"], Generic[E]):
    """A ``one=True`` query on an async repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.params(self.repo.context, kwargs)

    def __call__(self, **kwargs: Any) -> Coroutine[Any, Any, E | None]:
        """The one matching entity, None, or :class:`MultipleResultsError`."""
        return self.repo.run(self.pattern.one(self.repo.context, kwargs))


# -- collection -----------------------------------------------------------------------------


class BoundCollection(Bound["CollectionPattern"]):
    """A collection pattern on a repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.params(self.repo.context, kwargs)

    def __call__(self, **kwargs: Any) -> Collection:
        """One page of the collection: one Query (a scatter: one per value)."""
        return self.repo.run(self.pattern.page(self.repo.context, kwargs))

    def pages(self, **kwargs: Any) -> Iterator[Collection]:
        """Every page in turn, following cursors until DynamoDB reports the end."""
        while True:
            page = self(**kwargs)
            yield page
            if page.cursor is None:
                return
            kwargs = {**kwargs, "cursor": page.cursor}

    def all(self, **kwargs: Any) -> Collection:
        """The whole collection, every page merged (one Query per page)."""
        return self.repo.run(self.pattern.whole(self.repo.context, kwargs))


class AsyncBoundCollection(AsyncBound["CollectionPattern"]):
    """A collection pattern on an async repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.params(self.repo.context, kwargs)

    def __call__(self, **kwargs: Any) -> Coroutine[Any, Any, Collection]:
        """One page of the collection: one Query (a scatter: one per value)."""
        return self.repo.run(self.pattern.page(self.repo.context, kwargs))

    async def pages(self, **kwargs: Any) -> AsyncIterator[Collection]:
        """Every page in turn, following cursors until DynamoDB reports the end."""
        while True:
            page = await self(**kwargs)
            yield page
            if page.cursor is None:
                return
            kwargs = {**kwargs, "cursor": page.cursor}

    def all(self, **kwargs: Any) -> Coroutine[Any, Any, Collection]:
        """The whole collection, every page merged (one Query per page)."""
        return self.repo.run(self.pattern.whole(self.repo.context, kwargs))


# -- declared signatures --------------------------------------------------------------------


class BoundDeclared(Generic[P, R]):
    """A pattern declared as a method signature, on a repository: calls bind the signature's
    arguments to the pattern's keywords (a get or ``one=True`` pattern: the call and
    ``.params``)."""

    __slots__ = ("declared", "inner")

    def __init__(self, declared: DeclaredPattern[P, R], inner: Any) -> None:
        self.declared = declared
        self.inner = inner

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.inner(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def params(self, *args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        """The exact request (no I/O)."""
        return self.inner.params(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]


class AsyncBoundDeclared(BoundDeclared[P, R]):
    """A declared-signature pattern on an async repository: calls return coroutines."""

    __slots__ = ()

    def __call__(  # type: ignore[override]
        self, *args: P.args, **kwargs: P.kwargs
    ) -> Coroutine[Any, Any, R]:
        return self.inner(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]


class BoundDeclaredQuery(BoundDeclared[P, Page[T]], Generic[P, T]):
    """A declared-signature query on a repository: ``.pages/.all/.first/.count`` take the
    signature too."""

    __slots__ = ()

    def pages(self, *args: P.args, **kwargs: P.kwargs) -> Iterator[Page[T]]:
        return self.inner.pages(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def all(self, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        return self.inner.all(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def first(self, *args: P.args, **kwargs: P.kwargs) -> T | None:
        max_pages = kwargs.pop("max_pages", 10)  # first's own keyword, never a signature's
        return self.inner.first(max_pages=max_pages, **self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def count(self, *args: P.args, **kwargs: P.kwargs) -> int:
        return self.inner.count(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]


class AsyncBoundDeclaredQuery(AsyncBoundDeclared[P, Page[T]], Generic[P, T]):
    """A declared-signature query on an async repository: awaited calls, async iterators."""

    __slots__ = ()

    def pages(self, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[Page[T]]:
        return self.inner.pages(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def all(self, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        return self.inner.all(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def first(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, T | None]:
        max_pages = kwargs.pop("max_pages", 10)
        return self.inner.first(max_pages=max_pages, **self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def count(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, int]:
        return self.inner.count(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]


class BoundDeclaredCollection(BoundDeclared[P, Collection]):
    """A declared-signature collection on a repository."""

    __slots__ = ()

    def pages(self, *args: P.args, **kwargs: P.kwargs) -> Iterator[Collection]:
        return self.inner.pages(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def all(self, *args: P.args, **kwargs: P.kwargs) -> Collection:
        return self.inner.all(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]


class AsyncBoundDeclaredCollection(AsyncBoundDeclared[P, Collection]):
    """A declared-signature collection on an async repository."""

    __slots__ = ()

    def pages(self, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[Collection]:
        return self.inner.pages(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def all(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, Collection]:
        return self.inner.all(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]
