"""The direct transport's request bodies are botocore's, byte for byte: a property over every
data-plane operation and arbitrary attribute values (blobs and binary sets anywhere, nested
maps and lists, sets given as Python sets or tuples, non-ASCII text), plus the shapes the
compiler must refuse."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest
from botocore.serialize import create_serializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from singletable.aws._direct_body import Unsupported, compile_body

MODEL = botocore.session.get_session().get_service_model("dynamodb")
BOTOCORE = create_serializer("json", include_validation=False)

text = st.text(max_size=8)
blobs = st.one_of(st.binary(max_size=12), st.binary(max_size=12).map(bytearray))
scalars = st.one_of(
    st.builds(lambda s: {"S": s}, text),
    st.builds(lambda n: {"N": str(n)}, st.integers()),
    st.builds(lambda b: {"B": b}, blobs),
    st.builds(lambda b: {"BOOL": b}, st.booleans()),
    st.just({"NULL": True}),
    st.builds(
        lambda s: {"SS": s}, st.one_of(st.lists(text, max_size=3), st.sets(text, max_size=3))
    ),
    st.builds(lambda s: {"NS": s}, st.tuples(st.integers().map(str))),
    st.builds(lambda s: {"BS": s}, st.lists(st.binary(max_size=6), max_size=3)),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.builds(lambda m: {"M": m}, st.dictionaries(text, inner, max_size=3)),
        st.builds(lambda items: {"L": items}, st.lists(inner, max_size=3)),
    ),
    max_leaves=12,
)
items = st.dictionaries(text, values, max_size=5)


def _requests(item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    key = {"PK": {"B": b"\x00k"}}
    return [
        ("PutItem", {"TableName": "t", "Item": item, "ConditionExpression": "a = :v",
                     "ExpressionAttributeValues": {":v": {"B": b"x"}}}),
        ("GetItem", {"TableName": "t", "Key": key, "ConsistentRead": True}),
        ("UpdateItem", {"TableName": "t", "Key": key, "ExpressionAttributeValues": item}),
        ("DeleteItem", {"TableName": "t", "Key": key, "ReturnValues": "ALL_OLD"}),
        ("Query", {"TableName": "t", "ExclusiveStartKey": item, "Limit": 10}),
        ("Scan", {"TableName": "t", "Segment": 0, "TotalSegments": 2}),
        ("BatchGetItem", {"RequestItems": {"t": {"Keys": [key, item]}}}),
        ("BatchWriteItem", {"RequestItems": {"t": [{"PutRequest": {"Item": item}}]}}),
        ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "t", "Key": item}}]}),
        ("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": "t", "Item": item}}],
                                "ClientRequestToken": "tok"}),
    ]  # fmt: skip


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(item=items)
def test_bodies_are_botocore_s_byte_for_byte(item: dict[str, Any]) -> None:
    for operation, params in _requests(item):
        model = MODEL.operation_model(operation)
        expected = BOTOCORE.serialize_to_request(params, model)["body"]
        assert compile_body(model)(params) == expected, operation


def test_parameters_are_not_changed_in_place() -> None:
    item = {"B": {"B": b"\x01"}, "M": {"M": {"x": {"BS": [b"a"]}}}}
    params = {"TableName": "t", "Item": item}
    compile_body(MODEL.operation_model("PutItem"))(params)
    assert params == {
        "TableName": "t",
        "Item": {"B": {"B": b"\x01"}, "M": {"M": {"x": {"BS": [b"a"]}}}},
    }


def test_shapes_it_does_not_mirror_are_refused() -> None:
    """A timestamp member (here: a control-plane operation's) makes the compiler refuse, so the
    transport leaves that operation to botocore."""
    with pytest.raises(Unsupported):
        compile_body(MODEL.operation_model("RestoreTableToPointInTime"))
