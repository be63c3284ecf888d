"""SigV4 signing of DynamoDB's JSON requests at a fraction of botocore's per-request cost.

botocore signs every request through ``RequestSigner``: it builds a new ``SigV4Auth``,
derives the signing key with four HMACs, and reads the request's headers through
``email.message`` several times (once more to prepare the body just to hash it); about
60 to 80 µs of a GetItem's client CPU. :func:`install` signs the same requests with the same
algorithm (AWS Signature Version 4, ``AWS4-HMAC-SHA256``) for about a tenth of that: the
signing key is derived once per day, region and service, the host header once per
endpoint, and the headers are read once.

How it plugs in, through the client's own event hooks only:

1. A ``choose-signer.dynamodb`` handler, registered first, takes over a request when
   botocore would sign it with plain ``v4`` (no per-operation auth override, no
   ``auth_scheme_preference``, no per-request credentials). It marks
   the request context and answers ``botocore.UNSIGNED``, so ``RequestSigner`` skips its
   own signing. Anything else gets no answer and botocore signs as usual.
2. A ``request-created.dynamodb`` handler, registered last, signs the marked request at the
   point where botocore's signer would have: the headers botocore adds afterwards on the
   generic ``request-created`` event (the ``amz-sdk-*`` retry headers) stay unsigned, as
   with botocore's own signer, so the signed headers are the same set. A request whose
   shape the short path does not cover (a path other than ``/``, a query string, a body
   that is not bytes, a ``Date`` or ``X-Amz-Content-SHA256`` header, unsigned payloads)
   is signed by botocore's own ``SigV4Auth`` instead, so a marked request is always signed.

The signer is opt-in: :func:`singletable.aws._client.default_client` installs it only when
``SINGLETABLE_SIGNING=1`` or when given ``client_config(signing=True)``; otherwise botocore
signs. ``SINGLETABLE_SIGNING=0`` makes :func:`install` a no-op even where the code asks for
the signer, so an operator can give signing back to botocore without a code change.

The credentials are the session's credentials object (``get_frozen_credentials()`` on every
request, so refreshable credentials refresh as they do in botocore). The result equals
``botocore.auth.SigV4Auth.add_auth`` for the same request and timestamp: ``X-Amz-Date``,
``X-Amz-Security-Token`` and ``Authorization`` headers, byte for byte (checked by
differential tests, and by moto verifying the signatures of every data-plane operation).
"""

from __future__ import annotations

import hashlib
import hmac
import time
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import botocore
from botocore.auth import SIGNED_HEADERS_BLACKLIST, SigV4Auth
from botocore.exceptions import NoCredentialsError

from ._switches import SIGNING, switch_on

if TYPE_CHECKING:
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["ENV_VAR", "SigV4Signer", "enabled", "install", "is_installed", "uninstall"]

ENV_VAR = SIGNING
"""Environment variable: ``1`` turns the signer on for the default client, ``0`` off everywhere."""

_UNIQUE_ID = "singletable.signing"
_CONTEXT_KEY = "singletable_sigv4"  # request.context: (signing name, region) to sign with
_SKIPPED = frozenset(SIGNED_HEADERS_BLACKLIST)
_REPLACED = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_CACHED = 64

_installed: weakref.WeakKeyDictionary[Any, SigV4Signer] = weakref.WeakKeyDictionary()


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def host_header(url: str) -> str | None:
    """The ``host`` value SigV4 signs for ``url`` (lowercase, no default port, no
    userinfo), or None when the URL has a path other than ``/`` or a query, which the
    short path leaves to botocore."""
    parts = urlsplit(url)
    if parts.path not in ("", "/") or parts.query or not parts.hostname:
        return None
    host = parts.hostname
    if ":" in host:  # an IPv6 literal: urlsplit drops the brackets
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{port}"
    return host


class SigV4Signer:
    """Signs botocore ``AWSRequest`` objects with SigV4 for one credentials object."""

    def __init__(self, credentials: Credentials) -> None:
        self._credentials = credentials
        self._keys: dict[tuple[str, str, str, str], bytes] = {}
        self._hosts: dict[str, str | None] = {}

    def signing_key(self, secret: str, day: str, region: str, service: str) -> bytes:
        """The derived SigV4 key for one day (``YYYYMMDD``), region and service."""
        cache_key = (secret, day, region, service)
        key = self._keys.get(cache_key)
        if key is None:
            if len(self._keys) >= _MAX_CACHED:
                self._keys.clear()
            key = _hmac(
                _hmac(_hmac(_hmac(f"AWS4{secret}".encode(), day), region), service), "aws4_request"
            )
            self._keys[cache_key] = key
        return key

    def sign(
        self, request: AWSRequest, region: str, service: str, timestamp: str | None = None
    ) -> None:
        """Add ``X-Amz-Date``, ``X-Amz-Security-Token`` (temporary credentials) and
        ``Authorization`` to ``request``; ``timestamp`` (``YYYYMMDDTHHMMSSZ``) defaults
        to now. Requests outside the short path are signed by botocore's ``SigV4Auth``
        (with the current time)."""
        credentials = self._credentials.get_frozen_credentials()
        if credentials is None or credentials.access_key is None or credentials.secret_key is None:
            raise NoCredentialsError()
        if timestamp is None:
            timestamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        host = self._host(request.url) if request.url else None
        body = request.data
        context = request.context
        headers = request.headers
        if (
            host is None
            or request.params
            or not isinstance(body, bytes)
            or "Date" in headers
            or "X-Amz-Content-SHA256" in headers
            or context.get("payload_signing_enabled", True) is not True
            or context.get("checksum", {}).get("request_algorithm") is not None
        ):
            SigV4Auth(credentials, service, region).add_auth(request)
            return
        context["timestamp"] = timestamp
        for name in _REPLACED:
            if name in headers:
                del headers[name]
        method = request.method.upper() if request.method else ""
        self.sign_headers(headers, host, method, body, region, service, credentials, timestamp)

    def sign_headers(
        self,
        headers: Any,
        host: str,
        method: str,
        body: bytes,
        region: str,
        service: str,
        credentials: Any,
        timestamp: str,
    ) -> None:
        """The short path's signing on its own: add ``X-Amz-Date``, ``X-Amz-Security-Token``
        (temporary credentials) and ``Authorization`` to ``headers`` (a mutable mapping that
        holds none of them yet) for a request to ``/`` of ``host`` with no query string.
        ``credentials`` are frozen ones (``access_key``, ``secret_key``, ``token``)."""
        headers["X-Amz-Date"] = timestamp
        if credentials.token:
            headers["X-Amz-Security-Token"] = credentials.token
        signed: dict[str, list[str]] = {}
        for name, value in headers.items():
            lower = name.lower()
            if lower not in _SKIPPED:
                signed.setdefault(lower, []).append(" ".join(value.split()))
        if "host" not in signed:
            signed["host"] = [host]
        names = sorted(signed)
        signed_headers = ";".join(names)
        canonical = "\n".join(f"{name}:{','.join(signed[name])}" for name in names)
        payload_hash = hashlib.sha256(body).hexdigest()
        canonical_request = f"{method}\n/\n\n{canonical}\n\n{signed_headers}\n{payload_hash}"
        day = timestamp[:8]
        scope = f"{day}/{region}/{service}/aws4_request"
        string_to_sign = (
            f"AWS4-HMAC-SHA256\n{timestamp}\n{scope}\n"
            f"{hashlib.sha256(canonical_request.encode('utf-8')).hexdigest()}"
        )
        key = self.signing_key(credentials.secret_key, day, region, service)
        signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={signed_headers}, Signature={signature}"
        )

    def _host(self, url: str) -> str | None:
        try:
            return self._hosts[url]
        except KeyError:
            if len(self._hosts) >= _MAX_CACHED:
                self._hosts.clear()
            host = self._hosts[url] = host_header(url)
            return host

    # -- botocore event handlers ------------------------------------------------------------

    def choose_signer(
        self,
        signing_name: str | None = None,
        region_name: str | None = None,
        signature_version: Any = None,
        context: dict[str, Any] | None = None,
        **_: Any,
    ) -> Any:
        """``choose-signer``: take over plain SigV4 requests (answer UNSIGNED to botocore)."""
        if signature_version != "v4" or context is None or not signing_name or not region_name:
            return None
        if context.get("auth_type") not in (None, "v4") or context.get("unsigned_payload"):
            return None
        config = context.get("client_config")
        if config is not None and getattr(config, "auth_scheme_preference", None):
            return None
        signing = context.get("signing") or {}
        if signing.get("request_credentials") or signing.get("identity_cache") is not None:
            return None
        context[_CONTEXT_KEY] = (signing_name, region_name)
        return botocore.UNSIGNED

    def request_created(self, request: AWSRequest | None = None, **_: Any) -> None:
        """``request-created`` (last): sign the requests :meth:`choose_signer` took over."""
        if request is None:
            return
        target = request.context.pop(_CONTEXT_KEY, None)
        if target is not None:
            signing_name, region = target
            self.sign(request, region, signing_name)


def enabled() -> bool:
    """False when ``SINGLETABLE_SIGNING`` is ``0``/``false``/``no``/``off`` (read on every
    call): :func:`install` does nothing. True when it is unset: an explicit :func:`install`
    works; whether the default client asks for the signer is
    :func:`singletable.aws._client.default_client`'s business."""
    return switch_on(ENV_VAR)


def install(client: DynamoDBClient, credentials: Credentials) -> None:
    """Sign ``client``'s plain-SigV4 requests with a :class:`SigV4Signer` for
    ``credentials`` (the credentials object the client was created with, e.g. its
    session's ``get_credentials()``). Idempotent; only this client's hooks change. Does
    nothing when ``SINGLETABLE_SIGNING=0``."""
    if not enabled() or client in _installed:
        return
    signer = SigV4Signer(credentials)
    events = client.meta.events
    events.register_first(
        "choose-signer.dynamodb", signer.choose_signer, unique_id=f"{_UNIQUE_ID}:choose"
    )
    events.register_last(
        "request-created.dynamodb", signer.request_created, unique_id=f"{_UNIQUE_ID}:sign"
    )
    _installed[client] = signer


def uninstall(client: DynamoDBClient) -> None:
    """Give ``client``'s signing back to botocore (no-op if not installed)."""
    if _installed.pop(client, None) is None:
        return
    events = client.meta.events
    events.unregister("choose-signer.dynamodb", unique_id=f"{_UNIQUE_ID}:choose")
    events.unregister("request-created.dynamodb", unique_id=f"{_UNIQUE_ID}:sign")


def is_installed(client: DynamoDBClient) -> bool:
    """Whether :func:`install` is in effect on ``client``."""
    return client in _installed
