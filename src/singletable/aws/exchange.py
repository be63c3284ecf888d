"""singletable's HTTP exchange under botocore's pipeline.

A small DynamoDB call through botocore spends more client CPU in urllib3's ``urlopen`` than in
anything else of its own (measured on a keep-alive endpoint: about a third of a PutItem's
client CPU; docs/performance.md, "Default transport"). :func:`install` gives a client's
endpoint an :class:`HTTPSession`: botocore's own HTTP session (``URLLib3Session``) whose
``send`` writes the request and reads the response with :mod:`._http1` on **that session's**
urllib3 pool (its timeouts, ``max_pool_connections``, CA bundle, client certificate, TLS and
TCP options; :class:`._direct_urllib3.Pools`, the direct transport's sync exchange), and raises
botocore's exceptions as ``URLLib3Session.send`` does. Everything before and after the send
stays botocore's: parameters, serialisation, every event hook (``before-send`` handlers such as
moto's in-process mock still answer first: the session is only asked when none did), signing,
endpoint rules, retries and their CRC32 check, parsing (or the fast path), error classes.

It hands a request to ``URLLib3Session.send`` (the session it wraps) when it does not cover
it: not a ``POST`` to the endpoint's root, a streamed response, a body that is not ``bytes``, a
header value that is neither ``str`` nor ``bytes``, a name given twice, a request without
``Content-Length`` or ``User-Agent`` or with its own ``Host``, ``Accept-Encoding``,
``Transfer-Encoding`` or ``Expect``, and an endpoint behind a proxy.

What changes, seen from outside: urllib3's ``urlopen`` does not run, so instrumentation of
urllib3 (an OpenTelemetry urllib3 span per request) and botocore's HTTP-session debug log lines
do not see these requests. ``SINGLETABLE_EXCHANGE=0`` turns it off (read on every request);
:func:`install` does nothing on a botocore outside the fast path's verified range.

The async twin's client (``AsyncRepository.connect()``) gets the same under aiobotocore's
pipeline: its HTTP session class is a subclass of aiobotocore's ``AIOHTTPSession`` whose
``send`` writes and reads on a connection of that session's aiohttp connector with the direct
transport's async exchange, for the requests it covers (the rules are aiohttp's, in
``singletable.aws._exchange_aio``); the same switch turns it off, and :func:`aio_config` gives
an aiobotocore client of your own the same.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ._direct_urllib3 import Pools
from ._http1 import plain_headers, writable
from ._switches import EXCHANGE, switch_on

if TYPE_CHECKING:
    from botocore.awsrequest import AWSPreparedRequest, AWSResponse
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = [
    "HTTPSession",
    "aio_config",
    "enabled",
    "install",
    "is_installed",
    "uninstall",
]

# urllib3 writes these itself when a request holds none (and leaves its own out when it does);
# with Expect, botocore's connection waits for 100 Continue before it sends the body
_OWN_HEADERS = frozenset({"host", "accept-encoding", "transfer-encoding", "expect"})
# without them urllib3 (http.client) writes its own
_REQUIRED = frozenset({"content-length", "user-agent"})


def enabled() -> bool:
    """False when ``SINGLETABLE_EXCHANGE`` is switched off (``0``), else True."""
    return switch_on(EXCHANGE)


class HTTPSession:
    """botocore's HTTP session of one client, sending with singletable's exchange; every
    other attribute is the wrapped session's."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self._pools = Pools(wrapped)

    def send(self, request: AWSPreparedRequest) -> AWSResponse:
        """The response to ``request``, by singletable's exchange when it covers it."""
        headers = _plain(request.headers) if writable(request) and enabled() else None
        if headers is not None:
            url = request.url
            route = self._pools.route(url)
            if route is not None:
                return self._pools.exchange(route, url, headers, request.body)  # type: ignore[arg-type]
        return self.wrapped.send(request)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        if name == "wrapped":  # not set yet (a copy being made): no recursion through it
            raise AttributeError(name)
        return getattr(self.wrapped, name)


def _plain(headers: Any) -> dict[str, str] | None:
    """``headers`` as the values urllib3 would write after its own ``Host`` and
    ``Accept-Encoding: identity``, or None when urllib3 would write more or other."""
    return plain_headers(headers, _REQUIRED, _OWN_HEADERS, ascii_only=False)


def install(client: DynamoDBClient) -> None:
    """Send ``client``'s requests with singletable's exchange (idempotent; only this client's
    endpoint changes). Does nothing on a botocore outside the fast path's verified range, nor
    for an aiobotocore client (its HTTP session is aiohttp's)."""
    from . import fastpath

    if is_installed(client) or not fastpath.botocore_verified():
        return
    if fastpath.aiobotocore_version(client) is not None:
        return
    endpoint = client._endpoint  # type: ignore[attr-defined]
    endpoint.http_session = HTTPSession(endpoint.http_session)


def aio_config(config: Any = None) -> Any:
    """An aiobotocore ``AioConfig`` for a client of your own that sends with singletable's
    exchange, as ``AsyncRepository.connect()``'s does: ``config`` (a botocore ``Config`` or an
    ``AioConfig``; default: none) naming the exchange's HTTP session class. ``config`` comes
    back as it is when it names an HTTP session class of its own, and on an aiobotocore
    outside the fast path's verified range. Needs aiobotocore (``singletable[async]``)."""
    from . import _exchange_aio

    return _exchange_aio.aio_config(config)


def uninstall(client: DynamoDBClient) -> None:
    """Give ``client``'s HTTP exchange back to botocore (no-op if not installed)."""
    endpoint = client._endpoint  # type: ignore[attr-defined]
    if isinstance(endpoint.http_session, HTTPSession):
        endpoint.http_session = endpoint.http_session.wrapped


def is_installed(client: Any) -> bool:
    """Whether ``client`` sends with singletable's exchange: :func:`install` on a botocore
    client, or an aiobotocore client that ``AsyncRepository.connect()`` created."""
    session = client._endpoint.http_session
    if isinstance(session, HTTPSession):
        return True
    twin = sys.modules.get("singletable.aws._exchange_aio")  # imported with aiobotocore only
    return twin is not None and isinstance(session, twin.HTTPSession)
