"""HTTP/1.1 by hand: one POST written to, and its response read from, a pooled connection.

The direct transport's sync exchange used urllib3's ``urlopen``, and for a small DynamoDB call
that path cost more client CPU than everything else the transport does together: header
validation per ``putheader``, ``http.client`` parsing the response head with the ``email``
package, urllib3's response object and its header dictionary, botocore's ``HeadersDict``
around that. This room writes the same bytes urllib3 writes (request line, ``Host`` and
``Accept-Encoding: identity`` as ``http.client`` puts them, then the caller's headers in
order) in one ``sendall`` and reads the response with ``bytes.find`` and ``split``.

What a response may be is what RFC 9112 allows a server to answer a POST: a body framed by
``Content-Length``, by ``Transfer-Encoding: chunked``, or by closing the connection; interim
``1xx`` responses before the final one; ``Connection: close`` or HTTP/1.0 without keep-alive.
A malformed or short response raises ``http.client``'s own exceptions (``BadStatusLine``,
``RemoteDisconnected``, ``IncompleteRead``, ``LineTooLong``), which the caller maps as urllib3
maps them. Connections, TLS, timeouts and pools stay urllib3's: this room only sees a socket.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from http.client import BadStatusLine, IncompleteRead, LineTooLong, RemoteDisconnected
from typing import Any

__all__ = ["Headers", "Response", "http_host", "read_response", "request_head"]

_CHUNK = 65536
_MAX_HEAD = 65536  # http.client allows 100 header lines of up to 64 KiB; a response head
# of DynamoDB's is under 1 KiB, anything near this limit is not a DynamoDB endpoint
_NO_BODY = (204, 304)

Receive = Callable[[int], bytes]


class Headers(dict[str, str]):
    """Response headers: names lowercased (as botocore's ``ResponseMetadata`` shows them),
    read case-insensitively (as botocore's ``HeadersDict`` is read)."""

    __slots__ = ()

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dict.__contains__(self, name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return dict.get(self, name.lower(), default)


class Response:
    """A response read whole: status, headers, body, and whether the connection may be
    reused for the next request."""

    __slots__ = ("body", "headers", "reusable", "status")

    def __init__(self, status: int, headers: Headers, body: bytes, reusable: bool) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.reusable = reusable


def http_host(host: str, port: int | None, default_port: int) -> str:
    """The ``Host`` value ``http.client`` writes for a connection to ``host``:``port``."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 literal
    if port is None or port == default_port:
        return host
    return f"{host}:{port}"


_IDENTITY = (("Accept-Encoding", "identity"),)


def writable(request: Any) -> bool:
    """Whether ``request`` (botocore's prepared request) is one an exchange here may write and
    read itself, as far as its request line, body and response go: a ``POST`` of ``bytes``
    whose response is read whole (not streamed), with no per-request read timeout (an
    exchange reads with its session's). Its headers and URL are each exchange's to check."""
    context = getattr(request, "context", None) or {}
    return (
        type(request.body) is bytes
        and request.method == "POST"
        and not request.stream_output
        and context.get("read_timeout") is None
    )


def plain_headers(
    headers: Any, required: frozenset[str], refused: frozenset[str], ascii_only: bool
) -> dict[str, str] | None:
    """``headers`` (botocore's, values as ``str`` or ``bytes``) as the ``str`` values an
    exchange writes itself (``bytes`` decoded latin-1, which :func:`request_head` encodes back
    to the same bytes); None when the HTTP library it stands in for would write more or other:
    a name that is not ``str``, a value neither ``str`` nor ``bytes`` (with ``ascii_only``,
    either not ASCII), a name given twice (in two cases), a ``required`` name missing, a
    ``refused`` one present (names lowercased)."""
    plain = {}
    for name, value in headers.items():
        if type(value) is bytes:
            value = value.decode("latin-1")
        elif type(value) is not str:
            return None
        if type(name) is not str or (ascii_only and not (name.isascii() and value.isascii())):
            return None
        plain[name] = value
    names = {name.lower() for name in plain}
    if len(names) != len(plain) or not names >= required or not names.isdisjoint(refused):
        return None
    return plain


def request_head(
    host: str,
    headers: Mapping[str, str],
    first: Sequence[tuple[str, str]] = _IDENTITY,
    last: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The request line and headers of ``POST /``: ``Host``, then ``first``, ``headers`` and
    ``last`` in order. The defaults are what urllib3 writes (``http.client`` puts
    ``Accept-Encoding: identity`` after ``Host``); ``headers`` must hold ``Content-Length``
    and ``User-Agent``, as the transport's always do."""
    lines = [f"POST / HTTP/1.1\r\nHost: {host}\r\n"]
    for name, value in (*first, *headers.items(), *last):
        if "\n" in value or "\r" in value or "\n" in name or "\r" in name or ":" in name:
            # http.client refuses these too: they would split the request
            raise ValueError(f"Invalid header {name!r}: {value!r}")
        lines.append(f"{name}: {value}\r\n")
    lines.append("\r\n")
    return "".join(lines).encode("latin-1")


def read_response(receive: Receive) -> Response:
    """Read one response with ``receive(n)`` (a socket's ``recv``: up to ``n`` bytes, ``b""``
    once the peer has closed)."""
    data = receive(_CHUNK)
    if not data:
        raise RemoteDisconnected("Remote end closed connection without response")
    while True:
        head, data = _until(receive, data, b"\r\n\r\n", "response head")
        status, version, headers = _parse_head(head)
        if not 100 <= status < 200:
            break
        if not data:  # the final response follows an interim one
            data = receive(_CHUNK)
            if not data:
                raise RemoteDisconnected("Remote end closed connection after an interim response")
    reusable = _keeps_alive(version, headers.get("connection"))
    if status in _NO_BODY:
        return Response(status, headers, b"", reusable and not data)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body, extra = _chunked(receive, data)
        return Response(status, headers, body, reusable and not extra)
    length = headers.get("content-length")
    if length is None:  # framed by the connection closing
        return Response(status, headers, _until_closed(receive, data), False)
    size = _content_length(length)
    if len(data) >= size:
        return Response(status, headers, data[:size], reusable and len(data) == size)
    return Response(status, headers, _exactly(receive, data, size), reusable)


def _until(receive: Receive, data: bytes, mark: bytes, what: str) -> tuple[bytes, bytes]:
    """(the bytes before ``mark``, the bytes after it), reading until ``mark`` arrives (the
    blank line ending a head, the line end of a chunk size); ``what`` names it in errors."""
    end = data.find(mark)
    while end < 0:
        if len(data) > _MAX_HEAD:
            raise LineTooLong(what)
        more = receive(_CHUNK)
        if not more:
            raise IncompleteRead(data)
        start = max(0, len(data) - len(mark) + 1)  # the mark may straddle the two reads
        data += more
        end = data.find(mark, start)
    return data[:end], data[end + len(mark) :]


def _parse_head(head: bytes) -> tuple[int, bytes, Headers]:
    lines = head.split(b"\r\n")
    status_line = lines[0]
    version, _, rest = status_line.partition(b" ")
    code = rest[:3]
    if (
        version not in (b"HTTP/1.1", b"HTTP/1.0")
        or len(code) != 3
        or not code.isdigit()
        or rest[3:4] not in (b"", b" ")
    ):
        raise BadStatusLine(status_line.decode("latin-1"))
    headers = Headers()
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            if line[:1] in (b" ", b"\t") and headers:  # an obsolete folded continuation
                last = next(reversed(headers))
                dict.__setitem__(headers, last, f"{headers[last]} {line.strip().decode('latin-1')}")
                continue
            raise BadStatusLine(f"malformed header line {line.decode('latin-1')!r}")
        key = name.decode("latin-1").lower()
        text = value.strip(b" \t").decode("latin-1")
        previous = dict.get(headers, key)
        # urllib3's HTTPHeaderDict joins a repeated header's values with ", "
        dict.__setitem__(headers, key, text if previous is None else f"{previous}, {text}")
    return int(code), version, headers


def _keeps_alive(version: bytes, connection: str | None) -> bool:
    tokens = {t.strip() for t in connection.lower().split(",")} if connection else set()
    if version == b"HTTP/1.1":
        return "close" not in tokens
    return "keep-alive" in tokens


def _content_length(text: str) -> int:
    values = {v.strip() for v in text.split(",")}
    if len(values) != 1 or not next(iter(values)).isdigit():
        raise BadStatusLine(f"invalid Content-Length {text!r}")
    return int(values.pop())


def _exactly(receive: Receive, data: bytes, size: int) -> bytes:
    parts = [data]
    got = len(data)
    while got < size:
        more = receive(min(size - got, 1 << 20))
        if not more:
            raise IncompleteRead(b"".join(parts), size - got)
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _until_closed(receive: Receive, data: bytes) -> bytes:
    parts = [data]
    while True:
        more = receive(_CHUNK)
        if not more:
            return b"".join(parts)
        parts.append(more)


def _chunked(receive: Receive, data: bytes) -> tuple[bytes, bytes]:
    """(the body of a chunked response, any bytes after its end)."""
    parts: list[bytes] = []
    while True:
        line, data = _until(receive, data, b"\r\n", "chunk size")
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise IncompleteRead(b"".join(parts)) from None
        if size == 0:
            while True:  # trailers, up to the blank line that ends the message
                trailer, data = _until(receive, data, b"\r\n", "trailer")
                if not trailer:
                    return b"".join(parts), data
        if len(data) < size + 2:
            data = _exactly(receive, data, size + 2)
        if data[size : size + 2] != b"\r\n":
            raise IncompleteRead(b"".join(parts))
        parts.append(data[:size])
        data = data[size + 2 :]
