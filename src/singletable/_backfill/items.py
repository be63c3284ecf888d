"""What a backfill decides about one stored item, and the requests that fix it (pure: no I/O).

``repo.backfill(E)`` (:mod:`singletable._backfill.flow`, the flow) scans the table for ``E``'s items
and hands each one to :meth:`BackfillPlan.classify`: the item is decoded, the entity's
``Shard()`` fields are derived again, and :meth:`EntitySpec.to_item` says what the item should
hold now. Compared attribute by attribute (by value: numbers as numbers, sets as sets), an item
is

* ``fresh``: nothing to write;
* ``stale``: some attributes differ (a key of the table's indexes, sparse membership, a
  ``Shard`` field, the TTL number, the type tag after a rename, a field stored in another
  datetime format or missing its default): one ``UpdateItem`` sets those and removes the index
  keys the entity no longer writes, conditioned on the item being unchanged since it was read
  (:func:`unchanged_since_read`); nothing else is touched, the version is not bumped;
* ``moved``: its primary key would change: one transaction deletes it (same condition) and puts
  it under the new key (which must be free), re-pointing its ``Unique()`` guards;
* ``failed``: it does not decode, or its keys cannot be rendered (a reason, never contents);
* ``skip``: an expired item, or another entity's (the Scan filter already leaves those out).

Attributes the entity does not know (extras of an ``extra="forbid"`` model, another tool's
bookkeeping) are left as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from .._context import WriteContext
from .._entity_spec import EntitySpec
from .._expressions import ExpressionBuilder, add_filter
from .._item_key import Key
from .._record import FrozenRecord
from .._verbs.guards import guard_put
from .._verbs.ops import WriteOp, with_shards
from .._wire import Wire, bytes_of
from ..errors import ConditionFailed, SingleTableError

SCALAR_TAGS = frozenset({"S", "N", "B", "BOOL"})


class BackfillFailure(FrozenRecord):
    """One item a backfill could not fix: its primary key (attribute -> string value) and why
    (never the item's contents)."""

    __slots__ = ("key", "reason")
    _fields = ("key", "reason")

    key: dict[str, str]
    reason: str

    def __init__(self, key: Mapping[str, str], reason: str) -> None:
        object.__setattr__(self, "key", dict(key))
        object.__setattr__(self, "reason", reason)


class BackfillReport(FrozenRecord):
    """What a backfill did (or, with ``dry_run=True``, would do).

    ``scanned``: items the Scan read (DynamoDB's ``ScannedCount``, every type); ``matched``:
    items of the entity's type tags (current or former) that are live; of those,
    ``up_to_date`` needed nothing, ``updated`` were rewritten in place, ``moved`` got a new
    primary key (``move=True``), and ``failed`` lists the rest as :class:`BackfillFailure`
    (key and reason: it does not decode, its primary key would change without ``move=True``,
    it kept changing under the backfill...). ``consumed_capacity``: capacity units of every
    request, added up (None when the backend reported none).
    """

    __slots__ = (
        "consumed_capacity",
        "failed",
        "matched",
        "moved",
        "scanned",
        "up_to_date",
        "updated",
    )
    _fields = (
        "scanned",
        "matched",
        "up_to_date",
        "updated",
        "moved",
        "failed",
        "consumed_capacity",
    )

    scanned: int
    matched: int
    up_to_date: int
    updated: int
    moved: int
    failed: tuple[BackfillFailure, ...]
    consumed_capacity: float | None

    def __init__(
        self,
        scanned: int = 0,
        matched: int = 0,
        up_to_date: int = 0,
        updated: int = 0,
        moved: int = 0,
        failed: Sequence[BackfillFailure] = (),
        consumed_capacity: float | None = None,
    ) -> None:
        object.__setattr__(self, "scanned", scanned)
        object.__setattr__(self, "matched", matched)
        object.__setattr__(self, "up_to_date", up_to_date)
        object.__setattr__(self, "updated", updated)
        object.__setattr__(self, "moved", moved)
        object.__setattr__(self, "failed", tuple(failed))
        object.__setattr__(self, "consumed_capacity", consumed_capacity)

    @property
    def ok(self) -> bool:
        """Whether every matched item is now fresh (nothing failed)."""
        return not self.failed

    def __str__(self) -> str:
        capacity = "" if self.consumed_capacity is None else f", {self.consumed_capacity:g} CU"
        return (
            f"scanned {self.scanned}, matched {self.matched}: {self.up_to_date} up to date, "
            f"{self.updated} updated, {self.moved} moved, {len(self.failed)} failed{capacity}"
        )


class Decision:
    """What to do with one scanned item (see the module docstring for the kinds)."""

    __slots__ = ("item", "key", "kind", "new_key", "reason", "remove", "set")

    def __init__(
        self,
        kind: str,  # skip, fresh, stale, moved, failed
        key: dict[str, Wire],
        item: Mapping[str, Wire],
        *,
        set: dict[str, Wire] | None = None,
        remove: Sequence[str] = (),
        new_key: dict[str, Wire] | None = None,
        reason: str = "",
    ) -> None:
        self.kind = kind
        self.key = key
        self.item = item
        self.set: dict[str, Wire] = {} if set is None else set
        self.remove = tuple(remove)
        self.new_key = new_key
        self.reason = reason

    def after(self) -> dict[str, Wire]:
        """The item as the fix leaves it (under its new key for a move)."""
        fixed = {a: v for a, v in self.item.items() if a not in self.remove}
        fixed.update(self.set)
        if self.new_key is not None:
            fixed.update(self.new_key)
        return fixed


class BackfillPlan:
    """The pure half of ``repo.backfill(E)``: Scan requests, decisions, fixing requests."""

    def __init__(self, spec: EntitySpec, table_name: str, capacity: str | None) -> None:
        self.spec = spec
        self.table_name = table_name
        self.capacity = capacity
        table = spec.table
        self.key_attrs = tuple(a for a in (table.pk, table.sk) if a)
        derived = set(table.key_attributes) | {table.type_attribute}
        if spec.ttl_field and table.ttl_attribute:
            derived.add(table.ttl_attribute)
        derived.update(spec.attr_names[plan.field] for plan in spec.shards)
        self.derived = frozenset(derived - set(self.key_attrs))

    # -- reading --

    def scan_params(
        self, segment: int, segments: int, start: Mapping[str, Any] | None, limit: int
    ) -> dict[str, Any]:
        """One page of one segment: the entity's type tags (current and former) as the filter
        (expired items are skipped as they are read, and counted as scanned)."""
        params: dict[str, Any] = {"TableName": self.table_name, "Limit": limit}
        add_filter(params, self.spec.ownership_filter(None), "")
        if segments > 1:
            params["Segment"] = segment
            params["TotalSegments"] = segments
        if start:
            params["ExclusiveStartKey"] = dict(start)
        if self.capacity is not None:
            params["ReturnConsumedCapacity"] = self.capacity
        return params

    def get_params(self, key: Mapping[str, Wire]) -> dict[str, Any]:
        """A consistent read of one item (after a failed condition, to retry from it)."""
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": dict(key),
            "ConsistentRead": True,
        }
        if self.capacity is not None:
            params["ReturnConsumedCapacity"] = self.capacity
        return params

    def key_of(self, item: Mapping[str, Wire]) -> dict[str, Wire]:
        return {a: item[a] for a in self.key_attrs if a in item}

    def identity(self, key: Mapping[str, Wire]) -> tuple[str, ...]:
        """A key as a tuple of strings (what checkpoints and reports hold)."""
        return tuple(self.plain_key(key).values())

    def plain_key(self, key: Mapping[str, Wire]) -> dict[str, str]:
        return Key.of(key, self.key_attrs).strings

    # -- deciding --

    def classify(self, item: Mapping[str, Wire], ctx: WriteContext) -> Decision:
        """What ``item`` needs (see the module docstring); ``ctx`` gives now (TTL)."""
        spec = self.spec
        key = self.key_of(item)
        if not spec.owns(item, ctx.now_epoch()):
            return Decision("skip", key, item)
        try:
            entity = with_shards(spec, spec.from_item(item))
            unset = [p.field for p in spec.random_shards if spec.attr_names[p.field] not in item]
            if unset:  # a random Shard(n) added to the model: each item draws its own
                drawn = spec.drawn_shards()
                entity = entity.model_copy(update={f: drawn[f] for f in unset})
            wanted = spec.to_item(entity)
        except SingleTableError as exc:
            return Decision("failed", key, item, reason=f"{exc.code}: {exc.message}")
        changes, remove = stale_attributes(item, wanted, self.derived, self.key_attrs)
        new_key = {a: wanted[a] for a in self.key_attrs if a in wanted}
        if not all(same_wire(item.get(a), v) for a, v in new_key.items()):
            return Decision("moved", key, item, set=changes, remove=remove, new_key=new_key)
        if changes or remove:
            return Decision("stale", key, item, set=changes, remove=remove)
        return Decision("fresh", key, item)

    # -- fixing --

    def update_params(self, decision: Decision) -> dict[str, Any]:
        """The UpdateItem of a stale item: SET what differs, REMOVE index keys no longer
        written, conditioned on the item being unchanged since it was read."""
        builder = ExpressionBuilder("b")
        parts = []
        if decision.set:
            parts.append(
                "SET "
                + ", ".join(
                    f"{builder.name(a)} = {builder.value(v)}" for a, v in decision.set.items()
                )
            )
        if decision.remove:
            parts.append("REMOVE " + ", ".join(builder.name(a) for a in decision.remove))
        touched = [*decision.set, *decision.remove]
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": decision.key,
            "UpdateExpression": " ".join(parts),
            "ConditionExpression": self.unchanged_since_read(builder, decision.item, touched),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        builder.merge_into(params)
        if self.capacity is not None:
            params["ReturnConsumedCapacity"] = self.capacity
        return params

    def unchanged_since_read(
        self, builder: ExpressionBuilder, item: Mapping[str, Wire], touched: Sequence[str]
    ) -> str:
        """A condition that holds while the stored item is the one read: it exists; with
        ``Version()`` its version and the attributes the fix touches are as read; without, every
        scalar attribute read is (and those read as absent still are)."""
        spec = self.spec
        table = spec.table
        if spec.version_field:
            checked = [spec.attr_names[spec.version_field], table.type_attribute, *touched]
        else:
            checked = [a for a, v in item.items() if _scalar(v) and a not in self.key_attrs]
            checked += [a for a in touched if a not in item]
        tests = [f"attribute_exists({builder.name(table.pk)})"]
        for attr in dict.fromkeys(checked):
            value = item.get(attr)
            if value is None:
                tests.append(f"attribute_not_exists({builder.name(attr)})")
            elif _scalar(value):
                tests.append(f"{builder.name(attr)} = {builder.value(value)}")
        return " AND ".join(tests)

    def move_ops(self, decision: Decision, ctx: WriteContext) -> list[WriteOp]:
        """The transaction of a move: delete the item read (unchanged since), put it under its
        new key (which must be free), and re-point its ``Unique()`` guards."""
        spec = self.spec
        assert decision.new_key is not None
        old_key, new_key = decision.key, decision.new_key
        builder = ExpressionBuilder("b")
        delete_params: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": old_key,
            "ConditionExpression": self.unchanged_since_read(builder, decision.item, ()),
        }
        builder.merge_into(delete_params)
        put_params: dict[str, Any] = {
            "TableName": self.table_name,
            "Item": decision.after(),
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": spec.table.pk},
        }
        where = f"backfilling {spec.name}"

        def changed(_old: dict[str, Wire] | None) -> SingleTableError:
            return ConditionFailed(
                f"{where} {Key(old_key).text}: the item changed since it was read",
                key=Key(old_key).text,
            )

        def taken(_old: dict[str, Wire] | None) -> SingleTableError:
            return ConditionFailed(
                f"{where} {Key(old_key).text}: its new key {Key(new_key).text} holds another item",
                key=Key(new_key).text,
            )

        ops = [
            WriteOp(
                "delete", "DeleteItem", spec, spec.type_name, old_key, delete_params, "", changed
            ),
            WriteOp("create", "PutItem", spec, spec.type_name, new_key, put_params, "", taken),
        ]
        entity = spec.from_item(decision.after())
        ttl = decision.after().get(spec.table.ttl_attribute or "") if spec.ttl_field else None
        for name in spec.unique_fields:
            value = getattr(entity, name)
            if value is not None:
                ops.append(guard_put(spec, name, value, new_key, ttl, ctx, previous_owner=old_key))
        return ops


def stale_attributes(
    stored: Mapping[str, Wire],
    wanted: Mapping[str, Wire],
    derived: frozenset[str],
    key_attrs: Sequence[str],
) -> tuple[dict[str, Wire], list[str]]:
    """``(attributes to set, attributes to remove)`` that make ``stored`` hold what the entity
    writes now (``wanted``): every attribute of ``wanted`` whose stored value differs, and the
    derived attributes (index keys, TTL, shards) stored but no longer written. Primary-key
    attributes are left out (a change there is a move)."""
    changes = {
        attr: value
        for attr, value in wanted.items()
        if attr not in key_attrs and not same_wire(stored.get(attr), value)
    }
    remove = sorted(a for a in derived if a in stored and a not in wanted)
    return changes, remove


def same_wire(a: Wire | None, b: Wire | None) -> bool:
    """Whether two attribute values are equal as DynamoDB compares them: numbers by value,
    sets whatever their order, bytes whatever their encoding, maps and lists member by member."""
    if a is None or b is None:
        return a is None and b is None
    if len(a) != 1 or len(b) != 1:
        return a == b
    ((tag, left),) = a.items()
    ((other, right),) = b.items()
    if tag != other:
        return False
    if tag == "N":
        return _number(left) == _number(right)
    if tag == "SS":
        return set(left) == set(right) and len(left) == len(right)
    if tag == "NS":
        return sorted(map(_number, left)) == sorted(map(_number, right))
    if tag == "B":
        return bytes_of(left) == bytes_of(right)
    if tag == "BS":
        return sorted(map(bytes_of, left)) == sorted(map(bytes_of, right))
    if tag == "M":
        return left.keys() == right.keys() and all(same_wire(left[k], right[k]) for k in left)
    if tag == "L":
        return len(left) == len(right) and all(map(same_wire, left, right))
    return bool(left == right)


def same_item(a: Mapping[str, Wire] | None, b: Mapping[str, Wire] | None) -> bool:
    """Whether two stored items hold the same attributes with equal values."""
    if a is None or b is None:
        return a is None and b is None
    return a.keys() == b.keys() and all(same_wire(a[k], b[k]) for k in a)


def _number(text: Any) -> Decimal | str:
    try:
        return Decimal(text)
    except (InvalidOperation, TypeError, ValueError):
        return str(text)


def _scalar(value: Wire) -> bool:
    return len(value) == 1 and next(iter(value)) in SCALAR_TAGS
