"""The sync repository: named access patterns and writes against one table, sent through a
boto3 client."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

from typing_extensions import Unpack

from ._entity import Entity
from ._executor import Executor
from ._flows import Call, Flow, Gather, Send, Sleep
from ._repository_base import RepositoryBase, RepositoryOptions, install_fast_path
from ._verbs import batches
from ._verbs.transactions import Transaction, open_transaction
from .errors import SingleTableError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from ._backfill.items import BackfillReport
    from ._backfill.job_items import BackfillSegment
    from ._conditions import ConditionFn
    from ._expressions import Condition

E = TypeVar("E", bound=Entity)
T = TypeVar("T")


class Repository(RepositoryBase):
    """Base class of sync repositories: ``class Shop(Repository, table=shop)`` with patterns as
    class attributes (or mixed in from a plain class). Construct with a boto3 DynamoDB client;
    construction sends nothing.

    ``client=``: a boto3 DynamoDB client of your own (its ``Config``, profile, region). The
    repository installs singletable's response fast path on it
    (:mod:`singletable.aws.fastpath`): handlers on that client's own event hooks
    (``client.meta.events``) that parse the successful responses of GetItem, Query, Scan,
    BatchGetItem, TransactGetItems, PutItem, UpdateItem, DeleteItem, BatchWriteItem and
    TransactWriteItems in one cheap pass, with output identical to botocore's. This applies to
    your other calls on that client too (``client.query(...)`` returns the same dict, parsed
    faster); nothing else changes: requests, retries, signing, error responses, other
    operations and other clients are botocore's as before. It is skipped on a botocore
    outside the verified range. Opt out with ``fast_path=False`` (then the repository leaves
    the client untouched; without ``client=``, the default client is created without it) or
    for the whole process with ``SINGLETABLE_FAST_PATH=0``."""

    __singletable_twin__: ClassVar[bool] = True

    def __init__(
        self, client: DynamoDBClient | None = None, **options: Unpack[RepositoryOptions]
    ) -> None:
        super().__init__(**options)
        fast_path = options.get("fast_path", True)
        install_fast_path(client, fast_path)
        self._executor = Executor(client, hooks=options.get("hooks", ()), fast_path=fast_path)

    @property
    def client(self) -> DynamoDBClient:
        """The boto3 client. If none was given, :func:`singletable.aws.default_client`
        creates one on first use: the default session's, with
        ``client_config(parameter_validation=False)`` and the response fast path
        (singletable's SigV4 signer with ``SINGLETABLE_SIGNING=1``). For calls of your own,
        prefer a client of your own: this one does not check parameters client-side."""
        return self._executor.client

    # -- the one send --

    def run(self, flow: Flow[T], /) -> T:
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
                    value = call(step.operation, step.params, pattern=step.pattern, fail=step.fail)
                elif step.__class__ is Sleep:
                    self.retry.pause(step.seconds)
                elif step.__class__ is Call:
                    value = step.function(*step.args)
                else:
                    value = self._gather(step)  # type: ignore[arg-type]
            except SingleTableError as exc:
                error = exc

    def _gather(self, step: Gather) -> list[dict[str, Any]]:
        """Send a Gather's requests on threads (at most ``concurrency`` at once); raise the
        first failure in request order once all have finished."""
        if not step.sends:
            return []
        call = self._executor.call
        workers = max(1, min(step.concurrency, len(step.sends)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(call, send.operation, send.params, pattern=send.pattern, fail=send.fail)
                for send in step.sends
            ]
        results = []
        for future in futures:
            error = future.exception()
            if error is not None:
                raise error
            results.append(future.result())
        return results

    # -- single-item writes --

    def create(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Store a new entity; :class:`AlreadyExists` if a live item has its key. Returns the
        entity as stored (version + 1, timestamps set)."""
        self._outside_transaction("create")
        return self.run(self.planner.create(entity, condition))  # type: ignore[no-any-return]

    def put(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Store ``entity``, replacing any item with its key (version-checked with
        ``Version()``; guards moved with ``Unique()``). Returns it as stored."""
        self._outside_transaction("put")
        return self.run(self.planner.put(entity, condition))  # type: ignore[no-any-return]

    @overload
    def update(
        self,
        target: type[E],
        /,
        *,
        condition: Condition | ConditionFn[E] | None = ...,
        **changes: Any,
    ) -> E: ...
    @overload
    def update(
        self, target: E, /, *, condition: Condition | ConditionFn[E] | None = ..., **changes: Any
    ) -> E: ...
    def update(self, target: Any, /, **changes: Any) -> Any:
        """Change an item and return it as stored.

        ``repo.update(order, status=Status.SHIPPED)`` (instance form, preferred) or
        ``repo.update(Order, customer_id=..., created_at=..., order_id=..., set={...},
        remove=[...], add={...}, delete={...}, append={...}, prepend={...}, condition=...,
        upsert=False)``, whose clauses also take document paths (``"shipping.city"``,
        ``"lines[0].qty"``). Index keys and sparse membership follow the change;
        :class:`NotFound` unless the item exists (or ``upsert=True``).
        """
        self._outside_transaction("update")
        return self.run(self.planner.update(target, changes))

    @overload
    def delete(
        self,
        target: type[E],
        /,
        *,
        condition: Condition | ConditionFn[E] | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> E | None: ...
    @overload
    def delete(
        self,
        target: E,
        /,
        *,
        condition: Condition | ConditionFn[E] | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> E | None: ...
    def delete(
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
        return self.run(self.planner.delete(target, keys, condition, must_exist))

    def move(self, entity: E, /, **changes: Any) -> E:
        """Change primary-key fields: delete the old item and create the new one in one
        transaction (unique guards re-pointed). Returns the new entity as stored."""
        self._outside_transaction("move")
        return self.run(self.planner.move(entity, changes))  # type: ignore[no-any-return]

    # -- migrations --

    def backfill(
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

        return self.run(
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

    def backfill_status(self, job: str, /) -> list[BackfillSegment]:
        """Every segment of the backfill job ``job`` (done, owner, lease, position, counts),
        read from the table; empty for an unknown job."""
        from ._backfill.jobs import job_items, job_status

        return self.run(job_status(job_items(self.planner, job), self.retry))

    def backfill_forget(self, job: str, /) -> int:
        """Delete the backfill job ``job``'s state items from the table (a later call with
        that name starts a new job); returns how many were deleted."""
        from ._backfill.jobs import forget_job, job_items

        return self.run(forget_job(job_items(self.planner, job), self.retry))

    # -- transactions --

    def transaction(self, *, token: str | None = None) -> AbstractContextManager[Transaction]:
        """``with repo.transaction() as tx:`` collects writes and sends one TransactWriteItems
        on a clean exit (nothing on an exception); nested use joins the outer transaction."""
        return open_transaction(self, token)

    def transact_get(self, refs: Iterable[Any]) -> list[Any]:
        """One TransactGetItems for ``(EntityClass, {key fields})`` pairs or ``KeyRef``s; returns
        the entities (None where missing) in input order."""
        return self.run(batches.transact_get(self.planner, refs))

    # -- batches --

    def batch_get(self, refs: Iterable[Any], *, consistent: bool = False) -> list[Any]:
        """Entities for ``(EntityClass, {key fields})`` pairs or ``KeyRef``s, in input order,
        missing ones left out, duplicates collapsed (chunks of 100, retried with backoff)."""
        return self.run(batches.batch_get(self.planner, refs, consistent))

    def batch_put(self, entities: Iterable[Any], *, unsafe: bool = False) -> list[Any]:
        """Put entities in chunks of 25, retrying unprocessed ones with backoff; returns them as
        stored. Refuses ``Version()``/``Unique()`` entities unless ``unsafe=True``."""
        return self.run(batches.batch_put(self.planner, entities, unsafe))

    def batch_delete(self, refs: Iterable[Any], *, unsafe: bool = False) -> None:
        """Delete ``(EntityClass, {key fields})`` pairs, ``KeyRef``s or entities in chunks of 25,
        retrying unprocessed ones with backoff."""
        self.run(batches.batch_delete(self.planner, refs, unsafe))
