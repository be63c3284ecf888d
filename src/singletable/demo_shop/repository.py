"""The shop's repository: every read is one named request, every multi-item write one
transaction.

``Shop`` is the repository, ``shop`` the table, ``seed(repo)`` loads ``data.json`` (package
data beside this module) and ``EXAMPLE_CALLS`` lists one call (pattern name, keywords) per read
pattern that hits the seed data. The README the acknowledgements cite is
``examples/ecommerce/README.md`` in the singletable repository.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from singletable import Attr, Page, Repository, Transaction, collection, get, query, transaction

from .models import (
    Customer,
    Order,
    OrderDetails,
    OrderItem,
    OrderStatus,
    OrderSummary,
    Payment,
    Product,
    shop,
)

__all__ = ["EXAMPLE_CALLS", "Shop", "build_order", "seed", "shop"]

DATA = Path(__file__).with_name("data.json")


class Shop(Repository, table=shop):
    # Deliberate trade-offs that `singletable lint` reports; the README explains each.
    lint_acknowledge = {
        "hot-partition:Customer.Inverted": (
            "the Inverted index copies every item of the table, so the constant sort keys "
            "PROFILE and DETAILS each share one partition there; nothing reads them and the "
            "writes are small (README: orders_containing_product)"
        ),
        "hot-partition:Product.Inverted": (
            "the Inverted index copies every item of the table, so the constant sort keys "
            "PROFILE and DETAILS each share one partition there; nothing reads them and the "
            "writes are small (README: orders_containing_product)"
        ),
        "hot-partition:OrderDetails.Inverted": (
            "the Inverted index copies every item of the table, so the constant sort keys "
            "PROFILE and DETAILS each share one partition there; nothing reads them and the "
            "writes are small (README: orders_containing_product)"
        ),
        "unread-index:Customer.Inverted": (
            "an inverted index holds every item; only order items and payments are read there "
            "(README: orders_containing_product)"
        ),
        "unread-index:Order.Inverted": (
            "an inverted index holds every item; only order items and payments are read there "
            "(README: orders_containing_product)"
        ),
        "unread-index:OrderDetails.Inverted": (
            "an inverted index holds every item; only order items and payments are read there "
            "(README: orders_containing_product)"
        ),
        "unread-index:Product.Inverted": (
            "an inverted index holds every item; only order items and payments are read there "
            "(README: orders_containing_product)"
        ),
        "write-amplification:Order": (
            "orders are written once and updated a few times, and read by four patterns "
            "(by customer, by status, by total, by product): the reads pay for the index writes"
        ),
    }

    # -- customers --
    customer = get(Customer)
    customer_by_email = query(Customer, index="GSI1", one=True)

    # -- a customer's orders --
    customer_orders = query(Order, order="desc")
    # The same Query, reading only what an order list shows (a ProjectionExpression).
    order_summaries = query(Order, order="desc", project=OrderSummary)

    @query(Order)
    def orders_placed_between(
        self,
        *,
        customer_id: str,
        created_at__between: tuple[datetime, datetime],
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[Order]:
        """A customer's orders placed between two instants (both included), oldest first."""
        raise NotImplementedError  # declared signature only: the pattern sends the Query

    # -- the back office --
    # Order.shard spreads a status over 8 GSI1 partitions; one call reads all 8 at once and
    # merges them, newest first.
    orders_by_status = query(Order, index="GSI1", order="desc", scatter="shard")

    # -- native keys: a customer's orders by status (newest first), by total --
    # customer_id= names the partition; status= then created_at__... narrow it left to right.
    customer_orders_by_status = query(Order, index="OrdersByStatus", order="desc")
    # total__gte=Decimal("50") is a numeric range: N attributes compare as numbers.
    customer_orders_by_total = query(Order, index="OrdersByTotal", order="desc")

    # -- the catalogue --
    product = get(Product)
    products_by_category = query(Product, index="GSI1")

    # -- one order, and the adjacency list around it --
    order_with_items = collection(OrderDetails, OrderItem, Payment)
    orders_containing_product = query(OrderItem, index="Inverted")
    payment = query(Payment, index="Inverted", one=True)

    # -- writes --

    @transaction(token=lambda self, order, details, items: f"place-order-{order.order_id}")
    def place_order(
        self,
        tx: Transaction,
        order: Order,
        details: OrderDetails,
        items: Sequence[OrderItem],
    ) -> None:
        """Create the order, its details and items, and take the stock: all or nothing.

        Each product's stock is decremented on the condition that enough is left, so two
        customers can never both buy the last kettle.
        """
        tx.create(order)
        tx.create(details)
        for item in items:
            tx.create(item)
            tx.update(
                Product,
                product_id=item.product_id,
                add={"stock": -item.quantity},
                condition=Attr("stock").gte(item.quantity),
            )

    def checkout(
        self,
        customer: Customer,
        cart: Mapping[str, int],
        *,
        order_id: str,
        shipping_address: str,
    ) -> Order:
        """Price the cart from the catalogue (one BatchGetItem) and place the order (one
        TransactWriteItems). Returns the order as placed (its ``shard`` is derived from the
        order id when it is written)."""
        products = self.batch_get([(Product, {"product_id": pid}) for pid in cart])
        found = {p.product_id: p for p in products}
        missing = sorted(set(cart) - set(found))
        if missing:
            raise LookupError(f"unknown product(s): {', '.join(missing)}")
        lines = [(found[pid], quantity) for pid, quantity in cart.items()]
        order, details, items = build_order(
            customer, order_id, self.now(), lines, shipping_address=shipping_address
        )
        self.place_order(order, details, items)
        return order

    @transaction
    def pay_order(self, tx: Transaction, order: Order, payment: Payment) -> None:
        """Record the payment and mark the order PAID, only if it is still PENDING."""
        if payment.order_id != order.order_id or payment.amount != order.total:
            raise ValueError(f"payment {payment.payment_id} does not settle {order.order_id}")
        tx.create(payment)
        tx.update(order, status=OrderStatus.PAID, condition=Attr("status").eq(OrderStatus.PENDING))

    @transaction
    def cancel_order(self, tx: Transaction, order: Order, items: Sequence[OrderItem]) -> None:
        """Cancel a PENDING or PAID order and put its items back in stock."""
        tx.update(
            order,
            status=OrderStatus.CANCELLED,
            condition=Attr("status").is_in(OrderStatus.PENDING, OrderStatus.PAID),
        )
        for item in items:
            tx.update(Product, product_id=item.product_id, add={"stock": item.quantity})


def build_order(
    customer: Customer,
    order_id: str,
    created_at: datetime,
    lines: Sequence[tuple[Product, int]],
    *,
    shipping_address: str,
    status: OrderStatus = OrderStatus.PENDING,
) -> tuple[Order, OrderDetails, list[OrderItem]]:
    """The items an order consists of, priced from the products (pure; nothing is sent)."""
    quantities: dict[str, int] = {}
    products: dict[str, Product] = {}
    for product, quantity in lines:
        if quantity < 1:
            raise ValueError(f"quantity of {product.product_id} must be positive")
        quantities[product.product_id] = quantities.get(product.product_id, 0) + quantity
        products[product.product_id] = product
    items = [
        OrderItem(
            order_id=order_id,
            product_id=pid,
            product_name=products[pid].name,
            quantity=quantity,
            unit_price=products[pid].price,
        )
        for pid, quantity in quantities.items()
    ]
    order = Order(
        customer_id=customer.customer_id,
        order_id=order_id,
        created_at=created_at,
        status=status,
        total=sum((i.unit_price * i.quantity for i in items), Decimal(0)),
        item_count=sum(quantities.values()),
        customer_name=customer.name,
    )
    details = OrderDetails(
        order_id=order_id,
        customer_id=customer.customer_id,
        created_at=created_at,
        shipping_address=shipping_address,
    )
    return order, details, items


def seed(repo: Shop) -> None:
    """Load ``data.json`` through the repository: keys, index keys and type tags are computed
    by the entities, exactly as the application writes them (two BatchWriteItem requests)."""
    data = json.loads(DATA.read_text())
    customers = {c["customer_id"]: Customer(**c) for c in data["customers"]}
    products = {p["product_id"]: Product(**p) for p in data["products"]}
    entities: list[Any] = [*customers.values(), *products.values()]
    for raw in data["orders"]:
        lines = [(products[line["product_id"]], line["quantity"]) for line in raw["items"]]
        order, details, items = build_order(
            customers[raw["customer_id"]],
            raw["order_id"],
            datetime.fromisoformat(raw["created_at"]),
            lines,
            shipping_address=raw["shipping_address"],
            status=OrderStatus(raw["status"]),
        )
        entities += [order, details, *items]
        if "payment" in raw:
            entities.append(Payment(order_id=order.order_id, amount=order.total, **raw["payment"]))
    repo.batch_put(entities)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(timezone.utc)


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("customer", {"customer_id": "c1"}),
    ("customer_by_email", {"email": "ann@example.com"}),
    ("customer_orders", {"customer_id": "c1", "limit": 10}),
    ("order_summaries", {"customer_id": "c1", "limit": 10}),
    (
        "orders_placed_between",
        {
            "customer_id": "c1",
            "created_at__between": (
                _at("2026-05-02T09:15:00+00:00"),
                _at("2026-05-20T18:40:00+00:00"),
            ),
        },
    ),
    ("orders_by_status", {"status": OrderStatus.PENDING}),
    ("customer_orders_by_status", {"customer_id": "c1", "status": OrderStatus.PENDING}),
    ("customer_orders_by_total", {"customer_id": "c1", "total__gte": Decimal("50")}),
    ("product", {"product_id": "p-mug"}),
    ("products_by_category", {"category": "kitchen"}),
    ("order_with_items", {"order_id": "o-1001"}),
    ("orders_containing_product", {"product_id": "p-mug"}),
    ("payment", {"payment_id": "pay-5001"}),
]
