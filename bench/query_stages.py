"""Where a direct-transport Query's client CPU goes, stage by stage, beside the raw client's call.

``bench/e2e.py`` gives one figure per call; this script splits the direct transport's 100-item
Query (``bench/contenders.py``'s ``Shop.orders``, ``SINGLETABLE_TRANSPORT=direct``) into its
stages by timing singletable's and botocore's own functions on the thread CPU clock
(``time.thread_time_ns``) around each call, with the garbage collector's time from
``gc.callbacks``:

* compiling the request (the pattern's ``compile``) and its JSON body (``prepare``);
* the headers and SigV4 signature; the HTTP exchange (connect, write, read);
* reading the body's JSON, and the fast path's pass over it (the parse minus the read);
* botocore's retry decision (``Endpoint._needs_retry``: its checkers, the CRC32 included);
* decoding the page into 100 validated ``Order`` entities;
* the collector's work during the call (and how many collections of each generation).

The raw boto3 client's Query (the same request, ``Limit=100``) is timed in turn with each
call, as its ratio's denominator. Each wrapper adds ~1 µs to the call it wraps.

    python bench/query_stages.py [--endpoint moto|replay] [--calls 60]

Not a test: numbers depend on the machine; compare the rows within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import platform
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from botocore import endpoint as botocore_endpoint

import e2e
from contenders import CUSTOMER, PARTITION_ITEMS, Shop
from endpoints import Endpoint, moto_server, plain_client, start, use_dummy_credentials
from singletable._patterns import base, keyed
from singletable.aws import _direct, _direct_urllib3, fastpath

STAGES: dict[str, list[int]] = defaultdict(list)
RECORDING = [False]  # on during the direct transport's calls only (the raw client's share some)


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            if RECORDING[0]:
                STAGES[name].append(time.thread_time_ns() - start)

    return wrapper


def instrument() -> None:
    """Wrap the stages' functions (this process only)."""
    keyed.KeyedPattern.compile = timed("compile the request", keyed.KeyedPattern.compile)
    _direct.DirectBase.prepare = timed("the JSON body", _direct.DirectBase.prepare)
    _direct.DirectBase.headers = timed("headers and SigV4", _direct.DirectBase.headers)
    _direct_urllib3.Pools.send = timed("HTTP exchange", _direct_urllib3.Pools.send)
    fastpath.read_json = timed("read the JSON", fastpath.read_json)
    fastpath.ResponseParser.parse = timed("parse", fastpath.ResponseParser.parse)
    botocore_endpoint.Endpoint._needs_retry = timed(
        "retry decision (botocore's checkers, CRC32)", botocore_endpoint.Endpoint._needs_retry
    )
    base.Decoder.page = timed("decode 100 entities", base.Decoder.page)


class Collector:
    """The garbage collector's thread CPU and collections per generation, from its callbacks,
    charged to the contender whose call is running (``current``)."""

    def __init__(self) -> None:
        self.current = ""
        self.started = 0
        self.spent: dict[str, int] = defaultdict(int)
        self.collections: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        gc.callbacks.append(self.callback)

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        if not self.current:
            return
        if phase == "start":
            self.started = time.thread_time_ns()
        else:
            self.spent[self.current] += time.thread_time_ns() - self.started
            self.collections[self.current][info["generation"]] += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--endpoint", choices=("moto", "replay"), default="moto")
    ap.add_argument("--calls", type=int, default=60, help="timed calls of each (default 60)")
    args = ap.parse_args()
    use_dummy_credentials()
    with contextlib.ExitStack() as stack:
        moto_url = stack.enter_context(moto_server())
        e2e.seed_data(plain_client(moto_url), 7)
        if args.endpoint == "replay":
            endpoint = start(["replay"], moto_url, stack)["replay"]
        else:
            endpoint = Endpoint("moto", moto_url, "moto")
        endpoint.use_as_default()
        os.environ["SINGLETABLE_TRANSPORT"] = "direct"
        repo = Shop()
        raw = endpoint.client()
        params = repo.orders.params(customer_id=CUSTOMER, limit=PARTITION_ITEMS)
        params["Limit"] = PARTITION_ITEMS

        def direct() -> Any:
            return repo.orders(customer_id=CUSTOMER, limit=PARTITION_ITEMS).items

        def raw_query() -> Any:
            return raw.query(**params)["Items"]

        for _ in range(5):  # warm up, before the wrappers
            assert len(direct()) == len(raw_query()) == PARTITION_ITEMS
        instrument()
        collector = Collector()
        totals: dict[str, list[int]] = {"direct transport": [], "raw boto3": []}
        for _ in range(args.calls):  # in turn, so both see the same state of the machine
            for name, call in (("direct transport", direct), ("raw boto3", raw_query)):
                RECORDING[0] = name == "direct transport"
                collector.current = name
                began = time.thread_time_ns()
                call()
                totals[name].append(time.thread_time_ns() - began)
                collector.current = ""
        RECORDING[0] = False
    report(args, totals, dict(STAGES), collector.spent, collector.collections)
    return 0


def report(
    args: argparse.Namespace,
    totals: dict[str, list[int]],
    stages: dict[str, list[int]],
    gc_time: dict[str, int],
    gc_counts: dict[str, list[int]],
) -> None:
    """Print the stages' medians, the two whole calls and the collector's share."""

    def median(values: list[int]) -> float:
        return statistics.median(values) / 1000

    print(f"machine: {platform.platform()}, Python {platform.python_version()}")
    print(f"command: python bench/query_stages.py --endpoint {args.endpoint} --calls {args.calls}")
    print()
    print("| stage of the direct transport's Query (thread CPU, median µs) | µs |")
    print("|---|---:|")
    parse, json_read = stages.pop("parse"), stages["read the JSON"]
    rows = {}
    for name, values in stages.items():
        rows[name] = values
        if name == "read the JSON":
            rows["the fast path's pass"] = [p - j for p, j in zip(parse, json_read, strict=True)]
    for name, values in rows.items():
        print(f"| {name} | {median(values):,.0f} |")
    rest = median(totals["direct transport"]) - sum(median(v) for v in rows.values())
    print(f"| the rest (the flow, the page, freeing the response) | {rest:,.0f} |")
    for name, values in totals.items():
        per_call = gc_time[name] / args.calls / 1000
        young, middle, old = gc_counts[name]
        print(
            f"| **{name}, whole call** | **{median(values):,.0f}** "
            f"(collector ~{per_call:,.0f} per call: {young}/{middle}/{old} collections "
            f"of generation 0/1/2 in {args.calls} calls) |"
        )
    ratio = median(totals["direct transport"]) / median(totals["raw boto3"])
    print()
    print(f"direct transport / raw boto3 (medians): {ratio:.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
