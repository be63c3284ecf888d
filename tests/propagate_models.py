"""Models for the propagation tests: customers whose name and tier are copied onto their orders.

The copies feed an index (``GSI1``: orders by customer name) and a sparse one (``GSI2``: gold
customers' orders, present only while the copied tier is ``"gold"``), so a propagation must move
derived keys and sparse membership along with the copies. Orders carry ``Version()``, so a
concurrent write to an order (say, its status) makes a propagation's update fail and retry.
Reviews hold a copy too, without ``Version()``.
"""

from __future__ import annotations

from typing import Annotated

from singletable import GSI, Entity, Index, Repository, Table, Version, get, propagate, query

copies = Table(
    "Copies",
    indexes=[GSI("GSI1", "GSI1PK", "GSI1SK"), GSI("GSI2", "GSI2PK", "GSI2SK")],
    stream="NEW_AND_OLD_IMAGES",
)


class Customer(Entity, table=copies, type="CUSTOMER"):
    customer_id: str
    name: str
    tier: str = "basic"
    note: str = ""

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"


class Order(Entity, table=copies, type="ORDER"):
    customer_id: str
    order_id: str
    customer_name: str
    customer_tier: str | None = None
    status: str = "PENDING"
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("NAME#{customer_name}", "ORDER#{order_id}")
        GSI2 = Index("GOLD#{customer_id}", "ORDER#{order_id}", when={"customer_tier": "gold"})


class Review(Entity, table=copies, type="REVIEW"):
    """A copy holder without ``Version()``: only the copy's own condition guards its update."""

    customer_id: str
    review_id: str
    author: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "REVIEW#{review_id}"


class CopyShop(Repository, table=copies):
    customer = get(Customer)
    order = get(Order)
    customer_orders = query(Order)
    orders_by_name = query(Order, index="GSI1")
    gold_orders = query(Order, index="GSI2")
    customer_reviews = query(Review)
    customer_sync = propagate(
        Customer, to=customer_orders, fields={"name": "customer_name", "tier": "customer_tier"}
    )
    author_sync = propagate(Customer, to=customer_reviews, fields={"name": "author"})
