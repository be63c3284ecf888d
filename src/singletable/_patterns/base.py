"""What every access pattern shares: the explain row, the descriptor base, the typed
repositories it binds to, and the one loop that turns returned items into entities.

A pattern never sends anything. Bound to a repository (sync or async), its ``flow`` is handed
to the repository's ``run``, which sends each request and feeds the response back; see
:mod:`singletable._flows`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Concatenate,
    Generic,
    ParamSpec,
    Protocol,
    TypeVar,
    overload,
)

from typing_extensions import Self

from .. import _flows as flows
from .._context import PlanContext
from .._entity import spec_of
from .._entity_spec import EntitySpec
from .._flows import is_async
from .._projection import ProjectionPlan, is_projection
from .._record import FrozenRecord
from .._wire import ttl_passed
from ..errors import ModelDefinitionError, PatternArgumentError
from .bound import (
    AsyncBoundDeclared,
    AsyncBoundDeclaredCollection,
    AsyncBoundDeclaredQuery,
    AsyncBoundQuery,
    BoundDeclared,
    BoundDeclaredCollection,
    BoundDeclaredQuery,
    BoundQuery,
)

if TYPE_CHECKING:
    # (used in the quoted base classes below, which linters do not read)
    from .._paging import Collection, Page  # noqa: F401
    from .._table import Table

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


_FROM_OPERATION: Any = object()  # ExplainRow's default ``requests``: counted from the operation


def requests_of(operation: str) -> int:
    """The requests an operation as explain writes it stands for: one per ``+``-joined part,
    ``n`` for a part written ``Query x{n}`` (``Query+BatchGetItem`` is 2, ``Query x15`` 15)."""
    total = 0
    for part in operation.split("+"):
        times = part.partition(" x")[2]
        total += int(times) if times.isdigit() else 1
    return total


class ExplainRow(FrozenRecord):
    """One line of the access-pattern table: what a pattern sends.

    ``requests`` is the number of requests one call sends (one page, for a query): 1 for a
    ``GetItem`` or a ``Query``, 2 for ``Query+BatchGetItem``, ``n`` for ``Query x{n}``; None
    when it depends on the data (a propagation: a Query per page, an UpdateItem per copy it
    rewrites). Not given, it is counted from ``operation`` (:func:`requests_of`).
    """

    # Immutable (assignment raises AttributeError), equal by value, hashable.
    __slots__ = (
        "consistent",
        "entity_types",
        "filter",
        "index",
        "key_condition",
        "notes",
        "operation",
        "order",
        "pattern",
        "rcu",
        "requests",
        "wcu",
    )
    _fields = (
        "pattern",
        "operation",
        "index",
        "key_condition",
        "entity_types",
        "order",
        "filter",
        "consistent",
        "notes",
        "requests",
        "rcu",
        "wcu",
    )

    pattern: str
    operation: str
    index: str | None
    key_condition: str
    entity_types: tuple[str, ...]
    order: str
    filter: str | None
    consistent: bool
    notes: str
    requests: int | None
    rcu: float | None
    """Read units of one call (``explain(costs=True)``; None otherwise)."""
    wcu: Mapping[str, Mapping[str, int]] | None
    """Write units per verb, per ``"table"`` and index (``explain(costs=True)``)."""

    def __init__(
        self,
        pattern: str,
        operation: str,
        index: str | None,
        key_condition: str,
        entity_types: tuple[str, ...],
        order: str,
        filter: str | None = None,
        consistent: bool = False,
        notes: str = "",
        requests: int | None = _FROM_OPERATION,
        rcu: float | None = None,
        wcu: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "operation", operation)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "key_condition", key_condition)
        object.__setattr__(self, "entity_types", entity_types)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "filter", filter)
        object.__setattr__(self, "consistent", consistent)
        object.__setattr__(self, "notes", notes)
        if requests is _FROM_OPERATION:
            requests = requests_of(operation)
        object.__setattr__(self, "requests", requests)
        object.__setattr__(self, "rcu", rcu)
        object.__setattr__(self, "wcu", wcu)

    def with_costs(self, rcu: float, wcu: Mapping[str, Mapping[str, int]]) -> ExplainRow:
        """This row with its read and write units."""
        values = {name: getattr(self, name) for name in self._fields}
        return ExplainRow(**{**values, "rcu": rcu, "wcu": wcu})

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def as_dict(self) -> dict[str, Any]:
        """The row as plain data (``rcu``/``wcu`` only when priced)."""
        data = {name: getattr(self, name) for name in self._fields}
        data["entity_types"] = list(self.entity_types)
        if self.rcu is None:
            del data["rcu"], data["wcu"]
        else:
            data["wcu"] = {v: dict(units) for v, units in (self.wcu or {}).items()}
        return data


class SyncRunner(flows.SyncRunner, Protocol):
    """A sync repository, as a bound pattern uses it."""

    @property
    def context(self) -> PlanContext: ...


class AsyncRunner(flows.AsyncRunner, Protocol):
    """An async repository, as a bound pattern uses it."""

    @property
    def context(self) -> PlanContext: ...


class Pattern:
    """Base of access patterns: descriptors declared on a repository (or a plain class mixed
    into one), checked by ``bind`` when the repository class is created."""

    operation: str = "Query"
    name: str = "<unbound>"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def bind(self, repository: type, table: Table) -> None:
        """Definition-time checks against the repository's table."""
        raise NotImplementedError

    def explain(self) -> ExplainRow:
        raise NotImplementedError

    def keywords(self) -> tuple[set[str], set[str]]:
        """(required, accepted) call keywords, for checking declared signatures."""
        raise NotImplementedError

    def __call__(self, method: Callable[Concatenate[Any, P], R]) -> DeclaredPattern[P, R]:
        """Declare the pattern as a method signature (``@query(Order) def f(self, *, ...)``)
        so type checkers see its keywords; the method body is never run."""
        return DeclaredPattern(self, method)


def entity_spec(entity: Any, where: str) -> EntitySpec:
    try:
        return spec_of(entity)
    except ModelDefinitionError:
        raise ModelDefinitionError(
            f"{where}: {getattr(entity, '__qualname__', entity)!r} is not a concrete entity "
            "(an Entity subclass with table= and class Keys)"
        ) from None


def check_table(spec: EntitySpec, table: Table, where: str) -> None:
    if spec.table is not table and spec.table.name != table.name:
        raise ModelDefinitionError(
            f"{where}: {spec.name} lives on table {spec.table.name!r}, but the repository is "
            f"declared on {table.name!r}"
        )


class Decoder:
    """How a pattern turns returned items into results: by type tag (an entity, or the
    pattern's projection of it), expired items left out. Built once per pattern at bind time.

    Its loops are :meth:`EntitySpec.owns <singletable._entity.EntitySpec.owns>` for several
    entities at once, inlined for speed: the tag sets come from each spec's ``type_tags`` and
    ``expires``."""

    __slots__ = ("decoders", "expiring", "tag_attribute", "ttl_attribute")

    def __init__(
        self,
        specs: Sequence[EntitySpec],
        table: Table,
        decode: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> None:
        self.tag_attribute = table.type_attribute
        self.ttl_attribute = table.ttl_attribute
        self.decoders: dict[str, Callable[[Mapping[str, Any]], Any]] = {}
        expiring = set()
        for spec in specs:
            for tag in spec.type_tags:
                self.decoders.setdefault(tag, decode or spec.from_item)
                if spec.expires:
                    expiring.add(tag)
        self.expiring = frozenset(expiring)

    def pairs(
        self, items: Iterable[Mapping[str, Any]], ctx: PlanContext
    ) -> list[tuple[Mapping[str, Any], Any]]:
        """``(raw item, result)`` for every item of the pattern's types that has not expired,
        in item order."""
        now = ctx.now_epoch() if self.expiring else 0
        results = []
        for item in items:
            decode = self.decoder_of(item, now)
            if decode is not None:
                results.append((item, decode(item)))
        return results

    def decoder_of(
        self, item: Mapping[str, Any], now: int
    ) -> Callable[[Mapping[str, Any]], Any] | None:
        """How to decode ``item``, or None when it is another type's or has expired (the test
        :meth:`page` inlines, for speed)."""
        tag = item.get(self.tag_attribute)
        name = tag.get("S") if tag is not None else None
        decode = self.decoders.get(name) if name is not None else None
        if decode is None:
            return None
        if name in self.expiring and ttl_passed(item, self.ttl_attribute, now):  # type: ignore[arg-type]
            return None
        return decode

    def page(
        self, items: Iterable[Mapping[str, Any]], limit: int, ctx: PlanContext
    ) -> tuple[list[Any], Mapping[str, Any] | None, bool]:
        """``(entities, last_raw, more)``: at most ``limit`` entities in item order, the raw item
        of the last one, and whether a further matching item was seen (so a page asked for
        ``limit + 1`` knows there is more). Items of other types (guard items, other entities
        in the key range) and expired items are skipped."""
        tag_attr = self.tag_attribute
        decoders = self.decoders
        expiring = self.expiring
        ttl_attr = self.ttl_attribute
        now = ctx.now_epoch() if expiring else 0
        entities: list[Any] = []
        last_raw: Mapping[str, Any] | None = None
        for item in items:
            tag = item.get(tag_attr)
            if tag is None:
                continue
            name = tag.get("S")
            decode = decoders.get(name)
            if decode is None:
                continue  # another entity type in the same key range
            if name in expiring and ttl_passed(item, ttl_attr, now):  # type: ignore[arg-type]
                continue
            if len(entities) == limit:
                return entities, last_raw, True
            entities.append(decode(item))
            last_raw = item
        return entities, last_raw, False


class Paged(Generic[T]):
    """A pattern that reads pages of ``T`` (a query, a scatter, a sparse-index scan): its
    ``.first()`` and its typed binding (``repo.p`` is a :class:`BoundQuery` /
    :class:`AsyncBoundQuery`: call, ``.pages()``, ``.all()``, ``.first()``, ``.count()``)."""

    name: str

    def params(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The exact request(s) of one page (no I/O)."""
        raise NotImplementedError

    def page(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> flows.Flow[Page[T]]:
        """One page's flow."""
        raise NotImplementedError

    def count(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> flows.Flow[int]:
        """The number of matching items (``Select=COUNT``, every page)."""
        raise NotImplementedError

    def first(
        self, ctx: PlanContext, kwargs: Mapping[str, Any], max_pages: int
    ) -> flows.Flow[T | None]:
        """The first item, paging past empty pages (filters, expired items), at most
        ``max_pages`` pages."""
        kwargs = {"limit": 1, **kwargs}
        for _ in range(max_pages):
            found = yield from self.page(ctx, kwargs)
            if found.items:
                return found.items[0]
            if found.cursor is None:
                return None
            kwargs = {**kwargs, "cursor": found.cursor}
        return None

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncRunner, owner: type) -> AsyncBoundQuery[T]: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> BoundQuery[T]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return (AsyncBoundQuery if is_async(instance) else BoundQuery)(self, instance)


def count_items(operation: str, params: dict[str, Any], pattern: str) -> flows.Flow[int]:
    """The matching items of a Query or Scan request (its filter decides which), counted with
    ``Select=COUNT`` over every page."""
    params.pop("Limit", None)
    params["Select"] = "COUNT"
    total = 0
    while True:
        response = yield flows.Send(operation, dict(params), pattern)
        total += int(response.get("Count", 0))
        last = response.get("LastEvaluatedKey")
        if last is None:
            return total
        params["ExclusiveStartKey"] = last


def pattern_argument_error(
    pattern: str,
    unknown: Iterable[str],
    accepted: Sequence[str],
    *,
    known: Iterable[str] = (),
    reasons: Mapping[str, str] | None = None,
) -> PatternArgumentError:
    """The error for call keywords a pattern does not take (built only when raising).

    ``accepted`` is what the message lists (the keywords that make sense), ``known`` adds those
    the pattern understands but refuses in some positions (near-miss suggestions come from
    both); ``reasons`` explains a keyword better than a suggestion can.
    """
    import difflib  # error path only: not an import-time cost

    names = sorted(unknown)
    candidates = sorted({*accepted, *known})
    notes = []
    for name in names:
        reason = (reasons or {}).get(name)
        if reason is None:
            close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
            reason = f"did you mean {close[0]!r}?" if close else None
        notes.append(f"{name!r} ({reason})" if reason else repr(name))
    what = "an unknown keyword" if len(names) == 1 else "unknown keywords"
    takes = ", ".join(accepted) if accepted else "no keywords"
    return PatternArgumentError(
        f"{pattern} got {what} {', '.join(notes)}; it accepts {takes}",
        key=names[0],
        pattern=pattern,
        accepted=accepted,
    )


class DeclaredPattern(Generic[P, R]):
    """A pattern declared as a method signature, so type checkers check its keywords."""

    def __init__(self, pattern: Pattern, method: Callable[..., Any]) -> None:
        self.pattern = pattern
        self.method = method
        self.signature = inspect.signature(method)
        self.__doc__ = method.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.pattern.__set_name__(owner, name)

    @property
    def name(self) -> str:
        return self.pattern.name

    def bind(self, repository: type, table: Table) -> None:
        self.pattern.bind(repository, table)
        where = f"{repository.__qualname__}.{self.name}"
        params = list(self.signature.parameters.values())[1:]  # after self
        required, accepted = self.pattern.keywords()
        names = set()
        for param in params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ModelDefinitionError(
                    f"{where}: declare each keyword explicitly (no *args/**kwargs)"
                )
            if param.name not in accepted:
                raise ModelDefinitionError(
                    f"{where}: parameter {param.name!r} is not a key field, range lookup or "
                    f"call keyword of this pattern (accepted: {', '.join(sorted(accepted))})"
                )
            names.add(param.name)
        missing = required - names
        if missing:
            raise ModelDefinitionError(
                f"{where}: the signature lacks {', '.join(sorted(missing))}, which the key "
                "templates need"
            )

    def explain(self) -> ExplainRow:
        return self.pattern.explain()

    def argument_error(self, kwargs: Mapping[str, Any], exc: TypeError) -> PatternArgumentError:
        """Python's binding error as a pattern-argument error naming the pattern."""
        accepted = list(self.signature.parameters)[1:]  # after self
        unknown = kwargs.keys() - set(accepted)
        if unknown:
            return pattern_argument_error(self.name, unknown, accepted)
        return PatternArgumentError(
            f"{self.name}: {exc}; it accepts {', '.join(accepted)}",
            pattern=self.name,
            accepted=accepted,
        )

    def keywords(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = self.signature.bind(None, *args, **kwargs)
        except TypeError as exc:
            raise self.argument_error(kwargs, exc) from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(self.signature.parameters)))
        return {k: v for k, v in arguments.items() if v is not None}

    #: the bound forms (sync, async) of this kind of declared pattern
    bound_forms: ClassVar[tuple[type[BoundDeclared[Any, Any]], type[BoundDeclared[Any, Any]]]] = (
        BoundDeclared,
        AsyncBoundDeclared,
    )

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncRunner, owner: type) -> AsyncBoundDeclared[P, R]: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> BoundDeclared[P, R]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        inner = self.pattern.__get__(instance, owner)  # type: ignore[attr-defined]
        return self.bound_forms[is_async(instance)](self, inner)


class DeclaredQuery(DeclaredPattern[P, "Page[T]"], Generic[P, T]):
    """A query declared as a method signature: ``.pages/.all/.first/.count`` typed too."""

    bound_forms = (BoundDeclaredQuery, AsyncBoundDeclaredQuery)

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncRunner, owner: type) -> AsyncBoundDeclaredQuery[P, T]: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> BoundDeclaredQuery[P, T]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        return super().__get__(instance, owner)


class DeclaredCollection(DeclaredPattern[P, "Collection"]):
    """A collection declared as a method signature."""

    bound_forms = (BoundDeclaredCollection, AsyncBoundDeclaredCollection)

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: AsyncRunner, owner: type) -> AsyncBoundDeclaredCollection[P]: ...
    @overload
    def __get__(self, instance: SyncRunner, owner: type) -> BoundDeclaredCollection[P]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        return super().__get__(instance, owner)


def projection_of(model: type[Any] | None, spec: EntitySpec, where: str) -> ProjectionPlan | None:
    """The plan of a pattern's ``project=`` model (None without one); refuses anything that is
    not a projection of ``spec``'s entity, naming it."""
    if model is None:
        return None
    if not is_projection(model) or not isinstance(model, type):
        raise ModelDefinitionError(
            f"{where}: project= takes a Projection[{spec.name}] subclass, not {model!r}"
        )
    try:
        return ProjectionPlan(model, spec)
    except ModelDefinitionError as exc:
        raise ModelDefinitionError(f"{where}: {exc.args[0]}") from None
