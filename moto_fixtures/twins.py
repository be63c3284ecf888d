"""One test source for both repository twins.

A backend test that builds its repositories through the ``make_repo`` fixtures runs twice per
HTTP backend: once on the sync :class:`~singletable.Repository` and once on the
:class:`~singletable.aio.AsyncRepository` twin of the same class (test ids ``[moto_server-sync]``,
``[moto_server-async]``). The async run goes through :class:`BlockingRepository`, which awaits
every verb on an event loop of the test's own, so the test body stays the same:

* :func:`async_twin_of` derives the async class from the sync one (same pattern objects, same
  ``@transaction`` methods, same table);
* :class:`BlockingRepository` turns each awaited call into a plain one, async iterators into
  iterators and ``async with repo.transaction()`` into ``with``; its ``client`` is the test's
  boto3 client, for looking at the table;
* :class:`EventTee` makes what a test registers on its boto3 client's events (the request
  recorder, fault injectors) apply to the async twin's aiobotocore client as well, so request
  counts and injected faults mean the same on both twins.

moto's in-process mock does not serve aiohttp, so the async twin runs on ``moto_server`` and
``endpoint`` (and on dynalite for tests that name both twins: see ``plugin.ONCE_PER_BACKEND``).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from singletable import Repository

    from .backends import Backend

TWINS = ("sync", "async")


def async_unavailable() -> str | None:
    """Why the async twin cannot run here, or None."""
    if sys.version_info < (3, 11):
        return "the async twin's test loop needs Python 3.11 (tasks in one shared context)"
    if importlib.util.find_spec("aiobotocore") is None:
        return 'aiobotocore is not installed: pip install -e ".[dev]"'
    return None


_twins: dict[type, type] = {}


def async_twin_of(repo_cls: type[Repository]) -> type[Any]:
    """The :class:`AsyncRepository` class with ``repo_cls``'s patterns and transaction
    methods on ``repo_cls``'s table (built once per class). Plain methods of ``repo_cls``
    (an application's own helpers, sync code) are not part of it: see
    :class:`BlockingRepository`."""
    twin = _twins.get(repo_cls)
    if twin is not None:
        return twin
    from singletable._patterns.base import DeclaredPattern, Pattern
    from singletable._repository_base import RepositoryBase
    from singletable._verbs.transactions import TransactionMethod
    from singletable.aio import AsyncRepository

    namespace: dict[str, Any] = {}
    for klass in reversed(repo_cls.__mro__):
        if (
            klass is object
            or issubclass(RepositoryBase, klass)
            or "__singletable_twin__" in vars(klass)
        ):
            continue
        for name, value in vars(klass).items():
            if isinstance(value, (Pattern, DeclaredPattern, TransactionMethod)):
                namespace[name] = value
    namespace["__module__"] = repo_cls.__module__
    namespace["__qualname__"] = f"Async{repo_cls.__qualname__}"
    twin = type(f"Async{repo_cls.__name__}", (AsyncRepository,), namespace, table=repo_cls.table)
    _twins[repo_cls] = twin
    return twin


# -- the events of the test's boto3 client, applied to the async client too ------------------


class EventTee:
    """Wraps a boto3 client's event emitter: registrations (and unregistrations) also go to
    every emitter added with :meth:`add`, including those made before it was added."""

    _REGISTERING = ("register", "register_first", "register_last", "unregister")

    def __init__(self, original: Any) -> None:
        self._original = original
        self._others: list[Any] = []
        self._log: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    @classmethod
    def install(cls, client: Any) -> EventTee:
        """The tee on ``client`` (installed on first use)."""
        events = client.meta.events
        if isinstance(events, EventTee):
            return events
        tee = cls(events)
        client.meta.events = tee
        return tee

    def add(self, emitter: Any) -> None:
        for how, args, kwargs in self._log:
            getattr(emitter, how)(*args, **kwargs)
        self._others.append(emitter)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._original, name)
        if name not in self._REGISTERING:
            return attribute

        @functools.wraps(attribute)
        def both(*args: Any, **kwargs: Any) -> Any:
            self._log.append((name, args, kwargs))
            for other in self._others:
                getattr(other, name)(*args, **kwargs)
            return attribute(*args, **kwargs)

        return both


# -- a blocking view of an async repository --------------------------------------------------


class Loop:
    """An event loop driven from the test's thread, every task in one context (so the open
    transaction a ``with repo.transaction()`` sets is seen by the calls inside it)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.context = contextvars.copy_context()

    def run(self, awaitable: Any) -> Any:
        async def wrapped() -> Any:
            return await awaitable

        task = self.loop.create_task(wrapped(), context=self.context)
        return self.loop.run_until_complete(task)

    def iterate(self, iterator: Any) -> Iterator[Any]:
        while True:
            try:
                yield self.run(iterator.__anext__())
            except StopAsyncIteration:
                return

    def close(self) -> None:
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


class _Blocking:
    """A blocking view of an object whose methods return awaitables or async iterators."""

    def __init__(self, target: Any, loop: Loop) -> None:
        self._target = target
        self._loop = loop

    def _wrap(self, value: Any) -> Any:
        if inspect.isawaitable(value):
            return self._loop.run(value)
        if inspect.isasyncgen(value) or hasattr(value, "__anext__"):
            return self._loop.iterate(value)
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if asyncio._get_running_loop() is not None:  # called from inside a running task
            return self._target(*args, **kwargs)
        # In the loop's context: a transaction method looks for the open transaction there.
        return self._wrap(self._loop.context.run(self._target, *args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if callable(value) and not isinstance(value, type):
            return _Blocking(value, self._loop)
        return value


class BlockingRepository(_Blocking):
    """An :class:`AsyncRepository` seen as a sync one, for tests written once for both.

    Patterns, verbs and transaction methods are the async twin's, awaited. A plain method of
    the sync class (an application's own helper such as ``checkout`` or ``seed`` code calling
    it: sync code by nature, which an application would write again with ``await``) runs on
    ``companion``, the sync repository of the same class on the same table.
    """

    def __init__(self, target: Any, loop: Loop, client: Any, companion: Any) -> None:
        super().__init__(target, loop)
        self.client = client  # the test's boto3 client: raw reads of the table
        self.async_repository = target
        self.companion = companion

    @contextmanager
    def transaction(self, *, token: str | None = None) -> Iterator[Any]:
        manager = self._target.transaction(token=token)
        tx = self._loop.run(manager.__aenter__())
        try:
            yield tx
        except BaseException as error:
            if not self._loop.run(manager.__aexit__(type(error), error, error.__traceback__)):
                raise
        else:
            self._loop.run(manager.__aexit__(None, None, None))

    def __getattr__(self, name: str) -> Any:
        if name in ("explain", "patterns") or name in vars(self._target):
            return getattr(self._target, name)  # class methods, and plain attributes (clock)
        if not hasattr(self._target, name):
            return getattr(self.companion, name)  # the application's own sync helpers
        return super().__getattr__(name)

    def __repr__(self) -> str:
        return f"<blocking {self._target!r}>"


def async_client_options(backend: Backend) -> dict[str, Any]:
    """``create_client`` keywords for an aiobotocore client on ``backend`` (like
    :meth:`Backend.client`'s boto3 client: region, credentials, retries, timeouts)."""
    import os

    from aiobotocore.config import AioConfig

    from .backends import DEFAULT_REGION, DUMMY_CREDENTIALS

    options: dict[str, Any] = {"region_name": DEFAULT_REGION, "endpoint_url": backend.endpoint_url}
    if backend.name == "endpoint":
        options["region_name"] = (
            os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION
        )
        config = AioConfig(
            retries={"total_max_attempts": 3, "mode": "standard"},
            connect_timeout=5,
            read_timeout=30,
        )
    else:
        options.update(DUMMY_CREDENTIALS)
        config = AioConfig(
            retries={"total_max_attempts": 2, "mode": "standard"},
            connect_timeout=5,
            read_timeout=5,
        )
    options["config"] = config
    return options


class AsyncClients:
    """The aiobotocore clients a test opened (closed at teardown), on one :class:`Loop`."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.loop = Loop()
        self._managers: list[Any] = []

    def open(self) -> Any:
        from aiobotocore.session import get_session

        manager = get_session().create_client("dynamodb", **async_client_options(self.backend))
        client = self.loop.run(manager.__aenter__())
        self._managers.append(manager)
        return client

    def close(self) -> None:
        for manager in reversed(self._managers):
            self.loop.run(manager.__aexit__(None, None, None))
        self._managers.clear()
        self.loop.close()


def twin_repository(
    twin: str,
    repo_cls: type[Repository],
    client: Any,
    clients: Callable[[], AsyncClients],
    **options: Any,
) -> Any:
    """``repo_cls(client=client, **options)`` on the sync twin; on the async twin, its
    :func:`async_twin_of` class on a new aiobotocore client for the same backend, seen through
    :class:`BlockingRepository` (what the test registers on ``client``'s events applies to it
    too; options only ``repo_cls`` takes go to the sync companion)."""
    if twin == "sync":
        return repo_cls(client=client, **options)
    companion = repo_cls(client=client, **options)
    twin_cls = async_twin_of(repo_cls)
    from singletable._repository_base import RepositoryOptions

    accepted = {
        *inspect.signature(twin_cls.__init__).parameters,
        *RepositoryOptions.__annotations__,
    }
    pool = clients()
    tee = EventTee.install(client)
    aio_client = pool.open()
    tee.add(aio_client.meta.events)
    repo = twin_cls(client=aio_client, **{k: v for k, v in options.items() if k in accepted})
    return BlockingRepository(repo, pool.loop, client, companion)
