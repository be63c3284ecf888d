"""``repo.backfill(E)`` on every backend and both twins: stale items fixed (and only those),
other types untouched, dry runs, segments, concurrent writers, moves, the rate limit, progress
callbacks, and a run killed at a random request and resumed from its checkpoint."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from singletable import BackfillReport, RetryPolicy
from singletable._markers import shard_of
from singletable.errors import InvalidRequestError
from tests.backend.test_writes import before_call, table_items
from tests.backfill_models import (
    Account,
    AccountV1,
    Item,
    ItemV1,
    Note,
    NoteV1,
    Order,
    OrderV1,
    RepoV1,
    RepoV2,
    Status,
    v1,
    v2,
)
from tests.models import Customer

LATER = datetime(2030, 1, 1, tzinfo=timezone.utc)
_ids = itertools.count()


@pytest.fixture
def repos(make_repo: Callable[..., Any]) -> tuple[RepoV1, RepoV2]:
    new: RepoV2 = make_repo(RepoV2, v2, default_limit=4)  # creates the table: every index
    old: RepoV1 = make_repo(RepoV1, v1)
    return old, new


def old_order(n: int, prefix: str = "o", status: Status | None = None) -> OrderV1:
    return OrderV1(
        customer_id=f"c{n % 3}",
        order_id=f"{prefix}{n}",
        status=status or (Status.PENDING if n % 2 else Status.SHIPPED),
        total=Decimal(n),
        expires=LATER if n % 4 == 0 else None,
    )


def new_order(n: int, prefix: str = "fresh") -> Order:
    return Order(
        customer_id=f"c{n % 3}",
        order_id=f"{prefix}{n}",
        status=Status.PENDING,
        total=Decimal(n),
    )


def seed(old: RepoV1, new: RepoV2, stale: int = 7, fresh: int = 3, notes: int = 3) -> None:
    for n in range(stale):
        old.create(old_order(n))
    for n in range(fresh):
        new.create(new_order(n))
    for n in range(notes):
        old.create(NoteV1(customer_id=f"c{n}", note_id=f"n{n}", text="hello"))


def orders_stored(repo: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {k: v for k, v in table_items(repo).items() if k[1].startswith("ORDER#")}


def update_keys(recorder: Any) -> list[str]:
    return [p["Key"]["SK"]["S"] for p in recorder.params("UpdateItem")]


# -- what gets fixed -------------------------------------------------------------------------------


def test_stale_items_are_fixed_and_only_those(repos: Any, recorder: Any) -> None:
    old, new = repos
    seed(old, new)
    notes_before = {k: v for k, v in table_items(new).items() if k[1].startswith("NOTE#")}
    recorder.clear()
    report = new.backfill(Order)
    assert (report.matched, report.updated, report.up_to_date, report.failed) == (10, 7, 3, ())
    assert report.scanned == 13  # every item the Scan read, notes included
    assert set(recorder.operations) == {"Scan", "UpdateItem"}
    assert sorted(update_keys(recorder)) == sorted(f"ORDER#o{n}" for n in range(7))
    for params in recorder.params("Scan"):  # only this entity's tags (current, former) come back
        assert params["FilterExpression"] == "#n0 IN (:v0, :v1)"
        assert params["ExpressionAttributeNames"] == {"#n0": "_type"}
        assert params["ExpressionAttributeValues"] == {":v0": {"S": "ORDER"}, ":v1": {"S": "Order"}}
    stored = orders_stored(new)
    for (_pk, sk), item in stored.items():
        order_id = sk.removeprefix("ORDER#")
        shard = shard_of(order_id, 4)
        assert item["_type"] == {"S": "ORDER"}
        assert item["shard"] == {"N": str(shard)}
        assert item["GSI1PK"]["S"] == f"STATUS#{item['status']['S']}#{shard}"
        assert ("GSI2PK" in item) == (item["status"]["S"] == "PENDING")
        if "expires" in item:
            assert item["expires"] == {"N": str(int(LATER.timestamp()))}
    # the new index serves every pending order, old and new
    pending = {o.order_id for o in new.run(_pending(new))}
    assert pending == {f"o{n}" for n in range(7) if n % 2} | {f"fresh{n}" for n in range(3)}
    notes_after = {k: v for k, v in table_items(new).items() if k[1].startswith("NOTE#")}
    assert notes_after == notes_before


def _pending(repo: Any) -> Any:
    """Every item of GSI2 (a flow: either twin's ``run`` sends it)."""
    from singletable._flows import Send

    response = yield Send(
        "Query",
        {
            "TableName": repo.table_name,
            "IndexName": "GSI2",
            "KeyConditionExpression": "GSI2PK = :p",
            "ExpressionAttributeValues": {":p": {"S": "PENDING"}},
        },
        None,
    )
    return [Order.from_item(item) for item in response["Items"]]


def test_a_second_run_writes_nothing(repos: Any, recorder: Any) -> None:
    old, new = repos
    seed(old, new)
    new.backfill(Order, segments=2)
    recorder.clear()
    report = new.backfill(Order, segments=2)
    assert (report.matched, report.up_to_date, report.updated) == (10, 10, 0)
    assert recorder.count("UpdateItem") == 0


def test_dry_run_sends_no_write(repos: Any, recorder: Any) -> None:
    old, new = repos
    seed(old, new)
    before = table_items(new)
    recorder.clear()
    report = new.backfill(Order, dry_run=True)
    assert set(recorder.operations) == {"Scan"}
    assert (report.updated, report.up_to_date, report.failed) == (7, 3, ())
    assert table_items(new) == before


def test_a_dry_run_s_progress_line_says_what_it_would_do(
    repos: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = repos
    seed(old, new)
    capsys.readouterr()
    new.backfill(Order, dry_run=True, progress=True)
    line = capsys.readouterr().err.splitlines()[-1]  # not a terminal: the final line last
    assert "matched 10, would update 7, would move 0, failed 0" in line, line
    new.backfill(Order, progress=True)
    line = capsys.readouterr().err.splitlines()[-1]
    assert "matched 10, updated 7, moved 0, failed 0" in line, line


def test_other_entity_types_are_untouched(repos: Any, recorder: Any) -> None:
    old, new = repos
    seed(old, new)
    before = table_items(new)
    recorder.clear()
    report = new.backfill(Note)
    assert (report.matched, report.up_to_date, report.updated) == (3, 3, 0)
    assert recorder.count("UpdateItem") == 0
    assert table_items(new) == before


def test_versioned_items_keep_their_version(repos: Any) -> None:
    old, new = repos
    old.create(AccountV1(account_id="a1", plan="pro"))
    report = new.backfill(Account)
    assert report.updated == 1
    item = table_items(new)[("ACCOUNT#a1", "ACCOUNT")]
    assert item["version"] == {"N": "1"}  # a backfill changes no data: the version stays
    assert item["GSI1PK"] == {"S": "PLAN#pro"}


def test_former_type_items_are_read_and_updated_to_the_current_tag(repos: Any) -> None:
    old, new = repos
    old.create(old_order(1))
    order = new.run(_get(new, "c1", "o1"))
    assert order is not None and order.order_id == "o1"
    new.update(order, total=Decimal(5))
    assert table_items(new)[("CUSTOMER#c1", "ORDER#o1")]["_type"] == {"S": "ORDER"}


def _get(repo: Any, customer_id: str, order_id: str) -> Any:
    return repo.planner.read_live(
        Order.__singletable__, Order.key(customer_id=customer_id, order_id=order_id)
    )


# -- segments and pages ----------------------------------------------------------------------------


@pytest.mark.parametrize("segments", [1, 2, 3, 5])
def test_segments_cover_every_item_exactly_once(
    repos: Any, client: Any, segments: int, recorder: Any
) -> None:
    old, new = repos
    for n in range(12):
        old.create(old_order(n))
    seen: list[str] = []

    def collect(parsed: dict[str, Any], **_: Any) -> None:
        seen.extend(item["SK"]["S"] for item in parsed.get("Items", []))

    client.meta.events.register("after-call.dynamodb.Scan", collect, unique_id="bf-collect")
    try:
        report = new.backfill(Order, segments=segments)
    finally:
        client.meta.events.unregister("after-call.dynamodb.Scan", unique_id="bf-collect")
    assert Counter(seen) == Counter(f"ORDER#o{n}" for n in range(12))
    assert report.updated == 12
    assert Counter(update_keys(recorder)) == Counter(f"ORDER#o{n}" for n in range(12))
    scans = recorder.params("Scan")
    assert all(p["Limit"] == 4 for p in scans)  # the repository's default_limit
    if segments > 1:
        assert {(p["Segment"], p["TotalSegments"]) for p in scans} >= {
            (s, segments) for s in range(segments)
        }
    else:
        assert all("Segment" not in p for p in scans)


def test_progress_callable_sees_every_page_and_the_end(repos: Any, recorder: Any) -> None:
    old, new = repos
    seed(old, new)
    calls: list[BackfillReport] = []
    recorder.clear()
    report = new.backfill(Order, segments=2, progress=calls.append)
    assert len(calls) == recorder.count("Scan") + 1
    assert calls[-1] == report
    scanned = [c.scanned for c in calls]
    assert scanned == sorted(scanned)


def test_rate_limit_sleeps_and_sizes_pages(make_repo: Callable[..., Any], recorder: Any) -> None:
    slept: list[float] = []
    new: RepoV2 = make_repo(RepoV2, v2, retry=RetryPolicy(sleep=slept.append))
    old: RepoV1 = make_repo(RepoV1, v1)
    for n in range(6):
        old.create(old_order(n))
    recorder.clear()
    report = new.backfill(Order, segments=2, max_items_per_second=10)
    assert report.updated == 6
    assert {p["Limit"] for p in recorder.params("Scan")} == {5}  # a second's worth a segment
    assert sum(slept) <= report.scanned / 10
    recorder.clear()
    slept.clear()
    new.backfill(Order, max_items_per_second=3)
    assert {p["Limit"] for p in recorder.params("Scan")} == {3}
    assert slept  # 6 items at 3 a second: it waited


# -- concurrent writers ----------------------------------------------------------------------------


def test_a_concurrent_change_is_retried_from_a_fresh_read(repos: Any) -> None:
    old, new = repos
    old.create(old_order(1))
    rival = RepoV1(client=new.client, table_name=new.table_name)
    done = before_call(
        new.client,
        "UpdateItem",
        lambda: rival.update(OrderV1, customer_id="c1", order_id="o1", set={"total": 99}),
    )
    try:
        report = new.backfill(Order)
    finally:
        done()
    assert (report.updated, report.failed) == (1, ())
    item = table_items(new)[("CUSTOMER#c1", "ORDER#o1")]
    assert item["total"] == {"N": "99"}  # the rival's change survived
    assert item["_type"] == {"S": "ORDER"} and "GSI2PK" in item


def test_an_item_that_keeps_changing_is_reported_not_overwritten(repos: Any, client: Any) -> None:
    old, new = repos
    old.create(old_order(1))
    rival = RepoV1(client=new.client, table_name=new.table_name)
    totals = itertools.count(100)
    busy: list[bool] = []

    def change(**_: Any) -> None:
        if busy:
            return
        busy.append(True)
        try:
            rival.update(OrderV1, customer_id="c1", order_id="o1", set={"total": next(totals)})
        finally:
            busy.clear()

    client.meta.events.register("before-call.dynamodb.UpdateItem", change, unique_id="bf-rival")
    try:
        report = new.backfill(Order)
    finally:
        client.meta.events.unregister("before-call.dynamodb.UpdateItem", unique_id="bf-rival")
    assert report.updated == 0
    ((failure,),) = [report.failed]
    assert failure.key == {"PK": "CUSTOMER#c1", "SK": "ORDER#o1"}
    assert "changed while the backfill" in failure.reason
    item = table_items(new)[("CUSTOMER#c1", "ORDER#o1")]
    assert item["total"] == {"N": "101"}  # the last rival write stands
    assert item["_type"] == {"S": "Order"}  # and nothing of the backfill's


def test_versioned_concurrent_change_is_refixed(repos: Any) -> None:
    old, new = repos
    account = old.create(AccountV1(account_id="a1", plan="pro"))
    rival = RepoV1(client=new.client, table_name=new.table_name)
    done = before_call(new.client, "UpdateItem", lambda: rival.update(account, plan="team"))
    try:
        report = new.backfill(Account)
    finally:
        done()
    assert (report.updated, report.failed) == (1, ())
    item = table_items(new)[("ACCOUNT#a1", "ACCOUNT")]
    assert item["plan"] == {"S": "team"} and item["GSI1PK"] == {"S": "PLAN#team"}
    assert item["version"] == {"N": "2"}


def test_concurrent_change_inside_a_gathered_round(repos: Any, client: Any) -> None:
    old, new = repos
    for n in range(6):
        old.create(old_order(n, status=Status.SHIPPED))
    changed: list[dict[str, Any]] = []

    def rival(params: dict[str, Any], **_: Any) -> None:
        """The item of the round's first UpdateItem is made PENDING just before it is sent."""
        if changed:
            return
        changed.append(params["Key"])
        client.update_item(
            TableName=new.table_name,
            Key=params["Key"],
            UpdateExpression="SET #s = :p",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":p": {"S": "PENDING"}},
        )

    event = "before-parameter-build.dynamodb.UpdateItem"
    client.meta.events.register(event, rival, unique_id="bf-rival")
    try:
        report = new.backfill(Order, segments=3)
    finally:
        client.meta.events.unregister(event, unique_id="bf-rival")
    assert (report.updated, report.failed) == (6, ())
    stored = orders_stored(new)
    ((key,),) = [changed]
    item = stored[(key["PK"]["S"], key["SK"]["S"])]
    assert item["status"] == {"S": "PENDING"}  # the rival's change survived
    assert item["GSI2PK"] == {"S": "PENDING"}  # and the retry derived from it
    assert all(item["_type"] == {"S": "ORDER"} for item in stored.values())


# -- primary-key changes ---------------------------------------------------------------------------


def test_primary_key_changes_are_reported_without_move(repos: Any, recorder: Any) -> None:
    old, new = repos
    old.create(ItemV1(item_id="i1", kind="tool"))
    recorder.clear()
    report = new.backfill(Item)
    assert recorder.operations == ["Scan"]
    ((failure,),) = [report.failed]
    assert failure.key == {"PK": "ITEMS", "SK": "ITEM#i1"}
    assert "SK=ITEM#tool#i1" in failure.reason and "move=True" in failure.reason


@pytest.mark.requires("transactions")
def test_move_puts_the_item_under_its_new_key(repos: Any, recorder: Any) -> None:
    old, new = repos
    old.create(ItemV1(item_id="i1", kind="tool"))
    old.create(ItemV1(item_id="i2", kind="part"))
    dry = new.backfill(Item, move=True, dry_run=True)
    assert (dry.moved, dry.failed) == (2, ())
    recorder.clear()
    report = new.backfill(Item, move=True)
    assert (report.moved, report.matched, report.failed) == (2, 2, ())
    assert recorder.count("TransactWriteItems") == 2
    keys = {k for k in table_items(new) if k[0] == "ITEMS"}
    assert keys == {("ITEMS", "ITEM#tool#i1"), ("ITEMS", "ITEM#part#i2")}
    again = new.backfill(Item, move=True)
    assert (again.matched, again.up_to_date) == (2, 2)


# -- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"segments": 0},
        {"segments": 1.5},
        {"max_items_per_second": 0},
        {"dry_run": "yes"},
        {"progress": "loud"},
        {"checkpoint": 3},
    ],
)
def test_bad_options_are_refused_before_sending(
    repos: Any, recorder: Any, options: dict[str, Any]
) -> None:
    _, new = repos
    recorder.clear()
    with pytest.raises(InvalidRequestError):
        new.backfill(Order, **options)
    assert recorder.operations == []


def test_another_tables_entity_is_refused(repos: Any, recorder: Any) -> None:
    _, new = repos
    recorder.clear()
    with pytest.raises(InvalidRequestError, match="Customer"):
        new.backfill(Customer)
    with pytest.raises(InvalidRequestError, match="entity class"):
        new.backfill(new_order(1))  # type: ignore[arg-type]
    assert recorder.operations == []


def test_a_checkpoint_of_another_job_is_refused(repos: Any, tmp_path: Path, recorder: Any) -> None:
    old, new = repos
    seed(old, new, stale=2, fresh=0, notes=0)
    path = tmp_path / "job.json"
    path.write_text(
        json.dumps(
            {
                "format": "singletable-backfill/1",
                "job": {"entity": "Order", "segments": 9},
                "segments": [],
            }
        )
    )
    recorder.clear()
    with pytest.raises(InvalidRequestError, match="belongs to another job"):
        new.backfill(Order, checkpoint=path)
    path.write_text("{not json")
    with pytest.raises(InvalidRequestError, match="cannot read"):
        new.backfill(Order, checkpoint=path)
    assert recorder.operations == []


@pytest.mark.parametrize(
    ("tamper", "field"),
    [
        (lambda d: d["segments"].pop(), "segments"),  # a segment fewer: its items never fixed
        (lambda d: d["segments"][1].__setitem__("done", "no"), "segments[1].done"),
        (lambda d: d["segments"][0].__setitem__("start", "ORDER#o1"), "segments[0].start"),
        (lambda d: d["report"].__setitem__("updated", "7"), "report.updated"),
    ],
)
def test_a_tampered_checkpoint_is_refused_before_anything_runs(
    repos: Any, client: Any, tmp_path: Path, recorder: Any, tamper: Any, field: str
) -> None:
    old, new = repos
    seed(old, new, stale=6, fresh=0, notes=0)
    path = tmp_path / "job.json"

    def crash(**_: Any) -> None:
        raise Crash

    events = client.meta.events
    events.register("before-call.dynamodb.UpdateItem", crash, unique_id="bf-tamper")
    try:  # the run stops at its first fix, leaving its checkpoint (fixes in flight)
        with pytest.raises(Crash):
            new.backfill(Order, segments=2, checkpoint=path)
    finally:
        events.unregister("before-call.dynamodb.UpdateItem", unique_id="bf-tamper")
    data = json.loads(path.read_text())
    tamper(data)
    path.write_text(json.dumps(data))
    before = orders_stored(new)
    recorder.clear()
    with pytest.raises(InvalidRequestError) as caught:
        new.backfill(Order, segments=2, checkpoint=path)
    assert f"{path} is damaged: {field} " in caught.value.message
    assert recorder.operations == []  # nothing sent, nothing written
    assert orders_stored(new) == before and path.exists()  # the file is kept for a look


# -- kill and resume -------------------------------------------------------------------------------


class Crash(Exception):
    """The process dies here (raised from a botocore hook: not a SingleTableError)."""


@settings(
    max_examples=6,
    deadline=60_000,
    phases=[Phase.generate],
    # one table per test: each example adds its own items to it
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    stale=st.integers(1, 9),
    fresh=st.integers(0, 3),
    segments=st.sampled_from([1, 2, 3]),
    crash_at=st.integers(1, 40),
    after_send=st.booleans(),
)
def test_killed_at_any_request_and_resumed_finishes_with_each_item_written_once(
    repos: Any,
    client: Any,
    recorder: Any,
    tmp_path_factory: Any,
    stale: int,
    fresh: int,
    segments: int,
    crash_at: int,
    after_send: bool,
) -> None:
    old, new = repos
    prefix = f"k{next(_ids)}-"
    for n in range(stale):
        old.create(old_order(n, prefix))
    for n in range(fresh):
        new.create(new_order(n, prefix + "f"))
    stored = table_items(new)  # every example's items: the examples share the table
    orders = sum(1 for item in stored.values() if item["_type"]["S"] in ("ORDER", "Order"))
    checkpoint = tmp_path_factory.mktemp("bf") / "run.json"
    landed: Counter[str] = Counter()
    requests = itertools.count(1)

    def count_landed(parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if "Error" not in parsed and context.get("bf-key"):
            landed[context["bf-key"]] += 1

    def note_key(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["bf-key"] = params["Key"]["SK"]["S"]  # API parameters (before they are built)

    def crash(**_: Any) -> None:
        if next(requests) == crash_at:
            raise Crash

    events = client.meta.events
    events.register("before-parameter-build.dynamodb.UpdateItem", note_key, unique_id="bf-note")
    events.register("after-call.dynamodb.UpdateItem", count_landed, unique_id="bf-landed")
    crash_event = "after-call.dynamodb" if after_send else "before-call.dynamodb"
    events.register(crash_event, crash, unique_id="bf-crash")
    try:
        try:
            first = new.backfill(Order, segments=segments, checkpoint=checkpoint)
        except Crash:
            first = None
        events.unregister(crash_event, unique_id="bf-crash")
        saved = json.loads(checkpoint.read_text()) if checkpoint.exists() else None
        recorder.clear()
        report = new.backfill(Order, segments=segments, checkpoint=checkpoint)
    finally:
        events.unregister(crash_event, unique_id="bf-crash")
        events.unregister("before-parameter-build.dynamodb.UpdateItem", unique_id="bf-note")
        events.unregister("after-call.dynamodb.UpdateItem", unique_id="bf-landed")
    mine = {f"ORDER#{prefix}{n}" for n in range(stale)}
    assert {k for k in landed if k.startswith(f"ORDER#{prefix}")} <= mine
    assert all(landed[key] == 1 for key in mine), landed  # each stale item written exactly once
    assert not checkpoint.exists()  # a finished job removes its checkpoint
    if first is None:
        assert report.updated == stale  # the killed run's writes counted once, on resume
    else:  # it finished before the crash point: the second run found nothing to do
        assert (first.updated, report.updated) == (stale, 0)
    # the counts are those of one uninterrupted run: every item scanned once, every order
    # matched once (pages re-read after the kill are not counted twice)
    assert (report.scanned, report.matched, report.moved, report.failed) == (
        len(stored),
        orders,
        0,
        (),
    )
    assert report.up_to_date == orders - report.updated
    # the resumed run starts each segment where the checkpoint says, and skips those done
    assert_resumed_from(saved, recorder.params("Scan"), segments)
    for (_pk, sk), item in orders_stored(new).items():
        if sk.startswith(f"ORDER#{prefix}"):
            assert item["_type"] == {"S": "ORDER"} and "shard" in item


def assert_resumed_from(saved: Any, scans: list[dict[str, Any]], segments: int) -> None:
    """Each segment's first Scan of the resumed run starts at the checkpoint's position (from
    the start without a checkpoint), and a segment the checkpoint marks done is not scanned."""
    positions = saved["segments"] if saved else [{"start": None, "done": False}] * segments
    firsts: dict[int, dict[str, Any]] = {}
    for params in scans:
        firsts.setdefault(params.get("Segment", 0), params)
    for segment, position in enumerate(positions):
        if position["done"]:
            assert segment not in firsts, f"segment {segment} is done but was scanned again"
        else:
            assert firsts[segment].get("ExclusiveStartKey") == position["start"], segment
