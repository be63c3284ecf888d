"""The write rows of ``bench/writes.py`` on the async twin, against raw aiobotocore.

The same six writes (``writes.OPS``) and the same data, restores and requests; contenders,
ratios to the first one:

* ``raw aiobotocore``: an aiobotocore client sending the very requests singletable sends
  (recorded once, as the sync rows' raw client sends them), wire dicts out.
* ``async: singletable default client``: ``AsyncWriteShop.connect()`` (the fast path and
  the HTTP exchange on aiobotocore's client).
* ``async: singletable direct transport``: ``AsyncWriteShop.connect(transport="direct")``.

Each call is timed around the await, inside the event loop (``contenders.AsyncSide.timed``),
so the loop's own start and stop stay out, as in the async read rows of ``bench/e2e.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from botocore import xform_name

from contenders import ASYNC_BASE, AsyncSide, aio_plain_client
from writes import (
    OPS,
    OpenAccount,
    Requests,
    Row,
    Workload,
    delete,
    instance_update,
    keyword_update,
    shop,
)

ASYNC_DEFAULT = "async: singletable default client"
ASYNC_DIRECT = "async: singletable direct transport"


def async_write_shop() -> type[Any]:
    """The async twin of ``writes.WriteShop`` (imported on demand: aiobotocore is an extra)."""
    from singletable.aio import AsyncRepository

    class AsyncWriteShop(OpenAccount, AsyncRepository, table=shop):
        pass

    return AsyncWriteShop


def make_rows(side: AsyncSide, endpoint: Any, work: Workload, requests: Requests) -> list[Row]:
    """The async write contenders against ``endpoint``, on ``side``'s event loop."""
    orders, others, accounts, batch = work.orders, work.others, work.accounts, work.batch
    shop_cls = async_write_shop()

    def row(name: str, calls: dict[str, Callable[[int], Awaitable[Any]]]) -> Row:
        return Row(
            name,
            {op: _on(side, fn) for op, fn in calls.items()},
            timed={op: _timed_on(side, fn) for op, fn in calls.items()},
        )

    def raw(client: Any) -> Row:
        def send(op: str) -> Callable[[int], Awaitable[Any]]:
            async def call(i: int) -> Any:
                return [
                    await getattr(client, xform_name(name))(**params)
                    for name, params in requests[op][i]
                ]

            return call

        return row(ASYNC_BASE, {op: send(op) for op in OPS})

    def pattern(repo: Any, name: str) -> Row:
        async def put(i: int) -> Any:
            return await repo.put(orders[i])

        async def transact(i: int) -> Any:
            return await repo.open_account(accounts[i], orders[i], others[i])

        async def batch_write(i: int) -> Any:
            return await repo.batch_put(batch)

        calls: dict[str, Callable[[int], Awaitable[Any]]] = {
            "PutItem": put,
            "UpdateItem, keyword": lambda i: keyword_update(repo, orders[i]),
            "UpdateItem, instance": lambda i: instance_update(repo, orders[i], i),
            "DeleteItem": lambda i: delete(repo, orders[i]),
            "TransactWriteItems": transact,
            "BatchWriteItem": batch_write,
        }
        return row(name, calls)

    return [
        raw(side.enter(aio_plain_client(endpoint))),
        pattern(side.enter(shop_cls.connect()), ASYNC_DEFAULT),
        pattern(side.enter(shop_cls.connect(transport="direct")), ASYNC_DIRECT),
    ]


def _on(side: AsyncSide, fn: Callable[[int], Awaitable[Any]]) -> Callable[[int], Any]:
    return lambda i: side.call(fn, i)


def _timed_on(side: AsyncSide, fn: Callable[[int], Awaitable[Any]]) -> Callable[[int], int]:
    return lambda i: side.timed(fn, i)[0]
