"""What the two twins share beyond running the same backend tests: identical requests,
cursors that resume on the other twin, the async client set-up and the local endpoint."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from moto_fixtures import create_table
from moto_fixtures.twins import async_client_options, async_twin_of, async_unavailable

from singletable import Repository, Transaction, get, transaction
from singletable.aio import AsyncRepository
from singletable.aws import fastpath
from singletable.errors import InvalidCursor, NotFound
from singletable.testing import local_endpoint, local_table
from tests.models import Customer, Order, Shop, Status, Store, shop

needs_aio = pytest.mark.skipif(async_unavailable() is not None, reason=str(async_unavailable()))
HTTP_BACKENDS = pytest.mark.backend("moto_server", "dynalite")
JUNE = datetime(2026, 6, 1, tzinfo=timezone.utc)

CALLS: dict[str, dict[str, Any]] = {
    "customer": {"customer_id": "42"},
    "customer_by_email": {"email": "ann@example.com"},
    "customer_orders": {"customer_id": "42", "limit": 5},
    "orders_oldest_first": {"customer_id": "42", "created_at__gte": JUNE},
    "orders_by_status": {"status": Status.PENDING},
    "pending_orders": {},
    "big_orders": {"customer_id": "42", "min_total": Decimal(10)},
    "order_refs": {"order_id": "A1"},
    "order_by_id": {"order_id": "A1"},
    "customer_home": {"customer_id": "42"},
    "order_with_lines": {"order_id": "A1"},
    "parcels_by_carrier": {"carrier": "UPS", "min_weight": 2},
}


def order(day: int, order_id: str) -> Order:
    return Order(
        customer_id="42",
        order_id=order_id,
        created_at=JUNE + timedelta(days=day),
        status=Status.PENDING,
        total=Decimal(day),
        customer_name="Ann",
    )


@needs_aio
def test_every_pattern_sends_the_same_request_on_both_twins() -> None:
    sync_repo = Shop(client=None, table_name="Shop-dev", default_limit=7)
    async_repo = async_twin_of(Shop)(client=None, table_name="Shop-dev", default_limit=7)
    assert set(CALLS) == set(Shop.patterns())  # every pattern is compared
    for name, kwargs in CALLS.items():
        expected = getattr(sync_repo, name).params(**kwargs)
        assert getattr(async_repo, name).params(**kwargs) == expected, name


@needs_aio
def test_a_transaction_request_is_the_same_on_both_twins() -> None:
    sync_tx = Transaction(Shop(client=None).planner, token="t-1")
    async_tx = Transaction(async_twin_of(Shop)(client=None).planner, token="t-1")
    for tx in (sync_tx, async_tx):
        tx.create(order(1, "A1"))
        tx.update(Order, customer_id="42", created_at=JUNE, order_id="A0", set={"total": 3})
        tx.delete(Order, customer_id="42", created_at=JUNE, order_id="A9")
    assert sync_tx.request() == async_tx.request()


class Patterns:
    """Patterns and a transaction method declared once, mixed into both twins."""

    customer = get(Customer)

    @transaction
    def sign_up(self, tx: Transaction, customer: Customer, first: Order) -> Customer:
        created: Customer = tx.create(customer)
        tx.create(first)
        return created


class SyncShop(Patterns, Store, table=shop): ...


class AsyncShop(Patterns, AsyncRepository, table=shop): ...


def test_the_async_twin_does_not_subclass_the_sync_one() -> None:
    assert not issubclass(AsyncRepository, Repository)
    assert AsyncShop.explain() == [row for row in SyncShop.explain() if row.pattern == "customer"]


@needs_aio
@HTTP_BACKENDS
def test_a_cursor_from_one_twin_resumes_on_the_other(
    client: Any, backend: Any, table_name: str
) -> None:
    create_table(backend, client, shop, table_name)
    sync_repo = Shop(client=client, table_name=table_name)
    sync_repo.batch_put([order(day, f"A{day}") for day in range(5)])

    async def async_page(cursor: str | None) -> Any:
        options = async_client_options(backend)
        async with AsyncShopOrders.connect(table_name=table_name, **options) as aio:
            return await aio.customer_orders(customer_id="42", limit=2, cursor=cursor)

    first = sync_repo.customer_orders(customer_id="42", limit=2)
    second = asyncio.run(async_page(first.cursor))
    third = sync_repo.customer_orders(customer_id="42", limit=2, cursor=second.cursor)
    assert [o.order_id for o in [*first, *second, *third]] == ["A4", "A3", "A2", "A1", "A0"]
    assert third.cursor is None
    with pytest.raises(InvalidCursor):
        sync_repo.customer_home(customer_id="42", cursor=second.cursor)


class AsyncShopOrders(AsyncRepository, table=shop):
    customer_orders = Shop.customer_orders


@needs_aio
@HTTP_BACKENDS
@pytest.mark.requires("transactions")
def test_mixed_in_patterns_and_transactions_serve_both_twins(
    client: Any, backend: Any, table_name: str
) -> None:
    create_table(backend, client, shop, table_name)
    sync_repo = SyncShop(client=client, table_name=table_name)
    bob = Customer(customer_id="7", name="Bob", email="bob@example.com")

    async def run() -> tuple[Customer, Customer | None, Customer | None]:
        options = async_client_options(backend)
        async with AsyncShop.connect(table_name=table_name, **options) as repo:
            created = await repo.sign_up(bob, order(1, "B1"))
            return (
                created,
                await repo.customer(customer_id="7"),
                await repo.customer(customer_id="8"),
            )

    created, found, missing = asyncio.run(run())
    assert created == found == sync_repo.customer(customer_id="7") and missing is None
    with pytest.raises(NotFound):
        sync_repo.update(Customer, customer_id="8", set={"name": "Nobody"})


@needs_aio
@HTTP_BACKENDS
def test_connect_honours_the_endpoint_variable_and_closes_its_client(
    backend: Any, client: Any, table_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_table(backend, client, shop, table_name)
    ann = Customer(customer_id="1", name="Ann", email="ann@example.com")
    Shop(client=client, table_name=table_name).batch_put([ann], unsafe=True)  # (dynalite too)
    options = async_client_options(backend)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", options.pop("endpoint_url"))
    seen: dict[str, Any] = {}

    async def run() -> Customer | None:
        async with AsyncShop.connect(table_name=table_name, **options) as repo:
            seen["fast path"] = fastpath.is_installed(repo.client)
            return await repo.customer(customer_id="1")

    found = asyncio.run(run())
    assert found is not None and found.name == "Ann"
    assert seen["fast path"] is fastpath.botocore_verified()


@needs_aio
def test_local_endpoint_serves_the_async_twin() -> None:
    with local_endpoint() as url, local_table(shop, endpoint=url) as client:
        assert url.startswith("http://127.0.0.1:")
        assert client.describe_table(TableName="Shop")["Table"]["TableStatus"] == "ACTIVE"

        async def run() -> Customer | None:
            async with AsyncShop.connect(
                endpoint_url=url,
                region_name="us-east-1",
                aws_access_key_id="testing",  # a local server takes any credentials
                aws_secret_access_key="testing",
            ) as repo:
                await repo.create(Customer(customer_id="9", name="Cy", email="cy@example.com"))
                return await repo.customer(customer_id="9")

        found = asyncio.run(run())
        assert found is not None and found.name == "Cy"
    assert "Shop" not in boto_tables(url)


def boto_tables(url: str) -> list[str]:
    """The tables left on a stopped endpoint: none can be listed (it is gone)."""
    import boto3
    from botocore.config import Config

    dead = boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=1),
    )
    try:
        return dead.list_tables()["TableNames"]
    except Exception:
        return []
