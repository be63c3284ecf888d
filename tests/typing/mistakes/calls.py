"""Deliberate mistakes in attribute-form pattern calls: each marked line must be an error under
mypy with the ``singletable.mypy`` plugin and under pyright with the generated stub, with (at
least) the codes named, and no other line may be (tests/project/test_typing.py). Never executed."""

from __future__ import annotations

from datetime import datetime

from tests.typing.typing_shop import AsyncShop, Order, Shop

from singletable import Attr, Page

JUNE = datetime(2026, 6, 1)


def keywords(repo: Shop) -> None:
    repo.customer_orders(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue
    repo.customer_orders(customer_id=42)  # mypy: arg-type  pyright: reportArgumentType
    repo.customer_orders()  # mypy: call-arg  pyright: reportCallIssue
    repo.customer_orders(customer_id="42", limit="10")  # mypy: arg-type  pyright: reportArgumentType
    repo.orders_by_status(status="PENDING")  # mypy: arg-type  pyright: reportArgumentType
    repo.orders_by_status(status=None)  # mypy: arg-type  pyright: reportArgumentType
    repo.customer_orders(customer_id="42", created_at__between=JUNE)  # mypy: arg-type  pyright: reportArgumentType
    repo.customer_orders(customer_id="42", created_at__begins_with=JUNE)  # mypy: arg-type  pyright: reportArgumentType
    repo.orders_by_status(status=None, rank__begins_with="1")  # mypy: call-arg arg-type  pyright: reportCallIssue
    repo.customer(customer_id="42", where=Attr("name").eq("x"))  # mypy: call-arg  pyright: reportCallIssue
    repo.customer(customer_id=42)  # mypy: arg-type  pyright: reportArgumentType
    repo.order_summary(customer_id="42")  # mypy: call-arg  pyright: reportCallIssue
    repo.recent_everywhere(shard=1)  # mypy: call-arg  pyright: reportCallIssue
    repo.big_orders(customer_id="42")  # mypy: call-arg  pyright: reportCallIssue
    repo.customer_home(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue
    repo.customer_orders.first(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue
    repo.customer_orders.count()  # mypy: call-arg  pyright: reportCallIssue
    repo.customer_orders.all(customer_id=42)  # mypy: arg-type  pyright: reportArgumentType
    repo.customer_orders.pages(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue
    repo.customer_orders.params(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue


def callbacks(repo: Shop) -> None:
    repo.customer_orders(customer_id="42", where=lambda o, op: op.gte(o.totl, 50))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.customer_orders(customer_id="42", where=lambda o, op: op.eq(o.shipping.town, "Oslo"))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.customer_orders(customer_id="42", where=lambda o, op: op.begins_with(o.total, "1"))  # mypy: arg-type  pyright: reportArgumentType
    repo.customer_orders(customer_id="42", where=lambda o, op: o.total > 50)  # mypy: arg-type return-value  pyright: reportArgumentType


def results(repo: Shop) -> None:
    summaries: Page[Order] = repo.order_summaries(customer_id="42")  # mypy: assignment  pyright: reportAssignmentType
    repo.order_summaries(customer_id="42").items[0].status  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.order_summary(customer_id="42", created_at=JUNE, order_id="A1").status  # mypy: union-attr  pyright: reportOptionalMemberAccess
    del summaries


async def async_twin(repo: AsyncShop) -> None:
    page: Page[Order] = repo.customer_orders(customer_id="42")  # mypy: assignment  pyright: reportAssignmentType
    repo.customer(customer_id="42").name  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.customer_orders(customer_id="42")  # mypy: unused-coroutine  pyright: reportUnusedCoroutine
    await repo.customer_orders(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue
    await repo.customer_orders.first(customer_id=42)  # mypy: arg-type  pyright: reportArgumentType
    async for order in repo.customer_orders.all(customer_idd="42"):  # mypy: call-arg  pyright: reportCallIssue
        del order
    del page
