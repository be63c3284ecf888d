"""The per-field codec (pure): every supported field type round-trips through the wire format,
the wire shapes are DynamoDB's, unstorable values are refused naming the field, stale items
raise ItemDecodeError, and item sizes follow DynamoDB's formula."""

import enum
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretBytes,
    SecretStr,
    computed_field,
)

from singletable import GSI, Entity, Index, Table, Version
from singletable._wire import MAX_ITEM_BYTES, item_size, value_size
from singletable.errors import (
    ItemDecodeError,
    ItemEncodeError,
    ItemTooLargeError,
    KeyTemplateError,
    SingleTableError,
)

UTC = timezone.utc
PLUS2 = timezone(timedelta(hours=2))


def codec_table(**kw: Any) -> Table:
    return Table(
        "Codec",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
        ttl_attribute="expires_at",
        **kw,
    )


TABLE = codec_table()


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


class Prio(enum.IntEnum):
    P1 = 1
    P2 = 2


class Status(str, enum.Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"


class Address(BaseModel):
    street: str
    zip: str | None = None
    tags: list[str] = []


class Everything(Entity, table=TABLE):
    id: str
    s: str
    i: int
    f: float
    d: Decimal
    b: bool
    dt_aware: datetime
    dt_naive: datetime
    day: date
    t: time
    u: uuid.UUID
    color: Color
    level: Level
    prio: Prio
    lit: Literal["x", "y"]
    lit_n: Literal[1, 2]
    raw: bytes
    nums: list[int]
    tup: tuple[int, str]
    var_tup: tuple[int, ...]
    ss: set[str]
    ns: set[int]
    ds: set[Decimal]
    bs: set[bytes]
    fs: frozenset[str]
    m: dict[str, int]
    anymap: dict[str, Any]
    addr: Address
    addrs: list[Address]
    secret: SecretStr
    secret_b: SecretBytes
    opt: int | None = None
    maybe_addr: Address | None = None
    anything: Any = None
    empty_tags: set[str] = set()

    class Keys:
        pk = "E#{id}"
        sk = "E"


UID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def everything(**changes: Any) -> Everything:
    values: dict[str, Any] = {
        "id": "e1",
        "s": "héllo 😀",
        "i": -42,
        "f": 0.1,
        "d": Decimal("1.50"),
        "b": True,
        "dt_aware": datetime(2026, 6, 1, 12, 30, 0, 5, tzinfo=PLUS2),
        "dt_naive": datetime(2026, 1, 1, 12, 0),
        "day": date(2026, 6, 1),
        "t": time(10, 30, 0),
        "u": UID,
        "color": Color.BLUE,
        "level": Level.HIGH,
        "prio": Prio.P2,
        "lit": "y",
        "lit_n": 2,
        "raw": b"\x00\xffbytes",
        "nums": [3, 1, 2],
        "tup": (7, "seven"),
        "var_tup": (1, 2, 3),
        "ss": {"b", "a"},
        "ns": {10, -1},
        "ds": {Decimal("1.5"), Decimal("-0.25")},
        "bs": {b"\x01", b"\x02"},
        "fs": frozenset({"z"}),
        "m": {"a": 1, "b": 2},
        "anymap": {"list": [1, "x", True, None], "nested": {"d": Decimal("2.5")}},
        "addr": Address(street="Main St", tags=["home"]),
        "addrs": [Address(street="A"), Address(street="B", zip="123")],
        "secret": SecretStr("hunter2"),
        "secret_b": SecretBytes(b"key"),
        "anything": {"k": ["v", 1]},
    }
    values.update(changes)
    return Everything(**values)


# -- round trip --------------------------------------------------------------------------------


def test_everything_round_trips():
    entity = everything()
    item = entity.to_item()
    back = Everything.from_item(item)
    assert back == entity
    assert back.model_dump() == entity.model_dump()
    assert back.secret.get_secret_value() == "hunter2"
    assert back.secret_b.get_secret_value() == b"key"


def test_wire_shapes():
    item = everything().to_item()
    assert item["_type"] == {"S": "Everything"}
    assert item["PK"] == {"S": "E#e1"}
    assert item["SK"] == {"S": "E"}
    assert item["s"] == {"S": "héllo 😀"}
    assert item["i"] == {"N": "-42"}
    assert item["f"] == {"N": "0.1"}
    assert item["d"] == {"N": "1.50"}
    assert item["b"] == {"BOOL": True}
    assert item["dt_aware"] == {"S": "2026-06-01T10:30:00.000005Z"}
    assert item["dt_naive"] == {"S": "2026-01-01T12:00:00.000000"}
    assert item["day"] == {"S": "2026-06-01"}
    assert item["t"] == {"S": "10:30:00"}
    assert item["u"] == {"S": str(UID)}
    assert item["color"] == {"S": "blue"}
    assert item["level"] == {"N": "2"}
    assert item["prio"] == {"N": "2"}
    assert item["lit"] == {"S": "y"}
    assert item["lit_n"] == {"N": "2"}
    assert item["raw"] == {"B": b"\x00\xffbytes"}
    assert item["nums"] == {"L": [{"N": "3"}, {"N": "1"}, {"N": "2"}]}
    assert item["tup"] == {"L": [{"N": "7"}, {"S": "seven"}]}
    assert item["var_tup"] == {"L": [{"N": "1"}, {"N": "2"}, {"N": "3"}]}
    assert item["ss"] == {"SS": ["a", "b"]}
    assert sorted(item["ns"]["NS"], key=int) == ["-1", "10"]
    assert set(item) >= {"ns", "ds", "bs"}
    assert sorted(item["ds"]["NS"], key=Decimal) == ["-0.25", "1.5"]
    assert sorted(item["bs"]["BS"]) == [b"\x01", b"\x02"]
    assert item["fs"] == {"SS": ["z"]}
    assert item["m"] == {"M": {"a": {"N": "1"}, "b": {"N": "2"}}}
    assert item["anymap"] == {
        "M": {
            "list": {"L": [{"N": "1"}, {"S": "x"}, {"BOOL": True}, {"NULL": True}]},
            "nested": {"M": {"d": {"N": "2.5"}}},
        }
    }
    assert item["addr"] == {"M": {"street": {"S": "Main St"}, "tags": {"L": [{"S": "home"}]}}}
    assert item["addrs"] == {
        "L": [
            {"M": {"street": {"S": "A"}, "tags": {"L": []}}},
            {"M": {"street": {"S": "B"}, "zip": {"S": "123"}, "tags": {"L": []}}},
        ]
    }
    assert item["secret"] == {"S": "hunter2"}
    assert item["secret_b"] == {"B": b"key"}
    assert item["anything"] == {"M": {"k": {"L": [{"S": "v"}, {"N": "1"}]}}}
    # None and empty sets are left out, never stored as NULL or an empty set.
    assert "opt" not in item
    assert "maybe_addr" not in item
    assert "empty_tags" not in item
    assert "expires_at" not in item


def test_every_wire_value_has_one_dynamodb_type():
    allowed = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}

    def check(av):
        assert len(av) == 1
        ((tag, raw),) = av.items()
        assert tag in allowed
        if tag == "N":
            Decimal(raw)
            assert isinstance(raw, str)
        if tag == "M":
            for v in raw.values():
                check(v)
        if tag == "L":
            for v in raw:
                check(v)
        if tag in ("SS", "NS", "BS"):
            assert raw
            assert len(set(raw)) == len(raw)

    for av in everything().to_item().values():
        check(av)


def test_to_item_does_not_mutate_and_is_repeatable():
    entity = everything()
    before = entity.model_dump()
    first = entity.to_item()
    second = entity.to_item()
    assert first == second
    assert first is not second
    assert entity.model_dump() == before


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("dt_aware", datetime(2026, 6, 1, 23, 59, tzinfo=timezone(timedelta(hours=-5)))),
        ("dt_aware", datetime(2026, 6, 1, tzinfo=UTC)),
        ("dt_naive", datetime(1, 1, 1)),
        ("t", time(23, 59, 59, 999999)),
        ("t", time(1, 2, 3, tzinfo=PLUS2)),
        ("f", -1.5e100),
        ("f", 1e-100),
        ("f", 0.0),
        ("f", 123456789.123456789),
        ("d", Decimal("0.000")),
        ("d", Decimal("-1E-130")),
        ("d", Decimal("9.9999999999999999999999999999999999999E+125")),
        ("d", Decimal("12345678901234567890123456789012345678")),
        ("i", 10**38 - 1),
        ("i", -(10**38) + 1),
        ("i", 10**38),  # one significant digit: storable
        ("s", ""),
        ("raw", b""),
        ("nums", []),
        ("m", {}),
        ("anything", None),
        ("anything", "text"),
        ("anything", 5),
        ("anything", [Decimal("1.5"), {"a": None}]),
        ("anything", {"x", "y"}),
        ("opt", 0),
        ("maybe_addr", Address(street="x", zip="y")),
    ],
)
def test_round_trip_edge_values(field, value):
    entity = everything(**{field: value})
    back = Everything.from_item(entity.to_item())
    assert back == entity
    assert getattr(back, field) == getattr(entity, field)


def test_decimal_is_exact_and_keeps_its_digits():
    entity = everything(d=Decimal("3.14159265358979323846264338327950288"))
    back = Everything.from_item(entity.to_item())
    assert back.d == entity.d
    assert str(back.d) == "3.14159265358979323846264338327950288"
    assert str(Everything.from_item(everything(d=Decimal("1.50")).to_item()).d) == "1.50"


def test_aware_datetime_read_back_is_the_same_instant_in_utc():
    entity = everything(dt_aware=datetime(2026, 6, 1, 12, 30, tzinfo=PLUS2))
    back = Everything.from_item(entity.to_item())
    assert back.dt_aware == entity.dt_aware
    assert back.dt_aware.utcoffset() == timedelta(0)
    assert back.dt_naive.tzinfo is None


def test_enum_and_set_types_come_back_typed():
    back = Everything.from_item(everything().to_item())
    assert back.color is Color.BLUE
    assert back.level is Level.HIGH
    assert back.prio is Prio.P2
    assert isinstance(back.ss, set)
    assert isinstance(back.fs, frozenset)
    assert isinstance(back.tup, tuple)
    assert all(isinstance(x, Decimal) for x in back.ds)
    assert all(isinstance(x, int) for x in back.ns)
    assert isinstance(back.addrs[0], Address)


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("f", float("nan")),
        ("f", float("inf")),
        ("f", float("-inf")),
        ("f", 1e300),
        ("f", 1e-300),
        # (non-finite Decimals are already refused by pydantic at construction)
        ("d", Decimal("1." + "1" * 38)),  # 39 significant digits
        ("d", Decimal("1E+126")),
        ("d", Decimal("-1E+126")),
        ("d", Decimal("1E-131")),
        ("i", 10**38 + 1),
        ("i", -(10**39) - 7),
        ("ds", {Decimal("1E+200")}),
        ("ns", {10**40 + 1}),
        ("nums", [1, 10**40 + 1]),
        ("anything", float("nan")),
        ("anything", Decimal("1E+999")),
        ("anything", object()),
        ("m", {"a": 10**40 + 1}),
    ],
)
def test_unstorable_values_refused_naming_the_field(field, value):
    entity = everything(**{field: value})
    with pytest.raises(ItemEncodeError) as info:
        entity.to_item()
    assert f"Everything.{field}" in str(info.value)
    assert isinstance(info.value, SingleTableError)


# -- optional and empty values -----------------------------------------------------------------


T2 = codec_table()


class Defaults(Entity, table=T2):
    id: str
    note: str | None = None
    tags: set[str] = set()
    counts: set[int] = Field(default_factory=set)

    class Keys:
        pk = "D#{id}"
        sk = "D"


def test_none_and_empty_sets_omitted_and_read_back_as_defaults():
    entity = Defaults(id="1")
    item = entity.to_item()
    assert set(item) == {"_type", "PK", "SK", "id"}
    assert Defaults.from_item(item) == entity
    full = Defaults(id="1", note="n", tags={"a"}, counts={1})
    assert Defaults.from_item(full.to_item()) == full


class RequiredNullable(Entity, table=T2):
    id: str
    note: str | None
    tags: set[str]

    class Keys:
        pk = "R#{id}"
        sk = "R"


def test_required_nullable_field_round_trips():
    entity = RequiredNullable(id="1", note=None, tags={"t"})
    item = entity.to_item()
    assert "note" not in item
    assert RequiredNullable.from_item(item) == entity


def test_required_empty_set_round_trips():
    entity = RequiredNullable(id="1", note="n", tags=set())
    item = entity.to_item()
    assert "tags" not in item
    assert RequiredNullable.from_item(item) == entity


# -- aliases -----------------------------------------------------------------------------------


def _aliased(config: ConfigDict, name: str) -> type[Entity]:
    table = codec_table()
    namespace = {
        "__module__": __name__,
        "__qualname__": name,
        "__annotations__": {"id": str, "full_name": str, "nick": str | None},
        "model_config": config,
        "full_name": Field(alias="fullName"),
        "nick": Field(None, serialization_alias="nickName"),
    }
    keys = type("Keys", (), {"pk": "A#{id}", "sk": "A"})
    keys.__qualname__ = f"{name}.Keys"
    keys.__module__ = __name__
    namespace["Keys"] = keys
    return type(name, (Entity,), namespace, table=table)


@pytest.mark.parametrize(
    "config",
    [
        ConfigDict(),
        ConfigDict(populate_by_name=True),
        ConfigDict(validate_by_name=True, validate_by_alias=True),
        ConfigDict(validate_by_name=True, validate_by_alias=False),
    ],
    ids=["default", "populate_by_name", "by_name_and_alias", "by_name_only"],
)
def test_alias_is_the_attribute_name_and_decodes(config):
    cls = _aliased(config, "Aliased")
    if config.get("validate_by_alias") is False:
        entity = cls(id="1", full_name="Ada", nick="a")
    else:
        entity = cls(id="1", fullName="Ada", nick="a")
    item = entity.to_item()
    assert item["fullName"] == {"S": "Ada"}
    assert item["nickName"] == {"S": "a"}
    assert "full_name" not in item
    assert "nick" not in item
    back = cls.from_item(item)
    assert back == entity
    assert back.full_name == "Ada"
    assert back.nick == "a"


def test_validation_alias_choices_decode():
    table = codec_table()

    class Choices(Entity, table=table):
        id: str
        name: str = Field(validation_alias=AliasChoices("name", "userName"))

        class Keys:
            pk = "C#{id}"
            sk = "C"

    entity = Choices(id="1", userName="x")
    item = entity.to_item()
    assert item["name"] == {"S": "x"}
    assert Choices.from_item(item) == entity


def test_validation_alias_choices_with_extras_decode_the_extras():
    """A model validated by name (AliasChoices) that allows extras reads its extras back, as
    every other model does (the generated decoder used to drop them)."""
    table = codec_table()

    class Loose(Entity, table=table):
        model_config = ConfigDict(extra="allow")
        id: str
        name: str = Field(validation_alias=AliasChoices("name", "userName"))

        class Keys:
            pk = "L#{id}"
            sk = "L"

    entity = Loose(id="1", userName="x", note="kept", count=3)
    item = entity.to_item()
    assert item["note"] == {"S": "kept"} and item["count"] == {"N": "3"}
    back = Loose.from_item(item)
    assert back == entity
    assert back.__pydantic_extra__ == {"note": "kept", "count": 3}


# -- SecretStr, computed fields, extras --------------------------------------------------------


def test_secret_str_stored_as_the_real_secret_not_stars():
    item = everything(secret=SecretStr("s3cr3t")).to_item()
    assert item["secret"] == {"S": "s3cr3t"}
    assert "*" not in str(item["secret"])


def test_computed_fields_not_stored_but_usable_in_keys():
    table = codec_table()

    class Person(Entity, table=table):
        first: str
        last: str

        @computed_field  # type: ignore[prop-decorator]
        @property
        def handle(self) -> str:
            return f"{self.first}.{self.last}".lower()

        class Keys:
            pk = "PERSON#{handle}"
            sk = "P"
            GSI1 = ("LAST#{last}", "H#{handle}")

    person = Person(first="Ada", last="Lovelace")
    item = person.to_item()
    assert item["PK"] == {"S": "PERSON#ada.lovelace"}
    assert item["GSI1SK"] == {"S": "H#ada.lovelace"}
    assert "handle" not in item
    assert Person.from_item(item) == person


T3 = codec_table()


class Open(Entity, table=T3):
    model_config = ConfigDict(extra="allow")
    id: str

    class Keys:
        pk = "O#{id}"
        sk = "O"


def test_extras_are_stored():
    item = Open(id="1", color="red", n=3, tags=["a"]).to_item()
    assert item["color"] == {"S": "red"}
    assert item["n"] == {"N": "3"}
    assert item["tags"] == {"L": [{"S": "a"}]}
    assert item["PK"] == {"S": "O#1"}


@pytest.mark.parametrize("name", ["PK", "SK", "GSI1PK", "GSI2SK", "_type", "expires_at"])
def test_extra_named_like_reserved_attribute_refused_at_write(name):
    entity = Open(id="1", **{name: "x"})  # construction itself is fine
    with pytest.raises(SingleTableError) as info:
        entity.to_item()
    assert repr(name) in str(info.value)


def test_extra_unstorable_value_refused_naming_it():
    with pytest.raises(ItemEncodeError, match="weird"):
        Open(id="1", weird=object()).to_item()


def test_extras_round_trip():
    entity = Open(id="1", color="red", n=3)
    back = Open.from_item(entity.to_item())
    assert back.model_extra == {"color": "red", "n": 3}
    assert back == entity


# -- TTL ---------------------------------------------------------------------------------------

T4 = codec_table()


class Session(Entity, table=T4):
    id: str
    expires_at: datetime | None = None

    class Keys:
        pk = "S#{id}"
        sk = "S"


def test_ttl_stored_as_epoch_seconds_and_read_back_aware_truncated():
    moment = datetime(2026, 1, 1, 0, 0, 0, 750000, tzinfo=UTC)
    item = Session(id="1", expires_at=moment).to_item()
    assert item["expires_at"] == {"N": "1767225600"}
    back = Session.from_item(item)
    assert back.expires_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert back.expires_at.utcoffset() == timedelta(0)


def test_ttl_other_timezone_is_the_same_instant():
    local = datetime(2026, 1, 1, 2, 0, tzinfo=PLUS2)
    assert Session(id="1", expires_at=local).to_item()["expires_at"] == {"N": "1767225600"}


def test_ttl_none_is_omitted():
    item = Session(id="1").to_item()
    assert "expires_at" not in item
    assert Session.from_item(item).expires_at is None


def test_ttl_naive_datetime_refused():
    with pytest.raises(ItemEncodeError, match=r"Session\.expires_at"):
        Session(id="1", expires_at=datetime(2026, 1, 1)).to_item()


def test_ttl_field_with_alias():
    table = codec_table()

    class Aliased(Entity, table=table):
        id: str
        expiry: datetime | None = Field(None, alias="expires_at")

        class Keys:
            pk = "A#{id}"
            sk = "A"

    item = Aliased(id="1", expires_at=datetime(2026, 1, 1, tzinfo=UTC)).to_item()
    assert item["expires_at"] == {"N": "1767225600"}
    assert Aliased.from_item(item).expiry == datetime(2026, 1, 1, tzinfo=UTC)


# -- keys, type tag, sparse indexes ------------------------------------------------------------

T5 = codec_table()


class Order(Entity, table=T5, type="ORDER"):
    customer_id: str
    order_id: str
    created_at: datetime
    status: Status
    email: str | None = None
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"
        GSI1 = ("EMAIL#{email}", "ORDER#{created_at}#{order_id}")
        GSI2 = Index("PENDING", "{created_at}#{order_id}", when={"status": Status.PENDING})


def order(**changes: Any) -> Order:
    values: dict[str, Any] = {
        "customer_id": "42",
        "order_id": "A1",
        "created_at": datetime(2026, 6, 1, 12, 0, tzinfo=PLUS2),
        "status": Status.PENDING,
        "email": "a@example.com",
    }
    values.update(changes)
    return Order(**values)


def test_item_carries_type_tag_and_every_key_attribute():
    item = order().to_item()
    assert item["_type"] == {"S": "ORDER"}
    assert item["PK"] == {"S": "CUSTOMER#42"}
    assert item["SK"] == {"S": "ORDER#2026-06-01T10:00:00.000000Z#A1"}
    assert item["GSI1PK"] == {"S": "EMAIL#a@example.com"}
    assert item["GSI1SK"] == {"S": "ORDER#2026-06-01T10:00:00.000000Z#A1"}
    assert item["GSI2PK"] == {"S": "PENDING"}
    assert item["GSI2SK"] == {"S": "2026-06-01T10:00:00.000000Z#A1"}
    assert item["status"] == {"S": "PENDING"}
    assert item["version"] == {"N": "0"}
    assert Order.from_item(item) == order()


def test_sparse_index_attributes_absent_when_condition_false():
    item = order(status=Status.SHIPPED).to_item()
    assert "GSI2PK" not in item
    assert "GSI2SK" not in item
    assert "GSI1PK" in item


def test_index_attributes_absent_when_a_template_field_is_none():
    item = order(email=None).to_item()
    assert "GSI1PK" not in item
    assert "GSI1SK" not in item
    assert "GSI2PK" in item
    assert Order.from_item(item) == order(email=None)


def test_callable_sparse_condition():
    table = codec_table()

    class Task(Entity, table=table):
        id: str
        priority: int

        class Keys:
            pk = "T#{id}"
            sk = "T"
            GSI1 = Index("URGENT", "T#{id}", when=lambda e: e.priority > 5)

    assert "GSI1PK" in Task(id="1", priority=9).to_item()
    assert "GSI1PK" not in Task(id="1", priority=1).to_item()
    assert "GSI1SK" not in Task(id="1", priority=1).to_item()


def test_sparse_condition_with_several_allowed_values():
    table = codec_table()

    class Job(Entity, table=table):
        id: str
        state: Literal["new", "running", "done"]

        class Keys:
            pk = "J#{id}"
            sk = "J"
            GSI1 = Index("ACTIVE", "J#{id}", when={"state": ("new", "running")})

    assert "GSI1PK" in Job(id="1", state="new").to_item()
    assert "GSI1PK" in Job(id="1", state="running").to_item()
    assert "GSI1PK" not in Job(id="1", state="done").to_item()


def test_key_value_refusals_at_write_time():
    from singletable.errors import KeyTemplateError

    with pytest.raises(KeyTemplateError, match="order_id"):
        order(order_id="A1#ITEM#x").to_item()
    with pytest.raises(KeyTemplateError, match="order_id"):
        order(order_id="").to_item()
    with pytest.raises(KeyTemplateError, match="email"):
        order(email="a#b").to_item()


def test_escape_mode_table_percent_encodes_key_values():
    table = codec_table(key_values="escape")

    class Doc(Entity, table=table):
        path: str

        class Keys:
            pk = "DOC#{path}"
            sk = "D"

    item = Doc(path="a#b%c").to_item()
    assert item["PK"] == {"S": "DOC#a%23b%25c"}
    assert item["path"] == {"S": "a#b%c"}
    assert Doc.from_item(item).path == "a#b%c"


def test_key_method_renders_wire_key():
    assert Order.key(
        customer_id="42", order_id="A1", created_at=datetime(2026, 6, 1, 10, tzinfo=UTC)
    ) == {"PK": {"S": "CUSTOMER#42"}, "SK": {"S": "ORDER#2026-06-01T10:00:00.000000Z#A1"}}


# -- decode errors -----------------------------------------------------------------------------


def test_stale_item_raises_item_decode_error_with_key_and_raw():
    item = order().to_item()
    item["status"] = {"S": "LOST"}
    with pytest.raises(ItemDecodeError) as info:
        Order.from_item(item)
    err = info.value
    assert "CUSTOMER#42" in str(err.key)
    assert err.raw == item
    assert "status" in str(err)
    assert "Order" in str(err)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda item: item.pop("order_id"),
        lambda item: item.__setitem__("version", {"S": "not a number"}),
        lambda item: item.__setitem__("version", {"N": "1.5"}),
        lambda item: item.__setitem__("created_at", {"S": "yesterday"}),
        lambda item: item.__setitem__("customer_id", {"L": []}),
    ],
)
def test_items_that_no_longer_validate(mutate):
    item = order().to_item()
    mutate(item)
    with pytest.raises(ItemDecodeError) as info:
        Order.from_item(item)
    assert info.value.raw == item
    assert info.value.key is not None


def test_item_with_another_type_tag_refused():
    item = order().to_item()
    item["_type"] = {"S": "CUSTOMER"}
    with pytest.raises(ItemDecodeError) as info:
        Order.from_item(item)
    assert "CUSTOMER" in str(info.value)
    assert info.value.raw == item


def test_constraint_violation_in_stored_item():
    table = codec_table()

    class Product(Entity, table=table):
        id: str
        stock: int = Field(ge=0)

        class Keys:
            pk = "P#{id}"
            sk = "P"

    item = Product(id="1", stock=3).to_item()
    item["stock"] = {"N": "-1"}
    with pytest.raises(ItemDecodeError, match="stock"):
        Product.from_item(item)


# -- stored numbers outside DynamoDB's limits ---------------------------------------------------

T9 = codec_table()


class Inner(BaseModel):
    x: int
    y: float = 0.0


class Numbers(Entity, table=T9):
    id: str
    i: int = 0
    d: Decimal = Decimal(0)
    f: float = 0.0
    level: Level = Level.LOW
    inner: Inner | None = None
    ints: set[int] = set()
    decs: list[Decimal] = []
    counts: dict[str, int] = {}
    anything: Any = None
    expires_at: datetime | None = None

    class Keys:
        pk = "N#{id}"
        sk = "N"


# Text DynamoDB cannot hold (lax backends such as moto store some of it, other writers can put
# anything); int(Decimal("1E999999999")) alone would not return for hours.
OUT_OF_RANGE = [
    "1E999999999",
    "-1E999999999",
    "1E+999999999999999999",
    "1E-999999999",
    "1E126",
    "-1E126",
    "1E-131",
    "1E200",
    "1" * 39,
    "-" + "1" * 39,
    "1" * 5000,
    "NaN",
    "Infinity",
    "-Infinity",
]
# (attribute, stored value holding the number n, the field path the error names)
NUMBER_PLACES = [
    ("i", lambda n: {"N": n}, "i"),
    ("d", lambda n: {"N": n}, "d"),
    ("f", lambda n: {"N": n}, "f"),
    ("level", lambda n: {"N": n}, "level"),
    ("inner", lambda n: {"M": {"x": {"N": n}}}, "inner.x"),
    ("inner", lambda n: {"M": {"x": {"N": "1"}, "y": {"N": n}}}, "inner.y"),
    ("ints", lambda n: {"NS": ["1", n]}, "ints"),
    ("decs", lambda n: {"L": [{"N": "1"}, {"N": n}]}, "decs"),
    ("counts", lambda n: {"M": {"a": {"N": n}}}, "counts"),
    ("anything", lambda n: {"N": n}, "anything"),
    ("anything", lambda n: {"L": [{"M": {"k": {"N": n}}}]}, "anything"),
    ("anything", lambda n: {"NS": ["2", n]}, "anything"),
    ("expires_at", lambda n: {"N": n}, "expires_at"),
]


_REASONS = ("(DynamoDB keeps 38)", "(1E-130 to below 1E126)", "(DynamoDB numbers are)")


@pytest.mark.parametrize("number", OUT_OF_RANGE)
@pytest.mark.parametrize(("attr", "wire", "path"), NUMBER_PLACES)
def test_stored_number_outside_dynamodb_limits_is_refused_naming_the_field(
    attr, wire, path, number
):
    item = Numbers(id="1").to_item()
    item[attr] = wire(number)
    with pytest.raises(ItemDecodeError) as info:
        Numbers.from_item(item)
    err = info.value
    assert "N#1" in str(err.key)
    assert err.raw == item
    assert f"Numbers: {path}: a stored number" in err.message
    assert err.message.endswith(_REASONS)  # a fixed reason, never the stored text


@pytest.mark.parametrize("number", OUT_OF_RANGE)
def test_stored_number_outside_limits_in_an_extra_is_refused_naming_it(number):
    item = Open(id="1").to_item()
    item["weird"] = {"N": number}
    with pytest.raises(ItemDecodeError, match=r"Open: weird: a stored number"):
        Open.from_item(item)


@pytest.mark.parametrize(
    ("number", "as_int"),
    [
        ("1E125", 10**125),
        ("-9.9999999999999999999999999999999999999E+125", -(10**126) + 10**88),
        ("1" + "0" * 125, 10**125),  # how dynalite and DynamoDB write 1E125
        ("1" * 38, int("1" * 38)),
        ("-" + "1" * 38, -int("1" * 38)),
        ("9" * 38 + "0" * 50, int("9" * 38) * 10**50),
        ("0E-500", 0),
        ("-0", 0),
    ],
)
def test_stored_numbers_at_dynamodb_limits_decode(number, as_int):
    item = Numbers(id="1").to_item()
    for attr in ("i", "d", "f", "anything"):
        item[attr] = {"N": number}
    item["ints"] = {"NS": [number]}
    back = Numbers.from_item(item)
    assert back.i == as_int and back.ints == {as_int}
    assert back.d == Decimal(number) and back.anything == Decimal(number)
    assert back.f == float(number)


@pytest.mark.parametrize("number", ["1E-130", "-1E-130", "0." + "0" * 129 + "1", "1.5E-100"])
def test_smallest_stored_numbers_decode(number):
    item = Numbers(id="1").to_item()
    item["d"] = item["f"] = item["anything"] = {"N": number}
    back = Numbers.from_item(item)
    assert back.d == back.anything == Decimal(number)
    assert back.f == float(number)


# -- text that is not Unicode, and key byte limits ------------------------------------------------

BAD = "bad \ud800"  # a lone surrogate: pydantic accepts it in a str, UTF-8 cannot encode it


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("s", BAD),
        ("ss", {"ok", BAD}),
        ("fs", frozenset({BAD})),
        ("m", {BAD: 1}),
        ("anymap", {"k": [BAD]}),
        ("anymap", {BAD: 1}),
        ("addr", Address(street=BAD)),
        ("addr", Address(street="ok", tags=["x", BAD])),
        ("addrs", [Address(street="ok"), Address(street="x", zip=BAD)]),
        ("maybe_addr", Address(street=BAD)),
        ("tup", (1, BAD)),
        ("secret", SecretStr(BAD)),
        ("anything", BAD),
        ("anything", {"deep": {"deeper": {BAD}}}),
    ],
)
def test_lone_surrogate_refused_naming_the_field(field, value):
    with pytest.raises(ItemEncodeError) as info:
        everything(**{field: value}).to_item()
    err = info.value
    assert err.key == field
    assert str(err).startswith(f"Everything.{field}") and "lone surrogate" in str(err)
    assert "bad" not in str(err)  # no item contents


def test_lone_surrogate_in_a_nested_model_names_both_fields():
    with pytest.raises(
        ItemEncodeError, match=r"Everything\.addr: Address\.street cannot be stored"
    ):
        everything(addr=Address(street=BAD)).to_item()


def test_lone_surrogate_in_an_extra_value_or_name_refused():
    with pytest.raises(ItemEncodeError) as info:
        Open(id="1", color=BAD).to_item()
    assert info.value.key == "color"
    entity = Open.model_construct(id="1")
    entity.__pydantic_extra__ = {"na\udc80me": "x"}  # pydantic refuses such names; forced here
    with pytest.raises(ItemEncodeError) as info:
        entity.to_item()
    assert "lone surrogate" in str(info.value)
    str(info.value).encode()  # the name is shown escaped


def test_lone_surrogate_in_a_key_field_is_a_key_template_error():
    with pytest.raises(KeyTemplateError) as info:
        everything(id=BAD).to_item()
    assert info.value.key == "id" and "lone surrogate" in str(info.value)


def test_lone_surrogate_in_a_single_field_value_refused():
    spec = Everything.__singletable__
    with pytest.raises(ItemEncodeError) as info:
        spec.encode_field("s", BAD)
    assert info.value.key == "s"
    with pytest.raises(ItemEncodeError):
        spec.encode_for_condition("not_a_field", BAD)


def test_valid_non_ascii_text_round_trips():
    text = "héllo 😀 日本 \U0010fffd"
    entity = everything(id=text, s=text, ss={text}, m={text: 1}, addr=Address(street=text))
    assert Everything.from_item(entity.to_item()) == entity


def key_size_error(entity):
    with pytest.raises(KeyTemplateError) as info:
        entity.to_item()
    return info.value


@pytest.mark.parametrize(
    ("changes", "attribute", "limit"),
    [
        ({"order_id": "😀" * 300}, "SK", 1024),  # also GSI1SK and GSI2SK: the table's is named
        ({"customer_id": "x" * 2040}, "PK", 2048),
        ({"email": "é" * 1022}, "GSI1PK", 2048),  # an index written only when email is set
        ({"customer_id": "é" * 1100, "status": Status.SHIPPED}, "PK", 2048),
    ],
)
def test_overlong_keys_refused_naming_the_attribute(changes, attribute, limit):
    err = key_size_error(order(**changes))
    assert err.key == attribute
    assert f"Order: key attribute {attribute!r}" in str(err) and f"{limit:,} bytes" in str(err)
    assert "😀" not in str(err) and "éé" not in str(err)


def test_keys_at_the_limits_are_accepted():
    sk_room = 1024 - len("ORDER#2026-06-01T10:00:00.000000Z#")
    pk_room = 2048 - len("CUSTOMER#")
    item = order(
        customer_id="😀" * (pk_room // 4) + "x" * (pk_room % 4),
        order_id="é" * (sk_room // 2) + "x" * (sk_room % 2),
        email="é" * 1021,  # "EMAIL#" + 2,042 bytes
    ).to_item()
    for attribute, limit in (("PK", 2048), ("SK", 1024), ("GSI1PK", 2048), ("GSI1SK", 1024)):
        assert len(item[attribute]["S"].encode()) == limit, attribute
    key_size_error(order(order_id="é" * (sk_room // 2) + "x" * (sk_room % 2 + 1)))


def test_many_medium_keys_are_measured_exactly_and_accepted():
    # Together over the cheap threshold, each within its limit.
    item = order(customer_id="c" * 1500, order_id="o" * 900, email="e" * 2000).to_item()
    assert len(item["GSI1PK"]["S"]) == 2006


key_text = st.text(st.characters(exclude_categories=()), max_size=12) | st.text(
    st.sampled_from("aé😀\ud800#"), min_size=200, max_size=700
)


@settings(max_examples=200, deadline=2000, database=None)
@given(customer_id=key_text, order_id=key_text, email=key_text, note=key_text)
def test_to_item_returns_only_items_dynamodb_takes(customer_id, order_id, email, note):
    """Whatever text the fields hold, ``to_item`` returns an item whose strings are all text
    and whose keys are within their limits, or refuses naming the culprit."""
    try:
        item = order(customer_id=customer_id, order_id=order_id, email=email).to_item()
    except KeyTemplateError as exc:
        assert exc.key in ("customer_id", "order_id", "email", "PK", "SK", "GSI1PK", "GSI1SK")
    else:
        limits = {"PK": 2048, "SK": 1024, "GSI1PK": 2048, "GSI1SK": 1024, "GSI2SK": 1024}
        for attribute, av in item.items():
            if "S" in av:
                assert len(av["S"].encode()) <= limits.get(attribute, MAX_ITEM_BYTES)
    try:
        item = Open(id="1", note=note).to_item()
    except ItemEncodeError as exc:
        assert exc.key == "note"
        with pytest.raises(UnicodeEncodeError):
            note.encode()
    else:
        assert item["note"]["S"].encode().decode() == note


# -- hypothesis round trip ---------------------------------------------------------------------

T6 = codec_table()


class Mixed(Entity, table=T6):
    id: str
    s: str
    i: int
    f: float
    d: Decimal
    b: bool
    opt: int | None = None
    dt: datetime
    naive: datetime
    day: date
    t: time
    u: uuid.UUID
    color: Color
    prio: Prio
    lit: Literal["x", "y"]
    raw: bytes
    nums: list[int]
    ss: set[str] = set()
    ns: set[int] = set()
    ds: set[Decimal] = set()
    bs: set[bytes] = set()
    m: dict[str, Decimal]
    addrs: list[Address]
    secret: SecretStr
    expires_at: datetime | None = None

    class Keys:
        pk = "M#{id}"
        sk = "M#{dt}#{u}"
        GSI1 = ("COLOR#{color}", "{day}#{id}")


def _decimal(mantissa: int, exponent: int) -> Decimal:
    return Decimal(f"{mantissa}E{exponent}")


storable_decimals = st.builds(
    _decimal, st.integers(-(10**38) + 1, 10**38 - 1), st.integers(-167, 125)
).filter(lambda d: d == 0 or -130 <= d.adjusted() <= 125)
storable_ints = st.integers(-(10**38) + 1, 10**38 - 1)
storable_floats = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-129, max_value=1e125),
    st.floats(min_value=-1e125, max_value=-1e-129),
)
offsets = st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-1439, 1439))
aware = st.datetimes(
    min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 30), timezones=offsets
)
key_text = st.text(
    st.characters(codec="utf-8", exclude_characters="#\U0010ffff"), min_size=1, max_size=10
)
texts = st.text(st.characters(codec="utf-8"), max_size=20)
addresses = st.builds(
    Address, street=texts, zip=st.none() | texts, tags=st.lists(texts, max_size=3)
)

mixed_values = st.fixed_dictionaries(
    {
        "id": key_text,
        "s": texts,
        "i": storable_ints,
        "f": storable_floats,
        "d": storable_decimals,
        "b": st.booleans(),
        "opt": st.none() | storable_ints,
        "dt": aware,
        "naive": st.datetimes(),
        "day": st.dates(),
        "t": st.times(),
        "u": st.uuids(),
        "color": st.sampled_from(Color),
        "prio": st.sampled_from(Prio),
        "lit": st.sampled_from(["x", "y"]),
        "raw": st.binary(max_size=20),
        "nums": st.lists(storable_ints, max_size=5),
        "ss": st.sets(texts, max_size=4),
        "ns": st.sets(storable_ints, max_size=4),
        "ds": st.sets(storable_decimals, max_size=4),
        "bs": st.sets(st.binary(max_size=5), max_size=4),
        "m": st.dictionaries(texts, storable_decimals, max_size=4),
        "addrs": st.lists(addresses, max_size=3),
        "secret": texts.map(SecretStr),
        "expires_at": st.none()
        | st.datetimes(
            min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=offsets
        ),
    }
)


@settings(max_examples=150, deadline=2000, database=None, suppress_health_check=list(HealthCheck))
@given(mixed_values)
def test_random_entities_round_trip(values):
    entity = Mixed(**values)
    item = entity.to_item()
    back = Mixed.from_item(item)
    expected = entity
    if entity.expires_at is not None:
        truncated = datetime.fromtimestamp(int(entity.expires_at.timestamp()), UTC)
        expected = entity.model_copy(update={"expires_at": truncated})
        assert item["expires_at"] == {"N": str(int(entity.expires_at.timestamp()))}
    assert back == expected
    assert item["_type"] == {"S": "Mixed"}
    assert {"PK", "SK", "GSI1PK", "GSI1SK"} <= set(item)
    for name in ("ss", "ns", "ds", "bs"):
        assert (name in item) == bool(values[name])
    assert ("opt" in item) == (values["opt"] is not None)
    assert item_size(item) <= MAX_ITEM_BYTES


# -- item size ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "size"),
    [
        ({"a": {"S": "abc"}}, 1 + 3),
        ({"é": {"S": "€"}}, 2 + 3),  # UTF-8 bytes, not characters
        ({"emoji": {"S": "😀"}}, 5 + 4),
        ({"n": {"N": "123.45"}}, 1 + (5 + 1) // 2 + 1),
        ({"n": {"N": "1"}}, 1 + 2),
        ({"n": {"N": "-0.00100"}}, 1 + 2),  # leading/trailing zeros trimmed
        ({"n": {"N": "1005"}}, 1 + (4 + 1) // 2 + 1),
        ({"n": {"N": "12345678901234567890123456789012345678"}}, 1 + 20),
        ({"b": {"B": b"\x00\x01\x02"}}, 1 + 3),
        ({"t": {"BOOL": True}}, 1 + 1),
        ({"z": {"NULL": True}}, 1 + 1),
        ({"l": {"L": [{"S": "ab"}, {"N": "1"}]}}, 1 + 3 + (2 + 1) + (2 + 1)),
        ({"l": {"L": []}}, 1 + 3),
        ({"m": {"M": {"k": {"BOOL": True}}}}, 1 + 3 + (1 + 1 + 1)),
        ({"m": {"M": {"kk": {"M": {"x": {"S": "yz"}}}}}}, 1 + 3 + (2 + (3 + 1 + 2 + 1) + 1)),
        ({"ss": {"SS": ["a", "bc"]}}, 2 + 3),
        ({"ns": {"NS": ["1", "22"]}}, 2 + 2 + 2),
        ({"bs": {"BS": [b"a", b"bcd"]}}, 2 + 4),
        ({"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}}, 2 + 6 + 2 + 7),
    ],
)
def test_item_size_formula(item, size):
    assert item_size(item) == size


def test_value_size_examples():
    assert value_size({"S": ""}) == 0
    assert value_size({"B": b""}) == 0
    assert value_size({"N": "-99"}) == (2 + 1) // 2 + 1
    assert value_size({"L": [{"L": []}]}) == 3 + (3 + 1)
    assert value_size({"M": {}}) == 3


T7 = codec_table()


class Small(Entity, table=T7):
    id: str
    n: int
    tags: list[str]

    class Keys:
        pk = "S#{id}"
        sk = "S"


def test_entity_item_size_includes_keys_and_type_tag():
    item = Small(id="ab", n=123, tags=["x"]).to_item()
    expected = (
        (5 + 5)  # _type: Small
        + (2 + 4)  # PK: S#ab
        + (2 + 1)  # SK: S
        + (2 + 2)  # id: ab
        + (1 + 3)  # n: 123 -> 3 digits -> 2 + 1
        + (4 + 3 + (1 + 1))  # tags: L of one "x"
    )
    assert item_size(item) == expected


T8 = codec_table()


class Big(Entity, table=T8):
    id: str
    blob: str = ""
    data: bytes = b""

    class Keys:
        pk = "BIG#{id}"
        sk = "BIG"


def _base_size() -> int:
    return item_size(Big(id="k1").to_item())


def test_item_just_at_the_limit_is_accepted():
    base = _base_size()
    entity = Big(id="k1", blob="x" * (MAX_ITEM_BYTES - base))
    assert item_size(entity.to_item()) == MAX_ITEM_BYTES


def test_item_over_the_limit_is_refused_with_the_key():
    base = _base_size()
    entity = Big(id="k1", blob="x" * (MAX_ITEM_BYTES - base + 1))
    with pytest.raises(ItemTooLargeError) as info:
        entity.to_item()
    assert "BIG#k1" in str(info.value)
    assert "BIG#k1" in str(info.value.key)
    assert info.value.size == MAX_ITEM_BYTES + 1


def test_item_size_counts_utf8_bytes_of_multibyte_text():
    base = _base_size()
    room = MAX_ITEM_BYTES - base
    fits = Big(id="k1", blob="€" * (room // 3))  # 3 bytes each
    assert item_size(fits.to_item()) <= MAX_ITEM_BYTES
    too_big = Big(id="k1", blob="€" * (room // 3 + 1))
    with pytest.raises(ItemTooLargeError, match="BIG#k1"):
        too_big.to_item()


def test_item_size_limit_with_binary_and_many_attributes():
    base = _base_size()
    entity = Big(id="k1", data=b"\x00" * (MAX_ITEM_BYTES - base))
    assert item_size(entity.to_item()) == MAX_ITEM_BYTES
    with pytest.raises(ItemTooLargeError):
        Big(id="k1", data=b"\x00" * (MAX_ITEM_BYTES - base + 1)).to_item()


def test_large_item_counted_exactly_not_by_upper_bound():
    # 4 bytes per character is the cheap bound; ASCII text far above limit/4 must still fit.
    base = _base_size()
    entity = Big(id="k1", blob="a" * (MAX_ITEM_BYTES - base - 10))
    entity.to_item()


def test_extras_count_toward_the_item_size():
    table = codec_table()

    class Loose(Entity, table=table):
        model_config = ConfigDict(extra="allow")
        id: str

        class Keys:
            pk = "L#{id}"
            sk = "L"

    base = item_size(Loose(id="1").to_item())
    name = "extra"
    fits = Loose(id="1", **{name: "x" * (MAX_ITEM_BYTES - base - len(name))})
    assert item_size(fits.to_item()) == MAX_ITEM_BYTES
    with pytest.raises(ItemTooLargeError):
        Loose(id="1", **{name: "x" * (MAX_ITEM_BYTES - base - len(name) + 1)}).to_item()
