"""The direct transport's sync HTTP exchange: one request on the botocore client's own urllib3
pool, with botocore's exceptions.

botocore's ``URLLib3Session.send`` works out per request what is fixed per endpoint (the proxy,
the pool, the TLS settings of the connection, the request target) and sends through urllib3's
``urlopen``, whose request and response handling cost more than the rest of a small call.
:class:`Pools` works out the fixed part once per endpoint URL (with botocore's own session:
the same ``PoolManager``, the same ``_setup_ssl_cert``) and, on a connection taken from that
pool and connected by urllib3 (TCP options, timeouts, TLS), writes the request and reads the
response with :mod:`._http1`. Failures become botocore's exceptions exactly as
``URLLib3Session.send`` maps urllib3's, so its retry handler sees the same classes. An
endpoint behind a proxy is sent by ``URLLib3Session.send`` itself.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Mapping
from concurrent.futures import CancelledError
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
    SSLError,
)
from urllib3.exceptions import ClosedPoolError, NewConnectionError, ProtocolError
from urllib3.exceptions import ConnectTimeoutError as URLLib3ConnectTimeoutError
from urllib3.exceptions import ReadTimeoutError as URLLib3ReadTimeoutError
from urllib3.exceptions import SSLError as URLLib3SSLError
from urllib3.util.timeout import Timeout

from ._http1 import http_host, read_response, request_head

__all__ = ["Pools", "ReadResponse"]

_MAX_CACHED = 64


class ReadResponse(AWSResponse):
    """botocore's ``AWSResponse`` around a body already read (headers as :mod:`._http1`
    read them: lowercase names, case-insensitive reads, like botocore's ``HeadersDict``)."""

    def __init__(self, url: str, status_code: int, headers: Any, content: bytes) -> None:
        self.url = url
        self.status_code = status_code
        self.headers = headers
        self.raw = None
        self._content = content


class Route:
    """One endpoint URL's pool and what every request to it shares."""

    __slots__ = ("connect_timeout", "host", "pool", "read_timeout")

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.host = http_host(pool.host, pool.port, type(pool).ConnectionCls.default_port)
        timeout = pool.timeout
        self.connect_timeout = Timeout.resolve_default_timeout(timeout.connect_timeout)
        self.read_timeout = Timeout.resolve_default_timeout(timeout.read_timeout)


class _SendFailed(Exception):
    """Writing the request failed: urllib3 reports it as a closed connection, whatever the
    socket said (a timeout included)."""


class Pools:
    """The urllib3 connection pool of each endpoint URL, from one botocore HTTP session."""

    def __init__(self, http_session: Any) -> None:
        self._session = http_session
        self._routes: dict[str, Route | None] = {}

    def route(self, url: str) -> Route | None:
        """``url``'s pool, set up as botocore sets it up per request; None behind a proxy or
        for a URL other than an endpoint's root (:mod:`._http1` writes ``POST /``)."""
        try:
            return self._routes[url]
        except KeyError:
            session = self._session
            route = None
            parts = urlsplit(url)
            root = parts.path in ("", "/") and not parts.query
            if root and not session._proxy_config.proxy_url_for(url):
                pool = session._get_connection_manager(url).connection_from_url(url)
                session._setup_ssl_cert(pool, url, session._verify)
                route = Route(pool)
            if len(self._routes) >= _MAX_CACHED:
                self._routes.clear()
            self._routes[url] = route
            return route

    def send(self, url: str, headers: Mapping[str, str], body: bytes) -> AWSResponse:
        """One POST of ``body`` to ``url`` (path ``/``); botocore's response or exception."""
        route = self.route(url)
        if route is None:
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            return self._session.send(request)  # type: ignore[no-any-return]
        return self.exchange(route, url, headers, body)

    def exchange(
        self, route: Route, url: str, headers: Mapping[str, str], body: bytes
    ) -> AWSResponse:
        """One POST of ``body`` to ``url`` on ``route``'s pool; botocore's response or exception."""
        try:
            message = request_head(route.host, headers) + body  # raises as http.client would
            try:
                return _exchange(route, url, message)
            except ClosedPoolError:  # evicted from the manager: nothing was sent, send again
                self._routes.pop(url, None)
                again = self.route(url)
                assert again is not None
                return _exchange(again, url, message)
        except (URLLib3SSLError, ssl.CertificateError) as e:
            raise SSLError(endpoint_url=url, error=e) from e
        except (NewConnectionError, socket.gaierror) as e:
            raise EndpointConnectionError(endpoint_url=url, error=e) from e
        except URLLib3ConnectTimeoutError as e:
            raise ConnectTimeoutError(endpoint_url=url, error=e) from e
        except (URLLib3ReadTimeoutError, TimeoutError) as e:
            raise ReadTimeoutError(endpoint_url=url, error=e) from e
        except ssl.SSLError as e:  # urllib3 reports a TLS read that timed out as a timeout
            if "timed out" in str(e):
                raise ReadTimeoutError(endpoint_url=url, error=e) from e
            raise SSLError(endpoint_url=url, error=e) from e
        except (_SendFailed, ProtocolError, HTTPException, OSError) as e:
            error = e.__cause__ if isinstance(e, _SendFailed) else e
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            raise ConnectionClosedError(error=error, request=request, endpoint_url=url) from e
        except CancelledError:
            raise
        except Exception as e:
            raise HTTPClientError(error=e) from e


def _exchange(route: Route, url: str, message: bytes) -> ReadResponse:
    """Send ``message`` on a connection of ``route``'s pool and read the response; the
    connection goes back to the pool (closed unless the response leaves it reusable)."""
    pool = route.pool
    conn = pool._get_conn()
    try:
        if conn.sock is None:
            conn.timeout = route.connect_timeout
            conn.connect()
        pool._validate_conn(conn)  # HTTPS: urllib3's warning for an unverified connection
        sock = conn.sock
        sock.settimeout(route.read_timeout)
        try:
            sock.sendall(message)
        except (BrokenPipeError, ConnectionResetError):
            pass  # as urllib3: the server may have answered before closing; read that
        except ssl.SSLError:
            raise
        except OSError as e:
            raise _SendFailed() from e
        response = read_response(sock.recv)
    except BaseException:
        conn.close()
        pool._put_conn(conn)
        raise
    if not response.reusable:
        conn.close()
    pool._put_conn(conn)
    return ReadResponse(url, response.status, response.headers, response.body)
