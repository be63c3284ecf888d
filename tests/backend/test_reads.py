"""The seeds' read patterns over every backend: one request each, typed results, right order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from singletable import query
from singletable._paging import KeyRef, Page
from singletable.errors import (
    InvalidCursor,
    KeyTemplateError,
    MultipleResultsError,
    PatternArgumentError,
    TableNotFound,
)
from tests.conftest import NOW
from tests.models import (
    Customer,
    Leaderboard,
    Match,
    Order,
    OrderDetails,
    OrderLine,
    OrderNote,
    Player,
    SeasonRating,
    Shop,
    Status,
    shop,
)

DAY = timedelta(days=1)
BASE = datetime(2026, 6, 1, 9, 30, tzinfo=timezone.utc)


def put_raw(repo: Any, entity: Any) -> None:
    """Store an entity with the raw client (no library write path involved)."""
    repo.client.put_item(TableName=repo.table_name, Item=entity.to_item())


def order(i: int, customer: str = "42", status: Status = Status.PENDING, **kw: Any) -> Order:
    fields: dict[str, Any] = {
        "customer_id": customer,
        "order_id": f"A{i:03d}",
        "created_at": BASE + i * DAY,
        "status": status,
        "total": Decimal("10.50") + i,
        "customer_name": "Ann",
    }
    return Order(**{**fields, **kw})


def test_get_customer(shop_repo: Shop, recorder: Any) -> None:
    put_raw(shop_repo, Customer(customer_id="42", name="Ann", email="ann@example.com"))
    with recorder.expect("GetItem"):
        found = shop_repo.customer(customer_id="42")
    assert isinstance(found, Customer)
    assert found.name == "Ann"
    with recorder.expect("GetItem"):
        assert shop_repo.customer(customer_id="nobody") is None


def test_customer_orders_newest_first(shop_repo: Shop, recorder: Any) -> None:
    put_raw(shop_repo, Customer(customer_id="42", name="Ann", email="ann@example.com"))
    for i in range(5):
        put_raw(shop_repo, order(i))
    put_raw(shop_repo, order(9, customer="43"))
    with recorder.expect("Query"):
        page = shop_repo.customer_orders(customer_id="42")
    assert isinstance(page, Page)
    assert [o.order_id for o in page] == ["A004", "A003", "A002", "A001", "A000"]
    assert all(isinstance(o, Order) for o in page)
    assert page.cursor is None


def test_orders_between_two_dates_inclusive(shop_repo: Shop, recorder: Any) -> None:
    for i in range(7):
        put_raw(shop_repo, order(i))
    low, high = BASE + 2 * DAY, BASE + 4 * DAY  # exactly the created_at of A002 and A004
    with recorder.expect("Query"):
        page = shop_repo.orders_oldest_first(customer_id="42", created_at__between=(low, high))
    assert [o.order_id for o in page] == ["A002", "A003", "A004"]
    with recorder.expect("Query"):
        after = shop_repo.orders_oldest_first(customer_id="42", created_at__gt=low)
    assert [o.order_id for o in after] == ["A003", "A004", "A005", "A006"]
    with recorder.expect("Query"):
        upto = shop_repo.orders_oldest_first(customer_id="42", created_at__lte=low)
    assert [o.order_id for o in upto] == ["A000", "A001", "A002"]
    before = shop_repo.orders_oldest_first(customer_id="42", created_at__lt=low)
    assert [o.order_id for o in before] == ["A000", "A001"]
    since = shop_repo.orders_oldest_first(customer_id="42", created_at__gte=high)
    assert [o.order_id for o in since] == ["A004", "A005", "A006"]


def test_order_with_lines_is_one_collection_query(shop_repo: Shop, recorder: Any) -> None:
    put_raw(
        shop_repo, OrderDetails(order_id="O1", shipping_address="1 Main St", payment_method="card")
    )
    for product, qty in (("prod-b", 2), ("prod-a", 1), ("prod-c", 5)):
        put_raw(
            shop_repo,
            OrderLine(
                order_id="O1",
                product_id=product,
                quantity=qty,
                price=Decimal("3.5"),
                product_name=product.upper(),
            ),
        )
    put_raw(
        shop_repo,
        OrderLine(
            order_id="O2", product_id="prod-z", quantity=1, price=Decimal(1), product_name="Z"
        ),
    )
    with recorder.expect("Query"):
        result = shop_repo.order_with_lines(order_id="O1")
    details = result.one(OrderDetails)
    assert details is not None and details.payment_method == "card"
    assert [line.product_id for line in result.all(OrderLine)] == ["prod-a", "prod-b", "prod-c"]


def test_orders_by_status_on_gsi1(shop_repo: Shop, recorder: Any) -> None:
    for i in range(6):
        put_raw(shop_repo, order(i, status=Status.SHIPPED if i % 2 else Status.PENDING))
    with recorder.expect("Query"):
        shipped = shop_repo.orders_by_status(status=Status.SHIPPED)
    assert [o.order_id for o in shipped] == ["A001", "A003", "A005"]
    params = shop_repo.orders_by_status.params(status="SHIPPED")
    assert params["IndexName"] == "GSI1"
    pending = shop_repo.pending_orders()
    assert [o.order_id for o in pending] == ["A000", "A002", "A004"]


def test_customer_by_email_one(shop_repo: Shop, recorder: Any) -> None:
    put_raw(shop_repo, Customer(customer_id="42", name="Ann", email="ann@example.com"))
    with recorder.expect("Query"):
        found = shop_repo.customer_by_email(email="ann@example.com")
    assert isinstance(found, Customer) and found.customer_id == "42"
    assert shop_repo.customer_by_email.params(email="x@y.z")["Limit"] == 2
    with recorder.expect("Query"):
        assert shop_repo.customer_by_email(email="nobody@example.com") is None
    # A GSI does not enforce uniqueness: two items with one email (written around the guard).
    put_raw(shop_repo, Customer(customer_id="43", name="Bob", email="ann@example.com"))
    with recorder.expect("Query"), pytest.raises(MultipleResultsError, match="more than one"):
        shop_repo.customer_by_email(email="ann@example.com")


def test_season_leaderboard_sorts_numerically(game_repo: Leaderboard, recorder: Any) -> None:
    for player, rating in (("u1", 9), ("u2", 1842), ("u3", 950), ("u4", 1000)):
        put_raw(game_repo, SeasonRating(player_id=player, season="2026-Q2", rating=rating))
    put_raw(game_repo, SeasonRating(player_id="u5", season="2026-Q1", rating=5000))
    with recorder.expect("Query"):
        top = game_repo.season_top(season="2026-Q2", limit=3)
    assert [r.rating for r in top] == [1842, 1000, 950]
    assert top.cursor is not None
    with recorder.expect("Query"):
        rest = game_repo.season_top(season="2026-Q2", limit=3, cursor=top.cursor)
    assert [r.rating for r in rest] == [9]
    assert rest.cursor is None
    above = game_repo.season_top(season="2026-Q2", rating__gte=950)
    assert [r.rating for r in above] == [1842, 1000, 950]


def test_player_by_handle_and_recent_matches(game_repo: Leaderboard, recorder: Any) -> None:
    put_raw(game_repo, Player(player_id="u8231", handle="nighthawk", region="eu"))
    for hour, result in ((11, "loss"), (14, "win"), (9, "win")):
        put_raw(
            game_repo,
            Match(
                player_id="u8231",
                played_at=datetime(2026, 6, 23, hour, tzinfo=timezone.utc),
                result=result,
                rating_delta=18 if result == "win" else -15,
                map_id="m1",
            ),
        )
    with recorder.expect("Query"):
        player = game_repo.player_by_handle(handle="nighthawk")
    assert isinstance(player, Player) and player.player_id == "u8231"
    with recorder.expect("GetItem"):
        assert game_repo.player(player_id="u8231") == player
    with recorder.expect("Query"):
        matches = game_repo.recent_matches(player_id="u8231")
    assert [m.played_at.hour for m in matches] == [14, 11, 9]
    with recorder.expect("Query"):
        wins = game_repo.wins(player_id="u8231")
    assert [m.played_at.hour for m in wins] == [14, 9]
    assert "#fn0" in game_repo.wins.params(player_id="u8231")["FilterExpression"]


def test_entity_isolation_skips_foreign_items(shop_repo: Shop, recorder: Any) -> None:
    """Notes share the orders' sort-key prefix; order queries never return or choke on them."""
    for i in range(4):
        put_raw(shop_repo, order(i))
        put_raw(
            shop_repo,
            OrderNote(customer_id="42", created_at=BASE + i * DAY, note_id=f"n{i}", text="hi"),
        )
    put_raw(shop_repo, Customer(customer_id="42", name="Ann", email="ann@example.com"))
    seen = []
    cursor = None
    while True:
        with recorder.expect("Query"):
            page = shop_repo.orders_oldest_first(customer_id="42", limit=1, cursor=cursor)
        seen.extend(o.order_id for o in page)
        assert all(isinstance(o, Order) for o in page)
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == ["A000", "A001", "A002", "A003"]
    home = shop_repo.customer_home(customer_id="42")
    assert len(home.all(Order)) == 4 and home.one(Customer) is not None
    assert len(home) == 5  # notes are not part of this collection


def test_filter_with_param(shop_repo: Shop, recorder: Any) -> None:
    for i in range(5):
        put_raw(shop_repo, order(i))
    with recorder.expect("Query"):
        big = shop_repo.big_orders(customer_id="42", min_total=Decimal("13"))
    assert [o.order_id for o in big] == ["A003", "A004"]
    with pytest.raises(KeyTemplateError, match="min_total"):
        shop_repo.big_orders.params(customer_id="42")


def test_keys_only_and_hydrate(shop_repo: Shop, recorder: Any) -> None:
    for i in range(3):
        put_raw(shop_repo, order(i))
    with recorder.expect("Query"):
        refs = shop_repo.order_refs(order_id="A001")
    assert len(refs) == 1
    ref = refs.items[0]
    assert isinstance(ref, KeyRef) and ref.entity is Order
    assert ref.fields["order_id"] == "A001"
    with recorder.expect("BatchGetItem"):
        [fetched] = shop_repo.batch_get([ref])
    assert fetched == order(1)
    with recorder.expect("Query", "BatchGetItem"):
        hydrated = shop_repo.order_by_id(order_id="A002")
    assert [o.order_id for o in hydrated] == ["A002"]
    rows = {row.pattern: row for row in Shop.explain()}
    assert rows["order_by_id"].operation == "Query+BatchGetItem"
    assert rows["order_by_id"].requests == 2  # what the call above sent


def test_expired_items_are_never_returned(shop_repo: Shop, recorder: Any, clock: Any) -> None:
    put_raw(shop_repo, order(0, expires_at=NOW - timedelta(hours=1)))
    put_raw(shop_repo, order(1, expires_at=NOW + timedelta(hours=1)))
    put_raw(shop_repo, order(2))
    assert [o.order_id for o in shop_repo.orders_oldest_first(customer_id="42")] == [
        "A001",
        "A002",
    ]
    assert shop_repo.orders_oldest_first.count(customer_id="42") == 2
    assert len(shop_repo.customer_home(customer_id="42").all(Order)) == 2
    assert [o.order_id for o in shop_repo.orders_oldest_first.all(customer_id="42")] == [
        "A001",
        "A002",
    ]
    first = shop_repo.orders_oldest_first.first(customer_id="42")
    assert first is not None and first.order_id == "A001"
    clock.now = NOW + timedelta(hours=2)
    assert [o.order_id for o in shop_repo.orders_oldest_first(customer_id="42")] == ["A002"]
    refs = [
        (Order, {"customer_id": "42", "created_at": BASE + i * DAY, "order_id": f"A{i:03d}"})
        for i in range(3)
    ]
    assert [o.order_id for o in shop_repo.batch_get(refs)] == ["A002"]


def test_count_and_first(shop_repo: Shop, recorder: Any) -> None:
    for i in range(5):
        put_raw(shop_repo, order(i))
    put_raw(shop_repo, OrderNote(customer_id="42", created_at=BASE, note_id="n", text="x"))
    with recorder.expect("Query"):
        assert shop_repo.orders_oldest_first.count(customer_id="42") == 5
    params = recorder.calls[0][1]
    assert params["Select"] == "COUNT"
    first = shop_repo.customer_orders.first(customer_id="42")
    assert first is not None and first.order_id == "A004"
    assert shop_repo.customer_orders.first(customer_id="nobody") is None


def test_cursor_misuse_raises_invalid_cursor(make_repo: Any) -> None:
    from tests.models import shop

    repo: Shop = make_repo(Shop, shop)
    for i in range(3):
        put_raw(repo, order(i))
        put_raw(repo, order(i, customer="43"))
    page = repo.orders_oldest_first(customer_id="42", limit=1)
    assert page.cursor is not None
    with pytest.raises(InvalidCursor):
        repo.orders_oldest_first(customer_id="43", limit=1, cursor=page.cursor)
    with pytest.raises(InvalidCursor):
        repo.customer_orders(customer_id="42", limit=1, cursor=page.cursor)
    with pytest.raises(InvalidCursor):
        repo.orders_oldest_first(customer_id="42", cursor="not-a-cursor")
    with pytest.raises(InvalidCursor):
        repo.orders_oldest_first(customer_id="42", cursor=page.cursor[:-3] + "abc")

    signed = make_repo(Shop, shop, cursor_secret=["new", "old"])
    old = make_repo(Shop, shop, cursor_secret="old")
    other = make_repo(Shop, shop, cursor_secret="other")
    token = old.orders_oldest_first(customer_id="42", limit=1).cursor
    assert token is not None
    # Rotation: signed with "old", accepted by a repository that signs with "new".
    assert [
        o.order_id for o in signed.orders_oldest_first(customer_id="42", limit=1, cursor=token)
    ] == ["A001"]
    with pytest.raises(InvalidCursor):
        other.orders_oldest_first(customer_id="42", limit=1, cursor=token)
    with pytest.raises(InvalidCursor):
        signed.orders_oldest_first(customer_id="42", limit=1, cursor=page.cursor)
    head, payload, sig = token.split(".")
    tampered = f"{head}.{payload[:-2]}{'A' if payload[-2] != 'A' else 'B'}{payload[-1]}.{sig}"
    with pytest.raises(InvalidCursor):
        old.orders_oldest_first(customer_id="42", limit=1, cursor=tampered)
    with pytest.raises(InvalidCursor):
        repo.orders_oldest_first(customer_id="42", limit=1, cursor=token)


def test_missing_table_is_table_not_found(client: Any) -> None:
    repo = Shop(client=client, table_name="no-such-table")
    with pytest.raises(TableNotFound, match="no-such-table"):
        repo.customer(customer_id="42")


def test_reserved_words_and_unicode_values(game_repo: Leaderboard) -> None:
    put_raw(game_repo, Player(player_id="ü-𝄞-1", handle="名前", region="eu"))
    player = game_repo.player_by_handle(handle="名前")
    assert player is not None and player.player_id == "ü-𝄞-1"
    assert game_repo.player(player_id="ü-𝄞-1") == player


class DeclaredShop(Shop):
    @query(Order, order="desc")
    def recent(self, *, customer_id: str, limit: int | None = None) -> Page[Order]:
        """Never run: the signature is the declaration."""
        raise NotImplementedError


def test_unknown_keywords_are_refused_before_sending(
    make_repo: Any, game_repo: Leaderboard, recorder: Any
) -> None:
    """Issue 11, point 8: an unknown call keyword on any pattern kind is a pattern-argument
    error (also a TypeError) naming it, and nothing is sent."""
    repo: DeclaredShop = make_repo(DeclaredShop, shop)
    put_raw(repo, Customer(customer_id="42", name="Ann", email="ann@example.com"))
    for i in range(3):
        put_raw(repo, order(i))
    calls: list[tuple[Any, str]] = [
        (lambda: repo.customer(customer_id="42", colour="red"), "colour"),
        (lambda: repo.customer(custmer_id="42"), "custmer_id"),
        (lambda: repo.customer(customer_id="42", where=None), "where"),
        (lambda: repo.customer_orders(customer_id="42", limt=5), "limt"),
        (lambda: repo.customer_orders.first(customer_id="42", limt=5), "limt"),
        (lambda: repo.customer_orders.count(customer_id="42", limt=5), "limt"),
        (lambda: list(repo.customer_orders.pages(customer_id="42", limt=5)), "limt"),
        (lambda: list(repo.customer_orders.all(customer_id="42", limt=5)), "limt"),
        (lambda: repo.customer_by_email(email="ann@example.com", colour="red"), "colour"),
        (lambda: repo.order_refs(order_id="A000", colour="red"), "colour"),
        (lambda: repo.order_by_id(order_id="A000", colour="red"), "colour"),
        (lambda: repo.customer_home(customer_id="42", order_id="A000"), "order_id"),
        (lambda: repo.customer_home.all(customer_id="42", colour="red"), "colour"),
        (lambda: repo.big_orders(customer_id="42", min_totl=Decimal(1)), "min_totl"),
        (lambda: repo.recent(customer_id="42", limt=5), "limt"),
        (lambda: repo.recent.first(customer_id="42", limt=5), "limt"),
        (lambda: game_repo.season_top(season="s1", rating__begins_with=5), "rating__begins_with"),
    ]
    for call, keyword in calls:
        with recorder.expect(), pytest.raises(PatternArgumentError) as excinfo:
            call()
        err = excinfo.value
        assert isinstance(err, TypeError) and err.code == "pattern-argument"
        assert err.key == keyword and repr(keyword) in str(err)
    # the valid calls still work (first's own max_pages is not a signature keyword)
    with recorder.expect("Query"):
        newest = repo.recent.first(customer_id="42", max_pages=2)
    assert newest is not None and newest.order_id == "A002"
    with recorder.expect("Query"):
        assert [o.order_id for o in repo.recent(customer_id="42", limit=2)] == ["A002", "A001"]
