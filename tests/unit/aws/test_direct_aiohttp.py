"""When the async twin writes on the session's connector itself and when it leaves the request
to ``ClientSession.request``: only for a session that adds nothing to a request (as aiobotocore
makes it), on a verified aiohttp, without cookies to send. What it writes and reads is compared
with aiohttp's own on every backend by tests/backend/test_direct_transport.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from yarl import URL

from singletable.aws import _direct_aiohttp
from singletable.aws._direct_aiohttp import VERIFIED_AIOHTTP, Exchange, _NotPlain, _plain, _verified


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _with_session(loop: asyncio.AbstractEventLoop, check: Any, **options: Any) -> Any:
    async def run() -> Any:
        options.setdefault("auto_decompress", False)  # as aiobotocore makes its sessions
        async with aiohttp.ClientSession(**options) as session:
            return await check(session)

    return loop.run_until_complete(run())


def test_a_session_as_aiobotocore_makes_it_is_written_on_directly(
    loop: asyncio.AbstractEventLoop,
) -> None:
    async def check(session: Any) -> bool:
        return _plain(session)

    assert _with_session(loop, check, skip_auto_headers={"CONTENT-TYPE"}) is True


@pytest.mark.parametrize(
    "options",
    [
        {"headers": {"X-Team": "a"}},  # default headers to send
        {"trace_configs": [aiohttp.TraceConfig()]},  # traces to call
        {"base_url": "http://example.com"},
        {"raise_for_status": True},
        {"auto_decompress": True},
        {"proxy": "http://127.0.0.1:3128"},
    ],
    ids=lambda options: next(iter(options)),
)
def test_a_session_that_adds_to_requests_is_left_to_request(
    loop: asyncio.AbstractEventLoop, options: dict[str, Any]
) -> None:
    async def check(session: Any) -> bool:
        return _plain(session)

    assert _with_session(loop, check, **options) is False


def test_a_session_with_cookies_to_send_is_left_to_request(
    loop: asyncio.AbstractEventLoop,
) -> None:
    async def check(session: Any) -> None:
        session.cookie_jar.update_cookies({"session": "1"}, URL("http://127.0.0.1:9/"))
        exchange = Exchange(session, URL("http://127.0.0.1:9/"))
        with pytest.raises(_NotPlain):  # before any connection is made
            await exchange.send({"Content-Length": "0", "User-Agent": "ua"}, b"")

    async def run() -> None:
        jar = aiohttp.CookieJar(unsafe=True)  # (made inside the loop, as aiohttp asks)
        async with aiohttp.ClientSession(cookie_jar=jar, auto_decompress=False) as session:
            await check(session)

    loop.run_until_complete(run())


@pytest.mark.parametrize(
    ("version", "verified"),
    [
        ("3.14.5", True),
        ("3.14.0", True),
        ("3.13.2", False),
        ("3.15.0", False),
        ("4.0.0a1", False),
        ("x", False),
    ],
)
def test_only_a_verified_aiohttp_is_written_on_directly(version: str, verified: bool) -> None:
    assert _verified(version) is verified


def test_the_installed_aiohttp_is_the_verified_one() -> None:
    """CI installs the newest aiohttp: when it leaves the verified range, this fails and the
    range is widened after the parity suites pass on it (until then requests fall back)."""
    assert _direct_aiohttp._AIOHTTP_VERIFIED, (aiohttp.__version__, VERIFIED_AIOHTTP)
