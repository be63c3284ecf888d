"""The only module that talks to the boto3 client.

It sends compiled requests, maps boto3 errors to :mod:`singletable.errors`, applies the
repository's retry policy where the library retries (unprocessed batch items, transaction
conflicts) and reports every call to the hooks and to the ``singletable`` logger (one DEBUG
record per request, see :func:`report`). The client itself, when a repository is given none,
comes from :func:`singletable.aws._client.default_client`.
"""

from __future__ import annotations

import logging
import random
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

from ._record import FrozenRecord
from .errors import InvalidRequestError, ServiceError, SingleTableError, TableNotFound

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "TransactionInProgressException",
    }
)

logger = logging.getLogger("singletable")
_DEBUG = logging.DEBUG

_METHODS = {
    "GetItem": "get_item",
    "Query": "query",
    "Scan": "scan",
    "PutItem": "put_item",
    "UpdateItem": "update_item",
    "DeleteItem": "delete_item",
    "BatchGetItem": "batch_get_item",
    "BatchWriteItem": "batch_write_item",
    "TransactWriteItems": "transact_write_items",
    "TransactGetItems": "transact_get_items",
    "DescribeTable": "describe_table",  # the backfill progress display's item count
}


class CallInfo(FrozenRecord):
    """What a hook receives for every request a repository sends.

    ``duration`` is in seconds (a monotonic clock); ``start`` is when the request was sent, in
    seconds since the epoch (``time.time()``), so a hook can place the call on a timeline (the
    OpenTelemetry hook's span times). ``consumed_capacity`` is DynamoDB's ``ConsumedCapacity``
    as returned (``None`` when not asked for or not returned); ``retries`` is botocore's retry
    count for the request. ``error`` is the error the caller gets (``AlreadyExists`` for a
    ``create`` over a live item, not the service error behind it); ``request_id`` is
    DynamoDB's ``x-amzn-RequestId`` (from the response or the error), ``items`` how many items
    the request returned (reads) or wrote (writes), ``None`` when it failed.
    """

    # Immutable (assignment raises AttributeError) and equal by value.
    __slots__ = (
        "consumed_capacity",
        "duration",
        "error",
        "items",
        "operation",
        "params",
        "pattern",
        "request_id",
        "retries",
        "start",
    )
    _fields = (
        "pattern",
        "operation",
        "params",
        "duration",
        "consumed_capacity",
        "retries",
        "error",
        "start",
        "request_id",
        "items",
    )

    pattern: str | None
    operation: str
    params: Mapping[str, Any]
    duration: float
    consumed_capacity: Any
    retries: int
    error: BaseException | None
    start: float
    request_id: str | None
    items: int | None

    def __init__(
        self,
        pattern: str | None,
        operation: str,
        params: Mapping[str, Any],
        duration: float,
        consumed_capacity: Any,
        retries: int,
        error: BaseException | None,
        start: float = 0.0,
        request_id: str | None = None,
        items: int | None = None,
    ) -> None:
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "operation", operation)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "duration", duration)
        object.__setattr__(self, "consumed_capacity", consumed_capacity)
        object.__setattr__(self, "retries", retries)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "request_id", request_id)
        object.__setattr__(self, "items", items)

    @property
    def table_names(self) -> list[str]:
        """The tables the request names (several for a batch or transaction), in order."""
        return table_names(self.params)

    @property
    def index_name(self) -> str | None:
        """The index a Query reads (``None`` for the table itself and for other requests)."""
        index = self.params.get("IndexName")
        return index if isinstance(index, str) else None


Hook = Callable[[CallInfo], None]


class RetryPolicy(FrozenRecord):
    """Retries the library itself performs: unprocessed batch items and transaction conflicts.

    Throttling and connection errors are retried by botocore (configure them on the client).
    ``sleep`` is the seam tests patch and an async executor replaces; by default it is
    ``time.sleep``, looked up when the policy waits (so patching ``time.sleep`` works too).
    """

    # Immutable (assignment raises AttributeError), equal by value, hashable.
    __slots__ = ("base_delay", "max_attempts", "max_delay", "sleep")
    _fields = ("max_attempts", "base_delay", "max_delay", "sleep")

    max_attempts: int
    base_delay: float
    max_delay: float
    sleep: Callable[[float], None] | None

    def __init__(
        self,
        max_attempts: int = 8,
        base_delay: float = 0.05,
        max_delay: float = 2.0,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        object.__setattr__(self, "max_attempts", max_attempts)
        object.__setattr__(self, "base_delay", base_delay)
        object.__setattr__(self, "max_delay", max_delay)
        object.__setattr__(self, "sleep", sleep)

    def backoff(self, attempt: int) -> float:
        """Full-jitter exponential delay before retry number ``attempt`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return random.uniform(0, ceiling)

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds`` with the policy's ``sleep`` (``time.sleep``, looked up now)."""
        (time.sleep if self.sleep is None else self.sleep)(seconds)

    def wait(self, attempt: int) -> None:
        """Sleep the backoff before retry number ``attempt``."""
        self.pause(self.backoff(attempt))


_CLIENT_CREATION = threading.Lock()
"""Held while a repository creates its default client (once per repository)."""


class Executor:
    """Sends requests through one boto3 client; maps errors; reports to hooks."""

    def __init__(
        self,
        client: DynamoDBClient | None,
        *,
        hooks: Sequence[Hook] = (),
        fast_path: bool = True,
    ) -> None:
        self._client = client
        self._fast_path = fast_path  # for the default client: False leaves its fast path off
        self.hooks = tuple(hooks)
        self._methods: dict[str, Callable[..., Any]] = {}

    @property
    def client(self) -> DynamoDBClient:
        client = self._client
        if client is None:
            # Threads sharing a repository may all make their first call at once: one of them
            # creates the client. The lock is taken only while there is none (not per call).
            with _CLIENT_CREATION:
                client = self._client
                if client is None:
                    client = self._client = self._create_default_client()
        return client

    def _create_default_client(self) -> DynamoDBClient:
        from .aws._client import default_client  # here: only the default client needs it

        try:
            client = default_client()
        except BotoCoreError as exc:
            raise map_botocore_error(exc, "creating the DynamoDB client") from exc
        if not self._fast_path:
            from .aws import fastpath

            fastpath.uninstall(client)
        return client

    def method(self, operation: str) -> Callable[..., Any]:
        """The client's bound method for ``operation`` (looked up once), or the direct
        transport's stand-in for it when the client has one."""
        method = self._methods.get(operation)
        if method is None:
            method = self._methods[operation] = client_method(self.client, operation)
        return method

    def call(
        self,
        operation: str,
        params: Mapping[str, Any],
        *,
        pattern: str | None = None,
        fail: Failure | None = None,
    ) -> dict[str, Any]:
        """Send one request; return botocore's parsed response. A failure is raised as the
        mapped error, then as what ``fail`` makes of it (see :class:`~singletable._flows.Send`)."""
        method = self._methods.get(operation) or self.method(operation)
        log = logger.isEnabledFor(_DEBUG)
        if not (self.hooks or log):
            try:
                return method(**params)  # type: ignore[no-any-return]
            except ClientError as exc:
                raise classify(map_client_error(exc, operation, params), exc, fail)  # noqa: B904
            except BotoCoreError as exc:
                raise map_botocore_error(exc, operation) from exc
        started = time.time()
        start = time.perf_counter()
        response: Any = None
        error: BaseException | None = None
        try:
            response = method(**params)
            result: dict[str, Any] = response
            return result
        except ClientError as exc:
            error = classify(map_client_error(exc, operation, params), exc, fail)
            raise error  # noqa: B904  (classify sets the cause)
        except BotoCoreError as exc:
            error = map_botocore_error(exc, operation)
            raise error from exc
        except BaseException as exc:  # an event handler's own error, an interrupt: not sent
            error = exc
            raise
        finally:
            report(self.hooks, pattern, operation, params, start, response, error, started, log=log)


class AsyncExecutor:
    """Sends requests through one aiobotocore client; the same mapping and hooks as
    :class:`Executor`."""

    def __init__(self, client: Any, *, hooks: Sequence[Hook] = ()) -> None:
        self._client = client
        self.hooks = tuple(hooks)
        self._methods: dict[str, Callable[..., Any]] = {}

    @property
    def client(self) -> Any:
        if self._client is None:
            raise InvalidRequestError(
                "this async repository has no client: pass client= (an aiobotocore DynamoDB "
                "client) or use `async with Repo.connect() as repo:`"
            )
        return self._client

    async def call(
        self,
        operation: str,
        params: Mapping[str, Any],
        *,
        pattern: str | None = None,
        fail: Failure | None = None,
    ) -> dict[str, Any]:
        """Send one request; return the parsed response (failures as in :meth:`Executor.call`)."""
        method = self._methods.get(operation)
        if method is None:
            method = self._methods[operation] = client_method(self.client, operation)
        log = logger.isEnabledFor(_DEBUG)
        timed = bool(self.hooks) or log
        started = time.time() if timed else 0.0
        start = time.perf_counter() if timed else 0.0
        response: Any = None
        error: BaseException | None = None
        try:
            response = await method(**params)
            result: dict[str, Any] = response
            return result
        except ClientError as exc:
            error = classify(map_client_error(exc, operation, params), exc, fail)
            raise error  # noqa: B904  (classify sets the cause)
        except BotoCoreError as exc:
            error = map_botocore_error(exc, operation)
            raise error from exc
        except BaseException as exc:  # cancelled (a timeout, a task group), a handler's error
            error = exc
            raise
        finally:
            if timed:
                report(
                    self.hooks, pattern, operation, params, start, response, error, started, log=log
                )


def client_method(client: Any, operation: str) -> Callable[..., Any]:
    """What sends ``operation`` on ``client``: the direct transport's method when one is
    installed on it (:mod:`singletable.aws._direct_install`), else the client's own method."""
    # The transport module is only imported by installing one: not imported, none installed.
    direct = sys.modules.get("singletable.aws._direct_install")
    transport = direct.transport_for(client) if direct is not None else None
    if transport is not None:
        return transport.method(operation)  # type: ignore[no-any-return]
    return getattr(client, _METHODS[operation])  # type: ignore[no-any-return]


Failure = Callable[[ServiceError], SingleTableError]
"""What a flow makes of a failed request (``Send.fail``)."""


def classify(mapped: ServiceError, cause: ClientError, fail: Failure | None) -> SingleTableError:
    """The error a failed request raises: ``mapped`` (caused by botocore's ``cause``), or
    what ``fail`` makes of it, caused by ``mapped`` unless it names its own cause."""
    mapped.__cause__ = cause
    if fail is None:
        return mapped
    final = fail(mapped)
    if final is not mapped and final.__cause__ is None:
        final.__cause__ = mapped
    return final


def report(
    hooks: Sequence[Hook],
    pattern: str | None,
    operation: str,
    params: Mapping[str, Any],
    start: float,
    response: Any,
    error: BaseException | None,
    started: float = 0.0,
    *,
    log: bool = False,
) -> None:
    """Tell every hook about one request and, with ``log``, write its DEBUG record.

    ``start`` is the ``time.perf_counter()`` reading taken before sending, ``started`` the
    ``time.time()`` one. ``error`` is whatever stopped the request from completing: a mapped
    :class:`SingleTableError`, or any other exception (a cancellation, an event handler's
    error), so no request that did not complete is reported as a success. The record holds the
    pattern (or verb), operation, tables, index, duration, consumed capacity, retry count and
    the outcome: never key values, request parameters or item contents (they may be personal
    data).
    """
    source = response if response is not None else _error_response(error)
    metadata = source.get("ResponseMetadata", {})
    info = CallInfo(
        pattern=pattern,
        operation=operation,
        params=params,
        duration=time.perf_counter() - start,
        consumed_capacity=source.get("ConsumedCapacity"),
        retries=metadata.get("RetryAttempts", 0),
        error=error,
        start=started,
        request_id=metadata.get("RequestId"),
        items=None if response is None else item_count(operation, params, response),
    )
    if log:
        log_call(info)
    for hook in hooks:
        hook(info)


def log_call(info: CallInfo) -> None:
    """The ``singletable`` logger's DEBUG record of one request (see :func:`report`).

    The fields are also attached to the record as attributes (``singletable_pattern``,
    ``singletable_operation``, ``singletable_tables``, ``singletable_index``,
    ``singletable_duration_ms``, ``singletable_consumed_capacity``, ``singletable_retries``,
    ``singletable_items``, ``singletable_request_id``, ``singletable_error``: the code of the
    error the caller gets, and ``singletable_aws_error``: DynamoDB's code behind it) for
    structured log handlers.
    """
    error = info.error
    code = outcome_code(error)
    aws_code = aws_error_code(error)
    outcome = "ok" if code is None else code + (f" ({aws_code})" if aws_code else "")
    tables = info.table_names
    index = info.index_name
    duration_ms = info.duration * 1000.0
    capacity = _capacity_text(info.consumed_capacity)
    logger.debug(
        "%s %s table=%s index=%s duration=%.1fms capacity=%s retries=%d items=%s request_id=%s %s",
        info.pattern or "-",
        info.operation,
        ",".join(tables) or "-",
        index or "-",
        duration_ms,
        capacity,
        info.retries,
        "-" if info.items is None else info.items,
        info.request_id or "-",
        outcome,
        extra={
            "singletable_pattern": info.pattern,
            "singletable_operation": info.operation,
            "singletable_tables": tables,
            "singletable_index": index,
            "singletable_duration_ms": duration_ms,
            "singletable_consumed_capacity": info.consumed_capacity,
            "singletable_retries": info.retries,
            "singletable_error": code,
            "singletable_aws_error": aws_code,
            "singletable_items": info.items,
            "singletable_request_id": info.request_id,
        },
    )


def aws_error_code(error: BaseException | None) -> str | None:
    """DynamoDB's error code behind ``error`` (its own, or the service error it was made
    from: ``ConditionalCheckFailedException`` behind an ``AlreadyExists``)."""
    while error is not None:
        code = getattr(error, "aws_code", None)
        if code:
            return str(code)
        error = error.__cause__
    return None


def item_count(operation: str, params: Mapping[str, Any], response: Mapping[str, Any]) -> int:
    """How many items a successful request returned (reads) or wrote (writes)."""
    if operation in ("Query", "Scan"):
        return int(response.get("Count", 0))
    if operation == "GetItem":
        return 1 if "Item" in response else 0
    if operation == "BatchGetItem":
        return sum(len(items) for items in response.get("Responses", {}).values())
    if operation == "TransactGetItems":
        return sum(1 for entry in response.get("Responses", ()) if "Item" in entry)
    if operation == "BatchWriteItem":
        sent = sum(len(requests) for requests in params.get("RequestItems", {}).values())
        left = sum(len(r) for r in response.get("UnprocessedItems", {}).values())
        return sent - left
    if operation == "TransactWriteItems":
        return len(params.get("TransactItems", ()))
    return 1  # PutItem, UpdateItem, DeleteItem


def outcome_code(error: BaseException | None) -> str | None:
    """How a request ended, for logs: None (it completed), singletable's error code,
    ``"cancelled"`` (an asyncio cancellation), or the class name of another exception."""
    if error is None:
        return None
    if isinstance(error, SingleTableError):
        return error.code
    asyncio = sys.modules.get("asyncio")  # not imported: nothing was cancelled by it
    if asyncio is not None and isinstance(error, asyncio.CancelledError):
        return "cancelled"
    return type(error).__qualname__


def capacity_units(consumed: Any) -> float | None:
    """The capacity units of a ``ConsumedCapacity`` (one entry or the list a batch or
    transaction returns), added up; ``None`` when there is none."""
    entries = consumed if isinstance(consumed, list) else [consumed]
    units = [
        float(entry["CapacityUnits"])
        for entry in entries
        if isinstance(entry, Mapping) and "CapacityUnits" in entry
    ]
    return sum(units) if units else None


def _capacity_text(consumed: Any) -> str:
    units = capacity_units(consumed)
    return "-" if units is None else f"{units:g}"


def table_names(params: Mapping[str, Any]) -> list[str]:
    """The table names a request's parameters name, in order and without repeats:
    ``TableName``, a batch's ``RequestItems`` keys, or each transaction item's table."""
    name = params.get("TableName")
    if isinstance(name, str):
        return [name]
    names: list[str] = []
    requests = params.get("RequestItems")
    if isinstance(requests, Mapping):
        names.extend(str(table) for table in requests)
    for item in params.get("TransactItems", ()):
        if isinstance(item, Mapping):
            for action in item.values():
                if isinstance(action, Mapping) and isinstance(action.get("TableName"), str):
                    names.append(action["TableName"])
    return list(dict.fromkeys(names))


def _error_response(error: BaseException | None) -> dict[str, Any]:
    """DynamoDB's error response behind ``error`` (the service error it was made from)."""
    while error is not None:
        response = getattr(error, "response", None)
        if isinstance(response, dict) and response:
            return response
        error = error.__cause__
    return {}


def map_botocore_error(exc: BotoCoreError, operation: str) -> SingleTableError:
    """A clear error for botocore's own failures (no response from DynamoDB)."""
    if isinstance(exc, ParamValidationError):
        return InvalidRequestError(f"{operation} request is invalid: {exc}")
    if isinstance(exc, NoRegionError):
        return ServiceError(
            f"{operation}: no AWS region is configured; set AWS_REGION (or AWS_DEFAULT_REGION), "
            "or pass client=boto3.client('dynamodb', region_name=...)",
            operation=operation,
        )
    if isinstance(exc, NoCredentialsError):
        return ServiceError(
            f"{operation}: no AWS credentials were found (environment, config file or role)",
            operation=operation,
        )
    retryable = isinstance(exc, (BotoConnectionError, HTTPClientError))
    return ServiceError(f"{operation} failed: {exc}", operation=operation, retryable=retryable)


def map_client_error(exc: ClientError, operation: str, params: Mapping[str, Any]) -> ServiceError:
    """A :class:`ServiceError` (or :class:`TableNotFound`) for a boto3 ``ClientError``.

    The parsed error response stays available as ``.response`` for callers that map
    condition failures and cancellations to their own errors.
    """
    response = exc.response
    error = response.get("Error", {})
    code = str(error.get("Code", "Unknown"))
    message = str(error.get("Message", "")) or code
    request_id = response.get("ResponseMetadata", {}).get("RequestId")
    table = params.get("TableName")
    cls = ServiceError
    if code == "ResourceNotFoundException":
        cls = TableNotFound
        message = (
            f"table {table!r} (or its index) was not found at this endpoint: {message}"
            if table
            else message
        )
    mapped = cls(
        f"{operation} failed with {code}: {message}",
        aws_code=code,
        operation=operation,
        request_id=request_id,
        retryable=code in RETRYABLE_CODES,
        response=response,
    )
    return mapped
