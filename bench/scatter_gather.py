"""Scatter-gather and projection rows of ``bench/e2e.py`` (same run, same endpoints).

**Scatter**: one status of ``ShardedOrder`` (``bench/codec.py``'s ``Order`` plus
``shard: Annotated[int, Shard(8, of="order_id")]``, ``GSI1`` partition key
``STATUS#{status}#{shard}``) holds exactly 25 orders in each of its 8 shards (200 in all),
next to 200 orders of other statuses. Contenders, each reading all 200, newest first:

* ``boto3: 8 Queries one after another`` (the baseline): the raw client sends the 8 shard
  Queries in turn (the same requests the pattern sends) and merges their items by hand
  (``heapq.merge`` on the index sort key, then the table key, as the pattern orders them);
  wire dicts out.
* ``singletable scatter (8 at once), default client``: ``repo.pending(status=..., limit=200)``
  on ``query(..., scatter="shard")``: 8 Queries on a thread pool, merged, typed entities out.
* ``singletable scatter (8 at once), plain client``: the same on a plain boto3 client.
* ``singletable scatter, max_concurrency=1`` (reference): the same pattern sending one Query
  at a time: what the merge and the cursor cost without the concurrency.

**Projection**: the 100-order partition of the main Query rows (``bench/codec.py``'s ``Order``,
12 fields): the full Query against ``project=OrderSummary`` (3 of the 12 fields), each through
the raw client (the pattern's request, ``Limit=100``) and through singletable's default client.

The figure here is **process** CPU time (``time.process_time_ns``) around each call, not the
thread's: the scatter's Queries run on pool threads, whose CPU the calling thread's clock would
not see (the server runs in another process and is not counted). Wall time beside it. Calls are
interleaved in a seeded shuffled order per step, like the main rows; ratios are medians of
per-round ratios of per-round medians, to each operation's baseline.
"""

from __future__ import annotations

import gc
import heapq
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from codec import Address, Order, Status, make_orders
from codec import shop as order_shop
from singletable import GSI, Entity, Projection, Repository, Shard, Table, query
from singletable._markers import shard_of

SHARDS = 8
PER_SHARD = 25
OTHERS = 200
SCATTER_LIMIT = SHARDS * PER_SHARD
PARTITION_ITEMS = 100  # the main rows' Query partition

TIMES = "\u00d7"
SCATTER_BASE = "boto3: 8 Queries one after another"
PROJECTION_BASE = "raw boto3: full Query"

sharded = Table("bench-sharded", indexes=[GSI("GSI1", "GSI1PK", "GSI1SK")])


class ShardedOrder(Entity, table=sharded, type="ORDER"):
    """``Order``'s fields, written over 8 shards of its status."""

    customer_id: str
    order_id: str
    created_at: datetime
    status: Status
    total: Decimal
    item_count: int
    gift: bool
    tags: set[str]
    shipping: Address
    customer_name: str
    note: str | None = None
    currency: Literal["EUR", "USD"]
    shard: Annotated[int, Shard(SHARDS, of="order_id")] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"
        GSI1 = ("STATUS#{status}#{shard}", "ORDER#{created_at}#{order_id}")


class OrderSummary(Projection[Order]):
    order_id: str
    status: Status
    total: Decimal


class ShardedShop(Repository, table=sharded):
    pending = query(ShardedOrder, index="GSI1", order="desc", scatter="shard")
    pending_one_at_a_time = query(
        ShardedOrder, index="GSI1", order="desc", scatter="shard", max_concurrency=1
    )


class ProjectedShop(Repository, table=order_shop):
    orders = query(Order)
    summaries = query(Order, project=OrderSummary)


def seed(client: Any, seed: int) -> list[str]:
    """Create the sharded table and store 25 PENDING orders per shard and 200 others (through
    a repository: the shards are derived on write); returns the PENDING order ids newest
    first."""
    sharded.create(client)
    per_shard: dict[int, list[Order]] = {s: [] for s in range(SHARDS)}
    others: list[Order] = []
    for order in make_orders(4 * (SCATTER_LIMIT + OTHERS), seed + 1):
        shard = shard_of(order.order_id, SHARDS)
        if len(per_shard[shard]) < PER_SHARD:
            per_shard[shard].append(order.model_copy(update={"status": Status.PENDING}))
        elif len(others) < OTHERS and order.status is not Status.PENDING:
            others.append(order)
    if any(len(orders) < PER_SHARD for orders in per_shard.values()):
        raise SystemExit("scatter bench: not enough generated orders per shard")
    pending = [o for orders in per_shard.values() for o in orders]
    writer = ShardedShop(client=client)
    writer.batch_put(ShardedOrder(**o.model_dump()) for o in pending + others)
    newest = sorted(pending, key=lambda o: (o.created_at, o.order_id), reverse=True)
    return [o.order_id for o in newest]


@dataclass
class Row:
    op: str  # "Scatter" or "Projection"
    name: str
    call: Callable[[], Any]
    reference: bool = False


def make_rows(
    url: str,
    partition: str,
    plain_client: Callable[[str], Any],
    default_repo: Callable[[type[Any]], Any],
) -> list[Row]:
    """The scatter and projection contenders against ``url``; ``partition`` is the customer
    whose partition holds the main rows' 100 orders. ``plain_client(url)`` makes a boto3
    client, ``default_repo(RepoClass)`` a repository on singletable's default client."""
    shape = ShardedShop(client=plain_client(url))
    shard_queries = shape.pending.params(status=Status.PENDING, limit=SCATTER_LIMIT)["Queries"]
    raw_client = plain_client(url)

    def order_key(item: dict[str, Any]) -> tuple[str, str, str]:
        return item["GSI1SK"]["S"], item["PK"]["S"], item["SK"]["S"]

    def by_hand() -> list[dict[str, Any]]:
        pages = [raw_client.query(**params)["Items"] for params in shard_queries]
        return list(heapq.merge(*pages, key=order_key, reverse=True))

    def scatter(repo: ShardedShop, pattern: str = "pending") -> Callable[[], Any]:
        bound = getattr(repo, pattern)
        return lambda: bound(status=Status.PENDING, limit=SCATTER_LIMIT).items

    projected_shape = ProjectedShop(client=plain_client(url))
    full_params = projected_shape.orders.params(customer_id=partition, limit=PARTITION_ITEMS)
    projected_params = projected_shape.summaries.params(
        customer_id=partition, limit=PARTITION_ITEMS
    )
    full_params["Limit"] = projected_params["Limit"] = PARTITION_ITEMS
    projection_client = plain_client(url)
    default_projected = default_repo(ProjectedShop)
    full, summaries = default_projected.orders, default_projected.summaries
    default_sharded = default_repo(ShardedShop)
    return [
        Row("Scatter", SCATTER_BASE, by_hand),
        Row("Scatter", "singletable scatter (8 at once), default client", scatter(default_sharded)),
        Row(
            "Scatter",
            "singletable scatter (8 at once), plain client",
            scatter(ShardedShop(client=plain_client(url))),
        ),
        Row(
            "Scatter",
            "singletable scatter, max_concurrency=1",
            scatter(default_sharded, "pending_one_at_a_time"),
            reference=True,
        ),
        Row("Projection", PROJECTION_BASE, lambda: projection_client.query(**full_params)["Items"]),
        Row(
            "Projection",
            "raw boto3: projected Query (3 of 12 fields)",
            lambda: projection_client.query(**projected_params)["Items"],
        ),
        Row(
            "Projection",
            "singletable default client: full Query",
            lambda: full(customer_id=partition, limit=PARTITION_ITEMS).items,
        ),
        Row(
            "Projection",
            "singletable default client: project=OrderSummary",
            lambda: summaries(customer_id=partition, limit=PARTITION_ITEMS).items,
        ),
    ]


def verify(rows: list[Row], pending_ids: list[str], orders: list[Order], endpoint: str) -> None:
    """Every contender returns what it should (on the replay endpoint this also records)."""
    by_name = {row.name: row for row in rows}
    wire = by_name[SCATTER_BASE].call()
    if [item["order_id"]["S"] for item in wire] != pending_ids:
        raise SystemExit(f"{endpoint}: the hand-merged scatter differs from the expected order")
    if len({item["GSI1PK"]["S"] for item in wire}) != SHARDS:
        raise SystemExit(f"{endpoint}: the pending orders do not fill {SHARDS} shards")
    summaries = [OrderSummary(order_id=o.order_id, status=o.status, total=o.total) for o in orders]

    def ok(row: Row, got: Any) -> bool:
        if row.name == SCATTER_BASE:
            return True
        if row.op == "Scatter":
            return [o.order_id for o in got] == pending_ids and all(
                type(o) is ShardedOrder for o in got
            )
        if row.name.endswith("project=OrderSummary"):
            return bool(got == summaries)
        if row.name.startswith("singletable"):
            return bool(got == orders)
        ids = [item["order_id"]["S"] for item in got]
        projected = not any("customer_name" in item for item in got)
        return ids == [o.order_id for o in orders] and projected == ("projected" in row.name)

    for row in rows:
        if not ok(row, row.call()):
            raise SystemExit(f"{endpoint}: {row.name}'s result differs")


Samples = dict[str, list[list[tuple[int, int]]]]  # name -> rounds of (cpu ns, wall ns)


def run(
    rows: list[Row],
    rounds: int,
    warmup: int,
    steps: dict[str, int],
    rng: random.Random,
    clock: Callable[[], int] = time.process_time_ns,
) -> Samples:
    """Per contender, one list of (CPU ns, wall ns) per timed round; per round and
    operation, ``steps[op]`` steps each call every contender of that operation once, in a
    shuffled order. CPU is ``clock``'s: the process's by default (a scatter's Queries run on
    pool threads), ``time.thread_time_ns`` for calls that stay on this thread."""
    samples: Samples = {row.name: [] for row in rows}
    cpu_time, perf_counter = clock, time.perf_counter_ns
    ops = sorted({row.op for row in rows})
    for rnd in range(warmup + rounds):
        rng.shuffle(ops)
        for op in ops:
            mine = [row for row in rows if row.op == op]
            calls: dict[str, list[tuple[int, int]]] = {row.name: [] for row in mine}
            gc.collect()
            for _ in range(steps[op]):
                rng.shuffle(mine)
                for row in mine:
                    fn = row.call
                    w0, c0 = perf_counter(), cpu_time()
                    fn()  # the result is dropped inside the timed region
                    c1, w1 = cpu_time(), perf_counter()
                    calls[row.name].append((c1 - c0, w1 - w0))
            if rnd >= warmup:
                for name, values in calls.items():
                    samples[name].append(values)
    return samples


def summarise(rows: list[Row], samples: Samples) -> dict[str, dict[str, dict[str, float]]]:
    """op -> contender -> µs medians and ratios to the op's baseline."""
    bases = {"Scatter": SCATTER_BASE, "Projection": PROJECTION_BASE}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for row in rows:
        rounds, base = samples[row.name], samples[bases[row.op]]
        cpu = [c / 1000 for calls in rounds for c, _ in calls]
        wall = [w / 1000 for calls in rounds for _, w in calls]

        out.setdefault(row.op, {})[row.name] = {
            "calls": len(cpu),
            "cpu_median_us": statistics.median(cpu),
            "cpu_ratio": _ratio(rounds, base, 0),
            "wall_median_us": statistics.median(wall),
            "wall_ratio": _ratio(rounds, base, 1),
            "reference": float(row.reference),
        }
    return out


def _ratio(
    mine: list[list[tuple[int, int]]], theirs: list[list[tuple[int, int]]], index: int
) -> float:
    """The median over rounds of (this contender's median / the baseline's median)."""
    return statistics.median(
        statistics.median(call[index] for call in m) / statistics.median(call[index] for call in t)
        for m, t in zip(mine, theirs)
    )


def report(endpoint: str, summary: dict[str, dict[str, dict[str, float]]]) -> None:
    titles = {
        "Scatter": (
            f"scatter Query over {SHARDS} shards x {PER_SHARD} items ({SCATTER_LIMIT} orders "
            f"out), ratios to {SCATTER_BASE}"
        ),
        "Projection": (
            f"projected Query ({PARTITION_ITEMS} items, 3 of 12 fields) vs the full one, "
            f"ratios to {PROJECTION_BASE}"
        ),
    }
    for op in ("Scatter", "Projection"):
        rows = summary.get(op)
        if not rows:
            continue
        calls = next(iter(rows.values()))["calls"]
        print(f"#### {endpoint}: {titles[op]}; {calls:.0f} timed calls per contender")
        print()
        print(
            f"| contender | median µs process CPU/call | {TIMES} baseline (CPU) | median µs wall "
            f"| {TIMES} baseline (wall) |"
        )
        print("|---|---:|---:|---:|---:|")
        for name, row in rows.items():
            label = f"{name} (reference)" if row["reference"] else name
            print(
                f"| {label} | {row['cpu_median_us']:,.0f} | {row['cpu_ratio']:.2f} | "
                f"{row['wall_median_us']:,.0f} | {row['wall_ratio']:.2f} |"
            )
        print()
