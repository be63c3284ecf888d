"""One ``TransactWriteItems`` as a flow: limits checked before sending, conflicts retried,
a cancellation mapped to :class:`TransactionCanceled` whose reasons follow the operations."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._context import WriteContext
from .._flows import Flow, Send, Sleep
from .._item_key import Key, key_identity
from .._record import FrozenRecord
from .._wire import MAX_ITEM_BYTES, item_size
from ..errors import InvalidRequestError, ServiceError, SingleTableError, TransactionCanceled
from .ops import WriteOp, live_entity

if TYPE_CHECKING:
    from .._context import PlanContext
    from .._table import Table

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


def transaction_request(
    ops: Sequence[WriteOp], table: Table, context: PlanContext, token: str | None
) -> dict[str, Any]:
    """The exact TransactWriteItems request for ``ops`` (checked against DynamoDB's limits:
    at most 100 operations, 4 MB, one operation per item; no I/O)."""
    if not ops:
        raise InvalidRequestError("the transaction has no operations")
    if len(ops) > MAX_OPERATIONS:
        raise InvalidRequestError(
            f"the transaction has {len(ops)} operations (unique-constraint guard items "
            f"included); DynamoDB allows {MAX_OPERATIONS}. Split it or use batch writes"
        )
    key_attrs = [a for a in (table.pk, table.sk) if a]
    seen: dict[tuple[Any, ...], WriteOp] = {}
    total = 0
    # Every item was checked against the 400 KB limit when it was encoded, and a key is far
    # smaller, so up to MAX_BYTES // MAX_ITEM_BYTES operations cannot exceed 4 MB: the exact
    # size is only worth computing for bigger transactions.
    sized = len(ops) > MAX_BYTES // MAX_ITEM_BYTES
    for op in ops:
        identity = key_identity(op.key, key_attrs)
        if identity in seen:
            raise InvalidRequestError(
                f"the transaction touches one item twice ({op.describe}: "
                f"{', '.join(map(str, identity))}); DynamoDB refuses that — merge the "
                "operations",
                key=", ".join(map(str, identity)),
            )
        seen[identity] = op
        if sized:
            item = op.params.get("Item")
            total += item_size(item) if item is not None else item_size(op.key)
    if total > MAX_BYTES:
        raise InvalidRequestError(
            f"the transaction writes {total:,} bytes; DynamoDB allows 4 MB per transaction"
        )
    params: dict[str, Any] = {
        "TransactItems": [op.transact_item(context.table_name) for op in ops],
        "ClientRequestToken": token or str(uuid.uuid4()),
    }
    if context.capacity is not None:
        params["ReturnConsumedCapacity"] = context.capacity
    return params


def commit(
    ops: Sequence[WriteOp],
    table: Table,
    context: PlanContext,
    pattern: str | None = None,
    *,
    token: str | None = None,
    single: bool = False,
) -> Flow[None]:
    """Send ``ops`` as one transaction; retry transaction conflicts with jittered backoff
    (the same token, so DynamoDB applies it at most once); map a cancellation to
    :class:`TransactionCanceled` or, for one write with its guard items (``single``), to the
    error that write raises on its own (``first_failure``)."""
    params = transaction_request(ops, table, context, token)

    def fail(exc: ServiceError) -> SingleTableError:
        if exc.aws_code != "TransactionCanceledException":
            return exc
        canceled = canceled_error(ops, exc, context.at())
        canceled.__cause__ = exc
        error = first_failure(canceled) if single else canceled
        if error is not canceled:
            error.__cause__ = canceled
        return error

    retry = context.retry
    attempt = 0
    while True:
        try:
            yield Send("TransactWriteItems", params, pattern, fail)
            return
        except TransactionCanceled as canceled:
            attempt += 1
            if not canceled.retryable or attempt >= retry.max_attempts:
                raise
        yield Sleep(retry.backoff(attempt))


def canceled_error(
    ops: Sequence[WriteOp], exc: ServiceError, ctx: WriteContext
) -> TransactionCanceled:
    """The cancellation as :class:`TransactionCanceled`: one reason per operation sent, each
    with the error the same single-item write would raise."""
    raw = list(exc.response.get("CancellationReasons", []))
    reasons = []
    for index, op in enumerate(ops):
        entry = raw[index] if index < len(raw) else {}
        code = entry.get("Code")
        item = entry.get("Item")
        error = op.fail(item) if code == "ConditionalCheckFailed" else None
        decoded = getattr(error, "item", None)
        if decoded is None and item and op.spec is not None and op.kind != "guard_put":
            decoded = live_entity(op.spec, item, ctx)
        reasons.append(
            CancellationReason(
                index=index,
                kind=op.kind,
                entity_type=op.entity_type,
                key=str(Key(op.key)),
                code=code if code not in ("None",) else None,
                message=entry.get("Message"),
                item=decoded,
                error=error,
            )
        )
    failed = [r for r in reasons if r.failed]
    summary = "; ".join(str(r) for r in failed) or "no reason given"
    return TransactionCanceled(f"the transaction was cancelled: {summary}", reasons=reasons)


def first_failure(canceled: TransactionCanceled) -> SingleTableError:
    """The error a single-item write raises when its guard transaction is cancelled."""
    for reason in canceled.reasons:
        error: SingleTableError | None = reason.error
        if error is not None:
            return error
    return canceled
