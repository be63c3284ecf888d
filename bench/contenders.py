"""What ``bench/e2e.py`` times: the ``Contender`` record, and the contenders themselves.

Contenders (each with its own client, all created alike with boto3's defaults unless said):

* ``raw boto3``: the low-level client; items stay wire dicts (the baseline).
* ``by-hand``: the raw client, then one reused ``TypeDeserializer`` per attribute and
  ``Order.model_validate`` (``bench/codec.py``'s ``decode_by_hand``).
* ``singletable, plain client``: a repository pattern (``get(Order)``/``query(Order)``) on
  a plain boto3 client of your own; typed, validated ``Order`` entities out. No target:
  it shows singletable's own work on top of an untouched botocore pipeline.
* ``singletable, fast path``: the same on a client with ``singletable.aws.fastpath.install``
  (the response parser only).
* ``singletable default client``: ``Shop()`` without a client, i.e. the client
  ``singletable.aws.default_client()`` creates (fast path and its recommended botocore
  ``Config``; botocore signs), pointed at the endpoint by ``AWS_ENDPOINT_URL_DYNAMODB``.
* ``singletable default client + signer``: the same, created with ``SINGLETABLE_SIGNING=1``
  (singletable's opt-in SigV4 signer).
* ``singletable direct transport``: ``Shop()`` with ``SINGLETABLE_TRANSPORT=direct``: the
  default client with the direct transport (``singletable.aws._direct``: singletable sends the
  requests itself over the client's urllib3 pool; botocore's endpoint rules, credentials,
  retries and errors kept).
* ``singletable, fast path off``: the default client created with
  ``SINGLETABLE_FAST_PATH=0``: botocore parses the responses; ``client_config()`` stays.
* ``raw boto3 + fast path`` (reference): the raw client with the fast path installed.
* ``raw boto3 + client_config()`` (reference): the raw client with singletable's ``Config``.

The async rows run in the same run as the sync ones, interleaved call by call, with their own
baseline:

* ``raw aiobotocore``: an aiobotocore client's awaited ``get_item``/``query`` with the same
  request as the raw boto3 client; wire dicts out (the 1.00\u00d7 of the async rows).
* ``async: singletable default client``: ``AsyncShop.connect()`` (the default aiobotocore
  client: fast path and ``client_config()``), awaited patterns.
* ``async: singletable, plain client``: ``AsyncShop(client=...)`` on a plain aiobotocore
  client of your own.
* ``async: singletable, fast path off``: ``connect()`` with ``SINGLETABLE_FAST_PATH=0``.
* ``async: singletable direct transport``: ``connect(transport="direct")`` (aiohttp).
* ``async: aiodynamo``: aiodynamo's ``Client`` (its own request building and SigV4 signing
  with static dummy credentials, over an ``aiohttp`` session of its own), ``get_item`` by key
  and ``query_single_page`` with the same key condition and ``Limit=100`` (one request, like
  the raw client; its ``query()`` iterator would paginate); plain python dicts out, numbers as
  ``Decimal`` (``numeric_type=Decimal``; its default, float, would not round-trip a total).
  Left out, with the reason printed, where aiodynamo is not installed.
* ``raw aiobotocore + fast path`` (reference): the raw aiobotocore client with
  ``fastpath.install``.

All async contenders share one event loop. An async call is timed inside it: the thread
CPU time (and wall time) around ``await call()``, in a task the step runs to completion
before the next contender's call, so what is counted is the request, the event loop's work
while it waits for the response (selector, aiohttp's protocol callbacks) and the parsing, and
not the cost of creating and scheduling the task.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from codec import Order, decode_by_hand, shop
from endpoints import Endpoint
from singletable import Repository, get, query
from singletable.aws import _client as st_client
from singletable.aws import fastpath, signing

ASYNC_BASE = "raw aiobotocore"
DIRECT = "singletable direct transport"
ASYNC_DIRECT = "async: singletable direct transport"
CUSTOMER = "C424242"  # the partition of the 100 orders the Query reads
PARTITION_ITEMS = 100
GET_KEYS = 10  # GetItem reads this many orders of that partition in turn


@dataclass
class Contender:
    name: str
    get: Callable[[int], Any]  # i -> the i-th order (entity, or wire item for the raw rows)
    query: Callable[[], Any]  # -> the partition's 100 orders
    typed: bool  # entities out (else wire dicts)
    reference: bool = False
    baseline: str = "raw boto3"  # the contender its ratios are to
    # async contenders: i -> (cpu ns, wall ns) of one awaited GetItem / Query, timed inside
    # the event loop (see AsyncSide.timed)
    timed_get: Callable[[int], tuple[int, int]] | None = None
    timed_query: Callable[[], tuple[int, int]] | None = None
    python_values: bool = False  # plain python dicts out (aiodynamo), not wire dicts
    # timed with the process's CPU clock, not the calling thread's: pydynox runs each call on
    # its Rust runtime's threads, which the thread clock would not count
    process_cpu: bool = False


# -- the sync contenders --------------------------------------------------------------------


class Shop(Repository, table=shop):
    order = get(Order)
    orders = query(Order)


def make_contenders(
    endpoint: Endpoint, orders: list[Order], side: AsyncSide | None = None
) -> dict[str, Contender]:
    """All contenders against ``endpoint``, each on its own client; the async ones on
    ``side``'s event loop (none without it). The default clients are created here, with
    ``endpoint.use_as_default()`` in force."""
    keys = [
        {"customer_id": o.customer_id, "created_at": o.created_at, "order_id": o.order_id}
        for o in orders[:: PARTITION_ITEMS // GET_KEYS]
    ][:GET_KEYS]
    # The raw clients send the request a pattern sends (same body, so the replay server
    # answers both from one recording), with Limit=100 instead of the pattern's 101.
    shape = Shop(client=endpoint.client())
    get_params = [shape.order.params(**k) for k in keys]
    query_params = shape.orders.params(customer_id=CUSTOMER, limit=PARTITION_ITEMS)
    query_params["Limit"] = PARTITION_ITEMS

    def raw(client: Any, name: str, reference: bool = False) -> Contender:
        return Contender(
            name,
            lambda i: client.get_item(**get_params[i % GET_KEYS]).get("Item"),
            lambda: client.query(**query_params)["Items"],
            typed=False,
            reference=reference,
        )

    def by_hand(client: Any) -> Contender:
        def get_one(i: int) -> Order | None:
            item = client.get_item(**get_params[i % GET_KEYS]).get("Item")
            return None if item is None else decode_by_hand(item)

        def query_all() -> list[Order]:
            return [decode_by_hand(item) for item in client.query(**query_params)["Items"]]

        return Contender("by-hand", get_one, query_all, typed=True)

    def pattern(repo: Shop, name: str) -> Contender:
        bound_get, bound_query = repo.order, repo.orders
        return Contender(
            name,
            lambda i: bound_get(**keys[i % GET_KEYS]),
            lambda: bound_query(customer_id=CUSTOMER, limit=PARTITION_ITEMS).items,
            typed=True,
        )

    fast_client = endpoint.client()
    fastpath.install(fast_client)
    raw_fast_client = endpoint.client()
    fastpath.install(raw_fast_client)
    endpoint.use_as_default()
    default_repo = Shop()  # no client: singletable's default_client(), created on first use
    default_repo.client  # noqa: B018 - create it now, not inside a timed call
    assert not signing.is_installed(default_repo.client)
    os.environ[signing.ENV_VAR] = "1"
    try:
        signing_repo = Shop()
        assert signing.is_installed(signing_repo.client)
    finally:
        del os.environ[signing.ENV_VAR]
    os.environ["SINGLETABLE_TRANSPORT"] = "direct"
    try:
        direct_repo = Shop()
        direct_repo.client  # noqa: B018 - create it now, not inside a timed call
    finally:
        del os.environ["SINGLETABLE_TRANSPORT"]
    os.environ[fastpath.ENV_VAR] = "0"
    try:
        switched_off_repo = Shop()
        assert not fastpath.is_installed(switched_off_repo.client)
        assert not signing.is_installed(switched_off_repo.client)
    finally:
        del os.environ[fastpath.ENV_VAR]
    config = client_config()
    contenders = [
        raw(endpoint.client(), "raw boto3"),
        by_hand(endpoint.client()),
        pattern(Shop(client=endpoint.client(), fast_path=False), "singletable, plain client"),
        pattern(switched_off_repo, "singletable, fast path off"),
        pattern(Shop(client=fast_client), "singletable, fast path"),
        pattern(default_repo, "singletable default client"),
        pattern(signing_repo, "singletable default client + signer"),
        pattern(direct_repo, DIRECT),
        raw(raw_fast_client, "raw boto3 + fast path", reference=True),
    ]
    if config is not None:
        contenders.append(
            raw(endpoint.client(config), "raw boto3 + client_config()", reference=True)
        )
    contenders += pydynox_contenders(endpoint, get_params, query_params)
    if side is not None:
        contenders += async_contenders(side, endpoint, keys, get_params, query_params)
    return {c.name: c for c in contenders}


def client_config() -> Any:
    """singletable's recommended botocore Config, if this version has the helper."""
    helper = getattr(st_client, "client_config", None)
    return helper() if helper is not None else None


# -- the async contenders -------------------------------------------------------------------


class AsyncSide:
    """The async contenders' event loop and what they opened on it (clients, repositories
    from ``connect()``, aiohttp sessions), closed by :meth:`close`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.stack = contextlib.AsyncExitStack()

    def enter(self, manager: contextlib.AbstractAsyncContextManager[Any]) -> Any:
        return self.loop.run_until_complete(self.stack.enter_async_context(manager))

    def call(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        return self.loop.run_until_complete(_call(fn, *args))

    def timed(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> tuple[int, int]:
        return self.loop.run_until_complete(_timed(fn, *args))  # type: ignore[no-any-return]

    def close(self) -> None:
        self.loop.run_until_complete(self.stack.aclose())
        self.loop.close()

    def contender(
        self,
        name: str,
        get_one: Callable[[int], Awaitable[Any]],
        query_all: Callable[[], Awaitable[Any]],
        **fields: Any,
    ) -> Contender:
        """A contender awaiting ``get_one(i)`` / ``query_all()`` on this loop."""
        return Contender(
            name,
            lambda i: self.call(get_one, i),
            lambda: self.call(query_all),
            baseline=ASYNC_BASE,
            timed_get=lambda i: self.timed(get_one, i),
            timed_query=lambda: self.timed(query_all),
            **fields,
        )


async def _call(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return await fn(*args)


async def _timed(fn: Callable[..., Awaitable[Any]], *args: Any) -> tuple[int, int]:
    thread_time, perf_counter = time.thread_time_ns, time.perf_counter_ns
    w0, c0 = perf_counter(), thread_time()
    await fn(*args)  # the result is dropped inside the timed region
    c1, w1 = thread_time(), perf_counter()
    return c1 - c0, w1 - w0


def async_shop() -> type[Any]:
    """The async twin of e2e's ``Shop`` (imported on demand: aiobotocore is an extra)."""
    from singletable.aio import AsyncRepository

    class AsyncShop(AsyncRepository, table=shop):
        order = get(Order)
        orders = query(Order)

    return AsyncShop


def aio_plain_client(
    endpoint: Endpoint, config: Any = None
) -> contextlib.AbstractAsyncContextManager[Any]:
    """An aiobotocore client as a user creates one (``async with``), endpoint (and the
    certificate to trust, for HTTPS) given."""
    from aiobotocore.session import get_session

    return get_session().create_client(
        "dynamodb", endpoint_url=endpoint.url, config=config, verify=endpoint.certfile
    )


@contextlib.asynccontextmanager
async def _switched_off_connect(repo_cls: type[Any]) -> AsyncIterator[Any]:
    """``connect()`` with ``SINGLETABLE_FAST_PATH=0`` while the client is created."""
    os.environ[fastpath.ENV_VAR] = "0"
    try:
        manager = repo_cls.connect()
        repo = await manager.__aenter__()
    finally:
        del os.environ[fastpath.ENV_VAR]
    try:
        yield repo
    finally:
        await manager.__aexit__(None, None, None)


def async_contenders(
    side: AsyncSide,
    endpoint: Endpoint,
    keys: list[dict[str, Any]],
    get_params: list[dict[str, Any]],
    query_params: dict[str, Any],
) -> list[Contender]:
    """The async contenders and their raw aiobotocore baseline: the same requests as the
    sync rows (``get_params[i]``, ``query_params``; the patterns with ``keys[i]``). The
    default clients (``connect()``) reach ``endpoint`` through ``AWS_ENDPOINT_URL_DYNAMODB``
    (and ``AWS_CA_BUNDLE``), already set."""
    AsyncShop = async_shop()
    n = len(keys)

    def raw(client: Any, name: str, reference: bool = False) -> Contender:
        async def get_one(i: int) -> Any:
            return (await client.get_item(**get_params[i % n])).get("Item")

        async def query_all() -> Any:
            return (await client.query(**query_params))["Items"]

        return side.contender(name, get_one, query_all, typed=False, reference=reference)

    def pattern(repo: Any, name: str) -> Contender:
        bound_get, bound_query = repo.order, repo.orders

        async def get_one(i: int) -> Any:
            return await bound_get(**keys[i % n])

        async def query_all() -> Any:
            return (await bound_query(customer_id=CUSTOMER, limit=PARTITION_ITEMS)).items

        return side.contender(name, get_one, query_all, typed=True)

    default_repo = side.enter(AsyncShop.connect())
    assert fastpath.is_installed(default_repo.client)
    switched_off_repo = side.enter(_switched_off_connect(AsyncShop))
    assert not fastpath.is_installed(switched_off_repo.client)
    raw_fast_client = side.enter(aio_plain_client(endpoint))
    fastpath.install(raw_fast_client)
    assert fastpath.is_installed(raw_fast_client)
    contenders = [
        raw(side.enter(aio_plain_client(endpoint)), ASYNC_BASE),
        pattern(
            AsyncShop(client=side.enter(aio_plain_client(endpoint)), fast_path=False),
            "async: singletable, plain client",
        ),
        pattern(switched_off_repo, "async: singletable, fast path off"),
        pattern(default_repo, "async: singletable default client"),
        pattern(side.enter(AsyncShop.connect(transport="direct")), ASYNC_DIRECT),
    ]
    aiodynamo = aiodynamo_contender(side, endpoint, get_params, query_params)
    if aiodynamo is not None:
        contenders.append(aiodynamo)
    contenders.append(raw(raw_fast_client, "raw aiobotocore + fast path", reference=True))
    return contenders


# -- pydynox --------------------------------------------------------------------------------


def pydynox_contenders(
    endpoint: Endpoint, get_params: list[dict[str, Any]], query_params: dict[str, Any]
) -> list[Contender]:
    """pydynox's Rust client (its own HTTP, SigV4 and JSON, no botocore) reading what the raw
    client's requests read: ``pydynox (plain dicts)``, its fastest read (Rust-decoded dicts, no
    model instances), and ``pydynox + model_validate``, those dicts validated into ``Order``
    (a typed result, as singletable's). None, with the reason printed, where pydynox is not
    installed or the endpoint is HTTPS with a test certificate (its client takes no CA bundle).
    """
    try:
        import pydynox
    except ImportError:
        print(f"({endpoint.name}: pydynox left out: pydynox is not installed)")
        return []
    if endpoint.certfile is not None:
        print(f"({endpoint.name}: pydynox left out: its client cannot trust a test certificate)")
        return []
    client = pydynox.DynamoDBClient(
        region="us-east-1", access_key="bench", secret_key="bench", endpoint_url=endpoint.url
    )
    table = query_params["TableName"]
    keys = [{name: value["S"] for name, value in p["Key"].items()} for p in get_params]
    values = {name: value["S"] for name, value in query_params["ExpressionAttributeValues"].items()}
    query = {
        "key_condition_expression": query_params["KeyConditionExpression"],
        "expression_attribute_names": query_params["ExpressionAttributeNames"],
        "expression_attribute_values": values,
        "limit": query_params["Limit"],
        "page_size": query_params["Limit"],  # one request, as the raw client's
    }
    validate = Order.model_validate

    def get_typed(i: int) -> Order | None:
        item = client.sync_get_item(table, keys[i % len(keys)])
        return None if item is None else validate(item)

    return [
        Contender(
            "pydynox (plain dicts)",
            lambda i: client.sync_get_item(table, keys[i % len(keys)]),
            lambda: list(client.sync_query(table, **query)),
            typed=False,
            python_values=True,
            process_cpu=True,
        ),
        Contender(
            "pydynox + model_validate",
            get_typed,
            lambda: [validate(item) for item in client.sync_query(table, **query)],
            typed=True,
            process_cpu=True,
        ),
    ]


# -- aiodynamo -------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def aiodynamo_client(endpoint: Endpoint) -> AsyncIterator[Any]:
    """aiodynamo's client on an aiohttp session of its own (trusting the endpoint's
    certificate, for HTTPS), signing with static dummy credentials."""
    import aiohttp
    from aiodynamo.client import Client
    from aiodynamo.credentials import Key, StaticCredentials
    from aiodynamo.http.aiohttp import AIOHTTP
    from yarl import URL

    connector = aiohttp.TCPConnector(ssl=endpoint.ssl_context() or True)
    async with aiohttp.ClientSession(connector=connector) as session:
        yield Client(
            AIOHTTP(session),
            StaticCredentials(Key("bench", "bench")),
            "us-east-1",
            endpoint=URL(endpoint.url),
            numeric_type=Decimal,
        )


def aiodynamo_contender(
    side: AsyncSide,
    endpoint: Endpoint,
    get_params: list[dict[str, Any]],
    query_params: dict[str, Any],
) -> Contender | None:
    """``async: aiodynamo``, reading what the raw clients' requests read (its own request
    bodies); None, with the reason printed, where aiodynamo is not installed."""
    try:
        from aiodynamo.expressions import HashKey, RangeKey
    except ImportError:
        print(f"({endpoint.name}: async: aiodynamo left out: aiodynamo is not installed)")
        return None
    # The same key condition as the pattern's request, in aiodynamo's terms.
    if query_params["KeyConditionExpression"] != "#pk = :pk AND begins_with(#sk, :sk)":
        raise SystemExit(f"aiodynamo row: unexpected Query {query_params}")
    names = query_params["ExpressionAttributeNames"]
    values = {name: value["S"] for name, value in query_params["ExpressionAttributeValues"].items()}
    condition = HashKey(names["#pk"], values[":pk"]) & RangeKey(names["#sk"]).begins_with(
        values[":sk"]
    )
    table, limit = query_params["TableName"], query_params["Limit"]
    keys = [{name: value["S"] for name, value in p["Key"].items()} for p in get_params]
    client = side.enter(aiodynamo_client(endpoint))

    async def get_one(i: int) -> Any:
        return await client.get_item(table, keys[i % len(keys)])

    async def query_all() -> Any:
        return (await client.query_single_page(table, condition, limit=limit)).items

    return side.contender("async: aiodynamo", get_one, query_all, typed=False, python_values=True)
