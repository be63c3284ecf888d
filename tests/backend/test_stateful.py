"""A hypothesis state machine drives random writes through the repository and checks, after
every step, that every access pattern returns what a plain in-memory model says and that no
orphaned guard item or stale index key exists: every stored item's key attributes are compared
with what ``to_item`` derives from the entity it decodes to.

Jobs (``tests.models.Job``) have a sparse index whose ``when=`` is a callable, a partition key of
two fields and an index keyed on an optional field, and are changed by keyword-form updates
(alone and in transactions), whose refusals the model predicts."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from moto_fixtures.twins import twin_repository

from singletable.errors import (
    AlreadyExists,
    KeyTemplateError,
    NotFound,
    TransactionCanceled,
    UniqueConstraintViolation,
)
from tests.backend.test_reads import BASE
from tests.backend.test_writes import stale_index_keys
from tests.models import Customer, Job, JobBoard, Order, Status, shop

IDS = st.sampled_from(["c1", "c2", "c3"])
EMAILS = st.sampled_from(["a@x.io", "b@x.io", "c@x.io", "d@x.io"])
ORDER_IDS = st.sampled_from(["o1", "o2", "o3", "o4"])
STATUSES = st.sampled_from(list(Status))
JOB_IDS = st.sampled_from(["j1", "j2", "j3"])
OWNERS = st.sampled_from(["ann", "bob"])
QUEUES = st.sampled_from(["main", "slow"])
PRIORITIES = st.integers(0, 2)
NOTES = st.sampled_from([None, "fragile", "urgent"])
JOB_CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "status": STATUSES,
        "owner": OWNERS,
        "queue": QUEUES,
        "priority": PRIORITIES,
        "note": NOTES,
    },
)
_tables = itertools.count()


class ShopMachine(RuleBasedStateMachine):
    def __init__(self, client: Any, make: Callable[..., Any]) -> None:
        super().__init__()
        name = f"state-{next(_tables)}"
        shop.create(client, table_name=name)
        self.repo = make(JobBoard, table_name=name)
        self.customers: dict[str, Customer] = {}
        self.orders: dict[str, Order] = {}  # by order_id (one customer: "c1")
        self.jobs: dict[str, Job] = {}

    # -- customers (unique email, version) --

    @rule(customer_id=IDS, email=EMAILS)
    def create_customer(self, customer_id: str, email: str) -> None:
        new = Customer(customer_id=customer_id, name=customer_id.upper(), email=email)
        if customer_id in self.customers:
            with pytest.raises(AlreadyExists):
                self.repo.create(new)
        elif any(c.email == email for c in self.customers.values()):
            with pytest.raises(UniqueConstraintViolation):
                self.repo.create(new)
        else:
            self.customers[customer_id] = self.repo.create(new)

    @rule(customer_id=IDS, email=EMAILS)
    def change_email(self, customer_id: str, email: str) -> None:
        current = self.customers.get(customer_id)
        if current is None:
            return
        taken = any(c.email == email and c is not current for c in self.customers.values())
        if taken:
            with pytest.raises(UniqueConstraintViolation):
                self.repo.update(current, email=email)
        else:
            self.customers[customer_id] = self.repo.update(current, email=email)

    @rule(customer_id=IDS)
    def delete_customer(self, customer_id: str) -> None:
        current = self.customers.pop(customer_id, None)
        if current is None:
            assert self.repo.delete(Customer, customer_id=customer_id) is None
        else:
            assert self.repo.delete(current) == current

    # -- orders (GSI1 partition follows status, sparse GSI2 for PENDING) --

    @rule(order_id=ORDER_IDS, status=STATUSES, day=st.integers(0, 3))
    def create_order(self, order_id: str, status: Status, day: int) -> None:
        new = Order(
            customer_id="c1",
            order_id=order_id,
            created_at=BASE + timedelta(days=day),
            status=status,
            total=Decimal(day),
            customer_name="x",
        )
        if order_id in self.orders:
            return  # created_at differs, so this would be another item: keep one per id
        self.orders[order_id] = self.repo.create(new)

    @rule(order_id=ORDER_IDS, status=STATUSES, keyword=st.booleans())
    def set_status(self, order_id: str, status: Status, keyword: bool) -> None:
        current = self.orders.get(order_id)
        if current is None:
            return
        if keyword:
            updated = self.repo.update(
                Order,
                customer_id="c1",
                created_at=current.created_at,
                order_id=order_id,
                set={"status": status},
            )
        else:
            updated = self.repo.update(current, status=status)
        assert updated.status is status
        self.orders[order_id] = updated

    @rule(order_id=ORDER_IDS)
    def delete_order(self, order_id: str) -> None:
        current = self.orders.pop(order_id, None)
        if current is None:
            return
        self.repo.delete(current, must_exist=True)
        with pytest.raises(NotFound):
            self.repo.delete(current, must_exist=True)

    @rule(first=ORDER_IDS, second=ORDER_IDS, day=st.integers(0, 3))
    def create_two_atomically(self, first: str, second: str, day: int) -> None:
        if first == second:
            return
        new = [
            Order(
                customer_id="c1",
                order_id=oid,
                created_at=BASE + timedelta(days=day),
                status=Status.PENDING,
                total=Decimal(1),
                customer_name="tx",
            )
            for oid in (first, second)
        ]
        clash = [
            o
            for o in new
            if any(
                existing.created_at == o.created_at and existing.order_id == o.order_id
                for existing in self.orders.values()
            )
        ]
        if any(o.order_id in self.orders for o in new) and not clash:
            return  # keep one item per order id in the model
        if clash:
            with pytest.raises(TransactionCanceled), self.repo.transaction() as tx:
                for order in new:
                    tx.create(order)
            return
        with self.repo.transaction() as tx:
            stored = [tx.create(order) for order in new]
        for order in stored:
            self.orders[order.order_id] = order

    # -- jobs (callable sparse condition, keys rewritten one attribute at a time) --

    @rule(
        job_id=JOB_IDS,
        status=STATUSES,
        owner=OWNERS,
        queue=QUEUES,
        priority=PRIORITIES,
        note=NOTES,
    )
    def create_job(
        self, job_id: str, status: Status, owner: str, queue: str, priority: int, note: str | None
    ) -> None:
        new = Job(
            job_id=job_id, status=status, owner=owner, queue=queue, priority=priority, note=note
        )
        if job_id in self.jobs:
            with pytest.raises(AlreadyExists):
                self.repo.create(new)
        else:
            self.jobs[job_id] = self.repo.create(new)

    @staticmethod
    def keyword_update_refusal(changes: dict[str, Any]) -> str | None:
        """The field a keyword update with ``set=changes`` lacks, if any: the callable
        (``status is PENDING and priority > 0``) runs on every update and reads the status,
        then the priority if the status is PENDING; GSI1PK reads the queue and the owner."""
        if "status" not in changes:
            return "status"
        if changes["status"] is Status.PENDING and "priority" not in changes:
            return "priority"
        if ("queue" in changes) != ("owner" in changes):
            return "owner" if "queue" in changes else "queue"
        return None

    @rule(job_id=JOB_IDS, changes=JOB_CHANGES, in_transaction=st.booleans())
    def update_job_by_key(self, job_id: str, changes: dict[str, Any], in_transaction: bool) -> None:
        if not changes:
            return
        refused = self.keyword_update_refusal(changes)
        current = self.jobs.get(job_id)

        def send() -> Any:
            if not in_transaction:
                return self.repo.update(Job, job_id=job_id, set=changes)
            with self.repo.transaction() as tx:
                tx.update(Job, job_id=job_id, set=changes)
            return self.repo.job(job_id=job_id)

        if refused is not None:
            with pytest.raises(KeyTemplateError) as caught:
                send()
            assert caught.value.key == refused
        elif current is None:
            with pytest.raises(TransactionCanceled if in_transaction else NotFound):
                send()
        else:
            updated = send()
            assert updated == current.model_copy(update=changes)
            self.jobs[job_id] = updated

    @rule(job_id=JOB_IDS, changes=JOB_CHANGES)
    def update_job_instance(self, job_id: str, changes: dict[str, Any]) -> None:
        current = self.jobs.get(job_id)
        if current is None:
            return
        updated = self.repo.update(current, **changes)
        assert updated == current.model_copy(update=changes)
        self.jobs[job_id] = updated

    @rule(job_id=JOB_IDS)
    def delete_job(self, job_id: str) -> None:
        current = self.jobs.pop(job_id, None)
        assert self.repo.delete(Job, job_id=job_id) == current

    # -- what must hold after every step --

    @invariant()
    def patterns_match_the_model(self) -> None:
        repo = self.repo
        for customer_id in ("c1", "c2", "c3"):
            assert repo.customer(customer_id=customer_id) == self.customers.get(customer_id)
        for email in ("a@x.io", "b@x.io", "c@x.io", "d@x.io"):
            owner = [c for c in self.customers.values() if c.email == email]
            assert repo.customer_by_email(email=email) == (owner[0] if owner else None)
        ordered = sorted(self.orders.values(), key=lambda o: (o.created_at, o.order_id))
        for status in Status:
            expected = [o for o in ordered if o.status is status]
            assert list(repo.orders_by_status.all(status=status)) == expected
        assert list(repo.pending_orders.all()) == [o for o in ordered if o.status is Status.PENDING]
        assert list(repo.orders_oldest_first.all(customer_id="c1")) == ordered

    @invariant()
    def job_patterns_match_the_model(self) -> None:
        jobs = sorted(self.jobs.values(), key=lambda j: j.job_id)
        pending = [j for j in jobs if j.status is Status.PENDING and j.priority > 0]
        assert list(self.repo.pending_jobs.all()) == pending
        for queue in ("main", "slow"):
            for owner in ("ann", "bob"):
                expected = sorted(
                    (j for j in jobs if (j.queue, j.owner) == (queue, owner)),
                    key=lambda j: (j.priority, j.job_id),
                    reverse=True,
                )
                assert list(self.repo.queue_jobs.all(queue=queue, owner=owner)) == expected

    @invariant()
    def no_index_entry_is_stale(self) -> None:
        assert stale_index_keys(self.repo) == []

    @invariant()
    def no_orphan_guards_or_stale_keys(self) -> None:
        items = self.repo.client.scan(TableName=self.repo.table_name, ConsistentRead=True)["Items"]
        guards = sorted(i["PK"]["S"] for i in items if i["_type"]["S"] == "__unique__")
        assert guards == sorted(
            f"__unique__#CUSTOMER#email#{c.email}" for c in self.customers.values()
        )
        for item in items:
            if item["_type"]["S"] != "ORDER":
                continue
            status = item["status"]["S"]
            assert item["GSI1PK"] == {"S": f"STATUS#{status}"}
            assert ("GSI2PK" in item) == (status == "PENDING")
            assert ("GSI2SK" in item) == (status == "PENDING")


@pytest.mark.requires("transactions")
# Each backend once (as moto_fixtures' ONCE_PER_BACKEND does where dynalite takes part;
# dynalite has no transactions): the sync twin in process, the async twin on the moto server.
# The twins share every flow; the sync twin on the moto server would repeat the in-process
# run over HTTP at ~60 s of CI time.
@pytest.mark.parametrize(
    ("backend", "twin"), [("inproc", "sync"), ("moto_server", "async")], indirect=True
)
def test_repository_state_machine(client: Any, twin: str, async_clients: Any) -> None:
    def make(repo_cls: type[Any], **options: Any) -> Any:
        return twin_repository(twin, repo_cls, client, async_clients, **options)

    run_state_machine_as_test(
        lambda: ShopMachine(client, make),
        settings=settings(
            max_examples=15,
            stateful_step_count=15,
            deadline=60_000,  # ms per run of the machine (a table and up to 15 steps)
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
