"""DynamoDB Streams end to end: writes through the repository (either twin) -> the table's
stream -> ``read_stream`` -> ``StreamRouter`` -> typed events equal to what was written, in
order per item, under every stream view type.

moto serves DynamoDB Streams in process and on its server; dynalite accepts
``StreamSpecification`` but ignores it (no stream, no ``dynamodbstreams`` API), so these tests
are marked ``requires("streams")``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Annotated, Any

import pytest
from moto_fixtures import NOW

from singletable import Entity, Repository, Table, Unique, get, query
from singletable.streams import Inserted, Modified, Removed, StreamRouter, read_stream

VIEWS = ("NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY")


def declare(view: str) -> tuple[type[Entity], type[Entity], type[Repository], Table]:
    """A customer (unique email: guard items in the stream) and orders on a table whose
    stream has ``view``."""
    table = Table(f"Streams-{view}", stream=view)  # type: ignore[arg-type]

    class Customer(Entity, table=table, type="CUSTOMER"):
        customer_id: str
        name: str
        email: Annotated[str, Unique()]

        class Keys:
            pk = "CUSTOMER#{customer_id}"
            sk = "PROFILE"

    class Order(Entity, table=table, type="ORDER"):
        customer_id: str
        order_id: str
        status: str = "PENDING"
        placed_at: datetime

        class Keys:
            pk = "CUSTOMER#{customer_id}"
            sk = "ORDER#{order_id}"

    class Shop(Repository, table=table):
        customer = get(Customer)
        customer_orders = query(Order)

    return Customer, Order, Shop, table


MODELS = {view: declare(view) for view in VIEWS}


def stream_arn(client: Any, table_name: str) -> str:
    arn: str = client.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
    return arn


def key_text(keys: dict[str, Any]) -> str:
    return f"{keys['PK']['S']}|{keys['SK']['S']}"


def expected(view: str, kind: type, old: Any, new: Any) -> tuple[type, Any, Any]:
    """What an event carries under ``view`` (images the view lacks are None)."""
    if view in ("NEW_IMAGE", "KEYS_ONLY"):
        old = None
    if view in ("OLD_IMAGE", "KEYS_ONLY"):
        new = None
    return kind, old, new


@pytest.mark.requires("streams", "transactions")
@pytest.mark.parametrize("view", VIEWS)
def test_written_items_come_back_as_typed_events_in_order_per_item(
    view: str, make_repo: Callable[..., Any], client: Any, backend: Any
) -> None:
    Customer, Order, Shop, table = MODELS[view]
    repo = make_repo(Shop, table)
    writes: list[tuple[type, Any, Any]] = []  # (event class, old, new) in write order

    ann = repo.create(Customer(customer_id="c1", name="Ann", email="ann@example.com"))
    writes.append((Inserted, None, ann))
    first = repo.create(Order(customer_id="c1", order_id="o1", placed_at=NOW))
    writes.append((Inserted, None, first))
    second = repo.create(Order(customer_id="c1", order_id="o2", placed_at=NOW + timedelta(1)))
    writes.append((Inserted, None, second))
    anne = repo.update(ann, name="Anne")
    writes.append((Modified, ann, anne))
    shipped = repo.update(first, status="SHIPPED")
    writes.append((Modified, first, shipped))
    renamed = repo.update(anne, email="anne@example.com")  # moves the guard item
    writes.append((Modified, anne, renamed))
    assert repo.delete(second) == second
    writes.append((Removed, second, None))

    records = list(read_stream(backend.streams_client(), stream_arn(client, repo.table_name)))
    events = list(StreamRouter(Shop).events(records))

    # Guard items (three guard writes) are in the stream, never among the events.
    guard_records = [r for r in records if r["dynamodb"]["Keys"]["PK"]["S"].startswith("__")]
    assert len(guard_records) == 3
    assert len(events) == len(writes)

    def by_item(pairs: list[tuple[str, Any]]) -> dict[str, list[Any]]:
        grouped: dict[str, list[Any]] = {}
        for key, value in pairs:
            grouped.setdefault(key, []).append(value)
        return grouped

    def key_of(kind: type, old: Any, new: Any) -> str:
        return key_text((new if new is not None else old).to_item())

    wanted = by_item([(key_of(*w), expected(view, *w)) for w in writes])
    got = by_item([(key_text(e.keys), (type(e), e.old, e.new)) for e in events])
    assert got == wanted
    assert {e.entity for e in events} == {Customer, Order}
    assert all(e.sequence_number and e.event_id and not e.expired for e in events)
    numbers = [int(e.sequence_number) for e in events]
    assert numbers == sorted(numbers)  # one shard here: record order is write order


@pytest.mark.requires("streams", "transactions")
def test_the_router_handles_what_read_stream_returns(
    make_repo: Callable[..., Any], client: Any, backend: Any
) -> None:
    Customer, Order, Shop, table = MODELS["NEW_AND_OLD_IMAGES"]
    repo = make_repo(Shop, table)
    router = StreamRouter(Shop)
    names: list[tuple[str, str]] = []
    orders: list[str] = []

    @router.on(Customer, "MODIFY")
    def customer_changed(event: Modified[Any]) -> None:
        names.append((event.old.name, event.new.name))

    @router.on(Order)
    def order_event(event: Inserted[Any] | Modified[Any] | Removed[Any]) -> None:
        orders.append(event.event_name)

    ann = repo.create(Customer(customer_id="c1", name="Ann", email="ann@example.com"))
    order = repo.create(Order(customer_id="c1", order_id="o1", placed_at=NOW))
    repo.update(repo.update(ann, name="Anne"), name="Anna")
    repo.delete(order)
    records = list(read_stream(backend.streams_client(), stream_arn(client, repo.table_name)))
    assert router.handle({"Records": records}) == {"batchItemFailures": []}
    assert names == [("Ann", "Anne"), ("Anne", "Anna")]
    assert orders == ["INSERT", "REMOVE"]


@pytest.mark.requires("streams")
def test_create_turns_the_stream_on(client: Any, backend: Any, table_name: str) -> None:
    _, _, _, table = MODELS["KEYS_ONLY"]
    table.create(client, table_name=table_name)
    description = client.describe_table(TableName=table_name)["Table"]
    assert description["StreamSpecification"] == {
        "StreamEnabled": True,
        "StreamViewType": "KEYS_ONLY",
    }
    assert list(read_stream(backend.streams_client(), description["LatestStreamArn"])) == []
