"""``collection(A, B, ...)``: one Query over a partition that several entity types share;
items are dispatched by their type tag."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, overload

from typing_extensions import Self

from .._context import PlanContext
from .._flows import Flow, Send, is_async
from .._keys import SENTINEL, SortCondition
from .._paging import Collection, add_capacity
from ..errors import ModelDefinitionError
from .base import (
    AsyncRunner,
    DeclaredCollection,
    ExplainRow,
    SyncRunner,
    check_table,
    entity_spec,
)
from .bound import AsyncBoundCollection, BoundCollection
from .keyed import KeyedPattern, KeyPlan, Order, key_plan
from .native import NativeKeyPlan
from .native import key_condition_text as native_key_condition_text

P = ParamSpec("P")

if TYPE_CHECKING:
    from .._entity import Entity
    from .._table import Table


class CollectionPattern(KeyedPattern):
    """``collection(A, B, ...)``: one Query over a partition the entity types share."""

    def __init__(
        self, *entities: type[Entity], index: str | None = None, order: Order = "asc"
    ) -> None:
        self.entities = entities
        self.index = index
        self.order = order
        self.where = None
        self.consistent = False

    def bind(self, repository: type, table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        if len(self.entities) < 1:
            raise ModelDefinitionError(f"{where}: collection() needs at least one entity")
        self.specs = [entity_spec(e, where) for e in self.entities]
        for spec in self.specs:
            check_table(spec, table, where)
        plans = [key_plan(spec, self.index, where) for spec in self.specs]
        self.sk_plans = plans
        first = plans[0]
        if isinstance(first, NativeKeyPlan):
            shapes = {_native_shape(p) for p in plans}  # type: ignore[arg-type]
            if len(shapes) > 1:
                raise ModelDefinitionError(
                    f"{where}: the entities key native index {self.index!r} differently "
                    "(other field names, or other table-key templates); a collection needs one "
                    "set of call keywords"
                )
            if first.keys.projection_type == "KEYS_ONLY":
                raise ModelDefinitionError(
                    f"{where}: native index {self.index!r} projects KEYS_ONLY, so its items "
                    "carry no type tag to tell the entities apart; project the type tag"
                )
            self.plan = first
            self.prefix = ""
        else:
            texts = {plan.pk.text for plan in plans}  # type: ignore[union-attr]
            if len(texts) > 1:
                detail = ", ".join(
                    f"{s.name}: {p.pk.text!r}"  # type: ignore[union-attr]
                    for s, p in zip(self.specs, plans)
                )
                raise ModelDefinitionError(
                    f"{where}: the entities do not share a partition on "
                    f"{self.index or 'the table'} ({detail}); give them the same partition key "
                    "template"
                )
            self.plan = KeyPlan(first.index, first.keys, first.pk, None)
            self.prefix = _common_prefix(
                [p.sk.literal_prefix if p.sk else "" for p in plans]  # type: ignore[union-attr]
            )
        self._bind_common(table, where)
        keys = self.plan.keys
        if keys.projection_type != "ALL":
            raise ModelDefinitionError(
                f"{where}: index {self.index!r} projects {keys.projection_type}; a collection "
                "needs whole items (ALL projection)"
            )
        self.by_tag = {tag: spec for spec in self.specs for tag in spec.type_tags}

    def _static_prefix(self) -> str:
        return self.prefix

    def key_condition_text(self) -> str:
        plan = self.plan
        if isinstance(plan, NativeKeyPlan):
            return native_key_condition_text(plan)
        keys = plan.keys
        text = f"{keys.pk} = {plan.pk.text}"
        if self.prefix and keys.sk:
            text += f" AND begins_with({keys.sk}, {self.prefix})"
        return text

    def _default_sort(self) -> SortCondition | None:
        if self.prefix and self.plan.keys.sk:
            return SortCondition("begins_with", (self.prefix,))  # the types' common literal
        return None

    def explain(self) -> ExplainRow:
        return ExplainRow(
            self.name,
            "Query",
            self.index,
            self.key_condition_text(),
            tuple(spec.type_name for spec in self.specs),
            self.order,
        )

    # -- flows --

    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Collection]:
        """One page of the collection: exactly one Query."""
        plan = self.compile(ctx, kwargs)
        response = yield Send("Query", plan.params, self.name)
        entities, last_raw, more = self.decoder.page(response.get("Items", ()), plan.limit, ctx)
        cursor = self.next_cursor(ctx, plan, last_raw, more, response)
        return Collection(entities, cursor, response.get("ConsumedCapacity"))

    def whole(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Collection]:
        """Every page merged into one collection (one Query per page)."""
        items: list[Any] = []
        capacity: Any = None
        while True:
            page = yield from self.page(ctx, kwargs)
            items.extend(page.items)
            capacity = add_capacity(capacity, page.consumed_capacity)
            if page.cursor is None:
                return Collection(items, None, capacity)
            kwargs = {**kwargs, "cursor": page.cursor}

    def __call__(  # type: ignore[override]
        self, method: Callable[Concatenate[Any, P], Collection]
    ) -> DeclaredCollection[P]:
        """Declare the pattern as a method signature (its keywords typed); the body never
        runs."""
        return DeclaredCollection(self, method)

    # -- binding --

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncRunner, owner: type) -> AsyncBoundCollection: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> BoundCollection: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return (AsyncBoundCollection if is_async(instance) else BoundCollection)(self, instance)


def _native_shape(plan: NativeKeyPlan) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """What a native index asks of a call, per attribute: its fields (or template)."""
    return tuple(
        (a.attribute, a.fields, a.template.text if a.template else "")
        for a in plan.native.attributes
    )


def _common_prefix(prefixes: Sequence[str]) -> str:
    if not prefixes:
        return ""
    first = min(prefixes)
    last = max(prefixes)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size].replace(SENTINEL, "")
