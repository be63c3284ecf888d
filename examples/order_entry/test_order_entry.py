"""The AWS Developer Guide's relational HR / order-entry model over every local backend: the 14
access patterns, one call each, as explain states them: "every status" and the random write
shards are one fan-out call, never a loop in the caller."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import readme_table, run_example_calls
from singletable.errors import ConditionFailed, TransactionCanceled

from .models import (
    ORDER_SHARDS,
    CurrentJob,
    Employee,
    Inventory,
    Order,
    OrderLine,
    OrderStatus,
    ProductStock,
    RepSales,
)
from .repository import EXAMPLE_CALLS, JUNE, OrderEntry, seed

transactions = pytest.mark.requires("transactions")


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> OrderEntry:
    entry: OrderEntry = make_repo(OrderEntry)
    seed(entry)
    return entry


def ids(items: Any) -> list[str]:
    return [getattr(i, "order_id", None) or i.employee_id for i in items]


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), OrderEntry)
    assert in_readme == printed


def test_example_calls_cover_every_pattern() -> None:
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(OrderEntry.patterns())
    assert len(EXAMPLE_CALLS) == 14  # the guide's list


def test_every_pattern_is_what_explain_states(repo: OrderEntry, recorder: Any) -> None:
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)

    (john,) = results["employee"]
    assert isinstance(john, Employee) and john.job_title == "Manager"
    assert ids(results["employees_by_name"]) == ["e-002", "e-006"]  # two Jane Does
    (job,) = results["current_job"]
    assert isinstance(job, CurrentJob) and job.department == "Fulfilment"
    # every status in June, merged by day: one call of four Queries
    assert ids(results["customer_orders"]) == ["o-1002", "o-1003", "o-1004", "o-1005"]
    # OPEN in June, across every customer: one call of fifteen Queries
    assert ids(results["orders_by_status"]) == ["o-3001", "o-1003", "o-2001", "o-1005"]
    assert ids(results["recent_hires"]) == ["e-005", "e-003", "e-002"]  # newest first
    assert ids(results["warehouse_staff"]) == ["e-005", "e-002", "e-001"]  # by name
    activity = results["product_activity"]
    assert [type(i).__name__ for i in activity] == [
        "OrderLine",
        "OrderLine",
        "Inventory",
        "Inventory",
    ]
    assert [c.customer_id for c in results["rep_customers"]] == ["c-100", "c-200"]
    assert ids(results["rep_orders"]) == ["o-2001", "o-1004", "o-2002", "o-1005"]
    assert ids(results["employees_with_title"]) == ["e-003", "e-002", "e-006"]  # by name
    (sea,) = results["stock"]
    assert isinstance(sea, Inventory) and sea.quantity == 40
    (widgets,) = results["product_stock"]
    assert isinstance(widgets, ProductStock) and widgets.total_stock == 140
    ranking = results["rep_ranking"]
    assert all(isinstance(r, RepSales) for r in ranking)
    assert [r.rep_id for r in ranking] == ["e-005", "e-004"]  # the highest total first


def test_fan_outs_page_with_one_cursor(repo: OrderEntry, recorder: Any) -> None:
    with recorder.expect(*["Query"] * ORDER_SHARDS):
        first = repo.orders_by_status(status=OrderStatus.OPEN, limit=2)
    assert ids(first) == ["o-3001", "o-1003"]
    rest = list(repo.orders_by_status.all(status=OrderStatus.OPEN, cursor=first.cursor))
    assert ids(rest) == ["o-2001", "o-1005", "o-3002"]  # July's order too: no range given
    assert repo.orders_by_status.count(status=OrderStatus.SHIPPED) == 1
    requests = repo.orders_by_status.params(status=OrderStatus.OPEN, ordered_on__between=JUNE)
    assert [q["ExpressionAttributeValues"][":pk"]["S"] for q in requests["Queries"]] == [
        f"BUCKET#{n}" for n in range(ORDER_SHARDS)
    ]
    page = repo.customer_orders(customer_id="c-100", limit=3)
    assert ids(page) == ["o-1001", "o-1002", "o-1003"]
    assert ids(repo.customer_orders(customer_id="c-100", cursor=page.cursor)) == [
        "o-1004",
        "o-1005",
    ]


def test_hiring_and_a_new_job(repo: OrderEntry, recorder: Any) -> None:
    with recorder.expect("PutItem"):
        hired = repo.hire(
            Employee(
                employee_id="e-007",
                name="Mei Tan",
                hired_on=date(2026, 6, 1),
                warehouse_id="wh-sea",
                job_title="Associate",
                department="Fulfilment",
                salary=Decimal(51000),
            )
        )
    assert 0 <= hired.hire_bucket < 4
    assert ids(repo.recent_hires(limit=1)) == ["e-007"]
    with recorder.expect("UpdateItem"):
        promoted = repo.change_job(hired, "Manager", "Operations", Decimal(90000))
    assert promoted.hire_bucket == hired.hire_bucket  # updates keep the drawn shard
    assert ids(repo.employees_with_title(job_title="Manager")) == ["e-001", "e-007"]
    assert "e-007" not in ids(repo.employees_with_title(job_title="Associate"))


def test_shipping_moves_an_order_between_statuses(repo: OrderEntry) -> None:
    order = repo.orders_by_status.first(status=OrderStatus.OPEN)
    assert isinstance(order, Order) and order.order_id == "o-3001"
    shipped = repo.ship_order(order)
    assert shipped.status is OrderStatus.SHIPPED and shipped.bucket == order.bucket
    assert "o-3001" not in ids(repo.orders_by_status.all(status=OrderStatus.OPEN))
    assert ids(repo.orders_by_status(status=OrderStatus.SHIPPED)) == ["o-3001", "o-1002"]
    with pytest.raises(ConditionFailed):
        repo.ship_order(order)  # no longer OPEN


@transactions
def test_an_order_takes_its_stock_in_one_transaction(repo: OrderEntry, recorder: Any) -> None:
    order = Order(
        order_id="o-1006",
        customer_id="c-100",
        rep_id="e-004",
        ordered_on=date(2026, 6, 20),
        status=OrderStatus.OPEN,
        total=Decimal("25.00"),
    )
    line = OrderLine(
        order_id="o-1006",
        line_no=1,
        product_id="p-widget",
        warehouse_id="wh-sea",
        quantity=2,
        price=Decimal("12.50"),
    )
    with recorder.expect("TransactWriteItems"):
        repo.place_order(order, [line])
    assert repo.stock(product_id="p-widget", warehouse_id="wh-sea").quantity == 38  # type: ignore[union-attr]
    assert repo.product_stock(product_id="p-widget").total_stock == 138  # type: ignore[union-attr]
    assert "o-1006" in ids(
        repo.customer_orders(customer_id="c-100", ordered_on__gte=date(2026, 6, 20))
    )
    too_many = line.model_copy(update={"order_id": "o-1007", "quantity": 500})
    with pytest.raises(TransactionCanceled):
        repo.place_order(order.model_copy(update={"order_id": "o-1007"}), [too_many])
    assert repo.product_stock(product_id="p-widget").total_stock == 138  # type: ignore[union-attr]
    with recorder.expect("TransactWriteItems"):
        repo.receive_stock("p-widget", "wh-den", 30)  # a new warehouse: created
    assert repo.stock(product_id="p-widget", warehouse_id="wh-den").quantity == 30  # type: ignore[union-attr]
    assert repo.product_stock(product_id="p-widget").total_stock == 168  # type: ignore[union-attr]


def test_a_rep_ranking_follows_new_totals(repo: OrderEntry) -> None:
    repo.record_sales("e-004", "2026-Q2", Decimal("30000"))
    assert [r.rep_id for r in repo.rep_ranking(period="2026-Q2")] == ["e-004", "e-005"]
