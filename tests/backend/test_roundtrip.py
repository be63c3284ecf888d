"""Every supported field type survives a real backend: written and read with the raw client,
decoded by the entity (numbers normalised by dynalite, echoed by moto)."""

from __future__ import annotations

import enum
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr

from singletable import Entity, Table
from singletable._table import wait_until_active

table = Table("RoundTrip", ttl_attribute="expires_at")


class Colour(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 9


class Point(BaseModel):
    x: int
    y: Decimal
    label: str | None = None


class Everything(Entity, table=table, type="EVERYTHING"):
    item_id: str
    text: str
    number: int
    big: int
    negative: int
    price: Decimal
    tiny: Decimal
    ratio: float
    flag: bool
    maybe: str | None = None
    created: datetime
    naive: datetime
    day: date
    at: time
    ident: uuid.UUID
    colour: Colour
    level: Level
    size: Literal["S", "M", "L"]
    blob: bytes
    words: list[str]
    pair: tuple[int, str]
    tags: set[str]
    scores: set[int]
    amounts: set[Decimal]
    blobs: set[bytes]
    empty_tags: set[str] = set()
    mapping: dict[str, int]
    point: Point
    points: list[Point]
    anything: Any
    secret: SecretStr
    aliased: str = Field(alias="aliasedName")
    long_text: Annotated[str, Field(max_length=10_000)]
    expires_at: datetime | None = None

    class Keys:
        pk = "THING#{item_id}"
        sk = "THING"


def sample(item_id: str = "1") -> Everything:
    return Everything(
        item_id=item_id,
        text="héllo 𝄞 wörld",
        number=42,
        big=10**37 + 7,
        negative=-17,
        price=Decimal("2176.15"),
        tiny=Decimal("1E-130"),
        ratio=0.1,
        flag=True,
        created=datetime(2026, 6, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2))),
        naive=datetime(2026, 6, 1, 12, 30),
        day=date(2026, 6, 1),
        at=time(9, 15, 30),
        ident=uuid.UUID("12345678-1234-5678-1234-567812345678"),
        colour=Colour.BLUE,
        level=Level.HIGH,
        size="M",
        blob=b"\x00\x01binary\xff",
        words=["a", "b", "a"],
        pair=(1, "one"),
        tags={"x", "y"},
        scores={1, 2, 3},
        amounts={Decimal("1.5"), Decimal("2")},
        blobs={b"a", b"b"},
        mapping={"one": 1, "two": 2},
        point=Point(x=1, y=Decimal("2.5")),
        points=[Point(x=1, y=Decimal(0), label="a"), Point(x=2, y=Decimal("0.5"))],
        anything={"nested": [1, "two", {"three": Decimal("3.5")}], "none": None},
        secret=SecretStr("hunter2"),
        aliasedName="via alias",
        long_text="z" * 5000,
        expires_at=datetime(2030, 1, 1, tzinfo=timezone.utc),
    )


def test_every_field_type_round_trips_through_the_backend(client: Any, table_name: str) -> None:
    client.create_table(**table.create_table_params(table_name))
    wait_until_active(client, table_name, delay=0.02)
    original = sample()
    item = original.to_item()
    assert item["secret"] == {"S": "hunter2"}  # the real secret, never "**********"
    assert item["aliasedName"] == {"S": "via alias"}
    assert "empty_tags" not in item and "maybe" not in item
    assert item["expires_at"] == {"N": "1893456000"}
    client.put_item(TableName=table_name, Item=item)
    stored = client.get_item(TableName=table_name, Key=Everything.key(item_id="1"))["Item"]
    decoded = Everything.from_item(stored)
    assert decoded == original
    assert decoded.model_dump() == original.model_dump()
    assert decoded.secret.get_secret_value() == "hunter2"
    assert decoded.created.tzinfo is not None and decoded.created == original.created
    assert decoded.naive.tzinfo is None
