"""``index_changes`` returns at once when an update touches no field any index attribute is
rendered from or whose value decides membership (and no user code decides it). A differential
property: with and without that shortcut, the same result or the same refusal, on entities
with plain, sparse (``when=`` by value and by callable), optional-field and computed-field
indexes, for random touched fields and values."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import computed_field

from singletable import GSI, Entity, Index, Table
from singletable._entity import spec_of
from singletable._verbs import index_keys
from singletable._verbs.index_keys import index_changes
from singletable.errors import KeyTemplateError

table = Table(
    "shortcut",
    indexes=[GSI("GSI1", "GSI1PK", "GSI1SK"), GSI("GSI2", "GSI2PK", "GSI2SK")],
)


class Ticket(Entity, table=table, type="TICKET"):
    ticket_id: str
    queue: str
    owner: str | None = None
    status: Literal["open", "closed"] = "open"
    title: str = ""
    note: str | None = None
    points: int = 0

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"
        GSI1 = ("QUEUE#{queue}", "OWNER#{owner}#{ticket_id}")
        GSI2 = Index("OPEN#{queue}", "TICKET#{ticket_id}", when={"status": "open"})


class Task(Entity, table=table, type="TASK"):
    task_id: str
    queue: str
    status: Literal["open", "closed"] = "open"
    title: str = ""
    points: int = 0

    class Keys:
        pk = "TASK#{task_id}"
        sk = "TASK"
        GSI1 = Index("QUEUE#{queue}", "TASK#{task_id}", when=lambda t: t.status == "open")


class Story(Entity, table=table, type="STORY"):
    story_id: str
    title: str = ""
    points: int = 0
    note: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def size(self) -> str:
        return "big" if self.points > 5 else "small"

    class Keys:
        pk = "STORY#{story_id}"
        sk = "STORY"
        GSI1 = ("SIZE#{size}", "STORY#{story_id}")


VALUES: dict[str, st.SearchStrategy[Any]] = {
    "queue": st.sampled_from(["q1", "q2"]),
    "owner": st.none() | st.sampled_from(["ann", "bob"]),
    "status": st.sampled_from(["open", "closed"]),
    "title": st.sampled_from(["", "fix it"]),
    "note": st.none() | st.just("n"),
    "points": st.integers(0, 9),
}
ENTITIES = {Ticket: {"ticket_id": "t1"}, Task: {"task_id": "k1"}, Story: {"story_id": "s1"}}


@contextmanager
def without_shortcut() -> Iterator[None]:
    original = index_keys._static_index_inputs
    index_keys._static_index_inputs = lambda spec: None  # type: ignore[assignment]
    try:
        yield
    finally:
        index_keys._static_index_inputs = original


def outcome(spec: Any, known: dict[str, Any], touched: set[str], blind: dict[str, str]) -> Any:
    try:
        return index_changes(spec, known, touched, blind)
    except KeyTemplateError as exc:
        return ("refused", exc.code, exc.key, str(exc))


@st.composite
def updates(draw: st.DrawFn) -> tuple[type[Entity], dict[str, Any], set[str], dict[str, str]]:
    cls = draw(st.sampled_from(list(ENTITIES)))
    fields = [f for f in cls.model_fields if f in VALUES]
    touched = set(draw(st.lists(st.sampled_from(fields), unique=True, max_size=3)))
    known = dict(ENTITIES[cls])
    for name in fields:  # touched fields are known unless changed blind; others maybe
        if name in touched or draw(st.booleans()):
            known[name] = draw(VALUES[name])
    blind = {}
    if "points" in touched and draw(st.booleans()):
        blind["points"] = "add="
        known.pop("points", None)
    return cls, known, touched, blind


@settings(max_examples=200)
@given(updates())
def test_the_shortcut_changes_nothing(
    update: tuple[type[Entity], dict[str, Any], set[str], dict[str, str]],
) -> None:
    cls, known, touched, blind = update
    spec = spec_of(cls)
    fast = outcome(spec, known, touched, blind)
    with without_shortcut():
        general = outcome(spec, known, touched, blind)
    assert fast == general


def test_which_entities_take_the_shortcut() -> None:
    ticket = index_keys._static_index_inputs(spec_of(Ticket))
    assert ticket == frozenset({"queue", "owner", "ticket_id", "status"})
    assert index_keys._static_index_inputs(spec_of(Task)) is None  # callable when=
    assert index_keys._static_index_inputs(spec_of(Story)) is None  # computed field in a key
    # A title change on a ticket returns at once: no index attribute depends on it.
    assert index_changes(spec_of(Ticket), {"ticket_id": "t", "title": "x"}, {"title"}, {}) == (
        {},
        [],
        {},
    )


def test_an_upsert_never_takes_the_shortcut() -> None:
    spec = spec_of(Ticket)
    known = {"ticket_id": "t", "queue": "q1", "owner": "ann", "status": "open", "title": "x"}
    result = index_changes(spec, known, {"title"}, {}, every_attribute=True)
    assert set(result[0]) == {"GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK"}


@pytest.mark.parametrize("cls", list(ENTITIES))
def test_an_unknown_field_is_still_refused(cls: type[Entity]) -> None:
    """An update touching an index input without knowing the rest is refused either way."""
    spec = spec_of(cls)
    keys = ENTITIES[cls]
    touched = {"queue"} if "queue" in cls.model_fields else {"points"}
    with pytest.raises(KeyTemplateError):
        index_changes(spec, dict(keys), touched, {})
