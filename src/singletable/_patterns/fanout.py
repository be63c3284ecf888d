"""Fan-out reads: one Query per value of a field with a finite domain, sent at once (a
``Gather``) and merged into one page in key order.

**The axis.** ``scatter="field"`` names a ``Shard(n)`` field (values ``0..n-1``) or an ``Enum``
/ ``Literal`` field, in the index's partition key or first in its sort key
(:func:`scatter_axis`). Each value gets its own Query with the call's other keywords (range
lookups included), so the Queries differ only in that value.

**The merged order.** A partition-key field: the items merge in the index's sort order. A
sort-key field: they merge in the order of the sort key that *remains* once the field is taken
out: on a native index, the sort attributes after the first; on a key template, the sort-key
text after the scattered segment (``STATUS#PAID#2026-06-01…`` compares as ``#2026-06-01…``).
That text comparison is exact: every item of value *v* starts with the same rendered prefix
(``STATUS#PAID``), which the key condition guarantees, so DynamoDB's order within that Query
(UTF-8 bytes, i.e. code points) is the order of what follows it; and what follows has the same
shape for every value, so the remainders compare as the sort key would without the field.
Ties (equal remaining sort keys) are ordered by the table's key, raw, in the direction of
``order=``: the order key of an item is unique, so the merged order is total.

**Paging never skips, repeats or reorders.** A Query that stopped early (``LastEvaluatedKey``)
bounds what the page may emit: nothing it has not read sorts before its last evaluated key, so
items up to the nearest such key (the *frontier*) are final. Each Query's stream is cut at the
frontier (a prefix of the stream, so a resumed Query loses nothing even where DynamoDB orders
ties its own way), the streams are merged, and the first ``limit`` items are the page. The
Query that set the frontier has all of its items eligible, so every page makes progress. The
composite cursor holds each value's position: its last emitted item, the key it read past, or
``done``; it is signed and bound to every Query's key condition, filter and order, like any
cursor.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._flows import Flow, Gather, Send
from .._key_formats import finite_domain
from .._paging import add_capacity, binding_of
from ..errors import InvalidCursor, ModelDefinitionError
from .keyed import KeyPlan, QueryPlan
from .native import NativeKeyPlan, comparable

if TYPE_CHECKING:
    from .._context import PlanContext
    from .._entity_spec import EntitySpec
    from .._keys import KeyTemplate
    from .keyed import KeyedPattern

DONE = {"S": "done"}
#: The most Queries one scatter call may send.
MAX_VALUES = 100


class ScatterAxis:
    """Where a scatter's field sits, its values, and where an item of each value sorts."""

    __slots__ = ("field", "in_sort", "order", "prefixes", "sort_attribute", "values")

    def __init__(
        self,
        field: str,
        values: tuple[Any, ...],
        in_sort: bool,
        order: tuple[str, ...],
        sort_attribute: str | None = None,
        prefixes: tuple[int, ...] = (),
    ) -> None:
        self.field = field
        self.values = values
        self.in_sort = in_sort  # first in the sort key (else in the partition key)
        self.order = order  # the attributes compared, in order (table key last)
        # A template sort key scattered on its first segment: the attribute, and per value the
        # length of the rendered prefix up to and including the scattered segment.
        self.sort_attribute = sort_attribute
        self.prefixes = prefixes

    def order_key(self, item: Mapping[str, Any], value: int) -> tuple[Any, ...]:
        """Where ``item`` (an item or a LastEvaluatedKey of value number ``value``) sorts."""
        key = [comparable(item[a]) for a in self.order]
        if self.sort_attribute is not None:
            key[0] = key[0][self.prefixes[value] :]  # the remainder after the segment
        return tuple(key)


def field_values(spec: EntitySpec, field: str, where: str) -> tuple[Any, ...]:
    """Every value a scatter over ``spec``'s ``field`` reads: a ``Shard(n)``'s ``0..n-1``, or
    an ``Enum``'s members or a ``Literal``'s values."""
    plan = next((p for p in spec.shards if p.field == field), None)
    if plan is not None:
        return tuple(range(plan.n))
    info = spec.cls.model_fields.get(field)
    if info is None:
        raise ModelDefinitionError(f"{where}: scatter={field!r}: {spec.name} has no such field")
    values = finite_domain(info.annotation)
    if values is None:
        raise ModelDefinitionError(
            f"{where}: scatter={field!r} must name a Shard() field (e.g. {field}: "
            f"Annotated[int, Shard(8)] = 0) or a field with a finite domain (an Enum or a "
            f"Literal[...]); {spec.name}.{field} is {info.annotation!r}"
        )
    if len(values) > MAX_VALUES:
        raise ModelDefinitionError(
            f"{where}: scatter={field!r} would send {len(values)} Queries a call; at most "
            f"{MAX_VALUES}"
        )
    return values


def scatter_axis(
    field: str,
    specs: Sequence[EntitySpec],
    plan: KeyPlan | NativeKeyPlan,
    sort_templates: Sequence[KeyTemplate | None],
    table_keys: Sequence[str],
    where: str,
) -> ScatterAxis:
    """The axis of ``scatter=field`` over ``specs`` on ``plan``'s index (``sort_templates``:
    each entity's sort-key template there; ``table_keys``: the table's key attributes)."""
    values = field_values(specs[0], field, where)
    for spec in specs[1:]:
        if field_values(spec, field, where) != values:
            raise ModelDefinitionError(
                f"{where}: scatter={field!r}: {specs[0].name} and {spec.name} give {field} "
                "different values; a collection scatters over one domain"
            )
    tie = tuple(table_keys)
    if isinstance(plan, NativeKeyPlan):
        native = plan.native
        sorts = tuple(a.attribute for a in native.sk)
        if any(a.field == field for a in native.pk):
            return ScatterAxis(field, values, False, _order(sorts, tie))
        if native.sk and native.sk[0].field == field:
            return ScatterAxis(field, values, True, _order(sorts[1:], tie))
        raise _placement_error(field, where, plan.index, ", ".join(native.keys.attributes))
    keys = plan.keys
    sorts = (keys.sk,) if keys.sk else ()
    if field in plan.pk.fields:
        return ScatterAxis(field, values, False, _order(sorts, tie))
    heads = {t.placeholders[0].head for t in sort_templates if t is not None and t.placeholders}
    if not keys.sk or len(heads) != 1 or not all(_leads(t, field) for t in sort_templates):
        texts = [plan.pk.text, *(t.text for t in sort_templates if t is not None)]
        raise _placement_error(field, where, plan.index, ", ".join(repr(t) for t in texts))
    template = sort_templates[0]
    assert template is not None
    head = template.placeholders[0].head
    prefixes = tuple(len(head + template.render_value(field, v)) for v in values)
    return ScatterAxis(field, values, True, (keys.sk, *tie), keys.sk, prefixes)


def value_prefix_text(template: KeyTemplate) -> str:
    """explain's text of the prefix a sort-key scatter selects per value:
    ``STATUS#{status}#`` for ``STATUS#{status}#{created_at}``."""
    first = template.placeholders[0]
    after = template.placeholders[1].head if len(template.placeholders) > 1 else template.tail
    return f"{first.head}{{{first.field}}}{after}"


def _leads(template: KeyTemplate | None, field: str) -> bool:
    return template is not None and bool(template.fields) and template.fields[0] == field


def _order(sorts: tuple[str, ...], tie: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*sorts, *tie)))


def _placement_error(field: str, where: str, index: str | None, keys: str) -> ModelDefinitionError:
    return ModelDefinitionError(
        f"{where}: scatter={field!r} must be in the partition key or first in the sort key of "
        f"{index or 'the table'} ({keys}); a field elsewhere would not narrow each Query"
    )


class Fanout:
    """The flow of one merged page of a scatter pattern: one Query per value not yet
    exhausted, sent at once, merged (see the module docstring)."""

    __slots__ = ("axis", "concurrency", "pattern", "positions")

    def __init__(self, pattern: KeyedPattern, axis: ScatterAxis, concurrency: int | None) -> None:
        self.pattern = pattern
        self.axis = axis
        self.concurrency = concurrency or len(axis.values)
        self.positions = frozenset(pattern.plan.cursor_attributes | pattern.table_key_attributes)

    def plans(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> list[QueryPlan]:
        """One Query per value (no start keys), for the call keywords (the cursor aside)."""
        call = self.pattern.split_call(kwargs)
        axis = self.axis
        return [
            self.pattern.compile_call(ctx, call.one_query(axis.field, v, in_sort=axis.in_sort))
            for v in axis.values
        ]

    def page(
        self, ctx: PlanContext, kwargs: Mapping[str, Any]
    ) -> Flow[tuple[list[Any], str | None, Any]]:
        """``(items, cursor, consumed capacity)`` of one merged page."""
        plans = self.plans(ctx, kwargs)
        binding = binding_of(*(plan.binding_parts for plan in plans))
        positions = self._positions(ctx, kwargs.get("cursor"), binding, plans)
        live = [v for v, position in enumerate(positions) if position is not DONE]
        sends = []
        for v in live:
            params = dict(plans[v].params)
            if positions[v] is not None:
                params["ExclusiveStartKey"] = positions[v]
            sends.append(Send("Query", params, self.pattern.name))
        responses = yield Gather(tuple(sends), self.concurrency)
        read = dict(zip(live, responses))
        items, positions = self._merge(ctx, read, positions, plans[0].limit)
        capacity = None
        for response in responses:
            capacity = add_capacity(capacity, response.get("ConsumedCapacity"))
        if all(p is DONE for p in positions):
            return items, None, capacity
        return items, self._encode(ctx, positions, binding), capacity

    def _merge(
        self,
        ctx: PlanContext,
        read: Mapping[int, Mapping[str, Any]],
        positions: list[Any],
        limit: int,
    ) -> tuple[list[Any], list[Any]]:
        """The page's items and every value's new position."""
        descending = self.pattern.order == "desc"
        order_key = self.axis.order_key
        frontier: tuple[Any, ...] | None = None
        found: dict[int, list[tuple[Mapping[str, Any], Any]]] = {}
        for v, response in read.items():
            found[v] = self.pattern.decoder.pairs(response.get("Items", ()), ctx)
            last = response.get("LastEvaluatedKey")
            if last is not None:
                point = order_key(last, v)
                if frontier is None or (point > frontier if descending else point < frontier):
                    frontier = point
        streams = []
        for v, pairs in found.items():
            stream = []
            for raw, result in pairs:
                point = order_key(raw, v)
                if frontier is not None and (point < frontier if descending else point > frontier):
                    break  # past the frontier: the rest of this stream waits for a later page
                stream.append((point, v, raw, result))
            streams.append(stream)
        merged = heapq.merge(*streams, key=lambda entry: entry[0], reverse=descending)
        taken = list(itertools.islice(merged, limit))
        new_positions = list(positions)
        last_taken: dict[int, Mapping[str, Any]] = {}
        count: dict[int, int] = {}
        for _, v, raw, _ in taken:
            last_taken[v] = raw
            count[v] = count.get(v, 0) + 1
        for v, response in read.items():
            if count.get(v, 0) == len(found[v]):
                more = response.get("LastEvaluatedKey")
                new_positions[v] = DONE if more is None else more
            elif v in last_taken:
                new_positions[v] = {a: last_taken[v][a] for a in self.positions}
        return [result for _, _, _, result in taken], new_positions

    # -- the composite cursor --

    def _encode(self, ctx: PlanContext, positions: Sequence[Any], binding: str) -> str:
        flat: dict[str, Any] = {}
        for v, position in enumerate(positions):
            if position is DONE:
                flat[f"{v}/"] = DONE
            elif position is not None:
                for attr, value in position.items():
                    flat[f"{v}/{attr}"] = value
        return ctx.cursors.encode(flat, binding)

    def _positions(
        self, ctx: PlanContext, cursor: Any, binding: str, plans: Sequence[QueryPlan]
    ) -> list[Any]:
        """Every value's position from a composite cursor (None: from the start)."""
        positions: list[Any] = [None] * len(plans)
        if cursor is None:
            return positions
        flat = ctx.cursors.decode(cursor, binding, None)
        grouped: dict[int, dict[str, Any]] = {}
        for name, value in flat.items():
            number, _, attr = name.partition("/")
            if not number.isdigit() or int(number) >= len(plans):
                raise InvalidCursor("the cursor is not a cursor of this scatter query")
            grouped.setdefault(int(number), {})[attr] = value
        for v, key in grouped.items():
            if key == {"": DONE}:
                positions[v] = DONE
                continue
            if frozenset(key) != self.positions:
                raise InvalidCursor("the cursor does not hold this index's key attributes")
            plans[v].check_start(key)
            positions[v] = key
        return positions

    def count(self, ctx: PlanContext, kwargs: Mapping[str, Any], counter: Any) -> Flow[int]:
        """The matching live items over every value (``counter``: the pattern's count of one
        compiled Query)."""
        kwargs = {k: v for k, v in kwargs.items() if k not in ("limit", "cursor")}
        total = 0
        for plan in self.plans(ctx, kwargs):
            total += yield from counter(ctx, plan.params)
        return total
