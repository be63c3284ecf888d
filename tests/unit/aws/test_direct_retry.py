"""The sync twin of aiobotocore's legacy retry handler decides as the handler itself does:
the same backoff (same jitter draw), the same retry context, the same ``MaxAttemptsReached``
mark, the same exceptions, for any response or connection failure on any attempt."""

from __future__ import annotations

import asyncio
import random
import zlib
from collections.abc import Iterator
from typing import Any

import aiobotocore.session
import pytest
from botocore.exceptions import (
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from hypothesis import given
from hypothesis import strategies as st

from singletable.aws._direct_aiohttp import ReadResponse
from singletable.aws._direct_retry import RetryDecisions, sync_twin
from singletable.aws._http1 import Headers

CODES = [
    None,
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "TransactionInProgressException",
    "ValidationException",
    "InternalServerError",
    "ConditionalCheckFailedException",
]
FAILURES = [
    ConnectionClosedError(endpoint_url="http://h"),
    ReadTimeoutError(endpoint_url="http://h"),
    EndpointConnectionError(endpoint_url="http://h"),
    ValueError("not a connection failure"),
]
CONFIGS = [None, {"mode": "legacy"}, {"mode": "legacy", "total_max_attempts": 3}]


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


_STOCK: dict[int, Any] = {}


def _stock(loop: asyncio.AbstractEventLoop, config: int) -> Any:
    """``_client_parts`` for ``CONFIGS[config]``, built once (neither side changes them)."""
    if config not in _STOCK:
        _STOCK[config] = _client_parts(loop, CONFIGS[config])
    return _STOCK[config]


def _client_parts(loop: asyncio.AbstractEventLoop, retries: dict[str, Any] | None) -> Any:
    """(the stock needs-retry handler of a fresh aiobotocore client, its GetItem model)."""
    from botocore.config import Config

    async def build() -> Any:
        session = aiobotocore.session.get_session()
        config = Config(retries=retries) if retries else None
        async with session.create_client(
            "dynamodb", region_name="us-east-1", aws_access_key_id="a",
            aws_secret_access_key="b", config=config,
        ) as client:  # fmt: skip
            emitter = client.meta.events._emitter
            (handler,) = emitter._handlers.prefix_search("needs-retry.dynamodb.GetItem")
            return handler, client.meta.service_model.operation_model("GetItem")

    return loop.run_until_complete(build())


def _response(status: int, code: str | None, crc: str, body: bytes) -> tuple[Any, dict[str, Any]]:
    headers = Headers()
    if crc != "missing":
        value = zlib.crc32(body) & 0xFFFFFFFF
        dict.__setitem__(headers, "x-amz-crc32", str(value if crc == "right" else value ^ 1))
    parsed: dict[str, Any] = {"ResponseMetadata": {"HTTPStatusCode": status}}
    if code is not None:
        parsed["Error"] = {"Code": code, "Message": "m"}
    return ReadResponse("http://h/", status, headers, body), parsed


def _decide(call: Any) -> tuple[Any, ...]:
    random.seed(7)  # the action's jitter draws from random
    try:
        return ("returned", call())
    except Exception as error:
        return ("raised", type(error))


@given(
    st.sampled_from(range(len(CONFIGS))),
    st.integers(1, 12),
    st.sampled_from([200, 400, 500, 503]),
    st.sampled_from(CODES),
    st.sampled_from(["right", "wrong", "missing"]),
    st.binary(max_size=20),
    st.sampled_from([None, *range(len(FAILURES))]),
)
def test_the_sync_twin_decides_as_aiobotocore_s_handler(
    loop: asyncio.AbstractEventLoop,
    config: int,
    attempts: int,
    status: int,
    code: str | None,
    crc: str,
    body: bytes,
    failure: int | None,
) -> None:
    handler, model = _stock(loop, config)
    twin = sync_twin(handler)
    assert twin is not None
    exception = None if failure is None else FAILURES[failure]

    def arguments() -> tuple[Any, dict[str, Any]]:
        response = None if exception is not None else _response(status, code, crc, body)
        return response, {"context": {"retries": {"attempt": attempts}}}

    aio_response, aio_request = arguments()
    expected = _decide(
        lambda: loop.run_until_complete(
            handler(
                response=aio_response,
                endpoint=None,
                operation=model,
                attempts=attempts,
                caught_exception=exception,
                request_dict=aio_request,
            )
        )
    )
    response, request = arguments()
    got = _decide(lambda: RetryDecisions.ask(twin, model, attempts, request, response, exception))
    assert got == expected
    assert request == aio_request  # the retry context ("max") set alike
    assert (response and response[1]) == (aio_response and aio_response[1])


def test_a_handler_that_is_not_the_stock_one_has_no_twin(loop: asyncio.AbstractEventLoop) -> None:
    handler, _ = _client_parts(loop, None)

    class Mine(type(handler)):  # type: ignore[misc]
        pass

    assert sync_twin(Mine(handler._checker, handler._action)) is None
    assert sync_twin(lambda **kwargs: None) is None
    handler._checker._checker._checkers.append(object())  # an unknown checker in the tree
    assert sync_twin(handler) is None


def test_the_twin_is_asked_only_while_the_stock_handler_is_the_only_one() -> None:
    class Emitter:
        def __init__(self) -> None:
            self._lookup_cache: dict[str, Any] = {}

    emitter = Emitter()
    decisions = RetryDecisions(emitter)
    event = "needs-retry.dynamodb.GetItem"
    assert decisions.twin(event) is None  # not emitted yet: aiobotocore decides
    loop = asyncio.new_event_loop()
    try:
        handler, _ = _client_parts(loop, None)
    finally:
        loop.close()
    emitter._lookup_cache[event] = [handler]
    twin = decisions.twin(event)
    assert twin is not None and decisions.twin(event) is twin
    emitter._lookup_cache[event] = [handler, print]  # the user registered one more
    assert decisions.twin(event) is None
    emitter._lookup_cache = {event: [handler]}
    assert decisions.twin(event) is twin
    emitter._lookup_cache = {}  # registering empties the cache until the next emit
    assert decisions.twin(event) is None
