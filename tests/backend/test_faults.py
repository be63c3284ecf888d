"""Fault injection: unprocessed batch items, transaction conflicts, throttling.

After every fault the table content is compared with what must be there.
"""

from __future__ import annotations

from typing import Any

import pytest
from moto_fixtures.faults import http_error_response, raise_client_error, withhold_batch_requests

from singletable import CallInfo, RetryPolicy
from singletable.errors import TransactionCanceled, UnprocessedItemsError
from tests.backend.test_writes import line, product, table_items
from tests.models import Product, Store, shop

CONFLICT = {
    "CancellationReasons": [
        {"Code": "None"},
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
        {"Code": "None"},
    ]
}


class Sleeps(list[float]):
    """A retry policy's ``sleep`` that records instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def retrying_store(make_repo: Any, sleeps: Sleeps) -> Store:
    store: Store = make_repo(Store, shop, retry=RetryPolicy(max_attempts=4, sleep=sleeps))
    return store


def product_keys(repo: Any) -> set[str]:
    return {pk for pk, _ in table_items(repo) if pk.startswith("PRODUCT#")}


def test_unprocessed_items_are_retried_until_written(
    retrying_store: Store, client: Any, recorder: Any, sleeps: Sleeps
) -> None:
    products = [product(f"p{i:02d}") for i in range(30)]
    withhold_batch_requests(client, "BatchWriteItem", times=3, withhold=4)
    retrying_store.batch_put(products)
    # 2 chunks (25 + 5); the first three calls each held 4 back and were retried.
    assert recorder.operations == ["BatchWriteItem"] * 5
    assert product_keys(retrying_store) == {f"PRODUCT#p{i:02d}" for i in range(30)}
    assert len(sleeps) == 3 and all(s >= 0 for s in sleeps)


def test_exhausted_write_retries_raise_the_exact_leftovers(
    retrying_store: Store, client: Any, sleeps: Sleeps
) -> None:
    products = [product(f"p{i:02d}") for i in range(30)]
    withhold_batch_requests(client, "BatchWriteItem", times=100, withhold=2)
    with pytest.raises(UnprocessedItemsError) as caught:
        retrying_store.batch_put(products)
    leftovers = caught.value.unprocessed
    assert all(isinstance(p, Product) for p in leftovers)
    written = product_keys(retrying_store)
    # Every chunk was attempted; what is missing from the table is exactly what was raised.
    assert {f"PRODUCT#{p.product_id}" for p in leftovers} == {
        f"PRODUCT#{p.product_id}" for p in products
    } - written
    # Each chunk's last two requests were held back on every attempt.
    assert [p.product_id for p in leftovers] == ["p23", "p24", "p28", "p29"]
    assert len(written) == 26
    assert len(sleeps) == 2 * 3  # two chunks, three backoffs each (4 attempts)


def test_unprocessed_keys_are_retried_and_exhausted(
    retrying_store: Store, client: Any, recorder: Any
) -> None:
    products = [product(f"p{i:03d}") for i in range(120)]
    retrying_store.batch_put(products)
    refs = [(Product, {"product_id": p.product_id}) for p in products]
    withhold_batch_requests(client, "BatchGetItem", times=2, withhold=7)
    recorder.clear()
    found = retrying_store.batch_get(refs, consistent=True)
    assert found == products
    assert recorder.operations == ["BatchGetItem"] * 4  # 100 + 20, two rounds held back
    retried = [params for op, params in recorder.calls][1]
    assert retried["RequestItems"][retrying_store.table_name]["ConsistentRead"] is True
    withhold_batch_requests(client, "BatchGetItem", times=100, withhold=1)
    with pytest.raises(UnprocessedItemsError) as caught:
        retrying_store.batch_get(refs[:3])
    assert caught.value.unprocessed == [refs[2]]
    assert product_keys(retrying_store) == {f"PRODUCT#{p.product_id}" for p in products}


@pytest.mark.requires("transactions")
def test_transaction_conflict_is_retried_then_surfaced(
    retrying_store: Store, client: Any, recorder: Any, sleeps: Sleeps
) -> None:
    retrying_store.put(product("p1", stock=5))
    from tests.backend.test_reads import order

    first = order(1)
    injected = raise_client_error(
        client, "TransactWriteItems", "TransactionCanceledException", times=2, **CONFLICT
    )
    retrying_store.place_order(first, [line(first.order_id, "p1", 1)])
    assert injected["raised"] == 2 and len(sleeps) == 2
    assert retrying_store.product(product_id="p1").stock == 4  # type: ignore[union-attr]
    before = table_items(retrying_store)

    second = order(2)
    raise_client_error(
        client, "TransactWriteItems", "TransactionCanceledException", times=10, **CONFLICT
    )
    with pytest.raises(TransactionCanceled) as caught:
        retrying_store.place_order(second, [line(second.order_id, "p1", 1)])
    assert caught.value.retryable
    assert [r.code for r in caught.value.reasons] == [None, "TransactionConflict", None]
    assert caught.value.reasons[1].retryable
    assert table_items(retrying_store) == before


@pytest.mark.twin("sync")  # botocore's own retries of a boto3 client it builds itself
def test_throttling_goes_through_botocore_retries(backend: Any, make_repo: Any) -> None:
    import botocore.retries.standard as standard

    client = backend.client(retries={"total_max_attempts": 4, "mode": "standard"})
    calls: list[CallInfo] = []
    store = make_repo(Store, shop)
    repo = Store(client=client, table_name=store.table_name, hooks=[calls.append])
    repo.put(product("p1", stock=5))
    injected = http_error_response(
        client, "GetItem", "ProvisionedThroughputExceededException", times=2
    )
    original = standard.ExponentialBackoff.delay_amount
    standard.ExponentialBackoff.delay_amount = lambda self, context: 0  # type: ignore[method-assign]
    try:
        found = repo.product(product_id="p1")
    finally:
        standard.ExponentialBackoff.delay_amount = original  # type: ignore[method-assign]
    assert found is not None and found.stock == 5
    assert injected["sent"] == 2
    assert calls[-1].operation == "GetItem" and calls[-1].retries == 2
    assert calls[-1].pattern == "product"


def test_backoff_uses_the_twins_sleep_by_default(
    make_repo: Any, client: Any, twin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a sleep of its own, the retry policy sleeps with time.sleep on the sync twin and
    asyncio.sleep on the async one (both looked up when it waits, so tests can patch them)."""
    import asyncio
    import time

    slept: list[float] = []
    if twin == "async":

        async def fake_sleep(seconds: float) -> None:
            slept.append(seconds)

        monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    else:
        monkeypatch.setattr(time, "sleep", slept.append)
    store: Store = make_repo(Store, shop)  # default RetryPolicy
    withhold_batch_requests(client, "BatchWriteItem", times=2, withhold=1)
    store.batch_put([product(f"p{i}") for i in range(3)])
    assert len(slept) == 2
    assert product_keys(store) == {"PRODUCT#p0", "PRODUCT#p1", "PRODUCT#p2"}
