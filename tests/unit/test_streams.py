"""singletable.streams over hand-built stream records (no backend): every view type, TTL
deletions, unknown types, Unique() guard items, a record that does not decode, handlers that
raise (Lambda's batchItemFailures, exactly), and Table(stream=...)'s requests."""

from __future__ import annotations

import asyncio
import copy
import logging
import pickle
from collections.abc import Mapping
from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from singletable import Entity, Repository, Table, Unique, get, query
from singletable.errors import InvalidRequestError, ItemDecodeError, ModelDefinitionError
from singletable.streams import (
    TTL_PRINCIPAL,
    Inserted,
    Modified,
    Removed,
    StreamRouter,
    read_stream,
)

shop = Table("StreamShop", stream="NEW_AND_OLD_IMAGES", ttl_attribute="expires")


class Customer(Entity, table=shop, type="CUSTOMER"):
    customer_id: str
    name: str
    email: Annotated[str, Unique()]

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"


class Order(Entity, table=shop, type="ORDER"):
    customer_id: str
    order_id: str
    customer_name: str
    total: Decimal

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"


class Session(Entity, table=shop, type="SESSION"):
    session_id: str
    expires: datetime | None = None

    class Keys:
        pk = "SESSION#{session_id}"
        sk = "SESSION"


class Shop(Repository, table=shop):
    customer = get(Customer)
    customer_orders = query(Order)


ANN = Customer(customer_id="c1", name="Ann", email="ann@example.com")
ANNE = ANN.model_copy(update={"name": "Anne"})
ORDER = Order(customer_id="c1", order_id="o1", customer_name="Ann", total=Decimal("9.50"))
SESSION = Session(session_id="s1", expires=datetime(2026, 6, 1, tzinfo=timezone.utc))

_sequence = iter(range(100, 10**6))


def keys_of(entity: Entity) -> dict[str, Any]:
    item = entity.to_item()
    return {"PK": item["PK"], "SK": item["SK"]}


def record(
    name: str,
    view: str,
    *,
    old: Entity | Mapping[str, Any] | None = None,
    new: Entity | Mapping[str, Any] | None = None,
    keys: Mapping[str, Any] | None = None,
    ttl: bool = False,
    seq: str | None = None,
) -> dict[str, Any]:
    """A DynamoDB Streams record as Lambda delivers it, carrying what ``view`` carries."""
    old_item = old.to_item() if isinstance(old, Entity) else old
    new_item = new.to_item() if isinstance(new, Entity) else new
    some = new_item if new_item is not None else old_item
    assert some is not None or keys is not None
    stream: dict[str, Any] = {
        "ApproximateCreationDateTime": 1781000000.0,
        "Keys": dict(keys) if keys is not None else {"PK": some["PK"], "SK": some["SK"]},  # type: ignore[index]
        "SequenceNumber": seq or str(next(_sequence)),
        "SizeBytes": 100,
        "StreamViewType": view,
    }
    if new_item is not None and view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES"):
        stream["NewImage"] = new_item
    if old_item is not None and view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"):
        stream["OldImage"] = old_item
    result: dict[str, Any] = {
        "eventID": f"event-{stream['SequenceNumber']}",
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": stream,
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/StreamShop/stream/x",
    }
    if ttl:
        result["userIdentity"] = {"type": "Service", "principalId": TTL_PRINCIPAL}
    return result


def lifecycle(view: str) -> list[dict[str, Any]]:
    """Insert, modify and remove one customer, under ``view``."""
    return [
        record("INSERT", view, new=ANN, seq="1"),
        record("MODIFY", view, old=ANN, new=ANNE, seq="2"),
        record("REMOVE", view, old=ANNE, seq="3"),
    ]


def sequence_numbers(response: Mapping[str, Any]) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


# -- Table(stream=...) ---------------------------------------------------------------------------


def test_stream_specification_in_create_table_params_and_cloudformation() -> None:
    for view in ("NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"):
        table = Table("T", stream=view)  # type: ignore[arg-type]
        params = table.create_table_params()
        assert params["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": view}
        resource = table.cloudformation()["Properties"]
        assert resource["StreamSpecification"] == {"StreamViewType": view}
    plain = Table("T")
    assert "StreamSpecification" not in plain.create_table_params()
    assert "StreamSpecification" not in plain.cloudformation()["Properties"]


def test_an_unknown_stream_view_type_is_refused() -> None:
    with pytest.raises(ModelDefinitionError, match="NEW_AND_OLD_IMAGES"):
        Table("T", stream="NEW_AND_OLD")  # type: ignore[arg-type]


# -- decoding every view type --------------------------------------------------------------------


def test_new_and_old_images() -> None:
    inserted, modified, removed = StreamRouter(Shop).events(lifecycle("NEW_AND_OLD_IMAGES"))
    assert isinstance(inserted, Inserted) and inserted.old is None and inserted.new == ANN
    assert isinstance(modified, Modified) and (modified.old, modified.new) == (ANN, ANNE)
    assert isinstance(removed, Removed) and removed.old == ANNE and removed.new is None
    assert [e.sequence_number for e in (inserted, modified, removed)] == ["1", "2", "3"]
    assert [e.event_id for e in (inserted, modified, removed)] == ["event-1", "event-2", "event-3"]
    assert all(e.entity is Customer for e in (inserted, modified, removed))
    assert all(e.keys == keys_of(ANN) for e in (inserted, modified, removed))
    assert not any(e.expired for e in (inserted, modified, removed))


def test_new_image_only() -> None:
    inserted, modified, removed = StreamRouter(Shop).events(lifecycle("NEW_IMAGE"))
    assert (inserted.old, inserted.new) == (None, ANN)
    assert (modified.old, modified.new) == (None, ANNE)
    # A deletion carries no new image: the entity is found by its keys.
    assert isinstance(removed, Removed) and (removed.old, removed.new) == (None, None)
    assert removed.entity is Customer and removed.keys == keys_of(ANN)


def test_old_image_only() -> None:
    inserted, modified, removed = StreamRouter(Shop).events(lifecycle("OLD_IMAGE"))
    assert isinstance(inserted, Inserted) and (inserted.old, inserted.new) == (None, None)
    assert inserted.entity is Customer
    assert (modified.old, modified.new) == (ANN, None)
    assert (removed.old, removed.new) == (ANNE, None)


def test_keys_only_finds_the_entity_by_its_key_templates() -> None:
    records = [*lifecycle("KEYS_ONLY"), record("INSERT", "KEYS_ONLY", new=ORDER, seq="4")]
    events = list(StreamRouter(Shop).events(records))
    assert [type(e) for e in events] == [Inserted, Modified, Removed, Inserted]
    assert [e.entity for e in events] == [Customer, Customer, Customer, Order]
    assert all(e.old is None and e.new is None for e in events)
    assert events[3].keys == keys_of(ORDER)
    assert Order.parse_key(events[3].keys) == {"customer_id": "c1", "order_id": "o1"}


def test_keys_matching_no_template_are_skipped() -> None:
    stray = {"PK": {"S": "INVOICE#9"}, "SK": {"S": "INVOICE"}}
    records = [record("INSERT", "KEYS_ONLY", keys=stray), record("INSERT", "KEYS_ONLY", new=ORDER)]
    assert [e.entity for e in StreamRouter(Shop).events(records)] == [Order]


def test_a_lambda_event_or_a_list_of_records() -> None:
    router = StreamRouter(Shop)
    records = lifecycle("NEW_AND_OLD_IMAGES")
    assert list(router.events({"Records": records})) == list(router.events(records))
    with pytest.raises(InvalidRequestError, match="Records"):
        list(router.events({"records": records}))


def test_events_compare_by_value_and_are_read_only() -> None:
    first = list(StreamRouter(Shop).events(lifecycle("NEW_AND_OLD_IMAGES")))
    again = list(StreamRouter(Shop).events(lifecycle("NEW_AND_OLD_IMAGES")))
    assert first == again
    assert first[1] == Modified(Customer, keys_of(ANN), ANN, ANNE, "event-2", "2")
    with pytest.raises(AttributeError):
        first[0].new = ANNE  # type: ignore[misc]
    assert "Modified[Customer]" in repr(first[1])
    assert first[1] != first[0] and first[1] != Inserted(Customer, keys_of(ANN), None, ANNE)
    for copied in (
        copy.copy(first[1]),
        copy.deepcopy(first[1]),
        pickle.loads(pickle.dumps(first[1])),
    ):
        assert copied == first[1] and type(copied) is Modified


# -- TTL, unknown types, guard items -------------------------------------------------------------


@pytest.mark.parametrize("view", ["NEW_AND_OLD_IMAGES", "OLD_IMAGE", "KEYS_ONLY", "NEW_IMAGE"])
def test_ttl_deletions_are_expired(view: str) -> None:
    records = [
        record("REMOVE", view, old=SESSION, ttl=True),
        record("REMOVE", view, old=SESSION),
        record("REMOVE", view, old=SESSION) | {"userIdentity": {"principalId": "someone"}},
    ]
    events = list(StreamRouter(Shop).events(records))
    assert [e.expired for e in events] == [True, False, False]
    assert all(e.entity is Session for e in events)
    if view in ("NEW_AND_OLD_IMAGES", "OLD_IMAGE"):
        assert events[0].old == SESSION


def test_expired_is_only_for_deletions() -> None:
    (event,) = StreamRouter(Shop).events([record("INSERT", "NEW_IMAGE", new=SESSION, ttl=True)])
    assert event.expired is False


def test_unknown_types_and_untagged_items_are_skipped() -> None:
    other = {"PK": {"S": "X#1"}, "SK": {"S": "X"}, "_type": {"S": "INVOICE"}, "n": {"N": "1"}}
    untagged = {"PK": {"S": "Y#1"}, "SK": {"S": "Y"}}
    records = [
        record("INSERT", "NEW_AND_OLD_IMAGES", new=other),
        record("INSERT", "NEW_AND_OLD_IMAGES", new=untagged),
        record("MODIFY", "NEW_AND_OLD_IMAGES", old=other, new=other),
        record("INSERT", "NEW_AND_OLD_IMAGES", new=ORDER, seq="77"),
    ]
    events = list(StreamRouter(Shop).events(records))
    assert [e.sequence_number for e in events] == ["77"]


@pytest.mark.parametrize("view", ["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"])
def test_unique_guard_items_are_skipped(view: str) -> None:
    guard = {
        "PK": {"S": "__unique__#CUSTOMER#email#ann@example.com"},
        "SK": {"S": "__unique__"},
        "_type": {"S": "__unique__"},
        "_owner": {"S": '["CUSTOMER#c1", "PROFILE"]'},
    }
    records = [
        record("INSERT", view, new=guard),
        record("INSERT", view, new=ANN, seq="9"),
        record("REMOVE", view, old=guard),
    ]
    assert [e.sequence_number for e in StreamRouter(Shop).events(records)] == ["9"]


def test_a_guard_key_never_parses_as_an_entity() -> None:
    """Even an entity whose key templates match anything leaves guard keys alone."""
    table = Table("Loose")

    class Anything(Entity, table=table, type="ANY"):
        pk: str
        sk: str

        class Keys:
            pk = "{pk}"
            sk = "{sk}"

    class Loose(Repository, table=table):
        anything = get(Anything)

    guard = {"PK": {"S": "__unique__#ANY#x#1"}, "SK": {"S": "__unique__"}}
    plain = {"PK": {"S": "a"}, "SK": {"S": "b"}}
    records = [record("INSERT", "KEYS_ONLY", keys=guard), record("INSERT", "KEYS_ONLY", keys=plain)]
    assert [e.keys for e in StreamRouter(Loose).events(records)] == [plain]


def test_an_item_under_a_former_type_tag_is_the_entity() -> None:
    renamed = Table("Renamed", stream="NEW_AND_OLD_IMAGES")

    class Invoice(Entity, table=renamed, type="INVOICE", former_types=("Bill",)):
        invoice_id: str

        class Keys:
            pk = "INVOICE#{invoice_id}"
            sk = "INVOICE"

    class Billing(Repository, table=renamed):
        invoice = get(Invoice)

    current = Invoice(invoice_id="i1")
    stored_before = current.to_item() | {"_type": {"S": "Bill"}}  # written before the rename
    records = [
        record("INSERT", "NEW_AND_OLD_IMAGES", new=stored_before, seq="1"),
        record("MODIFY", "NEW_AND_OLD_IMAGES", old=stored_before, new=current, seq="2"),
    ]
    inserted, modified = StreamRouter(Billing).events(records)
    assert inserted.new == current and inserted.entity is Invoice
    assert (modified.old, modified.new) == (current, current)


# -- decoding failures ---------------------------------------------------------------------------


def broken_order() -> dict[str, Any]:
    item = ORDER.to_item()
    item["total"] = {"S": "not a number"}
    return item


def test_a_record_that_does_not_decode_names_its_sequence_number() -> None:
    records = [
        record("INSERT", "NEW_AND_OLD_IMAGES", new=ANN, seq="1"),
        record("INSERT", "NEW_AND_OLD_IMAGES", new=broken_order(), seq="2"),
    ]
    events = StreamRouter(Shop).events(records)
    assert next(events).new == ANN
    with pytest.raises(ItemDecodeError, match=r"stream record 2 \(INSERT of Order\)") as caught:
        next(events)
    assert "not a number" not in str(caught.value)  # names the field, never the value
    assert "total" in str(caught.value)


def test_a_broken_old_image_fails_too() -> None:
    records = [record("MODIFY", "NEW_AND_OLD_IMAGES", old=broken_order(), new=ORDER, seq="5")]
    with pytest.raises(ItemDecodeError, match="stream record 5"):
        list(StreamRouter(Shop).events(records))


def test_an_old_image_of_another_type_fails() -> None:
    records = [record("MODIFY", "NEW_AND_OLD_IMAGES", old=SESSION, new=ORDER, seq="6")]
    with pytest.raises(ItemDecodeError, match=r"stream record 6 .*SESSION"):
        list(StreamRouter(Shop).events(records))


def test_an_unknown_event_name_is_refused() -> None:
    with pytest.raises(ItemDecodeError, match=r"stream record 7: unknown eventName 'RENAME'"):
        list(StreamRouter(Shop).events([record("RENAME", "NEW_IMAGE", new=ANN, seq="7")]))


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"N": "1"}
    for _ in range(depth):
        value = {"M": {"a": value}}
    return value


def _order_record(seq: str = "9", view: str = "NEW_AND_OLD_IMAGES") -> dict[str, Any]:
    return record("MODIFY", view, old=ORDER, new=ORDER, seq=seq)


def _set(path: str, value: Any) -> Any:
    """A change to a record: set (or, with ``...``, delete) the part at a dotted path."""

    def change(rec: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        target = rec
        for part in parents:
            target = target[part]
        if value is ...:
            del target[last]
        else:
            target[last] = value
        return rec

    return change


# (a change to a valid MODIFY record with sequence number 9, what the error says)
MALFORMED = [
    (_set("dynamodb.NewImage", "ORDER#o1"), "stream record 9: its NewImage is not a map"),
    (_set("dynamodb.OldImage", ["PK"]), "stream record 9: its OldImage is not a map"),
    (_set("eventName", ...), "stream record 9: unknown eventName None"),
    (_set("eventName", ["MODIFY"]), "stream record 9: unknown eventName"),
    (_set("dynamodb.Keys", "PK"), "stream record 9: its Keys are not a map"),
    (_set("dynamodb.NewImage.total", nested(3000)), "stream record 9 (MODIFY of Order): an image"),
    (_set("dynamodb.NewImage.total", {"N": 5}), "stream record 9 (MODIFY of Order): an image"),
    (_set("dynamodb.OldImage.customer_name", {"M": "x"}), "stream record 9 (MODIFY of Order)"),
    (_set("dynamodb", ...), "a stream record without a sequence number has no dynamodb map"),
    (_set("dynamodb", "seq 9"), "a stream record without a sequence number has no dynamodb map"),
    (lambda rec: None, "a stream record is a map, not NoneType"),
    (lambda rec: "a record", "a stream record is a map, not str"),
]


@pytest.mark.parametrize(("change", "message"), MALFORMED)
def test_a_malformed_record_is_an_item_decode_error_naming_it(change: Any, message: str) -> None:
    records = [record("INSERT", "NEW_AND_OLD_IMAGES", new=ANN, seq="8"), change(_order_record())]
    events = StreamRouter(Shop).events(records)
    assert next(events).new == ANN
    with pytest.raises(ItemDecodeError) as caught:
        next(events)
    assert caught.value.message.startswith(message), caught.value.message


@pytest.mark.parametrize(("change", "message"), MALFORMED)
def test_handle_reports_a_malformed_record_and_those_after_it(change: Any, message: str) -> None:
    router = StreamRouter(Shop)
    ran: list[str] = []
    router.on(Customer)(lambda event: ran.append(event.sequence_number))
    router.on(Order)(lambda event: ran.append(event.sequence_number))
    records = [
        record("INSERT", "NEW_AND_OLD_IMAGES", new=ANN, seq="8"),
        change(_order_record()),
        record("INSERT", "NEW_AND_OLD_IMAGES", new=ORDER, seq="10"),
    ]
    failed = sequence_numbers(router.handle({"Records": records}))
    assert failed[1:] == ["10"] and failed[0] in ("9", "")  # "" when it has no number
    assert ran == ["8"]
    ran.clear()
    assert sequence_numbers(asyncio.run(router.handle_async({"Records": records}))) == failed
    assert ran == ["8"]


def test_odd_parts_a_record_does_not_need_are_tolerated() -> None:
    removed = record("REMOVE", "NEW_AND_OLD_IMAGES", old=ORDER, seq="3")
    removed["userIdentity"] = "dynamodb.amazonaws.com"  # not the map Lambda sends: not a TTL
    tagged = record("INSERT", "NEW_AND_OLD_IMAGES", new=ORDER, seq="4")
    tagged["dynamodb"]["NewImage"]["_type"] = "ORDER"  # no {"S": ...}: an untagged item
    events = list(StreamRouter(Shop).events([removed, tagged]))
    assert [(type(e), e.expired) for e in events] == [(Removed, False)]


@pytest.mark.parametrize(
    ("name", "view", "missing"),
    [
        ("INSERT", "NEW_AND_OLD_IMAGES", "NewImage"),
        ("INSERT", "NEW_IMAGE", "NewImage"),
        ("MODIFY", "NEW_AND_OLD_IMAGES", "NewImage"),
        ("MODIFY", "NEW_AND_OLD_IMAGES", "OldImage"),
        ("MODIFY", "NEW_IMAGE", "NewImage"),
        ("MODIFY", "OLD_IMAGE", "OldImage"),
        ("REMOVE", "NEW_AND_OLD_IMAGES", "OldImage"),
        ("REMOVE", "OLD_IMAGE", "OldImage"),
    ],
)
def test_a_record_without_an_image_its_view_promises_fails(
    name: str, view: str, missing: str
) -> None:
    images = {"INSERT": {"new": ORDER}, "MODIFY": {"old": ORDER, "new": ORDER}}
    lacking = record(name, view, **images.get(name, {"old": ORDER}), seq="5")  # type: ignore[arg-type]
    del lacking["dynamodb"][missing]
    with pytest.raises(ItemDecodeError) as caught:
        list(StreamRouter(Shop).events([lacking]))
    assert caught.value.message == (
        f"stream record 5 ({name} of Order): its {view} view promises a {missing}, and the "
        "record has none"
    )
    router = StreamRouter(Shop)
    handled: list[Any] = []
    router.on(Order)(handled.append)
    assert router.handle({"Records": [lacking]}) == {"batchItemFailures": [{"itemIdentifier": "5"}]}
    assert handled == []  # never reaches a handler with .new or .old set to None


def test_images_a_view_does_not_promise_may_be_absent() -> None:
    records = [
        record("INSERT", "KEYS_ONLY", keys=keys_of(ORDER), seq="1"),
        record("REMOVE", "NEW_IMAGE", keys=keys_of(ORDER), seq="2"),
        record("INSERT", "OLD_IMAGE", keys=keys_of(ORDER), seq="3"),
    ]
    events = list(StreamRouter(Shop).events(records))
    assert [(e.old, e.new) for e in events] == [(None, None)] * 3


def test_a_batch_whose_records_are_not_a_list_is_refused() -> None:
    with pytest.raises(InvalidRequestError, match="Records"):
        StreamRouter(Shop).handle({"Records": None})


# -- handlers ------------------------------------------------------------------------------------


def test_handlers_run_in_record_order_by_entity_and_event() -> None:
    router = StreamRouter(Shop)
    calls: list[tuple[str, str]] = []

    @router.on(Customer)
    def every_customer_event(
        event: Inserted[Customer] | Modified[Customer] | Removed[Customer],
    ) -> None:
        calls.append(("customer", event.sequence_number))

    @router.on(Customer, "MODIFY")
    def customer_changed(event: Modified[Customer]) -> None:
        calls.append((f"{event.old.name}->{event.new.name}", event.sequence_number))

    @router.on(Order, "INSERT")
    def order_placed(event: Inserted[Order]) -> None:
        calls.append(("order", event.sequence_number))

    assert customer_changed.__name__ == "customer_changed"  # returned unchanged
    records = [*lifecycle("NEW_AND_OLD_IMAGES"), record("INSERT", "NEW_IMAGE", new=ORDER, seq="4")]
    assert router.handle({"Records": records}) == {"batchItemFailures": []}
    assert calls == [
        ("customer", "1"),
        ("customer", "2"),
        ("Ann->Anne", "2"),
        ("customer", "3"),
        ("order", "4"),
    ]


def test_a_raising_handler_fails_its_record_and_every_one_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    router = StreamRouter(Shop)
    ran: list[str] = []

    @router.on(Order)
    def order_event(event: Inserted[Order] | Modified[Order] | Removed[Order]) -> None:
        ran.append(event.sequence_number)
        if event.sequence_number == "12":
            raise RuntimeError("downstream is down")

    records = [
        record("INSERT", "NEW_IMAGE", new=ORDER, seq="11"),
        record("MODIFY", "NEW_IMAGE", new=ORDER, seq="12"),
        record("INSERT", "NEW_IMAGE", new=ANN, seq="13"),
        record("REMOVE", "NEW_IMAGE", old=ORDER, seq="14"),
    ]
    with caplog.at_level(logging.WARNING, logger="singletable"):
        response = router.handle({"Records": records})
    assert response == {
        "batchItemFailures": [
            {"itemIdentifier": "12"},
            {"itemIdentifier": "13"},
            {"itemIdentifier": "14"},
        ]
    }
    assert ran == ["11", "12"]  # the records after the failure were not processed
    (message,) = [r.getMessage() for r in caplog.records]
    assert "12" in message and "RuntimeError" in message and "downstream" not in message


def test_a_record_that_does_not_decode_is_a_batch_item_failure() -> None:
    router = StreamRouter(Shop)
    ran: list[str] = []
    router.on(Order)(lambda event: ran.append(event.sequence_number))
    records = [
        record("INSERT", "NEW_IMAGE", new=ORDER, seq="21"),
        record("INSERT", "NEW_IMAGE", new=broken_order(), seq="22"),
        record("INSERT", "NEW_IMAGE", new=ORDER, seq="23"),
    ]
    response = router.handle({"Records": records})
    assert sequence_numbers(response) == ["22", "23"]
    assert ran == ["21"]


def test_skipped_records_never_fail() -> None:
    router = StreamRouter(Shop)
    router.on(Order)(lambda event: None)
    guard = {"PK": {"S": "__unique__#CUSTOMER#email#x"}, "SK": {"S": "__unique__"}}
    records = [record("INSERT", "KEYS_ONLY", keys=guard), record("INSERT", "NEW_IMAGE", new=ANN)]
    assert router.handle({"Records": records}) == {"batchItemFailures": []}


def test_an_async_handler_needs_handle_async() -> None:
    router = StreamRouter(Shop)
    seen: list[str] = []

    async def changed(event: Modified[Customer]) -> None:
        seen.append(event.new.name)

    router.on(Customer, "MODIFY")(changed)
    records = lifecycle("NEW_AND_OLD_IMAGES")
    assert sequence_numbers(router.handle({"Records": records})) == ["2", "3"]
    assert seen == []
    assert asyncio.run(router.handle_async({"Records": records})) == {"batchItemFailures": []}
    assert seen == ["Anne"]


def test_handle_async_reports_failures_like_handle() -> None:
    router = StreamRouter(Shop)

    async def fails(event: Inserted[Order]) -> None:
        raise ValueError("no")

    router.on(Order, "INSERT")(fails)
    records = [
        record("INSERT", "NEW_IMAGE", new=ANN, seq="1"),
        record("INSERT", "NEW_IMAGE", new=ORDER, seq="2"),
    ]
    response = asyncio.run(router.handle_async({"Records": records}))
    assert sequence_numbers(response) == ["2"]


def test_registration_is_checked() -> None:
    router = StreamRouter(Shop)
    with pytest.raises(ModelDefinitionError, match="UPSERT"):
        router.on(Customer, "UPSERT")  # type: ignore[call-overload]
    other = Table("Elsewhere")

    class Stranger(Entity, table=other, type="STRANGER"):
        stranger_id: str

        class Keys:
            pk = "S#{stranger_id}"
            sk = "S"

    with pytest.raises(ModelDefinitionError, match="Stranger"):
        router.on(Stranger)
    with pytest.raises(ModelDefinitionError, match="repository class"):
        StreamRouter(Customer)  # type: ignore[arg-type]


# -- a property: decoding is from_item ----------------------------------------------------------


@given(
    name=st.text(min_size=1, max_size=20),
    total=st.decimals(min_value=-(10**9), max_value=10**9, places=2, allow_nan=False),
    view=st.sampled_from(["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE"]),
)
def test_images_decode_to_what_was_encoded(name: str, total: Decimal, view: str) -> None:
    order = Order(customer_id="c1", order_id="o1", customer_name=name, total=total)
    before = ORDER
    (event,) = StreamRouter(Shop).events([record("MODIFY", view, old=before, new=order)])
    assert event.new == (order if view != "OLD_IMAGE" else None)
    assert event.old == (before if view != "NEW_IMAGE" else None)


# -- read_stream over a scripted client ----------------------------------------------------------


class ScriptedStreams:
    """A dynamodbstreams client stand-in: two shards (a parent and its child, listed child
    first, over two DescribeStream pages), each with records over two get_records pages."""

    def __init__(self) -> None:
        self.shards = {
            "child": ["c1", "c2", "c3"],
            "parent": ["p1", "p2"],
        }
        self.calls: list[str] = []

    def describe_stream(self, **params: Any) -> dict[str, Any]:
        self.calls.append("describe_stream")
        if "ExclusiveStartShardId" not in params:
            shards = [{"ShardId": "child", "ParentShardId": "parent"}]
            return {"StreamDescription": {"Shards": shards, "LastEvaluatedShardId": "child"}}
        return {"StreamDescription": {"Shards": [{"ShardId": "parent"}]}}

    def get_shard_iterator(self, **params: Any) -> dict[str, Any]:
        assert params["ShardIteratorType"] == "TRIM_HORIZON"
        return {"ShardIterator": f"{params['ShardId']}:0"}

    def get_records(self, *, ShardIterator: str) -> dict[str, Any]:
        self.calls.append(ShardIterator)
        shard, position = ShardIterator.split(":")
        start = int(position)
        records = [{"eventID": r} for r in self.shards[shard][start : start + 2]]
        return {"Records": records, "NextShardIterator": f"{shard}:{start + 2}"}


def test_read_stream_reads_parents_first_until_a_page_is_empty() -> None:
    client = ScriptedStreams()
    assert [r["eventID"] for r in read_stream(client, "arn")] == ["p1", "p2", "c1", "c2", "c3"]
    assert client.calls == [
        "describe_stream",
        "describe_stream",
        "parent:0",
        "parent:2",
        "child:0",
        "child:2",
        "child:4",
    ]
