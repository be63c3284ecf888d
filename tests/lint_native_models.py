"""Models for the lint rules on native-key indexes (``GSI(name, pk=(...), sk=(...))``): for each
rule one repository that triggers it and one that does not, each on its own table.
``NativeCleanRepo`` has no finding at all."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated, Literal

from singletable import (
    GSI,
    Attr,
    Entity,
    Repository,
    Shard,
    Table,
    collection,
    get,
    query,
)


class Status(str, Enum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"


# -- a clean model: several entity types in native indexes, a collection, a KEYS_ONLY index -----

native_clean = Table(
    "NativeClean",
    indexes=[
        GSI("ByTenant", pk=("tenant_id", "region"), sk=("status", "created_at")),
        GSI("ByTotal", pk=("customer_id",), sk=("total",)),
        GSI("ByCode", pk=("code",), projection="KEYS_ONLY"),
        GSI("ByBoard", pk=("board_id",), sk=("SK",)),
    ],
)


class Sale(Entity, table=native_clean, type="SALE"):
    tenant_id: str
    region: Literal["eu", "us"]
    sale_id: str
    status: Status
    created_at: datetime
    customer_id: str
    total: Decimal
    code: bytes | None = None

    class Keys:
        pk = "TENANT#{tenant_id}"
        sk = "SALE#{sale_id}"


class Refund(Entity, table=native_clean, type="REFUND"):
    """Shares ByTenant with Sale: same typed attributes, told apart by the type tag."""

    tenant_id: str
    region: Literal["eu", "us"]
    refund_id: str
    status: Status
    created_at: datetime

    class Keys:
        pk = "TENANT#{tenant_id}"
        sk = "REFUND#{refund_id}"


class Card(Entity, table=native_clean, type="CARD"):
    """Keyed on the table's own sort key in ByBoard (a rendered template, S)."""

    board_id: str
    position: int
    card_id: str

    class Keys:
        pk = "CARD#{card_id}"
        sk = "POS#{position:08d}"


class NativeCleanRepo(Repository, table=native_clean):
    sales = query(Sale, index="ByTenant", order="desc")
    paperwork = collection(Sale, Refund, index="ByTenant")
    big_spenders = query(Sale, index="ByTotal", order="desc")
    sales_by_code = query(Sale, index="ByCode", hydrate=True)
    sale_refs = query(Sale, index="ByCode", keys_only=True)
    board = query(Card, index="ByBoard")
    card = get(Card)


# -- hot-partition ------------------------------------------------------------------------------

native_hot = Table(
    "NativeHot",
    indexes=[
        GSI("ByStatus", pk=("status", "region"), sk=("created_at",), projection="KEYS_ONLY"),
        GSI("Global", pk=("shard",), sk=("total",)),
        GSI("ByConstant", pk=("SK",), sk=("created_at",)),
    ],
)


class Ticket(Entity, table=native_hot, type="TICKET"):
    """ByStatus: two statuses x two regions, four partitions. Global: a Shard field alone,
    four partitions. ByConstant: the table's constant sort key, one partition."""

    ticket_id: str
    status: Status
    region: Literal["eu", "us"]
    created_at: datetime
    total: Decimal
    shard: Annotated[int, Shard(4, of="ticket_id")] = 0

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"


class NativeHotRepo(Repository, table=native_hot):
    tickets = query(Ticket, index="ByStatus", keys_only=True)
    biggest = query(Ticket, index="Global", scatter="shard", order="desc")
    newest = query(Ticket, index="ByConstant", order="desc")


native_sharded = Table(
    "NativeSharded",
    indexes=[GSI("ByStatus", pk=("status", "shard"), sk=("created_at",))],
)


class ShardedTicket(Entity, table=native_sharded, type="TICKET"):
    """The fix the hint gives: a Shard field beside the status, read with scatter=."""

    ticket_id: str
    status: Status
    created_at: datetime
    shard: Annotated[int, Shard(8, of="ticket_id")] = 0

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"


class NativeShardedRepo(Repository, table=native_sharded):
    ticket = get(ShardedTicket)
    tickets = query(ShardedTicket, index="ByStatus", scatter="shard", order="desc")


native_wide = Table(
    "NativeWide",
    indexes=[
        GSI("ByFour", pk=("status", "region", "tier", "channel")),
        GSI("ByPair", pk=("status", "region"), sk=("lead_id",), index_name="by-pair"),
    ],
)


class Lead(Entity, table=native_wide, type="LEAD"):
    """No Shard field. ByFour: four low-cardinality partition attributes, DynamoDB's limit (no
    room for a fifth); ByPair: two."""

    lead_id: str
    status: Status
    region: Literal["eu", "us"]
    tier: Literal[1, 2, 3]
    channel: Literal["web", "phone"]

    class Keys:
        pk = "LEAD#{lead_id}"
        sk = "LEAD"


class NativeWideRepo(Repository, table=native_wide):
    leads = query(Lead, index="ByFour")
    lead_ids = query(Lead, index="ByPair")


# -- unused and unread native indexes, filters ---------------------------------------------------

native_indexed = Table(
    "NativeIndexed",
    indexes=[
        GSI("ByOwner", pk=("owner_id",), sk=("created_at",)),
        GSI("ByTag", pk=("tag",)),
    ],
)


class Doc(Entity, table=native_indexed, type="DOC"):
    doc_id: str
    owner_id: str
    created_at: datetime
    tag: str
    pages: int

    class Keys:
        pk = "DOC#{doc_id}"
        sk = "DOC"


class Sheet(Entity, table=native_indexed, type="SHEET"):
    """In ByOwner by its fields, but no pattern reads sheets there."""

    sheet_id: str
    owner_id: str
    created_at: datetime

    class Keys:
        pk = "SHEET#{sheet_id}"
        sk = "SHEET"


class NativeIndexedRepo(Repository, table=native_indexed):
    docs = query(Doc, index="ByOwner")
    long_docs = query(Doc, index="ByOwner", where=Attr("pages").gt(100))
