"""Batch reads and writes as flows: chunked, retried with backoff, never silently dropping an
item. The repository (sync or async) runs them; see :mod:`singletable._flows`."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._flows import Flow, Send, Sleep
from .._item_key import key_identity
from ..errors import UnprocessedItemsError

if TYPE_CHECKING:
    from .._executor import RetryPolicy

I = TypeVar("I")  # noqa: E741 - an input item as the caller gave it

GET_CHUNK = 100
WRITE_CHUNK = 25


def batch_get_items(
    table_name: str,
    keys: Sequence[dict[str, Any]],
    key_attrs: Sequence[str],
    retry: RetryPolicy,
    *,
    consistent: bool = False,
    inputs: Sequence[Any] | None = None,
    pattern: str | None = None,
    projection: tuple[str, dict[str, str]] | None = None,
) -> Flow[dict[tuple[Any, ...], dict[str, Any]]]:
    """Fetch ``keys`` (duplicates collapsed) in chunks of 100; return items by key identity.

    Unprocessed keys are re-sent (with the same consistency) after jittered backoff; what is
    still unprocessed after the retry policy's budget, once every chunk was attempted, raises
    :class:`UnprocessedItemsError` holding the matching ``inputs``. ``projection`` is a
    ``(ProjectionExpression, ExpressionAttributeNames)`` pair to read only some attributes.
    """
    inputs = list(inputs) if inputs is not None else list(keys)
    unique: dict[tuple[Any, ...], tuple[dict[str, Any], Any]] = {}
    for key, given in zip(keys, inputs):
        unique.setdefault(key_identity(key, key_attrs), (key, given))
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    leftovers: list[Any] = []
    pending = [key for key, _ in unique.values()]
    for start in range(0, len(pending), GET_CHUNK):
        chunk = pending[start : start + GET_CHUNK]
        attempt = 0
        while chunk:
            request: dict[str, Any] = {"Keys": chunk}
            if consistent:
                request["ConsistentRead"] = True
            if projection is not None:
                request["ProjectionExpression"] = projection[0]
                request["ExpressionAttributeNames"] = projection[1]
            response = yield Send("BatchGetItem", {"RequestItems": {table_name: request}}, pattern)
            for item in response.get("Responses", {}).get(table_name, []):
                found[key_identity(item, key_attrs)] = item
            chunk = list(response.get("UnprocessedKeys", {}).get(table_name, {}).get("Keys", []))
            if chunk:
                attempt += 1
                if attempt >= retry.max_attempts:
                    leftovers.extend(unique[key_identity(k, key_attrs)][1] for k in chunk)
                    break
                yield Sleep(retry.backoff(attempt))
    if leftovers:
        raise UnprocessedItemsError(
            f"BatchGetItem left {len(leftovers)} key(s) unprocessed after "
            f"{retry.max_attempts} attempts (throttling?); they are in .unprocessed",
            unprocessed=leftovers,
        )
    return found


def batch_write(
    table_name: str,
    requests: Sequence[dict[str, Any]],
    inputs: Sequence[I],
    identity: Callable[[dict[str, Any]], Hashable],
    retry: RetryPolicy,
    *,
    pattern: str | None = None,
) -> Flow[None]:
    """Send ``requests`` (``{"PutRequest": ...}``/``{"DeleteRequest": ...}``) in chunks of 25.

    Unprocessed requests are re-sent after jittered backoff; leftovers after every chunk was
    attempted raise :class:`UnprocessedItemsError` with the matching ``inputs`` as given.
    """
    origin = {identity(r): given for r, given in zip(requests, inputs)}
    leftovers: list[Any] = []
    for start in range(0, len(requests), WRITE_CHUNK):
        chunk = list(requests[start : start + WRITE_CHUNK])
        attempt = 0
        while chunk:
            response = yield Send("BatchWriteItem", {"RequestItems": {table_name: chunk}}, pattern)
            chunk = list(response.get("UnprocessedItems", {}).get(table_name, []))
            if chunk:
                attempt += 1
                if attempt >= retry.max_attempts:
                    leftovers.extend(origin[identity(r)] for r in chunk)
                    break
                yield Sleep(retry.backoff(attempt))
    if leftovers:
        raise UnprocessedItemsError(
            f"BatchWriteItem left {len(leftovers)} item(s) unprocessed after "
            f"{retry.max_attempts} attempts (throttling?); they are in .unprocessed",
            unprocessed=leftovers,
        )
