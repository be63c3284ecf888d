"""What one backfill worker keeps while it runs: the running counts (:class:`Tally`), the
segments it holds (:class:`Segment`), what the job store hands it (:class:`Claim`) and takes
back after every page (:class:`PageDone`), and the :class:`Ledger` that counts each decision
once, whatever an earlier run left in flight. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .items import BackfillFailure, BackfillPlan, BackfillReport, Decision

# Outcomes of one fix.
UPDATED, MOVED, UP_TO_DATE = "updated", "moved", "up_to_date"

Identity = tuple[str, ...]
InFlight = dict[Identity, tuple[str, Identity | None]]  # key -> (kind, new key of a move)
COUNTS = ("scanned", "matched", "up_to_date", "updated", "moved")


class Tally:
    """Running counts: a whole job's, one worker's, or what one page added."""

    __slots__ = ("capacity", "failed", "matched", "moved", "scanned", "up_to_date", "updated")

    def __init__(self) -> None:
        self.scanned = self.matched = self.up_to_date = self.updated = self.moved = 0
        self.failed: list[BackfillFailure] = []
        self.capacity: float | None = None

    def add(self, other: Tally) -> None:
        for name in COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failed += other.failed
        if other.capacity is not None:
            self.capacity = (self.capacity or 0.0) + other.capacity

    def add_capacity(self, response: Any) -> None:
        """Add the capacity units a response reports (one entry or a list)."""
        consumed = response.get("ConsumedCapacity") if isinstance(response, dict) else None
        if isinstance(consumed, dict):
            consumed = [consumed]
        for entry in consumed or ():
            units = entry.get("CapacityUnits")
            if isinstance(units, (int, float)):
                self.capacity = (self.capacity or 0.0) + float(units)

    def report(self) -> BackfillReport:
        return BackfillReport(
            self.scanned,
            self.matched,
            self.up_to_date,
            self.updated,
            self.moved,
            self.failed,
            self.capacity,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **{name: getattr(self, name) for name in COUNTS},
            "failed": [{"key": f.key, "reason": f.reason} for f in self.failed],
            "consumed_capacity": self.capacity,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tally:
        tally = cls()
        for name in COUNTS:
            setattr(tally, name, int(data[name]))
        tally.failed = [BackfillFailure(f["key"], f["reason"]) for f in data["failed"]]
        capacity = data["consumed_capacity"]
        tally.capacity = None if capacity is None else float(capacity)
        return tally


class Segment:
    """A segment a worker holds: its number, where its next page starts (a Scan's
    ``LastEvaluatedKey``; None at the start) and the fixes an earlier holder sent without
    settling them (``resumed``)."""

    __slots__ = ("number", "resumed", "start")

    def __init__(
        self, number: int, start: dict[str, Any] | None = None, resumed: InFlight | None = None
    ) -> None:
        self.number = number
        self.start = start
        self.resumed: InFlight = {} if resumed is None else resumed


class Claim(NamedTuple):
    """What a job store hands a worker: ``segments`` to work on now; else, with ``wait``, how
    long to wait before asking again (every unfinished segment is leased to another worker);
    neither: the job is finished."""

    segments: tuple[Segment, ...] = ()
    wait: float | None = None


class PageDone(NamedTuple):
    """One settled page: the segment's next start (None and ``done`` at its end) and what the
    page added to the counts."""

    segment: int
    start: dict[str, Any] | None
    done: bool
    tally: Tally


class Ledger:
    """The counting rules of one worker, and the keys it must remember between pages.

    ``resumed``: fixes an earlier run (or an earlier holder of a segment) sent without
    settling them; an item among them found fresh was fixed by that run and counts as updated.
    ``moved_to``: the new keys of items this job moved, so that meeting one again counts
    nothing. ``in_flight``: the current round's fixes, recorded before they are sent.
    """

    def __init__(self, plan: BackfillPlan, *, dry_run: bool, move: bool) -> None:
        self.plan = plan
        self.dry_run = dry_run
        self.move = move
        self.resumed: InFlight = {}
        self.moved_to: set[Identity] = set()
        self.in_flight: dict[int, InFlight] = {}

    def take(self, segment: Segment) -> None:
        """Start remembering a held segment's unsettled fixes."""
        self.resumed.update(segment.resumed)
        for kind, new in segment.resumed.values():
            if kind == MOVED and new is not None:
                self.moved_to.add(new)

    def drop(self, segment: Segment) -> None:
        """Forget a segment the worker lost: another worker accounts for its fixes now."""
        for identity in segment.resumed:
            self.resumed.pop(identity, None)
        self.in_flight.pop(segment.number, None)

    def fixes_of(self, segment: int, fixes: list[Decision]) -> InFlight:
        """Record the fixes about to be sent for ``segment``; returns them by key."""
        plan = self.plan
        recorded: InFlight = {}
        for d in fixes:
            new = plan.identity(d.new_key) if d.new_key is not None else None
            recorded[plan.identity(d.key)] = (MOVED if d.kind == "moved" else UPDATED, new)
        self.in_flight[segment] = recorded
        return recorded

    def count(self, decision: Decision, outcome: Any, into: Tally) -> None:
        """Add one decision (and its fix's outcome) to the page's counts."""
        plan = self.plan
        if decision.kind == "skip":
            return
        identity = plan.identity(decision.key)
        if decision.kind == "fresh" and identity in self.moved_to:
            return  # an item this job moved, met again under its new key
        into.matched += 1
        resumed = self.resumed.pop(identity, None)
        if decision.kind == "fresh" or outcome == UP_TO_DATE:
            if resumed is not None:  # fixed by the run that stopped before recording it
                into.updated += 1
            else:
                into.up_to_date += 1
        elif decision.kind == "failed":
            into.failed.append(BackfillFailure(plan.plain_key(decision.key), decision.reason))
        elif decision.kind == "moved" and not self.move:
            assert decision.new_key is not None
            into.failed.append(
                BackfillFailure(plan.plain_key(decision.key), _moving(plan, decision))
            )
        elif self.dry_run:
            if decision.kind == "moved":
                into.moved += 1
            else:
                into.updated += 1
        elif isinstance(outcome, BackfillFailure):
            into.failed.append(outcome)
        elif outcome == MOVED:
            into.moved += 1
        else:
            into.updated += 1

    def unmet_moves(self, into: Tally) -> None:
        """At the end: fixes in flight when an earlier run stopped, whose items the Scan did
        not meet again, were moves that landed (or deletions by someone else)."""
        for kind, _new in self.resumed.values():
            if kind == MOVED:
                into.matched += 1
                into.moved += 1
        self.resumed = {}


def _moving(plan: BackfillPlan, decision: Decision) -> str:
    assert decision.new_key is not None
    new = ", ".join(f"{a}={v}" for a, v in plan.plain_key(decision.new_key).items())
    return f"its primary key would change (to {new}): pass move=True (--move) to move it"
