"""Stream routing benchmark: what ``StreamRouter`` adds on top of decoding the images.

Run ``python bench/streams.py [--records 1000] [--reps 15] [--json out.json]``.

Contenders, each over the same records, interleaved per repetition (order shuffled with a
seeded RNG), the garbage collector enabled:

* ``from_item``: ``Order.from_item(image)`` over the 1,000 images, already taken out of their
  records (the decoding alone: the baseline). ``spec.from_item`` is the same without the
  public classmethod's type-tag check (``EntitySpec.from_item``, what the router calls).
* ``events``: ``list(router.events(records))`` over 1,000 ``INSERT`` records carrying those
  images (NEW_AND_OLD_IMAGES view: an insert has one image): find the entity by type tag,
  decode, build the typed event.
* ``handle``: ``router.handle({"Records": records})`` with one no-op handler registered for
  the events: routing plus dispatch, as a Lambda function runs it.

The headline is ``events / from_item``, the median of per-repetition ratios (the issue's bar:
within 1.2x). A second line does the same for ``MODIFY`` records, which carry two images each,
against ``from_item`` over both images (2,000 decodes). Before timing, the script checks that
the events hold entities equal to the baseline's.

This is a benchmark, not a test: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from singletable import Entity, Repository, Table, query
from singletable._entity import spec_of
from singletable.streams import StreamRouter

table = Table("Bench", stream="NEW_AND_OLD_IMAGES")


class Order(Entity, table=table, type="ORDER"):
    customer_id: str
    order_id: str
    created_at: datetime
    status: str
    total: Decimal
    items: int
    customer_name: str
    note: str | None = None

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"


class Shop(Repository, table=table):
    customer_orders = query(Order)


def orders(count: int, rng: random.Random) -> list[Order]:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return [
        Order(
            customer_id=f"c{rng.randrange(100)}",
            order_id=f"o{n:06d}",
            created_at=start + timedelta(minutes=n),
            status=rng.choice(["PENDING", "SHIPPED", "DELIVERED"]),
            total=Decimal(rng.randrange(100, 100_000)) / 100,
            items=rng.randrange(1, 20),
            customer_name=rng.choice(["Ann", "Bob", "Cyd", "Dee"]),
            note=rng.choice([None, "gift", "leave at the door"]),
        )
        for n in range(count)
    ]


def record(name: str, sequence: int, new: dict[str, Any] | None, old: dict[str, Any] | None) -> Any:
    some = new if new is not None else old
    assert some is not None
    stream: dict[str, Any] = {
        "ApproximateCreationDateTime": 1781000000.0,
        "Keys": {"PK": some["PK"], "SK": some["SK"]},
        "SequenceNumber": str(100000000000 + sequence),
        "SizeBytes": 300,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        stream["NewImage"] = new
    if old is not None:
        stream["OldImage"] = old
    return {
        "eventID": f"e{sequence}",
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": stream,
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/Bench/stream/x",
    }


def timed(block: Callable[[], Any]) -> float:
    start = time.perf_counter()
    block()
    return time.perf_counter() - start


def run(count: int, reps: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    entities = orders(count, rng)
    images = [o.to_item() for o in entities]
    changed = [o.model_copy(update={"status": "CANCELLED"}).to_item() for o in entities]
    inserts = [record("INSERT", n, image, None) for n, image in enumerate(images)]
    modifies = [record("MODIFY", n, new, old) for n, (new, old) in enumerate(zip(changed, images))]
    both = [image for pair in zip(changed, images) for image in pair]
    router = StreamRouter(Shop)
    router.on(Order)(lambda event: None)
    spec = spec_of(Order)
    lambda_event = {"Records": inserts}

    # Equivalent work: the events hold what from_item decodes.
    events = list(router.events(inserts))
    assert [e.new for e in events] == [Order.from_item(i) for i in images]
    modified = list(router.events(modifies))
    assert [(e.new, e.old) for e in modified] == [
        (Order.from_item(n), Order.from_item(o)) for n, o in zip(changed, images)
    ]
    assert router.handle(lambda_event) == {"batchItemFailures": []}

    contenders: dict[str, Callable[[], Any]] = {
        "from_item": lambda: [Order.from_item(i) for i in images],
        "spec.from_item": lambda: [spec.from_item(i) for i in images],
        "events": lambda: list(router.events(inserts)),
        "handle": lambda: router.handle(lambda_event),
        "from_item x2": lambda: [Order.from_item(i) for i in both],
        "events MODIFY": lambda: list(router.events(modifies)),
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for block in contenders.values():  # warm up (code generation, caches)
        block()
    for _ in range(reps):
        order = list(contenders)
        rng.shuffle(order)
        for name in order:
            gc.collect()
            times[name].append(timed(contenders[name]))

    def ratio(name: str, base: str) -> float:
        return statistics.median(a / b for a, b in zip(times[name], times[base]))

    return {
        "records": count,
        "reps": reps,
        "python": platform.python_version(),
        "microseconds_per_record": {
            name: statistics.median(values) / count * 1e6 for name, values in times.items()
        },
        "events / from_item": ratio("events", "from_item"),
        "events / spec.from_item": ratio("events", "spec.from_item"),
        "handle / from_item": ratio("handle", "from_item"),
        "events MODIFY / from_item x2": ratio("events MODIFY", "from_item x2"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    result = run(args.records, args.reps, args.seed)
    for name, value in result["microseconds_per_record"].items():
        print(f"{name:>16}: {value:7.2f} µs per record")
    print(
        f"routing {args.records:,} INSERT records / decoding their images with from_item: "
        f"{result['events / from_item']:.3f}x"
    )
    print(
        "the same against EntitySpec.from_item (no type-tag check): "
        f"{result['events / spec.from_item']:.3f}x"
    )
    print(f"handle() with a no-op handler / from_item: {result['handle / from_item']:.3f}x")
    print(
        f"routing MODIFY records (two images) / from_item of both images: "
        f"{result['events MODIFY / from_item x2']:.3f}x"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
