"""How the direct transport is asked for: ``client_config(transport=...)``,
``SINGLETABLE_TRANSPORT``, ``AsyncRepository.connect(transport=...)``; and the clients it
refuses (it then leaves the client to botocore and says why)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber

from singletable.aws import _direct_install, client_config, default_client
from singletable.aws._client import wants_direct
from singletable.aws._switches import TRANSPORT
from singletable.errors import InvalidRequestError
from tests.models import Shop

ENDPOINT = "http://127.0.0.1:9"  # never contacted: nothing here sends a request


@pytest.fixture
def http_endpoint(default_session: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", ENDPOINT)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "a")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "b")
    monkeypatch.delenv(TRANSPORT, raising=False)


def test_the_config_mark_and_the_environment_switch(
    http_endpoint: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    marked = client_config(transport="direct")
    assert wants_direct(marked) and not wants_direct(client_config()) and not wants_direct(None)
    assert not wants_direct(marked.merge(Config()))  # merge returns an unmarked copy
    client = default_client(config=marked)
    assert _direct_install.transport_for(client) is not None
    assert _direct_install.transport_for(default_client()) is None  # the default: botocore
    monkeypatch.setenv(TRANSPORT, "botocore")
    assert _direct_install.transport_for(default_client(config=marked)) is None
    monkeypatch.setenv(TRANSPORT, "direct")
    assert _direct_install.transport_for(default_client()) is not None
    assert _direct_install.transport_for(Shop().client) is not None  # Repository() honours it


def test_an_unknown_transport_is_refused() -> None:
    with pytest.raises(InvalidRequestError, match="'botocore' or 'direct'"):
        client_config(transport="http2")  # type: ignore[arg-type]


def test_connect_installs_it_on_the_aiobotocore_client(http_endpoint: None) -> None:
    from moto_fixtures.twins import async_twin_of

    AsyncShop = async_twin_of(Shop)

    async def transports() -> list[Any]:
        found = []
        for transport in ("direct", None, "botocore"):
            async with AsyncShop.connect(transport=transport) as repo:
                found.append(_direct_install.transport_for(repo.client))
        return found

    direct, default, botocore = asyncio.run(transports())
    assert type(direct).__name__ == "AsyncDirectTransport"
    assert default is None and botocore is None


@pytest.mark.parametrize(
    "config, reason",
    [
        ({"retries": {"mode": "adaptive"}}, "adaptive retry mode"),
        ({"endpoint_discovery_enabled": True}, "endpoint discovery"),
    ],
)
def test_clients_it_cannot_stand_in_for_are_left_to_botocore(
    http_endpoint: None, caplog: pytest.LogCaptureFixture, config: dict[str, Any], reason: str
) -> None:
    client = boto3.client("dynamodb", config=Config(**config))
    with caplog.at_level(logging.WARNING, logger="singletable"):
        assert _direct_install.install(client) is False
    assert reason in caplog.text
    assert _direct_install.transport_for(client) is None


def test_a_stubbed_client_is_left_to_its_stub(
    http_endpoint: None, caplog: pytest.LogCaptureFixture
) -> None:
    client = boto3.client("dynamodb")
    with Stubber(client), caplog.at_level(logging.WARNING, logger="singletable"):
        assert _direct_install.install(client) is False
    assert "hook answers its requests" in caplog.text


def test_a_botocore_outside_the_verified_range_keeps_its_own_pipeline(
    http_endpoint: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from singletable.aws import fastpath

    monkeypatch.setattr(fastpath, "VERIFIED_BOTOCORE", ("0.1.0", "0.2.0"))
    with caplog.at_level(logging.WARNING, logger="singletable"):
        assert _direct_install.install(boto3.client("dynamodb")) is False
    assert "outside the versions" in caplog.text
