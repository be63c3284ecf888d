"""Repositories on either transport (botocore's pipeline or singletable's direct transport),
sync or async, through a :class:`moto_fixtures.wire.WireProxy`: the shared set-up of the direct
transport's differential and fault suites. Each twin has a third: botocore's (aiobotocore's)
pipeline with singletable's HTTP exchange (:mod:`singletable.aws.exchange`, what the default
clients send with), compared with the pipeline on urllib3 (aiohttp) alone."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import CredentialProvider
from moto_fixtures import Clock
from moto_fixtures.backends import DEFAULT_REGION, DUMMY_CREDENTIALS
from moto_fixtures.twins import BlockingRepository, Loop, async_twin_of
from moto_fixtures.wire import Recorded

from singletable.aws import _direct_install, client_config, exchange, fastpath

from .models import Store

TRANSPORTS = ("botocore", "direct")


def transports(twin: str) -> tuple[str, ...]:
    """The transports of ``twin``: botocore's pipeline (first), the direct transport, and
    botocore's pipeline with singletable's HTTP exchange."""
    return (*TRANSPORTS, "exchange")


#: Headers that differ between any two requests: the signing time, the signature, the
#: per-call invocation id.
VOLATILE = frozenset({"x-amz-date", "authorization", "amz-sdk-invocation-id"})


class _Fixed(CredentialProvider):  # type: ignore[misc]
    METHOD = CANONICAL_NAME = "singletable-test"

    def __init__(self, credentials: Any) -> None:
        self._credentials = credentials

    def load(self) -> Any:
        return self._credentials


class _AsyncFixed(_Fixed):
    async def load(self) -> Any:
        return self._credentials


def client_options(**config: Any) -> dict[str, Any]:
    """Config options of the suites' clients: singletable's fixed User-Agent (as the default
    client has it), standard retries, 3 attempts, short timeouts."""
    options: dict[str, Any] = {
        "user_agent": client_config().user_agent,
        "retries": {"mode": "standard", "total_max_attempts": 3},
        "connect_timeout": 2,
        "read_timeout": 2,
        "parameter_validation": False,
    }
    options.update(config)
    return options


def open_repo(
    stack: ExitStack,
    twin: str,
    transport: str,
    url: str,
    table_name: str,
    clock: Clock,
    *,
    credentials: Callable[[bool], Any] | None = None,
    **config: Any,
) -> Any:
    """A :class:`Store` (or its async twin behind a blocking view) on a new client for
    ``url``, with the fast path, and with the direct transport or (sync) singletable's HTTP
    exchange when ``transport`` says so (the ``botocore`` one sends through urllib3 alone).
    ``credentials(is_async)`` makes the client's credentials object (default: static keys)."""
    options = client_options(**config)
    sync_credentials = credentials if twin == "sync" else None  # the companion: static keys
    keys = {} if sync_credentials is not None else DUMMY_CREDENTIALS
    session = botocore.session.Session()
    if sync_credentials is not None:
        provider = _Fixed(sync_credentials(False))
        session.get_component("credential_provider").insert_before("env", provider)
    sync_client = boto3.Session(botocore_session=session).client(
        "dynamodb", region_name=DEFAULT_REGION, endpoint_url=url, config=Config(**options), **keys
    )
    fastpath.install(sync_client)
    companion = Store(client=sync_client, table_name=table_name, clock=clock)
    if twin == "sync":
        if transport == "direct":
            assert _direct_install.install(sync_client)
        elif transport == "exchange":
            exchange.install(sync_client)
            assert exchange.is_installed(sync_client)
        return companion
    from aiobotocore.config import AioConfig
    from aiobotocore.session import AioSession

    from singletable.aws import _exchange_aio

    if transport == "exchange":
        options["http_session_cls"] = _exchange_aio.HTTPSession
    aio_session = AioSession()
    if credentials is not None:
        resolver = aio_session.get_component("credential_provider")
        resolver.insert_before("env", _AsyncFixed(credentials(True)))
    loop = Loop()
    manager = aio_session.create_client(
        "dynamodb", region_name=DEFAULT_REGION, endpoint_url=url, config=AioConfig(**options),
        **({} if credentials is not None else DUMMY_CREDENTIALS),
    )  # fmt: skip
    client = loop.run(manager.__aenter__())
    assert (transport == "exchange") is isinstance(
        client._endpoint.http_session, _exchange_aio.HTTPSession
    )
    stack.callback(loop.close)
    stack.callback(lambda: loop.run(manager.__aexit__(None, None, None)))
    fastpath.install(client)
    if transport == "direct":
        assert _direct_install.install(client)
    repo = async_twin_of(Store)(client=client, table_name=table_name, clock=clock)
    return BlockingRepository(repo, loop, sync_client, companion)


def signed_headers(request: Recorded) -> dict[str, str]:
    """The signed headers' names and values (but the date), and the credential scope."""
    authorization = request.headers["authorization"]
    names = authorization.partition("SignedHeaders=")[2].partition(",")[0].split(";")
    scope = authorization.partition("Credential=")[2].partition(",")[0].split("/")
    signed = {name: request.headers[name] for name in names if name != "x-amz-date"}
    signed["(scope)"] = "/".join([scope[0], *scope[2:]])  # key, region, service, terminator
    return signed


def comparable(request: Recorded) -> dict[str, Any]:
    """What must be equal between the two transports' versions of one request: the body (a
    generated ``ClientRequestToken`` masked), every header but the volatile ones, and the
    signed headers with their values."""
    body = json.loads(request.body)
    if "ClientRequestToken" in body:
        body["ClientRequestToken"] = "(generated)"
    headers = {k: v for k, v in request.headers.items() if k not in VOLATILE}
    return {"body": body, "headers": headers, "signed": signed_headers(request)}


def raw_body_equal(one: Recorded, other: Recorded) -> bool:
    """Byte-identical bodies (a request with a generated token: identical but for it)."""
    if b"ClientRequestToken" not in one.body:
        return one.body == other.body
    return comparable(one)["body"] == comparable(other)["body"]
