"""Models for tests/backend/test_scatter.py: scatter over finite domains (an Enum first in a sort
key, a Literal in a partition key, random and hashed ``Shard`` fields) on template and native
indexes, scatter collections, and scans of sparse indexes.

``book`` holds only derived and single-attribute native indexes, so every backend serves it
(dynalite included).
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Literal

from singletable import (
    GSI,
    Entity,
    Index,
    Repository,
    Shard,
    Table,
    collection,
    get,
    query,
    scan,
)


class Status(str, Enum):
    OPEN = "OPEN"
    PAID = "PAID"
    SHIPPED = "SHIPPED"


class State(str, Enum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"


book = Table(
    "Book",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),  # a customer's orders: the status first
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),  # orders and lines in random write shards
        GSI("GSI3", pk="GSI3PK", sk="GSI3SK"),  # sparse (when=): open orders by region
        GSI("ByRegion", pk=("region",), sk=("opened_at",)),  # native, sparse: opened_at
    ],
    ttl_attribute="expires_at",
)


class Order(Entity, table=book, type="ORDER"):
    customer_id: str
    order_id: str
    status: Status
    created_at: datetime
    region: Literal["eu", "us"]
    bucket: Annotated[int, Shard(4)] = 0  # drawn at random by create, put and batch_put
    opened_at: datetime | None = None  # only open orders are in ByRegion
    expires_at: datetime | None = None

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "#ORDER"
        GSI1 = ("CUSTOMER#{customer_id}", "STATUS#{status}#{created_at}#{order_id}")
        GSI2 = ("BUCKET#{bucket}", "{created_at}#{order_id}#ORDER")
        GSI3 = Index("OPEN#{region}", "{created_at}#{order_id}", when={"status": Status.OPEN})


class Line(Entity, table=book, type="LINE"):
    order_id: str
    line_no: int
    created_at: datetime
    sku: str
    bucket: Annotated[int, Shard(4)] = 0

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "LINE#{line_no:03d}"
        GSI2 = ("BUCKET#{bucket}", "{created_at}#{order_id}#LINE#{line_no:03d}")


class Ticket(Entity, table=book, type="TICKET"):
    desk_id: str
    ticket_id: str
    state: State
    opened_at: datetime

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "#TICKET"
        GSI1 = ("DESK#{desk_id}", "{state}#T#{opened_at}#{ticket_id}")


class Note(Entity, table=book, type="NOTE"):
    desk_id: str
    note_id: str
    state: State
    written_at: datetime

    class Keys:
        pk = "NOTE#{note_id}"
        sk = "#NOTE"
        GSI1 = ("DESK#{desk_id}", "{state}#N#{written_at}#{note_id}")


class Book(Repository, table=book):
    order = get(Order)
    # an Enum first in a template sort key: one Query per status, merged by created_at
    customer_orders = query(Order, index="GSI1", scatter="status")
    newest_customer_orders = query(
        Order, index="GSI1", scatter="status", order="desc", max_concurrency=2
    )
    # random write shards in a partition key: one Query per shard
    recent_orders = query(Order, index="GSI2", scatter="bucket", order="desc")
    orders_and_lines = collection(Order, Line, index="GSI2", scatter="bucket")
    # a collection scattered over an Enum first in the sort key
    desk_board = collection(Ticket, Note, index="GSI1", scatter="state")
    # a Literal in a partition key, on a sparse (when=) index; and a scan of that index
    open_in_regions = query(Order, index="GSI3", scatter="region")
    open_orders = scan(Order, index="GSI3")
    # the same on a native index keyed on optional fields
    open_everywhere = query(Order, index="ByRegion", scatter="region", order="desc")
    opened_orders = scan(Order, index="ByRegion")
