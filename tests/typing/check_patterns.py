"""Static typing of the public API, checked by ``mypy --strict`` in CI (never executed).

Each ``assert_type`` pins the precise type an access pattern returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from typing_extensions import assert_type

from singletable import (
    GSI,
    Collection,
    Entity,
    KeyRef,
    Page,
    Repository,
    Table,
    collection,
    get,
    query,
)

table = Table(
    "T",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK", projection="KEYS_ONLY"),
    ],
)


class Customer(Entity, table=table):
    customer_id: str
    email: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"
        GSI1 = ("EMAIL#{email}", "CUSTOMER#{customer_id}")
        GSI2 = ("EMAIL#{email}", "CUSTOMER#{customer_id}")


class Order(Entity, table=table):
    customer_id: str
    order_id: str
    created_at: datetime

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"


class Shop(Repository, table=table):
    customer = get(Customer)
    customer_orders = query(Order, order="desc")
    customer_by_email = query(Customer, index="GSI1", one=True)
    customer_refs = query(Customer, index="GSI2", keys_only=True)
    customer_home = collection(Customer, Order)

    @query(Order, order="desc")
    def recent_orders(self, *, customer_id: str, limit: int | None = None) -> Page[Order]:
        """Never run: the signature is the declaration."""
        raise NotImplementedError


def check(repo: Shop, client: Any) -> None:
    assert_type(repo.customer(customer_id="42"), Customer | None)
    assert_type(repo.customer_orders(customer_id="42"), Page[Order])
    assert_type(repo.customer_orders(customer_id="42").items, list[Order])
    assert_type(repo.customer_orders(customer_id="42").cursor, str | None)
    assert_type(repo.customer_orders.all(customer_id="42"), Iterator[Order])
    assert_type(repo.customer_orders.first(customer_id="42"), Order | None)
    assert_type(repo.customer_orders.count(customer_id="42"), int)
    assert_type(repo.customer_orders.params(customer_id="42"), dict[str, Any])
    assert_type(repo.customer_by_email(email="a@b.c"), Customer | None)
    assert_type(repo.customer_refs(email="a@b.c"), Page[KeyRef[Customer]])
    home = repo.customer_home(customer_id="42")
    assert_type(home, Collection)
    assert_type(home.one(Customer), Customer | None)
    assert_type(home.all(Order), list[Order])
    assert_type(repo.recent_orders(customer_id="42", limit=5), Page[Order])
    repo.recent_orders(customer_idd="42")  # type: ignore[call-arg]
    repo.customer_orders(customer_idd="42")  # type: ignore[call-arg]  # (the mypy plugin)
    assert_type(repo.create(Customer(customer_id="1", email="x")), Customer)
    assert_type(repo.put(Customer(customer_id="1", email="x")), Customer)
    for order in repo.customer_orders(customer_id="42"):
        assert_type(order, Order)
    assert_type(Customer.from_item({}), Customer)
    assert_type(Customer(customer_id="1", email="x").to_item(), dict[str, Any])
    Shop(client=client, table_name="T-dev", cursor_secret=["a", "b"], default_limit=10)
