"""Condition callbacks (``lambda o, op: ...``) build exactly the conditions ``Attr`` builds, with
paths checked against the models and stored (aliased) names."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel, Field

from singletable import Attr, Entity, Param, Table
from singletable._expressions import condition_of
from singletable.errors import InvalidRequestError

table = Table("Callbacks")


class Line(BaseModel):
    sku: str
    qty: int


class Address(BaseModel):
    city: str
    zip_code: str = Field("", alias="zip")


class Parcel(Entity, table=table):
    owner: str
    parcel_id: str
    total: Decimal = Decimal(0)
    name: str = ""
    note: str = Field("", alias="n")
    tags: list[str] = []
    shipping: Address | None = None
    lines: list[Line] = []
    attrs: dict[str, Address] = {}

    class Keys:
        pk = "OWNER#{owner}"
        sk = "PARCEL#{parcel_id}"


def built(callback: Any) -> Any:
    return condition_of(callback, (Parcel,))


@pytest.mark.parametrize(
    ("callback", "expected"),
    [
        (lambda o, op: op.eq(o.name, "A"), Attr("name").eq("A")),
        (lambda o, op: op.ne(o.name, "A"), Attr("name").ne("A")),
        (lambda o, op: op.lt(o.total, 5), Attr("total").lt(5)),
        (lambda o, op: op.lte(o.total, 5), Attr("total").lte(5)),
        (lambda o, op: op.gt(o.total, 5), Attr("total").gt(5)),
        (lambda o, op: op.gte(o.total, Param("least")), Attr("total").gte(Param("least"))),
        (lambda o, op: op.between(o.total, 1, 9), Attr("total").between(1, 9)),
        (lambda o, op: op.begins_with(o.name, "A"), Attr("name").begins_with("A")),
        (lambda o, op: op.contains(o.tags, "red"), Attr("tags").contains("red")),
        (lambda o, op: op.exists(o.shipping), Attr("shipping").exists()),
        (lambda o, op: op.not_exists(o.note), Attr("n").not_exists()),  # the stored name
        (lambda o, op: op.is_in(o.name, "A", "B"), Attr("name").is_in("A", "B")),
        (lambda o, op: op.is_in(o.name, ["A", "B"]), Attr("name").is_in(["A", "B"])),
        (lambda o, op: op.is_in(o.name, Param("names")), Attr("name").is_in(Param("names"))),
        (lambda o, op: op.gt(o.total, o.lines[0].qty), Attr("total").gt(Attr("lines[0].qty"))),
        (lambda o, op: op.eq(o.shipping.city, "Oslo"), Attr("shipping.city").eq("Oslo")),
        (lambda o, op: op.eq(o.shipping.zip_code, "0150"), Attr("shipping.zip").eq("0150")),
        (lambda o, op: op.eq(o.lines[2].sku, "X"), Attr("lines[2].sku").eq("X")),
        (lambda o, op: op.eq(o.attrs["home"].city, "Bergen"), Attr("attrs.home.city").eq("Bergen")),
        (
            lambda o, op: op.gte(o.total, 50) & op.begins_with(o.name, "A"),
            Attr("total").gte(50) & Attr("name").begins_with("A"),
        ),
        (
            lambda o, op: ~(op.eq(o.name, "A") | op.eq(o.name, "B")),
            ~(Attr("name").eq("A") | Attr("name").eq("B")),
        ),
    ],
)
def test_a_callback_builds_the_condition_that_attr_builds(callback: Any, expected: Any) -> None:
    # (Attr operands compare by identity, so equal trees are compared by their repr)
    assert repr(built(callback)) == repr(expected)
    assert built(callback) == expected or isinstance(expected.value, Attr)
    assert built(callback).describe() == expected.describe()


def test_conditions_and_none_pass_through() -> None:
    condition = Attr("name").eq("A")
    assert condition_of(condition, (Parcel,)) is condition
    assert condition_of(None, (Parcel,)) is None


@pytest.mark.parametrize(
    ("callback", "message"),
    [
        (lambda o, op: op.gte(o.totl, 5), r"Parcel has no field 'totl' \(fields: attrs, lines, "),
        (lambda o, op: op.eq(o.shipping.town, "x"), r"Address.shipping has no field 'town'"),
        (lambda o, op: op.eq(o.lines[0].qtty, 1), r"Line.lines\[0\] has no field 'qtty'"),
        (lambda o, op: o.total > 5, r"compare total with an operator \(op.gt\(o.total"),
        (
            lambda o, op: op.eq(o.name, "A") and op.eq(o.name, "B"),
            "combine conditions with & and \\|",
        ),
        (lambda o, op: True, "returns a condition built with its operators"),
        (lambda o, op: op.eq("name", "A"), "first argument is a field of the stand-in"),
        (lambda o, op: op.eq(o.lines[1.5], 1), r"index a list with an int"),
    ],
)
def test_a_wrong_callback_is_refused_naming_the_field(callback: Any, message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        built(callback)


def test_a_stand_in_for_several_models_takes_any_of_their_fields() -> None:
    class Other(BaseModel):
        colour: str

    both = condition_of(lambda o, op: op.eq(o.colour, "red") & op.eq(o.name, "A"), (Parcel, Other))
    assert both == Attr("colour").eq("red") & Attr("name").eq("A")


def test_a_value_inside_a_map_or_list_is_encoded_by_its_own_type() -> None:
    """Comparing ``shipping.city`` (a str inside an ``Address``) encodes the str, not an
    ``Address``; the top-level field still encodes as the field stores it."""
    from singletable import Repository, query

    class Parcels(Repository, table=table):
        by_owner = query(Parcel)

    params = Parcels(client=None).by_owner.params(
        owner="o",
        where=Attr("shipping.city").eq("Oslo")
        & Attr("lines[0].qty").gt(2)
        & Attr("total").gte(Decimal("1.50")),
    )
    values = params["ExpressionAttributeValues"]
    assert {
        ":wv0": {"S": "Oslo"},
        ":wv1": {"N": "2"},
        ":wv2": {"N": "1.50"},
    }.items() <= values.items()


def test_a_condition_has_no_truth_value() -> None:
    with pytest.raises(InvalidRequestError, match=r"combine conditions with & and \|"):
        bool(Attr("a").eq(1))
