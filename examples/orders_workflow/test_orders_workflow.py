"""The workflow over every local backend: one request per read, both order copies in one
transaction, the sparse pending queue, optimistic locking, unique emails and TTL expiry."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import NOW, Clock, readme_table, run_example_calls
from singletable.errors import (
    NotFound,
    TransactionCanceled,
    UniqueConstraintViolation,
    VersionConflict,
)

from .models import (
    Invite,
    LineItem,
    Membership,
    Order,
    OrderStatus,
    Role,
    Session,
    Team,
    User,
    UserOrder,
)
from .repository import EXAMPLE_CALLS, SESSION_LIFETIME, Workflow, seed

transactions = pytest.mark.requires("transactions")


@pytest.fixture
def repo(make_repo: Callable[..., Any], backend: Any) -> Workflow:
    workflow: Workflow = make_repo(Workflow)
    # dynalite has no TransactWriteItems: load the same entities with batches there.
    seed(workflow, bulk="transactions" not in backend.features)
    return workflow


def ids(orders: Any) -> list[str]:
    return [o.order_id for o in orders]


def raw_item(repo: Workflow, pk: str, sk: str) -> dict[str, Any]:
    response = repo.client.get_item(
        TableName=repo.table_name, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True
    )
    return response.get("Item", {})


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), Workflow)
    assert in_readme == printed


def test_example_calls_cover_every_pattern() -> None:
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(Workflow.patterns())


# -- reads ------------------------------------------------------------------------------------


def test_every_pattern_is_one_request(repo: Workflow, recorder: Any) -> None:
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)

    (ann,) = results["user"]
    assert isinstance(ann, User) and ann.email == "ann@example.com"
    assert ann.created == NOW and ann.updated == NOW  # CreatedAt/UpdatedAt follow the clock
    assert results["user_by_email"] == [ann]
    assert all(isinstance(o, UserOrder) for o in results["user_orders"])
    assert ids(results["user_orders"]) == ["o-302", "o-301"]  # newest first
    (order,) = results["order"]
    assert isinstance(order, Order)
    assert (order.total, order.version, order.status) == (Decimal("148"), 1, OrderStatus.PENDING)
    head, *lines = results["order_with_lines"]
    assert head == order
    assert [(type(line), line.sku) for line in lines] == [
        (LineItem, "sku-cable"),
        (LineItem, "sku-dock"),
    ]
    assert ids(results["pending_orders"]) == ["o-301", "o-303"]  # the queue, oldest first
    assert [type(e) for e in results["team_page"]] == [
        Team,
        Invite,
        Invite,
        Membership,
        Membership,
    ]
    assert [i.email for i in results["team_invites"]] == ["chen@example.com", "dana@example.com"]
    assert [(m.team_id, m.role) for m in results["user_teams"]] == [
        ("t-core", Role.OWNER),
        ("t-web", Role.MEMBER),
    ]
    (session,) = results["session"]
    assert isinstance(session, Session) and session.user_id == "u1"
    assert session.expires_at == NOW + timedelta(hours=9)
    assert [s.session_id for s in results["user_sessions"]] == ["s-ann-phone", "s-ann-laptop"]


def test_expiry_follows_the_repository_clock(repo: Workflow, clock: Clock, recorder: Any) -> None:
    """TTL deletion by DynamoDB lags (up to days); reads leave expired items out by the
    repository's clock, on every backend."""
    clock.now = NOW + timedelta(hours=3)  # dana's invite and Ann's phone session have expired
    with recorder.expect("Query"):
        invites = repo.team_invites(team_id="t-core")
    assert [i.email for i in invites] == ["chen@example.com"]
    with recorder.expect("Query"):
        page = repo.team_page(team_id="t-core")
    assert [i.email for i in page.all(Invite)] == ["chen@example.com"]
    with recorder.expect("GetItem"):
        assert repo.session(session_id="s-ann-phone") is None
    with recorder.expect("Query"):
        sessions = repo.user_sessions(user_id="u1")
    assert [s.session_id for s in sessions] == ["s-ann-laptop"]
    # The expired item is still stored (until DynamoDB deletes it), yet create() treats it as
    # absent: the session id can be issued again.
    assert raw_item(repo, "SESSION#s-ann-phone", "#SESSION")
    reissued = repo.create(
        Session(
            session_id="s-ann-phone",
            user_id="u1",
            started_at=clock.now,
            expires_at=clock.now + SESSION_LIFETIME,
        )
    )
    assert repo.session(session_id="s-ann-phone") == reissued
    clock.now = NOW + timedelta(days=8)
    assert list(repo.team_invites(team_id="t-core")) == []


def test_ttl_attribute_is_epoch_seconds(repo: Workflow) -> None:
    item = raw_item(repo, "SESSION#s-ann-laptop", "#SESSION")
    assert item["expires_at"] == {"N": str(int((NOW + timedelta(hours=9)).timestamp()))}
    assert "expires_at" not in raw_item(repo, "TEAM#t-core", "#TEAM")


def test_sessions_start_and_expire(repo: Workflow, clock: Clock, recorder: Any) -> None:
    ann = repo.user(user_id="u1")
    assert ann is not None
    with recorder.expect("PutItem"):
        session = repo.start_session(ann)
    assert repo.session(session_id=session.session_id) == session
    assert ids_of_sessions(repo) == [session.session_id, "s-ann-phone", "s-ann-laptop"]
    clock.now = NOW + SESSION_LIFETIME + timedelta(seconds=1)
    assert repo.session(session_id=session.session_id) is None
    assert ids_of_sessions(repo) == []


def ids_of_sessions(repo: Workflow) -> list[str]:
    return [s.session_id for s in repo.user_sessions(user_id="u1")]


# -- writes -----------------------------------------------------------------------------------


@transactions
def test_place_order_writes_both_copies_in_one_transaction(repo: Workflow, recorder: Any) -> None:
    order = Order(
        order_id="o-305",
        user_id="u2",
        created_at=NOW,
        status=OrderStatus.PENDING,
        total=Decimal("19.00"),
    )
    lines = [
        LineItem(
            order_id="o-305",
            sku="sku-cable",
            name="USB-C cable",
            quantity=2,
            unit_price=Decimal("9.50"),
        ),
    ]
    with recorder.expect("TransactWriteItems"):
        stored = repo.place_order(order, lines)
    request = recorder.params("TransactWriteItems")[0]
    assert request["ClientRequestToken"] == "place-o-305"
    assert [op["Put"]["Item"]["_type"]["S"] for op in request["TransactItems"]] == [
        "ORDER",
        "USER_ORDER",
        "LINE_ITEM",
    ]
    assert stored.version == 1
    assert repo.order(order_id="o-305") == stored
    assert ids(repo.user_orders(user_id="u2")) == ["o-305", "o-303"]
    assert ids(repo.pending_orders()) == ["o-301", "o-303", "o-305"]
    # Placing it again fails as a whole; nothing is duplicated.
    with pytest.raises(TransactionCanceled):
        repo.place_order(order.model_copy(update={"order_id": "o-301"}), [])
    assert ids(repo.user_orders(user_id="u2")) == ["o-305", "o-303"]


@transactions
def test_status_change_updates_both_copies_and_leaves_the_queue(
    repo: Workflow, recorder: Any
) -> None:
    order = repo.order(order_id="o-301")
    assert order is not None
    with recorder.expect("TransactWriteItems"):
        shipped = repo.set_status(order, OrderStatus.SHIPPED)
    assert repo.order(order_id="o-301") == shipped and shipped.version == 2
    assert [(o.order_id, o.status) for o in repo.user_orders(user_id="u1")] == [
        ("o-302", OrderStatus.SHIPPED),
        ("o-301", OrderStatus.SHIPPED),
    ]
    assert ids(repo.pending_orders()) == ["o-303"]
    item = raw_item(repo, "ORDER#o-301", "#ORDER")
    assert "GSI2PK" not in item and "GSI2SK" not in item  # out of the sparse index


@transactions
def test_optimistic_locking_refuses_a_stale_order(repo: Workflow) -> None:
    first = repo.order(order_id="o-303")
    second = repo.order(order_id="o-303")
    assert first is not None and second is not None
    repo.set_status(first, OrderStatus.PAID)  # version 1 -> 2
    with pytest.raises(TransactionCanceled) as caught:
        repo.set_status(second, OrderStatus.CANCELLED)  # still holds version 1
    (failed,) = [r for r in caught.value.reasons if r.failed]
    assert isinstance(failed.error, VersionConflict)
    with pytest.raises(VersionConflict, match="Order"):
        repo.update(second, status=OrderStatus.CANCELLED)
    current = repo.order(order_id="o-303")
    assert current is not None and (current.status, current.version) == (OrderStatus.PAID, 2)
    assert [o.status for o in repo.user_orders(user_id="u2")] == [OrderStatus.PAID]


@transactions
def test_emails_are_unique(repo: Workflow, recorder: Any) -> None:
    dup = User(user_id="u9", name="Not Ann", email="ann@example.com")
    with (
        recorder.expect("TransactWriteItems"),
        pytest.raises(UniqueConstraintViolation, match="email"),
    ):
        repo.register(dup)
    assert repo.user(user_id="u9") is None
    bob = repo.user(user_id="u2")
    assert bob is not None
    with pytest.raises(UniqueConstraintViolation):
        repo.change_email(bob, "ann@example.com")
    recorder.clear()
    moved = repo.change_email(bob, "bob@stone.example")
    # One write (user + new guard + old guard); the library then reads the user back.
    assert recorder.count("TransactWriteItems") == 1
    assert len(recorder.params("TransactWriteItems")[0]["TransactItems"]) == 3
    assert repo.user_by_email(email="bob@stone.example") == moved
    assert repo.user_by_email(email="bob@example.com") is None
    # The old address is free again.
    again = repo.register(User(user_id="u4", name="Another Bob", email="bob@example.com"))
    assert repo.user_by_email(email="bob@example.com") == again


@transactions
def test_team_membership_is_a_relationship_item(repo: Workflow, recorder: Any) -> None:
    with recorder.expect("TransactWriteItems"):
        joined = repo.join_team("t-web", "u2", Role.MEMBER)
    assert [m.team_id for m in repo.user_teams(user_id="u2")] == ["t-core", "t-web"]
    assert joined in repo.team_page(team_id="t-web").all(Membership)
    with pytest.raises(TransactionCanceled) as caught:
        repo.join_team("t-missing", "u2", Role.MEMBER)
    assert [r.kind for r in caught.value.reasons if r.failed] == ["condition_check"]
    assert repo.team_page(team_id="t-missing").items == []


@transactions
def test_invites_are_accepted_once_and_expire(repo: Workflow, clock: Clock) -> None:
    chen = repo.user(user_id="u3")
    (invite, dana_invite) = repo.team_invites(team_id="t-core")
    assert chen is not None and invite.email == chen.email
    membership = repo.accept_invite(invite, chen)
    assert membership.role is Role.MEMBER
    assert [m.user_id for m in repo.team_page(team_id="t-core").all(Membership)] == [
        "u1",
        "u2",
        "u3",
    ]
    with pytest.raises(TransactionCanceled) as caught:  # the invite is used up
        repo.accept_invite(invite, chen)
    assert any(isinstance(r.error, NotFound) for r in caught.value.reasons)

    dana = repo.register(User(user_id="u5", name="Dana", email="dana@example.com"))
    clock.now = NOW + timedelta(hours=3)  # past the invite's expires_at, not yet deleted
    with pytest.raises(TransactionCanceled):
        repo.accept_invite(dana_invite, dana)
    assert repo.user_teams(user_id="u5").items == []
    # A fresh invite works.
    repo.accept_invite(repo.invite("t-core", "dana@example.com", Role.MEMBER, "u1"), dana)
    assert [m.team_id for m in repo.user_teams(user_id="u5")] == ["t-core"]


def test_bulk_seed_is_the_same_data(make_repo: Callable[..., Any], recorder: Any) -> None:
    """``seed(bulk=True)`` stores the same entities as the transactional seed (minus the
    unique guards), 25 items per BatchWriteItem."""
    bulk: Workflow = make_repo(Workflow)
    with recorder.expect("BatchWriteItem", "BatchWriteItem"):
        seed(bulk, bulk=True)
    results = run_example_calls(bulk, recorder, EXAMPLE_CALLS)
    assert ids(results["pending_orders"]) == ["o-301", "o-303"]
    assert [o.version for o in results["order"]] == [1]
    assert results["session"][0].expires_at == datetime(2026, 6, 15, 21, tzinfo=timezone.utc)
