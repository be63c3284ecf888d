"""Unique guards: for each ``Unique()`` field value, one guard item that names its owner.

A guard's partition key is ``__unique__#<type>#<field>#<value>`` (sort key ``__unique__`` when
the table has one); its ``_owner`` attribute holds the owner's key values as a JSON list. Writes
claim (:func:`guard_put`) and release (:func:`guard_delete`) guards in the same transaction as
the item itself.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from .._context import WriteContext
from .._entity_spec import EntitySpec
from .._expressions import raw_condition
from .._item_key import Key
from .._keys import KeyTemplate
from .._wire import Wire
from ..errors import ConditionFailed, SingleTableError, UniqueConstraintViolation
from .ops import WriteOp, compile_condition

GUARD_TYPE = "__unique__"
OWNER_ATTRIBUTE = "_owner"


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
    owner_json = Key(owner).owner_json  # (once: the item and its condition both hold it)
    item: dict[str, Wire] = {
        **key,
        table.type_attribute: {"S": GUARD_TYPE},
        OWNER_ATTRIBUTE: {"S": owner_json},
    }
    if ttl is not None and table.ttl_attribute:
        item[table.ttl_attribute] = ttl
    owners = [owner_json] + ([Key(previous_owner).owner_json] if previous_owner is not None else [])
    values = {f"@own{i}": {"S": text} for i, text in enumerate(owners)}
    owned = " OR ".join(f"@owner = @own{i}" for i in range(len(owners)))
    text = f"attribute_not_exists(@pk) OR {owned}"
    names = {"@pk": table.pk, "@owner": OWNER_ATTRIBUTE}
    if table.ttl_attribute:
        text += " OR @ttl < @now"
        names["@ttl"] = table.ttl_attribute
        values["@now"] = {"N": str(ctx.now_epoch())}
    params: dict[str, Any] = {"TableName": ctx.table_name, "Item": item}
    compile_condition(None, raw_condition(text, names, values), params, ctx.shapes)

    def fail(_old: dict[str, Wire] | None) -> SingleTableError:
        return UniqueConstraintViolation(
            # (the value stays out of the message: unique values are often personal data)
            f"{spec.name}.{field_name}: the value is already taken by another {spec.name}",
            key=Key(key).text,
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
        {"@own": {"S": Key(owner).owner_json}},
    )
    compile_condition(None, condition, params, ctx.shapes)

    def fail(_old: dict[str, Wire] | None) -> SingleTableError:
        return ConditionFailed(
            f"the unique guard of {spec.name}.{field_name} belongs to another item",
            key=Key(key).text,
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
