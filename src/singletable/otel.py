"""OpenTelemetry spans for every request a repository sends (extra ``singletable[otel]``).

```python
from singletable.otel import OpenTelemetryHook

repo = Shop(client=client, hooks=[OpenTelemetryHook()], capacity="total")
```

One CLIENT span per request, named ``DynamoDB.<Operation>`` (``DynamoDB.GetItem``), with the
attributes of OpenTelemetry's semantic conventions for DynamoDB: ``db.system.name`` =
``"aws.dynamodb"``, ``db.operation.name``, ``aws.dynamodb.table_names`` (a list),
``aws.dynamodb.index_name`` (when the request reads an index),
``aws.dynamodb.consumed_capacity`` (the JSON of each ``ConsumedCapacity`` entry, when the
repository asked for it), the ``rpc.*`` attributes of the AWS SDK conventions, and
``singletable.pattern`` (the access pattern or verb that sent it) and ``aws.request_id``. A
failed request sets the span's status to ERROR, ``error.type`` (DynamoDB's error code) and
records the exception the caller gets (its type and error code, not its message: messages may
name key values, and spans, like log records, never hold key values or item contents).

The hook runs after the request, so the span gets explicit start and end times from the
:class:`~singletable._executor.CallInfo`; its parent is the span current where the request was
sent. Only the OpenTelemetry API is needed: without an SDK configured the spans are no-ops.
"""

from __future__ import annotations

import json
import traceback
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ._executor import CallInfo, aws_error_code
from ._version import __version__

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

__all__ = ["OpenTelemetryHook"]

DB_SYSTEM = "aws.dynamodb"


class OpenTelemetryHook:
    """A repository hook (``hooks=[OpenTelemetryHook()]``) that turns every request into an
    OpenTelemetry CLIENT span.

    ``tracer_provider`` defaults to the global one (``trace.set_tracer_provider``); ``tracer``
    replaces the tracer altogether.
    """

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        *,
        tracer: trace.Tracer | None = None,
    ) -> None:
        self._tracer_provider = tracer_provider
        self._tracer = tracer

    @property
    def tracer(self) -> trace.Tracer:
        # Looked up on first use, so a provider set after the hook was made still counts.
        if self._tracer is None:
            self._tracer = trace.get_tracer(
                "singletable", __version__, tracer_provider=self._tracer_provider
            )
        return self._tracer

    def __call__(self, info: CallInfo) -> None:
        start = int(info.start * 1e9)
        end = start + int(info.duration * 1e9)
        span = self.tracer.start_span(
            f"DynamoDB.{info.operation}",
            kind=SpanKind.CLIENT,
            attributes={"db.system.name": DB_SYSTEM},
            start_time=start,
        )
        try:
            if span.is_recording():
                span.set_attributes(span_attributes(info))
                if info.error is not None:
                    _record_error(span, info.error, end)
        finally:
            span.end(end_time=end)


def span_attributes(info: CallInfo) -> dict[str, AttributeValue]:
    """The attributes of the span for one request (see the module's docstring)."""
    tables = info.table_names
    attributes: dict[str, AttributeValue] = {
        "db.system.name": DB_SYSTEM,
        "db.operation.name": info.operation,
        "rpc.system": "aws-api",
        "rpc.service": "DynamoDB",
        "rpc.method": info.operation,
        "aws.dynamodb.table_names": tables,
    }
    if len(tables) == 1:
        attributes["db.collection.name"] = tables[0]
    index = info.index_name
    if index is not None:
        attributes["aws.dynamodb.index_name"] = index
    consumed = info.consumed_capacity
    if consumed:
        entries = consumed if isinstance(consumed, list) else [consumed]
        attributes["aws.dynamodb.consumed_capacity"] = [
            json.dumps(entry, sort_keys=True, default=str) for entry in entries
        ]
    if info.pattern is not None:
        attributes["singletable.pattern"] = info.pattern
    if info.retries:
        attributes["singletable.retries"] = info.retries
    if info.request_id is not None:
        attributes["aws.request_id"] = info.request_id
    error = info.error
    if error is not None:
        attributes["error.type"] = _error_type(error)
    return attributes


def _error_type(error: BaseException) -> str:
    """A low-cardinality name for a failure: DynamoDB's error code when it answered (also
    behind an error singletable made of it, such as ``AlreadyExists``), else singletable's
    code."""
    aws_code = aws_error_code(error)
    if aws_code:
        return aws_code
    code = getattr(error, "code", None)
    return code if isinstance(code, str) else type(error).__qualname__


def _record_error(span: Any, error: BaseException, end: int) -> None:
    code = getattr(error, "code", type(error).__qualname__)
    kind = f"{type(error).__module__}.{type(error).__qualname__}"
    # the frames, and the error's code in place of its message (which may name key values)
    frames = "".join(traceback.format_tb(error.__traceback__))
    span.record_exception(
        error,
        attributes={
            "exception.message": f"[{code}]",
            "exception.stacktrace": f"{frames}{kind}: [{code}]",
        },
        timestamp=end,
    )
    span.set_status(Status(StatusCode.ERROR, _error_type(error)))
