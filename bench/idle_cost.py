"""What an idle wait costs the next call: the same client work, timed warm and after a pause.

Against moto's server every call waits ~0.3 s for the answer (moto is slow on a 100-item
Query) and opens a new TCP connection (moto closes each one). ``bench/e2e.py`` then reads
about the same extra client CPU per call for every contender (~1.9 ms on the 2-core machine),
which pulls every ratio towards 1. This script shows where that constant comes from, with no
server in the timed work:

* the same parse-and-decode of a Query page (``--items``, default 100), timed right after a
  run of itself and after sleeping ``--idle-ms``: botocore's parser (the raw client's work),
  and singletable's fast path with the entity decode (the direct transport's work);
* a loop that allocates nothing, as a control;
* a new TCP connection to a local listener (connect, then close), as each moto call pays.

    python bench/idle_cost.py [--idle-ms 300] [--reps 40]

Not a test: numbers depend on the machine; compare the columns within one run.
"""

from __future__ import annotations

import argparse
import json
import platform
import socket
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import boto3
from botocore.awsrequest import HeadersDict
from botocore.parsers import create_parser

from codec import Order, make_orders
from singletable.aws import fastpath


def page_body(count: int, seed: int) -> bytes:
    """A Query response body holding ``count`` orders, as DynamoDB writes one."""
    items = [order.to_item() for order in make_orders(count, seed)]
    page = {"Items": items, "Count": count, "ScannedCount": count}
    return json.dumps(page, default=sorted).encode()


def workloads(body: bytes) -> dict[str, Callable[[], Any]]:
    client = boto3.client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    model = client.meta.service_model.operation_model("Query")
    botocore_parser = create_parser("json")
    fast = fastpath.ResponseParser()
    headers = HeadersDict({"x-amzn-requestid": "R"})

    def botocore_parse() -> Any:
        response = {"status_code": 200, "headers": headers, "body": body}
        return botocore_parser.parse(response, model.output_shape)

    def singletable_parse_and_decode() -> Any:
        parsed = fast.parse(model, 200, body)
        assert parsed is not None
        return [Order.from_item(item) for item in parsed["Items"]]

    def no_allocation() -> Any:
        return sum(range(100_000))

    return {
        "botocore's parser (raw client)": botocore_parse,
        "fast path + entities (direct transport)": singletable_parse_and_decode,
        "a loop that allocates nothing (control)": no_allocation,
    }


def connection_cost(reps: int, idle: float) -> tuple[float, float]:
    """Median µs of thread CPU for connect and for close to a local listener, each after an
    idle wait (the listener accepts on its own thread, which the thread clock leaves out)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    connect, close = [], []
    for _ in range(reps):
        time.sleep(idle)
        t0 = time.thread_time_ns()
        sock = socket.create_connection(("127.0.0.1", port))
        t1 = time.thread_time_ns()
        sock.close()
        t2 = time.thread_time_ns()
        connect.append(t1 - t0)
        close.append(t2 - t1)
    listener.close()
    return statistics.median(connect) / 1e3, statistics.median(close) / 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--idle-ms", type=float, default=300.0, help="the pause (default 300)")
    ap.add_argument("--reps", type=int, default=40, help="repetitions (default 40)")
    ap.add_argument("--items", type=int, default=100, help="items on the page (default 100)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    idle = args.idle_ms / 1000
    work = workloads(page_body(args.items, args.seed))
    warm: dict[str, list[int]] = {name: [] for name in work}
    cold: dict[str, list[int]] = {name: [] for name in work}
    for _ in range(args.reps):
        for name, run in work.items():
            run()
            t = time.thread_time_ns()
            run()
            warm[name].append(time.thread_time_ns() - t)
            time.sleep(idle)
            t = time.thread_time_ns()
            run()
            cold[name].append(time.thread_time_ns() - t)
    print(f"machine: {platform.platform()}, Python {platform.python_version()}")
    print(
        f"command: python bench/idle_cost.py --idle-ms {args.idle_ms:g} --reps {args.reps} "
        f"--items {args.items}"
    )
    print()
    print(f"| work (thread CPU, median µs) | warm | after {args.idle_ms:g} ms idle | extra |")
    print("|---|---:|---:|---:|")
    medians = {}
    for name in work:
        w, c = statistics.median(warm[name]) / 1e3, statistics.median(cold[name]) / 1e3
        medians[name] = (w, c)
        print(f"| {name} | {w:,.0f} | {c:,.0f} | +{c - w:,.0f} |")
    connect, close = connection_cost(args.reps, idle)
    print(f"| a new TCP connection: connect, close | - | {connect:,.0f}, {close:,.0f} | - |")
    (raw_w, raw_c), (st_w, st_c), _ = medians.values()
    print()
    print(
        f"ratio of the two works: warm {st_w / raw_w:.2f}, after the idle wait {st_c / raw_c:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
