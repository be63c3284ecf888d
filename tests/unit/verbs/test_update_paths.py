"""UpdateItem requests with document paths in their clauses (``set={"shipping.city": ...}``),
piece by piece (pure: no backend): every segment aliased, values validated and stored as the
nested field stores them, the parent a path needs conditioned on, overlapping or unknown paths
refused before anything is sent, and index keys that depend on a partly changed field refused
as a top-level change would be."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from singletable import Attr
from singletable._context import WriteContext
from singletable._entity import spec_of
from singletable._verbs.update import compile_update
from singletable.errors import ConditionFailed, InvalidRequestError, KeyTemplateError, NotFound
from tests.nested_models import Address, Cart, Delivery, Invoice, Line

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
NOW_PYNAMODB = "2026-03-01T12:00:00.000000+0000"  # the table's datetime format
CTX = WriteContext("Carts", NOW)
CART_KEY = {"PK": {"S": "CART#c1"}, "SK": {"S": "CART"}}


def update(cls: type[Any], key_fields: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return compile_update(spec_of(cls), CTX, key_fields=key_fields, **changes).params


def test_set_aliases_every_segment_and_stores_stored_names() -> None:
    params = update(
        Cart, {"cart_id": "c1"}, set_values={"shipping.city": "Lyon", "shipping.postcode": "69"}
    )
    assert params == {
        "TableName": "Carts",
        "Key": CART_KEY,
        # shipping is required and never None: no parent to condition on.
        "UpdateExpression": "SET #n0.#n1 = :v0, #n0.#n2 = :v1, #n4 = :v3 ADD #n3 :v2",
        "ConditionExpression": "attribute_exists(#cn0)",
        "ExpressionAttributeNames": {
            "#n0": "shipping",
            "#n1": "city",
            "#n2": "zip",  # Address.postcode is stored under its alias
            "#n3": "version",
            "#n4": "updated",
            "#cn0": "PK",
        },
        "ExpressionAttributeValues": {
            ":v0": {"S": "Lyon"},
            ":v1": {"S": "69"},
            ":v2": {"N": "1"},  # Version() and UpdatedAt() move as on any update
            ":v3": {"S": NOW_PYNAMODB},
        },
        "ReturnValues": "ALL_NEW",
    }


def test_every_clause_takes_a_path() -> None:
    params = update(
        Cart,
        {"cart_id": "c1"},
        set_values={"lines[1].qty": "4", "shipping.postcode": None},
        remove=["attrs.colour"],
        add={"counts.red": 2, "lines[0].tags": ["x"]},
        append={"shipping.notes": ["n"]},
        if_not_exists={"attrs.size": "L"},
    )
    assert params["UpdateExpression"] == (
        "SET #n0[1].#n1 = :v0, #n4.#n6 = if_not_exists(#n4.#n6, :v1), "
        "#n2.#n10 = list_append(if_not_exists(#n2.#n10, :v4), :v5), #n12 = :v7 "
        "REMOVE #n2.#n3, #n4.#n5 ADD #n7.#n8 :v2, #n0[0].#n9 :v3, #n11 :v6"
    )
    names = params["ExpressionAttributeNames"]
    assert [names[f"#n{i}"] for i in range(13)] == [
        "lines", "qty", "shipping", "zip", "attrs", "colour", "size", "counts", "red", "tags",
        "notes", "version", "updated",
    ]  # fmt: skip
    values = params["ExpressionAttributeValues"]
    assert values[":v0"] == {"N": "4"}  # "4" validated to the int Line.qty is
    assert values[":v2"] == {"N": "2"} and values[":v3"] == {"SS": ["x"]}
    assert values[":v5"] == {"L": [{"S": "n"}]}
    # set= None at a model field removes it, as the item codec leaves a None field out.
    assert "#n2.#n3" in params["UpdateExpression"].split("REMOVE ")[1]
    # A list element may be missing: the update needs it, and says so.
    assert params["ConditionExpression"] == (
        "(attribute_exists(#cn0)) AND (attribute_exists(#cn1[1])) AND (attribute_exists(#cn1[0]))"
    )
    assert (names["#cn0"], names["#cn1"]) == ("PK", "lines")


def test_prepend_puts_the_values_first_at_a_field_or_a_path() -> None:
    params = update(Cart, {"cart_id": "c1"}, prepend={"lines": [{"sku": "z"}]})
    assert params["UpdateExpression"].startswith(
        "SET #n0 = list_append(:v1, if_not_exists(#n0, :v0))"
    )
    assert params["ExpressionAttributeValues"][":v0"] == {"L": []}
    # {"sku": "z"} validated to a Line; its empty tag set is left out, as to_item does.
    assert params["ExpressionAttributeValues"][":v1"] == {
        "L": [{"M": {"sku": {"S": "z"}, "qty": {"N": "1"}}}]
    }
    nested = update(Cart, {"cart_id": "c1"}, prepend={"shipping.notes": ["first"]})
    assert nested["UpdateExpression"].startswith(
        "SET #n0.#n1 = list_append(:v1, if_not_exists(#n0.#n1, :v0))"
    )


def test_an_optional_parent_is_conditioned_on_and_a_failure_names_it() -> None:
    op = compile_update(
        spec_of(Cart), CTX, key_fields={"cart_id": "c1"}, set_values={"billing.city": "Paris"}
    )
    assert op.params["ConditionExpression"] == (
        "(attribute_exists(#cn0)) AND (attribute_exists(#cn1))"
    )
    assert op.params["ExpressionAttributeNames"]["#cn1"] == "billing"
    stored = spec_of(Cart).to_item(Cart(cart_id="c1", shipping=Address(city="Lyon")))
    error = op.fail(stored)  # DynamoDB returns the item with the failure: no billing
    assert isinstance(error, ConditionFailed) and not isinstance(error, NotFound)
    assert error.key == "billing.city"
    assert "billing is not stored, so billing.city cannot be updated" in error.message
    assert "set billing whole" in error.message
    assert error.item == Cart(cart_id="c1", shipping=Address(city="Lyon"))
    assert isinstance(op.fail(None), NotFound)  # no item at all: not found, as before


def test_a_condition_on_a_path_compares_values_as_the_path_stores_them() -> None:
    params = update(
        Cart,
        {"cart_id": "c1"},
        set_values={"lines[0].qty": 2},
        condition=Attr("lines[0].qty").gte(1) & Attr("billing.since").lt(NOW),
    )
    assert params["ConditionExpression"].startswith(
        "((#cn0[0].#cn1 >= :cv0) AND (#cn2.#cn3 < :cv1))"
    )
    values = params["ExpressionAttributeValues"]
    assert values[":cv0"] == {"N": "1"}
    assert values[":cv1"] == {"S": NOW_PYNAMODB}  # the table's datetime format, nested too
    # A path the model does not know (an extra, a stored name) compares by the value's type.
    loose = update(
        Cart, {"cart_id": "c1"}, set_values={"status": "closed"}, condition=Attr("x.y").eq(3)
    )
    assert loose["ExpressionAttributeValues"][":cv0"] == {"N": "3"}


def test_values_are_validated_against_the_nested_type_before_sending() -> None:
    with pytest.raises(InvalidRequestError, match=r"Cart.lines\[0\].qty is not valid") as caught:
        update(Cart, {"cart_id": "c1"}, set_values={"lines[0].qty": "many"})
    assert caught.value.key == "lines[0].qty"
    with pytest.raises(InvalidRequestError, match=r"Cart\.lines\[0\] is not valid"):
        update(Cart, {"cart_id": "c1"}, set_values={"lines[0]": {"qty": 1}})  # no sku
    with pytest.raises(InvalidRequestError, match=r"Cart\.shipping\.notes is not valid"):
        update(Cart, {"cart_id": "c1"}, append={"shipping.notes": [{"a": 1}]})


@pytest.mark.parametrize(
    ("changes", "message", "key"),
    [
        ({"set_values": {"shipping.cty": "x"}}, "has no field 'cty'", "shipping.cty"),
        ({"remove": ["shipping.city"]}, "is required and cannot be removed", "shipping.city"),
        ({"add": {"shipping.city": 1}}, "add= needs a number or set", "shipping.city"),
        ({"delete": {"counts.red": {1}}}, "delete= needs a set", "counts.red"),
        ({"append": {"lines[0].qty": [1]}}, "append= needs a list", "lines[0].qty"),
        ({"prepend": {"attrs.x": ["a"]}}, "prepend= needs a list", "attrs.x"),
        ({"set_values": {"lines[01x]": 1}}, "ASCII digits", "lines[01x]"),
    ],
)
def test_refusals_name_the_path(changes: dict[str, Any], message: str, key: str) -> None:
    with pytest.raises(InvalidRequestError, match=message) as caught:
        update(Cart, {"cart_id": "c1"}, **changes)
    assert caught.value.key == key


@pytest.mark.parametrize(
    "changes",
    [
        {"set_values": {"shipping": Address(city="a"), "shipping.city": "b"}},
        {"set_values": {"lines[0].qty": 2}, "remove": ["lines[0]"]},
        {"prepend": {"lines": [Line(sku="a")]}, "add": {"lines[0].tags": {"x"}}},
    ],
)
def test_overlapping_paths_are_refused_before_sending(changes: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestError, match="overlap"):
        update(Cart, {"cart_id": "c1"}, **changes)


def test_an_upsert_takes_no_path() -> None:
    with pytest.raises(InvalidRequestError, match="upsert of Cart may create the item"):
        update(Cart, {"cart_id": "c1"}, set_values={"shipping.city": "x"}, upsert=True)


def test_an_index_key_computed_from_a_partly_changed_field_is_refused() -> None:
    """Delivery's GSI1PK is CITY#{city}, city computed from address.city: a path changes the
    address in part, so the new key is unknown here, exactly like add= of a top-level field."""
    with pytest.raises(KeyTemplateError) as caught:
        update(Delivery, {"delivery_id": "d1"}, set_values={"address.city": "Lyon"})
    assert caught.value.key == "address"
    assert "changes by set= of 'address.city'" in caught.value.message
    # The whole address is a top-level change: the key is recomputed.
    params = update(Delivery, {"delivery_id": "d1"}, set_values={"address": {"city": "Lyon"}})
    assert params["ExpressionAttributeValues"][":v1"] == {"S": "CITY#Lyon"}


def test_a_callable_when_that_reads_a_partly_changed_field_refuses_the_update() -> None:
    with pytest.raises(KeyTemplateError) as caught:
        update(Invoice, {"invoice_id": "i1"}, set_values={"billing.postcode": "75"})
    assert caught.value.key == "billing" and "set= of 'billing.postcode'" in caught.value.message
    whole = update(Invoice, {"invoice_id": "i1"}, set_values={"billing": {"city": "P", "zip": "7"}})
    assert whole["UpdateExpression"].endswith("REMOVE #n1, #n2")  # left the sparse index
    assert whole["ExpressionAttributeNames"]["#n1"] == "GSI2PK"


def test_a_sparse_index_on_other_fields_is_left_alone() -> None:
    params = update(Cart, {"cart_id": "c1"}, set_values={"attrs.colour": "red"})
    assert not {"GSI2PK", "GSI2SK"} & set(params["ExpressionAttributeNames"].values())
