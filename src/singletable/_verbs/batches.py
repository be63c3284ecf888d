"""The multi-item verbs that are not transactions, as flows: ``batch_get``, ``batch_put``,
``batch_delete`` (chunked, retried, every leftover raised) and ``transact_get``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._entity import Entity
from .._entity_spec import EntitySpec
from .._flows import Flow, Send
from .._item_key import key_identity
from .._paging import KeyRef
from .._projection import is_projection
from ..errors import InvalidRequestError
from .batch import batch_get_items, batch_write
from .ops import drawn, live_entity, stamped

if TYPE_CHECKING:
    from .planner import WritePlanner

MAX_TRANSACT_GET = 100


def resolve_ref(planner: WritePlanner, ref: Any) -> tuple[EntitySpec, dict[str, Any], Any]:
    """``(spec, primary key, ref as given)`` for a ``(EntityClass, {key fields})`` pair, a
    ``KeyRef`` or an entity."""
    if is_projection(ref):
        planner.spec(ref)  # refuses it, naming the projection
    if isinstance(ref, KeyRef):
        spec = planner.spec(ref.entity)
        return spec, dict(ref.key), ref
    if isinstance(ref, Entity):
        spec = planner.spec(ref)
        return spec, spec.primary_key(spec.key_values(ref)), ref
    if isinstance(ref, tuple) and len(ref) == 2 and isinstance(ref[0], type):
        spec = planner.spec(ref[0])
        return spec, spec.key_of_fields(dict(ref[1])), ref
    raise InvalidRequestError(
        f"expected (EntityClass, {{key fields}}), a KeyRef or an entity; got {ref!r}"
    )


def transact_get(planner: WritePlanner, refs: Iterable[Any]) -> Flow[list[Any]]:
    """One TransactGetItems; the entities (None where missing) in input order."""
    specs_keys = [resolve_ref(planner, ref) for ref in refs]
    if not specs_keys:
        return []
    if len(specs_keys) > MAX_TRANSACT_GET:
        raise InvalidRequestError(f"transact_get takes at most {MAX_TRANSACT_GET} items")
    table_name = planner.context.table_name
    params = {
        "TransactItems": [
            {"Get": {"TableName": table_name, "Key": key}} for _, key, _ in specs_keys
        ]
    }
    response = yield Send("TransactGetItems", params, "transact_get")
    ctx = planner.write_context()
    return [
        live_entity(spec, entry.get("Item"), ctx)
        for (spec, _, _), entry in zip(specs_keys, response.get("Responses", []))
    ]


def batch_get(planner: WritePlanner, refs: Iterable[Any], consistent: bool) -> Flow[list[Any]]:
    """Entities in input order, missing ones left out, duplicates collapsed."""
    resolved = [resolve_ref(planner, ref) for ref in refs]
    table = planner.table
    key_attrs = [a for a in (table.pk, table.sk) if a]
    found = yield from batch_get_items(
        planner.context.table_name,
        [key for _, key, _ in resolved],
        key_attrs,
        planner.context.retry,
        consistent=consistent,
        inputs=[given for _, _, given in resolved],
        pattern="batch_get",
    )
    ctx = planner.write_context()
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


def refuse_unsafe(spec: EntitySpec, unsafe: bool, verb: str) -> None:
    """Batches cannot check conditions: refuse ``Version()``/``Unique()`` entities unless
    the caller accepts unchecked writes."""
    if unsafe:
        return
    guarded = [f for f in (spec.version_field, *spec.unique_fields) if f]
    if guarded:
        raise InvalidRequestError(
            f"{verb} cannot check {spec.name}'s Version()/Unique() fields "
            f"({', '.join(guarded)}): BatchWriteItem has no conditions. Use put/delete or a "
            "transaction, or pass unsafe=True if you accept unchecked writes"
        )


def batch_put(planner: WritePlanner, entities: Iterable[Any], unsafe: bool) -> Flow[list[Any]]:
    """Put entities in chunks of 25; return them as stored."""
    entities = list(entities)
    ctx = planner.write_context()
    requests = []
    stored = []
    table = planner.table
    key_attrs = [a for a in (table.pk, table.sk) if a]
    seen: set[tuple[Any, ...]] = set()
    for entity in entities:
        spec = planner.spec(entity)
        refuse_unsafe(spec, unsafe, "batch_put")
        ready = stamped(spec, drawn(spec, entity), ctx, creating=False)
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
    yield from batch_write(
        planner.context.table_name,
        requests,
        entities,
        lambda r: key_identity(r["PutRequest"]["Item"], key_attrs),
        planner.context.retry,
        pattern="batch_put",
    )
    return stored


def batch_delete(planner: WritePlanner, refs: Iterable[Any], unsafe: bool) -> Flow[None]:
    """Delete items in chunks of 25."""
    resolved = [resolve_ref(planner, ref) for ref in refs]
    table = planner.table
    key_attrs = [a for a in (table.pk, table.sk) if a]
    requests = []
    seen: set[tuple[Any, ...]] = set()
    for spec, key, _ in resolved:
        refuse_unsafe(spec, unsafe, "batch_delete")
        identity = key_identity(key, key_attrs)
        if identity in seen:
            raise InvalidRequestError(
                f"batch_delete got {spec.describe_key(key)} twice",
                key=", ".join(map(str, identity)),
            )
        seen.add(identity)
        requests.append({"DeleteRequest": {"Key": key}})
    yield from batch_write(
        planner.context.table_name,
        requests,
        [given for _, _, given in resolved],
        lambda r: key_identity(r["DeleteRequest"]["Key"], key_attrs),
        planner.context.retry,
        pattern="batch_delete",
    )
