"""Single-item writes compiled to requests (pure: no I/O).

Every derived attribute (keys of the table and of each index, sparse-index membership, guard
items, version, timestamps, the TTL number) is computed from one complete, validated entity by
:meth:`EntitySpec.to_item`. A write is a :class:`WriteOp`: the request, the guard-item operations
that must go with it in one transaction, and how to turn a failed condition into the error the
caller should see. The same ops fill transactions, so semantics are identical there.
"""

from __future__ import annotations

import functools
import inspect
import json
import operator
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ..codec import Wire, datetime_text, encode_value, epoch_text
from ..entity import EntitySpec, IndexSpec
from ..errors import (
    AlreadyExists,
    ConditionFailed,
    InvalidRequestError,
    KeyTemplateError,
    NotFound,
    SingleTableError,
    UniqueConstraintViolation,
    VersionConflict,
)
from ..expressions import (
    Attr,
    CompileContext,
    Condition,
    ExpressionBuilder,
    UpdateExpression,
    all_of,
    raw_condition,
)
from ..keys import KeyTemplate

GUARD_TYPE = "__unique__"
OWNER_ATTRIBUTE = "_owner"


class WriteOp:
    """One item operation, ready for a single request or a transaction."""

    __slots__ = (
        "describe",
        "entity_type",
        "fail",
        "guards",
        "key",
        "kind",
        "operation",
        "params",
        "result",
        "size",
        "spec",
    )

    def __init__(
        self,
        kind: str,  # put, create, update, delete, condition_check, guard_put, guard_delete
        operation: str,  # PutItem, UpdateItem, DeleteItem, ConditionCheck
        spec: EntitySpec | None,
        entity_type: str,
        key: dict[str, Wire],
        params: dict[str, Any],
        describe: str,
        fail: Callable[[dict[str, Wire] | None], SingleTableError],
        result: Any = None,  # the entity as it will be stored (put/create), when known up front
        guards: list[WriteOp] | None = None,
        size: int = 0,
    ) -> None:
        self.kind = kind
        self.operation = operation
        self.spec = spec
        self.entity_type = entity_type
        self.key = key
        self.params = params
        self.describe = describe
        self.fail = fail
        self.result = result
        self.guards: list[WriteOp] = [] if guards is None else guards
        self.size = size

    def transact_item(self, table_name: str) -> dict[str, Any]:
        """The TransactItems element for this operation."""
        body = {k: v for k, v in self.params.items() if k not in _SINGLE_ONLY}
        body["TableName"] = table_name
        body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        kind = {"PutItem": "Put", "UpdateItem": "Update", "DeleteItem": "Delete"}.get(
            self.operation, self.operation
        )
        return {kind: body}


_SINGLE_ONLY = frozenset(
    {"ReturnValues", "ReturnValuesOnConditionCheckFailure", "ReturnConsumedCapacity"}
)


class WriteContext:
    """What compiling a write needs besides the entity: now, and the table's physical name."""

    __slots__ = ("now", "table_name")

    def __init__(self, table_name: str, now: datetime) -> None:
        self.table_name = table_name
        self.now = now

    @property
    def now_epoch(self) -> int:
        return int(self.now.timestamp())


# -- helpers -----------------------------------------------------------------------------------


def key_text(key: Mapping[str, Wire]) -> str:
    return ", ".join(f"{a}={next(iter(v.values()))!r}" for a, v in key.items())


def _exists_condition(spec: EntitySpec, ctx: WriteContext) -> Condition:
    """The item exists and has not expired."""
    pk = spec.table.pk
    ttl = spec.table.ttl_attribute
    if ttl and spec.ttl_field:
        return raw_condition(
            "attribute_exists(@pk) AND (attribute_not_exists(@ttl) OR @ttl >= @now)",
            {"@pk": pk, "@ttl": ttl},
            {"@now": {"N": str(ctx.now_epoch)}},
        )
    return raw_condition("attribute_exists(@pk)", {"@pk": pk})


def _absent_condition(pk: str, ttl: str | None, ctx: WriteContext) -> Condition:
    """No item, or only an expired one (expired items count as absent)."""
    if ttl:
        return raw_condition(
            "attribute_not_exists(@pk) OR @ttl < @now",
            {"@pk": pk, "@ttl": ttl},
            {"@now": {"N": str(ctx.now_epoch)}},
        )
    return raw_condition("attribute_not_exists(@pk)", {"@pk": pk})


def _version_condition(spec: EntitySpec, expected: int) -> Condition:
    attr = Attr(spec.attr_names[spec.version_field])  # type: ignore[index]
    if expected == 0:
        return attr.not_exists() | attr.eq(0)
    return attr.eq(expected)


def _compile_condition(
    spec: EntitySpec | None, condition: Condition | None, params: dict[str, Any]
) -> None:
    if condition is None:
        return
    builder = ExpressionBuilder("c")
    encoder = _encoder(spec)
    params["ConditionExpression"] = condition.compile(CompileContext(builder, encoder))
    builder.merge_into(params)


def _encoder(spec: EntitySpec | None) -> Callable[[str, Any], Wire]:
    if spec is not None:
        return spec.encode_for_condition
    return lambda _name, value: encode_value(value)


def live_entity(spec: EntitySpec, item: Mapping[str, Wire] | None, ctx: WriteContext) -> Any:
    """The entity ``item`` holds, or None: no item, an expired one, another type, or one that
    no longer decodes."""
    try:
        return stored_entity(spec, item, ctx)
    except SingleTableError:
        return None


def stored_entity(spec: EntitySpec, item: Mapping[str, Wire] | None, ctx: WriteContext) -> Any:
    """Like :func:`live_entity`, but an item of this type that no longer decodes raises
    :class:`ItemDecodeError` instead of reading as absent."""
    if not item:
        return None
    if spec.ttl_field and spec.table.ttl_attribute:
        av = item.get(spec.table.ttl_attribute)
        if av is not None and "N" in av and int(float(av["N"])) < ctx.now_epoch:
            return None
    tag = item.get(spec.table.type_attribute)
    if tag is None or tag.get("S") != spec.type_name:
        return None
    return spec.from_item(item)


def _is_expired(spec: EntitySpec, item: Mapping[str, Wire], ctx: WriteContext) -> bool:
    ttl = spec.table.ttl_attribute
    if not ttl or not spec.ttl_field:
        return False
    av = item.get(ttl)
    return av is not None and "N" in av and int(float(av["N"])) < ctx.now_epoch


def validated(spec: EntitySpec, values: Mapping[str, Any]) -> Any:
    """A new validated entity from field values (keyed by field name)."""
    data = {}
    for plan in spec.codec.fields:
        if plan.name in values:
            data[plan.input_key] = values[plan.name]
    try:
        return spec.codec.validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise InvalidRequestError(
            f"{spec.name}: {loc or 'value'} is not valid: {first.get('msg')}", key=loc
        ) from None


def stamped(
    spec: EntitySpec, entity: Any, ctx: WriteContext, *, creating: bool, bump: bool = True
) -> Any:
    """The entity as a put/create stores it: version + 1, timestamps set."""
    changes: dict[str, Any] = {}
    if spec.version_field and bump:
        changes[spec.version_field] = getattr(entity, spec.version_field) + 1
    if spec.created_field and (creating or getattr(entity, spec.created_field) is None):
        changes[spec.created_field] = ctx.now
    if spec.updated_field:
        changes[spec.updated_field] = ctx.now
    if not changes:
        return entity
    return entity.model_copy(update=changes)


def _as_stored(spec: EntitySpec, item: Mapping[str, Wire]) -> Any:
    """What reading ``item`` back gives (TTL whole seconds, canonical datetimes)."""
    return spec.from_item(item)


# -- guard items -------------------------------------------------------------------------------


def guard_key(spec: EntitySpec, field_name: str, value: Any) -> dict[str, Wire]:
    table = spec.table
    rendered = _guard_value(spec, field_name, value)
    pk = f"{GUARD_TYPE}#{spec.type_name}#{field_name}#{rendered}"
    _guard_template(spec, field_name).check_size(pk, "the Unique() guard's key attribute")
    key = {table.pk: {"S": pk}}
    if table.sk:
        key[table.sk] = {"S": GUARD_TYPE}
    return key


def _guard_value(spec: EntitySpec, field_name: str, value: Any) -> str:
    return _guard_template(spec, field_name).render({field_name: value})


@functools.cache
def _guard_template(spec: EntitySpec, field_name: str) -> KeyTemplate:
    """The (escaped) template of a unique field's guard value, built once per field."""
    return KeyTemplate(
        "{" + field_name + "}",
        {field_name: spec.cls.model_fields[field_name].annotation},
        escape=True,
        owner=spec.name,
        role="unique guard",
        attribute=spec.table.pk,
    )


def _owner_text(key: Mapping[str, Wire]) -> str:
    return json.dumps([next(iter(v.values())) for v in key.values()], ensure_ascii=False)


def guard_put(
    spec: EntitySpec,
    field_name: str,
    value: Any,
    owner: Mapping[str, Wire],
    ttl: Wire | None,
    ctx: WriteContext,
    *,
    previous_owner: Mapping[str, Wire] | None = None,
) -> WriteOp:
    """Claim ``value`` for ``owner``: the guard must be absent, expired or already ours."""
    table = spec.table
    key = guard_key(spec, field_name, value)
    item: dict[str, Wire] = {
        **key,
        table.type_attribute: {"S": GUARD_TYPE},
        OWNER_ATTRIBUTE: {"S": _owner_text(owner)},
    }
    if ttl is not None and table.ttl_attribute:
        item[table.ttl_attribute] = ttl
    owners = [owner] + ([previous_owner] if previous_owner is not None else [])
    values = {f"@own{i}": {"S": _owner_text(o)} for i, o in enumerate(owners)}
    owned = " OR ".join(f"@owner = @own{i}" for i in range(len(owners)))
    text = f"attribute_not_exists(@pk) OR {owned}"
    names = {"@pk": table.pk, "@owner": OWNER_ATTRIBUTE}
    if table.ttl_attribute:
        text += " OR @ttl < @now"
        names["@ttl"] = table.ttl_attribute
        values["@now"] = {"N": str(ctx.now_epoch)}
    params: dict[str, Any] = {"TableName": ctx.table_name, "Item": item}
    _compile_condition(None, raw_condition(text, names, values), params)

    def fail(_old: dict[str, Wire] | None) -> SingleTableError:
        return UniqueConstraintViolation(
            f"{spec.name}.{field_name} = {value!r} is already taken by another {spec.name}",
            key=key_text(key),
            field=field_name,
        )

    return WriteOp(
        "guard_put", "PutItem", spec, spec.type_name, key, params, f"unique {field_name}", fail
    )


def guard_delete(
    spec: EntitySpec, field_name: str, value: Any, owner: Mapping[str, Wire], ctx: WriteContext
) -> WriteOp:
    """Release ``value``: delete the guard if ``owner`` holds it (a no-op otherwise)."""
    key = guard_key(spec, field_name, value)
    params: dict[str, Any] = {"TableName": ctx.table_name, "Key": key}
    condition = raw_condition(
        "attribute_not_exists(@pk) OR @owner = @own",
        {"@pk": spec.table.pk, "@owner": OWNER_ATTRIBUTE},
        {"@own": {"S": _owner_text(owner)}},
    )
    _compile_condition(None, condition, params)

    def fail(_old: dict[str, Wire] | None) -> SingleTableError:
        return ConditionFailed(
            f"the unique guard of {spec.name}.{field_name} = {value!r} belongs to another item",
            key=key_text(key),
        )

    return WriteOp(
        "guard_delete",
        "DeleteItem",
        spec,
        spec.type_name,
        key,
        params,
        f"unique {field_name}",
        fail,
    )


def _ttl_wire(spec: EntitySpec, item: Mapping[str, Wire]) -> Wire | None:
    ttl = spec.table.ttl_attribute
    return item.get(ttl) if ttl and spec.ttl_field else None


class _NamesOnly(ExpressionBuilder):
    """Writes attribute names as they are and every value as ``?`` (for error messages)."""

    def name(self, attribute: str) -> str:
        return attribute

    def value(self, wire: Wire) -> str:
        return "?"


def condition_text(condition: Condition) -> str:
    """``condition`` as an error message shows it: attribute names and operators, every value
    as ``?`` (``stock >= ?``). Values are left out because they are compared with item contents
    and often are such contents (an email, a name): messages never carry them, and the caller
    has them at hand anyway."""
    try:
        return condition.compile(CompileContext(_NamesOnly(), lambda _path, _value: {"NULL": True}))
    except SingleTableError:  # e.g. a Param without its value: show the attribute names only
        return f"a condition on {', '.join(sorted(condition.attribute_paths())) or 'the item'}"


def _stale_or_failed(
    spec: EntitySpec,
    key: Mapping[str, Wire],
    current: Any,
    expected_version: int | None,
    verb: str,
    *,
    condition: Condition | None = None,
    expected: Mapping[str, Any] | None = None,
) -> SingleTableError:
    """The error of a write whose condition failed on an existing (or not returned) item.

    Inputs: ``current`` the stored entity returned with the failure (None when there is none or
    the backend returned none), the version and field values (``expected``) the write was
    conditioned on, and the caller's ``condition``. In this order: another stored version is a
    :class:`VersionConflict`; another stored value of an ``expected`` field is a
    :class:`ConditionFailed` naming the field (the item changed since it was read); else the
    caller's condition failed: :class:`ConditionFailed` showing it (:func:`condition_text`).
    """
    where = f"{verb} {spec.name} {key_text(key)}"
    if spec.version_field and expected_version is not None:
        stored = getattr(current, spec.version_field) if current is not None else 0
        if stored != expected_version:
            return VersionConflict(
                f"{spec.name} {key_text(key)} is at version {stored}, not "
                f"{expected_version}; reload it and retry",
                key=key_text(key),
                item=current,
            )
    if current is not None and expected:
        moved = [name for name, value in expected.items() if getattr(current, name) != value]
        if moved:
            return ConditionFailed(
                f"{where}: the stored {', '.join(moved)} changed since the write read it "
                "(a concurrent write); read the item again and retry",
                key=key_text(key),
                item=current,
            )
    if condition is not None:
        unsure = ""
        if expected and current is None:  # no item came back to tell which condition failed
            unsure = " (or the stored item changed since it was read)"
        return ConditionFailed(
            f"{where}: the condition= you passed did not hold{unsure}: {condition_text(condition)}",
            key=key_text(key),
            item=current,
        )
    return ConditionFailed(
        f"the condition on {where} did not hold (the stored item changed since it was read?)",
        key=key_text(key),
        item=current,
    )


# -- put / create ------------------------------------------------------------------------------


def compile_create(
    spec: EntitySpec, entity: Any, ctx: WriteContext, condition: Condition | None = None
) -> WriteOp:
    """Put that requires the item to be absent (or expired)."""
    entity = stamped(spec, entity, ctx, creating=True)
    item = spec.to_item(entity)
    key = spec.primary_key(spec.key_values(entity))
    ttl_attr = spec.table.ttl_attribute if spec.ttl_field else None
    params: dict[str, Any] = {"TableName": ctx.table_name, "Item": item}
    _compile_condition(
        spec, all_of([_absent_condition(spec.table.pk, ttl_attr, ctx), condition]), params
    )

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        if condition is None or (old and not _is_expired(spec, old, ctx)):
            return AlreadyExists(
                f"{spec.name} {key_text(key)} already exists", key=key_text(key), item=current
            )
        return ConditionFailed(
            f"creating {spec.name} {key_text(key)}: the condition= you passed did not hold: "
            f"{condition_text(condition)}",
            key=key_text(key),
            item=current,
        )

    op = WriteOp(
        "create", "PutItem", spec, spec.type_name, key, params, spec.describe_key(key), fail
    )
    op.result = _as_stored(spec, item)
    op.guards = [
        guard_put(spec, f, getattr(entity, f), key, _ttl_wire(spec, item), ctx)
        for f in spec.unique_fields
        if getattr(entity, f) is not None
    ]
    return op


def compile_put(
    spec: EntitySpec,
    entity: Any,
    ctx: WriteContext,
    condition: Condition | None = None,
    *,
    previous: Any = None,
    previous_known: bool = False,
) -> WriteOp:
    """Overwrite. With ``Version()``, the stored version must equal the entity's (absent when 0).

    For entities with ``Unique()`` fields the caller passes the stored item (``previous``), read
    first, so guards can move; the put is then conditioned on that item's unique values.
    """
    entity = stamped(spec, entity, ctx, creating=False)
    item = spec.to_item(entity)
    key = spec.primary_key(spec.key_values(entity))
    conditions: list[Condition | None] = [condition]
    expected_version = None
    if spec.version_field:
        expected_version = getattr(entity, spec.version_field) - 1
        if expected_version == 0:
            # Version 0 is an entity never stored: the item must be absent (or expired).
            ttl_attr = spec.table.ttl_attribute if spec.ttl_field else None
            conditions.append(_absent_condition(spec.table.pk, ttl_attr, ctx))
        else:
            conditions.append(_version_condition(spec, expected_version))
    guards: list[WriteOp] = []
    expected: dict[str, Any] = {}
    if spec.unique_fields and previous_known:
        ttl = _ttl_wire(spec, item)
        for f in spec.unique_fields:
            new_value = getattr(entity, f)
            old_value = getattr(previous, f) if previous is not None else None
            if previous is not None:
                expected[f] = old_value
            attr = Attr(spec.attr_names[f])
            if previous is None:
                conditions.append(_absent_condition(spec.table.pk, None, ctx) | attr.not_exists())
            elif old_value is None:
                conditions.append(attr.not_exists())
            else:
                conditions.append(attr.eq(old_value))
            if new_value != old_value:
                if old_value is not None:
                    guards.append(guard_delete(spec, f, old_value, key, ctx))
                if new_value is not None:
                    guards.append(guard_put(spec, f, new_value, key, ttl, ctx))
            elif new_value is not None:
                guards.append(guard_put(spec, f, new_value, key, ttl, ctx))
    params: dict[str, Any] = {"TableName": ctx.table_name, "Item": item}
    _compile_condition(spec, all_of(conditions), params)

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        return _stale_or_failed(
            spec, key, current, expected_version, "putting", condition=condition, expected=expected
        )

    op = WriteOp("put", "PutItem", spec, spec.type_name, key, params, spec.describe_key(key), fail)
    op.result = _as_stored(spec, item)
    op.guards = guards
    return op


# -- update ------------------------------------------------------------------------------------


class _Unknown(Exception):
    """User code (a callable ``when=``, a computed field) read a field the update does not know."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


_MISSING = object()


class _FieldReader:
    """The entity as far as an update knows it, handed to user code in its place.

    Reading a field returns its known value and records the read; reading a field the update
    does not know raises :class:`_Unknown`. Properties (computed fields included), cached
    properties and methods of the entity class run against the reader, so the fields *they*
    read are recorded and checked too. Read-only.
    """

    __slots__ = ("_cls", "_fields", "_reads", "_values")

    def __init__(self, spec: EntitySpec, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_cls", spec.cls)
        object.__setattr__(self, "_fields", spec.cls.model_fields)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_reads", {})

    def __getattr__(self, name: str) -> Any:
        if name in self._fields:
            self._reads[name] = None
            try:
                return self._values[name]
            except KeyError:
                raise _Unknown(name) from None
        found = inspect.getattr_static(self._cls, name, _MISSING)
        if isinstance(found, property) and found.fget is not None:
            return found.fget(self)
        if isinstance(found, functools.cached_property):
            return found.func(self)
        if isinstance(found, staticmethod):
            return found.__func__
        if isinstance(found, classmethod):
            return types.MethodType(found.__func__, self._cls)
        if inspect.isfunction(found):
            return types.MethodType(found, self)
        if found is _MISSING:
            raise AttributeError(f"{self._cls.__qualname__} has no attribute {name!r}")
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self._cls.__qualname__} is read-only during the evaluation")

    @property
    def reads(self) -> list[str]:
        """The fields read so far, in order."""
        return list(self._reads)


def _evaluate(
    spec: EntitySpec, values: Mapping[str, Any], code: Callable[[Any], Any], what: str, key: str
) -> tuple[Any, list[str]]:
    """``code(entity)`` evaluated on ``values`` (what an update knows) through a
    :class:`_FieldReader`: returns (result, fields read, in order). Raises :class:`_Unknown`
    when ``code`` reads a field missing from ``values``; any other exception ``code`` raises
    becomes a :class:`KeyTemplateError` naming ``what`` (its ``key``; the exception is the
    cause)."""
    reader = _FieldReader(spec, values)
    try:
        result = code(reader)
    except _Unknown:
        raise
    except Exception as exc:
        raise KeyTemplateError(
            f"updating {spec.name}: evaluating {what} raised {type(exc).__name__}; singletable "
            "evaluates it on a read-only stand-in for the entity that holds the fields the update "
            "knows (fields, properties and methods work)",
            key=key,
        ) from exc
    return result, reader.reads


@functools.cache
def _optional_key_fields(spec: EntitySpec, index: IndexSpec) -> tuple[str, ...]:
    """The template fields of ``index`` that may be None (nullable or computed): an entity
    whose value is None is left out of the index, as :meth:`EntitySpec.to_item` does."""
    nullable = {p.name for p in spec.codec.fields if p.nullable}
    maybe_none = nullable | set(spec.computed_in_keys)
    primary = set(spec.primary_fields)
    return tuple(
        dict.fromkeys(f for f in index.template_fields if f in maybe_none and f not in primary)
    )


class _Refusal:
    """The :class:`KeyTemplateError` of an update that needs a field it does not know."""

    def __init__(self, spec: EntitySpec, touched: Iterable[str], blind: Mapping[str, str]):
        self.spec = spec
        maintained = {spec.version_field, spec.updated_field}
        changes = sorted(f for f in touched if f not in maintained)
        self.changes = ", ".join(changes or sorted(touched))
        self.blind = blind

    def unknown(self, field: str, needed_for: str, hint: str = "") -> KeyTemplateError:
        spec = self.spec
        if field in self.blind:
            return KeyTemplateError(
                f"updating {spec.name}: {needed_for} needs {field!r}, which this update changes "
                f"by {self.blind[field]}, so its new value is not known here; use set= with the "
                "new value, or update the entity instance",
                key=field,
            )
        return KeyTemplateError(
            f"updating {spec.name} changes {self.changes}; {needed_for} needs {field!r}, which "
            f"the update does not know: the update must also know {field} (pass it in set=, or "
            f"update the entity instance{hint}) so no index key is ever stale or partial",
            key=field,
        )


def index_changes(
    spec: EntitySpec,
    known: Mapping[str, Any],
    touched: set[str],
    blind: Mapping[str, str],
    *,
    every_attribute: bool = False,
) -> tuple[dict[str, Wire], list[str], dict[str, list[str]]]:
    """The index key attributes an update must SET and REMOVE, one attribute at a time.

    Inputs: ``known`` field values after the update (the key fields and ``set=`` values in the
    keyword form; every field in the instance form), ``touched`` the fields the update changes,
    ``blind`` those it changes in ways the client cannot compute (field -> ``"add"``,
    ``"append"``, ...; they are not in ``known``), ``every_attribute`` (an upsert, which may
    create the item, writes every index attribute).

    Rules (the same derivation as :meth:`EntitySpec.to_item`):

    * user code can read any field, so when anything is touched every callable ``when=`` and
      every computed field in an index template is evaluated on ``known`` (a read of an unknown
      field refuses the update, naming it); a computed field is changed when it read a touched
      field;
    * an attribute is rewritten when its template reads a changed field, or when the membership
      of an index it belongs to may change (a ``when=`` field, a field the callable read, or a
      field that may be None in its templates was touched): membership adds or removes **both**
      attributes of the index;
    * a rewritten attribute is SET when one of its indexes holds the item (which must then be
      decidable from ``known``) and every field of its template is known, else REMOVEd.

    Returns ``(set, remove, sources)``: ``sources`` maps each index whose attributes are written
    to the fields the decision read (what an instance-form update conditions on). Raises
    :class:`KeyTemplateError` naming the first field needed but not known.
    """
    if not touched:
        return {}, [], {}
    refuse = _Refusal(spec, touched, blind)
    base_attrs = {spec.base.keys.pk, spec.base.keys.sk}
    base_fields = set(spec.base.template_fields)
    fields = spec.cls.model_fields
    values = {n: v for n, v in known.items() if n in fields}  # what user code may read
    derived: dict[str, Any] = dict(known)  # what templates render from (+ computed fields)
    reads_of: dict[str, list[str]] = {n: [n] for n in fields}
    changed = set(touched)

    in_index = {f for index in spec.indexes.values() for f in index.template_fields}
    for name in spec.computed_in_keys:
        if name not in in_index or name in base_fields:
            continue  # a primary-key field never changes in place
        where = f"{name} (computed, in an index key)"
        try:
            value, reads = _evaluate(spec, values, operator.attrgetter(name), where, name)
        except _Unknown as exc:
            raise refuse.unknown(exc.field, where) from None
        derived[name] = value
        reads_of[name] = reads
        if set(reads) & touched:
            changed.add(name)

    # Callable conditions: evaluated on every update that touches anything.
    verdicts: dict[str, tuple[bool, list[str]]] = {}
    for index_name, index in spec.indexes.items():
        if index.when_callable is None:
            continue
        where = (
            f"the when= callable of sparse index {index_name} (evaluated on every update: "
            "it may read any field)"
        )
        try:
            result, reads = _evaluate(spec, values, index.when_callable, where, index_name)
        except _Unknown as exc:
            hint = ", or declare when={field: value} so singletable knows what it reads"
            raise refuse.unknown(exc.field, where, hint) from None
        verdicts[index_name] = (bool(result), reads)

    def may_leave_or_join(index_name: str, index: IndexSpec) -> bool:
        if every_attribute:
            return True
        inputs = set(index.when_fields) | set(_optional_key_fields(spec, index))
        if index_name in verdicts:
            inputs |= set(verdicts[index_name][1])
        return bool(inputs & changed)

    memberships: dict[str, tuple[bool, list[str]]] = {}

    def membership(index_name: str, index: IndexSpec) -> tuple[bool, list[str]]:
        """Whether the item is in ``index`` after the update, and the fields that decided."""
        if index_name in memberships:
            return memberships[index_name]
        reads: list[str] = []
        unknown: list[str] = []
        result: bool | None = None
        for fname, allowed in (index.when or {}).items():
            reads.append(fname)
            if fname not in derived:
                unknown.append(fname)
            elif derived[fname] not in allowed:
                result = False
                break
        if result is None and index_name in verdicts:
            verdict, callable_reads = verdicts[index_name]
            reads.extend(callable_reads)
            if not verdict:
                result = False
        if result is None:
            for fname in _optional_key_fields(spec, index):
                reads.extend(reads_of.get(fname, [fname]))
                if fname not in derived:
                    unknown.append(fname)
                elif derived[fname] is None:
                    result = False
                    break
        if result is None:
            if unknown:
                raise refuse.unknown(
                    unknown[0], f"deciding whether the item is in sparse index {index_name}"
                )
            result = True
        memberships[index_name] = (result, reads)
        return result, reads

    writers: dict[str, list[tuple[str, IndexSpec, KeyTemplate]]] = {}
    for index_name, index in spec.indexes.items():
        for attr, tpl in ((index.keys.pk, index.pk), (index.keys.sk, index.sk)):
            if tpl is not None and attr and attr not in base_attrs:
                writers.setdefault(attr, []).append((index_name, index, tpl))

    to_set: dict[str, Wire] = {}
    to_remove: list[str] = []
    sources: dict[str, list[str]] = {}
    for attr, entries in writers.items():
        template = entries[0][2]  # every writer of one attribute has the same template
        rewrite = every_attribute or bool(set(template.fields) & changed)
        rewrite = rewrite or any(may_leave_or_join(n, i) for n, i, _ in entries)
        if not rewrite:
            continue
        present = False
        for index_name, index, _ in entries:
            member, reads = membership(index_name, index)
            sources.setdefault(index_name, []).extend(reads)
            if member:
                present = True
                break
        if not present:
            to_remove.append(attr)
            continue
        role = f"{attr} (index {entries[0][0]}, {template.text!r})"
        for fname in template.fields:
            if fname not in derived:
                raise refuse.unknown(fname, role)
            sources.setdefault(entries[0][0], []).extend(reads_of.get(fname, [fname]))
        to_set[attr] = {"S": template.render(derived)}
    return (
        to_set,
        to_remove,
        {name: list(dict.fromkeys(reads)) for name, reads in sources.items()},
    )


def _field_kind(spec: EntitySpec, name: str) -> str:
    annotation = spec.cls.model_fields[name].annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            annotation = args[0]
            origin = typing.get_origin(annotation)
    if origin in (set, frozenset) or annotation in (set, frozenset):
        return "set"
    if origin in (list, tuple) or annotation in (list, tuple):
        return "list"
    from decimal import Decimal

    if (
        isinstance(annotation, type)
        and issubclass(annotation, (int, float, Decimal))
        and not issubclass(annotation, bool)
    ):
        return "number"
    return "other"


def compile_update(
    spec: EntitySpec,
    ctx: WriteContext,
    *,
    key_fields: Mapping[str, Any],
    set_values: Mapping[str, Any] | None = None,
    remove: Iterable[str] = (),
    add: Mapping[str, Any] | None = None,
    delete: Mapping[str, Any] | None = None,
    append: Mapping[str, Any] | None = None,
    if_not_exists: Mapping[str, Any] | None = None,
    condition: Condition | None = None,
    upsert: bool = False,
    instance: Any = None,
    previous_unique: Mapping[str, Any] | None = None,
    guard_ttl: datetime | None = None,
) -> WriteOp:
    """UpdateItem from key fields plus changes (the keyword form), or from an instance.

    With ``instance``, every field the update does not change is known from the instance; the
    update is then conditioned on the stored values it derives keys from (or on the version).
    """
    set_values = dict(set_values or {})
    add = dict(add or {})
    delete = dict(delete or {})
    append = dict(append or {})
    if_not_exists = dict(if_not_exists or {})
    remove = list(remove)
    fields = spec.cls.model_fields
    primary = set(spec.primary_fields)
    mentioned = [*set_values, *remove, *add, *delete, *append, *if_not_exists]
    for name in mentioned:
        if name not in fields:
            raise InvalidRequestError(f"{spec.name} has no field {name!r} to update", key=name)
        if name in primary:
            raise InvalidRequestError(
                f"{spec.name}.{name} is part of the primary key and cannot be updated in place; "
                f"use repo.move(entity, {name}=...) to re-key the item",
                key=name,
            )
        if name in (spec.version_field, spec.created_field, spec.updated_field):
            raise InvalidRequestError(
                f"{spec.name}.{name} is maintained by singletable and cannot be set", key=name
            )
    seen: set[str] = set()
    for name in mentioned:
        if name in seen:
            raise InvalidRequestError(f"{spec.name}.{name} appears in two update clauses", key=name)
        seen.add(name)
    for name in remove:
        if fields[name].is_required():
            raise InvalidRequestError(
                f"{spec.name}.{name} is required and cannot be removed", key=name
            )
    for name in add:
        kind = _field_kind(spec, name)
        if kind not in ("number", "set"):
            raise InvalidRequestError(
                f"add= needs a number or set field; {name!r} is not", key=name
            )
    for name in delete:
        if _field_kind(spec, name) != "set":
            raise InvalidRequestError(f"delete= needs a set field; {name!r} is not", key=name)
    for name in append:
        if _field_kind(spec, name) != "list":
            raise InvalidRequestError(f"append= needs a list field; {name!r} is not", key=name)

    coerced_keys = {n: spec.coerce(n, v) for n, v in key_fields.items()}
    key = spec.key_of_fields(coerced_keys)
    coerced_set = {n: _coerce_value(spec, n, v) for n, v in set_values.items()}
    coerced_ine = {n: _coerce_value(spec, n, v) for n, v in if_not_exists.items()}

    if upsert and instance is None:
        given = set(coerced_keys) | set(coerced_set) | set(coerced_ine) | set(add)
        missing = [n for n, info in fields.items() if info.is_required() and n not in given]
        if missing:
            raise InvalidRequestError(
                f"upsert of {spec.name} would create an item without {', '.join(missing)}; "
                "pass them in set= or if_not_exists=",
                key=missing[0],
            )

    # What the update knows after it is applied, and what it changes (blind: in ways the
    # client cannot compute). The maintained fields change on every update.
    known: dict[str, Any] = {}
    if instance is not None:
        known.update({n: getattr(instance, n) for n in fields})
        for name in spec.computed_in_keys:
            known[name] = getattr(instance, name)
    known.update(coerced_keys)
    known.update(coerced_set)
    for name in remove:
        known[name] = None
    touched = (
        set(coerced_set) | set(remove) | set(add) | set(delete) | set(append) | set(coerced_ine)
    )
    blind = {n: "add=" for n in add} | {n: "delete=" for n in delete}
    blind |= {n: "append=" for n in append}
    if instance is None:
        blind |= {n: "if_not_exists=" for n in coerced_ine}
    if spec.updated_field:
        touched.add(spec.updated_field)
        known[spec.updated_field] = ctx.now
    if spec.version_field:
        touched.add(spec.version_field)
        if instance is not None:
            known[spec.version_field] = getattr(instance, spec.version_field) + 1
        else:
            blind[spec.version_field] = "adding 1 to the version (Version())"
    if upsert and spec.created_field and instance is None:
        touched.add(spec.created_field)
        blind[spec.created_field] = "if_not_exists (an upsert sets it only on a new item)"
    for name in blind:
        known.pop(name, None)
    index_set, index_remove, sources = index_changes(
        spec, known, touched, blind, every_attribute=upsert
    )

    builder = ExpressionBuilder()
    update = UpdateExpression(builder)
    for name, value in coerced_set.items():
        wire = spec.encode_field(name, value)
        attr = spec.attr_names[name]
        if wire is None:
            update.remove(attr)
        else:
            update.set(attr, wire)
    for name in remove:
        update.remove(spec.attr_names[name])
    for name, value in coerced_ine.items():
        wire = spec.encode_field(name, value)
        if wire is not None:
            update.set_if_not_exists(spec.attr_names[name], wire)
    for name, value in add.items():
        update.add(spec.attr_names[name], _delta_wire(spec, name, value))
    for name, value in delete.items():
        update.delete(spec.attr_names[name], _delta_wire(spec, name, value))
    for name, value in append.items():
        wire = spec.encode_field(name, list(value))
        if wire is not None:
            update.append(spec.attr_names[name], wire)
    for attr, wire in index_set.items():
        update.set(attr, wire)
    for attr in index_remove:
        update.remove(attr)
    table = spec.table
    if spec.version_field:
        update.add(spec.attr_names[spec.version_field], {"N": "1"})
    if spec.updated_field:
        update.set(spec.attr_names[spec.updated_field], {"S": datetime_text(ctx.now)})
    if upsert:
        update.set_if_not_exists(table.type_attribute, {"S": spec.type_name})
        for name, value in coerced_keys.items():
            wire = spec.encode_field(name, value)
            if wire is not None and name in fields:
                update.set_if_not_exists(spec.attr_names[name], wire)
        if spec.created_field:
            update.set_if_not_exists(
                spec.attr_names[spec.created_field], {"S": datetime_text(ctx.now)}
            )
    if not update:
        raise InvalidRequestError(f"update of {spec.name} {key_text(key)} changes nothing")

    conditions: list[Condition | None] = [condition]
    if not upsert:
        conditions.append(_exists_condition(spec, ctx))
    expected_version = None
    expected: dict[str, Any] = {}  # stored values the update is conditioned on
    if instance is not None:
        if spec.version_field:
            expected_version = getattr(instance, spec.version_field)
            conditions.append(_version_condition(spec, expected_version))
        else:
            # The key attributes written were derived from these stored values too: a
            # concurrent change of one of them fails the update instead of leaving a stale key.
            derived_from = {f for names in sources.values() for f in names} - touched - primary
            for name in sorted(derived_from):
                if name not in fields:
                    continue
                value = getattr(instance, name)
                expected[name] = value
                stored = Attr(spec.attr_names[name])
                conditions.append(stored.not_exists() if value is None else stored.eq(value))
    guards: list[WriteOp] = []
    if previous_unique is not None:
        for name, old_value in previous_unique.items():
            if name not in coerced_set and name not in remove:
                continue
            new_value = None if name in remove else coerced_set[name]
            expected[name] = old_value
            stored = Attr(spec.attr_names[name])
            conditions.append(stored.not_exists() if old_value is None else stored.eq(old_value))
            if new_value == old_value:
                continue
            if old_value is not None:
                guards.append(guard_delete(spec, name, old_value, key, ctx))
            if new_value is not None:
                ttl = {"N": epoch_text(guard_ttl)} if guard_ttl is not None else None
                guards.append(guard_put(spec, name, new_value, key, ttl, ctx))

    params: dict[str, Any] = {
        "TableName": ctx.table_name,
        "Key": key,
        "UpdateExpression": update.render(),
    }
    compiled_condition = all_of(conditions)
    if compiled_condition is not None:
        cbuilder = ExpressionBuilder("c")
        params["ConditionExpression"] = compiled_condition.compile(
            CompileContext(cbuilder, _encoder(spec))
        )
        builder.names.update(cbuilder.names)
        builder.values.update(cbuilder.values)
    builder.merge_into(params)
    params["ReturnValues"] = "ALL_NEW"

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        if not upsert and (not old or _is_expired(spec, old, ctx)):
            return NotFound(
                f"{spec.name} {key_text(key)} does not exist (update needs an existing item; "
                "pass upsert=True to create it)",
                key=key_text(key),
                item=None,
            )
        return _stale_or_failed(
            spec, key, current, expected_version, "updating", condition=condition, expected=expected
        )

    op = WriteOp(
        "update", "UpdateItem", spec, spec.type_name, key, params, spec.describe_key(key), fail
    )
    op.guards = guards
    return op


def _coerce_value(spec: EntitySpec, name: str, value: Any) -> Any:
    if value is None:
        if spec.cls.model_fields[name].is_required() and not _is_optional(spec, name):
            raise InvalidRequestError(f"{spec.name}.{name} cannot be None", key=name)
        return None
    try:
        return spec.coerce(name, value)
    except KeyTemplateError as exc:
        raise InvalidRequestError(exc.message, key=name) from None


def _is_optional(spec: EntitySpec, name: str) -> bool:
    annotation = spec.cls.model_fields[name].annotation
    return type(None) in typing.get_args(annotation)


def _delta_wire(spec: EntitySpec, name: str, value: Any) -> Wire:
    if isinstance(value, (set, frozenset, list, tuple)):
        if not value:
            raise InvalidRequestError(f"{spec.name}.{name}: an empty set changes nothing", key=name)
        return encode_value(set(value))
    return encode_value(value)


# -- delete ------------------------------------------------------------------------------------


def compile_delete(
    spec: EntitySpec,
    ctx: WriteContext,
    *,
    key: dict[str, Wire],
    instance: Any = None,
    condition: Condition | None = None,
    must_exist: bool = False,
    unique_values: Mapping[str, Any] | None = None,
    absent: bool = False,
    unchanged: Any = None,
) -> WriteOp:
    """DeleteItem returning the old item; guards of ``unique_values`` are released with it.

    Inputs: the caller's ``condition`` and ``must_exist``; ``instance``, the entity the delete
    was built from (its version is required with ``Version()``); ``unique_values``, the stored
    unique values read first (each is required to be still stored, and its guard is deleted);
    ``absent`` when the item was read first and no live entity of this type was found (the
    delete then requires that to hold still: a concurrent create fails it instead of being
    deleted without its guards); ``unchanged``, an entity whose stored scalar fields must all be
    unchanged (:func:`unchanged_condition`).
    """
    conditions: list[Condition | None] = [condition]
    expected: dict[str, Any] = {}
    if must_exist:
        conditions.append(_exists_condition(spec, ctx))
    if absent:
        conditions.append(_no_live_entity(spec, ctx))
    expected_version = None
    if instance is not None and spec.version_field:
        expected_version = getattr(instance, spec.version_field)
        conditions.append(_version_condition(spec, expected_version))
    if unchanged is not None:
        conditions.append(unchanged_condition(spec, unchanged))
        expected.update({name: getattr(unchanged, name) for name in _scalar_fields(spec)})
    guards: list[WriteOp] = []
    if unique_values:
        for name, value in unique_values.items():
            attr = Attr(spec.attr_names[name])
            conditions.append(attr.not_exists() if value is None else attr.eq(value))
            expected[name] = value
            if value is not None:
                guards.append(guard_delete(spec, name, value, key, ctx))
    params: dict[str, Any] = {"TableName": ctx.table_name, "Key": key}
    _compile_condition(spec, all_of(conditions), params)
    params["ReturnValues"] = "ALL_OLD"

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        if must_exist and (not old or _is_expired(spec, old, ctx)):
            return NotFound(f"{spec.name} {key_text(key)} does not exist", key=key_text(key))
        if absent and current is not None:
            return ConditionFailed(
                f"deleting {spec.name} {key_text(key)}: the item was created after the delete "
                "read it as absent (a concurrent create); read it again and retry",
                key=key_text(key),
                item=current,
            )
        return _stale_or_failed(
            spec, key, current, expected_version, "deleting", condition=condition, expected=expected
        )

    op = WriteOp(
        "delete", "DeleteItem", spec, spec.type_name, key, params, spec.describe_key(key), fail
    )
    op.guards = guards
    return op


def _no_live_entity(spec: EntitySpec, ctx: WriteContext) -> Condition:
    """No live entity of ``spec``'s type at the key: no item, another type, or expired."""
    table = spec.table
    text = "attribute_not_exists(@pk) OR @type <> @tag"
    names = {"@pk": table.pk, "@type": table.type_attribute}
    values: dict[str, Wire] = {"@tag": {"S": spec.type_name}}
    if spec.ttl_field and table.ttl_attribute:
        text += " OR @ttl < @now"
        names["@ttl"] = table.ttl_attribute
        values["@now"] = {"N": str(ctx.now_epoch)}
    return raw_condition(text, names, values)


def _scalar_fields(spec: EntitySpec) -> list[str]:
    """Fields stored as one scalar (S, N, BOOL, B) outside the primary key."""
    primary = {spec.table.pk, spec.table.sk}
    return [
        plan.name
        for plan in spec.codec.fields
        if plan.attr not in primary and plan.converter.wire_tag in ("S", "N", "BOOL", "B")
    ]


def unchanged_condition(spec: EntitySpec, instance: Any) -> Condition | None:
    """The stored scalar attributes still equal ``instance``'s: a write built from a stale copy
    of an entity without ``Version()`` fails instead of losing a concurrent change."""
    item = spec.to_item(instance)
    conditions: list[Condition | None] = []
    for name in _scalar_fields(spec):
        attr = spec.attr_names[name]
        stored = Attr(attr)
        conditions.append(
            stored.not_exists() if item.get(attr) is None else stored.eq(getattr(instance, name))
        )
    return all_of(conditions)


def exists_check(
    spec: EntitySpec, ctx: WriteContext, key: dict[str, Wire], condition: Condition | None
) -> WriteOp:
    """The op of an update that changes nothing: the item must exist (and ``condition`` hold)."""
    op = compile_condition_check(
        spec,
        ctx,
        key=key,
        condition=all_of([_exists_condition(spec, ctx), condition]),  # type: ignore[arg-type]
    )

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        if not old or _is_expired(spec, old, ctx):
            return NotFound(f"{spec.name} {key_text(key)} does not exist", key=key_text(key))
        text = condition_text(condition) if condition is not None else "the item exists"
        return ConditionFailed(
            f"updating {spec.name} {key_text(key)}: the condition= you passed did not hold: {text}",
            key=key_text(key),
            item=live_entity(spec, old, ctx),
        )

    op.fail = fail
    return op


def compile_condition_check(
    spec: EntitySpec, ctx: WriteContext, *, key: dict[str, Wire], condition: Condition
) -> WriteOp:
    params: dict[str, Any] = {"TableName": ctx.table_name, "Key": key}
    _compile_condition(spec, condition, params)

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        return ConditionFailed(
            f"the condition check on {spec.name} {key_text(key)} did not hold: "
            f"{condition_text(condition)}",
            key=key_text(key),
            item=live_entity(spec, old, ctx),
        )

    return WriteOp(
        "condition_check",
        "ConditionCheck",
        spec,
        spec.type_name,
        key,
        params,
        spec.describe_key(key),
        fail,
    )
