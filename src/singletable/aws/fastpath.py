"""Opt-in fast parser for DynamoDB data-plane responses, as a botocore event hook.

botocore parses a DynamoDB JSON response in two steps: ``json.loads`` (~9 µs per typical
item) and a shape-directed walk that rebuilds every dict and list (~40 µs more per item).
:func:`install` registers a handler on the client's ``before-parse.dynamodb.<Operation>``
events that produces the same result with one cheap pass over the decoded JSON.

How it works
------------
For each response botocore emits ``before-parse.dynamodb.<Operation>`` with
``operation_model``, ``response_dict`` (``status_code``, ``headers``, ``body``) and an
empty ``customized_response_dict``; it then runs its protocol parser on ``response_dict``
and finally does ``parsed.update(customized_response_dict)`` (``botocore/endpoint.py``,
``Endpoint._do_get_response``; botocore's own S3 handlers use the same hook). For a 2xx
response of an operation in :data:`FAST_PATH_OPERATIONS`, the handler here:

1. decodes the body to what botocore's ``json.loads(body.decode("utf-8"))`` returns
   (with pydantic-core's JSON parser, which is faster and returns the same; see ``_json``);
2. converts it as botocore's ``JSONParser`` would for the operation's output shape:
   only modelled members are kept, ``null`` members are dropped, blobs (``B``, ``BS``,
   also inside ``M``/``L`` values and in keys) are base64-decoded to ``bytes``, and every
   other scalar is left as ``json.loads`` produced it (``N`` stays ``str``; a ``double``
   such as ``CapacityUnits`` stays ``int`` when the JSON has ``1`` and ``float`` for
   ``1.0``, as in botocore);
3. puts the result into ``customized_response_dict`` and replaces ``response_dict["body"]``
   by ``b"{}"``, so botocore's parser only builds ``ResponseMetadata`` (request id, HTTP
   status and headers; botocore adds ``RetryAttempts`` later).

An ``after-call`` handler moves ``ResponseMetadata`` back behind the members, so even the
key order equals botocore's. Anything unexpected makes the handler step aside and leaves the
response to botocore untouched: error statuses (so modelled error fields such as
``Item`` or ``CancellationReasons`` are always botocore's), operations not listed,
bodies that are not a JSON object, values of an unexpected JSON type, a handler that
already filled ``customized_response_dict``, nesting deeper than 64 levels, or any
exception. The converter is built from the client's own service model, so new output
members are picked up; output shapes containing timestamps, unions or non-string map keys
are not fast-pathed at all.

Caveats: the handler assumes botocore's default blob parser (``base64.b64decode``); a
session whose ``response_parser_factory`` was given another ``blob_parser`` must not use
the fast path. With debug logging on, botocore's parser logs ``b'{}'`` as the response
body of fast-parsed responses (its ``HTTP_RESPONSE`` history event still carries the
original body, and the DynamoDB CRC32 check reads the raw HTTP response, which is
untouched).

The parse step itself is :class:`ResponseParser` (its converters, compiled from the service
model, are :mod:`._converters`): a function of the operation model, the HTTP
status and the body bytes, with no event system in it, so another source of responses (an
async client) can drive it; the botocore event handlers here are a thin adapter around it.

aiobotocore: an aiobotocore client (the async twin's, :class:`singletable.aio.AsyncRepository`)
runs the same contract in ``AioEndpoint._do_get_response``: ``response_dict["body"]`` is the
whole body as ``bytes`` (``await http_response.content``) for a non-streaming output, the
same ``before-parse`` event is emitted with the same arguments, a plain (non-coroutine)
handler is called as it is, its parser is botocore's ``JSONParser`` behind an ``async``
``parse``, ``parsed.update(customized_response_dict)`` follows, and ``after-call`` is emitted
with ``parsed``; its CRC32 check reads the raw HTTP response too. So :func:`install` registers
the same handlers on it (``client.meta.events`` is aiobotocore's emitter).

Versions: the handler relies on the ``before-parse`` contract above, which is not a
documented API. :func:`install` therefore does nothing on a botocore outside
:data:`VERIFIED_BOTOCORE`, nor, for an aiobotocore client, on an aiobotocore outside
:data:`VERIFIED_AIOBOTOCORE`: the ranges the project's CI has verified (widened when CI passes
on a newer release). Responses are then parsed by botocore's (aiobotocore's) own parser, and
the ``singletable`` logger says so once per process (once for each of the two libraries).

Set the environment variable ``SINGLETABLE_FAST_PATH=0`` to make :func:`install` a no-op
(it is read on every call).
"""

from __future__ import annotations

import logging
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import botocore

from ._converters import Converter, compile_output
from ._json import read_json
from ._switches import FAST_PATH, switch_on

if TYPE_CHECKING:
    from botocore.model import OperationModel
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = [
    "ENV_VAR",
    "FAST_PATH_OPERATIONS",
    "VERIFIED_AIOBOTOCORE",
    "VERIFIED_BOTOCORE",
    "ResponseParser",
    "aiobotocore_verified",
    "aiobotocore_version",
    "botocore_verified",
    "enabled",
    "install",
    "is_installed",
    "uninstall",
]

ENV_VAR = FAST_PATH
"""Environment variable; ``0`` (or ``false``/``no``/``off``) disables :func:`install`."""

VERIFIED_BOTOCORE: tuple[str, str] = ("1.34.0", "1.45.0")
"""The botocore versions the project's CI has verified the fast path on: from the first
(inclusive) to the second (exclusive). The lower end is the lowest botocore that
``boto3>=1.34`` allows; widen the upper end when CI passes on a newer botocore."""

VERIFIED_AIOBOTOCORE: tuple[str, str] = ("3.2.1", "3.11.0")
"""The aiobotocore versions the project's CI has verified the fast path on, for aiobotocore
clients (the async twin's): from the first (inclusive) to the second (exclusive). The lower
end is the declared minimum of the ``async`` extra (``aiobotocore>=3.2.1``, which CI's
minimum-versions run installs); CI's newest-versions run verified 3.10.0. Widen the upper end
when CI passes on a newer aiobotocore. The botocore under it must be inside
:data:`VERIFIED_BOTOCORE` too."""

FAST_PATH_OPERATIONS: frozenset[str] = frozenset(
    {
        "GetItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "TransactGetItems",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
    }
)
"""Operations whose successful responses are parsed by the fast path."""

_UNIQUE_ID = "singletable.fastpath"

_installed: weakref.WeakKeyDictionary[Any, None] = weakref.WeakKeyDictionary()
_logger = logging.getLogger("singletable")
_warned_unverified = False  # the "outside VERIFIED_BOTOCORE" warning: once per process
_warned_unverified_aio = False  # the "outside VERIFIED_AIOBOTOCORE" warning: once per process


# --------------------------------------------------------------------------------------
# The parse step, free of any event system.


class ResponseParser:
    """The fast path's parse step: what botocore's ``JSONParser`` would return for the
    members of one DynamoDB response, from the operation model, the HTTP status and the body
    bytes; or None for a response it leaves to botocore.

    It reads nothing else (no headers, no client, no event), so any source of responses can
    drive it. ``ResponseMetadata`` is not part of its result: botocore builds it. One
    instance caches a converter per operation name, so use one per service model (one per
    client)."""

    def __init__(self) -> None:
        self._converters: dict[str, Converter | None] = {}

    def parse(
        self, operation_model: OperationModel, status_code: Any, body: Any
    ) -> dict[str, Any] | None:
        """The parsed members of a 2xx response of an operation in
        :data:`FAST_PATH_OPERATIONS` whose body is a JSON object; None for anything else
        (other statuses or operations, an empty or non-bytes body, any surprise in it)."""
        if type(status_code) is not int or not 200 <= status_code < 300:
            return None
        if type(body) is not bytes or not body:
            return None
        name = operation_model.name
        try:
            convert = self._converters[name]
        except KeyError:
            convert = None
            if name in FAST_PATH_OPERATIONS:
                convert = compile_output(operation_model)
            self._converters[name] = convert
        if convert is None:
            return None
        try:
            data = read_json(body)
            if type(data) is not dict:
                return None
            parsed: dict[str, Any] = convert(data)
        except Exception:  # any surprise: botocore parses (or fails) as it always does
            return None
        return parsed


# --------------------------------------------------------------------------------------
# The botocore adapter: event handlers and the public API.


def _make_handler() -> Callable[..., None]:
    parse = ResponseParser().parse

    def before_parse(
        operation_model: OperationModel,
        response_dict: dict[str, Any],
        customized_response_dict: dict[str, Any],
        **_: Any,
    ) -> None:
        if customized_response_dict:  # another handler answered: leave it alone
            return
        parsed = parse(operation_model, response_dict.get("status_code"), response_dict.get("body"))
        if parsed is None:
            return
        customized_response_dict.update(parsed)
        response_dict["body"] = b"{}"

    return before_parse


def _after_call(parsed: Any = None, **_: Any) -> None:
    # botocore puts ResponseMetadata after the members; update() left it first.
    if type(parsed) is dict and len(parsed) > 1 and next(iter(parsed)) == "ResponseMetadata":
        parsed["ResponseMetadata"] = parsed.pop("ResponseMetadata")


def enabled() -> bool:
    """False when ``SINGLETABLE_FAST_PATH`` is ``0``/``false``/``no``/``off`` (read on every
    call): :func:`install` does nothing."""
    return switch_on(ENV_VAR)


def _release(version: str) -> tuple[int, ...]:
    """``"1.44.8"`` -> ``(1, 44, 8)``: the leading digits of the first three dot-separated
    parts (``"1.45.0rc1"`` -> ``(1, 45, 0)``); missing parts count as 0."""
    numbers = []
    for part in [*version.split("."), "0", "0"][:3]:
        digits = ""
        for char in part.strip():
            if not char.isdigit():
                break
            digits += char
        numbers.append(int(digits or 0))
    return tuple(numbers)


def botocore_verified(version: str | None = None) -> bool:
    """Whether botocore ``version`` (default: the installed one) is inside
    :data:`VERIFIED_BOTOCORE`, the range the fast path is verified on."""
    low, high = VERIFIED_BOTOCORE
    release = _release(botocore.__version__ if version is None else version)
    return _release(low) <= release < _release(high)


def _warn_unverified() -> None:
    global _warned_unverified
    if _warned_unverified:
        return
    _warned_unverified = True
    low, high = VERIFIED_BOTOCORE
    _logger.warning(
        "botocore %s is outside the versions singletable's response fast path is verified "
        "on (%s up to, not including, %s): DynamoDB responses are parsed by botocore's own "
        "parser",
        botocore.__version__,
        low,
        high,
    )


def aiobotocore_version(client: Any) -> str | None:
    """The installed aiobotocore's version if ``client`` is an aiobotocore client, else None
    (a client of botocore, boto3 or anything else). Imports nothing: an aiobotocore client
    exists only once aiobotocore is imported."""
    module = sys.modules.get("aiobotocore.client")
    base = getattr(module, "AioBaseClient", None)
    if base is None or not isinstance(client, base):
        return None
    return str(getattr(sys.modules.get("aiobotocore"), "__version__", "0"))


def aiobotocore_verified(version: str | None = None) -> bool:
    """Whether aiobotocore ``version`` (default: the installed one; False if none is) is
    inside :data:`VERIFIED_AIOBOTOCORE`."""
    if version is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed

        try:
            version = installed("aiobotocore")
        except PackageNotFoundError:
            return False
    low, high = VERIFIED_AIOBOTOCORE
    return _release(low) <= _release(version) < _release(high)


def _warn_unverified_aio(version: str) -> None:
    global _warned_unverified_aio
    if _warned_unverified_aio:
        return
    _warned_unverified_aio = True
    low, high = VERIFIED_AIOBOTOCORE
    _logger.warning(
        "aiobotocore %s is outside the versions singletable's response fast path is verified "
        "on (%s up to, not including, %s): DynamoDB responses of aiobotocore clients are "
        "parsed by aiobotocore's own parser",
        version,
        low,
        high,
    )


def _hooks() -> list[tuple[str, str]]:
    """(event name, unique id) of every hook, ``before-parse`` and ``after-call`` per operation."""
    names = []
    for operation in sorted(FAST_PATH_OPERATIONS):
        names += [f"before-parse.dynamodb.{operation}", f"after-call.dynamodb.{operation}"]
    return [(name, f"{_UNIQUE_ID}:{name}") for name in names]


def install(client: DynamoDBClient) -> None:
    """Register the fast path on ``client``, a botocore/boto3 or an aiobotocore DynamoDB
    client (idempotent).

    Only this client's event hooks (``client.meta.events``) change; other clients and
    botocore's globals are untouched. Does nothing when ``SINGLETABLE_FAST_PATH=0``, nor on a
    botocore outside :data:`VERIFIED_BOTOCORE`, nor for an aiobotocore client on an
    aiobotocore outside :data:`VERIFIED_AIOBOTOCORE` (then the ``singletable`` logger warns,
    once per process).
    """
    if not enabled() or client in _installed:
        return
    if not botocore_verified():
        _warn_unverified()
        return
    aio_version = aiobotocore_version(client)
    if aio_version is not None and not aiobotocore_verified(aio_version):
        _warn_unverified_aio(aio_version)
        return
    events = client.meta.events
    before_parse = _make_handler()
    for name, unique_id in _hooks():
        handler = before_parse if name.startswith("before-parse.") else _after_call
        events.register(name, handler, unique_id=unique_id)
    _installed[client] = None


def uninstall(client: DynamoDBClient) -> None:
    """Remove the fast path from ``client`` (no-op if it is not installed)."""
    if client not in _installed:
        return
    events = client.meta.events
    for name, unique_id in _hooks():
        events.unregister(name, unique_id=unique_id)
    del _installed[client]


def is_installed(client: DynamoDBClient) -> bool:
    """Whether :func:`install` registered the fast path on ``client``."""
    return client in _installed
