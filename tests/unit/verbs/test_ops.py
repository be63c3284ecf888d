"""``former_types=`` (a renamed type tag) and declared datetime formats (``DatetimeFormat``,
``Table(datetime_format=)``): declarations, items, update requests (pure: no backend)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from singletable import Attr, DatetimeFormat, Entity, Table, Unique, UpdatedAt
from singletable._context import WriteContext
from singletable._entity import spec_of
from singletable._verbs.ops import compile_condition
from singletable._verbs.update import compile_update
from singletable.errors import ItemDecodeError, ItemEncodeError, ModelDefinitionError

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
CTX = WriteContext("t", NOW)
AT = datetime(2025, 1, 1, 1, 22, 24, 677689, tzinfo=timezone.utc)

# -- former_types ----------------------------------------------------------------------------------

renamed = Table("Renamed")


class Ticket(Entity, table=renamed, type="TICKET", former_types=("Ticket", "Issue")):
    ticket_id: str
    title: str

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"


class Plain(Entity, table=renamed, type="PLAIN"):
    plain_id: str
    title: str

    class Keys:
        pk = "PLAIN#{plain_id}"
        sk = "PLAIN"


def test_type_tags_are_the_current_then_the_former_ones() -> None:
    assert spec_of(Ticket).type_tags == ("TICKET", "Ticket", "Issue")
    assert spec_of(Plain).type_tags == ("PLAIN",)


def test_items_under_a_former_tag_decode_and_are_written_with_the_current_one() -> None:
    item = Ticket(ticket_id="1", title="x").to_item()
    assert item["_type"] == {"S": "TICKET"}
    assert Ticket.from_item({**item, "_type": {"S": "Issue"}}) == Ticket(ticket_id="1", title="x")
    with pytest.raises(ItemDecodeError):
        Ticket.from_item({**item, "_type": {"S": "PLAIN"}})


def test_updates_set_the_current_tag_only_for_renamed_entities() -> None:
    op = compile_update(
        spec_of(Ticket), CTX, key_fields={"ticket_id": "1"}, set_values={"title": "y"}
    )
    names = op.params["ExpressionAttributeNames"]
    values = op.params["ExpressionAttributeValues"]
    tag = next(k for k, v in names.items() if v == "_type")
    assert f"{tag} = " in op.params["UpdateExpression"]
    assert {"S": "TICKET"} in values.values()
    plain = compile_update(
        spec_of(Plain), CTX, key_fields={"plain_id": "1"}, set_values={"title": "y"}
    )
    assert "_type" not in plain.params["ExpressionAttributeNames"].values()


@pytest.mark.parametrize(
    ("former", "message"),
    [
        ("Old", "takes a tuple"),
        (("THING",), "not the current one"),
        (("Old", "Old"), "one tag twice"),
        (("",), "non-empty"),
        (("PLAIN",), "also read as Plain"),
    ],
)
def test_bad_former_types_are_refused(former: Any, message: str) -> None:
    with pytest.raises(ModelDefinitionError, match=message):

        class Thing(Entity, table=renamed, type="THING", former_types=former):
            thing_id: str

            class Keys:
                pk = "THING#{thing_id}"
                sk = "THING"


def test_a_current_tag_another_entity_reads_as_former_is_refused() -> None:
    with pytest.raises(ModelDefinitionError, match="also read as Ticket"):

        class Issue(Entity, table=renamed, type="Issue"):
            issue_id: str

            class Keys:
                pk = "ISSUE#{issue_id}"
                sk = "ISSUE"


def test_former_types_with_unique_fields_are_refused() -> None:
    with pytest.raises(ModelDefinitionError, match="Unique"):

        class Member(Entity, table=Table("Members"), type="MEMBER", former_types=("Member",)):
            member_id: str
            email: Annotated[str, Unique()]

            class Keys:
                pk = "MEMBER#{member_id}"
                sk = "MEMBER"


# -- declared datetime formats --------------------------------------------------------------------

legacy = Table("Legacy", datetime_format="pynamodb")


class Stamp(BaseModel):
    at: datetime
    day: date


class Event(Entity, table=legacy, type="EVENT"):
    event_id: str
    at: datetime
    canonical: Annotated[datetime, DatetimeFormat("canonical")]
    optional: datetime | None = None
    many: list[datetime] = []
    stamp: Stamp | None = None
    custom: Annotated[datetime | None, DatetimeFormat("%Y%m%d %H%M%S")] = None
    changed: Annotated[datetime | None, UpdatedAt()] = None

    class Keys:
        pk = "EVENT#{event_id}"
        sk = "AT#{at}"


def event(**changes: Any) -> Event:
    values: dict[str, Any] = {"event_id": "e1", "at": AT, "canonical": AT, **changes}
    return Event(**values)


def test_the_table_format_applies_to_every_datetime_and_a_field_format_wins() -> None:
    item = event(
        optional=AT, many=[AT], stamp=Stamp(at=AT, day=date(2025, 1, 1)), custom=AT
    ).to_item()
    pynamodb = "2025-01-01T01:22:24.677689+0000"
    assert item["at"] == {"S": pynamodb}
    assert item["optional"] == {"S": pynamodb}
    assert item["many"] == {"L": [{"S": pynamodb}]}
    assert item["stamp"]["M"]["at"] == {"S": pynamodb}
    assert item["canonical"] == {"S": "2025-01-01T01:22:24.677689Z"}
    assert item["custom"] == {"S": "20250101 012224"}
    assert item["SK"] == {"S": "AT#2025-01-01T01:22:24.677689Z"}  # keys keep their own format
    assert Event.from_item(item) == event(
        optional=AT,
        many=[AT],
        stamp=Stamp(at=AT, day=date(2025, 1, 1)),
        custom=AT.replace(microsecond=0),
    )


def test_either_format_reads() -> None:
    item = event().to_item()
    assert Event.from_item({**item, "at": {"S": "2025-01-01T01:22:24.677689Z"}}).at == AT
    assert (
        Event.from_item({**item, "canonical": {"S": "2025-01-01T01:22:24.677689+0000"}}).canonical
        == AT
    )
    assert Event.from_item({**item, "custom": {"S": "2025-01-01T01:22:24Z"}}).custom == AT.replace(
        microsecond=0
    )


def test_other_zones_are_stored_in_utc() -> None:
    plus_two = AT.astimezone(timezone(timedelta(hours=2)))
    item = event(at=plus_two, custom=plus_two).to_item()
    assert item["at"] == {"S": "2025-01-01T01:22:24.677689+0000"}
    assert item["custom"] == {"S": "20250101 012224"}


@given(st.datetimes(timezones=st.just(timezone.utc), min_value=datetime(1, 1, 2)))
def test_pynamodb_text_round_trips(value: datetime) -> None:
    item = event(at=value, optional=value).to_item()
    assert item["optional"]["S"].endswith("+0000") and len(item["optional"]["S"]) == 31
    assert Event.from_item(item).optional == value
    reference: dict[str, Any] = {}
    spec_of(Event).codec.encode_field_by_field(event(at=value, optional=value), reference)
    assert {k: v for k, v in item.items() if k in reference} == reference  # generated == reference


def test_naive_datetimes_are_refused_naming_the_field() -> None:
    with pytest.raises(ItemEncodeError, match=r"Event\.optional"):
        event(optional=datetime(2025, 1, 1)).to_item()


def test_conditions_and_maintained_fields_use_the_declared_format() -> None:
    params: dict[str, Any] = {}
    compile_condition(spec_of(Event), Attr("optional").eq(AT), params)
    assert params["ExpressionAttributeValues"] == {":cv0": {"S": "2025-01-01T01:22:24.677689+0000"}}
    op = compile_update(spec_of(Event), CTX, key_fields={"event_id": "e1", "at": AT}, set_values={})
    assert {"S": "2026-03-01T12:00:00.000000+0000"} in op.params[
        "ExpressionAttributeValues"
    ].values()


@pytest.mark.parametrize("pattern", ["%Y-%m-%d", "no pattern", "%H:%M:%S"])
def test_patterns_that_lose_the_time_are_refused(pattern: str) -> None:
    with pytest.raises(ModelDefinitionError, match="datetime format"):
        DatetimeFormat(pattern)
    with pytest.raises(ModelDefinitionError):
        Table("T", datetime_format=pattern)


def test_formats_compare_by_pattern() -> None:
    assert DatetimeFormat("pynamodb") == DatetimeFormat("%Y-%m-%dT%H:%M:%S.%f+0000")
    assert DatetimeFormat("canonical") != DatetimeFormat("pynamodb")
    assert "datetime_format=DatetimeFormat('pynamodb')" in repr(legacy)
