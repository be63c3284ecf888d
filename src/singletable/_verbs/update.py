"""Updates compiled to one UpdateItem (pure: no I/O).

:func:`compile_update` runs in named phases: check the clauses and work out what they change
(:mod:`.update_clauses`), coerce the values, the index key attributes the update rewrites
(:func:`.index_keys.index_changes`), the update expression (:func:`_update_expression`), what it
is conditioned on (:func:`_instance_conditions`) and the unique guards it moves
(:func:`_guard_moves`). With the repository's compiled shapes (:mod:`.shapes`), the checks and
the expression text of a shape seen before are reused and only its values are bound.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

from .._codec import encode_value
from .._context import WriteContext
from .._entity_spec import EntitySpec
from .._expressions import (
    Attr,
    Condition,
    ExpressionBuilder,
    UpdateExpression,
    all_of,
)
from .._item_key import Key
from .._wire import Wire, datetime_text, epoch_text
from ..errors import InvalidRequestError, KeyTemplateError, NotFound, SingleTableError
from .guards import guard_delete, guard_put
from .index_keys import index_changes, index_unchanged
from .ops import (
    WriteOp,
    condition_encoder,
    exists_condition,
    live_entity,
    stale_or_failed,
    version_condition,
)
from .shapes import UpdateRecorder, condition_expression
from .update_clauses import Clauses, clause_shape, known
from .update_paths import missing_parent, parent_conditions


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
    prepend: Mapping[str, Any] | None = None,
    previous_unique: Mapping[str, Any] | None = None,
    guard_ttl: datetime | None = None,
) -> WriteOp:
    """UpdateItem from key fields plus changes (the keyword form), or from an instance.

    With ``instance``, every field the update does not change is known from the instance; the
    update is then conditioned on the stored values it derives keys from (or on the version).
    A clause entry may be a document path into a nested model, map or list
    (:mod:`.update_paths`).
    """
    clauses = Clauses(set_values, remove, add, delete, append, if_not_exists, prepend)
    shape = clause_shape(spec, ctx, clauses, instance is not None, upsert)

    coerced_keys = {n: spec.coerce(n, v) for n, v in key_fields.items()}
    key = spec.key_of_fields(coerced_keys)
    _coerce_clauses(spec, clauses, coerced_keys, instance, upsert)

    touched, blind = shape.changes(spec, clauses, instance is not None, upsert)
    index_set, index_remove, sources = _index_writes(
        spec, ctx, clauses, touched, blind, coerced_keys, instance, upsert
    )

    update = UpdateExpression(ExpressionBuilder()) if ctx.shapes is None else UpdateRecorder()
    _update_expression(spec, ctx, update, clauses, coerced_keys, index_set, index_remove, upsert)
    if not update:
        raise InvalidRequestError(f"update of {spec.name} {Key(key).text} changes nothing")

    conditions: list[Condition | None] = [condition]
    if not upsert:
        conditions.append(exists_condition(spec, ctx))
    expected_version, expected, on_instance = _instance_conditions(spec, instance, sources, touched)
    guards, expected_unique, on_unique = _guard_moves(
        spec, ctx, key, clauses, previous_unique, guard_ttl
    )
    conditions += on_instance
    conditions += on_unique
    conditions += parent_conditions(clauses.paths)
    expected.update(expected_unique)  # stored values the update is conditioned on

    params = _update_params(spec, ctx, key, update, all_of(conditions))

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        if not upsert and (not old or spec.expired(old, ctx.now_epoch())):
            return NotFound(
                f"{spec.name} {Key(key).text} does not exist (update needs an existing item; "
                "pass upsert=True to create it)",
                key=Key(key).text,
                item=None,
            )
        if old and clauses.paths:
            missing = missing_parent(spec, Key(key).text, clauses.paths, old, current)
            if missing is not None:
                return missing
        return stale_or_failed(
            spec, key, current, expected_version, "updating", condition=condition, expected=expected
        )

    op = WriteOp("update", "UpdateItem", spec, spec.type_name, key, params, None, fail)
    op.guards = guards
    return op


def _update_params(
    spec: EntitySpec,
    ctx: WriteContext,
    key: dict[str, Wire],
    update: UpdateExpression | UpdateRecorder,
    condition: Condition | None,
) -> dict[str, Any]:
    """The UpdateItem request: the update expression, its condition (placeholders prefixed
    ``c``), their names and values, and ``ReturnValues=ALL_NEW``; with the repository's shapes
    (``update`` is then an :class:`UpdateRecorder`), the text and names of a shape compiled
    before are reused."""
    shapes = ctx.shapes
    if isinstance(update, UpdateRecorder):
        assert shapes is not None
        text, names, values = shapes.update_expression(update)
    else:
        text, names, values = update.render(), update.builder.names, update.builder.values
    params: dict[str, Any] = {"TableName": ctx.table_name, "Key": key, "UpdateExpression": text}
    if condition is not None:
        compiled = condition_expression(condition, condition_encoder(spec), shapes)
        params["ConditionExpression"], condition_names, condition_values = compiled
        names.update(condition_names)
        values.update(condition_values)
    if names:
        params["ExpressionAttributeNames"] = names
    if values:
        params["ExpressionAttributeValues"] = values
    params["ReturnValues"] = "ALL_NEW"
    return params


def _coerce_clauses(
    spec: EntitySpec,
    clauses: Clauses,
    coerced_keys: Mapping[str, Any],
    instance: Any,
    upsert: bool,
) -> None:
    """Replace the ``set=``, ``if_not_exists=``, ``append=`` and ``prepend=`` values by their
    field types' (``Shard()`` fields derived), and validate every value at a document path
    against its type; a keyword upsert must give every required field."""
    clauses.set_values = {n: _coerced(spec, clauses, n, v) for n, v in clauses.set_values.items()}
    if spec.hashed_shards:
        clauses.set_values = _with_shards(spec, coerced_keys, clauses.set_values, instance, upsert)
    clauses.if_not_exists = {
        n: _coerced(spec, clauses, n, v) for n, v in clauses.if_not_exists.items()
    }
    for values in (clauses.add, clauses.delete, clauses.append, clauses.prepend):
        for name in values.keys() & clauses.paths.keys():  # a delta: not held to constraints
            values[name] = clauses.paths[name].validate(values[name], constraints=False)
    for values in (clauses.append, clauses.prepend):  # whole lists of the field's type
        for name in clauses.fields(values):
            values[name] = _coerce_value(spec, name, list(values[name]))
    if upsert and instance is None:
        _check_upsert_creates_whole_item(spec, coerced_keys, clauses)


def _check_upsert_creates_whole_item(
    spec: EntitySpec, coerced_keys: Mapping[str, Any], clauses: Clauses
) -> None:
    """A keyword upsert may create the item: it must give every required field."""
    given = set(coerced_keys) | set(clauses.set_values) | set(clauses.if_not_exists)
    given |= set(clauses.add)
    fields = spec.cls.model_fields
    missing = [n for n, info in fields.items() if info.is_required() and n not in given]
    if missing:
        raise InvalidRequestError(
            f"upsert of {spec.name} would create an item without {', '.join(missing)}; "
            "pass them in set= or if_not_exists=",
            key=missing[0],
        )


def _index_writes(
    spec: EntitySpec,
    ctx: WriteContext,
    clauses: Clauses,
    touched: AbstractSet[str],
    blind: Mapping[str, str],
    coerced_keys: Mapping[str, Any],
    instance: Any,
    upsert: bool,
) -> tuple[dict[str, Wire], list[str], dict[str, list[str]]]:
    """The index key attributes the update SETs and REMOVEs, and what decided them
    (:func:`.index_keys.index_changes`); what the update knows is worked out only when an
    index may change."""
    if index_unchanged(spec, touched, upsert):
        return {}, [], {}
    after = known(spec, ctx, clauses, coerced_keys, instance, blind)
    return index_changes(spec, after, touched, blind, every_attribute=upsert)


def _update_expression(
    spec: EntitySpec,
    ctx: WriteContext,
    update: UpdateExpression | UpdateRecorder,
    clauses: Clauses,
    coerced_keys: Mapping[str, Any],
    index_set: Mapping[str, Wire],
    index_remove: Iterable[str],
    upsert: bool,
) -> None:
    """The clauses, the index key attributes, the maintained fields and (for an upsert) what a
    new item needs, written to one update expression (or its recorder)."""
    native = spec.native_limits  # fields that key a native index: DynamoDB refuses "" there
    target = functools.partial(clauses.target, spec)
    for name, value in clauses.set_values.items():
        wire = clauses.stored_form(spec, name, value)
        if wire is None:
            update.remove(target(name))
        else:
            if name in native:
                spec.check_native_value(name, wire)
            update.set(target(name), wire)
    for name in clauses.remove:
        update.remove(target(name))
    for name, value in clauses.if_not_exists.items():
        wire = clauses.stored_form(spec, name, value)
        if wire is not None:
            if name in native:
                spec.check_native_value(name, wire)
            update.set_if_not_exists(target(name), wire)
    for name, value in clauses.add.items():
        update.add(target(name), _delta_wire(spec, clauses, name, value))
    for name, value in clauses.delete.items():
        update.delete(target(name), _delta_wire(spec, clauses, name, value))
    for name, value in clauses.append.items():
        wire = clauses.stored_form(spec, name, list(value))
        if wire is not None:
            update.append(target(name), wire)
    for name, value in clauses.prepend.items():
        wire = clauses.stored_form(spec, name, list(value))
        if wire is not None:
            update.prepend(target(name), wire)
    for attr, wire in index_set.items():
        update.set(attr, wire)
    for attr in index_remove:
        update.remove(attr)
    table = spec.table
    if spec.version_field:
        update.add(spec.attr_names[spec.version_field], {"N": "1"})
    if spec.updated_field:
        update.set(spec.attr_names[spec.updated_field], _now_wire(spec, spec.updated_field, ctx))
    if spec.former_types:  # an item stored under a former tag takes the current one
        update.set(table.type_attribute, {"S": spec.type_name})
    elif upsert:
        update.set_if_not_exists(table.type_attribute, {"S": spec.type_name})
    if upsert:
        for name, value in coerced_keys.items():
            wire = spec.encode_field(name, value)
            if wire is not None and name in spec.cls.model_fields:
                update.set_if_not_exists(spec.attr_names[name], wire)
        if spec.created_field:
            update.set_if_not_exists(
                spec.attr_names[spec.created_field], _now_wire(spec, spec.created_field, ctx)
            )


def _now_wire(spec: EntitySpec, name: str, ctx: WriteContext) -> Wire:
    """Now, as the timestamp field ``name`` stores it (its declared datetime format)."""
    return spec.encode_field(name, ctx.now()) or {"S": datetime_text(ctx.now())}


def _instance_conditions(
    spec: EntitySpec, instance: Any, sources: Mapping[str, list[str]], touched: AbstractSet[str]
) -> tuple[int | None, dict[str, Any], list[Condition]]:
    """``(expected version, expected stored values, conditions)`` of an update built from an
    instance (nothing for the keyword form): its version with ``Version()``; else the stored
    values the index key attributes it writes were derived from (``sources``)."""
    conditions: list[Condition] = []
    expected: dict[str, Any] = {}
    if instance is None:
        return None, expected, conditions
    if spec.version_field:
        expected_version: int = getattr(instance, spec.version_field)
        conditions.append(version_condition(spec, expected_version))
        return expected_version, expected, conditions
    # The key attributes written were derived from these stored values too: a concurrent
    # change of one of them fails the update instead of leaving a stale key.
    fields = spec.cls.model_fields
    primary = set(spec.primary_fields)
    derived_from = {f for names in sources.values() for f in names} - touched - primary
    for name in sorted(derived_from):
        if name not in fields:
            continue
        value = getattr(instance, name)
        expected[name] = value
        stored = Attr(spec.attr_names[name])
        conditions.append(stored.not_exists() if value is None else stored.eq(value))
    return None, expected, conditions


def _guard_moves(
    spec: EntitySpec,
    ctx: WriteContext,
    key: dict[str, Wire],
    clauses: Clauses,
    previous_unique: Mapping[str, Any] | None,
    guard_ttl: datetime | None,
) -> tuple[list[WriteOp], dict[str, Any], list[Condition]]:
    """``(guard ops, expected stored values, conditions)`` for the ``Unique()`` fields the update
    sets or removes: each is conditioned on its stored value (``previous_unique``, read first);
    a changed value releases the old guard and claims the new one (with ``guard_ttl``)."""
    guards: list[WriteOp] = []
    expected: dict[str, Any] = {}
    conditions: list[Condition] = []
    if previous_unique is None:
        return guards, expected, conditions
    for name, old_value in previous_unique.items():
        if name not in clauses.set_values and name not in clauses.remove:
            continue
        new_value = None if name in clauses.remove else clauses.set_values[name]
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
    return guards, expected, conditions


# -- values ------------------------------------------------------------------------------------


def _with_shards(
    spec: EntitySpec,
    keys: Mapping[str, Any],
    set_values: Mapping[str, Any],
    instance: Any,
    upsert: bool,
) -> dict[str, Any]:
    """``set=`` values with each ``Shard(n, of=...)`` field derived from its ``of`` field
    whenever the update sets either (a value passed for the shard is overwritten) or creates
    the item (``upsert``); refused, naming ``of``, when the update does not know ``of``. A
    random ``Shard(n)`` is kept (an update never draws again; ``set=`` moves it like any
    field; an upsert whose index keys need it must give it, as for any key field)."""
    values = dict(set_values)
    for plan in spec.hashed_shards:
        of = typing.cast(str, plan.of)
        if not (upsert or of in values or plan.field in values):
            continue
        if of in values:
            of_value = values[of]
        elif of in keys:
            of_value = keys[of]
        elif instance is not None:
            of_value = getattr(instance, of)
        else:
            raise KeyTemplateError(
                f"{spec.name}.{plan.field} is derived from {of} (Shard); pass {of} in set=, or "
                "update the entity instance",
                key=of,
            )
        values[plan.field] = plan.value(of_value)
    return values


def _coerced(spec: EntitySpec, clauses: Clauses, name: str, value: Any) -> Any:
    """A ``set=``/``if_not_exists=`` value converted to its field's (or path's) type."""
    path = clauses.paths.get(name)
    return _coerce_value(spec, name, value) if path is None else path.validate(value)


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


def _delta_wire(spec: EntitySpec, clauses: Clauses, name: str, value: Any) -> Wire:
    """What ``add=``/``delete=`` send: a number or a non-empty set (at a typed path, as the
    path stores it)."""
    path = clauses.paths.get(name)
    if path is not None and path.kind != "any":
        wire = path.stored_form(value) if value is not None else None
        if wire is None:
            raise InvalidRequestError(
                f"{spec.name}.{name}: add= and delete= need a number or a non-empty set",
                key=name,
            )
        return wire
    if isinstance(value, (set, frozenset, list, tuple)):
        if not value:
            raise InvalidRequestError(f"{spec.name}.{name}: an empty set changes nothing", key=name)
        return encode_value(set(value))
    return encode_value(value)
