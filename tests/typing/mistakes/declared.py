"""Deliberate mistakes that both checkers catch without the plugin: condition callbacks where
the signature is typed (pattern declarations, condition= on write and transaction verbs,
declared signatures) and declared signatures themselves, on both twins. Never executed."""

from __future__ import annotations

from datetime import datetime

from tests.typing.typing_shop import Customer, Order, OrderSummary, Status, shop

from singletable import Condition, ConditionFn, Page, Repository, Transaction, query, transaction
from singletable.aio import AsyncRepository


class Declared:
    misspelt = query(Order, where=lambda o, op: op.eq(o.statuss, Status.PENDING))  # mypy: attr-defined  pyright: reportAttributeAccessIssue

    @query(Order, order="desc")
    def recent(
        self,
        *,
        customer_id: str,
        created_at__gte: datetime | None = None,
        where: Condition | ConditionFn[Order] | None = None,
    ) -> Page[Order]:
        raise NotImplementedError

    @query(Order, project=OrderSummary)  # mypy: arg-type  pyright: reportArgumentType
    def summaries(self, *, customer_id: str) -> Page[Order]:
        raise NotImplementedError

    @transaction
    def ship(self, tx: Transaction, order: Order) -> None:
        tx.update(order, condition=lambda o, op: op.gt(o.rnk, 1))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
        tx.put(order, condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
        tx.create(order, condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
        tx.delete(Order, customer_id="1", condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
        tx.condition_check(Customer, customer_id="42", condition=lambda c, op: op.exists(c.emial))  # mypy: attr-defined  pyright: reportAttributeAccessIssue


class Shop(Declared, Repository, table=shop): ...


class AsyncShop(Declared, AsyncRepository, table=shop): ...


def writes(repo: Shop, order: Order) -> None:
    repo.create(order, condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.put(order, condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.update(order, rank=1, condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.update(Order, customer_id="1", condition=lambda o, op: op.eq(o.nme, 1))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.delete(order, condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.delete(Order, customer_id="1", condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.put(order, condition="total > 5")  # mypy: arg-type  pyright: reportArgumentType


def declared(repo: Shop) -> None:
    repo.recent(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue
    repo.recent(customer_id="42", where=lambda o, op: op.gt(o.totl, 5))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    repo.recent.first(customer_id=42)  # mypy: arg-type  pyright: reportArgumentType
    repo.recent.all(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue


async def declared_async(repo: AsyncShop, order: Order) -> None:
    page: Page[Order] = repo.recent(customer_id="42")  # mypy: assignment  pyright: reportAssignmentType
    await repo.recent(customer_idd="42")  # mypy: call-arg  pyright: reportCallIssue
    await repo.recent.count(customer_id=42)  # mypy: arg-type  pyright: reportArgumentType
    first: Order = await repo.recent.first(customer_id="42")  # mypy: assignment  pyright: reportAssignmentType
    await repo.create(order, condition=lambda o, op: op.exists(o.totl))  # mypy: attr-defined  pyright: reportAttributeAccessIssue
    del page, first
