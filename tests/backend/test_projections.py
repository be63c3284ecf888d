"""Projections (typed subsets of an entity) and call-time filters, on every backend and both
twins, plus their compiled requests and definition-time refusals."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from moto_fixtures.tables import NOW

from singletable import (
    GSI,
    Attr,
    Entity,
    Param,
    Projection,
    Repository,
    Table,
    get,
    query,
)
from singletable.errors import (
    InvalidCursor,
    InvalidRequestError,
    ModelDefinitionError,
    PatternArgumentError,
)
from tests.backend.test_reads import order, put_raw
from tests.backend.test_writes import table_items
from tests.models import Customer, Order, Status, shop


class OrderSummary(Projection[Order]):
    order_id: str
    status: Status
    total: Decimal


class CustomerName(Projection[Customer]):
    customer_id: str
    name: str


class Summaries(Repository, table=shop):
    order_summaries = query(Order, order="desc", project=OrderSummary)
    pending_summary = query(Order, index="GSI2", project=OrderSummary)
    one_summary = query(Order, index="GSI3", hydrate=True, project=OrderSummary)
    only_order = query(Order, index="GSI1", one=True, project=OrderSummary)
    customer_name = get(Customer, project=CustomerName)
    customer_orders = query(Order, order="desc")
    big_orders = query(Order, where=Attr("total").gte(Param("min_total")))
    order_refs = query(Order, index="GSI3", keys_only=True)


@pytest.fixture
def repo(make_repo: Any) -> Summaries:
    summaries: Summaries = make_repo(Summaries, shop)
    return summaries


# -- compiled requests (no backend) ----------------------------------------------------------


def test_a_projected_get_asks_for_the_projection_the_tag_and_the_ttl() -> None:
    params = Summaries(client=None).customer_name.params(customer_id="42")
    names = params["ExpressionAttributeNames"]
    assert sorted(names.values()) == ["_type", "customer_id", "expires_at", "name"]
    assert params["ProjectionExpression"] == ", ".join(names)  # every name aliased


def test_a_projected_query_also_asks_for_the_keys_its_cursor_needs() -> None:
    params = Summaries(client=None).pending_summary.params()
    projected = {
        params["ExpressionAttributeNames"][name]
        for name in params["ProjectionExpression"].split(", ")
    }
    assert projected == {
        "order_id",
        "status",
        "total",
        "_type",
        "expires_at",
        "PK",
        "SK",
        "GSI2PK",
        "GSI2SK",
    }
    assert params["IndexName"] == "GSI2" and params["KeyConditionExpression"] == "#pk = :pk"


def test_a_call_time_filter_is_anded_with_the_declared_one() -> None:
    repo = Summaries(client=None)
    params = repo.big_orders.params(
        customer_id="42", min_total=10, where=Attr("status").eq(Status.SHIPPED)
    )
    assert params["FilterExpression"] == "(#fn0 >= :fv0) AND (#wn0 = :wv0)"
    assert params["ExpressionAttributeNames"]["#wn0"] == "status"
    assert params["ExpressionAttributeValues"][":wv0"] == {"S": "SHIPPED"}
    alone = repo.customer_orders.params(customer_id="42", where=Attr("total").lt(Decimal(5)))
    assert alone["FilterExpression"] == "#wn0 < :wv0"
    assert alone["ExpressionAttributeValues"][":wv0"] == {"N": "5"}


def test_call_time_filters_are_refused_where_they_cannot_work() -> None:
    repo = Summaries(client=None)
    with pytest.raises(PatternArgumentError, match="customer_name") as caught:
        repo.customer_name.params(customer_id="42", where=Attr("name").eq("Ann"))
    assert isinstance(caught.value, TypeError) and caught.value.key == "where"
    with pytest.raises(InvalidRequestError, match="Param"):
        repo.customer_orders.params(customer_id="1", where=Attr("total").gte(Param("x")))
    with pytest.raises(InvalidRequestError, match="does not project"):
        repo.order_refs.params(order_id="A1", where=Attr("total").gte(1))
    with pytest.raises(InvalidRequestError, match="condition"):
        repo.customer_orders.params(customer_id="1", where="total > 5")


def test_projection_fields_are_checked_when_the_class_is_created() -> None:
    with pytest.raises(ModelDefinitionError, match=r"Typo\.totl: Order has no field 'totl'"):

        class Typo(Projection[Order]):
            totl: Decimal

    with pytest.raises(ModelDefinitionError, match=r"Wrong\.total is annotated"):

        class Wrong(Projection[Order]):
            total: str

    class Loose(Projection[Order]):  # the entity's type, or it | None, or Any
        total: Decimal | None
        status: Any

    assert set(Loose.model_fields) == {"total", "status"}


def test_projection_patterns_are_checked_when_the_repository_is_created() -> None:
    with pytest.raises(ModelDefinitionError, match="OrderSummary projects Order, not Customer"):

        class OtherEntity(Repository, table=shop):
            customer = get(Customer, project=OrderSummary)  # type: ignore[arg-type]

    with pytest.raises(ModelDefinitionError, match="projects KEYS_ONLY"):

        class Unprojected(Repository, table=shop):
            refs = query(Order, index="GSI3", project=OrderSummary)

    catalog = Table(
        "Catalog",
        indexes=[
            GSI("ByCat", pk="CatPK", sk="CatSK", projection=("INCLUDE", ["_type", "name", "price"]))
        ],
    )

    class Product(Entity, table=catalog, type="P"):
        sku: str
        category: str
        name: str
        price: Decimal
        stock: int

        class Keys:
            pk = "SKU#{sku}"
            sk = "P"
            ByCat = ("CAT#{category}", "SKU#{sku}")

    class Listing(Projection[Product]):
        name: str
        price: Decimal

    class Catalog(Repository, table=catalog):
        listings = query(Product, index="ByCat", project=Listing)  # all projected: no hydrate

    names = Catalog(client=None).listings.params(category="tea")["ExpressionAttributeNames"]
    assert {"name", "price"} <= set(names.values())


# -- on the backends, both twins ---------------------------------------------------------------


def test_projected_reads_return_projection_instances(repo: Summaries, recorder: Any) -> None:
    for i in range(5):
        put_raw(repo, order(i, status=Status.PENDING if i % 2 else Status.SHIPPED))
    put_raw(repo, Customer(customer_id="42", name="Ann", email="ann@example.com"))
    with recorder.expect("GetItem"):
        name = repo.customer_name(customer_id="42")
    assert name == CustomerName(customer_id="42", name="Ann")
    with recorder.expect("Query", "Query", "Query"):
        first = repo.order_summaries(customer_id="42", limit=2)
        second = repo.order_summaries(customer_id="42", limit=2, cursor=first.cursor)
        third = repo.order_summaries(customer_id="42", limit=2, cursor=second.cursor)
    summaries = [*first, *second, *third]
    assert all(type(s) is OrderSummary for s in summaries)
    assert [s.order_id for s in summaries] == ["A004", "A003", "A002", "A001", "A000"]
    assert summaries[0] == OrderSummary(
        order_id="A004", status=Status.SHIPPED, total=Decimal("14.50")
    )
    pending = list(repo.pending_summary.all())
    assert [s.order_id for s in pending] == ["A001", "A003"]


def test_a_hydrated_projection_fetches_only_its_fields(repo: Summaries, recorder: Any) -> None:
    put_raw(repo, order(7))
    with recorder.expect("Query", "BatchGetItem"):
        page = repo.one_summary(order_id="A007")
    assert page.items == [
        OrderSummary(order_id="A007", status=Status.PENDING, total=Decimal("17.50"))
    ]
    (batch,) = recorder.params("BatchGetItem")
    request = next(iter(batch["RequestItems"].values()))
    assert "total" in request["ExpressionAttributeNames"].values()


def test_one_projection_or_none(repo: Summaries) -> None:
    put_raw(repo, order(1, status=Status.CANCELLED))
    found = repo.only_order(status=Status.CANCELLED)
    assert found == OrderSummary(order_id="A001", status=Status.CANCELLED, total=Decimal("11.50"))
    assert repo.only_order(status=Status.SHIPPED) is None


def test_projections_are_never_written(repo: Summaries, recorder: Any) -> None:
    put_raw(repo, order(1))
    summary = repo.order_summaries(customer_id="42").items[0]
    before = table_items(repo)
    attempts = [
        lambda: repo.create(summary),
        lambda: repo.put(summary),
        lambda: repo.update(summary, total=Decimal(1)),
        lambda: repo.delete(summary),
        lambda: repo.move(summary, order_id="B"),
        lambda: repo.batch_put([summary]),
        lambda: repo.batch_delete([summary]),
    ]
    recorder.clear()
    for attempt in attempts:
        with pytest.raises(InvalidRequestError, match="OrderSummary is a projection"):
            attempt()
    with (
        pytest.raises(InvalidRequestError, match="OrderSummary is a projection"),
        repo.transaction() as tx,
    ):
        tx.create(summary)
    assert recorder.operations == [] and table_items(repo) == before


def test_call_time_filters_filter_and_bind_their_cursor(repo: Summaries, recorder: Any) -> None:
    for i in range(6):
        put_raw(repo, order(i, status=Status.SHIPPED if i < 3 else Status.PENDING))
    shipped = Attr("status").eq(Status.SHIPPED)
    with recorder.expect("Query"):
        page = repo.customer_orders(customer_id="42", where=shipped, limit=2)
    assert [o.order_id for o in page] == []  # the newest two are pending: filtered out
    found = [o.order_id for o in repo.customer_orders.all(customer_id="42", where=shipped)]
    assert found == ["A002", "A001", "A000"]
    cheap = repo.big_orders(customer_id="42", min_total=12, where=Attr("total").lt(Decimal(14)))
    assert [o.order_id for o in cheap] == ["A002", "A003"]
    assert repo.customer_orders.count(customer_id="42", where=shipped) == 3
    assert repo.customer_orders.first(customer_id="42", where=shipped).order_id == "A002"  # type: ignore[union-attr]
    assert page.cursor is not None
    with pytest.raises(InvalidCursor):
        repo.customer_orders(customer_id="42", cursor=page.cursor)  # made under another filter
    with pytest.raises(InvalidCursor):
        repo.customer_orders(
            customer_id="42", cursor=page.cursor, where=Attr("status").eq(Status.PENDING)
        )
    other = repo.customer_orders(customer_id="42", limit=2)
    with pytest.raises(InvalidCursor):
        repo.customer_orders(customer_id="42", cursor=other.cursor, where=shipped)


def test_a_cursor_is_bound_to_the_attributes_its_filter_names(repo: Summaries) -> None:
    """Filters that differ only in the attribute they read compile to the same text and
    values; the cursor is bound to the names too (top-level and nested paths)."""
    for i in range(6):
        put_raw(repo, order(i, customer_name="x"))
    pairs = [
        (Attr("customer_name").eq("x"), Attr("order_id").eq("x")),
        (Attr("extra.note").not_exists(), Attr("extra.body").not_exists()),
        (Attr("lines[0].qty").not_exists(), Attr("lines[1].qty").not_exists()),
    ]
    for made_under, used_under in pairs:
        page = repo.customer_orders(customer_id="42", where=made_under, limit=2)
        assert page.cursor is not None
        with pytest.raises(InvalidCursor):
            repo.customer_orders(customer_id="42", where=used_under, cursor=page.cursor)
        rest = repo.customer_orders.all(customer_id="42", where=made_under, cursor=page.cursor)
        assert len(list(rest)) == 4  # every order matches each filter: 2 read, 4 to go


def test_projected_fields_read_like_the_entity_reads_them() -> None:
    created = datetime(2026, 6, 1, tzinfo=__import__("datetime").timezone.utc)

    class Dated(Projection[Order]):
        created_at: datetime

    item = order(1, created_at=created).to_item()
    plan_decode = Summaries.order_summaries.projection
    assert plan_decode is not None
    from singletable._entity import spec_of
    from singletable._projection import ProjectionPlan

    decoded = ProjectionPlan(Dated, spec_of(Order)).decode(item)
    assert decoded.created_at == created == Order.from_item(item).created_at


def test_an_expired_item_is_not_read_through_a_projection(repo: Summaries, clock: Any) -> None:
    """A projection leaves the TTL attribute out of the model, not out of the request: an
    expired order stays hidden from a projected query, whichever clock reading makes it so."""
    put_raw(repo, order(0, expires_at=NOW - timedelta(hours=1)))
    put_raw(repo, order(1, expires_at=NOW + timedelta(hours=1)))
    put_raw(repo, order(2))
    summaries = repo.order_summaries(customer_id="42")
    assert [s.order_id for s in summaries] == ["A002", "A001"]
    assert all(isinstance(s, OrderSummary) for s in summaries)
    clock.now = NOW + timedelta(hours=2)
    assert [s.order_id for s in repo.order_summaries(customer_id="42")] == ["A002"]
    assert repo.order_summaries.count(customer_id="42") == 1
