"""Single-item writes compiled to requests (pure: no I/O).

Every derived attribute (keys of the table and of each index, sparse-index membership, guard
items, version, timestamps, the TTL number) is computed from one complete, validated entity by
:meth:`EntitySpec.to_item`. A write is a :class:`WriteOp`: the request, the guard-item operations
that must go with it in one transaction, and how to turn a failed condition into the error the
caller should see. The same ops fill transactions, so semantics are identical there.
"""

from __future__ import annotations

import functools
import json
import typing
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from .codec import Wire, datetime_text, encode_value, epoch_text
from .entity import EntitySpec, IndexSpec
from .errors import (
    AlreadyExists,
    ConditionFailed,
    InvalidRequestError,
    KeyTemplateError,
    NotFound,
    SingleTableError,
    UniqueConstraintViolation,
    VersionConflict,
)
from .expressions import (
    Attr,
    CompileContext,
    Condition,
    ExpressionBuilder,
    UpdateExpression,
    all_of,
    raw_condition,
)
from .keys import KeyTemplate

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
    if not item:
        return None
    if spec.ttl_field and spec.table.ttl_attribute:
        av = item.get(spec.table.ttl_attribute)
        if av is not None and "N" in av and int(float(av["N"])) < ctx.now_epoch:
            return None
    tag = item.get(spec.table.type_attribute)
    if tag is None or tag.get("S") != spec.type_name:
        return None
    try:
        return spec.from_item(item)
    except SingleTableError:
        return None


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


def _stale_or_failed(
    spec: EntitySpec,
    key: Mapping[str, Wire],
    current: Any,
    expected_version: int | None,
    verb: str,
) -> SingleTableError:
    """A failed condition on an existing item: a version conflict when the stored version is
    not the expected one, else the condition itself failed."""
    if spec.version_field and expected_version is not None:
        stored = getattr(current, spec.version_field) if current is not None else 0
        if stored != expected_version:
            return VersionConflict(
                f"{spec.name} {key_text(key)} is at version {stored}, not "
                f"{expected_version}; reload it and retry",
                key=key_text(key),
                item=current,
            )
    return ConditionFailed(
        f"the condition on {verb} {spec.name} {key_text(key)} did not hold "
        "(the stored item changed since it was read?)",
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
            f"the condition on creating {spec.name} {key_text(key)} did not hold",
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
    if spec.unique_fields and previous_known:
        ttl = _ttl_wire(spec, item)
        for f in spec.unique_fields:
            new_value = getattr(entity, f)
            old_value = getattr(previous, f) if previous is not None else None
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
        return _stale_or_failed(spec, key, current, expected_version, "putting")

    op = WriteOp("put", "PutItem", spec, spec.type_name, key, params, spec.describe_key(key), fail)
    op.result = _as_stored(spec, item)
    op.guards = guards
    return op


# -- update ------------------------------------------------------------------------------------


class _Known:
    """Field values an update knows; reading any other field names it (for callable ``when``)."""

    def __init__(self, spec: EntitySpec, values: Mapping[str, Any]) -> None:
        self.__dict__["_spec"] = spec
        self.__dict__["_values"] = dict(values)

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__["_values"]
        if name in values:
            return values[name]
        spec = self.__dict__["_spec"]
        raise KeyTemplateError(
            f"updating {spec.name} needs {name!r} to decide sparse-index membership; pass it "
            "in set= or update the entity instance instead",
            key=name,
        )


def _index_inputs(index: IndexSpec) -> set[str]:
    return set(index.template_fields) | set(index.when_fields)


def index_changes(
    spec: EntitySpec, known: Mapping[str, Any], touched: set[str], blind: set[str]
) -> tuple[dict[str, Wire], list[str], dict[str, list[str]]]:
    """Key attributes to SET and REMOVE for an update that knows ``known`` field values.

    ``touched`` are the fields the update changes; ``blind`` are changed in ways the client
    cannot compute (ADD, append...). Returns (set, remove, index -> fields it was derived from).
    """
    to_set: dict[str, Wire] = {}
    to_remove: list[str] = []
    sources: dict[str, list[str]] = {}
    for name, index in spec.indexes.items():
        inputs = _index_inputs(index)
        if not inputs & touched:
            continue
        where = f"updating {spec.name} changes {sorted(inputs & touched)}, which feed index {name}"
        if inputs & blind:
            raise KeyTemplateError(
                f"{where}; its key cannot be recomputed from an ADD/append/DELETE of "
                f"{sorted(inputs & blind)[0]!r}; use set= with the new value",
                key=sorted(inputs & blind)[0],
            )
        missing = sorted(f for f in inputs if f not in known)
        if missing:
            raise KeyTemplateError(
                f"{where}; the update must also know {', '.join(missing)} (pass them in set=, "
                "or update the entity instance) so the key is never stale or partial",
                key=missing[0],
            )
        member = index.when_holds(known)
        if member and index.when_callable is not None:
            member = bool(index.when_callable(_Known(spec, known)))
        attrs = [
            (a, t) for a, t in ((index.keys.pk, index.pk), (index.keys.sk, index.sk)) if t and a
        ]
        if member and all(known[f] is not None for _, t in attrs for f in t.fields):
            for attr, template in attrs:
                to_set[attr] = {"S": template.render(known)}
        else:
            to_remove.extend(attr for attr, _ in attrs)
        sources[name] = sorted(inputs)
    return to_set, to_remove, sources


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
    blind = set(add) | set(delete) | set(append) | (set(coerced_ine) if instance is None else set())
    if spec.computed_in_keys and instance is not None and touched:
        # Computed fields follow the fields they are computed from: recompute them.
        merged = validated(spec, {**{n: getattr(instance, n) for n in fields}, **coerced_set})
        for name in spec.computed_in_keys:
            known[name] = getattr(merged, name)
        touched |= set(spec.computed_in_keys)
    index_set, index_remove, sources = index_changes(spec, known, touched, blind)

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
    if instance is not None:
        if spec.version_field:
            expected_version = getattr(instance, spec.version_field)
            conditions.append(_version_condition(spec, expected_version))
        else:
            derived_from = {f for names in sources.values() for f in names} - touched
            for name in sorted(derived_from):
                if name not in fields:
                    continue
                value = getattr(instance, name)
                stored = Attr(spec.attr_names[name])
                conditions.append(stored.not_exists() if value is None else stored.eq(value))
    guards: list[WriteOp] = []
    if previous_unique is not None:
        for name, old_value in previous_unique.items():
            if name not in coerced_set and name not in remove:
                continue
            new_value = None if name in remove else coerced_set[name]
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
        return _stale_or_failed(spec, key, current, expected_version, "updating")

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
) -> WriteOp:
    """DeleteItem returning the old item; guards of ``unique_values`` are released with it."""
    conditions: list[Condition | None] = [condition]
    if must_exist:
        conditions.append(_exists_condition(spec, ctx))
    expected_version = None
    if instance is not None and spec.version_field:
        expected_version = getattr(instance, spec.version_field)
        conditions.append(_version_condition(spec, expected_version))
    guards: list[WriteOp] = []
    if unique_values:
        for name, value in unique_values.items():
            attr = Attr(spec.attr_names[name])
            conditions.append(attr.not_exists() if value is None else attr.eq(value))
            if value is not None:
                guards.append(guard_delete(spec, name, value, key, ctx))
    params: dict[str, Any] = {"TableName": ctx.table_name, "Key": key}
    _compile_condition(spec, all_of(conditions), params)
    params["ReturnValues"] = "ALL_OLD"

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        if must_exist and (not old or _is_expired(spec, old, ctx)):
            return NotFound(f"{spec.name} {key_text(key)} does not exist", key=key_text(key))
        return _stale_or_failed(spec, key, current, expected_version, "deleting")

    op = WriteOp(
        "delete", "DeleteItem", spec, spec.type_name, key, params, spec.describe_key(key), fail
    )
    op.guards = guards
    return op


def unchanged_condition(spec: EntitySpec, instance: Any) -> Condition | None:
    """The stored scalar attributes still equal ``instance``'s: a write built from a stale copy
    of an entity without ``Version()`` fails instead of losing a concurrent change."""
    item = spec.to_item(instance)
    primary = {spec.table.pk, spec.table.sk}
    conditions: list[Condition | None] = []
    for plan in spec.codec.fields:
        if plan.attr in primary or plan.converter.wire_tag not in ("S", "N", "BOOL", "B"):
            continue
        wire = item.get(plan.attr)
        stored = Attr(plan.attr)
        conditions.append(
            stored.not_exists() if wire is None else stored.eq(getattr(instance, plan.name))
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
        return ConditionFailed(
            f"the condition on updating {spec.name} {key_text(key)} did not hold",
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
            f"the condition check on {spec.name} {key_text(key)} did not hold",
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
