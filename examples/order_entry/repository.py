"""The order-entry repository: the guide's 14 access patterns, one call each, and the writes
that keep its aggregates (stock totals, reps' sales) in step."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from singletable import Attr, Repository, Transaction, collection, get, query, transaction

from .models import (
    CurrentJob,
    Customer,
    Employee,
    Inventory,
    Order,
    OrderLine,
    OrderStatus,
    Product,
    ProductStock,
    RepSales,
    order_entry,
)

__all__ = ["EXAMPLE_CALLS", "OrderEntry", "order_entry", "seed"]

DATA = Path(__file__).with_name("data.json")


class OrderEntry(Repository, table=order_entry):
    lint_acknowledge = {
        "hot-partition:Employee.RecentHires": (
            "a few hires a day: four buckets spread them more than their write rate needs "
            "(AWS's model uses a random write shard the same way)"
        ),
    }

    # -- human resources --
    employee = get(Employee)  # 1. employee details by id
    employees_by_name = query(Employee, index="GSI1")  # 2. by name
    current_job = get(Employee, project=CurrentJob)  # 3. the current job only
    recent_hires = query(  # 6. hired recently: 4 random shards, newest first
        Employee, index="RecentHires", scatter="hire_bucket", order="desc"
    )
    warehouse_staff = query(Employee, index="GSI2")  # 7. everyone in a warehouse
    employees_with_title = query(Employee, index="GSI3")  # 11. by job title

    # -- order entry --
    customer_orders = query(Order, index="GSI1", scatter="status")  # 4. every status, by day
    orders_by_status = query(Order, index="GSI4", scatter="bucket")  # 5. one status, 15 shards
    product_activity = collection(OrderLine, Inventory, index="GSI3")  # 8. lines and stock
    rep_customers = query(Customer, index="GSI1")  # 9. an account rep's customers
    rep_orders = query(Order, index="GSI2", scatter="status")  # 10. a rep's orders by day
    stock = get(Inventory)  # 12. a product in one warehouse
    product_stock = get(Product, project=ProductStock)  # 13. a product's total stock
    rep_ranking = query(RepSales, index="GSI2", order="desc")  # 14. reps by sales in a period

    # -- writes --

    def hire(self, employee: Employee) -> Employee:
        """A new employee (PutItem; the hire shard is drawn at random)."""
        return self.create(employee)

    def change_job(
        self, employee: Employee, job_title: str, department: str, salary: Decimal
    ) -> Employee:
        """A new job: the employee moves in the title index (one UpdateItem)."""
        changed: Employee = self.update(
            employee, job_title=job_title, department=department, salary=salary
        )
        return changed

    @transaction(token=lambda self, order, lines: f"order-{order.order_id}")
    def place_order(self, tx: Transaction, order: Order, lines: Sequence[OrderLine]) -> None:
        """One TransactWriteItems: the order, its lines, and each line's stock taken from its
        warehouse and from the product's total, on the condition that the warehouse has it."""
        tx.create(order)
        for line in lines:
            tx.create(line)
            tx.update(
                Inventory,
                product_id=line.product_id,
                warehouse_id=line.warehouse_id,
                add={"quantity": -line.quantity},
                condition=Attr("quantity").gte(line.quantity),
            )
            tx.update(Product, product_id=line.product_id, add={"total_stock": -line.quantity})

    def ship_order(self, order: Order) -> Order:
        """OPEN -> SHIPPED: the order moves within every status index (one UpdateItem)."""
        shipped: Order = self.update(
            order, status=OrderStatus.SHIPPED, condition=Attr("status").eq(OrderStatus.OPEN)
        )
        return shipped

    @transaction
    def receive_stock(
        self, tx: Transaction, product_id: str, warehouse_id: str, quantity: int
    ) -> None:
        """Stock arrives: the warehouse's count and the product's total, in one transaction."""
        tx.update(
            Inventory,
            product_id=product_id,
            warehouse_id=warehouse_id,
            add={"quantity": quantity},
            upsert=True,
        )
        tx.update(Product, product_id=product_id, add={"total_stock": quantity})

    def record_sales(self, rep_id: str, period: str, total: Decimal) -> RepSales:
        """A rep's total for a period, as the month-end job computes it (PutItem)."""
        return self.put(RepSales(rep_id=rep_id, period=period, total=total))


def seed(repo: OrderEntry) -> None:
    """Load ``data.json`` through the repository (BatchWriteItem, 25 items per request)."""
    data = json.loads(DATA.read_text())
    kinds: dict[str, Any] = {
        "employees": Employee,
        "rep_sales": RepSales,
        "customers": Customer,
        "orders": Order,
        "lines": OrderLine,
        "products": Product,
        "inventory": Inventory,
    }
    repo.batch_put(kind(**row) for name, kind in kinds.items() for row in data[name])


JUNE = (date(2026, 6, 1), date(2026, 6, 30))

EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("employee", {"employee_id": "e-001"}),
    ("employees_by_name", {"name": "Jane Doe"}),
    ("current_job", {"employee_id": "e-002"}),
    ("customer_orders", {"customer_id": "c-100", "ordered_on__between": JUNE}),
    ("orders_by_status", {"status": OrderStatus.OPEN, "ordered_on__between": JUNE}),
    ("recent_hires", {"hired_on__gte": date(2025, 1, 1)}),
    ("warehouse_staff", {"warehouse_id": "wh-sea"}),
    ("product_activity", {"product_id": "p-widget"}),
    ("rep_customers", {"rep_id": "e-004"}),
    ("rep_orders", {"rep_id": "e-004", "ordered_on__gte": date(2026, 6, 10)}),
    ("employees_with_title", {"job_title": "Associate"}),
    ("stock", {"product_id": "p-widget", "warehouse_id": "wh-sea"}),
    ("product_stock", {"product_id": "p-widget"}),
    ("rep_ranking", {"period": "2026-Q2"}),
]
