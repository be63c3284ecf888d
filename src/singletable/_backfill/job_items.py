"""The items a backfill job keeps in the table it rewrites, and the requests that read and
change them (pure: no I/O).

A job named ``orders-v2`` is one header item (the options its first call fixed) and one item
per segment that a worker has claimed (done, owner, lease deadline, position, counts, and the
keys of fixes in flight). They carry the reserved type tag ``__backfill__``, which no entity
can take, so no read, stream router, layout or backfill Scan ever returns them as an entity.

On a table with a sort key every item of a job shares one partition (``__backfill__#<job>``,
sort keys ``JOB`` and ``SEGMENT#0000007``), read with one Query; without a sort key each item
has a partition of its own (``__backfill__#<job>#SEGMENT#0000007``), read with BatchGetItem.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from .._expressions import Attr, CompileContext, Condition, ExpressionBuilder, UpdateExpression
from .._item_key import Key
from .._record import FrozenRecord
from .._table import Table
from .._wire import Wire
from ..errors import InvalidRequestError
from .ledger import COUNTS, InFlight, PageDone

JOB_TYPE = "__backfill__"
HEADER_SORT_KEY = "JOB"
SEGMENT_PREFIX = "SEGMENT#"
MAX_JOB_NAME = 200

# Attribute names of job items (besides the table's key and type attributes).
NAME, SEGMENT, DONE, OWNER, LEASE = "job", "segment", "done", "owner", "lease_until"
POSITION, IN_FLIGHT, CLAIMS, OPTIONS = "position", "in_flight", "claims", "options"
RECORD_COUNTS = (*COUNTS, "failed")


class BackfillSegment(FrozenRecord):
    """One segment of a backfill job, as :meth:`Repository.backfill_status` reports it.

    ``done``: finished; ``owner``: the worker that holds (or last held) it; ``lease_until``:
    until when (aware UTC; the segment is free once it passed); ``position``: the key the next
    Scan page starts after (attribute -> string value; None at the start and at the end);
    ``scanned``/``matched``/``up_to_date``/``updated``/``moved``/``failed``: the segment's
    counts, every worker's recorded pages added up. A segment no worker claimed yet is
    reported with zero counts and no owner.
    """

    __slots__ = (
        "done",
        "failed",
        "lease_until",
        "matched",
        "moved",
        "owner",
        "position",
        "scanned",
        "segment",
        "up_to_date",
        "updated",
    )
    _fields = (
        "segment",
        "done",
        "owner",
        "lease_until",
        "position",
        "scanned",
        "updated",
        "matched",
        "up_to_date",
        "moved",
        "failed",
    )

    segment: int
    done: bool
    owner: str | None
    lease_until: datetime | None
    position: dict[str, str] | None
    scanned: int
    updated: int
    matched: int
    up_to_date: int
    moved: int
    failed: int

    def __init__(
        self,
        segment: int,
        done: bool = False,
        owner: str | None = None,
        lease_until: datetime | None = None,
        position: Mapping[str, str] | None = None,
        scanned: int = 0,
        updated: int = 0,
        matched: int = 0,
        up_to_date: int = 0,
        moved: int = 0,
        failed: int = 0,
    ) -> None:
        object.__setattr__(self, "segment", segment)
        object.__setattr__(self, "done", done)
        object.__setattr__(self, "owner", owner)
        object.__setattr__(self, "lease_until", lease_until)
        object.__setattr__(self, "position", None if position is None else dict(position))
        object.__setattr__(self, "scanned", scanned)
        object.__setattr__(self, "updated", updated)
        object.__setattr__(self, "matched", matched)
        object.__setattr__(self, "up_to_date", up_to_date)
        object.__setattr__(self, "moved", moved)
        object.__setattr__(self, "failed", failed)


def check_job_name(name: Any) -> str:
    if not isinstance(name, str) or not name or len(name) > MAX_JOB_NAME:
        raise InvalidRequestError(
            f"a backfill job name is a non-empty string of at most {MAX_JOB_NAME} characters, "
            f"not {name!r}"
        )
    if any(ord(c) < 32 for c in name):
        raise InvalidRequestError(f"the backfill job name {name!r} holds a control character")
    return name


class JobItems:
    """The keys and requests of one job's items in one table."""

    def __init__(self, table: Table, table_name: str, name: str, capacity: str | None) -> None:
        self.table = table
        self.table_name = table_name
        self.name = check_job_name(name)
        self.capacity = capacity
        self.partition = f"{JOB_TYPE}#{name}"
        self.key_attrs = tuple(a for a in (table.pk, table.sk) if a)

    # -- keys --

    def header_key(self) -> dict[str, Wire]:
        if self.table.sk:
            return {self.table.pk: {"S": self.partition}, self.table.sk: {"S": HEADER_SORT_KEY}}
        return {self.table.pk: {"S": self.partition}}

    def segment_key(self, number: int) -> dict[str, Wire]:
        suffix = f"{SEGMENT_PREFIX}{number:07d}"
        if self.table.sk:
            return {self.table.pk: {"S": self.partition}, self.table.sk: {"S": suffix}}
        return {self.table.pk: {"S": f"{self.partition}#{suffix}"}}

    # -- reading --

    def get_header_params(self) -> dict[str, Any]:
        return self._with_capacity(
            {"TableName": self.table_name, "Key": self.header_key(), "ConsistentRead": True}
        )

    def query_params(self, start: Mapping[str, Any] | None) -> dict[str, Any]:
        """One page of the job's partition (tables with a sort key), read consistently."""
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": self.table.pk},
            "ExpressionAttributeValues": {":pk": {"S": self.partition}},
            "ConsistentRead": True,
        }
        if start:
            params["ExclusiveStartKey"] = dict(start)
        return self._with_capacity(params)

    def owned(self, item: Mapping[str, Wire]) -> bool:
        """Whether ``item`` is one of this job's items."""
        tag = item.get(self.table.type_attribute)
        name = item.get(NAME)
        return tag == {"S": JOB_TYPE} and name == {"S": self.name}

    # -- the header --

    def header_put_params(self, options: Mapping[str, Any], now: float) -> dict[str, Any]:
        """Create the header, unless another worker did first."""
        item = {
            **self.header_key(),
            self.table.type_attribute: {"S": JOB_TYPE},
            NAME: {"S": self.name},
            OPTIONS: {"S": json.dumps(dict(options), sort_keys=True)},
            "created": {"N": _number(now)},
        }
        return self._with_capacity(
            {
                "TableName": self.table_name,
                "Item": item,
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": self.table.pk},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        )

    def header_options(self, item: Mapping[str, Wire]) -> dict[str, Any]:
        try:
            options = json.loads(item[OPTIONS]["S"])
        except (KeyError, TypeError, ValueError):
            options = None
        if not isinstance(options, dict):
            raise InvalidRequestError(
                f"the backfill job {self.name!r} has a damaged header item; "
                f"repo.backfill_forget({self.name!r}) removes the job",
                key=self.name,
            )
        return options

    # -- segments --

    def claim_params(self, number: int, owner: str, until: float, now: float) -> dict[str, Any]:
        """Take a segment that nobody claimed yet, or whose lease has passed and that is not
        done; the response holds the segment as stored (ALL_NEW)."""
        update = UpdateExpression(ExpressionBuilder())
        update.set(self.table.type_attribute, {"S": JOB_TYPE})
        update.set(NAME, {"S": self.name})
        update.set(SEGMENT, {"N": str(number)})
        update.set(OWNER, {"S": owner})
        update.set(LEASE, {"N": _number(until)})
        update.set_if_not_exists(DONE, {"BOOL": False})
        update.add(CLAIMS, {"N": "1"})
        free = Attr(self.table.pk).not_exists() | (
            Attr(DONE).eq(False) & Attr(LEASE).lt(Decimal(_number(now)))
        )
        return self._update(number, update, free, "ALL_NEW")

    def pending_params(
        self, number: int, owner: str, until: float, fixes: InFlight
    ) -> dict[str, Any]:
        """Record the fixes about to be sent (and renew the lease), while ``owner`` holds it."""
        update = UpdateExpression(ExpressionBuilder())
        update.set(LEASE, {"N": _number(until)})
        update.set(IN_FLIGHT, {"S": encode_in_flight(fixes)})
        return self._update(number, update, Attr(OWNER).eq(owner), None)

    def advance_params(
        self, page: PageDone, owner: str, until: float, now: float
    ) -> dict[str, Any]:
        """Record a settled page: the next position (or done, and the lease given back), the
        page's counts added, the fixes in flight cleared, while ``owner`` holds it."""
        update = UpdateExpression(ExpressionBuilder())
        update.set(DONE, {"BOOL": page.done})
        update.set(LEASE, {"N": _number(now if page.done else until)})
        if page.start:
            update.set(POSITION, {"M": dict(page.start)})
        else:
            update.remove(POSITION)
        update.remove(IN_FLIGHT)
        tally = page.tally
        for name in RECORD_COUNTS:
            value = len(tally.failed) if name == "failed" else getattr(tally, name)
            update.add(name, {"N": str(value)})
        return self._update(page.segment, update, Attr(OWNER).eq(owner), None)

    def _update(
        self, number: int, update: UpdateExpression, condition: Condition, returns: str | None
    ) -> dict[str, Any]:
        builder = update.builder
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": self.segment_key(number),
            "ConditionExpression": condition.compile(CompileContext(builder)),
            "UpdateExpression": update.render(),
        }
        builder.merge_into(params)
        if returns:
            params["ReturnValues"] = returns
        return self._with_capacity(params)

    def record(self, number: int, item: Mapping[str, Wire] | None) -> BackfillSegment:
        """A segment as ``backfill_status`` reports it (an unclaimed one when ``item`` is
        None)."""
        if item is None:
            return BackfillSegment(number)
        lease = item.get(LEASE)
        position = item.get(POSITION)
        counts = {name: int(item[name]["N"]) if name in item else 0 for name in RECORD_COUNTS}
        return BackfillSegment(
            number,
            done=bool(item.get(DONE, {}).get("BOOL", False)),
            owner=item[OWNER]["S"] if OWNER in item else None,
            lease_until=None
            if lease is None
            else datetime.fromtimestamp(float(lease["N"]), timezone.utc),
            position=None if position is None else Key.of(position["M"], self.key_attrs).strings,
            **counts,
        )

    def _with_capacity(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.capacity is not None:
            params["ReturnConsumedCapacity"] = self.capacity
        return params


def segment_number(item: Mapping[str, Wire]) -> int | None:
    value = item.get(SEGMENT)
    return int(value["N"]) if value is not None and "N" in value else None


def lease_of(item: Mapping[str, Wire]) -> float:
    value = item.get(LEASE)
    return float(value["N"]) if value is not None else 0.0


def is_done(item: Mapping[str, Wire]) -> bool:
    return bool(item.get(DONE, {}).get("BOOL", False))


def encode_in_flight(fixes: InFlight) -> str:
    return json.dumps(
        [[list(key), kind, list(new) if new else None] for key, (kind, new) in fixes.items()],
        separators=(",", ":"),
    )


def decode_in_flight(item: Mapping[str, Wire]) -> InFlight:
    value = item.get(IN_FLIGHT)
    if value is None:
        return {}
    return {
        tuple(key): (kind, tuple(new) if new else None) for key, kind, new in json.loads(value["S"])
    }


def is_job_item(item: Mapping[str, Any], table: Table) -> bool:
    """Whether a stored item (or a key) belongs to a backfill job."""
    tag = item.get(table.type_attribute)
    if isinstance(tag, Mapping) and tag.get("S") == JOB_TYPE:
        return True
    pk = item.get(table.pk)
    text = pk.get("S") if isinstance(pk, Mapping) else None
    return isinstance(text, str) and text.startswith(JOB_TYPE + "#")


def position_of(item: Mapping[str, Wire]) -> dict[str, Any] | None:
    value = item.get(POSITION)
    return dict(value["M"]) if value is not None else None


def batch_keys(items: JobItems, segments: int) -> Sequence[dict[str, Wire]]:
    return [items.header_key(), *(items.segment_key(n) for n in range(segments))]


def _number(seconds: float) -> str:
    return f"{seconds:.3f}"
