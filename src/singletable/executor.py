"""The only module that talks to the boto3 client.

It sends compiled requests, maps boto3 errors to :mod:`singletable.errors`, applies the
repository's retry policy where the library retries (unprocessed batch items, transaction
conflicts) and reports every call to the hooks. The client itself, when a repository is given
none, comes from :func:`singletable.aws.client.default_client`.
"""

from __future__ import annotations

import random
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

from .errors import InvalidRequestError, ServiceError, SingleTableError, TableNotFound
from .record import FrozenRecord

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

_METHODS = {
    "GetItem": "get_item",
    "Query": "query",
    "PutItem": "put_item",
    "UpdateItem": "update_item",
    "DeleteItem": "delete_item",
    "BatchGetItem": "batch_get_item",
    "BatchWriteItem": "batch_write_item",
    "TransactWriteItems": "transact_write_items",
    "TransactGetItems": "transact_get_items",
}


class CallInfo(FrozenRecord):
    """What a hook receives for every request a repository sends."""

    # Immutable (assignment raises AttributeError) and equal by value.
    __slots__ = (
        "consumed_capacity",
        "duration",
        "error",
        "operation",
        "params",
        "pattern",
        "retries",
    )
    _fields = (
        "pattern",
        "operation",
        "params",
        "duration",
        "consumed_capacity",
        "retries",
        "error",
    )

    pattern: str | None
    operation: str
    params: Mapping[str, Any]
    duration: float
    consumed_capacity: Any
    retries: int
    error: BaseException | None

    def __init__(
        self,
        pattern: str | None,
        operation: str,
        params: Mapping[str, Any],
        duration: float,
        consumed_capacity: Any,
        retries: int,
        error: BaseException | None,
    ) -> None:
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "operation", operation)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "duration", duration)
        object.__setattr__(self, "consumed_capacity", consumed_capacity)
        object.__setattr__(self, "retries", retries)
        object.__setattr__(self, "error", error)


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


class Executor:
    """Sends requests through one boto3 client; maps errors; reports to hooks."""

    def __init__(self, client: DynamoDBClient | None, *, hooks: Sequence[Hook] = ()) -> None:
        self._client = client
        self.hooks = tuple(hooks)
        self._methods: dict[str, Callable[..., Any]] = {}

    @property
    def client(self) -> DynamoDBClient:
        if self._client is None:
            from .aws.client import default_client  # here: a given client needs none of aws/

            try:
                self._client = default_client()
            except BotoCoreError as exc:
                raise map_botocore_error(exc, "creating the DynamoDB client") from exc
        return self._client

    def method(self, operation: str) -> Callable[..., Any]:
        """The client's bound method for ``operation`` (looked up once)."""
        method = self._methods.get(operation)
        if method is None:
            method = self._methods[operation] = getattr(self.client, _METHODS[operation])
        return method

    def call(
        self, operation: str, params: Mapping[str, Any], *, pattern: str | None = None
    ) -> dict[str, Any]:
        """Send one request; return botocore's parsed response."""
        method = self._methods.get(operation) or self.method(operation)
        if not self.hooks:
            try:
                return method(**params)  # type: ignore[no-any-return]
            except ClientError as exc:
                raise map_client_error(exc, operation, params) from exc
            except BotoCoreError as exc:
                raise map_botocore_error(exc, operation) from exc
        start = time.perf_counter()
        response: Any = None
        error: SingleTableError | None = None
        try:
            response = method(**params)
            result: dict[str, Any] = response
            return result
        except ClientError as exc:
            error = map_client_error(exc, operation, params)
            raise error from exc
        except BotoCoreError as exc:
            error = map_botocore_error(exc, operation)
            raise error from exc
        finally:
            report(self.hooks, pattern, operation, params, start, response, error)


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
        self, operation: str, params: Mapping[str, Any], *, pattern: str | None = None
    ) -> dict[str, Any]:
        """Send one request; return the parsed response."""
        method = self._methods.get(operation)
        if method is None:
            method = self._methods[operation] = getattr(self.client, _METHODS[operation])
        start = time.perf_counter() if self.hooks else 0.0
        response: Any = None
        error: SingleTableError | None = None
        try:
            response = await method(**params)
            result: dict[str, Any] = response
            return result
        except ClientError as exc:
            error = map_client_error(exc, operation, params)
            raise error from exc
        except BotoCoreError as exc:
            error = map_botocore_error(exc, operation)
            raise error from exc
        finally:
            if self.hooks:
                report(self.hooks, pattern, operation, params, start, response, error)


def report(
    hooks: Sequence[Hook],
    pattern: str | None,
    operation: str,
    params: Mapping[str, Any],
    start: float,
    response: Any,
    error: SingleTableError | None,
) -> None:
    """Tell every hook about one request."""
    source = response if response is not None else _error_response(error)
    info = CallInfo(
        pattern=pattern,
        operation=operation,
        params=params,
        duration=time.perf_counter() - start,
        consumed_capacity=source.get("ConsumedCapacity"),
        retries=source.get("ResponseMetadata", {}).get("RetryAttempts", 0),
        error=error,
    )
    for hook in hooks:
        hook(info)


def _error_response(error: BaseException | None) -> dict[str, Any]:
    response = getattr(error, "response", None)
    return response if isinstance(response, dict) else {}


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
