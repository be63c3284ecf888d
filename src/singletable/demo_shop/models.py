"""The shop's table and entities.

Base table (PK / SK)                      GSI1 (GSI1PK / GSI1SK)                 Inverted (SK / PK)
CUSTOMER#<id> / PROFILE                   EMAIL#<email> / CUSTOMER#<id>
CUSTOMER#<id> / ORDER#<created>#<oid>     STATUS#<status>#<shard> / ORDER#<created>#<oid>
PRODUCT#<pid> / DETAILS                   CATEGORY#<category> / PRODUCT#<pid>
ORDER#<oid> / DETAILS
ORDER#<oid> / PRODUCT#<pid>                                                      PRODUCT#<pid> / …
ORDER#<oid> / PAYMENT#<payid>                                                    PAYMENT#<payid> / …

Two native-key indexes hold the orders keyed on their own fields (nothing derived, numbers
sorted as numbers): OrdersByStatus (customer_id / status, created_at) and OrdersByTotal
(customer_id / total).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated

from singletable import GSI, Entity, Projection, Shard, Table

shop = Table(
    "Shop",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        # The inverted index: the table's sort key becomes the partition key and vice versa,
        # so every relationship item can be read from its other end.
        GSI("Inverted", pk="SK", sk="PK"),
        # Native keys: indexes on Order's own fields. An Order is in them because it has
        # customer_id, status, created_at and total; nothing is derived or stored twice, a
        # status change is a plain SET that moves the order within OrdersByStatus, and
        # totals sort as numbers (8.50 before 34.00 before 318.50).
        GSI("OrdersByStatus", pk=("customer_id",), sk=("status", "created_at")),
        GSI("OrdersByTotal", pk=("customer_id",), sk=("total",)),
    ],
)


class OrderStatus(str, Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    SHIPPED = "SHIPPED"
    CANCELLED = "CANCELLED"


class Customer(Entity, table=shop, type="CUSTOMER"):
    customer_id: str
    name: str
    email: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"
        GSI1 = ("EMAIL#{email}", "CUSTOMER#{customer_id}")


class Product(Entity, table=shop, type="PRODUCT"):
    product_id: str
    name: str
    category: str
    price: Decimal
    stock: int

    class Keys:
        pk = "PRODUCT#{product_id}"
        sk = "DETAILS"
        GSI1 = ("CATEGORY#{category}", "PRODUCT#{product_id}")


class Order(Entity, table=shop, type="ORDER"):
    """The order as its customer lists it: under the customer, newest first."""

    customer_id: str
    order_id: str
    created_at: datetime
    status: OrderStatus
    total: Decimal
    item_count: int
    customer_name: str  # denormalised: order lists show it without reading the customer
    # Write sharding: every write sets shard to a fixed hash of order_id modulo 8, so the
    # orders of one status spread over 8 GSI1 partitions (orders_by_status reads all 8).
    shard: Annotated[int, Shard(8, of="order_id")] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"
        GSI1 = ("STATUS#{status}#{shard}", "ORDER#{created_at}#{order_id}")


class OrderSummary(Projection[Order]):
    """What an order list shows: four of Order's fields, read with a ProjectionExpression
    (a typed, read-only value; it cannot be written)."""

    order_id: str
    created_at: datetime
    status: OrderStatus
    total: Decimal


class OrderDetails(Entity, table=shop, type="ORDER_DETAILS"):
    """The head of the order's own partition; it knows the full key of the customer's Order."""

    order_id: str
    customer_id: str
    created_at: datetime
    shipping_address: str

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "DETAILS"


class OrderItem(Entity, table=shop, type="ORDER_ITEM"):
    """One line of an order, and the order→product edge of the adjacency list."""

    order_id: str
    product_id: str
    product_name: str
    quantity: int
    unit_price: Decimal

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "PRODUCT#{product_id}"
        Inverted = ("PRODUCT#{product_id}", "ORDER#{order_id}")


class Payment(Entity, table=shop, type="PAYMENT"):
    order_id: str
    payment_id: str
    amount: Decimal
    method: str
    paid_at: datetime

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "PAYMENT#{payment_id}"
        Inverted = ("PAYMENT#{payment_id}", "ORDER#{order_id}")
