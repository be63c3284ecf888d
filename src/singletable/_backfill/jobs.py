"""``repo.backfill(E, segments=N, job="name")``: the job's state in the table it rewrites, so
any number of workers on any machines can run the same call at once.

Each worker claims one unfinished segment at a time with a conditional write that holds a lease
(``lease_seconds``): a segment nobody claimed, or one whose lease passed. Before it sends a
page's fixes it records their keys and renews the lease; after the page settled it records the
next position and the page's counts and renews again; both writes hold only while the worker
still owns the segment. A worker that finds it lost the lease (it was paused past it, and
another worker took the segment over) leaves the segment quietly: what it had not recorded is
the new holder's to redo, and fixes it sent anyway were conditioned on the items being
unchanged. A worker that dies leaves its lease to run out; the next holder resumes from the
last recorded position, and counts an item recorded as in flight that it finds fresh as
updated. When every unfinished segment is leased, a worker looks again a tenth of a lease period
later (sooner if a lease runs out first); it returns once every segment is done.

Leases compare the workers' clocks (the repository clock): keep them in step (NTP) to well
within a lease.
"""

from __future__ import annotations

import os
import secrets
import socket
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from .._flows import Flow, Send
from .._verbs.batch import batch_get_items, batch_write
from ..errors import InvalidRequestError, ServiceError
from .job_items import (
    BackfillSegment,
    JobItems,
    batch_keys,
    decode_in_flight,
    is_done,
    lease_of,
    position_of,
    segment_number,
)
from .ledger import Claim, InFlight, Ledger, PageDone, Segment, Tally

PATTERN = "backfill"
CLAIM_ATTEMPTS = 3  # claims tried per look at the job before looking again

Records = dict[int, dict[str, Any]]


def worker_name() -> str:
    """``host:pid:random``: unique per call, readable in ``backfill_status``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def read_job(items: JobItems, retry: Any, segments: int | None) -> Flow[tuple[Any, Records]]:
    """``(header item or None, claimed segments by number)``, read consistently."""
    header: Any = None
    records: Records = {}
    if items.table.sk:
        start: Any = None
        while True:
            response = yield Send("Query", items.query_params(start), PATTERN)
            for item in response.get("Items", ()):
                number = segment_number(item)
                if number is not None:
                    records[number] = item
                elif items.owned(item):
                    header = item
            start = response.get("LastEvaluatedKey")
            if not start:
                return header, records
    response = yield Send("GetItem", items.get_header_params(), PATTERN)
    header = response.get("Item")
    if header is None:
        return None, records
    if segments is None:
        segments = int(items.header_options(header).get("segments", 0))
    keys = batch_keys(items, segments)[1:]
    found = yield from batch_get_items(
        items.table_name, keys, items.key_attrs, retry, consistent=True, pattern=PATTERN
    )
    for item in found.values():
        number = segment_number(item)
        if number is not None:
            records[number] = item
    return header, records


def next_look(earliest: float, now: float, lease: float) -> float:
    """Seconds until a worker that found every unfinished segment leased looks again: just
    after the earliest lease runs out, and at most a tenth of a lease period (waiting for the
    lease alone would keep the worker, and its backfill call, waiting up to a lease period
    after the others have finished)."""
    return min(earliest - now + lease / 20, lease / 10)


class TableStore:
    """The job store of ``job="name"`` (see the module docstring and
    :class:`~singletable._backfill.store.JobStore`)."""

    def __init__(
        self,
        items: JobItems,
        options: Mapping[str, Any],
        *,
        lease_seconds: float,
        now: Any,
        retry: Any,
        owner: str | None = None,
    ) -> None:
        self.items = items
        self.options = dict(options)
        self.segments = int(options["segments"])
        self.lease = float(lease_seconds)
        self.now = now  # () -> epoch seconds: the repository clock
        self.retry = retry
        self.owner = owner or worker_name()
        self.done = 0
        self.scanned = 0
        # Workers start looking at different segments (fewer lost races).
        self.offset = zlib.crc32(self.owner.encode()) % self.segments

    def open(self, ledger: Ledger) -> Flow[Tally]:
        """Create the job's header, or check that the options match the first call's."""
        items = self.items
        response = yield Send("GetItem", items.get_header_params(), PATTERN)
        header = response.get("Item")
        if header is None:
            try:
                yield Send("PutItem", items.header_put_params(self.options, self.now()), PATTERN)
            except ServiceError as exc:
                if exc.aws_code != "ConditionalCheckFailedException":
                    raise
                header = exc.response.get("Item")  # another worker created it first
                if header is None:
                    response = yield Send("GetItem", items.get_header_params(), PATTERN)
                    header = response.get("Item")
        if header is not None:
            self.check(items.header_options(header))
        return Tally()

    def check(self, theirs: Mapping[str, Any]) -> None:
        differ = sorted(k for k in self.options if theirs.get(k) != self.options[k])
        if differ:
            given = ", ".join(f"{k}={theirs.get(k)!r}" for k in differ)
            raise InvalidRequestError(
                f"the backfill job {self.items.name!r} was started with other options "
                f"({given}); run it with the same options, use another job name, or "
                f"repo.backfill_forget({self.items.name!r}) to start over",
                key=self.items.name,
            )

    def claim(self, ledger: Ledger) -> Flow[Claim]:
        _, records = yield from read_job(self.items, self.retry, self.segments)
        self.done = sum(1 for item in records.values() if is_done(item))
        self.scanned = sum(int(item.get("scanned", {}).get("N", 0)) for item in records.values())
        now = self.now()
        order = [(self.offset + k) % self.segments for k in range(self.segments)]
        unfinished = [n for n in order if n not in records or not is_done(records[n])]
        if not unfinished:
            return Claim()
        free = [n for n in unfinished if n not in records or lease_of(records[n]) < now]
        for number in free[:CLAIM_ATTEMPTS]:
            params = self.items.claim_params(number, self.owner, now + self.lease, now)
            try:
                response = yield Send("UpdateItem", params, PATTERN)
            except ServiceError as exc:
                if exc.aws_code == "ConditionalCheckFailedException":
                    continue  # another worker was first
                raise
            item = response.get("Attributes") or {}
            return Claim((Segment(number, position_of(item), decode_in_flight(item)),))
        if free:
            return Claim(wait=0.0)
        earliest = min(lease_of(records[n]) for n in unfinished)
        return Claim(wait=next_look(earliest, now, self.lease))

    def pending(self, ledger: Ledger, fixes: Mapping[int, InFlight]) -> Flow[set[int]]:
        held = set()
        for number, keys in fixes.items():
            params = self.items.pending_params(number, self.owner, self.now() + self.lease, keys)
            if (yield from self._held(params)):
                held.add(number)
        return held

    def advance(self, ledger: Ledger, pages: Sequence[PageDone]) -> Flow[set[int]]:
        held = set()
        for page in pages:
            now = self.now()
            params = self.items.advance_params(page, self.owner, now + self.lease, now)
            if (yield from self._held(params)):
                held.add(page.segment)
                self.scanned += page.tally.scanned
                self.done += page.done
        return held

    def _held(self, params: dict[str, Any]) -> Flow[bool]:
        """Send a write conditioned on holding the segment; False: the lease was lost."""
        try:
            yield Send("UpdateItem", params, PATTERN)
        except ServiceError as exc:
            if exc.aws_code == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def close(self, ledger: Ledger) -> Flow[None]:
        return None  # the job's items stay until backfill_forget
        yield  # a flow

    def progress(self) -> tuple[int, int, int]:
        return self.done, self.segments, self.scanned


def job_status(items: JobItems, retry: Any) -> Flow[list[BackfillSegment]]:
    """Every segment of the job, in order (empty for an unknown job)."""
    header, records = yield from read_job(items, retry, None)
    if header is None:
        return []
    segments = int(items.header_options(header).get("segments", 0))
    return [items.record(n, records.get(n)) for n in range(segments)]


def forget_job(items: JobItems, retry: Any) -> Flow[int]:
    """Delete every item of the job; the number deleted."""
    header, records = yield from read_job(items, retry, None)
    keys = [] if header is None else [items.header_key()]
    keys += [items.segment_key(n) for n in sorted(records)]
    requests = [{"DeleteRequest": {"Key": key}} for key in keys]
    yield from batch_write(
        items.table_name,
        requests,
        keys,
        lambda r: tuple(str(v) for v in r["DeleteRequest"]["Key"].values()),
        retry,
        pattern=PATTERN,
    )
    return len(keys)


def job_items(planner: Any, name: Any) -> JobItems:
    """The items of job ``name`` in the repository's table."""
    context = planner.context
    return JobItems(planner.table, context.table_name, name, context.capacity)
