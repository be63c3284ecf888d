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
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, overload

from typing_extensions import Self, Unpack

from ._entity import Entity
from ._executor import AsyncExecutor
from ._flows import Call, Flow, Gather, Send, Sleep
from ._repository_base import RepositoryBase, RepositoryOptions, install_fast_path
from ._verbs import batches
from ._verbs.transactions import Transaction, open_async_transaction
from .errors import SingleTableError

if TYPE_CHECKING:
    from ._backfill.items import BackfillReport
    from ._backfill.job_items import BackfillSegment
    from ._conditions import ConditionFn
    from ._expressions import Condition

E = TypeVar("E", bound=Entity)
T = TypeVar("T")

ENDPOINT_ENV = "AWS_ENDPOINT_URL_DYNAMODB"


class ConnectOptions(RepositoryOptions, total=False):
    """:meth:`AsyncRepository.connect`'s keywords: the repository's options, then the keywords
    of aiobotocore's ``create_client`` that it passes on."""

    region_name: str | None
    endpoint_url: str | None
    config: Any
    aws_access_key_id: str | None
    aws_secret_access_key: str | None
    aws_session_token: str | None
    verify: bool | str | None
    use_ssl: bool
    api_version: str | None
    transport: Literal["botocore", "direct"] | None


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

    def __init__(self, client: Any = None, **options: Unpack[RepositoryOptions]) -> None:
        super().__init__(**options)
        install_fast_path(client, options.get("fast_path", True))
        self._executor = AsyncExecutor(client, hooks=options.get("hooks", ()))

    @property
    def client(self) -> Any:
        """The aiobotocore client."""
        return self._executor.client

    @classmethod
    def connect(cls, **options: Unpack[ConnectOptions]) -> AbstractAsyncContextManager[Self]:
        """``async with AsyncShop.connect() as repo:`` creates the default aiobotocore client
        (``client_config(parameter_validation=False)`` and the response fast path, unless
        ``fast_path=False``; ``AWS_ENDPOINT_URL_DYNAMODB`` honoured), yields a repository on
        it and closes the client on exit. The repository's own keywords
        (:class:`RepositoryOptions`: ``table_name=``, ``cursor_secret=``, ``fast_path=``, ...)
        configure the repository; the others go to aiobotocore's ``create_client``
        (``region_name=``, ``endpoint_url=``, ``config=``, credentials).
        ``transport="direct"`` sends the repository's requests through the direct transport
        (aiohttp, see :func:`singletable.aws.client_config`); unset, it follows
        ``SINGLETABLE_TRANSPORT``, else botocore's pipeline, whose HTTP exchange is
        singletable's (``SINGLETABLE_EXCHANGE=0`` gives it back to aiohttp; see
        :mod:`singletable.aws.exchange`)."""
        names = RepositoryOptions.__annotations__.keys()
        transport = options.pop("transport", None)
        repository = {k: v for k, v in options.items() if k in names}
        client_kwargs = {k: v for k, v in options.items() if k not in names}
        return _connect(cls, repository, client_kwargs, transport)

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
                    value = await call(
                        step.operation, step.params, pattern=step.pattern, fail=step.fail
                    )
                elif step.__class__ is Sleep:
                    await self._sleep(step.seconds)
                elif step.__class__ is Call:
                    value = await asyncio.to_thread(step.function, *step.args)
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
                return await call(send.operation, send.params, pattern=send.pattern, fail=send.fail)

        outcomes = await asyncio.gather(*(one(s) for s in step.sends), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return outcomes  # type: ignore[return-value]

    # -- single-item writes --

    async def create(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Store a new entity; :class:`AlreadyExists` if a live item has its key. Returns the
        entity as stored (version + 1, timestamps set)."""
        self._outside_transaction("create")
        return await self.run(self.planner.create(entity, condition))

    async def put(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Store ``entity``, replacing any item with its key (version-checked with
        ``Version()``; guards moved with ``Unique()``). Returns it as stored."""
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
        """Change an item and return it as stored.

        ``repo.update(order, status=Status.SHIPPED)`` (instance form, preferred) or
        ``repo.update(Order, customer_id=..., created_at=..., order_id=..., set={...},
        remove=[...], add={...}, delete={...}, append={...}, condition=..., upsert=False)``.
        Index keys and sparse membership follow the change; :class:`NotFound` unless the item
        exists (or ``upsert=True``).
        """
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
        """Delete an item (``repo.delete(order)`` or ``repo.delete(Order, **key_fields)``) and
        return the old entity, or None if there was none (``must_exist=True``:
        :class:`NotFound`). Unique guards go in the same transaction.

        By key, an entity with ``Unique()`` fields is read first; if the item changes between
        that read and the delete (created, deleted, a unique value or the version changed), the
        delete fails on its condition, reads again and retries (up to 3 attempts), so it
        deletes what is there when it lands, guards included, like a delete without guards.
        """
        self._outside_transaction("delete")
        return await self.run(self.planner.delete(target, keys, condition, must_exist))

    async def move(self, entity: E, /, **changes: Any) -> E:
        """Change primary-key fields: delete the old item and create the new one in one
        transaction (unique guards re-pointed). Returns the new entity as stored."""
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
        job: str | None = None,
        lease_seconds: float = 60,
        progress: bool | Callable[[BackfillReport], Any] = False,
        max_items_per_second: float | None = None,
        move: bool = False,
    ) -> BackfillReport:
        """Rewrite ``entity``'s stored items whose derived attributes are stale (index keys,
        sparse membership, ``Shard`` fields, TTL, type tag): a parallel Scan over ``segments``,
        each fix conditioned on the item being unchanged since read. Resumable with
        ``checkpoint=`` (a file, one machine) or ``job=`` (state in the table: run the same
        call on any number of workers; each leases one segment at a time for
        ``lease_seconds``); ``dry_run=True`` sends no write. See
        :mod:`singletable._backfill.flow`."""
        from ._backfill.flow import backfill

        return await self.run(
            backfill(
                self.planner,
                entity,
                self._backfill_io(),
                segments=segments,
                dry_run=dry_run,
                checkpoint=checkpoint,
                job=job,
                lease_seconds=lease_seconds,
                progress=progress,
                max_items_per_second=max_items_per_second,
                move=move,
            )
        )

    async def backfill_status(self, job: str, /) -> list[BackfillSegment]:
        """Every segment of the backfill job ``job`` (done, owner, lease, position, counts),
        read from the table; empty for an unknown job."""
        from ._backfill.jobs import job_items, job_status

        return await self.run(job_status(job_items(self.planner, job), self.retry))

    async def backfill_forget(self, job: str, /) -> int:
        """Delete the backfill job ``job``'s state items from the table (a later call with
        that name starts a new job); returns how many were deleted."""
        from ._backfill.jobs import forget_job, job_items

        return await self.run(forget_job(job_items(self.planner, job), self.retry))

    # -- transactions --

    def transaction(self, *, token: str | None = None) -> AbstractAsyncContextManager[Transaction]:
        """``async with repo.transaction() as tx:`` collects writes and sends one
        TransactWriteItems on a clean exit (nothing on an exception); nested use joins the outer
        transaction."""
        return open_async_transaction(self, token)

    async def transact_get(self, refs: Iterable[Any]) -> list[Any]:
        """One TransactGetItems for ``(EntityClass, {key fields})`` pairs or ``KeyRef``s; returns
        the entities (None where missing) in input order."""
        return await self.run(batches.transact_get(self.planner, refs))

    # -- batches --

    async def batch_get(self, refs: Iterable[Any], *, consistent: bool = False) -> list[Any]:
        """Entities for ``(EntityClass, {key fields})`` pairs or ``KeyRef``s, in input order,
        missing ones left out, duplicates collapsed (chunks of 100, retried with backoff)."""
        return await self.run(batches.batch_get(self.planner, refs, consistent))

    async def batch_put(self, entities: Iterable[Any], *, unsafe: bool = False) -> list[Any]:
        """Put entities in chunks of 25, retrying unprocessed ones with backoff; returns them as
        stored. Refuses ``Version()``/``Unique()`` entities unless ``unsafe=True``."""
        return await self.run(batches.batch_put(self.planner, entities, unsafe))

    async def batch_delete(self, refs: Iterable[Any], *, unsafe: bool = False) -> None:
        """Delete ``(EntityClass, {key fields})`` pairs, ``KeyRef``s or entities in chunks of 25,
        retrying unprocessed ones with backoff."""
        await self.run(batches.batch_delete(self.planner, refs, unsafe))


RepoT = TypeVar("RepoT", bound=AsyncRepository)


@asynccontextmanager
async def _connect(
    cls: type[RepoT],
    options: dict[str, Any],
    client_kwargs: dict[str, Any],
    transport: str | None = None,
) -> AsyncIterator[RepoT]:
    try:
        from aiobotocore.session import get_session
    except ImportError:  # pragma: no cover - depends on the installed extras
        from .errors import InvalidRequestError

        raise InvalidRequestError(
            'the async twin needs aiobotocore: pip install "singletable[async]"'
        ) from None
    from .aws import exchange
    from .aws._client import client_config, wants_direct

    kwargs = dict(client_kwargs)
    kwargs.setdefault("config", client_config(parameter_validation=False))
    direct = transport == "direct" if transport is not None else wants_direct(kwargs["config"])
    kwargs["config"] = exchange.aio_config(kwargs["config"])
    if kwargs.get("endpoint_url") is None and os.environ.get(ENDPOINT_ENV):
        kwargs["endpoint_url"] = os.environ[ENDPOINT_ENV]
    async with get_session().create_client("dynamodb", **kwargs) as client:
        if direct:
            from .aws import _direct_install

            _direct_install.install(client)
        yield cls(client=client, **options)
