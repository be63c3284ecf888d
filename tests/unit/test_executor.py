"""Errors botocore raises without a DynamoDB response are mapped to clear singletable errors."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError, NoCredentialsError, ParamValidationError

from singletable._executor import AsyncExecutor, CallInfo, map_botocore_error, outcome_code
from singletable.errors import InvalidRequestError, ServiceError
from tests.models import Shop


def test_missing_region_says_how_to_configure_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ServiceError, match="AWS_REGION") as caught:
        Shop().customer(customer_id="1")
    assert not caught.value.retryable


def test_botocore_errors_are_classified() -> None:
    assert isinstance(
        map_botocore_error(ParamValidationError(report="bad"), "Query"), InvalidRequestError
    )
    no_credentials = map_botocore_error(NoCredentialsError(), "GetItem")
    assert isinstance(no_credentials, ServiceError) and not no_credentials.retryable
    assert "credentials" in str(no_credentials)
    connection = map_botocore_error(EndpointConnectionError(endpoint_url="http://x"), "Query")
    assert isinstance(connection, ServiceError) and connection.retryable


class _Hanging:
    """An async client stand-in whose GetItem never answers (the network is stuck)."""

    def __init__(self) -> None:
        self.sent = asyncio.Event()

    async def get_item(self, **params: Any) -> dict[str, Any]:
        self.sent.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_a_cancelled_async_request_is_reported_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    """A request cancelled while in flight (a timeout, a task group) is logged ``cancelled`` and
    hooks get the CancelledError: it did not complete, so it is not reported ok."""
    calls: list[CallInfo] = []
    client = _Hanging()
    executor = AsyncExecutor(client, hooks=[calls.append])

    async def main() -> None:
        task = asyncio.create_task(
            executor.call("GetItem", {"TableName": "Shop", "Key": {}}, pattern="customer")
        )
        await client.sent.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.DEBUG, logger="singletable"):
        asyncio.run(main())
    (call,) = calls
    assert isinstance(call.error, asyncio.CancelledError) and call.pattern == "customer"
    (record,) = [r for r in caplog.records if r.name == "singletable"]
    assert record.getMessage().startswith("customer GetItem table=Shop ")
    assert record.getMessage().endswith(" cancelled")
    assert record.singletable_error == "cancelled"  # type: ignore[attr-defined]


def test_outcome_codes() -> None:
    assert outcome_code(None) is None
    assert outcome_code(ServiceError("x", aws_code="ThrottlingException")) == "service-error"
    assert outcome_code(KeyboardInterrupt()) == "KeyboardInterrupt"
    assert outcome_code(asyncio.CancelledError()) == "cancelled"
