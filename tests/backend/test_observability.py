"""Observability on both twins: the ``singletable`` logger (one DEBUG record per request, never
key values or item contents), ``singletable.otel.OpenTelemetryHook`` (one CLIENT span per
request, checked with the SDK's in-memory exporter) and ``capacity=`` (``consumed_capacity`` on
pages, collections and hook calls).

Every backend returns ``ConsumedCapacity`` when asked (fixed fake values on moto and dynalite,
see /work/shared/research/backends.md 1.7), so the tests check its presence and shape, never
its numbers. moto reports a GSI's capacity under ``LocalSecondaryIndexes`` with
``ReturnConsumedCapacity=INDEXES``; dynalite and DynamoDB under ``GlobalSecondaryIndexes``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from moto_fixtures.backends import RETURN_VALUES_ON_CCF
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from singletable._executor import CallInfo, capacity_units, table_names
from singletable._paging import add_capacity
from singletable.errors import AlreadyExists
from singletable.otel import OpenTelemetryHook
from tests.models import Order, Shop, Status, shop

JUNE = datetime(2026, 6, 1, tzinfo=timezone.utc)

# Distinctive values: none of them may appear in a log record or a span.
SECRET_ID = "cid-Qx7Zr41"
SECRET_NAME = "Wilhelmina-Pqz-Oddname"
SECRET_EMAIL = "zq.unusual.771@example.org"
SECRET_ORDER = "ord-Kv93Lm"
SECRET_CUSTOMER_NAME = "Bartholomew-Zzq"
SECRETS = (SECRET_ID, SECRET_NAME, SECRET_EMAIL, SECRET_ORDER, SECRET_CUSTOMER_NAME, "4711.25")


def order(day: int = 1, order_id: str = SECRET_ORDER) -> Order:
    return Order(
        customer_id=SECRET_ID,
        order_id=order_id,
        created_at=JUNE + timedelta(days=day),
        status=Status.PENDING,
        total=Decimal("4711.25"),
        customer_name=SECRET_NAME,
    )


def exercise(repo: Any) -> None:
    """Writes with the distinctive values, reads of every kind, and a failed write (no
    transactions: they run on dynalite too)."""
    repo.create(order())
    repo.create(order(2, "o2"))
    assert repo.customer(customer_id=SECRET_ID) is None  # GetItem
    assert len(repo.orders_by_status(status=Status.PENDING)) == 2  # Query on GSI1
    assert len(repo.customer_orders(customer_id=SECRET_ID, limit=5)) == 2
    assert len(repo.customer_home(customer_id=SECRET_ID)) == 2
    (found,) = repo.order_by_id(order_id=SECRET_ORDER)  # Query + BatchGetItem
    repo.update(found, customer_name=SECRET_CUSTOMER_NAME)
    with pytest.raises(AlreadyExists):
        repo.create(order())


# -- the logger ------------------------------------------------------------------------------


def _record_text(record: logging.LogRecord) -> str:
    """Everything a handler or formatter could print from a record."""
    return f"{record.getMessage()} {record.args!r} {vars(record)!r}"


def caller_error(backend: Any) -> tuple[str, str]:
    """The error a failed request is reported with: the caller's (``create`` over a live item:
    AlreadyExists), where the failure brings the item back; where it does not (dynalite), the
    service's, since the GetItem that classifies it comes after."""
    if backend.supports(RETURN_VALUES_ON_CCF):
        return "already-exists", "AlreadyExists"
    return "service-error", "ServiceError"


def test_the_logger_writes_one_debug_record_per_request_without_values(
    make_repo: Callable[..., Any],
    recorder: Any,
    caplog: pytest.LogCaptureFixture,
    backend: Any,
) -> None:
    repo = make_repo(Shop, shop)  # no hooks: the logger works on the fast path too
    recorder.clear()
    with caplog.at_level(logging.DEBUG, logger="singletable"):
        exercise(repo)
    records = [r for r in caplog.records if r.name == "singletable"]
    assert len(records) == len(recorder.operations) >= 8
    assert [r.singletable_operation for r in records] == recorder.operations  # type: ignore[attr-defined]
    assert all(r.levelno == logging.DEBUG for r in records)
    leaked = [(s, r.getMessage()) for r in records for s in SECRETS if s in _record_text(r)]
    assert not leaked
    by_pattern = {r.singletable_pattern: r for r in records}  # type: ignore[attr-defined]
    status = by_pattern["orders_by_status"]
    assert status.singletable_index == "GSI1"  # type: ignore[attr-defined]
    assert status.singletable_tables == [repo.table_name]  # type: ignore[attr-defined]
    assert status.getMessage().startswith(
        f"orders_by_status Query table={repo.table_name} index=GSI1 duration="
    )
    assert re.search(r" retries=0 items=\d+ request_id=\S+ ok$", status.getMessage())
    assert by_pattern["customer"].singletable_operation == "GetItem"  # type: ignore[attr-defined]
    # the error the caller gets (its own code), with DynamoDB's behind it
    code, _ = caller_error(backend)
    (failed,) = [r for r in records if r.singletable_error]  # type: ignore[attr-defined]
    assert failed.singletable_error == code  # type: ignore[attr-defined]
    assert failed.singletable_aws_error == "ConditionalCheckFailedException"  # type: ignore[attr-defined]
    assert failed.getMessage().startswith("create PutItem ")
    assert failed.getMessage().endswith(f" {code} (ConditionalCheckFailedException)")
    # every record names its request id (DynamoDB's, from the response or the error)
    ids = [r.singletable_request_id for r in records]  # type: ignore[attr-defined]
    assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids)
    assert f"request_id={failed.singletable_request_id} " in failed.getMessage()  # type: ignore[attr-defined]
    assert failed.singletable_items is None  # type: ignore[attr-defined]
    # how many items each request returned or wrote
    items = {(r.singletable_pattern, r.singletable_operation): r.singletable_items for r in records}  # type: ignore[attr-defined]
    assert items[("customer", "GetItem")] == 0
    assert items[("orders_by_status", "Query")] == 2
    assert items[("order_by_id", "BatchGetItem")] == 1
    assert items[("update", "UpdateItem")] == 1


def test_the_logger_reports_capacity_when_asked(
    make_repo: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    repo = make_repo(Shop, shop, capacity="total")
    with caplog.at_level(logging.DEBUG, logger="singletable"):
        repo.customer(customer_id=SECRET_ID)
    (record,) = [r for r in caplog.records if r.name == "singletable"]
    consumed = record.singletable_consumed_capacity  # type: ignore[attr-defined]
    assert consumed["TableName"] == repo.table_name
    assert f"capacity={capacity_units(consumed):g} " in record.getMessage()


def test_no_record_below_debug(
    make_repo: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    repo = make_repo(Shop, shop)
    with caplog.at_level(logging.INFO, logger="singletable"):
        repo.create(order())
        repo.customer(customer_id=SECRET_ID)
    assert [r for r in caplog.records if r.name == "singletable"] == []


# -- OpenTelemetry ---------------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _span_text(span: ReadableSpan) -> str:
    return span.to_json()


def test_one_client_span_per_request(
    make_repo: Callable[..., Any],
    recorder: Any,
    spans: tuple[TracerProvider, InMemorySpanExporter],
    backend: Any,
) -> None:
    provider, exporter = spans
    hook = OpenTelemetryHook(tracer_provider=provider)
    repo = make_repo(Shop, shop, hooks=[hook], capacity="total")
    recorder.clear()
    exercise(repo)
    finished = exporter.get_finished_spans()
    assert [s.name for s in finished] == [f"DynamoDB.{op}" for op in recorder.operations]
    leaked = [(x, s.name) for s in finished for x in SECRETS if x in _span_text(s)]
    assert not leaked
    for span in finished:
        assert span.kind is SpanKind.CLIENT
        attributes = span.attributes or {}
        assert attributes["db.system.name"] == "aws.dynamodb"
        assert attributes["aws.dynamodb.table_names"] == (repo.table_name,)
        assert span.start_time is not None and span.end_time is not None
        assert span.start_time <= span.end_time
    by_pattern = {(s.attributes or {})["singletable.pattern"]: s for s in finished}
    get = by_pattern["customer"].attributes or {}
    assert get["db.operation.name"] == "GetItem"
    assert "aws.dynamodb.index_name" not in get
    (capacity,) = get["aws.dynamodb.consumed_capacity"]  # type: ignore[misc]
    assert f'"TableName": "{repo.table_name}"' in capacity
    batch = [s for s in finished if s.name == "DynamoDB.BatchGetItem"]
    assert batch and (batch[0].attributes or {})["singletable.pattern"] == "order_by_id"
    query = by_pattern["orders_by_status"].attributes or {}
    assert query["aws.dynamodb.index_name"] == "GSI1"
    (failed,) = [s for s in finished if s.status.status_code is not StatusCode.UNSET]
    assert failed.name == "DynamoDB.PutItem"
    assert failed.status.status_code is StatusCode.ERROR
    assert (failed.attributes or {})["error.type"] == "ConditionalCheckFailedException"
    (event,) = failed.events
    assert event.name == "exception"
    # the exception the caller gets, with DynamoDB's code as the error type
    code, name = caller_error(backend)
    assert (event.attributes or {})["exception.type"] == f"singletable.errors.{name}"
    assert (event.attributes or {})["exception.message"] == f"[{code}]"
    assert isinstance((failed.attributes or {})["aws.request_id"], str)


@pytest.mark.twin("sync")  # the blocking view of the async twin runs its tasks in a context
# copied when it was made, not the test's; the async parent is checked in test_async_parent
def test_the_span_is_a_child_of_the_current_span(
    make_repo: Callable[..., Any], spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    repo = make_repo(Shop, shop, hooks=[OpenTelemetryHook(tracer_provider=provider)])
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("checkout") as parent:
        assert repo.customer(customer_id=SECRET_ID) is None
    request, outer = exporter.get_finished_spans()
    assert outer.name == "checkout"
    assert request.parent is not None
    assert request.parent.span_id == parent.get_span_context().span_id
    assert request.context is not None and outer.context is not None
    assert request.context.trace_id == outer.context.trace_id


@pytest.mark.backend("moto_server")
def test_async_parent(backend: Any, spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """On the async twin, awaited inside a span: the request's span is its child."""
    import asyncio

    from moto_fixtures import create_table
    from moto_fixtures.twins import async_twin_of, async_unavailable

    if async_unavailable() is not None:
        pytest.skip(str(async_unavailable()))
    provider, exporter = spans
    client = backend.client()
    create_table(backend, client, shop, "obs")
    tracer = provider.get_tracer("app")
    hook = OpenTelemetryHook(tracer_provider=provider)

    async def main() -> None:
        async with async_twin_of(Shop).connect(
            endpoint_url=backend.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            table_name="obs",
            hooks=[hook],
        ) as repo:
            with tracer.start_as_current_span("handler"):
                assert await repo.customer(customer_id=SECRET_ID) is None

    asyncio.run(main())
    request, outer = exporter.get_finished_spans()
    assert (request.name, outer.name) == ("DynamoDB.GetItem", "handler")
    assert request.parent is not None and outer.context is not None
    assert request.parent.span_id == outer.context.span_id


class HandlerBroke(Exception):
    """An application's botocore event handler failing (not botocore's error, not ours)."""


@pytest.mark.parametrize(
    ("stop", "outcome"),
    [
        (lambda: HandlerBroke("the audit handler broke"), "HandlerBroke"),
        (asyncio.CancelledError, "cancelled"),
    ],
)
def test_a_request_that_did_not_complete_is_reported_failed(
    make_repo: Callable[..., Any],
    client: Any,
    caplog: pytest.LogCaptureFixture,
    spans: tuple[TracerProvider, InMemorySpanExporter],
    stop: Callable[[], BaseException],
    outcome: str,
) -> None:
    """A request stopped by an exception that is neither botocore's nor singletable's (an event
    handler's error, a cancellation) is logged and reported as failed, never as ok: the hooks
    get the exception, the log record its outcome, the span the ERROR status."""
    provider, exporter = spans
    calls: list[CallInfo] = []
    repo = make_repo(Shop, shop, hooks=[calls.append, OpenTelemetryHook(tracer_provider=provider)])
    raised = stop()

    def interrupt(**_: Any) -> None:
        raise raised

    events = client.meta.events
    events.register("before-send.dynamodb.GetItem", interrupt, unique_id="obs-stop")
    try:
        with caplog.at_level(logging.DEBUG, logger="singletable"), pytest.raises(type(raised)):
            repo.customer(customer_id=SECRET_ID)
    finally:
        events.unregister("before-send.dynamodb.GetItem", unique_id="obs-stop")
    (call,) = calls
    assert call.operation == "GetItem" and call.error is raised
    (record,) = [r for r in caplog.records if r.name == "singletable"]
    assert record.singletable_error == outcome  # type: ignore[attr-defined]
    assert record.getMessage().endswith(f" {outcome}") and " ok" not in record.getMessage()
    (span,) = exporter.get_finished_spans()
    assert span.name == "DynamoDB.GetItem" and span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == type(raised).__qualname__


# -- consumed capacity -----------------------------------------------------------------------


@pytest.mark.parametrize("capacity", ["total", "indexes"])
def test_consumed_capacity_on_pages_collections_and_hooks(
    make_repo: Callable[..., Any], capacity: str
) -> None:
    calls: list[CallInfo] = []
    repo = make_repo(Shop, shop, capacity=capacity, hooks=[calls.append])
    for day in (1, 2, 3):
        repo.create(order(day, f"o{day}"))
    page = repo.customer_orders(customer_id=SECRET_ID, limit=5)
    assert page.consumed_capacity["TableName"] == repo.table_name
    assert page.consumed_capacity["CapacityUnits"] >= 0
    assert calls[-1].consumed_capacity == page.consumed_capacity
    home = repo.customer_home(customer_id=SECRET_ID)
    assert home.consumed_capacity["TableName"] == repo.table_name
    by_status = repo.orders_by_status(status=Status.PENDING)
    if capacity == "indexes":
        # per index: GlobalSecondaryIndexes on DynamoDB and dynalite, LocalSecondaryIndexes on
        # moto (a known moto divergence); either way, GSI1 is named
        indexes = {
            **by_status.consumed_capacity.get("GlobalSecondaryIndexes", {}),
            **by_status.consumed_capacity.get("LocalSecondaryIndexes", {}),
        }
        assert "GSI1" in indexes
    refs = repo.order_refs(order_id="o1")
    assert refs.consumed_capacity["TableName"] == repo.table_name
    assert all(info.consumed_capacity is not None for info in calls if info.operation == "Query")


def test_no_consumed_capacity_unless_asked(make_repo: Callable[..., Any]) -> None:
    repo = make_repo(Shop, shop)
    repo.create(order())
    assert repo.customer_orders(customer_id=SECRET_ID).consumed_capacity is None
    assert repo.customer_home(customer_id=SECRET_ID).consumed_capacity is None


def test_a_whole_collection_adds_up_its_pages(make_repo: Callable[..., Any]) -> None:
    calls: list[CallInfo] = []
    repo = make_repo(Shop, shop, capacity="total", hooks=[calls.append])
    for day in (1, 2, 3):
        repo.create(order(day, f"o{day}"))
    calls.clear()
    whole = repo.customer_home.all(customer_id=SECRET_ID, limit=1)
    assert len(whole) == 3 and len(calls) >= 3
    assert whole.consumed_capacity["CapacityUnits"] == pytest.approx(
        sum(capacity_units(c.consumed_capacity) or 0 for c in calls)
    )


# -- pure helpers ----------------------------------------------------------------------------


def test_add_capacity() -> None:
    one = {"TableName": "T", "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.5}}
    two = {
        "TableName": "T",
        "CapacityUnits": 1.0,
        "Table": {"CapacityUnits": 0.5},
        "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 0.5}},
    }
    assert add_capacity(None, None) is None
    assert add_capacity(None, one) == one
    assert add_capacity(one, None) == one
    assert add_capacity(one, two) == {
        "TableName": "T",
        "CapacityUnits": 1.5,
        "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 0.5}},
    }


def test_table_names_and_capacity_units() -> None:
    assert table_names({"TableName": "A", "Key": {}}) == ["A"]
    assert table_names({"RequestItems": {"A": {}, "B": {}}}) == ["A", "B"]
    items = [
        {"Put": {"TableName": "A"}},
        {"Update": {"TableName": "B"}},
        {"Get": {"TableName": "A"}},
    ]
    assert table_names({"TransactItems": items}) == ["A", "B"]
    assert capacity_units(None) is None
    assert capacity_units([]) is None
    assert capacity_units({"CapacityUnits": 2.0}) == 2.0
    assert capacity_units([{"CapacityUnits": 1.0}, {"CapacityUnits": 0.5}]) == 1.5
