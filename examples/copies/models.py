"""The copies table: customers and their orders, each order holding a copy of the name.

PK                  SK                         attributes
CUSTOMER#<id>       PROFILE                    name, email
CUSTOMER#<id>       ORDER#<placed_at>#<id>     customer_name (a copy), total, status

The stream (NEW_AND_OLD_IMAGES) carries every change with the item before and after it, which
is what a propagation needs: the old name (the copies to look for) and the new one.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from singletable import Entity, Table, Version

copies = Table("Copies", stream="NEW_AND_OLD_IMAGES")


class Customer(Entity, table=copies, type="CUSTOMER"):
    """The source of the name."""

    customer_id: str
    name: str
    email: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"


class Order(Entity, table=copies, type="ORDER"):
    """An order, with its customer's name copied on, so one Query lists a customer's orders
    ready to show (no GetItem of the customer per order, no join)."""

    customer_id: str
    order_id: str
    placed_at: datetime
    customer_name: str  # a copy of Customer.name, kept in sync by Shop.customer_name_sync
    total: Decimal
    status: str = "PLACED"
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{placed_at}#{order_id}"
