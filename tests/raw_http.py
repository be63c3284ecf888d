"""A raw HTTP/1.1 server that records every request's bytes and answers with canned bytes,
and botocore requests to send it: the shared set-up of the HTTP exchange's tests (sync and
async twins)."""

from __future__ import annotations

import re
import socket
import threading
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSRequest

ITEM = b'{"Item":{"pk":{"S":"A#1"},"n":{"N":"7"}}}'
#: Responses a DynamoDB endpoint may send: framed by Content-Length, chunked, and closing.
RESPONSES = {
    "content-length": b"HTTP/1.1 200 OK\r\nx-amzn-RequestId: r1\r\nContent-Type: "
    b"application/x-amz-json-1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(ITEM), ITEM),
    "chunked": b"HTTP/1.1 200 OK\r\nx-amzn-RequestId: r2\r\nTransfer-Encoding: chunked\r\n"
    b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n10\r\n"
    + ITEM[:16]
    + b"\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(ITEM) - 16, ITEM[16:]),
    "close": b"HTTP/1.1 200 OK\r\nx-amzn-RequestId: r3\r\nConnection: close\r\n\r\n" + ITEM,
}
VOLATILE = re.compile(rb"^(X-Amz-Date|Authorization|amz-sdk-invocation-id): .*$", re.M | re.I)


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


def prepared(
    url: str, method: str = "POST", stream_output: bool = False, **headers: Any
) -> AWSPreparedRequest:
    """A prepared request as botocore makes them, with extra ``headers``."""
    fields = {"Content-Type": "application/x-amz-json-1.0", "User-Agent": "ua", **headers}
    prepared = AWSRequest(method=method, url=url, headers=fields, data=b"{}").prepare()
    prepared.stream_output = stream_output
    return prepared


def assert_same_requests_and_answers(
    server: RawServer, answers: dict[str, list[Any]]
) -> list[tuple[Any, Any]]:
    """The server got four requests alike, byte for byte but the volatile headers (two with
    the exchange on, ``answers["1"]``, two with it off, ``answers["0"]``), and each answer with
    it on equals the one with it off; returns their (on, off) ``HTTPHeaders``, set apart (and
    compared by value here)."""
    assert len(server.requests) == 4
    masked = [VOLATILE.sub(rb"\1: -", request) for request in server.requests]
    assert masked[0] == masked[1] == masked[2] == masked[3]
    assert masked[0].startswith(b"POST / HTTP/1.1\r\nHost: 127.0.0.1:")
    headers = []
    for on, off in zip(answers["1"], answers["0"], strict=True):
        pair = (
            on["ResponseMetadata"].pop("HTTPHeaders"),
            off["ResponseMetadata"].pop("HTTPHeaders"),
        )
        assert on == off
        assert on["Item"] == {"pk": {"S": "A#1"}, "n": {"N": "7"}}
        assert dict(pair[0]) == dict(pair[1])
        headers.append((pair[0], pair[1]))
    return headers
