"""Scatter over finite domains, scatter collections and sparse-index scans (API.md "Third wave /
Scatter over finite domains, collections and sparse-index scans"), on every backend and both
twins: an Enum first in a sort key, a Literal in a partition key, random ``Shard(n)`` write
shards, template and native indexes; every read's requests checked against ``explain()``.

The ``book`` models (tests/scatter_models.py) run everywhere; the multi-attribute native
indexes of tests/native_models.py are ``requires("multi_attribute_keys")`` (not dynalite)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest

from singletable import (
    GSI,
    Attr,
    Entity,
    Index,
    Repository,
    Shard,
    Table,
    collection,
    query,
    scan,
)
from singletable._tools.demo import expected_operations
from singletable._tools.lint import check
from singletable.errors import InvalidCursor, ModelDefinitionError, PatternArgumentError
from tests import native_models as native
from tests.scatter_models import Book, Line, Note, Order, State, Status, Ticket, book

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
MULTI = pytest.mark.requires("multi_attribute_keys")
transactions = pytest.mark.requires("transactions")


@pytest.fixture
def repo(make_repo: Any) -> Book:
    made: Book = make_repo(Book, book)
    return made


def sent_by(repo_cls: type[Repository], pattern: str) -> list[str]:
    """The requests one call of ``pattern`` sends, as its explain row states them."""
    (row,) = [r for r in repo_cls.explain() if r.pattern == pattern]
    return expected_operations(row.operation)


def order(
    n: int, status: Status, minutes: int, *, region: str = "eu", customer: str = "c1"
) -> Order:
    at = T0 + timedelta(minutes=minutes)
    return Order(
        customer_id=customer,
        order_id=f"o{n:02d}",
        status=status,
        created_at=at,
        region=region,
        opened_at=at if status is Status.OPEN else None,
    )


def ids(items: Any) -> list[str]:
    return [item.order_id for item in items]


STATUSES = [Status.OPEN, Status.PAID, Status.SHIPPED]


def seed_orders(repo: Book, count: int = 18) -> list[Order]:
    """Orders of every status, created a minute apart (o00 first)."""
    orders = [
        order(n, STATUSES[n % 3], minutes=n, region="eu" if n % 4 else "us") for n in range(count)
    ]
    repo.batch_put(orders)
    return orders


# -- an Enum first in a template sort key ---------------------------------------------------


def test_each_status_is_one_query_with_the_range_inside_its_prefix() -> None:
    repo = Book(client=None)
    queries = repo.customer_orders.params(
        customer_id="c1", created_at__between=(T0, T0 + timedelta(hours=1))
    )["Queries"]
    assert len(queries) == 3
    for status, params in zip(STATUSES, queries):
        values = params["ExpressionAttributeValues"]
        assert values[":pk"] == {"S": "CUSTOMER#c1"}
        assert params["KeyConditionExpression"] == "#pk = :pk AND #sk BETWEEN :sk AND :sk1"
        assert values[":sk"]["S"] == f"STATUS#{status.value}#2026-06-01T00:00:00.000000Z"
        assert values[":sk1"]["S"].startswith(f"STATUS#{status.value}#2026-06-01T01:00:00")
    whole = repo.customer_orders.params(customer_id="c1")["Queries"]
    assert [q["ExpressionAttributeValues"][":sk"]["S"] for q in whole] == [
        "STATUS#OPEN#",
        "STATUS#PAID#",
        "STATUS#SHIPPED#",
    ]
    assert all(q["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :sk)" for q in whole)
    (row,) = [r for r in Book.explain() if r.pattern == "customer_orders"]
    assert row.operation == "Query x3" and row.notes == "scatter over status"
    assert row.key_condition == (
        "GSI1PK = CUSTOMER#{customer_id} AND begins_with(GSI1SK, STATUS#{status}#) "
        "[+ GSI1SK on created_at, order_id]"
    )


def test_the_scattered_field_is_not_a_call_keyword() -> None:
    repo = Book(client=None)
    for keyword in ("status", "status__gte"):
        with pytest.raises(PatternArgumentError, match="status is scattered") as caught:
            repo.customer_orders.params(customer_id="c1", **{keyword: Status.PAID})
        assert caught.value.key == keyword and isinstance(caught.value, TypeError)
    with pytest.raises(PatternArgumentError, match="region is scattered"):
        repo.open_in_regions.params(region="eu")


def test_an_enum_first_in_the_sort_key_merges_every_status(repo: Book, recorder: Any) -> None:
    seed_orders(repo)
    repo.batch_put([order(99, Status.PAID, minutes=5, customer="c2")])  # another partition
    with recorder.expect(*sent_by(Book, "customer_orders")):
        page = repo.customer_orders(customer_id="c1", limit=5)
    assert ids(page) == ["o00", "o01", "o02", "o03", "o04"]  # by created_at, every status
    assert {o.status for o in page} == set(STATUSES)
    rest = list(repo.customer_orders.all(customer_id="c1", cursor=page.cursor))
    assert ids(rest) == [f"o{n:02d}" for n in range(5, 18)]
    window = (T0 + timedelta(minutes=4), T0 + timedelta(minutes=9))
    with recorder.expect(*sent_by(Book, "newest_customer_orders")):
        newest = repo.newest_customer_orders(customer_id="c1", created_at__between=window)
    assert ids(newest) == ["o09", "o08", "o07", "o06", "o05", "o04"] and newest.cursor is None
    assert repo.customer_orders.count(customer_id="c1", created_at__gte=window[0]) == 14
    first = repo.newest_customer_orders.first(customer_id="c1")
    assert first is not None and first.order_id == "o17"
    assert ids(repo.customer_orders(customer_id="c2")) == ["o99"]
    assert repo.customer_orders(customer_id="nobody").items == []


def test_a_later_page_queries_only_the_statuses_left(repo: Book, recorder: Any) -> None:
    repo.batch_put([order(n, Status.PAID, minutes=n) for n in range(5)])
    first = repo.customer_orders(customer_id="c1", limit=2)
    assert ids(first) == ["o00", "o01"]
    recorder.clear()
    second = repo.customer_orders(customer_id="c1", limit=2, cursor=first.cursor)
    assert recorder.operations == ["Query"]  # OPEN and SHIPPED were read to the end
    assert ids(second) == ["o02", "o03"]
    with pytest.raises(InvalidCursor):
        repo.customer_orders(customer_id="c2", cursor=first.cursor)
    with pytest.raises(InvalidCursor):
        repo.newest_customer_orders(customer_id="c1", cursor=first.cursor)
    with pytest.raises(InvalidCursor):
        repo.customer_orders(customer_id="c1", cursor=first.cursor, created_at__gte=T0)


# -- random Shard(n): drawn by create, put and batch_put, kept by updates and move -----------


def test_random_shards_are_drawn_on_create_put_and_batch_put(repo: Book) -> None:
    stored = repo.batch_put([order(n, Status.PAID, minutes=n) for n in range(24)])
    drawn = {o.bucket for o in stored}
    assert drawn <= {0, 1, 2, 3} and len(drawn) > 1  # 24 draws of 4: one value is 4**-23
    read = repo.order(order_id="o05")
    assert read is not None and read.bucket == stored[5].bucket
    created = repo.create(order(50, Status.OPEN, minutes=50))
    assert 0 <= created.bucket < 4
    assert repo.order(order_id="o50") == created
    put = repo.put(created.model_copy(update={"bucket": 99}))  # a passed value is drawn over
    assert 0 <= put.bucket < 4 and repo.order(order_id="o50") == put
    raw = repo.client.get_item(
        TableName=repo.table_name, Key={"PK": {"S": "ORDER#o50"}, "SK": {"S": "#ORDER"}}
    )["Item"]
    assert raw["bucket"] == {"N": str(put.bucket)}
    assert raw["GSI2PK"] == {"S": f"BUCKET#{put.bucket}"}


def test_updates_keep_a_random_shard(repo: Book) -> None:
    stored = repo.create(order(1, Status.OPEN, minutes=1))
    paid = repo.update(stored, status=Status.PAID, created_at=T0)
    assert paid.bucket == stored.bucket
    later = repo.update(Order, order_id="o01", set={"expires_at": T0 + timedelta(days=400)})
    assert later.bucket == stored.bucket
    # GSI2SK is rewritten, GSI2PK (BUCKET#{bucket}) is left as it is
    keyed = repo.update(
        Order,
        order_id="o01",
        set={"created_at": T0, "status": Status.OPEN, "customer_id": "c1", "region": "eu"},
    )
    assert keyed.bucket == stored.bucket and ids(repo.open_in_regions.all()) == ["o01"]
    moved = repo.update(Order, order_id="o01", set={"bucket": (stored.bucket + 1) % 4})
    assert moved.bucket == (stored.bucket + 1) % 4  # set= moves it like any field
    assert [o.bucket for o in repo.recent_orders.all()] == [moved.bucket]


@transactions
def test_move_and_transactions_keep_or_draw_once(repo: Book) -> None:
    stored = repo.create(order(1, Status.OPEN, minutes=1))
    moved = repo.move(stored, order_id="o77")
    assert moved.bucket == stored.bucket
    assert ids(repo.recent_orders.all()) == ["o77"]
    with repo.transaction() as tx:
        promised = tx.put(order(2, Status.PAID, minutes=2))
        created = tx.create(order(3, Status.PAID, minutes=3))
    assert repo.order(order_id="o02") == promised
    assert repo.order(order_id="o03") == created


def test_a_random_shard_cannot_key_the_table() -> None:
    hot = Table("Hot")
    with pytest.raises(ModelDefinitionError, match="drawn at random") as caught:

        class Reading(Entity, table=hot):
            reading_id: str
            shard: Annotated[int, Shard(4)] = 0

            class Keys:
                pk = "READING#{shard}"
                sk = "{reading_id}"

    assert "Reading.shard" in str(caught.value)


def test_a_scatter_over_random_shards_reads_them_all(repo: Book, recorder: Any) -> None:
    orders = seed_orders(repo, 14)
    queries = repo.recent_orders.params()["Queries"]
    assert [q["ExpressionAttributeValues"][":pk"]["S"] for q in queries] == [
        f"BUCKET#{n}" for n in range(4)
    ]
    with recorder.expect(*sent_by(Book, "recent_orders")):
        page = repo.recent_orders(limit=4)
    assert ids(page) == ["o13", "o12", "o11", "o10"]
    assert ids(repo.recent_orders.all(cursor=page.cursor)) == ids(reversed(orders))[4:]
    assert repo.recent_orders.count() == 14


# -- collections -----------------------------------------------------------------------------


def test_a_collection_scatters_over_random_shards(repo: Book, recorder: Any) -> None:
    orders = [order(n, Status.OPEN, minutes=10 * n) for n in range(3)]
    lines = [
        Line(order_id=o.order_id, line_no=k, created_at=o.created_at, sku=f"sku-{k}")
        for o in orders
        for k in (1, 2)
    ]
    repo.batch_put([*orders, *lines])
    ops = sent_by(Book, "orders_and_lines")
    assert ops == ["Query"] * 4
    with recorder.expect(*ops):
        page = repo.orders_and_lines(limit=4)
    # merged by the index's sort key "{created_at}#{order_id}#...": each order's lines
    # ("...#LINE#001") sort before the order ("...#ORDER"), whichever shards they drew
    assert [(type(i).__name__, i.order_id) for i in page] == [
        ("Line", "o00"),
        ("Line", "o00"),
        ("Order", "o00"),
        ("Line", "o01"),
    ]
    whole = repo.orders_and_lines.all()
    assert ids(whole.all(Order)) == ["o00", "o01", "o02"]
    assert [(line.order_id, line.line_no) for line in whole.all(Line)] == [
        (o, k) for o in ("o00", "o01", "o02") for k in (1, 2)
    ]
    rest = repo.orders_and_lines(cursor=page.cursor)
    assert len(page) + len(rest) == 9
    (row,) = [r for r in Book.explain() if r.pattern == "orders_and_lines"]
    assert row.entity_types == ("ORDER", "LINE") and row.notes == "scatter over bucket"


def test_a_collection_scatters_over_an_enum_first_in_the_sort_key(
    repo: Book, recorder: Any
) -> None:
    repo.batch_put(
        [
            Ticket(desk_id="d1", ticket_id="t1", state=State.OPEN, opened_at=T0),
            Ticket(desk_id="d1", ticket_id="t2", state=State.CLOSED, opened_at=T0),
            Note(desk_id="d1", note_id="n1", state=State.CLOSED, written_at=T0),
            Note(desk_id="d1", note_id="n2", state=State.OPEN, written_at=T0),
            Ticket(desk_id="d2", ticket_id="t9", state=State.OPEN, opened_at=T0),
        ]
    )
    queries = repo.desk_board.params(desk_id="d1")["Queries"]
    assert [q["ExpressionAttributeValues"][":sk"]["S"] for q in queries] == ["OPEN#", "CLOSED#"]
    with recorder.expect(*sent_by(Book, "desk_board")):
        board = repo.desk_board(desk_id="d1")
    # what remains of the sort key: "#N#..." (notes) before "#T#..." (tickets); equal
    # remainders (n1/n2 share written_at, not ids) never tie, so the order is total
    assert [getattr(i, "note_id", getattr(i, "ticket_id", "")) for i in board] == [
        "n1",
        "n2",
        "t1",
        "t2",
    ]
    assert [t.ticket_id for t in board.all(Ticket)] == ["t1", "t2"]
    (row,) = [r for r in Book.explain() if r.pattern == "desk_board"]
    assert row.key_condition == "GSI1PK = DESK#{desk_id} AND begins_with(GSI1SK, {state}#)"


# -- a Literal in a partition key; scans of sparse indexes -----------------------------------


def test_a_literal_partition_field_scatters_on_a_sparse_index(repo: Book, recorder: Any) -> None:
    seed_orders(repo)
    open_orders = [f"o{n:02d}" for n in range(0, 18, 3)]
    queries = repo.open_in_regions.params()["Queries"]
    assert [q["ExpressionAttributeValues"][":pk"]["S"] for q in queries] == ["OPEN#eu", "OPEN#us"]
    with recorder.expect(*sent_by(Book, "open_in_regions")):
        page = repo.open_in_regions(limit=10)
    assert ids(page) == open_orders
    with recorder.expect(*sent_by(Book, "open_everywhere")):
        native_page = repo.open_everywhere(opened_at__gte=T0 + timedelta(minutes=6))
    assert ids(native_page) == ["o15", "o12", "o09", "o06"]
    assert {o.region for o in native_page} == {"eu", "us"}


@pytest.mark.parametrize("pattern", ["open_orders", "opened_orders"])
def test_a_sparse_index_scans_page_by_page(repo: Book, recorder: Any, pattern: str) -> None:
    seed_orders(repo)
    open_orders = sorted(f"o{n:02d}" for n in range(0, 18, 3))
    scanning = getattr(repo, pattern)
    assert sent_by(Book, pattern) == ["Scan"]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        with recorder.expect("Scan"):
            page = scanning(limit=2, cursor=cursor)
        assert len(page) <= 2
        seen += ids(page)
        pages += 1
        cursor = page.cursor
        if cursor is None:
            break
    assert sorted(seen) == open_orders and len(seen) == len(set(seen)) and pages >= 3
    assert sorted(ids(scanning.all())) == open_orders
    assert scanning.count() == 6
    eu = sorted(ids(scanning.all(where=Attr("region").eq("eu"))))
    assert eu == [o for o in open_orders if int(o[1:]) % 4]
    first = scanning.first()
    assert first is not None and first.order_id in open_orders
    (params,) = [recorder.params("Scan")[-1]]
    assert params["IndexName"] == ("GSI3" if pattern == "open_orders" else "ByRegion")
    assert "_type" in params["ExpressionAttributeNames"].values()
    with_filter = scanning(limit=1, where=Attr("region").eq("eu"))
    with pytest.raises(InvalidCursor):
        scanning(cursor=with_filter.cursor)  # a cursor is bound to its filter
    with pytest.raises(PatternArgumentError, match="region"):
        scanning(region="eu")


def test_expired_items_are_not_scanned(make_repo: Any) -> None:
    now = datetime(2026, 6, 15, tzinfo=timezone.utc)
    repo: Book = make_repo(Book, book, clock=lambda: now)
    gone = order(1, Status.OPEN, minutes=1).model_copy(
        update={"expires_at": now - timedelta(hours=1)}
    )
    kept = order(2, Status.OPEN, minutes=2).model_copy(
        update={"expires_at": now + timedelta(hours=1)}
    )
    repo.batch_put([gone, kept])
    assert ids(repo.open_orders.all()) == ["o02"]
    assert repo.open_orders.count() == 1


def test_a_scan_is_declared_only_on_a_sparse_index() -> None:
    with pytest.raises(ModelDefinitionError, match="a query is needed"):

        class Dense(Repository, table=book):
            everything = scan(Order, index="GSI1")

    with pytest.raises(ModelDefinitionError, match="not in index 'GSI3'"):

        class Elsewhere(Repository, table=book):
            lines = scan(Line, index="GSI3")

    with pytest.raises(ModelDefinitionError, match="sparse index: name it"):

        class Whole(Repository, table=book):
            everything = scan(Order, index=None)  # type: ignore[arg-type]

    keys_only = Table("KeysOnly", indexes=[GSI("Q", pk="QPK", sk="QSK", projection="KEYS_ONLY")])

    class QueuedJob(Entity, table=keys_only, type="QJOB"):
        job_id: str
        state: State

        class Keys:
            pk = "QJOB#{job_id}"
            sk = "QJOB"
            Q = Index("QUEUE", "{job_id}", when={"state": State.OPEN})

    with pytest.raises(ModelDefinitionError, match="projects KEYS_ONLY"):

        class Queue(Repository, table=keys_only):
            queued = scan(QueuedJob, index="Q")


def test_explain_and_lint_name_the_scan() -> None:
    (row,) = [r for r in Book.explain() if r.pattern == "open_orders"]
    assert (row.operation, row.index, row.entity_types) == ("Scan", "GSI3", ("ORDER",))
    scans = {f.subject: f for f in check(Book) if f.code == "scan"}
    assert set(scans) == {"open_orders", "opened_orders"}
    assert all(f.severity == "info" and not f.fails for f in scans.values())
    assert "sparse index GSI3" in scans["open_orders"].message


# -- declarations ----------------------------------------------------------------------------


def test_scatter_declarations_are_checked() -> None:
    shelf = Table("Shelf", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Box(Entity, table=shelf, type="BOX"):
        box_id: str
        size: Literal[tuple(f"s{n}" for n in range(101))]  # type: ignore[valid-type]
        colour: str
        status: Status
        fragile: bool = False

        class Keys:
            pk = "BOX#{box_id}"
            sk = "BOX"
            GSI1 = ("COLOUR#{colour}#{size}", "{colour}#{status}")

    cases = [
        ("fragile", "finite domain"),  # bool: no key may hold it
        ("colour", "finite domain"),  # str: no known set of values
        ("status", "first in the sort key"),  # second in the sort key
        ("size", "at most 100"),  # 101 Literal values
        ("nothing", "has no such field"),
    ]
    for field, message in cases:
        with pytest.raises(ModelDefinitionError, match=message):

            class Boxes(Repository, table=shelf):
                boxes = query(Box, index="GSI1", scatter=field)

    with pytest.raises(ModelDefinitionError, match="max_concurrency"):

        class Eager(Repository, table=book):
            orders = query(Order, index="GSI1", scatter="status", max_concurrency=0)

    class Crate(Entity, table=shelf, type="CRATE"):
        box_id: str
        colour: str
        size: Literal["s1", "s2"]
        status: State

        class Keys:
            pk = "CRATE#{box_id}"
            sk = "CRATE"
            GSI1 = ("COLOUR#{colour}#{size}", "{status}#CRATE")

    with pytest.raises(ModelDefinitionError, match="different values"):

        class Mixed(Repository, table=shelf):
            both = collection(Box, Crate, index="GSI1", scatter="status")

    with pytest.raises(ModelDefinitionError, match="drop one="):

        class One(Repository, table=book):
            orders = query(Order, index="GSI1", scatter="status", one=True)  # type: ignore[call-overload]


def test_a_collection_sort_key_must_go_on_after_the_field() -> None:
    board = Table("Board", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Card(Entity, table=board, type="CARD"):
        lane: str
        card_id: str
        state: State

        class Keys:
            pk = "CARD#{card_id}"
            sk = "CARD"
            GSI1 = ("LANE#{lane}", "{state}")

    class Pin(Entity, table=board, type="PIN"):
        lane: str
        pin_id: str
        state: State

        class Keys:
            pk = "PIN#{pin_id}"
            sk = "PIN"
            GSI1 = ("LANE#{lane}", "{state}#PIN#{pin_id}")

    with pytest.raises(ModelDefinitionError, match="must go on after it"):

        class Lanes(Repository, table=board):
            lane = collection(Card, Pin, index="GSI1", scatter="state")


# -- native multi-attribute indexes ----------------------------------------------------------


class TenantScatter(Repository, table=native.tenants):
    every_status = query(native.Order, index="ByTenant", scatter="status")
    every_region = query(native.Order, index="ByTenant", scatter="region", order="desc")
    paperwork = collection(native.Order, native.Invoice, index="ByTenant", scatter="status")


def tenant_order(n: int, status: native.Status, minutes: int, region: str = "eu") -> native.Order:
    return native.Order(
        tenant_id="t1",
        region=region,
        order_id=f"o{n:02d}",
        status=status,
        created_at=T0 + timedelta(minutes=minutes),
        total=Decimal(n),
    )


def test_native_scatter_requests() -> None:
    repo = TenantScatter(client=None)
    queries = repo.every_status.params(tenant_id="t1", region="eu", created_at__gte=T0)["Queries"]
    assert len(queries) == 3
    for status, params in zip(native.Status, queries):
        names, values = params["ExpressionAttributeNames"], params["ExpressionAttributeValues"]
        assert params["KeyConditionExpression"] == (
            "#k0 = :k0 AND #k1 = :k1 AND #k2 = :k2 AND #k3 >= :k3"
        )
        assert [names[f"#k{i}"] for i in range(4)] == [
            "tenant_id",
            "region",
            "status",
            "created_at",
        ]
        assert values[":k2"] == {"S": status.value}
    with pytest.raises(PatternArgumentError, match="needs region="):
        repo.every_status.params(tenant_id="t1")
    with pytest.raises(PatternArgumentError, match="status is scattered"):
        repo.every_status.params(tenant_id="t1", region="eu", status=native.Status.PAID)
    (row,) = [r for r in TenantScatter.explain() if r.pattern == "every_region"]
    assert row.operation == "Query x2"


@MULTI
def test_native_scatter_first_in_the_sort_key_and_in_the_partition(
    make_repo: Any, recorder: Any
) -> None:
    repo: TenantScatter = make_repo(TenantScatter, native.tenants)
    statuses = list(native.Status)
    orders = [
        tenant_order(n, statuses[n % 3], minutes=n, region="eu" if n % 5 else "us")
        for n in range(15)
    ]
    repo.batch_put(orders)
    repo.create(
        native.Invoice(
            tenant_id="t1",
            region="eu",
            invoice_id="i1",
            status=native.Status.PAID,
            created_at=T0 + timedelta(minutes=2, seconds=30),
            number="INV-1",
        )
    )
    eu = [o.order_id for o in orders if o.region == "eu"]
    with recorder.expect(*sent_by(TenantScatter, "every_status")):
        page = repo.every_status(tenant_id="t1", region="eu", limit=4)
    assert ids(page) == eu[:4]
    assert ids(repo.every_status.all(tenant_id="t1", region="eu", cursor=page.cursor)) == eu[4:]
    since = repo.every_status.all(
        tenant_id="t1", region="eu", created_at__gte=T0 + timedelta(minutes=8)
    )
    assert ids(since) == [i for i in eu if int(i[1:]) >= 8]
    assert repo.every_status.count(tenant_id="t1", region="eu") == len(eu)
    with recorder.expect(*sent_by(TenantScatter, "every_region")):
        newest = repo.every_region(tenant_id="t1", limit=3)
    assert ids(newest) == ["o14", "o11", "o08"]  # by (status, created_at), newest first
    papers = repo.paperwork.all(tenant_id="t1", region="eu")
    assert [i.invoice_id for i in papers.all(native.Invoice)] == ["i1"]
    assert ids(papers.all(native.Order)) == eu
