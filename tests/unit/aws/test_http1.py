"""The hand-written HTTP/1.1 exchange against ``http.client``: the same request bytes
urllib3 writes, and responses read as ``http.client`` reads them (status, headers joined as
urllib3 joins them, body, keep-alive), for every framing a server may use and any way the
bytes arrive."""

from __future__ import annotations

import io
import itertools
import socket
import threading
from http.client import (
    BadStatusLine,
    HTTPException,
    HTTPResponse,
    IncompleteRead,
    RemoteDisconnected,
)

import pytest
from hypothesis import given
from hypothesis import strategies as st
from urllib3 import HTTPConnectionPool

from singletable.aws._http1 import Headers, http_host, read_response, request_head

TOKEN = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!#$%&'*+^`|~",
    min_size=1,
    max_size=12,
)
VALUE = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=20,
).map(lambda text: text.replace("\x85", "x").replace("\xa0", "x"))  # (what email's parser
# would take for white space)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


class Peer:
    """A socket's ``recv`` over bytes that arrive in the given pieces."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)

    def recv(self, size: int) -> bytes:
        if not self.pieces:
            return b""
        piece = self.pieces.pop(0)
        if len(piece) > size:
            self.pieces.insert(0, piece[size:])
            piece = piece[:size]
        return piece


class _FileSocket:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self.data))  # type: ignore[arg-type]


def http_client_reads(data: bytes) -> tuple[int, dict[str, str], bytes, bool]:
    """What ``http.client`` (urllib3's parser) makes of ``data``; headers joined as urllib3's
    ``HTTPHeaderDict`` joins them."""
    response = HTTPResponse(_FileSocket(data), method="POST")  # type: ignore[arg-type]
    response.begin()
    headers: dict[str, str] = {}
    for name, value in response.msg.items():
        key = name.lower()
        headers[key] = value if key not in headers else f"{headers[key]}, {value}"
    body = response.read()
    return response.status, headers, body, not response.will_close


@st.composite
def responses(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.0"]))
    status = draw(st.sampled_from([200, 201, 204, 304, 400, 404, 413, 500, 503]))
    reason = draw(st.sampled_from(["", " OK", " Bad Request", " Something"]))
    headers = draw(st.lists(st.tuples(TOKEN, VALUE), max_size=6))
    headers = [
        (n, v)
        for n, v in headers
        if n.lower() not in ("content-length", "transfer-encoding", "connection", "keep-alive")
    ]
    connection = draw(st.sampled_from([None, "close", "keep-alive", "Keep-Alive", "Close"]))
    if connection is not None:
        headers.append(("Connection", connection))
    body = draw(st.binary(max_size=300)) if status not in (204, 304) else b""
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    if status in (204, 304):  # no body, whatever the headers say; nothing may follow
        framing = "close"
    if framing == "length":
        headers.append(("Content-Length", str(len(body))))
        payload = body
    elif framing == "chunked":
        headers.insert(draw(st.integers(0, len(headers))), ("Transfer-Encoding", "chunked"))
        sizes = draw(st.lists(st.integers(1, 80), max_size=6))
        payload, rest = b"", body
        for size in sizes:
            if not rest:
                break
            size = min(size, len(rest))
            extension = draw(st.sampled_from(["", ";name=value"]))
            payload += f"{size:x}{extension}\r\n".encode() + rest[:size] + b"\r\n"
            rest = rest[size:]
        if rest:
            payload += f"{len(rest):X}\r\n".encode() + rest + b"\r\n"
        trailers = draw(st.sampled_from([b"", b"X-Trailer: yes\r\n"]))
        payload += b"0\r\n" + trailers + b"\r\n"
    else:
        payload = body
    interim = draw(st.sampled_from([b"", b"HTTP/1.1 100 Continue\r\n\r\n"]))
    head = f"{version} {status}{reason}\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers)
    return interim + head.encode("latin-1") + b"\r\n" + payload


@given(responses(), st.lists(st.integers(0, 2000), max_size=8))
def test_a_response_reads_as_http_client_reads_it_however_it_arrives(
    data: bytes, cuts: list[int]
) -> None:
    status, headers, body, keep_alive = http_client_reads(data)
    response = read_response(Peer(_chunks(data, cuts)).recv)
    assert (response.status, dict(response.headers), response.body) == (status, headers, body)
    assert response.reusable == keep_alive


def test_headers_read_case_insensitively_and_show_lowercase_names() -> None:
    response = read_response(
        Peer([b"HTTP/1.1 200 OK\r\nx-amz-crc32: 12\r\nDate: now\r\nContent-Length: 0\r\n\r\n"]).recv
    )
    headers = response.headers
    assert isinstance(headers, Headers)
    assert headers["X-Amz-Crc32"] == "12" and headers.get("DATE") == "now"
    assert "date" in headers and "Date" in headers and 3 not in headers
    assert list(headers) == ["x-amz-crc32", "date", "content-length"]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", RemoteDisconnected),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", IncompleteRead),
        (b"HTTP/1.1 200 OK\r\nContent-Le", IncompleteRead),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", IncompleteRead),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", IncompleteRead),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd", IncompleteRead),
        (b"ICY 200 OK\r\n\r\n", BadStatusLine),
        (b"HTTP/1.1 2x0 OK\r\n\r\n", BadStatusLine),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", BadStatusLine),
        (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", BadStatusLine),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", BadStatusLine),
        (b"HTTP/1.1 100 Continue\r\n\r\n", RemoteDisconnected),
    ],
)
def test_a_malformed_or_short_response_raises_http_client_s_exceptions(
    data: bytes, error: type[HTTPException]
) -> None:
    with pytest.raises(error):
        read_response(Peer([data]).recv)


def test_an_endless_head_is_refused() -> None:
    head = b"HTTP/1.1 200 OK\r\n" + b"X: " + b"y" * 200_000
    with pytest.raises(HTTPException):
        read_response(Peer([head[i : i + 4096] for i in range(0, len(head), 4096)]).recv)


def test_bytes_after_the_response_leave_the_connection_unused() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1"
    response = read_response(Peer([data]).recv)
    assert (response.body, response.reusable) == (b"ok", False)


def test_a_repeated_content_length_of_one_value_is_one_length() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok"
    assert read_response(Peer([data]).recv).body == b"ok"


def test_a_folded_header_line_continues_the_header_before_it() -> None:
    data = b"HTTP/1.1 200 OK\r\nX-Long: one\r\n two\r\nContent-Length: 0\r\n\r\n"
    assert read_response(Peer([data]).recv).headers["x-long"] == "one two"


@pytest.mark.parametrize(
    ("host", "port", "default", "expected"),
    [
        ("dynamodb.us-east-1.amazonaws.com", 443, 443, "dynamodb.us-east-1.amazonaws.com"),
        ("127.0.0.1", 8000, 80, "127.0.0.1:8000"),
        ("localhost", None, 80, "localhost"),
        ("::1", 8000, 80, "[::1]:8000"),
        ("[::1]", 443, 443, "[::1]"),
    ],
)
def test_the_host_header_is_http_client_s(
    host: str, port: int | None, default: int, expected: str
) -> None:
    assert http_host(host, port, default) == expected


@given(st.lists(st.tuples(TOKEN, VALUE), max_size=6), st.binary(max_size=50))
def test_the_request_is_the_bytes_urllib3_writes(
    headers: list[tuple[str, str]], body: bytes
) -> None:
    """urllib3's connection writes to a socket pair; the bytes must be the request head's."""
    fields = dict(headers)
    fields.pop("Host", None)
    fields = {
        k: v
        for k, v in fields.items()
        if k.lower() not in ("host", "accept-encoding", "content-length", "user-agent")
    }
    fields["User-Agent"] = "Boto3/1 singletable"
    fields["Content-Length"] = str(len(body))
    ours = request_head("127.0.0.1:8000", fields) + body
    assert _urllib3_writes(fields, body) == ours


def _urllib3_writes(headers: dict[str, str], body: bytes) -> bytes:
    pool = HTTPConnectionPool("127.0.0.1", 8000)
    conn = pool._new_conn()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        conn.sock = theirs
        received: list[bytes] = []
        reader = threading.Thread(target=_drain, args=(ours, received))
        reader.start()
        conn.request("POST", "/", body=body, headers=headers, chunked=False)
        theirs.shutdown(socket.SHUT_WR)
        reader.join()
        conn.sock = None
    return b"".join(received)


def _drain(sock: socket.socket, into: list[bytes]) -> None:
    while data := sock.recv(65536):
        into.append(data)


@pytest.mark.parametrize("bad", ["a\r\nInjected: 1", "a\nb"])
def test_a_header_value_that_would_split_the_request_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="Invalid header"):
        request_head("h", {"X-Bad": bad, "Content-Length": "0"})
