"""``propagate(...)``'s definition-time checks (raised by the repository class statement, naming
the culprit), its explain row, its lint finding and the type compatibility it checks. No I/O."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, Optional

import pytest

from singletable import (
    GSI,
    Entity,
    PropagationReport,
    Repository,
    Table,
    Unique,
    get,
    propagate,
    query,
)
from singletable._patterns.propagate import PropagatePattern, compatible
from singletable._tools.lint import check, explain_markdown
from singletable.errors import ModelDefinitionError
from tests.propagate_models import CopyShop

table = Table("Definitions", indexes=[GSI("GSI1", "GSI1PK", "GSI1SK")])


class Tier(str, Enum):
    BASIC = "basic"
    GOLD = "gold"


class Customer(Entity, table=table, type="CUSTOMER"):
    customer_id: str
    name: str
    nickname: str | None = None
    tier: Tier = Tier.BASIC
    since: datetime | None = None
    points: int = 0
    email: Annotated[str, Unique()] = ""

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"


class Order(Entity, table=table, type="ORDER"):
    customer_id: str
    order_id: str
    customer_name: str = ""
    customer_nickname: str = ""
    customer_tier: str | None = None
    customer_points: Decimal = Decimal(0)
    created: datetime | None = None

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"
        GSI1 = ("NAME#{customer_name}", "ORDER#{order_id}")


class Ticket(Entity, table=table, type="TICKET"):
    ticket_id: str
    customer_name: str

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"


def declare(**patterns: Any) -> type[Repository]:
    """A repository class with these patterns (the class statement runs the checks)."""
    return type("Shop", (Repository,), dict(patterns), table=table)


def customer_orders() -> Any:
    return query(Order)


def test_a_valid_declaration() -> None:
    orders = customer_orders()
    shop = declare(
        customer_orders=orders,
        name_sync=propagate(Customer, to=orders, fields={"name": "customer_name"}),
    )
    pattern = shop.patterns()["name_sync"]
    assert isinstance(pattern, PropagatePattern)
    assert pattern.keyword_fields == ("customer_id",)


def test_to_declared_after_the_propagation() -> None:
    orders = customer_orders()
    shop = declare(
        name_sync=propagate(Customer, to=orders, fields={"name": "customer_name"}),
        customer_orders=orders,
    )
    assert [row.pattern for row in shop.explain()] == ["name_sync", "customer_orders"]


def test_to_as_a_declared_signature() -> None:
    @query(Order)
    def orders_of(self: Any, *, customer_id: str) -> Any: ...

    shop = declare(
        orders_of=orders_of,
        name_sync=propagate(Customer, to=orders_of, fields={"name": "customer_name"}),
    )
    assert shop.explain()[1].operation == "Query+UpdateItem"
    assert shop.explain()[1].requests is None  # a Query per page, an UpdateItem per copy


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"nmae": "customer_name"}, "Customer has no field 'nmae'"),
        ({"name": "customer_nmae"}, "Order has no field 'customer_nmae'"),
        ({"name": "order_id"}, "Order.order_id is part of the primary key"),
        ({"since": "created"}, None),  # fine: datetime | None into datetime | None
        ({"nickname": "customer_nickname"}, r"Order.customer_nickname \(str\) cannot hold "),
        ({"points": "customer_points"}, r"customer_points .*cannot hold Customer.points"),
        ({"name": "customer_name", "tier": "customer_name"}, "receives both"),
        ({}, "fields= maps source fields"),
        ({"customer_id": "customer_name"}, "finds the copies by 'customer_id'"),
    ],
)
def test_fields_are_checked(fields: dict[str, str], message: str | None) -> None:
    orders = customer_orders()
    sync = propagate(Customer, to=orders, fields=fields)
    if message is None:
        declare(customer_orders=orders, sync=sync)
        return
    with pytest.raises(ModelDefinitionError, match=message) as caught:
        declare(customer_orders=orders, sync=sync)
    assert "Shop.sync" in str(caught.value)


def test_a_maintained_field_cannot_hold_a_copy() -> None:
    maintained = Table("Maintained")

    class Person(Entity, table=maintained, type="PERSON"):
        person_id: str
        name: str

        class Keys:
            pk = "P#{person_id}"
            sk = "P"

    from singletable import Version

    class Note(Entity, table=maintained, type="NOTE"):
        person_id: str
        note_id: str
        version: Annotated[int, Version()] = 0

        class Keys:
            pk = "P#{person_id}"
            sk = "NOTE#{note_id}"

    notes = query(Note)
    with pytest.raises(ModelDefinitionError, match=r"Note\.version is maintained"):
        type(
            "People",
            (Repository,),
            {"notes": notes, "sync": propagate(Person, to=notes, fields={"name": "version"})},
            table=maintained,
        )


def test_the_enum_of_a_str_field_fits_a_str_copy() -> None:
    orders = customer_orders()
    declare(
        customer_orders=orders,
        sync=propagate(Customer, to=orders, fields={"tier": "customer_tier"}),
    )


def test_every_keyword_of_to_must_be_a_source_field() -> None:
    tickets = query(Ticket)
    with pytest.raises(ModelDefinitionError, match="'ticket_id', which is not a field of Customer"):
        declare(
            tickets=tickets,
            sync=propagate(Customer, to=tickets, fields={"name": "customer_name"}),
        )


@pytest.mark.parametrize(
    "to",
    [get(Order), query(Order, one=True), query(Order, keys_only=True)],
    ids=["get", "one", "keys_only"],
)
def test_to_must_be_a_query_returning_entities(to: Any) -> None:
    with pytest.raises(ModelDefinitionError, match="to= takes a query"):
        declare(to=to, sync=propagate(Customer, to=to, fields={"name": "customer_name"}))


def test_to_must_be_declared_on_the_repository() -> None:
    elsewhere = customer_orders()
    with pytest.raises(ModelDefinitionError, match="to= must be a pattern declared on Shop"):
        declare(sync=propagate(Customer, to=elsewhere, fields={"name": "customer_name"}))


def test_the_source_must_live_on_the_table() -> None:
    other = Table("Other")

    class Stranger(Entity, table=other, type="STRANGER"):
        customer_id: str
        name: str

        class Keys:
            pk = "S#{customer_id}"
            sk = "S"

    orders = customer_orders()
    with pytest.raises(ModelDefinitionError, match="Stranger lives on table 'Other'"):
        declare(
            customer_orders=orders,
            sync=propagate(Stranger, to=orders, fields={"name": "customer_name"}),
        )


# -- explain, lint ---------------------------------------------------------------------------


def test_explain_row() -> None:
    row = next(r for r in CopyShop.explain() if r.pattern == "customer_sync")
    assert row.operation == "Query+UpdateItem"
    assert row.index is None and row.order == "asc" and row.entity_types == ("ORDER",)
    assert row.key_condition.startswith("PK = CUSTOMER#{customer_id} AND begins_with(SK, ORDER#)")
    assert "Customer (name -> Order.customer_name, tier -> Order.customer_tier)" in row.notes
    assert "| customer_sync | Query+UpdateItem | table |" in explain_markdown(CopyShop)


def test_lint_lists_each_propagation_and_its_pattern() -> None:
    findings = {f.subject: f for f in check(CopyShop) if f.code == "propagation"}
    assert set(findings) == {"customer_sync", "author_sync"}
    finding = findings["customer_sync"]
    assert finding.severity == "info"
    assert "Order.customer_name copies Customer.name" in finding.message
    assert "Order.customer_tier copies Customer.tier" in finding.message
    assert "pattern customer_orders (Query on the table" in finding.message
    assert "Review.author copies Customer.name" in findings["author_sync"].message
    assert "customer_reviews" in findings["author_sync"].message
    assert 'router.on(Customer, "MODIFY")(repo.customer_sync.on_event)' in finding.hint
    # A propagation is keyed (it reads through its pattern): never reported as a scan.
    assert [f for f in check(CopyShop) if f.code == "scan"] == []


def test_report_is_a_value() -> None:
    report = PropagationReport(matched=3, updated=2, skipped=1)
    assert report == PropagationReport(3, 2, 1) and report != PropagationReport(3, 1, 2)
    assert repr(report) == "PropagationReport(matched=3, updated=2, skipped=1)"
    with pytest.raises(AttributeError):
        report.updated = 0  # type: ignore[misc]


# -- compatible types ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target", "fits"),
    [
        (str, str, True),
        (str, Optional[str], True),  # noqa: UP045
        (str | None, str | None, True),
        (str | None, str, False),
        (Annotated[str, Unique()], str, True),
        (Annotated[str | None, "x"], Optional[str], True),  # noqa: UP045
        (Tier, str, True),
        (str, Tier, False),
        (int, Decimal, False),
        (bool, int, False),
        (int, str, False),
        (datetime, datetime | None, True),
        (int | str, int | str, True),
        (int | str | None, int | str, False),
        (int, Any, True),
    ],
)
def test_compatible(source: Any, target: Any, fits: bool) -> None:
    assert compatible(source, target) is fits
