"""A native-index query returns exactly what a plain filter-and-sort over the stored items
returns: random key shapes (1-4 partition and 0-4 sort attributes, mixed S and N), random
items (some missing key attributes: sparse), random call keywords (equalities left to right,
one range), both orders, paged with random limits."""

from __future__ import annotations

import itertools
import types
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from singletable import GSI, Entity, Repository, Table, query

TEXT = ["a", "b", "ba", "c"]
NUMBERS = [Decimal(n) for n in ("-2", "-0.5", "0", "1", "1.25", "10")]
_tables = itertools.count()


@st.composite
def shapes(draw: Any) -> tuple[list[str], list[str]]:
    """Attribute kinds, partition then sort: "S" or "N" each."""
    kinds = st.sampled_from(["S", "N"])
    return draw(st.lists(kinds, min_size=1, max_size=4)), draw(st.lists(kinds, max_size=4))


def model(pk: list[str], sk: list[str]) -> tuple[type[Any], type[Any], Table]:
    names = [f"k{i}" for i in range(len(pk) + len(sk))]
    table = Table(
        f"Native{next(_tables)}",
        indexes=[GSI("ByKeys", pk=tuple(names[: len(pk)]), sk=tuple(names[len(pk) :]))],
    )
    annotations: dict[str, Any] = {"item_id": str}
    for name, kind in zip(names, pk + sk):
        annotations[name] = (str if kind == "S" else Decimal) | None
    namespace: dict[str, Any] = {
        "__annotations__": annotations,
        "__module__": __name__,
        "__qualname__": "Thing",
    }
    namespace.update({name: None for name in names})
    namespace["Keys"] = type(
        "Keys",
        (),
        {
            "pk": "THING#{item_id}",
            "sk": "THING",
            "__qualname__": "Thing.Keys",
            "__module__": __name__,
        },
    )
    thing = types.new_class(
        "Thing", (Entity,), {"table": table, "type": "THING"}, lambda ns: ns.update(namespace)
    )
    repo = types.new_class(
        "Things",
        (Repository,),
        {"table": table},
        lambda ns: ns.update(
            asc=query(thing, index="ByKeys"), desc=query(thing, index="ByKeys", order="desc")
        ),
    )
    return thing, repo, table


def value_of(kind: str) -> Any:
    return st.sampled_from(TEXT if kind == "S" else NUMBERS)


@st.composite
def cases(draw: Any) -> tuple[Any, ...]:
    pk, sk = draw(shapes())
    kinds = pk + sk
    # Key attributes are rarely absent (sparse), and most calls ask for a partition (and
    # leading sort values) that some item has, so the conditions meet items.
    maybe = [st.one_of(value_of(k), value_of(k), value_of(k), st.none()) for k in kinds]
    rows = draw(st.lists(st.tuples(*maybe), min_size=6, max_size=16))
    calls = []
    for _ in range(draw(st.integers(2, 5))):
        if rows and draw(st.integers(0, 4)):
            model_row = draw(st.sampled_from(rows))
            row = [v if v is not None else draw(value_of(k)) for v, k in zip(model_row, kinds)]
        else:
            row = [draw(value_of(k)) for k in kinds]
        partition = tuple(row[: len(pk)])
        equal = draw(st.integers(0, len(sk)))
        sort_values = tuple(row[len(pk) : len(pk) + equal])
        ranged = None
        if equal < len(sk):
            kind = sk[equal]
            ops = ["gt", "gte", "lt", "lte", "between"] + (["begins_with"] if kind == "S" else [])
            op = draw(st.sampled_from([None, *ops]))
            if op == "between":
                low, high = sorted([draw(value_of(kind)), draw(value_of(kind))])
                ranged = (op, (low, high))
            elif op == "begins_with":
                ranged = (op, draw(st.sampled_from(["a", "b", "c"])))
            elif op is not None:
                ranged = (op, draw(value_of(kind)))
        order = draw(st.sampled_from(["asc", "desc"]))
        calls.append((partition, sort_values, ranged, order, draw(st.integers(1, 5))))
    return pk, sk, rows, calls


def matches(value: Any, op: str, bound: Any) -> bool:
    if op == "between":
        return bool(bound[0] <= value <= bound[1])
    if op == "begins_with":
        return bool(value.startswith(bound))
    return bool(
        {"gt": value > bound, "gte": value >= bound, "lt": value < bound}.get(op, value <= bound)
    )


@pytest.mark.backend("inproc")
@settings(
    max_examples=15,
    deadline=60_000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=cases())
def test_a_native_query_is_a_filter_and_sort_over_the_items(client: Any, case: Any) -> None:
    pk, sk, rows, calls = case
    thing, repo_cls, table = model(pk, sk)
    table.create(client)
    repo = repo_cls(client=client)
    names = [f"k{i}" for i in range(len(pk) + len(sk))]
    stored = [{"item_id": f"i{n:02d}", **dict(zip(names, row))} for n, row in enumerate(rows)]
    if stored:
        repo.batch_put([thing(**values) for values in stored])
    for partition, sort_values, ranged, order, limit in calls:
        keywords: dict[str, Any] = dict(zip(names, partition + sort_values))
        if ranged is not None:
            keywords[f"{names[len(pk) + len(sort_values)]}__{ranged[0]}"] = ranged[1]
        expected = [
            values
            for values in stored
            if all(values[n] is not None for n in names)  # sparse: every key attribute set
            and all(values[n] == v for n, v in keywords.items() if "__" not in n)
            and (
                ranged is None
                or matches(values[names[len(pk) + len(sort_values)]], ranged[0], ranged[1])
            )
        ]
        pattern = getattr(repo, order)
        got = [item for page in pattern.pages(**keywords, limit=limit) for item in page]
        assert sorted(t.item_id for t in got) == sorted(v["item_id"] for v in expected)
        sort_keys = [tuple(getattr(t, n) for n in names[len(pk) :]) for t in got]
        assert sort_keys == sorted(sort_keys, reverse=order == "desc")
        assert pattern.count(**keywords) == len(expected)
    client.delete_table(TableName=table.name)
