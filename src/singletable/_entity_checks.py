"""Class-creation checks of an entity: its type tag, its fields and markers, and the templates
of its ``class Keys``, rule by rule with one error message each.

entity.py runs them in order (``_compile``) and assembles the ``EntitySpec`` from what they
return; nothing here knows the spec.
"""

from __future__ import annotations

import enum
import random
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Union

from pydantic import ValidationError

from ._codec import bare_annotation
from ._indexes import NativeAttribute, NativeIndexSpec
from ._key_formats import KeyKind, key_format, key_type_of
from ._keys import KeyTemplate
from ._markers import CreatedAt, Marker, Shard, Unique, UpdatedAt, Version, shard_of
from ._table import IndexKeys, Table
from .errors import KeyDefinitionError, ModelDefinitionError, did_you_mean

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter
    from pydantic.fields import FieldInfo

    from ._indexes import IndexSpec


# -- the type tag and the fields ---------------------------------------------------------------


def check_type_name(owner: str, type_name: Any) -> None:
    if not isinstance(type_name, str) or not type_name:
        raise ModelDefinitionError(f"{owner}: type= must be a non-empty string")
    if type_name.startswith("__"):
        raise ModelDefinitionError(f"{owner}: type names starting with '__' are reserved")


class FieldFacts:
    """What the fields declare: stored attribute names, the fields holding each marker, and
    the TTL field (the one stored under the table's ``ttl_attribute``)."""

    __slots__ = ("attr_names", "markers", "ttl_field")

    def __init__(
        self,
        attr_names: dict[str, str],
        markers: dict[type[Marker], list[str]],
        ttl_field: str | None,
    ) -> None:
        self.attr_names = attr_names
        self.markers = markers
        self.ttl_field = ttl_field


def read_fields(owner: str, table: Table, fields: Mapping[str, FieldInfo]) -> FieldFacts:
    attr_names = {n: info.serialization_alias or info.alias or n for n, info in fields.items()}
    check_field_names(owner, table, attr_names)
    markers: dict[type[Marker], list[str]] = {}
    ttl_field: str | None = None
    for fname, info in fields.items():
        attr = attr_names[fname]
        for marker in markers_in(info.annotation, list(info.metadata), f"{owner}.{fname}"):
            markers.setdefault(type(marker), []).append(fname)
        if table.ttl_attribute is not None and attr == table.ttl_attribute:
            if not is_datetime(info.annotation):
                raise ModelDefinitionError(
                    f"{owner}.{fname} is the TTL field (named like the table's ttl_attribute "
                    f"{table.ttl_attribute!r}) and must be a datetime (or datetime | None)"
                )
            ttl_field = fname
    return FieldFacts(attr_names, markers, ttl_field)


def check_field_names(owner: str, table: Table, attr_names: Mapping[str, str]) -> None:
    """Refuse every field whose stored name is a key attribute or the type tag of the table (its
    value would overwrite the key), or whose name holds the ``__`` of range lookups: all of
    them in one error, so a model ported from elsewhere is fixed in one pass."""
    reserved = set(table.key_attributes) | {table.type_attribute}
    clashes: list[tuple[str, str, str]] = []  # (field, why, fix)
    for fname, attr in attr_names.items():
        if attr in reserved:
            why = f"its attribute name {attr!r} is a key attribute or the type tag of table "
            clashes.append(
                (fname, why + repr(table.name), "rename the field (or give it an alias)")
            )
        if "__" in fname and not fname.startswith("_"):
            why = "'__' is reserved for range lookups (created_at__gte)"
            clashes.append((fname, why, "rename the field"))
    if len(clashes) == 1:
        ((fname, why, fix),) = clashes
        raise ModelDefinitionError(f"{owner}.{fname}: {why}; {fix}")
    if clashes:
        listed = "; ".join(f"{owner}.{fname}: {why}" for fname, why, _ in clashes)
        raise ModelDefinitionError(
            f"{owner}: {len(clashes)} fields clash with names singletable reserves, rename "
            f"each (a clashing attribute name can also be changed with an alias): {listed}"
        )


class ShardPlan:
    """A ``Shard(n, of=...)`` field as writes derive it (``value(of_value)``), or a random
    ``Shard(n)`` (``of`` None) as ``create``/``put``/``batch_put`` draw it (``draw()``)."""

    __slots__ = ("field", "n", "of", "render")

    def __init__(
        self, field: str, n: int, of: str | None, render: Callable[[Any], str] | None
    ) -> None:
        self.field = field
        self.n = n
        self.of = of
        self.render = render

    @property
    def random(self) -> bool:
        """Whether the shard is drawn at random (no ``of`` field to derive it from)."""
        return self.of is None

    def value(self, of_value: Any) -> int:
        """The shard of a value of field ``of`` (its canonical key rendering, hashed)."""
        assert self.render is not None
        return shard_of(self.render(of_value), self.n)

    def draw(self) -> int:
        """A shard drawn uniformly at random (a random ``Shard(n)``)."""
        return _RANDOM.randrange(self.n)


# Random shards spread writes; they protect nothing, so the module's PRNG (seeded from the OS
# at import) is enough, and cheaper than the secrets module.
_RANDOM = random.Random()


class MarkedFields:
    """The fields holding ``Version()``, ``CreatedAt()``, ``UpdatedAt()``, ``Unique()`` and
    ``Shard()``."""

    __slots__ = ("created", "shards", "unique", "updated", "version")

    def __init__(
        self,
        version: str | None,
        created: str | None,
        updated: str | None,
        unique: tuple[str, ...],
        shards: tuple[ShardPlan, ...] = (),
    ) -> None:
        self.version = version
        self.created = created
        self.updated = updated
        self.unique = unique
        self.shards = shards


def marked_fields(
    owner: str, fields: Mapping[str, FieldInfo], markers: Mapping[type[Marker], list[str]]
) -> MarkedFields:
    for marker_type in (Version, CreatedAt, UpdatedAt):
        holders = markers.get(marker_type, [])
        if len(holders) > 1:
            raise ModelDefinitionError(
                f"{owner}: {marker_type.__name__}() is on {', '.join(holders)}; one field only"
            )
    version = next(iter(markers.get(Version, [])), None)
    created = next(iter(markers.get(CreatedAt, [])), None)
    updated = next(iter(markers.get(UpdatedAt, [])), None)
    if version and not is_int(fields[version].annotation):
        raise ModelDefinitionError(f"{owner}.{version}: Version() needs an int field")
    for stamp in (created, updated):
        if stamp and not is_datetime(fields[stamp].annotation):
            raise ModelDefinitionError(
                f"{owner}.{stamp}: CreatedAt()/UpdatedAt() need a datetime (or datetime | None) "
                "field"
            )
    unique = tuple(markers.get(Unique, []))
    for ufield in unique:
        key_type_of(fields[ufield].annotation, owner=owner, field=ufield)
    shards = tuple(shard_plan(owner, fields, name) for name in markers.get(Shard, []))
    return MarkedFields(version, created, updated, unique, shards)


def shard_plan(owner: str, fields: Mapping[str, FieldInfo], name: str) -> ShardPlan:
    """Checks of a ``Shard(n, of=...)`` field: an int field, 1 <= n <= 100, ``of`` (when given)
    another field whose values render as key text."""
    info = fields[name]
    (marker,) = [
        m for m in markers_in(info.annotation, list(info.metadata), name) if isinstance(m, Shard)
    ]
    where = f"{owner}.{name}"
    if not is_int(info.annotation):
        raise ModelDefinitionError(f"{where}: {marker.label} needs an int field")
    if type(marker.n) is not int or not 1 <= marker.n <= 100:
        raise ModelDefinitionError(
            f"{where}: {marker.label}: the number of shards must be an int from 1 to 100"
        )
    if marker.of is None:
        return ShardPlan(name, marker.n, None, None)
    if marker.of == name or marker.of not in fields:
        hint = did_you_mean(str(marker.of), (f for f in fields if f != name))
        raise ModelDefinitionError(
            f"{where}: {marker.label}: of= must name another field of {owner}{hint} (the "
            "value whose hash spreads the writes, e.g. the item's id)"
        )
    ktype = key_type_of(fields[marker.of].annotation, owner=owner, field=marker.of)
    form = key_format(ktype, None, sort_key=False, field=marker.of, where=where)
    return ShardPlan(name, marker.n, marker.of, form.render)


def markers_in(annotation: Any, metadata: list[Any], where: str) -> list[Marker]:
    """The markers on a field; one nested inside a container's type is refused."""
    found = [m for m in metadata if isinstance(m, Marker)]

    def walk(tp: Any, depth: int, in_union: bool) -> None:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            markers = [m for m in args[1:] if isinstance(m, Marker)]
            if markers and depth > 0 and not in_union:
                raise ModelDefinitionError(
                    f"{where}: {markers[0].label} is nested inside {tp!r}; put the marker on "
                    "the field itself (Annotated[..., marker]), not inside a container"
                )
            found.extend(markers)
            walk(args[0], depth + 1, in_union)
        elif origin in (Union, types.UnionType):
            for arg in args:
                walk(arg, depth, True)
        elif args:
            for arg in args:
                if arg is not Ellipsis:
                    walk(arg, depth + 1, False)

    walk(annotation, 0, False)
    return found


def is_datetime(annotation: Any) -> bool:
    bare = bare_annotation(annotation)
    return isinstance(bare, type) and issubclass(bare, datetime)


def is_int(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return is_int(typing.get_args(annotation)[0])
    return (
        isinstance(annotation, type)
        and issubclass(annotation, int)
        and not issubclass(annotation, (bool, enum.Enum))
    )


# -- class Keys ----------------------------------------------------------------------------------


def keys_entries(cls: type[BaseModel], owner: str, type_name: str) -> dict[str, Any]:
    """The entries of the entity's ``class Keys`` (names not starting with ``_``)."""
    keys_cls = getattr(cls, "Keys", None)
    if keys_cls is None or not isinstance(keys_cls, type):
        raise ModelDefinitionError(
            f"{owner} needs a nested 'class Keys' with pk (and sk) templates, e.g. "
            f'class Keys: pk = "{type_name.upper()}#{{id}}"'
        )
    return {k: v for k, v in vars(keys_cls).items() if not k.startswith("_")}


class TemplateMaker:
    """Builds the entity's key templates: the table's delimiter and escaping, and the types of
    its fields and computed fields."""

    def __init__(self, cls: type[BaseModel], owner: str, table: Table) -> None:
        self.owner = owner
        self.table = table
        self.types: dict[str, Any] = {n: info.annotation for n, info in cls.model_fields.items()}
        for cname, cinfo in cls.model_computed_fields.items():
            self.types[cname] = cinfo.return_type

    def __call__(
        self, text: Any, *, sort_key: bool, role: str, attribute: str | None
    ) -> KeyTemplate:
        if not isinstance(text, str):
            raise KeyDefinitionError(
                f"{self.owner}.Keys.{role} must be a template string, not {text!r}"
            )
        return KeyTemplate(
            text,
            self.types,
            sort_key=sort_key,
            delimiter=self.table.delimiter,
            escape=self.table.key_values == "escape",
            owner=self.owner,
            role=role,
            attribute=attribute,
        )


def primary_templates(
    owner: str,
    table: Table,
    entries: dict[str, Any],
    fields: Mapping[str, FieldInfo],
    make: TemplateMaker,
) -> tuple[KeyTemplate, KeyTemplate | None]:
    """The table key's templates (taken out of ``entries``)."""
    base_keys = table.index_keys(None)
    if "pk" not in entries:
        raise ModelDefinitionError(f"{owner}.Keys needs pk = '...' (the partition key template)")
    pk_tpl = make(entries.pop("pk"), sort_key=False, role="pk", attribute=base_keys.pk)
    sk_text = entries.pop("sk", None)
    if base_keys.sk and sk_text is None:
        raise ModelDefinitionError(
            f"{owner}.Keys needs sk = '...': table {table.name!r} has a sort key "
            f"({base_keys.sk!r}); use a constant such as sk = 'PROFILE' for a single item"
        )
    if not base_keys.sk and sk_text is not None:
        raise ModelDefinitionError(
            f"{owner}.Keys has sk, but table {table.name!r} has no sort key; remove it"
        )
    sk_tpl = (
        make(sk_text, sort_key=True, role="sk", attribute=base_keys.sk)
        if sk_text is not None
        else None
    )
    for tpl in (pk_tpl, sk_tpl):
        for fname in tpl.fields if tpl else ():
            if fname not in fields:
                continue
            if key_type_of(fields[fname].annotation, owner=owner, field=fname).optional:
                raise KeyDefinitionError(
                    f"{owner}.{fname} is in the primary key and cannot be optional"
                )
    return pk_tpl, sk_tpl


def declared_index_keys(owner: str, table: Table, index_name: str) -> IndexKeys:
    """The key attributes of the table's index named in ``class Keys``."""
    if index_name not in table.index_names:
        known = ", ".join(table.index_names) or "none"
        raise ModelDefinitionError(
            f"{owner}.Keys.{index_name}: table {table.name!r} has no index {index_name!r} "
            f"(its indexes: {known}); add GSI({index_name!r}, ...) to the table or fix "
            "the name"
        )
    keys = table.index_keys(index_name)
    if keys.native:
        raise ModelDefinitionError(
            f"{owner}.Keys.{index_name}: {index_name} is a native-key index (keyed on "
            f"{', '.join(keys.attributes)}); an entity is in it by having those fields, so "
            f"remove {index_name} from {owner}.Keys"
        )
    return keys


def index_templates(
    where: str,
    index_name: str,
    keys: IndexKeys,
    pk_text: Any,
    sk_text: Any,
    make: TemplateMaker,
) -> tuple[KeyTemplate | None, KeyTemplate | None]:
    """An index's templates from the texts of its entry (a local index has no pk template)."""
    if keys.local:
        if pk_text is not None and sk_text is None:
            pk_text, sk_text = None, pk_text
        if pk_text is not None:
            raise ModelDefinitionError(
                f"{where}: {index_name} is a local index; it shares the table's partition key, "
                "so give only its sort key template"
            )
        if sk_text is None:
            raise ModelDefinitionError(f"{where}: give the local index's sort key template")
        pk_tpl = None
    else:
        if pk_text is None:
            raise ModelDefinitionError(f"{where}: give the index's partition key template")
        pk_tpl = make(pk_text, sort_key=False, role=f"{index_name} pk", attribute=keys.pk)
    if keys.sk is None and sk_text is not None:
        raise ModelDefinitionError(
            f"{where}: index {index_name} has no sort key; give only its partition key template"
        )
    if keys.sk is not None and sk_text is None:
        raise ModelDefinitionError(
            f"{where}: index {index_name} has a sort key ({keys.sk!r}); give (pk, sk) templates"
        )
    sk_tpl = (
        make(sk_text, sort_key=True, role=f"{index_name} sk", attribute=keys.sk)
        if sk_text
        else None
    )
    return pk_tpl, sk_tpl


def when_values(model: type[BaseModel], where: str, when: Any) -> dict[str, tuple[Any, ...]]:
    """A declarative ``when=`` condition with its values validated to the fields' types."""
    if not isinstance(when, Mapping) or not when:
        raise ModelDefinitionError(
            f"{where}: when= must be a non-empty {{field: value}} dict or a callable"
        )
    from pydantic import TypeAdapter

    normalised: dict[str, tuple[Any, ...]] = {}
    for fname, allowed in when.items():
        if fname not in model.model_fields:
            hint = did_you_mean(fname, model.model_fields)
            raise ModelDefinitionError(f"{where}: when= names unknown field {fname!r}{hint}")
        options = (
            tuple(allowed) if isinstance(allowed, (tuple, list, set, frozenset)) else (allowed,)
        )
        adapter: TypeAdapter[Any] = TypeAdapter(
            typing.cast(Any, model.model_fields[fname].annotation)
        )
        try:
            normalised[fname] = tuple(adapter.validate_python(v) for v in options)
        except ValidationError as exc:
            raise ModelDefinitionError(
                f"{where}: when={{{fname!r}: {allowed!r}}} is not a valid {fname}: "
                f"{exc.errors()[0].get('msg')}"
            ) from None
    return normalised


def derived_indexes(
    table: Table,
    base: tuple[KeyTemplate, KeyTemplate | None],
    declared: Mapping[str, object],
    make: TemplateMaker,
) -> Iterator[tuple[str, IndexKeys, KeyTemplate, KeyTemplate | None]]:
    """Global indexes over the table's own key attributes (inverted indexes) that ``class Keys``
    leaves out: they hold every item with the same templates, so they are derived instead of
    asked to be restated. An index whose templates cannot be built (a bare number cannot sort)
    does not hold the entity."""
    base_keys = table.index_keys(None)
    pk_tpl, sk_tpl = base
    base_texts = {base_keys.pk: pk_tpl.text}
    if base_keys.sk and sk_tpl is not None:
        base_texts[base_keys.sk] = sk_tpl.text
    for index in table.indexes:
        keys = table.index_keys(index.name)
        if index.name in declared or keys.local or keys.native:
            continue
        if keys.pk in base_texts and (keys.sk is None or keys.sk in base_texts):
            try:
                derived_pk = make(
                    base_texts[keys.pk], sort_key=False, role=f"{index.name} pk", attribute=keys.pk
                )
                derived_sk = (
                    make(
                        base_texts[keys.sk],
                        sort_key=True,
                        role=f"{index.name} sk",
                        attribute=keys.sk,
                    )
                    if keys.sk
                    else None
                )
            except KeyDefinitionError:
                continue
            yield index.name, keys, derived_pk, derived_sk


def check_shared_attributes(owner: str, base: IndexSpec, indexes: Mapping[str, IndexSpec]) -> None:
    """Every key attribute is written from one template: an index that reuses an attribute of
    the table (an inverted index) or of another index must use the same template for it, or
    items would be stored under the wrong key."""
    writers: dict[str, tuple[str, KeyTemplate]] = {}
    for spec in [base, *indexes.values()]:
        label = spec.name or "table"
        for role, attr, tpl in (("pk", spec.keys.pk, spec.pk), ("sk", spec.keys.sk, spec.sk)):
            if tpl is None or attr is None:
                continue
            previous = writers.get(attr)
            if previous is None:
                writers[attr] = (f"{label} {role}", tpl)
            elif previous[1].text != tpl.text:
                raise ModelDefinitionError(
                    f"{owner}: attribute {attr!r} is both the {previous[0]} "
                    f"({previous[1].text!r}) and the {label} {role} ({tpl.text!r}); one attribute "
                    "holds one value, so use the same template (an index over the table's own "
                    "key attributes can be left out of Keys and is derived)"
                )
            elif spec.sparse and attr in (base.keys.pk, base.keys.sk):
                raise ModelDefinitionError(
                    f"{owner}.Keys.{label}: an index over the table's key attributes cannot be "
                    "sparse (every item has them); drop when="
                )


def check_random_shards(owner: str, shards: tuple[ShardPlan, ...], base: IndexSpec) -> None:
    """A random ``Shard(n)`` cannot key the table: a get names an item by the fields it
    knows, and nothing tells it which shard was drawn."""
    for plan in shards:
        if plan.random and plan.field in base.template_fields:
            raise ModelDefinitionError(
                f"{owner}.{plan.field}: Shard({plan.n}) without of= is drawn at random, so it "
                "cannot be part of the table's key (a get could not know it); give it "
                f'of="<an id field>" to derive it, or use it in an index key only'
            )


def computed_in_keys(cls: type[BaseModel], specs: list[IndexSpec]) -> tuple[str, ...]:
    """The computed fields some key template reads (to_item evaluates them first)."""
    computed = cls.model_computed_fields
    return tuple(sorted({f for spec in specs for f in spec.template_fields if f in computed}))


# -- native-key indexes ------------------------------------------------------------------------

#: The DynamoDB type a native key attribute gets from its field's kind.
_NATIVE_KINDS = {
    KeyKind.STR: "S",
    KeyKind.DATE: "S",
    KeyKind.DATETIME: "S",
    KeyKind.UUID: "S",
    KeyKind.INT: "N",
    KeyKind.DECIMAL: "N",
}


def native_kind(owner: str, field: str, annotation: Any, index: str) -> tuple[str, bool]:
    """``(DynamoDB type, optional)`` of a field that keys a native index: ``S`` for str, str
    Enums, Literal strs, UUID, date and datetime (its stored text), ``N`` for int, Decimal,
    int Enums and Literal ints, ``B`` for bytes; anything else is refused, naming the field."""
    inner, optional = annotation, False
    if typing.get_origin(inner) is typing.Annotated:
        inner = typing.get_args(inner)[0]
    if typing.get_origin(inner) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(inner) if a is not type(None)]
        optional = len(args) < len(typing.get_args(inner))
        inner = args[0] if len(args) == 1 else inner
    if inner is bytes:
        return "B", optional
    try:
        key_type = key_type_of(annotation, owner=owner, field=field)
    except KeyDefinitionError:
        raise ModelDefinitionError(
            f"{owner}.{field}: its type {annotation!r} cannot key native index {index!r}; a key "
            "attribute is a string (str, str Enum or Literal, UUID, date, datetime), a number "
            "(int, Decimal, int Enum or Literal) or bytes"
        ) from None
    return _NATIVE_KINDS[key_type.kind], key_type.optional


def native_indexes(
    owner: str,
    table: Table,
    fields: Mapping[str, FieldInfo],
    attr_names: Mapping[str, str],
    base: IndexSpec,
) -> dict[str, NativeIndexSpec]:
    """The native-key indexes the entity is in (it has a field for every key attribute), each
    field that keys one checked for its type whether or not the entity is in that index."""
    field_of = {attr: name for name, attr in attr_names.items()}
    table_keys = {base.keys.pk: base.pk, base.keys.sk: base.sk}
    found: dict[str, NativeIndexSpec] = {}
    for index in table.indexes:
        keys = table.index_keys(index.name)
        if not keys.native:
            continue
        attributes: list[NativeAttribute] = []
        for attr in keys.attributes:
            if attr in table_keys and table_keys[attr] is not None:
                attributes.append(NativeAttribute(attr, "S", template=table_keys[attr]))
                continue
            name = field_of.get(attr)
            if name is None:
                continue
            kind, optional = native_kind(owner, name, fields[name].annotation, index.name)
            table.register_native_type(attr, kind, f"{owner}.{name}")
            attributes.append(NativeAttribute(attr, kind, field=name, optional=optional))
        if len(attributes) == len(keys.attributes):
            split = len(keys.pk_attributes)
            found[index.name] = NativeIndexSpec(
                index.name, keys, tuple(attributes[:split]), tuple(attributes[split:])
            )
    return found
