"""singletable.aws.fastpath on aiobotocore clients (the async twin's) returns exactly what
aiobotocore's own parser returns.

aiobotocore runs botocore's ``before-parse`` contract in ``AioEndpoint._do_get_response``
(``response_dict["body"]`` is the whole body as ``bytes``; plain handlers are called as they
are; ``parsed.update(customized_response_dict)``; ``after-call`` with ``parsed``), so
:func:`fastpath.install` registers the same handlers on its emitter. The tests, beside the
sync ones in ``test_fastpath.py`` (whose corpus and scenario they reuse):

1. Corpus: every recorded body (moto in-process, moto server, dynalite, handcrafted) through
   an aiobotocore client's own emitter and aiobotocore's parser, with and without the fast
   path: equal, with the same types and key order, and equal to botocore's sync parse.
2. End-to-end on moto server and dynalite (moto's in-process mock does not serve aiohttp):
   the same scenario as the sync test (GetItem, Query of items with every attribute type,
   BatchGetItem, Put/Update/DeleteItem with ALL_OLD/ALL_NEW, transactions with cancellation
   reasons, error responses) on a plain aiobotocore client and on one with the fast path
   installed: the parsed responses are equal, ResponseMetadata and modelled error fields
   included, and every 2xx data-plane response took the fast path.
3. ``AsyncRepository.connect()``: its client has the fast path, answers equal those without
   it, and ``SINGLETABLE_FAST_PATH=0`` turns it off.
4. The verified aiobotocore range: inside it the fast path is installed on aiobotocore
   clients, outside it aiobotocore's parser stays and one warning says so.

Each test runs its coroutine with ``asyncio.run`` (no pytest-asyncio).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiobotocore
import botocore
import pytest
from aiobotocore.parsers import create_parser as aio_create_parser
from aiobotocore.session import get_session
from botocore.config import Config
from botocore.exceptions import ClientError
from moto_fixtures import Backend, create_table
from moto_fixtures.backends import wipe_tables

from singletable import get, query
from singletable.aio import AsyncRepository
from singletable.aws import fastpath
from tests.backend.test_fastpath import (
    CORPUS,
    RICH,
    Steps,
    _response_dict,
    assert_same,
    botocore_parse,
    check_same,
    expected_taken,
    load_body,
    probe,
    scenario_steps,
    table_steps,
)
from tests.models import Order, Status, shop

DUMMY = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
OFFLINE = "http://127.0.0.1:9"  # never called: the offline tests only emit events


run = asyncio.run


def aio_client(endpoint_url: str = OFFLINE, **config: Any) -> AbstractAsyncContextManager[Any]:
    """An aiobotocore DynamoDB client (``async with``), us-east-1, dummy credentials."""
    return get_session().create_client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=endpoint_url,
        config=Config(**config) if config else None,
        **DUMMY,
    )


# ----------------------------------------------------------------------------- helpers


async def aio_parse(client: Any, operation: str, status: int, headers: Any, body: bytes) -> Any:
    """aiobotocore alone: its JSON parser on the operation's output shape."""
    model = client.meta.service_model.operation_model(operation)
    response_dict = _response_dict(operation, status, headers, body)
    return await aio_create_parser("json").parse(response_dict, model.output_shape)


async def aio_fast_parse(
    client: Any, operation: str, status: int, headers: Any, body: bytes
) -> tuple[Any, bool]:
    """What ``AioEndpoint._do_get_response`` does with the client's hooks: emit before-parse
    on aiobotocore's emitter, parse, update with the customized dict; then after-call.
    Returns the parsed response and whether the fast path took the body."""
    model = client.meta.service_model.operation_model(operation)
    response_dict = _response_dict(operation, status, headers, body)
    customized: dict[str, Any] = {}
    await client.meta.events.emit(
        f"before-parse.dynamodb.{operation}",
        operation_model=model,
        response_dict=response_dict,
        customized_response_dict=customized,
    )
    taken = response_dict["body"] is not body
    parsed = await aio_create_parser("json").parse(response_dict, model.output_shape)
    parsed.update(customized)
    await client.meta.events.emit(
        f"after-call.dynamodb.{operation}",
        http_response=None,
        parsed=parsed,
        model=model,
        context={},
    )
    return parsed, taken


async def sync_parse(client: Any, operation: str, status: int, headers: Any, body: bytes) -> Any:
    """botocore's sync parser (``test_fastpath.botocore_parse``), awaitable."""
    return botocore_parse(client, operation, status, headers, body)


async def fast_one(client: Any, args: Any, body: bytes, taken: list[bool]) -> Any:
    parsed, took = await aio_fast_parse(client, *args, body)
    taken.append(took)
    return parsed


async def outcome(parse: Callable[[], Awaitable[Any]]) -> tuple[str, Any]:
    try:
        return ("ok", await parse())
    except Exception as e:  # the parser raises on some malformed bodies: so must we
        return ("raised", f"{type(e).__name__}: {e}")


async def run_steps(client: Any, steps: Steps) -> list[tuple[str, Any]]:
    """``test_fastpath.run_steps`` for an aiobotocore client: each call awaited."""
    out: list[tuple[str, Any]] = []
    response: Any = None
    while True:
        try:
            label, method, params = steps.send(response)
        except StopIteration:
            return out
        try:
            response = await getattr(client, method)(**params)
        except ClientError as e:
            if not label:
                raise
            response = {"error": type(e).__name__, **e.response}
        if label:
            out.append((label, response))


# ----------------------------------------------------------------------------- 1. corpus


def test_corpus_matches_aiobotocore() -> None:
    """Every corpus body, through an aiobotocore client's emitter and parser: the fast path
    gives what aiobotocore gives alone, which is what botocore gives; it takes exactly the
    supported 2xx bodies."""

    async def main() -> int:
        checked = 0
        async with aio_client() as plain, aio_client() as fast:
            fastpath.install(fast)
            assert fastpath.is_installed(fast) and not fastpath.is_installed(plain)
            for param in CORPUS:
                entry = param.values[0]
                args = (entry["operation"], entry["status_code"], entry["headers"])
                body = load_body(entry)
                label = param.id
                expected = await outcome(functools.partial(aio_parse, plain, *args, body))
                sync = await outcome(functools.partial(sync_parse, plain, *args, body))
                taken: list[bool] = []
                actual = await outcome(functools.partial(fast_one, fast, args, body, taken))
                assert actual[0] == expected[0] == sync[0], (label, expected, actual)
                if expected[0] == "raised":
                    assert actual == expected, label
                else:
                    assert_same(sync[1], expected[1])  # aiobotocore's parser is botocore's
                    try:
                        assert_same(expected[1], actual[1])
                    except AssertionError as e:
                        raise AssertionError(f"{label}: {e}") from e
                assert bool(taken and taken[0]) == expected_taken(entry), label
                checked += 1
        return checked

    assert run(main()) == len(CORPUS) > 100


def test_error_bodies_are_left_to_aiobotocore() -> None:
    entry = next(
        e
        for e in (p.values[0] for p in CORPUS)
        if e["status_code"] == 400 and b'"Item"' in load_body(e)
    )

    async def main() -> None:
        async with aio_client() as client:
            fastpath.install(client)
            body = load_body(entry)
            _, taken = await aio_fast_parse(client, entry["operation"], 400, entry["headers"], body)
            assert not taken

    run(main())


# ----------------------------------------------------------------------------- 2. end-to-end


async def _scenario(endpoint_url: str, moto: bool, install: bool) -> tuple[Any, Any]:
    retries = {"retries": {"total_max_attempts": 2, "mode": "standard"}}
    async with aio_client(endpoint_url, **retries) as client:
        if install:
            fastpath.install(client)
            assert fastpath.is_installed(client)
        seen = probe(client)
        responses = await run_steps(client, scenario_steps(moto=moto))
    return responses, seen


@pytest.mark.backend("moto_server", "dynalite")
def test_end_to_end_plain_equals_fast_path(backend: Backend) -> None:
    assert backend.endpoint_url
    moto = backend.name == "moto_server"
    admin = backend.client()
    plain, _ = run(_scenario(backend.endpoint_url, moto, install=False))
    wipe_tables(admin)
    fast, seen = run(_scenario(backend.endpoint_url, moto, install=True))
    wipe_tables(admin)
    check_same(plain, fast, seen)
    labels = dict(fast)
    # what the scenario is meant to cover really came back
    assert set(labels["get"]["Item"]) == set(RICH)
    assert {type(v["B"]) for v in (labels["get"]["Item"]["b"], RICH["b"])} == {bytes}
    assert labels["put-all-old"]["Attributes"]["bs"] == {"BS": [b"\x00", b"\xff"]}
    assert labels["update-all-new"]["Attributes"]["n"] == {"N": "7"}
    assert labels["delete-all-old"]["Attributes"]["SK"] == {"S": "A#006"}
    assert len(labels["batch-get"]["Responses"]["e2e"]) == 2
    if moto:
        cancelled = labels["transact-cancel"]
        assert cancelled["error"] == "TransactionCanceledException"
        (reason,) = cancelled["CancellationReasons"]
        assert reason["Code"] == "ConditionalCheckFailed"
        assert isinstance(reason["Item"]["b"]["B"], bytes)
    else:  # dynalite: no transactions, so error responses of another kind
        assert labels["transact-cancel"]["ResponseMetadata"]["HTTPStatusCode"] >= 400


@pytest.mark.backend("moto_server", "dynalite")
def test_query_items_of_every_attribute_type(backend: Backend) -> None:
    """A Query whose items hold every attribute type (and binary keys), page by page."""
    assert backend.endpoint_url

    async def main(install: bool) -> tuple[list[Any], list[Any]]:
        async with aio_client(backend.endpoint_url) as client:
            if install:
                fastpath.install(client)
            seen = probe(client)
            await run_steps(client, table_steps())
            pages = []
            for table, value in (("e2e", RICH["PK"]), ("e2e-bin", {"B": b"\x00P"})):
                kwargs: dict[str, Any] = {}
                while True:
                    page = await client.query(
                        TableName=table,
                        KeyConditionExpression="PK = :p",
                        ExpressionAttributeValues={":p": value},
                        Limit=4,
                        **kwargs,
                    )
                    page.pop("ResponseMetadata")
                    pages.append(page)
                    if "LastEvaluatedKey" not in page:
                        break
                    kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return pages, [s for s in seen if s[0] == "Query"]

    admin = backend.client()
    plain, _ = run(main(install=False))
    wipe_tables(admin)
    fast, seen = run(main(install=True))
    wipe_tables(admin)
    assert_same(plain, fast)
    assert seen and all(took for _, _, took in seen)
    types = {tag for page in fast for item in page["Items"] for av in item.values() for tag in av}
    assert types >= {"S", "N", "B", "SS", "NS", "BS", "M"}
    nested = RICH["m"]["M"]["l"]["L"]
    assert {tag for av in nested for tag in av} == {"B", "NULL", "BOOL"}
    assert any(item.get("m") == RICH["m"] for page in fast for item in page["Items"])


# ----------------------------------------------------------------------------- 3. connect()


class AsyncShop(AsyncRepository, table=shop):
    order = get(Order)
    orders = query(Order)


ORDER = Order(
    customer_id="C1",
    order_id="O1",
    created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
    status=Status.PENDING,
    total=Decimal("12.50"),
    customer_name="Ada 😀",
)


async def _through_connect(backend: Backend) -> tuple[bool, list[Any], Any, Any]:
    async with AsyncShop.connect(
        endpoint_url=backend.endpoint_url, region_name="us-east-1", **DUMMY
    ) as repo:
        installed = fastpath.is_installed(repo.client)
        seen = probe(repo.client)
        await repo.put(ORDER)
        got = await repo.order(customer_id="C1", created_at=ORDER.created_at, order_id="O1")
        page = await repo.orders(customer_id="C1")
        return installed, seen, got, page.items


@pytest.mark.backend("moto_server", "dynalite")
def test_connect_parses_with_the_fast_path_and_the_switch_turns_it_off(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = backend.client()
    create_table(backend, admin, shop, shop.name)
    monkeypatch.delenv(fastpath.ENV_VAR, raising=False)
    installed, seen, got, items = run(_through_connect(backend))
    assert installed
    assert got == ORDER and items == [ORDER]
    # (PutItem is left out: its response body is b"{}" either way)
    assert [(op, took) for op, _, took in seen if op != "PutItem"] == [
        ("GetItem", True),
        ("Query", True),
    ]
    monkeypatch.setenv(fastpath.ENV_VAR, "0")
    installed, seen, got_off, items_off = run(_through_connect(backend))
    assert not installed
    assert got_off == got and items_off == items
    assert [(op, took) for op, _, took in seen if op != "PutItem"] == [
        ("GetItem", False),
        ("Query", False),
    ]


# ----------------------------------------------------------------------------- API


async def _emit_get_item(client: Any) -> dict[str, Any]:
    model = client.meta.service_model.operation_model("GetItem")
    response_dict = _response_dict("GetItem", 200, {}, b'{"Item": {"b": {"B": "AA=="}}}')
    customized: dict[str, Any] = {}
    await client.meta.events.emit(
        "before-parse.dynamodb.GetItem",
        operation_model=model,
        response_dict=response_dict,
        customized_response_dict=customized,
    )
    return customized


def test_install_is_idempotent_and_per_client() -> None:
    async def main() -> None:
        async with aio_client() as client, aio_client() as other:
            assert not fastpath.is_installed(client)
            fastpath.install(client)
            fastpath.install(client)
            assert fastpath.is_installed(client) and not fastpath.is_installed(other)
            assert await _emit_get_item(client) == {"Item": {"b": {"B": b"\x00"}}}
            assert await _emit_get_item(other) == {}
            fastpath.uninstall(client)
            assert not fastpath.is_installed(client)
            assert await _emit_get_item(client) == {}

    run(main())


def test_env_var_disables_install(monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> None:
        async with aio_client() as client:
            monkeypatch.setenv(fastpath.ENV_VAR, "0")
            fastpath.install(client)
            assert not fastpath.is_installed(client)
            assert await _emit_get_item(client) == {}
            monkeypatch.setenv(fastpath.ENV_VAR, "1")
            fastpath.install(client)
            assert fastpath.is_installed(client)

    run(main())


# ----------------------------------------------------------------------------- 4. versions


def test_aiobotocore_clients_are_told_apart() -> None:
    import boto3

    sync = boto3.client("dynamodb", region_name="us-east-1", **DUMMY)
    assert fastpath.aiobotocore_version(sync) is None
    assert fastpath.aiobotocore_version(object()) is None

    async def main() -> str | None:
        async with aio_client() as client:
            return fastpath.aiobotocore_version(client)

    assert run(main()) == aiobotocore.__version__


def test_the_verified_range_holds_the_declared_and_the_installed_aiobotocore() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    declared = re.search(r'"aiobotocore\s*>=\s*([0-9.]+)', pyproject)  # the async extra
    assert declared is not None
    assert fastpath.VERIFIED_AIOBOTOCORE[0] == declared.group(1)
    assert fastpath.aiobotocore_verified(declared.group(1))
    assert fastpath.aiobotocore_verified(aiobotocore.__version__)
    assert fastpath.aiobotocore_verified()  # the installed one, read by default


@pytest.mark.parametrize(
    ("version", "verified"),
    [
        ("3.2.1", True),
        ("3.2.10", True),
        ("3.10.0", True),
        ("3.10.99", True),
        ("3.2.0", False),
        ("3.1", False),
        ("2.25.0", False),
        ("3.11.0", False),
        ("3.11.0rc1", False),
        ("4.0.0", False),
    ],
)
def test_aiobotocore_verified_compares_releases(
    monkeypatch: pytest.MonkeyPatch, version: str, verified: bool
) -> None:
    monkeypatch.setattr(fastpath, "VERIFIED_AIOBOTOCORE", ("3.2.1", "3.11.0"))
    assert fastpath.aiobotocore_verified(version) is verified


def _warnings(caplog: pytest.LogCaptureFixture, library: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "singletable"
        and r.levelno == logging.WARNING
        and r.getMessage().startswith(f"{library} ")
    ]


@asynccontextmanager
async def _connected() -> AsyncIterator[AsyncShop]:
    async with AsyncShop.connect(endpoint_url=OFFLINE, region_name="us-east-1", **DUMMY) as repo:
        yield repo


@pytest.mark.parametrize("side", ["older", "newer"])
def test_outside_the_verified_aiobotocore_range_its_parser_stays_and_one_warning_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, side: str
) -> None:
    installed = aiobotocore.__version__
    verified = ("0.1.0", installed) if side == "newer" else ("99.0.0", "99.1.0")
    monkeypatch.setattr(fastpath, "VERIFIED_AIOBOTOCORE", verified)
    monkeypatch.setattr(fastpath, "_warned_unverified_aio", False)
    monkeypatch.delenv(fastpath.ENV_VAR, raising=False)
    caplog.set_level(logging.WARNING, logger="singletable")

    async def main() -> None:
        async with _connected() as first, _connected() as second, aio_client() as explicit:
            fastpath.install(explicit)
            for client in (first.client, second.client, explicit):
                assert not fastpath.is_installed(client)
                assert await _emit_get_item(client) == {}

    run(main())
    (warning,) = _warnings(caplog, "aiobotocore")  # one per process, however many clients
    assert installed in warning.getMessage()
    assert _warnings(caplog, "botocore") == []
    # a botocore client is not concerned by aiobotocore's range
    import boto3

    sync = boto3.client("dynamodb", region_name="us-east-1", **DUMMY)
    fastpath.install(sync)
    assert fastpath.is_installed(sync)
    fastpath.uninstall(sync)


def test_inside_the_verified_range_connect_installs_without_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(fastpath, "VERIFIED_AIOBOTOCORE", (aiobotocore.__version__, "99.0.0"))
    monkeypatch.setattr(fastpath, "_warned_unverified_aio", False)
    monkeypatch.delenv(fastpath.ENV_VAR, raising=False)
    caplog.set_level(logging.WARNING, logger="singletable")

    async def main() -> bool:
        async with _connected() as repo:
            return fastpath.is_installed(repo.client)

    assert run(main())
    assert _warnings(caplog, "aiobotocore") == []


def test_an_unverified_botocore_keeps_aiobotocore_clients_on_their_parser(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """aiobotocore's parser is botocore's: the botocore range applies to its clients too."""
    monkeypatch.setattr(fastpath, "VERIFIED_BOTOCORE", ("99.0.0", "99.1.0"))
    monkeypatch.setattr(fastpath, "_warned_unverified", False)
    monkeypatch.delenv(fastpath.ENV_VAR, raising=False)
    caplog.set_level(logging.WARNING, logger="singletable")

    async def main() -> bool:
        async with _connected() as repo:
            return fastpath.is_installed(repo.client)

    assert not run(main())
    (warning,) = _warnings(caplog, "botocore")
    assert botocore.__version__ in warning.getMessage()
