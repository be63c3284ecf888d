"""The async twin: the same patterns, writes and transactions, awaited, through an
aiobotocore client (extra ``singletable[async]``).

```python
class AsyncShop(ShopPatterns, AsyncRepository, table=shop): ...

async with AsyncShop.connect() as repo:
    customer = await repo.customer(customer_id="42")
```

Both twins run the same plans (:mod:`singletable._flows`): requests are byte-identical
(``.params()`` is equal), and errors, cursors, hooks and the retry policy are shared
(``asyncio.sleep`` replaces ``time.sleep``).
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

from typing_extensions import Self

from ._entity import Entity
from ._executor import AsyncExecutor, Hook, RetryPolicy
from ._flows import Flow, Gather, Send, Sleep
from ._repository_base import RepositoryBase, install_fast_path
from ._verbs import batches
from ._verbs.transactions import Transaction, open_async_transaction
from .errors import SingleTableError

if TYPE_CHECKING:
    from ._backfill.items import BackfillReport
    from ._conditions import ConditionFn
    from ._expressions import Condition

E = TypeVar("E", bound=Entity)
T = TypeVar("T")

ENDPOINT_ENV = "AWS_ENDPOINT_URL_DYNAMODB"


class AsyncRepository(RepositoryBase):
    """Base class of async repositories: ``class AsyncShop(AsyncRepository, table=shop)``.

    Construct with an aiobotocore DynamoDB client (``client=``), or open one with
    ``async with AsyncShop.connect() as repo:``. Every verb is awaited; ``.params()`` stays
    synchronous.

    The response fast path is installed on the client (given or opened by :meth:`connect`)
    as on the sync twin (see :class:`singletable._repository.Repository`): it parses the
    successful responses of the DynamoDB data-plane operations, also for your other calls on
    that client, with identical output. ``fast_path=False`` opts out.
    """

    __singletable_twin__: ClassVar[bool] = True
    __singletable_async__: ClassVar[bool] = True

    def __init__(
        self,
        client: Any = None,
        *,
        table_name: str | None = None,
        cursor_secret: str | bytes | Sequence[str | bytes] | None = None,
        default_limit: int = 100,
        clock: Callable[[], datetime] | None = None,
        retry: RetryPolicy | None = None,
        hooks: Sequence[Hook] = (),
        capacity: str | None = None,
        fast_path: bool = True,
    ) -> None:
        super().__init__(
            table_name=table_name,
            cursor_secret=cursor_secret,
            default_limit=default_limit,
            clock=clock,
            retry=retry,
            hooks=hooks,
            capacity=capacity,
        )
        install_fast_path(client, fast_path)
        self._executor = AsyncExecutor(client, hooks=hooks)

    @property
    def client(self) -> Any:
        """The aiobotocore client."""
        return self._executor.client

    @classmethod
    def connect(
        cls,
        *,
        table_name: str | None = None,
        cursor_secret: str | bytes | Sequence[str | bytes] | None = None,
        default_limit: int = 100,
        clock: Callable[[], datetime] | None = None,
        retry: RetryPolicy | None = None,
        hooks: Sequence[Hook] = (),
        capacity: str | None = None,
        fast_path: bool = True,
        **client_kwargs: Any,
    ) -> AbstractAsyncContextManager[Self]:
        """``async with AsyncShop.connect() as repo:`` creates the default aiobotocore client
        (``client_config(parameter_validation=False)`` and the response fast path, unless
        ``fast_path=False``; ``AWS_ENDPOINT_URL_DYNAMODB`` honoured), yields a repository on
        it and closes the client on exit. The repository's own keywords (``table_name=``,
        ``cursor_secret=``, ``fast_path=``, ...) configure the repository; the others go to
        aiobotocore's ``create_client`` (``region_name=``, ``endpoint_url=``, ``config=``,
        credentials)."""
        options = {
            "table_name": table_name,
            "cursor_secret": cursor_secret,
            "default_limit": default_limit,
            "clock": clock,
            "retry": retry,
            "hooks": hooks,
            "capacity": capacity,
            "fast_path": fast_path,
        }
        return _connect(cls, options, client_kwargs)

    # -- the one send --

    async def run(self, flow: Flow[T], /) -> T:
        """Run a plan: send each request it yields through the client and feed the response
        back (a failed request is thrown into it as the mapped error); return its result."""
        call = self._executor.call
        value: Any = None
        error: SingleTableError | None = None
        while True:
            try:
                step = flow.send(value) if error is None else flow.throw(error)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            value = error = None
            try:
                if step.__class__ is Send:
                    value = await call(step.operation, step.params, pattern=step.pattern)
                elif step.__class__ is Sleep:
                    await self._sleep(step.seconds)
                else:
                    value = await self._gather(step)  # type: ignore[arg-type]
            except SingleTableError as exc:
                error = exc

    async def _sleep(self, seconds: float) -> None:
        sleep = self.retry.sleep
        if sleep is None:
            await asyncio.sleep(seconds)
            return
        waited = sleep(seconds)  # a policy's own sleep may be sync or async
        if inspect.isawaitable(waited):
            await waited

    async def _gather(self, step: Gather) -> list[dict[str, Any]]:
        """Send a Gather's requests at once (at most ``concurrency`` in flight); raise the
        first failure in request order once all have finished."""
        limit = asyncio.Semaphore(max(1, step.concurrency))
        call = self._executor.call

        async def one(send: Send) -> dict[str, Any]:
            async with limit:
                return await call(send.operation, send.params, pattern=send.pattern)

        outcomes = await asyncio.gather(*(one(s) for s in step.sends), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return outcomes  # type: ignore[return-value]

    # -- single-item writes --

    async def create(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Store a new entity; :class:`AlreadyExists` if a live item has its key."""
        self._outside_transaction("create")
        return await self.run(self.planner.create(entity, condition))

    async def put(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Store ``entity``, replacing any item with its key; returns it as stored."""
        self._outside_transaction("put")
        return await self.run(self.planner.put(entity, condition))

    @overload
    async def update(
        self,
        target: type[E],
        /,
        *,
        condition: Condition | ConditionFn[E] | None = ...,
        **changes: Any,
    ) -> E: ...
    @overload
    async def update(
        self, target: E, /, *, condition: Condition | ConditionFn[E] | None = ..., **changes: Any
    ) -> E: ...
    async def update(self, target: Any, /, **changes: Any) -> Any:
        """Change an item and return it as stored (the arguments of ``Repository.update``)."""
        self._outside_transaction("update")
        return await self.run(self.planner.update(target, changes))

    @overload
    async def delete(
        self,
        target: type[E],
        /,
        *,
        condition: Condition | ConditionFn[E] | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> E | None: ...
    @overload
    async def delete(
        self,
        target: E,
        /,
        *,
        condition: Condition | ConditionFn[E] | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> E | None: ...
    async def delete(
        self,
        target: Any,
        /,
        *,
        condition: Condition | ConditionFn[Any] | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> Any:
        """Delete an item and return the old entity, or None (``Repository.delete``)."""
        self._outside_transaction("delete")
        return await self.run(self.planner.delete(target, keys, condition, must_exist))

    async def move(self, entity: E, /, **changes: Any) -> E:
        """Change primary-key fields in one transaction; returns the new entity as stored."""
        self._outside_transaction("move")
        return await self.run(self.planner.move(entity, changes))

    # -- migrations --

    async def backfill(
        self,
        entity: type[Entity],
        /,
        *,
        segments: int = 1,
        dry_run: bool = False,
        checkpoint: str | os.PathLike[str] | None = None,
        progress: bool | Callable[[BackfillReport], Any] = False,
        max_items_per_second: float | None = None,
        move: bool = False,
    ) -> BackfillReport:
        """Rewrite ``entity``'s stored items whose derived attributes are stale (index keys,
        sparse membership, ``Shard`` fields, TTL, type tag): a parallel Scan over ``segments``,
        each fix conditioned on the item being unchanged since read. Resumable with
        ``checkpoint=``; ``dry_run=True`` sends no write. See :mod:`singletable._backfill.flow`."""
        from ._backfill.flow import backfill

        return await self.run(
            backfill(
                self.planner,
                entity,
                segments=segments,
                dry_run=dry_run,
                checkpoint=checkpoint,
                progress=progress,
                max_items_per_second=max_items_per_second,
                move=move,
            )
        )

    # -- transactions --

    def transaction(self, *, token: str | None = None) -> AbstractAsyncContextManager[Transaction]:
        """``async with repo.transaction() as tx:`` sends one TransactWriteItems on a clean
        exit (nothing on an exception); nested use joins the outer transaction."""
        return open_async_transaction(self, token)

    async def transact_get(self, refs: Iterable[Any]) -> list[Any]:
        """One TransactGetItems; the entities (None where missing) in input order."""
        return await self.run(batches.transact_get(self.planner, refs))

    # -- batches --

    async def batch_get(self, refs: Iterable[Any], *, consistent: bool = False) -> list[Any]:
        """Entities in input order, missing ones left out (chunks of 100, retried)."""
        return await self.run(batches.batch_get(self.planner, refs, consistent))

    async def batch_put(self, entities: Iterable[Any], *, unsafe: bool = False) -> list[Any]:
        """Put entities in chunks of 25 (retried); returns them as stored."""
        return await self.run(batches.batch_put(self.planner, entities, unsafe))

    async def batch_delete(self, refs: Iterable[Any], *, unsafe: bool = False) -> None:
        """Delete items in chunks of 25 (retried)."""
        await self.run(batches.batch_delete(self.planner, refs, unsafe))


RepoT = TypeVar("RepoT", bound=AsyncRepository)


@asynccontextmanager
async def _connect(
    cls: type[RepoT], options: dict[str, Any], client_kwargs: dict[str, Any]
) -> AsyncIterator[RepoT]:
    try:
        from aiobotocore.session import get_session
    except ImportError:  # pragma: no cover - depends on the installed extras
        from .errors import InvalidRequestError

        raise InvalidRequestError(
            'the async twin needs aiobotocore: pip install "singletable[async]"'
        ) from None
    from .aws._client import client_config

    kwargs = dict(client_kwargs)
    kwargs.setdefault("config", client_config(parameter_validation=False))
    if kwargs.get("endpoint_url") is None and os.environ.get(ENDPOINT_ENV):
        kwargs["endpoint_url"] = os.environ[ENDPOINT_ENV]
    async with get_session().create_client("dynamodb", **kwargs) as client:
        yield cls(client=client, **options)
