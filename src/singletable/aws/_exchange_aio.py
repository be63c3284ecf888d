"""singletable's HTTP exchange under aiobotocore's pipeline: the async twin of
:mod:`singletable.aws.exchange`.

``AsyncRepository.connect()`` creates its client with ``http_session_cls=``:class:`HTTPSession`
(an ``AioConfig`` option): aiobotocore's own ``AIOHTTPSession``, whose ``send`` writes the
request and reads the response on a connection of **that session's** aiohttp connector (its
limits, keep-alive, timeouts and TLS context) with the direct transport's async exchange
(:class:`._direct_aiohttp.Exchange`), instead of ``ClientSession.request``, and raises
botocore's exceptions as ``AIOHTTPSession.send`` does. Everything before and after the send
stays aiobotocore's: parameters, serialisation, every event hook, signing, endpoint rules,
retries and their CRC32 check, parsing (or the fast path), error classes; entering and closing
the client open and close the session as before.

It hands a request to ``AIOHTTPSession.send`` when it does not cover it: not a ``POST`` to the
endpoint's root, a streamed response, a body that is not ``bytes``, a per-request read
timeout, a header name or value that is not ASCII text, a name given twice, a request without
``Content-Length``, ``Content-Type`` or ``User-Agent`` or with a header aiohttp writes or
reads itself (``Host``, ``Accept``, ``Accept-Encoding``, ``Connection``, ``Cookie``,
``Expect``, ``Transfer-Encoding``), an endpoint behind a proxy, a session with cookies, trace
configs (OpenTelemetry's aiohttp instrumentation) or middlewares, an aiohttp outside the
exchange's verified range. ``SINGLETABLE_EXCHANGE=0`` turns it off (read on every request).

Two differences, where DynamoDB never goes: ``ClientSession.request`` follows a redirect
(``3xx`` with ``Location``), which the exchange returns, as botocore's urllib3 session does;
and it keeps a cookie a response sets, which the exchange does not.
"""

from __future__ import annotations

from typing import Any

from aiobotocore.config import AioConfig
from aiobotocore.httpsession import AIOHTTPSession
from botocore.awsrequest import HeadersDict
from botocore.config import Config

from ._direct_aiohttp import Sessions
from ._http1 import plain_headers, writable
from ._switches import EXCHANGE, switch_on

__all__ = ["HTTPSession", "aio_config"]

# aiohttp writes these itself, or reads them to decide how to send (a cookie jar, 100-continue,
# chunked framing, keep-alive): a request holding one goes to aiohttp
_OWN_HEADERS = frozenset(
    {
        "host",
        "accept",
        "accept-encoding",
        "connection",
        "cookie",
        "expect",
        "transfer-encoding",
    }
)
# without them aiohttp writes its own (a payload's Content-Type among them)
_REQUIRED = frozenset({"content-length", "content-type", "user-agent"})


class HTTPSession(AIOHTTPSession):
    """aiobotocore's HTTP session, sending with singletable's exchange when it covers a
    request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._exchange_sessions = Sessions(self)

    async def send(self, request: Any) -> Any:
        """The response to ``request`` (body read), by singletable's exchange when it covers
        it, else by ``AIOHTTPSession.send``."""
        headers = _plain(request.headers) if writable(request) and switch_on(EXCHANGE) else None
        if headers is not None:
            url = request.url
            target = self._exchange_sessions.route(url)
            if target is not None:
                response = await self._exchange_sessions.exchange(
                    url, target, headers, request.body
                )
                # as AioAWSResponse holds them (botocore's reads Date as "Date")
                response.headers = HeadersDict(response.headers)
                return response
        return await super().send(request)


def _plain(headers: Any) -> dict[str, str] | None:
    """``headers`` as the values aiohttp would write after its own ``Host``, with
    ``Accept-Encoding: identity`` and ``Accept: */*`` after them; None when aiohttp would
    write more or other (see the module's docstring)."""
    return plain_headers(headers, _REQUIRED, _OWN_HEADERS, ascii_only=True)


def aio_config(config: Any) -> Any:
    """``config`` (a botocore ``Config``, aiobotocore's ``AioConfig`` or None) sending with
    :class:`HTTPSession`; unchanged when it names an HTTP session class of its own, and on an
    aiobotocore outside the fast path's verified range."""
    from ..errors import InvalidRequestError
    from . import fastpath

    if config is not None and not isinstance(config, Config):
        raise InvalidRequestError(
            f"exchange.aio_config: config must be a botocore Config or an AioConfig, not "
            f"{type(config).__name__}"
        )
    if not fastpath.aiobotocore_verified():
        return config
    # what Config.merge reads: the options given when the config was made
    options: dict[str, Any] = getattr(config, "_user_provided_options", {})
    if "http_session_cls" in options:
        return config
    return AioConfig(**{**options, "http_session_cls": HTTPSession})
