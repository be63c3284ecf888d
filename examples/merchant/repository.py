"""The merchant platform's repository: order queues, status reports by date, payments and
device time series."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from singletable import Attr, Repository, Transaction, collection, get, query, transaction

from .models import (
    Device,
    Merchant,
    Order,
    OrderStatus,
    Payment,
    PaymentKind,
    Reading,
    merchants,
)

__all__ = ["EXAMPLE_CALLS", "Merchants", "merchants", "seed"]

DATA = Path(__file__).with_name("data.json")


class Merchants(Repository, table=merchants):
    # -- merchants and their terminals --
    merchant = get(Merchant)
    merchant_page = collection(Merchant, Device)

    # -- orders --
    pending_orders = query(Order, index="GSI1")  # the merchant's queue, oldest first
    orders_by_status = query(Order, index="GSI2")  # status, then day: between two days
    order_with_payments = collection(Order, Payment)
    order_payments = query(Payment)

    # -- telemetry --
    device_readings = query(Reading, order="desc")

    @transaction
    def capture_payment(self, tx: Transaction, order: Order, payment: Payment) -> Order:
        """Record the capture and mark the order PAID: it leaves the merchant's pending queue
        and moves to ``STATUS#PAID#…`` in the status index, in the same transaction."""
        if payment.kind is not PaymentKind.CAPTURE or payment.amount != order.total:
            raise ValueError(f"{payment.payment_id} does not capture {order.order_id}")
        tx.create(payment)
        tx.update(order, status=OrderStatus.PAID, condition=Attr("status").eq(OrderStatus.PENDING))
        return order.model_copy(update={"status": OrderStatus.PAID})

    def record_readings(self, readings: Iterable[Reading]) -> list[Reading]:
        """Ingest telemetry: BatchWriteItem, 25 readings per request. A reading is written
        once and never updated, so a batch (no conditions) is the right tool."""
        stored: list[Reading] = self.batch_put(readings)
        return stored

    def readings_on(self, device_id: str, day: date) -> list[Reading]:
        """One day of a device's readings, newest first (one Query per page)."""
        start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        end = start.replace(hour=23, minute=59, second=59, microsecond=999_999)
        return list(self.device_readings.all(device_id=device_id, taken_at__between=(start, end)))


def seed(repo: Merchants) -> None:
    """Load ``data.json`` through the repository (BatchWriteItem, 25 items per request)."""
    data = json.loads(DATA.read_text())
    entities: list[Any] = [
        *(Merchant(**m) for m in data["merchants"]),
        *(Device(**d) for d in data["devices"]),
        *(Order(**o) for o in data["orders"]),
        *(Payment(**p) for p in data["payments"]),
    ]
    for series in data["readings"]:
        start = datetime.fromisoformat(series["start"])
        for n, (temperature, battery, signal) in enumerate(series["samples"]):
            entities.append(
                Reading(
                    device_id=series["device_id"],
                    taken_at=start + n * timedelta(minutes=series["every_minutes"]),
                    temperature_c=temperature,
                    battery_pct=battery,
                    signal_dbm=signal,
                )
            )
    repo.batch_put(entities)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("merchant", {"merchant_id": "m-ember"}),
    ("merchant_page", {"merchant_id": "m-ember"}),
    ("pending_orders", {"merchant_id": "m-ember"}),
    (
        "orders_by_status",
        {
            "merchant_id": "m-ember",
            "status": OrderStatus.SHIPPED,
            "placed_on__between": (date(2026, 6, 3), date(2026, 6, 10)),
        },
    ),
    ("order_with_payments", {"order_id": "o-502"}),
    ("order_payments", {"order_id": "o-502"}),
    (
        "device_readings",
        {
            "device_id": "d-101",
            "taken_at__between": (
                _at("2026-06-15T10:00:00+00:00"),
                _at("2026-06-15T11:00:00+00:00"),
            ),
        },
    ),
]
