"""Writes over the backends: the seed workflows, key maintenance, markers, refusals.

Every refusal asserts the exception, the culprit in its message and that nothing was written
(the table content is compared before and after).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moto_fixtures.backends import RETURN_VALUES_ON_CCF

from singletable import Attr, Entity, Repository, Table, Version, get
from singletable._entity import spec_of
from singletable.errors import (
    AlreadyExists,
    ConditionFailed,
    InvalidRequestError,
    ItemTooLargeError,
    KeyTemplateError,
    NotFound,
    TransactionCanceled,
    UniqueConstraintViolation,
    VersionConflict,
)
from tests.backend.test_reads import BASE, DAY, order
from tests.conftest import NOW
from tests.models import (
    Customer,
    Invite,
    Order,
    OrderLine,
    Product,
    Profile,
    Status,
    Store,
    TeamMember,
    UserTeam,
)

transactions = pytest.mark.requires("transactions")


def table_items(repo: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """Every stored item by (PK, SK), read with the raw client."""
    items: dict[tuple[str, str], dict[str, Any]] = {}
    kwargs: dict[str, Any] = {"TableName": repo.table_name, "ConsistentRead": True}
    while True:
        page = repo.client.scan(**kwargs)
        for item in page["Items"]:
            items[(item["PK"]["S"], item["SK"]["S"])] = item
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def written_attributes(params: dict[str, Any]) -> set[str]:
    """The attributes an UpdateItem's SET/REMOVE/ADD/DELETE clauses write (condition names have
    placeholders of their own, ``#c...``, so they never appear in the UpdateExpression)."""
    names = params.get("ExpressionAttributeNames", {})
    tokens = params["UpdateExpression"].replace(",", " ").split()
    return {names[token] for token in tokens if token in names}


def entity_specs(table: Any) -> dict[str, Any]:
    """Type tag -> spec of every entity of tests.models declared on ``table``."""
    from tests import models

    specs = {}
    for value in vars(models).values():
        if isinstance(value, type) and issubclass(value, Entity) and value is not Entity:
            spec = spec_of(value)
            if spec.table is table:
                specs[spec.type_name] = spec
    return specs


def stale_index_keys(repo: Any) -> list[str]:
    """Items whose stored key attributes differ from what ``to_item`` derives from the entity
    they decode to (a stale, half-written or missing index entry), as text."""
    specs = entity_specs(repo.table)
    key_attrs = repo.table.key_attributes
    stale = []
    items = repo.client.scan(TableName=repo.table_name, ConsistentRead=True)["Items"]
    for item in items:
        spec = specs.get(item[repo.table.type_attribute]["S"])
        if spec is None:
            continue  # guard items
        derived = spec.to_item(spec.from_item(item))
        stored = {a: v for a, v in item.items() if a in key_attrs}
        expected = {a: v for a, v in derived.items() if a in key_attrs}
        if stored != expected:
            stale.append(f"{spec.name}: stored {stored}, derived {expected}")
    return stale


def assert_no_stale_index_keys(repo: Any) -> None:
    assert stale_index_keys(repo) == []


def product(pid: str = "p1", stock: int = 5) -> Product:
    return Product(
        product_id=pid, name=pid.upper(), category="tools", price=Decimal("9.99"), stock=stock
    )


def line(order_id: str, pid: str, quantity: int) -> OrderLine:
    return OrderLine(
        order_id=order_id,
        product_id=pid,
        quantity=quantity,
        price=Decimal("9.99"),
        product_name=pid.upper(),
    )


# -- seed workflows ---------------------------------------------------------------------------


@transactions
def test_place_order_is_one_transaction(store: Store, recorder: Any) -> None:
    store.put(product("p1", stock=5))
    store.put(product("p2", stock=1))
    new = order(1)
    with recorder.expect("TransactWriteItems"):
        store.place_order(new, [line(new.order_id, "p1", 2), line(new.order_id, "p2", 1)])
    request = recorder.calls[0][1]
    assert len(request["TransactItems"]) == 5
    assert 1 <= len(request["ClientRequestToken"]) <= 36
    assert "attribute_not_exists" in request["TransactItems"][0]["Put"]["ConditionExpression"]
    assert store.product(product_id="p1").stock == 3  # type: ignore[union-attr]
    assert store.product(product_id="p2").stock == 0  # type: ignore[union-attr]
    assert [o.order_id for o in store.customer_orders(customer_id="42")] == ["A001"]
    assert len(store.order_with_lines(order_id="A001").all(OrderLine)) == 2


@transactions
def test_insufficient_stock_cancels_everything(store: Store, recorder: Any) -> None:
    store.put(product("p1", stock=5))
    store.put(product("p2", stock=1))
    before = table_items(store)
    new = order(2)
    with recorder.expect("TransactWriteItems"), pytest.raises(TransactionCanceled) as caught:
        store.place_order(new, [line(new.order_id, "p1", 2), line(new.order_id, "p2", 3)])
    failed = [r for r in caught.value.reasons if r.failed]
    assert [(r.index, r.kind, r.entity_type) for r in failed] == [(4, "update", "PRODUCT")]
    assert failed[0].code == "ConditionalCheckFailed"
    assert "PRODUCT#p2" in failed[0].key
    assert isinstance(failed[0].error, ConditionFailed)
    assert len(caught.value.reasons) == 5
    assert [r.kind for r in caught.value.reasons] == [
        "create",
        "create",
        "update",
        "create",
        "update",
    ]
    assert not caught.value.retryable
    assert "PRODUCT" in str(caught.value)
    assert table_items(store) == before


@transactions
def test_team_membership_two_items_one_transaction(store: Store, recorder: Any) -> None:
    with recorder.expect("TransactWriteItems"):
        store.join_team("u1", "t1", "admin")
    assert [m.user_id for m in store.team_members(team_id="t1")] == ["u1"]
    assert [t.team_id for t in store.user_teams(user_id="u1")] == ["t1"]
    with pytest.raises(TransactionCanceled) as caught:
        store.join_team("u1", "t1", "member")
    assert isinstance(caught.value.reasons[0].error, AlreadyExists)


def test_shipping_moves_order_between_index_partitions(store: Store, recorder: Any) -> None:
    placed = store.create(order(3))
    assert [o.order_id for o in store.pending_orders()] == ["A003"]
    with recorder.expect("UpdateItem"):
        shipped = store.update(placed, status=Status.SHIPPED)
    assert shipped.status is Status.SHIPPED
    assert list(store.pending_orders()) == []
    assert [o.order_id for o in store.orders_by_status(status=Status.SHIPPED)] == ["A003"]
    assert list(store.orders_by_status(status=Status.PENDING)) == []
    item = table_items(store)[
        ("CUSTOMER#42", f"ORDER#{placed.created_at:%Y-%m-%dT%H:%M:%S.%fZ}#A003")
    ]
    assert "GSI2PK" not in item and "GSI2SK" not in item
    assert item["GSI1PK"] == {"S": "STATUS#SHIPPED"}
    # Back to pending: the sparse index attributes come back.
    store.update(shipped, status=Status.PENDING)
    assert [o.order_id for o in store.pending_orders()] == ["A003"]
    # The keyword form knows every field feeding GSI1/GSI2 here (status alone + keys).
    store.update(
        Order,
        customer_id="42",
        created_at=placed.created_at,
        order_id="A003",
        set={"status": "SHIPPED"},
    )
    assert list(store.pending_orders()) == []


# -- single-item semantics --------------------------------------------------------------------


def test_create_put_read_back_identity(store: Store, recorder: Any) -> None:
    with recorder.expect("PutItem"):
        stored = store.create(order(4, expires_at=NOW + timedelta(days=1, microseconds=123)))
    assert stored.expires_at == NOW + timedelta(days=1)  # TTL stored in whole seconds
    read = store.orders_oldest_first(customer_id="42").items[0]
    assert read.model_dump() == stored.model_dump()
    with pytest.raises(AlreadyExists, match="CUSTOMER#42"):
        store.create(order(4))
    replaced = store.put(order(4, status=Status.CANCELLED))
    assert store.orders_oldest_first(customer_id="42").items[0] == replaced


def test_failed_write_is_classified_in_one_request(store: Store, recorder: Any) -> None:
    """ReturnValuesOnConditionCheckFailure returns the stored item with the failure, which
    tells AlreadyExists/VersionConflict/ConditionFailed apart without a second request."""
    stored = store.create(order(4))
    with recorder.expect("PutItem"), pytest.raises(AlreadyExists) as caught:
        store.create(order(4))
    assert caught.value.item == stored


ledger = Table("Ledger")


class Account(Entity, table=ledger, type="ACCOUNT"):
    account_id: str
    owner: str
    balance: int = 0
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "ACCOUNT#{account_id}"
        sk = "ACCOUNT"


class Ledger(Repository, table=ledger):
    account = get(Account)


@pytest.mark.twin("sync", "async")  # what dynalite answers, on both twins
def test_a_failure_without_the_item_is_classified_from_one_consistent_read(
    make_repo: Any, backend: Any, recorder: Any
) -> None:
    """A failed write that brings no item back (none is stored, or the backend never returns
    it: dynalite) does not prove the item absent: one consistent GetItem classifies it, so the
    error class is the same on every backend."""
    repo: Ledger = make_repo(Ledger, ledger)
    read = [] if backend.supports(RETURN_VALUES_ON_CCF) else ["GetItem"]
    first = repo.create(Account(account_id="a1", owner="ann"))
    current = repo.update(first, balance=5)  # version 2 now
    with recorder.expect("UpdateItem", *read), pytest.raises(VersionConflict) as stale:
        repo.update(first, balance=7)  # made from version 1
    assert "is at version 2, not 1" in stale.value.message and stale.value.item == current
    with recorder.expect("PutItem", *read), pytest.raises(VersionConflict, match="version 2"):
        repo.put(first.model_copy(update={"owner": "bob"}))
    with recorder.expect("PutItem", *read), pytest.raises(AlreadyExists) as exists:
        repo.create(Account(account_id="a1", owner="cy"), condition=Attr("owner").eq("ann"))
    assert exists.value.item == current
    with recorder.expect("UpdateItem", *read), pytest.raises(ConditionFailed) as failed:
        repo.update(Account, account_id="a1", add={"balance": -9}, condition=Attr("balance").gte(9))
    assert not isinstance(failed.value, NotFound) and failed.value.item == current
    with recorder.expect("DeleteItem", *read), pytest.raises(ConditionFailed) as kept:
        repo.delete(Account, account_id="a1", must_exist=True, condition=Attr("owner").eq("x"))
    assert not isinstance(kept.value, NotFound)
    # no item at all: nothing comes back on any backend, so the read happens everywhere
    with recorder.expect("UpdateItem", "GetItem"), pytest.raises(NotFound, match="a2"):
        repo.update(Account, account_id="a2", set={"owner": "dee"})
    assert recorder.params("GetItem")[0]["ConsistentRead"] is True
    with recorder.expect("DeleteItem", "GetItem"), pytest.raises(NotFound, match="a2"):
        repo.delete(Account, account_id="a2", must_exist=True)
    assert repo.account(account_id="a1") == current  # nothing was written


def test_create_over_expired_item_succeeds(store: Store, clock: Any) -> None:
    store.create(order(5, expires_at=NOW + timedelta(minutes=1)))
    clock.now = NOW + timedelta(minutes=5)
    again = store.create(order(5, total=Decimal(1)))
    assert again.total == 1 and again.expires_at is None
    assert [o.total for o in store.orders_oldest_first(customer_id="42")] == [1]


def test_update_must_exist_and_upsert(store: Store, clock: Any) -> None:
    key = {"customer_id": "42", "created_at": BASE, "order_id": "A000"}
    before = table_items(store)
    with pytest.raises(NotFound, match="A000"):
        store.update(Order, **key, set={"customer_name": "Bob"})
    assert table_items(store) == before
    with pytest.raises(InvalidRequestError, match="status"):
        store.update(Order, **key, set={"customer_name": "Bob"}, upsert=True)
    made = store.update(
        Order,
        **key,
        set={"customer_name": "Bob", "status": "PENDING", "total": Decimal(3)},
        upsert=True,
    )
    assert made.customer_name == "Bob" and made.total == 3
    assert [o.order_id for o in store.pending_orders()] == ["A000"]
    # An expired item counts as absent for update's must-exist check.
    expiring = store.create(order(7, expires_at=NOW + timedelta(minutes=1)))
    clock.now = NOW + timedelta(minutes=2)
    with pytest.raises(NotFound):
        store.update(expiring, customer_name="late")


def test_update_keyword_form_operators(store: Store) -> None:
    store.put(product("p1", stock=5))
    updated = store.update(Product, product_id="p1", add={"stock": 3}, set={"name": "Drill"})
    assert (updated.stock, updated.name) == (8, "Drill")
    with pytest.raises(ConditionFailed) as caught:
        store.update(Product, product_id="p1", add={"stock": -10}, condition=Attr("stock").gte(10))
    assert caught.value.item == updated  # the current item, decoded


def test_update_refuses_stale_or_partial_keys(store: Store) -> None:
    placed = store.create(order(8))
    before = table_items(store)
    # GSI1 and GSI2 sort keys need created_at and order_id, which the keys give; the pk needs
    # status. Changing created_at is a primary-key change: refused, pointing to move().
    with pytest.raises(InvalidRequestError, match=r"created_at.*move"):
        store.update(placed, created_at=BASE)
    with pytest.raises(InvalidRequestError, match="order_id"):
        store.update(
            Order,
            customer_id="42",
            created_at=placed.created_at,
            order_id="A008",
            set={"order_id": "B"},
        )
    assert table_items(store) == before


def test_update_keyword_form_rewrites_only_the_attributes_it_changes(
    store: Store, recorder: Any
) -> None:
    from tests.models import Parcel

    store.create(Parcel(customer_id="42", parcel_id="x", carrier="ups", shipped_at=BASE, weight=3))
    # GSI1 = ("CARRIER#{carrier}", "SHIPPED#{shipped_at}"): a new carrier rewrites GSI1PK only,
    # so the update does not need shipped_at.
    with recorder.expect("UpdateItem"):
        moved = store.update(Parcel, customer_id="42", parcel_id="x", set={"carrier": "dhl"})
    assert moved.carrier == "dhl"
    assert written_attributes(recorder.params("UpdateItem")[0]) == {"carrier", "GSI1PK"}
    assert [p.parcel_id for p in store.parcels_by_carrier(carrier="dhl", min_weight=0)] == ["x"]
    assert list(store.parcels_by_carrier(carrier="ups", min_weight=0)) == []
    assert_no_stale_index_keys(store)


def test_update_keyword_form_needs_every_field_of_a_rewritten_attribute(
    store: Store, recorder: Any
) -> None:
    from tests.models import Job

    store.create(Job(job_id="j1", status=Status.SHIPPED, owner="ann", queue="q1"))
    before = table_items(store)
    # GSI1PK = QUEUE#{queue}#OWNER#{owner}: a new owner needs the queue too.
    with recorder.expect(), pytest.raises(KeyTemplateError, match="must also know queue") as caught:
        store.update(Job, job_id="j1", set={"owner": "bob", "status": Status.SHIPPED})
    assert caught.value.key == "queue" and "GSI1PK" in str(caught.value)
    with recorder.expect(), pytest.raises(KeyTemplateError, match=r"'priority'.*add="):
        store.update(Job, job_id="j1", set={"status": Status.SHIPPED}, add={"priority": 1})
    assert table_items(store) == before
    store.update(Job, job_id="j1", set={"owner": "bob", "queue": "q2", "status": Status.SHIPPED})
    assert_no_stale_index_keys(store)


def test_stale_instance_update_raises_instead_of_writing_a_stale_key(store: Store) -> None:
    from tests.models import Job

    first = store.create(Job(job_id="j2", status=Status.SHIPPED, owner="ann", queue="q1"))
    store.update(first, queue="q2")  # another writer moved the job to another queue
    before = table_items(store)
    with pytest.raises(ConditionFailed):
        store.update(first, owner="bob")  # would derive GSI1PK from the stale queue
    assert table_items(store) == before
    # GSI1SK reads only the priority (and the key): nothing stale to derive it from.
    assert store.update(first, priority=5).queue == "q2"
    assert_no_stale_index_keys(store)


def test_delete_returns_old_item(store: Store, recorder: Any) -> None:
    placed = store.create(order(9))
    with recorder.expect("DeleteItem"):
        old = store.delete(placed)
    assert old == placed
    assert (
        store.delete(Order, customer_id="42", created_at=placed.created_at, order_id="A009") is None
    )
    with pytest.raises(NotFound, match="A009"):
        store.delete(placed, must_exist=True)


def test_items_never_mutate_their_input(store: Store) -> None:
    original = order(10)
    snapshot = original.model_dump()
    store.create(original)
    store.update(original, customer_name="changed")
    assert original.model_dump() == snapshot


def test_oversize_item_refused_before_sending(store: Store, recorder: Any) -> None:
    big = order(11, customer_name="x" * 410_000)
    with recorder.expect(), pytest.raises(ItemTooLargeError, match="CUSTOMER#42"):
        store.create(big)
    assert table_items(store) == {}


# -- markers ----------------------------------------------------------------------------------


@transactions
def test_version_created_updated(store: Store, clock: Any) -> None:
    ann = store.create(Customer(customer_id="1", name="Ann", email="ann@example.com"))
    assert ann.version == 1 and ann.created == NOW and ann.updated == NOW
    clock.now = NOW + timedelta(hours=1)
    renamed = store.update(ann, name="Anna")
    assert renamed.version == 2
    assert renamed.created == NOW and renamed.updated == NOW + timedelta(hours=1)
    before = table_items(store)
    with pytest.raises(VersionConflict, match="Customer"):
        store.update(ann, name="stale")  # ann is at version 1, the item at 2
    with pytest.raises(VersionConflict):
        store.put(ann)
    assert table_items(store) == before
    put_back = store.put(renamed.model_copy(update={"name": "Put"}))
    assert put_back.version == 3 and put_back.created == NOW
    read = store.customer(customer_id="1")
    assert read is not None and read.model_dump() == put_back.model_dump()


@transactions
def test_unique_guard_lifecycle(store: Store, recorder: Any) -> None:
    with recorder.expect("TransactWriteItems"):
        ann = store.create(Customer(customer_id="1", name="Ann", email="ann@example.com"))
    guards = [k for k in table_items(store) if k[0].startswith("__unique__")]
    assert len(guards) == 1 and "ann@example.com" in guards[0][0]
    before = table_items(store)
    with pytest.raises(UniqueConstraintViolation, match="email"):
        store.create(Customer(customer_id="2", name="Bob", email="ann@example.com"))
    assert table_items(store) == before
    ann2 = store.update(ann, email="ann@new.example")
    assert ann2.email == "ann@new.example"
    guards = sorted(k[0] for k in table_items(store) if k[0].startswith("__unique__"))
    assert guards == ["__unique__#CUSTOMER#email#ann@new.example"]
    bob = store.create(Customer(customer_id="2", name="Bob", email="ann@example.com"))
    with pytest.raises(UniqueConstraintViolation):
        store.update(bob, email="ann@new.example")
    store.delete(bob)
    guards = sorted(k[0] for k in table_items(store) if k[0].startswith("__unique__"))
    assert guards == ["__unique__#CUSTOMER#email#ann@new.example"]
    # Guards are never returned by reads.
    assert store.customer_by_email(email="ann@new.example") == store.customer(customer_id="1")


@transactions
def test_move_changes_primary_key(store: Store) -> None:
    ann = store.create(Customer(customer_id="1", name="Ann", email="ann@example.com"))
    moved = store.move(ann, customer_id="9")
    assert moved.customer_id == "9" and moved.version == 2
    assert store.customer(customer_id="1") is None
    assert store.customer(customer_id="9") == moved
    with pytest.raises(UniqueConstraintViolation):
        store.create(Customer(customer_id="3", name="C", email="ann@example.com"))
    store.delete(moved)
    assert not [k for k in table_items(store) if k[0].startswith("__unique__")]


# -- transactions -----------------------------------------------------------------------------


def test_transaction_limits_checked_before_sending(store: Store, recorder: Any) -> None:
    with (
        recorder.expect(),
        pytest.raises(InvalidRequestError, match="101"),
        store.transaction() as tx,
    ):
        for i in range(101):
            tx.create(product(f"p{i}"))
    with (
        recorder.expect(),
        pytest.raises(InvalidRequestError, match="PRODUCT#p1"),
        store.transaction() as tx,
    ):
        tx.create(product("p1"))
        tx.update(Product, product_id="p1", add={"stock": 1})
    with recorder.expect(), pytest.raises(RuntimeError), store.transaction() as tx:
        tx.create(product("p1"))
        raise RuntimeError("nothing may be sent")
    assert table_items(store) == {}


@transactions
def test_idempotency_token_from_arguments(store: Store, recorder: Any) -> None:
    store.put(product("p1", stock=5))
    new = order(12)
    store.place_order_once(new, [line(new.order_id, "p1", 1)])
    assert recorder.calls[-1][1]["ClientRequestToken"] == "order-A012"
    assert recorder.operations.count("TransactWriteItems") == 1


def test_batch_refuses_unsafe_entities(store: Store, recorder: Any) -> None:
    with recorder.expect(), pytest.raises(InvalidRequestError, match="version"):
        store.batch_put([Customer(customer_id="1", name="Ann", email="a@b.c")])
    stored = store.batch_put([Customer(customer_id="1", name="Ann", email="a@b.c")], unsafe=True)
    assert stored[0].version == 1
    assert store.batch_get([(Customer, {"customer_id": "1"})]) == stored


def test_batches_round_trip_in_input_order(store: Store) -> None:
    products = [product(f"p{i:02d}", stock=i) for i in range(60)]
    store.batch_put(products)
    refs = [(Product, {"product_id": f"p{i:02d}"}) for i in (59, 3, 3, 17, 99)]
    assert [p.product_id for p in store.batch_get(refs)] == ["p59", "p03", "p17"]
    store.batch_delete([(Product, {"product_id": f"p{i:02d}"}) for i in range(0, 60, 2)])
    assert len(table_items(store)) == 30


def test_naive_datetime_key_is_refused(store: Store) -> None:
    with pytest.raises((KeyTemplateError, ValueError)):
        store.create(order(13, created_at=datetime(2026, 1, 1)))
    assert table_items(store) == {}


def test_batch_of_mixed_types(store: Store) -> None:
    stored = store.batch_put(
        [
            TeamMember(team_id="t", user_id="u", role="r"),
            UserTeam(user_id="u", team_id="t", role="r"),
        ]
    )
    assert [type(e) for e in stored] == [TeamMember, UserTeam]
    assert (
        store.batch_get(
            [
                (UserTeam, {"user_id": "u", "team_id": "t"}),
                (TeamMember, {"team_id": "t", "user_id": "u"}),
            ]
        )
        == stored[::-1]
    )


def test_update_set_list_and_counter_operators(store: Store) -> None:
    store.create(Profile(user_id="u1", tags={"a"}))
    updated = store.update(
        Profile,
        user_id="u1",
        add={"tags": {"b", "c"}, "visits": 2},
        append={"history": ["login"]},
        if_not_exists={"nickname": "first"},
    )
    assert (updated.tags, updated.history, updated.visits, updated.nickname) == (
        {"a", "b", "c"},
        ["login"],
        2,
        "first",
    )
    again = store.update(
        Profile,
        user_id="u1",
        delete={"tags": {"a"}},
        append={"history": ["logout"]},
        if_not_exists={"nickname": "second"},
        add={"visits": 1},
    )
    assert (again.tags, again.history, again.visits, again.nickname) == (
        {"b", "c"},
        ["login", "logout"],
        3,
        "first",
    )
    removed = store.update(Profile, user_id="u1", remove=["nickname"])
    assert removed.nickname is None
    with pytest.raises(InvalidRequestError, match="visits"):
        store.update(Profile, user_id="u1", append={"visits": [1]})
    with pytest.raises(InvalidRequestError, match="user_id"):
        store.update(Profile, user_id="u1", set={"user_id": "u2"})


@transactions
def test_transact_get_reads_consistently_in_order(store: Store, recorder: Any) -> None:
    store.put(product("p1"))
    store.put(product("p2"))
    with recorder.expect("TransactGetItems"):
        got = store.transact_get(
            [
                (Product, {"product_id": "p2"}),
                (Product, {"product_id": "nope"}),
                (Product, {"product_id": "p1"}),
            ]
        )
    assert [p.product_id if p else None for p in got] == ["p2", None, "p1"]


@transactions
def test_unique_guard_expires_with_its_entity(store: Store, clock: Any) -> None:
    first = store.create(
        Invite(invite_id="i1", code="WELCOME", expires_at=NOW + timedelta(hours=1))
    )
    guard = [item for key, item in table_items(store).items() if key[0].startswith("__unique__")]
    assert guard[0]["expires_at"] == {"N": str(int((NOW + timedelta(hours=1)).timestamp()))}
    with pytest.raises(UniqueConstraintViolation, match="code"):
        store.create(Invite(invite_id="i2", code="WELCOME"))
    clock.now = NOW + timedelta(hours=2)  # both the invite and its guard have expired
    assert store.invite(invite_id="i1") is None
    second = store.create(Invite(invite_id="i2", code="WELCOME"))
    assert second.code == first.code


@transactions
def test_single_item_writes_inside_a_transaction_are_refused(store: Store) -> None:
    before = table_items(store)
    with pytest.raises(InvalidRequestError, match=r"tx\.put"), store.transaction() as tx:
        tx.create(product("p1"))
        store.put(product("p2"))  # would be sent on its own, outside the transaction
    assert table_items(store) == before


@transactions
def test_unique_update_returns_what_it_wrote_in_one_request(store: Store, recorder: Any) -> None:
    ann = store.create(Customer(customer_id="1", name="Ann", email="ann@example.com"))
    with recorder.expect("TransactWriteItems"):
        changed = store.update(ann, email="ann@elsewhere.example", name="Anna")
    assert changed == store.customer(customer_id="1")
    assert changed.version == 2 and changed.email == "ann@elsewhere.example"


@transactions
def test_move_from_a_stale_copy_fails_instead_of_losing_a_change(store: Store) -> None:
    placed = store.create(order(20))
    store.update(placed, customer_name="Renamed meanwhile")
    before = table_items(store)
    with pytest.raises(ConditionFailed, match="A020"):
        store.move(placed, customer_id="43")
    assert table_items(store) == before


@transactions
def test_guard_moved_by_update_keeps_the_ttl(store: Store) -> None:
    invite = store.create(Invite(invite_id="i1", code="OLD", expires_at=NOW + timedelta(hours=1)))
    store.update(invite, code="NEW")
    guards = {k[0]: v for k, v in table_items(store).items() if k[0].startswith("__unique__")}
    assert list(guards) == ["__unique__#INVITE#code#NEW"]
    expected = {"N": str(int((NOW + timedelta(hours=1)).timestamp()))}
    assert guards["__unique__#INVITE#code#NEW"]["expires_at"] == expected
    store.update(Invite, invite_id="i1", set={"code": "NEWER"})
    guards = {k[0]: v for k, v in table_items(store).items() if k[0].startswith("__unique__")}
    assert guards["__unique__#INVITE#code#NEWER"]["expires_at"] == expected


@transactions  # Customer has a Unique() field: its put is a transaction
def test_put_of_a_new_versioned_entity_requires_the_item_to_be_absent(store: Store) -> None:
    store.batch_put([Customer(customer_id="7", name="Old", email="o@x.io")], unsafe=True)
    before = table_items(store)
    with pytest.raises(VersionConflict):
        store.put(Customer(customer_id="7", name="New", email="o@x.io"))  # version 0: new
    assert table_items(store) == before


@transactions
def test_guard_reasons_carry_the_entity_type_and_guard_key(store: Store) -> None:
    store.create(Customer(customer_id="1", name="Ann", email="ann@example.com"))
    with pytest.raises(TransactionCanceled) as caught, store.transaction() as tx:
        tx.create(Customer(customer_id="2", name="Bob", email="ann@example.com"))
    entity_op, guard_op = caught.value.reasons
    assert (entity_op.kind, entity_op.entity_type, entity_op.code) == ("create", "CUSTOMER", None)
    assert (guard_op.kind, guard_op.entity_type) == ("guard_put", "CUSTOMER")
    assert guard_op.code == "ConditionalCheckFailed" and "ann@example.com" in guard_op.key
    assert isinstance(guard_op.error, UniqueConstraintViolation)


# -- key maintenance on keyword updates (issue 11, points 1 and 2) ----------------------------


def jobs(store: Store) -> Any:
    from tests.models import JobBoard

    return JobBoard(client=store.client, table_name=store.table_name, clock=store.clock)


def test_keyword_update_evaluates_a_callable_when(store: Store, recorder: Any) -> None:
    from tests.models import Job

    board = jobs(store)
    board.create(Job(job_id="j1", status=Status.PENDING, owner="ann", priority=2))
    assert [j.job_id for j in board.pending_jobs()] == ["j1"]
    # when=lambda job: job.status is PENDING and job.priority > 0 reads the new status: false.
    with recorder.expect("UpdateItem"):
        board.update(Job, job_id="j1", set={"status": Status.SHIPPED})
    assert list(board.pending_jobs()) == []
    raw = table_items(board)[("JOB#j1", "JOB")]
    assert "GSI2PK" not in raw and "GSI2SK" not in raw
    # Back to PENDING: the callable then reads the priority, which the update must know.
    before = table_items(board)
    with recorder.expect(), pytest.raises(KeyTemplateError, match="'priority'") as caught:
        board.update(Job, job_id="j1", set={"status": "PENDING"})
    assert caught.value.key == "priority" and "GSI2" in str(caught.value)
    # A callable may read any field, so an update of another field evaluates it too.
    with recorder.expect(), pytest.raises(KeyTemplateError, match="'status'"):
        board.update(Job, job_id="j1", set={"note": "later"})
    assert table_items(board) == before
    board.update(Job, job_id="j1", set={"status": "PENDING", "priority": 1})  # str -> Status
    assert [j.job_id for j in board.pending_jobs()] == ["j1"]
    assert_no_stale_index_keys(board)


def test_instance_update_evaluates_a_callable_when(store: Store) -> None:
    from tests.models import Job

    board = jobs(store)
    job = board.create(Job(job_id="j1", status=Status.PENDING, owner="ann", priority=2))
    lowered = board.update(job, priority=0)  # the callable reads the priority: out
    assert list(board.pending_jobs()) == []
    board.update(lowered, priority=3)
    assert [j.job_id for j in board.pending_jobs()] == ["j1"]
    assert_no_stale_index_keys(board)


@transactions
def test_transaction_update_evaluates_a_callable_when(store: Store, recorder: Any) -> None:
    from tests.models import Job

    board = jobs(store)
    board.create(Job(job_id="j1", status=Status.PENDING, owner="ann", priority=2))
    board.create(Job(job_id="j2", status=Status.SHIPPED, owner="ann"))
    before = table_items(board)
    with (
        recorder.expect(),
        pytest.raises(KeyTemplateError, match="'status'"),
        board.transaction() as tx,
    ):
        tx.update(Job, job_id="j2", set={"priority": 4})
    assert table_items(board) == before
    with recorder.expect("TransactWriteItems"), board.transaction() as tx:
        tx.update(Job, job_id="j1", set={"status": Status.SHIPPED})
        tx.update(Job, job_id="j2", set={"status": Status.PENDING, "priority": 4})
    assert [j.job_id for j in board.pending_jobs()] == ["j2"]
    assert_no_stale_index_keys(board)


def test_an_optional_key_field_adds_and_removes_both_index_attributes(store: Store) -> None:
    from tests.models import Job

    board = jobs(store)
    board.create(Job(job_id="j1", status=Status.SHIPPED, owner="ann"))
    assert "GSI3PK" not in table_items(board)[("JOB#j1", "JOB")]  # note is None: not indexed
    board.update(Job, job_id="j1", set={"note": "fragile", "status": Status.SHIPPED})
    raw = table_items(board)[("JOB#j1", "JOB")]
    assert (raw["GSI3PK"], raw["GSI3SK"]) == ({"S": "NOTE#fragile"}, {"S": "JOB#j1"})
    board.update(Job, job_id="j1", remove=["note"], set={"status": Status.SHIPPED})
    raw = table_items(board)[("JOB#j1", "JOB")]
    assert "GSI3PK" not in raw and "GSI3SK" not in raw
    assert_no_stale_index_keys(board)


def test_a_new_rating_rewrites_only_the_index_sort_key(game_repo: Any, recorder: Any) -> None:
    from tests.models import PlayerRating

    game_repo.create(PlayerRating(player_id="p1", season="2026-Q2", rating=900))
    # The index partition is SEASON-based and the season is not a key field: a new rating
    # must not need it (GSI pk unchanged), only the sort key is rewritten.
    with recorder.expect("UpdateItem"):
        rated = game_repo.update(PlayerRating, player_id="p1", set={"rating": 1200})
    assert rated.season == "2026-Q2" and rated.rating == 1200
    params = recorder.params("UpdateItem")[0]
    assert written_attributes(params) == {"rating", "gsiSort"}
    assert params["ExpressionAttributeValues"][":v1"] == {"S": "SCORE#01200"}
    raw = game_repo.client.get_item(
        TableName=game_repo.table_name,
        Key={"partitionId": {"S": "PLAYER#p1"}, "rangeId": {"S": "RATING"}},
    )["Item"]
    assert (raw["gsiPartition"], raw["gsiSort"]) == ({"S": "RANKED#2026-Q2"}, {"S": "SCORE#01200"})


def test_index_changes_is_pure_and_minimal() -> None:
    from singletable._verbs.index_keys import index_changes
    from tests.models import Job, PlayerRating

    rating = spec_of(PlayerRating)
    assert index_changes(rating, {"player_id": "p", "rating": 7}, {"rating"}, {}) == (
        {"gsiSort": {"S": "SCORE#00007"}},
        [],
        {"gsi": ["rating"]},  # the fields the value was derived from (what to condition on)
    )
    job = spec_of(Job)
    keys = {"job_id": "j"}
    # Leaving the sparse index removes both attributes; the callable read only the status.
    to_set, to_remove, sources = index_changes(
        job, {**keys, "status": Status.SHIPPED}, {"status"}, {}
    )
    assert (to_set, to_remove, sources) == ({}, ["GSI2PK", "GSI2SK"], {"GSI2": ["status"]})
    # Joining it writes both, from the key; the callable read the status and the priority.
    # The priority also feeds GSI1SK, which needs nothing else: GSI1PK (queue, owner) stays.
    to_set, to_remove, sources = index_changes(
        job, {**keys, "status": Status.PENDING, "priority": 1}, {"status", "priority"}, {}
    )
    assert to_set == {
        "GSI1SK": {"S": "PRIORITY#001#j"},
        "GSI2PK": {"S": "JOBS_PENDING"},
        "GSI2SK": {"S": "JOB#j"},
    }
    assert to_remove == []
    assert sources == {"GSI1": ["priority", "job_id"], "GSI2": ["status", "priority", "job_id"]}
    with pytest.raises(KeyTemplateError, match="'status'"):
        index_changes(job, {**keys, "priority": 1}, {"priority"}, {})
    with pytest.raises(KeyTemplateError, match="by add="):
        index_changes(
            job, {**keys, "status": Status.PENDING}, {"status", "priority"}, {"priority": "add="}
        )
    # Nothing touched: nothing evaluated, nothing written.
    assert index_changes(job, keys, set(), {}) == ({}, [], {})


def test_a_failed_source_condition_names_the_field_that_changed() -> None:
    from singletable._context import WriteContext
    from singletable._verbs.update import compile_update
    from tests.models import Job

    spec = spec_of(Job)
    ctx = WriteContext("Shop", NOW)
    first = Job(job_id="j2", status=Status.SHIPPED, owner="ann", queue="q1")
    op = compile_update(
        spec, ctx, key_fields={"job_id": "j2"}, set_values={"owner": "bob"}, instance=first
    )
    # GSI1PK = QUEUE#{queue}#OWNER#{owner} is derived from the instance's queue: conditioned on it.
    assert "#cn1 = :cv0" in op.params["ConditionExpression"]
    assert op.params["ExpressionAttributeNames"]["#cn1"] == "queue"
    moved = spec.to_item(first.model_copy(update={"queue": "q2"}))  # what another writer stored
    error = op.fail(moved)
    assert isinstance(error, ConditionFailed) and not isinstance(error, NotFound)
    assert "the stored queue changed since the write read it" in error.message
    assert "q1" not in error.message and "q2" not in error.message  # no item contents


def test_computed_key_fields_follow_the_fields_they_read() -> None:
    from examples.merchant.models import Order as MerchantOrder
    from examples.merchant.models import OrderStatus

    from singletable._verbs.index_keys import index_changes

    # GSI2SK = STATUS#{status}#{placed_on}#{order_id}, placed_on computed from created_at.
    spec = spec_of(MerchantOrder)
    later = BASE + 3 * DAY
    known = {"order_id": "o1", "merchant_id": "m1", "created_at": later}
    to_set, to_remove, sources = index_changes(
        spec, {**known, "status": OrderStatus.PAID}, {"created_at", "status"}, {}
    )
    assert to_set["GSI2SK"] == {"S": f"STATUS#PAID#{later.date().isoformat()}#o1"}
    assert to_remove == ["GSI1PK", "GSI1SK"]  # out of the sparse PENDING queue
    assert "created_at" in sources["GSI2"]  # what placed_on was computed from
    # A new created_at alone changes placed_on, so GSI2SK must be rewritten: it needs status.
    with pytest.raises(KeyTemplateError, match="must also know status"):
        index_changes(spec, known, {"created_at"}, {})
    # Any keyword update evaluates placed_on; without created_at it cannot.
    with pytest.raises(KeyTemplateError, match="placed_on") as caught:
        index_changes(spec, {"order_id": "o1", "total": 5}, {"total"}, {})
    assert caught.value.key == "created_at"


# -- delete by key of a Unique() entity races a create (issue 11, point 3) ----------------------


def before_call(client: Any, operation: str, action: Any) -> Any:
    """Run ``action()`` once, right before the client's next ``operation`` call is sent (a
    write landing between singletable's read and its write)."""
    fired: list[bool] = []

    def hook(**_: Any) -> None:
        if not fired:
            fired.append(True)
            action()  # its own calls pass through this hook again: fired, so ignored

    event = f"before-call.dynamodb.{operation}"
    client.meta.events.register(event, hook, unique_id="test-race")
    return lambda: client.meta.events.unregister(event, unique_id="test-race")


def competitor(store: Store) -> Store:
    """Another writer on the same table (another process, say): a sync repository on the
    test's boto3 client, so a hook can write while the repository under test waits on its
    request (on either twin)."""
    return Store(client=store.client, table_name=store.table_name, clock=store.clock)


def guard_keys(repo: Any) -> list[str]:
    return sorted(k[0] for k in table_items(repo) if k[0].startswith("__unique__"))


@transactions
def test_delete_by_key_that_races_a_create_deletes_it_with_its_guard(
    store: Store, recorder: Any
) -> None:
    ann = Customer(customer_id="1", name="Ann", email="ann@example.com")
    created: list[Customer] = []
    other = competitor(store)
    undo = before_call(store.client, "DeleteItem", lambda: created.append(other.create(ann)))
    try:
        old = store.delete(Customer, customer_id="1")
    finally:
        undo()
    sent = recorder.operations
    # Before the fix the DeleteItem was unconditional: it deleted the new customer and left its
    # guard, the email taken for good.
    assert guard_keys(store) == []
    assert store.customer(customer_id="1") is None and old == created[0]
    # The read found nothing; the conditional DeleteItem failed because the customer appeared;
    # the delete read again and removed the customer together with its guard.
    assert sent == [
        "GetItem",
        "DeleteItem",
        "TransactWriteItems",  # the racing create, sent from the hook
        "GetItem",
        "TransactWriteItems",
    ]
    store.create(Customer(customer_id="2", name="Bob", email="ann@example.com"))


@transactions
def test_delete_by_key_that_races_a_guard_move_releases_the_new_guard(store: Store) -> None:
    ann = store.create(Customer(customer_id="1", name="Ann", email="ann@example.com"))
    other = competitor(store)
    undo = before_call(
        store.client, "TransactWriteItems", lambda: other.update(ann, email="ann@new.example")
    )
    try:
        old = store.delete(Customer, customer_id="1")
    finally:
        undo()
    assert old is not None and old.email == "ann@new.example"
    assert store.customer(customer_id="1") is None and guard_keys(store) == []


@transactions
def test_transaction_delete_by_key_is_conditioned_on_what_it_read(store: Store) -> None:
    ann = Customer(customer_id="1", name="Ann", email="ann@example.com")
    other = competitor(store)
    undo = before_call(store.client, "TransactWriteItems", lambda: other.create(ann))
    try:
        with pytest.raises(TransactionCanceled) as caught, store.transaction() as tx:
            tx.delete(Customer, customer_id="1")  # reads: absent; the create lands before it
    finally:
        undo()
    (failed,) = [r for r in caught.value.reasons if r.failed]
    assert failed.kind == "delete" and "created after the delete read it" in str(failed.error)
    assert store.customer(customer_id="1") is not None
    assert guard_keys(store) == ["__unique__#CUSTOMER#email#ann@example.com"]


@transactions
def test_delete_by_key_with_a_failing_condition_raises_it(store: Store, recorder: Any) -> None:
    store.create(Customer(customer_id="1", name="Ann", email="ann@example.com"))
    before = table_items(store)
    # One more read tells the caller's condition from a concurrent change: no retry.
    with (
        recorder.expect("GetItem", "TransactWriteItems", "GetItem"),
        pytest.raises(ConditionFailed, match=r"condition= you passed did not hold: name = \?"),
    ):
        store.delete(Customer, customer_id="1", condition=Attr("name").eq("Bob"))
    assert table_items(store) == before


# -- a failed condition= names itself (issue 11, point 9) ---------------------------------------


def test_failed_update_condition_is_shown_without_values(store: Store) -> None:
    store.put(product("p1", stock=5))
    with pytest.raises(ConditionFailed) as caught:
        store.update(
            Product,
            product_id="p1",
            add={"stock": -7},
            condition=Attr("stock").gte(7) & Attr("name").eq("Secret Name"),
        )
    message = str(caught.value)
    assert "condition= you passed did not hold: (stock >= ?) AND (name = ?)" in message
    assert "PRODUCT#p1" in message  # the key identifies the item
    assert "changed since" not in message and "Secret" not in message and "7" not in message


def test_failed_delete_condition_is_shown_without_values(store: Store) -> None:
    store.put(product("p1", stock=5))
    with pytest.raises(ConditionFailed) as caught:
        store.delete(Product, product_id="p1", condition=Attr("stock").between(10, 20))
    message = str(caught.value)
    assert "condition= you passed did not hold: stock BETWEEN ? AND ?" in message
    assert "changed since" not in message and "10" not in message


def test_condition_text_names_attributes_and_hides_values() -> None:
    from singletable._verbs.ops import condition_text

    condition = (Attr("status").is_in("A", "B") | ~Attr("note").exists()) & Attr("a.b[2]").lt(
        Attr("limit")
    )
    assert condition_text(condition) == (
        "((status IN (?, ?)) OR (NOT (attribute_exists(note)))) AND (a.b[2] < limit)"
    )


# -- property: an update's key attributes are what to_item derives from the updated entity -------

JOB_FIELDS = ("status", "owner", "queue", "priority", "note")


@st.composite
def job_entities(draw: st.DrawFn) -> Any:
    from tests.models import Job

    return Job(
        job_id="j",
        status=draw(st.sampled_from(list(Status))),
        owner=draw(st.sampled_from(["ann", "bob"])),
        queue=draw(st.sampled_from(["main", "slow"])),
        priority=draw(st.integers(0, 3)),
        note=draw(st.sampled_from([None, "n1", "n2"])),
    )


@settings(max_examples=200, deadline=2000)
@given(
    old=job_entities(),
    new=job_entities(),
    changed=st.sets(st.sampled_from(JOB_FIELDS), min_size=1),
    instance_form=st.booleans(),
)
def test_index_changes_applied_to_the_stored_item_give_what_to_item_derives(
    old: Any, new: Any, changed: set[str], instance_form: bool
) -> None:
    from singletable._verbs.index_keys import index_changes

    spec = spec_of(type(old))
    changes = {name: getattr(new, name) for name in changed}
    after = old.model_copy(update=changes)
    known = after.model_dump() if instance_form else {"job_id": old.job_id, **changes}
    try:
        to_set, to_remove, sources = index_changes(spec, known, set(changed), {})
    except KeyTemplateError as refused:
        assert not instance_form  # the instance form knows every field
        assert refused.key in JOB_FIELDS and refused.key not in changed
        return
    key_attrs = spec.table.key_attributes
    stored = {a: v for a, v in spec.to_item(old).items() if a in key_attrs}
    assert not set(to_set) & set(to_remove)
    for attr in to_remove:
        stored.pop(attr, None)
    stored.update(to_set)
    assert stored == {a: v for a, v in spec.to_item(after).items() if a in key_attrs}
    # What the decisions read is known (so it can be conditioned on, or was written).
    assert {f for reads in sources.values() for f in reads} <= set(known)
