"""A backfill job as it would run on many machines: worker processes against a moto server,
killed (SIGKILL) and restarted at random, one paused past its lease (SIGSTOP, then SIGCONT),
while the application keeps writing. Seeded; the run takes some seconds.

What must hold at the end, read from the table and its stream (every write the server
accepted, whoever sent it):

* the job finishes: every segment done, a further worker finds nothing to do;
* every stale item was fixed exactly once (one stream record per item that is not an
  application write), and no fresh item was written;
* no application write was overwritten (each item's write counter and note are the
  application's last);
* ``backfill_status`` agrees with the table: its counts add up to the items fixed and read.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from singletable.streams import read_stream
from tests.backfill_chaos_worker import OldShop, Order, OrderV1, Shop, Status, client_for, new_table

SEED = 26
WORKERS = 4
SEGMENTS = 8
LEASE = 1.5
PAGE = 6  # items per Scan page: many pages, many renewals
STALE, FRESH, APP_WRITES = 64, 16, 24
KILLS = 3
DEADLINE = 120.0  # seconds: a hung job fails the test instead of CI
JOB = "chaos"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.backend("moto_server"),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals (SIGKILL, SIGSTOP)"),
]


class Workers:
    """The worker processes: started, killed, paused and restarted by pid."""

    def __init__(self, endpoint: str, table_name: str) -> None:
        self.args = [endpoint, table_name, JOB, str(SEGMENTS), str(LEASE), str(PAGE)]
        self.running: dict[int, subprocess.Popen[str]] = {}
        self.finished: list[dict[str, Any]] = []
        self.killed = 0

    def start(self, *, go: bool = True) -> None:
        """Start a worker process (``go``: it starts working as soon as it is ready)."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.backfill_chaos_worker", *self.args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.running[proc.pid] = proc
        if go:
            self.go(proc)

    def go(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()

    def go_all(self) -> None:
        """Wait until every worker is ready, then start them together."""
        for proc in self.running.values():
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr
        for proc in self.running.values():
            self.go(proc)

    def kill(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)
        self.running.pop(pid).wait()
        self.killed += 1
        self.start()  # the orchestrator restarts it, as a Job's controller would

    def pause(self, pid: int, seconds: float) -> None:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(seconds)
        os.kill(pid, signal.SIGCONT)

    def reap(self) -> None:
        for pid, proc in list(self.running.items()):
            if proc.poll() is None:
                continue
            out, err = proc.communicate()
            del self.running[pid]
            assert proc.returncode == 0, f"worker {pid} failed:\n{err}"
            self.finished.append(json.loads(out.strip().splitlines()[-1]))

    def stop_all(self) -> None:
        for proc in self.running.values():
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGCONT)
                proc.kill()
            proc.communicate()
        self.running.clear()


class Application:
    """Writes to items while the backfill runs, as the deployed application does: one write
    per item, to a field the fix does not touch but its condition reads."""

    def __init__(self, client: Any, table_name: str, keys: list[dict[str, Any]]) -> None:
        self.client = client
        self.table_name = table_name
        self.keys = keys
        self.acked: dict[str, str] = {}  # sort key -> the note the application wrote
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        for n, key in enumerate(self.keys):
            note = f"written by the application ({n})"
            self.client.update_item(
                TableName=self.table_name,
                Key=key,
                UpdateExpression="SET #note = :note ADD #writes :one",
                ExpressionAttributeNames={"#note": "note", "#writes": "app_writes"},
                ExpressionAttributeValues={":note": {"S": note}, ":one": {"N": "1"}},
            )
            self.acked[key["SK"]["S"]] = note
            time.sleep(0.04)


def order(n: int, fresh: bool) -> Any:
    cls = Order if fresh else OrderV1
    return cls(
        customer_id=f"c{n % 17}",
        order_id=f"{'f' if fresh else 's'}{n:04d}",
        status=Status.PENDING if n % 3 else Status.SHIPPED,
        total=Decimal(n),
    )


@pytest.fixture
def workers(backend: Any) -> Iterator[Workers]:
    pool = Workers(backend.endpoint_url, backend.table_name("chaos"))
    yield pool
    pool.stop_all()


def owner_pid(owner: str | None, pool: Workers) -> int | None:
    pid = int(owner.split(":")[1]) if owner else None
    return pid if pid in pool.running else None


def holders(repo: Shop, pool: Workers) -> list[int]:
    """The pids of worker processes that hold a live lease now."""
    now = datetime.now(timezone.utc)
    return [
        pid
        for s in repo.backfill_status(JOB)
        if not s.done and s.lease_until and s.lease_until > now
        if (pid := owner_pid(s.owner, pool)) is not None
    ]


def test_workers_killed_paused_and_restarted_finish_with_each_item_fixed_once(
    backend: Any, workers: Workers
) -> None:
    rng = random.Random(SEED)
    for _ in range(WORKERS):
        workers.start(go=False)  # their start-up overlaps the seeding
    client = client_for(backend.endpoint_url)
    table_name = backend.table_name("chaos")
    new_table.create(client, table_name=table_name)
    repo = Shop(client, table_name=table_name)
    OldShop(client, table_name=table_name).batch_put([order(n, False) for n in range(STALE)])
    repo.batch_put([order(n, True) for n in range(FRESH)])
    everything = [order(n, False) for n in range(STALE)] + [order(n, True) for n in range(FRESH)]
    chosen = rng.sample(everything, APP_WRITES)
    keys = [Order.key(customer_id=o.customer_id, order_id=o.order_id) for o in chosen]
    app = Application(client, table_name, keys)

    started = time.monotonic()
    workers.go_all()
    app.thread.start()
    paused = False
    while workers.running:
        assert time.monotonic() - started < DEADLINE, "the job did not finish in time"
        time.sleep(rng.uniform(0.1, 0.3))
        workers.reap()
        held = holders(repo, workers) if workers.running else []
        if not held:
            continue
        victim = rng.choice(held)
        if workers.killed < KILLS:
            workers.kill(victim)
        elif not paused:
            workers.pause(victim, 2.5 * LEASE)  # its lease passes; another worker takes over
            paused = True
    app.thread.join(timeout=30)
    assert workers.killed == KILLS and paused

    # The job finished, and a further worker finds nothing to do.
    status = repo.backfill_status(JOB)
    assert len(status) == SEGMENTS and all(s.done for s in status)
    late = repo.backfill(Order, segments=SEGMENTS, job=JOB, lease_seconds=LEASE)
    assert (late.scanned, late.updated) == (0, 0)

    # Every stale item was fixed exactly once; no fresh item was written by the backfill.
    fixes: Counter[str] = Counter()
    arn = client.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
    streams = client_for(backend.endpoint_url, "dynamodbstreams")
    for record in read_stream(streams, arn):
        change = record["dynamodb"]
        sort_key = change["Keys"]["SK"]["S"]
        if record["eventName"] != "MODIFY" or not sort_key.startswith("ORDER#"):
            continue
        if change["OldImage"]["app_writes"] == change["NewImage"]["app_writes"]:
            fixes[sort_key] += 1  # not the application's write: the backfill's
    assert fixes == Counter(f"ORDER#s{n:04d}" for n in range(STALE))

    # No application write was overwritten; every item is as the new model writes it.
    stored = {
        item["SK"]["S"]: item
        for page in client.get_paginator("scan").paginate(TableName=table_name)
        for item in page["Items"]
        if item["SK"]["S"].startswith("ORDER#")
    }
    assert len(stored) == STALE + FRESH
    assert len(app.acked) == APP_WRITES
    for sort_key, item in stored.items():
        written = sort_key in app.acked
        assert item["app_writes"] == {"N": "1" if written else "0"}, sort_key
        assert item["note"] == {"S": app.acked.get(sort_key, "")}, sort_key
        assert Order.__singletable__.to_item(Order.from_item(item)) == item  # fresh

    # backfill_status agrees with the table.
    assert sum(s.updated for s in status) == STALE
    assert sum(s.matched for s in status) == STALE + FRESH
    assert sum(s.failed for s in status) == 0
    # the segments of the killed and the paused workers were taken over
    claims = [int(item["claims"]["N"]) for item in job_segments(client, table_name)]
    assert len(claims) == SEGMENTS and sum(claims) > SEGMENTS
    # what finished workers report is their own work, within the job's
    assert sum(r["updated"] for r in workers.finished) <= STALE


def job_segments(client: Any, table_name: str) -> list[dict[str, Any]]:
    response = client.query(
        TableName=table_name,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :s)",
        ExpressionAttributeValues={":pk": {"S": f"__backfill__#{JOB}"}, ":s": {"S": "SEGMENT#"}},
        ConsistentRead=True,
    )
    items: list[dict[str, Any]] = response["Items"]
    return items
