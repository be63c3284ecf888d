"""Multi-item writes: one ``TransactWriteItems`` per transaction, checked before sending."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, overload

from .batch import key_identity
from .codec import item_size
from .errors import (
    InvalidRequestError,
    ServiceError,
    SingleTableError,
    TransactionCanceled,
)
from .record import FrozenRecord
from .writes import WriteOp, live_entity

if TYPE_CHECKING:
    from .expressions import Condition
    from .repository import Repository

P = ParamSpec("P")
R = TypeVar("R")
RepoT = TypeVar("RepoT", bound="Repository")
E = TypeVar("E")

MAX_OPERATIONS = 100
MAX_BYTES = 4 * 1024 * 1024


class CancellationReason(FrozenRecord):
    """Why one operation of a cancelled transaction failed (or ``code`` None if it did not)."""

    # Immutable (assignment raises AttributeError) and equal by value.
    __slots__ = ("code", "entity_type", "error", "index", "item", "key", "kind", "message")
    _fields = ("index", "kind", "entity_type", "key", "code", "message", "item", "error")

    index: int
    kind: str
    entity_type: str
    key: str
    code: str | None
    message: str | None
    item: Any
    error: SingleTableError | None

    def __init__(
        self,
        index: int,
        kind: str,
        entity_type: str,
        key: str,
        code: str | None,
        message: str | None,
        item: Any,
        error: SingleTableError | None,
    ) -> None:
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "entity_type", entity_type)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "item", item)
        object.__setattr__(self, "error", error)

    @property
    def failed(self) -> bool:
        return self.code not in (None, "None")

    @property
    def retryable(self) -> bool:
        return self.code == "TransactionConflict"

    def __str__(self) -> str:
        return f"#{self.index} {self.kind} {self.entity_type} {self.key}: {self.code}"


class Transaction:
    """Operations collected for one ``TransactWriteItems``; see ``Repository.transaction``."""

    def __init__(self, repo: Repository, token: str | None = None) -> None:
        self.repo = repo
        self.token = token
        self.ops: list[WriteOp] = []
        self.results: list[Any] = []

    # -- filling --

    def _add(self, op: WriteOp) -> None:
        self.ops.append(op)
        self.ops.extend(op.guards)

    def put(self, entity: E, *, condition: Condition | None = None) -> E:
        """Overwrite ``entity`` (version-checked); returns it as it will be stored."""
        op = self.repo._put_op(entity, condition)
        self._add(op)
        return op.result  # type: ignore[no-any-return]

    def create(self, entity: E, *, condition: Condition | None = None) -> E:
        """Create ``entity`` (fails the transaction if it exists); returns it as stored."""
        op = self.repo._create_op(entity, condition)
        self._add(op)
        return op.result  # type: ignore[no-any-return]

    def update(self, target: Any, /, **changes: Any) -> None:
        """Same arguments as ``Repository.update`` (instance or class + key fields)."""
        op, _ = self.repo._update_op(target, changes)
        op.params.pop("ReturnValues", None)
        self._add(op)

    def delete(
        self,
        target: Any,
        /,
        *,
        condition: Condition | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> None:
        """Same arguments as ``Repository.delete``."""
        op, _ = self.repo._delete_op(target, keys, condition, must_exist)
        op.params.pop("ReturnValues", None)
        self._add(op)

    def condition_check(self, target: Any, /, *, condition: Condition, **keys: Any) -> None:
        """Fail the transaction unless ``condition`` holds on the item."""
        self._add(self.repo._condition_check_op(target, keys, condition))

    # -- sending --

    def request(self) -> dict[str, Any]:
        """The exact TransactWriteItems request (checked; no I/O)."""
        if not self.ops:
            raise InvalidRequestError("the transaction has no operations")
        if len(self.ops) > MAX_OPERATIONS:
            raise InvalidRequestError(
                f"the transaction has {len(self.ops)} operations (unique-constraint guard items "
                f"included); DynamoDB allows {MAX_OPERATIONS}. Split it or use batch writes"
            )
        table = self.repo.table
        key_attrs = [a for a in (table.pk, table.sk) if a]
        seen: dict[tuple[Any, ...], WriteOp] = {}
        total = 0
        for op in self.ops:
            identity = key_identity(op.key, key_attrs)
            if identity in seen:
                raise InvalidRequestError(
                    f"the transaction touches one item twice ({op.describe}: "
                    f"{', '.join(map(str, identity))}); DynamoDB refuses that — merge the "
                    "operations",
                    key=", ".join(map(str, identity)),
                )
            seen[identity] = op
            item = op.params.get("Item")
            total += item_size(item) if item is not None else item_size(op.key)
        if total > MAX_BYTES:
            raise InvalidRequestError(
                f"the transaction writes {total:,} bytes; DynamoDB allows 4 MB per transaction"
            )
        params: dict[str, Any] = {
            "TransactItems": [op.transact_item(self.repo.table_name) for op in self.ops],
            "ClientRequestToken": self.token or str(uuid.uuid4()),
        }
        if self.repo.return_consumed_capacity:
            params["ReturnConsumedCapacity"] = "TOTAL"
        return params

    def send(self, *, pattern: str | None = None) -> None:
        """Send once; retry transaction conflicts with jittered backoff; map cancellations."""
        params = self.request()
        retry = self.repo._executor.retry
        attempt = 0
        while True:
            try:
                self.repo._executor.call("TransactWriteItems", params, pattern=pattern)
                return
            except ServiceError as exc:
                if exc.aws_code != "TransactionCanceledException":
                    raise
                canceled = self._canceled(exc)
            attempt += 1
            if not canceled.retryable or attempt >= retry.max_attempts:
                raise canceled
            retry.wait(attempt)

    def _canceled(self, exc: ServiceError) -> TransactionCanceled:
        raw = list(exc.response.get("CancellationReasons", []))
        reasons = []
        now = self.repo._write_context()
        for index, op in enumerate(self.ops):
            entry = raw[index] if index < len(raw) else {}
            code = entry.get("Code")
            item = entry.get("Item")
            error = op.fail(item) if code == "ConditionalCheckFailed" else None
            decoded = getattr(error, "item", None)
            if decoded is None and item and op.spec is not None and op.kind != "guard_put":
                decoded = live_entity(op.spec, item, now)
            reasons.append(
                CancellationReason(
                    index=index,
                    kind=op.kind,
                    entity_type=op.entity_type,
                    key=", ".join(f"{a}={next(iter(v.values()))}" for a, v in op.key.items()),
                    code=code if code not in ("None",) else None,
                    message=entry.get("Message"),
                    item=decoded,
                    error=error,
                )
            )
        failed = [r for r in reasons if r.failed]
        summary = "; ".join(str(r) for r in failed) or "no reason given"
        return TransactionCanceled(f"the transaction was cancelled: {summary}", reasons=reasons)


# Open transactions per context (thread, asyncio task), keyed by repository instance: a web
# server's concurrent requests sharing one repository never see each other's transaction.
_OPEN: ContextVar[tuple[tuple[int, Transaction], ...]] = ContextVar(
    "singletable_open_transactions", default=()
)


def current_transaction(repo: Repository) -> Transaction | None:
    """The transaction open on ``repo`` in this context, if any."""
    for owner, tx in _OPEN.get():
        if owner == id(repo):
            return tx
    return None


@contextmanager
def open_transaction(repo: Repository, token: str | None = None) -> Iterator[Transaction]:
    """Join the repository's current transaction or start one that sends on a clean exit."""
    current = current_transaction(repo)
    if current is not None:
        yield current
        return
    tx = Transaction(repo, token)
    reset = _OPEN.set((*_OPEN.get(), (id(repo), tx)))
    try:
        yield tx
    finally:
        _OPEN.reset(reset)
    tx.send()


@overload
def transaction(
    method: Callable[Concatenate[RepoT, Transaction, P], R],
) -> Callable[Concatenate[RepoT, P], R]: ...
@overload
def transaction(
    method: None = None, *, token: Callable[..., str] | None = None
) -> Callable[
    [Callable[Concatenate[RepoT, Transaction, P], R]], Callable[Concatenate[RepoT, P], R]
]: ...
def transaction(method: Any = None, *, token: Callable[..., str] | None = None) -> Any:
    """Make a repository method a named transaction: it receives ``tx`` and fills it; calling
    it sends exactly one TransactWriteItems (or joins the caller's open transaction).

    ``token=lambda self, *args: ...`` derives the idempotency token from the arguments.
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(self: Repository, *args: Any, **kwargs: Any) -> Any:
            chosen = token(self, *args, **kwargs) if token is not None else None
            if chosen is not None and not 1 <= len(chosen) <= 36:
                raise InvalidRequestError(
                    f"transaction token {chosen!r} must be 1 to 36 characters"
                )
            with open_transaction(self, chosen) as tx:
                return fn(self, tx, *args, **kwargs)

        wrapper.__singletable_transaction__ = True  # type: ignore[attr-defined]
        return wrapper

    if method is not None:
        return decorate(method)
    return decorate


def first_failure(canceled: TransactionCanceled) -> SingleTableError:
    """The error a single-item write raises when its guard transaction is cancelled."""
    for reason in canceled.reasons:
        error: SingleTableError | None = reason.error
        if error is not None:
            return error
    return canceled
