"""The pure half of ``repo.backfill``: value comparison, what is stale, the conditioned
UpdateItem (no backend). The checkpoint file and the progress line:
``test_backfill_store.py``."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from singletable._backfill.items import (
    BackfillFailure,
    BackfillPlan,
    BackfillReport,
    same_wire,
    stale_attributes,
)
from singletable._context import WriteContext
from tests.backfill_models import Account, Order, OrderV1, Status
from tests.conftest import NOW

CTX = WriteContext("t", NOW)

numbers = st.decimals(min_value=-(10**20), max_value=10**20, allow_nan=False, places=3)
scalars = st.one_of(
    st.text(max_size=5).map(lambda s: {"S": s}),
    numbers.map(lambda d: {"N": str(d)}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.binary(max_size=4).map(lambda b: {"B": b}),
)
# what a JSON round trip keeps (bytes are compared apart: test_same_wire_tells_values_apart)
values = st.recursive(
    scalars.filter(lambda v: "B" not in v),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda v: {"L": v}),
        st.dictionaries(st.text(max_size=3), inner, max_size=3).map(lambda v: {"M": v}),
    ),
    max_leaves=8,
)


@given(values)
def test_same_wire_is_reflexive(value: dict[str, Any]) -> None:
    assert same_wire(value, value)
    assert same_wire(value, json.loads(json.dumps(value, default=lambda b: b.decode("latin-1"))))


@given(st.lists(numbers, min_size=1, max_size=5, unique=True), st.randoms())
def test_same_wire_compares_numbers_and_sets_by_value(nums: list[Decimal], rnd: Any) -> None:
    texts = [str(n) for n in nums]
    shuffled = texts[:]
    rnd.shuffle(shuffled)
    assert same_wire({"NS": texts}, {"NS": shuffled})
    assert same_wire({"SS": texts}, {"SS": shuffled})
    assert same_wire({"N": texts[0]}, {"N": str(Decimal(texts[0]).normalize())})
    assert not same_wire({"N": texts[0]}, {"S": texts[0]})


def test_same_wire_tells_values_apart() -> None:
    assert not same_wire({"S": "a"}, {"S": "b"})
    assert not same_wire({"S": "a"}, None)
    assert same_wire(None, None)
    assert same_wire({"B": b"\x00"}, {"B": "AA=="})  # base64 text from a JSON response
    assert not same_wire({"L": [{"S": "a"}]}, {"L": [{"S": "a"}, {"S": "b"}]})
    assert not same_wire({"M": {"a": {"N": "1"}}}, {"M": {"a": {"N": "2"}}})


def test_stale_attributes_sets_what_differs_and_removes_dropped_index_keys() -> None:
    stored = {"PK": {"S": "p"}, "SK": {"S": "s"}, "GSI2PK": {"S": "x"}, "n": {"N": "1.0"}}
    wanted = {"PK": {"S": "p"}, "SK": {"S": "s"}, "GSI1PK": {"S": "y"}, "n": {"N": "1"}}
    changes, remove = stale_attributes(
        stored, wanted, frozenset({"GSI1PK", "GSI2PK"}), ("PK", "SK")
    )
    assert changes == {"GSI1PK": {"S": "y"}}
    assert remove == ["GSI2PK"]


def plan_of(spec: Any) -> BackfillPlan:
    return BackfillPlan(spec, "t", "TOTAL")


def old_item(**changes: Any) -> dict[str, Any]:
    order = OrderV1(customer_id="c1", order_id="o1", status=Status.PENDING, total=Decimal(3))
    return {**order.to_item(), **changes}


def test_classify_and_update_params() -> None:
    plan = plan_of(Order.__singletable__)
    decision = plan.classify(old_item(), CTX)
    assert decision.kind == "stale"
    assert set(decision.set) == {"_type", "GSI1PK", "GSI2PK", "GSI2SK", "shard"}
    params = plan.update_params(decision)
    assert params["Key"] == {"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "ORDER#o1"}}
    assert params["UpdateExpression"].startswith("SET ")
    assert params["ReturnConsumedCapacity"] == "TOTAL"
    condition = params["ConditionExpression"]
    names = params["ExpressionAttributeNames"]
    read = {names[n] for n in condition.replace("(", " ").replace(")", " ").split() if n in names}
    # unchanged since read: every scalar attribute read (keys aside), and those read as absent
    assert read >= {"PK", "_type", "status", "total", "GSI1PK", "GSI2PK", "shard"}
    assert "attribute_not_exists" in condition
    fresh = Order.__singletable__.to_item(
        Order(customer_id="c1", order_id="o1", status=Status.PENDING, total=Decimal(3))
    )
    assert plan.classify(fresh, CTX).kind == "fresh"
    assert plan.classify({**fresh, "_type": {"S": "NOTE"}}, CTX).kind == "skip"


def test_a_versioned_entity_is_conditioned_on_its_version() -> None:
    plan = plan_of(Account.__singletable__)
    item = {
        "PK": {"S": "ACCOUNT#a"},
        "SK": {"S": "ACCOUNT"},
        "_type": {"S": "ACCOUNT"},
        "account_id": {"S": "a"},
        "plan": {"S": "pro"},
        "version": {"N": "3"},
    }
    params = plan.update_params(plan.classify(item, CTX))
    names = {v: k for k, v in params["ExpressionAttributeNames"].items()}
    assert f"{names['version']} = " in params["ConditionExpression"]
    assert "plan" not in names  # neither touched nor checked: the version stands for it
    assert names["version"] not in params["UpdateExpression"]  # the version is not bumped


def test_an_undecodable_item_is_a_failure_without_its_contents() -> None:
    plan = plan_of(Order.__singletable__)
    decision = plan.classify(old_item(total={"S": "secret-value"}), CTX)
    assert decision.kind == "failed"
    assert decision.reason.startswith("item-decode")
    assert "secret-value" not in decision.reason


def test_report_text() -> None:
    assert str(BackfillReport(3, 2, 1, 1, 0, (), 2.5)) == (
        "scanned 3, matched 2: 1 up to date, 1 updated, 0 moved, 0 failed, 2.5 CU"
    )
    assert BackfillReport().ok
    assert not BackfillReport(failed=[BackfillFailure({}, "x")]).ok
