"""Repositories: named access patterns and writes against one table."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .batch import batch_get_items, batch_write, key_identity
from .entity import Entity, EntitySpec, spec_of
from .errors import (
    ConditionFailed,
    InvalidRequestError,
    ModelDefinitionError,
    NotFound,
    ServiceError,
    TransactionCanceled,
)
from .executor import Executor, Hook, RetryPolicy
from .expressions import Condition
from .paging import CursorCodec, KeyRef
from .patterns import DeclaredPattern, ExplainRow, Pattern
from .table import Table, declared_table
from .transaction import Transaction, current_transaction, first_failure, open_transaction
from .writes import (
    WriteContext,
    WriteOp,
    compile_condition_check,
    compile_create,
    compile_delete,
    compile_put,
    compile_update,
    exists_check,
    guard_delete,
    guard_put,
    live_entity,
    stamped,
    stored_entity,
    validated,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

E = TypeVar("E", bound=Entity)

DELETE_ATTEMPTS = 3
"""Attempts of a delete by key of a ``Unique()`` entity whose item keeps changing under it."""

_UNREAD: Any = object()  # "the item was not read yet" (None means: read, and absent)

UPDATE_KEYWORDS = frozenset(
    {"set", "remove", "add", "delete", "append", "if_not_exists", "condition", "upsert"}
)


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Repository:
    """Base class of repositories: ``class Shop(Repository, table=shop)`` with patterns as
    class attributes. Construct with a boto3 DynamoDB client; construction sends nothing."""

    __singletable_table__: ClassVar[Table]
    table: ClassVar[Table]
    """The table this repository class is declared on (also readable on the class)."""
    __patterns__: ClassVar[dict[str, Pattern | DeclaredPattern[Any, Any]]] = {}

    def __init_subclass__(cls, table: Table | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if table is not None:
            cls.__singletable_table__ = cls.table = declared_table(cls, table)
        if "__singletable_table__" not in dir(cls):
            raise ModelDefinitionError(
                f"{cls.__qualname__} needs a table: class {cls.__qualname__}(Repository, "
                "table=my_table)"
            )
        patterns: dict[str, Pattern | DeclaredPattern[Any, Any]] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, (Pattern, DeclaredPattern)):
                    patterns[name] = value
        for name, pattern in patterns.items():
            if name in dir(Repository) or name == "table":
                raise ModelDefinitionError(
                    f"{cls.__qualname__}.{name}: the pattern name shadows Repository.{name}; "
                    "rename it"
                )
            pattern.bind(cls, cls.__singletable_table__)
        cls.__patterns__ = patterns

    def __init__(
        self,
        client: DynamoDBClient | None = None,
        *,
        table_name: str | None = None,
        cursor_secret: str | bytes | Sequence[str | bytes] | None = None,
        default_limit: int = 100,
        clock: Callable[[], datetime] | None = None,
        retry: RetryPolicy | None = None,
        hooks: Sequence[Hook] = (),
    ) -> None:
        if not isinstance(default_limit, int) or default_limit < 1:
            raise InvalidRequestError("default_limit must be a positive int")
        self.table_name = table_name or self.table.name
        self.default_limit = default_limit
        self.clock = clock or _utc_now
        self._executor = Executor(client, hooks=hooks, retry=retry)
        self._cursors = CursorCodec(cursor_secret)
        self.return_consumed_capacity = bool(hooks)

    @property
    def client(self) -> DynamoDBClient:
        """The boto3 client. If none was given, :func:`singletable.aws.default_client`
        creates one on first use: the default session's, with ``client_config()`` and the
        response fast path (singletable's SigV4 signer with ``SINGLETABLE_SIGNING=1``)."""
        return self._executor.client

    # -- time --

    def now(self) -> datetime:
        value = self.clock()
        if value.tzinfo is None:
            raise InvalidRequestError("the repository clock must return aware datetimes")
        return value

    def now_epoch(self) -> int:
        return int(self.now().timestamp())

    def _write_context(self) -> WriteContext:
        return WriteContext(self.table_name, self.now())

    # -- model checks --

    @classmethod
    def explain(cls) -> list[ExplainRow]:
        """The access-pattern table: one row per pattern (operation, index, key condition,
        entity types, order)."""
        return [pattern.explain() for pattern in cls.__patterns__.values()]

    @classmethod
    def patterns(cls) -> dict[str, Pattern | DeclaredPattern[Any, Any]]:
        return dict(cls.__patterns__)

    # -- single-item writes --

    def _spec(self, target: Any) -> EntitySpec:
        cls = target if isinstance(target, type) else type(target)
        spec = spec_of(cls)
        if spec.table is not self.table and spec.table.name != self.table.name:
            raise InvalidRequestError(
                f"{spec.name} lives on table {spec.table.name!r}, not on this repository's "
                f"table {self.table.name!r}"
            )
        return spec

    def _outside_transaction(self, verb: str) -> None:
        if current_transaction(self) is not None:
            raise InvalidRequestError(
                f"repo.{verb}() inside an open transaction would be sent on its own, outside "
                f"it; use tx.{verb}() (the transaction method's tx argument) instead"
            )

    def _send(self, op: WriteOp, pattern: str) -> dict[str, Any]:
        """Send one op on its own (a transaction when it carries guard items)."""
        if op.guards:
            tx = Transaction(self)
            tx.ops = [op, *op.guards]
            try:
                tx.send(pattern=pattern)
            except TransactionCanceled as canceled:
                raise first_failure(canceled) from canceled
            return {}
        params = dict(op.params)
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        if self.return_consumed_capacity:
            params["ReturnConsumedCapacity"] = "TOTAL"
        try:
            return self._executor.call(op.operation, params, pattern=pattern)
        except ServiceError as exc:
            if exc.aws_code == "ConditionalCheckFailedException":
                # DynamoDB returns the current item with the failure (ALL_OLD), so one request
                # tells a missing item from a version conflict or a failed condition.
                raise op.fail(exc.response.get("Item")) from exc
            raise

    def _read_item(self, spec: EntitySpec, key: dict[str, Any]) -> Any:
        """The current live entity at ``key`` (consistent read), for writes that need it."""
        response = self._executor.call(
            "GetItem", {"TableName": self.table_name, "Key": key, "ConsistentRead": True}
        )
        return live_entity(spec, response.get("Item"), self._write_context())

    def _create_op(self, entity: Any, condition: Condition | None) -> WriteOp:
        spec = self._spec(entity)
        return compile_create(spec, entity, self._write_context(), condition)

    def _put_op(self, entity: Any, condition: Condition | None) -> WriteOp:
        spec = self._spec(entity)
        ctx = self._write_context()
        if spec.unique_fields:
            previous = self._read_item(spec, spec.primary_key(spec.key_values(entity)))
            return compile_put(spec, entity, ctx, condition, previous=previous, previous_known=True)
        return compile_put(spec, entity, ctx, condition)

    def create(self, entity: E, *, condition: Condition | None = None) -> E:
        """Store a new entity; :class:`AlreadyExists` if a live item has its key. Returns the
        entity as stored (version + 1, timestamps set)."""
        self._outside_transaction("create")
        op = self._create_op(entity, condition)
        self._send(op, "create")
        return op.result  # type: ignore[no-any-return]

    def put(self, entity: E, *, condition: Condition | None = None) -> E:
        """Store ``entity``, replacing any item with its key (version-checked with
        ``Version()``; guards moved with ``Unique()``). Returns it as stored."""
        self._outside_transaction("put")
        op = self._put_op(entity, condition)
        self._send(op, "put")
        return op.result  # type: ignore[no-any-return]

    def _update_op(self, target: Any, changes: dict[str, Any]) -> tuple[WriteOp, Any]:
        spec = self._spec(target)
        ctx = self._write_context()
        if isinstance(target, type):
            options = {k: changes.pop(k) for k in list(changes) if k in UPDATE_KEYWORDS}
            key_fields = changes
            previous_unique = None
            set_values = dict(options.get("set") or {})
            removing = list(options.get("remove") or ())
            guard_ttl = None
            if spec.unique_fields and any(
                f in set_values or f in removing for f in spec.unique_fields
            ):
                key = spec.key_of_fields(key_fields)
                previous = self._read_item(spec, key)
                if previous is None and not options.get("upsert"):
                    raise NotFound(f"{spec.name} {spec.describe_key(key)} does not exist")
                previous_unique = {
                    f: getattr(previous, f) if previous is not None else None
                    for f in spec.unique_fields
                }
                guard_ttl = _ttl_after(spec, previous, set_values, removing)
            op = compile_update(
                spec,
                ctx,
                key_fields=key_fields,
                set_values=set_values,
                remove=removing,
                add=options.get("add"),
                delete=options.get("delete"),
                append=options.get("append"),
                if_not_exists=options.get("if_not_exists"),
                condition=options.get("condition"),
                upsert=bool(options.get("upsert")),
                previous_unique=previous_unique,
                guard_ttl=guard_ttl,
            )
            return op, None
        condition = changes.pop("condition", None)
        unknown = [k for k in changes if k not in spec.cls.model_fields]
        if unknown:
            raise InvalidRequestError(
                f"{spec.name} has no field {unknown[0]!r} (instance updates take field=value "
                "changes and condition=)",
                key=unknown[0],
            )
        merged = validated(
            spec, {**{n: getattr(target, n) for n in spec.cls.model_fields}, **changes}
        )
        set_values = {}
        removing = []
        for name in changes:
            value = getattr(merged, name)
            if value == getattr(target, name):
                continue
            if value is None:
                removing.append(name)
            else:
                set_values[name] = value
        primary_key = spec.primary_key(spec.key_values(target))
        previous_unique = (
            {f: getattr(target, f) for f in spec.unique_fields} if spec.unique_fields else None
        )
        key_fields = {n: getattr(target, n) for n in spec.primary_fields}
        if not set_values and not removing and not (spec.version_field or spec.updated_field):
            # Nothing to write: the update only asserts that the item (still) exists.
            return exists_check(spec, ctx, primary_key, condition), merged
        op = compile_update(
            spec,
            ctx,
            key_fields=key_fields,
            set_values=set_values,
            remove=removing,
            condition=condition,
            instance=target,
            previous_unique=previous_unique,
            guard_ttl=getattr(merged, spec.ttl_field) if spec.ttl_field else None,
        )
        assert op.key == primary_key
        return op, _as_written(spec, stamped(spec, merged, ctx, creating=False))

    def update(self, target: Any, /, **changes: Any) -> Any:
        """Change an item and return it as stored.

        ``repo.update(order, status=Status.SHIPPED)`` (instance form, preferred) or
        ``repo.update(Order, customer_id=..., created_at=..., order_id=..., set={...},
        remove=[...], add={...}, delete={...}, append={...}, condition=..., upsert=False)``.
        Index keys and sparse membership follow the change; :class:`NotFound` unless the item
        exists (or ``upsert=True``).
        """
        self._outside_transaction("update")
        op, predicted = self._update_op(target, dict(changes))
        spec = op.spec
        assert spec is not None
        if op.kind == "condition_check":
            current = self._read_item(spec, op.key)
            if current is None:
                raise op.fail(None)
            return current
        response = self._send(op, "update")
        attributes = response.get("Attributes")
        if attributes is not None:
            return spec.from_item(attributes)
        if predicted is not None:  # a guard transaction returns no item: we know what it wrote
            return predicted
        return self._read_item(spec, op.key)

    def _read_for_delete(self, spec: EntitySpec, key: dict[str, Any]) -> Any:
        """The live entity at ``key`` (consistent read), or None when there is no item, an
        expired one or one of another type. A stored item of this type that no longer decodes
        raises :class:`ItemDecodeError`: deleting it without knowing its unique values would
        leave its guards behind for good."""
        response = self._executor.call(
            "GetItem", {"TableName": self.table_name, "Key": key, "ConsistentRead": True}
        )
        return stored_entity(spec, response.get("Item"), self._write_context())

    def _delete_op(
        self,
        target: Any,
        keys: Mapping[str, Any],
        condition: Condition | None,
        must_exist: bool,
        *,
        holder: Any = _UNREAD,
    ) -> tuple[WriteOp, Any]:
        """The delete of ``target`` and the entity it deletes (when known).

        Deleting an entity with ``Unique()`` fields by its key first reads the item (unless the
        caller passes what it read as ``holder``): found, the delete is conditioned on the
        unique values (and version) it read and releases their guards in the same transaction;
        not found, it is conditioned on there still being no such entity, so a create landing
        in between fails the delete instead of losing its guard.
        """
        spec = self._spec(target)
        ctx = self._write_context()
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
            if holder is _UNREAD:
                holder = self._read_for_delete(spec, key)
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

    def delete(
        self,
        target: Any,
        /,
        *,
        condition: Condition | None = None,
        must_exist: bool = False,
        **keys: Any,
    ) -> Any:
        """Delete an item (``repo.delete(order)`` or ``repo.delete(Order, **key_fields)``) and
        return the old entity, or None if there was none (``must_exist=True``:
        :class:`NotFound`). Unique guards go in the same transaction.

        By key, an entity with ``Unique()`` fields is read first; if the item changes between
        that read and the delete (created, deleted, a unique value or the version changed), the
        delete fails on its condition, reads again and retries (up to 3 attempts), so it
        deletes what is there when it lands, guards included, like a delete without guards.
        """
        self._outside_transaction("delete")
        spec = self._spec(target)
        reread = isinstance(target, type) and bool(spec.unique_fields)
        holder: Any = _UNREAD
        attempt = 1
        while True:
            op, holder = self._delete_op(target, keys, condition, must_exist, holder=holder)
            try:
                response = self._send(op, "delete")
            except ConditionFailed:
                if not reread or attempt >= DELETE_ATTEMPTS:
                    raise
                fresh = self._read_for_delete(spec, op.key)
                if _same_holder(spec, holder, fresh):
                    raise  # what the delete read still holds: the caller's condition failed
                holder = fresh
                attempt += 1
                continue
            if reread or op.guards:
                return holder
            return live_entity(spec, response.get("Attributes"), self._write_context())

    def _condition_check_op(
        self, target: Any, keys: Mapping[str, Any], condition: Condition
    ) -> WriteOp:
        spec = self._spec(target)
        if isinstance(target, type):
            key = spec.key_of_fields(keys)
        else:
            key = spec.primary_key(spec.key_values(target))
        return compile_condition_check(spec, self._write_context(), key=key, condition=condition)

    def move(self, entity: E, /, **changes: Any) -> E:
        """Change primary-key fields: delete the old item and create the new one in one
        transaction (unique guards re-pointed). Returns the new entity as stored."""
        self._outside_transaction("move")
        spec = self._spec(entity)
        primary = set(spec.primary_fields)
        if not primary & set(changes):
            raise InvalidRequestError(
                f"move() is for primary-key changes ({', '.join(spec.primary_fields)}); use "
                "update() for other fields"
            )
        ctx = self._write_context()
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
        tx = Transaction(self)
        tx.ops = [delete_op, create_op, *guards]
        try:
            tx.send(pattern="move")
        except TransactionCanceled as canceled:
            raise first_failure(canceled) from canceled
        return create_op.result  # type: ignore[no-any-return]

    # -- transactions --

    def transaction(self, *, token: str | None = None) -> AbstractContextManager[Transaction]:
        """``with repo.transaction() as tx:`` collects writes and sends one TransactWriteItems
        on a clean exit (nothing on an exception); nested use joins the outer transaction."""
        return open_transaction(self, token)

    def transact_get(self, refs: Iterable[Any]) -> list[Any]:
        """One TransactGetItems for ``(EntityClass, {key fields})`` pairs or ``KeyRef``s; returns
        the entities (None where missing) in input order."""
        specs_keys = [self._ref(ref) for ref in refs]
        if not specs_keys:
            return []
        if len(specs_keys) > 100:
            raise InvalidRequestError("transact_get takes at most 100 items")
        params = {
            "TransactItems": [
                {"Get": {"TableName": self.table_name, "Key": key}} for _, key, _ in specs_keys
            ]
        }
        response = self._executor.call("TransactGetItems", params, pattern="transact_get")
        ctx = self._write_context()
        return [
            live_entity(spec, entry.get("Item"), ctx)
            for (spec, _, _), entry in zip(specs_keys, response.get("Responses", []))
        ]

    # -- batches --

    def _ref(self, ref: Any) -> tuple[EntitySpec, dict[str, Any], Any]:
        if isinstance(ref, KeyRef):
            spec = self._spec(ref.entity)
            return spec, dict(ref.key), ref
        if isinstance(ref, Entity):
            spec = self._spec(ref)
            return spec, spec.primary_key(spec.key_values(ref)), ref
        if isinstance(ref, tuple) and len(ref) == 2 and isinstance(ref[0], type):
            spec = self._spec(ref[0])
            return spec, spec.key_of_fields(dict(ref[1])), ref
        raise InvalidRequestError(
            f"expected (EntityClass, {{key fields}}), a KeyRef or an entity; got {ref!r}"
        )

    def batch_get(self, refs: Iterable[Any], *, consistent: bool = False) -> list[Any]:
        """Entities for ``(EntityClass, {key fields})`` pairs or ``KeyRef``s, in input order,
        missing ones left out, duplicates collapsed (chunks of 100, retried with backoff)."""
        resolved = [self._ref(ref) for ref in refs]
        key_attrs = [a for a in (self.table.pk, self.table.sk) if a]
        found = batch_get_items(
            self._executor,
            self.table_name,
            [key for _, key, _ in resolved],
            key_attrs,
            consistent=consistent,
            inputs=[given for _, _, given in resolved],
            pattern="batch_get",
        )
        ctx = self._write_context()
        results = []
        seen: set[tuple[Any, ...]] = set()
        for spec, key, _ in resolved:
            identity = key_identity(key, key_attrs)
            if identity in seen:
                continue
            seen.add(identity)
            entity = live_entity(spec, found.get(identity), ctx)
            if entity is not None:
                results.append(entity)
        return results

    def _refuse_unsafe(self, spec: EntitySpec, unsafe: bool, verb: str) -> None:
        if unsafe:
            return
        guarded = [f for f in (spec.version_field, *spec.unique_fields) if f]
        if guarded:
            raise InvalidRequestError(
                f"{verb} cannot check {spec.name}'s Version()/Unique() fields "
                f"({', '.join(guarded)}): BatchWriteItem has no conditions. Use put/delete or a "
                "transaction, or pass unsafe=True if you accept unchecked writes"
            )

    def batch_put(self, entities: Iterable[Any], *, unsafe: bool = False) -> list[Any]:
        """Put entities in chunks of 25, retrying unprocessed ones with backoff; returns them as
        stored. Refuses ``Version()``/``Unique()`` entities unless ``unsafe=True``."""
        entities = list(entities)
        ctx = self._write_context()
        requests = []
        stored = []
        key_attrs = [a for a in (self.table.pk, self.table.sk) if a]
        seen: set[tuple[Any, ...]] = set()
        for entity in entities:
            spec = self._spec(entity)
            self._refuse_unsafe(spec, unsafe, "batch_put")
            ready = stamped(spec, entity, ctx, creating=False)
            item = spec.to_item(ready)
            identity = key_identity(item, key_attrs)
            if identity in seen:
                raise InvalidRequestError(
                    f"batch_put got {spec.describe_key(item)} twice; DynamoDB refuses duplicate "
                    "keys in one batch",
                    key=", ".join(map(str, identity)),
                )
            seen.add(identity)
            requests.append({"PutRequest": {"Item": item}})
            stored.append(spec.from_item(item))
        batch_write(
            self._executor,
            self.table_name,
            requests,
            entities,
            lambda r: key_identity(r["PutRequest"]["Item"], key_attrs),
            pattern="batch_put",
        )
        return stored

    def batch_delete(self, refs: Iterable[Any], *, unsafe: bool = False) -> None:
        """Delete ``(EntityClass, {key fields})`` pairs, ``KeyRef``s or entities in chunks of 25,
        retrying unprocessed ones with backoff."""
        resolved = [self._ref(ref) for ref in refs]
        key_attrs = [a for a in (self.table.pk, self.table.sk) if a]
        requests = []
        seen: set[tuple[Any, ...]] = set()
        for spec, key, _ in resolved:
            self._refuse_unsafe(spec, unsafe, "batch_delete")
            identity = key_identity(key, key_attrs)
            if identity in seen:
                raise InvalidRequestError(
                    f"batch_delete got {spec.describe_key(key)} twice",
                    key=", ".join(map(str, identity)),
                )
            seen.add(identity)
            requests.append({"DeleteRequest": {"Key": key}})
        batch_write(
            self._executor,
            self.table_name,
            requests,
            [given for _, _, given in resolved],
            lambda r: key_identity(r["DeleteRequest"]["Key"], key_attrs),
            pattern="batch_delete",
        )


def _ttl_after(
    spec: EntitySpec, previous: Any, set_values: Mapping[str, Any], removing: Sequence[str]
) -> Any:
    """The entity's TTL after a keyword-form update (guard items carry it)."""
    name = spec.ttl_field
    if name is None or name in removing:
        return None
    if name in set_values:
        return spec.coerce(name, set_values[name])
    return getattr(previous, name) if previous is not None else None


def _as_written(spec: EntitySpec, entity: Any) -> Any:
    """``entity`` as reading it back gives it (canonical datetimes, whole-second TTL)."""
    return spec.from_item(spec.to_item(entity))


def _same_holder(spec: EntitySpec, read: Any, fresh: Any) -> bool:
    """Whether two reads of an item agree on what a delete by key is conditioned on: its
    presence, its unique values and its version."""
    if read is None or fresh is None:
        return read is None and fresh is None
    names = [*spec.unique_fields, *([spec.version_field] if spec.version_field else [])]
    return all(getattr(read, name) == getattr(fresh, name) for name in names)
