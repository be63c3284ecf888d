"""Scatter patterns: ``query(E, index=..., scatter="field")`` and
``collection(A, B, ..., index=..., scatter="field")``.

The field is a ``Shard(n)`` field (hashed from ``of=`` or drawn at random) or one with a finite
domain (``Enum``, ``Literal``), in the index's partition key or first in its sort key. A call
sends one Query per value at once and merges them (:mod:`.fanout` holds the axis, the merge and
the composite cursor; these classes bind it to a query or a collection).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._flows import Flow
from .._keys import SortCondition
from .._paging import Collection, Page
from ..errors import ModelDefinitionError
from .base import ExplainRow
from .collection import CollectionPattern
from .fanout import Fanout, scatter_axis, value_prefix_text
from .keyed import KeyedPattern, KeyPlan, Order
from .keywords import QueryCall
from .query import QueryPattern

if TYPE_CHECKING:
    from .._context import PlanContext
    from .._entity import Entity
    from .._table import Table


def _bind_fanout(
    pattern: KeyedPattern, repository: type, max_concurrency: int | None, templates: list[Any]
) -> Fanout:
    """Check a scatter pattern's options and build its fan-out (after the pattern's own
    binding)."""
    where = f"{repository.__qualname__}.{pattern.name}"
    if max_concurrency is not None and (type(max_concurrency) is not int or max_concurrency < 1):
        raise ModelDefinitionError(f"{where}: max_concurrency must be a positive int")
    assert pattern.scatter is not None
    table_keys = sorted(pattern.table_key_attributes)
    axis = scatter_axis(pattern.scatter, pattern.specs, pattern.plan, templates, table_keys, where)
    return Fanout(pattern, axis, max_concurrency)


class Scattered(KeyedPattern):
    """What a scatter query and a scatter collection share: the fan-out, its operation
    (``Query x{n}``), its requests and its explain row."""

    fanout: Fanout

    @property
    def operation(self) -> str:  # type: ignore[override]
        return f"Query x{len(self.fanout.axis.values)}"

    def params(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """A scatter pattern's requests: ``{"Queries": [one Query per value]}``."""
        return {"Queries": [plan.params for plan in self.fanout.plans(ctx, kwargs)]}

    def explain(self) -> ExplainRow:
        row = super().explain()
        notes = ", ".join(n for n in (row.notes, f"scatter over {self.fanout.axis.field}") if n)
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


class ScatterQueryPattern(Scattered, QueryPattern[Any]):
    """``query(E, index=..., scatter="field")``: one Query per value of the field, merged."""

    def __init__(
        self, entity: type[Any], *, scatter: str, max_concurrency: int | None = None, **options: Any
    ) -> None:
        super().__init__(entity, **options)
        self.scatter = scatter
        self.max_concurrency = max_concurrency

    def bind(self, repository: type, table: Table) -> None:
        super().bind(repository, table)
        if self.one_only or self.keys_only or self.hydrate:
            raise ModelDefinitionError(
                f"{repository.__qualname__}.{self.name}: scatter= returns pages of entities; "
                "drop one=/keys_only=/hydrate="
            )
        templates = [self.plan.sk if isinstance(self.plan, KeyPlan) else None]
        self.fanout = _bind_fanout(self, repository, self.max_concurrency, templates)

    def key_condition_text(self) -> str:
        plan = self.plan
        if not self.fanout.axis.in_sort or not isinstance(plan, KeyPlan) or plan.sk is None:
            return super().key_condition_text()
        keys, sk = plan.keys, plan.sk
        text = f"{keys.pk} = {plan.pk.text} AND begins_with({keys.sk}, {value_prefix_text(sk)})"
        if len(sk.fields) > 1:
            text += f" [+ {keys.sk} on {', '.join(sk.fields[1:])}]"
        return text

    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Page[Any]]:
        """One merged page: a Query per value not yet exhausted, sent at once."""
        items, cursor, capacity = yield from self.fanout.page(ctx, kwargs)
        return Page(items, cursor, capacity)

    def count(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[int]:
        """The number of matching live items over every value (``Select=COUNT``)."""
        return (yield from self.fanout.count(ctx, kwargs, self.count_request))


class ScatterCollectionPattern(Scattered, CollectionPattern):
    """``collection(A, B, ..., index=..., scatter="field")``: one Query per value of the
    field, over the partitions the entity types share, merged."""

    def __init__(
        self,
        *entities: type[Entity],
        index: str | None = None,
        order: Order = "asc",
        scatter: str,
        max_concurrency: int | None = None,
    ) -> None:
        super().__init__(*entities, index=index, order=order)
        self.scatter = scatter
        self.max_concurrency = max_concurrency

    def bind(self, repository: type, table: Table) -> None:
        super().bind(repository, table)
        templates = [p.sk if isinstance(p, KeyPlan) else None for p in self.sk_plans]
        self.fanout = _bind_fanout(self, repository, self.max_concurrency, templates)
        if not self.fanout.axis.in_sort or not isinstance(self.plan, KeyPlan):
            return
        for template in templates:
            if template is not None and len(template.fields) == 1 and not template.tail:
                raise ModelDefinitionError(
                    f"{repository.__qualname__}.{self.name}: scatter={self.scatter!r} ends sort "
                    f"key {template.text!r}; in a collection every sort key must go on after it "
                    f"({template.text}#...), so one prefix per value selects every type's items"
                )

    def key_condition(self, call: QueryCall) -> tuple[str, SortCondition | None]:
        """The partition, and on a sort-key scatter the prefix of the call's value: the
        templates' common head, the value's segment and the delimiter."""
        pk_text, sort = super().key_condition(call)
        axis = self.fanout.axis
        if axis.in_sort:
            template = self.sk_plans[0].sk  # type: ignore[union-attr]
            assert template is not None
            head = template.placeholders[0].head
            value = template.render_value(axis.field, call.sk[axis.field])
            sort = SortCondition("begins_with", (head + value + template.delimiter,))
        return pk_text, sort

    def key_condition_text(self) -> str:
        plan = self.plan
        if not self.fanout.axis.in_sort or not isinstance(plan, KeyPlan):
            return super().key_condition_text()
        template = self.sk_plans[0].sk  # type: ignore[union-attr]
        assert template is not None
        prefix = f"{template.placeholders[0].head}{{{self.scatter}}}{template.delimiter}"
        return f"{plan.keys.pk} = {plan.pk.text} AND begins_with({plan.keys.sk}, {prefix})"

    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> Flow[Collection]:
        """One merged page of the collection: a Query per value not yet exhausted."""
        items, cursor, capacity = yield from self.fanout.page(ctx, kwargs)
        return Collection(items, cursor, capacity)
