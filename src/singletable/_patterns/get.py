"""``get(E)``: one GetItem by the entity's full primary key."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from typing_extensions import Self

from .._context import PlanContext
from .._entity import Entity
from .._flows import Flow, Send, is_async
from ..errors import ItemDecodeError, KeyTemplateError, PatternArgumentError
from .base import (
    AsyncRunner,
    DeclaredPattern,
    ExplainRow,
    Pattern,
    SyncRunner,
    check_table,
    entity_spec,
    pattern_argument_error,
    projection_of,
)
from .bound import AsyncBoundGet, BoundGet
from .keywords import split_lookup

if TYPE_CHECKING:
    from .._table import Table

E = TypeVar("E")  # what the pattern returns: the entity, or a projection of it
P = ParamSpec("P")


class GetPattern(Pattern, Generic[E]):
    """``get(E)``: one GetItem by the entity's full primary key (``project=P``: only P's
    fields, returned as ``P``)."""

    operation = "GetItem"

    def __init__(
        self, entity: type[Entity], *, consistent: bool = False, project: type[Any] | None = None
    ) -> None:
        self.entity = entity
        self.consistent = consistent
        self.project = project

    def bind(self, repository: type, table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        self.spec = entity_spec(self.entity, where)
        check_table(self.spec, table, where)
        self.accepted: tuple[str, ...] = self.spec.key_arguments
        self.projection = projection_of(self.project, self.spec, where)
        self.decode_item = (
            self.spec.from_item if self.projection is None else self.projection.decode
        )
        self.projected: tuple[str, dict[str, str]] | None = None
        if self.projection is not None:
            extra = (table.type_attribute, *((table.ttl_attribute,) if table.ttl_attribute else ()))
            self.projected = self.projection.expression(extra)

    def keywords(self) -> tuple[set[str], set[str]]:
        fields = set(self.spec.key_arguments)
        return fields, fields

    def argument_error(self, keys: Iterable[str]) -> PatternArgumentError | None:
        """The error for keywords that are not key fields (None when every one is)."""
        unknown = set(keys).difference(self.accepted)
        if not unknown:
            return None
        reasons = {}
        for name in unknown:
            split = split_lookup(name)
            if split is not None and split[0] in self.accepted:
                reasons[name] = (
                    f"a get takes the exact value of {split[0]}; lookups are for queries"
                )
            elif name == "where":
                reasons[name] = "a get reads one item by its key: filters are for queries"
            for plan in self.spec.key_shards:
                if name == plan.field:
                    reasons[name] = f"computed from {plan.of} (Shard); pass {plan.of} only"
        return pattern_argument_error(self.name, unknown, self.accepted, reasons=reasons)

    def explain(self) -> ExplainRow:
        base = self.spec.base
        parts = [f"{base.keys.pk} = {base.pk.text}"]  # type: ignore[union-attr]
        if base.sk is not None:
            parts.append(f"{base.keys.sk} = {base.sk.text}")
        return ExplainRow(
            self.name,
            "GetItem",
            None,
            " AND ".join(parts),
            (self.spec.type_name,),
            "-",
            consistent=self.consistent,
            notes=f"project {self.project.__qualname__}" if self.project is not None else "",
        )

    # -- plan --

    def params(self, ctx: PlanContext, keys: Mapping[str, Any]) -> dict[str, Any]:
        """The exact GetItem request (pure)."""
        if self.spec.key_shards:  # a key is never scattered: the shard is computed
            error = self.argument_error(keys)
            if error is not None:
                raise error
        try:
            key = self.spec.key_of_fields(keys)
        except KeyTemplateError:
            # Only now (the valid path pays nothing): a keyword that is not a key field is
            # reported as such, before a missing or badly-valued key field.
            error = self.argument_error(keys)
            if error is not None:
                raise error from None
            raise
        params: dict[str, Any] = {"TableName": ctx.table_name, "Key": key}
        if self.projected is not None:
            params["ProjectionExpression"], params["ExpressionAttributeNames"] = (
                self.projected[0],
                dict(self.projected[1]),
            )
        if self.consistent:
            params["ConsistentRead"] = True
        if ctx.capacity is not None:
            params["ReturnConsumedCapacity"] = ctx.capacity
        return params

    def flow(self, ctx: PlanContext, keys: Mapping[str, Any]) -> Flow[E | None]:
        """Send the GetItem; return the entity, or None when absent or expired."""
        response = yield Send("GetItem", self.params(ctx, keys), self.name)
        return self.decode(response, ctx)

    def decode(self, response: Mapping[str, Any], ctx: PlanContext) -> E | None:
        item = response.get("Item")
        if item is None:
            return None
        spec = self.spec
        if not spec.tagged(item):
            tag = item.get(spec.table.type_attribute)
            raise ItemDecodeError(
                f"the item at {spec.describe_key(item)} is a "
                f"{tag.get('S') if tag else 'untyped item'!r}, not a {spec.type_name!r} "
                "(two entity types share this key; see `singletable lint`)",
                key=spec.describe_key(item),
                raw=item,
            )
        if spec.expires and spec.expired(item, ctx.now_epoch()):
            return None
        result: E = self.decode_item(item)
        return result

    def __call__(  # type: ignore[override]
        self, method: Callable[Concatenate[Any, P], E | None]
    ) -> DeclaredPattern[P, E | None]:
        """Declare the pattern as a method signature (its keywords typed); the body never
        runs."""
        return DeclaredPattern(self, method)

    # -- binding --

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncRunner, owner: type) -> AsyncBoundGet[E]: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> BoundGet[E]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return (AsyncBoundGet if is_async(instance) else BoundGet)(self, instance)
