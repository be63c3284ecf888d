"""singletable's HTTP exchange under botocore's pipeline (:mod:`singletable.aws.exchange`): the
bytes urllib3 would write, the response urllib3 would read, and botocore's HTTP session for
every request it does not cover.

The wire-level parity of whole scenarios, and the same retries for the same faults, are in
``test_direct_transport.py`` and ``test_direct_faults.py`` (the sync twin's ``exchange``
transport); here a raw socket server records every byte a client sends and answers with
canned bytes, so the comparison is of the request exactly as written.
"""

from __future__ import annotations

import copy
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ProxyConnectionError
from moto import mock_aws
from moto_fixtures.backends import DEFAULT_REGION, DUMMY_CREDENTIALS
from urllib3.connectionpool import HTTPConnectionPool

from singletable.aws import client_config, default_client, exchange
from singletable.aws._switches import EXCHANGE
from tests.raw_http import ITEM, RESPONSES, RawServer, assert_same_requests_and_answers, prepared

pytestmark = pytest.mark.backend("moto_server")


@pytest.fixture
def urlopens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs urllib3's ``urlopen`` was called for (it still runs: only counted)."""
    calls: list[str] = []
    urlopen = HTTPConnectionPool.urlopen

    def counted(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(url)
        return urlopen(self, method, url, *args, **kwargs)

    monkeypatch.setattr(HTTPConnectionPool, "urlopen", counted)
    return calls


def _client(url: str | None, **config: Any) -> Any:
    """A plain client for ``url``; for None, ``default_client()`` (its endpoint from the
    environment)."""
    session = boto3.Session(region_name=DEFAULT_REGION, **DUMMY_CREDENTIALS)
    options = Config(retries={"mode": "standard", "total_max_attempts": 1}, **config)
    if url is None:
        return default_client(
            session, config=client_config(parameter_validation=False).merge(options)
        )
    return session.client(
        "dynamodb", endpoint_url=url, config=Config(user_agent="ua").merge(options)
    )


@pytest.mark.parametrize("framing", RESPONSES)
def test_the_bytes_on_the_wire_and_the_response_are_urllib3_s(
    raw_server: RawServer,
    framing: str,
    urlopens: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw_server.response = RESPONSES[framing]
    client = _client(raw_server.url)
    exchange.install(client)
    key = {"pk": {"S": "A#1"}}
    answers = {}
    for switch in ("1", "0"):
        monkeypatch.setenv(EXCHANGE, switch)
        answers[switch] = [client.get_item(TableName="t", Key=key) for _ in range(2)]
    assert len(urlopens) == 2  # only the two requests with the exchange switched off
    assert_same_requests_and_answers(raw_server, answers)


def test_it_sends_a_plain_post_and_hands_anything_else_to_urllib3(
    raw_server: RawServer, urlopens: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _client(raw_server.url)
    exchange.install(client)
    session = client._endpoint.http_session
    assert isinstance(session, exchange.HTTPSession)
    answered = session.send(prepared(raw_server.url))
    assert (answered.status_code, answered.content, urlopens) == (200, ITEM, [])
    handed = {
        "a path": prepared(raw_server.url + "/prefix/"),
        "a query": prepared(raw_server.url + "/?x=1"),
        "a GET": prepared(raw_server.url, method="GET"),
        "a streamed response": prepared(raw_server.url, stream_output=True),
        "a Host of its own": prepared(raw_server.url, Host=f"127.0.0.1:{raw_server.port}"),
        "an Accept-Encoding of its own": prepared(raw_server.url, **{"Accept-Encoding": "gzip"}),
        "an int header value": prepared(raw_server.url, X_Extra=7),
        "an Expect": prepared(raw_server.url, Expect="100-continue"),
    }
    no_length = prepared(raw_server.url)
    del no_length.headers["Content-Length"]
    no_length.body = b""
    handed["no Content-Length"] = no_length
    bytes_name = prepared(raw_server.url)
    bytes_name.headers = {**bytes_name.headers, b"X-Extra": "1"}  # a hook's plain dict
    handed["a bytes header name"] = bytes_name
    twice = prepared(raw_server.url)
    twice.headers = {**twice.headers, "X-Extra": "1", "x-extra": "2"}  # a hook's plain dict
    handed["a name given twice"] = twice
    for what, request in handed.items():
        sent = len(urlopens)
        assert session.send(request).status_code == 200, what
        assert len(urlopens) == sent + 1, what
    monkeypatch.setenv(EXCHANGE, "0")
    session.send(prepared(raw_server.url))
    assert len(urlopens) == len(handed) + 1
    assert len(raw_server.requests) == len(handed) + 2


def test_an_endpoint_behind_a_proxy_is_left_to_urllib3(raw_server: RawServer) -> None:
    client = _client(raw_server.url, proxies={"http": "http://127.0.0.1:9"})
    exchange.install(client)
    with pytest.raises(ProxyConnectionError):  # botocore's error for the proxy it tried
        client._endpoint.http_session.send(prepared(raw_server.url))
    assert raw_server.requests == []


def test_the_default_client_has_it_and_before_send_hooks_still_answer_first(
    raw_server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", raw_server.url)
    client = _client(None)
    assert exchange.is_installed(client)
    exchange.install(client)  # idempotent: one wrapper
    assert not isinstance(client._endpoint.http_session.wrapped, exchange.HTTPSession)
    seen: list[str] = []

    def user_hook(request: Any, **_: Any) -> None:
        seen.append(request.url)

    client.meta.events.register("before-send.dynamodb", user_hook)
    assert client.get_item(TableName="t", Key={"pk": {"S": "A#1"}})["Item"]["n"] == {"N": "7"}
    assert seen == [raw_server.url + "/"] and len(raw_server.requests) == 1
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB")
    aws = _client(None)  # DynamoDB's own endpoint, unreachable from here
    assert exchange.is_installed(aws)
    with mock_aws():  # moto's in-process mock answers in a before-send hook: nothing is sent
        assert aws.list_tables()["TableNames"] == []
    session = client._endpoint.http_session
    assert copy.copy(session).wrapped is session.wrapped  # a copy delegates to the same one
    exchange.uninstall(client)
    assert not exchange.is_installed(client)
    exchange.uninstall(client)  # no-op
