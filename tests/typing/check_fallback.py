"""What the mypy plugin cannot analyse keeps today's ``**kwargs: Any`` (never a false error)
and its precise result: a repository whose module fails to import at check time, and one
defined inside a function. Never executed."""

from __future__ import annotations

from tests.typing.typing_shop import Order, shop
from tests.typing.unimportable_shop import RemoteShop
from typing_extensions import assert_type

from singletable import Page, Repository, query


def unimportable(repo: RemoteShop) -> None:
    assert_type(repo.customer_orders(customer_idd="42"), Page[Order])


def local_class() -> None:
    class LocalShop(Repository, table=shop):
        customer_orders = query(Order)

    repo = LocalShop(client=None)
    assert_type(repo.customer_orders(customer_idd="42"), Page[Order])
