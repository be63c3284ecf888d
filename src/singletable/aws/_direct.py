"""The direct transport: singletable sends a botocore client's DynamoDB requests itself.

botocore spends most of a small request's client CPU around the HTTP exchange: a request
object per attempt, a dozen events, endpoint rules, a shape-directed serialiser, its SigV4
signer and its parser. :class:`DirectTransport` is a botocore-compatible stand-in for
``client._make_api_call`` on the data-plane operations singletable sends. Built from one
botocore client, it writes the request body as botocore's serialiser would
(:mod:`._direct_body`), signs it with :mod:`.signing`, sends it through **the client's own**
HTTP session (urllib3's pool as botocore configured it: timeouts, ``max_pool_connections``,
proxies, CA bundle, client certificate; :mod:`._direct_urllib3`, which writes the request and
reads the response on the pool's connection by hand, :mod:`._http1`) and parses the response with
the fast path (:class:`.fastpath.ResponseParser`; botocore's parser for errors and anything it
declines).

What botocore decides is botocore's, taken from the same client:

* credentials: the client's credentials object, frozen on every attempt, so refreshable
  credentials refresh as they do in botocore;
* the endpoint: botocore's endpoint ruleset resolves it (custom ``endpoint_url``, FIPS,
  dual-stack, account-based endpoints), once per operation, tables and account (a pure function
  of those), together with the signing region and name;
* retries: the client's own ``needs-retry`` handler (legacy, standard or its retry quota, with
  the client's max attempts) through botocore's endpoint, which also sleeps the backoff and
  keeps the ``amz-sdk-request`` retry context (attempt, max, and the clock-skew-corrected
  ``ttl``); the CRC32 check of DynamoDB responses is part of that handler, as in botocore;
* the ``after-call`` and ``after-call-error`` events (the standard mode's retry quota is
  released on the first);
* errors: ``client.exceptions.from_code(code)(response, operation)``, the very classes and
  parsed responses botocore raises, modeled error fields included; botocore's own exceptions
  for connection failures, timeouts and missing credentials;
* the User-Agent (the client's, computed once: singletable's ``client_config()`` fixes it),
  the idempotency token of ``TransactWriteItems``, the recursion-detection header, parameter
  validation when the client's config asks for it.

Not supported, and sent by botocore instead (the whole operation, through
``client._make_api_call``): an operation outside the ten data-plane operations, an input
shape the body compiler does not mirror, an endpoint with a path, and an auth scheme other
than SigV4. Event hooks registered on the client do not run for direct requests, except the
``needs-retry``, ``after-call`` and ``after-call-error`` events above. :func:`declined`
refuses a client whose requests hooks would answer or rate-limit (``before-send`` handlers
such as moto's in-process mock or botocore's stubber, adaptive retry mode, endpoint
discovery).

Installing one on a client is :mod:`._direct_install`'s business.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from botocore.awsrequest import AWSPreparedRequest, prepare_request_dict
from botocore.exceptions import NoCredentialsError
from botocore.handlers import add_recursion_detection_header
from botocore.utils import lowercase_dict
from botocore.validate import ParamValidationDecorator, validate_parameters

from . import fastpath
from ._direct_body import BodyEncoder, Unsupported, compile_body
from ._direct_urllib3 import Pools
from ._http1 import Headers
from .signing import SigV4Signer, host_header

if TYPE_CHECKING:
    from botocore.model import OperationModel

__all__ = ["DirectBase", "DirectTransport", "Operation", "declined"]

OPERATIONS = frozenset(fastpath.FAST_PATH_OPERATIONS)
"""The operations the direct transport sends itself: the ten data-plane operations."""

_MAX_CACHED = 64
UNRESOLVED: Any = object()  # an endpoint the ruleset has not resolved yet


class Operation:
    """What the transport knows about one operation, from the service model."""

    __slots__ = (
        "after_call",
        "after_call_error",
        "encode",
        "model",
        "name",
        "needs_retry",
        "target",
        "tokens",
    )

    def __init__(self, model: OperationModel, encode: BodyEncoder) -> None:
        self.model = model
        self.name = model.name
        self.encode = encode
        self.target = f"{model.metadata['targetPrefix']}.{model.name}"
        self.tokens = tuple(model.idempotent_members)
        service_id = model.service_model.service_id.hyphenize()
        self.needs_retry = f"needs-retry.{service_id}.{model.name}"
        self.after_call = f"after-call.{service_id}.{model.name}"
        self.after_call_error = f"after-call-error.{service_id}.{model.name}"


class Endpoint:
    """A resolved endpoint: URL, the ``host`` SigV4 signs, ruleset headers, signing scope."""

    __slots__ = ("headers", "host", "region", "service", "url")

    def __init__(
        self, url: str, host: str, headers: Mapping[str, str], region: str, service: str
    ) -> None:
        self.url = url
        self.host = host
        self.headers = dict(headers)
        self.region = region
        self.service = service


def table_key(params: Mapping[str, Any]) -> tuple[Any, ...]:
    """The table names a request names (the endpoint ruleset's only per-request input)."""
    name = params.get("TableName")
    if name is not None:
        return (name,)
    requests = params.get("RequestItems")
    if requests is not None:
        return tuple(requests)
    return tuple(
        action.get("TableName")
        for item in params.get("TransactItems", ())
        for action in item.values()
        if isinstance(action, Mapping)
    )


def declined(client: Any) -> str | None:
    """Why the direct transport cannot stand in for ``client``'s pipeline, or None."""
    config = client.meta.config
    if client.meta.service_model.service_name != "dynamodb":
        return "it is not a DynamoDB client"
    # It leans on the same botocore internals as the fast path: the same verified range.
    if not fastpath.botocore_verified():
        return "this botocore is outside the versions it is verified on"
    aio_version = fastpath.aiobotocore_version(client)
    if aio_version is not None and not fastpath.aiobotocore_verified(aio_version):
        return "this aiobotocore is outside the versions it is verified on"
    if (config.retries or {}).get("mode") == "adaptive":
        return "adaptive retry mode rate-limits requests in a before-send hook"
    if getattr(config, "signature_version", None) not in (None, "v4"):
        return f"signature_version={config.signature_version!r} is not SigV4"
    if config.auth_scheme_preference:
        return "auth_scheme_preference chooses the signer per request"
    events = client.meta.events
    handlers = getattr(getattr(events, "_emitter", events), "_handlers", None)
    if handlers is None:
        return "its event emitter cannot be inspected"
    for handler in handlers.prefix_search("before-parameter-build.dynamodb.GetItem"):
        # Discovery in "auto" mode acts only on operations that require it (none of DynamoDB's)
        manager = getattr(getattr(handler, "__self__", None), "_manager", None)
        if getattr(manager, "_always_discover", False):
            return "endpoint discovery rewrites its requests in event hooks"
    for event in ("before-send.dynamodb.GetItem", "before-call.dynamodb.GetItem"):
        for handler in handlers.prefix_search(event):
            if getattr(handler, "enabled", True) is False:  # moto's stub while no mock runs
                continue
            if event.startswith("before-send") or handler.__module__ != "botocore.handlers":
                return f"a {event.split('.')[0]} hook answers its requests ({handler!r})"
    return None


class DirectBase:
    """The transport's sans-I/O half, shared by the sync and async twins: operations, the
    request (body, endpoint, headers, signature), the response (fast path or botocore)."""

    def __init__(self, client: Any) -> None:
        meta = client.meta
        endpoint = client._endpoint
        self._client = client
        self._endpoint = endpoint
        self._http = endpoint.http_session
        self._events = meta.events
        self._config = meta.config
        self._model = meta.service_model
        self._credentials = client._get_credentials()
        self._signer = SigV4Signer(self._credentials)
        self._user_agent = client._user_agent_creator.to_string()
        # botocore decides validation when it builds the client (its Config, the profile's
        # parameter_validation) and keeps the answer only in the serializer it chose.
        self._validate = isinstance(client._serializer, ParamValidationDecorator)
        self._exceptions = client.exceptions
        self._operations: dict[str, Operation | None] = {}
        self._endpoints: dict[tuple[Any, ...], Endpoint | None] = {}
        self._fast = fastpath.ResponseParser()
        self._parser = endpoint._response_parser_factory.create_parser(
            self._model.resolved_protocol
        )
        self._seed_max = _seeded_max_attempts(meta.config)

    def method(self, operation: str) -> Callable[..., Any]:
        """A stand-in for the client's method for ``operation`` (``**params`` in)."""
        call = self.call  # type: ignore[attr-defined]

        def send(**params: Any) -> Any:
            return call(operation, params)

        return send

    def operation(self, name: str) -> Operation | None:
        """The compiled :class:`Operation`, or None for one botocore sends."""
        try:
            return self._operations[name]
        except KeyError:
            op = None
            if name in OPERATIONS:
                model = self._model.operation_model(name)
                try:
                    op = Operation(model, compile_body(model))
                except Unsupported:
                    op = None
            self._operations[name] = op
            return op

    def prepare(self, op: Operation, params: Mapping[str, Any], frozen: Any) -> Any:
        """(parameters with their idempotency tokens, body, endpoint cache key, cached
        :class:`Endpoint`) for one call; the endpoint is :data:`UNRESOLVED` when the ruleset
        has not resolved it yet (then :meth:`remember` its answer), None when botocore must
        send the call."""
        for token in op.tokens:
            if token not in params:
                params = {**params, token: str(uuid.uuid4())}
        if self._validate:
            validate_parameters(params, op.model.input_shape)  # type: ignore[arg-type]
        key = (op.name, table_key(params), getattr(frozen, "account_id", None))
        return params, op.encode(params), key, self._endpoints.get(key, UNRESOLVED)

    def remember(self, key: tuple[Any, ...], context: Any, resolved: Any) -> Endpoint | None:
        """Keep botocore's endpoint for ``key`` (``resolved``: what the client's
        ``_resolve_endpoint_ruleset`` answered, ``context`` the request context it filled in);
        None when it is one the transport does not send to (not SigV4, a path)."""
        url, headers, _ = resolved
        endpoint = None
        if context.get("auth_type") in (None, "v4"):
            request: dict[str, Any] = {"url_path": "/", "query_string": "", "headers": {}}
            prepare_request_dict(request, endpoint_url=url)
            full_url: str = request["url"]
            host = host_header(full_url)
            if host is not None:
                signing = context.get("signing") or {}
                region = signing.get("region") or self._client.meta.region_name
                service = signing.get("signing_name") or self._model.signing_name
                endpoint = Endpoint(full_url, host, headers, region, service)
        if len(self._endpoints) >= _MAX_CACHED:
            self._endpoints.clear()
        self._endpoints[key] = endpoint
        return endpoint

    def context(self, op: Operation) -> dict[str, Any]:
        """A request context as botocore's ``_make_api_call`` starts one."""
        return {
            "client_region": self._client.meta.region_name,
            "client_config": self._config,
            "has_streaming_input": False,
            "auth_type": op.model.resolved_auth_type,
            "unsigned_payload": op.model.unsigned_payload,
            "auth_options": self._model.metadata.get("auth"),
        }

    def headers(
        self, op: Operation, body: bytes, endpoint: Endpoint, frozen: Any, context: Any
    ) -> dict[str, str]:
        """One attempt's HTTP headers, signed, in botocore's order."""
        if frozen is None or frozen.access_key is None or frozen.secret_key is None:
            raise NoCredentialsError()
        headers = {
            "X-Amz-Target": op.target,
            "Content-Type": "application/x-amz-json-1.0",
            "User-Agent": self._user_agent,
        }
        if endpoint.headers:
            headers.update(endpoint.headers)
        add_recursion_detection_header({"headers": headers})
        timestamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self._signer.sign_headers(
            headers, endpoint.host, "POST", body, endpoint.region, endpoint.service, frozen,
            timestamp,
        )  # fmt: skip
        retries = context["retries"]
        if self._seed_max is not None:
            retries["max"] = self._seed_max
        headers["amz-sdk-invocation-id"] = retries["invocation-id"]
        headers["amz-sdk-request"] = "; ".join(
            f"{key}={retries[key]}" for key in ("ttl", "attempt", "max") if key in retries
        )
        headers["Content-Length"] = str(len(body))
        return headers

    def request(self, url: str, headers: dict[str, str], body: bytes) -> AWSPreparedRequest:
        return AWSPreparedRequest("POST", url, headers, body, False)  # type: ignore[arg-type]

    def fast_parse(self, op: Operation, status: int, headers: Any, body: bytes) -> Any:
        """The parsed response from the fast path with botocore's ``ResponseMetadata``, or
        None when the fast path is off or declines (botocore's parser then parses)."""
        if not fastpath.is_installed(self._client):
            return None
        parsed = self._fast.parse(op.model, status, body)
        if parsed is None:
            return None
        metadata = {}
        if "x-amzn-requestid" in headers:
            metadata["RequestId"] = headers["x-amzn-requestid"]
        metadata["HTTPStatusCode"] = status
        # (both twins' exchanges read names lowercased; a proxied endpoint's are botocore's)
        metadata["HTTPHeaders"] = (
            dict(headers) if type(headers) is Headers else lowercase_dict(headers)
        )
        parsed["ResponseMetadata"] = metadata
        return parsed

    @staticmethod
    def response_dict(op: Operation, status: int, headers: Any, body: bytes) -> dict[str, Any]:
        return {
            "headers": headers,
            "status_code": status,
            "context": {"operation_name": op.name},
            "body": body,
        }

    def error(self, op: Operation, parsed: dict[str, Any]) -> Exception:
        """The exception botocore's client raises for an error response."""
        code = parsed.get("Error", {}).get("Code")
        return self._exceptions.from_code(code)(parsed, op.name)  # type: ignore[no-any-return]


def _seeded_max_attempts(config: Any) -> int | None:
    """The ``max`` botocore seeds into every attempt's retry header (its standard mode, when
    botocore's new retry defaults are enabled), else None (then it appears once the retry
    handler has run, as in botocore)."""
    from botocore.configprovider import NEW_RETRIES_ENABLED
    from botocore.retries import standard

    retries = config.retries or {}
    if not NEW_RETRIES_ENABLED or retries.get("mode") != "standard":
        return None
    per_service = getattr(standard, "_SERVICE_MAX_ATTEMPTS", {})
    seeded: int | None = retries.get("total_max_attempts") or per_service.get(
        "dynamodb", standard.DEFAULT_MAX_ATTEMPTS
    )
    return seeded


class DirectTransport(DirectBase):
    """The sync twin: botocore's client, urllib3 session and retry handler."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self._pools = Pools(self._http)

    def call(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request; return (or raise) what ``client._make_api_call`` would."""
        op = self._operations.get(operation) or self.operation(operation)
        if op is None:
            return self._client._make_api_call(operation, dict(params))  # type: ignore[no-any-return]
        credentials = self._credentials
        frozen = credentials.get_frozen_credentials() if credentials is not None else None
        params, body, key, endpoint = self.prepare(op, params, frozen)
        context = self.context(op)
        if endpoint is UNRESOLVED:
            resolved = self._client._resolve_endpoint_ruleset(op.model, params, context)
            endpoint = self.remember(key, context, resolved)
            context = self.context(op)
        if endpoint is None:
            return self._client._make_api_call(operation, dict(params))  # type: ignore[no-any-return]
        request_dict = {"context": context}
        botocore_endpoint = self._endpoint
        attempts = 1
        botocore_endpoint._update_retries_context(context, attempts)
        while True:
            headers = self.headers(op, body, endpoint, frozen, context)
            response, exception = self._attempt(op, endpoint.url, headers, body)
            if not botocore_endpoint._needs_retry(
                attempts, op.model, request_dict, response, exception
            ):
                break
            attempts += 1
            botocore_endpoint._update_retries_context(context, attempts, response)
            frozen = credentials.get_frozen_credentials()
        if exception is not None:
            self._events.emit(op.after_call_error, exception=exception, context=context)
            raise exception
        http_response, parsed = response
        parsed["ResponseMetadata"]["RetryAttempts"] = attempts - 1
        self._events.emit(
            op.after_call, http_response=http_response, parsed=parsed, model=op.model,
            context=context,
        )  # fmt: skip
        if http_response.status_code >= 300:
            raise self.error(op, parsed)
        return parsed  # type: ignore[no-any-return]

    def _attempt(self, op: Operation, url: str, headers: dict[str, str], body: bytes) -> Any:
        """One HTTP exchange: ((http response, parsed), None) or (None, the exception)."""
        try:
            http_response = self._pools.send(url, headers, body)
        except Exception as exc:  # botocore hands every send failure to its retry handler
            return None, exc
        status = http_response.status_code
        content = http_response.content
        parsed = None
        if status < 300:
            parsed = self.fast_parse(op, status, http_response.headers, content)
        if parsed is None:
            response = self.response_dict(op, status, http_response.headers, content)
            parsed = self._parser.parse(response, op.model.output_shape)
            if status >= 300:
                self._modeled_error_fields(op, response, parsed)
        return (http_response, parsed), None

    def _modeled_error_fields(self, op: Operation, response: Any, parsed: Any) -> None:
        shape = self._model.shape_for_error_code(parsed.get("Error", {}).get("Code"))
        if shape is not None:
            parsed.update(self._parser.parse(response, shape))
