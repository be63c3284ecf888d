"""Typed call sites: every correct use of an attribute-form pattern type-checks, with its
result pinned by ``assert_type`` — under mypy through the ``singletable.mypy`` plugin, under
pyright through the generated ``typings/typing_shop.pyi``. Condition callbacks are typed with
the entity wherever a signature is (declarations, ``condition=`` on writes and transactions,
call-time ``where=``). Never executed; tests/typing/mistakes/ holds the errors.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from tests.typing.typing_shop import AsyncShop, Customer, Order, OrderSummary, Shop, Status, shop
from typing_extensions import assert_type

from singletable import (
    Attr,
    Collection,
    Condition,
    ConditionFn,
    KeyRef,
    Operators,
    Page,
    Repository,
    Transaction,
    query,
    transaction,
)

JUNE = datetime(2026, 6, 1)


def sync_twin(repo: Shop) -> None:
    assert_type(repo.customer(customer_id="42"), Customer | None)
    assert_type(
        repo.order_summary(customer_id="42", created_at=JUNE, order_id="A1"), OrderSummary | None
    )
    assert_type(repo.customer_by_email(email="a@b.c"), Customer | None)
    assert_type(repo.customer_orders(customer_id="42"), Page[Order])
    assert_type(repo.customer_orders(customer_id="42", limit=10, cursor=None), Page[Order])
    assert_type(repo.customer_orders(customer_id="42", created_at__gte=JUNE), Page[Order])
    assert_type(
        repo.customer_orders(customer_id="42", created_at__between=(JUNE, JUNE)), Page[Order]
    )
    assert_type(
        repo.customer_orders(customer_id="42", created_at__begins_with="2026-06"), Page[Order]
    )
    assert_type(repo.customer_orders(customer_id="42", created_at=JUNE, order_id="A1"), Page[Order])
    assert_type(repo.order_summaries(customer_id="42"), Page[OrderSummary])
    assert_type(repo.orders_by_status(status=Status.PENDING, rank__gte=3), Page[Order])
    assert_type(repo.order_refs(order_id="A1"), Page[KeyRef[Order]])
    assert_type(repo.big_orders(customer_id="42", least=Decimal(50)), Page[Order])
    assert_type(repo.shipped_to(customer_id="42", city="Oslo"), Page[Order])
    assert_type(repo.recent_everywhere(created_at__gte=JUNE), Page[Order])
    assert_type(repo.customer_home(customer_id="42"), Collection)
    # the methods take the call's own keywords
    assert_type(repo.customer_orders.first(customer_id="42"), Order | None)
    assert_type(repo.customer_orders.count(customer_id="42"), int)
    assert_type(repo.customer_orders.all(customer_id="42"), Iterator[Order])
    assert_type(repo.customer_orders.pages(customer_id="42"), Iterator[Page[Order]])
    assert_type(repo.customer_orders.params(customer_id="42"), dict[str, Any])
    assert_type(repo.customer.params(customer_id="42"), dict[str, Any])
    assert_type(repo.customer_home.all(customer_id="42"), Collection)


def call_time_filters(repo: Shop) -> None:
    big = repo.customer_orders(
        customer_id="42", where=lambda o, op: op.gte(o.total, 50) & op.begins_with(o.order_id, "A")
    )
    assert_type(big, Page[Order])
    nested = repo.customer_orders(
        customer_id="42", where=lambda o, op: op.eq(o.shipping.city, "Oslo")
    )
    assert_type(nested, Page[Order])
    assert_type(repo.customer_orders(customer_id="42", where=Attr("total").gte(50)), Page[Order])
    assert_type(
        repo.customer_orders.first(customer_id="42", where=lambda o, op: op.exists(o.shipping)),
        Order | None,
    )


async def async_twin(repo: AsyncShop) -> None:
    assert_type(await repo.customer(customer_id="42"), Customer | None)
    assert_type(await repo.customer_by_email(email="a@b.c"), Customer | None)
    assert_type(await repo.customer_orders(customer_id="42", limit=5), Page[Order])
    assert_type(await repo.order_summaries(customer_id="42"), Page[OrderSummary])
    assert_type(await repo.order_refs(order_id="A1"), Page[KeyRef[Order]])
    assert_type(await repo.customer_home(customer_id="42"), Collection)
    assert_type(await repo.customer_orders.first(customer_id="42"), Order | None)
    assert_type(await repo.customer_orders.count(customer_id="42"), int)
    assert_type(repo.customer_orders.all(customer_id="42"), AsyncIterator[Order])
    assert_type(repo.customer_orders.pages(customer_id="42"), AsyncIterator[Page[Order]])
    assert_type(repo.customer_orders.params(customer_id="42"), dict[str, Any])
    assert_type(await repo.customer_home.all(customer_id="42"), Collection)
    page = await repo.customer_orders(customer_id="42", where=lambda o, op: op.lt(o.total, 5))
    assert_type(page, Page[Order])
    async for order in repo.customer_orders.all(customer_id="42"):
        assert_type(order, Order)


# -- callbacks where the signature is typed, plugin or not -----------------------------------


class Declared(Repository, table=shop):
    pending = query(Order, where=lambda o, op: op.eq(o.status, Status.PENDING))

    @query(Order, order="desc")
    def recent(
        self,
        *,
        customer_id: str,
        created_at__gte: datetime | None = None,
        limit: int | None = None,
        where: Condition | ConditionFn[Order] | None = None,
    ) -> Page[Order]:
        raise NotImplementedError  # never called: the signature is the declaration

    @transaction
    def ship(self, tx: Transaction, order: Order) -> None:
        tx.update(
            order, status=Status.SHIPPED, condition=lambda o, op: op.eq(o.status, Status.PENDING)
        )
        tx.put(order, condition=lambda o, op: op.exists(o.order_id))
        tx.delete(Order, customer_id="42", condition=lambda o, op: op.lt(o.total, 1))
        tx.condition_check(Customer, customer_id="42", condition=lambda c, op: op.exists(c.email))


def writes(repo: Declared, order: Order) -> None:
    assert_type(repo.recent(customer_id="42", where=lambda o, op: op.gt(o.total, 5)), Page[Order])
    assert_type(repo.recent.first(customer_id="42"), Order | None)
    assert_type(repo.recent.all(customer_id="42"), Iterator[Order])
    assert_type(repo.create(order, condition=lambda o, op: op.not_exists(o.order_id)), Order)
    assert_type(repo.put(order, condition=lambda o, op: op.is_in(o.status, Status.PENDING)), Order)
    assert_type(
        repo.update(order, total=Decimal(1), condition=lambda o, op: op.gte(o.total, 0)), Order
    )
    assert_type(
        repo.update(
            Order, customer_id="42", set={"rank": 1}, condition=lambda o, op: op.ne(o.rank, 1)
        ),
        Order,
    )
    assert_type(repo.delete(order, condition=lambda o, op: op.between(o.rank, 0, 9)), Order | None)
    assert_type(repo.delete(Order, customer_id="42", condition=Attr("rank").eq(1)), Order | None)


def operators(o: Order, op: Operators) -> None:
    assert_type(op.gte(o.total, 50) & op.begins_with(o.order_id, "A"), Condition)
    assert_type(~op.contains(o.order_id, "x") | op.not_exists(o.shipping.street), Condition)
