"""``query(E, ...)``: one Query over an entity's items in a partition of the table or an index
(``hydrate=True``: plus one BatchGetItem for the full items)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, overload

from typing_extensions import Self

from .._context import PlanContext
from .._entity_spec import EntitySpec
from .._expressions import add_filter, condition_of
from .._flows import Flow, Send, is_async
from .._item_key import key_identity
from .._paging import KeyRef, Page
from .._verbs.batch import batch_get_items
from ..errors import KeyTemplateError, ModelDefinitionError, MultipleResultsError
from .base import (
    AsyncRunner,
    DeclaredPattern,
    DeclaredQuery,
    ExplainRow,
    Paged,
    SyncRunner,
    check_table,
    count_items,
    entity_spec,
    projection_of,
)
from .bound import AsyncBoundOne, BoundOne
from .keyed import KeyedPattern, Order, QueryPlan, key_plan

if TYPE_CHECKING:
    from .._conditions import ConditionFn
    from .._expressions import Condition
    from .._table import Table

E = TypeVar("E")  # what a one=True pattern returns: the entity or a projection of it
T = TypeVar("T")
P = ParamSpec("P")


class QueryPattern(KeyedPattern, Paged[T]):
    """``query(E, ...)``: one Query over the entity's items in a partition (or index)."""

    def __init__(
        self,
        entity: type[Any],
        *,
        index: str | None = None,
        order: Order = "asc",
        one: bool = False,
        where: Condition | ConditionFn[Any] | None = None,
        consistent: bool = False,
        keys_only: bool = False,
        hydrate: bool = False,
        project: type[Any] | None = None,
    ) -> None:
        self.entity = entity
        self.project = project
        self.index = index
        self.order = order
        self.one_only = one
        self.declared_where = where  # a condition or a callback, resolved by bind
        self.consistent = consistent
        self.keys_only = keys_only
        self.hydrate = hydrate

    @property
    def operation(self) -> str:  # type: ignore[override]
        return "Query+BatchGetItem" if self.hydrate else "Query"

    def bind(self, repository: type, table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        spec = entity_spec(self.entity, where)
        check_table(spec, table, where)
        self.specs = [spec]
        self.where = condition_of(self.declared_where, (spec.cls,))
        self.plan = key_plan(spec, self.index, where)
        self.projection = projection_of(self.project, spec, where)
        self._bind_common(table, where)
        if self.projection is not None and self.keys_only:
            raise ModelDefinitionError(
                f"{where}: keys_only=True returns key references; drop project= or keys_only"
            )
        if self.keys_only and self.hydrate:
            raise ModelDefinitionError(f"{where}: choose keys_only=True or hydrate=True, not both")
        if self.where is not None and (self.keys_only or self.hydrate):
            unknown = {p.split(".")[0] for p in self.where.attribute_paths()}
            projected = self._projected_attributes()
            if projected is not None and not unknown <= projected:
                raise ModelDefinitionError(
                    f"{where}: the filter reads {sorted(unknown - projected)}, which index "
                    f"{self.index!r} does not project"
                )
        keys = self.plan.keys
        if not (self.keys_only or self.hydrate) and not self._projects_entity(spec):
            what = (
                f"whole {spec.name} entities"
                if self.projection is None
                else f"{self.projection.model.__qualname__} (it reads {self._missing(spec)})"
            )
            raise ModelDefinitionError(
                f"{where}: index {self.index!r} projects {keys.projection_type}, so it cannot "
                f"return {what}; declare keys_only=True (typed key references) or "
                "hydrate=True (Query + one BatchGetItem)"
            )
        if self.one_only and (self.keys_only or self.hydrate):
            raise ModelDefinitionError(
                f"{where}: one=True cannot be combined with keys_only/hydrate"
            )

    def _projected_attributes(self) -> set[str] | None:
        if self.index is None:
            return None
        index = next(i for i in self.table.indexes if i.name == self.index)
        projection = index.projection
        if projection == "ALL":
            return None
        base = set(self.table.key_attributes) | set(self.plan.keys.attributes)
        if isinstance(projection, tuple):
            base |= set(projection[1])
        return base

    def _unprojected(self, where: Condition) -> list[str]:
        projected = self._projected_attributes()
        if projected is None:
            return []
        return sorted({p.split(".")[0].split("[")[0] for p in where.attribute_paths()} - projected)

    def _needed(self, spec: EntitySpec) -> set[str]:
        """The attributes a result needs: the projection's, else every field's; the tag."""
        fields = (
            set(spec.attr_names.values())
            if self.projection is None
            else set(self.projection.attributes)
        )
        return {spec.table.type_attribute} | fields

    def _missing(self, spec: EntitySpec) -> str:
        projected = self._projected_attributes() or set()
        return ", ".join(sorted(self._needed(spec) - projected))

    def _projects_entity(self, spec: EntitySpec) -> bool:
        projected = self._projected_attributes()
        if projected is None:
            return True
        return self._needed(spec) <= projected

    def _request_limit(self, limit: int) -> int:
        if self.one_only:
            return 2  # two matches tell "one" from "more than one"
        return limit + 1

    def explain(self) -> ExplainRow:
        spec = self.specs[0]
        notes = []
        if self.one_only:
            notes.append("one")
        if self.keys_only:
            notes.append("keys only")
        return ExplainRow(
            self.name,
            self.operation,
            self.index,
            self.key_condition_text(),
            (spec.type_name,),
            self.order,
            filter=self.where.describe() if self.where is not None else None,
            consistent=self.consistent,
            notes=", ".join(notes),
        )

    # -- flows --

    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Page[T]]:
        """One page: one Query (and one BatchGetItem when hydrating)."""
        plan = self.compile(ctx, kwargs)
        response = yield Send("Query", plan.params, self.name)
        items = response.get("Items", ())
        capacity = response.get("ConsumedCapacity")
        if self.keys_only or self.hydrate:
            refs, raws, more = self._key_refs(items, plan.limit)
            cursor = self.next_cursor(ctx, plan, raws[-1] if raws else None, more, response)
            if self.keys_only:
                return Page(refs, cursor, capacity)  # type: ignore[arg-type]  # T is KeyRef[E]
            entities = yield from self._hydrated(ctx, raws)
            return Page(entities, cursor, capacity)
        entities, last_raw, more = self.decoder.page(items, plan.limit, ctx)
        cursor = self.next_cursor(ctx, plan, last_raw, more, response)
        return Page(entities, cursor, capacity)

    def one(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[T | None]:
        """The single match, None, or :class:`MultipleResultsError` (asks for two)."""
        plan = self.compile(ctx, kwargs)
        response = yield Send("Query", plan.params, self.name)
        entities, _, more = self.decoder.page(response.get("Items", ()), 1, ctx)
        if more:
            partition = plan.params["ExpressionAttributeValues"][":pk"]["S"]
            raise MultipleResultsError(
                f"{self.name} matched more than one {self.specs[0].name} "
                f"({self.plan.keys.pk} = {partition!r}); "
                "a secondary index does not enforce uniqueness"
            )
        return entities[0] if entities else None

    def count(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[int]:
        """The number of matching live items of this entity (``Select=COUNT``, every page)."""
        kwargs = {k: v for k, v in kwargs.items() if k not in ("limit", "cursor")}
        return (yield from self.count_request(ctx, self.compile(ctx, kwargs).params))

    def count_request(self, ctx: PlanContext, params: dict[str, Any]) -> Flow[int]:
        """Count with a compiled Query request: ``Select=COUNT``, the entity's live items only,
        every page."""
        if not (self.keys_only or self.hydrate):
            # Count only this entity's live items: ownership as a filter.
            add_filter(params, self.specs[0].ownership_filter(ctx.now_epoch()), "c")
        if self.projected is not None:  # DynamoDB refuses a projection with Select=COUNT
            del params["ProjectionExpression"]
            for name in self.projected[1]:  # (placeholders of the projection alone)
                del params["ExpressionAttributeNames"][name]
        return (yield from count_items("Query", params, self.name))

    def _key_refs(
        self, items: Sequence[Mapping[str, Any]], limit: int
    ) -> tuple[list[KeyRef[Any]], list[Mapping[str, Any]], bool]:
        spec = self.specs[0]
        base = spec.base
        refs: list[KeyRef[Any]] = []
        raws: list[Mapping[str, Any]] = []
        for item in items:
            fields = _parse_primary(spec, item)
            if fields is None:
                continue  # another entity type's keys
            if len(refs) == limit:
                return refs, raws, True
            key = {a: item[a] for a in (base.keys.pk, base.keys.sk) if a}
            refs.append(KeyRef(spec.cls, key, fields))
            raws.append(item)
        return refs, raws, False

    def _hydrated(self, ctx: PlanContext, raws: Sequence[Mapping[str, Any]]) -> Flow[list[Any]]:
        if not raws:
            return []
        spec = self.specs[0]
        table = spec.table
        ttl = table.ttl_attribute
        key_attrs = [a for a in (table.pk, table.sk) if a]
        keys = [{a: raw[a] for a in key_attrs} for raw in raws]
        projection = None
        if self.projection is not None:
            extra = (table.type_attribute, *key_attrs, *([ttl] if ttl else []))
            projection = self.projection.expression(extra)
        found = yield from batch_get_items(
            ctx.table_name, keys, key_attrs, ctx.retry, pattern=self.name, projection=projection
        )
        now = ctx.now_epoch() if spec.expires else 0
        decode = spec.from_item if self.projection is None else self.projection.decode
        entities = []
        for key in keys:
            item = found.get(key_identity(key, key_attrs))
            if item is not None and spec.owns(item, now):  # else deleted or expired meanwhile
                entities.append(decode(item))
        return entities

    # -- binding --

    def __call__(  # type: ignore[override]
        self, method: Callable[Concatenate[Any, P], Page[T]]
    ) -> DeclaredQuery[P, T]:
        """Declare the pattern as a method signature (its keywords typed); the body never
        runs."""
        return DeclaredQuery(self, method)


def _parse_primary(spec: EntitySpec, item: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        return spec.parse_key(item)
    except KeyTemplateError:
        return None  # another entity type's key


class OneQueryPattern(QueryPattern[E]):
    """``query(E, one=True)``: the single matching entity or None.

    (A subclass only so that ``__get__`` can be typed to return ``E | None`` callables.)"""

    def __call__(  # type: ignore[override]
        self, method: Callable[Concatenate[Any, P], E | None]
    ) -> DeclaredPattern[P, E | None]:
        """Declare the pattern as a method signature (its keywords typed)."""
        return DeclaredPattern(self, method)

    @overload  # type: ignore[override]
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncRunner, owner: type) -> AsyncBoundOne[E]: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> BoundOne[E]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return (AsyncBoundOne if is_async(instance) else BoundOne)(self, instance)


__all__ = ["OneQueryPattern", "QueryPattern", "QueryPlan"]
