"""``repo.backfill(E)``: rewrite the stored items of one entity whose derived attributes are
stale, after the model changed (a new index key, a ``Shard`` field, a renamed type tag, another
stored datetime format).

```python
report = repo.backfill(Order, segments=4, checkpoint="order-backfill.json", progress=True)
```

The one place singletable scans. Each *round* sends one Scan page per unfinished segment at
once (a ``Gather``: threads on the sync twin, ``asyncio.gather`` on the async one), decides
about every item (:mod:`singletable.writes.backfill`, pure), then sends the round's fixes at
once, at most ``segments`` in flight (segments are the workers: ``segments=1`` writes one item
at a time). Rounds keep the segments in step, which is what lets one checkpoint file describe
the whole job after every page.

**Conditioned writes.** A fix is conditioned on the item being unchanged since the Scan read it
(the version with ``Version()``, else every scalar attribute read). When the condition fails,
the item is read again (consistently) and decided afresh: once. A second failure reports the
item in ``failed``; a concurrent change is never overwritten. When several fixes went out
together and one failed, each of them is read back to learn what landed.

**Checkpoints.** ``checkpoint="file.json"`` records, after every page, each segment's position
(the key the next page starts after), the running report and the keys whose fixes are in
flight; it is written atomically (a temporary file in the same folder, then ``os.replace``).
A segment only moves past a page once the page's fixes are settled, so a run killed at any
point re-reads at most the pages it was working on; an item fixed before the kill is fresh
then and is not written again (it is counted as updated when its key was in flight). The file
is deleted when the job finishes; a file made with other options (entity, table, segments,
``dry_run``, ``move``) is refused.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ._checkpoint import check_checkpoint
from .errors import InvalidRequestError, ServiceError, SingleTableError, TransactionCanceled
from .flows import Flow, Gather, Send, Sleep
from .writes.backfill import BackfillFailure, BackfillPlan, BackfillReport, Decision, same_item
from .writes.commit import commit

if TYPE_CHECKING:
    from .writes.planner import WritePlanner

__all__ = ["BackfillFailure", "BackfillReport", "backfill"]

PATTERN = "backfill"
MAX_SEGMENTS = 1_000_000  # DynamoDB's TotalSegments limit
CHECKPOINT_FORMAT = "singletable-backfill/1"

# Outcomes of one fix.
UPDATED, MOVED, UP_TO_DATE = "updated", "moved", "up_to_date"

Progress = Callable[[BackfillReport], Any]


def backfill(
    planner: WritePlanner,
    entity: Any,
    *,
    segments: int = 1,
    dry_run: bool = False,
    checkpoint: str | os.PathLike[str] | None = None,
    progress: bool | Progress = False,
    max_items_per_second: float | None = None,
    move: bool = False,
) -> Flow[BackfillReport]:
    """The backfill of ``entity``'s items as a flow (see the module docstring)."""
    if not isinstance(entity, type):
        raise InvalidRequestError(
            f"backfill() takes an entity class, not a {type(entity).__qualname__} instance"
        )
    spec = planner.spec(entity)
    _check_options(segments, dry_run, checkpoint, progress, max_items_per_second, move)
    context = planner.context
    plan = BackfillPlan(spec, context.table_name, context.capacity or "TOTAL")
    job = {
        "entity": spec.name,
        "type_tags": list(spec.type_tags),
        "table": context.table_name,
        "segments": segments,
        "dry_run": dry_run,
        "move": move,
    }
    store = None
    if checkpoint is not None:
        store = CheckpointFile(os.fspath(checkpoint), job, plan.key_attrs)
    state = (store.load() if store is not None else None) or JobState(segments)
    reporter = _reporter(progress, spec.name, dry_run=dry_run)
    run = _Run(planner, plan, state, store, reporter, dry_run=dry_run, move=move)
    limit = context.default_limit
    if max_items_per_second is not None:
        limit = max(1, min(limit, math.ceil(max_items_per_second / segments)))
    started, scanned_before = time.monotonic(), state.scanned
    while True:
        active = [n for n, position in enumerate(state.positions) if not position["done"]]
        if not active:
            break
        sends = tuple(
            Send("Scan", plan.scan_params(n, segments, state.positions[n]["start"], limit), PATTERN)
            for n in active
        )
        responses = yield from _send_all(sends, len(sends))
        yield from run.round(active, responses)
        unfinished = not all(position["done"] for position in state.positions)
        if max_items_per_second is not None and unfinished:
            due = (state.scanned - scanned_before) / max_items_per_second
            waited = time.monotonic() - started
            if due > waited:
                yield Sleep(due - waited)
    report = run.finish()
    if store is not None:
        store.remove()
    if reporter is not None:
        reporter.finish(report, len(state.positions))
    return report


def _check_options(
    segments: Any,
    dry_run: Any,
    checkpoint: Any,
    progress: Any,
    rate: Any,
    move: Any,
) -> None:
    if type(segments) is not int or not 1 <= segments <= MAX_SEGMENTS:
        raise InvalidRequestError(
            f"backfill(segments=...) takes an int from 1 to {MAX_SEGMENTS:,}, not {segments!r}"
        )
    for name, value in (("dry_run", dry_run), ("move", move)):
        if not isinstance(value, bool):
            raise InvalidRequestError(f"backfill({name}=...) takes True or False, not {value!r}")
    if checkpoint is not None and not isinstance(checkpoint, (str, os.PathLike)):
        raise InvalidRequestError(
            f"backfill(checkpoint=...) takes a file path, not {type(checkpoint).__qualname__}"
        )
    if not (isinstance(progress, bool) or callable(progress)):
        raise InvalidRequestError(
            "backfill(progress=...) takes True, False or a callable(report), not "
            f"{type(progress).__qualname__}"
        )
    if rate is not None and (
        isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0
    ):
        raise InvalidRequestError(
            f"backfill(max_items_per_second=...) takes a positive number, not {rate!r}"
        )


def _send_all(sends: Sequence[Send], concurrency: int) -> Flow[list[dict[str, Any]]]:
    if len(sends) == 1:
        response: dict[str, Any] = yield sends[0]
        return [response]
    responses: list[dict[str, Any]] = yield Gather(tuple(sends), concurrency)
    return responses


# -- the job's state ---------------------------------------------------------------------------


class JobState:
    """Where each segment is, the running counts, and the fixes in flight."""

    def __init__(self, segments: int) -> None:
        self.positions: list[dict[str, Any]] = [
            {"start": None, "done": False} for _ in range(segments)
        ]
        self.scanned = self.matched = self.up_to_date = self.updated = self.moved = 0
        self.failed: list[BackfillFailure] = []
        self.capacity: float | None = None
        # Fixes sent in a run that stopped before settling them: key -> kind (and new key).
        self.resumed: dict[tuple[str, ...], tuple[str, tuple[str, ...] | None]] = {}
        # Fixes of the current round, recorded before they are sent.
        self.in_flight: dict[tuple[str, ...], tuple[str, tuple[str, ...] | None]] = {}
        # New keys of moved items: when the Scan meets them again, they are not counted twice.
        self.moved_to: set[tuple[str, ...]] = set()

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

    def add_capacity(self, response: Any) -> None:
        consumed = response.get("ConsumedCapacity") if isinstance(response, dict) else None
        if isinstance(consumed, dict):
            consumed = [consumed]
        for entry in consumed or ():
            units = entry.get("CapacityUnits")
            if isinstance(units, (int, float)):
                self.capacity = (self.capacity or 0.0) + float(units)

    # -- the file form --

    def to_json(self, job: dict[str, Any]) -> dict[str, Any]:
        pending = {**self.resumed, **self.in_flight}
        return {
            "format": CHECKPOINT_FORMAT,
            "job": job,
            "segments": self.positions,
            "report": {
                "scanned": self.scanned,
                "matched": self.matched,
                "up_to_date": self.up_to_date,
                "updated": self.updated,
                "moved": self.moved,
                "failed": [{"key": f.key, "reason": f.reason} for f in self.failed],
                "consumed_capacity": self.capacity,
            },
            "in_flight": [
                [list(key), kind, list(new) if new else None]
                for key, (kind, new) in pending.items()
            ],
            "moved_to": sorted(list(key) for key in self.moved_to),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobState:
        state = cls(0)
        state.positions = [{"start": p["start"], "done": bool(p["done"])} for p in data["segments"]]
        report = data["report"]
        state.scanned = int(report["scanned"])
        state.matched = int(report["matched"])
        state.up_to_date = int(report["up_to_date"])
        state.updated = int(report["updated"])
        state.moved = int(report["moved"])
        state.failed = [BackfillFailure(f["key"], f["reason"]) for f in report["failed"]]
        state.capacity = report["consumed_capacity"]
        for key, kind, new in data["in_flight"]:
            state.resumed[tuple(key)] = (kind, tuple(new) if new else None)
        state.moved_to = {tuple(key) for key in data["moved_to"]}
        for kind, new in state.resumed.values():
            if kind == "moved" and new is not None:
                state.moved_to.add(new)
        return state


class CheckpointFile:
    """A backfill's checkpoint: JSON, replaced atomically after every page."""

    def __init__(self, path: str, job: dict[str, Any], key_attributes: Sequence[str]) -> None:
        self.path = path
        self.job = job
        self.key_attributes = tuple(key_attributes)

    def load(self) -> JobState | None:
        """The state of an earlier run of the same job, or None (no file: a new job)."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise InvalidRequestError(
                f"cannot read the backfill checkpoint {self.path}: {_why(exc)}", key=self.path
            ) from None
        if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
            raise InvalidRequestError(
                f"{self.path} is not a singletable backfill checkpoint", key=self.path
            )
        if data.get("job") != self.job:
            theirs = data.get("job") or {}
            differ = sorted(k for k in self.job if theirs.get(k) != self.job[k])
            raise InvalidRequestError(
                f"the backfill checkpoint {self.path} belongs to another job (its "
                f"{', '.join(differ)} differ); resume with the same options, or delete the "
                "file to start over",
                key=self.path,
            )
        check_checkpoint(data, self.path, self.job["segments"], self.key_attributes)
        try:
            return JobState.from_json(data)
        except (KeyError, TypeError, ValueError):
            raise InvalidRequestError(
                f"the backfill checkpoint {self.path} is damaged; delete it to start over",
                key=self.path,
            ) from None

    def save(self, state: JobState) -> None:
        """Write the state to a temporary file beside the checkpoint, then rename it over."""
        folder = os.path.dirname(os.path.abspath(self.path))
        name = os.path.basename(self.path)
        try:
            fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise self._failed(exc) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(state.to_json(self.job), handle, separators=(",", ":"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            if isinstance(exc, OSError):
                raise self._failed(exc) from None
            raise

    def remove(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> InvalidRequestError:
        return InvalidRequestError(
            f"cannot write the backfill checkpoint {self.path}: {_why(exc)}", key=self.path
        )


def _why(exc: Exception) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


# -- one run -----------------------------------------------------------------------------------


class _Run:
    """The decisions and fixes of one call, round by round."""

    def __init__(
        self,
        planner: WritePlanner,
        plan: BackfillPlan,
        state: JobState,
        store: CheckpointFile | None,
        reporter: Reporter | None,
        *,
        dry_run: bool,
        move: bool,
    ) -> None:
        self.planner = planner
        self.plan = plan
        self.state = state
        self.store = store
        self.reporter = reporter
        self.dry_run = dry_run
        self.move = move

    def round(self, active: list[int], responses: list[dict[str, Any]]) -> Flow[None]:
        """Decide about the round's pages, send their fixes, settle, then move the segments
        on (and save the checkpoint, and report, after every page)."""
        state, plan = self.state, self.plan
        ctx = self.planner.write_context()
        pages: list[tuple[int, dict[str, Any], list[Decision]]] = []
        fixes: list[Decision] = []
        for segment, response in zip(active, responses):
            state.add_capacity(response)
            decisions = [plan.classify(item, ctx) for item in response.get("Items") or ()]
            pages.append((segment, response, decisions))
            if not self.dry_run:
                fixes += [
                    d for d in decisions if d.kind == "stale" or (d.kind == "moved" and self.move)
                ]
        outcomes: dict[int, str | BackfillFailure] = {}
        if fixes:
            for d in fixes:
                new = plan.identity(d.new_key) if d.new_key is not None else None
                state.in_flight[plan.identity(d.key)] = (d.kind, new)
            if self.store is not None:
                self.store.save(state)
            outcomes = yield from self.fix_all(fixes, len(active))
        for segment, response, decisions in pages:
            state.scanned += int(response.get("ScannedCount", len(decisions)))
            for decision in decisions:
                self.tally(decision, outcomes.get(id(decision)))
            start = response.get("LastEvaluatedKey")
            state.positions[segment] = {"start": start, "done": not start}
        state.in_flight = {}
        if self.store is not None:
            self.store.save(state)
        if self.reporter is not None:
            done = sum(1 for p in state.positions if p["done"])
            for _ in pages:
                self.reporter.page(state.report(), done, len(state.positions))

    def tally(self, decision: Decision, outcome: str | BackfillFailure | None) -> None:
        state, plan = self.state, self.plan
        if decision.kind == "skip":
            return
        identity = plan.identity(decision.key)
        if decision.kind == "fresh" and identity in state.moved_to:
            return  # an item this job moved, met again under its new key
        state.matched += 1
        resumed = state.resumed.pop(identity, None)
        if decision.kind == "fresh":
            if resumed is not None:  # fixed by the run that stopped before recording it
                state.updated += 1
            else:
                state.up_to_date += 1
        elif decision.kind == "failed":
            state.failed.append(BackfillFailure(plan.plain_key(decision.key), decision.reason))
        elif decision.kind == "moved" and not self.move:
            assert decision.new_key is not None
            state.failed.append(
                BackfillFailure(
                    plan.plain_key(decision.key),
                    "its primary key would change (to "
                    f"{', '.join(f'{a}={v}' for a, v in plan.plain_key(decision.new_key).items())}"
                    "): pass move=True (--move) to move it",
                )
            )
        elif self.dry_run:
            if decision.kind == "moved":
                state.moved += 1
            else:
                state.updated += 1
        elif isinstance(outcome, BackfillFailure):
            state.failed.append(outcome)
        elif outcome == UPDATED:
            state.updated += 1
        elif outcome == MOVED:
            state.moved += 1
        else:
            state.up_to_date += 1  # fresh when read again, or gone

    def finish(self) -> BackfillReport:
        """The final report: fixes in flight when an earlier run stopped, whose items the Scan
        did not meet again, were moves that landed (or deletions by someone else)."""
        state = self.state
        for kind, _new in state.resumed.values():
            if kind == "moved":
                state.matched += 1
                state.moved += 1
        state.resumed = {}
        return state.report()

    # -- fixes --

    def fix_all(self, fixes: list[Decision], concurrency: int) -> Flow[dict[int, Any]]:
        """Send the round's fixes (updates at once, at most ``concurrency`` in flight; moves
        one by one) and return each one's outcome, by ``id(decision)``."""
        outcomes: dict[int, Any] = {}
        updates = [d for d in fixes if d.kind == "stale"]
        if concurrency > 1 and len(updates) > 1:
            sends = tuple(Send("UpdateItem", self.plan.update_params(d), PATTERN) for d in updates)
            try:
                responses = yield Gather(sends, concurrency)
            except SingleTableError:
                # One failed (the first in order is all a Gather tells): read each back.
                for decision in updates:
                    outcomes[id(decision)] = yield from self.settle(decision)
            else:
                for decision, response in zip(updates, responses):
                    self.state.add_capacity(response)
                    outcomes[id(decision)] = UPDATED
        else:
            for decision in updates:
                outcomes[id(decision)] = yield from self.update(decision, retried=False)
        for decision in fixes:
            if decision.kind == "moved":
                outcomes[id(decision)] = yield from self.relocate(decision, retried=False)
        return outcomes

    def read(self, decision: Decision) -> Flow[Any]:
        response: dict[str, Any] = yield Send(
            "GetItem", self.plan.get_params(decision.key), PATTERN
        )
        self.state.add_capacity(response)
        return response.get("Item")

    def update(self, decision: Decision, *, retried: bool) -> Flow[Any]:
        try:
            response = yield Send("UpdateItem", self.plan.update_params(decision), PATTERN)
        except ServiceError as exc:
            if exc.aws_code != "ConditionalCheckFailedException":
                return self.failure(decision, f"{exc.code} ({exc.aws_code})")
            if retried:
                return self.failure(decision, _CHANGING)
            current = exc.response.get("Item")
            if current is None:  # not returned with the failure (dynalite): read it
                current = yield from self.read(decision)
            return (yield from self.again(decision, current))
        except SingleTableError as exc:
            return self.failure(decision, exc.code)
        self.state.add_capacity(response)
        return UPDATED

    def settle(self, decision: Decision) -> Flow[Any]:
        """The outcome of a fix sent in a Gather that failed: read the item back."""
        current = yield from self.read(decision)
        if same_item(current, decision.after()):
            return UPDATED
        if same_item(current, decision.item):  # not applied, not changed: send it alone
            return (yield from self.update(decision, retried=False))
        return (yield from self.again(decision, current))

    def again(self, decision: Decision, current: Any) -> Flow[Any]:
        """The one retry: decide about the item as it is now and fix it (once more at most)."""
        if current is None:
            return UP_TO_DATE  # deleted meanwhile: nothing to fix
        fresh = self.plan.classify(current, self.planner.write_context())
        if fresh.kind in ("skip", "fresh"):
            return UP_TO_DATE
        if fresh.kind == "failed":
            return self.failure(fresh, fresh.reason)
        if fresh.kind == "moved":
            if not self.move:
                return self.failure(fresh, "its primary key would change: pass move=True")
            return (yield from self.relocate(fresh, retried=True))
        return (yield from self.update(fresh, retried=True))

    def relocate(self, decision: Decision, *, retried: bool) -> Flow[Any]:
        """Move one item: one transaction (delete, put under the new key, guards)."""
        plan = self.plan
        ops = plan.move_ops(decision, self.planner.write_context())
        try:
            yield from commit(ops, plan.spec.table, self.planner.context, pattern=PATTERN)
        except TransactionCanceled as canceled:
            failed = {r.index for r in canceled.reasons if r.failed}
            if 1 in failed:
                return self.failure(decision, "its new key holds another item")
            if failed - {0}:
                return self.failure(decision, "a Unique() value of it is taken by another item")
            if retried:
                return self.failure(decision, _CHANGING)
            current = yield from self.read(decision)
            return (yield from self.again(decision, current))
        except SingleTableError as exc:
            aws = getattr(exc, "aws_code", None)
            return self.failure(decision, f"{exc.code} ({aws})" if aws else exc.code)
        assert decision.new_key is not None
        self.state.moved_to.add(plan.identity(decision.new_key))
        return MOVED

    def failure(self, decision: Decision, reason: str) -> BackfillFailure:
        return BackfillFailure(self.plan.plain_key(decision.key), reason)


_CHANGING = (
    "it changed while the backfill was fixing it, twice; it was not overwritten: run the "
    "backfill again"
)


# -- progress ----------------------------------------------------------------------------------


class Reporter:
    """Where the running counts go after every page and at the end."""

    def page(self, report: BackfillReport, done: int, segments: int) -> None:
        raise NotImplementedError

    def finish(self, report: BackfillReport, segments: int) -> None:
        raise NotImplementedError


class CallbackReporter(Reporter):
    """``progress=callable``: called with the running report after every page and at the end."""

    def __init__(self, callback: Progress) -> None:
        self.callback = callback

    def page(self, report: BackfillReport, done: int, segments: int) -> None:
        self.callback(report)

    def finish(self, report: BackfillReport, segments: int) -> None:
        self.callback(report)


class ProgressDisplay(Reporter):
    """``progress=True``: one line on ``stream`` (stderr). On a terminal it is redrawn in place
    (a carriage return, at most ten times a second); elsewhere (a log, CI) a plain line is
    written every ``every`` seconds, and one at the end. A dry run's line counts what it
    *would* update and move."""

    def __init__(
        self,
        entity: str,
        stream: TextIO | None = None,
        *,
        every: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        dry_run: bool = False,
    ) -> None:
        self.entity = entity
        self.verbs = ("would update", "would move") if dry_run else ("updated", "moved")
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.live = bool(isatty()) if callable(isatty) else False
        self.every = 0.1 if self.live else every
        self.clock = clock
        self.started = clock()
        self.last = self.started

    def line(self, report: BackfillReport, done: int, segments: int) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        return (
            f"backfill {self.entity}: scanned {report.scanned:,}, matched {report.matched:,}, "
            f"{self.verbs[0]} {report.updated:,}, {self.verbs[1]} {report.moved:,}, "
            f"failed {len(report.failed):,}, "
            f"{report.scanned / elapsed:,.0f} items/s, segments {done}/{segments} done"
        )

    def page(self, report: BackfillReport, done: int, segments: int) -> None:
        now = self.clock()
        if now - self.last < self.every:
            return
        self.last = now
        self.write(self.line(report, done, segments), final=False)

    def finish(self, report: BackfillReport, segments: int) -> None:
        self.write(self.line(report, segments, segments), final=True)

    def write(self, text: str, *, final: bool) -> None:
        if self.live:
            self.stream.write(f"\r{text}\x1b[K" + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _reporter(progress: bool | Progress, entity: str, *, dry_run: bool) -> Reporter | None:
    if progress is True:
        return ProgressDisplay(entity, dry_run=dry_run)
    if progress is False:
        return None
    return CallbackReporter(progress)
