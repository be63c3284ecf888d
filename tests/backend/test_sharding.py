"""Write sharding (``Shard(n, of=...)``) and scatter-gather reads (``scatter=``): the derived
shard, the compiled requests, definition-time refusals, and paging that never skips, repeats
or reorders, on every backend and both twins."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from singletable import GSI, Attr, Entity, Repository, Shard, Table, get, query
from singletable._context import WriteContext
from singletable._entity import spec_of
from singletable._markers import shard_of
from singletable._verbs.update import compile_update
from singletable.errors import (
    InvalidCursor,
    KeyTemplateError,
    ModelDefinitionError,
    PatternArgumentError,
)
from tests.conftest import NOW

SHARDS = 4
T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)

desk = Table("Desk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")], ttl_attribute="expires_at")


class State(str, Enum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"


class Ticket(Entity, table=desk, type="TICKET"):
    ticket_id: str
    state: State
    opened_at: datetime
    shard: Annotated[int, Shard(SHARDS, of="ticket_id")] = 0
    expires_at: datetime | None = None

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"
        GSI1 = ("STATE#{state}#{shard}", "{opened_at}#{ticket_id}")


class Memo(Entity, table=desk, type="MEMO"):
    """Another type in the tickets' index partitions: read by their Queries, never returned."""

    memo_id: str
    state: State
    opened_at: datetime
    shard: Annotated[int, Shard(SHARDS, of="memo_id")] = 0

    class Keys:
        pk = "MEMO#{memo_id}"
        sk = "MEMO"
        GSI1 = ("STATE#{state}#{shard}", "{opened_at}#{memo_id}")


class Desk(Repository, table=desk):
    ticket = get(Ticket)
    by_state = query(Ticket, index="GSI1", scatter="shard")
    newest_by_state = query(Ticket, index="GSI1", order="desc", scatter="shard", max_concurrency=2)


def ticket(
    i: int, state: State = State.OPEN, minutes: int | None = None, expired: bool = False
) -> Ticket:
    at = T0 + timedelta(minutes=i if minutes is None else minutes)
    expires = NOW - timedelta(days=1) if expired else None  # before the repositories' clock
    return Ticket(ticket_id=f"T{i:03d}", state=state, opened_at=at, expires_at=expires)


@pytest.fixture
def repo(make_repo: Any) -> Desk:
    tickets: Desk = make_repo(Desk, desk)
    return tickets


# -- the shard function and the derived field (no backend) --------------------------------------


def test_the_shard_function_is_fixed() -> None:
    """Pinned values: the stored format must never change (it is not Python's hash())."""
    assert [shard_of(f"A{i}", 8) for i in range(6)] == [7, 4, 0, 4, 2, 5]
    text = "T001"
    expected = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % 100
    assert shard_of(text, 100) == expected
    assert shard_of("é", 10) == int.from_bytes(hashlib.sha256(b"\xc3\xa9").digest()[:8], "big") % 10


def test_every_write_derives_the_shard() -> None:
    item = Desk(client=None).planner.create_op(ticket(1), None).params["Item"]
    derived = shard_of("T001", SHARDS)
    assert item["shard"] == {"N": str(derived)}
    assert item["GSI1PK"] == {"S": f"STATE#OPEN#{derived}"}
    passed = Ticket(
        ticket_id="T001", state=State.OPEN, opened_at=T0, shard=3 if derived != 3 else 2
    )
    item = Desk(client=None).planner.create_op(passed, None).params["Item"]
    assert item["shard"] == {"N": str(derived)}  # the value the caller passed is overwritten


def test_shard_declarations_are_checked() -> None:
    with pytest.raises(ModelDefinitionError, match="from 1 to 100"):

        class Many(Entity, table=desk):
            ticket_id: str
            shard: Annotated[int, Shard(101, of="ticket_id")] = 0

            class Keys:
                pk = "MANY#{ticket_id}"

    with pytest.raises(ModelDefinitionError, match="needs an int field"):

        class Text(Entity, table=desk):
            ticket_id: str
            shard: Annotated[str, Shard(4, of="ticket_id")] = "0"

            class Keys:
                pk = "TEXT#{ticket_id}"

    with pytest.raises(ModelDefinitionError, match="of= must name another field"):

        class Nowhere(Entity, table=desk):
            ticket_id: str
            shard: Annotated[int, Shard(4, of="nope")] = 0

            class Keys:
                pk = "NOWHERE#{ticket_id}"

    with pytest.raises(ModelDefinitionError, match="must name a Shard\\(\\) field"):

        class NotShard(Repository, table=desk):
            by_state = query(Ticket, index="GSI1", scatter="opened_at")

    with pytest.raises(ModelDefinitionError, match="in the partition key or first in the sort key"):

        class OnTable(Repository, table=desk):
            tickets = query(Ticket, scatter="shard")


def test_scatter_requests_and_explain() -> None:
    repo = Desk(client=None)
    queries = repo.by_state.params(state=State.OPEN, limit=5)["Queries"]
    assert [q["ExpressionAttributeValues"][":pk"]["S"] for q in queries] == [
        f"STATE#OPEN#{s}" for s in range(SHARDS)
    ]
    assert all(q["Limit"] == 6 and q["IndexName"] == "GSI1" for q in queries)
    (row,) = [r for r in Desk.explain() if r.pattern == "by_state"]
    assert row.operation == f"Query x{SHARDS}" and "scatter over shard" in row.notes
    assert row.requests == SHARDS == len(queries)  # one Query per shard
    with pytest.raises(PatternArgumentError, match="shard"):
        repo.by_state.params(state=State.OPEN, shard=1)


# -- on the backends, both twins ---------------------------------------------------------------


def test_a_first_page_sends_one_query_per_shard(repo: Desk, recorder: Any) -> None:
    repo.batch_put([ticket(i) for i in range(12)])
    stored = repo.ticket(ticket_id="T005")
    assert stored is not None and stored.shard == shard_of("T005", SHARDS)
    with recorder.expect(*["Query"] * SHARDS):
        page = repo.by_state(state=State.OPEN, limit=5)
    assert [t.ticket_id for t in page] == ["T000", "T001", "T002", "T003", "T004"]
    rest = list(repo.by_state.all(state=State.OPEN, cursor=page.cursor))
    assert [t.ticket_id for t in rest] == [f"T{i:03d}" for i in range(5, 12)]
    assert repo.by_state.count(state=State.OPEN) == 12
    newest = repo.newest_by_state.first(state=State.OPEN)
    assert newest is not None and newest.ticket_id == "T011"
    assert repo.by_state(state=State.CLOSED).items == []


def test_a_later_page_queries_only_the_shards_left(repo: Desk, recorder: Any) -> None:
    # every ticket in one shard: after the first page, the other shards are done
    ids = [i for i in range(40) if shard_of(f"T{i:03d}", SHARDS) == 0][:6]
    repo.batch_put([ticket(i) for i in ids])
    first = repo.by_state(state=State.OPEN, limit=2)
    recorder.clear()
    second = repo.by_state(state=State.OPEN, limit=2, cursor=first.cursor)
    assert recorder.operations == ["Query"]
    assert [t.ticket_id for t in [*first, *second]] == [f"T{i:03d}" for i in ids[:4]]


def test_a_keyword_update_keeps_the_shard_derived(repo: Desk) -> None:
    repo.create(ticket(1))
    closed = repo.update(Ticket, ticket_id="T001", set={"state": State.CLOSED, "shard": 9})
    assert closed.shard == shard_of("T001", SHARDS)  # derived, whatever was passed
    assert [t.ticket_id for t in repo.by_state.all(state=State.CLOSED)] == ["T001"]


def test_a_keyword_update_of_a_shard_needs_its_source() -> None:
    other = Table("Other")

    class Keyed(Entity, table=other):
        name: str
        code: str
        shard: Annotated[int, Shard(4, of="code")] = 0

        class Keys:
            pk = "K#{name}"
            sk = "K"

    spec = spec_of(Keyed)
    context = WriteContext("Other", T0)
    with pytest.raises(KeyTemplateError, match="derived from code") as caught:
        compile_update(spec, context, key_fields={"name": "a"}, set_values={"shard": 1})
    assert caught.value.key == "code"
    moved = compile_update(spec, context, key_fields={"name": "a"}, set_values={"code": "x"})
    assert moved.params["ExpressionAttributeValues"][":v1"] == {"N": str(shard_of("x", 4))}


def test_scatter_cursors_are_bound(repo: Desk) -> None:
    repo.batch_put([ticket(i) for i in range(6)])
    page = repo.by_state(state=State.OPEN, limit=2)
    with pytest.raises(InvalidCursor):
        repo.by_state(state=State.CLOSED, cursor=page.cursor)
    with pytest.raises(InvalidCursor):
        repo.newest_by_state(state=State.OPEN, cursor=page.cursor)
    # a call-time filter is bound with the attribute names it reads, nested paths included
    made_under, used_under = Attr("extra.note").not_exists(), Attr("extra.body").not_exists()
    page = repo.by_state(state=State.OPEN, limit=2, where=made_under)
    assert page.cursor is not None
    with pytest.raises(InvalidCursor):
        repo.by_state(state=State.OPEN, cursor=page.cursor, where=used_under)
    rest = repo.by_state.all(state=State.OPEN, cursor=page.cursor, where=made_under)
    assert len(list(rest)) == 4


def sort_key(t: Ticket) -> tuple[str, str]:
    """The index's sort key, then the table's key (ties between shards)."""
    return f"{t.opened_at:%Y-%m-%dT%H:%M:%S.%fZ}#{t.ticket_id}", f"TICKET#{t.ticket_id}"


# Ticket numbers by the shard their ticket_id falls in, so a generated ticket lands where asked.
NUMBERS_BY_SHARD = {
    shard: [i for i in range(1000) if shard_of(f"T{i:03d}", SHARDS) == shard][:40]
    for shard in range(SHARDS)
}


@settings(
    max_examples=15,
    deadline=30_000,
    # one table per test: each example deletes what the previous one wrote
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    # each item: its shard (among the first ``spread``), its minute (sort keys repeat) and
    # what it is. A shard's page can end after items that are read but never returned (expired,
    # another type), so a shard with more to read may return a short page: the nearest
    # shard's position, not the farthest's, bounds what a merged page may hold
    items=st.lists(
        st.tuples(
            st.integers(0, SHARDS - 1),
            st.integers(0, 5),
            st.sampled_from(["live", "expired", "memo"]),
        ),
        min_size=0,
        max_size=30,
    ),
    spread=st.integers(2, SHARDS),
    limit=st.sampled_from([1, 1, 2, 3, 5, 7]),
    descending=st.booleans(),
)
# The case random data reaches about once in 30 examples, pinned in both orders: the first
# page of shard 0 reads two expired tickets and ends before shard 1's first ticket.
@example(
    items=[
        (0, 0, "expired"),
        (0, 1, "expired"),
        (0, 2, "live"),
        *[(1, m, "live") for m in (3, 4, 5)],
    ],
    spread=2,
    limit=1,
    descending=False,
)
@example(
    items=[(0, 5, "memo"), (0, 4, "memo"), (0, 3, "live"), *[(1, m, "live") for m in (2, 1, 0)]],
    spread=2,
    limit=1,
    descending=True,
)
def test_pages_concatenate_to_the_sorted_whole(
    make_repo: Any, items: list[tuple[int, int, str]], spread: int, limit: int, descending: bool
) -> None:
    repo: Desk = make_repo(Desk, desk)
    empty_table(repo)
    numbers = {shard: iter(found) for shard, found in NUMBERS_BY_SHARD.items()}
    tickets: list[Ticket] = []
    memos: list[Memo] = []
    for shard, minute, kind in items:
        number = next(numbers[shard % spread])
        if kind == "memo":
            at = T0 + timedelta(minutes=minute)
            memos.append(Memo(memo_id=f"T{number:03d}", state=State.OPEN, opened_at=at))
        else:
            tickets.append(ticket(number, minutes=minute, expired=kind == "expired"))
    if tickets or memos:
        repo.batch_put([*tickets, *memos])
    pattern = repo.newest_by_state if descending else repo.by_state
    seen = []
    for number, page in enumerate(pattern.pages(state=State.OPEN, limit=limit), start=1):
        assert len(page.items) <= limit
        seen += [t.ticket_id for t in page]
        assert number <= 2 * len(items) + SHARDS + 2  # every page makes progress
    live = [t for t in tickets if t.expires_at is None]
    expected = sorted(live, key=sort_key, reverse=descending)
    assert seen == [t.ticket_id for t in expected]


def empty_table(repo: Any) -> None:
    """Delete every item, whatever its type or expiry (the property's examples share a table)."""
    client = repo.client
    for item in client.scan(TableName=repo.table_name, ConsistentRead=True)["Items"]:
        client.delete_item(TableName=repo.table_name, Key={"PK": item["PK"], "SK": item["SK"]})


def test_a_short_page_of_one_shard_bounds_what_the_others_return(make_repo: Any) -> None:
    """Two shards: the first two items of one are expired (read, not returned), so with
    limit=1 its page is empty and ends before the other shard's first item. The merge may
    return nothing from the other shard before it has read past that point: the nearest
    shard's position bounds a page, not the farthest's."""
    repo: Queues = make_repo(Queues, desk)
    ids = {s: [i for i in range(60) if shard_of(f"J{i:02d}", 2) == s] for s in (0, 1)}
    first = [f"J{i:02d}" for i in ids[0][:3]]  # the earliest three jobs, one shard
    other = [f"J{i:02d}" for i in ids[1][:3]]  # the next three, the other shard
    at = iter(range(10))
    repo.batch_put(
        [
            Job(job_id=first[0], due=T0 + timedelta(minutes=next(at)), expires_at=NOW - DAY),
            Job(job_id=first[1], due=T0 + timedelta(minutes=next(at)), expires_at=NOW - DAY),
            Job(job_id=first[2], due=T0 + timedelta(minutes=next(at))),
            *(Job(job_id=j, due=T0 + timedelta(minutes=next(at))) for j in other),
        ]
    )
    page = repo.due(limit=1)
    assert page.items == [] and page.cursor is not None  # the expired shard holds the rest back
    ordered = [j.job_id for j in repo.due.all(limit=1)]
    assert ordered == [first[2], *other]
    assert [j.job_id for j in repo.due.all(limit=2)] == ordered


DAY = timedelta(days=1)


class Job(Entity, table=desk, type="JOB"):
    job_id: str
    due: datetime
    expires_at: datetime | None = None
    shard: Annotated[int, Shard(2, of="job_id")] = 0

    class Keys:
        pk = "JOB#{job_id}"
        sk = "JOB"
        GSI1 = ("DUE#{shard}", "{due}#{job_id}")


class Queues(Repository, table=desk):
    due = query(Job, index="GSI1", scatter="shard")


hot = Table("Hot")


class Reading(Entity, table=hot, type="READING"):
    reading_id: str
    value: int
    shard: Annotated[int, Shard(SHARDS, of="reading_id")] = 0

    class Keys:
        pk = "READING#{shard}"
        sk = "{reading_id}"


class Readings(Repository, table=hot):
    reading = get(Reading)
    all_readings = query(Reading, scatter="shard")


def test_a_get_computes_a_shard_in_the_table_key() -> None:
    repo = Readings(client=None)
    key = repo.reading.params(reading_id="r7")["Key"]
    assert key == {"PK": {"S": f"READING#{shard_of('r7', SHARDS)}"}, "SK": {"S": "r7"}}
    with pytest.raises(PatternArgumentError, match="computed from reading_id") as caught:
        repo.reading.params(reading_id="r7", shard=1)
    assert caught.value.key == "shard"
    (row,) = [r for r in Readings.explain() if r.pattern == "all_readings"]
    assert row.operation == f"Query x{SHARDS}"


def test_a_sharded_table_key_reads_and_writes(make_repo: Any, recorder: Any) -> None:
    repo: Readings = make_repo(Readings, hot)
    repo.batch_put([Reading(reading_id=f"r{i}", value=i) for i in range(9)])
    with recorder.expect("GetItem"):
        found = repo.reading(reading_id="r4")
    assert found is not None and found.value == 4 and found.shard == shard_of("r4", SHARDS)
    assert repo.delete(Reading, reading_id="r4") == found
    assert sorted(r.reading_id for r in repo.all_readings.all()) == [
        f"r{i}" for i in range(9) if i != 4
    ]


# -- an Enum first in a sort key, random shards: the merged order pages exactly ---------------

ledger = Table(
    "Ledger",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
)


class Kind(str, Enum):
    CREDIT = "CREDIT"
    DEBIT = "DEBIT"
    HOLD = "HOLD"


class Entry(Entity, table=ledger, type="ENTRY"):
    entry_id: str
    account: str
    kind: Kind
    at: datetime
    bucket: Annotated[int, Shard(SHARDS)] = 0  # drawn at random by batch_put

    class Keys:
        pk = "ENTRY#{entry_id}"
        sk = "ENTRY"
        GSI1 = ("ACCOUNT#{account}", "{kind}#{at}#{entry_id}")  # the Enum first
        GSI2 = ("BUCKET#{bucket}", "{at}#{entry_id}")  # random write shards


class Ledger(Repository, table=ledger):
    by_account = query(Entry, index="GSI1", scatter="kind")
    by_account_desc = query(Entry, index="GSI1", scatter="kind", order="desc")
    by_bucket = query(Entry, index="GSI2", scatter="bucket")
    by_bucket_desc = query(Entry, index="GSI2", scatter="bucket", order="desc", max_concurrency=2)


@settings(
    max_examples=10,
    deadline=30_000,
    # one table per test: each example deletes what the previous one wrote
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    entries=st.lists(st.tuples(st.sampled_from(list(Kind)), st.integers(0, 4)), max_size=30),
    limit=st.integers(1, 7),
    descending=st.booleans(),
    axis=st.sampled_from(["kind", "bucket"]),
)
def test_enum_first_and_random_shard_pages_concatenate_to_the_sorted_whole(
    make_repo: Any,
    entries: list[tuple[Kind, int]],
    limit: int,
    descending: bool,
    axis: str,
) -> None:
    repo: Ledger = make_repo(Ledger, ledger)
    old = list(repo.by_bucket.all())
    if old:
        repo.batch_delete(old)
    stored = repo.batch_put(
        Entry(entry_id=f"E{i:03d}", account="a1", kind=kind, at=T0 + timedelta(minutes=m))
        for i, (kind, m) in enumerate(entries)  # repeated times across and within kinds
    )
    pattern = {
        ("kind", False): repo.by_account,
        ("kind", True): repo.by_account_desc,
        ("bucket", False): repo.by_bucket,
        ("bucket", True): repo.by_bucket_desc,
    }[axis, descending]
    keywords = {"account": "a1"} if axis == "kind" else {}
    seen = []
    for number, page in enumerate(pattern.pages(limit=limit, **keywords), start=1):
        assert len(page.items) <= limit
        seen += [e.entry_id for e in page]
        assert number <= 2 * len(stored) + len(Kind) + SHARDS + 2  # every page makes progress
    # the sort key that remains ("{at}#{entry_id}"), whichever kind or shard holds the entry
    expected = sorted(stored, key=lambda e: (e.at, e.entry_id), reverse=descending)
    assert seen == [e.entry_id for e in expected]
    assert len(seen) == len(set(seen))
