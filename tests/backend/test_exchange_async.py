"""singletable's HTTP exchange under aiobotocore's pipeline
(:class:`singletable.aws._exchange_aio.HTTPSession`, what ``AsyncRepository.connect()``
creates its client with): the bytes aiohttp would write, the response aiobotocore would
return, and aiobotocore's own ``send`` for every request it does not cover.

Whole scenarios on the wire and the same retries for the same faults are in
``test_direct_transport.py`` and ``test_direct_faults.py`` (the async twin's ``exchange``
transport); here :class:`tests.raw_http.RawServer` records every byte, so the comparison is of
the request exactly as written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiobotocore.config import AioConfig
from aiobotocore.httpsession import AIOHTTPSession
from aiobotocore.session import AioSession
from botocore.config import Config
from botocore.exceptions import HTTPClientError, ProxyConnectionError
from moto_fixtures.backends import DEFAULT_REGION, DUMMY_CREDENTIALS

from singletable.aio import AsyncRepository
from singletable.aws import _exchange_aio, exchange, fastpath
from singletable.aws._switches import EXCHANGE
from singletable.errors import InvalidRequestError
from tests.models import shop
from tests.raw_http import ITEM, RESPONSES, RawServer, assert_same_requests_and_answers, prepared

pytestmark = [
    pytest.mark.backend("moto_server"),
    pytest.mark.skipif(
        not fastpath.aiobotocore_verified(),
        reason="the exchange is installed on the verified aiobotocore range only",
    ),
]

#: The sync suite's chunked response sets cookies, which aiohttp's cookie jar would keep and
#: send back (the exchange leaves cookies to aiohttp; DynamoDB sets none): repeat another
#: header here.
ASYNC_RESPONSES = {
    **RESPONSES,
    "chunked": RESPONSES["chunked"]
    .replace(b"Set-Cookie: a=1", b"x-amz-id-2: a")
    .replace(b"Set-Cookie: b=2", b"x-amz-id-2: b"),
}


@pytest.fixture
def requests_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs aiohttp's ``ClientSession.request`` was called for (it still runs)."""
    calls: list[str] = []
    request = aiohttp.ClientSession._request

    def counted(self: Any, method: str, url: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(url))
        return request(self, method, url, *args, **kwargs)

    monkeypatch.setattr(aiohttp.ClientSession, "_request", counted)
    return calls


def run_with_client(
    url: str, body: Callable[[Any], Awaitable[Any]], session_cls: Any = None, **config: Any
) -> Any:
    """``body(client)`` on a new aiobotocore client for ``url`` (with the exchange unless
    ``session_cls`` says otherwise), in a new event loop."""

    async def main() -> Any:
        options = AioConfig(
            retries={"mode": "standard", "total_max_attempts": 1},
            user_agent="ua",
            http_session_cls=session_cls or _exchange_aio.HTTPSession,
            **config,
        )
        manager = AioSession().create_client(
            "dynamodb", region_name=DEFAULT_REGION, endpoint_url=url, config=options,
            **DUMMY_CREDENTIALS,
        )  # fmt: skip
        async with manager as client:
            return await body(client)

    return asyncio.run(main())


@pytest.mark.parametrize("framing", ASYNC_RESPONSES)
def test_the_bytes_on_the_wire_and_the_response_are_aiohttp_s(
    raw_server: RawServer,
    framing: str,
    requests_made: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw_server.response = ASYNC_RESPONSES[framing]
    key = {"pk": {"S": "A#1"}}

    async def calls(client: Any) -> dict[str, list[Any]]:
        assert isinstance(client._endpoint.http_session, _exchange_aio.HTTPSession)
        answers = {}
        for switch in ("1", "0"):
            monkeypatch.setenv(EXCHANGE, switch)
            answers[switch] = [await client.get_item(TableName="t", Key=key) for _ in range(2)]
        return answers

    answers = run_with_client(raw_server.url, calls)
    assert len(requests_made) == 2  # only the two requests with the exchange switched off
    for on_headers, off_headers in assert_same_requests_and_answers(raw_server, answers):
        assert type(on_headers) is type(off_headers) is dict


def test_it_sends_a_plain_post_and_hands_anything_else_to_aiohttp(
    raw_server: RawServer, requests_made: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = raw_server.url
    handed = {
        "a path": prepared(url + "/prefix/"),
        "a query": prepared(url + "/?x=1"),
        "a GET": prepared(url, method="GET"),
        "a streamed response": prepared(url, stream_output=True),
        "a Host of its own": prepared(url, Host=f"127.0.0.1:{raw_server.port}"),
        "an Accept-Encoding of its own": prepared(url, **{"Accept-Encoding": "identity"}),
        "an Accept of its own": prepared(url, Accept="application/json"),
        "a Connection": prepared(url, Connection="keep-alive"),
        "a Cookie": prepared(url, Cookie="a=1"),
        "an Expect": prepared(url, Expect="100-continue"),
        "a value that is not ASCII": prepared(url, X_Extra="é"),
    }
    no_type = prepared(url)
    del no_type.headers["Content-Type"]
    handed["no Content-Type"] = no_type
    twice = prepared(url)
    twice.headers = {**twice.headers, "X-Extra": "1", "x-extra": "2"}  # a hook's plain dict
    handed["a name given twice"] = twice
    timed = prepared(url)
    timed.context = {"read_timeout": 5}  # a per-request read timeout
    handed["a per-request read timeout"] = timed

    async def sends(client: Any) -> None:
        session = client._endpoint.http_session
        answered = await session.send(prepared(url))
        assert (answered.status_code, await answered.content, requests_made) == (200, ITEM, [])
        for what, request in handed.items():
            before = len(requests_made)
            response = await session.send(request)
            assert (response.status_code, await response.content) == (200, ITEM), what
            assert len(requests_made) == before + 1, what
        failures = []  # what aiohttp makes of a header value that is not text, both ways
        for switch in ("1", "0"):
            monkeypatch.setenv(EXCHANGE, switch)
            with pytest.raises(HTTPClientError) as failed:
                await session.send(prepared(url, X_Extra=7))
            failures.append(str(failed.value))
        assert failures[0] == failures[1]
        await session.send(prepared(url))

    run_with_client(url, sends)
    assert len(requests_made) == len(handed) + 3  # + the two failures + the last, switched off
    assert len(raw_server.requests) == len(handed) + 2


def test_an_endpoint_behind_a_proxy_is_left_to_aiohttp(raw_server: RawServer) -> None:
    async def send(client: Any) -> None:
        with pytest.raises(ProxyConnectionError):  # aiobotocore's error for the proxy it tried
            await client._endpoint.http_session.send(prepared(raw_server.url))

    run_with_client(raw_server.url, send, proxies={"http": "http://127.0.0.1:9"})
    assert raw_server.requests == []


class Shop(AsyncRepository, table=shop):
    pass


def test_connect_sends_with_it_unless_the_config_names_a_session_class(
    raw_server: RawServer, requests_made: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", raw_server.url)
    for name, value in {**DUMMY_CREDENTIALS, "region_name": DEFAULT_REGION}.items():
        monkeypatch.setenv(name.upper() if name != "region_name" else "AWS_DEFAULT_REGION", value)

    async def main(**options: Any) -> tuple[type, Any]:
        async with Shop.connect(**options) as repo:
            item = await repo.client.get_item(TableName="t", Key={"pk": {"S": "A#1"}})
            session_cls = type(repo.client._endpoint.http_session)
            assert exchange.is_installed(repo.client) is (session_cls is _exchange_aio.HTTPSession)
            return session_cls, item["Item"]

    assert asyncio.run(main()) == (_exchange_aio.HTTPSession, {"pk": {"S": "A#1"}, "n": {"N": "7"}})
    assert requests_made == []
    own = AioConfig(http_session_cls=AIOHTTPSession)
    assert asyncio.run(main(config=own))[0] is AIOHTTPSession
    assert len(requests_made) == 1
    monkeypatch.setenv(EXCHANGE, "0")  # the session class stays; it hands every request on
    assert asyncio.run(main())[0] is _exchange_aio.HTTPSession
    assert len(requests_made) == 2


def test_aio_config_names_the_exchange_s_session_unless_the_config_names_its_own() -> None:
    assert exchange.aio_config().http_session_cls is _exchange_aio.HTTPSession
    merged = exchange.aio_config(Config(read_timeout=7, connect_timeout=3))
    assert isinstance(merged, AioConfig) and merged.http_session_cls is _exchange_aio.HTTPSession
    assert (merged.read_timeout, merged.connect_timeout) == (7, 3)
    own = AioConfig(http_session_cls=AIOHTTPSession, read_timeout=7)
    assert exchange.aio_config(own) is own
    with pytest.raises(InvalidRequestError, match="not dict"):
        exchange.aio_config({"read_timeout": 7})
