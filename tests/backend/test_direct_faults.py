"""The same retries for the same faults, on botocore's pipeline and on the direct transport
(and on botocore's and aiobotocore's pipelines with singletable's HTTP exchange).

Faults are injected on the wire by a :class:`moto_fixtures.wire.WireProxy` in front of moto's
server (the event-hook injectors of ``moto_fixtures.faults`` act inside botocore, where direct
requests do not pass): throttling, 5xx, connection resets, read timeouts, CRC32 mismatches,
credentials that expire in the middle of a run, and a server clock far from the client's. Each
case runs once per transport and compares what the proxy saw (attempts, faults met, the retry
headers), how often the client backed off, and what the repository returned or raised. The
backoff sleeps are recorded and skipped (botocore's ``time.sleep``, aiobotocore's
``AioEndpoint._sleep``); no test looks at a clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from moto_fixtures import Backend, Clock, create_table
from moto_fixtures.wire import Recorded, WireProxy

from singletable import SingleTableError
from singletable.aws import _direct_install
from tests.direct_support import open_repo, transports
from tests.models import Product, Store, shop

pytestmark = pytest.mark.backend("moto_server")

PRODUCT = Product(product_id="p1", name="Pen", category="office", price=Decimal("1.5"), stock=3)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The backoffs the clients slept (recorded, not slept)."""
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    from aiobotocore.endpoint import AioEndpoint

    async def no_sleep(self: Any, seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(AioEndpoint, "_sleep", no_sleep)
    return slept


@pytest.fixture
def proxy(backend: Backend, client: Any, table_name: str, clock: Clock) -> Iterator[WireProxy]:
    """The table with one product in it, behind a fresh proxy."""
    create_table(backend, client, shop, table_name)
    Store(client=client, table_name=table_name, clock=clock).put(PRODUCT)
    assert backend.endpoint_url is not None
    with WireProxy(backend.endpoint_url) as wire:
        yield wire


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("returned", call())
    except SingleTableError as error:
        cause = error.__cause__
        kind = f"{type(cause).__module__}.{type(cause).__qualname__}"  # classes are per client
        return ("raised", type(error).__name__, getattr(error, "aws_code", None), kind)


def retry_headers(requests: list[Recorded]) -> list[str]:
    """Each attempt's ``amz-sdk-request`` without its ``ttl`` (a time)."""
    return [
        "; ".join(p for p in r.headers["amz-sdk-request"].split("; ") if not p.startswith("ttl="))
        for r in requests
    ]


LEGACY = {"mode": "legacy", "total_max_attempts": 3}

FAULTS: dict[str, tuple[list[tuple[str, dict[str, Any]]], dict[str, Any], int]] = {
    # name: (faults in order, client config, attempts expected)
    "throttled-twice": ([("error", {"code": "ThrottlingException"})] * 2, {}, 3),
    "throughput-exceeded-every-attempt": (
        [("error", {"code": "ProvisionedThroughputExceededException"})] * 3,
        {},
        3,
    ),
    "internal-server-error-500": (
        [("error", {"code": "InternalServerError", "status": 500})],
        {},
        2,
    ),
    "service-unavailable-503": ([("error", {"code": "ServiceUnavailable", "status": 503})], {}, 2),
    "connection-reset": ([("reset", {})], {}, 2),
    "read-timeout": ([("stall", {"seconds": 1.5})], {"read_timeout": 0.5}, 2),
    "crc32-mismatch": ([("crc32", {})], {}, 2),
    "crc32-mismatch-every-attempt-legacy-mode": (
        [("crc32", {})] * 3,
        {"retries": {"mode": "legacy", "total_max_attempts": 3}},
        3,
    ),
    "validation-error-not-retried": ([("error", {"code": "ValidationException"})], {}, 1),
    # legacy mode (botocore's default) on the async twin is decided by _direct_retry's twin
    "throttled-twice-legacy-mode": (
        [("error", {"code": "ThrottlingException"})] * 2,
        {"retries": LEGACY},
        3,
    ),
    "internal-server-error-500-legacy-mode": (
        [("error", {"code": "InternalServerError", "status": 500})],
        {"retries": LEGACY},
        2,
    ),
    "connection-reset-legacy-mode": ([("reset", {})], {"retries": LEGACY}, 2),
    "validation-error-not-retried-legacy-mode": (
        [("error", {"code": "ValidationException"})],
        {"retries": LEGACY},
        1,
    ),
}


@pytest.mark.parametrize("name", FAULTS)
def test_the_same_fault_gets_the_same_retries(
    name: str, proxy: WireProxy, twin: str, clock: Clock, table_name: str, sleeps: list[float]
) -> None:
    faults, config, attempts = FAULTS[name]
    seen = {}
    for transport in transports(twin):
        with ExitStack() as stack:
            repo = open_repo(stack, twin, transport, proxy.url, table_name, clock, **config)
            # One call first: from then on the async direct transport decides retries with the
            # stock handler's sync twin (see test_the_async_transport_asks_the_sync_twin)
            assert repo.product(product_id="p1") == PRODUCT
            proxy.clear()
            sleeps.clear()
            for kind, options in faults:
                proxy.inject(kind, **options)
            result = outcome(lambda: repo.product(product_id="p1"))  # noqa: B023
        requests = list(proxy.requests)
        seen[transport] = (
            result,
            [r.fault for r in requests],
            retry_headers(requests),
            len(sleeps),
        )
        assert len(requests) == attempts, transport
    for transport in transports(twin)[1:]:
        assert seen[transport] == seen["botocore"], transport


def _credentials(now: list[datetime], issued: list[str]) -> Callable[[bool], Any]:
    """Refreshable credentials on a settable clock: each refresh issues the next key."""

    def metadata() -> dict[str, Any]:
        key = f"KEY{len(issued) + 1}"
        issued.append(key)
        expiry = (now[0] + timedelta(hours=1)).isoformat()
        return {"access_key": key, "secret_key": "s", "token": f"t-{key}", "expiry_time": expiry}

    def make(is_async: bool) -> Any:
        first = metadata()
        if is_async:
            from aiobotocore.credentials import AioRefreshableCredentials

            async def refresh() -> dict[str, Any]:
                return metadata()

            cls, refresh_using = AioRefreshableCredentials, refresh
        else:
            from botocore.credentials import RefreshableCredentials

            cls, refresh_using = RefreshableCredentials, metadata
        return cls(
            first["access_key"], first["secret_key"], first["token"],
            datetime.fromisoformat(first["expiry_time"]), refresh_using, "test",
            time_fetcher=lambda: now[0],
        )  # fmt: skip

    return make


def test_credentials_that_expire_mid_run_are_refreshed_before_the_next_request(
    proxy: WireProxy, twin: str, clock: Clock, table_name: str
) -> None:
    seen = {}
    for transport in transports(twin):
        proxy.clear()
        now, issued = [datetime.now(timezone.utc)], []
        with ExitStack() as stack:
            credentials = _credentials(now, issued)
            repo = open_repo(
                stack, twin, transport, proxy.url, table_name, clock, credentials=credentials
            )
            first = repo.product(product_id="p1")
            now[0] += timedelta(hours=2)  # past the expiry: the next request must refresh
            second = repo.product(product_id="p1")
        seen[transport] = ([r.access_key for r in proxy.requests], issued, first, second)
    assert seen["botocore"][:2] == (["KEY1", "KEY2"], ["KEY1", "KEY2"])
    for transport in transports(twin)[1:]:
        assert seen[transport] == seen["botocore"], transport


def _ttl_ahead(request: Recorded) -> float:
    """How far ahead of the request's own signing time its retry ``ttl`` is, in seconds."""
    ttl = request.headers["amz-sdk-request"].split("; ")[0].removeprefix("ttl=")
    signed = request.headers["x-amz-date"]
    parse = "%Y%m%dT%H%M%SZ"
    return (datetime.strptime(ttl, parse) - datetime.strptime(signed, parse)).total_seconds()


def test_a_skewed_server_clock_moves_the_retry_ttl_as_botocore_does(
    proxy: WireProxy, twin: str, clock: Clock, table_name: str, sleeps: list[float]
) -> None:
    """botocore's clock-skew correction: the retry's ``ttl`` is the client's time plus the
    read timeout plus the skew it estimated from the server's ``Date``."""
    ahead = {}
    for transport in transports(twin):
        proxy.clear()
        proxy.inject("error", code="ThrottlingException", skew=3600)
        with ExitStack() as stack:
            repo = open_repo(stack, twin, transport, proxy.url, table_name, clock, read_timeout=7)
            assert repo.product(product_id="p1") == PRODUCT
        first, retry = proxy.requests
        assert "ttl=" not in first.headers["amz-sdk-request"]
        ahead[transport] = _ttl_ahead(retry)
    # an hour of skew plus the 7 s read timeout, give or take the second the test takes
    assert 3600 + 7 - 2 <= ahead["botocore"] <= 3600 + 7 + 2
    for transport in transports(twin)[1:]:
        assert abs(ahead[transport] - ahead["botocore"]) <= 2, transport


@pytest.mark.twin("async")
def test_the_async_transport_asks_the_sync_twin(
    proxy: WireProxy, twin: str, clock: Clock, table_name: str
) -> None:
    """After the first call, the async direct transport asks the sync twin of aiobotocore's
    legacy retry handler (``_direct_retry``) rather than awaiting the handler."""
    with ExitStack() as stack:
        repo = open_repo(stack, twin, "direct", proxy.url, table_name, clock, retries=LEGACY)
        client = repo.async_repository.client
        transport = _direct_install.transport_for(client)
        event = "needs-retry.dynamodb.GetItem"
        assert transport._retries.twin(event) is None  # aiobotocore has not emitted it yet
        assert repo.product(product_id="p1") == PRODUCT
        twin_handler = transport._retries.twin(event)
        assert twin_handler is not None
        proxy.inject("error", code="ThrottlingException")
        assert repo.product(product_id="p1") == PRODUCT
        assert [r.fault for r in proxy.requests][-2:] != [None, None]  # the fault was met
        client.meta.events.register(event, lambda **kwargs: None)
        assert transport._retries.twin(event) is None  # a handler of the user's: aiobotocore
