"""The direct transport's async HTTP exchange: one request on the aiobotocore client's own
aiohttp session, with aiobotocore's exceptions.

aiobotocore's ``AIOHTTPSession.send`` rebuilds per request what is fixed per endpoint (the
proxy, the parsed URL, a case-insensitive copy of the headers) and wraps the answer twice.
:class:`Sessions` sends with the same ``ClientSession`` (``_get_session``: the connector,
timeouts and TLS context aiobotocore configured), the same ``request`` arguments and the same
``Accept-Encoding: identity`` header, reads the body and maps aiohttp's exceptions to
botocore's exactly as ``AIOHTTPSession.send`` does. Behind a proxy, or with another HTTP
backend (httpx), aiobotocore's own ``send`` is used.
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

from ._http1 import Headers

__all__ = ["Sessions"]


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


class Sessions:
    """Sends through one aiobotocore HTTP session's aiohttp ``ClientSession``."""

    def __init__(self, http_session: Any) -> None:
        self._session = http_session
        self._urls: dict[str, URL | None] = {}

    def _url(self, url: str) -> URL | None:
        try:
            return self._urls[url]
        except KeyError:
            direct = type(self._session) is AIOHTTPSession
            if direct and self._session._proxy_config.proxy_url_for(url):
                direct = False
            target = self._urls[url] = URL(url, encoded=True) if direct else None
            return target

    async def send(self, url: str, headers: dict[str, str], body: bytes) -> Any:
        """One POST of ``body`` to ``url``: aiobotocore's response (body read) or exception."""
        target = self._url(url)
        if target is None:
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            response = await self._session.send(request)
            await response.content
            return response
        headers["Accept-Encoding"] = "identity"  # as aiobotocore sends it (botocore#1255)
        try:
            session = await self._session._get_session(None)
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
        received = Headers(
            (k.decode("utf-8").lower(), v.decode("utf-8")) for k, v in response.raw_headers
        )  # (a repeated header keeps its last value, as in aiobotocore)
        return ReadResponse(str(response.url), response.status, received, content)
