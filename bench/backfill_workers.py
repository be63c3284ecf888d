"""A backfill on many worker processes (``job=``) against the one-machine checkpoint file, on a
moto server, and what the coordination costs.

Run from the repository root (moto's server must be installed: ``pip install -e '.[dev]'``)::

    python bench/backfill_workers.py [--items 20000] [--page 1000] [--workers 1,2,4]
                                     [--segments 8] [--json out.json]

The migration is ``bench/backfill.py``'s (20,000 stale orders, 2,000 notes beside them). Each
contender runs on a freshly seeded table of its own, as worker processes started up front and
told to begin together once imported (so start-up is not timed):

* ``checkpoint file``: one process, ``repo.backfill(Order, segments=S, checkpoint=...)``;
* ``job, N workers``: N processes each running ``repo.backfill(Order, segments=S,
  job=...)``, the same call.

Figures: items per second (from the start signal until the last worker returned), client CPU
per item (every worker's ``time.process_time`` around its call, added up; the server runs in
another process), and the coordination overhead of the jobs: the requests on the job's own
items (header, claims, surveys, per-page records) per segment and per Scan page, and their
share of the write units consumed (as the server reports them).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import boto3
import botocore

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backfill import Order, Shop, check, client_for, moto_server, seed
from singletable import __version__ as singletable_version

JOB_PREFIX = "__backfill__#"


# -- one worker process ------------------------------------------------------------------------


def is_job_request(params: dict[str, Any]) -> bool:
    """Whether a request touches the backfill job's own items."""
    key = params.get("Key") or params.get("Item") or {}
    pk = key.get("PK", {}).get("S", "")
    if not pk:
        pk = params.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S", "")
    return str(pk).startswith(JOB_PREFIX)


def worker(url: str, table: str, page: int, segments: int, mode: str) -> dict[str, Any]:
    """Wait for the start signal, run the backfill, return what it sent and spent."""
    client = client_for(url)
    counts: Counter[str] = Counter()
    units: Counter[str] = Counter()

    def note(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["bench-job"] = is_job_request(params)

    def tally(parsed: dict[str, Any], context: dict[str, Any], model: Any, **_: Any) -> None:
        kind = "job" if context.get("bench-job") else "work"
        counts[f"{kind}:{model.name}"] += 1
        consumed = parsed.get("ConsumedCapacity") or {}
        entries = consumed if isinstance(consumed, list) else [consumed]
        writes = model.name in ("UpdateItem", "PutItem", "DeleteItem", "TransactWriteItems")
        for entry in entries:
            units[f"{kind}:{'write' if writes else 'read'}"] += entry.get("CapacityUnits", 0)

    client.meta.events.register("before-parameter-build.dynamodb", note)
    client.meta.events.register("after-call.dynamodb", tally)
    repo = Shop(client, table_name=table, default_limit=page)
    print("ready", flush=True)
    sys.stdin.readline()
    cpu = time.process_time()
    if mode == "file":
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "job.json")
            report = repo.backfill(Order, segments=segments, checkpoint=path)
    else:
        report = repo.backfill(Order, segments=segments, job="bench", lease_seconds=60)
    return {
        "cpu": time.process_time() - cpu,
        "updated": report.updated,
        "requests": dict(counts),
        "units": dict(units),
    }


# -- the driver ---------------------------------------------------------------------------------


def run(url: str, name: str, args: Any, workers: int, mode: str) -> dict[str, Any]:
    client = client_for(url)
    seed(client, name, args.items)
    command = [sys.executable, __file__, "--worker", url, name, str(args.page)]
    command += [str(args.segments), mode]
    procs = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(workers)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    wall = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [json.loads(proc.communicate()[0].strip().splitlines()[-1]) for proc in procs]
    wall = time.perf_counter() - wall
    assert sum(r["updated"] for r in results) == args.items, results
    check(client, name, args.items)
    client.delete_table(TableName=name)
    requests: Counter[str] = Counter()
    units: Counter[str] = Counter()
    for result in results:
        requests.update(result["requests"])
        units.update(result["units"])
    label = "checkpoint file, 1 process" if mode == "file" else f"job, {workers} workers"
    pages = requests["work:Scan"]
    job_requests = sum(n for k, n in requests.items() if k.startswith("job:"))
    write_units = units["job:write"] + units["work:write"]
    row = {
        "contender": label,
        "items": args.items,
        "seconds": round(wall, 2),
        "items_per_second": round(args.items / wall),
        "cpu_us_per_item": round(sum(r["cpu"] for r in results) / args.items * 1e6, 1),
        "scan_pages": pages,
        "job_requests": job_requests,
        "job_requests_per_segment": round(job_requests / args.segments, 1),
        "job_requests_per_page": round(job_requests / max(pages, 1), 2),
        "job_write_units": round(units["job:write"], 1),
        "write_units": round(write_units, 1),
        "job_write_share": round(units["job:write"] / write_units, 4) if write_units else 0,
        "requests": dict(requests),
    }
    print(
        f"  {label}: {row['items_per_second']} items/s, {row['cpu_us_per_item']} µs CPU/item, "
        f"{job_requests} job requests ({row['job_write_share']:.1%} of write units)",
        file=sys.stderr,
    )
    return row


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        url, table, page, segments, mode = argv[1:]
        print(json.dumps(worker(url, table, int(page), int(segments), mode)), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--page", type=int, default=1000, help="Scan page size (Limit)")
    parser.add_argument("--workers", default="1,2,4", help="worker process counts")
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    rows = []
    with moto_server() as url:
        print(f"moto server at {url}; {args.items:,} stale orders per run", file=sys.stderr)
        rows.append(run(url, "bench-file", args, 1, "file"))
        for workers in (int(n) for n in args.workers.split(",")):
            rows.append(run(url, f"bench-job-{workers}", args, workers, "job"))
    print()
    print(
        "| contender | items/s | client CPU µs/item | job requests per segment | "
        "per Scan page | share of write units |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        job = row["job_requests"] > 0
        print(
            f"| {row['contender']} | {row['items_per_second']:,} | {row['cpu_us_per_item']:,} | "
            + (
                f"{row['job_requests_per_segment']} | {row['job_requests_per_page']} | "
                f"{row['job_write_share']:.1%} |"
                if job
                else "- | - | - |"
            )
        )
    import moto

    print()
    print(
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs; boto3 {boto3.__version__}, botocore "
        f"{botocore.__version__}, moto {moto.__version__}, singletable {singletable_version}; "
        f"`python bench/backfill_workers.py {' '.join(argv)}`"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
