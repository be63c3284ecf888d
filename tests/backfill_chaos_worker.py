"""One worker of the backfill chaos test (``tests/backend/test_backfill_chaos.py``), run as its own
process: ``python -m tests.backfill_chaos_worker ENDPOINT TABLE JOB SEGMENTS LEASE LIMIT``.

It runs ``repo.backfill(Order, segments=SEGMENTS, job=JOB, lease_seconds=LEASE)`` against the
moto server at ENDPOINT once a line arrives on stdin (the test starts the processes early,
so their start-up overlaps the seeding), and prints its report as one JSON line. The models
are here too: the orders as the old code wrote them (``OrderV1``: no shard, GSI1 on the status
alone, type tag ``Order``) and as the new code writes them (``Order``).
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any

from singletable import GSI, Entity, Index, Repository, Shard, Table

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")]
old_table = Table("Chaos", indexes=INDEXES, stream="NEW_AND_OLD_IMAGES")
new_table = Table("Chaos", indexes=INDEXES, stream="NEW_AND_OLD_IMAGES")


class Status(str, Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"


class OrderV1(Entity, table=old_table, type="Order"):
    customer_id: str
    order_id: str
    status: Status
    total: Decimal
    note: str = ""  # what the application writes while the backfill runs
    app_writes: int = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("STATUS#{status}", "ORDER#{order_id}")


class Order(Entity, table=new_table, type="ORDER", former_types=("Order",)):
    customer_id: str
    order_id: str
    status: Status
    total: Decimal
    note: str = ""
    app_writes: int = 0
    shard: Annotated[int, Shard(4, of="order_id")] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("STATUS#{status}#{shard}", "ORDER#{order_id}")
        GSI2 = Index("PENDING", "{order_id}", when={"status": Status.PENDING})


class OldShop(Repository, table=old_table):
    pass


class Shop(Repository, table=new_table):
    pass


def client_for(endpoint: str, service: str = "dynamodb") -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        service,  # type: ignore[call-overload]
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(
            retries={"total_max_attempts": 4, "mode": "standard"},
            connect_timeout=5,
            read_timeout=15,
        ),
    )


def main(argv: list[str]) -> int:
    endpoint, table_name, job, segments, lease, limit = argv
    repo = Shop(client_for(endpoint), table_name=table_name, default_limit=int(limit))
    print("ready", flush=True)  # imported, client made: the test says when to start
    sys.stdin.readline()
    report = repo.backfill(Order, segments=int(segments), job=job, lease_seconds=float(lease))
    print(json.dumps({"updated": report.updated, "matched": report.matched}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
