"""``propagate(...)`` on every backend and both twins: which copies a call rewrites, the requests
it sends, derived keys and sparse indexes following the copies, redelivered and older events,
writes racing the propagation, ``on_event`` behind a ``StreamRouter``, and a state machine that
interleaves renames, order creations and (re)deliveries of the change events."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from moto_fixtures import create_table
from moto_fixtures.twins import twin_repository

from singletable import PropagationReport
from singletable.errors import InvalidRequestError
from singletable.streams import Inserted, Modified, StreamRouter
from tests.backend.test_writes import before_call
from tests.propagate_models import CopyShop, Customer, Order, Review, copies

ANN = Customer(customer_id="c1", name="Ann", tier="basic")


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> CopyShop:
    shop: CopyShop = make_repo(CopyShop, copies)
    return shop


def place(repo: CopyShop, customer: Customer, *order_ids: str, name: str | None = None) -> None:
    for order_id in order_ids:
        repo.create(
            Order(
                customer_id=customer.customer_id,
                order_id=order_id,
                customer_name=name if name is not None else customer.name,
                customer_tier=customer.tier,
            )
        )


def names(repo: CopyShop, customer_id: str = "c1") -> dict[str, str]:
    return {o.order_id: o.customer_name for o in repo.customer_orders.all(customer_id=customer_id)}


def competitor(repo: CopyShop) -> CopyShop:
    """Another writer on the same table, on the test's boto3 client (so a hook can write while
    the repository under test waits on its request, on either twin)."""
    return CopyShop(client=repo.client, table_name=repo.table_name)


def modified(old: Customer, new: Customer, sequence: str = "1") -> Modified[Customer]:
    return Modified(
        Customer, Customer.key(customer_id=new.customer_id), old, new, "e" + sequence, sequence
    )


# -- what a call rewrites --------------------------------------------------------------------------


def test_no_request_when_no_mapped_field_changed(repo: CopyShop, recorder: Any) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1")
    noted = ann.model_copy(update={"note": "prefers email"})  # not a copied field
    with recorder.expect():
        assert repo.customer_sync(ann, noted) == PropagationReport(0, 0, 0)
        assert repo.customer_sync(ann, ann) == PropagationReport(matched=0, updated=0, skipped=0)


def test_every_stale_copy_is_rewritten_and_the_others_left(repo: CopyShop, recorder: Any) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1", "o2", "o3")
    place(repo, ann, "o4", name="Anne")  # already holds the new value
    place(repo, ann, "o5", name="Anna")  # a newer rename got there first
    anne = repo.update(ann, name="Anne")
    with recorder.expect("Query", "UpdateItem", "UpdateItem", "UpdateItem"):
        report = repo.customer_sync(ann, anne)
    assert report == PropagationReport(matched=5, updated=3, skipped=2)
    assert names(repo) == {"o1": "Anne", "o2": "Anne", "o3": "Anne", "o4": "Anne", "o5": "Anna"}
    # The normal update: conditioned on the copy still holding the old value (and, Order
    # having Version(), on the version read), version + 1.
    request = recorder.params("UpdateItem")[0]
    condition = request["ConditionExpression"]
    values = request["ExpressionAttributeValues"]
    assert {"S": "Ann"} in values.values() and {"S": "Anne"} in values.values()
    assert "version" in str(request["ExpressionAttributeNames"].values())
    assert "=" in condition
    assert repo.order(customer_id="c1", order_id="o1").version == 2  # type: ignore[union-attr]


def test_each_field_is_rewritten_only_where_it_is_stale(repo: CopyShop) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1")
    place(repo, ann, "o2", name="Anne")
    gold = repo.update(ann, name="Anne", tier="gold")
    assert repo.customer_sync(ann, gold) == PropagationReport(2, 2, 0)
    orders = list(repo.customer_orders.all(customer_id="c1"))
    assert [(o.customer_name, o.customer_tier) for o in orders] == [("Anne", "gold")] * 2
    assert repo.customer_sync(ann, gold) == PropagationReport(2, 0, 2)  # redelivered


def test_derived_keys_and_sparse_indexes_follow_the_copies(repo: CopyShop) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1", "o2")
    place(repo, Customer(customer_id="c2", name="Ann"), "o9")  # another Ann, not changed
    gold = repo.update(ann, name="Anne", tier="gold")
    repo.customer_sync(ann, gold)
    assert [o.order_id for o in repo.orders_by_name.all(customer_name="Anne")] == ["o1", "o2"]
    assert [o.order_id for o in repo.orders_by_name.all(customer_name="Ann")] == ["o9"]
    assert [o.order_id for o in repo.gold_orders.all(customer_id="c1")] == ["o1", "o2"]
    basic = repo.update(gold, tier="basic")
    assert repo.customer_sync(gold, basic) == PropagationReport(2, 2, 0)
    assert list(repo.gold_orders.all(customer_id="c1")) == []  # left the sparse index
    raw = repo.client.get_item(
        TableName=repo.table_name, Key=Order.key(customer_id="c1", order_id="o1")
    )["Item"]
    assert "GSI2PK" not in raw and "GSI2SK" not in raw
    assert raw["GSI1PK"] == {"S": "NAME#Anne"}


def test_pages_through_every_target(make_repo: Callable[..., Any], recorder: Any) -> None:
    repo: CopyShop = make_repo(CopyShop, copies, default_limit=2)
    ann = repo.create(ANN)
    place(repo, ann, "o1", "o2", "o3", "o4", "o5")
    anne = repo.update(ann, name="Anne")
    recorder.clear()
    assert repo.customer_sync(ann, anne) == PropagationReport(5, 5, 0)
    assert recorder.count("Query") == 3
    assert recorder.count("UpdateItem") == 5
    assert set(names(repo).values()) == {"Anne"}


def test_a_customer_without_orders_costs_one_query(repo: CopyShop, recorder: Any) -> None:
    ann = repo.create(ANN)
    anne = repo.update(ann, name="Anne")
    with recorder.expect("Query"):
        assert repo.customer_sync(ann, anne) == PropagationReport(0, 0, 0)


def test_redelivered_and_older_events_never_go_backwards(repo: CopyShop, recorder: Any) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1", "o2")
    anne = repo.update(ann, name="Anne")
    anna = repo.update(anne, name="Anna")
    assert repo.customer_sync(ann, anne) == PropagationReport(2, 2, 0)
    assert repo.customer_sync(anne, anna) == PropagationReport(2, 2, 0)
    with recorder.expect("Query", "Query"):  # nothing is stale: no write at all
        assert repo.customer_sync(ann, anne) == PropagationReport(2, 0, 2)  # older, redelivered
        assert repo.customer_sync(anne, anna) == PropagationReport(2, 0, 2)
    assert set(names(repo).values()) == {"Anna"}


def test_refuses_what_is_not_the_source(repo: CopyShop, recorder: Any) -> None:
    ann = repo.create(ANN)
    order = Order(customer_id="c1", order_id="o1", customer_name="Ann")
    with recorder.expect(), pytest.raises(InvalidRequestError, match="takes a Customer"):
        repo.customer_sync(ann, order)  # type: ignore[arg-type]


# -- writes racing the propagation -----------------------------------------------------------------


def test_a_copy_changed_since_the_query_is_skipped(repo: CopyShop) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1")
    anne = repo.update(ann, name="Anne")
    other = competitor(repo)

    def newer_rename() -> None:
        order = other.order(customer_id="c1", order_id="o1")
        assert order is not None
        other.update(order, customer_name="Anna")

    undo = before_call(repo.client, "UpdateItem", newer_rename)
    try:
        report = repo.customer_sync(ann, anne)
    finally:
        undo()
    assert report == PropagationReport(1, 0, 1)
    assert names(repo) == {"o1": "Anna"}  # the newer copy was not overwritten


def test_without_a_version_the_copy_condition_alone_guards_it(repo: CopyShop) -> None:
    ann = repo.create(ANN)
    repo.create(Review(customer_id="c1", review_id="r1", author="Ann"))
    anne = repo.update(ann, name="Anne")
    other = competitor(repo)
    undo = before_call(
        repo.client,
        "UpdateItem",
        lambda: other.update(Review, customer_id="c1", review_id="r1", set={"author": "Anna"}),
    )
    try:
        report = repo.author_sync(ann, anne)
    finally:
        undo()
    assert report == PropagationReport(1, 0, 1)
    assert [r.author for r in repo.customer_reviews.all(customer_id="c1")] == ["Anna"]


def test_an_unrelated_write_in_between_is_retried(repo: CopyShop) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1")
    anne = repo.update(ann, name="Anne")
    other = competitor(repo)

    def ship() -> None:
        order = other.order(customer_id="c1", order_id="o1")
        assert order is not None
        other.update(order, status="SHIPPED")  # bumps the version the update expects

    undo = before_call(repo.client, "UpdateItem", ship)
    try:
        report = repo.customer_sync(ann, anne)
    finally:
        undo()
    assert report == PropagationReport(1, 1, 0)
    order = repo.order(customer_id="c1", order_id="o1")
    assert order is not None
    assert (order.customer_name, order.status, order.version) == ("Anne", "SHIPPED", 3)


def test_a_target_deleted_in_between_is_skipped(repo: CopyShop) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1", "o2")
    anne = repo.update(ann, name="Anne")
    other = competitor(repo)
    undo = before_call(
        repo.client, "UpdateItem", lambda: other.delete(Order, customer_id="c1", order_id="o1")
    )
    try:
        report = repo.customer_sync(ann, anne)
    finally:
        undo()
    assert report == PropagationReport(2, 1, 1)
    assert names(repo) == {"o2": "Anne"}


# -- from a stream ---------------------------------------------------------------------------------


def test_on_event_behind_a_router(repo: CopyShop) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1", "o2")
    anne = repo.update(ann, name="Anne")
    router = StreamRouter(CopyShop)
    router.on(Customer, "MODIFY")(repo.customer_sync.on_event)
    record = {
        "eventID": "e1",
        "eventName": "MODIFY",
        "dynamodb": {
            "Keys": Customer.key(customer_id="c1"),
            "NewImage": anne.to_item(),
            "OldImage": ann.to_item(),
            "SequenceNumber": "100",
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }
    assert router.handle({"Records": [record]}) == {"batchItemFailures": []}
    assert names(repo) == {"o1": "Anne", "o2": "Anne"}
    assert repo.customer_sync.on_event(modified(ann, anne)) == PropagationReport(2, 0, 2)


def test_on_event_refuses_other_events_and_partial_images(repo: CopyShop, recorder: Any) -> None:
    ann = repo.create(ANN)
    inserted = Inserted(Customer, Customer.key(customer_id="c1"), None, ann)
    new_only = Modified(Customer, Customer.key(customer_id="c1"), None, ann)  # NEW_IMAGE view
    with recorder.expect():
        with pytest.raises(InvalidRequestError, match="Modified"):
            repo.customer_sync.on_event(inserted)  # type: ignore[arg-type]
        with pytest.raises(InvalidRequestError, match="NEW_AND_OLD_IMAGES"):
            repo.customer_sync.on_event(new_only)


@pytest.mark.twin("async")  # the async twin's on_event returns an awaitable: handle_async
def test_the_async_twin_runs_from_handle_async(repo: Any) -> None:
    ann = repo.create(ANN)
    place(repo, ann, "o1")
    anne = repo.update(ann, name="Anne")
    router = StreamRouter(CopyShop)
    router.on(Customer, "MODIFY")(repo.async_repository.customer_sync.on_event)
    event = {
        "Records": [
            {
                "eventID": "e1",
                "eventName": "MODIFY",
                "dynamodb": {
                    "Keys": Customer.key(customer_id="c1"),
                    "NewImage": anne.to_item(),
                    "OldImage": ann.to_item(),
                    "SequenceNumber": "7",
                },
            }
        ]
    }
    assert router.handle(event) == {"batchItemFailures": [{"itemIdentifier": "7"}]}
    assert repo._loop.run(router.handle_async(event)) == {"batchItemFailures": []}
    assert names(repo) == {"o1": "Anne"}


# -- a state machine: renames, new orders and (re)deliveries interleaved -------------------------

CUSTOMERS = ("c1", "c2")
_tables = itertools.count()
_names = itertools.count()


class PropagationMachine(RuleBasedStateMachine):
    """Each rename appends its event to its customer's stream. Delivery follows the stream
    (Lambda: in order per item, at least once); on top of that, any event already delivered may
    come again (a redelivered batch, a replay) and any pending one may be delivered early, out of
    order (it comes again in its turn). Names never repeat: a value that came back (A -> B -> A)
    would make an older event's condition hold again (see docs/streams.md).

    Invariants: no copy ever moves backwards along its customer's history; once every event is
    delivered, every copy equals its customer's current name."""

    def __init__(self, repo: CopyShop) -> None:
        super().__init__()
        self.repo = repo
        self.customers: dict[str, Customer] = {}
        self.history: dict[str, list[str]] = {}  # every name a customer had, in order
        self.stream: dict[str, list[Modified[Customer]]] = {c: [] for c in CUSTOMERS}
        self.delivered: dict[str, int] = dict.fromkeys(CUSTOMERS, 0)  # stream position
        self.orders: dict[str, str] = {}  # order_id -> customer_id
        self.seen: dict[str, int] = {}  # order_id -> furthest history position of its copy
        for customer_id in CUSTOMERS:
            created = repo.create(Customer(customer_id=customer_id, name=self.fresh_name()))
            self.customers[customer_id] = created
            self.history[customer_id] = [created.name]

    @staticmethod
    def fresh_name() -> str:
        return f"name-{next(_names)}"

    def deliver(self, event: Modified[Customer]) -> None:
        report = self.repo.customer_sync.on_event(event)
        owned = sum(1 for c in self.orders.values() if c == event.new.customer_id)
        assert report.matched == owned
        assert report.updated + report.skipped == report.matched

    @rule(customer_id=st.sampled_from(CUSTOMERS))
    def rename(self, customer_id: str) -> None:
        old = self.customers[customer_id]
        new = self.repo.update(old, name=self.fresh_name())
        self.customers[customer_id] = new
        self.history[customer_id].append(new.name)
        self.stream[customer_id].append(modified(old, new, str(len(self.history[customer_id]))))

    @rule(customer_id=st.sampled_from(CUSTOMERS))
    def place_order(self, customer_id: str) -> None:
        order_id = f"o{len(self.orders)}"
        customer = self.customers[customer_id]  # the current name, read when placing it
        place(self.repo, customer, order_id)
        self.orders[order_id] = customer_id

    @precondition(lambda self: any(self.pending(c) for c in CUSTOMERS))
    @rule(customer_id=st.sampled_from(CUSTOMERS))
    def deliver_next(self, customer_id: str) -> None:
        if self.pending(customer_id):
            self.deliver_in_order(customer_id)

    def deliver_in_order(self, customer_id: str) -> None:
        self.deliver(self.stream[customer_id][self.delivered[customer_id]])
        self.delivered[customer_id] += 1

    @precondition(lambda self: any(self.delivered.values()))
    @rule(customer_id=st.sampled_from(CUSTOMERS), data=st.data())
    def redeliver(self, customer_id: str, data: st.DataObject) -> None:
        done = self.delivered[customer_id]
        if done:
            self.deliver(self.stream[customer_id][data.draw(st.integers(0, done - 1))])

    @precondition(lambda self: any(len(self.pending(c)) > 1 for c in CUSTOMERS))
    @rule(customer_id=st.sampled_from(CUSTOMERS), data=st.data())
    def deliver_out_of_order(self, customer_id: str, data: st.DataObject) -> None:
        pending = self.pending(customer_id)
        if len(pending) > 1:
            self.deliver(pending[data.draw(st.integers(1, len(pending) - 1))])

    def pending(self, customer_id: str) -> list[Modified[Customer]]:
        return self.stream[customer_id][self.delivered[customer_id] :]

    @invariant()
    def copies_never_go_backwards(self) -> None:
        for customer_id in CUSTOMERS:
            history = self.history[customer_id]
            for order_id, name in names(self.repo, customer_id).items():
                position = history.index(name)
                assert position >= self.seen.get(order_id, 0), (order_id, name, history)
                self.seen[order_id] = position

    def teardown(self) -> None:
        for customer_id in CUSTOMERS:
            while self.pending(customer_id):
                self.deliver_in_order(customer_id)
            current = self.customers[customer_id].name
            assert set(names(self.repo, customer_id).values()) <= {current}
        self.copies_never_go_backwards()


def test_propagation_state_machine(
    client: Any, backend: Any, twin: str, async_clients: Any
) -> None:
    def machine() -> PropagationMachine:
        name = backend.table_name(f"copies-{next(_tables)}")
        create_table(backend, client, copies, name)
        return PropagationMachine(
            twin_repository(twin, CopyShop, client, async_clients, table_name=name)
        )

    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=10,
            stateful_step_count=20,
            deadline=60_000,  # ms per run of the machine (a table and up to 20 steps)
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
