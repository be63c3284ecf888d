"""The merchant platform over every local backend: per-merchant pending queues, a composite
status/date sort key, payments under their order and a device time series."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import NOW, readme_table, run_example_calls
from singletable.errors import TransactionCanceled

from .models import Device, Merchant, Order, OrderStatus, Payment, PaymentKind, Reading
from .repository import EXAMPLE_CALLS, Merchants, seed

transactions = pytest.mark.requires("transactions")


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> Merchants:
    platform: Merchants = make_repo(Merchants)
    seed(platform)
    return platform


def ids(orders: Any) -> list[str]:
    return [o.order_id for o in orders]


def hhmm(readings: Any) -> list[str]:
    return [f"{r.taken_at:%H:%M}" for r in readings]


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), Merchants)
    assert in_readme == printed


def test_example_calls_cover_every_pattern() -> None:
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(Merchants.patterns())


def test_every_pattern_is_one_request(repo: Merchants, recorder: Any) -> None:
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)

    (ember,) = results["merchant"]
    assert isinstance(ember, Merchant) and ember.city == "Leeds"
    assert [type(e) for e in results["merchant_page"]] == [Merchant, Device, Device]
    assert [d.device_id for d in results["merchant_page"][1:]] == ["d-101", "d-102"]
    assert all(isinstance(o, Order) for o in results["pending_orders"])
    assert ids(results["pending_orders"]) == ["o-501", "o-504", "o-506"]  # oldest first
    # 3 June to 10 June, both days included; o-505 was placed at 23:59 on the 10th.
    assert ids(results["orders_by_status"]) == ["o-503", "o-505"]
    assert results["orders_by_status"][1].placed_on == date(2026, 6, 10)
    order, *payments = results["order_with_payments"]
    assert isinstance(order, Order) and order.status is OrderStatus.PAID
    assert [(type(p), p.kind) for p in payments] == [
        (Payment, PaymentKind.AUTHORIZATION),
        (Payment, PaymentKind.CAPTURE),
    ]
    assert results["order_payments"] == payments
    assert all(isinstance(r, Reading) for r in results["device_readings"])
    assert hhmm(results["device_readings"]) == ["11:00", "10:45", "10:30", "10:15", "10:00"]


def test_pending_queues_are_per_merchant(repo: Merchants, recorder: Any) -> None:
    with recorder.expect("Query"):
        north = repo.pending_orders(merchant_id="m-north")
    assert ids(north) == ["o-601"]
    params = repo.pending_orders.params(merchant_id="m-north")
    assert params["ExpressionAttributeValues"][":pk"] == {"S": "MERCHANT#m-north#STATUS#PENDING"}
    with recorder.expect("Query"):
        oldest = repo.pending_orders(merchant_id="m-ember", limit=1)
    assert ids(oldest) == ["o-501"] and oldest.cursor is not None


def test_composite_sort_key_ranges(repo: Merchants, recorder: Any) -> None:
    june = (date(2026, 6, 3), date(2026, 6, 10))
    params = repo.orders_by_status.params(
        merchant_id="m-ember", status=OrderStatus.SHIPPED, placed_on__between=june
    )
    assert params["KeyConditionExpression"] == "#pk = :pk AND #sk BETWEEN :sk AND :sk1"
    assert params["ExpressionAttributeValues"][":sk"] == {"S": "STATUS#SHIPPED#2026-06-03"}
    assert params["ExpressionAttributeValues"][":sk1"]["S"].startswith("STATUS#SHIPPED#2026-06-10#")
    # A status alone is a begins_with on STATUS#<status>#; other statuses never leak in.
    with recorder.expect("Query"):
        shipped = repo.orders_by_status(merchant_id="m-ember", status=OrderStatus.SHIPPED)
    assert ids(shipped) == ["o-503", "o-505", "o-507"]
    with recorder.expect("Query"):
        since = repo.orders_by_status(
            merchant_id="m-ember", status=OrderStatus.PENDING, placed_on__gte=date(2026, 6, 7)
        )
    assert ids(since) == ["o-504", "o-506"]
    with recorder.expect("Query"):
        one_day = repo.orders_by_status(
            merchant_id="m-ember", status=OrderStatus.PAID, placed_on=date(2026, 6, 3)
        )
    assert ids(one_day) == ["o-502"]


def test_device_time_series(repo: Merchants, recorder: Any) -> None:
    with recorder.expect("Query"):
        latest = repo.device_readings.first(device_id="d-101")
    assert latest is not None and f"{latest.taken_at:%H:%M}" == "11:15"
    with recorder.expect("Query"):
        day = repo.readings_on("d-101", date(2026, 6, 15))
    assert len(day) == 8 and hhmm(day)[0] == "11:15" and hhmm(day)[-1] == "09:30"
    assert repo.readings_on("d-101", date(2026, 6, 14)) == []
    fresh = [
        Reading(
            device_id="d-101",
            taken_at=datetime(2026, 6, 15, 11, 30, tzinfo=timezone.utc) + i * timedelta(minutes=15),
            temperature_c=Decimal("32.5"),
            battery_pct=80 - i,
            signal_dbm=-60,
        )
        for i in range(30)
    ]
    with recorder.expect("BatchWriteItem", "BatchWriteItem"):
        repo.record_readings(fresh)
    with recorder.expect("Query"):
        newest = repo.device_readings(device_id="d-101", limit=2)
    assert newest.items == fresh[:-3:-1]
    assert repo.device_readings.count(device_id="d-101") == 38


@transactions
def test_capturing_a_payment_moves_the_order(repo: Merchants, recorder: Any) -> None:
    (order, *_) = repo.pending_orders(merchant_id="m-ember")
    capture = Payment(
        order_id=order.order_id,
        created_at=NOW,
        payment_id="pay-z9",
        kind=PaymentKind.CAPTURE,
        amount=order.total,
        method="card",
    )
    with recorder.expect("TransactWriteItems"):
        paid = repo.capture_payment(order, capture)
    assert paid.status is OrderStatus.PAID
    assert ids(repo.pending_orders(merchant_id="m-ember")) == ["o-504", "o-506"]
    assert ids(
        repo.orders_by_status(
            merchant_id="m-ember", status=OrderStatus.PAID, placed_on__lte=date(2026, 6, 1)
        )
    ) == ["o-501"]
    collection = repo.order_with_payments(order_id=order.order_id)
    assert collection.one(Order) == paid and collection.all(Payment) == [capture]
    # Capturing again fails as a whole: the order is no longer PENDING.
    again = capture.model_copy(update={"payment_id": "pay-z10"})
    with pytest.raises(TransactionCanceled):
        repo.capture_payment(order, again)
    assert repo.order_payments(order_id=order.order_id).items == [capture]
