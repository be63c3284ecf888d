"""Every single-item write of a repository as a flow (pure plans, sent by either twin).

:class:`WritePlanner` turns a verb's arguments into :class:`WriteOp` s (reading the item first
where a write needs what is stored: a put or keyword update that moves ``Unique()`` guards, a
delete by key of an entity with guards) and runs the verbs: send one op (a transaction when it
carries guard items), map a failed condition to the error the caller should see, return the
entity as stored. Transactions use the same op builders, so semantics are identical there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._context import WriteContext
from .._document_paths import is_document_path
from .._entity import spec_of
from .._entity_spec import EntitySpec
from .._expressions import condition_of
from .._flows import Flow, Send
from .._keys import UPDATE_KEYWORDS
from .._projection import is_projection
from ..errors import (
    ConditionFailed,
    InvalidRequestError,
    NotFound,
    ServiceError,
    SingleTableError,
)
from .commit import commit
from .guards import guard_delete, guard_put
from .ops import (
    WriteOp,
    compile_condition_check,
    drawn,
    exists_check,
    live_entity,
    stamped,
    stored_entity,
    validated,
)
from .single import compile_create, compile_delete, compile_put
from .update import compile_update

if TYPE_CHECKING:
    from .._conditions import ConditionFn
    from .._context import PlanContext
    from .._expressions import Condition
    from .._table import Table

DELETE_ATTEMPTS = 3
"""Attempts of a delete by key of a ``Unique()`` entity whose item keeps changing under it."""

UNREAD: Any = object()
""""The item was not read yet" (None means: read, and absent)."""


class WritePlanner:
    """The writes of one repository: op builders and single-item verbs, as flows.

    ``table`` is the repository's declared table, ``context`` its :class:`PlanContext`
    (physical name, clock, capacity, retry policy). A transaction sends the ops in its own
    request (:mod:`singletable._verbs.transactions`).
    """

    __slots__ = ("context", "table")

    def __init__(self, table: Table, context: PlanContext) -> None:
        self.table = table
        self.context = context

    # -- inputs --

    def spec(self, target: Any) -> EntitySpec:
        """The spec of an entity class or instance; refused when it lives on another table.
        Projections and other non-entities are refused here too, naming their class."""
        cls = target if isinstance(target, type) else type(target)
        if is_projection(cls):
            entity = getattr(cls, "__singletable_entity__", None)
            raise InvalidRequestError(
                f"{cls.__qualname__} is a projection (a read-only subset of "
                f"{getattr(entity, '__qualname__', 'an entity')}'s fields) and cannot be "
                "written; write the entity itself",
                key=cls.__qualname__,
            )
        spec = spec_of(cls)
        if spec.table is not self.table and spec.table.name != self.table.name:
            raise InvalidRequestError(
                f"{spec.name} lives on table {spec.table.name!r}, not on this repository's "
                f"table {self.table.name!r}"
            )
        return spec

    def write_context(self) -> WriteContext:
        return self.context.at()

    # -- reads a write needs --

    def _get(self, key: dict[str, Any], pattern: str | None = None) -> Flow[dict[str, Any]]:
        params = {"TableName": self.context.table_name, "Key": key, "ConsistentRead": True}
        response: dict[str, Any] = yield Send("GetItem", params, pattern)
        return response

    def read_live(self, spec: EntitySpec, key: dict[str, Any]) -> Flow[Any]:
        """The current live entity at ``key`` (consistent read), or None."""
        response = yield from self._get(key)
        return live_entity(spec, response.get("Item"), self.write_context())

    def read_stored(self, spec: EntitySpec, key: dict[str, Any]) -> Flow[Any]:
        """Like :meth:`read_live`, but an item of this type that no longer decodes raises
        :class:`ItemDecodeError`: deleting it without knowing its unique values would leave
        its guards behind for good."""
        response = yield from self._get(key)
        return stored_entity(spec, response.get("Item"), self.write_context())

    # -- ops --

    def drawn(self, entity: Any) -> Any:
        """``entity`` with its random ``Shard(n)`` fields drawn afresh (create, put and
        batch_put draw once per write; updates and move keep the value)."""
        return drawn(self.spec(entity), entity)

    def create_op(self, entity: Any, condition: Condition | ConditionFn[Any] | None) -> WriteOp:
        spec = self.spec(entity)
        condition = condition_of(condition, (spec.cls,))
        return compile_create(spec, drawn(spec, entity), self.write_context(), condition)

    def put_op(self, entity: Any, condition: Condition | ConditionFn[Any] | None) -> Flow[WriteOp]:
        """The put of ``entity`` (its random shards already drawn: see :meth:`drawn`); with
        ``Unique()`` fields, after reading what is stored so the guards can move."""
        spec = self.spec(entity)
        ctx = self.write_context()
        condition = condition_of(condition, (spec.cls,))
        if spec.unique_fields:
            key = spec.primary_key(spec.key_values(entity))
            previous = yield from self.read_live(spec, key)
            return compile_put(spec, entity, ctx, condition, previous=previous, previous_known=True)
        return compile_put(spec, entity, ctx, condition)

    def stored_form(self, entity: Any) -> Any:
        """``entity`` as a put stores it (what ``tx.put`` returns before any read)."""
        spec = self.spec(entity)
        return as_written(spec, stamped(spec, entity, self.write_context(), creating=False))

    def update_op(
        self, target: Any, changes: dict[str, Any]
    ) -> Flow[tuple[WriteOp, Callable[[], Any] | None]]:
        """The update and, for the instance form, how to compute the entity as it will be
        stored (only needed when no item comes back: a guard transaction)."""
        spec = self.spec(target)
        if isinstance(target, type):
            op = yield from self._keyword_update_op(spec, changes)
            return op, None
        return self._instance_update_op(spec, target, changes)

    def _keyword_update_op(self, spec: EntitySpec, changes: dict[str, Any]) -> Flow[WriteOp]:
        """``update(E, **key_fields, set=..., ...)``: the clauses as given; with ``Unique()``
        fields among the changes, after reading what is stored so the guards can move."""
        options = {k: changes.pop(k) for k in list(changes) if k in UPDATE_KEYWORDS}
        key_fields = changes
        previous_unique = None
        set_values = dict(options.get("set") or {})
        removing = list(options.get("remove") or ())
        guard_ttl = None
        if spec.unique_fields and any(f in set_values or f in removing for f in spec.unique_fields):
            key = spec.key_of_fields(key_fields)
            previous = yield from self.read_live(spec, key)
            if previous is None and not options.get("upsert"):
                raise NotFound(f"{spec.name} {spec.describe_key(key)} does not exist")
            previous_unique = {
                f: getattr(previous, f) if previous is not None else None
                for f in spec.unique_fields
            }
            guard_ttl = ttl_after(spec, previous, set_values, removing)
        return compile_update(
            spec,
            self.write_context(),
            key_fields=key_fields,
            set_values=set_values,
            remove=removing,
            add=options.get("add"),
            delete=options.get("delete"),
            append=options.get("append"),
            prepend=options.get("prepend"),
            if_not_exists=options.get("if_not_exists"),
            condition=condition_of(options.get("condition"), (spec.cls,)),
            upsert=bool(options.get("upsert")),
            previous_unique=previous_unique,
            guard_ttl=guard_ttl,
        )

    def _instance_update_op(
        self, spec: EntitySpec, target: Any, changes: dict[str, Any]
    ) -> tuple[WriteOp, Callable[[], Any] | None]:
        """``update(entity, **field_changes)``: the fields whose validated value differs, set or
        removed; an update that writes nothing only checks that the item (still) exists."""
        ctx = self.write_context()
        condition = condition_of(changes.pop("condition", None), (spec.cls,))
        unknown = [k for k in changes if k not in spec.cls.model_fields]
        if unknown and is_document_path(unknown[0]):
            # The instance is whole: it sets whole fields. A path goes by the keyword form.
            raise InvalidRequestError(
                f"update({spec.name.lower()}, ...) takes whole fields, not the document path "
                f"{unknown[0]!r}: pass the changed value (field=entity.field.model_copy(...)), "
                f"or update by key: repo.update({spec.name}, **key_fields, "
                f"set={{{unknown[0]!r}: ...}})",
                key=unknown[0],
            )
        if unknown:
            raise InvalidRequestError(
                f"{spec.name} has no field {unknown[0]!r} (instance updates take field=value "
                "changes and condition=)",
                key=unknown[0],
            )
        merged = validated(
            spec, {**{n: getattr(target, n) for n in spec.cls.model_fields}, **changes}
        )
        set_values: dict[str, Any] = {}
        removing: list[str] = []
        for name in changes:
            value = getattr(merged, name)
            if value == getattr(target, name):
                continue
            if value is None:
                removing.append(name)
            else:
                set_values[name] = value
        if not set_values and not removing and not (spec.version_field or spec.updated_field):
            # Nothing to write: the update only asserts that the item (still) exists.
            key = spec.primary_key(spec.key_values(target))
            return exists_check(spec, ctx, key, condition), None
        op = compile_update(
            spec,
            ctx,
            key_fields={n: getattr(target, n) for n in spec.primary_fields},
            set_values=set_values,
            remove=removing,
            condition=condition,
            instance=target,
            previous_unique=(
                {f: getattr(target, f) for f in spec.unique_fields} if spec.unique_fields else None
            ),
            guard_ttl=getattr(merged, spec.ttl_field) if spec.ttl_field else None,
        )
        return op, lambda: as_written(spec, stamped(spec, merged, ctx, creating=False))

    def delete_op(
        self,
        target: Any,
        keys: Mapping[str, Any],
        condition: Condition | ConditionFn[Any] | None,
        must_exist: bool,
        *,
        holder: Any = UNREAD,
    ) -> Flow[tuple[WriteOp, Any]]:
        """The delete of ``target`` and the entity it deletes (when known).

        Deleting an entity with ``Unique()`` fields by its key first reads the item (unless the
        caller passes what it read as ``holder``): found, the delete is conditioned on the
        unique values (and version) it read and releases their guards in the same transaction;
        not found, it is conditioned on there still being no such entity, so a create landing
        in between fails the delete instead of losing its guard.
        """
        spec = self.spec(target)
        ctx = self.write_context()
        condition = condition_of(condition, (spec.cls,))
        instance = None if isinstance(target, type) else target
        if instance is not None:
            if keys:
                raise InvalidRequestError(
                    f"delete(entity) takes no key fields; got {', '.join(keys)}"
                )
            key = spec.primary_key(spec.key_values(instance))
        else:
            key = spec.key_of_fields(keys)
        if not spec.unique_fields:
            op = compile_delete(
                spec, ctx, key=key, instance=instance, condition=condition, must_exist=must_exist
            )
            return op, instance
        if instance is None:
            if holder is UNREAD:
                holder = yield from self.read_stored(spec, key)
            if holder is None and must_exist:
                raise NotFound(f"{spec.name} {spec.describe_key(key)} does not exist")
            instance = holder
        op = compile_delete(
            spec,
            ctx,
            key=key,
            instance=instance,
            condition=condition,
            must_exist=must_exist,
            unique_values=(
                None if instance is None else {f: getattr(instance, f) for f in spec.unique_fields}
            ),
            absent=instance is None,
        )
        return op, instance

    def condition_check_op(
        self, target: Any, keys: Mapping[str, Any], condition: Condition | ConditionFn[Any]
    ) -> WriteOp:
        spec = self.spec(target)
        if isinstance(target, type):
            key = spec.key_of_fields(keys)
        else:
            key = spec.primary_key(spec.key_values(target))
        condition = condition_of(condition, (spec.cls,))
        return compile_condition_check(spec, self.write_context(), key=key, condition=condition)

    def move_ops(self, entity: Any, changes: Mapping[str, Any]) -> tuple[list[WriteOp], WriteOp]:
        """The ops of a primary-key change (delete old, create new, guards re-pointed) and the
        create among them (its ``result`` is what ``move`` returns)."""
        spec = self.spec(entity)
        if not set(spec.primary_fields) & set(changes):
            raise InvalidRequestError(
                f"move() is for primary-key changes ({', '.join(spec.primary_fields)}); use "
                "update() for other fields"
            )
        ctx = self.write_context()
        moved = validated(
            spec, {**{n: getattr(entity, n) for n in spec.cls.model_fields}, **changes}
        )
        old_key = spec.primary_key(spec.key_values(entity))
        delete_op = compile_delete(
            spec,
            ctx,
            key=old_key,
            instance=entity,
            must_exist=True,
            unchanged=None if spec.version_field else entity,
        )
        create_op = compile_create(spec, moved, ctx)
        new_key = create_op.key
        if new_key == old_key:
            raise InvalidRequestError("move() leaves the primary key unchanged; use update()")
        guards: list[WriteOp] = []
        ttl = create_op.params["Item"].get(self.table.ttl_attribute or "")
        for name in spec.unique_fields:
            old_value, new_value = getattr(entity, name), getattr(moved, name)
            if old_value is not None and old_value != new_value:
                guards.append(guard_delete(spec, name, old_value, old_key, ctx))
            if new_value is not None:
                previous_owner = old_key if old_value == new_value else None
                guards.append(
                    guard_put(
                        spec, name, new_value, new_key, ttl, ctx, previous_owner=previous_owner
                    )
                )
        create_op.guards = []
        return [delete_op, create_op, *guards], create_op

    # -- single-item verbs --

    def send(self, op: WriteOp, pattern: str) -> Flow[dict[str, Any]]:
        """Send one op on its own: one request, or one transaction when it carries guard items;
        a failed condition becomes the error the op classifies from the current item.

        DynamoDB returns that item with the failure (``ALL_OLD``), so one request tells a
        missing item from a version conflict or a failed condition. A failure that carries no
        item does not prove the item absent (some DynamoDB-compatible backends never return
        it): the item is then read once, consistently, and the error classified from that read.
        """
        if op.guards:  # a cancellation is raised as the error this op's failure is
            yield from commit([op, *op.guards], self.table, self.context, pattern, single=True)
            return {}
        params = dict(op.params)
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        if self.context.capacity is not None:
            params["ReturnConsumedCapacity"] = self.context.capacity

        def fail(exc: ServiceError) -> SingleTableError:
            if exc.aws_code == "ConditionalCheckFailedException" and "Item" in exc.response:
                return op.fail(exc.response["Item"])
            return exc  # no item with the failure: classified below, from a read

        try:
            response: dict[str, Any] = yield Send(op.operation, params, pattern, fail)
        except ServiceError as exc:
            if exc.aws_code != "ConditionalCheckFailedException":
                raise
            read = yield from self._get(op.key, pattern)
            raise op.fail(read.get("Item")) from exc
        return response

    def create(self, entity: Any, condition: Condition | ConditionFn[Any] | None) -> Flow[Any]:
        op = self.create_op(entity, condition)
        yield from self.send(op, "create")
        return op.result

    def put(self, entity: Any, condition: Condition | ConditionFn[Any] | None) -> Flow[Any]:
        op = yield from self.put_op(self.drawn(entity), condition)
        yield from self.send(op, "put")
        return op.result

    def update(self, target: Any, changes: dict[str, Any]) -> Flow[Any]:
        op, predict = yield from self.update_op(target, dict(changes))
        spec = op.spec
        assert spec is not None
        if op.kind == "condition_check":
            current = yield from self.read_live(spec, op.key)
            if current is None:
                raise op.fail(None)
            return current
        response = yield from self.send(op, "update")
        attributes = response.get("Attributes")
        if attributes is not None:
            return spec.from_item(attributes)
        if predict is not None:  # a guard transaction returns no item: we know what it wrote
            return predict()
        current = yield from self.read_live(spec, op.key)
        return current

    def delete(
        self,
        target: Any,
        keys: Mapping[str, Any],
        condition: Condition | ConditionFn[Any] | None,
        must_exist: bool,
    ) -> Flow[Any]:
        """Delete and return the old entity (None when there was none). By key, an entity with
        ``Unique()`` fields is read first; if the item changes between that read and the delete
        (created, deleted, a unique value or the version changed), the delete fails on its
        condition, reads again and retries (up to 3 attempts)."""
        spec = self.spec(target)
        reread = isinstance(target, type) and bool(spec.unique_fields)
        holder: Any = UNREAD
        attempt = 1
        while True:
            op, holder = yield from self.delete_op(
                target, keys, condition, must_exist, holder=holder
            )
            try:
                response = yield from self.send(op, "delete")
            except ConditionFailed:
                if not reread or attempt >= DELETE_ATTEMPTS:
                    raise
                fresh = yield from self.read_stored(spec, op.key)
                if same_holder(spec, holder, fresh):
                    raise  # what the delete read still holds: the caller's condition failed
                holder = fresh
                attempt += 1
                continue
            if reread or op.guards:
                return holder
            return live_entity(spec, response.get("Attributes"), self.write_context())

    def move(self, entity: Any, changes: Mapping[str, Any]) -> Flow[Any]:
        """Delete the old item and create the new one in one transaction."""
        ops, create_op = self.move_ops(entity, changes)
        yield from commit(ops, self.table, self.context, "move", single=True)
        return create_op.result


def ttl_after(
    spec: EntitySpec, previous: Any, set_values: Mapping[str, Any], removing: Sequence[str]
) -> Any:
    """The entity's TTL after a keyword-form update (guard items carry it)."""
    name = spec.ttl_field
    if name is None or name in removing:
        return None
    if name in set_values:
        return spec.coerce(name, set_values[name])
    return getattr(previous, name) if previous is not None else None


def as_written(spec: EntitySpec, entity: Any) -> Any:
    """``entity`` as reading it back gives it (canonical datetimes, whole-second TTL)."""
    return spec.from_item(spec.to_item(entity))


def same_holder(spec: EntitySpec, read: Any, fresh: Any) -> bool:
    """Whether two reads of an item agree on what a delete by key is conditioned on: its
    presence, its unique values and its version."""
    if read is None or fresh is None:
        return read is None and fresh is None
    names = [*spec.unique_fields, *([spec.version_field] if spec.version_field else [])]
    return all(getattr(read, name) == getattr(fresh, name) for name in names)
