"""The merchant platform's table.

PK / SK                                   index keys
MERCHANT#<mid> / #PROFILE
MERCHANT#<mid> / DEVICE#<did>
ORDER#<oid> / #ORDER                      GSI1: MERCHANT#<mid>#STATUS#PENDING / <created>#<oid>
                                                (only while PENDING)
                                          GSI2: MERCHANT#<mid> / STATUS#<status>#<day>#<oid>
ORDER#<oid> / PAYMENT#<created>#<payid>
DEVICE#<did> / READING#<taken_at>
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal
from enum import Enum

from pydantic import computed_field

from singletable import GSI, Entity, Index, Table

merchants = Table(
    "Merchant",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
    ],
)


class OrderStatus(str, Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    SHIPPED = "SHIPPED"
    CANCELLED = "CANCELLED"


class PaymentKind(str, Enum):
    AUTHORIZATION = "AUTHORIZATION"
    CAPTURE = "CAPTURE"
    REFUND = "REFUND"


class Merchant(Entity, table=merchants, type="MERCHANT"):
    merchant_id: str
    name: str
    city: str

    class Keys:
        pk = "MERCHANT#{merchant_id}"
        sk = "#PROFILE"


class Device(Entity, table=merchants, type="DEVICE"):
    """A card terminal installed at a merchant; its readings live under DEVICE#<id>."""

    merchant_id: str
    device_id: str
    model: str
    installed_on: date

    class Keys:
        pk = "MERCHANT#{merchant_id}"
        sk = "DEVICE#{device_id}"


class Order(Entity, table=merchants, type="ORDER"):
    order_id: str
    merchant_id: str
    customer_id: str
    created_at: datetime
    status: OrderStatus
    total: Decimal

    @computed_field  # type: ignore[prop-decorator]
    @property
    def placed_on(self) -> date:
        """The UTC day of ``created_at``: a key segment, not a stored attribute."""
        return self.created_at.astimezone(timezone.utc).date()

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "#ORDER"
        # A merchant's queue of orders to fulfil: only PENDING orders are in this index.
        GSI1 = Index(
            "MERCHANT#{merchant_id}#STATUS#PENDING",
            "{created_at}#{order_id}",
            when={"status": OrderStatus.PENDING},
        )
        # Every order of a merchant by status, then by day: a composite sort key.
        GSI2 = ("MERCHANT#{merchant_id}", "STATUS#{status}#{placed_on}#{order_id}")


class Payment(Entity, table=merchants, type="PAYMENT"):
    order_id: str
    created_at: datetime
    payment_id: str
    kind: PaymentKind
    amount: Decimal
    method: str

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "PAYMENT#{created_at}#{payment_id}"


class Reading(Entity, table=merchants, type="READING"):
    """One telemetry sample of a device."""

    device_id: str
    taken_at: datetime
    temperature_c: Decimal
    battery_pct: int
    signal_dbm: int

    class Keys:
        pk = "DEVICE#{device_id}"
        sk = "READING#{taken_at}"
