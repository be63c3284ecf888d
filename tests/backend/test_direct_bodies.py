"""The fast path's response corpus (recorded and hand-crafted bodies: blobs in keys and
nested maps, nulls, unknown members, error bodies with modeled fields, bodies the fast path
declines) through the direct transport, against botocore's own client reading the same HTTP
response: the same parsed result, or the same exception with the same parsed response, on
both twins.

A :class:`moto_fixtures.wire.WireProxy` answers every request with the corpus entry's status,
headers and body, so both clients read byte-identical responses.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from botocore import xform_name
from moto_fixtures.wire import WireProxy

from singletable.aws import _direct_install
from tests.backend.test_fastpath import CORPUS, load_body
from tests.direct_support import TRANSPORTS, client_options

ONE_ATTEMPT = {"mode": "standard", "total_max_attempts": 1}
PARAMS: dict[str, dict[str, Any]] = {
    "BatchGetItem": {"RequestItems": {"t": {"Keys": [{"PK": {"S": "k"}}]}}},
    "BatchWriteItem": {"RequestItems": {"t": [{"DeleteRequest": {"Key": {"PK": {"S": "k"}}}}]}},
    "TransactGetItems": {"TransactItems": [{"Get": {"TableName": "t", "Key": {"PK": {"S": "k"}}}}]},
    "TransactWriteItems": {
        "TransactItems": [{"Delete": {"TableName": "t", "Key": {"PK": {"S": "k"}}}}],
        "ClientRequestToken": "fixed",
    },
}


def _result(parsed: Any) -> Any:
    metadata = dict(parsed.get("ResponseMetadata", {}))
    headers = dict(metadata.pop("HTTPHeaders", {}))
    headers.pop("date", None)  # the proxy's clock
    return {**parsed, "ResponseMetadata": {**metadata, "HTTPHeaders": headers}}


def _outcome(send: Any) -> tuple[str, Any]:
    try:
        return "returned", _result(send())
    except Exception as error:  # the comparison is the point: any exception, any class
        response = getattr(error, "response", None)
        return type(error).__name__, _result(response) if response else str(error)


def _sync_outcomes(url: str, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    import boto3
    from botocore.config import Config

    from singletable.aws import fastpath

    outcomes = {}
    config = Config(**client_options(retries=ONE_ATTEMPT))
    for transport in TRANSPORTS:
        client = boto3.client(
            "dynamodb", region_name="us-east-1", endpoint_url=url, aws_access_key_id="a",
            aws_secret_access_key="b", config=config,
        )  # fmt: skip
        fastpath.install(client)
        if transport == "direct":
            assert _direct_install.install(client)
            send = _direct_install.transport_for(client).method(operation)
        else:
            send = getattr(client, xform_name(operation))
        outcomes[transport] = _outcome(lambda: send(**params))  # noqa: B023
    return outcomes


async def _async_outcomes(url: str, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session

    from singletable.aws import fastpath

    outcomes = {}
    for transport in TRANSPORTS:
        config = AioConfig(**client_options(retries=ONE_ATTEMPT))
        async with get_session().create_client(
            "dynamodb", region_name="us-east-1", endpoint_url=url, aws_access_key_id="a",
            aws_secret_access_key="b", config=config,
        ) as client:  # fmt: skip
            fastpath.install(client)
            if transport == "direct":
                assert _direct_install.install(client)
                send = _direct_install.transport_for(client).method(operation)
            else:
                send = getattr(client, xform_name(operation))
            try:
                outcomes[transport] = "returned", _result(await send(**params))
            except Exception as error:  # any exception, any class: compared below
                response = getattr(error, "response", None)
                outcomes[transport] = (
                    type(error).__name__,
                    (_result(response) if response else str(error)),
                )
    return outcomes


@pytest.fixture(scope="module")
def wire() -> Any:
    with WireProxy("http://127.0.0.1:9") as proxy:  # never forwards: every answer is canned
        yield proxy


@pytest.mark.parametrize("entry", CORPUS)
@pytest.mark.parametrize("twin", ["sync", "async"])
def test_corpus_bodies_parse_the_same_through_the_direct_transport(
    wire: WireProxy, entry: dict[str, Any], twin: str
) -> None:
    wire.clear()
    wire.answer(entry["status_code"], entry["headers"], load_body(entry))
    operation = entry["operation"]
    params = PARAMS.get(operation, {"TableName": "t"})
    if twin == "sync":
        outcomes = _sync_outcomes(wire.url, operation, params)
    else:
        outcomes = asyncio.run(_async_outcomes(wire.url, operation, params))
    assert outcomes["direct"] == outcomes["botocore"]
    assert len(wire.requests) == 2  # one attempt each: both really read the canned response
