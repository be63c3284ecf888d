"""Entities: pydantic models that know their table, their type tag and their key templates.

``Entity`` is the base class users subclass; its class creation compiles an
:class:`~singletable._entity_spec.EntitySpec` (the checks in ``_entity_checks``), which
answers everything at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel
from typing_extensions import Self

from . import _entity_checks as checks
from ._codec import TTL_CONVERTER, ModelCodec
from ._entity_spec import EntitySpec
from ._indexes import Index, IndexSpec, WhenSpec
from ._source import locate
from ._table import IndexKeys, Table, declared_table
from .errors import ItemDecodeError, ModelDefinitionError

# -- the Entity base class ---------------------------------------------------------------------


class Entity(BaseModel):
    """Base class of stored entities.

    Declare ``class Order(Entity, table=shop, type="ORDER")`` with a nested ``class Keys``
    holding ``pk``, ``sk`` and one entry per index the entity populates.
    """

    __singletable__: ClassVar[EntitySpec]
    __singletable_table__: ClassVar[Table | None] = None
    __singletable_type__: ClassVar[str | None] = None
    __singletable_former_types__: ClassVar[Any] = ()

    def __init_subclass__(
        cls,
        table: Table | None = None,
        type: str | None = None,
        former_types: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if table is not None:
            cls.__singletable_table__ = declared_table(cls, table)
        cls.__singletable_type__ = type
        cls.__singletable_former_types__ = former_types

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.__singletable_table__ is None:
            return  # an abstract base: no table, no keys
        if not cls.__pydantic_complete__:
            try:
                cls.model_rebuild()
            except Exception as exc:
                raise ModelDefinitionError(
                    f"{cls.__qualname__}: its fields reference types that are not defined yet "
                    f"({exc}); define them before the entity"
                ) from None
        try:
            spec = _compile(cls)
            type.__setattr__(cls, "__singletable__", spec)
            spec.table.register_entity(spec.type_name, cls)
        except ModelDefinitionError as error:
            locate(error, cls)  # the Keys entry or field at fault, not the class line
            raise

    # -- public helpers --

    def to_item(self) -> dict[str, Any]:
        """The wire-format item this entity is stored as (keys and type tag included)."""
        spec = type(self).__dict__.get("__singletable__") or spec_of(type(self))
        return spec.to_item(self)

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Self:
        """A validated entity from a wire-format item."""
        spec = cls.__dict__.get("__singletable__") or spec_of(cls)
        tag = item.get(spec.table.type_attribute)
        if tag is not None and not spec.tagged(item):  # an untagged item is taken as given
            raise ItemDecodeError(
                f"stored item {spec.describe_key(item)} is a {tag.get('S')!r}, "
                f"not a {spec.type_name!r}",
                key=spec.describe_key(item),
                raw=dict(item),
            )
        result: Self = spec.from_item(item)
        return result

    @classmethod
    def parse_key(cls, key: Mapping[str, Any]) -> dict[str, Any]:
        """The primary-key field values of a stored key (``{"PK": {"S": ...}, ...}`` or plain
        strings): ``Order.parse_key(item)`` -> ``{"customer_id": ..., "created_at": ...}``."""
        return spec_of(cls).parse_key(key)

    @classmethod
    def key(cls, **fields: Any) -> dict[str, Any]:
        """The wire-format primary key for the given key fields."""
        return spec_of(cls).key_of_fields(fields)


def spec_of(cls: type[Any]) -> EntitySpec:
    """The compiled spec of an entity class (a clear error for anything else)."""
    spec = cls.__dict__.get("__singletable__") if isinstance(cls, type) else None
    if spec is None:
        name = getattr(cls, "__qualname__", repr(cls))
        raise ModelDefinitionError(
            f"{name} is not a concrete entity: declare it as "
            f"class {name}(Entity, table=...) with a class Keys"
        )
    return spec  # type: ignore[no-any-return]


# -- compilation (the checks are entity_checks.py's) -------------------------------------------


def _compile(cls: type[Entity]) -> EntitySpec:
    table = cls.__singletable_table__
    assert table is not None
    owner = cls.__qualname__
    type_name = cls.__singletable_type__ or cls.__name__
    checks.check_type_name(owner, type_name)
    facts = checks.read_fields(owner, table, cls.model_fields)
    marked = checks.marked_fields(owner, cls.model_fields, facts.markers)
    base, indexes = _key_specs(cls, owner, table, type_name)
    checks.check_random_shards(owner, marked.shards, base)
    native = checks.native_indexes(owner, table, cls.model_fields, facts.attr_names, base)
    ttl_field = facts.ttl_field
    former_types = _former_types(cls, owner, table, type_name, marked.unique)
    return EntitySpec(
        cls=cls,
        table=table,
        type_name=type_name,
        explicit_type=cls.__singletable_type__ is not None,
        base=base,
        indexes=indexes,
        codec=ModelCodec(
            cls,
            overrides={ttl_field: TTL_CONVERTER} if ttl_field else {},
            datetime_format=table.datetime_format,
        ),
        version_field=marked.version,
        created_field=marked.created,
        updated_field=marked.updated,
        unique_fields=marked.unique,
        ttl_field=ttl_field,
        computed_in_keys=checks.computed_in_keys(cls, [base, *indexes.values()]),
        attr_names=facts.attr_names,
        shards=marked.shards,
        former_types=former_types,
        native=native,
    )


def _former_types(
    cls: type[Entity], owner: str, table: Table, type_name: str, unique: tuple[str, ...]
) -> tuple[str, ...]:
    """``former_types=("Old", ...)``: the type tags this entity's items were stored under
    before a rename. Reads accept them; writes (and ``repo.backfill``) store ``type_name``."""
    declared = cls.__dict__.get("__singletable_former_types__", ())
    if isinstance(declared, str) or not isinstance(declared, (tuple, list)):
        raise ModelDefinitionError(
            f"{owner}: former_types= takes a tuple of type tags, e.g. "
            f"former_types=({str(declared)!r},)"
        )
    former = tuple(declared)
    for tag in former:
        checks.check_type_name(owner, tag)
    if type_name in former or len(set(former)) != len(former):
        raise ModelDefinitionError(
            f"{owner}: former_types= lists {type_name!r} or one tag twice; it names the tags "
            f"stored before the rename, not the current one ({type_name!r})"
        )
    if former and unique:
        raise ModelDefinitionError(
            f"{owner}: former_types= cannot be combined with Unique() fields ({unique[0]}): "
            "their guard items are keyed by the type tag, so renamed items would lose their "
            "uniqueness; keep the old type= for this entity"
        )
    for other in table.entities.values():
        if (other.__module__, other.__qualname__) == (cls.__module__, cls.__qualname__):
            continue
        other_spec: EntitySpec | None = other.__dict__.get("__singletable__")
        if other_spec is None:
            continue
        clash = sorted(set(other_spec.type_tags) & {type_name, *former})
        if clash and (clash != [type_name] or other_spec.type_name != type_name):
            raise ModelDefinitionError(
                f"{owner}: type tag {clash[0]!r} is also read as {other.__qualname__} on table "
                f"{table.name!r} (type= or former_types=); each tag must belong to one entity"
            )
    return former


def _key_specs(
    cls: type[Entity], owner: str, table: Table, type_name: str
) -> tuple[IndexSpec, dict[str, IndexSpec]]:
    """The table key's and every index's templates, from ``class Keys`` (and derived for the
    inverted indexes it leaves out)."""
    entries = checks.keys_entries(cls, owner, type_name)
    make = checks.TemplateMaker(cls, owner, table)
    pk_tpl, sk_tpl = checks.primary_templates(owner, table, entries, cls.model_fields, make)
    base = IndexSpec(None, table.index_keys(None), pk_tpl, sk_tpl)
    indexes: dict[str, IndexSpec] = {}
    for index_name, entry in entries.items():
        if callable(entry) and not isinstance(entry, Index):
            continue  # helper methods on Keys are not index entries
        keys = checks.declared_index_keys(owner, table, index_name)
        indexes[index_name] = _index_spec(cls, owner, index_name, keys, entry, make)
    for index_name, keys, pk, sk in checks.derived_indexes(table, (pk_tpl, sk_tpl), indexes, make):
        indexes[index_name] = IndexSpec(index_name, keys, pk, sk)
    checks.check_shared_attributes(owner, base, indexes)
    return base, indexes


def _index_spec(
    cls: type[Entity],
    owner: str,
    index_name: str,
    keys: IndexKeys,
    entry: Any,
    make: checks.TemplateMaker,
) -> IndexSpec:
    """One index entry of ``class Keys``: ``(pk, sk)``, a lone template or ``Index(...)``."""
    where = f"{owner}.Keys.{index_name}"
    when: WhenSpec | None = None
    if isinstance(entry, Index):
        pk_text, sk_text, when = entry.pk, entry.sk, entry.when
    elif isinstance(entry, tuple):
        if len(entry) == 2:
            pk_text, sk_text = entry
        elif len(entry) == 1:
            pk_text, sk_text = entry[0], None
        else:
            raise ModelDefinitionError(f"{where} must be (pk, sk), not a {len(entry)}-tuple")
    elif isinstance(entry, str):
        pk_text, sk_text = (None, entry) if keys.local else (entry, None)
    else:
        raise ModelDefinitionError(
            f"{where} must be a (pk, sk) tuple or Index(pk, sk, when=...), not {entry!r}"
        )
    pk_tpl, sk_tpl = checks.index_templates(where, index_name, keys, pk_text, sk_text, make)
    spec = IndexSpec(index_name, keys, pk_tpl, sk_tpl)
    if when is None:
        return spec
    if callable(when):
        spec.when_callable = when
    else:
        spec.when = checks.when_values(cls, where, when)
    return spec
