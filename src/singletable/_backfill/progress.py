"""Backfill progress: what a worker shows after every page and at the end.

The flow builds a :class:`Snapshot` (pure) and hands it to a reporter. ``progress=callable``
calls the callable with the running :class:`BackfillReport` (inline, after every page and once
at the end). ``progress=True`` draws on stderr through a ``Call`` step, so on the async twin
the terminal is written from a worker thread, never from the event loop: with ``rich``
installed and stderr a terminal, a rich progress bar; otherwise one plain line, redrawn in
place on a terminal (at most ten times a second) or written every few seconds to a log.

Both show the elapsed time, the counts (``would update`` in a dry run), the capacity consumed
so far and, when DescribeTable gave the table's ``ItemCount`` (which DynamoDB refreshes about
every six hours, so it is marked approximate), the percent done and an ETA.
"""

from __future__ import annotations

import importlib.util
from typing import Any, NamedTuple, Protocol, TextIO

from .items import BackfillReport


class Snapshot(NamedTuple):
    """Where a backfill stands: this worker's ``report``; the job's segments done, items
    scanned (every worker's, as far as this one knows) and the table's approximate item count
    (None when unknown); seconds since the call started; whether it is a dry run, and the
    end."""

    entity: str
    report: BackfillReport
    segments_done: int
    segments: int
    job_scanned: int
    items_total: int | None
    elapsed: float
    dry_run: bool = False
    final: bool = False

    @property
    def rate(self) -> float:
        """Items scanned per second by this worker."""
        return self.report.scanned / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def fraction(self) -> float | None:
        """The share of the table scanned (approximate; None without an item count)."""
        if self.final:
            return 1.0
        if not self.items_total:
            return None
        return min(self.job_scanned / self.items_total, 0.99)

    @property
    def eta(self) -> float | None:
        """Seconds left at this worker's rate (None when unknown)."""
        if self.final:
            return 0.0
        if not self.items_total or self.rate <= 0:
            return None
        left = max(self.items_total - self.job_scanned, 0)
        return left / self.rate

    def counts(self) -> str:
        """The report's counts, as the line shows them."""
        r = self.report
        updated, moved = ("would update", "would move") if self.dry_run else ("updated", "moved")
        text = (
            f"scanned {r.scanned:,}, matched {r.matched:,}, {updated} {r.updated:,}, "
            f"{moved} {r.moved:,}, failed {len(r.failed):,}"
        )
        if r.consumed_capacity is not None:
            text += f", {r.consumed_capacity:,.1f} CU"
        return text


class Reporter(Protocol):
    """Shows snapshots: ``due`` says whether one at ``elapsed`` seconds is worth showing
    (pure), ``show`` shows it (may write to a terminal: the flow calls it through a ``Call``
    step)."""

    inline: bool

    def due(self, snapshot: Snapshot) -> bool: ...

    def show(self, snapshot: Snapshot) -> None: ...


class CallbackReporter:
    """``progress=callable``: the callable gets the running report after every page and at
    the end (called inline: on the async twin, on the event loop, so keep it quick)."""

    inline = True

    def __init__(self, callback: Any) -> None:
        self.callback = callback

    def due(self, snapshot: Snapshot) -> bool:
        return True

    def show(self, snapshot: Snapshot) -> None:
        self.callback(snapshot.report)


def clock_text(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def plain_line(s: Snapshot) -> str:
    """The progress line: ``backfill Order: 41% (~20,000 items) scanned ..., 410 items/s,
    elapsed 0:20, ETA 0:29, segments 1/4 done``."""
    head = f"backfill {s.entity}" + (" (dry run)" if s.dry_run else "") + ": "
    fraction = s.fraction
    if fraction is not None and s.items_total:
        head += f"{fraction:.0%} of ~{s.items_total:,} items, "
    tail = f", {s.rate:,.0f} items/s, elapsed {clock_text(s.elapsed)}"
    eta = s.eta
    if eta is not None and not s.final:
        tail += f", ETA ~{clock_text(eta)}"
    return head + s.counts() + tail + f", segments {s.segments_done}/{s.segments} done"


class ProgressDisplay:
    """``progress=True`` without rich: one plain line on ``stream``. On a terminal it is redrawn
    in place (a carriage return, at most ten times a second); elsewhere (a log, CI) a line is
    written every ``every`` seconds, and one at the end."""

    inline = False

    def __init__(self, stream: TextIO, *, every: float = 5.0) -> None:
        self.stream = stream
        isatty = getattr(stream, "isatty", None)
        self.live = bool(isatty()) if callable(isatty) else False
        self.every = 0.1 if self.live else every
        self.last = 0.0

    def due(self, snapshot: Snapshot) -> bool:
        if snapshot.final or snapshot.elapsed - self.last >= self.every:
            self.last = snapshot.elapsed
            return True
        return False

    def show(self, snapshot: Snapshot) -> None:
        text = plain_line(snapshot)
        if self.live:
            self.stream.write(f"\r{text}\x1b[K" + ("\n" if snapshot.final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


class RichDisplay:
    """``progress=True`` with rich installed, on a terminal: a progress bar with percent,
    elapsed time and ETA (from the approximate item count), and the counts beside it."""

    inline = False

    def __init__(self, stream: TextIO, *, width: int | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.elapsed = 0.0
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[counts]}"),
            console=Console(file=stream, width=width),
            auto_refresh=False,
            get_time=lambda: self.elapsed,  # the flow's clock, not rich's
        )
        self.task: Any = None
        self.last = -1.0

    def due(self, snapshot: Snapshot) -> bool:
        if snapshot.final or snapshot.elapsed - self.last >= 0.1:
            self.last = snapshot.elapsed
            return True
        return False

    def show(self, snapshot: Snapshot) -> None:
        self.elapsed = snapshot.elapsed
        total = snapshot.items_total
        counts = snapshot.counts() + f", segments {snapshot.segments_done}/{snapshot.segments}"
        description = f"backfill {snapshot.entity}" + (" (dry run)" if snapshot.dry_run else "")
        if self.task is None:
            self.progress.start()
            self.task = self.progress.add_task(description, total=total, counts=counts)
        completed = snapshot.job_scanned if not snapshot.final else (total or snapshot.job_scanned)
        if total is not None and not snapshot.final:
            completed = min(completed, int(total * 0.99))
        self.progress.update(self.task, completed=completed, total=total, counts=counts)
        self.progress.refresh()
        if snapshot.final:
            self.progress.stop()


def rich_available() -> bool:
    return importlib.util.find_spec("rich") is not None


def display_for(stream: TextIO) -> Reporter:
    """``progress=True``'s display: rich on a terminal when installed, else the plain line."""
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty() and rich_available():
        return RichDisplay(stream)
    return ProgressDisplay(stream)


def reporter_for(progress: Any, stream: TextIO) -> Reporter | None:
    if progress is True:
        return display_for(stream)
    if progress is False:
        return None
    return CallbackReporter(progress)
