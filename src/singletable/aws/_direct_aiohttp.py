"""The direct transport's async HTTP exchange: one request on the aiobotocore client's own
aiohttp session, with aiobotocore's exceptions.

aiobotocore's ``AIOHTTPSession.send`` rebuilds per request what is fixed per endpoint (the
proxy, the parsed URL, a case-insensitive copy of the headers) and wraps the answer twice.
:class:`Sessions` sends with the same ``ClientSession`` (``_get_session``: the connector,
timeouts and TLS context aiobotocore configured), the same ``Accept-Encoding: identity``
header, reads the body and maps aiohttp's exceptions to botocore's exactly as
``AIOHTTPSession.send`` does. Behind a proxy, or with another HTTP backend (httpx),
aiobotocore's own ``send`` is used.

``ClientSession.request`` costs more client CPU than the rest of a small call (a request
object, its writer task, timers, cookie and header merging). For a session as aiobotocore
makes it (no middlewares, trace configs, default headers, base URL or cookies) on an aiohttp
this module is verified on (:data:`VERIFIED_AIOHTTP`), :class:`Exchange` takes a connection
from the session's connector (its limits, keep-alive and TLS context), writes the request
bytes ``request`` would write and reads the response through the connection's own protocol
(aiohttp's parser, the session's read timeout), as ``ClientResponse.start`` does.
"""

from __future__ import annotations

import asyncio
import socket
from concurrent.futures import CancelledError
from typing import Any

import aiohttp
from aiobotocore.awsrequest import AioAWSResponse
from aiobotocore.httpsession import AIOHTTPSession
from aiohttp import (
    ClientConnectionError,
    ClientConnectorError,
    ClientSSLError,
    ServerDisconnectedError,
    ServerTimeoutError,
)
from aiohttp.client_exceptions import ClientOSError, ClientResponseError
from aiohttp.client_reqrep import ClientRequest
from aiohttp.http_exceptions import HttpProcessingError
from botocore.awsrequest import AWSPreparedRequest
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
    SSLError,
)
from yarl import URL

from ._http1 import Headers, http_host, request_head

__all__ = ["VERIFIED_AIOHTTP", "Exchange", "Sessions"]

VERIFIED_AIOHTTP: tuple[tuple[int, int], tuple[int, int]] = ((3, 14), (3, 15))
"""aiohttp releases :class:`Exchange` is verified on (from, up to but excluding): it uses the
connector's ``connect`` and the response protocol's ``set_response_params`` and ``read``."""

_ACCEPT = (("Accept", "*/*"),)
_CONNECT_TIMEOUT: type[Exception] = getattr(aiohttp, "ConnectionTimeoutError", ServerTimeoutError)


class ReadResponse(AioAWSResponse):
    """aiobotocore's response around a body already read (``await content`` returns it);
    headers as :class:`._http1.Headers` (names lowercased as aiobotocore lowercases them,
    read case-insensitively as botocore's ``HeadersDict`` is read)."""

    def __init__(self, url: str, status_code: int, headers: Any, content: bytes) -> None:
        self.url = url
        self.status_code = status_code
        self.headers = headers
        self.raw = None
        self._content = content


def _headers(raw: Any) -> Headers:
    """A response's raw header lines as aiobotocore reads them: names lowercased, UTF-8, a
    repeated header keeping its last value."""
    return Headers((k.decode("utf-8").lower(), v.decode("utf-8")) for k, v in raw)


def _verified(version: str) -> bool:
    try:
        release = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    low, high = VERIFIED_AIOHTTP
    return low <= release < high


_AIOHTTP_VERIFIED = _verified(aiohttp.__version__)


def _plain(session: Any) -> bool:
    """Whether ``session`` adds nothing to a request beyond what :class:`Exchange` writes
    (as aiobotocore makes it: none of these is set)."""
    return (
        _AIOHTTP_VERIFIED
        and not getattr(session, "_middlewares", None)
        and not getattr(session, "_trace_configs", None)
        and not getattr(session, "_default_headers", None)
        and getattr(session, "_base_url", None) is None
        and getattr(session, "_default_auth", None) is None
        and getattr(session, "_default_proxy", None) is None
        and getattr(session, "_raise_for_status", True) is False
        and getattr(session, "_auto_decompress", True) is False
    )


class Exchange:
    """One endpoint URL on one ``ClientSession``: a request written and its response read on
    a connection of the session's connector."""

    __slots__ = ("_request", "_session", "_threshold", "_timeout", "host", "url")

    def __init__(self, session: Any, url: URL) -> None:
        self._session = session
        self.url = url
        default_port = 443 if url.scheme == "https" else 80
        self.host = http_host(url.raw_host or "", url.port, default_port)
        # What the connector reads of a request: host, port, TLS, proxy (none), the pool key
        self._request = ClientRequest("POST", url, loop=session._loop, ssl=True)
        self._timeout = session.timeout
        self._threshold = session.connector._timeout_ceil_threshold

    async def send(self, headers: dict[str, str], body: bytes) -> tuple[int, Headers, bytes]:
        """(status, headers, body) of one POST; aiohttp's exceptions as ``request`` raises
        them."""
        session = self._session
        if len(session.cookie_jar):  # a cookie to send: request() sends it (DynamoDB sets none)
            raise _NotPlain()
        # What request() writes: Host, the headers in order, then its automatic Accept
        message = request_head(self.host, headers, first=(), last=_ACCEPT)
        try:
            conn = await session.connector.connect(self._request, [], self._timeout)
        except asyncio.TimeoutError as exc:
            raise _CONNECT_TIMEOUT(f"Connection timeout to host {self.url}") from exc
        try:
            protocol, transport = conn.protocol, conn.transport
            if protocol is None or transport is None or transport.is_closing():
                raise ClientOSError(None, "Cannot write to closing transport")
            protocol.set_response_params(
                read_until_eof=True,
                auto_decompress=False,
                read_timeout=self._timeout.sock_read,
                timeout_ceil_threshold=self._threshold,
            )
            transport.write(message + body)
            while True:
                try:
                    response, payload = await protocol.read()
                except HttpProcessingError as exc:  # as ClientResponse.start reports it
                    raise ClientResponseError(
                        self._request.request_info, (), status=exc.code, message=exc.message,
                        headers=exc.headers,
                    ) from exc  # fmt: skip
                if not 100 <= response.code <= 199 or response.code == 101:
                    break
            content = await payload.read()
        except BaseException:
            conn.close()
            raise
        if response.should_close or protocol.should_close:
            conn.close()
        else:
            conn.release()
        return response.code, _headers(response.raw_headers), content


class _NotPlain(Exception):
    """The session has something :class:`Exchange` would not send (cookies): use
    ``ClientSession.request``."""


class Sessions:
    """Sends through one aiobotocore HTTP session's aiohttp ``ClientSession``."""

    def __init__(self, http_session: Any) -> None:
        self._session = http_session
        self._urls: dict[str, URL | None] = {}
        self._exchanges: dict[tuple[int, str], Exchange | None] = {}

    def _exchange(self, session: Any, url: str, target: URL) -> Exchange | None:
        key = (id(session), url)
        try:
            return self._exchanges[key]
        except KeyError:
            exchange = Exchange(session, target) if _plain(session) else None
            if len(self._exchanges) >= 64:
                self._exchanges.clear()
            self._exchanges[key] = exchange
            return exchange

    def route(self, url: str) -> URL | None:
        """``url`` parsed, if this module sends to it: an aiohttp session of aiobotocore's
        (not httpx), no proxy for it, no path or query beyond ``/``; else None."""
        try:
            return self._urls[url]
        except KeyError:
            target = None
            session: Any = self._session
            of_aiohttp = isinstance(session, AIOHTTPSession)  # (not httpx's)
            if of_aiohttp and not session._proxy_config.proxy_url_for(url):
                parsed = URL(url, encoded=True)
                if parsed.raw_path in ("", "/") and not parsed.raw_query_string:
                    target = parsed
            if len(self._urls) >= 64:
                self._urls.clear()
            self._urls[url] = target
            return target

    async def send(self, url: str, headers: dict[str, str], body: bytes) -> Any:
        """One POST of ``body`` to ``url``: aiobotocore's response (body read) or exception."""
        target = self.route(url)
        if target is None:
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            response = await self._session.send(request)
            await response.content
            return response
        return await self.exchange(url, target, headers, body)

    async def exchange(self, url: str, target: URL, headers: dict[str, str], body: bytes) -> Any:
        """One POST of ``body`` to ``url`` (``target``, from :meth:`route`) on the session's
        aiohttp ``ClientSession``: aiobotocore's response (body read) or exception, as
        ``AIOHTTPSession.send`` returns and raises them."""
        headers["Accept-Encoding"] = "identity"  # as aiobotocore sends it (botocore#1255)
        try:
            session = await self._session._get_session(None)
            exchange = self._exchange(session, url, target)
            if exchange is not None:
                try:
                    status, received, content = await exchange.send(headers, body)
                except _NotPlain:
                    pass
                else:
                    return ReadResponse(url, status, received, content)
            response = await session.request(
                "POST", url=target, chunked=None, headers=headers, data=body, proxy=None,
                proxy_headers={},
            )  # fmt: skip
            content = await response.read()
        except ClientSSLError as e:
            raise SSLError(endpoint_url=url, error=e) from e
        except (ServerDisconnectedError, aiohttp.ClientPayloadError) as e:
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            raise ConnectionClosedError(error=e, request=request, endpoint_url=url) from e
        except aiohttp.http_exceptions.BadStatusLine as e:
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            raise ConnectionClosedError(error=e, request=request, endpoint_url=url) from e
        except ServerTimeoutError as e:
            if str(e).lower().startswith("connect"):
                raise ConnectTimeoutError(endpoint_url=url, error=e) from e
            raise ReadTimeoutError(endpoint_url=url, error=e) from e
        except (ClientConnectorError, ClientConnectionError, socket.gaierror) as e:
            raise EndpointConnectionError(endpoint_url=url, error=e) from e
        except asyncio.TimeoutError as e:
            raise ReadTimeoutError(endpoint_url=url, error=e) from e
        except CancelledError:
            raise
        except Exception as e:
            raise HTTPClientError(error=e) from e
        return ReadResponse(
            str(response.url), response.status, _headers(response.raw_headers), content
        )
