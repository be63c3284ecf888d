"""The workflow table: users with unique emails, orders stored twice, a sparse queue of pending
orders, teams with relationship items, and sessions/invites that expire.

PK / SK                                   index keys
USER#<uid> / #PROFILE                     GSI1: EMAIL#<email> / USER#<uid>
USER#<uid> / ORDER#<created>#<oid>        (the user's copy of the order)
ORDER#<oid> / #ORDER                      GSI2: PENDING / <created>#<oid>  (only while PENDING)
ORDER#<oid> / ITEM#<sku>
TEAM#<tid> / #TEAM
TEAM#<tid> / INVITE#<email>               (expires)
TEAM#<tid> / MEMBER#<uid>                 GSI1: USER#<uid> / TEAM#<tid>
SESSION#<sid> / #SESSION                  GSI1: USER#<uid> / SESSION#<started>#<sid>  (expires)
__unique__#USER#email#<email> / __unique__   (the guard item Unique() writes)
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated

from singletable import GSI, CreatedAt, Entity, Index, Table, Unique, UpdatedAt, Version

workflow = Table(
    "OrdersWorkflow",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
    ],
    ttl_attribute="expires_at",
)


class OrderStatus(str, Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    SHIPPED = "SHIPPED"
    CANCELLED = "CANCELLED"


class Role(str, Enum):
    OWNER = "owner"
    MEMBER = "member"


class User(Entity, table=workflow, type="USER"):
    user_id: str
    name: str
    email: Annotated[str, Unique()]  # a guard item per email, written in the same transaction
    created: Annotated[datetime | None, CreatedAt()] = None
    updated: Annotated[datetime | None, UpdatedAt()] = None

    class Keys:
        pk = "USER#{user_id}"
        sk = "#PROFILE"
        GSI1 = ("EMAIL#{email}", "USER#{user_id}")


class Order(Entity, table=workflow, type="ORDER"):
    """The canonical order, addressed by its id; versioned, and queued while PENDING."""

    order_id: str
    user_id: str
    created_at: datetime
    status: OrderStatus
    total: Decimal
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "#ORDER"
        # Sparse: only PENDING orders carry GSI2PK/GSI2SK, so the index is the work queue.
        GSI2 = Index("PENDING", "{created_at}#{order_id}", when={"status": OrderStatus.PENDING})

    def user_copy(self) -> UserOrder:
        """The copy listed under the user (written in the same transaction as the order)."""
        return UserOrder(
            user_id=self.user_id,
            created_at=self.created_at,
            order_id=self.order_id,
            status=self.status,
            total=self.total,
        )


class UserOrder(Entity, table=workflow, type="USER_ORDER"):
    """The order as its user lists it: under the user, by date."""

    user_id: str
    created_at: datetime
    order_id: str
    status: OrderStatus
    total: Decimal

    class Keys:
        pk = "USER#{user_id}"
        sk = "ORDER#{created_at}#{order_id}"


class LineItem(Entity, table=workflow, type="LINE_ITEM"):
    order_id: str
    sku: str
    name: str
    quantity: int
    unit_price: Decimal

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "ITEM#{sku}"


class Team(Entity, table=workflow, type="TEAM"):
    team_id: str
    name: str

    class Keys:
        pk = "TEAM#{team_id}"
        sk = "#TEAM"


class Membership(Entity, table=workflow, type="MEMBERSHIP"):
    """The relationship item of users ↔ teams: stored under the team, indexed under the user."""

    team_id: str
    user_id: str
    role: Role
    joined_at: datetime

    class Keys:
        pk = "TEAM#{team_id}"
        sk = "MEMBER#{user_id}"
        GSI1 = ("USER#{user_id}", "TEAM#{team_id}")


class Invite(Entity, table=workflow, type="INVITE"):
    team_id: str
    email: str
    role: Role
    invited_by: str
    expires_at: datetime | None = None  # the TTL field: named like the table's ttl_attribute

    class Keys:
        pk = "TEAM#{team_id}"
        sk = "INVITE#{email}"


class Session(Entity, table=workflow, type="SESSION"):
    session_id: str
    user_id: str
    started_at: datetime
    expires_at: datetime | None = None

    class Keys:
        pk = "SESSION#{session_id}"
        sk = "#SESSION"
        GSI1 = ("USER#{user_id}", "SESSION#{started_at}#{session_id}")
