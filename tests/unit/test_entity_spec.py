"""Ownership: the one answer to "is this stored item a live E?" (``EntitySpec.owns`` and its
server-side form ``ownership_filter``), and ``wire.ttl_passed``, the one reading of a stored TTL
that reads and writes share (an item past its TTL but not yet deleted counts as absent)."""

from __future__ import annotations

from singletable._entity import spec_of
from singletable._expressions import add_filter
from singletable._wire import ttl_passed
from tests.models import Customer, Order, OrderNote

NOW = 1_700_000_000


def test_an_item_expires_once_its_ttl_is_before_now() -> None:
    assert ttl_passed({"ttl": {"N": str(NOW - 1)}}, "ttl", NOW)
    assert not ttl_passed({"ttl": {"N": str(NOW)}}, "ttl", NOW)
    assert not ttl_passed({"ttl": {"N": str(NOW + 60)}}, "ttl", NOW)
    assert ttl_passed({"ttl": {"N": f"{NOW - 1}.75"}}, "ttl", NOW)  # fractions are cut off


def test_no_ttl_or_one_that_is_not_a_number_never_expires() -> None:
    assert not ttl_passed({}, "ttl", NOW)
    assert not ttl_passed({"ttl": {"S": "soon"}}, "ttl", NOW)
    assert not ttl_passed({"ttl": {"N": "not-a-number"}}, "ttl", NOW)


def test_an_entity_owns_its_live_items_only() -> None:
    spec = spec_of(Order)  # expires_at is its TTL field
    ttl = spec.table.ttl_attribute
    assert ttl is not None and spec.expires
    tag = spec.table.type_attribute
    live = {tag: {"S": "ORDER"}, ttl: {"N": str(NOW + 1)}}
    assert spec.owns(live, NOW)
    assert spec.owns({tag: {"S": "ORDER"}}, NOW)  # no TTL: never expires
    assert spec.owns({tag: {"S": "ORDER"}, ttl: {"N": "garbage"}}, NOW)
    assert not spec.owns({**live, ttl: {"N": str(NOW - 1)}}, NOW)  # expired, not yet deleted
    assert not spec.owns({**live, tag: {"S": "ORDER_NOTE"}}, NOW)  # another type's
    assert not spec.owns({ttl: {"N": str(NOW + 1)}}, NOW)  # untagged
    assert spec.tagged({**live, ttl: {"N": str(NOW - 1)}})


def test_an_entity_without_a_ttl_field_never_expires() -> None:
    spec = spec_of(OrderNote)
    ttl = spec.table.ttl_attribute
    assert ttl is not None and not spec.expires
    assert spec.owns({spec.table.type_attribute: {"S": "ORDER_NOTE"}, ttl: {"N": "1"}}, NOW)


def test_the_ownership_filter_is_owns_as_a_condition() -> None:
    spec = spec_of(Order)
    params: dict[str, object] = {"FilterExpression": "#x = :x"}
    add_filter(params, spec.ownership_filter(NOW), "c")
    assert params["FilterExpression"] == (
        "(#x = :x) AND ((#cn0 = :cv0) AND ((attribute_not_exists(#cn1)) OR (#cn1 >= :cv1)))"
    )
    assert params["ExpressionAttributeNames"] == {"#cn0": "_type", "#cn1": "expires_at"}
    assert params["ExpressionAttributeValues"] == {":cv0": {"S": "ORDER"}, ":cv1": {"N": str(NOW)}}


def test_the_tags_only_filter_leaves_expiry_to_the_caller() -> None:
    params: dict[str, object] = {}
    add_filter(params, spec_of(Order).ownership_filter(None), "")
    assert params["FilterExpression"] == "#n0 = :v0"
    params = {}
    add_filter(params, spec_of(Customer).ownership_filter(NOW), "")
    assert params["FilterExpression"] == "#n0 = :v0"  # Customer has no TTL field
