"""Whole-item writes: create, put and delete (pure: no I/O).

Every derived attribute (keys of the table and of each index, sparse-index membership, the
version, timestamps, the TTL number) is computed from one complete, validated entity by
:meth:`EntitySpec.to_item`; the unique guards that go with the write come from
:mod:`.guards`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._context import WriteContext
from .._entity_spec import EntitySpec
from .._expressions import Attr, Condition, all_of, raw_condition
from .._item_key import Key
from .._wire import Wire
from ..errors import AlreadyExists, ConditionFailed, NotFound, SingleTableError
from .guards import guard_delete, guard_put
from .ops import (
    WriteOp,
    absent_condition,
    as_stored,
    compile_condition,
    condition_text,
    exists_condition,
    live_entity,
    stale_or_failed,
    stamped,
    ttl_wire,
    version_condition,
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
    compile_condition(
        spec,
        all_of([absent_condition(spec.table.pk, ttl_attr, ctx), condition]),
        params,
        ctx.shapes,
    )

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        if condition is None or (old and not spec.expired(old, ctx.now_epoch())):
            return AlreadyExists(
                f"{spec.name} {Key(key).text} already exists", key=Key(key).text, item=current
            )
        return ConditionFailed(
            f"creating {spec.name} {Key(key).text}: the condition= you passed did not hold: "
            f"{condition_text(condition)}",
            key=Key(key).text,
            item=current,
        )

    op = WriteOp("create", "PutItem", spec, spec.type_name, key, params, None, fail)
    op.result = as_stored(spec, item)
    op.guards = [
        guard_put(spec, f, getattr(entity, f), key, ttl_wire(spec, item), ctx)
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
            conditions.append(absent_condition(spec.table.pk, ttl_attr, ctx))
        else:
            conditions.append(version_condition(spec, expected_version))
    guards: list[WriteOp] = []
    expected: dict[str, Any] = {}
    if spec.unique_fields and previous_known:
        ttl = ttl_wire(spec, item)
        for f in spec.unique_fields:
            new_value = getattr(entity, f)
            old_value = getattr(previous, f) if previous is not None else None
            if previous is not None:
                expected[f] = old_value
            attr = Attr(spec.attr_names[f])
            if previous is None:
                conditions.append(absent_condition(spec.table.pk, None, ctx) | attr.not_exists())
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
    compile_condition(spec, all_of(conditions), params, ctx.shapes)

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        return stale_or_failed(
            spec, key, current, expected_version, "putting", condition=condition, expected=expected
        )

    op = WriteOp("put", "PutItem", spec, spec.type_name, key, params, None, fail)
    op.result = as_stored(spec, item)
    op.guards = guards
    return op


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
        conditions.append(exists_condition(spec, ctx))
    if absent:
        conditions.append(_no_live_entity(spec, ctx))
    expected_version = None
    if instance is not None and spec.version_field:
        expected_version = getattr(instance, spec.version_field)
        conditions.append(version_condition(spec, expected_version))
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
    compile_condition(spec, all_of(conditions), params, ctx.shapes)
    params["ReturnValues"] = "ALL_OLD"

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        current = live_entity(spec, old, ctx)
        if must_exist and (not old or spec.expired(old, ctx.now_epoch())):
            return NotFound(f"{spec.name} {Key(key).text} does not exist", key=Key(key).text)
        if absent and current is not None:
            return ConditionFailed(
                f"deleting {spec.name} {Key(key).text}: the item was created after the delete "
                "read it as absent (a concurrent create); read it again and retry",
                key=Key(key).text,
                item=current,
            )
        return stale_or_failed(
            spec, key, current, expected_version, "deleting", condition=condition, expected=expected
        )

    op = WriteOp("delete", "DeleteItem", spec, spec.type_name, key, params, None, fail)
    op.guards = guards
    return op


def _no_live_entity(spec: EntitySpec, ctx: WriteContext) -> Condition:
    """No live entity of ``spec``'s type at the key: no item, another type, or expired."""
    table = spec.table
    text = "attribute_not_exists(@pk) OR @type <> @tag"
    names = {"@pk": table.pk, "@type": table.type_attribute}
    values: dict[str, Wire] = {"@tag": {"S": spec.type_name}}
    for n, former in enumerate(spec.former_types):  # items under a former tag are live too
        text += f" AND @type <> @was{n}_"
        values[f"@was{n}_"] = {"S": former}
    if spec.ttl_field and table.ttl_attribute:
        text += " OR @ttl < @now"
        names["@ttl"] = table.ttl_attribute
        values["@now"] = {"N": str(ctx.now_epoch())}
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
