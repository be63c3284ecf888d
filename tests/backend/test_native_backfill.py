"""Native-key indexes on a live table, on every backend that serves them and both twins:
``backfill`` has nothing to rewrite for them (their key attributes are the entity's own
fields), and an index added to a table that already holds items needs no backfill, because
DynamoDB fills it (API.md "Third wave / Native and multi-attribute index keys": Writes)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from enum import Enum
from typing import Any

import pytest

from singletable import GSI, Entity, Repository, Table, query
from tests.backend.test_writes import table_items
from tests.native_models import Arena, Game, Order, Purchase, Status, Tenants, arena, tenants

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
MULTI = pytest.mark.requires("multi_attribute_keys")


def _order(n: int) -> Order:
    return Order(
        tenant_id=f"t{n % 2}",
        region="eu" if n % 3 else "us",
        order_id=f"o{n:02d}",
        status=list(Status)[n % 3],
        created_at=T0 + timedelta(minutes=n),
        total=Decimal(n) / 4,
    )


# -- backfill leaves native indexes alone ---------------------------------------------------------


def test_backfill_of_an_entity_in_single_attribute_native_indexes_writes_nothing(
    make_repo: Callable[..., Any], recorder: Any
) -> None:
    """Games in the sparse OpenGames index (and out of it), purchases in ByTotal and ByCode:
    a backfill reads them all and finds every one up to date."""
    repo: Arena = make_repo(Arena, arena)
    for n in range(6):
        opened = T0 + timedelta(hours=n) if n % 2 else None
        repo.create(Game(game_id=f"g{n}", creator="ann", map="lake" if opened else None,
                         open_timestamp=opened))  # fmt: skip
        repo.create(
            Purchase(
                customer_id="c1",
                purchase_id=f"p{n}",
                total=Decimal(n) * 10,
                code=bytes([n + 1]) if n % 2 else None,
            )
        )
    before = table_items(repo)
    recorder.clear()
    for entity, count in ((Game, 6), (Purchase, 6)):
        report = repo.backfill(entity)
        assert (report.matched, report.up_to_date, report.updated, report.failed) == (
            count,
            count,
            0,
            (),
        )
    assert set(recorder.operations) == {"Scan"}
    assert table_items(repo) == before
    assert [g.game_id for g in repo.open_games(map="lake").items] == ["g1", "g3", "g5"]


@MULTI
def test_backfill_of_an_entity_in_multi_attribute_native_indexes_writes_nothing(
    make_repo: Callable[..., Any], recorder: Any
) -> None:
    repo: Tenants = make_repo(Tenants, tenants)
    for n in range(9):
        repo.create(_order(n))
    before = table_items(repo)
    recorder.clear()
    report = repo.backfill(Order, segments=2)
    assert (report.matched, report.up_to_date, report.updated, report.failed) == (9, 9, 0, ())
    assert set(recorder.operations) == {"Scan"}
    assert table_items(repo) == before


# -- an index added to a live table: DynamoDB fills it, no backfill --------------------------------


class Stage(str, Enum):
    OPEN = "OPEN"
    DONE = "DONE"


before = Table("LiveNative")
after_single = Table(
    "LiveNative", indexes=[GSI("ByOwner", pk=("owner_id",), sk=("amount",))]
)  # one attribute each: every backend
after_multi = Table(
    "LiveNative", indexes=[GSI("ByOwnerStage", pk=("owner_id",), sk=("stage", "amount"))]
)


class TaskBefore(Entity, table=before, type="TASK"):
    task_id: str
    owner_id: str
    stage: Stage
    amount: int

    class Keys:
        pk = "TASK#{task_id}"
        sk = "TASK"


class TaskSingle(Entity, table=after_single, type="TASK"):
    task_id: str
    owner_id: str
    stage: Stage
    amount: int

    class Keys:
        pk = "TASK#{task_id}"
        sk = "TASK"


class TaskMulti(Entity, table=after_multi, type="TASK"):
    task_id: str
    owner_id: str
    stage: Stage
    amount: int

    class Keys:
        pk = "TASK#{task_id}"
        sk = "TASK"


class Before(Repository, table=before):
    pass


class AfterSingle(Repository, table=after_single):
    by_owner = query(TaskSingle, index="ByOwner")


class AfterMulti(Repository, table=after_multi):
    by_owner = query(TaskMulti, index="ByOwnerStage")


def add_index(client: Any, repo: Any, table: Table, index: str) -> None:
    """Add ``table``'s native ``index`` to the live table with UpdateTable, as its
    create_table_params() declare it, and wait until it is ACTIVE."""
    from singletable._table import wait_until_active

    params = table.create_table_params(repo.table_name)
    (gsi,) = [g for g in params["GlobalSecondaryIndexes"] if g["IndexName"] == index]
    client.update_table(
        TableName=repo.table_name,
        AttributeDefinitions=params["AttributeDefinitions"],
        GlobalSecondaryIndexUpdates=[{"Create": gsi}],
    )
    wait_until_active(client, repo.table_name, delay=0.05)


@pytest.mark.parametrize(
    "after, repo_cls, entity",
    [
        pytest.param(after_single, AfterSingle, TaskSingle, id="single"),
        pytest.param(after_multi, AfterMulti, TaskMulti, id="multi", marks=MULTI),
    ],
)
def test_a_native_index_added_to_a_live_table_needs_no_backfill(
    make_repo: Callable[..., Any],
    client: Any,
    recorder: Any,
    after: Table,
    repo_cls: type[Any],
    entity: type[Any],
) -> None:
    """Items written before the index existed are in it once DynamoDB has filled it, in
    typed order (numbers by value), and a backfill finds nothing to write."""
    old: Before = make_repo(Before, before)
    for n, amount in enumerate([30, 4, 200, 15, 7]):
        old.create(TaskBefore(task_id=f"t{n}", owner_id="ann", stage=Stage.OPEN, amount=amount))
    old.create(TaskBefore(task_id="t9", owner_id="bob", stage=Stage.DONE, amount=1))
    add_index(client, old, after, after.indexes[0].name)
    new = make_repo(repo_cls, after)  # the same physical table, now with the index
    assert new.table_name == old.table_name
    recorder.clear()
    amounts = [t.amount for t in new.by_owner(owner_id="ann").items]
    assert amounts == [4, 7, 15, 30, 200]
    assert [t.task_id for t in new.by_owner(owner_id="bob").items] == ["t9"]
    assert recorder.operations == ["Query", "Query"]
    recorder.clear()
    report = new.backfill(entity)
    assert (report.matched, report.up_to_date, report.updated) == (6, 6, 0)
    assert set(recorder.operations) == {"Scan"}
