"""``wire.ttl_passed``: the one reading of a stored TTL that reads and writes share (an item
past its TTL but not yet deleted by DynamoDB counts as absent)."""

from __future__ import annotations

from datetime import datetime, timezone

from singletable._entity import spec_of
from singletable._context import WriteContext
from singletable._verbs.ops import is_expired
from singletable._wire import ttl_passed

from ..models import Order

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


def test_writes_read_the_ttl_the_same_way() -> None:
    spec = spec_of(Order)  # expires_at is its TTL field
    ttl = spec.table.ttl_attribute
    assert ttl is not None and spec.ttl_field
    ctx = WriteContext("Shop", datetime.fromtimestamp(NOW, tz=timezone.utc))
    assert is_expired(spec, {ttl: {"N": str(NOW - 1)}}, ctx)
    assert not is_expired(spec, {ttl: {"N": "garbage"}}, ctx)  # raised ValueError before
