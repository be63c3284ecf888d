"""Updates of document paths (``set={"shipping.city": ...}``), on every backend and both twins:
each clause at a nested model field, a list element and a map entry in one UpdateItem, the
returned entity equal to what a read gives, the refusals DynamoDB would answer pre-empted
(overlapping paths before sending; a parent that is not stored named after one request), the
transaction form, and index keys that follow (or refuse) as for a top-level change."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from singletable import Attr
from singletable.errors import (
    ConditionFailed,
    InvalidRequestError,
    KeyTemplateError,
    NotFound,
    TransactionCanceled,
)
from tests.backend.test_writes import table_items
from tests.nested_models import Address, Cart, CartRepo, Colour, Delivery, Invoice, Line, carts

WHEN = datetime(2026, 2, 3, 4, 5, 6, tzinfo=timezone.utc)


@pytest.fixture
def repo(make_repo: Any) -> CartRepo:
    made: CartRepo = make_repo(CartRepo, carts)
    return made


def new_cart(repo: CartRepo, cart_id: str = "c1") -> Cart:
    created: Cart = repo.create(
        Cart(
            cart_id=cart_id,
            shipping=Address(city="Paris", notes=["ring twice"]),
            lines=[Line(sku="a", qty=1), Line(sku="b", qty=2, tags={"gift"})],
            attrs={"colour": "red"},
            counts={Colour.RED: 1},
        )
    )
    return created


def stored(repo: CartRepo, cart_id: str = "c1") -> dict[str, Any]:
    items = table_items(repo)
    return items[(f"CART#{cart_id}", "CART")]


def test_every_clause_at_a_path_is_one_update_item(repo: CartRepo, recorder: Any) -> None:
    cart = new_cart(repo)
    with recorder.expect("UpdateItem"):
        updated = repo.update(
            Cart,
            cart_id="c1",
            set={"shipping.city": "Lyon", "shipping.since": WHEN, "lines[1].qty": "5"},
            remove=["attrs.colour", "shipping.postcode"],
            add={"counts.blue": 2, "lines[0].tags": {"new"}},
            append={"shipping.notes": ["leave at door"]},
            if_not_exists={"attrs.size": "L"},
        )
    assert updated.shipping == Address(
        city="Lyon", since=WHEN, notes=["ring twice", "leave at door"]
    )
    assert updated.lines == [
        Line(sku="a", qty=1, tags={"new"}),
        Line(sku="b", qty=5, tags={"gift"}),
    ]
    assert updated.attrs == {"size": "L"}
    assert updated.counts == {Colour.RED: 1, Colour.BLUE: 2}
    assert updated.version == cart.version + 1  # Version() still bumps
    assert updated.updated is not None  # and UpdatedAt() still moves
    assert repo.cart(cart_id="c1") == updated  # what came back is what is stored
    raw = stored(repo)
    assert raw["shipping"]["M"]["since"] == {"S": "2026-02-03T04:05:06.000000+0000"}  # pynamodb
    with recorder.expect("UpdateItem"):
        first = repo.update(
            Cart, cart_id="c1", prepend={"lines": [{"sku": "z", "qty": 0}]}, add={"counts.red": 1}
        )
    assert [line.sku for line in first.lines] == ["z", "a", "b"]
    assert first.counts == {Colour.RED: 2, Colour.BLUE: 2}


def test_if_not_exists_keeps_a_stored_value_and_set_none_removes(repo: CartRepo) -> None:
    new_cart(repo)
    kept = repo.update(
        Cart, cart_id="c1", if_not_exists={"attrs.colour": "blue"}, set={"meta": {"a": [1]}}
    )
    assert kept.attrs == {"colour": "red"}
    coded = repo.update(Cart, cart_id="c1", set={"shipping.postcode": "75001"})
    assert coded.shipping.postcode == "75001" and "zip" in stored(repo)["shipping"]["M"]
    cleared = repo.update(Cart, cart_id="c1", set={"shipping.postcode": None, "meta.a[0]": 2})
    assert cleared.shipping.postcode is None and cleared.meta == {"a": [2]}
    assert "zip" not in stored(repo)["shipping"]["M"]  # left out, as to_item leaves None out


def test_a_value_of_the_wrong_type_is_refused_before_sending(repo: CartRepo, recorder: Any) -> None:
    new_cart(repo)
    before = table_items(repo)
    recorder.clear()
    with pytest.raises(InvalidRequestError) as caught:
        repo.update(Cart, cart_id="c1", set={"lines[0].qty": -1})  # Field(ge=0)
    assert caught.value.key == "lines[0].qty"
    with pytest.raises(InvalidRequestError, match="has no field 'cty'"):
        repo.update(Cart, cart_id="c1", set={"shipping.cty": "Lyon"})
    with pytest.raises(InvalidRequestError, match="overlap"):
        repo.update(Cart, cart_id="c1", set={"lines[0]": Line(sku="q")}, remove=["lines[0].tags"])
    assert recorder.operations == [] and table_items(repo) == before


def test_a_path_under_a_parent_that_is_not_stored_is_named(repo: CartRepo) -> None:
    """DynamoDB refuses a path below a missing map or list element (ValidationException, naming
    nothing); the update is conditioned on the parent instead, so the refusal names it and
    nothing is written."""
    new_cart(repo)
    before = table_items(repo)
    with pytest.raises(ConditionFailed) as caught:
        repo.update(Cart, cart_id="c1", set={"billing.city": "Lyon"})
    assert not isinstance(caught.value, NotFound)
    assert caught.value.key == "billing.city"
    assert "billing is not stored" in caught.value.message
    with pytest.raises(ConditionFailed, match=r"lines\[7\] is not stored"):
        repo.update(Cart, cart_id="c1", set={"lines[7].qty": 1})
    assert table_items(repo) == before
    # Once billing is stored, its fields can be updated.
    repo.update(Cart, cart_id="c1", set={"billing": Address(city="Nice")})
    assert repo.update(Cart, cart_id="c1", set={"billing.city": "Lyon"}).billing == Address(
        city="Lyon"
    )


def test_a_failed_condition_on_a_path_shows_the_path(repo: CartRepo) -> None:
    new_cart(repo)
    with pytest.raises(ConditionFailed, match=r"did not hold: lines\[0\]\.qty >= \?"):
        repo.update(
            Cart, cart_id="c1", add={"lines[0].qty": -5}, condition=Attr("lines[0].qty").gte(5)
        )


def test_conditions_and_filters_read_paths(repo: CartRepo) -> None:
    new_cart(repo)
    # add= takes a delta: Line.qty's ge=0 holds for the result, not for the -1 added.
    taken = repo.update(
        Cart, cart_id="c1", add={"lines[0].qty": -1}, condition=Attr("lines[0].qty").gte(1)
    )
    assert taken.lines[0].qty == 0
    new_cart(repo, "c2")
    repo.update(Cart, cart_id="c2", set={"shipping.city": "Lyon"})
    lyon = repo.open_carts(where=Attr("shipping.city").eq("Lyon"))
    assert [c.cart_id for c in lyon] == ["c2"]


def test_an_item_that_does_not_exist_is_not_found(repo: CartRepo) -> None:
    with pytest.raises(NotFound):
        repo.update(Cart, cart_id="nope", set={"shipping.city": "Lyon"})


def test_the_instance_form_takes_whole_fields(repo: CartRepo) -> None:
    cart = new_cart(repo)
    with pytest.raises(InvalidRequestError, match=r"set=\{'shipping.city': \.\.\.\}"):
        repo.update(cart, **{"shipping.city": "Lyon"})
    moved = repo.update(cart, shipping=cart.shipping.model_copy(update={"city": "Lyon"}))
    assert moved.shipping.city == "Lyon" and moved.shipping.notes == ["ring twice"]


@pytest.mark.requires("transactions")
def test_a_transaction_takes_paths_and_names_a_missing_parent(repo: CartRepo) -> None:
    new_cart(repo, "c1")
    new_cart(repo, "c2")
    with repo.transaction() as tx:
        tx.update(Cart, cart_id="c1", set={"shipping.city": "Lyon"}, add={"lines[0].qty": 1})
        tx.update(Cart, cart_id="c2", append={"shipping.notes": ["x"]})
    assert repo.cart(cart_id="c1").shipping.city == "Lyon"  # type: ignore[union-attr]
    assert repo.cart(cart_id="c1").lines[0].qty == 2  # type: ignore[union-attr]
    assert repo.cart(cart_id="c2").shipping.notes == ["ring twice", "x"]  # type: ignore[union-attr]
    before = table_items(repo)
    with pytest.raises(TransactionCanceled) as caught, repo.transaction() as tx:
        tx.update(Cart, cart_id="c1", set={"shipping.city": "Nice"})
        tx.update(Cart, cart_id="c2", set={"billing.city": "Nice"})
    reason = caught.value.reasons[1]
    assert isinstance(reason.error, ConditionFailed)
    assert "billing is not stored" in reason.error.message
    assert table_items(repo) == before


def test_an_index_key_computed_from_a_nested_field_follows_a_whole_change(
    repo: CartRepo, recorder: Any
) -> None:
    repo.create(Delivery(delivery_id="d1", address=Address(city="Paris")))
    recorder.clear()
    with pytest.raises(KeyTemplateError) as caught:  # the new city is not known here
        repo.update(Delivery, delivery_id="d1", set={"address.city": "Lyon"})
    assert caught.value.key == "address" and recorder.operations == []
    repo.update(Delivery, delivery_id="d1", set={"address": Address(city="Lyon")})
    assert [d.delivery_id for d in repo.deliveries_to(city="Lyon")] == ["d1"]
    assert list(repo.deliveries_to(city="Paris")) == []
    # A change that does not touch the address still needs it: the key is computed on every
    # update. The instance form knows it.
    delivery = repo.delivery(delivery_id="d1")
    assert delivery is not None
    assert repo.update(delivery, note="fragile").city == "Lyon"


def test_a_sparse_index_decided_by_a_nested_field_moves_with_a_whole_change(
    repo: CartRepo,
) -> None:
    repo.create(Invoice(invoice_id="i1", billing=Address(city="Paris")))
    assert [i.invoice_id for i in repo.invoices_to_check()] == ["i1"]
    with pytest.raises(KeyTemplateError, match=r"set= of 'billing\.postcode'"):
        repo.update(Invoice, invoice_id="i1", set={"billing.postcode": "75001"})
    repo.update(Invoice, invoice_id="i1", set={"billing": Address(city="Paris", zip="75001")})
    assert list(repo.invoices_to_check()) == []
    raw = table_items(repo)[("INVOICE#i1", "INVOICE")]
    assert "GSI2PK" not in raw and "GSI2SK" not in raw


def test_a_nested_update_leaves_the_sparse_index_it_does_not_touch(repo: CartRepo) -> None:
    new_cart(repo)
    repo.update(Cart, cart_id="c1", set={"shipping.city": "Lyon"})
    assert [c.cart_id for c in repo.open_carts()] == ["c1"]
    repo.update(Cart, cart_id="c1", set={"status": "closed", "attrs.colour": "blue"})
    assert list(repo.open_carts()) == []
