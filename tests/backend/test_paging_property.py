"""Paging never skips or repeats an item: the union of pages equals the single-shot result.

Random partitions (0-150 orders) with foreign entity types sharing the sort-key prefix, random
page sizes and an optional filter; on the table and on a GSI (whose cursor carries the table
and index keys). Runs on every backend (dynalite reports LastEvaluatedKey on exact-limit
pages, moto does not).
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backend.test_reads import BASE
from tests.models import Customer, Order, OrderNote, Parcel, Shop, Status

_partition = itertools.count()

PAGING = settings(
    max_examples=12,
    deadline=30_000,  # ms per example (a partition written and paged through)
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def write_all(repo: Any, entities: list[Any]) -> None:
    items = [{"PutRequest": {"Item": e.to_item()}} for e in entities]
    for start in range(0, len(items), 25):
        repo.client.batch_write_item(RequestItems={repo.table_name: items[start : start + 25]})


def delete_all(repo: Any, entities: list[Any]) -> None:
    """Remove an example's items again: examples share the test's table, and in-process moto
    sorts every item of a table on each Query, so leftovers would slow later examples."""
    keys = []
    for entity in entities:
        item = entity.to_item()
        keys.append({"DeleteRequest": {"Key": {"PK": item["PK"], "SK": item["SK"]}}})
    for start in range(0, len(keys), 25):
        repo.client.batch_write_item(RequestItems={repo.table_name: keys[start : start + 25]})


@st.composite
def partitions(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(0, 150))
    minutes = draw(st.lists(st.integers(0, 10_000), min_size=count, max_size=count, unique=True))
    totals = draw(st.lists(st.integers(0, 99), min_size=count, max_size=count))
    statuses = draw(st.lists(st.sampled_from(list(Status)), min_size=count, max_size=count))
    notes = draw(st.lists(st.integers(0, 10_000), max_size=40, unique=True))
    limit = draw(st.integers(max(1, count // 25), 60))
    min_total = draw(st.none() | st.integers(0, 99))
    return {
        "minutes": minutes,
        "totals": totals,
        "statuses": statuses,
        "notes": notes,
        "limit": limit,
        "min_total": min_total,
    }


def build(data: dict[str, Any]) -> tuple[str, list[Order], list[Any]]:
    customer = f"c{next(_partition)}"
    orders = [
        Order(
            customer_id=customer,
            order_id=f"{customer}-{i}",
            created_at=BASE + timedelta(minutes=m),
            status=s,
            total=Decimal(t),
            customer_name="x",
        )
        for i, (m, t, s) in enumerate(zip(data["minutes"], data["totals"], data["statuses"]))
    ]
    foreign: list[Any] = [
        OrderNote(
            customer_id=customer, created_at=BASE + timedelta(minutes=m), note_id=str(m), text="n"
        )
        for m in data["notes"]
    ]
    foreign.append(Customer(customer_id=customer, name="x", email=f"{customer}@example.com"))
    return customer, orders, foreign


def collect(pages_of: Any, limit: int) -> list[Any]:
    items: list[Any] = []
    cursor = None
    for _ in range(1000):
        page = pages_of(limit=limit, cursor=cursor)
        assert len(page.items) <= limit
        items.extend(page.items)
        cursor = page.cursor
        if cursor is None:
            return items
    raise AssertionError("paging did not terminate")


@PAGING
@given(data=partitions())
def test_pages_union_equals_single_shot_on_table(shop_repo: Shop, data: dict[str, Any]) -> None:
    customer, orders, foreign = build(data)
    write_all(shop_repo, orders + foreign)
    try:
        check_table_pages(shop_repo, customer, orders, data)
    finally:
        delete_all(shop_repo, orders + foreign)


def check_table_pages(shop_repo: Shop, customer: str, orders: list[Order], data: Any) -> None:
    expected = sorted(orders, key=lambda o: (o.created_at, o.order_id))
    min_total = data["min_total"]
    if min_total is None:
        got = collect(
            lambda **kw: shop_repo.orders_oldest_first(customer_id=customer, **kw), data["limit"]
        )
    else:
        expected = [o for o in expected if o.total >= min_total]
        got = collect(
            lambda **kw: shop_repo.big_orders(
                customer_id=customer, min_total=Decimal(min_total), **kw
            ),
            data["limit"],
        )
    assert [o.order_id for o in got] == [o.order_id for o in expected]
    assert got == expected


@PAGING
@given(data=partitions())
def test_pages_union_equals_single_shot_on_gsi(shop_repo: Shop, data: dict[str, Any]) -> None:
    customer, _, foreign = build(data)
    carrier = f"k-{customer}"
    # Parcels of two customers in one carrier partition, many sharing a shipping minute: the
    # index key alone is not unique, so the cursor must carry the table key too.
    parcels = [
        Parcel(
            customer_id=f"{customer}-{i % 2}",
            parcel_id=f"p{i}",
            carrier=carrier,
            shipped_at=BASE + timedelta(minutes=m % 17),
            weight=t,
        )
        for i, (m, t) in enumerate(zip(data["minutes"], data["totals"]))
    ]
    write_all(shop_repo, parcels + foreign)
    try:
        check_index_pages(shop_repo, carrier, parcels, data)
    finally:
        delete_all(shop_repo, parcels + foreign)


def check_index_pages(shop_repo: Shop, carrier: str, parcels: list[Parcel], data: Any) -> None:
    min_weight = data["min_total"] or 0
    expected = sorted((p for p in parcels if p.weight >= min_weight), key=lambda p: p.shipped_at)
    got = collect(
        lambda **kw: shop_repo.parcels_by_carrier(carrier=carrier, min_weight=min_weight, **kw),
        data["limit"],
    )
    ids = [(p.customer_id, p.parcel_id) for p in got]
    assert len(ids) == len(set(ids)), "an item was repeated"
    assert sorted(ids) == sorted((p.customer_id, p.parcel_id) for p in expected)
    assert [p.shipped_at for p in got] == [p.shipped_at for p in expected]
