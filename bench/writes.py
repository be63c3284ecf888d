"""Write rows of ``bench/e2e.py``: every single-item write, a transaction and a batch, end to end.

Operations (``bench/codec.py``'s ``Order``, 14 wire attributes, on the e2e endpoints):

* ``PutItem``: ``repo.put(order)``, over 10 orders in turn.
* ``UpdateItem, keyword``: ``repo.update(Order, **key, set={"note": ..., "gift": True})``
  (``attribute_exists`` condition, ``ReturnValues=ALL_NEW``: the entity as stored comes back).
* ``UpdateItem, instance``: ``repo.update(order, note=...)`` (only the changed field is set).
* ``DeleteItem``: ``repo.delete(Order, **key)`` (``ReturnValues=ALL_OLD``: the old entity); the
  order is put back, untimed, before every timed delete.
* ``TransactWriteItems``: a ``@transaction`` of 4 operations: ``tx.create(account)`` (an
  ``Account`` with ``email: Annotated[str, Unique()]``: its item and its guard item),
  ``tx.put(order)`` and ``tx.update(Order, **other_key, set=...)``; the account and its guard
  are deleted, untimed, before every timed call. The idempotency token is derived from the
  arguments (``@transaction(token=...)``), so the request is the same bytes every time and the
  replay endpoint can answer it.
* ``BatchWriteItem``: ``repo.batch_put(100 orders)``: 4 requests of 25.

Contenders, ratios to the first one:

* ``raw boto3``: the low-level client sending the very request singletable sends (recorded
  once through the client's ``provide-client-params`` event), wire dicts out.
* ``by-hand``: what a competent engineer writes with the raw client: ``encode_by_hand``
  (``model_dump``, a reused ``TypeSerializer``, f-string keys), a hand-written update
  expression, ``decode_by_hand`` of ``Attributes``; the same requests up to names.
* ``singletable, plain client``: a repository on a plain boto3 client with ``fast_path=False``.
* ``singletable, fast path off``: the default client with ``SINGLETABLE_FAST_PATH=0``.
* ``singletable default client``: ``WriteShop()`` (fast path, ``client_config()``).
* ``singletable default client + signer``: the same with ``SINGLETABLE_SIGNING=1``.

Method as the read rows: per round and operation, a few steps; each step calls every
contender once in a seeded shuffled order; client CPU (``time.thread_time_ns``) around each
call, the untimed restore before it; ratios are medians of per-round ratios of per-round
medians, with the interquartile range of those round ratios.
"""

from __future__ import annotations

import copy
import gc
import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any
from unittest import mock

from botocore import xform_name

from codec import Order, decode_by_hand, encode_by_hand, make_orders, shop
from singletable import Entity, Repository, Unique, transaction
from singletable._verbs.transactions import Transaction
from singletable.aws import fastpath, signing

TIMES = "\u00d7"
BASE = "raw boto3"
KEYS = 10  # orders written in turn by the single-item rows
BATCH = 100

OPS = (
    "PutItem",
    "UpdateItem, keyword",
    "UpdateItem, instance",
    "DeleteItem",
    "TransactWriteItems",
    "BatchWriteItem",
)
TITLES = {
    "PutItem": "PutItem (1 order)",
    "UpdateItem, keyword": "UpdateItem, keyword form (2 fields set, ALL_NEW back)",
    "UpdateItem, instance": "UpdateItem, instance form (1 changed field, ALL_NEW back)",
    "DeleteItem": "DeleteItem (ALL_OLD back)",
    "TransactWriteItems": "TransactWriteItems (4 operations: create with a Unique() guard, put, "
    "update)",
    "BatchWriteItem": f"BatchWriteItem ({BATCH} orders, 4 requests of 25)",
}
#: Acceptance target: client CPU as a multiple of the raw client's, for the default client:
#: on the keep-alive endpoints, and on moto's server (a new connection per call).
TARGET = 0.85
MOTO_TARGET = 0.90
TARGETED = "singletable default client"
DIRECT = "singletable direct transport"
DIRECT_TARGET = 0.60  # every write on the direct transport (default_client's opt-in)


class Account(Entity, table=shop, type="ACCOUNT"):
    """A customer's account; the email is unique across the table (a guard item)."""

    customer_id: str
    email: Annotated[str, Unique()]
    name: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ACCOUNT"


def _token(repo: Any, account: Account, order: Order, other: Order) -> str:
    return f"open-{account.customer_id}-{order.order_id}"[:36]


class OpenAccount:
    """The timed transaction, mixed into both twins' repositories."""

    @transaction(token=_token)
    def open_account(self, tx: Any, account: Account, order: Order, other: Order) -> None:
        """The account (and its email guard), its first order, and a note on another order."""
        tx.create(account)
        tx.put(order)
        tx.update(Order, **key_of(other), set={"note": "account opened"})


class WriteShop(OpenAccount, Repository, table=shop):
    pass


def key_of(order: Order) -> dict[str, Any]:
    return {
        "customer_id": order.customer_id,
        "created_at": order.created_at,
        "order_id": order.order_id,
    }


# -- the hand-written requests ------------------------------------------------------------------


def hand_key(order: Order) -> dict[str, Any]:
    created = order.created_at.isoformat().replace("+00:00", "Z")
    return {
        "PK": {"S": f"CUSTOMER#{order.customer_id}"},
        "SK": {"S": f"ORDER#{created}#{order.order_id}"},
    }


def hand_item(order: Order) -> dict[str, Any]:
    item = encode_by_hand(order)
    item.update(hand_key(order))
    item["GSI1SK"] = item["SK"]
    return item


def hand_update(table: str, order: Order, note: str, gift: bool | None) -> dict[str, Any]:
    names, values, sets = {"#note": "note"}, {":note": {"S": note}}, ["#note = :note"]
    if gift is not None:
        names["#gift"], values[":gift"] = "gift", {"BOOL": gift}
        sets.append("#gift = :gift")
    return {
        "TableName": table,
        "Key": hand_key(order),
        "UpdateExpression": "SET " + ", ".join(sets),
        "ConditionExpression": "attribute_exists(PK)",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
        "ReturnValues": "ALL_NEW",
    }


# -- contenders ---------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    calls: dict[str, Callable[[int], Any]]  # op -> i -> result
    reference: bool = False
    # op -> i -> thread CPU ns of the call, where the clock cannot go around ``calls`` (an
    # async row: timed around the await, inside the event loop)
    timed: dict[str, Callable[[int], int]] | None = None


@dataclass
class Workload:
    """The data every contender writes and the untimed restores between calls."""

    orders: list[Order]  # KEYS single-item orders
    others: list[Order]  # the orders the transaction's update notes (one per account)
    accounts: list[Account]
    batch: list[Order]
    restore_client: Any
    guard_keys: list[list[dict[str, Any]]] = field(default_factory=list)

    def before(self, op: str, i: int) -> None:
        """Undo, untimed, what a previous call of ``op`` left that would make this one fail:
        the transaction's account and guard items."""
        if op == "TransactWriteItems":
            for key in self.guard_keys[i % KEYS]:
                self.restore_client.delete_item(TableName=shop.name, Key=key)

    def after(self, op: str, i: int) -> None:
        """Put back, untimed, the order a delete removed (the other rows need it)."""
        if op == "DeleteItem":
            self.restore_client.put_item(TableName=shop.name, Item=self.orders[i % KEYS].to_item())


def make_workload(client: Any, seed: int) -> Workload:
    """Orders in partitions of their own (not the read rows' customer) and accounts."""
    generated = make_orders(2 * KEYS + BATCH, seed + 11)
    orders, others, batch = generated[:KEYS], generated[KEYS : 2 * KEYS], generated[2 * KEYS :]
    accounts = [
        Account(customer_id=f"A{i:04d}", email=f"buyer{i}@example.com", name=f"Buyer {i}")
        for i in range(KEYS)
    ]
    for order in orders + others:
        client.put_item(TableName=shop.name, Item=order.to_item())
    return Workload(orders, others, accounts, batch, client)


def account_keys(repo: WriteShop, account: Account) -> list[dict[str, Any]]:
    """The keys of ``account``'s item and of its email guard item (a transaction's request,
    built and not sent)."""
    tx = Transaction(repo.planner)
    tx.create(account)
    puts = [entry["Put"]["Item"] for entry in tx.request()["TransactItems"]]
    return [{"PK": item["PK"], "SK": item["SK"]} for item in puts]


def record(client: Any, action: Callable[..., Any], *args: Any) -> list[tuple[str, dict[str, Any]]]:
    """The (operation, params) ``action(*args)`` sends through ``client``, as a user would
    pass them."""
    sent: list[tuple[str, dict[str, Any]]] = []

    def keep(params: dict[str, Any], model: Any, **_: Any) -> None:
        sent.append((model.name, copy.deepcopy(params)))

    client.meta.events.register("provide-client-params.dynamodb.*", keep)
    try:
        action(*args)
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb.*", keep)
    return sent


Requests = dict[str, list[list[tuple[str, dict[str, Any]]]]]  # op -> i -> (operation, params)


def record_requests(endpoint: Any, work: Workload) -> Requests:
    """The raw clients' requests: what singletable sends for each op and order, recorded once
    through a client of ``endpoint``."""
    orders, others, accounts, batch = work.orders, work.others, work.accounts, work.batch
    recorder = endpoint.client()
    shape = WriteShop(client=recorder, fast_path=False)
    requests: Requests = {op: [] for op in OPS}
    for i in range(KEYS):
        order, other, account = orders[i], others[i], accounts[i]
        requests["PutItem"].append(record(recorder, shape.put, order))
        requests["UpdateItem, keyword"].append(record(recorder, keyword_update, shape, order))
        requests["UpdateItem, instance"].append(record(recorder, instance_update, shape, order, i))
        requests["DeleteItem"].append(record(recorder, delete, shape, order))
        work.after("DeleteItem", i)
        work.guard_keys.append(account_keys(shape, account))
        work.before("TransactWriteItems", i)  # an earlier endpoint's run left the account
        requests["TransactWriteItems"].append(
            record(recorder, shape.open_account, account, order, other)
        )
        work.before("TransactWriteItems", i)
    requests["BatchWriteItem"] = [record(recorder, shape.batch_put, batch)] * KEYS
    if len(requests["BatchWriteItem"][0]) != BATCH // 25:
        raise SystemExit("writes bench: batch_put did not send 4 requests")
    return requests


def make_rows(endpoint: Any, upstream: Any, seed: int) -> tuple[list[Row], Workload, Requests]:
    """The write contenders against ``endpoint`` (``bench/endpoints.py``'s ``Endpoint``), the
    workload they share and the raw clients' requests. ``upstream`` is a client of the moto
    server itself: the untimed restores go there, since a replay endpoint would only replay
    them."""
    work = make_workload(upstream, seed)
    orders, others, accounts, batch = work.orders, work.others, work.accounts, work.batch
    requests = record_requests(endpoint, work)

    def raw(client: Any) -> Row:
        def send(op: str) -> Callable[[int], Any]:
            def call(i: int) -> Any:
                return [
                    getattr(client, xform_name(name))(**params) for name, params in requests[op][i]
                ]

            return call

        return Row(BASE, {op: send(op) for op in OPS})

    def by_hand(client: Any) -> Row:
        table = shop.name

        def put(i: int) -> Any:
            return client.put_item(TableName=table, Item=hand_item(orders[i]))

        def update_keyword(i: int) -> Order:
            params = hand_update(table, orders[i], "note", True)
            return decode_by_hand(client.update_item(**params)["Attributes"])

        def update_instance(i: int) -> Order:
            params = hand_update(table, orders[i], f"changed {i}", None)
            return decode_by_hand(client.update_item(**params)["Attributes"])

        def delete(i: int) -> Order | None:
            old = client.delete_item(
                TableName=table, Key=hand_key(orders[i]), ReturnValues="ALL_OLD"
            ).get("Attributes")
            return None if old is None else decode_by_hand(old)

        def transact(i: int) -> Any:
            account, order, other = accounts[i], orders[i], others[i]
            profile = {
                "PK": {"S": f"CUSTOMER#{account.customer_id}"},
                "SK": {"S": "ACCOUNT"},
                "_type": {"S": "ACCOUNT"},
                "customer_id": {"S": account.customer_id},
                "email": {"S": account.email},
                "name": {"S": account.name},
            }
            guard = work.guard_keys[i][1]  # the same guard key singletable writes
            update = hand_update(table, other, "account opened", None)
            del update["ReturnValues"]
            return client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": table,
                            "Item": profile,
                            "ConditionExpression": "attribute_not_exists(PK)",
                        }
                    },
                    {
                        "Put": {
                            "TableName": table,
                            "Item": {**guard, "_type": {"S": "_UNIQUE"}},
                            "ConditionExpression": "attribute_not_exists(PK)",
                        }
                    },
                    {"Put": {"TableName": table, "Item": hand_item(order)}},
                    {"Update": update},
                ],
                ClientRequestToken=_token(None, account, order, other),
            )

        def batch_write(i: int) -> Any:
            items = [{"PutRequest": {"Item": hand_item(o)}} for o in batch]
            return [
                client.batch_write_item(RequestItems={table: items[j : j + 25]})
                for j in range(0, BATCH, 25)
            ]

        calls = {
            "PutItem": put,
            "UpdateItem, keyword": update_keyword,
            "UpdateItem, instance": update_instance,
            "DeleteItem": delete,
            "TransactWriteItems": transact,
            "BatchWriteItem": batch_write,
        }
        return Row("by-hand", calls)

    def pattern(repo: WriteShop, name: str, reference: bool = False) -> Row:
        calls: dict[str, Callable[[int], Any]] = {
            "PutItem": lambda i: repo.put(orders[i]),
            "UpdateItem, keyword": lambda i: keyword_update(repo, orders[i]),
            "UpdateItem, instance": lambda i: instance_update(repo, orders[i], i),
            "DeleteItem": lambda i: delete(repo, orders[i]),
            "TransactWriteItems": lambda i: repo.open_account(accounts[i], orders[i], others[i]),
            "BatchWriteItem": lambda i: repo.batch_put(batch),
        }
        return Row(name, calls, reference)

    endpoint.use_as_default()
    default = default_repository()
    assert fastpath.is_installed(default.client) and not signing.is_installed(default.client)
    with mock.patch.dict(os.environ, {signing.ENV_VAR: "1"}):
        signed = default_repository()
    assert signing.is_installed(signed.client)
    with mock.patch.dict(os.environ, {fastpath.ENV_VAR: "0"}):
        switched_off = default_repository()
    assert not fastpath.is_installed(switched_off.client)
    with mock.patch.dict(os.environ, {"SINGLETABLE_TRANSPORT": "direct"}):
        direct = default_repository()
    rows = [
        raw(endpoint.client()),
        by_hand(endpoint.client()),
        pattern(WriteShop(client=endpoint.client(), fast_path=False), "singletable, plain client"),
        pattern(switched_off, "singletable, fast path off"),
        pattern(default, "singletable default client"),
        pattern(signed, "singletable default client + signer"),
        pattern(direct, DIRECT),
    ]
    return rows, work, requests


def default_repository() -> WriteShop:
    """A repository on singletable's default client, the client created now rather than
    inside a timed call."""
    repo = WriteShop()
    repo.client  # noqa: B018
    return repo


def keyword_update(repo: WriteShop, order: Order) -> Order:
    return repo.update(Order, **key_of(order), set={"note": "note", "gift": True})


def instance_update(repo: WriteShop, order: Order, i: int) -> Order:
    return repo.update(order, note=f"changed {i}")


def delete(repo: WriteShop, order: Order) -> Order | None:
    return repo.delete(Order, **key_of(order))


# -- checks, timing, report ---------------------------------------------------------------------


def verify(rows: list[Row], work: Workload, endpoint: str, base: str = BASE) -> None:
    """Every contender's writes succeed and the typed ones return what they should (on the
    replay endpoint this also records every request once); ``base`` is the raw client's row."""
    notes = {"UpdateItem, keyword": "note", "UpdateItem, instance": "changed {i}"}
    for row in rows:
        for op in OPS:
            for i in range(KEYS):
                work.before(op, i)
                got = row.calls[op](i)
                work.after(op, i)
                order = work.orders[i]
                if row.name == base or op in ("TransactWriteItems", "BatchWriteItem"):
                    continue
                if op == "PutItem":
                    ok = row.name == "by-hand" or got == order
                else:
                    ok = type(got) is Order and got.order_id == order.order_id
                    if op in notes:
                        ok = ok and got.note == notes[op].format(i=i)
                if not ok:
                    raise SystemExit(f"{endpoint}: {row.name}'s {op} returned {got!r}")


Samples = dict[str, dict[str, list[list[int]]]]  # op -> contender -> rounds of CPU ns


def run(
    rows: list[Row],
    work: Workload,
    rounds: int,
    warmup: int,
    steps: int,
    rng: random.Random,
    *,
    restore: bool = True,
) -> Samples:
    """Per op and contender, one list of thread-CPU ns per timed round; per round and op,
    ``steps`` steps each call every contender once in a shuffled order. ``restore=False``
    skips the untimed restores: a frozen replay endpoint answers from its recordings whatever
    the stored state, and the restores would only load the machine."""
    samples: Samples = {op: {row.name: [] for row in rows} for op in OPS}
    thread_time = time.thread_time_ns
    ops = list(OPS)
    order = list(rows)
    step = 0
    for rnd in range(warmup + rounds):
        rng.shuffle(ops)
        for op in ops:
            calls: dict[str, list[int]] = {row.name: [] for row in rows}
            gc.collect()
            for _ in range(steps):
                i = step % KEYS
                step += 1
                rng.shuffle(order)
                for row in order:
                    if restore:
                        work.before(op, i)
                    if row.timed is not None:
                        calls[row.name].append(row.timed[op](i))
                    else:
                        fn = row.calls[op]
                        c0 = thread_time()
                        fn(i)  # the result is dropped inside the timed region
                        calls[row.name].append(thread_time() - c0)
                    if restore:
                        work.after(op, i)
            if rnd >= warmup:
                for name, values in calls.items():
                    samples[op][name].append(values)
    return samples


def summarise(
    rows: list[Row], samples: Samples, base_name: str = BASE
) -> dict[str, dict[str, dict[str, Any]]]:
    """op -> contender -> median µs, ratio to the raw client (``base_name``'s row) and its IQR
    over rounds."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for op, by_name in samples.items():
        base = by_name[base_name]
        for row in rows:
            rounds = by_name[row.name]
            ratios = [
                statistics.median(mine) / statistics.median(theirs)
                for mine, theirs in zip(rounds, base)
            ]
            cpu = [ns / 1000 for values in rounds for ns in values]
            q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
            out.setdefault(op, {})[row.name] = {
                "calls": len(cpu),
                "cpu_median_us": statistics.median(cpu),
                "cpu_ratio": statistics.median(ratios),
                "cpu_ratio_iqr": (q1, q3),
            }
    return out


def report(
    endpoint: str,
    summary: dict[str, dict[str, dict[str, Any]]],
    goals: dict[str, float] | None = None,
) -> None:
    """The tables of one endpoint's rows; ``goals``: contender -> the ratio it must not
    exceed (default: the default client's and the direct transport's goals)."""
    if goals is None:
        default_goal = MOTO_TARGET if endpoint == "moto" else TARGET
        goals = {TARGETED: default_goal, DIRECT: DIRECT_TARGET}
    for op in OPS:
        rows = summary[op]
        calls = next(iter(rows.values()))["calls"]
        print(f"#### {endpoint}: {TITLES[op]}, {calls} timed calls per contender")
        print()
        print(
            f"| contender | median µs CPU/call | {TIMES} raw (CPU) | IQR of round ratios | target |"
        )
        print("|---|---:|---:|---:|---|")
        for name, row in rows.items():
            q1, q3 = row["cpu_ratio_iqr"]
            target = ""
            goal = goals.get(name)
            if goal is not None:
                verdict = "PASS" if row["cpu_ratio"] <= goal else "FAIL"
                target = f"≤ {goal:.2f}: {verdict}"
            print(
                f"| {name} | {row['cpu_median_us']:,.0f} | {row['cpu_ratio']:.2f} | "
                f"{q1:.2f}-{q3:.2f} | {target} |"
            )
        print()


def main(argv: list[str] | None = None) -> int:
    """Run the write rows alone (``bench/e2e.py`` runs them with the read rows)."""
    import argparse
    import contextlib
    import shlex
    import sys

    import endpoints  # not e2e: it imports this module, which would declare Account twice

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoints", default="moto,replay")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5, help="steps per round and op (5)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--no-async", action="store_true", help="leave out the async twin's rows (no aiobotocore)"
    )
    args = parser.parse_args(argv)
    names = [e for e in args.endpoints.split(",") if e]
    endpoints.use_dummy_credentials()
    print(f"command: `{shlex.join(['python', 'bench/writes.py', *sys.argv[1:]])}`")
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rng = random.Random(args.seed)
    with endpoints.moto_server() as moto_url, contextlib.ExitStack() as stack:
        shop.create(endpoints.plain_client(moto_url))
        for endpoint in endpoints.start(names, moto_url, stack).values():
            upstream = endpoints.plain_client(moto_url)
            rows, work, requests = make_rows(endpoint, upstream, args.seed)
            verify(rows, work, endpoint.name)
            async_rows: list[Row] = []
            if not args.no_async:
                # writes_async imports this module by name: let it find this run's (declaring
                # Account a second time would fail)
                sys.modules.setdefault("writes", sys.modules[__name__])
                import writes_async
                from contenders import ASYNC_BASE, AsyncSide

                side = AsyncSide()
                stack.callback(side.close)
                async_rows = writes_async.make_rows(side, endpoint, work, requests)
                verify(async_rows, work, endpoint.name, base=ASYNC_BASE)
            if endpoint.replay:
                endpoint.replay_freeze()
            restore = not endpoint.replay
            samples = run(rows, work, args.rounds, args.warmup, args.steps, rng, restore=restore)
            if async_rows:
                async_samples = run(
                    async_rows, work, args.rounds, args.warmup, args.steps, rng, restore=restore
                )
            if endpoint.replay:
                stats = endpoint.replay_stats()
                if stats["unknown"]:
                    raise SystemExit(f"replay server: not every timed call replayed {stats}")
            print(f"### endpoint: {endpoint.label}")
            print()
            report(endpoint.name, summarise(rows, samples))
            if async_rows:
                print("The async twin, ratios to raw aiobotocore:")
                print()
                goal = MOTO_TARGET if endpoint.name == "moto" else TARGET
                goals = {writes_async.ASYNC_DEFAULT: goal, writes_async.ASYNC_DIRECT: DIRECT_TARGET}
                report(endpoint.name, summarise(async_rows, async_samples, ASYNC_BASE), goals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
