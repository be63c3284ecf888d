"""The direct transport's sync HTTP exchange: one request on the botocore client's own urllib3
pool, with botocore's exceptions.

botocore's ``URLLib3Session.send`` works out per request what is fixed per endpoint (the proxy,
the pool, the TLS settings of the connection, the request target) and wraps the answer in an
``AWSResponse`` that reads the body again. :class:`Pools` does that once per endpoint URL (with
botocore's own session: the same ``PoolManager``, the same ``_setup_ssl_cert``), sends with the
very ``urlopen`` arguments botocore uses, and maps urllib3's exceptions to botocore's exactly
as ``URLLib3Session.send`` does, so its retry handler sees the same classes. An endpoint behind
a proxy is sent by ``URLLib3Session.send`` itself.
"""

from __future__ import annotations

import socket
from concurrent.futures import CancelledError
from typing import Any

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
from urllib3.util.retry import Retry

__all__ = ["Pools", "ReadResponse"]

_NO_RETRIES = Retry(False)
_MAX_CACHED = 64


class ReadResponse(AWSResponse):
    """botocore's ``AWSResponse`` around a body already read."""

    def __init__(self, url: str, status_code: int, headers: Any, content: bytes) -> None:
        super().__init__(url, status_code, headers, None)
        self._content = content


class Pools:
    """The urllib3 connection pool of each endpoint URL, from one botocore HTTP session."""

    def __init__(self, http_session: Any) -> None:
        self._session = http_session
        self._pools: dict[str, Any] = {}

    def pool(self, url: str) -> Any:
        """``url``'s pool, set up as botocore sets it up per request; None behind a proxy."""
        try:
            return self._pools[url]
        except KeyError:
            session = self._session
            pool = None
            if not session._proxy_config.proxy_url_for(url):
                pool = session._get_connection_manager(url).connection_from_url(url)
                session._setup_ssl_cert(pool, url, session._verify)
            if len(self._pools) >= _MAX_CACHED:
                self._pools.clear()
            self._pools[url] = pool
            return pool

    def send(self, url: str, headers: dict[str, str], body: bytes) -> AWSResponse:
        """One POST of ``body`` to ``url`` (path ``/``); botocore's response or exception."""
        pool = self.pool(url)
        if pool is None:
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            return self._session.send(request)  # type: ignore[no-any-return]
        try:
            try:
                response = _urlopen(pool, headers, body)
            except ClosedPoolError:  # evicted from the manager: nothing was sent, send again
                self._pools.pop(url, None)
                response = _urlopen(self.pool(url), headers, body)
            return ReadResponse(url, response.status, response.headers, response.data)
        except URLLib3SSLError as e:
            raise SSLError(endpoint_url=url, error=e) from e
        except (NewConnectionError, socket.gaierror) as e:
            raise EndpointConnectionError(endpoint_url=url, error=e) from e
        except URLLib3ConnectTimeoutError as e:
            raise ConnectTimeoutError(endpoint_url=url, error=e) from e
        except URLLib3ReadTimeoutError as e:
            raise ReadTimeoutError(endpoint_url=url, error=e) from e
        except ProtocolError as e:
            request = AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]
            raise ConnectionClosedError(error=e, request=request, endpoint_url=url) from e
        except CancelledError:
            raise
        except Exception as e:
            raise HTTPClientError(error=e) from e


def _urlopen(pool: Any, headers: dict[str, str], body: bytes) -> Any:
    return pool.urlopen(
        method="POST",
        url="/",
        body=body,
        headers=headers,
        retries=_NO_RETRIES,
        assert_same_host=False,
        preload_content=True,
        decode_content=False,
        chunked=False,
        enforce_content_length=False,
    )
