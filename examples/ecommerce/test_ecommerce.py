"""The shop over every local backend that serves multi-attribute index keys (its
OrdersByStatus index is keyed on customer_id x (status, created_at); dynalite refuses such a
key schema, so it skips the module, saying so): each read pattern is one request, writes are
one transaction each."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import NOW, readme_table, run_example_calls
from singletable import shard_of
from singletable.errors import (
    ConditionFailed,
    InvalidRequestError,
    KeyTemplateError,
    MultipleResultsError,
    PatternArgumentError,
    TransactionCanceled,
)

from .models import (
    Customer,
    Order,
    OrderDetails,
    OrderItem,
    OrderStatus,
    OrderSummary,
    Payment,
    Product,
)
from .repository import EXAMPLE_CALLS, Shop, build_order, seed

transactions = pytest.mark.requires("transactions")
pytestmark = pytest.mark.requires("multi_attribute_keys")


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> Shop:
    shop: Shop = make_repo(Shop)
    seed(shop)
    return shop


def ids(orders: Any) -> list[str]:
    return [o.order_id for o in orders]


# -- the model --------------------------------------------------------------------------------


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), Shop)
    assert in_readme == printed


def test_example_calls_cover_every_pattern() -> None:
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(Shop.patterns())


# -- reads ------------------------------------------------------------------------------------


def test_every_pattern_sends_what_explain_says(repo: Shop, recorder: Any) -> None:
    """One request per pattern, except orders_by_status: one Query per shard (Query x8)."""
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)

    (ann,) = results["customer"]
    assert isinstance(ann, Customer) and ann.name == "Ann Lee"
    assert results["customer_by_email"] == [ann]
    assert all(isinstance(o, Order) for o in results["customer_orders"])
    assert ids(results["customer_orders"]) == ["o-1003", "o-1002", "o-1001"]  # newest first
    summaries = results["order_summaries"]
    assert all(isinstance(s, OrderSummary) for s in summaries)
    assert [(s.order_id, s.status, s.total) for s in summaries] == [
        (o.order_id, o.status, o.total) for o in results["customer_orders"]
    ]
    # Both bounds are the exact created_at of an order: between includes them.
    assert ids(results["orders_placed_between"]) == ["o-1001", "o-1002"]
    assert ids(results["orders_by_status"]) == ["o-1006", "o-1005", "o-1003"]
    assert ids(results["customer_orders_by_status"]) == ["o-1003"]  # c1's pending order
    # totals 62.00 and 56.90 are at least 50; 34.00 is not (compared as numbers)
    assert ids(results["customer_orders_by_total"]) == ["o-1002", "o-1001"]
    (mug,) = results["product"]
    assert isinstance(mug, Product) and (mug.price, mug.stock) == (Decimal("8.50"), 24)
    assert [p.product_id for p in results["products_by_category"]] == [
        "p-kettle",
        "p-mug",
        "p-teapot",
    ]
    assert [type(e) for e in results["order_with_items"]] == [
        OrderDetails,
        Payment,
        OrderItem,
        OrderItem,
    ]
    assert ids(results["orders_containing_product"]) == ["o-1001", "o-1003", "o-1004"]
    (payment,) = results["payment"]
    assert isinstance(payment, Payment)
    assert (payment.order_id, payment.amount) == ("o-1001", Decimal("56.90"))


def test_order_with_items_by_type(repo: Shop, recorder: Any) -> None:
    with recorder.expect("Query"):
        order = repo.order_with_items(order_id="o-1001")
    details = order.one(OrderDetails)
    assert details is not None and details.shipping_address == "1 Harbour Rd, Leith"
    assert [(i.product_id, i.quantity) for i in order.all(OrderItem)] == [
        ("p-kettle", 1),
        ("p-mug", 2),
    ]
    assert [p.payment_id for p in order.all(Payment)] == ["pay-5001"]
    # The details know the full key of the customer's copy: one GetItem-free Query away.
    with recorder.expect("Query"):
        listed = repo.customer_orders(
            customer_id=details.customer_id, created_at__gte=details.created_at, limit=1
        )
    assert ids(listed) == ["o-1003"]  # newest first: the range starts at o-1001's instant


def test_paging_a_customers_orders(repo: Shop, recorder: Any) -> None:
    with recorder.expect("Query"):
        first = repo.customer_orders(customer_id="c1", limit=2)
    assert ids(first) == ["o-1003", "o-1002"] and first.cursor is not None
    with recorder.expect("Query"):
        rest = repo.customer_orders(customer_id="c1", limit=2, cursor=first.cursor)
    assert ids(rest) == ["o-1001"] and rest.cursor is None
    assert ids(repo.customer_orders.all(customer_id="c1", limit=1)) == [
        "o-1003",
        "o-1002",
        "o-1001",
    ]


def test_order_summaries_read_only_their_fields(repo: Shop, recorder: Any) -> None:
    """The projection's request names its attributes (plus the type tag and the keys a cursor
    needs); what comes back is a read-only OrderSummary, and its cursor pages like any."""
    with recorder.expect("Query"):
        first = repo.order_summaries(customer_id="c1", limit=2)
    (request,) = recorder.params("Query")
    projected = {
        request["ExpressionAttributeNames"][name]
        for name in request["ProjectionExpression"].split(", ")
    }
    assert {"order_id", "created_at", "status", "total", "_type", "PK", "SK"} <= projected
    assert not projected & {"customer_name", "item_count", "GSI1PK", "shard"}
    assert [s.order_id for s in first] == ["o-1003", "o-1002"]
    rest = repo.order_summaries(customer_id="c1", cursor=first.cursor)
    assert [s.order_id for s in rest] == ["o-1001"] and rest.cursor is None
    with pytest.raises(InvalidRequestError, match="OrderSummary"):
        repo.put(first.items[0])  # type: ignore[call-overload]


def test_orders_by_status_spread_over_eight_shards(repo: Shop, recorder: Any) -> None:
    """Every write derives Order.shard from the order id; one call reads the status's 8
    partitions at once and merges them newest first, paging without skips or repeats."""
    queries = repo.orders_by_status.params(status=OrderStatus.PENDING)["Queries"]
    assert [q["ExpressionAttributeValues"][":pk"]["S"] for q in queries] == [
        f"STATUS#PENDING#{shard}" for shard in range(8)
    ]
    pending = ["o-1006", "o-1005", "o-1003"]
    assert len({shard_of(order_id, 8) for order_id in pending}) == 3  # three partitions
    stored = repo.customer_orders.first(customer_id="c2")
    assert stored is not None and stored.shard == shard_of(stored.order_id, 8)
    seen = []
    with recorder.expect(*["Query"] * 8):
        page = repo.orders_by_status(status=OrderStatus.PENDING, limit=2)
    seen += ids(page)
    while page.cursor is not None:
        page = repo.orders_by_status(status=OrderStatus.PENDING, limit=2, cursor=page.cursor)
        seen += ids(page)
    assert seen == pending
    assert repo.orders_by_status.count(status=OrderStatus.SHIPPED) == 2
    with pytest.raises(PatternArgumentError, match="shard"):
        repo.orders_by_status(status=OrderStatus.PENDING, shard=1)  # type: ignore[call-arg]


def test_orders_placed_between_is_a_range_of_the_sort_key(repo: Shop) -> None:
    low, high = NOW - timedelta(days=30), NOW
    params = repo.orders_placed_between.params(customer_id="c1", created_at__between=(low, high))
    assert "BETWEEN" in params["KeyConditionExpression"]
    assert ids(repo.orders_placed_between(customer_id="c1", created_at__between=(low, high))) == [
        "o-1002",
        "o-1003",
    ]


def test_email_lookup_is_one_but_not_enforced(repo: Shop, recorder: Any) -> None:
    """GSI keys are not unique: a second customer with Ann's email makes the lookup refuse
    to guess (``orders_workflow`` shows ``Unique()``, which prevents this on write)."""
    repo.put(Customer(customer_id="c9", name="Impostor", email="ann@example.com"))
    with recorder.expect("Query"), pytest.raises(MultipleResultsError):
        repo.customer_by_email(email="ann@example.com")


def test_key_values_with_the_delimiter_are_refused(repo: Shop, recorder: Any) -> None:
    with recorder.expect(), pytest.raises(KeyTemplateError, match="order_id"):
        repo.order_with_items(order_id="o-1001#PAYMENT#x")


# -- writes -----------------------------------------------------------------------------------


@transactions
def test_checkout_is_one_batch_get_and_one_transaction(repo: Shop, recorder: Any) -> None:
    ann = repo.customer(customer_id="c1")
    assert ann is not None
    with recorder.expect("BatchGetItem", "TransactWriteItems"):
        placed = repo.checkout(
            ann, {"p-mug": 2, "p-kettle": 1}, order_id="o-2001", shipping_address="1 Harbour Rd"
        )
    request = recorder.params("TransactWriteItems")[0]
    assert request["ClientRequestToken"] == "place-order-o-2001"
    # order + details + two items + two stock updates
    assert len(request["TransactItems"]) == 6
    assert placed.total == Decimal("56.90") and placed.item_count == 3
    assert placed.created_at == NOW

    mug, kettle = repo.product(product_id="p-mug"), repo.product(product_id="p-kettle")
    assert (mug and mug.stock, kettle and kettle.stock) == (22, 6)
    assert ids(repo.customer_orders(customer_id="c1", limit=1)) == ["o-2001"]
    assert ids(repo.orders_by_status(status=OrderStatus.PENDING, limit=1)) == ["o-2001"]
    assert "o-2001" in ids(repo.orders_containing_product(product_id="p-mug"))
    assert len(repo.order_with_items(order_id="o-2001").all(OrderItem)) == 2


@transactions
def test_out_of_stock_cancels_the_whole_order(repo: Shop, recorder: Any) -> None:
    ann = repo.customer(customer_id="c1")
    mug, teapot = repo.product(product_id="p-mug"), repo.product(product_id="p-teapot")
    assert ann and mug and teapot and teapot.stock == 0
    order, details, items = build_order(
        ann, "o-2002", NOW, [(mug, 1), (teapot, 1)], shipping_address="1 Harbour Rd"
    )
    with recorder.expect("TransactWriteItems"), pytest.raises(TransactionCanceled) as caught:
        repo.place_order(order, details, items)
    failed = [r for r in caught.value.reasons if r.failed]
    assert [(r.kind, r.entity_type) for r in failed] == [("update", "PRODUCT")]
    assert "PRODUCT#p-teapot" in failed[0].key
    assert isinstance(failed[0].error, ConditionFailed)
    # Nothing was written: no order, and the mug's stock is untouched.
    assert repo.order_with_items(order_id="o-2002").items == []
    assert ids(repo.customer_orders(customer_id="c1")) == ["o-1003", "o-1002", "o-1001"]
    assert repo.product(product_id="p-mug") == mug


@transactions
def test_paying_moves_the_order_between_status_partitions(repo: Shop, recorder: Any) -> None:
    (pending,) = repo.customer_orders(customer_id="c1", limit=1)
    assert pending.order_id == "o-1003" and pending.status is OrderStatus.PENDING
    payment = Payment(
        order_id="o-1003", payment_id="pay-6001", amount=pending.total, method="card", paid_at=NOW
    )
    with recorder.expect("TransactWriteItems"):
        repo.pay_order(pending, payment)
    assert "o-1003" not in ids(repo.orders_by_status(status=OrderStatus.PENDING))
    assert ids(repo.orders_by_status(status=OrderStatus.PAID)) == ["o-1003", "o-1002"]
    assert repo.payment(payment_id="pay-6001") == payment
    # Paying twice fails as a whole: the payment exists and the order is no longer PENDING.
    again = payment.model_copy(update={"payment_id": "pay-6002"})
    with pytest.raises(TransactionCanceled) as caught:
        repo.pay_order(pending, again)
    assert [r.kind for r in caught.value.reasons if r.failed] == ["update"]
    assert repo.payment(payment_id="pay-6002") is None


def test_native_indexes_order_by_status_then_time_and_by_total(repo: Shop, recorder: Any) -> None:
    """OrdersByStatus sorts a customer's orders by status, then created_at; OrdersByTotal by
    total as a number. Each call is one Query on the index, its key condition on the order's
    own attributes, typed (no derived key attribute exists)."""
    with recorder.expect("Query"):
        by_status = repo.customer_orders_by_status(customer_id="c1")
    # desc: SHIPPED, then PENDING, then PAID (status text order, reversed)
    assert [(o.status, o.order_id) for o in by_status] == [
        (OrderStatus.SHIPPED, "o-1001"),
        (OrderStatus.PENDING, "o-1003"),
        (OrderStatus.PAID, "o-1002"),
    ]
    (request,) = recorder.params("Query")
    assert request["IndexName"] == "OrdersByStatus"
    assert request["KeyConditionExpression"] == "#k0 = :k0"
    assert request["ExpressionAttributeNames"] == {"#k0": "customer_id"}
    may = repo.customer_orders_by_status(
        customer_id="c1",
        status=OrderStatus.SHIPPED,
        created_at__lt=datetime(2026, 6, 1, tzinfo=timezone.utc),
    )
    assert ids(may) == ["o-1001"]
    with pytest.raises(PatternArgumentError, match="status"):
        repo.customer_orders_by_status(customer_id="c1", created_at__gte=NOW)
    recorder.clear()
    cheap = repo.customer_orders_by_total(customer_id="c2", total__lt=Decimal("100"))
    assert [(o.order_id, o.total) for o in cheap] == [("o-1005", Decimal("8.50"))]
    (request,) = recorder.params("Query")
    assert request["ExpressionAttributeValues"][":k1"] == {"N": "100"}
    everything = repo.customer_orders_by_total.all(customer_id="c2")
    assert [o.total for o in everything] == [Decimal("318.50"), Decimal("8.50")]  # not as text


@transactions
def test_paying_moves_the_order_within_the_native_status_index(repo: Shop) -> None:
    (pending,) = repo.customer_orders_by_status(customer_id="c1", status=OrderStatus.PENDING)
    payment = Payment(
        order_id=pending.order_id,
        payment_id="pay-6001",
        amount=pending.total,
        method="card",
        paid_at=NOW,
    )
    repo.pay_order(pending, payment)
    assert repo.customer_orders_by_status(customer_id="c1", status=OrderStatus.PENDING).items == []
    paid = repo.customer_orders_by_status(customer_id="c1", status=OrderStatus.PAID)
    assert ids(paid) == ["o-1003", "o-1002"]  # newest first


@transactions
def test_cancelling_puts_items_back_in_stock(repo: Shop) -> None:
    collection = repo.order_with_items(order_id="o-1006")
    details = collection.one(OrderDetails)
    assert details is not None
    order = repo.customer_orders.first(
        customer_id=details.customer_id, created_at__gte=details.created_at
    )
    assert order is not None and order.order_id == "o-1006"
    repo.cancel_order(order, collection.all(OrderItem))
    kettle, lamp = repo.product(product_id="p-kettle"), repo.product(product_id="p-lamp")
    assert (kettle and kettle.stock, lamp and lamp.stock) == (8, 6)
    assert ids(repo.orders_by_status(status=OrderStatus.CANCELLED)) == ["o-1006"]
    # Cancelling again (with the instance read before) fails: the stored status is CANCELLED.
    with pytest.raises(TransactionCanceled):
        repo.cancel_order(order, [])
