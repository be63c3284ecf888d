"""A backfill job's items, without a backend: their keys on tables with and without a sort
key, the claim and record requests, and every path that must leave them alone (entities'
ownership, stream routers under every view, the layout view)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from singletable import Entity, Repository, Table, get
from singletable._backfill.job_items import (
    JOB_TYPE,
    BackfillSegment,
    JobItems,
    check_job_name,
    decode_in_flight,
    is_job_item,
)
from singletable._backfill.ledger import PageDone, Tally
from singletable._tools.layout import build_layout
from singletable.errors import InvalidRequestError
from singletable.streams import StreamRouter
from tests.backfill_models import Order, v2
from tests.unit.test_streams import record

loose = Table("Loose")  # an entity whose key templates match any text


class Anything(Entity, table=loose, type="ANY"):
    pk: str
    sk: str

    class Keys:
        pk = "{pk}"
        sk = "{sk}"


class LooseRepo(Repository, table=loose):
    anything = get(Anything)


def items_of(table: Table = v2) -> JobItems:
    return JobItems(table, "t", "orders-v2", "TOTAL")


def segment_item(items: JobItems, number: int, **extra: Any) -> dict[str, Any]:
    return {
        **items.segment_key(number),
        "_type": {"S": JOB_TYPE},
        "job": {"S": items.name},
        "segment": {"N": str(number)},
        **extra,
    }


def test_keys_share_one_partition_with_a_sort_key_and_not_without() -> None:
    items = items_of()
    assert items.header_key() == {"PK": {"S": "__backfill__#orders-v2"}, "SK": {"S": "JOB"}}
    assert items.segment_key(7) == {
        "PK": {"S": "__backfill__#orders-v2"},
        "SK": {"S": "SEGMENT#0000007"},
    }
    flat = items_of(Table("Flat", sk=None))
    assert flat.header_key() == {"PK": {"S": "__backfill__#orders-v2"}}
    assert flat.segment_key(7) == {"PK": {"S": "__backfill__#orders-v2#SEGMENT#0000007"}}


def test_a_claim_takes_a_free_or_expired_segment_that_is_not_done() -> None:
    params = items_of().claim_params(3, "w1", 160.0, 100.0)
    names = params["ExpressionAttributeNames"]
    values = params["ExpressionAttributeValues"]
    condition = params["ConditionExpression"]
    for placeholder, name in names.items():
        condition = condition.replace(placeholder, name)
    for placeholder, value in values.items():
        condition = condition.replace(placeholder, str(next(iter(value.values()))))
    assert condition == "(attribute_not_exists(PK)) OR ((done = False) AND (lease_until < 100.000))"
    assert params["ReturnValues"] == "ALL_NEW"
    assert params["Key"] == items_of().segment_key(3)
    assert {"owner", "lease_until", "claims", "_type"} <= set(names.values())


def test_pending_and_advance_hold_only_for_the_owner() -> None:
    items = items_of()
    pending = items.pending_params(0, "w1", 160.0, {("CUSTOMER#c1", "ORDER#o1"): ("updated", None)})
    advance = items.advance_params(
        PageDone(0, {"PK": {"S": "a"}, "SK": {"S": "b"}}, False, Tally()), "w1", 160.0, 100.0
    )
    for params in (pending, advance):
        names = params["ExpressionAttributeNames"]
        (owner,) = [p for p, n in names.items() if n == "owner"]
        assert params["ConditionExpression"].startswith(f"{owner} = ")
        assert {"S": "w1"} in params["ExpressionAttributeValues"].values()
    stored = {"in_flight": pending["ExpressionAttributeValues"][":v1"]}
    assert decode_in_flight(stored) == {("CUSTOMER#c1", "ORDER#o1"): ("updated", None)}
    assert "ADD" in advance["UpdateExpression"] and "REMOVE" in advance["UpdateExpression"]


def test_a_stored_segment_reads_as_a_record() -> None:
    items = items_of()
    item = segment_item(
        items,
        2,
        owner={"S": "host:1:abc"},
        lease_until={"N": "1781000000.500"},
        done={"BOOL": False},
        position={"M": {"SK": {"S": "ORDER#o9"}, "PK": {"S": "CUSTOMER#c1"}}},
        scanned={"N": "40"},
        updated={"N": "7"},
    )
    assert items.record(2, item) == BackfillSegment(
        2,
        done=False,
        owner="host:1:abc",
        lease_until=datetime.fromtimestamp(1781000000.5, timezone.utc),
        position={"PK": "CUSTOMER#c1", "SK": "ORDER#o9"},
        scanned=40,
        updated=7,
    )
    assert items.record(5, None) == BackfillSegment(5)  # never claimed


@pytest.mark.parametrize("name", ["", "x" * 201, "tab\there", 3])
def test_bad_job_names_are_refused(name: Any) -> None:
    with pytest.raises(InvalidRequestError):
        check_job_name(name)


# -- nothing reads them as entities --------------------------------------------------------------


def test_no_entity_owns_a_job_item() -> None:
    items = items_of()
    header = {**items.header_key(), "_type": {"S": JOB_TYPE}, "job": {"S": items.name}}
    for item in (header, segment_item(items, 0)):
        assert is_job_item(item, v2)
        for cls in v2.entities.values():
            assert not cls.__singletable__.owns(item, 0)
    assert not is_job_item(Order.__singletable__.to_item(_order()), v2)


@pytest.mark.parametrize("view", ["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"])
def test_stream_routers_skip_job_items(view: str) -> None:
    """Even keys that an entity's templates would parse (KEYS_ONLY) are left alone."""
    items = JobItems(loose, "Loose", "j", None)
    job = segment_item(items, 0, owner={"S": "w"})
    real = Anything(pk="a", sk="b").to_item()
    records = [
        record("INSERT", view, new=job),
        record("MODIFY", view, old=job, new=job),
        record("INSERT", view, new=real, seq="5"),
    ]
    assert [e.sequence_number for e in StreamRouter(LooseRepo).events(records)] == ["5"]


def test_the_layout_leaves_job_items_out() -> None:
    items = JobItems(loose, "Loose", "j", None)
    real = Anything(pk="a", sk="b").to_item()
    layout = build_layout(LooseRepo, [real, segment_item(items, 0), segment_item(items, 1)])
    assert [row.item for row in layout.rows] == [real]


def _order() -> Any:
    from decimal import Decimal

    from tests.backfill_models import Status

    return Order(customer_id="c1", order_id="o1", status=Status.PENDING, total=Decimal(1))
