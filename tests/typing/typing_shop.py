"""The model of the typed-call checks: every pattern kind, declared once as attributes in a
plain class mixed into both twins (as an application would write it).

mypy sees this module as it is and types the calls through the ``singletable.mypy`` plugin;
pyright reads ``typings/typing_shop.pyi``, which ``singletable stubs typing_shop:Shop``
generates from it (tests/project/test_typing.py keeps the two in step).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated

from pydantic import BaseModel

from singletable import (
    GSI,
    Attr,
    Entity,
    Param,
    Projection,
    Repository,
    Shard,
    Table,
    collection,
    get,
    query,
)
from singletable.aio import AsyncRepository

shop = Table(
    "TypedShop",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK", projection="KEYS_ONLY"),
        GSI("GSI3", pk="GSI3PK", sk="GSI3SK"),
    ],
)


class Status(str, Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"


class Address(BaseModel):
    city: str
    street: str = ""


class Customer(Entity, table=shop):
    customer_id: str
    name: str
    email: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"
        GSI1 = ("EMAIL#{email}", "CUSTOMER#{customer_id}")


class Order(Entity, table=shop):
    customer_id: str
    order_id: str
    created_at: datetime
    status: Status
    total: Decimal
    rank: int = 0
    shipping: Address = Address(city="")
    shard: Annotated[int, Shard(4, of="order_id")] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"
        GSI1 = ("STATUS#{status}", "{rank:sortable}#{order_id}")
        GSI2 = ("ORDERID#{order_id}", "ORDER")
        GSI3 = ("DAY#{shard}", "{created_at}")


class OrderSummary(Projection[Order]):
    order_id: str
    total: Decimal


class ShopPatterns:
    """Every pattern kind, as attributes."""

    customer = get(Customer)
    order_summary = get(Order, project=OrderSummary)
    customer_by_email = query(Customer, index="GSI1", one=True)
    customer_orders = query(Order, order="desc")
    order_summaries = query(Order, project=OrderSummary)
    orders_by_status = query(Order, index="GSI1")
    order_refs = query(Order, index="GSI2", keys_only=True)
    big_orders = query(Order, where=Attr("total").gte(Param("least")))
    shipped_to = query(Order, where=lambda o, op: op.eq(o.shipping.city, Param("city")))
    recent_everywhere = query(Order, index="GSI3", scatter="shard", order="desc")
    customer_home = collection(Customer, Order)


class Shop(ShopPatterns, Repository, table=shop): ...


class AsyncShop(ShopPatterns, AsyncRepository, table=shop): ...
