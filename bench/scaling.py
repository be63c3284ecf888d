"""Scaling benchmark: client CPU and memory per item for big pages and big items.

Run from the repository root (moto's server must be installed: ``pip install -e '.[dev]'``)::

    python bench/scaling.py [--endpoints replay] [--rounds 5] [--warmup 1]
                            [--sizes 10,100,1000] [--item-kb 1,10] [--block-kb 1000]
                            [--gc-rounds 2] [--no-memory] [--seed 7] [--json out.json]

Does the client's CPU per item stay flat from 10 to 1,000 items a page, for ~1 KB and ~10 KB
items? One partition per (item size, page size) holds exactly that many ``PurchaseOrder``
entities (``bench/codec.py``'s ``Order`` fields plus a list of nested ``LineItem`` models:
3 lines make ~1 KB of JSON on the wire, 58 lines ~10 KB). Each contender reads the whole
partition through a ``query(PurchaseOrder)`` pattern's request (``limit`` = the page size):

* ``raw boto3``: the low-level client sending the pattern's own request (``.params()``,
  ``Limit`` = size + 1 as the pattern asks, so all read the same items and the replay server
  answers every contender from one recording); wire dicts out (the 1.00x baseline).
* ``by-hand``: the raw client, then one reused ``TypeDeserializer`` per attribute and
  ``PurchaseOrder.model_validate`` (as ``bench/codec.py``'s ``decode_by_hand``).
* ``singletable default client``: ``Orders()`` without a client (fast path and
  ``client_config()``), pointed at the endpoint by ``AWS_ENDPOINT_URL_DYNAMODB``.
* ``singletable, fast path off``: ``Orders(client=<plain boto3 client>, fast_path=False)``.
* ``raw boto3 + fast path`` (reference): the raw client with ``fastpath.install``.

DynamoDB ends a page at 1 MB, so a partition that does not fit one page (by default 1,000
items of ~10 KB: 6 pages) is read page by page by every contender (raw: ``LastEvaluatedKey``;
singletable: the page cursor) and its figure is per item over all pages.

Method (as ``bench/e2e.py``): one process; client CPU by ``time.thread_time_ns`` around each
read (servers run in their own processes); results dropped inside the timed region. Every
round visits the partitions in a shuffled order; per partition, ``--block-kb`` KB of items
(at least one step); each step calls every contender once in a seeded shuffled order. A
round's figure is its CPU over its items (amortised, not a median of calls: a full collection
lands in one read but is paid for by all the reads that filled the heap). µs/item is the median
of the rounds' figures; ratios to raw are medians of per-round ratios, with their IQR;
flatness is the same statistic for a contender against itself at the next smaller page. The
expected entities are kept pickled, so the heap the collector walks is the imports, the clients
and the reads.

Then, on the replay endpoint (else the last one): the **GC diagnosis**, each contender with
the cyclic collector as it is, disabled around the read, after ``gc.freeze()`` and with
``gc.set_threshold(10_000)``, interleaved call by call, plus the collector's own time
(``gc.callbacks``) and collections per read; and, in an untimed pass under ``tracemalloc``,
the peak bytes per item of one read against the floor (``model_validate`` of the same entities
from Python dicts built beforehand) and the bytes the result holds.

Endpoints (``bench/endpoints.py``): ``replay`` (the default; keep-alive, every response
recorded once from moto: the cleanest client CPU), ``moto`` (moto's own server takes ~2.5 s
for a 1,000-item page of 1 KB, ~20 s for 1,000 items of 10 KB: use ``--item-kb 1 --block-kb
200`` there) and ``tls``. This is a benchmark, not a test: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.metadata
import itertools
import json
import os
import pickle
import random
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from boto3.dynamodb.types import TypeDeserializer
from pydantic import BaseModel

import codec as codec_bench
import endpoints
import scaling_gc
from codec import Address, Status
from e2e import default_repository, use_dummy_credentials
from endpoints import Endpoint, plain_client
from singletable import Entity, Repository, Table, query
from singletable._wire import item_size
from singletable.aws import fastpath

TIMES, DASH = "\u00d7", "\u2013"
UTC = timezone.utc
#: JSON bytes on the wire of an order without lines, and of one line (measured).
BASE_JSON, LINE_JSON = 520, 167
RAW = "raw boto3"

scaling = Table("bench-scaling")


class LineItem(BaseModel):
    sku: str
    name: str
    quantity: int
    unit_price: Decimal
    backordered: bool


class PurchaseOrder(Entity, table=scaling, type="PO"):
    customer_id: str
    order_id: str
    created_at: datetime
    status: Status
    total: Decimal
    gift: bool
    tags: set[str]
    shipping: Address
    customer_name: str
    note: str | None = None
    currency: Literal["EUR", "USD"]
    lines: list[LineItem]

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"


class Orders(Repository, table=scaling):
    orders = query(PurchaseOrder)


# -- data -------------------------------------------------------------------------------------

_PRODUCTS = [
    "Stainless steel hex bolt M6 x 20, 50 pack",
    "Cordless drill 18 V with two batteries",
    "Safety goggles, anti-fog",
    "Pine plank 2400 x 200 x 18 mm",
    "Wood glue, 750 ml",
    "LED work light 20 W",
    "Masking tape 48 mm x 50 m",
    "Spirit level 600 mm",
]
_TAGS = ["express", "fragile", "b2b", "promo", "repeat", "eco", "gift-wrap", "priority", "bulk"]
_CITIES = ["Berlin", "Lyon", "Porto", "Utrecht", "Gdansk", "Bologna", "Tampere", "Graz", "Cork"]


def lines_for(kb: int) -> int:
    """Line items that make an order about ``kb`` KB of JSON on the wire."""
    return max(1, round((kb * 1024 - BASE_JSON) / LINE_JSON))


def make_orders(customer_id: str, count: int, kb: int, seed: int) -> list[PurchaseOrder]:
    """``count`` orders of one customer, in sort-key (creation) order."""
    rng = random.Random(f"{seed}-{customer_id}")
    start = datetime(2025, 1, 1, tzinfo=UTC)
    orders = []
    for i in range(count):
        lines = [
            LineItem(
                sku=f"SKU-{rng.randrange(10**6):06d}",
                name=rng.choice(_PRODUCTS),
                quantity=rng.randint(1, 40),
                unit_price=Decimal(rng.randrange(99, 99_999)).scaleb(-2),
                backordered=rng.random() < 0.1,
            )
            for _ in range(lines_for(kb))
        ]
        orders.append(
            PurchaseOrder(
                customer_id=customer_id,
                order_id=f"O{i:05d}-{rng.randrange(16**6):06X}",
                created_at=start + timedelta(hours=i, microseconds=rng.randrange(1, 10**6)),
                status=rng.choice(list(Status)),
                total=sum((line.unit_price * line.quantity for line in lines), Decimal(0)),
                gift=rng.random() < 0.2,
                tags=set(rng.sample(_TAGS, rng.randint(2, 4))),
                shipping=Address(
                    street=f"{rng.randint(1, 250)} Main St",
                    city=rng.choice(_CITIES),
                    zip=f"{rng.randrange(10_000, 99_999)}",
                ),
                customer_name=f"Customer {rng.randrange(10**4)}",
                note="Call before delivery" if rng.random() < 0.6 else None,
                currency=rng.choice(["EUR", "USD"]),
                lines=lines,
            )
        )
    return orders


@dataclass
class Partition:
    kb: int
    size: int
    saved: bytes = b""  # the orders, pickled: kept out of the heap the collector walks
    request: dict[str, Any] = field(default_factory=dict)  # the pattern's first Query
    pages: int = 0  # Query pages one read takes (set by verify)

    @property
    def customer_id(self) -> str:
        return f"C{self.kb:02d}KB{self.size:05d}"

    def orders(self) -> list[PurchaseOrder]:
        """The partition's orders in sort-key order (a fresh copy)."""
        return pickle.loads(self.saved)  # type: ignore[no-any-return]


def seed_data(url: str, kbs: list[int], sizes: list[int], seed: int) -> list[Partition]:
    client = plain_client(url)
    scaling.create(client)
    shape = Orders(client, fast_path=False)
    partitions = []
    for kb, size in itertools.product(kbs, sizes):
        part = Partition(kb, size)
        part.request = shape.orders.params(customer_id=part.customer_id, limit=size)
        orders = make_orders(part.customer_id, size, kb, seed)
        part.saved = pickle.dumps(orders)
        items = [o.to_item() for o in orders]
        for i in range(0, len(items), 25):
            batch = [{"PutRequest": {"Item": item}} for item in items[i : i + 25]]
            response = client.batch_write_item(RequestItems={scaling.name: batch})
            assert not response.get("UnprocessedItems"), "moto left items unprocessed"
        partitions.append(part)
    return partitions


def describe(kb: int, orders: list[PurchaseOrder]) -> str:
    """The item size: JSON bytes on the wire and DynamoDB's item size (the 1 MB limit's)."""
    items = [o.to_item() for o in orders]
    wire = statistics.mean(len(json.dumps(i, separators=(",", ":"))) for i in items)
    dynamo = statistics.mean(item_size(i) for i in items)
    return (
        f"{kb} KB items (PurchaseOrder, {lines_for(kb)} line items, ~{wire:,.0f} B of JSON, "
        f"DynamoDB size ~{dynamo:,.0f} B)"
    )


# -- contenders -------------------------------------------------------------------------------

_deserialize = TypeDeserializer().deserialize


def decode_by_hand(item: dict[str, Any]) -> PurchaseOrder:
    return PurchaseOrder.model_validate({name: _deserialize(v) for name, v in item.items()})


@dataclass
class Contender:
    name: str
    read: Callable[[Partition], list[Any]]  # the partition's items, all pages
    typed: bool


def raw_items(client: Any, request: dict[str, Any], pages: list[int] | None = None) -> list[Any]:
    """Every item of a Query, following LastEvaluatedKey (one entry per page in ``pages``)."""
    response = client.query(**request)
    items: list[dict[str, Any]] = response["Items"]
    while "LastEvaluatedKey" in response:
        response = client.query(**request, ExclusiveStartKey=response["LastEvaluatedKey"])
        items += response["Items"]
        if pages is not None:
            pages.append(1)
    return items


def make_contenders(endpoint: Endpoint) -> dict[str, Contender]:
    def raw(client: Any, name: str) -> Contender:
        return Contender(name, lambda p: raw_items(client, p.request), typed=False)

    def by_hand(client: Any) -> Contender:
        def read(p: Partition) -> list[PurchaseOrder]:
            return [decode_by_hand(i) for i in raw_items(client, p.request)]

        return Contender("by-hand", read, typed=True)

    def pattern(repo: Orders, name: str) -> Contender:
        bound = repo.orders

        def read(p: Partition) -> list[PurchaseOrder]:
            page = bound(customer_id=p.customer_id, limit=p.size)
            items = page.items
            while page.cursor is not None:
                page = bound(customer_id=p.customer_id, limit=p.size, cursor=page.cursor)
                items += page.items
            return items

        return Contender(name, read, typed=True)

    fast_client = endpoint.client()
    fastpath.install(fast_client)
    endpoint.use_as_default()
    default_repo = default_repository(Orders)
    plain_repo = Orders(client=endpoint.client(), fast_path=False)
    assert fastpath.is_installed(default_repo.client)
    assert not fastpath.is_installed(plain_repo.client)
    contenders = [
        raw(endpoint.client(), RAW),
        by_hand(endpoint.client()),
        pattern(default_repo, "singletable default client"),
        pattern(plain_repo, "singletable, fast path off"),
        raw(fast_client, "raw boto3 + fast path (reference)"),
    ]
    return {c.name: c for c in contenders}


def verify(endpoint: Endpoint, contenders: dict[str, Contender], parts: list[Partition]) -> None:
    """Every contender must return the partition's orders (typed) or the same wire items;
    counts each partition's pages."""
    for p in parts:
        pages, expected = [1], p.orders()
        wire = raw_items(endpoint.client(), p.request, pages)
        p.pages = len(pages)
        if [decode_by_hand(i) for i in wire] != expected:
            raise SystemExit(f"{endpoint.name}: the raw Query misses {p.kb} KB x {p.size}")
        for c in contenders.values():
            got = c.read(p)
            if got != (expected if c.typed else wire):
                raise SystemExit(f"{endpoint.name}: {c.name} differs on {p.kb} KB x {p.size}")
            if c.typed and not all(type(o) is PurchaseOrder for o in got):
                raise SystemExit(f"{endpoint.name}: {c.name} does not return PurchaseOrders")


# -- timing -----------------------------------------------------------------------------------

Samples = dict[tuple[int, int, str], list[list[int]]]  # (kb, size, name) -> rounds of cpu ns


def steps(p: Partition, block_kb: int) -> int:
    return max(1, block_kb // (p.kb * p.size))


def run(
    contenders: dict[str, Contender],
    parts: list[Partition],
    rounds: int,
    warmup: int,
    block_kb: int,
    rng: random.Random,
) -> Samples:
    """Per (kb, size, contender): per timed round, the thread CPU ns of each read."""
    samples: Samples = {(p.kb, p.size, n): [] for p in parts for n in contenders}
    thread_time = time.thread_time_ns
    names = list(contenders)
    for rnd in range(warmup + rounds):
        for p in rng.sample(parts, len(parts)):
            calls: dict[str, list[int]] = {n: [] for n in names}
            gc.collect()
            for _ in range(steps(p, block_kb)):
                for name in rng.sample(names, len(names)):
                    read = contenders[name].read
                    c0 = thread_time()
                    read(p)  # the result is dropped inside the timed region
                    calls[name].append(thread_time() - c0)
            if rnd >= warmup:
                for name in names:
                    samples[p.kb, p.size, name].append(calls[name])
    return samples


def iqr(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def summarise(samples: Samples, parts: list[Partition]) -> dict[int, dict[str, Any]]:
    """kb -> contender -> size -> µs CPU/item, ratio to raw and flatness (to the contender at
    the next smaller size), each a median of per-round figures with its IQR."""
    out: dict[int, dict[str, Any]] = {}
    for kb in sorted({p.kb for p in parts}):
        sizes = sorted(p.size for p in parts if p.kb == kb)
        names = list(dict.fromkeys(n for (k, _, n) in samples if k == kb))

        def per_round(name: str, size: int, kb: int = kb) -> list[float]:
            """µs per item of each round: its CPU over its items (amortised: a collection
            one read sets off counts once, as in a long-running process)."""
            return [sum(r) / len(r) / size / 1e3 for r in samples[kb, size, name]]

        rows: dict[str, Any] = {}
        for name in names:
            rows[name] = {}
            for smaller, size in zip([sizes[0], *sizes], sizes):
                mine = per_round(name, size)
                ratios = [a / b for a, b in zip(mine, per_round(RAW, size))]
                flat = [a / b for a, b in zip(mine, per_round(name, smaller))]
                rows[name][size] = {
                    "calls": sum(len(r) for r in samples[kb, size, name]),
                    "cpu_us_per_item": statistics.median(mine),
                    "cpu_us_per_item_iqr": iqr(mine),
                    "rounds_us_per_item": mine,
                    "ratio_raw": statistics.median(ratios),
                    "ratio_raw_iqr": iqr(ratios),
                    "flat": statistics.median(flat),
                    "flat_iqr": iqr(flat),
                }
        out[kb] = rows
    return out


def spread(value: float, q: tuple[float, float]) -> str:
    return f"{value:.2f} ({q[0]:.2f}{DASH}{q[1]:.2f})"


def report_endpoint(
    label: str, summary: dict[int, dict[str, Any]], parts: list[Partition], about: dict[int, str]
) -> None:
    for kb, rows in summary.items():
        sizes = sorted(p.size for p in parts if p.kb == kb)
        paged = [f"{p.size} items in {p.pages} pages" for p in parts if p.kb == kb and p.pages > 1]
        note = f"; read page by page: {', '.join(paged)}" if paged else "; one page each"
        print(f"#### {label}: {about[kb]}{note}")
        print()
        head = "| contender |" + "".join(f" µs/item @{s} | {TIMES} raw @{s} |" for s in sizes)
        head += "".join(f" @{b} ÷ @{a} |" for a, b in itertools.pairwise(sizes))
        print(head)
        print("|---|" + "---:|" * (3 * len(sizes) - 1))
        for name, by_size in rows.items():
            cells = "".join(
                f" {r['cpu_us_per_item']:,.1f} | {spread(r['ratio_raw'], r['ratio_raw_iqr'])} |"
                for r in (by_size[s] for s in sizes)
            )
            flat = "".join(
                f" {spread(by_size[s]['flat'], by_size[s]['flat_iqr'])} |" for s in sizes[1:]
            )
            print(f"| {name} |{cells}{flat}")
        print()
        calls = ", ".join(f"@{s}: {rows[RAW][s]['calls']}" for s in sizes)
        print(f"timed reads per contender: {calls}")
        print()


# -- main -------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    info = codec_bench.machine_info(len(gc.get_objects()))
    for name in ("urllib3", "moto"):  # read, not imported: moto would grow this heap
        info[name] = importlib.metadata.version(name)
    info["fast_path_env"] = os.environ.get(fastpath.ENV_VAR, "(unset)")
    return info


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def int_list(text: str) -> list[int]:
    return sorted({int(x) for x in text.split(",") if x.strip()})


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--endpoints", default="replay", help="any of moto,replay,tls (default replay)")
    add("--rounds", type=int, default=5, help="timed rounds (default 5)")
    add("--warmup", type=int, default=1, help="warm-up rounds (default 1)")
    add("--sizes", default="10,100,1000", help="items a page (default 10,100,1000)")
    add("--item-kb", default="1,10", help="item sizes, KB of JSON (default 1,10)")
    add("--block-kb", type=int, default=1000, help="KB of items per partition and round (1000)")
    add("--gc-rounds", type=int, default=3, help="GC diagnosis rounds (default 3; 0 skips)")
    add("--no-memory", action="store_true", help="skip the tracemalloc pass")
    add("--seed", type=int, default=7, help="data and order seed (default 7)")
    add("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    args.names = [e.strip() for e in args.endpoints.split(",") if e.strip()]
    args.size_list, args.kb_list = int_list(args.sizes), int_list(args.item_kb)
    if not args.names or not set(args.names) <= set(endpoints.NAMES):
        parser.error(f"--endpoints takes any of {','.join(endpoints.NAMES)}")
    if args.rounds < 2 or args.warmup < 0 or min(args.size_list + args.kb_list + [1]) < 1:
        parser.error("--rounds must be ≥ 2, --warmup ≥ 0, sizes and item sizes ≥ 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    use_dummy_credentials()
    info = machine_info()
    print(f"command: `{shlex.join(['python', 'bench/scaling.py', *sys.argv[1:]])}`")
    print(
        f"machine: {info['platform']}, {info['cpus']} CPUs, Python {info['python']}; "
        f"boto3 {info['boto3']}, botocore {info['botocore']}, urllib3 {info['urllib3']}, "
        f"pydantic {info['pydantic']}, pydantic-core {info['pydantic-core']}, moto "
        f"{info['moto']}, singletable {info['singletable']}; load average {load()}"
    )
    print(
        f"method: per endpoint {args.warmup} warm-up + {args.rounds} timed rounds; per round, "
        f"the partitions in a shuffled order, {args.block_kb:,} KB of items each (at least one "
        "step), each step calling every contender once in a seeded shuffled order; client CPU "
        "= time.thread_time_ns around each read (results dropped inside it); µs/item = median "
        "over rounds of each round's CPU / items; ratios = medians of per-round ratios (IQR in "
        "brackets); flatness (@b ÷ @a) = the same against the contender at the next smaller "
        f"page; seed {args.seed}"
    )
    rng = random.Random(args.seed)
    results: dict[str, Any] = {"command": sys.argv, "machine": info, "endpoints": {}}
    with endpoints.moto_server() as moto_url, contextlib.ExitStack() as stack:
        parts = seed_data(moto_url, args.kb_list, args.size_list, args.seed)
        about = {
            kb: describe(kb, next(p for p in parts if p.kb == kb).orders()) for kb in args.kb_list
        }
        results["items"] = about
        print(
            "data: one partition per (item size, page size) holding exactly that many items: "
            + "; ".join(about.values())
            + ". DynamoDB ends a page at 1 MB: a partition that does not fit one page is read "
            "page by page by every contender; its figures are per item over all pages."
        )
        print()
        started = endpoints.start(args.names, moto_url, stack)
        diagnosed = "replay" if "replay" in started else list(started)[-1]
        for name, endpoint in started.items():
            contenders = make_contenders(endpoint)
            verify(endpoint, contenders, parts)  # on a replay endpoint: records
            if endpoint.replay:
                endpoint.replay_freeze()
                before = endpoint.replay_stats()
            samples = run(contenders, parts, args.rounds, args.warmup, args.block_kb, rng)
            verify(endpoint, contenders, parts)
            diag = memory = None
            if name == diagnosed and args.gc_rounds > 0:
                diag = scaling_gc.gc_diagnosis(
                    contenders, parts, args.gc_rounds, lambda p: steps(p, args.block_kb), rng, RAW
                )
            if name == diagnosed and not args.no_memory:
                memory = scaling_gc.memory_pass(contenders, parts, PurchaseOrder.model_validate)
            label = endpoint.label
            if endpoint.replay:
                after = endpoint.replay_stats()
                if after["unknown"] or after["recorded"] != before["recorded"]:
                    raise SystemExit(f"{name}: not every timed call was a replay {after}")
                label += f", {after['replayed']:,} responses replayed"
            summary = summarise(samples, parts)
            report_endpoint(label, summary, parts, about)
            results["endpoints"][name] = summary
            results["pages"] = {f"{p.kb} KB x {p.size}": p.pages for p in parts}
            if diag is not None:
                scaling_gc.report_gc(name, diag)
                results["gc"] = {"endpoint": name, **diag}
            if memory is not None:
                scaling_gc.report_memory(name, memory)
                results["memory"] = {"endpoint": name, "rows": memory}
    print(f"load average at the end: {load()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
