"""The pure half of ``repo.backfill``: value comparison, what is stale, the conditioned
UpdateItem, the checkpoint file and the progress line (no backend)."""

from __future__ import annotations

import io
import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from singletable.backfill import CheckpointFile, JobState, ProgressDisplay
from singletable.errors import InvalidRequestError
from singletable.writes.backfill import (
    BackfillFailure,
    BackfillPlan,
    BackfillReport,
    same_wire,
    stale_attributes,
)
from singletable.writes.ops import WriteContext

from ..backfill_models import Account, Order, OrderV1, Status
from ..conftest import NOW

CTX = WriteContext("t", NOW)

numbers = st.decimals(min_value=-(10**20), max_value=10**20, allow_nan=False, places=3)
scalars = st.one_of(
    st.text(max_size=5).map(lambda s: {"S": s}),
    numbers.map(lambda d: {"N": str(d)}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.binary(max_size=4).map(lambda b: {"B": b}),
)
# what a JSON round trip keeps (bytes are compared apart: test_same_wire_tells_values_apart)
values = st.recursive(
    scalars.filter(lambda v: "B" not in v),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda v: {"L": v}),
        st.dictionaries(st.text(max_size=3), inner, max_size=3).map(lambda v: {"M": v}),
    ),
    max_leaves=8,
)


@given(values)
def test_same_wire_is_reflexive(value: dict[str, Any]) -> None:
    assert same_wire(value, value)
    assert same_wire(value, json.loads(json.dumps(value, default=lambda b: b.decode("latin-1"))))


@given(st.lists(numbers, min_size=1, max_size=5, unique=True), st.randoms())
def test_same_wire_compares_numbers_and_sets_by_value(nums: list[Decimal], rnd: Any) -> None:
    texts = [str(n) for n in nums]
    shuffled = texts[:]
    rnd.shuffle(shuffled)
    assert same_wire({"NS": texts}, {"NS": shuffled})
    assert same_wire({"SS": texts}, {"SS": shuffled})
    assert same_wire({"N": texts[0]}, {"N": str(Decimal(texts[0]).normalize())})
    assert not same_wire({"N": texts[0]}, {"S": texts[0]})


def test_same_wire_tells_values_apart() -> None:
    assert not same_wire({"S": "a"}, {"S": "b"})
    assert not same_wire({"S": "a"}, None)
    assert same_wire(None, None)
    assert same_wire({"B": b"\x00"}, {"B": "AA=="})  # base64 text from a JSON response
    assert not same_wire({"L": [{"S": "a"}]}, {"L": [{"S": "a"}, {"S": "b"}]})
    assert not same_wire({"M": {"a": {"N": "1"}}}, {"M": {"a": {"N": "2"}}})


def test_stale_attributes_sets_what_differs_and_removes_dropped_index_keys() -> None:
    stored = {"PK": {"S": "p"}, "SK": {"S": "s"}, "GSI2PK": {"S": "x"}, "n": {"N": "1.0"}}
    wanted = {"PK": {"S": "p"}, "SK": {"S": "s"}, "GSI1PK": {"S": "y"}, "n": {"N": "1"}}
    changes, remove = stale_attributes(
        stored, wanted, frozenset({"GSI1PK", "GSI2PK"}), ("PK", "SK")
    )
    assert changes == {"GSI1PK": {"S": "y"}}
    assert remove == ["GSI2PK"]


def plan_of(spec: Any) -> BackfillPlan:
    return BackfillPlan(spec, "t", "TOTAL")


def old_item(**changes: Any) -> dict[str, Any]:
    order = OrderV1(customer_id="c1", order_id="o1", status=Status.PENDING, total=Decimal(3))
    return {**order.to_item(), **changes}


def test_classify_and_update_params() -> None:
    plan = plan_of(Order.__singletable__)
    decision = plan.classify(old_item(), CTX)
    assert decision.kind == "stale"
    assert set(decision.set) == {"_type", "GSI1PK", "GSI2PK", "GSI2SK", "shard"}
    params = plan.update_params(decision)
    assert params["Key"] == {"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "ORDER#o1"}}
    assert params["UpdateExpression"].startswith("SET ")
    assert params["ReturnConsumedCapacity"] == "TOTAL"
    condition = params["ConditionExpression"]
    names = params["ExpressionAttributeNames"]
    read = {names[n] for n in condition.replace("(", " ").replace(")", " ").split() if n in names}
    # unchanged since read: every scalar attribute read (keys aside), and those read as absent
    assert read >= {"PK", "_type", "status", "total", "GSI1PK", "GSI2PK", "shard"}
    assert "attribute_not_exists" in condition
    fresh = Order.__singletable__.to_item(
        Order(customer_id="c1", order_id="o1", status=Status.PENDING, total=Decimal(3))
    )
    assert plan.classify(fresh, CTX).kind == "fresh"
    assert plan.classify({**fresh, "_type": {"S": "NOTE"}}, CTX).kind == "skip"


def test_a_versioned_entity_is_conditioned_on_its_version() -> None:
    plan = plan_of(Account.__singletable__)
    item = {
        "PK": {"S": "ACCOUNT#a"},
        "SK": {"S": "ACCOUNT"},
        "_type": {"S": "ACCOUNT"},
        "account_id": {"S": "a"},
        "plan": {"S": "pro"},
        "version": {"N": "3"},
    }
    params = plan.update_params(plan.classify(item, CTX))
    names = {v: k for k, v in params["ExpressionAttributeNames"].items()}
    assert f"{names['version']} = " in params["ConditionExpression"]
    assert "plan" not in names  # neither touched nor checked: the version stands for it
    assert names["version"] not in params["UpdateExpression"]  # the version is not bumped


def test_an_undecodable_item_is_a_failure_without_its_contents() -> None:
    plan = plan_of(Order.__singletable__)
    decision = plan.classify(old_item(total={"S": "secret-value"}), CTX)
    assert decision.kind == "failed"
    assert decision.reason.startswith("item-decode")
    assert "secret-value" not in decision.reason


# -- the checkpoint file ---------------------------------------------------------------------------


JOB = {"entity": "Order", "segments": 2}
KEY = ("PK", "SK")


def test_checkpoint_round_trips_and_is_replaced_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cp.json"
    store = CheckpointFile(str(path), JOB, KEY)
    assert store.load() is None
    state = JobState(2)
    state.positions[0] = {"start": {"PK": {"S": "a"}, "SK": {"S": "b"}}, "done": False}
    state.positions[1] = {"start": None, "done": True}
    state.scanned, state.updated = 5, 2
    state.failed.append(BackfillFailure({"PK": "x"}, "why"))
    state.in_flight[("p", "s")] = ("moved", ("p", "t"))
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        replaced.append((str(src), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    store.save(state)
    ((src, dst),) = replaced
    assert Path(src).parent == tmp_path and dst == str(path)  # a temporary file beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cp.json"]
    loaded = store.load()
    assert loaded is not None
    assert loaded.positions == state.positions
    assert loaded.report() == state.report()
    assert loaded.resumed == {("p", "s"): ("moved", ("p", "t"))}
    assert ("p", "t") in loaded.moved_to  # a move in flight: its new key is not counted twice
    store.remove()
    assert not path.exists()


def test_a_failed_save_leaves_the_old_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cp.json"
    store = CheckpointFile(str(path), JOB, KEY)
    store.save(JobState(2))
    before = path.read_text()

    def broken(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    state = JobState(2)
    state.scanned = 9
    with pytest.raises(InvalidRequestError, match="No space left"):
        store.save(state)
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cp.json"]  # no temporary left


def test_a_checkpoint_of_another_job_names_what_differs(tmp_path: Path) -> None:
    path = tmp_path / "cp.json"
    CheckpointFile(str(path), JOB, KEY).save(JobState(2))
    with pytest.raises(InvalidRequestError, match="segments differ"):
        CheckpointFile(str(path), {**JOB, "segments": 3}, KEY).load()


def _saved(path: Path) -> dict[str, Any]:
    """A checkpoint as a run writes it: one segment half way, one done, counts, a fix."""
    state = JobState(2)
    state.positions[0] = {"start": {"PK": {"S": "a"}, "SK": {"S": "b"}}, "done": False}
    state.positions[1] = {"start": None, "done": True}
    state.scanned, state.matched, state.updated = 5, 4, 2
    state.failed.append(BackfillFailure({"PK": "x", "SK": "y"}, "why"))
    state.in_flight[("p", "s")] = ("stale", None)
    CheckpointFile(str(path), JOB, KEY).save(state)
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
        (lambda d: d["in_flight"].__setitem__(0, [[1, 2], "stale", None]), "in_flight[0][0]"),
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
        CheckpointFile(str(path), JOB, KEY).load()
    message = caught.value.message
    assert f"{path} is damaged: {field} " in message, message
    assert caught.value.key == str(path)


def test_an_intact_checkpoint_with_every_field_set_loads(tmp_path: Path) -> None:
    path = tmp_path / "cp.json"
    _saved(path)
    loaded = CheckpointFile(str(path), JOB, KEY).load()
    assert (
        loaded is not None
        and loaded.scanned == 5
        and loaded.resumed == {("p", "s"): ("stale", None)}
    )


# -- progress --------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


REPORT = BackfillReport(scanned=1200, matched=1000, updated=300, failed=[BackfillFailure({}, "x")])


def test_progress_on_a_terminal_redraws_one_line() -> None:
    stream, clock = Terminal(), Clock()
    display = ProgressDisplay("Order", stream, clock=clock)
    clock.now = 0.05
    display.page(REPORT, 1, 4)  # too soon: not drawn
    clock.now = 2.0
    display.page(REPORT, 1, 4)
    display.finish(REPORT, 4)
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "scanned 1,200" in text and "updated 300" in text and "failed 1" in text
    assert "600 items/s" in text and "segments 1/4 done" in text and "segments 4/4 done" in text


def test_a_dry_run_s_progress_line_says_would() -> None:
    stream = io.StringIO()
    ProgressDisplay("Order", stream, clock=Clock(), dry_run=True).finish(REPORT, 2)
    assert ", would update 300, would move 0, failed 1," in stream.getvalue()
    assert " updated " not in stream.getvalue()


def test_progress_elsewhere_writes_a_line_every_few_seconds() -> None:
    stream, clock = io.StringIO(), Clock()
    display = ProgressDisplay("Order", stream, clock=clock, every=5.0)
    for second in range(1, 12):
        clock.now = float(second)
        display.page(REPORT, 0, 2)
    display.finish(REPORT, 2)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3  # at 5 s, at 10 s, and the end
    assert "\r" not in stream.getvalue()
    assert lines[-1].endswith("segments 2/2 done")


def test_report_text() -> None:
    assert str(BackfillReport(3, 2, 1, 1, 0, (), 2.5)) == (
        "scanned 3, matched 2: 1 up to date, 1 updated, 0 moved, 0 failed, 2.5 CU"
    )
    assert BackfillReport().ok and not REPORT.ok
