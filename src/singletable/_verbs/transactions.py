"""Named multi-item writes: one ``TransactWriteItems`` per transaction, checked before sending.

``@transaction`` makes a method (on a repository, or on a plain class mixed into the sync and
the async repository) a transaction: it receives ``tx`` and fills it; calling it sends exactly
one request, or joins the transaction already open in this context. ``repo.transaction()``
is the same as a context manager (``async with`` on the async twin).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from typing_extensions import Self

from .._flows import AsyncRunner, Flow, Started, SyncRunner, is_async
from ..errors import InvalidRequestError
from .commit import CancellationReason, commit, transaction_request
from .ops import WriteOp

if TYPE_CHECKING:
    from .._conditions import ConditionFn
    from .._expressions import Condition
    from .planner import WritePlanner

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E")

__all__ = ["CancellationReason", "Transaction", "transaction"]


class Transaction:
    """Operations collected for one ``TransactWriteItems``.

    Filling is pure: each call checks its arguments and builds its operation at once (errors
    surface at the line that made them). An operation that must read the item first (a put
    or update that moves ``Unique()`` guards, a delete by key of an entity with guards) reads
    when the transaction is sent; the operations keep the order of the calls.
    """

    def __init__(self, planner: WritePlanner, token: str | None = None) -> None:
        self.planner = planner
        self.token = token
        self._entries: list[WriteOp | Started[Any]] = []

    # -- filling --

    def _add(self, op: WriteOp) -> None:
        self._entries.append(op)

    def _add_started(self, flow: Flow[Any]) -> Started[Any]:
        started = Started(flow)
        self._entries.append(started.value if started.ready else started)  # type: ignore[arg-type]
        return started

    def put(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Overwrite ``entity`` (version-checked); returns it as it will be stored."""
        entity = self.planner.drawn(entity)  # once: the op and the returned entity agree
        started = self._add_started(self.planner.put_op(entity, condition))
        if started.ready:
            return started.value.result  # type: ignore[no-any-return,union-attr]
        return self.planner.stored_form(entity)  # type: ignore[no-any-return]

    def create(self, entity: E, *, condition: Condition | ConditionFn[E] | None = None) -> E:
        """Create ``entity`` (fails the transaction if it exists); returns it as stored."""
        op = self.planner.create_op(entity, condition)
        self._add(op)
        return op.result  # type: ignore[no-any-return]

    @overload
    def update(
        self,
        target: type[E],
        /,
        *,
        condition: Condition | ConditionFn[E] | None = ...,
        **changes: Any,
    ) -> None: ...
    @overload
    def update(
        self, target: E, /, *, condition: Condition | ConditionFn[E] | None = ..., **changes: Any
    ) -> None: ...
    def update(self, target: Any, /, **changes: Any) -> None:
        """Same arguments as ``Repository.update`` (instance or class + key fields)."""
        self._add_started(_first(self.planner.update_op(target, changes)))

    @overload
    def delete(
        self,
        target: type[E],
        /,
        *,
        condition: Condition | ConditionFn[E] | None = ...,
        must_exist: bool = ...,
        **keys: Any,
    ) -> None: ...
    @overload
    def delete(
        self,
        target: E,
        /,
        *,
        condition: Condition | ConditionFn[E] | None = ...,
        must_exist: bool = ...,
        **keys: Any,
    ) -> None: ...
    def delete(
        self,
        target: Any,
        /,
        *,
        condition: Condition | ConditionFn[Any] | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> None:
        """Same arguments as ``Repository.delete``."""
        self._add_started(_first(self.planner.delete_op(target, keys, condition, must_exist)))

    @overload
    def condition_check(
        self, target: type[E], /, *, condition: Condition | ConditionFn[E], **keys: Any
    ) -> None: ...
    @overload
    def condition_check(
        self, target: E, /, *, condition: Condition | ConditionFn[E], **keys: Any
    ) -> None: ...
    def condition_check(
        self, target: Any, /, *, condition: Condition | ConditionFn[Any], **keys: Any
    ) -> None:
        """Fail the transaction unless ``condition`` holds on the item."""
        self._add(self.planner.condition_check_op(target, keys, condition))

    # -- sending --

    @property
    def ops(self) -> list[WriteOp]:
        """The operations in request order (guard items after their entity's operation);
        :class:`InvalidRequestError` while one still waits for its read."""
        ops: list[WriteOp] = []
        for entry in self._entries:
            if isinstance(entry, Started):
                raise InvalidRequestError(
                    "the transaction holds an operation that reads the item first (Unique() "
                    "guards); its request is known once the transaction is sent"
                )
            ops.append(entry)
            ops.extend(entry.guards)
        return ops

    def request(self) -> dict[str, Any]:
        """The exact TransactWriteItems request (checked; no I/O)."""
        planner = self.planner
        return transaction_request(self.ops, planner.table, planner.context, self.token)

    def commit(self, *, pattern: str | None = None) -> Flow[None]:
        """Read what the operations need, then send them as one transaction."""
        for index, entry in enumerate(self._entries):
            if isinstance(entry, Started):
                self._entries[index] = yield from entry.rest()
        planner = self.planner
        yield from commit(
            self.ops, planner.table, planner.context, token=self.token, pattern=pattern
        )


def _first(flow: Flow[tuple[WriteOp, Any]]) -> Flow[WriteOp]:
    """The op of a flow returning ``(op, extra)``, without the single-write-only
    ``ReturnValues`` (a transaction returns no item)."""
    op, _ = yield from flow
    op.params.pop("ReturnValues", None)
    return op


# -- the transaction open in this context --------------------------------------------------

# Open transactions per context (thread, asyncio task), keyed by repository instance: a web
# server's concurrent requests sharing one repository never see each other's transaction.
_OPEN: ContextVar[tuple[tuple[int, Transaction], ...]] = ContextVar(
    "singletable_open_transactions", default=()
)


class Planned(Protocol):
    """A repository as transactions use it: its planner."""

    @property
    def planner(self) -> WritePlanner: ...


class SyncRepo(Planned, SyncRunner, Protocol): ...


class AsyncRepo(Planned, AsyncRunner, Protocol): ...


def current_transaction(repo: object) -> Transaction | None:
    """The transaction open on ``repo`` in this context, if any."""
    for owner, tx in _OPEN.get():
        if owner == id(repo):
            return tx
    return None


@contextmanager
def _opened(repo: Planned, token: str | None) -> Generator[Transaction, None, None]:
    tx = Transaction(repo.planner, token)
    reset = _OPEN.set((*_OPEN.get(), (id(repo), tx)))
    try:
        yield tx
    finally:
        _OPEN.reset(reset)


@contextmanager
def open_transaction(repo: SyncRepo, token: str | None = None) -> Iterator[Transaction]:
    """Join the repository's current transaction or start one that sends on a clean exit."""
    current = current_transaction(repo)
    if current is not None:
        yield current
        return
    with _opened(repo, token) as tx:
        yield tx
    repo.run(tx.commit())


@asynccontextmanager
async def open_async_transaction(
    repo: AsyncRepo, token: str | None = None
) -> AsyncIterator[Transaction]:
    """The async twin of :func:`open_transaction`: sends (awaited) on a clean exit."""
    current = current_transaction(repo)
    if current is not None:
        yield current
        return
    with _opened(repo, token) as tx:
        yield tx
    await repo.run(tx.commit())


# Set while a transaction method's body runs: a transaction method it calls joins and returns
# its result directly (the body is plain code, on either twin).
_IN_BODY: ContextVar[bool] = ContextVar("singletable_in_transaction_body", default=False)


class _Joined:
    """What an async transaction method returns when it joined an open transaction: its
    result, awaitable (the operations went into the open transaction at the call)."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result

    def __await__(self) -> Generator[Any, None, Any]:
        return self.result
        yield  # pragma: no cover - makes __await__ a generator


class TransactionMethod(Generic[P, R]):
    """A method decorated with ``@transaction``: on a repository (or a mixin), calling it
    sends one TransactWriteItems, or joins the transaction already open in this context."""

    def __init__(
        self, fn: Callable[Concatenate[Any, Transaction, P], R], token: Callable[..., str] | None
    ) -> None:
        self.fn = fn
        self.token = token
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def _token(self, repo: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
        chosen = self.token(repo, *args, **kwargs) if self.token is not None else None
        if chosen is not None and not 1 <= len(chosen) <= 36:
            raise InvalidRequestError(f"transaction token {chosen!r} must be 1 to 36 characters")
        return chosen

    def _fill(self, repo: Any, tx: Transaction, args: tuple[Any, ...], kw: dict[str, Any]) -> R:
        reset = _IN_BODY.set(True)
        try:
            return self.fn(repo, tx, *args, **kw)
        finally:
            _IN_BODY.reset(reset)

    def call(self, repo: SyncRepo, *args: Any, **kwargs: Any) -> R:
        """Run the method on the sync repository."""
        with open_transaction(repo, self._token(repo, args, kwargs)) as tx:
            return self._fill(repo, tx, args, kwargs)

    def call_async(self, repo: AsyncRepo, *args: Any, **kwargs: Any) -> Any:
        """Run the method on the async repository: an awaitable of its result, or (called
        from another transaction method's body, which is plain code) the result itself."""
        current = current_transaction(repo)
        if current is not None:
            in_body = _IN_BODY.get()
            result = self._fill(repo, current, args, kwargs)
            return result if in_body else _Joined(result)
        return self._send_async(repo, self._token(repo, args, kwargs), args, kwargs)

    async def _send_async(
        self, repo: AsyncRepo, token: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> R:
        async with open_async_transaction(repo, token) as tx:
            return self._fill(repo, tx, args, kwargs)

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(
        self, instance: AsyncRunner, owner: type
    ) -> Callable[P, Coroutine[Any, Any, R]]: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> Callable[P, R]: ...
    # On a plain class holding transaction methods (``self`` inside another transaction
    # method's body): the call joins the open transaction and returns the result.
    @overload
    def __get__(self, instance: object, owner: type) -> Callable[P, R]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        if is_async(instance):
            return functools.partial(self.call_async, instance)
        return functools.partial(self.call, instance)


@overload
def transaction(
    method: Callable[Concatenate[Any, Transaction, P], R],
) -> TransactionMethod[P, R]: ...
@overload
def transaction(
    method: None = None, *, token: Callable[..., str] | None = None
) -> Callable[[Callable[Concatenate[Any, Transaction, P], R]], TransactionMethod[P, R]]: ...
def transaction(method: Any = None, *, token: Callable[..., str] | None = None) -> Any:
    """Make a method a named transaction: it receives ``tx`` and fills it; calling it sends
    exactly one TransactWriteItems (or joins the caller's open transaction).

    ``token=lambda self, *args: ...`` derives the idempotency token from the arguments.
    """

    def decorate(fn: Callable[..., Any]) -> TransactionMethod[Any, Any]:
        return TransactionMethod(fn, token)

    if method is not None:
        return decorate(method)
    return decorate
