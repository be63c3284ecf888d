"""The compiled spec of an entity class: everything singletable derives from it at class
creation (templates per index, codec, markers) and every question asked of a stored item
(keys, ownership, encoding and decoding).

Everything derived from an entity (base and index keys, sparse-index membership, the type tag,
the TTL number) comes from :meth:`EntitySpec.to_item`, one pure function of a complete,
validated entity.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from . import _entity_checks as checks
from ._codec import ModelCodec, encode_value, wrap_encode_error
from ._codegen import generate_decode, generate_to_item
from ._document_paths import is_document_path, path_value
from ._indexes import IndexSpec, NativeIndexSpec
from ._item_key import Key
from ._keys import PARTITION_KEY_BYTES, SORT_KEY_BYTES, KeyTemplate
from ._table import Table
from ._wire import (
    MAX_ITEM_BYTES,
    NumberRangeError,
    Wire,
    bytes_of,
    check_item_size,
    decode_value,
    ttl_passed,
    value_size,
)
from .errors import ItemDecodeError, ItemEncodeError, KeyTemplateError, ModelDefinitionError

if TYPE_CHECKING:
    # Imported where used: pydantic.type_adapter costs ~0.5 ms to import, and only call-time
    # values of another type than the field's (and ``when=`` dicts) need it.
    from pydantic import TypeAdapter

    from ._entity import Entity
    from ._expressions import Condition


class EntitySpec:
    """Everything singletable compiled from one entity class at class creation."""

    # No __slots__: the functools.cached_property values below live in the instance __dict__.

    def __init__(
        self,
        cls: type[Entity],
        table: Table,
        type_name: str,
        explicit_type: bool,
        base: IndexSpec,
        indexes: dict[str, IndexSpec],
        codec: ModelCodec,
        version_field: str | None = None,
        created_field: str | None = None,
        updated_field: str | None = None,
        unique_fields: tuple[str, ...] = (),
        ttl_field: str | None = None,
        computed_in_keys: tuple[str, ...] = (),
        attr_names: dict[str, str] | None = None,
        shards: tuple[checks.ShardPlan, ...] = (),
        former_types: tuple[str, ...] = (),
        native: dict[str, NativeIndexSpec] | None = None,
    ) -> None:
        self.cls = cls
        self.table = table
        self.type_name = type_name
        self.explicit_type = explicit_type
        self.base = base
        self.indexes = indexes
        self.codec = codec
        self.version_field = version_field
        self.created_field = created_field
        self.updated_field = updated_field
        self.unique_fields = unique_fields
        self.ttl_field = ttl_field
        self.computed_in_keys = computed_in_keys
        self.attr_names: dict[str, str] = {} if attr_names is None else attr_names
        self.shards = shards
        self.former_types = former_types
        self.native: dict[str, NativeIndexSpec] = {} if native is None else native

    # -- names --

    @property
    def name(self) -> str:
        return self.cls.__qualname__

    @functools.cached_property
    def hashed_shards(self) -> tuple[checks.ShardPlan, ...]:
        """The ``Shard(n, of=...)`` fields: derived from ``of`` on every write."""
        return tuple(plan for plan in self.shards if not plan.random)

    @functools.cached_property
    def random_shards(self) -> tuple[checks.ShardPlan, ...]:
        """The random ``Shard(n)`` fields: drawn by create, put and batch_put, then kept."""
        return tuple(plan for plan in self.shards if plan.random)

    def derived_shards(self, values: Any) -> dict[str, int]:
        """The ``Shard(n, of=...)`` fields' values for an entity (or a mapping of field values)
        holding each shard's ``of`` field: what every write stores, whatever the caller
        passed."""
        read = values.get if isinstance(values, Mapping) else lambda name: getattr(values, name)
        return {plan.field: plan.value(read(plan.of)) for plan in self.hashed_shards}

    def drawn_shards(self) -> dict[str, int]:
        """A fresh draw of every random ``Shard(n)`` field."""
        return {plan.field: plan.draw() for plan in self.random_shards}

    @functools.cached_property
    def type_tags(self) -> tuple[str, ...]:
        """Every type tag whose items decode as this entity: the current one first, then the
        ``former_types`` it was stored under before a rename (writes store the current one)."""
        return (self.type_name, *self.former_types)

    # -- ownership: the one answer to "is this stored item a live E?" --

    @functools.cached_property
    def expires(self) -> bool:
        """Whether this entity's items can expire (a TTL field on a table with a TTL attribute)."""
        return bool(self.ttl_field and self.table.ttl_attribute)

    def tagged(self, item: Mapping[str, Wire]) -> bool:
        """Whether ``item`` carries one of this entity's type tags (current or former)."""
        tag = item.get(self.table.type_attribute)
        return tag is not None and tag.get("S") in self.type_tags

    def expired(self, item: Mapping[str, Wire], now: int) -> bool:
        """Whether ``item`` (of this entity) has expired at ``now`` (epoch seconds) but is not
        yet deleted by DynamoDB: such items count as absent everywhere."""
        return self.expires and ttl_passed(item, self.table.ttl_attribute, now)  # type: ignore[arg-type]

    def owns(self, item: Mapping[str, Wire], now: int) -> bool:
        """Whether ``item`` is a live item of this entity: tagged as one and not expired at
        ``now``. Every response path asks this (or, for speed, the decoder's inlined copy,
        built from :attr:`type_tags` and :attr:`expires`)."""
        return self.tagged(item) and not self.expired(item, now)

    def ownership_filter(self, now: int | None) -> Condition:
        """:meth:`owns` as a server-side condition (a Query's count, a backfill's Scan); with
        ``now=None``, the type tags only (the caller skips expired items itself)."""
        # Expressions sit above entities in the flow; only these callers need them.
        from ._expressions import Attr

        tags = self.type_tags
        tag = Attr(self.table.type_attribute)
        condition = tag.eq(tags[0]) if len(tags) == 1 else tag.is_in(*tags)
        if self.expires and now is not None:
            ttl = Attr(typing.cast(str, self.table.ttl_attribute))
            condition = condition & (ttl.not_exists() | ttl.gte(now))
        return condition

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(self.cls.model_fields)

    @functools.cached_property
    def primary_fields(self) -> tuple[str, ...]:
        return self.base.template_fields

    def index(self, name: str | None) -> IndexSpec:
        if name is None:
            return self.base
        try:
            return self.indexes[name]
        except KeyError:
            raise ModelDefinitionError(
                f"{self.name} does not populate index {name!r}: add {name} = (...) to "
                f"{self.name}.Keys, or query another index"
            ) from None

    # -- values --

    @functools.cached_property
    def _adapters(self) -> dict[str, TypeAdapter[Any]]:
        return {}

    @functools.cached_property
    def _exact_types(self) -> dict[str, type]:
        """Fields whose annotation is one plain class: a value of exactly that class is valid."""
        exact = {}
        for name, info in self.cls.model_fields.items():
            if isinstance(info.annotation, type) and not info.metadata:
                exact[name] = info.annotation
        return exact

    @functools.cached_property
    def _primary_set(self) -> frozenset[str]:
        return frozenset(self.primary_fields)

    def coerce(self, name: str, value: Any) -> Any:
        """A call-time value validated to the field's type (``"42"`` -> 42 for an int field)."""
        if value.__class__ is self._exact_types.get(name):
            return value
        adapter = self._adapters.get(name)
        if adapter is None:
            info = self.cls.model_fields.get(name)
            if info is not None:
                annotation = info.annotation
            else:
                annotation = self.cls.model_computed_fields[name].return_type
            from pydantic import TypeAdapter

            adapter = self._adapters[name] = TypeAdapter(typing.cast(Any, annotation))
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            message = exc.errors()[0].get("msg", "invalid value")
            raise KeyTemplateError(
                f"{self.name}.{name} = {value!r} is not valid: {message}", key=name
            ) from None

    def key_values(self, entity: Any) -> Mapping[str, Any]:
        values: dict[str, Any] = entity.__dict__
        if self.computed_in_keys:
            values = dict(values)
            for name in self.computed_in_keys:
                values[name] = getattr(entity, name)
        return values

    # -- keys --

    def primary_key(self, values: Mapping[str, Any]) -> dict[str, Wire]:
        """The primary key attributes for ``values`` (which hold every primary-key field)."""
        base = self.base
        assert base.pk is not None
        key = {base.keys.pk: {"S": base.pk.render(values)}}
        if base.sk is not None and base.keys.sk:
            key[base.keys.sk] = {"S": base.sk.render(values)}
        return key

    @functools.cached_property
    def key_shards(self) -> tuple[checks.ShardPlan, ...]:
        """The ``Shard()`` fields in the primary key whose ``of`` field is a key field too: a
        key is never scattered, so callers give ``of`` and the shard is computed."""
        primary = set(self.primary_fields)
        return tuple(p for p in self.shards if p.field in primary and p.of in primary)

    @functools.cached_property
    def key_arguments(self) -> tuple[str, ...]:
        """The fields a caller gives to name an item (the key fields but computed shards)."""
        derived = {p.field for p in self.key_shards}
        return tuple(f for f in self.primary_fields if f not in derived)

    def key_of_fields(self, fields: Mapping[str, Any]) -> dict[str, Wire]:
        """Primary key from call keywords: every key field, coerced to its type; no others (a
        shard in the key is computed from its ``of`` field, whatever was passed)."""
        if self.key_shards:
            fields = dict(fields)
            for plan in self.key_shards:
                if plan.of in fields:
                    fields[plan.field] = plan.value(self.coerce(plan.of, fields[plan.of]))
        if fields.keys() == self._primary_set:
            return self.primary_key({name: self.coerce(name, v) for name, v in fields.items()})
        needed = self._primary_set
        missing = [n for n in self.primary_fields if n not in fields]
        if missing:
            raise KeyTemplateError(
                f"{self.name} key needs {', '.join(missing)} (key fields: "
                f"{', '.join(self.primary_fields)})",
                key=missing[0],
            )
        extra = [n for n in fields if n not in needed]
        if extra:
            raise KeyTemplateError(
                f"{self.name} key takes {', '.join(self.primary_fields)}; "
                f"{', '.join(extra)} is not a key field",
                key=extra[0],
            )
        values = {name: self.coerce(name, value) for name, value in fields.items()}
        return self.primary_key(values)

    def parse_key(self, key: Mapping[str, Any]) -> dict[str, Any]:
        """Primary-key field values from a stored key; :class:`KeyTemplateError` when the key
        was not rendered from this entity's templates."""
        base = self.base
        values: dict[str, Any] = {}
        for attr, tpl in ((base.keys.pk, base.pk), (base.keys.sk, base.sk)):
            if tpl is None or not attr:
                continue
            raw = key.get(attr)
            text = raw.get("S") if isinstance(raw, Mapping) else raw
            if not isinstance(text, str):
                raise KeyTemplateError(f"{self.name}: the key has no {attr!r} string", key=attr)
            values.update(tpl.parse(text))
        return values

    @functools.cached_property
    def key_templates(self) -> tuple[tuple[str, KeyTemplate], ...]:
        """Every key attribute this entity writes, with the template that renders it."""
        pairs = []
        for spec in [self.base, *self.indexes.values()]:
            for attr, tpl in ((spec.keys.pk, spec.pk), (spec.keys.sk, spec.sk)):
                if attr and tpl is not None:
                    pairs.append((attr, tpl))
        return tuple(pairs)

    def check_key_sizes(self, item: Mapping[str, Wire]) -> None:
        """:class:`KeyTemplateError` if a key attribute of ``item`` is longer than DynamoDB
        takes (2,048 bytes for a partition key, 1,024 for a sort key)."""
        for attr, tpl in self.key_templates:
            av = item.get(attr)
            if av is not None:
                tpl.check_size(av["S"])

    @functools.cached_property
    def native_limits(self) -> dict[str, tuple[str, int]]:
        """The fields that key a native index: ``field -> (attribute, byte limit)``, the
        tighter limit when a field is a partition attribute somewhere and a sort one
        elsewhere."""
        limits: dict[str, tuple[str, int]] = {}
        for native in self.native.values():
            for attrs, limit in ((native.pk, PARTITION_KEY_BYTES), (native.sk, SORT_KEY_BYTES)):
                for a in attrs:
                    if a.field is not None:
                        known = limits.get(a.field, (a.attribute, limit))
                        limits[a.field] = (a.attribute, min(known[1], limit))
        return limits

    def check_native_value(self, field: str, wire: Wire) -> None:
        """:class:`KeyTemplateError` naming ``field`` for a value DynamoDB refuses as an index
        key: an empty string or bytes, or more bytes than the key takes."""
        attribute, limit = self.native_limits[field]
        ((tag, raw),) = wire.items()
        if tag == "N":
            return
        size = len(raw.encode("utf-8", "surrogatepass")) if tag == "S" else len(bytes_of(raw))
        if size == 0:
            raise KeyTemplateError(
                f"{self.name}.{field}: an empty value cannot key index attribute "
                f"{attribute!r} (DynamoDB refuses it); leave the field None to keep the item "
                "out of the index",
                key=field,
            )
        if size > limit:
            raise KeyTemplateError(
                f"{self.name}.{field}: {size} bytes is more than index key attribute "
                f"{attribute!r} takes ({limit})",
                key=field,
            )

    def check_native_values(self, item: Mapping[str, Wire]) -> None:
        """:meth:`check_native_value` for every native key field ``item`` holds."""
        names = self.attr_names
        for field in self.native_limits:
            wire = item.get(names.get(field, field))
            if wire is not None:
                self.check_native_value(field, wire)

    def describe_key(self, key: Mapping[str, Wire]) -> str:
        """``Order(PK='...', SK='...')``: the primary key of ``key`` (or of a whole item)."""
        return f"{self.name}({Key.of(key, (self.base.keys.pk, self.base.keys.sk)).text})"

    # -- items --

    def to_item(self, entity: Any) -> dict[str, Wire]:
        """The stored item: type tag, every key attribute, and the encoded fields."""
        generated = generate_to_item(self)
        # From now on the generated function itself answers spec.to_item(...).
        setattr(self, "to_item", generated)  # noqa: B010
        return generated(entity)

    def finish_item(self, entity: Any, item: dict[str, Wire]) -> dict[str, Wire]:
        """The slow end of ``to_item``: extras, and the exact size check when the bound the
        generated code computed is over the limit."""
        bound: int | None = MAX_ITEM_BYTES + 1
        if self.codec.allows_extra and entity.__pydantic_extra__:
            table = self.table
            reserved = table.key_attributes | {table.type_attribute}
            if table.ttl_attribute:
                reserved |= {table.ttl_attribute}
            clash = sorted(k for k in entity.__pydantic_extra__ if k in reserved)
            if clash:
                raise ItemEncodeError(
                    f"{self.name}: extra field {clash[0]!r} is named like a key, type-tag or "
                    "TTL attribute and would overwrite it",
                    key=clash[0],
                )
            item.update(self.codec.encode_fields(entity))
            bound = None
        check_item_size(item, lambda: self.describe_key(item), bound)
        return item

    @functools.cached_property
    def _decode(self) -> Callable[[Mapping[str, Wire]], Any]:
        return generate_decode(self)

    def from_item(self, item: Mapping[str, Wire]) -> Any:
        """A validated entity from a stored item; :class:`ItemDecodeError` if it no longer fits."""
        codec = self.codec
        try:
            return self._decode(item)
        except ValidationError as exc:
            error: Exception = exc
        except (KeyError, ValueError, TypeError, ArithmeticError):
            try:
                data = codec.decode_fields_lenient(item)
                if codec.allows_extra:
                    self._decode_extras(item, data)
            except NumberRangeError as exc:
                # Refused before pydantic sees it: converting it could take unbounded time.
                key = self.describe_key(item)
                raise ItemDecodeError(
                    f"stored item {key} does not validate as {self.name}: "
                    f"{'.'.join(exc.path)}: {exc.why}",
                    key=key,
                    raw=dict(item),
                ) from None
            try:
                return codec.validate(data)
            except ValidationError as exc:
                error = exc
        key = self.describe_key(item)
        raise ItemDecodeError(
            f"stored item {key} does not validate as {self.name}: {_summarise_validation(error)}",
            key=key,
            raw=dict(item),
        ) from error

    @functools.cached_property
    def known_attributes(self) -> frozenset[str]:
        """The attributes that are not extras: the fields', the keys' and the type tag."""
        table = self.table
        known = {p.attr for p in self.codec.fields} | table.key_attributes
        return frozenset(known | {table.type_attribute})

    def _decode_extras(self, item: Mapping[str, Wire], data: dict[str, Any]) -> None:
        known = self.known_attributes
        for name, av in item.items():
            if name not in known:
                try:
                    data[name] = decode_value(av)
                except NumberRangeError as exc:
                    raise exc.within(name) from None

    def encode_for_condition(self, name: str, value: Any) -> Wire:
        """A value compared with attribute (or field, or document path) ``name`` in a condition,
        encoded exactly as it is stored (epoch seconds for the TTL field, datetime formats...)."""
        field = name if name in self.cls.model_fields else self._field_of_attr.get(name)
        if value is not None and (field is not None or is_document_path(name)):
            wire = self.encode_field(field, value) if field else path_value(self, name, value)
            if wire is not None:
                return wire
        try:
            return encode_value(value)
        except ValueError as exc:  # NaN, a lone surrogate...
            raise wrap_encode_error(self.name, name, exc) from None

    @functools.cached_property
    def _field_of_attr(self) -> dict[str, str]:
        return {attr: name for name, attr in self.attr_names.items()}

    def encode_field(self, name: str, value: Any) -> Wire | None:
        """One field's stored form (None when it would be omitted)."""
        if value is None:
            return None
        for plan in self.codec.fields:
            if plan.name == name:
                try:
                    wire = plan.converter.encode(value)
                    if wire is not None:
                        value_size(wire)  # encodes every string: a lone surrogate raises here
                except (ValueError, TypeError, AttributeError, ArithmeticError) as exc:
                    raise wrap_encode_error(self.name, name, exc) from None
                except ItemEncodeError as exc:  # from a nested model
                    raise wrap_encode_error(self.name, name, exc) from None
                return wire
        try:
            return encode_value(value)
        except ValueError as exc:
            raise wrap_encode_error(self.name, name, exc) from None


def _summarise_validation(error: Exception) -> str:
    if isinstance(error, ValidationError):
        parts = []
        for err in error.errors()[:3]:
            loc = ".".join(str(p) for p in err.get("loc", ())) or "item"
            parts.append(f"{loc}: {err.get('msg', 'invalid')}")
        return "; ".join(parts)
    return str(error)
