"""``IndexSpec.holds``: the one rule of sparse-index membership, which the generated ``to_item``
asks for sparse indexes and updates apply to what they know (pure: no backend)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from singletable._entity import spec_of
from tests.unit.verbs.test_index_keys import Task, Ticket


def test_holds_checks_the_when_values_the_verdict_and_the_template_fields() -> None:
    gsi2 = spec_of(Ticket).indexes["GSI2"]  # ("OPEN#{queue}", "TICKET#{ticket_id}"), open only
    assert gsi2.holds({"status": "open", "queue": "q1", "ticket_id": "t"})
    assert not gsi2.holds({"status": "closed", "queue": "q1", "ticket_id": "t"})
    assert not gsi2.holds({"status": "open", "queue": None, "ticket_id": "t"})
    assert not gsi2.holds({"status": "open", "queue": "q1"}, verdict=False)
    gsi1 = spec_of(Ticket).indexes["GSI1"]  # ("QUEUE#{queue}", "OWNER#{owner}#{ticket_id}")
    assert gsi1.holds({"queue": "q1", "owner": "ann", "ticket_id": "t"})
    assert not gsi1.holds({"queue": "q1", "owner": None, "ticket_id": "t"})


def test_a_field_it_is_not_given_is_not_held_against_the_item() -> None:
    """An update decides with what it knows: a missing field neither admits nor refuses."""
    gsi2 = spec_of(Ticket).indexes["GSI2"]
    assert gsi2.holds({})
    assert gsi2.holds({"queue": "q1"})
    assert not gsi2.holds({"queue": "q1", "status": "closed"})


def test_the_generated_to_item_asks_holds_for_sparse_indexes_only() -> None:
    ticket = spec_of(Ticket)
    ticket.to_item(Ticket(ticket_id="t", queue="q"))  # generates it
    bound = list(ticket.to_item.__globals__.values())  # type: ignore[attr-defined]
    # GSI2 is sparse (when=); GSI1 is over an optional field, tested inline.
    assert ticket.indexes["GSI2"].holds in bound
    assert ticket.indexes["GSI1"].holds not in bound


@given(
    status=st.sampled_from(["open", "closed"]),
    owner=st.none() | st.sampled_from(["ann", "bob"]),
    queue=st.sampled_from(["q1", "q2"]),
)
def test_to_item_writes_an_index_exactly_when_holds_says_so(
    status: Any, owner: Any, queue: str
) -> None:
    for cls, keys in ((Ticket, {"ticket_id": "t", "owner": owner}), (Task, {"task_id": "k"})):
        entity = cls(**keys, status=status, queue=queue)
        spec = spec_of(cls)
        item = spec.to_item(entity)
        for index in spec.indexes.values():
            verdict = True if index.when_callable is None else bool(index.when_callable(entity))
            assert (index.keys.pk in item) is index.holds(entity.__dict__, verdict)
