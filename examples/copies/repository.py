"""The repository: a customer, a customer's orders (name included), and the propagation that
keeps the copied names right."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from singletable import Repository, get, propagate, query

from .models import Customer, Order, copies

__all__ = ["EXAMPLE_CALLS", "Shop", "copies", "seed"]

DATA = Path(__file__).with_name("data.json")


class Shop(Repository, table=copies):
    customer = get(Customer)
    customer_orders = query(Order, order="desc")
    customer_name_sync = propagate(Customer, to=customer_orders, fields={"name": "customer_name"})


def seed(repo: Shop) -> None:
    """Load ``data.json``: customers, and their orders with the name copied at placing time."""
    data = json.loads(DATA.read_text())
    names = {}
    for row in data["customers"]:
        customer = repo.create(Customer(**row))
        names[customer.customer_id] = customer.name
    for row in data["orders"]:
        repo.create(Order(**row, customer_name=names[row["customer_id"]]))


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("customer", {"customer_id": "c1"}),
    ("customer_orders", {"customer_id": "c1"}),
]
