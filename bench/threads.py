"""Threads: GetItem and Query(100) items/s with 1-8 threads sharing one client or repository.

Run from the repository root (moto's server must be installed: ``pip install -e '.[dev]'``)::

    python bench/threads.py [--endpoints moto,replay,tls] [--threads 1,2,4,8] [--rounds 8]
                            [--warmup 1] [--cell-seconds 0.4] [--calls N] [--seed 7]
                            [--json out.json]

A backend service shares one repository across its request threads. This measures what N
threads calling through one shared object get out of it, per contender:

* ``raw boto3``: one low-level client shared by the threads; items stay wire dicts.
* ``singletable``: one repository on singletable's default client (``Shop()`` with
  ``AWS_ENDPOINT_URL_DYNAMODB`` set; the client created before timing), shared by the
  threads, each call going through it (``repo.order(...)``, ``repo.orders(...).items``).
* ``singletable direct``: the same with ``SINGLETABLE_TRANSPORT=direct`` (the default client's
  direct transport: singletable sends the requests over the client's urllib3 pool).
* ``by-hand``: one raw client shared by the threads, then ``bench/codec.py``'s
  ``decode_by_hand`` (a ``TypeDeserializer`` per attribute, ``Order.model_validate``).

Operations: GetItem (the threads' calls rotate over 10 orders of one partition) and a Query
reading that whole partition (100 orders; ``Limit=100``, a pattern sends ``Limit=101``). Data
and requests are ``bench/e2e.py``'s.

Method. A *cell* is one (operation, contender, thread count): the threads start together (a
barrier) and share a fixed number of calls equally; the cell's figures are its wall time, the
process CPU time (``time.process_time_ns``: every thread of this process) and the endpoint
server's CPU time (``/proc/<pid>/stat``), all around the whole cell. Every contender runs
alone in its cell. The calls per cell are fixed per endpoint and operation (``--calls``, or
by default what takes the raw client ``--cell-seconds`` on one thread, measured once before
the rounds), a multiple of the largest thread count, the same for every contender and thread
count. Each round runs every cell once, in an order shuffled with a seeded RNG, so drift and
load from other processes fall on all cells; the first ``--warmup`` rounds are discarded.
Figures are medians over rounds: items/s (wall), the scaling factor (items/s over the same
contender's 1-thread items/s in the same round), CPU µs per item (this process), the
contender's items/s as a ratio of the raw client's at the same thread count in the same round
(IQR over rounds), and the cores the client process and the server used (CPU time / wall).

Before and after timing every contender's results are checked: single-threaded against the
partition's orders (``bench/e2e.py``'s ``verify``), then with the largest thread count, where
every thread's every result must equal the single-threaded one. urllib3's and botocore's
warnings (``Connection pool is full`` among them; botocore's pool holds 10 connections) are
counted and printed.

Endpoints (``bench/endpoints.py``), each server in its own process on 127.0.0.1:

* ``moto``: ``python -m moto.server`` (Werkzeug's ``run_simple(threaded=True)``: a thread per
  request, in one process, so one GIL). It closes the connection after every response.
* ``replay``: ``bench/replay_server.py`` (a thread per connection, one process; HTTP/1.1
  keep-alive), frozen after the checks; the script checks that every timed call was a replay.
* ``tls`` (not in the default run): the same replay server behind TLS.

This is a benchmark, not a test: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import math
import os
import random
import shlex
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import endpoints
from codec import Order, decode_by_hand
from contenders import Contender
from e2e import (
    CUSTOMER,
    GET_KEYS,
    PARTITION_ITEMS,
    Shop,
    default_repository,
    machine_info,
    seed_data,
    use_dummy_credentials,
)
from e2e import verify as verify_single
from endpoints import Endpoint, plain_client

TIMES = "\u00d7"
RAW = "raw boto3"
CONTENDERS = (RAW, "singletable", "singletable direct", "by-hand")  # the tables' column order
ITEMS_PER_CALL = {"GetItem": 1, "Query": PARTITION_ITEMS}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CORES = ("client_cores", "server_cores", "machine_cores")


# -- contenders -------------------------------------------------------------------------------


def make_contenders(endpoint: Endpoint, orders: list[Order]) -> dict[str, Contender]:
    """The four contenders against ``endpoint``: each owns one client (or one repository)
    that all its threads share."""
    keys = [
        {"customer_id": o.customer_id, "created_at": o.created_at, "order_id": o.order_id}
        for o in orders[:: PARTITION_ITEMS // GET_KEYS]
    ][:GET_KEYS]
    # The raw clients send the request a pattern sends, with Limit=100 instead of 101.
    shape = Shop(client=endpoint.client())
    get_params = [shape.order.params(**k) for k in keys]
    query_params = shape.orders.params(customer_id=CUSTOMER, limit=PARTITION_ITEMS)
    query_params["Limit"] = PARTITION_ITEMS

    raw_client = endpoint.client()
    hand_client = endpoint.client()
    endpoint.use_as_default()
    repo = default_repository(Shop)
    os.environ["SINGLETABLE_TRANSPORT"] = "direct"
    try:
        direct = default_repository(Shop)
    finally:
        del os.environ["SINGLETABLE_TRANSPORT"]

    def hand_get(i: int) -> Order | None:
        item = hand_client.get_item(**get_params[i % GET_KEYS]).get("Item")
        return None if item is None else decode_by_hand(item)

    return {
        RAW: Contender(
            RAW,
            lambda i: raw_client.get_item(**get_params[i % GET_KEYS]).get("Item"),
            lambda: raw_client.query(**query_params)["Items"],
            typed=False,
        ),
        # Through the shared repository on every call, as a request handler would.
        "singletable": Contender(
            "singletable",
            lambda i: repo.order(**keys[i % GET_KEYS]),
            lambda: repo.orders(customer_id=CUSTOMER, limit=PARTITION_ITEMS).items,
            typed=True,
        ),
        "singletable direct": Contender(
            "singletable direct",
            lambda i: direct.order(**keys[i % GET_KEYS]),
            lambda: direct.orders(customer_id=CUSTOMER, limit=PARTITION_ITEMS).items,
            typed=True,
        ),
        "by-hand": Contender(
            "by-hand",
            hand_get,
            lambda: [decode_by_hand(i) for i in hand_client.query(**query_params)["Items"]],
            typed=True,
        ),
    }


def operation(contender: Contender, op: str) -> Callable[[int], Any]:
    """``i -> result`` of one call of ``op`` (the i-th GetItem key; a Query ignores ``i``)."""
    if op == "GetItem":
        return contender.get
    query = contender.query
    return lambda i: query()


def in_threads(threads: int, work: Callable[[int], None]) -> tuple[int, int]:
    """Run ``work(thread_index)`` on ``threads`` new threads released together; returns
    (wall ns, process CPU ns) from the release to the last thread's end. Thread start-up is
    outside the measurement; the first error of any thread is raised."""
    barrier = threading.Barrier(threads + 1)
    errors: list[BaseException] = []

    def body(index: int) -> None:
        barrier.wait()
        try:
            work(index)
        except BaseException as exc:  # re-raised in the calling thread
            errors.append(exc)

    workers = [threading.Thread(target=body, args=(t,), daemon=True) for t in range(threads)]
    for worker in workers:
        worker.start()
    c0, w0 = time.process_time_ns(), time.perf_counter_ns()
    barrier.wait()
    for worker in workers:
        worker.join()
    w1, c1 = time.perf_counter_ns(), time.process_time_ns()
    if errors:
        raise errors[0]
    return w1 - w0, c1 - c0


def verify_threads(
    contenders: dict[str, Contender], orders: list[Order], threads: int, endpoint: str
) -> None:
    """With ``threads`` threads at once, every GetItem and Query result of every contender
    equals its single-threaded result (entities, or wire items for the raw client)."""
    raw = contenders[RAW]
    wire = (raw.query(), [raw.get(i) for i in range(GET_KEYS)])
    typed = (orders, orders[:: PARTITION_ITEMS // GET_KEYS][:GET_KEYS])
    for c in contenders.values():
        wrong = wrong_in_threads(c, *(typed if c.typed else wire), threads)
        if wrong:
            raise SystemExit(f"{endpoint}: {c.name} with {threads} threads: {wrong[:5]} differ")


def wrong_in_threads(
    c: Contender, want_query: Any, want_gets: list[Any], threads: int
) -> list[str]:
    """The calls whose result differed, each thread making every GetItem and two Queries."""
    wrong: list[str] = []

    def work(index: int) -> None:
        for k in range(GET_KEYS):
            i = (index + k) % GET_KEYS
            if c.get(i) != want_gets[i]:
                wrong.append(f"GetItem {i} on thread {index}")
        for _ in range(2):
            if c.query() != want_query:
                wrong.append(f"Query on thread {index}")

    in_threads(threads, work)
    return wrong


# -- measurement ------------------------------------------------------------------------------


class WarningCounter(logging.Handler):
    """Counts the WARNING (and worse) records of urllib3 and botocore while installed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")

    @property
    def pool_full(self) -> int:
        return sum("Connection pool is full" in r for r in self.records)


@contextlib.contextmanager
def counting_warnings() -> Iterator[WarningCounter]:
    counter = WarningCounter()
    loggers = [logging.getLogger(name) for name in ("urllib3", "botocore")]
    for logger in loggers:
        logger.addHandler(counter)
    try:
        yield counter
    finally:
        for logger in loggers:
            logger.removeHandler(counter)


def server_pid(endpoint: Endpoint) -> int | None:
    """The pid of the server process behind ``endpoint`` (a child of this process)."""
    if endpoint.name == "moto":
        return child_pid(lambda cmd: "moto.server" in cmd)
    tls = endpoint.certfile is not None
    return child_pid(lambda cmd: "replay_server.py" in cmd and ("--certfile" in cmd) == tls)


def child_pid(matches: Callable[[str], bool]) -> int | None:
    """The pid of this process's child whose command line ``matches``."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state
        if ppid == me and matches(cmdline):
            return int(entry.name)
    return None


def process_cpu_ns(pid: int | None) -> int:
    """User + system CPU of ``pid``, all its threads (``/proc/<pid>/stat``; clock-tick
    resolution); 0 without a pid."""
    if pid is None:
        return 0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks * 1_000_000_000 // CLOCK_TICKS


def machine_busy_ns() -> int:
    """CPU time all CPUs of the machine spent busy, every process's (``/proc/stat``: user,
    nice, system, irq and softirq; clock-tick resolution)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    busy = sum(fields[:7]) - fields[3] - fields[4]  # user .. softirq, less idle and iowait
    return busy * 1_000_000_000 // CLOCK_TICKS


@dataclass
class Cell:
    """One timed run: ``calls`` calls of ``op`` by ``contender`` on ``threads`` threads."""

    op: str
    contender: str
    threads: int
    calls: int
    wall_ns: int = 0
    cpu_ns: int = 0
    server_ns: int = 0
    machine_ns: int = 0
    items: int = field(init=False)

    def __post_init__(self) -> None:
        self.items = self.calls * ITEMS_PER_CALL[self.op]


def run_cell(fn: Callable[[int], Any], cell: Cell, server_pid: int | None) -> None:
    per_thread = cell.calls // cell.threads
    threads = cell.threads

    def work(index: int) -> None:
        for k in range(per_thread):
            fn(index + k * threads)  # the result is dropped at once

    gc.collect()
    s0, m0 = process_cpu_ns(server_pid), machine_busy_ns()
    cell.wall_ns, cell.cpu_ns = in_threads(threads, work)
    cell.server_ns = process_cpu_ns(server_pid) - s0
    cell.machine_ns = machine_busy_ns() - m0


def calibrate(
    contenders: dict[str, Contender], ops: list[str], seconds: float, multiple: int
) -> dict[str, int]:
    """Calls per cell for each operation: what the raw client does in ``seconds`` on one
    thread, rounded up to a multiple of ``multiple`` (at least one per thread)."""
    calls = {}
    for op in ops:
        fn = operation(contenders[RAW], op)
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < min(seconds, 0.5) or n < 3:
            fn(n)
            n += 1
        per_call = (time.perf_counter() - start) / n
        calls[op] = max(1, math.ceil(seconds / per_call / multiple)) * multiple
    return calls


def run_rounds(
    contenders: dict[str, Contender],
    calls: dict[str, int],
    thread_counts: list[int],
    rounds: int,
    warmup: int,
    rng: random.Random,
    server_pid: int | None,
) -> list[list[Cell]]:
    """Per timed round, its cells (all of (op, contender, threads), in a shuffled order)."""
    plan = [(op, name, n) for op in calls for name in contenders for n in thread_counts]
    timed: list[list[Cell]] = []
    for rnd in range(warmup + rounds):
        order = plan[:]
        rng.shuffle(order)
        cells = []
        for op, name, n in order:
            cell = Cell(op, name, n, calls[op])
            run_cell(operation(contenders[name], op), cell, server_pid)
            cells.append(cell)
        if rnd >= warmup:
            timed.append(cells)
    return timed


# -- figures ----------------------------------------------------------------------------------


def _iqr(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def summarise(timed: list[list[Cell]]) -> dict[str, dict[str, dict[int, dict[str, Any]]]]:
    """op -> contender -> threads -> medians over rounds (and the ratio's IQR)."""
    by_round = [{(c.op, c.contender, c.threads): c for c in cells} for cells in timed]
    fewest = min(t for _, _, t in by_round[0])
    out: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
    for op, name, n in sorted(by_round[0], key=lambda k: (k[0], CONTENDERS.index(k[1]), k[2])):
        cells = [r[op, name, n] for r in by_round]
        rates = [c.items / (c.wall_ns / 1e9) for c in cells]
        base = [r[op, name, fewest].items / (r[op, name, fewest].wall_ns / 1e9) for r in by_round]
        raw = [r[op, RAW, n].items / (r[op, RAW, n].wall_ns / 1e9) for r in by_round]
        to_raw = [mine / theirs for mine, theirs in zip(rates, raw)]
        out.setdefault(op, {}).setdefault(name, {})[n] = {
            "calls": cells[0].calls,
            "items_per_s": statistics.median(rates),
            "scaling": statistics.median(mine / first for mine, first in zip(rates, base)),
            "cpu_us_per_item": statistics.median(c.cpu_ns / c.items / 1e3 for c in cells),
            "client_cores": statistics.median(c.cpu_ns / c.wall_ns for c in cells),
            "server_cores": statistics.median(c.server_ns / c.wall_ns for c in cells),
            "machine_cores": statistics.median(c.machine_ns / c.wall_ns for c in cells),
            "ratio_to_raw": statistics.median(to_raw),
            "ratio_to_raw_iqr": _iqr(to_raw),
            "rounds": [
                {k: getattr(c, k) for k in ("wall_ns", "cpu_ns", "server_ns", "machine_ns")}
                for c in cells
            ],
        }
    return out


def report(label: str, summary: dict[str, Any], cpus: int | None) -> None:
    titles = {
        "GetItem": "GetItem (1 item per call)",
        "Query": f"Query (Limit={PARTITION_ITEMS}, {PARTITION_ITEMS} items per call)",
    }
    for op, rows in summary.items():
        names = list(rows)
        counts = list(rows[RAW])
        calls = rows[RAW][counts[0]]["calls"]
        print(f"#### {label}: {titles[op]}, {calls} calls per cell")
        print()
        head = ["threads"]
        for name in names:
            head += [f"{name} items/s", f"{TIMES}{counts[0]} thread", "CPU µs/item"]
            if name != RAW:
                head.append(f"{TIMES} raw items/s (IQR)")
        print("| " + " | ".join(head) + " |")
        print("|" + "---:|" * len(head))
        for n in counts:
            cols = [str(n)]
            for name in names:
                row = rows[name][n]
                cols += [
                    f"{row['items_per_s']:,.0f}",
                    f"{row['scaling']:.2f}",
                    f"{row['cpu_us_per_item']:,.1f}",
                ]
                if name != RAW:
                    q1, q3 = row["ratio_to_raw_iqr"]
                    cols.append(f"{row['ratio_to_raw']:.2f} ({q1:.2f}-{q3:.2f})")
            print("| " + " | ".join(cols) + " |")
        print()
    print(
        f"#### {label}: cores used (CPU time / wall; this machine has {cpus}), "
        "client process / server process / whole machine (every process)"
    )
    print()
    first = next(iter(summary.values()))
    names = list(first)
    print("| operation | threads | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for op, rows in summary.items():
        for n in rows[RAW]:
            cols = [" / ".join(f"{rows[name][n][k]:.2f}" for k in CORES) for name in names]
            print(f"| {op} | {n} | " + " | ".join(cols) + " |")
    print()


# -- main -------------------------------------------------------------------------------------


def measure_endpoint(
    endpoint: Endpoint,
    orders: list[Order],
    args: argparse.Namespace,
    rng: random.Random,
    thread_counts: list[int],
) -> tuple[dict[str, Any], dict[str, int], str]:
    """Check, (on a replay server: freeze), size the cells, time the rounds, check again;
    returns the summary, the calls per cell and the report's heading."""
    name = endpoint.name
    contenders = make_contenders(endpoint, orders)
    top = max(thread_counts)
    verify_single(contenders, orders, name)  # on a replay server this records
    verify_threads(contenders, orders, top, name)
    server = server_pid(endpoint)
    if endpoint.replay:
        endpoint.replay_freeze()
        before = endpoint.replay_stats()
    multiple = math.lcm(*thread_counts)
    if args.calls:
        calls = dict.fromkeys(ITEMS_PER_CALL, math.ceil(args.calls / multiple) * multiple)
    else:
        calls = calibrate(contenders, list(ITEMS_PER_CALL), args.cell_seconds, multiple)
    timed = run_rounds(contenders, calls, thread_counts, args.rounds, args.warmup, rng, server)
    verify_single(contenders, orders, name)
    verify_threads(contenders, orders, top, name)
    label = endpoint.label
    if endpoint.replay:
        after = endpoint.replay_stats()
        if after["unknown"] or after["recorded"] != before["recorded"]:
            raise SystemExit(f"{name}: not every timed call was a replay {after}")
        label += f", {after['replayed']:,} responses replayed"
    return summarise(timed), calls, label


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--endpoints", default="moto,replay", help="any of moto,replay,tls (default moto,replay)"
    )
    parser.add_argument("--threads", default="1,2,4,8", help="thread counts (default 1,2,4,8)")
    parser.add_argument("--rounds", type=int, default=8, help="timed rounds (default 8)")
    parser.add_argument("--warmup", type=int, default=1, help="discarded rounds (default 1)")
    parser.add_argument(
        "--cell-seconds",
        type=float,
        default=0.4,
        help="size cells so the raw client takes this long on one thread (default 0.4)",
    )
    parser.add_argument("--calls", type=int, help="fixed calls per cell instead (all cells)")
    parser.add_argument("--seed", type=int, default=7, help="data and order seed (default 7)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    names = [e.strip() for e in args.endpoints.split(",") if e.strip()]
    if not names or not set(names) <= set(endpoints.NAMES):
        parser.error(f"--endpoints takes any of {','.join(endpoints.NAMES)}")
    try:
        thread_counts = sorted({int(t) for t in args.threads.split(",") if t.strip()})
    except ValueError:
        parser.error("--threads takes comma-separated integers")
    if not thread_counts or thread_counts[0] < 1 or args.rounds < 2:
        parser.error("--threads must be ≥ 1 and --rounds ≥ 2")

    use_dummy_credentials()
    info = machine_info()
    command = shlex.join(["python", "bench/threads.py", *sys.argv[1:]])
    print(f"command: `{command}`")
    print(
        f"machine: {info['platform']}, {info['cpus']} CPUs, Python {info['python']} "
        f"(GIL: {'on' if getattr(sys, '_is_gil_enabled', lambda: True)() else 'off'}); "
        f"boto3 {info['boto3']}, botocore {info['botocore']}, urllib3 {info['urllib3']}, "
        f"pydantic {info['pydantic']}, moto {info['moto']}, singletable {info['singletable']}; "
        f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"method: per endpoint {args.warmup} warm-up + {args.rounds} timed rounds; a cell = one "
        "(operation, contender, thread count), its threads released together and sharing a "
        "fixed number of calls; each round runs every cell once in a seeded shuffled order; "
        "items/s = items / cell wall time; CPU = time.process_time_ns over the cell (all "
        "threads); server cores = server process CPU (/proc) / wall; figures are medians over "
        f"rounds, ratios medians of per-round ratios; seed {args.seed}"
    )
    print()
    rng = random.Random(args.seed)
    results: dict[str, Any] = {"command": sys.argv, "machine": info, "endpoints": {}}
    with counting_warnings() as warnings_seen, endpoints.moto_server() as moto_url:
        orders = seed_data(plain_client(moto_url), args.seed)
        with contextlib.ExitStack() as stack:
            started = endpoints.start(names, moto_url, stack)
            for endpoint in (started[n] for n in names if n in started):
                summary, calls, label = measure_endpoint(endpoint, orders, args, rng, thread_counts)
                report(label, summary, info["cpus"])
                results["endpoints"][endpoint.name] = {"calls": calls, "summary": summary}
    print(
        f"urllib3/botocore warnings during the run: {len(warnings_seen.records)} "
        f"('Connection pool is full': {warnings_seen.pool_full}); load average at the end "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for record in warnings_seen.records[:5]:
        print(f"  {record}")
    results["warnings"] = warnings_seen.records
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
