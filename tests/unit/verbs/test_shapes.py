"""Compiled write shapes (``singletable._verbs.shapes``): a write of a shape seen before reuses
the expression text and names and binds only the values.

Differential properties: for random updates (every clause, document paths, conditions, guard
moves, sparse and callable-decided indexes, upserts, the instance form) and random
transactions, the request built with the repository's shapes is the very request (``repr``:
same keys in the same order) built from scratch, on the first call of a shape and on the later
ones with other values, shapes interleaved; a refusal is the same refusal. Unit tests: a
second call of a shape compiles nothing, the bound holds, different shapes do not meet.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from functools import partial
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from singletable import (
    GSI,
    Attr,
    Condition,
    CreatedAt,
    Entity,
    Index,
    Table,
    Unique,
    UpdatedAt,
    Version,
)
from singletable._context import PlanContext, WriteContext
from singletable._entity import spec_of
from singletable._verbs.planner import WritePlanner
from singletable._verbs.shapes import WriteShapes, compile_condition_expression, condition_key
from singletable._verbs.transactions import Transaction
from singletable._verbs.update import compile_update
from singletable.errors import SingleTableError

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

table = Table(
    "Shapes",
    indexes=[GSI("GSI1", "GSI1PK", "GSI1SK"), GSI("GSI2", "GSI2PK", "GSI2SK")],
    ttl_attribute="expires_at",
)


class Place(BaseModel):
    city: str = "Oslo"
    zip: str | None = None
    notes: list[str] = []


class Ticket(Entity, table=table, type="TICKET"):
    """Sparse indexes: GSI1 by an optional field, GSI2 by ``when=`` on a value."""

    ticket_id: str
    queue: str = "q1"
    owner: str | None = None
    status: Literal["open", "closed"] = "open"
    title: str = ""
    note: str | None = None
    points: int = 0
    tags: set[str] = set()
    history: list[str] = []
    place: Place = Place()
    expires_at: datetime | None = None
    updated: Annotated[datetime | None, UpdatedAt()] = None

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"
        GSI1 = ("QUEUE#{queue}", "OWNER#{owner}#{ticket_id}")
        GSI2 = Index("OPEN#{queue}", "TICKET#{ticket_id}", when={"status": "open"})


class Member(Entity, table=table, type="MEMBER"):
    """A version, a creation time, a unique email and an index decided by a callable."""

    member_id: str
    email: Annotated[str, Unique()]
    name: str = ""
    level: int = 0
    version: Annotated[int, Version()] = 0
    created: Annotated[datetime | None, CreatedAt()] = None

    class Keys:
        pk = "MEMBER#{member_id}"
        sk = "MEMBER"
        GSI1 = Index("LEVEL#{level}", "MEMBER#{member_id}", when=lambda m: m.level > 1)


def contexts() -> tuple[WriteContext, WriteContext]:
    """(from scratch, with shapes) at NOW."""
    return WriteContext("Shapes", NOW), WriteContext("Shapes", NOW, WriteShapes())


def outcome(build: Any) -> str:
    """What ``build()`` gives, as text: the request (``repr`` keeps the key order) or the
    refusal."""
    try:
        return repr(build())
    except SingleTableError as exc:
        return f"{type(exc).__name__}: {exc}"


# -- strategies --------------------------------------------------------------------------------

WORDS = st.sampled_from(["a", "b", "c d", "é"])
TICKET_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "queue": st.sampled_from(["q1", "q2"]),
    "owner": st.none() | st.sampled_from(["ann", "bob"]),
    "status": st.sampled_from(["open", "closed"]),
    "title": WORDS,
    "note": st.none() | WORDS,
    "points": st.integers(-3, 3),
    "tags": st.sets(WORDS, max_size=2),
    "history": st.lists(WORDS, max_size=2),
    "place": st.builds(Place, city=WORDS, zip=st.none() | WORDS),
    "place.city": WORDS,
    "place.zip": st.none() | WORDS,
    "expires_at": st.none() | st.just(NOW + timedelta(days=1)),
}
# Which clause may name which entry (the others are refused, which must agree too).
CLAUSES: dict[str, list[str]] = {
    "set_values": [n for n in TICKET_VALUES if n != "ticket_id"],
    "remove": ["owner", "note", "place.zip", "expires_at", "title"],
    "add": ["points", "tags"],
    "delete": ["tags"],
    "append": ["history", "place.notes"],
    "prepend": ["history"],
    "if_not_exists": ["title", "note", "points", "queue"],  # queue: read by both indexes
}
DELTAS: dict[str, st.SearchStrategy[Any]] = {
    "points": st.integers(1, 3),
    "tags": st.sets(WORDS, min_size=1, max_size=2),
    "history": st.lists(WORDS, min_size=1, max_size=2),
    "place.notes": st.lists(WORDS, min_size=1, max_size=2),
}


CONDITION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "title": WORDS,
    "points": st.integers(-3, 3),
    "note": st.none() | WORDS,
    "place.city": WORDS,
}


@st.composite
def conditions(
    draw: st.DrawFn, depth: int = 2, paths: tuple[str, ...] = tuple(CONDITION_VALUES)
) -> Condition:
    """A condition tree on Ticket's attributes: comparisons with values or attributes,
    functions, ``is_in``, combined with ``&``, ``|``, ``~``."""
    path = draw(st.sampled_from(paths))
    attr, values = Attr(path), CONDITION_VALUES[path]
    leaves = [
        attr.eq(draw(values)),
        attr.ne(Attr("title")),
        attr.gte(draw(values)),
        attr.between(draw(values), draw(values)),
        attr.begins_with("a"),
        Attr("tags").contains(draw(WORDS)),
        attr.exists(),
        attr.not_exists(),
        attr.is_in(*draw(st.lists(values, min_size=1, max_size=3))),
    ]
    leaf = draw(st.sampled_from(leaves))
    if depth == 0 or draw(st.booleans()):
        return leaf
    other = draw(conditions(depth - 1, paths))
    return draw(st.sampled_from([leaf & other, leaf | other, ~leaf]))


@st.composite
def ticket_shapes(draw: st.DrawFn) -> dict[str, Any]:
    """One update's shape: which entries in which clauses, upsert or not, a condition."""
    used: set[str] = set()
    shape: dict[str, Any] = {"clauses": {}}
    for clause, names in CLAUSES.items():
        chosen = [
            n
            for n in draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
            if n not in used or draw(st.integers(0, 9)) == 0  # now and then a doubled entry
        ]
        used.update(chosen)
        if chosen:
            shape["clauses"][clause] = chosen
    # An upsert may create the item: it takes no document path (a refusal, now and then).
    shape["upsert"] = draw(st.integers(0, 5)) == 0 and (
        not any("." in n for n in used) or draw(st.integers(0, 9)) == 0
    )
    shape["instance"] = draw(st.integers(0, 3)) == 0
    shape["condition"] = draw(st.none() | conditions())
    return shape


@st.composite
def ticket_call(draw: st.DrawFn, shape: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of ``compile_update`` for ``shape``, with fresh values."""
    kwargs: dict[str, Any] = {"key_fields": {"ticket_id": draw(st.sampled_from(["t1", "t2"]))}}
    for clause, names in shape["clauses"].items():
        if clause == "remove":
            kwargs[clause] = list(names)
            continue
        strategies = DELTAS if clause in ("add", "delete", "append", "prepend") else TICKET_VALUES
        kwargs[clause] = {n: draw(strategies.get(n, TICKET_VALUES.get(n, WORDS))) for n in names}
    kwargs["upsert"] = shape["upsert"]
    if shape["instance"]:
        fields = {n: draw(s) for n, s in TICKET_VALUES.items() if "." not in n}
        kwargs["instance"] = Ticket(ticket_id=kwargs["key_fields"]["ticket_id"], **fields)
    # The shape's condition, or another one: trees that differ in one operator or operand meet.
    condition = shape["condition"] if draw(st.booleans()) else draw(st.none() | conditions())
    if condition is not None:
        kwargs["condition"] = condition
    return kwargs


# -- the update property -----------------------------------------------------------------------


@st.composite
def neighbour(draw: st.DrawFn, shape: dict[str, Any]) -> dict[str, Any]:
    """``shape`` changed in one place: an entry renamed or moved to another clause, the form
    or ``upsert`` flipped (the shapes a careless key would confuse)."""
    clauses = {clause: list(names) for clause, names in shape["clauses"].items()}
    changed = {**shape, "clauses": clauses}
    change = draw(st.sampled_from(["rename", "move", "instance", "upsert"]))
    if change in ("instance", "upsert") or not clauses:
        flag = "upsert" if change == "upsert" else "instance"
        changed[flag] = not shape[flag]
        return changed
    clause = draw(st.sampled_from(sorted(clauses)))
    name = clauses[clause].pop(draw(st.integers(0, len(clauses[clause]) - 1)))
    target = clause if change == "rename" else draw(st.sampled_from(sorted(CLAUSES)))
    renamed = draw(st.sampled_from(CLAUSES[target]))  # (now and then the same name)
    clauses.setdefault(target, []).append(name if change == "move" else renamed)
    return changed


@settings(max_examples=120, deadline=2000)
@given(st.data(), st.lists(ticket_shapes(), min_size=1, max_size=2))
def test_an_update_with_shapes_is_the_update_compiled_from_scratch(
    data: st.DataObject, shapes: list[dict[str, Any]]
) -> None:
    scratch, cached = contexts()
    spec = spec_of(Ticket)
    shapes += [data.draw(neighbour(shape)) for shape in shapes]
    for _ in range(8):  # each shape several times, interleaved, other values each time
        shape = data.draw(st.sampled_from(shapes))
        kwargs = data.draw(ticket_call(shape))
        expected = outcome(partial(_update, spec, scratch, kwargs))
        assert outcome(partial(_update, spec, cached, kwargs)) == expected


def _update(spec: Any, ctx: WriteContext, kwargs: dict[str, Any]) -> Any:
    op = compile_update(spec, ctx, **kwargs)
    return op.params, [guard.params for guard in op.guards]


@settings(max_examples=80, deadline=2000)
@given(
    st.data(),
    st.lists(
        st.tuples(
            st.sampled_from(["set", "remove", "both"]),
            st.booleans(),  # instance form
            st.booleans(),  # with a condition on the level
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_guard_moves_versions_and_callable_indexes_agree_too(
    data: st.DataObject, shapes: list[tuple[str, bool, bool]]
) -> None:
    scratch, cached = contexts()
    spec = spec_of(Member)
    emails = st.sampled_from(["a@x", "b@x"])
    for _ in range(5):
        form, instance_form, conditioned = data.draw(st.sampled_from(shapes))
        stored = Member(
            member_id="m1",
            email=data.draw(emails),
            level=data.draw(st.integers(0, 3)),
            version=data.draw(st.integers(0, 2)),
        )
        set_values: dict[str, Any] = {"level": data.draw(st.integers(0, 3))}
        if form in ("set", "both"):
            set_values["email"] = data.draw(emails)
        kwargs: dict[str, Any] = {
            "key_fields": {"member_id": "m1"},
            "set_values": set_values,
            "remove": ["name"] if form in ("remove", "both") else [],
            "previous_unique": {"email": data.draw(st.none() | emails)},
            "guard_ttl": data.draw(st.none() | st.just(NOW)),
        }
        if instance_form:
            kwargs["instance"] = stored
        if conditioned:
            kwargs["condition"] = Attr("level").lt(data.draw(st.integers(0, 5)))
        expected = outcome(partial(_update, spec, scratch, kwargs))
        assert outcome(partial(_update, spec, cached, kwargs)) == expected


@settings(max_examples=150, deadline=2000)
@given(st.lists(conditions(paths=("title", "points")), min_size=2, max_size=8))
def test_a_condition_with_shapes_is_the_condition_compiled_from_scratch(
    trees: list[Condition],
) -> None:
    shapes = WriteShapes()
    encode = spec_of(Ticket).encode_for_condition
    for tree in trees:  # few paths: trees that differ in one operator or operand meet
        expected = outcome(partial(compile_condition_expression, tree, encode))
        assert outcome(partial(shapes.condition, tree, encode)) == expected


# -- the transaction property ------------------------------------------------------------------

tickets = st.builds(
    Ticket,
    ticket_id=st.sampled_from(["t1", "t2", "t3", "t4", "t5"]),
    **{n: s for n, s in TICKET_VALUES.items() if "." not in n},
)
members = st.builds(
    Member,
    member_id=st.sampled_from(["m1", "m2"]),
    email=st.sampled_from(["a@x", "b@x"]),
    level=st.integers(0, 3),
    version=st.integers(0, 2),
)


@st.composite
def operations(draw: st.DrawFn) -> tuple[str, Any]:
    """One operation of a transaction: its verb and its arguments."""
    verb = draw(
        st.sampled_from(["create", "put", "update", "keyword", "delete", "check", "member"])
    )
    if verb == "member":
        return verb, draw(members)
    ticket = draw(tickets)
    if verb == "update":
        return verb, (ticket, {"note": draw(st.none() | WORDS), "points": draw(st.integers(0, 3))})
    if verb == "keyword":
        name = draw(st.sampled_from(["title", "note", "points", "tags", "history", "place"]))
        return verb, (ticket.ticket_id, name, draw(TICKET_VALUES[name]))
    if verb in ("delete", "check", "put", "create"):
        return verb, (ticket, draw(st.none() | conditions(1)))
    raise AssertionError(verb)


def item(operation: tuple[str, Any]) -> str:
    """The item an operation writes (a transaction writes each item once)."""
    verb, args = operation
    if verb == "member":
        return f"member {args.member_id}"
    return f"ticket {args[0] if verb == 'keyword' else args[0].ticket_id}"


def fill(tx: Transaction, operations: list[tuple[str, Any]]) -> None:
    """The operations, in order (an item named twice is refused by ``request()``)."""
    for verb, args in operations:
        if verb == "member":
            tx.create(args)
        elif verb == "update":
            tx.update(args[0], **args[1])
        elif verb == "keyword":
            ticket_id, name, value = args
            tx.update(Ticket, ticket_id=ticket_id, set={name: value})
        elif verb == "delete":
            tx.delete(args[0], condition=args[1])
        elif verb == "check":
            tx.condition_check(
                args[0], condition=args[1] if args[1] is not None else Attr("a").exists()
            )
        else:
            getattr(tx, verb)(args[0], condition=args[1])


@settings(max_examples=80, deadline=3000)
@given(st.lists(st.lists(operations(), min_size=1, max_size=4, unique_by=item), max_size=4))
def test_a_transaction_with_shapes_is_the_transaction_compiled_from_scratch(
    transactions: list[list[tuple[str, Any]]],
) -> None:
    shapes = WriteShapes()
    cached = WritePlanner(table, PlanContext("Shapes", clock=lambda: NOW, shapes=shapes))
    for ops in transactions:  # one planner for all: later transactions reuse the shapes
        scratch = WritePlanner(table, PlanContext("Shapes", clock=lambda: NOW))
        expected = outcome(partial(_request, scratch, ops))
        assert outcome(partial(_request, cached, ops)) == expected


def _request(planner: WritePlanner, operations: list[tuple[str, Any]]) -> Any:
    tx = Transaction(planner, token="t")
    fill(tx, operations)
    return tx.request()


# -- the cache itself --------------------------------------------------------------------------


def test_a_second_call_of_a_shape_compiles_nothing_and_binds_its_values() -> None:
    _, ctx = contexts()
    shapes = ctx.shapes
    assert shapes is not None
    spec = spec_of(Ticket)
    first = compile_update(spec, ctx, key_fields={"ticket_id": "t1"}, set_values={"title": "a"})
    compiled = shapes.compiles
    second = compile_update(spec, ctx, key_fields={"ticket_id": "t2"}, set_values={"title": "b"})
    assert shapes.compiles == compiled
    assert shapes.hits >= 3  # the clauses, the update expression, the condition
    assert second.params["UpdateExpression"] == first.params["UpdateExpression"]
    assert second.params["ExpressionAttributeValues"][":v0"] == {"S": "b"}
    assert second.params["Key"] == {"PK": {"S": "TICKET#t2"}, "SK": {"S": "TICKET"}}


def test_the_bound_holds_dropping_the_least_recently_used_shape() -> None:
    shapes = WriteShapes(limit=3)
    compiled: list[str] = []
    for key in ["a", "b", "c", "a", "d", "b"]:  # "b" was dropped for "d"; "a" was kept
        shapes.get(key, lambda key=key: compiled.append(key) or key)
    assert compiled == ["a", "b", "c", "d", "b"]
    assert len(shapes) == 3
    assert shapes.hits == 1


def test_the_repository_bound_is_kept_with_unbounded_shapes() -> None:
    shapes = WriteShapes(limit=8)
    ctx = WriteContext("Shapes", NOW, shapes)
    spec = spec_of(Ticket)
    for n in range(30):  # a condition with a new list length each time: a new shape each time
        compile_update(
            spec,
            ctx,
            key_fields={"ticket_id": "t1"},
            set_values={"title": "a"},
            condition=Attr("title").is_in(*[str(i) for i in range(n + 1)]),
        )
    assert len(shapes) == 8


INDEXED = {"queue": "q1", "owner": "ann", "status": "open"}  # what Ticket's indexes read


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"set_values": {"points": 1}}, {"add": {"points": 1}}),  # same field, other operator
        ({"set_values": {"history": ["a"]}}, {"append": {"history": ["a"]}}),
        ({"append": {"history": ["a"]}}, {"prepend": {"history": ["a"]}}),
        ({"set_values": {"note": "a"}}, {"set_values": {"note": None}}),  # None removes
        ({"set_values": {"note": "a"}}, {"set_values": {"note": "a", "title": "b"}}),  # absent
        ({"set_values": {"place": Place(city="x")}}, {"set_values": {"place.city": "x"}}),
        (  # the item leaves GSI1 (sparse by an optional field)
            {"set_values": {**INDEXED, "owner": "ann"}},
            {"set_values": {**INDEXED, "owner": None}},
        ),
        (  # the item leaves GSI2 (sparse by when=)
            {"set_values": {**INDEXED, "status": "open"}},
            {"set_values": {**INDEXED, "status": "closed"}},
        ),
        ({"set_values": {"title": "a"}}, {"set_values": {"title": "a"}, "upsert": True}),
        (  # the keyword form does not know the queue it sets if absent; an instance does
            {"if_not_exists": {"queue": "q2"}, "set_values": {"owner": "ann"}},
            {
                "if_not_exists": {"queue": "q2"},
                "set_values": {"owner": "ann"},
                "instance": Ticket(ticket_id="t1"),
            },
        ),
        (
            {"set_values": {"title": "a"}, "condition": Attr("title").eq("a")},
            {"set_values": {"title": "a"}, "condition": Attr("title").eq(Attr("note"))},
        ),
    ],
)
def test_different_shapes_do_not_meet(first: dict[str, Any], second: dict[str, Any]) -> None:
    scratch, cached = contexts()
    spec = spec_of(Ticket)
    params = []
    for kwargs in (first, second, first, second):  # each after the other's shape is held
        call = {"key_fields": {"ticket_id": "t1"}, **kwargs}
        if call.get("upsert"):  # it may create the item: it writes every index attribute
            call["set_values"] = {**call["set_values"], **INDEXED}
        expected = outcome(partial(_update, spec, scratch, call))
        got = outcome(partial(_update, spec, cached, call))
        assert got == expected
        params.append(got)
    assert params[0] != params[1]


def test_conditions_of_one_tree_share_a_shape_and_their_values_stay_apart() -> None:
    operands: list[tuple[str | None, Any]] = []
    assert condition_key(Attr("a").eq(1) & Attr("b").gt(2), operands) == condition_key(
        Attr("a").eq(3) & Attr("b").gt(4), []
    )
    assert operands == [("a", 1), ("b", 2)]
    assert condition_key(Attr("a").eq(1), []) != condition_key(Attr("a").eq(Attr("b")), [])
    assert condition_key(Attr("a").eq(1), []) != condition_key(Attr("a").ne(1), [])
    assert condition_key(Attr("a").is_in(1), []) != condition_key(Attr("a").is_in(1, 2), [])


def test_a_request_from_shapes_is_the_callers_to_change() -> None:
    _, ctx = contexts()
    spec = spec_of(Ticket)
    first = compile_update(spec, ctx, key_fields={"ticket_id": "t1"}, set_values={"title": "a"})
    first.params["ExpressionAttributeNames"]["#n0"] = "changed"
    second = compile_update(spec, ctx, key_fields={"ticket_id": "t1"}, set_values={"title": "a"})
    assert second.params["ExpressionAttributeNames"]["#n0"] == "title"
