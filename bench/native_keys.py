"""Native-index rows of ``bench/e2e.py``: a 100-item Query on a native-key index beside the same
Query on a key-template index (same run, same endpoints; also runnable alone).

One table, ``bench-native``, holds 100 orders of one customer and 400 of others
(``bench/codec.py``'s ``Order`` fields, 14 wire attributes plus the index keys). Each order is in
two global secondary indexes that list a customer's orders in the same order:

* ``ByCustomer``, key templates: ``GSI1PK = CUSTOMER#{customer_id}``,
  ``GSI1SK = ORDER#{created_at}#{order_id}`` (two derived string attributes), read with
  ``GSI1PK = :pk AND begins_with(GSI1SK, :sk)``;
* ``ByCustomerNative``, native keys: ``pk=("customer_id",)``, ``sk=("created_at", "order_id")``
  (the order's own attributes, a multi-attribute sort key), read with ``customer_id = :k0``.

Both Queries return the same 100 items (every attribute, both indexes' keys included), so the
response is the same work for every client; what differs is the request: singletable renders a
key template and a ``begins_with`` prefix for one, typed attribute values for the other.
Contenders, each reading the whole partition: the raw boto3 client sending the pattern's own
request (``Limit=100``; wire dicts out), singletable's default client and singletable on a plain
client, each on both indexes. The figure is the **client CPU** (``time.thread_time_ns``) around
each call, wall time beside it; calls interleaved in a seeded shuffled order per step, as the
main rows. The headline is, per contender, the native Query's CPU over the template Query's
(the median of per-round ratios of per-round medians), against a target of 1.00 ± 0.05.

Run alone: ``python bench/native_keys.py [--endpoints replay,moto] [--rounds 20] [--steps 5]``.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from codec import Address, Status, make_orders
from scatter_gather import Row, Samples, _ratio
from scatter_gather import run as run_rows
from singletable import GSI, Entity, Repository, Table, query

PARTITION_ITEMS = 100
OTHERS = 400
CUSTOMER = "C777777"
OP = "Native"
TOLERANCE = 0.05  # the native Query's CPU within ±5 % of the template Query's
TIMES = "\u00d7"

native = Table(
    "bench-native",
    indexes=[
        GSI("ByCustomer", pk="GSI1PK", sk="GSI1SK"),
        GSI("ByCustomerNative", pk=("customer_id",), sk=("created_at", "order_id")),
    ],
)


class NativeOrder(Entity, table=native, type="ORDER"):
    """``Order``'s fields, in a template index and a native one."""

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
        ByCustomer = ("CUSTOMER#{customer_id}", "ORDER#{created_at}#{order_id}")


class NativeShop(Repository, table=native):
    by_template = query(NativeOrder, index="ByCustomer")
    by_native = query(NativeOrder, index="ByCustomerNative")


#: (index kind, contender) of each row; the row's name is "<contender>: <kind>-index Query".
KINDS = ("template", "native")
CONTENDERS = ("raw boto3", "singletable default client", "singletable, plain client")


def row_name(contender: str, kind: str) -> str:
    return f"{contender}: {kind}-index Query"


def seed(client: Any, seed: int) -> list[str]:
    """Create the table and store the orders (as ``to_item`` writes them); returns the
    customer's order ids in index order (created_at, then order_id)."""
    native.create(client)
    orders = make_orders(PARTITION_ITEMS + OTHERS, seed + 2)
    start = orders[0].created_at
    mine = [
        NativeOrder(
            **{**o.model_dump(), "customer_id": CUSTOMER, "created_at": start + timedelta(hours=i)}
        )
        for i, o in enumerate(orders[:PARTITION_ITEMS])
    ]
    others = [
        NativeOrder(**o.model_dump()) for o in orders[PARTITION_ITEMS:] if o.customer_id != CUSTOMER
    ]
    items = [o.to_item() for o in mine + others]
    for i in range(0, len(items), 25):
        batch = [{"PutRequest": {"Item": item}} for item in items[i : i + 25]]
        response = client.batch_write_item(RequestItems={native.name: batch})
        assert not response.get("UnprocessedItems"), "moto left items unprocessed"
    ordered = sorted(mine, key=lambda o: (o.to_item()["created_at"]["S"], o.order_id))
    return [o.order_id for o in ordered]


def make_rows(
    url: str, plain_client: Callable[[str], Any], default_repo: Callable[[type[Any]], Any]
) -> list[Row]:
    """The six contenders against ``url``: ``plain_client(url)`` makes a boto3 client,
    ``default_repo(RepoClass)`` a repository on singletable's default client."""
    shape = NativeShop(client=plain_client(url))
    params = {
        "template": shape.by_template.params(customer_id=CUSTOMER, limit=PARTITION_ITEMS),
        "native": shape.by_native.params(customer_id=CUSTOMER, limit=PARTITION_ITEMS),
    }
    for request in params.values():
        request["Limit"] = PARTITION_ITEMS  # the pattern asks for one more, to see the end
    raw_client = plain_client(url)
    repos = {
        "singletable default client": default_repo(NativeShop),
        "singletable, plain client": NativeShop(client=plain_client(url)),
    }

    def raw(kind: str) -> Callable[[], Any]:
        request = params[kind]
        return lambda: raw_client.query(**request)["Items"]

    def pattern(repo: NativeShop, kind: str) -> Callable[[], Any]:
        bound = repo.by_template if kind == "template" else repo.by_native
        return lambda: bound(customer_id=CUSTOMER, limit=PARTITION_ITEMS).items

    rows = [Row(OP, row_name("raw boto3", kind), raw(kind)) for kind in KINDS]
    rows += [
        Row(OP, row_name(contender, kind), pattern(repo, kind))
        for contender, repo in repos.items()
        for kind in KINDS
    ]
    return rows


def verify(rows: list[Row], order_ids: list[str], endpoint: str) -> None:
    """Every row reads the customer's 100 orders, in index order; the raw rows the same wire
    items from both indexes (on the replay endpoint this also records)."""
    wire: dict[str, Any] = {}
    for row in rows:
        got = row.call()
        if row.name.startswith("raw boto3"):
            ids = [item["order_id"]["S"] for item in got]
            wire[row.name] = got
        else:
            ids = [o.order_id for o in got]
            if not all(type(o) is NativeOrder for o in got):
                raise SystemExit(f"{endpoint}: {row.name} does not return NativeOrder entities")
        if ids != order_ids:
            raise SystemExit(f"{endpoint}: {row.name} does not return the customer's orders")
    template, native_items = (wire[row_name("raw boto3", kind)] for kind in KINDS)
    if template != native_items:
        raise SystemExit(f"{endpoint}: the two indexes return different items")


def run(rows: list[Row], rounds: int, warmup: int, steps: int, rng: random.Random) -> Samples:
    """Client CPU (this thread's) and wall time of every call, interleaved per step."""
    return run_rows(rows, rounds, warmup, {OP: steps}, rng, clock=time.thread_time_ns)


def summarise(samples: Samples) -> dict[str, dict[str, Any]]:
    """contender -> µs per call on each index, and native / template ratios (CPU, wall)."""
    out: dict[str, dict[str, Any]] = {}
    for contender in CONTENDERS:
        template, native_rounds = (samples[row_name(contender, kind)] for kind in KINDS)
        ratios = [
            statistics.median(c for c, _ in n) / statistics.median(c for c, _ in t)
            for n, t in zip(native_rounds, template)
        ]
        q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        out[contender] = {
            "calls": sum(len(r) for r in template),
            "template_cpu_us": statistics.median(c / 1000 for r in template for c, _ in r),
            "native_cpu_us": statistics.median(c / 1000 for r in native_rounds for c, _ in r),
            "cpu_ratio": statistics.median(ratios),
            "cpu_ratio_iqr": (q1, q3),
            "template_wall_us": statistics.median(w / 1000 for r in template for _, w in r),
            "native_wall_us": statistics.median(w / 1000 for r in native_rounds for _, w in r),
            "wall_ratio": _ratio(native_rounds, template, 1),
        }
    return out


def verdict(contender: str, ratio: float) -> str:
    if contender == "raw boto3":
        return ""
    ok = abs(ratio - 1) <= TOLERANCE
    return f"1.00 ± {TOLERANCE:.2f}: {'PASS' if ok else 'FAIL'}"


def report(endpoint: str, summary: dict[str, dict[str, Any]]) -> None:
    calls = next(iter(summary.values()))["calls"]
    print(
        f"#### {endpoint}: Query (Limit={PARTITION_ITEMS}, {PARTITION_ITEMS} items) on a "
        f"native-key index vs the same Query on a key-template index; {calls} timed calls "
        "per contender and index"
    )
    print()
    print(
        f"| contender | template µs CPU/call | native µs CPU/call | native {TIMES} template "
        f"(CPU) | IQR of round ratios | target | template µs wall | native µs wall | "
        f"native {TIMES} template (wall) |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for contender, row in summary.items():
        q1, q3 = row["cpu_ratio_iqr"]
        print(
            f"| {contender} | {row['template_cpu_us']:,.0f} | {row['native_cpu_us']:,.0f} | "
            f"{row['cpu_ratio']:.3f} | {q1:.3f}-{q3:.3f} | {verdict(contender, row['cpu_ratio'])} "
            f"| {row['template_wall_us']:,.0f} | {row['native_wall_us']:,.0f} | "
            f"{row['wall_ratio']:.3f} |"
        )
    print()


class _Recorded:
    """A client answering every Query with one recorded parsed response (no botocore, no
    HTTP), so a repository's own work is timed alone."""

    def __init__(self, responses: dict[str, dict[str, Any]]) -> None:
        self.responses = responses

    def query(self, **params: Any) -> dict[str, Any]:
        return self.responses[params["IndexName"]]


def own_work(client: Any, reps: int, seed: int) -> dict[str, float]:
    """µs per call of singletable's own steps on each index (a client answering with the
    recorded response): the request alone (``.params()``) and the whole pattern call
    (request, response decoding, the page); interleaved, thread CPU, medians."""
    shape = NativeShop(client=client)
    kw = {"customer_id": CUSTOMER, "limit": PARTITION_ITEMS}
    responses = {
        "ByCustomer": client.query(**shape.by_template.params(**kw)),
        "ByCustomerNative": client.query(**shape.by_native.params(**kw)),
    }
    repo = NativeShop(client=_Recorded(responses))  # type: ignore[arg-type]
    steps: dict[str, tuple[Callable[[], Any], int]] = {
        "template-index .params()": (lambda: repo.by_template.params(**kw), 500),
        "native-index .params()": (lambda: repo.by_native.params(**kw), 500),
        "template-index pattern call": (lambda: repo.by_template(**kw), 20),
        "native-index pattern call": (lambda: repo.by_native(**kw), 20),
    }
    samples: dict[str, list[float]] = {name: [] for name in steps}
    rng = random.Random(seed)
    for rep in range(reps + 1):
        order = list(steps)
        rng.shuffle(order)
        for name in order:
            fn, n = steps[name]
            start = time.thread_time_ns()
            for _ in range(n):
                fn()
            if rep:  # the first repetition warms up
                samples[name].append((time.thread_time_ns() - start) / n / 1e3)
    return {name: statistics.median(values) for name, values in samples.items()}


def report_own(rows: dict[str, float]) -> None:
    print(
        "#### singletable's own work per Query (a client answering with the recorded "
        "response: no botocore, no HTTP; thread CPU, medians)"
    )
    print()
    print("| step | µs per call |")
    print("|---|---:|")
    for name, us in rows.items():
        print(f"| {name} | {us:,.1f} |")
    print()


def main(argv: list[str] | None = None) -> int:
    """Run the native-index rows alone (``bench/e2e.py`` runs them with the other rows)."""
    import argparse
    import contextlib
    import functools
    import shlex

    import endpoints

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoints", default="replay,moto")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5, help="steps per round (5)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--own-reps", type=int, default=15, help="0 skips the own-work table")
    args = parser.parse_args(argv)
    names = [e for e in args.endpoints.split(",") if e]
    endpoints.use_dummy_credentials()
    print(f"command: `{shlex.join(['python', 'bench/native_keys.py', *sys.argv[1:]])}`")
    print(f"load average at start {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rng = random.Random(args.seed)

    def default_repo(repo_cls: type[Any]) -> Any:
        repo = repo_cls()
        repo.client  # noqa: B018 - create it now, not inside a timed call
        return repo

    with endpoints.moto_server() as moto_url, contextlib.ExitStack() as stack:
        order_ids = seed(endpoints.plain_client(moto_url), args.seed)
        started = endpoints.start(names, moto_url, stack)
        for endpoint in (started[n] for n in names if n in started):
            endpoint.use_as_default()
            client = functools.partial(endpoints.plain_client, verify=endpoint.certfile)
            rows = make_rows(endpoint.url, client, default_repo)
            verify(rows, order_ids, endpoint.name)
            if endpoint.replay:
                endpoint.replay_freeze()
            samples = run(rows, args.rounds, args.warmup, args.steps, rng)
            verify(rows, order_ids, endpoint.name)
            if endpoint.replay and endpoint.replay_stats()["unknown"]:
                raise SystemExit(f"{endpoint.name}: not every timed call was a replay")
            print(f"### endpoint: {endpoint.label}")
            print(f"load average after it {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print()
            report(endpoint.name, summarise(samples))
        if args.own_reps > 0:
            report_own(own_work(endpoints.plain_client(moto_url), args.own_reps, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
