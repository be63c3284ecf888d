"""``propagate(Source, to=pattern, fields={...})``: denormalised copies kept in sync.

```python
class Shop(Repository, table=shop):
    customer_orders    = query(Order, order="desc")
    customer_name_sync = propagate(Customer, to=customer_orders, fields={"name": "customer_name"})

report = repo.customer_name_sync(old_customer, new_customer)   # PropagationReport
router.on(Customer, "MODIFY")(repo.customer_name_sync.on_event)
```

A call compares the mapped fields of ``old`` and ``new``: none changed, nothing is sent.
Otherwise it pages through ``to`` with the call keywords taken from ``new`` and rewrites, on
each target, the copies that still hold the old value: a SET of those fields, conditioned on
them still holding it (so a redelivered or older event never overwrites a newer copy), through
the repository's ordinary instance update (derived keys and sparse indexes follow). A target
whose update fails on another condition (a concurrent write, its version) is read again and
retried with what is stored now.

The pattern reads (the ``to`` query's flow) and writes (the repository's
:class:`~singletable._verbs.planner.WritePlanner`, which the bound pattern takes from the
repository it is read from), so this module imports nothing from :mod:`singletable._verbs`.
"""

from __future__ import annotations

import typing
from collections.abc import Coroutine, Mapping
from types import UnionType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, Union, overload

from typing_extensions import Self

from .._entity import Entity
from .._entity_spec import EntitySpec
from .._expressions import Attr, Condition, all_of
from .._flows import Flow, is_async
from .._record import FrozenRecord
from ..errors import ConditionFailed, InvalidRequestError, ModelDefinitionError
from .base import AsyncRunner as _AsyncRunner
from .base import DeclaredPattern, ExplainRow, Pattern, check_table, entity_spec
from .base import SyncRunner as _SyncRunner
from .query import QueryPattern

if TYPE_CHECKING:
    from .._context import PlanContext
    from .._table import Table
    from .._verbs.planner import WritePlanner
    from ..streams import Modified

S = TypeVar("S", bound=Entity)

#: Attempts at one target whose update keeps failing on something other than its copies (a
#: concurrent write changed its version or a field its keys derive from).
ATTEMPTS = 5


class PropagationReport(FrozenRecord):
    """What one propagation did: ``matched`` items the ``to`` pattern returned, ``updated``
    those whose stale copies were rewritten, ``skipped`` the rest (their copies already held
    the new value, or a newer write had changed them). ``matched == updated + skipped``."""

    __slots__ = ("matched", "skipped", "updated")
    _fields = ("matched", "updated", "skipped")

    matched: int
    updated: int
    skipped: int

    def __init__(self, matched: int = 0, updated: int = 0, skipped: int = 0) -> None:
        object.__setattr__(self, "matched", matched)
        object.__setattr__(self, "updated", updated)
        object.__setattr__(self, "skipped", skipped)


class SyncWriter(_SyncRunner, Protocol):
    """A sync repository, as a propagation uses it: runs flows, has a write planner."""

    @property
    def planner(self) -> WritePlanner: ...


class AsyncWriter(_AsyncRunner, Protocol):
    """An async repository, as a propagation uses it."""

    @property
    def planner(self) -> WritePlanner: ...


class PropagatePattern(Pattern, Generic[S]):
    """``propagate(Source, to=pattern, fields={source_field: target_field})``."""

    operation = "Query+UpdateItem"

    def __init__(self, source: type[S], *, to: Any, fields: Mapping[str, str]) -> None:
        self.source = source
        self.to_declared = to
        self.fields = dict(fields) if isinstance(fields, Mapping) else fields

    # -- definition-time checks --

    def bind(self, repository: type, table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        self.spec = entity_spec(self.source, where)
        check_table(self.spec, table, where)
        self.to = to = self._target_pattern(repository, table, where)
        self.target = target = to.specs[0]
        if not isinstance(self.fields, Mapping) or not self.fields:
            raise ModelDefinitionError(
                f"{where}: fields= maps source fields to the target fields holding their copies, "
                'e.g. fields={"name": "customer_name"}'
            )
        source_fields = self.spec.cls.model_fields
        required, _ = to.keywords()
        for name in sorted(required):
            if name not in source_fields:
                raise ModelDefinitionError(
                    f"{where}: pattern {to.name} needs the call keyword {name!r}, which is not a "
                    f"field of {self.spec.name} (propagate takes every keyword of the pattern "
                    "from the source entity)"
                )
            if name in self.fields:
                raise ModelDefinitionError(
                    f"{where}: pattern {to.name} finds the copies by {name!r}, the very field "
                    "this propagation changes (the new value would find no stale copy)"
                )
        seen: dict[str, str] = {}
        for source_field, target_field in self.fields.items():
            self._check_field(where, source_field, target_field, target)
            if target_field in seen:
                raise ModelDefinitionError(
                    f"{where}: {target.name}.{target_field} receives both "
                    f"{self.spec.name}.{seen[target_field]} and {self.spec.name}.{source_field}"
                )
            seen[target_field] = source_field
        self.keyword_fields: tuple[str, ...] = tuple(sorted(required))

    def _target_pattern(self, repository: type, table: Table, where: str) -> QueryPattern[Any]:
        declared = self.to_declared
        pattern = declared.pattern if isinstance(declared, DeclaredPattern) else declared
        if not isinstance(pattern, QueryPattern) or pattern.one_only or pattern.keys_only:
            raise ModelDefinitionError(
                f"{where}: to= takes a query(...) pattern returning entities (not one=True, not "
                f"keys_only=True), not {declared!r}"
            )
        declared_here = any(
            value is declared or value is pattern
            for klass in repository.__mro__
            for value in vars(klass).values()
        )
        if not declared_here:
            raise ModelDefinitionError(
                f"{where}: to= must be a pattern declared on {repository.__qualname__} "
                "(e.g. customer_orders = query(Order), then to=customer_orders)"
            )
        if getattr(pattern, "plan", None) is None:
            pattern.bind(repository, table)  # declared after this one: bind it now (idempotent)
        return pattern

    def _check_field(
        self, where: str, source_field: str, target_field: str, target: EntitySpec
    ) -> None:
        source = self.spec
        source_info = source.cls.model_fields.get(source_field)
        if source_info is None:
            raise ModelDefinitionError(
                f"{where}: {source.name} has no field {source_field!r} to propagate"
            )
        target_info = target.cls.model_fields.get(target_field)
        if target_info is None:
            raise ModelDefinitionError(
                f"{where}: {target.name} has no field {target_field!r} to hold the copy of "
                f"{source.name}.{source_field}"
            )
        if target_field in target.primary_fields:
            raise ModelDefinitionError(
                f"{where}: {target.name}.{target_field} is part of the primary key, which an "
                "update cannot change in place; copy into a non-key field"
            )
        if target_field in (target.version_field, target.created_field, target.updated_field):
            raise ModelDefinitionError(
                f"{where}: {target.name}.{target_field} is maintained by singletable and "
                "cannot hold a copy"
            )
        if not compatible(source_info.annotation, target_info.annotation):
            raise ModelDefinitionError(
                f"{where}: {target.name}.{target_field} ({_show(target_info.annotation)}) "
                f"cannot hold {source.name}.{source_field} ({_show(source_info.annotation)})"
            )

    def keywords(self) -> tuple[set[str], set[str]]:
        return set(), set()

    def explain(self) -> ExplainRow:
        to = self.to
        copies = ", ".join(f"{s} -> {self.target.name}.{t}" for s, t in self.fields.items())
        return ExplainRow(
            self.name,
            self.operation,
            to.index,
            to.key_condition_text(),
            (self.target.type_name,),
            to.order,
            notes=f"propagates {self.spec.name} ({copies}) through {to.name}",
            requests=None,  # a Query per page, an UpdateItem per copy rewritten
        )

    @property
    def plan(self) -> Any:
        """The key plan of the read (``to``'s): a propagation reads with a keyed Query."""
        return self.to.plan

    # -- the flow --

    def changes(self, old: Any, new: Any) -> list[tuple[str, Any, Any]]:
        """``(target field, old value, new value)`` for each mapped field that changed."""
        cls = self.spec.cls
        for what, value in (("old", old), ("new", new)):
            if not isinstance(value, cls):
                raise InvalidRequestError(
                    f"{self.name}({what}=...) takes a {self.spec.name}, not "
                    f"{type(value).__qualname__}"
                )
        changed = []
        for source_field, target_field in self.fields.items():
            before, after = getattr(old, source_field), getattr(new, source_field)
            if before != after:
                changed.append((target_field, before, after))
        return changed

    def flow(self, ctx: PlanContext, planner: WritePlanner, old: Any, new: Any) -> Flow[Any]:
        """Rewrite every stale copy; return the :class:`PropagationReport`."""
        changed = self.changes(old, new)
        if not changed:
            return PropagationReport()
        keywords: dict[str, Any] = {name: getattr(new, name) for name in self.keyword_fields}
        matched = updated = 0
        while True:
            page = yield from self.to.page(ctx, keywords)
            for target in page.items:
                matched += 1
                done = yield from self._sync(planner, target, changed)
                updated += done
            if page.cursor is None:
                break
            keywords = {**keywords, "cursor": page.cursor}
        return PropagationReport(matched, updated, matched - updated)

    def _sync(
        self, planner: WritePlanner, target: Any, changed: list[tuple[str, Any, Any]]
    ) -> Flow[bool]:
        """Rewrite ``target``'s copies that still hold the old values (True), or leave it
        (False: no copy is stale any more, or the item is gone)."""
        spec = self.target
        failure: ConditionFailed | None = None
        for attempt in range(ATTEMPTS + 1):
            stale = {
                field: after for field, before, after in changed if getattr(target, field) == before
            }
            if not stale:
                return False
            if attempt == ATTEMPTS:
                break
            held: list[Condition | None] = []
            for field, before, _after in changed:
                if field in stale:
                    stored = Attr(spec.attr_names[field])
                    held.append(stored.not_exists() if before is None else stored.eq(before))
            try:
                yield from planner.update(target, {**stale, "condition": all_of(held)})
            except ConditionFailed as error:  # NotFound and VersionConflict included
                failure = error
                current = error.item
                if current is None:  # gone, or not returned with the failure (dynalite)
                    key = spec.primary_key(spec.key_values(target))
                    current = yield from planner.read_live(spec, key)
                if current is None:
                    return False  # deleted (or expired) since the page was read
                target = current
                continue
            return True
        assert failure is not None
        raise failure

    # -- binding --

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncWriter, owner: type) -> AsyncBoundPropagate[S]: ...
    @overload
    def __get__(self, instance: SyncWriter, owner: type) -> BoundPropagate[S]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return (AsyncBoundPropagate if is_async(instance) else BoundPropagate)(self, instance)


def event_images(pattern: PropagatePattern[Any], event: Any) -> tuple[Any, Any]:
    """``(old, new)`` of a ``Modified`` stream event, refused when it is another event or its
    view carries no old or no new image."""
    if getattr(event, "event_name", None) != "MODIFY":
        raise InvalidRequestError(
            f"{pattern.name}.on_event takes a Modified[{pattern.spec.name}] stream event, not "
            f"{type(event).__qualname__} (register it with router.on({pattern.spec.name}, "
            '"MODIFY"))'
        )
    if event.old is None or event.new is None:
        raise InvalidRequestError(
            f"{pattern.name}.on_event needs both images of the change: the table's stream must "
            'use the view type "NEW_AND_OLD_IMAGES"'
        )
    return event.old, event.new


class BoundPropagate(Generic[S]):
    """A propagation on a sync repository: ``repo.x(old, new)`` or ``repo.x.on_event(event)``."""

    __slots__ = ("pattern", "repo")

    def __init__(self, pattern: PropagatePattern[S], repo: SyncWriter) -> None:
        self.pattern = pattern
        self.repo = repo

    def __call__(self, old: S, new: S) -> PropagationReport:
        """Rewrite the stale copies of ``new``'s mapped fields (no request when none changed)."""
        flow = self.pattern.flow(self.repo.context, self.repo.planner, old, new)
        report: PropagationReport = self.repo.run(flow)
        return report

    def on_event(self, event: Modified[S]) -> PropagationReport:
        """The propagation of a stream's ``Modified[Source]`` event (a router handler)."""
        old, new = event_images(self.pattern, event)
        return self(old, new)


class AsyncBoundPropagate(Generic[S]):
    """A propagation on an async repository: ``await repo.x(old, new)``."""

    __slots__ = ("pattern", "repo")

    def __init__(self, pattern: PropagatePattern[S], repo: AsyncWriter) -> None:
        self.pattern = pattern
        self.repo = repo

    def __call__(self, old: S, new: S) -> Coroutine[Any, Any, PropagationReport]:
        """Rewrite the stale copies of ``new``'s mapped fields (no request when none changed)."""
        flow = self.pattern.flow(self.repo.context, self.repo.planner, old, new)
        return self.repo.run(flow)

    def on_event(self, event: Modified[S]) -> Coroutine[Any, Any, PropagationReport]:
        """The propagation of a stream's ``Modified[Source]`` event (an async router handler:
        ``await router.handle_async(lambda_event)``)."""
        old, new = event_images(self.pattern, event)
        return self(old, new)


# -- the factory -------------------------------------------------------------------------------


def propagate(source: type[S], *, to: Any, fields: Mapping[str, str]) -> PropagatePattern[S]:
    """Keep copies of ``source``'s fields on the entities ``to`` returns in sync:
    ``fields={source_field: target_field}``. Declared on a repository; the call keywords
    ``to`` needs come from the source entity."""
    return PropagatePattern(source, to=to, fields=fields)


# -- annotations -------------------------------------------------------------------------------


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """``(annotation without Annotated and Optional, whether it admits None)``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (Union, UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(members) != len(typing.get_args(annotation))
        if len(members) == 1:
            inner, inner_optional = _unwrap(members[0])
            return inner, optional or inner_optional
        return Union[tuple(members)] if optional else annotation, optional  # noqa: UP007
    if annotation is type(None):
        return annotation, True
    return annotation, False


def compatible(source: Any, target: Any) -> bool:
    """Whether a field annotated ``target`` can hold every value of one annotated ``source``:
    the same type (or a subclass of it), and None only where the target admits None."""
    source_type, source_optional = _unwrap(source)
    target_type, target_optional = _unwrap(target)
    if source_optional and not target_optional:
        return False
    if source_type == target_type or target_type is Any:
        return True
    return (
        isinstance(source_type, type)
        and isinstance(target_type, type)
        and issubclass(source_type, target_type)
        and not (source_type is bool and target_type is int)
    )


def _show(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None)
    return (
        text
        if isinstance(text, str) and typing.get_origin(annotation) is None
        else repr(annotation)
    )


__all__ = [
    "AsyncBoundPropagate",
    "BoundPropagate",
    "PropagatePattern",
    "PropagationReport",
    "compatible",
    "propagate",
]
