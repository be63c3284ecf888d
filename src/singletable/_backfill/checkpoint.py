"""The shape of a backfill checkpoint file, checked before a run resumes from it.

A checkpoint is JSON that a person or a tool may have edited, truncated or copied from another
job. :func:`check_checkpoint` accepts only what :class:`~.store.FileStore` writes: one position
per segment of the job (each a key of the table or absent), counts that are counts, and the
fixes in flight as keys. Anything else is refused naming the file and the field, before a
request is sent: a resumed run trusts the positions (it does not scan what they say is done)
and carries the counts into its report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidRequestError
from .ledger import COUNTS, MOVED, UPDATED

FIX_KINDS = (UPDATED, MOVED)


class _Damaged(Exception):
    """One field of the checkpoint is wrong: ``field`` (a JSON path) and ``why``."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(field, why)
        self.field = field
        self.why = why


def check_checkpoint(
    data: dict[str, Any], path: str, segments: int, key_attributes: Sequence[str]
) -> None:
    """Refuse (:class:`InvalidRequestError` naming ``path`` and the field) a checkpoint whose
    structure is not what a backfill of ``segments`` segments over a table keyed by
    ``key_attributes`` writes."""
    try:
        _check_segments(data.get("segments"), segments, tuple(key_attributes))
        _check_report(data.get("report"))
        _check_in_flight(data.get("in_flight"), len(key_attributes))
        _check_key_list(data.get("moved_to"), "moved_to", len(key_attributes))
    except _Damaged as damaged:
        raise InvalidRequestError(
            f"the backfill checkpoint {path} is damaged: {damaged.field} {damaged.why}; "
            "delete it to start over",
            key=path,
        ) from None


def _check_segments(positions: Any, segments: int, key_attributes: tuple[str, ...]) -> None:
    if not isinstance(positions, list):
        raise _Damaged("segments", "is not a list")
    if len(positions) != segments:
        raise _Damaged(
            "segments", f"lists {len(positions)} positions, not one per segment ({segments})"
        )
    for n, position in enumerate(positions):
        field = f"segments[{n}]"
        if not isinstance(position, dict) or set(position) != {"start", "done"}:
            raise _Damaged(field, "is not a position ({'start': key or null, 'done': bool})")
        done, start = position["done"], position["start"]
        if not isinstance(done, bool):
            raise _Damaged(f"{field}.done", "is not true or false")
        if start is None:
            continue
        if done:
            raise _Damaged(f"{field}.start", "is set on a segment marked done")
        _check_key(start, f"{field}.start", key_attributes)


def _check_key(key: Any, field: str, key_attributes: tuple[str, ...]) -> None:
    """A table key in the wire format, as a Scan's ``LastEvaluatedKey`` holds it."""
    if not isinstance(key, dict) or set(key) != set(key_attributes):
        raise _Damaged(field, f"is not a key of the table ({', '.join(key_attributes)})")
    for attribute, value in key.items():
        if not (
            isinstance(value, dict)
            and len(value) == 1
            and next(iter(value)) in ("S", "N")
            and isinstance(next(iter(value.values())), str)
        ):
            raise _Damaged(f"{field}.{attribute}", "is not a key value ({'S': text})")


def _check_report(report: Any) -> None:
    if not isinstance(report, dict):
        raise _Damaged("report", "is not an object")
    for name in COUNTS:
        count = report.get(name)
        if type(count) is not int or count < 0:
            raise _Damaged(f"report.{name}", f"is not a count (got {count!r})")
    failed = report.get("failed")
    if not isinstance(failed, list):
        raise _Damaged("report.failed", "is not a list")
    for n, failure in enumerate(failed):
        if not (
            isinstance(failure, dict)
            and isinstance(failure.get("reason"), str)
            and isinstance(failure.get("key"), dict)
            and all(isinstance(v, str) for v in failure["key"].values())
        ):
            raise _Damaged(f"report.failed[{n}]", "is not {'key': {...}, 'reason': text}")
    capacity = report.get("consumed_capacity")
    if capacity is not None and (
        isinstance(capacity, bool)
        or not isinstance(capacity, (int, float))
        or not math.isfinite(capacity)
        or capacity < 0
    ):
        raise _Damaged("report.consumed_capacity", f"is not a number of units (got {capacity!r})")


def _check_in_flight(entries: Any, width: int) -> None:
    if not isinstance(entries, list):
        raise _Damaged("in_flight", "is not a list")
    for n, entry in enumerate(entries):
        field = f"in_flight[{n}]"
        if not isinstance(entry, list) or len(entry) != 3:
            raise _Damaged(field, "is not [key, kind, new key or null]")
        key, kind, new = entry
        _check_identity(key, f"{field}[0]", width)
        if kind not in FIX_KINDS:
            raise _Damaged(f"{field}[1]", f"is not one of {', '.join(FIX_KINDS)}")
        if new is not None:
            _check_identity(new, f"{field}[2]", width)


def _check_key_list(keys: Any, field: str, width: int) -> None:
    if not isinstance(keys, list):
        raise _Damaged(field, "is not a list")
    for n, key in enumerate(keys):
        _check_identity(key, f"{field}[{n}]", width)


def _check_identity(key: Any, field: str, width: int) -> None:
    """A key as the list of its attribute values (strings), in key order."""
    if not (
        isinstance(key, list) and 1 <= len(key) <= width and all(isinstance(v, str) for v in key)
    ):
        raise _Damaged(field, "is not a key (a list of its attribute values)")
