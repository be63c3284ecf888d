"""``scan(E, index="Idx")``: a Scan of an index in which ``E`` is sparse, the one Scan a
repository can declare.

A sparse index holds only the items that have its key attributes: the open games of a game
service (a native index on ``map``/``open_timestamp``, which only open games carry), the
pending orders of a ``when=`` index. Reading all of it is what the index is for, and a Scan
of it costs what it holds, not what the table holds (AWS recommends exactly that for small
sparse indexes). A Scan of a dense index (every item of the entity is in it) reads the whole
entity: that is a ``ModelDefinitionError`` saying a query is needed.

Each page is one Scan request: the entity's type tags as the filter (with the declared and
the call's ``where=``), ``Limit`` one more than the page so the end is known, items in
DynamoDB's order (by partition hash: no key order). Cursors are the usual ones, bound to the
pattern, the index and the filters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .._expressions import (
    CompileContext,
    ExpressionBuilder,
    add_filter,
    condition_of,
    conjunction,
)
from .._flows import Flow, Send
from .._keys import CALL_KEYWORDS
from .._paging import Page, binding_of
from ..errors import InvalidRequestError, ModelDefinitionError
from .base import (
    Decoder,
    ExplainRow,
    Paged,
    Pattern,
    check_table,
    count_items,
    entity_spec,
    pattern_argument_error,
)
from .keyed import CompiledFilter, call_filter
from .keywords import OPTIONS

if TYPE_CHECKING:
    from .._context import PlanContext
    from .._entity_spec import EntitySpec
    from .._expressions import Condition
    from .._table import Table

T = TypeVar("T")


class ScanPlan:
    """A compiled Scan page: the exact request, the page size and the cursor binding."""

    __slots__ = ("binding", "limit", "params")

    def __init__(self, params: dict[str, Any], binding: str, limit: int) -> None:
        self.params = params
        self.binding = binding
        self.limit = limit


class ScanPattern(Pattern, Paged[T]):
    """``scan(E, index="Idx")``: pages of the entities in a sparse index, one Scan each."""

    operation = "Scan"
    spec: EntitySpec
    decoder: Decoder

    def __init__(self, entity: type[Any], *, index: str, where: Condition | None = None) -> None:
        self.entity = entity
        self.index = index
        self.where = where

    def bind(self, repository: type, table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        spec = entity_spec(self.entity, where)
        check_table(spec, table, where)
        if not isinstance(self.index, str):
            raise ModelDefinitionError(
                f"{where}: scan() reads a sparse index: name it, scan({spec.name}, index=...); "
                "the table itself holds every item"
            )
        keys = table.index_keys(self.index)
        member = spec.native.get(self.index) if keys.native else spec.indexes.get(self.index)
        if member is None:
            raise ModelDefinitionError(
                f"{where}: {spec.name} is not in index {self.index!r}, so a scan of it would "
                "return nothing"
            )
        if not member.sparse:
            raise ModelDefinitionError(
                f"{where}: every {spec.name} is in index {self.index!r} (it is not sparse for "
                f"{spec.name}), so a Scan would read every one of them; a query is needed: "
                f"query({spec.name}, index={self.index!r}) with the partition key the caller "
                "knows (a scan is for an index only some items are in: Index(..., when=...), or "
                "a native index keyed on an optional field)"
            )
        if keys.projection_type != "ALL":
            raise ModelDefinitionError(
                f"{where}: index {self.index!r} projects {keys.projection_type}; a scan returns "
                "whole entities, so it needs an index that projects ALL"
            )
        self.spec = spec
        self.table = table
        self.physical_name = keys.physical_name
        self.decoder = Decoder([spec], table)
        self.filter_params = frozenset(self.where.param_names()) if self.where else frozenset()
        clash = self.filter_params & CALL_KEYWORDS
        if clash:
            raise ModelDefinitionError(
                f"{where}: Param({sorted(clash)[0]!r}) clashes with a call keyword"
            )
        self.cursor_attributes = frozenset(
            (*keys.pk_attributes, *keys.sk_attributes, *(a for a in (table.pk, table.sk) if a))
        )
        self.accepted = (*sorted(self.filter_params), *OPTIONS)

    def explain(self) -> ExplainRow:
        return ExplainRow(
            self.name,
            self.operation,
            self.index,
            f"every item of sparse index {self.index}",
            (self.spec.type_name,),
            "-",
            filter=self.where.describe() if self.where is not None else None,
            notes="sparse-index scan",
        )

    def keywords(self) -> tuple[set[str], set[str]]:
        return set(self.filter_params), set(self.accepted)

    # -- requests --

    def params(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The exact Scan request of one page (what ``.params(**kw)`` shows)."""
        return self.compile(ctx, kwargs).params

    def compile(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> ScanPlan:
        """One page's Scan for call keywords (pure; no I/O)."""
        unknown = kwargs.keys() - set(self.accepted)
        if unknown:
            raise pattern_argument_error(self.name, unknown, self.accepted)
        limit = kwargs.get("limit")
        if limit is None:
            limit = ctx.default_limit
        elif not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidRequestError(f"{self.name}: limit must be a positive int, not {limit!r}")
        missing = sorted(self.filter_params - kwargs.keys())
        if missing:
            raise InvalidRequestError(
                f"{self.name} needs the filter parameter(s) {', '.join(missing)}", key=missing[0]
            )
        filter_values = {p: kwargs[p] for p in self.filter_params}
        where = kwargs.get("where")
        compiled = None if where is None else self._call_filter(where)
        params: dict[str, Any] = {"TableName": ctx.table_name, "IndexName": self.physical_name}
        self._filters(params, filter_values, compiled)
        params["Limit"] = limit + 1  # one more than returned, so the end of the index is known
        if ctx.capacity is not None:
            params["ReturnConsumedCapacity"] = ctx.capacity
        binding = binding_of(
            self.name,
            self.index,
            sorted((k, repr(v)) for k, v in filter_values.items()),
            compiled[0] if compiled else None,
            sorted(compiled[2].items()) if compiled else None,
        )
        cursor = kwargs.get("cursor")
        if cursor is not None:
            start = ctx.cursors.decode(cursor, binding, self.cursor_attributes)
            params["ExclusiveStartKey"] = start
        return ScanPlan(params, binding, limit)

    def _filters(
        self,
        params: dict[str, Any],
        filter_values: Mapping[str, Any],
        compiled: CompiledFilter | None,
    ) -> None:
        """The type-tag filter, then the declared and the call's ``where=``."""
        add_filter(params, self.spec.ownership_filter(None), "t")
        expressions = [params["FilterExpression"]]
        if self.where is not None:
            builder = ExpressionBuilder("f")
            context = CompileContext(builder, self.spec.encode_for_condition, filter_values)
            expressions.append(self.where.compile(context))
            params.setdefault("ExpressionAttributeNames", {}).update(builder.names)
            params.setdefault("ExpressionAttributeValues", {}).update(builder.values)
        if compiled is not None:
            expressions.append(compiled[0])
            params.setdefault("ExpressionAttributeNames", {}).update(compiled[1])
            params.setdefault("ExpressionAttributeValues", {}).update(compiled[2])
        params["FilterExpression"] = conjunction(expressions)

    def _call_filter(self, where: Any) -> CompiledFilter:
        where = condition_of(where, [self.spec.cls])  # a typed callback, as on queries
        return call_filter(
            self.name, where, self.spec.encode_for_condition, lambda _: [], self.index
        )

    # -- flows --

    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Page[T]]:
        """One page: exactly one Scan."""
        plan = self.compile(ctx, kwargs)
        response = yield Send("Scan", plan.params, self.name)
        entities, last_raw, more = self.decoder.page(response.get("Items", ()), plan.limit, ctx)
        if more and last_raw is not None:
            key = {a: last_raw[a] for a in self.cursor_attributes}
            cursor: str | None = ctx.cursors.encode(key, plan.binding)
        else:
            last = response.get("LastEvaluatedKey")
            cursor = None if last is None else ctx.cursors.encode(last, plan.binding)
        return Page(entities, cursor, response.get("ConsumedCapacity"))

    def count(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[int]:
        """The number of live entities in the index (``Select=COUNT``, every page)."""
        kwargs = {k: v for k, v in kwargs.items() if k not in ("limit", "cursor")}
        params = self.compile(ctx, kwargs).params
        if self.spec.expires:
            add_filter(params, self.spec.ownership_filter(ctx.now_epoch()), "c")
        return (yield from count_items("Scan", params, self.name))


__all__ = ["ScanPattern"]
