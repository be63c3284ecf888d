"""``repo.backfill`` against a hand-written boto3 scan-and-update loop, on a moto server.

Run from the repository root (moto's server must be installed: ``pip install -e '.[dev]'``)::

    python bench/backfill.py [--items 20000] [--page 1000] [--segments 1,2,4] [--json out.json]

The migration: 20,000 orders written by the old model (type tag ``Order``, ``GSI1PK =
STATUS#{status}``) and the new model (type tag ``ORDER`` with ``former_types=("Order",)``, a
``Shard(4, of="order_id")`` field in ``GSI1PK = STATUS#{status}#{shard}``, a sparse ``GSI2``
for pending orders). Every order is stale, so every one is rewritten; 2,000 notes of another
type share the table and are scanned but left alone.

Contenders, each on a freshly seeded table of its own (same items):

* ``boto3 loop``: what one writes by hand: Scan pages (``Limit=--page``, a filter on the old
  tag), and per item the new attributes computed from the raw attributes (the shard with the
  same ``shard_of``), then one ``UpdateItem`` setting them, conditioned on the type tag still
  being the old one. No decoding, no validation, no comparison, no resume: the floor.
* ``singletable, N segments``: ``repo.backfill(Order, segments=N)`` on a repository with
  ``default_limit=--page`` (its Scan page size): decodes and validates each item, derives
  every attribute through ``to_item``, compares them with the stored ones by value, and sends an
  ``UpdateItem`` conditioned on every scalar attribute read.

Figures: items per second (wall time of the whole job) and client CPU per item (the process's
CPU time, ``time.process_time``: the server runs in another process; the singletable runs
with segments use threads, whose CPU this clock includes). After each run the script checks
that the table holds what the new model writes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any

import boto3
import botocore

from singletable import GSI, Entity, Index, Repository, Shard, Table
from singletable import __version__ as singletable_version
from singletable._markers import shard_of

TIMES = "\u00d7"
INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")]
old_table = Table("bench-backfill", indexes=INDEXES)
new_table = Table("bench-backfill", indexes=INDEXES)


class Status(str, Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"
    DELIVERED = "DELIVERED"


class OrderV1(Entity, table=old_table, type="Order"):
    customer_id: str
    order_id: str
    status: Status
    total: Decimal
    note: str = ""

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("STATUS#{status}", "ORDER#{order_id}")


class NoteV1(Entity, table=old_table, type="NOTE"):
    customer_id: str
    note_id: str
    text: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "NOTE#{note_id}"


class Order(Entity, table=new_table, type="ORDER", former_types=("Order",)):
    customer_id: str
    order_id: str
    status: Status
    total: Decimal
    note: str = ""
    shard: Annotated[int, Shard(4, of="order_id")] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("STATUS#{status}#{shard}", "ORDER#{order_id}")
        GSI2 = Index("PENDING", "ORDER#{order_id}", when={"status": Status.PENDING})


class Shop(Repository, table=new_table):
    pass


# -- the server and the data -------------------------------------------------------------------


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def client_for(url: str) -> Any:
    config = botocore.config.Config(
        max_pool_connections=16, retries={"mode": "standard", "total_max_attempts": 3}
    )
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
        config=config,
    )


def seed(client: Any, name: str, items: int) -> None:
    new_table.create(client, table_name=name)
    statuses = list(Status)
    rows = [
        OrderV1(
            customer_id=f"c{n % 997}",
            order_id=f"o{n:06}",
            status=statuses[n % 3],
            total=Decimal(n) / 100,
            note="gift" if n % 5 == 0 else "",
        ).to_item()
        for n in range(items)
    ]
    rows += [
        NoteV1(customer_id=f"c{n % 997}", note_id=f"n{n:05}", text="hello").to_item()
        for n in range(items // 10)
    ]
    for start in range(0, len(rows), 25):
        chunk = [{"PutRequest": {"Item": item}} for item in rows[start : start + 25]]
        pending: dict[str, Any] = {name: chunk}
        while pending:
            response = client.batch_write_item(RequestItems=pending)
            pending = response.get("UnprocessedItems") or {}


def check(client: Any, name: str, items: int) -> None:
    """Every order now holds what the new model writes; notes are untouched (a backfill job's
    own items are left aside)."""
    kwargs: dict[str, Any] = {"TableName": name}
    orders = notes = 0
    while True:
        page = client.scan(**kwargs)
        for item in page["Items"]:
            if item["PK"]["S"].startswith("__backfill__#"):
                continue
            if item["SK"]["S"].startswith("NOTE#"):
                notes += 1
                assert item["_type"] == {"S": "NOTE"} and "GSI1PK" not in item
                continue
            orders += 1
            expected = Order.from_item(item).to_item()
            assert item == expected, (item, expected)
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    assert (orders, notes) == (items, items // 10), (orders, notes)


# -- the contenders ----------------------------------------------------------------------------


def boto3_loop(client: Any, name: str, page: int) -> int:
    """The hand-written migration: Scan for the old tag, compute the new attributes from the
    raw ones, one conditioned UpdateItem each. Returns the number of items updated."""
    updated = 0
    kwargs: dict[str, Any] = {
        "TableName": name,
        "Limit": page,
        "FilterExpression": "#t = :old",
        "ExpressionAttributeNames": {"#t": "_type"},
        "ExpressionAttributeValues": {":old": {"S": "Order"}},
    }
    while True:
        response = client.scan(**kwargs)
        for item in response["Items"]:
            order_id = item["order_id"]["S"]
            status = item["status"]["S"]
            shard = shard_of(order_id, 4)
            values = {
                ":new": {"S": "ORDER"},
                ":old": {"S": "Order"},
                ":shard": {"N": str(shard)},
                ":g1": {"S": f"STATUS#{status}#{shard}"},
            }
            expression = "SET #t = :new, #shard = :shard, GSI1PK = :g1"
            names = {"#t": "_type", "#shard": "shard"}
            if status == "PENDING":
                values[":g2pk"] = {"S": "PENDING"}
                values[":g2sk"] = {"S": f"ORDER#{order_id}"}
                expression += ", GSI2PK = :g2pk, GSI2SK = :g2sk"
            client.update_item(
                TableName=name,
                Key={"PK": item["PK"], "SK": item["SK"]},
                UpdateExpression=expression,
                ConditionExpression="#t = :old",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            updated += 1
        if "LastEvaluatedKey" not in response:
            return updated
        kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def singletable_run(client: Any, name: str, page: int, segments: int) -> int:
    repo = Shop(client, table_name=name, default_limit=page)
    report = repo.backfill(Order, segments=segments)
    assert not report.failed and report.up_to_date == 0, report
    return report.updated


def measure(label: str, run: Any, client: Any, url: str, name: str, items: int) -> dict[str, Any]:
    seed(client, name, items)
    cpu, wall = time.process_time(), time.perf_counter()
    updated = run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert updated == items, (label, updated)
    check(client, name, items)
    client.delete_table(TableName=name)
    row = {
        "contender": label,
        "items": items,
        "seconds": round(wall, 2),
        "items_per_second": round(items / wall),
        "cpu_us_per_item": round(cpu / items * 1e6, 1),
    }
    print(f"  {label}: {row['items_per_second']} items/s, {row['cpu_us_per_item']} µs CPU/item")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--page", type=int, default=1000, help="Scan page size (Limit)")
    parser.add_argument("--segments", default="1,2,4", help="singletable segment counts")
    parser.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.segments.split(",")]
    rows = []
    with moto_server() as url:
        client = client_for(url)
        print(f"moto server at {url}; {args.items:,} stale orders per run", file=sys.stderr)
        rows.append(
            measure(
                "boto3 loop",
                lambda: boto3_loop(client, "bench-hand", args.page),
                client,
                url,
                "bench-hand",
                args.items,
            )
        )
        for segments in counts:
            name = f"bench-st-{segments}"
            rows.append(
                measure(
                    f"singletable, {segments} segment{'s' if segments > 1 else ''}",
                    lambda name=name, segments=segments: singletable_run(
                        client, name, args.page, segments
                    ),
                    client,
                    url,
                    name,
                    args.items,
                )
            )
    base = rows[0]
    print()
    print("| contender | items/s | client CPU µs/item | CPU vs boto3 loop |")
    print("|---|---:|---:|---:|")
    for row in rows:
        ratio = row["cpu_us_per_item"] / base["cpu_us_per_item"]
        print(
            f"| {row['contender']} | {row['items_per_second']:,} | {row['cpu_us_per_item']} | "
            f"{ratio:.2f}{TIMES} |"
        )
    import moto

    print()
    print(
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs; boto3 {boto3.__version__}, botocore "
        f"{botocore.__version__}, moto {moto.__version__}, singletable {singletable_version}; "
        f"`python bench/backfill.py {' '.join(argv if argv is not None else sys.argv[1:])}`"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
