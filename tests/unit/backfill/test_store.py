"""The backfill's seam, without a backend: the file job store (through ``Call`` steps only),
the progress line and rich display (snapshots only, no clock), and the rule that the backfill
flow does no I/O of its own."""

from __future__ import annotations

import ast
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from singletable._backfill.items import BackfillFailure, BackfillPlan, BackfillReport
from singletable._backfill.ledger import Ledger, PageDone, Tally
from singletable._backfill.progress import (
    CallbackReporter,
    ProgressDisplay,
    RichDisplay,
    Snapshot,
    display_for,
    plain_line,
)
from singletable._backfill.store import FileStore, MemoryStore
from singletable._flows import Call, Flow
from singletable.errors import InvalidRequestError
from tests.backfill_models import Order

JOB = {"entity": "Order", "segments": 2}
KEY = ("PK", "SK")
SRC = Path(__file__).resolve().parents[3] / "src" / "singletable" / "_backfill"


def run_local(flow: Flow[Any]) -> tuple[Any, list[str]]:
    """Drive a flow that may only yield ``Call`` steps; the names of the functions called."""
    called: list[str] = []
    value: Any = None
    while True:
        try:
            step = flow.send(value)
        except StopIteration as stop:
            return stop.value, called
        assert isinstance(step, Call), step
        called.append(step.function.__name__)
        value = step.function(*step.args)


def ledger() -> Ledger:
    return Ledger(BackfillPlan(Order.__singletable__, "t", None), dry_run=False, move=False)


def page(segment: int, start: Any, scanned: int, updated: int = 0) -> PageDone:
    tally = Tally()
    tally.scanned, tally.updated = scanned, updated
    return PageDone(segment, start, start is None, tally)


# -- the file store ----------------------------------------------------------------------------


def test_the_file_store_writes_through_call_steps_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cp.json"
    store = FileStore(str(path), JOB, 2, KEY)
    book = ledger()
    report, called = run_local(store.open(book))
    assert (report.scanned, called) == (0, ["read"])
    claim, called = run_local(store.claim(book))
    assert [s.number for s in claim.segments] == [0, 1] and called == []
    book.in_flight[0] = {("p", "s"): ("moved", ("p", "t"))}
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        replaced.append((str(src), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    held, called = run_local(store.pending(book, book.in_flight))
    assert held == {0} and called == ["write"]
    ((src, dst),) = replaced
    assert Path(src).parent == tmp_path and dst == str(path)  # a temporary file beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cp.json"]
    report.failed.append(BackfillFailure({"PK": "x"}, "why"))
    start = {"PK": {"S": "a"}, "SK": {"S": "b"}}
    held, called = run_local(store.advance(book, [page(0, start, 5, 2), page(1, None, 3)]))
    assert held == {0, 1} and called == ["write"]
    document = json.loads(path.read_text())
    assert document["segments"] == [{"start": start, "done": False}, {"start": None, "done": True}]
    assert document["report"]["scanned"] == 8 and document["report"]["updated"] == 2
    assert document["in_flight"] == [[["p", "s"], "moved", ["p", "t"]]]

    again = FileStore(str(path), JOB, 2, KEY)
    book2 = ledger()
    resumed, _ = run_local(again.open(book2))
    assert resumed.scanned == 8 and [f.reason for f in resumed.failed] == ["why"]
    assert book2.resumed == {("p", "s"): ("moved", ("p", "t"))}
    assert ("p", "t") in book2.moved_to  # a move in flight: its new key is not counted twice
    claim, _ = run_local(again.claim(book2))
    assert [(s.number, s.start) for s in claim.segments] == [(0, start)]  # segment 1 is done
    assert again.progress() == (1, 2, 8)
    _, called = run_local(again.close(book2))
    assert called == ["remove"] and not path.exists()


def test_a_failed_save_leaves_the_old_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cp.json"
    store = FileStore(str(path), JOB, 2, KEY)
    run_local(store.open(ledger()))
    run_local(store.advance(ledger(), []))
    before = path.read_text()

    def broken(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(InvalidRequestError, match="No space left"):
        run_local(store.advance(ledger(), [page(0, None, 9)]))
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cp.json"]  # no temporary left


def test_a_checkpoint_of_another_job_names_what_differs(tmp_path: Path) -> None:
    path = tmp_path / "cp.json"
    store = FileStore(str(path), JOB, 2, KEY)
    run_local(store.open(ledger()))
    run_local(store.advance(ledger(), []))
    with pytest.raises(InvalidRequestError, match="segments differ"):
        run_local(FileStore(str(path), {**JOB, "segments": 3}, 3, KEY).open(ledger()))
    path.write_text(json.dumps({"format": "singletable-backfill/1", "job": JOB}))
    with pytest.raises(InvalidRequestError, match="damaged"):
        run_local(FileStore(str(path), JOB, 2, KEY).open(ledger()))


def test_the_memory_store_hands_every_segment_once() -> None:
    store = MemoryStore(3)
    claim, _ = run_local(store.claim(ledger()))
    assert [s.number for s in claim.segments] == [0, 1, 2]
    run_local(store.advance(ledger(), [page(1, None, 4)]))
    assert store.progress() == (1, 3, 4)
    finished, _ = run_local(store.claim(ledger()))
    assert finished.segments == () and finished.wait is None


def test_the_flow_modules_do_no_io_of_their_own() -> None:
    """The loop, the fixes, the ledger and the job store send requests and Call steps only:
    no clock, file, terminal or sleep of their own (what runs through Call lives in the store
    and the progress module, called by the twin)."""
    forbidden = {"time", "sys", "open", "print", "tempfile", "asyncio"}
    for name in ("flow.py", "fixes.py", "ledger.py", "jobs.py", "job_items.py", "items.py"):
        tree = ast.parse((SRC / name).read_text())
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        imported = {
            alias.name.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) and not getattr(n, "level", 0)
            for alias in n.names
        } | {
            n.module.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and not n.level
        }
        assert not (used | imported) & forbidden, (name, (used | imported) & forbidden)
    assert "BackfillIO" in (SRC / "flow.py").read_text()


def _saved(path: Path) -> dict[str, Any]:
    """A checkpoint as a run writes it: one segment half way, one done, counts, a fix."""
    store = FileStore(str(path), JOB, 2, KEY)
    book = ledger()
    report, _ = run_local(store.open(book))
    report.failed.append(BackfillFailure({"PK": "x", "SK": "y"}, "why"))
    book.in_flight[0] = {("p", "s"): ("updated", None)}
    start = {"PK": {"S": "a"}, "SK": {"S": "b"}}
    run_local(store.advance(book, [page(0, start, 5, 2), page(1, None, 3)]))
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@pytest.mark.parametrize(
    ("tamper", "field"),
    [
        (lambda d: d["segments"].pop(), "segments"),  # one segment fewer than segments=
        (lambda d: d["segments"].append({"start": None, "done": False}), "segments"),
        (lambda d: d.__setitem__("segments", {"0": None}), "segments"),
        (lambda d: d["segments"].__setitem__(0, None), "segments[0]"),
        (lambda d: d["segments"][0].__setitem__("start", "PK=a"), "segments[0].start"),
        (lambda d: d["segments"][0].__setitem__("start", 7), "segments[0].start"),
        (lambda d: d["segments"][0].__setitem__("start", {"PK": {"S": "a"}}), "segments[0].start"),
        (lambda d: d["segments"][0]["start"].__setitem__("SK", {"S": 1}), "segments[0].start.SK"),
        (lambda d: d["segments"][0]["start"].__setitem__("SK", ["S", "b"]), "segments[0].start.SK"),
        (lambda d: d["segments"][0].__setitem__("done", "no"), "segments[0].done"),
        (lambda d: d["segments"][0].__setitem__("done", True), "segments[0].start"),
        (lambda d: d["segments"][1].pop("done"), "segments[1]"),
        (lambda d: d["report"].__setitem__("scanned", "5"), "report.scanned"),
        (lambda d: d["report"].__setitem__("updated", -1), "report.updated"),
        (lambda d: d["report"].__setitem__("matched", 4.5), "report.matched"),
        (lambda d: d["report"].__setitem__("moved", True), "report.moved"),
        (lambda d: d["report"].pop("up_to_date"), "report.up_to_date"),
        (lambda d: d["report"].__setitem__("failed", [{"key": "x"}]), "report.failed[0]"),
        (lambda d: d["report"].update(consumed_capacity="lots"), "report.consumed_capacity"),
        (lambda d: d.__setitem__("report", []), "report"),
        (lambda d: d["in_flight"].__setitem__(0, [["p", "s"], "gone", None]), "in_flight[0][1]"),
        (lambda d: d["in_flight"].__setitem__(0, [[1, 2], "updated", None]), "in_flight[0][0]"),
        (lambda d: d["in_flight"].__setitem__(0, "p"), "in_flight[0]"),
        (lambda d: d.__setitem__("moved_to", [["a", "b", "c"]]), "moved_to[0]"),
        (lambda d: d.pop("moved_to"), "moved_to"),
    ],
)
def test_a_damaged_checkpoint_is_refused_naming_the_file_and_field(
    tmp_path: Path, tamper: Any, field: str
) -> None:
    path = tmp_path / "cp.json"
    data = _saved(path)
    tamper(data)
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidRequestError) as caught:
        run_local(FileStore(str(path), JOB, 2, KEY).open(ledger()))
    message = caught.value.message
    assert f"{path} is damaged: {field} " in message, message
    assert caught.value.key == str(path)


def test_an_intact_checkpoint_with_every_field_set_loads(tmp_path: Path) -> None:
    path = tmp_path / "cp.json"
    _saved(path)
    book = ledger()
    report, _ = run_local(FileStore(str(path), JOB, 2, KEY).open(book))
    assert report.scanned == 8 and report.updated == 2
    assert book.resumed == {("p", "s"): ("updated", None)}


# -- progress ----------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


REPORT = BackfillReport(
    scanned=1200,
    matched=1000,
    updated=300,
    failed=[BackfillFailure({}, "x")],
    consumed_capacity=12.5,
)


def snap(elapsed: float, *, total: int | None = 4000, **changes: Any) -> Snapshot:
    fields: dict[str, Any] = dict(
        entity="Order",
        report=REPORT,
        segments_done=1,
        segments=4,
        job_scanned=1200,
        items_total=total,
        elapsed=elapsed,
    )
    fields.update(changes)
    return Snapshot(**fields)


def test_the_line_shows_percent_eta_capacity_and_elapsed_time() -> None:
    line = plain_line(snap(2.0))
    assert line.startswith("backfill Order: 30% of ~4,000 items, scanned 1,200")
    assert "updated 300" in line and "failed 1" in line and "12.5 CU" in line
    assert "600 items/s" in line and "elapsed 0:02" in line
    assert "ETA ~0:04" in line  # 2,800 items left at 600 a second
    assert line.endswith("segments 1/4 done")
    unknown = plain_line(snap(2.0, total=None))
    assert "%" not in unknown and "ETA" not in unknown  # no item count: no percent, no ETA


def test_a_dry_run_line_says_would_update() -> None:
    line = plain_line(snap(1.0, dry_run=True))
    assert "(dry run)" in line and "would update 300" in line and "would move 0" in line
    assert "updated 300" not in line.replace("would update 300", "")


def test_progress_on_a_terminal_redraws_one_line() -> None:
    stream = Terminal()
    display = ProgressDisplay(stream)
    for elapsed in (0.05, 2.0):
        if display.due(snap(elapsed)):
            display.show(snap(elapsed))
    final = snap(3.0, final=True, segments_done=4)
    assert display.due(final)
    display.show(final)
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "segments 1/4 done" in text and "segments 4/4 done" in text
    assert "100%" in text  # the end is the whole table


def test_progress_elsewhere_writes_a_line_every_few_seconds() -> None:
    stream = io.StringIO()
    display = ProgressDisplay(stream, every=5.0)
    for second in range(1, 12):
        if display.due(snap(float(second))):
            display.show(snap(float(second)))
    display.show(snap(12.0, final=True, segments_done=4))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3  # at 5 s, at 10 s, and the end
    assert "\r" not in stream.getvalue()
    assert lines[-1].endswith("segments 4/4 done")


def test_rich_draws_a_bar_on_a_terminal_and_the_plain_line_elsewhere() -> None:
    pytest.importorskip("rich", reason="the rich display needs rich installed")
    assert isinstance(display_for(Terminal()), RichDisplay)
    assert isinstance(display_for(io.StringIO()), ProgressDisplay)
    stream = Terminal()
    display = RichDisplay(stream, width=240)
    display.show(snap(2.0, dry_run=True))
    display.show(snap(4.0, final=True, segments_done=4, dry_run=True))
    text = stream.getvalue()
    assert "backfill Order (dry run)" in text and "would update 300" in text
    assert "100%" in text and "segments 4/4" in text


def test_a_callback_gets_the_report() -> None:
    seen: list[BackfillReport] = []
    reporter = CallbackReporter(seen.append)
    assert reporter.inline and reporter.due(snap(0.0))
    reporter.show(snap(0.0))
    assert seen == [REPORT]
