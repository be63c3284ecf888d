"""``repo.backfill(E)``: rewrite the stored items of one entity whose derived attributes are
stale, after the model changed (a new index key, a ``Shard`` field, a renamed type tag, another
stored datetime format).

```python
report = repo.backfill(Order, segments=4, checkpoint="order-backfill.json", progress=True)
report = repo.backfill(Order, segments=64, job="order-gsi2")  # on every worker at once
```

The one place singletable scans. A worker takes segments from its job store
(:mod:`singletable._backfill.store`: all of them without a job, one at a time with
``job="name"``, :mod:`singletable._backfill.jobs`). Each *round* sends one Scan page per held
segment at once (a ``Gather``), decides about every item (:mod:`singletable._backfill.items`,
pure), records the fixes about to go out, sends them (:mod:`singletable._backfill.fixes`, at
most one per held segment in flight), then records each page as settled. A segment moves past
a page only once its fixes are settled, so a worker killed at any point leaves at most the
pages it was working on to read again, and an item fixed before the kill is fresh then and is
not written again.

This module does no I/O of its own: requests are ``Send``/``Gather`` steps, waits ``Sleep``
steps, a checkpoint file and the progress display ``Call`` steps (run off the event loop on the
async twin), and the clocks come in with :class:`~singletable._backfill.options.BackfillIO`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._flows import Call, Flow, Gather, Send, Sleep
from ..errors import InvalidRequestError, SingleTableError
from .fixes import PATTERN, Fixer
from .items import BackfillFailure, BackfillPlan, BackfillReport, Decision
from .job_items import JobItems
from .jobs import TableStore
from .ledger import Ledger, PageDone, Segment, Tally
from .options import BackfillIO, Options, check_options
from .progress import Reporter, Snapshot, reporter_for
from .store import FileStore, JobStore, MemoryStore

if TYPE_CHECKING:
    from .._verbs.planner import WritePlanner

__all__ = ["BackfillFailure", "BackfillReport", "backfill"]


def backfill(
    planner: WritePlanner,
    entity: Any,
    io: BackfillIO,
    **options: Any,
) -> Flow[BackfillReport]:
    """The backfill of ``entity``'s items as a flow (see the module docstring). ``options``
    are ``Repository.backfill``'s keywords."""
    if not isinstance(entity, type):
        raise InvalidRequestError(
            f"backfill() takes an entity class, not a {type(entity).__qualname__} instance"
        )
    spec = planner.spec(entity)
    checked = check_options(
        segments=options.get("segments", 1),
        dry_run=options.get("dry_run", False),
        checkpoint=options.get("checkpoint"),
        job=options.get("job"),
        lease_seconds=options.get("lease_seconds", 60),
        progress=options.get("progress", False),
        rate=options.get("max_items_per_second"),
        move=options.get("move", False),
    )
    context = planner.context
    plan = BackfillPlan(spec, context.table_name, context.capacity or "TOTAL")
    store = _store(planner, plan, checked, io)
    worker = Worker(planner, plan, store, checked, io)
    return (yield from worker.run())


def _store(planner: WritePlanner, plan: BackfillPlan, options: Options, io: BackfillIO) -> JobStore:
    table_name = planner.context.table_name
    if options.job is not None:
        items = JobItems(planner.table, table_name, options.job, plan.capacity)
        return TableStore(
            items,
            options.fixed(plan.spec, None),
            lease_seconds=options.lease_seconds,
            now=io.now,
            retry=planner.context.retry,
        )
    if options.checkpoint is not None:
        fixed = options.fixed(plan.spec, table_name)
        return FileStore(options.checkpoint, fixed, options.segments, plan.key_attrs)
    return MemoryStore(options.segments)


class Worker:
    """One call's loop: claim segments, work them round by round, until the store has none."""

    def __init__(
        self,
        planner: WritePlanner,
        plan: BackfillPlan,
        store: JobStore,
        options: Options,
        io: BackfillIO,
    ) -> None:
        self.planner = planner
        self.plan = plan
        self.store = store
        self.options = options
        self.io = io
        self.ledger = Ledger(plan, dry_run=options.dry_run, move=options.move)
        self.reporter: Reporter | None = reporter_for(options.progress, io.stream)
        self.report = Tally()
        self.items_total: int | None = None
        self.started = 0.0

    def run(self) -> Flow[BackfillReport]:
        store, ledger = self.store, self.ledger
        self.report = yield from store.open(ledger)
        if self.reporter is not None and not self.reporter.inline:
            self.items_total = yield from self.item_count()
        self.started = self.io.monotonic()
        while True:
            claim = yield from store.claim(ledger)
            if claim.segments:
                yield from self.work(list(claim.segments))
            elif claim.wait is None:
                break  # every segment is done
            elif claim.wait > 0:
                yield Sleep(claim.wait)  # every unfinished segment is leased: look again
        ledger.unmet_moves(self.report)
        yield from store.close(ledger)
        yield from self.show(final=True)
        return self.report.report()

    def item_count(self) -> Flow[int | None]:
        """The table's ItemCount (approximate: DynamoDB refreshes it about every six hours),
        for the percent and ETA of the progress display; None when it cannot be read."""
        try:
            response = yield Send("DescribeTable", {"TableName": self.plan.table_name}, PATTERN)
        except SingleTableError:
            return None
        count = response.get("Table", {}).get("ItemCount")
        return int(count) if isinstance(count, int) and count > 0 else None

    def work(self, segments: list[Segment]) -> Flow[None]:
        """Scan the held segments round by round until each is done or lost."""
        active = {segment.number: segment for segment in segments}
        for segment in segments:
            self.ledger.take(segment)
        limit = self.options.page_limit(self.planner.context.default_limit, len(active))
        scanned_before, started = self.report.scanned, self.io.monotonic()
        total = self.options.segments
        while active:
            numbers = list(active)
            sends = tuple(
                Send("Scan", self.plan.scan_params(n, total, active[n].start, limit), PATTERN)
                for n in numbers
            )
            responses = yield from _send_all(sends)
            yield from self.round(active, numbers, responses)
            rate = self.options.rate
            if rate is not None and active:
                due = (self.report.scanned - scanned_before) / rate
                waited = self.io.monotonic() - started
                if due > waited:
                    yield Sleep(due - waited)

    def round(
        self, active: dict[int, Segment], numbers: list[int], responses: list[dict[str, Any]]
    ) -> Flow[None]:
        """Decide about the round's pages, record and send their fixes, settle, then record
        the pages (and show progress after each)."""
        plan, ledger = self.plan, self.ledger
        ctx = self.planner.write_context()
        spent = Tally()  # capacity this round consumed
        pages: list[tuple[int, dict[str, Any], list[Decision]]] = []
        fixes: dict[int, list[Decision]] = {}
        for number, response in zip(numbers, responses):
            spent.add_capacity(response)
            decisions = [plan.classify(item, ctx) for item in response.get("Items") or ()]
            pages.append((number, response, decisions))
            if not self.options.dry_run:
                move = self.options.move
                wanted = [d for d in decisions if d.kind == "stale" or (d.kind == "moved" and move)]
                if wanted:
                    fixes[number] = wanted
        outcomes: dict[int, Any] = {}
        if fixes:
            recorded = {n: ledger.fixes_of(n, f) for n, f in fixes.items()}
            held = yield from self.store.pending(ledger, recorded)
            self.lose(active, set(recorded) - held)
            sending = [d for n in numbers if n in active for d in fixes.get(n, ())]
            fixer = Fixer(self.planner, plan, ledger, spent)
            outcomes = yield from fixer.fix_all(sending, len(active))
        settled = []
        for number, response, decisions in pages:
            if number not in active:
                continue
            tally = Tally()
            tally.scanned = int(response.get("ScannedCount", len(decisions)))
            for decision in decisions:
                ledger.count(decision, outcomes.get(id(decision)), tally)
            start = response.get("LastEvaluatedKey")
            settled.append(PageDone(number, start, not start, tally))
        ledger.in_flight = {}
        self.report.add(spent)
        kept = yield from self.store.advance(ledger, settled)
        self.lose(active, {page.segment for page in settled} - kept)
        for page in settled:
            if page.segment in kept:
                self.report.add(page.tally)
                active[page.segment].start = page.start
                if page.done:
                    del active[page.segment]
                yield from self.show()

    def lose(self, active: dict[int, Segment], lost: set[int]) -> None:
        """Leave segments whose lease another worker took: their pages are its to redo."""
        for number in lost:
            segment = active.pop(number, None)
            if segment is not None:
                self.ledger.drop(segment)

    def show(self, *, final: bool = False) -> Flow[None]:
        reporter = self.reporter
        if reporter is None:
            return
        done, segments, job_scanned = self.store.progress()
        snapshot = Snapshot(
            self.plan.spec.name,
            self.report.report(),
            done,
            segments,
            job_scanned,
            self.items_total,
            self.io.monotonic() - self.started,
            self.options.dry_run,
            final,
        )
        if not reporter.due(snapshot):
            return
        if reporter.inline:
            reporter.show(snapshot)
        else:
            yield Call(reporter.show, (snapshot,))


def _send_all(sends: Sequence[Send]) -> Flow[list[dict[str, Any]]]:
    if len(sends) == 1:
        response: dict[str, Any] = yield sends[0]
        return [response]
    responses: list[dict[str, Any]] = yield Gather(tuple(sends), len(sends))
    return responses
