"""``singletable.testing.RepositoryFactory`` and its fixtures: a repository on a fresh table of
the chosen backend, seeded from entities the way the library writes them."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any

import pytest

from singletable import Entity, Repository, Table, Version, get, query
from singletable.aio import AsyncRepository
from singletable.errors import InvalidRequestError
from singletable.testing import RepositoryFactory
from tests.models import Customer, Order, Shop, Status

if TYPE_CHECKING:
    from moto_fixtures.recorder import RequestRecorder
    from mypy_boto3_dynamodb import DynamoDBClient

notes = Table("Notes")  # no TTL, no transactions: every backend serves it


class Note(Entity, table=notes, type="NOTE"):
    owner: str
    note_id: str
    text: str
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "OWNER#{owner}"
        sk = "NOTE#{note_id}"


class Tag(Entity, table=notes, type="TAG"):
    owner: str
    tag: str

    class Keys:
        pk = "OWNER#{owner}"
        sk = "TAG#{tag}"


class Notebook(Repository, table=notes):
    notes_of = query(Note)
    tags_of = query(Tag)


class AsyncNotebook(AsyncRepository, table=notes):
    note = get(Note)


def seed() -> list[Entity]:
    return [
        Note(owner="ann", note_id="1", text="first"),
        Tag(owner="ann", tag="work"),
        Tag(owner="ann", tag="home"),
        Note(owner="ann", note_id="2", text="second"),
    ]


def test_a_seeded_repository_on_every_backend(
    client: DynamoDBClient, recorder: RequestRecorder, table_name: str
) -> None:
    factory = RepositoryFactory(client)
    repo = factory(Notebook, seed(), table_name=table_name)
    assert repo.table_name == table_name
    assert [n.text for n in repo.notes_of(owner="ann")] == ["first", "second"]
    assert {t.tag for t in repo.tags_of(owner="ann")} == {"work", "home"}
    assert [n.version for n in repo.notes_of(owner="ann")] == [1, 1]  # written by create
    # one CreateTable, a create per versioned entity, one BatchWriteItem for the rest
    writes = [op for op in recorder.operations if op not in ("DescribeTable", "Query")]
    assert writes == ["CreateTable", "PutItem", "PutItem", "BatchWriteItem"]
    again = factory(Notebook, table_name=table_name)  # the table exists: not created twice
    assert recorder.operations.count("CreateTable") == 1
    assert len(again.tags_of(owner="ann").items) == 2
    assert factory.created == [table_name]


@pytest.mark.requires("transactions", "ttl_api")
def test_unique_fields_get_their_guard_items(client: DynamoDBClient, table_name: str) -> None:
    ann = Customer(customer_id="c1", name="Ann", email="ann@example.com")
    order = Order(
        customer_id="c1",
        order_id="o1",
        created_at=datetime(2026, 6, 1, tzinfo=timezone.utc),
        status=Status.PENDING,
        total=Decimal("5"),
        customer_name="Ann",
    )
    repo = RepositoryFactory(client)(Shop, [ann, order], table_name=table_name)
    assert repo.customer(customer_id="c1").version == 1  # type: ignore[union-attr]
    assert [o.order_id for o in repo.customer_orders(customer_id="c1")] == ["o1"]
    items = client.scan(TableName=table_name)["Items"]
    assert sorted(item["_type"]["S"] for item in items) == ["CUSTOMER", "ORDER", "__unique__"]


def test_seed_entities_must_belong_to_the_table(client: DynamoDBClient, table_name: str) -> None:
    ann = Customer(customer_id="c1", name="Ann", email="ann@example.com")
    with pytest.raises(InvalidRequestError, match="'Shop', not 'Notes'"):
        RepositoryFactory(client)(Notebook, [ann], table_name=table_name)


def test_an_async_repository_is_told_how_to_connect(client: DynamoDBClient) -> None:
    with pytest.raises(TypeError, match=r"factory\.tables\(AsyncNotebook"):
        RepositoryFactory(client)(AsyncNotebook)  # type: ignore[type-var]


# -- the plugin's fixtures (singletable.testing is loaded through its pytest11 entry point) ------


def test_the_in_process_fixture(repository_factory: RepositoryFactory) -> None:
    repo = repository_factory(Notebook, seed())
    assert len(repo.notes_of(owner="ann").items) == 2
    assert repository_factory.client.list_tables()["TableNames"] == ["Notes"]
    assert repository_factory.endpoint is None


def test_the_endpoint_fixture_serves_the_async_twin(
    endpoint_repository_factory: RepositoryFactory,
) -> None:
    factory = endpoint_repository_factory
    assert factory.tables(AsyncNotebook, seed()) == "Notes"
    assert factory.endpoint is not None

    async def read() -> Any:
        async with AsyncNotebook.connect(
            endpoint_url=factory.endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        ) as repo:
            return await repo.note(owner="ann", note_id="2")

    note = asyncio.run(read())
    assert note is not None and note.text == "second"
