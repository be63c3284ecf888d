"""Where a backfill keeps its job state: the one seam between the worker's loop
(:mod:`singletable._backfill.flow`) and storage.

A :class:`JobStore` hands the worker segments (:meth:`~JobStore.claim`), records the fixes a
round is about to send (:meth:`~JobStore.pending`) and each settled page
(:meth:`~JobStore.advance`). Each method is a flow: whatever it stores goes out as steps (a
``Send`` to the table, a ``Call`` for a file), so the flow itself never blocks the event loop.
Three stores implement it:

* :class:`MemoryStore`: no checkpoint; the call holds every segment.
* :class:`FileStore`: ``checkpoint="file.json"``, one machine; the call holds every segment
  and the file records them all after every round.
* :class:`~singletable._backfill.jobs.TableStore`: ``job="name"``, any number of workers; the
  state lives in the table, one leased segment at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .._flows import Call, Flow
from ..errors import InvalidRequestError
from .checkpoint import check_checkpoint
from .ledger import Claim, InFlight, Ledger, PageDone, Segment, Tally

CHECKPOINT_FORMAT = "singletable-backfill/1"


class JobStore(Protocol):
    """The job state of a backfill (see the module docstring)."""

    def open(self, ledger: Ledger) -> Flow[Tally]:
        """Check (or create) the job; return the counts an earlier run left (the report starts
        from them), and give ``ledger`` what it must remember."""
        ...

    def claim(self, ledger: Ledger) -> Flow[Claim]:
        """Segments to work on now, a time to wait, or nothing: the job is finished."""
        ...

    def pending(self, ledger: Ledger, fixes: Mapping[int, InFlight]) -> Flow[set[int]]:
        """Record the fixes about to be sent (by segment); return the segments still held."""
        ...

    def advance(self, ledger: Ledger, pages: Sequence[PageDone]) -> Flow[set[int]]:
        """Record settled pages (positions and counts); return the segments still held."""
        ...

    def close(self, ledger: Ledger) -> Flow[None]:
        """This worker is done (the job may not be: other workers may hold segments)."""
        ...

    def progress(self) -> tuple[int, int, int]:
        """``(segments done, segments, items scanned by the whole job)`` as far as known."""
        ...


class MemoryStore:
    """No checkpoint: the call holds every segment until the end."""

    def __init__(self, segments: int) -> None:
        self.positions: list[dict[str, Any]] = [
            {"start": None, "done": False} for _ in range(segments)
        ]
        self.scanned = 0
        self.handed = False

    def open(self, ledger: Ledger) -> Flow[Tally]:
        return Tally()
        yield  # a flow

    def claim(self, ledger: Ledger) -> Flow[Claim]:
        if self.handed:
            return Claim()
        self.handed = True
        return Claim(
            tuple(
                Segment(n, position["start"])
                for n, position in enumerate(self.positions)
                if not position["done"]
            )
        )
        yield  # a flow

    def pending(self, ledger: Ledger, fixes: Mapping[int, InFlight]) -> Flow[set[int]]:
        return set(fixes)
        yield  # a flow

    def advance(self, ledger: Ledger, pages: Sequence[PageDone]) -> Flow[set[int]]:
        for page in pages:
            self.positions[page.segment] = {"start": page.start, "done": page.done}
            self.scanned += page.tally.scanned
        return {page.segment for page in pages}
        yield  # a flow

    def close(self, ledger: Ledger) -> Flow[None]:
        return None
        yield  # a flow

    def progress(self) -> tuple[int, int, int]:
        done = sum(1 for p in self.positions if p["done"])
        return done, len(self.positions), self.scanned


class FileStore(MemoryStore):
    """``checkpoint="file.json"``: after every round, each segment's position, the running
    report, the fixes in flight and the keys moved, written atomically (a temporary file in
    the same folder, then ``os.replace``); removed when the job finishes. A file made with
    other options is refused."""

    def __init__(
        self, path: str, job: dict[str, Any], segments: int, key_attributes: Sequence[str]
    ) -> None:
        super().__init__(segments)
        self.path = path
        self.job = job
        self.key_attributes = tuple(key_attributes)
        self.report = Tally()

    def open(self, ledger: Ledger) -> Flow[Tally]:
        data = yield Call(self.read)
        if data is None:
            self.report = Tally()
            return self.report
        try:
            self.positions = [
                {"start": p["start"], "done": bool(p["done"])} for p in data["segments"]
            ]
            report = Tally.from_json(data["report"])
            for key, kind, new in data["in_flight"]:
                ledger.resumed[tuple(key)] = (kind, tuple(new) if new else None)
            ledger.moved_to = {tuple(key) for key in data["moved_to"]}
        except (KeyError, TypeError, ValueError):
            raise InvalidRequestError(
                f"the backfill checkpoint {self.path} is damaged; delete it to start over",
                key=self.path,
            ) from None
        for kind, new in ledger.resumed.values():
            if kind == "moved" and new is not None:
                ledger.moved_to.add(new)
        self.scanned = report.scanned
        self.report = report  # the worker's running report from now on
        return report

    def pending(self, ledger: Ledger, fixes: Mapping[int, InFlight]) -> Flow[set[int]]:
        yield Call(self.write, (self.document(ledger),))
        return set(fixes)

    def advance(self, ledger: Ledger, pages: Sequence[PageDone]) -> Flow[set[int]]:
        held = yield from super().advance(ledger, pages)
        yield Call(self.write, (self.document(ledger, pages),))
        return held

    def close(self, ledger: Ledger) -> Flow[None]:
        yield Call(self.remove)

    def document(self, ledger: Ledger, pages: Sequence[PageDone] = ()) -> dict[str, Any]:
        """The file's contents now: ``report`` is the worker's running report (the flow adds
        to it), with ``pages`` being recorded added."""
        report = Tally()
        report.add(self.report)
        for page in pages:
            report.add(page.tally)
        pending: InFlight = dict(ledger.resumed)
        for fixes in ledger.in_flight.values():
            pending.update(fixes)
        return {
            "format": CHECKPOINT_FORMAT,
            "job": self.job,
            "segments": [dict(p) for p in self.positions],
            "report": report.to_json(),
            "in_flight": [
                [list(key), kind, list(new) if new else None]
                for key, (kind, new) in pending.items()
            ],
            "moved_to": sorted(list(key) for key in ledger.moved_to),
        }

    # -- the file (run through Call steps: off the event loop on the async twin) --

    def read(self) -> dict[str, Any] | None:
        """The checkpoint of an earlier run of the same job, or None (no file: a new job)."""
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
        # the whole structure, before anything runs: a resumed run trusts its positions
        check_checkpoint(data, self.path, len(self.positions), self.key_attributes)
        return data

    def write(self, document: dict[str, Any]) -> None:
        """Write to a temporary file beside the checkpoint, then rename it over."""
        folder = os.path.dirname(os.path.abspath(self.path))
        name = os.path.basename(self.path)
        try:
            fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise self._failed(exc) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, separators=(",", ":"))
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
