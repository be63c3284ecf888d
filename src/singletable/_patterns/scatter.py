"""Scatter-gather reads of a sharded partition key: ``query(E, index=..., scatter="shard")``.

An entity with ``shard: Annotated[int, Shard(8, of="order_id")]`` in an index's partition key
spreads its writes over 8 partitions. A scatter query reads all of them, each Query at once
(a ``Gather``), and merges them in the index's sort-key order (ties by the table's primary key,
in the same direction).

One page never emits an item out of order: a shard that has more items than it returned
(``LastEvaluatedKey``) bounds what the others may emit (its *frontier*: nothing it has not read
can sort before it). So a page holds the next items in merged order, at most ``limit``, maybe
fewer. The cursor records every shard's position: its last emitted item, the point it has read
past, or done; it is signed and bound like any cursor.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._flows import Flow, Gather, Send
from .._paging import Page, binding_of
from ..errors import InvalidCursor, ModelDefinitionError
from .base import ExplainRow
from .keyed import QueryPlan
from .native import comparable
from .query import QueryPattern

if TYPE_CHECKING:
    from .._context import PlanContext
    from .._table import Table

DONE = {"S": "done"}


class ScatterQueryPattern(QueryPattern[Any]):
    """``query(E, index=..., scatter="shard")``: ``n`` Queries per page, merged."""

    def __init__(
        self, entity: type[Any], *, scatter: str, max_concurrency: int | None = None, **options: Any
    ) -> None:
        super().__init__(entity, **options)
        self.scatter = scatter
        self.max_concurrency = max_concurrency

    @property
    def operation(self) -> str:  # type: ignore[override]
        return f"Query x{self.shards}"

    def bind(self, repository: type, table: Table) -> None:
        super().bind(repository, table)
        where = f"{repository.__qualname__}.{self.name}"
        spec = self.specs[0]
        plan = next((p for p in spec.shards if p.field == self.scatter), None)
        if plan is None:
            raise ModelDefinitionError(
                f"{where}: scatter={self.scatter!r} must name a Shard() field of {spec.name}, "
                f"e.g. {self.scatter}: Annotated[int, Shard(8, of=...)] = 0"
            )
        if self.scatter not in self.partition_fields():
            raise ModelDefinitionError(
                f"{where}: scatter={self.scatter!r} is not in the partition key of "
                f"{self.index or 'the table'} ({self.key_condition_text()!r}); put "
                f"{{{self.scatter}}} in that template (or the field in the native index's pk)"
            )
        if self.one_only or self.keys_only or self.hydrate:
            raise ModelDefinitionError(
                f"{where}: scatter= returns pages of entities; drop one=/keys_only=/hydrate="
            )
        if self.max_concurrency is not None and (
            type(self.max_concurrency) is not int or self.max_concurrency < 1
        ):
            raise ModelDefinitionError(f"{where}: max_concurrency must be a positive int")
        self.shards = plan.n
        keys = self.plan.keys
        table_keys = [a for a in (table.pk, table.sk) if a]
        self.order_attributes = list(dict.fromkeys((*keys.sk_attributes, *table_keys)))
        self.position_attributes = frozenset(self.plan.cursor_attributes | set(table_keys))

    def _plan_keywords(self) -> None:
        super()._plan_keywords()
        # The shard is the scatter's to choose: passing it is not a call keyword.
        self.call_keywords = self.call_keywords.without(self.scatter)

    def explain(self) -> ExplainRow:
        row = super().explain()
        notes = ", ".join(n for n in (row.notes, f"scatter over {self.scatter}") if n)
        return ExplainRow(
            row.pattern,
            self.operation,
            row.index,
            row.key_condition,
            row.entity_types,
            row.order,
            filter=row.filter,
            consistent=row.consistent,
            notes=notes,
        )

    # -- plans --

    def shard_plans(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> list[QueryPlan]:
        """One Query per shard (no start keys), for call keywords without the cursor."""
        keywords = self.call_keywords
        if not keywords.known.issuperset(kwargs):
            raise self.argument_error(kwargs.keys() - keywords.known)
        call = keywords.split(self.name, kwargs)
        return [
            self.compile_call(ctx, call.one_query({self.scatter: s})) for s in range(self.shards)
        ]

    def params(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """A scatter pattern's requests: ``{"Queries": [one Query per shard]}``."""
        return {"Queries": [plan.params for plan in self.shard_plans(ctx, kwargs)]}

    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Page[Any]]:
        """One merged page: a Query per shard not yet exhausted, sent at once."""
        plans = self.shard_plans(ctx, kwargs)
        binding = binding_of(*(plan.binding_parts for plan in plans))
        positions = self._positions(ctx, kwargs.get("cursor"), binding, plans)
        live = [s for s in range(self.shards) if positions[s] is not DONE]
        sends = []
        for s in live:
            params = dict(plans[s].params)
            if positions[s] is not None:
                params["ExclusiveStartKey"] = positions[s]
            sends.append(Send("Query", params, self.name))
        concurrency = self.max_concurrency or self.shards
        responses = yield Gather(tuple(sends), concurrency)
        limit = plans[0].limit
        read = {s: response for s, response in zip(live, responses)}
        items, new_positions = self._merge(ctx, read, positions, limit)
        if all(p is DONE for p in new_positions):
            return Page(items, None)
        return Page(items, self._encode(ctx, new_positions, binding))

    def count(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[int]:
        """The number of matching live items over every shard."""
        kwargs = {k: v for k, v in kwargs.items() if k not in ("limit", "cursor")}
        total = 0
        for plan in self.shard_plans(ctx, kwargs):
            total += yield from self.count_request(ctx, plan.params)
        return total

    # -- merging --

    def _order_key(self, item: Mapping[str, Any]) -> tuple[Any, ...]:
        """Where an item sorts: its sort attributes (numbers by value on a native index), then
        the table key."""
        return tuple(comparable(item[a]) for a in self.order_attributes)

    def _merge(
        self,
        ctx: PlanContext,
        read: Mapping[int, Mapping[str, Any]],
        positions: list[Any],
        limit: int,
    ) -> tuple[list[Any], list[Any]]:
        """The page's items and every shard's new position.

        Items are eligible up to the frontier (the nearest point any shard with more items
        has read to); the first ``limit`` eligible ones in merged order are the page.
        """
        descending = self.order == "desc"
        frontier: tuple[Any, ...] | None = None
        found: dict[int, list[tuple[Mapping[str, Any], Any]]] = {}
        for s, response in read.items():
            found[s] = self.decoder.pairs(response.get("Items", ()), ctx)
            last = response.get("LastEvaluatedKey")
            if last is not None:
                point = self._order_key(last)
                if frontier is None or (point > frontier if descending else point < frontier):
                    frontier = point

        def eligible(raw: Mapping[str, Any]) -> bool:
            if frontier is None:
                return True
            point = self._order_key(raw)
            return point >= frontier if descending else point <= frontier

        streams = [
            [(self._order_key(raw), s, raw, result) for raw, result in found[s] if eligible(raw)]
            for s in found
        ]
        merged = heapq.merge(*streams, key=lambda entry: entry[0], reverse=descending)
        taken: list[tuple[tuple[Any, ...], int, Mapping[str, Any], Any]] = []
        for entry in merged:
            if len(taken) == limit:
                break
            taken.append(entry)
        new_positions = list(positions)
        last_taken: dict[int, Mapping[str, Any]] = {}
        count: dict[int, int] = {}
        for _, s, raw, _ in taken:
            last_taken[s] = raw
            count[s] = count.get(s, 0) + 1
        for s, response in read.items():
            more = response.get("LastEvaluatedKey")
            all_taken = count.get(s, 0) == len(found[s])
            if all_taken:
                new_positions[s] = DONE if more is None else more
            elif s in last_taken:
                new_positions[s] = {a: last_taken[s][a] for a in self.position_attributes}
        return [result for _, _, _, result in taken], new_positions

    # -- the composite cursor --

    def _encode(self, ctx: PlanContext, positions: Sequence[Any], binding: str) -> str:
        flat: dict[str, Any] = {}
        for s, position in enumerate(positions):
            if position is DONE:
                flat[f"{s}/"] = DONE
            elif position is not None:
                for attr, value in position.items():
                    flat[f"{s}/{attr}"] = value
        return ctx.cursors.encode(flat, binding)

    def _positions(
        self, ctx: PlanContext, cursor: Any, binding: str, plans: Sequence[QueryPlan]
    ) -> list[Any]:
        """Every shard's position from a composite cursor (None: from the start)."""
        positions: list[Any] = [None] * self.shards
        if cursor is None:
            return positions
        flat = ctx.cursors.decode(cursor, binding, None)
        grouped: dict[int, dict[str, Any]] = {}
        for name, value in flat.items():
            shard, _, attr = name.partition("/")
            if not shard.isdigit() or int(shard) >= self.shards:
                raise InvalidCursor("the cursor is not a cursor of this scatter query")
            grouped.setdefault(int(shard), {})[attr] = value
        for s, key in grouped.items():
            if key == {"": DONE}:
                positions[s] = DONE
                continue
            if frozenset(key) != self.position_attributes:
                raise InvalidCursor("the cursor does not hold this index's key attributes")
            plans[s].check_start(key)
            positions[s] = key
        return positions
