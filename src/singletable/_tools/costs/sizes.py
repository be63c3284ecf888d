"""Item sizes for pricing: estimated from an entity's model, or measured from sample items.

**Estimated.** A sample entity is built from the field types, then written through
``EntitySpec.to_item`` exactly as a write stores it (key attributes, index keys, type tag,
``Shard`` fields, TTL number, stored datetime format included), and sized by DynamoDB's
formula. Each field takes a value as large as its type and constraints allow, or a documented
default where they set no bound:

* ``str``: ``max_length`` characters (ASCII), else ``DEFAULT_TEXT`` (16); ``bytes`` likewise;
* ``int``, ``float``, ``Decimal``: the bound of ``le``/``lt``/``ge``/``gt`` (``max_digits``
  digits for a ``Decimal``), else a number of ``DEFAULT_DIGITS`` (7) significant digits;
* ``bool`` and ``None``: one byte; an ``Enum`` or ``Literal``: its longest member;
* ``datetime``, ``date``, ``time``, ``UUID``: their stored text (fixed length);
* lists, sets, tuples and dicts: ``max_length`` elements, else ``DEFAULT_ELEMENTS`` (3);
  nested models: each of their fields so;
* an optional field is present (the larger case).

**Measured.** ``items=`` (wire-format items, as a Scan returns them): each entity is priced at the
largest sample item carrying one of its type tags; an entity with no sample is estimated.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
import uuid
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..._verbs.ops import with_shards
from ..._wire import Wire, item_size
from ...errors import SingleTableError

if TYPE_CHECKING:
    from ..._entity_spec import EntitySpec
    from ..._table import IndexKeys

DEFAULT_TEXT = 16
DEFAULT_DIGITS = 7
DEFAULT_ELEMENTS = 3
SAMPLE_TIME = datetime(2026, 6, 1, 12, 30, 45, 123456, tzinfo=timezone.utc)


def sample_value(
    annotation: Any, metadata: Iterable[Any] = (), *, other: bool = False, level: int = 0
) -> Any:
    """A value of ``annotation`` as large as its constraints allow (``other``: a different one
    of the same size, where the type has another: for pricing updates). ``level`` 1 and 2 are
    smaller values, for fields whose key format refuses the largest (``{n:03d}``)."""
    constraints = _constraints(metadata)
    if level:
        constraints["max_length"] = (
            (DEFAULT_ELEMENTS if level == 1 else 1)
            if not constraints.get("max_length")
            else min(constraints["max_length"], 8 if level == 1 else 1)
        )
        for bound in ("le", "lt", "ge", "gt"):
            constraints.pop(bound, None)
        constraints["max_digits"] = 3 if level == 1 else 1
        constraints["decimal_places"] = 0
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *extra = typing.get_args(annotation)
        return sample_value(inner, [*extra, *metadata], other=other)
    if origin in (typing.Union, types.UnionType):
        present = [a for a in typing.get_args(annotation) if a is not type(None)]
        return sample_value(present[0], metadata, other=other) if present else None
    if origin is typing.Literal:
        values = sorted(typing.get_args(annotation), key=lambda v: len(str(v)), reverse=True)
        return values[1 if other and len(values) > 1 else 0]
    if origin in (list, set, frozenset, tuple) or annotation in (list, set, frozenset, tuple):
        return _container(annotation, origin or annotation, constraints, other)
    if origin is dict or annotation is dict:
        args = typing.get_args(annotation)
        value_type = args[1] if len(args) == 2 else str
        count = constraints.get("max_length") or DEFAULT_ELEMENTS
        return {
            _text(DEFAULT_TEXT, n, other): sample_value(value_type, other=other)
            for n in range(int(count))
        }
    if isinstance(annotation, type):
        return _scalar(annotation, constraints, other)
    return _text(DEFAULT_TEXT, 0, other)  # Any, a TypeVar...: a default string


def _constraints(metadata: Iterable[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in metadata:
        for name in ("max_length", "le", "lt", "ge", "gt", "max_digits", "decimal_places"):
            value = getattr(item, name, None)
            if value is not None:
                found.setdefault(name, value)
    return found


def _text(length: int, n: int, other: bool) -> str:
    letter = "y" if other else "x"
    tail = str(n)
    return (letter * max(length - len(tail), 0) + tail)[-length:] if length else ""


def _container(annotation: Any, kind: Any, constraints: dict[str, Any], other: bool) -> Any:
    args = [a for a in typing.get_args(annotation) if a is not Ellipsis] or [str]
    count = int(constraints.get("max_length") or DEFAULT_ELEMENTS)
    if kind is tuple and len(args) > 1 and Ellipsis not in typing.get_args(annotation):
        return tuple(sample_value(a, other=other) for a in args)
    values = [sample_value(args[0], other=other) for _ in range(count)]
    if kind in (set, frozenset):
        values = [_distinct(v, n) for n, v in enumerate(values)]
        return kind(values)
    return tuple(values) if kind is tuple else values


def _distinct(value: Any, n: int) -> Any:
    if isinstance(value, str):
        return _text(len(value), n, value.startswith("y"))
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return value - n
    return value


def _scalar(cls: type, constraints: dict[str, Any], other: bool) -> Any:
    if issubclass(cls, enum.Enum):
        members = sorted(cls, key=lambda m: len(str(m.value)), reverse=True)
        return members[1 if other and len(members) > 1 else 0]
    if issubclass(cls, BaseModel):
        return cls.model_construct(**sample_fields(cls, other=other))
    if cls is bool:
        return not other
    if issubclass(cls, (int, float, Decimal)):
        return _number(cls, constraints, other)
    if issubclass(cls, str):
        return _text(int(constraints.get("max_length") or DEFAULT_TEXT), 0, other)
    if issubclass(cls, bytes):
        return (b"y" if other else b"x") * int(constraints.get("max_length") or DEFAULT_TEXT)
    if issubclass(cls, datetime):
        return SAMPLE_TIME + (timedelta(seconds=1) if other else timedelta())
    if issubclass(cls, date):
        return SAMPLE_TIME.date() + (timedelta(days=1) if other else timedelta())
    if issubclass(cls, time):
        return SAMPLE_TIME.time()
    if issubclass(cls, uuid.UUID):
        return uuid.UUID(int=(2 if other else 1) << 100)
    if issubclass(cls, timedelta):
        return timedelta(seconds=123456.789)
    return _text(DEFAULT_TEXT, 0, other)


def _number(cls: type, constraints: dict[str, Any], other: bool) -> Any:
    bound = next((constraints[k] for k in ("le", "lt", "ge", "gt") if k in constraints), None)
    if bound is not None and bound != 0:
        value = Decimal(str(bound))
    else:
        digits = int(constraints.get("max_digits") or DEFAULT_DIGITS)
        places = int(constraints.get("decimal_places") or (2 if cls is not int else 0))
        value = Decimal("9" * digits).scaleb(-min(places, digits))
    if other:
        value = value - 1
    if cls is int or issubclass(cls, int):
        return int(value)
    return float(value) if cls is float else value


def finite_domain(annotation: Any) -> list[Any]:
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return finite_domain(args[0])
    if origin is typing.Literal:
        return list(args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return list(annotation)
    if annotation is bool:
        return [True, False]
    present = [a for a in args if a is not type(None)]
    if len(present) == 1 and len(args) == 2:  # Optional[X]: X's domain, and None
        return [*finite_domain(present[0]), None] if finite_domain(present[0]) else [None]
    return []


def sample_fields(cls: type[BaseModel], *, other: bool = False) -> dict[str, Any]:
    return {
        name: sample_value(info.annotation, info.metadata, other=other)
        for name, info in cls.model_fields.items()
    }


def sample_item(spec: EntitySpec, changes: Mapping[str, Any] | None = None) -> dict[str, Wire]:
    """The item a write of a sample entity stores (``changes``: fields set otherwise)."""
    values = {**sample_entity_fields(spec), **(changes or {})}
    entity = with_shards(spec, spec.cls.model_construct(**values))
    return spec.to_item(entity)


@functools.cache
def field_levels(spec: EntitySpec) -> dict[str, int]:
    """How large each field's sample can be (0: largest, 2: smallest) while the entity's key
    formats still render: every field starts smallest, then each grows as far as it can."""
    levels = dict.fromkeys(spec.cls.model_fields, 2)
    for name in spec.cls.model_fields:
        for level in (0, 1):
            trial = {**levels, name: level}
            if _renders(spec, trial):
                levels[name] = level
                break
    return levels


def _renders(spec: EntitySpec, levels: Mapping[str, int]) -> bool:
    try:
        values = _values(spec, levels)
        spec.to_item(with_shards(spec, spec.cls.model_construct(**values)))
    except (SingleTableError, ValueError, TypeError, ArithmeticError):
        return False
    return True


def _values(spec: EntitySpec, levels: Mapping[str, int], *, other: bool = False) -> dict[str, Any]:
    return {
        name: sample_value(info.annotation, info.metadata, other=other, level=levels[name])
        for name, info in spec.cls.model_fields.items()
    }


def sample_entity_fields(spec: EntitySpec, *, other: bool = False) -> dict[str, Any]:
    """The sample values of an entity's fields, each as large as its key formats allow."""
    return _values(spec, field_levels(spec), other=other)


def representative_item(spec: EntitySpec) -> dict[str, Wire]:
    """The sample item in the most indexes (then the largest): the sample entity, and the same
    with each value of each finite-domain field (a sparse index's ``when`` hangs on one)."""
    candidates = [sample_item(spec)]
    for name, info in spec.cls.model_fields.items():
        for value in finite_domain(info.annotation):
            try:
                candidates.append(sample_item(spec, {name: value}))
            except (SingleTableError, ValueError, TypeError):
                continue  # a value the entity refuses
    table = spec.table

    def rank(item: dict[str, Wire]) -> tuple[int, int]:
        keys = [table.index_keys(name) for name in table.index_names]
        inside = sum(all(a in item for a in (k.pk, k.sk) if a) for k in keys)
        return inside, item_size(item)

    return max(candidates, key=rank)


class Sizes:
    """The representative stored item of each entity: measured from ``items`` where a sample
    carries the entity's type tag, estimated otherwise."""

    def __init__(self, specs: Iterable[EntitySpec], items: Iterable[Mapping[str, Wire]] = ()):
        self.items: dict[str, dict[str, Wire]] = {}
        self.measured: set[str] = set()
        specs = list(specs)
        by_tag = {tag: spec for spec in specs for tag in spec.type_tags}
        for item in items:
            tag = item.get(specs[0].table.type_attribute) if specs else None
            name = tag.get("S") if isinstance(tag, Mapping) else None
            spec = by_tag.get(name) if isinstance(name, str) else None
            if spec is None:
                continue
            known = self.items.get(spec.name)
            if spec.name not in self.measured or item_size(item) > item_size(known or {}):
                self.items[spec.name] = dict(item)
                self.measured.add(spec.name)
        for spec in specs:
            if spec.name not in self.items:
                self.items[spec.name] = representative_item(spec)

    def item(self, spec: EntitySpec) -> dict[str, Wire]:
        return self.items[spec.name]

    def size(self, spec: EntitySpec) -> int:
        return item_size(self.item(spec))


def index_entry(
    item: Mapping[str, Wire], keys: IndexKeys, table_keys: Iterable[str], include: Iterable[str]
) -> dict[str, Wire] | None:
    """What ``item`` stores in an index (None when it is not in it): every attribute for an
    ``ALL`` projection, else the table's and the index's keys and the included attributes."""
    key_attrs = [a for a in (keys.pk, keys.sk) if a]
    if not all(a in item for a in key_attrs):
        return None
    if keys.projection_type == "ALL":
        return dict(item)
    kept = {*table_keys, *key_attrs, *include}
    return {a: v for a, v in item.items() if a in kept}
