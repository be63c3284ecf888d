"""Models of the backfill tests: one physical table seen by two versions of the model.

``v1`` is the model as it was when the items were written; ``v2`` is the model after the change
(a ``Shard`` field in GSI1's partition key, a new sparse index GSI2, the TTL attribute, the type
tag renamed from ``Order`` to ``ORDER``, a sort key that now includes the kind). Both tables
have the same name, so ``make_repo`` gives them one physical table (create it through ``v2``,
which declares every index).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated

from singletable import GSI, Entity, Index, Repository, Shard, Table, Version

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")]

v1 = Table("Backfill", indexes=INDEXES)
v2 = Table("Backfill", indexes=INDEXES, ttl_attribute="expires")


class Status(str, Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"


# -- as written ----------------------------------------------------------------------------------


class OrderV1(Entity, table=v1, type="Order"):
    customer_id: str
    order_id: str
    status: Status
    total: Decimal
    expires: datetime | None = None

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("STATUS#{status}", "ORDER#{order_id}")


class NoteV1(Entity, table=v1, type="NOTE"):
    customer_id: str
    note_id: str
    text: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "NOTE#{note_id}"
        GSI1 = ("NOTES", "NOTE#{note_id}")


class AccountV1(Entity, table=v1, type="ACCOUNT"):
    account_id: str
    plan: str
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "ACCOUNT#{account_id}"
        sk = "ACCOUNT"


class ItemV1(Entity, table=v1, type="ITEM"):
    item_id: str
    kind: str

    class Keys:
        pk = "ITEMS"
        sk = "ITEM#{item_id}"


class RepoV1(Repository, table=v1):
    pass


# -- after the change ----------------------------------------------------------------------------


class Order(Entity, table=v2, type="ORDER", former_types=("Order",)):
    customer_id: str
    order_id: str
    status: Status
    total: Decimal
    expires: datetime | None = None
    shard: Annotated[int, Shard(4, of="order_id")] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("STATUS#{status}#{shard}", "ORDER#{order_id}")
        GSI2 = Index("PENDING", "{order_id}", when={"status": Status.PENDING})


class Note(Entity, table=v2, type="NOTE"):
    customer_id: str
    note_id: str
    text: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "NOTE#{note_id}"
        GSI1 = ("NOTES", "NOTE#{note_id}")


class Account(Entity, table=v2, type="ACCOUNT"):
    account_id: str
    plan: str
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "ACCOUNT#{account_id}"
        sk = "ACCOUNT"
        GSI1 = ("PLAN#{plan}", "ACCOUNT#{account_id}")


class Item(Entity, table=v2, type="ITEM"):
    item_id: str
    kind: str

    class Keys:
        pk = "ITEMS"
        sk = "ITEM#{kind}#{item_id}"


class RepoV2(Repository, table=v2):
    pass
