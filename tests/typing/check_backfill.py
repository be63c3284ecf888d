"""Static typing of ``backfill`` on both twins and of declared datetime formats, checked by
``mypy --strict`` in CI (never executed)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from typing_extensions import assert_type

from singletable import BackfillFailure, BackfillReport, DatetimeFormat, Entity, Repository, Table
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


async def async_twin(repo: AsyncShop) -> None:
    report = await repo.backfill(Order, segments=2)
    assert_type(report, BackfillReport)
    assert_type(report.updated, int)
