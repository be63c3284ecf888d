"""End-to-end benchmark: GetItem and a 100-item Query through boto3 and through singletable.

Run from the repository root (moto's server must be installed: ``pip install -e '.[dev]'``)::

    python bench/e2e.py [--endpoints moto,replay,tls] [--rounds 20] [--gets 300] [--queries 100]
                        [--scatters 40] [--projected 100] [--no-scatter]
                        [--natives 100] [--no-native]
                        [--warmup 2] [--seed 7] [--import-runs 10] [--no-async] [--json out.json]

One process, contenders interleaved call by call: every round runs, per operation,
``--gets / --rounds`` GetItem steps or ``--queries / --rounds`` Query steps, and each step
calls every contender once, in an order shuffled per step with a seeded RNG, so drift, load
from other processes and the cost of switching between libraries fall on every contender
alike. The figure is the **client CPU per call**
(``time.thread_time_ns`` around each call: request building, signing, HTTP, response
parsing and the mapper; the server's work is in another process and not counted), with
wall time beside it. Each call's result is dropped inside the timed region, so every
contender pays for freeing what it returned (the raw client its 100 wire dicts; the others
their entities, having freed the wire dicts they decoded inside the call anyway). Ratios to
the raw client are medians of per-round ratios (median of the contender's calls / median
of the raw client's calls in the same round).

Contenders (``bench/contenders.py``): the raw boto3 client (wire dicts out, the baseline), the
by-hand path, singletable's repository patterns on a plain client, on one with the fast path,
on its default client (also with the opt-in signer, and with the fast path off), and two
reference rows.

The async rows (``bench/contenders.py``; left out with ``--no-async``), in the same run and
interleaved with the rows above, call by call, but with their own baseline, the raw
aiobotocore client: singletable's async twin (``singletable.aio``) on its default client, on a
plain client and with the fast path off, aiodynamo's client, and the raw aiobotocore client
with the fast path (reference). Each is timed inside the one event loop they share.

Data: ``bench/codec.py``'s ``Order`` (14 wire attributes, ~680 B of JSON each); one
partition holds exactly 100 orders (the Query reads all of them: ``Limit=100`` for the raw
clients; a pattern asks for one more, ``Limit=101``, to know the page is the last), plus
400 orders in other partitions. GetItem reads 10 different orders of that partition in turn.

Endpoints (``bench/endpoints.py``), all on 127.0.0.1, each server in its own process:

* ``moto``: ``python -m moto.server``. It closes the connection after every response, so
  every call there also pays a TCP connect, and moto's own work dominates wall time.
* ``replay``: ``bench/replay_server.py``, a keep-alive HTTP/1.1 server that recorded each
  distinct request's response from moto once (during the warm-up) and replays it: same
  body, ``x-amz-crc32`` and ``x-amzn-RequestId``, ``Content-Type:
  application/x-amz-json-1.0``. The server costs almost nothing and the connection is
  reused, as with DynamoDB. After the warm-up it is frozen; the script checks that every
  timed call was a replay.
* ``tls``: the same replay server (a second one, recording alike) behind TLS, with a
  self-signed certificate made at start that every client trusts (``verify=``, or
  ``AWS_CA_BUNDLE`` for the default clients), as DynamoDB is HTTPS. TLS adds the same work
  to every contender's call, so its ratios sit nearer 1 than the replay endpoint's.

Then, per endpoint, the scatter-gather and projection rows (``bench/scatter_gather.py``): a
scatter Query over 8 shards x 25 orders through singletable against the same 8 Queries sent
one after another by the raw client and merged by hand, and a projected 100-item Query
against the full one; their figure is the process CPU time (the scatter's Queries run on pool
threads), with wall time beside it. The native-index rows (``bench/native_keys.py``;
``--no-native`` skips them): a 100-item Query on a native-key index beside the same Query on a
key-template index, raw and through singletable, client CPU (the thread's) with the native /
template ratio against 1.00 ± 0.05. And the write rows (``bench/writes.py``): PutItem,
UpdateItem in its keyword and instance forms, DeleteItem, a TransactWriteItems of 4
operations with a ``Unique()`` guard and a BatchWriteItem of 100 orders through singletable,
against the raw client sending the very same requests and the by-hand path (client CPU,
``--writes`` steps per round and operation, interleaved alike; ``--no-writes`` skips them).

Before and after timing, every contender's results are checked for equivalence on every
endpoint (the same entities, the same wire items, or for aiodynamo the same python values).
Also printed: import time (``bench/imports.py``) and decode/encode µs per item
(``bench/codec.py``'s contenders, a shorter run).

This is a benchmark, not a test: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib.metadata
import json
import os
import random
import shlex
import ssl
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import urllib3

import codec as codec_bench
import endpoints
import imports as imports_bench
import native_keys as native_bench
import scatter_gather as scatter_bench
import writes as writes_bench
from codec import Order, decode_by_hand, make_orders, shop
from contenders import (
    CUSTOMER,
    GET_KEYS,
    PARTITION_ITEMS,
    AsyncSide,
    Contender,
    Shop,
    make_contenders,
)
from endpoints import Endpoint, plain_client, use_dummy_credentials
from singletable.aws import fastpath

TIMES = "\u00d7"
OTHER_ITEMS = 400

#: Acceptance targets (client CPU as a multiple of the raw client): (op, contender) -> target.
#: A GetItem's saving comes from the whole client set-up (client_config(), the fast path and,
#: opt-in, the signer); the parser alone on a client of your own saves little on one item,
#: so that row has no target.
TARGETS: dict[tuple[str, str], tuple[float, float | None]] = {
    ("Query", "singletable, fast path"): (0.55, 0.45),
    ("Query", "singletable default client"): (0.55, 0.45),
    ("GetItem", "singletable default client"): (0.90, 0.60),
    ("Query", "singletable, fast path off"): (1.08, None),
    ("GetItem", "singletable, fast path off"): (1.05, None),
}


# -- clients, data, contenders ----------------------------------------------------------------


def seed_data(client: Any, seed: int) -> list[Order]:
    """Create the table and store the orders through ``client``; returns the partition's
    orders in sort-key order (as a Query returns them)."""
    shop.create(client)
    orders = make_orders(PARTITION_ITEMS + OTHER_ITEMS, seed)
    start = orders[0].created_at
    partition = [
        o.model_copy(update={"customer_id": CUSTOMER, "created_at": start + timedelta(hours=i)})
        for i, o in enumerate(orders[:PARTITION_ITEMS])
    ]
    others = [o for o in orders[PARTITION_ITEMS:] if o.customer_id != CUSTOMER]
    items = [o.to_item() for o in partition + others]
    for i in range(0, len(items), 25):
        batch = [{"PutRequest": {"Item": item}} for item in items[i : i + 25]]
        response = client.batch_write_item(RequestItems={shop.name: batch})
        assert not response.get("UnprocessedItems"), "moto left items unprocessed"
    return sorted(partition, key=lambda o: o.to_item()["SK"]["S"])


def default_repository(repo_cls: type[Any]) -> Any:
    """A repository on singletable's default client (``AWS_ENDPOINT_URL_DYNAMODB`` names the
    endpoint), the client created now rather than inside a timed call."""
    repo = repo_cls()
    repo.client  # noqa: B018
    return repo


def verify(contenders: dict[str, Contender], orders: list[Order], endpoint: str) -> None:
    """All contenders must return equivalent data: the same entities, or the same wire items
    (whose by-hand decoding gives those entities), or (aiodynamo) python dicts equal to the
    wire items through boto3's ``TypeDeserializer``, every attribute, keys and type tag
    included, which ``Order.model_validate`` turns into the same entities."""
    raw = contenders["raw boto3"]
    wire_items = raw.query()
    if [decode_by_hand(item) for item in wire_items] != orders:
        raise SystemExit(f"{endpoint}: the raw Query does not return the partition's orders")
    wire_gets = [raw.get(i) for i in range(GET_KEYS)]
    expected_gets = [decode_by_hand(item) for item in wire_gets]
    if expected_gets != orders[:: PARTITION_ITEMS // GET_KEYS][:GET_KEYS]:
        raise SystemExit(f"{endpoint}: the raw GetItems do not return the expected orders")
    for c in contenders.values():  # (the async rows return what the sync rows return)
        got_query = c.query()
        got_gets = [c.get(i) for i in range(GET_KEYS)]
        if c.python_values:
            # plain python dicts are checked by what they validate to: aiodynamo gives
            # Decimal numbers, pydynox's Rust decoder int/float
            if [Order.model_validate(d) for d in got_query] != orders or [
                Order.model_validate(d) for d in got_gets
            ] != expected_gets:
                raise SystemExit(f"{endpoint}: {c.name}'s dicts do not validate to the orders")
            continue
        if got_query != (orders if c.typed else wire_items):
            raise SystemExit(f"{endpoint}: {c.name}'s Query result differs")
        if got_gets != (expected_gets if c.typed else wire_gets):
            raise SystemExit(f"{endpoint}: {c.name}'s GetItem results differ")
        if c.typed and not all(type(o) is Order for o in [*got_query, *got_gets]):
            raise SystemExit(f"{endpoint}: {c.name} does not return Order entities")


# -- timing -----------------------------------------------------------------------------------

Samples = dict[tuple[str, str], list[list[tuple[int, int]]]]  # (op, name) -> rounds of (cpu, wall)


def run(
    contenders: dict[str, Contender],
    rounds: int,
    warmup: int,
    chunks: dict[str, int],
    rng: random.Random,
) -> Samples:
    """Per (operation, contender): one list of (cpu ns, wall ns) per call, per timed round.

    Interleaved call by call: per round and operation (in a shuffled order), each of the
    ``chunks[op]`` steps calls every contender once, in an order shuffled per step, so drift
    and the cache and allocator state left by the previous call fall on all contenders alike.
    """
    samples: Samples = {(op, name): [] for op in chunks for name in contenders}
    thread_time, perf_counter = time.thread_time_ns, time.perf_counter_ns
    process_time = time.process_time_ns
    names = list(contenders)
    counter = 0
    for rnd in range(warmup + rounds):
        ops = list(chunks)
        rng.shuffle(ops)
        for op in ops:
            calls: dict[str, list[tuple[int, int]]] = {name: [] for name in names}
            gc.collect()
            for _ in range(chunks[op]):
                counter += 1
                order = names[:]
                rng.shuffle(order)
                for name in order:
                    c = contenders[name]
                    if op == "GetItem":
                        if c.timed_get is not None:  # async: timed inside the event loop
                            calls[name].append(c.timed_get(counter))
                            continue
                        fn_get, cpu = c.get, process_time if c.process_cpu else thread_time
                        w0, c0 = perf_counter(), cpu()
                        fn_get(counter)  # the result is dropped inside the timed region
                        c1, w1 = cpu(), perf_counter()
                    else:
                        if c.timed_query is not None:
                            calls[name].append(c.timed_query())
                            continue
                        fn_query, cpu = c.query, process_time if c.process_cpu else thread_time
                        w0, c0 = perf_counter(), cpu()
                        fn_query()
                        c1, w1 = cpu(), perf_counter()
                    calls[name].append((c1 - c0, w1 - w0))
            if rnd >= warmup:
                for name in names:
                    samples[op, name].append(calls[name])
    return samples


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summarise(
    samples: Samples, baselines: dict[str, str] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """op -> contender -> figures (µs per call, ratios to the contender's baseline: the raw
    boto3 client unless ``baselines`` names another)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    baselines = baselines or {}
    for (op, name), rounds in samples.items():
        base = samples[op, baselines.get(name, "raw boto3")]
        cpu = [c / 1000 for calls in rounds for c, _ in calls]
        wall = [w / 1000 for calls in rounds for _, w in calls]
        cpu_ratios = [
            statistics.median(c for c, _ in mine) / statistics.median(c for c, _ in theirs)
            for mine, theirs in zip(rounds, base)
        ]
        wall_ratios = [
            statistics.median(w for _, w in mine) / statistics.median(w for _, w in theirs)
            for mine, theirs in zip(rounds, base)
        ]
        out.setdefault(op, {})[name] = {
            "calls": len(cpu),
            "cpu_median_us": statistics.median(cpu),
            "cpu_p90_us": percentile(cpu, 0.9),
            "cpu_ratio": statistics.median(cpu_ratios),
            "cpu_ratio_iqr": _iqr(cpu_ratios),
            "wall_median_us": statistics.median(wall),
            "wall_p90_us": percentile(wall, 0.9),
            "wall_ratio": statistics.median(wall_ratios),
        }
    return out


def _iqr(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def target_text(op: str, name: str, ratio: float) -> str:
    target = TARGETS.get((op, name))
    if target is None:
        return ""
    goal, stretch = target
    verdict = "PASS" if ratio <= goal else "FAIL"
    text = f"≤ {goal:.2f}: {verdict}"
    if stretch is not None:
        text += f" (stretch ≤ {stretch:.2f}: {'yes' if ratio <= stretch else 'no'})"
    return text


def report_endpoint(
    endpoint: str, summary: dict[str, dict[str, dict[str, float]]], contenders: dict[str, Contender]
) -> None:
    titles = {
        "GetItem": "GetItem (1 item)",
        "Query": f"Query (Limit={PARTITION_ITEMS}, {PARTITION_ITEMS} items, one partition)",
    }
    baselines = sorted({c.baseline for c in contenders.values()}, key=lambda b: b != "raw boto3")
    for op, all_rows in summary.items():
        for baseline in baselines:  # the sync rows, then the async twin's
            rows = {n: r for n, r in all_rows.items() if contenders[n].baseline == baseline}
            twin = "" if baseline == "raw boto3" else f"; async twin, ratios to {baseline}"
            calls = next(iter(rows.values()))["calls"]
            print(f"#### {endpoint}: {titles[op]}, {calls} timed calls per contender{twin}")
            print()
            print(
                f"| contender | median µs CPU/call | p90 µs CPU | {TIMES} raw (CPU) | IQR of "
                f"round ratios | target | median µs wall | p90 µs wall | {TIMES} raw (wall) |"
            )
            print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
            for name, row in rows.items():
                label = f"{name} (reference)" if contenders[name].reference else name
                q1, q3 = row["cpu_ratio_iqr"]
                print(
                    f"| {label} | {row['cpu_median_us']:,.0f} | {row['cpu_p90_us']:,.0f} | "
                    f"{row['cpu_ratio']:.2f} | {q1:.2f}-{q3:.2f} | "
                    f"{target_text(op, name, row['cpu_ratio'])} | "
                    f"{row['wall_median_us']:,.0f} | {row['wall_p90_us']:,.0f} | "
                    f"{row['wall_ratio']:.2f} |"
                )
            print()


# -- singletable's own share -------------------------------------------------------------------


class StubClient:
    """Answers with recorded parsed responses, so a repository's own work is timed alone."""

    def __init__(self, get_response: dict[str, Any], query_response: dict[str, Any]) -> None:
        self.get_response = get_response
        self.query_response = query_response

    def get_item(self, **params: Any) -> dict[str, Any]:
        return self.get_response

    def query(self, **params: Any) -> dict[str, Any]:
        return self.query_response


def own_costs(client: Any, orders: list[Order], reps: int, seed: int) -> dict[str, float]:
    """µs per call of singletable's own steps (stub client: no botocore, no HTTP), next to
    the by-hand decoding of the same items; interleaved, thread CPU time, medians."""
    from singletable._entity import spec_of

    key = {
        "customer_id": orders[0].customer_id,
        "created_at": orders[0].created_at,
        "order_id": orders[0].order_id,
    }
    shape = Shop(client=client)
    get_response = client.get_item(**shape.order.params(**key))
    query_response = client.query(**shape.orders.params(customer_id=CUSTOMER, limit=100))
    repo = Shop(client=StubClient(get_response, query_response))  # type: ignore[arg-type]
    spec = spec_of(Order)
    item, items = get_response["Item"], query_response["Items"]
    kw = {"customer_id": CUSTOMER, "limit": PARTITION_ITEMS}
    steps: dict[str, Callable[[], Any]] = {
        "GetItem: pattern call (params + executor + type check + from_item)": lambda: repo.order(
            **key
        ),
        "GetItem: .params() (key rendering)": lambda: repo.order.params(**key),
        "GetItem: spec.from_item (1 item)": lambda: spec.from_item(item),
        "GetItem: by-hand decode (1 item)": lambda: decode_by_hand(item),
        "Query: pattern call (compile + executor + run_page + from_item)": lambda: repo.orders(
            **kw
        ),
        "Query: .params() (compile)": lambda: repo.orders.params(**kw),
        "Query: spec.from_item (100 items)": lambda: [spec.from_item(i) for i in items],
        "Query: by-hand decode (100 items)": lambda: [decode_by_hand(i) for i in items],
    }
    inner = {name: (200 if name.startswith("GetItem") else 20) for name in steps}
    samples: dict[str, list[float]] = {name: [] for name in steps}
    rng = random.Random(seed)
    for rep in range(reps + 1):
        order = list(steps)
        rng.shuffle(order)
        for name in order:
            fn, n = steps[name], inner[name]
            gc.collect()
            start = time.thread_time_ns()
            for _ in range(n):
                fn()
            elapsed = (time.thread_time_ns() - start) / n / 1e3
            if rep:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def report_own(rows: dict[str, float]) -> None:
    print(
        "#### singletable's own work per call (stub client returning the recorded parsed "
        "response: no botocore, no HTTP; thread CPU, medians)"
    )
    print()
    print("| step | µs per call |")
    print("|---|---:|")
    for name, us in rows.items():
        print(f"| {name} | {us:,.1f} |")
    print()


# -- the rest of the report -------------------------------------------------------------------


def codec_figures(seed: int) -> dict[str, Any]:
    """bench/codec.py's four contenders, a shorter run (thread CPU time), µs per item."""
    orders = make_orders(1000, seed)
    items = [o.to_item() for o in orders]
    codec_bench.verify(orders[:50], items[:50])
    samples = codec_bench.run(orders, items, 7, 1, seed, time.thread_time_ns)
    return codec_bench.summarise(samples)


def report_codec(rows: dict[str, Any]) -> None:
    print("#### decode / encode of one Order (bench/codec.py contenders; 1000 items, 7 reps)")
    print()
    print(f"| contender | median µs/item | {TIMES} by-hand | GC off µs/item |")
    print("|---|---:|---:|---:|")
    for label, row in rows.items():
        print(
            f"| {label} | {row['median_us']:.2f} | {row['ratio_by_hand']:.2f} | "
            f"{row['gc_off_median_us']:.2f} |"
        )
    print()


def machine_info() -> dict[str, Any]:
    import moto

    info = codec_bench.machine_info(len(gc.get_objects()))
    info["moto"] = moto.__version__
    info["urllib3"] = urllib3.__version__
    info["openssl"] = ssl.OPENSSL_VERSION
    info["fast_path_env"] = os.environ.get(fastpath.ENV_VAR, "(unset)")
    for name in ("aiobotocore", "aiohttp", "aiodynamo"):
        try:
            info[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            info[name] = "not installed"
    return info


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--endpoints", default="moto,replay,tls", help="any of moto,replay,tls (default all)"
    )
    parser.add_argument("--rounds", type=int, default=20, help="timed rounds (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up rounds (default 2)")
    parser.add_argument("--gets", type=int, default=300, help="GetItems per contender (300)")
    parser.add_argument("--queries", type=int, default=100, help="Queries per contender (100)")
    parser.add_argument("--seed", type=int, default=7, help="data and order seed (default 7)")
    parser.add_argument("--import-runs", type=int, default=10, help="0 skips import time")
    parser.add_argument("--no-codec", action="store_true", help="skip decode/encode µs/item")
    parser.add_argument("--own-reps", type=int, default=15, help="0 skips the stub-client table")
    parser.add_argument(
        "--no-async", action="store_true", help="skip the async rows (aiobotocore, aiodynamo)"
    )
    parser.add_argument("--scatters", type=int, default=40, help="scatter reads per contender (40)")
    parser.add_argument(
        "--projected", type=int, default=100, help="projection-row Queries per contender (100)"
    )
    parser.add_argument(
        "--no-scatter", action="store_true", help="skip the scatter and projection rows"
    )
    parser.add_argument(
        "--natives", type=int, default=100, help="native-index row Queries per contender (100)"
    )
    parser.add_argument("--no-native", action="store_true", help="skip the native-index rows")
    parser.add_argument(
        "--writes", type=int, default=4, help="write steps per round and operation (4)"
    )
    parser.add_argument("--no-writes", action="store_true", help="skip the write rows")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    args.endpoints = [e.strip() for e in args.endpoints.split(",") if e.strip()]
    if not set(args.endpoints) <= set(endpoints.NAMES) or not args.endpoints:
        parser.error(f"--endpoints takes any of {','.join(endpoints.NAMES)}")
    if args.rounds < 2 or args.gets < args.rounds or args.queries < args.rounds:
        parser.error("--rounds must be ≥ 2 and ≤ --gets and --queries")
    args.chunks = {"GetItem": args.gets // args.rounds, "Query": args.queries // args.rounds}
    args.native_steps = max(1, args.natives // args.rounds)
    args.scatter_steps = {
        "Scatter": max(1, args.scatters // args.rounds),
        "Projection": max(1, args.projected // args.rounds),
    }
    return args


def print_header(args: argparse.Namespace, info: dict[str, Any]) -> None:
    command = shlex.join(["python", "bench/e2e.py", *sys.argv[1:]])
    print(f"command: `{command}`")
    print(
        f"machine: {info['platform']}, {info['cpus']} CPUs, Python {info['python']}; "
        f"boto3 {info['boto3']}, botocore {info['botocore']}, urllib3 {info['urllib3']}, "
        f"pydantic {info['pydantic']}, pydantic-core {info['pydantic-core']}, moto "
        f"{info['moto']}, aiobotocore {info['aiobotocore']} (aiohttp {info['aiohttp']}), "
        f"aiodynamo {info['aiodynamo']}, {info['openssl']}, singletable {info['singletable']}; "
        f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"method: per endpoint {args.warmup} warm-up + {args.rounds} timed rounds; per round "
        f"and operation, {args.chunks['GetItem']} GetItem or {args.chunks['Query']} Query "
        "steps, each calling every contender once in a seeded shuffled order; client CPU = "
        "time.thread_time_ns around each call (async: around the await, inside the event "
        "loop); results dropped inside the timed region; "
        f"ratios = medians of per-round ratios of per-round medians; seed {args.seed}"
    )
    print()


def bench_endpoint(
    endpoint: Endpoint,
    orders: list[Order],
    pending_ids: list[str] | None,
    native_ids: list[str] | None,
    side: AsyncSide | None,
    args: argparse.Namespace,
    rng: random.Random,
    upstream: Any,
) -> dict[str, Any]:
    """One endpoint's rows: verify (on a replay server, which records), freeze, time, verify
    again, check every timed call was a replay, report; returns the summaries. ``upstream``
    is a client of the moto server, where the write rows' untimed restores go."""
    name = endpoint.name
    write_rows = None
    if not args.no_writes:  # first: their default clients read AWS_ENDPOINT_URL_DYNAMODB too
        write_rows, work, _ = writes_bench.make_rows(endpoint, upstream, args.seed)
        writes_bench.verify(write_rows, work, name)
    contenders = make_contenders(endpoint, orders, side)
    verify(contenders, orders, name)
    extra = []
    if pending_ids is not None:
        client = functools.partial(plain_client, verify=endpoint.certfile)
        extra = scatter_bench.make_rows(endpoint.url, CUSTOMER, client, default_repository)
        scatter_bench.verify(extra, pending_ids, orders, name)
    native_rows = []
    if native_ids is not None:
        client = functools.partial(plain_client, verify=endpoint.certfile)
        native_rows = native_bench.make_rows(endpoint.url, client, default_repository)
        native_bench.verify(native_rows, native_ids, name)
    if endpoint.replay:
        endpoint.replay_freeze()
        before = endpoint.replay_stats()
    samples = run(contenders, args.rounds, args.warmup, args.chunks, rng)
    verify(contenders, orders, name)
    extra_samples = scatter_bench.run(extra, args.rounds, args.warmup, args.scatter_steps, rng)
    native_samples = native_bench.run(native_rows, args.rounds, args.warmup, args.native_steps, rng)
    write_samples = None
    if write_rows is not None:
        write_samples = writes_bench.run(
            write_rows,
            work,
            args.rounds,
            args.warmup,
            args.writes,
            rng,
            restore=not endpoint.replay,
        )
    if pending_ids is not None:
        scatter_bench.verify(extra, pending_ids, orders, name)
    if native_ids is not None:
        native_bench.verify(native_rows, native_ids, name)
    label = endpoint.label
    if endpoint.replay:
        after = endpoint.replay_stats()
        if after["unknown"] or after["recorded"] != before["recorded"]:
            raise SystemExit(f"{name}: not every timed call was a replay {after}")
        label += f", {after['replayed']:,} responses replayed"
    print(f"### endpoint: {label}")
    print()
    summary = summarise(samples, {n: c.baseline for n, c in contenders.items()})
    report_endpoint(name, summary, contenders)
    out: dict[str, Any] = {"rows": summary}
    if extra:
        out["scatter"] = scatter_bench.summarise(extra, extra_samples)
        scatter_bench.report(name, out["scatter"])
    if native_rows:
        out["native"] = native_bench.summarise(native_samples)
        native_bench.report(name, out["native"])
    if write_rows is not None and write_samples is not None:
        out["writes"] = writes_bench.summarise(write_rows, write_samples)
        writes_bench.report(name, out["writes"])
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    use_dummy_credentials()
    info = machine_info()
    print_header(args, info)
    rng = random.Random(args.seed)
    results: dict[str, Any] = {"command": sys.argv, "machine": info, "endpoints": {}}
    # First, while the process is as fresh as bench/codec.py's: after the endpoint runs its
    # heap holds their clients and samples, and singletable's decode measured there read
    # 0.42-0.45x by-hand instead of 0.35-0.39x (by-hand's own time barely moved).
    codec_rows = None if args.no_codec else codec_figures(args.seed)
    with endpoints.moto_server() as moto_url:
        moto_client = plain_client(moto_url)
        orders = seed_data(moto_client, args.seed)
        pending_ids = None if args.no_scatter else scatter_bench.seed(moto_client, args.seed)
        native_ids = None if args.no_native else native_bench.seed(moto_client, args.seed)
        with contextlib.ExitStack() as stack:
            started = endpoints.start(args.endpoints, moto_url, stack)
            for endpoint in (started[n] for n in args.endpoints if n in started):
                side = None if args.no_async else AsyncSide()
                if side is not None:
                    stack.callback(side.close)
                found = bench_endpoint(
                    endpoint, orders, pending_ids, native_ids, side, args, rng, moto_client
                )
                results["endpoints"][endpoint.name] = found["rows"]
                for part in ("scatter", "native", "writes"):
                    if part in found:
                        results.setdefault(part, {})[endpoint.name] = found[part]
        if args.own_reps > 0:
            own = own_costs(moto_client, orders, args.own_reps, args.seed)
            report_own(own)
            results["own"] = own
    if codec_rows is not None:
        report_codec(codec_rows)
        results["codec"] = codec_rows
    if args.import_runs > 0:
        data = imports_bench.measure(args.import_runs, args.seed)
        summary_imports = imports_bench.summarise(data)
        print("#### " + imports_bench.report(summary_imports, args.import_runs, top=10))
        results["imports"] = summary_imports
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
