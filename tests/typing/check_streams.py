"""Static typing of stream events, the router's handlers and propagations on both twins, checked
by ``mypy --strict`` in CI (never executed)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from typing_extensions import assert_type

from singletable import Entity, PropagationReport, Repository, Table, propagate, query
from singletable.aio import AsyncRepository
from singletable.streams import Inserted, Modified, Removed, StreamRouter, read_stream

table = Table("T", stream="NEW_AND_OLD_IMAGES")


class Customer(Entity, table=table):
    customer_id: str
    name: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"


class Order(Entity, table=table):
    customer_id: str
    order_id: str
    customer_name: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"


class ShopPatterns:
    customer_orders = query(Order)
    customer_name_sync = propagate(Customer, to=customer_orders, fields={"name": "customer_name"})


class Shop(ShopPatterns, Repository, table=table): ...


class AsyncShop(ShopPatterns, AsyncRepository, table=table): ...


router = StreamRouter(Shop)


@router.on(Customer, "MODIFY")
def customer_changed(event: Modified[Customer]) -> None:
    assert_type(event.old, Customer)
    assert_type(event.new, Customer)
    assert_type(event.old.name, str)
    assert_type(event.keys["PK"], Any)
    assert_type(event.sequence_number, str)
    assert_type(event.event_id, str)
    assert_type(event.expired, bool)


@router.on(Order, "INSERT")
def order_placed(event: Inserted[Order]) -> str:
    assert_type(event.new, Order)
    assert_type(event.old, None)
    return event.new.order_id


@router.on(Order, "REMOVE")
def order_removed(event: Removed[Order]) -> None:
    assert_type(event.old, Order)
    assert_type(event.new, None)


@router.on(Order)
def every_order_event(event: Inserted[Order] | Modified[Order] | Removed[Order]) -> None:
    assert_type(event.new, Order | None)
    assert_type(event.entity, type[Order])


assert_type(order_placed, Callable[[Inserted[Order]], str])  # the decorator keeps the type


def events() -> None:
    for event in router.events({"Records": []}):
        assert_type(event, Inserted[Any] | Modified[Any] | Removed[Any])
    assert_type(router.handle({"Records": []}), dict[str, list[dict[str, str]]])
    assert_type(read_stream(object(), "arn"), Iterator[dict[str, Any]])


def sync_twin(repo: Shop, old: Customer, new: Customer, event: Modified[Customer]) -> None:
    assert_type(repo.customer_name_sync(old, new), PropagationReport)
    assert_type(repo.customer_name_sync.on_event(event), PropagationReport)
    router.on(Customer, "MODIFY")(repo.customer_name_sync.on_event)
    report = repo.customer_name_sync(old, new)
    assert_type(report.matched + report.updated + report.skipped, int)


async def async_twin(
    repo: AsyncShop, old: Customer, new: Customer, event: Modified[Customer]
) -> None:
    assert_type(await repo.customer_name_sync(old, new), PropagationReport)
    pending = repo.customer_name_sync.on_event(event)
    _ = assert_type(pending, Coroutine[Any, Any, PropagationReport])
    assert_type(await pending, PropagationReport)
    router.on(Customer, "MODIFY")(repo.customer_name_sync.on_event)
    assert_type(await router.handle_async({"Records": []}), dict[str, list[dict[str, str]]])


def wrong(repo: Shop, order: Order, event: Inserted[Customer]) -> None:
    repo.customer_name_sync(order, order)  # type: ignore[arg-type]
    repo.customer_name_sync.on_event(event)  # type: ignore[arg-type]
    router.on(Customer, "MODIFY")(order_placed)  # type: ignore[arg-type]
    router.on(Customer, "RENAME")  # type: ignore[call-overload]
