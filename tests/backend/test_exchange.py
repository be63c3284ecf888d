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
import re
import socket
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSRequest
from botocore.config import Config
from botocore.exceptions import ProxyConnectionError
from moto import mock_aws
from moto_fixtures.backends import DEFAULT_REGION, DUMMY_CREDENTIALS
from urllib3.connectionpool import HTTPConnectionPool

from singletable.aws import client_config, default_client, exchange
from singletable.aws._switches import EXCHANGE

pytestmark = pytest.mark.backend("moto_server")

_ITEM = b'{"Item":{"pk":{"S":"A#1"},"n":{"N":"7"}}}'
#: Responses a DynamoDB endpoint may send: framed by Content-Length, chunked, and closing.
RESPONSES = {
    "content-length": b"HTTP/1.1 200 OK\r\nx-amzn-RequestId: r1\r\nContent-Type: "
    b"application/x-amz-json-1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(_ITEM), _ITEM),
    "chunked": b"HTTP/1.1 200 OK\r\nx-amzn-RequestId: r2\r\nTransfer-Encoding: chunked\r\n"
    b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n10\r\n"
    + _ITEM[:16]
    + b"\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(_ITEM) - 16, _ITEM[16:]),
    "close": b"HTTP/1.1 200 OK\r\nx-amzn-RequestId: r3\r\nConnection: close\r\n\r\n" + _ITEM,
}
_VOLATILE = re.compile(rb"^(X-Amz-Date|Authorization|amz-sdk-invocation-id): .*$", re.M | re.I)


class RawServer:
    """Records each request's bytes (head and ``Content-Length`` body) and answers with
    :attr:`response`, closing the connection when the response says so."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.response = RESPONSES["content-length"]
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(connection,), daemon=True).start()

    def _connection(self, connection: socket.socket) -> None:
        with connection:
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    more = connection.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, data = data.partition(b"\r\n\r\n")
                if b"\r\nexpect: 100-continue" in head.lower():
                    connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                length = int(re.search(rb"(?im)^content-length: *(\d+)", head)[1])  # type: ignore[index]
                while len(data) < length:
                    data += connection.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + data[:length])
                data = data[length:]
                connection.sendall(self.response)
                if b"Connection: close" in self.response:
                    return

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def server() -> Iterator[RawServer]:
    raw = RawServer()
    yield raw
    raw.close()


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
    server: RawServer,
    framing: str,
    urlopens: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.response = RESPONSES[framing]
    client = _client(server.url)
    exchange.install(client)
    key = {"pk": {"S": "A#1"}}
    answers = {}
    for switch in ("1", "0"):
        monkeypatch.setenv(EXCHANGE, switch)
        answers[switch] = [client.get_item(TableName="t", Key=key) for _ in range(2)]
    assert len(urlopens) == 2  # only the two requests with the exchange switched off
    assert len(server.requests) == 4
    masked = [_VOLATILE.sub(rb"\1: -", request) for request in server.requests]
    assert masked[0] == masked[1] == masked[2] == masked[3]
    assert masked[0].startswith(b"POST / HTTP/1.1\r\nHost: 127.0.0.1:")
    for on, off in zip(answers["1"], answers["0"], strict=True):
        on_headers = on["ResponseMetadata"].pop("HTTPHeaders")
        off_headers = off["ResponseMetadata"].pop("HTTPHeaders")
        assert on == off
        assert on["Item"] == {"pk": {"S": "A#1"}, "n": {"N": "7"}}
        assert dict(on_headers) == dict(off_headers)


def _prepared(
    url: str, method: str = "POST", stream_output: bool = False, **headers: Any
) -> AWSPreparedRequest:
    """A prepared request as botocore makes them, with extra ``headers``."""
    fields = {"Content-Type": "application/x-amz-json-1.0", "User-Agent": "ua", **headers}
    prepared = AWSRequest(method=method, url=url, headers=fields, data=b"{}").prepare()
    prepared.stream_output = stream_output
    return prepared


def test_it_sends_a_plain_post_and_hands_anything_else_to_urllib3(
    server: RawServer, urlopens: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _client(server.url)
    exchange.install(client)
    session = client._endpoint.http_session
    assert isinstance(session, exchange.HTTPSession)
    answered = session.send(_prepared(server.url))
    assert (answered.status_code, answered.content, urlopens) == (200, _ITEM, [])
    handed = {
        "a path": _prepared(server.url + "/prefix/"),
        "a query": _prepared(server.url + "/?x=1"),
        "a GET": _prepared(server.url, method="GET"),
        "a streamed response": _prepared(server.url, stream_output=True),
        "a Host of its own": _prepared(server.url, Host=f"127.0.0.1:{server.port}"),
        "an Accept-Encoding of its own": _prepared(server.url, **{"Accept-Encoding": "gzip"}),
        "an int header value": _prepared(server.url, X_Extra=7),
        "an Expect": _prepared(server.url, Expect="100-continue"),
    }
    no_length = _prepared(server.url)
    del no_length.headers["Content-Length"]
    no_length.body = b""
    handed["no Content-Length"] = no_length
    bytes_name = _prepared(server.url)
    bytes_name.headers = {**bytes_name.headers, b"X-Extra": "1"}  # a hook's plain dict
    handed["a bytes header name"] = bytes_name
    twice = _prepared(server.url)
    twice.headers = {**twice.headers, "X-Extra": "1", "x-extra": "2"}  # a hook's plain dict
    handed["a name given twice"] = twice
    for what, request in handed.items():
        sent = len(urlopens)
        assert session.send(request).status_code == 200, what
        assert len(urlopens) == sent + 1, what
    monkeypatch.setenv(EXCHANGE, "0")
    session.send(_prepared(server.url))
    assert len(urlopens) == len(handed) + 1
    assert len(server.requests) == len(handed) + 2


def test_an_endpoint_behind_a_proxy_is_left_to_urllib3(server: RawServer) -> None:
    client = _client(server.url, proxies={"http": "http://127.0.0.1:9"})
    exchange.install(client)
    with pytest.raises(ProxyConnectionError):  # botocore's error for the proxy it tried
        client._endpoint.http_session.send(_prepared(server.url))
    assert server.requests == []


def test_the_default_client_has_it_and_before_send_hooks_still_answer_first(
    server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.url)
    client = _client(None)
    assert exchange.is_installed(client)
    exchange.install(client)  # idempotent: one wrapper
    assert not isinstance(client._endpoint.http_session.wrapped, exchange.HTTPSession)
    seen: list[str] = []

    def user_hook(request: Any, **_: Any) -> None:
        seen.append(request.url)

    client.meta.events.register("before-send.dynamodb", user_hook)
    assert client.get_item(TableName="t", Key={"pk": {"S": "A#1"}})["Item"]["n"] == {"N": "7"}
    assert seen == [server.url + "/"] and len(server.requests) == 1
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
