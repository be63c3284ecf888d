"""Codec benchmark: singletable's compiled codec against the common hand-written boto3 path.

Run ``python bench/codec.py [--items 1000] [--reps 11] [--json out.json]`` (also ``--warmup``,
``--seed``, ``--clock perf_counter|thread_time`` and ``--check``; see ``--help``).

Four contenders run side by side in one process, interleaved per repetition (their order is
shuffled every repetition with a seeded RNG), each over the same 1,000 varied ``Order``
entities (12 fields: str, aware datetime, str Enum, Decimal, int, bool, set[str], a nested
model, an optional str, a Literal):

* ``encode by-hand``: ``model_dump()``, the types boto3 cannot serialise fixed by hand
  (datetime -> ISO string, Enum -> value), one reused ``TypeSerializer`` per attribute, key
  strings from f-strings, and the type tag.
* ``encode singletable``: ``order.to_item()`` (keys, type tag and item-size bound included).
* ``decode by-hand``: one reused ``TypeDeserializer`` per attribute, then
  ``Order.model_validate`` (full validation).
* ``decode singletable``: ``Order.from_item(item)`` (full validation).

Both decoders read the items singletable wrote. Before timing, the script checks that every
path round-trips to entities equal to the originals and that both encoders write the same
item (up to set order and the spelling of the UTC offset), so the comparison is between
equivalent work. Each timed block converts the whole list (a list comprehension, results
kept until the clock stops); the figure is that block's time divided by the item count.
Every repetition times each contender once with the garbage collector enabled (the headline
column) and once with it disabled. Ratios are medians of per-repetition ratios (singletable /
by-hand of the same repetition and GC mode), which cancel most of the drift of a shared
machine.

This is a benchmark, not a test: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import enum
import gc
import json
import os
import platform
import random
import shlex
import statistics
import string
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import boto3
import botocore
import pydantic
import pydantic_core
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from pydantic import BaseModel

import singletable
from singletable import GSI, Entity, Table

#: Acceptance targets: singletable's median time as a fraction of the by-hand path's.
TARGETS = {"decode": 0.42, "encode": 0.36}

UTC = timezone.utc
TIMES, DASH = "\u00d7", "\u2013"  # the table's multiplication sign and range dash

shop = Table("bench-shop", indexes=[GSI("GSI1", "GSI1PK", "GSI1SK")])


class Status(str, enum.Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    SHIPPED = "SHIPPED"
    DELIVERED = "DELIVERED"
    CANCELLED = "CANCELLED"


class Address(BaseModel):
    street: str
    city: str
    zip: str


class Order(Entity, table=shop, type="ORDER"):
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

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"
        GSI1 = ("STATUS#{status}", "ORDER#{created_at}#{order_id}")


# -- data -------------------------------------------------------------------------------------

_FIRST = ["Ada", "Grace", "Linus", "Margaret", "Ken", "Barbara", "Dennis", "Frances", "Alan"]
_LAST = ["Lovelace", "Hopper", "Torvalds", "Hamilton", "Thompson", "Liskov", "Ritchie", "Allen"]
_CITIES = ["Berlin", "Lyon", "Porto", "Utrecht", "Gdansk", "Bologna", "Tampere", "Graz", "Cork"]
_STREETS = ["Main St", "Harbour Rd", "Linden Allee", "Rue Vieille", "Station Sq", "Mill Lane"]
_TAGS = ["express", "fragile", "b2b", "promo", "repeat", "eco", "gift-wrap", "priority", "bulk"]
_NOTES = [
    "Leave at the back door",
    "Call before delivery",
    "Ring twice, the bell is faint",
    "Deliver to the neighbour at number 12 if nobody answers",
    "Invoice to the company address",
]


def make_orders(count: int, seed: int) -> list[Order]:
    """``count`` varied, valid orders (fixed ``seed``: the same data on every run)."""
    rng = random.Random(seed)
    customers = [f"C{rng.randrange(10**6):06d}" for _ in range(max(1, count // 10))]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    orders = []
    for i in range(count):
        suffix = "".join(rng.choices(string.ascii_uppercase + string.digits, k=6))
        created = start + timedelta(
            seconds=rng.randrange(365 * 86_400), microseconds=rng.randrange(1, 10**6)
        )
        orders.append(
            Order(
                customer_id=rng.choice(customers),
                order_id=f"O{i:05d}-{suffix}",
                created_at=created,
                status=rng.choice(list(Status)),
                total=Decimal(rng.randrange(199, 250_000)).scaleb(-2),  # cents: 1.99 .. 2499.99
                item_count=rng.randint(1, 25),
                gift=rng.random() < 0.2,
                tags=set(rng.sample(_TAGS, rng.randint(2, 4))),
                shipping=Address(
                    street=f"{rng.randint(1, 250)} {rng.choice(_STREETS)}",
                    city=rng.choice(_CITIES),
                    zip=f"{rng.randrange(10_000, 99_999)}",
                ),
                customer_name=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
                note=rng.choice(_NOTES) if rng.random() < 0.6 else None,
                currency=rng.choice(["EUR", "USD"]),
            )
        )
    return orders


# -- the hand-written path --------------------------------------------------------------------

_serialize = TypeSerializer().serialize
_deserialize = TypeDeserializer().deserialize


def encode_by_hand(order: Order) -> dict[str, Any]:
    """What a competent engineer writes without a mapper: dump, fix what boto3 rejects,
    serialise per attribute, add keys and the type tag."""
    data = order.model_dump(exclude_none=True)  # nested model -> dict, set stays a set
    created = data["created_at"] = data["created_at"].isoformat()
    status = data["status"] = data["status"].value
    item = {name: _serialize(value) for name, value in data.items()}
    sort_key = f"ORDER#{created}#{order.order_id}"
    item["PK"] = {"S": f"CUSTOMER#{order.customer_id}"}
    item["SK"] = {"S": sort_key}
    item["GSI1PK"] = {"S": f"STATUS#{status}"}
    item["GSI1SK"] = {"S": sort_key}
    item["_type"] = {"S": "ORDER"}
    return item


def decode_by_hand(item: dict[str, Any]) -> Order:
    """boto3's documented idiom: deserialise every attribute, then validate (pydantic ignores
    the key attributes and the type tag)."""
    return Order.model_validate({name: _deserialize(value) for name, value in item.items()})


# -- contenders -------------------------------------------------------------------------------


def bulk_encode_by_hand(orders: list[Order]) -> list[dict[str, Any]]:
    return [encode_by_hand(order) for order in orders]


def bulk_encode_singletable(orders: list[Order]) -> list[dict[str, Any]]:
    return [order.to_item() for order in orders]


def bulk_decode_by_hand(items: list[dict[str, Any]]) -> list[Order]:
    return [decode_by_hand(item) for item in items]


def bulk_decode_singletable(items: list[dict[str, Any]]) -> list[Order]:
    from_item = Order.from_item
    return [from_item(item) for item in items]


# (operation, contender) -> bulk function; the input is the orders (encode) or items (decode)
CONTENDERS: dict[tuple[str, str], Callable[[Any], list[Any]]] = {
    ("decode", "by-hand"): bulk_decode_by_hand,
    ("decode", "singletable"): bulk_decode_singletable,
    ("encode", "by-hand"): bulk_encode_by_hand,
    ("encode", "singletable"): bulk_encode_singletable,
}


# -- verification -----------------------------------------------------------------------------


def _wire_datetime(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _normalised(item: dict[str, Any]) -> dict[str, Any]:
    """An item with spelling differences that carry no meaning removed: set order, and the
    ISO spelling of the same UTC instant (``+00:00`` by hand, ``Z`` in singletable)."""
    out: dict[str, Any] = {}
    for name, av in item.items():
        ((tag, raw),) = av.items()
        if tag in ("SS", "NS", "BS"):
            raw = sorted(raw)
        elif name == "created_at":
            raw = _wire_datetime(raw)
        elif name in ("SK", "GSI1SK"):
            prefix, when, order_id = raw.split("#")
            raw = (prefix, _wire_datetime(when), order_id)
        out[name] = {tag: raw}
    return out


def verify(orders: list[Order], items: list[dict[str, Any]]) -> None:
    """Every contender must do equivalent work: all paths round-trip to equal entities."""
    for order, item in zip(orders, items, strict=True):
        by_hand = encode_by_hand(order)
        checks = {
            "singletable decode of singletable's item": Order.from_item(item),
            "by-hand decode of singletable's item": decode_by_hand(item),
            "singletable decode of the by-hand item": Order.from_item(by_hand),
            "by-hand decode of the by-hand item": decode_by_hand(by_hand),
        }
        for what, result in checks.items():
            if result != order:
                raise SystemExit(f"verification failed: {what} differs from {order!r}")
        if _normalised(by_hand) != _normalised(item):
            raise SystemExit(
                "verification failed: the by-hand item and singletable's item differ:\n"
                f"  by-hand:     {by_hand}\n  singletable: {item}"
            )


# -- timing -----------------------------------------------------------------------------------


#: ``--clock``: this thread's CPU time (the default: the work the code does, without the time
#: the thread waits for a CPU on a shared machine, as the end-to-end benchmark measures client
#: CPU) or wall time (``perf_counter``, as the reference figures used).
CLOCKS: dict[str, Callable[[], int]] = {
    "perf_counter": time.perf_counter_ns,
    "thread_time": time.thread_time_ns,
}


def time_block(
    fn: Callable[[Any], list[Any]], data: list[Any], gc_on: bool, clock: Callable[[], int]
) -> float:
    """µs per item for one bulk conversion of ``data``."""
    gc.collect()
    if not gc_on:
        gc.disable()
    try:
        start = clock()
        out = fn(data)
        elapsed = clock() - start
    finally:
        gc.enable()
    del out
    return elapsed / 1000 / len(data)


def run(
    orders: list[Order],
    items: list[dict[str, Any]],
    reps: int,
    warmup: int,
    seed: int,
    clock: Callable[[], int],
) -> dict[tuple[str, str, bool], list[float]]:
    """Per (operation, contender, gc_on): one µs/item figure per timed repetition."""
    rng = random.Random(seed)
    slots = [(op, name, gc_on) for (op, name) in CONTENDERS for gc_on in (True, False)]
    samples: dict[tuple[str, str, bool], list[float]] = {slot: [] for slot in slots}
    for rep in range(warmup + reps):
        order = slots[:]
        rng.shuffle(order)
        for op, name, gc_on in order:
            data = orders if op == "encode" else items
            us = time_block(CONTENDERS[op, name], data, gc_on, clock)
            if rep >= warmup:
                samples[op, name, gc_on].append(us)
    return samples


# -- report -----------------------------------------------------------------------------------


def quartiles(values: list[float]) -> tuple[float, float]:
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def summarise(samples: dict[tuple[str, str, bool], list[float]]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for op, name in CONTENDERS:
        on, off = samples[op, name, True], samples[op, name, False]
        base_on, base_off = samples[op, "by-hand", True], samples[op, "by-hand", False]
        q1, q3 = quartiles(on)
        median = statistics.median(on)
        rows[f"{op} {name}"] = {
            "median_us": median,
            "iqr_us": [q1, q3],
            "items_per_s": 1e6 / median,
            "ratio_by_hand": statistics.median(a / b for a, b in zip(on, base_on)),
            "gc_off_median_us": statistics.median(off),
            "gc_off_ratio_by_hand": statistics.median(a / b for a, b in zip(off, base_off)),
        }
    return rows


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def machine_info(gc_objects: int) -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pydantic": pydantic.VERSION,
        "pydantic-core": pydantic_core.__version__,
        "boto3": boto3.__version__,
        "botocore": botocore.__version__,
        "singletable": f"{singletable.__version__} ({git_commit()})",
        "gc_tracked_objects_at_start": gc_objects,
    }


def wire_stats(items: list[dict[str, Any]]) -> tuple[float, float]:
    """Mean attribute count and mean JSON size (bytes) of the items on the wire."""
    attrs = statistics.mean(len(item) for item in items)
    size = statistics.mean(len(json.dumps(item, separators=(",", ":"))) for item in items)
    return attrs, size


def report(
    rows: dict[str, Any], args: argparse.Namespace, info: dict[str, Any], wire: tuple[float, float]
) -> dict[str, str]:
    command = shlex.join(["python", "bench/codec.py", *sys.argv[1:]])
    print(f"command: `{command}`")
    print(
        f"machine: {info['platform']}, {info['cpus']} CPUs, Python {info['python']}; "
        f"pydantic {info['pydantic']}, pydantic-core {info['pydantic-core']}, "
        f"boto3 {info['boto3']}, botocore {info['botocore']}, singletable {info['singletable']}"
    )
    print(
        f"data: {args.items} Order items (seed {args.seed}), {wire[0]:.1f} wire attributes and "
        f"~{wire[1]:.0f} B of JSON each; {info['gc_tracked_objects_at_start']:,} GC-tracked "
        "objects at start"
    )
    print(
        f"method: {args.reps} timed reps + {args.warmup} warm-up, contenders interleaved in a "
        f"shuffled order per rep; µs per item = one bulk conversion / items ({args.clock}_ns); "
        "ratios are medians of per-rep ratios"
    )
    print()
    print(
        f"| contender | median µs/item | IQR µs/item | items/s | {TIMES} by-hand "
        f"| GC off µs/item | GC off {TIMES} by-hand |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, row in rows.items():
        q1, q3 = row["iqr_us"]
        print(
            f"| {label} | {row['median_us']:.2f} | {q1:.2f}{DASH}{q3:.2f} | "
            f"{row['items_per_s']:,.0f} | {row['ratio_by_hand']:.2f} | "
            f"{row['gc_off_median_us']:.2f} | {row['gc_off_ratio_by_hand']:.2f} |"
        )
    print()
    verdicts: dict[str, str] = {}
    for op, target in TARGETS.items():
        ratio = rows[f"{op} singletable"]["ratio_by_hand"]
        verdicts[op] = "PASS" if ratio <= target else "FAIL"
        print(f"{op} ratio = singletable/by-hand = {ratio:.3f} (target ≤ {target}): {verdicts[op]}")
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1000, help="entities (default 1000)")
    parser.add_argument("--reps", type=int, default=11, help="timed repetitions (default 11)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up repetitions (default 2)")
    parser.add_argument("--seed", type=int, default=7, help="data and order seed (default 7)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="thread_time",
        help="thread_time (CPU time, default; steady on a busy machine) or perf_counter (wall)",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit with status 1 if a target is missed"
    )
    args = parser.parse_args(argv)
    if args.items < 1 or args.reps < 2 or args.warmup < 0:
        parser.error("--items must be ≥ 1, --reps ≥ 2, --warmup ≥ 0")

    gc_objects = len(gc.get_objects())
    orders = make_orders(args.items, args.seed)
    items = [order.to_item() for order in orders]
    verify(orders, items)
    wire = wire_stats(items)
    samples = run(orders, items, args.reps, args.warmup, args.seed, CLOCKS[args.clock])
    rows = summarise(samples)
    info = machine_info(gc_objects)
    verdicts = report(rows, args, info, wire)
    if args.json:
        labels = {
            (op, name, gc_on): f"{op} {name} gc_{'on' if gc_on else 'off'}"
            for op, name, gc_on in samples
        }
        payload = {
            "command": sys.argv,
            "machine": info,
            "items": args.items,
            "reps": args.reps,
            "warmup": args.warmup,
            "seed": args.seed,
            "clock": args.clock,
            "wire_attributes_mean": wire[0],
            "wire_json_bytes_mean": wire[1],
            "targets": TARGETS,
            "verdicts": verdicts,
            "results": rows,
            "samples_us": {labels[slot]: values for slot, values in samples.items()},
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if args.check and "FAIL" in verdicts.values() else 0


if __name__ == "__main__":
    sys.exit(main())
