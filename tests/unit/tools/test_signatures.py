"""The call signature a type checker sees (the mypy plugin's and ``singletable stubs``' one
answer), read from bound patterns: required partition fields and parameters, optional sort
fields and lookups with their shapes, the options, the result model."""

from __future__ import annotations

from typing import Any

from singletable._tools.signatures import Keyword, call_signature
from singletable.errors import SingleTableError
from tests.typing.typing_shop import Customer, Order, OrderSummary, ShopPatterns


def keywords(name: str) -> list[tuple[str, bool, str]]:
    signature = call_signature(vars(ShopPatterns)[name])
    assert signature is not None
    return [(k.name, k.required, k.shape) for k in signature.keywords]


def test_a_get_takes_every_key_field_and_nothing_else() -> None:
    signature = call_signature(ShopPatterns.order_summary)
    assert signature is not None
    assert (signature.kind, signature.result, signature.entities) == ("get", OrderSummary, (Order,))
    assert keywords("order_summary") == [
        ("customer_id", True, "value"),
        ("created_at", True, "value"),
        ("order_id", True, "value"),
    ]


def test_a_query_takes_its_key_fields_lookups_parameters_and_options() -> None:
    assert keywords("big_orders")[:2] == [("customer_id", True, "value"), ("least", True, "value")]
    sort = keywords("customer_orders")[1:9]
    assert sort == [
        ("created_at", False, "value"),
        ("created_at__gt", False, "value"),
        ("created_at__gte", False, "value"),
        ("created_at__lt", False, "value"),
        ("created_at__lte", False, "value"),
        ("created_at__between", False, "pair"),
        ("created_at__begins_with", False, "prefix"),
        ("order_id", False, "value"),
    ]
    assert keywords("customer_orders")[-3:] == [
        ("limit", False, "limit"),
        ("cursor", False, "cursor"),
        ("where", False, "where"),
    ]
    # a number in the sort key has comparisons, no begins_with
    assert "rank__begins_with" not in {k[0] for k in keywords("orders_by_status")}
    # a Param compared inside a map takes any value
    assert ("city", True, "any") in keywords("shipped_to")


def test_kinds_and_results() -> None:
    def summary(name: str) -> tuple[Any, ...]:
        signature = call_signature(vars(ShopPatterns)[name])
        assert signature is not None
        return signature.kind, signature.result, signature.keys_only

    assert summary("customer_by_email") == ("one", Customer, False)
    assert summary("order_refs") == ("query", Order, True)
    assert summary("order_summaries") == ("query", OrderSummary, False)
    assert summary("customer_home") == ("collection", None, False)
    # the scattered field is the pattern's to choose: not a keyword
    assert "shard" not in {k[0] for k in keywords("recent_everywhere")}


def test_a_scan_pattern_takes_limit_cursor_and_where() -> None:
    class ScanLike:  # what a scan(E, index=...) pattern looks like to the signature reader
        operation = "Scan"
        entity = Order
        project = None

    signature = call_signature(ScanLike())
    assert signature is not None and signature.kind == "scan" and signature.result is Order
    assert [k.name for k in signature.keywords] == ["limit", "cursor", "where"]


def test_what_is_not_a_bound_pattern_has_no_signature() -> None:
    from singletable import query

    assert call_signature(query(Order)) is None  # never bound to a repository
    assert call_signature(SingleTableError("x")) is None
    assert Keyword("x", True, "value") == Keyword("x", True, "value")
