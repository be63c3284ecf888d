"""The call signature of a bound pattern, as a type checker should see it.

One answer for the mypy plugin (:mod:`singletable.mypy`) and for ``singletable stubs``: read
from a pattern after its repository class was created, so it is the runtime's own
:class:`~singletable._patterns.keywords.CallKeywords` (every key kind that produces one is
covered), with each keyword's *shape* (the field's value, a ``(low, high)`` pair, a ``str``
prefix, ``limit``/``cursor``/``where``) and the entity field whose type it takes. Nothing
here imports a type checker.
"""

from __future__ import annotations

from typing import Any, Literal

from .._expressions import Between, Compare, Condition, Function, In, Join, Not, Param
from .._record import Record

Shape = Literal["value", "pair", "prefix", "values", "any", "limit", "cursor", "where"]
Kind = Literal["get", "one", "query", "collection", "scan"]
#: what a range lookup takes (the others take the field's value)
_LOOKUP_SHAPES: dict[str, Shape] = {"between": "pair", "begins_with": "prefix"}


class Keyword(Record):
    """One call keyword: its name, whether it is required, its shape and the field (of which
    entity) whose type it takes (None: no field, e.g. ``limit``)."""

    __slots__ = ("entity", "field", "name", "required", "shape")
    _fields = ("name", "required", "shape", "field", "entity")

    def __init__(
        self,
        name: str,
        required: bool,
        shape: Shape,
        field: str | None = None,
        entity: type[Any] | None = None,
    ) -> None:
        self.name = name
        self.required = required
        self.shape = shape
        self.field = field
        self.entity = entity


class CallSignature(Record):
    """A pattern's call: its kind, its keywords (required first, then in key order), the
    entities it reads (``o`` of a ``where`` callback is the first) and its result model (the
    entity, a projection, or None for a collection) and whether it returns key references."""

    __slots__ = ("entities", "keys_only", "keywords", "kind", "result")
    _fields = ("kind", "keywords", "entities", "result", "keys_only")

    def __init__(
        self,
        kind: Kind,
        keywords: tuple[Keyword, ...],
        entities: tuple[type[Any], ...],
        result: type[Any] | None,
        keys_only: bool = False,
    ) -> None:
        self.kind = kind
        self.keywords = keywords
        self.entities = entities
        self.result = result
        self.keys_only = keys_only


def call_signature(pattern: Any) -> CallSignature | None:
    """The signature of a pattern object (None when it is not bound yet or is of a kind this
    does not know: callers then keep the untyped ``**kwargs``)."""
    from .._patterns.collection import CollectionPattern
    from .._patterns.get import GetPattern
    from .._patterns.query import QueryPattern

    if isinstance(pattern, GetPattern):
        spec = getattr(pattern, "spec", None)
        if spec is None:
            return None
        keywords = tuple(Keyword(f, True, "value", f, spec.cls) for f in spec.key_arguments)
        return CallSignature("get", keywords, (spec.cls,), pattern.project or spec.cls)
    call_keywords = getattr(pattern, "call_keywords", None)
    specs = getattr(pattern, "specs", None)
    if call_keywords is None and getattr(pattern, "operation", None) == "Scan":
        return _scan_signature(pattern)
    if call_keywords is None or not specs:
        return None
    entities = tuple(spec.cls for spec in specs)
    if isinstance(pattern, CollectionPattern):
        kind: Kind = "collection"
        result = None
    elif isinstance(pattern, QueryPattern):
        kind = "one" if pattern.one_only else "query"
        result = pattern.project or entities[0]
    elif getattr(pattern, "operation", "") == "Scan":
        kind, result = "scan", getattr(pattern, "project", None) or entities[0]
    else:
        return None
    keywords = _keyed_keywords(call_keywords, entities, getattr(pattern, "where", None))
    return CallSignature(kind, keywords, entities, result, bool(getattr(pattern, "keys_only", 0)))


def _scan_signature(pattern: Any) -> CallSignature | None:
    """``scan(E, index=...)``: ``limit``, ``cursor`` and ``where`` only, a ``Page`` of E (or
    of its projection). A scan pattern that keeps :class:`CallKeywords` (filter parameters,
    say) takes the keyed path instead."""
    entity = getattr(pattern, "entity", None)
    if not isinstance(entity, type):
        return None
    keywords = (
        Keyword("limit", False, "limit"),
        Keyword("cursor", False, "cursor"),
        Keyword("where", False, "where"),
    )
    return CallSignature("scan", keywords, (entity,), getattr(pattern, "project", None) or entity)


def _owner(field: str, entities: tuple[type[Any], ...]) -> type[Any]:
    """The first entity declaring ``field`` (the one whose type a keyword takes)."""
    for entity in entities:
        if field in entity.model_fields or field in entity.model_computed_fields:
            return entity
    return entities[0]


def _keyed_keywords(
    keywords: Any, entities: tuple[type[Any], ...], where: Condition | None
) -> tuple[Keyword, ...]:
    """Partition fields (required), filter parameters (required), sort fields and range
    lookups (optional) in key order, then the options."""
    result = [Keyword(f, True, "value", f, _owner(f, entities)) for f in keywords.partition]
    params = _param_shapes(where) if where is not None else {}
    for name in keywords.params:
        shape, field = params.get(name, ("any", None))
        owner = _owner(field, entities) if field is not None else None
        result.append(Keyword(name, True, shape, field, owner))
    lookups_of: dict[str, list[tuple[str, str]]] = {}
    for name, (field, op) in keywords.lookups.items():
        lookups_of.setdefault(field, []).append((name, op))
    for field in keywords.sort:
        owner = _owner(field, entities)
        result.append(Keyword(field, False, "value", field, owner))
        for name, op in lookups_of.pop(field, []):
            result.append(Keyword(name, False, _LOOKUP_SHAPES.get(op, "value"), field, owner))
    for field, lookups in lookups_of.items():  # lookups on fields outside the sort key list
        for name, op in lookups:
            shape = _LOOKUP_SHAPES.get(op, "value")
            result.append(Keyword(name, False, shape, field, _owner(field, entities)))
    for option in keywords.options:
        result.append(Keyword(option, False, option if option in ("limit", "cursor") else "where"))
    return tuple(result)


def _param_shapes(condition: Condition) -> dict[str, tuple[Shape, str | None]]:
    """Each ``Param`` of a declared filter: the shape of its value and the top-level field it
    is compared with (None when the path is nested: any value)."""
    found: dict[str, tuple[Shape, str | None]] = {}
    stack: list[Condition] = [condition]
    while stack:
        node = stack.pop()
        if isinstance(node, (Join, Not)):
            stack.extend(node.parts if isinstance(node, Join) else (node.inner,))
            continue
        path = getattr(node, "path", "")
        field = path if path.isidentifier() else None
        if isinstance(node, Compare) and isinstance(node.value, Param):
            found[node.value.name] = ("value", field) if field else ("any", None)
        elif isinstance(node, Between):
            for value in (node.low, node.high):
                if isinstance(value, Param):
                    found[value.name] = ("value", field) if field else ("any", None)
        elif isinstance(node, Function) and isinstance(node.value, Param):
            shape: Shape = "prefix" if node.function == "begins_with" else "any"
            found[node.value.name] = (shape, None)
        elif isinstance(node, In) and isinstance(node.options, Param):
            found[node.options.name] = ("values", field) if field else ("any", None)
    return found
