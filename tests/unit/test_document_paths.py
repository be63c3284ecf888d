"""Document paths (``"shipping.city"``, ``"lines[0].qty"``): parsed, resolved against the
entity's annotations to what they address and how it is stored, values validated against the
nested type (pure: no backend)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from singletable import Entity, Table
from singletable._document_paths import (
    is_document_path,
    parse_path,
    render_path,
    resolve_path,
)
from singletable._entity import spec_of
from singletable.errors import InvalidRequestError
from tests.nested_models import Address, Cart, Colour, Line

CART = spec_of(Cart)
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

# -- parsing -------------------------------------------------------------------------------------


def test_a_path_is_names_joined_by_dots_and_list_indexes() -> None:
    assert parse_path("lines[0].qty") == ("lines", 0, "qty")
    assert parse_path("matrix[1][22]") == ("matrix", 1, 22)
    assert parse_path("attrs.colour name") == ("attrs", "colour name")  # any map key text
    assert is_document_path("a.b") and is_document_path("a[0]") and not is_document_path("a")


@pytest.mark.parametrize(
    "text",
    [
        "lines[x]",
        "lines[-1]",
        "lines[\u0661]",  # ARABIC-INDIC DIGIT ONE: a digit to str.isdigit(), not ASCII
        "lines[ 1]",
        "a..b",
        ".a",
        "a.",
        "[0]",
        "a[0",
        "a]",
    ],
)
def test_anything_else_is_refused_naming_it(text: str) -> None:
    with pytest.raises(InvalidRequestError, match="ASCII digits") as caught:
        parse_path(text)
    assert caught.value.key == text


def test_conditions_read_paths_by_the_same_rule() -> None:
    from singletable import Attr
    from singletable._expressions import CompileContext, ExpressionBuilder

    condition = Attr("lines[0].qty").gt(1)
    assert condition.compile(CompileContext(ExpressionBuilder())) == "#n0[0].#n1 > :v0"
    with pytest.raises(InvalidRequestError, match="ASCII digits"):
        Attr("lines[\u0661].qty").exists().compile(CompileContext(ExpressionBuilder()))


NAMES = st.text(st.characters(blacklist_characters=".[]", blacklist_categories=["Cs"]), min_size=1)


@given(st.lists(NAMES | st.integers(0, 10**6), min_size=1, max_size=6), NAMES)
def test_rendering_and_parsing_agree(steps: list[Any], head: str) -> None:
    path = (head, *steps)
    assert parse_path(render_path(path)) == path


# -- resolution ----------------------------------------------------------------------------------


def test_a_nested_model_field_resolves_to_its_annotation_and_stored_name() -> None:
    path = resolve_path(CART, "shipping.postcode")
    assert (path.field, path.stored, path.container) == ("shipping", "shipping.zip", "model")
    assert path.annotation == str | None and not path.required
    assert resolve_path(CART, "shipping.city").required  # no default: cannot be removed


def test_list_elements_map_values_and_tuple_positions_resolve_to_their_item_types() -> None:
    assert resolve_path(CART, "lines[3].qty").annotation is int
    assert resolve_path(CART, "lines[0]").annotation is Line
    assert resolve_path(CART, "attrs.colour").annotation is str
    assert resolve_path(CART, "attrs.colour").container == "map"
    assert resolve_path(CART, "pair[1]").annotation is str
    assert resolve_path(CART, "counts.red").stored == "counts.red"  # an Enum key, validated
    assert resolve_path(CART, "shipping.notes[2]").container == "list"


def test_a_path_below_any_is_taken_as_it_is() -> None:
    path = resolve_path(CART, "meta.a[2].b")
    assert path.stored == "meta.a[2].b" and path.kind == "any"
    assert path.stored_form({"k": [1]}) == {"M": {"k": {"L": [{"N": "1"}]}}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("shipping.cty", "Cart.shipping (Address) has no field 'cty'"),
        ("colour.x", "Cart has no field 'colour'"),
        ("lines.qty", "Cart.lines (list) has no 'qty': it is neither a model nor a map"),
        ("shipping[0]", "Cart.shipping (Address) is not a list: it has no [0]"),
        ("status.x", "Cart.status (Literal) has no 'x'"),
        ("pair[2]", "Cart.pair holds 2 values: it has no [2]"),
        ("counts.green", "Cart.counts: 'green' is not a key of this map"),
        ("lines[0].qty.x", "Cart.lines[0].qty (int) has no 'x'"),
    ],
)
def test_a_path_that_does_not_exist_in_the_model_is_refused_naming_it(
    text: str, message: str
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        resolve_path(CART, text)
    assert message in caught.value.message
    assert caught.value.key == text


def test_the_parent_is_named_when_the_model_does_not_guarantee_it_is_stored() -> None:
    # shipping is required and not None: always stored, and so are its maps and lists.
    assert resolve_path(CART, "shipping.city").parent is None
    assert resolve_path(CART, "shipping.notes[0]").parent is None
    assert resolve_path(CART, "attrs.colour").parent is None
    # billing may be None (left out), a list element or a map entry may be missing.
    assert resolve_path(CART, "billing.city").parent == "billing"
    assert resolve_path(CART, "lines[2].qty").parent == "lines[2]"
    assert resolve_path(CART, "meta.a").parent == "meta"


# -- values --------------------------------------------------------------------------------------


def test_values_are_validated_against_the_nested_type_and_its_constraints() -> None:
    assert resolve_path(CART, "lines[0].qty").validate("3") == 3
    with pytest.raises(InvalidRequestError, match=r"Cart.lines\[0\].qty is not valid") as caught:
        resolve_path(CART, "lines[0].qty").validate(-1)  # Field(ge=0)
    assert caught.value.key == "lines[0].qty"
    with pytest.raises(InvalidRequestError, match="cannot be None"):
        resolve_path(CART, "shipping.city").validate(None)
    with pytest.raises(InvalidRequestError, match="is not valid"):
        resolve_path(CART, "lines[0]").validate({"qty": 2})  # a Line needs its sku
    assert resolve_path(CART, "lines[0]").validate({"sku": "a"}) == Line(sku="a")


def test_values_are_stored_as_the_nested_field_stores_them() -> None:
    # The table stores datetimes in PynamoDB's format, a nested field declares its own.
    assert resolve_path(CART, "billing.since").stored_form(WHEN) == {
        "S": "2026-01-02T03:04:05.000000+0000"
    }
    assert resolve_path(CART, "shipping.checked").stored_form(WHEN) == {"S": "20260102 030405"}
    item = CART.to_item(Cart(cart_id="c", shipping=Address(city="x", since=WHEN, checked=WHEN)))
    assert item["shipping"]["M"]["since"] == {"S": "2026-01-02T03:04:05.000000+0000"}
    assert item["shipping"]["M"]["checked"] == {"S": "20260102 030405"}
    assert resolve_path(CART, "lines[0]").stored_form(Line(sku="a", tags={"x"})) == {
        "M": {"sku": {"S": "a"}, "qty": {"N": "1"}, "tags": {"SS": ["x"]}}
    }


def test_none_is_stored_as_the_item_codec_stores_it() -> None:
    """A model leaves a None field out (so setting None removes it); a list or map holds NULL;
    an empty set, which DynamoDB cannot store, has no place in a map."""
    assert resolve_path(CART, "shipping.postcode").stored_form(None) is None
    assert resolve_path(CART, "meta.x").stored_form(None) == {"NULL": True}
    assert resolve_path(CART, "lines[0].tags").stored_form(set()) is None  # left out
    with pytest.raises(InvalidRequestError, match="an empty set cannot be stored in a map"):
        resolve_path(spec_of(Tagged), "tags.a").stored_form(set())


class Tagged(Entity, table=Table("Tagged"), type="TAGGED"):
    tagged_id: str
    tags: dict[str, set[str]] = {}

    class Keys:
        pk = "TAGGED#{tagged_id}"
        sk = "TAGGED"


# -- property: a path stores a value exactly as the item stores it there --------------------------

TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
MOMENTS = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)
)
CASES: dict[str, tuple[st.SearchStrategy[Any], Any]] = {
    # path -> (values, how the entity holds the value there)
    "shipping.city": (TEXT, lambda c, v: c.shipping.__setattr__("city", v)),
    "shipping.postcode": (st.none() | TEXT, lambda c, v: c.shipping.__setattr__("postcode", v)),
    "shipping.since": (st.none() | MOMENTS, lambda c, v: c.shipping.__setattr__("since", v)),
    "shipping.checked": (MOMENTS, lambda c, v: c.shipping.__setattr__("checked", v)),
    "shipping.notes[1]": (TEXT, lambda c, v: c.shipping.notes.__setitem__(1, v)),
    "lines[0].qty": (st.integers(0, 10**12), lambda c, v: c.lines[0].__setattr__("qty", v)),
    "lines[1].tags": (
        st.sets(TEXT, max_size=3),
        lambda c, v: c.lines[1].__setattr__("tags", v),
    ),
    "lines[1]": (
        st.builds(Line, sku=TEXT, qty=st.integers(0, 9)),
        lambda c, v: c.lines.__setitem__(1, v),
    ),
    "attrs.colour": (TEXT, lambda c, v: c.attrs.__setitem__("colour", v)),
    "counts.red": (st.integers(-5, 5), lambda c, v: c.counts.__setitem__(Colour.RED, v)),
    "pair[1]": (TEXT, lambda c, v: c.__setattr__("pair", (c.pair[0], v))),
}


def stored_at(item: dict[str, Any], stored_path: str) -> Any:
    node: Any = {"M": item}
    for step in parse_path(stored_path):
        if isinstance(step, int):
            node = node["L"][step]
        else:
            members = node["M"]
            if step not in members:
                return None  # left out
            node = members[step]
    return node


@given(st.data(), st.sampled_from(sorted(CASES)))
def test_a_path_stores_a_value_as_the_item_stores_it_there(data: st.DataObject, text: str) -> None:
    values, put = CASES[text]
    value = data.draw(values)
    cart = Cart(
        cart_id="c",
        shipping=Address(city="x", notes=["a", "b"]),
        lines=[Line(sku="a"), Line(sku="b")],
        attrs={"colour": "red"},
        counts={Colour.RED: 1},
    )
    path = resolve_path(CART, text)
    validated = path.validate(value)
    put(cart, validated)
    item = CART.to_item(cart)
    assert path.stored_form(validated) == stored_at(item, path.stored)
