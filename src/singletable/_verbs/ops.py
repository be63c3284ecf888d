"""The ground floor of the writes: :class:`WriteOp`, :class:`WriteContext` and what every
write compiler shares (conditions, reading a returned item back, the error of a failed condition,
the condition check).

A write is a :class:`WriteOp`: the request, the guard-item operations that must go with it in one
transaction, and how to turn a failed condition into the error the caller should see. The same
ops fill transactions, so semantics are identical there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from .._codec import encode_value
from .._context import WriteContext
from .._entity_spec import EntitySpec
from .._expressions import Attr, CompileContext, Condition, ExpressionBuilder, all_of, raw_condition
from .._item_key import Key
from .._wire import Wire
from ..errors import (
    ConditionFailed,
    InvalidRequestError,
    NotFound,
    SingleTableError,
    VersionConflict,
)
from .shapes import WriteShapes, condition_expression


class WriteOp:
    """One item operation, ready for a single request or a transaction."""

    __slots__ = (
        "_describe",
        "entity_type",
        "fail",
        "guards",
        "key",
        "kind",
        "operation",
        "params",
        "result",
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
        describe: str | None,  # None: the entity and its key, worked out when first needed
        fail: Callable[[dict[str, Wire] | None], SingleTableError],
        result: Any = None,  # the entity as it will be stored (put/create), when known up front
        guards: list[WriteOp] | None = None,
    ) -> None:
        self.kind = kind
        self.operation = operation
        self.spec = spec
        self.entity_type = entity_type
        self.key = key
        self.params = params
        self._describe = describe
        self.fail = fail
        self.result = result
        self.guards: list[WriteOp] = [] if guards is None else guards

    @property
    def describe(self) -> str:
        """What the operation writes, for messages: ``Order(PK='...', SK='...')``."""
        if self._describe is None:
            spec = self.spec
            self._describe = spec.describe_key(self.key) if spec is not None else self.entity_type
        return self._describe

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


# -- conditions --------------------------------------------------------------------------------


def exists_condition(spec: EntitySpec, ctx: WriteContext) -> Condition:
    """The item exists and has not expired."""
    pk = spec.table.pk
    ttl = spec.table.ttl_attribute
    if ttl and spec.ttl_field:
        return raw_condition(
            "attribute_exists(@pk) AND (attribute_not_exists(@ttl) OR @ttl >= @now)",
            {"@pk": pk, "@ttl": ttl},
            {"@now": {"N": str(ctx.now_epoch())}},
        )
    return raw_condition("attribute_exists(@pk)", {"@pk": pk})


def absent_condition(pk: str, ttl: str | None, ctx: WriteContext) -> Condition:
    """No item, or only an expired one (expired items count as absent)."""
    if ttl:
        return raw_condition(
            "attribute_not_exists(@pk) OR @ttl < @now",
            {"@pk": pk, "@ttl": ttl},
            {"@now": {"N": str(ctx.now_epoch())}},
        )
    return raw_condition("attribute_not_exists(@pk)", {"@pk": pk})


def version_condition(spec: EntitySpec, expected: int) -> Condition:
    """The stored version is ``expected`` (0: no version stored, or 0)."""
    attr = Attr(spec.attr_names[spec.version_field])  # type: ignore[index]
    if expected == 0:
        return attr.not_exists() | attr.eq(0)
    return attr.eq(expected)


def compile_condition(
    spec: EntitySpec | None,
    condition: Condition | None,
    params: dict[str, Any],
    shapes: WriteShapes | None = None,
) -> None:
    """Compile ``condition`` (if any) into ``params``: ConditionExpression, names and values
    (with ``shapes``, the text and names of a shape compiled before are reused)."""
    if condition is None:
        return
    text, names, values = condition_expression(condition, condition_encoder(spec), shapes)
    params["ConditionExpression"] = text
    if names:
        params["ExpressionAttributeNames"] = names
    if values:
        params["ExpressionAttributeValues"] = values


def condition_encoder(spec: EntitySpec | None) -> Callable[[str, Any], Wire]:
    """How a condition's values are encoded: as ``spec``'s fields, or dynamically (no spec)."""
    if spec is not None:
        return spec.encode_for_condition
    return lambda _name, value: encode_value(value)


# -- the stored item ---------------------------------------------------------------------------


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
    if not item or not spec.owns(item, ctx.now_epoch()):
        return None
    return spec.from_item(item)


def validated(spec: EntitySpec, values: Mapping[str, Any]) -> Any:
    """A new validated entity from field values (keyed by field name)."""
    data = {}
    for plan in spec.codec.fields:
        if plan.name in values:
            data[plan.input_key] = values[plan.name]
    try:
        entity = spec.codec.validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise InvalidRequestError(
            f"{spec.name}: {loc or 'value'} is not valid: {first.get('msg')}", key=loc
        ) from None
    return with_shards(spec, entity)


def with_shards(spec: EntitySpec, entity: Any) -> Any:
    """``entity`` with its ``Shard(n, of=...)`` fields derived from their ``of`` fields (what
    every write stores, whatever the caller passed)."""
    if not spec.hashed_shards:
        return entity
    derived = spec.derived_shards(entity)
    if all(getattr(entity, name) == value for name, value in derived.items()):
        return entity
    return entity.model_copy(update=derived)


def drawn(spec: EntitySpec, entity: Any) -> Any:
    """``entity`` with a fresh random draw of its ``Shard(n)`` fields: what ``create``,
    ``put`` and ``batch_put`` store (updates and ``move`` keep the drawn value)."""
    if not spec.random_shards:
        return entity
    return entity.model_copy(update=spec.drawn_shards())


def stamped(
    spec: EntitySpec, entity: Any, ctx: WriteContext, *, creating: bool, bump: bool = True
) -> Any:
    """The entity as a put/create stores it: version + 1, timestamps set, shards derived."""
    changes: dict[str, Any] = spec.derived_shards(entity) if spec.hashed_shards else {}
    if spec.version_field and bump:
        changes[spec.version_field] = getattr(entity, spec.version_field) + 1
    if spec.created_field and (creating or getattr(entity, spec.created_field) is None):
        changes[spec.created_field] = ctx.now()
    if spec.updated_field:
        changes[spec.updated_field] = ctx.now()
    if not changes:
        return entity
    return entity.model_copy(update=changes)


def as_stored(spec: EntitySpec, item: Mapping[str, Wire]) -> Any:
    """What reading ``item`` back gives (TTL whole seconds, canonical datetimes)."""
    return spec.from_item(item)


def ttl_wire(spec: EntitySpec, item: Mapping[str, Wire]) -> Wire | None:
    """The TTL attribute of ``item`` (None when ``spec`` has no TTL field or the item none)."""
    ttl = spec.table.ttl_attribute
    return item.get(ttl) if ttl and spec.ttl_field else None


# -- failed conditions -------------------------------------------------------------------------


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


def stale_or_failed(
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
    where = f"{verb} {spec.name} {Key(key).text}"
    if spec.version_field and expected_version is not None:
        stored = getattr(current, spec.version_field) if current is not None else 0
        if stored != expected_version:
            return VersionConflict(
                f"{spec.name} {Key(key).text} is at version {stored}, not "
                f"{expected_version}; reload it and retry",
                key=Key(key).text,
                item=current,
            )
    if current is not None and expected:
        moved = [name for name, value in expected.items() if getattr(current, name) != value]
        if moved:
            return ConditionFailed(
                f"{where}: the stored {', '.join(moved)} changed since the write read it "
                "(a concurrent write); read the item again and retry",
                key=Key(key).text,
                item=current,
            )
    if condition is not None:
        unsure = ""
        if expected and current is None:  # no item came back to tell which condition failed
            unsure = " (or the stored item changed since it was read)"
        return ConditionFailed(
            f"{where}: the condition= you passed did not hold{unsure}: {condition_text(condition)}",
            key=Key(key).text,
            item=current,
        )
    return ConditionFailed(
        f"the condition on {where} did not hold (the stored item changed since it was read?)",
        key=Key(key).text,
        item=current,
    )


# -- condition checks --------------------------------------------------------------------------


def exists_check(
    spec: EntitySpec, ctx: WriteContext, key: dict[str, Wire], condition: Condition | None
) -> WriteOp:
    """The op of an update that changes nothing: the item must exist (and ``condition`` hold)."""
    op = compile_condition_check(
        spec,
        ctx,
        key=key,
        condition=all_of([exists_condition(spec, ctx), condition]),  # type: ignore[arg-type]
    )

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        if not old or spec.expired(old, ctx.now_epoch()):
            return NotFound(f"{spec.name} {Key(key).text} does not exist", key=Key(key).text)
        text = condition_text(condition) if condition is not None else "the item exists"
        return ConditionFailed(
            f"updating {spec.name} {Key(key).text}: the condition= you passed did not hold: {text}",
            key=Key(key).text,
            item=live_entity(spec, old, ctx),
        )

    op.fail = fail
    return op


def compile_condition_check(
    spec: EntitySpec, ctx: WriteContext, *, key: dict[str, Wire], condition: Condition
) -> WriteOp:
    params: dict[str, Any] = {"TableName": ctx.table_name, "Key": key}
    compile_condition(spec, condition, params, ctx.shapes)

    def fail(old: dict[str, Wire] | None) -> SingleTableError:
        return ConditionFailed(
            f"the condition check on {spec.name} {Key(key).text} did not hold: "
            f"{condition_text(condition)}",
            key=Key(key).text,
            item=live_entity(spec, old, ctx),
        )

    return WriteOp(
        "condition_check",
        "ConditionCheck",
        spec,
        spec.type_name,
        key,
        params,
        None,
        fail,
    )
