"""``repo.backfill(E, segments=N, job="name")`` on every backend and both twins: the job's
state in the table (items no read returns), claims and leases, a dead worker's segment resumed
after its lease, a worker that lost its lease leaving the segment, fixed options,
``backfill_status`` and ``backfill_forget``. Many processes at once, killed and paused:
``test_backfill_chaos.py``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from moto_fixtures import Clock

from singletable import BackfillSegment, RetryPolicy
from singletable.errors import InvalidRequestError
from tests.backend.test_backfill import old_order, seed, update_keys
from tests.backend.test_writes import table_items
from tests.backfill_models import Note, Order, RepoV1, RepoV2, v1, v2

JOB_TYPE = {"S": "__backfill__"}


class Crash(Exception):
    """The worker process dies here (raised from a botocore hook)."""


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def repos(make_repo: Callable[..., Any], clock: Clock) -> tuple[RepoV1, RepoV2]:
    def sleep(seconds: float) -> None:  # a worker waiting for a lease: time passes
        clock.now += timedelta(seconds=seconds)

    new: RepoV2 = make_repo(
        RepoV2, v2, default_limit=3, clock=clock, retry=RetryPolicy(sleep=sleep)
    )
    old: RepoV1 = make_repo(RepoV1, v1, clock=clock)
    return old, new


def job_items(repo: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {k: v for k, v in table_items(repo).items() if v.get("_type") == JOB_TYPE}


def stale_updates(recorder: Any) -> Counter[str]:
    """UpdateItems sent per order key."""
    return Counter(k for k in update_keys(recorder) if k.startswith("ORDER#"))


@pytest.fixture
def landed(client: Any) -> Iterator[Counter[str]]:
    """UpdateItems that succeeded, per order key."""
    counts: Counter[str] = Counter()

    def note_key(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["bf-key"] = params["Key"].get("SK", {}).get("S", "")

    def count(parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        key = context.get("bf-key", "")
        if "Error" not in parsed and key.startswith("ORDER#"):
            counts[key] += 1

    events = client.meta.events
    events.register("before-parameter-build.dynamodb.UpdateItem", note_key, unique_id="bf-k")
    events.register("after-call.dynamodb.UpdateItem", count, unique_id="bf-landed")
    yield counts
    events.unregister("before-parameter-build.dynamodb.UpdateItem", unique_id="bf-k")
    events.unregister("after-call.dynamodb.UpdateItem", unique_id="bf-landed")


def test_a_job_runs_to_the_end_and_its_state_stays_in_the_table(repos: Any, recorder: Any) -> None:
    old, new = repos
    seed(old, new)
    recorder.clear()
    report = new.backfill(Order, segments=3, job="orders")
    assert (report.matched, report.updated, report.up_to_date, report.failed) == (10, 7, 3, ())
    assert stale_updates(recorder) == Counter(f"ORDER#o{n}" for n in range(7))
    status = new.backfill_status("orders")
    assert [s.segment for s in status] == [0, 1, 2]
    assert all(isinstance(s, BackfillSegment) and s.done and s.position is None for s in status)
    assert all(s.owner == status[0].owner and s.owner for s in status)  # one worker did all
    assert sum(s.updated for s in status) == 7 and sum(s.matched for s in status) == 10
    assert sum(s.scanned for s in status) == report.scanned
    assert len(job_items(new)) == 4  # the header and three segments
    # a reserved type: no entity reads it, another entity's backfill does not match it
    assert new.backfill(Note).matched == 3
    recorder.clear()
    again = new.backfill(Order, segments=3, job="orders")
    assert (again.scanned, again.updated) == (0, 0)  # every segment done: nothing to do
    assert set(recorder.operations) <= {"GetItem", "Query", "BatchGetItem"}


def test_status_of_an_unknown_job_is_empty_and_forget_removes_a_job(repos: Any) -> None:
    old, new = repos
    seed(old, new, stale=2, fresh=0, notes=0)
    assert new.backfill_status("nope") == []
    new.backfill(Order, segments=2, job="gone", dry_run=True)
    assert len(new.backfill_status("gone")) == 2
    assert new.backfill_forget("gone") == 3
    assert new.backfill_status("gone") == [] and job_items(new) == {}
    # forgotten: the name starts a new job, with other options if need be
    assert new.backfill(Order, segments=1, job="gone").updated == 2


def test_a_jobs_options_are_fixed_by_its_first_call(repos: Any, recorder: Any) -> None:
    old, new = repos
    seed(old, new, stale=2, fresh=0, notes=0)
    new.backfill(Order, segments=2, job="fixed", dry_run=True)
    for options in ({"segments": 3}, {"dry_run": False}, {"move": True, "dry_run": True}):
        recorder.clear()
        with pytest.raises(InvalidRequestError, match="started with other options"):
            new.backfill(Order, job="fixed", **{"segments": 2, "dry_run": True, **options})
        assert "Scan" not in recorder.operations
    with pytest.raises(InvalidRequestError, match="entity"):
        new.backfill(Note, segments=2, job="fixed", dry_run=True)
    recorder.clear()
    for bad in ({"checkpoint": "x.json"}, {"lease_seconds": 0}, {"lease_seconds": True}):
        with pytest.raises(InvalidRequestError):
            new.backfill(Order, job="fixed", **bad)
    with pytest.raises(InvalidRequestError, match="job name"):
        new.backfill(Order, job="")
    assert recorder.operations == []


def test_a_dead_workers_segment_is_resumed_after_its_lease(
    repos: Any, client: Any, clock: Clock, landed: Counter[str]
) -> None:
    old, new = repos
    for n in range(12):
        old.create(old_order(n))
    fixes = iter(range(100))

    def die(params: dict[str, Any], **_: Any) -> None:
        if params["Key"]["SK"]["S"].startswith("ORDER#") and next(fixes) == 4:
            raise Crash  # the fifth fix is never sent: the worker dies holding its segment

    event = "before-parameter-build.dynamodb.UpdateItem"
    client.meta.events.register(event, die, unique_id="bf-die")
    try:
        with pytest.raises(Crash):
            new.backfill(Order, segments=2, job="crash", lease_seconds=30)
    finally:
        client.meta.events.unregister(event, unique_id="bf-die")
    before = new.backfill_status("crash")
    (held,) = [s for s in before if not s.done and s.owner]
    assert held.lease_until is not None and held.lease_until > clock.now
    recorded_by_the_dead = sum(s.updated for s in before)
    started = clock.now
    report = new.backfill(Order, segments=2, job="crash", lease_seconds=30)
    assert clock.now - started >= timedelta(seconds=25)  # it waited for the lease to pass
    assert landed == Counter(f"ORDER#o{n}" for n in range(12))  # each fixed exactly once
    status = new.backfill_status("crash")
    assert all(s.done for s in status)
    assert sum(s.updated for s in status) == 12  # the dead worker's in-flight fixes count once
    assert report.updated == 12 - recorded_by_the_dead  # a worker reports its own work
    assert {s.owner for s in status} - {held.owner} == {status[held.segment].owner}


def test_a_worker_that_lost_its_lease_leaves_the_segment(
    repos: Any, client: Any, clock: Clock, recorder: Any, landed: Counter[str]
) -> None:
    old, new = repos
    for n in range(3):
        old.create(old_order(n))
    rival = RepoV2(client=client, table_name=new.table_name, clock=clock, default_limit=3)
    rival_reports: list[Any] = []
    paused: list[bool] = []

    def paused_past_the_lease(params: dict[str, Any], **_: Any) -> None:
        if paused or not params["Key"]["SK"]["S"].startswith("ORDER#"):
            return
        paused.append(True)
        clock.now += timedelta(seconds=61)  # the worker stalls here past its lease...
        rival_reports.append(rival.backfill(Order, job="paused"))  # ...another takes over

    event = "before-parameter-build.dynamodb.UpdateItem"
    client.meta.events.register(event, paused_past_the_lease, unique_id="bf-pause")
    try:
        report = new.backfill(Order, job="paused")
    finally:
        client.meta.events.unregister(event, unique_id="bf-pause")
    (rival_report,) = rival_reports
    assert rival_report.updated == 3
    # the stalled worker's fix failed its condition (the item was fixed meanwhile), and its
    # record of the page was refused: it left the segment without counting it
    assert (report.scanned, report.updated, report.failed) == (0, 0, ())
    keys = [f"ORDER#o{n}" for n in range(3)]
    assert stale_updates(recorder) == Counter(keys * 2)  # each sent by both workers...
    assert landed == Counter(keys)  # ...and landed once: the rival's
    (segment,) = new.backfill_status("paused")
    assert segment.done and (segment.matched, segment.updated) == (3, 3)  # the rival's page
    items = table_items(new)
    assert all(
        items[(f"CUSTOMER#c{n % 3}", f"ORDER#o{n}")]["_type"] == {"S": "ORDER"} for n in range(3)
    )


def test_progress_is_drawn_on_both_twins_with_the_table_item_count(
    repos: Any, recorder: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The display runs through a Call step (off the event loop on the async twin) and shows
    the percent of DescribeTable's item count."""
    old, new = repos
    seed(old, new)
    capsys.readouterr()
    recorder.clear()
    report = new.backfill(Order, segments=2, job="shown", dry_run=True, progress=True)
    err = capsys.readouterr().err
    assert recorder.operations.count("DescribeTable") == 1
    last = err.strip().splitlines()[-1]
    # percent and ETA where the backend keeps ItemCount (DynamoDB refreshes it every few hours,
    # dynalite reports 0: then the line shows the counts without them)
    count = new.client.describe_table(TableName=new.table_name)["Table"]["ItemCount"]
    shown = re.match(r"backfill Order \(dry run\): (100% of ~(\d+) items, )?scanned ", last)
    assert shown is not None, last
    if count:  # 13 items seeded, and the job's own (its header, then its segments)
        assert shown.group(2) is not None and 13 <= int(shown.group(2)) <= count
    else:
        assert shown.group(1) is None
    assert f"would update {report.updated}" in last and "segments 2/2 done" in last
