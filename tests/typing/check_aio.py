"""Static typing of the async twin and of patterns declared once for both twins, checked by
``mypy --strict`` in CI (never executed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any

from typing_extensions import assert_type

from singletable import (
    Collection,
    Entity,
    Page,
    Repository,
    Table,
    Transaction,
    collection,
    get,
    query,
    transaction,
)
from singletable.aio import AsyncRepository

table = Table("T")


class Customer(Entity, table=table):
    customer_id: str
    email: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"


class Order(Entity, table=table):
    customer_id: str
    order_id: str
    created_at: datetime

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"


class ShopPatterns:
    """Patterns and transaction methods declared once, for both twins."""

    customer = get(Customer)
    customer_orders = query(Order, order="desc")
    customer_by_email = query(Customer, one=True)
    customer_home = collection(Customer, Order)

    @transaction
    def place_order(self, tx: Transaction, order: Order) -> Order:
        created: Order = tx.create(order)
        return created

    @transaction
    def place_two(self, tx: Transaction, first: Order, second: Order) -> int:
        # a transaction method called from another's body joins it and returns its result
        assert_type(self.place_order(first), Order)
        self.place_order(second)
        return 2


class Shop(ShopPatterns, Repository, table=table): ...


class AsyncShop(ShopPatterns, AsyncRepository, table=table): ...


def sync_twin(repo: Shop, order: Order) -> None:
    assert_type(repo.customer(customer_id="1"), Customer | None)
    assert_type(repo.customer_orders(customer_id="1"), Page[Order])
    assert_type(repo.customer_orders.all(customer_id="1"), Iterator[Order])
    assert_type(repo.customer_by_email(customer_id="1"), Customer | None)
    assert_type(repo.customer_home(customer_id="1"), Collection)
    assert_type(repo.place_order(order), Order)
    assert_type(repo.update(order, order_id="2"), Order)
    assert_type(repo.update(Order, customer_id="1", set={"order_id": "2"}), Order)
    assert_type(repo.delete(Order, customer_id="1"), Order | None)


async def async_twin(repo: AsyncShop, order: Order) -> None:
    assert_type(await repo.customer(customer_id="1"), Customer | None)
    assert_type(await repo.customer_orders(customer_id="1", limit=10), Page[Order])
    assert_type(repo.customer_orders.all(customer_id="1"), AsyncIterator[Order])
    assert_type(repo.customer_orders.pages(customer_id="1"), AsyncIterator[Page[Order]])
    assert_type(await repo.customer_orders.first(customer_id="1"), Order | None)
    assert_type(await repo.customer_orders.count(customer_id="1"), int)
    assert_type(await repo.customer_by_email(customer_id="1"), Customer | None)
    assert_type(await repo.customer_home(customer_id="1"), Collection)
    assert_type(await repo.customer_home.all(customer_id="1"), Collection)
    assert_type(repo.customer.params(customer_id="1"), dict[str, Any])
    assert_type(await repo.place_order(order), Order)
    assert_type(await repo.create(order), Order)
    assert_type(await repo.put(order), Order)
    assert_type(await repo.move(order, order_id="2"), Order)
    assert_type(await repo.update(order, order_id="2"), Order)
    assert_type(await repo.update(Order, customer_id="1", set={"order_id": "2"}), Order)
    assert_type(await repo.delete(order), Order | None)
    async for item in repo.customer_orders.all(customer_id="1"):
        assert_type(item, Order)
    async with repo.transaction() as tx:
        assert_type(tx, Transaction)
        tx.create(order)


async def connect() -> None:
    async with AsyncShop.connect(region_name="us-east-1") as repo:
        assert_type(repo, AsyncShop)
        assert_type(await repo.customer(customer_id="1"), Customer | None)
