"""Static typing of ``backfill`` on both twins and of declared datetime formats, checked by
``mypy --strict`` in CI (never executed)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from typing_extensions import assert_type

from singletable import (
    BackfillFailure,
    BackfillReport,
    BackfillSegment,
    DatetimeFormat,
    Entity,
    Repository,
    Table,
)
from singletable.aio import AsyncRepository

table = Table("T", datetime_format="pynamodb")


class Order(Entity, table=table, type="ORDER", former_types=("Order",)):
    order_id: str
    placed_at: Annotated[datetime, DatetimeFormat("canonical")]

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "ORDER"


class Shop(Repository, table=table): ...


class AsyncShop(AsyncRepository, table=table): ...


def sync_twin(repo: Shop) -> None:
    report = repo.backfill(Order, segments=4, checkpoint="order.json", progress=True)
    assert_type(report, BackfillReport)
    assert_type(report.failed, tuple[BackfillFailure, ...])
    assert_type(report.failed[0].key, dict[str, str])
    assert_type(report.consumed_capacity, float | None)
    repo.backfill(Order, dry_run=True, max_items_per_second=100, move=True, progress=print)
    repo.backfill(Order, segments=64, job="order-v2", lease_seconds=30)
    status = repo.backfill_status("order-v2")
    assert_type(status, list[BackfillSegment])
    assert_type(status[0].lease_until, datetime | None)
    assert_type(status[0].position, dict[str, str] | None)
    assert_type(repo.backfill_forget("order-v2"), int)
    rows = Shop.explain(costs=True, items=[{"PK": {"S": "ORDER#1"}}])
    assert_type(rows[0].rcu, float | None)


async def async_twin(repo: AsyncShop) -> None:
    report = await repo.backfill(Order, segments=2)
    assert_type(report, BackfillReport)
    assert_type(report.updated, int)
    await repo.backfill(Order, segments=8, job="order-v2")
    assert_type(await repo.backfill_status("order-v2"), list[BackfillSegment])
    assert_type(await repo.backfill_forget("order-v2"), int)
