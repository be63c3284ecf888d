"""Key templates (pure): rendering, parsing, refusals, definition-time checks, prefixes and
sort-key conditions. Property-based checks live in ``test_keys_properties.py``."""

import enum
import uuid
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Literal, Optional

import pytest

from singletable._key_formats import canonical_decimal, parse_sortable, render_sortable
from singletable._keys import CALL_KEYWORDS, SENTINEL, KeyTemplate, SortCondition
from singletable.errors import (
    KeyDefinitionError,
    KeyTemplateError,
    ModelDefinitionError,
    SingleTableError,
)

UTC = timezone.utc
PLUS2 = timezone(timedelta(hours=2))
MINUS5 = timezone(timedelta(hours=-5, minutes=-30))


class Status(str, enum.Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"


class Level(enum.Enum):
    LOW = 1
    HIGH = 10


def tpl(text, *, sort_key=False, escape=False, owner="", **types):
    return KeyTemplate(text, types, sort_key=sort_key, escape=escape, owner=owner)


def key_error(fn, *args, **kwargs):
    """Run ``fn`` expecting a call-time KeyTemplateError (not a definition error)."""
    with pytest.raises(KeyTemplateError) as info:
        fn(*args, **kwargs)
    assert not isinstance(info.value, ModelDefinitionError), info.value
    return str(info.value)


def definition_error(text, *, sort_key=False, escape=False, owner="", **types):
    with pytest.raises(KeyDefinitionError) as info:
        tpl(text, sort_key=sort_key, escape=escape, owner=owner, **types)
    err = info.value
    assert isinstance(err, ModelDefinitionError)
    assert isinstance(err, KeyTemplateError)
    assert isinstance(err, SingleTableError)
    return str(err)


# -- render / parse round trips ----------------------------------------------------------------

DT = datetime(2026, 6, 1, 10, 0, 0, 123456, tzinfo=UTC)
UID = uuid.UUID("12345678-1234-5678-1234-567812345678")

ROUND_TRIPS = [
    # (template, types, sort_key, values, rendered)
    ("USER#{id}", {"id": str}, False, {"id": "42"}, "USER#42"),
    ("USER#u{id}", {"id": str}, False, {"id": "42"}, "USER#u42"),
    ("USER#u{id}", {"id": str}, True, {"id": "x y-z.é😀"}, "USER#ux y-z.é😀"),
    ("N#{n}", {"n": int}, False, {"n": 7}, "N#7"),
    ("N#{n}", {"n": int}, False, {"n": -7}, "N#-7"),
    ("N#{n}", {"n": int}, False, {"n": 0}, "N#0"),
    ("N#{n}", {"n": int}, False, {"n": 10**37 + 3}, f"N#{10**37 + 3}"),
    ("S#{n:sortable}", {"n": int}, True, {"n": 0}, "S#1"),
    ("S#{n:sortable}", {"n": int}, True, {"n": 1}, "S#25001."),
    ("S#{n:sortable}", {"n": int}, True, {"n": -1}, "S#04998~"),
    ("S#{n:sortable}", {"n": int}, True, {"n": 1000}, "S#25031."),
    ("RATING#{rating:05d}", {"rating": int}, True, {"rating": 42}, "RATING#00042"),
    ("RATING#{rating:05d}", {"rating": int}, True, {"rating": 0}, "RATING#00000"),
    ("RATING#{rating:05d}", {"rating": int}, True, {"rating": 99999}, "RATING#99999"),
    ("P#{d}", {"d": Decimal}, False, {"d": Decimal("1.5")}, "P#1.5"),
    ("P#{d}", {"d": Decimal}, False, {"d": Decimal("-0.001")}, "P#-0.001"),
    ("P#{d}", {"d": Decimal}, False, {"d": Decimal("1E+3")}, "P#1000"),
    ("S#{d:sortable}", {"d": Decimal}, True, {"d": Decimal("-2.5")}, None),
    ("S#{d:sortable}", {"d": Decimal}, True, {"d": Decimal("0.000123")}, None),
    ("S#{d:sortable}", {"d": Decimal}, True, {"d": Decimal("1E-130")}, None),
    ("S#{d:sortable}", {"d": Decimal}, True, {"d": Decimal("-9.99E125")}, None),
    ("DAY#{d}", {"d": date}, True, {"d": date(2026, 6, 1)}, "DAY#2026-06-01"),
    ("DAY#{d}", {"d": date}, True, {"d": date(5, 1, 2)}, "DAY#0005-01-02"),
    ("T#{t}", {"t": datetime}, True, {"t": DT}, "T#2026-06-01T10:00:00.123456Z"),
    ("T#{t}", {"t": datetime}, True, {"t": datetime(2026, 6, 1, tzinfo=UTC)}, None),
    ("U#{u}", {"u": uuid.UUID}, True, {"u": UID}, f"U#{UID}"),
    ("STATUS#{s}", {"s": Status}, False, {"s": Status.SHIPPED}, "STATUS#SHIPPED"),
    ("STATUS#{s}", {"s": Status}, True, {"s": Status.PENDING}, "STATUS#PENDING"),
    ("LEVEL#{lv}", {"lv": Level}, False, {"lv": Level.HIGH}, "LEVEL#10"),
    ("LEVEL#{lv:sortable}", {"lv": Level}, True, {"lv": Level.HIGH}, "LEVEL#25011."),
    ("KIND#{k}", {"k": Literal["a", "b"]}, True, {"k": "b"}, "KIND#b"),
    (
        "ORDER#{created_at}#{order_id}",
        {"created_at": datetime, "order_id": str},
        True,
        {"created_at": DT, "order_id": "A1"},
        "ORDER#2026-06-01T10:00:00.123456Z#A1",
    ),
    (
        "MERCHANT#{m}#STATUS#PENDING",
        {"m": str},
        True,
        {"m": "m-1"},
        "MERCHANT#m-1#STATUS#PENDING",
    ),
    (
        "{created_at:%Y-%m-%d}",
        {"created_at": datetime},
        True,
        {"created_at": datetime(2026, 6, 1, tzinfo=UTC)},
        "2026-06-01",
    ),
    (
        "DAY#{created_at:%Y-%m-%d}#{id}",
        {"created_at": datetime, "id": str},
        True,
        {"created_at": datetime(2026, 6, 1, tzinfo=UTC), "id": "x"},
        "DAY#2026-06-01#x",
    ),
    (
        "A#{a}#B#{b:sortable}#C#{c}",
        {"a": str, "b": int, "c": uuid.UUID},
        True,
        {"a": "x", "b": -3, "c": UID},
        None,
    ),
    ("PROFILE", {}, True, {}, "PROFILE"),
    ("A#B#C", {}, True, {}, "A#B#C"),
    ("{id}", {"id": str}, False, {"id": "only"}, "only"),
]


@pytest.mark.parametrize(("text", "types", "sort_key", "values", "rendered"), ROUND_TRIPS)
def test_render_parse_round_trip(text, types, sort_key, values, rendered):
    template = KeyTemplate(text, types, sort_key=sort_key)
    key = template.render(values)
    if rendered is not None:
        assert key == rendered
    parsed = template.parse(key)
    assert parsed == values
    for name, value in values.items():
        assert type(parsed[name]) is type(value), name
    assert template.render(parsed) == key


def test_int_parse_gives_int_and_decimal_parse_gives_decimal():
    ints = tpl("S#{n:sortable}", sort_key=True, n=int)
    assert type(ints.parse(ints.render({"n": 12345}))["n"]) is int
    assert type(ints.parse("S#1")["n"]) is int
    decs = tpl("S#{d:sortable}", sort_key=True, d=Decimal)
    assert decs.parse(decs.render({"d": Decimal("12.50")}))["d"] == Decimal("12.5")
    assert type(decs.parse("S#1")["d"]) is Decimal


def test_datetime_rendering_is_canonical_utc():
    template = tpl("T#{t}", sort_key=True, t=datetime)
    local = datetime(2026, 6, 1, 12, 30, 0, tzinfo=PLUS2)
    key = template.render({"t": local})
    assert key == "T#2026-06-01T10:30:00.000000Z"
    value = key[2:]
    assert len(value) == 27
    assert datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ") == datetime(2026, 6, 1, 10, 30)
    # Same instant in another zone renders alike; parse gives back an aware UTC datetime.
    assert template.render({"t": local.astimezone(MINUS5)}) == key
    assert template.render({"t": local.astimezone(UTC)}) == key
    parsed = template.parse(key)["t"]
    assert parsed == local
    assert parsed.utcoffset() == timedelta(0)


def test_datetime_crossing_midnight_and_year_when_converted():
    template = tpl("T#{t}", sort_key=True, t=datetime)
    late = datetime(2025, 12, 31, 22, 0, tzinfo=MINUS5)
    assert template.render({"t": late}) == "T#2026-01-01T03:30:00.000000Z"
    early = datetime(2026, 1, 1, 1, 0, tzinfo=PLUS2)
    assert template.render({"t": early}) == "T#2025-12-31T23:00:00.000000Z"


def test_datetime_zoneinfo_timezone():
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        paris = zoneinfo.ZoneInfo("Europe/Paris")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no tz database")
    template = tpl("T#{t}", sort_key=True, t=datetime)
    assert (
        template.render({"t": datetime(2026, 7, 1, 12, 0, tzinfo=paris)})
        == "T#2026-07-01T10:00:00.000000Z"
    )


def test_custom_strftime_datetime_converts_to_utc():
    template = tpl("DAY#{t:%Y-%m-%d}", sort_key=True, t=datetime)
    # 2026-06-01 23:00 at -05:30 is 2026-06-02 in UTC.
    assert template.render({"t": datetime(2026, 6, 1, 23, 0, tzinfo=MINUS5)}) == "DAY#2026-06-02"


def test_custom_strftime_allowed_in_partition_key_even_if_unsortable():
    template = tpl("DAY#{d:%d/%m/%Y}", d=date)
    assert template.render({"d": date(2026, 6, 1)}) == "DAY#01/06/2026"


def test_canonical_decimal_rendering():
    template = tpl("P#{d}", d=Decimal)
    assert template.render({"d": Decimal("1.50")}) == template.render({"d": Decimal("1.5")})
    assert template.render({"d": Decimal("1.50")}) == "P#1.5"
    assert template.render({"d": Decimal("0.00")}) == "P#0"
    assert template.render({"d": Decimal("-0")}) == "P#0"
    assert template.render({"d": Decimal("100")}) == template.render({"d": Decimal("1E+2")})
    assert canonical_decimal(Decimal("2.500")) == "2.5"
    assert canonical_decimal(12) == "12"
    assert canonical_decimal(Decimal("1E-7")) == "0.0000001"
    assert "E" not in canonical_decimal(Decimal("1E+30"))


def test_sortable_round_trip_and_equal_values():
    for value in [0, 1, -1, 7, -7, 10, 100, -100, 10**37, -(10**37), 123456789]:
        assert parse_sortable(render_sortable(value)) == value
    for text in ["0", "1.5", "-1.5", "0.001", "-0.001", "1E+125", "-1E-130", "3.14159"]:
        value = Decimal(text)
        assert parse_sortable(render_sortable(value)) == value
    assert render_sortable(Decimal("1.50")) == render_sortable(Decimal("1.5"))
    assert render_sortable(Decimal("100")) == render_sortable(100)
    assert render_sortable(Decimal("-0")) == render_sortable(0) == "1"


@pytest.mark.parametrize("bad", ["", "2", "3500.", "25001", "0499x~", "2abc1.", "25001~", "04998."])
def test_parse_sortable_rejects_garbage(bad):
    with pytest.raises(ValueError):
        parse_sortable(bad)


@pytest.mark.parametrize(
    "value", [Decimal("NaN"), Decimal("Infinity"), Decimal("1E+126"), Decimal("1E-131")]
)
def test_render_sortable_refuses_unstorable_numbers(value):
    with pytest.raises(ValueError):
        render_sortable(value)


def test_sortable_round_trip_38_digit_numbers():
    big = 12345678901234567890123456789012345678
    assert parse_sortable(render_sortable(big)) == big
    template = tpl("S#{n:sortable}", sort_key=True, n=int)
    assert template.parse(template.render({"n": big})) == {"n": big}
    dec = Decimal("1.234567890123456789012345678901234567")
    assert parse_sortable(render_sortable(dec)) == dec


def test_bare_decimal_with_many_digits_is_injective_and_round_trips():
    template = tpl("P#{d}", d=Decimal)
    a = Decimal("1234567890123456789012345678901234567")
    b = Decimal("1234567890123456789012345678901234568")
    assert template.render({"d": a}) != template.render({"d": b})
    assert template.parse(template.render({"d": a})) == {"d": a}


def test_bare_int_with_38_digits_round_trips_in_partition_key():
    template = tpl("P#{n}", n=int)
    big = -(10**38 - 1)
    assert template.parse(template.render({"n": big})) == {"n": big}


def test_any_non_empty_value_without_delimiter_is_verbatim():
    template = tpl("USER#{id}#X", id=str)
    for value in ["a", " ", "%", "%23", "a b", "ünï", "😀", "{x}", "a$b", "\t"]:
        assert template.render({"id": value}) == f"USER#{value}#X"
        assert template.parse(f"USER#{value}#X") == {"id": value}


# -- parse refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "ORDER#2026-06-01T10:00:00.000000Z",  # too few segments
        "ORDER#2026-06-01T10:00:00.000000Z#A1#x",  # too many
        "ORDERS#2026-06-01T10:00:00.000000Z#A1",  # wrong literal
        "ORDER#2026-06-01#A1",  # not a canonical datetime
        "ORDER#2026-06-01T10:00:00.000000Z#",  # empty value
        "ORDER##A1",
        "PROFILE",
    ],
)
def test_parse_refuses_keys_that_do_not_match(key):
    template = tpl(
        "ORDER#{created_at}#{order_id}", sort_key=True, created_at=datetime, order_id=str
    )
    key_error(template.parse, key)


def test_parse_refuses_wrong_literal_around_value_and_tail():
    template = tpl("USER#u{id}#STATUS#PENDING", id=str)
    assert template.parse("USER#u1#STATUS#PENDING") == {"id": "1"}
    for key in ["USER#x1#STATUS#PENDING", "USER#u#STATUS#PENDING", "USER#u1#STATUS#DONE"]:
        key_error(template.parse, key)


def test_parse_refuses_bad_numbers_and_enums():
    key_error(tpl("S#{n:sortable}", sort_key=True, n=int).parse, "S#abc")
    key_error(tpl("R#{n:05d}", sort_key=True, n=int).parse, "R#abcde")
    key_error(tpl("STATUS#{s}", s=Status).parse, "STATUS#NOPE")
    key_error(tpl("U#{u}", u=uuid.UUID).parse, "U#not-a-uuid")
    key_error(tpl("D#{d}", d=date).parse, "D#2026-13-01")


# -- call-time refusals ------------------------------------------------------------------------


def test_delimiter_in_value_is_refused_naming_owner_and_field():
    template = tpl(
        "ORDER#{created_at}#{order_id}",
        sort_key=True,
        owner="Order",
        created_at=datetime,
        order_id=str,
    )
    message = key_error(template.render, {"created_at": DT, "order_id": "A1#ITEM#x"})
    assert "Order.order_id" in message
    assert "delimiter" in message


def test_refusal_names_field_without_owner():
    template = tpl("USER#{user_id}", user_id=str)
    message = key_error(template.render, {"user_id": "a#b"})
    assert "user_id" in message


def test_refusal_carries_the_field_as_key():
    template = tpl("USER#{user_id}", owner="User", user_id=str)
    with pytest.raises(KeyTemplateError) as info:
        template.render({"user_id": ""})
    assert info.value.key == "user_id"


@pytest.mark.parametrize(
    ("text", "types", "value", "why"),
    [
        ("U#{f}", {"f": str}, "", "empty"),
        ("U#{f}", {"f": str}, "a#b", "delimiter"),
        ("U#{f}", {"f": str}, "#", "delimiter"),
        ("U#{f}", {"f": str}, None, "None"),
        ("U#{f}", {"f": str}, "a" + SENTINEL, "reserved"),
        ("T#{f}", {"f": datetime}, datetime(2026, 6, 1), "naive"),
        ("T#{f}", {"f": datetime}, None, "None"),
        ("T#{f:%Y-%m-%d}", {"f": datetime}, datetime(2026, 6, 1), "naive"),
        ("R#{f:05d}", {"f": int}, -1, "negative"),
        ("R#{f:05d}", {"f": int}, 100000, "wider"),
        ("R#{f:05d}", {"f": int}, None, "None"),
        ("S#{f:sortable}", {"f": int}, None, "None"),
        ("S#{f:sortable}", {"f": Decimal}, Decimal("NaN"), ""),
        ("S#{f:sortable}", {"f": Decimal}, Decimal("1E+126"), "range"),
        ("D#{f}", {"f": date}, None, "None"),
        ("U#{f}", {"f": uuid.UUID}, None, "None"),
        ("STATUS#{f}", {"f": Status}, None, "None"),
    ],
)
def test_call_time_refusals(text, types, value, why):
    template = KeyTemplate(text, types, sort_key=True, owner="Thing")
    message = key_error(template.render, {"f": value})
    assert "Thing.f" in message
    assert why in message


def test_sort_key_refuses_naive_datetime_also_in_prefix_and_bounds():
    template = tpl("ORDER#{t}#{id}", sort_key=True, owner="Order", t=datetime, id=str)
    naive = datetime(2026, 1, 1)
    assert "Order.t" in key_error(template.prefix, {"t": naive})
    assert "Order.t" in key_error(template.sort_condition, {}, ("t", "gte", naive))
    assert "Order.t" in key_error(template.sort_condition, {}, ("t", "between", (DT, naive)))


def test_missing_field_is_refused_naming_it():
    template = tpl(
        "ORDER#{created_at}#{order_id}", sort_key=True, created_at=datetime, order_id=str
    )
    message = key_error(template.render, {"created_at": DT})
    assert "order_id" in message


def test_delimiter_value_in_prefix_is_refused():
    template = tpl("A#{a}#{b}", sort_key=True, owner="E", a=str, b=str)
    assert "E.a" in key_error(template.prefix, {"a": "x#y"})
    assert "E.a" in key_error(template.sort_condition, {"a": "x#y"})


# -- escape mode -------------------------------------------------------------------------------


def test_escape_mode_percent_encodes_and_parses_back():
    template = tpl("A#{a}#{b}", escape=True, a=str, b=str)
    values = {"a": "x#y%z", "b": "%23"}
    key = template.render(values)
    assert key == "A#x%23y%25z#%2523"
    assert template.parse(key) == values
    plain = {"a": "plain", "b": "text"}
    assert template.render(plain) == "A#plain#text"


def test_escape_mode_still_refuses_empty_and_none():
    template = tpl("A#{a}", escape=True, owner="E", a=str)
    assert "E.a" in key_error(template.render, {"a": ""})
    assert "E.a" in key_error(template.render, {"a": None})


def test_escape_mode_refuses_percent_in_literal_text():
    message = definition_error("A%B#{a}", escape=True, a=str)
    assert "%" in message
    # Without escaping, a literal % is fine.
    assert tpl("A%B#{a}", a=str).render({"a": "x"}) == "A%B#x"


def test_custom_delimiter():
    template = KeyTemplate("A|{a}|{b}", {"a": str, "b": str}, delimiter="|")
    assert template.render({"a": "x#y", "b": "z"}) == "A|x#y|z"
    assert template.parse("A|x#y|z") == {"a": "x#y", "b": "z"}
    with pytest.raises(KeyTemplateError):
        template.render({"a": "x|y", "b": "z"})
    escaped = KeyTemplate("A|{a}", {"a": str}, delimiter="|", escape=True)
    assert escaped.render({"a": "x|y"}) == "A|x%7Cy"
    assert escaped.parse("A|x%7Cy") == {"a": "x|y"}


# -- definition-time errors --------------------------------------------------------------------


def test_unknown_field_names_it_and_lists_known_fields():
    message = definition_error("ORDER#{ordr_id}", owner="Order", order_id=str, created_at=datetime)
    assert "ordr_id" in message
    assert "order_id" in message
    assert "created_at" in message
    assert "Order" in message


@pytest.mark.parametrize("number_type", [int, Decimal, Level, Literal[1, 2]])
def test_bare_number_in_sort_key(number_type):
    message = definition_error("RATING#{rating}", sort_key=True, owner="Review", rating=number_type)
    assert "rating" in message
    assert "sortable" in message
    # The same template is fine in a partition key.
    tpl("RATING#{rating}", rating=number_type)


@pytest.mark.parametrize("text", ["X#{f}", "X#{f:sortable}"])
@pytest.mark.parametrize("sort_key", [True, False])
def test_float_field_refused(text, sort_key):
    message = definition_error(text, sort_key=sort_key, owner="E", f=float)
    assert "f" in message
    assert "float" in message


@pytest.mark.parametrize("sort_key", [True, False])
def test_bool_field_refused(sort_key):
    message = definition_error("X#{flag}", sort_key=sort_key, owner="E", flag=bool)
    assert "flag" in message
    assert "bool" in message


@pytest.mark.parametrize("text", ["X#{a}{b}", "{a}{b}", "X#{a}-{b}", "X#{a}x", "X#{a}{b}#Y"])
def test_placeholders_must_be_separated_by_the_delimiter(text):
    message = definition_error(text, a=str, b=str)
    assert "{a}" in message


@pytest.mark.parametrize("keyword", sorted(CALL_KEYWORDS - {"self"}))
def test_field_named_like_call_keyword(keyword):
    message = definition_error("X#{" + keyword + "}", owner="E", **{keyword: str})
    assert repr(keyword) in message


@pytest.mark.parametrize(
    "keyword",
    ["limit", "cursor", "order", "consistent", "set", "add", "remove", "delete", "append",
     "condition", "upsert"],
)  # fmt: skip
def test_documented_call_keywords_are_reserved(keyword):
    assert keyword in CALL_KEYWORDS
    definition_error("X#{" + keyword + "}", sort_key=True, **{keyword: str})


def test_field_with_double_underscore():
    message = definition_error("X#{created__at}", created__at=str)
    assert "created__at" in message
    assert "__" in message


@pytest.mark.parametrize(
    ("text", "types", "sort_key"),
    [
        ("X#{n:x}", {"n": int}, False),
        ("X#{n:5d}", {"n": int}, True),
        ("X#{n:+05d}", {"n": int}, True),
        ("X#{n:05d}", {"n": Decimal}, True),
        ("X#{n:.2f}", {"n": Decimal}, False),
        ("X#{s:upper}", {"s": str}, False),
        ("X#{s:sortable}", {"s": str}, True),
        ("X#{u:hex}", {"u": uuid.UUID}, False),
        ("X#{t:iso}", {"t": datetime}, False),
        ("X#{d:iso}", {"d": date}, False),
        ("X#{t:sortable}", {"t": datetime}, True),
    ],
)
def test_bad_formats(text, types, sort_key):
    name = next(iter(types))
    message = definition_error(text, sort_key=sort_key, owner="E", **types)
    assert "{" + name + "}" in message


@pytest.mark.parametrize("fmt", ["%d/%m/%Y", "%m-%Y", "%H:%M", "%Y-%d-%m", "%A", "%Y-%b-%d"])
@pytest.mark.parametrize("field_type", [datetime, date])
def test_unsortable_strftime_in_sort_key(fmt, field_type):
    message = definition_error("D#{x:" + fmt + "}", sort_key=True, owner="E", x=field_type)
    assert fmt in message
    # A partition key may use it.
    tpl("D#{x:" + fmt + "}", x=field_type)


@pytest.mark.parametrize("fmt", ["%Y", "%Y-%m", "%Y-%m-%d", "%Y%m%d%H%M%S", "%Y-%m-%dT%H:%M:%S.%f"])
def test_sortable_strftime_formats_accepted(fmt):
    template = tpl("D#{x:" + fmt + "}#{id}", sort_key=True, x=datetime, id=str)
    assert template.is_rangeable("x")


@pytest.mark.parametrize(
    ("text", "types"),
    [
        ("", {}),
        ("A#{a", {"a": str}),
        ("A#a}", {"a": str}),
        ("A#{a}#{a}", {"a": str}),
        ("A#{1a}", {"1a": str}),
        ("A#{}", {}),
        ("A#{a}", {"a": int | str}),
        ("A#{a}", {"a": list[str]}),
        ("A#{a}", {"a": dict}),
        ("A#{a}", {"a": Literal["x", 1]}),
        ("A#{a}", {"a": bytes}),
        ("A#" + SENTINEL, {}),
    ],
)
def test_other_bad_templates(text, types):
    definition_error(text, **types)


def test_optional_field_renders_and_refuses_none():
    template = tpl("A#{a}", owner="E", a=Optional[str])  # noqa: UP045
    assert template.render({"a": "x"}) == "A#x"
    assert "E.a" in key_error(template.render, {"a": None})


# -- prefixes and sort conditions --------------------------------------------------------------

ORDER_TYPES = {"created_at": datetime, "order_id": str}


def order_sk(**kw):
    return KeyTemplate("ORDER#{created_at}#{order_id}", ORDER_TYPES, sort_key=True, **kw)


def test_literal_prefix_and_prefixes():
    template = order_sk()
    assert template.literal_prefix == "ORDER#"
    assert template.prefix({}) == "ORDER#"
    assert template.prefix({"created_at": DT}) == "ORDER#2026-06-01T10:00:00.123456Z#"
    assert template.prefix({"created_at": DT, "order_id": "A1"}) == (
        "ORDER#2026-06-01T10:00:00.123456Z#A1"
    )


def test_prefix_ends_after_complete_segment():
    template = tpl("F#{a}#{b}", sort_key=True, a=str, b=str)
    prefix = template.prefix({"a": "f34"})
    assert prefix == "F#f34#"
    assert not template.render({"a": "f340", "b": "x"}).startswith(prefix)
    assert template.render({"a": "f34", "b": "x"}).startswith(prefix)


def test_prefix_with_literal_between_fields():
    template = tpl("A#{a}#B#{b}", sort_key=True, a=str, b=str)
    assert template.prefix({}) == "A#"
    assert template.prefix({"a": "x"}) == "A#x#B#"
    template = tpl("USER#u{id}#{n:05d}", sort_key=True, id=str, n=int)
    assert template.prefix({}) == "USER#u"
    assert template.prefix({"id": "7"}) == "USER#u7#"


def test_sort_condition_forms():
    template = order_sk()
    assert template.sort_condition({}) == SortCondition("begins_with", ("ORDER#",))
    assert template.sort_condition({"created_at": DT}) == SortCondition(
        "begins_with", ("ORDER#2026-06-01T10:00:00.123456Z#",)
    )
    assert template.sort_condition({"created_at": DT, "order_id": "A1"}) == SortCondition(
        "=", ("ORDER#2026-06-01T10:00:00.123456Z#A1",)
    )


def test_sort_condition_empty_literal_and_nothing_given_is_none():
    template = KeyTemplate("{created_at}#{order_id}", ORDER_TYPES, sort_key=True)
    assert template.literal_prefix == ""
    assert template.sort_condition({}) is None
    assert template.sort_condition({"created_at": DT}) == SortCondition(
        "begins_with", ("2026-06-01T10:00:00.123456Z#",)
    )


def test_constant_sort_key_condition_is_equality():
    template = tpl("PROFILE", sort_key=True)
    assert template.sort_condition({}) == SortCondition("=", ("PROFILE",))
    template = tpl("MERCHANT#{m}#STATUS#PENDING", sort_key=True, m=str)
    assert template.sort_condition({}) == SortCondition("begins_with", ("MERCHANT#",))
    assert template.sort_condition({"m": "x"}) == SortCondition("=", ("MERCHANT#x#STATUS#PENDING",))


def test_gaps_are_refused():
    template = order_sk()
    message = key_error(template.sort_condition, {"order_id": "A1"})
    assert "order_id" in message
    assert "created_at" in message
    key_error(template.prefix, {"order_id": "A1"})
    three = tpl("X#{a}#{b}#{c}", sort_key=True, a=str, b=str, c=str)
    assert "'c'" in key_error(three.sort_condition, {"a": "1", "c": "3"})


def test_range_lookup_must_be_on_the_next_field():
    template = order_sk()
    message = key_error(template.sort_condition, {}, ("order_id", "gt", "A"))
    assert "order_id" in message
    key_error(template.sort_condition, {"created_at": DT, "order_id": "A"}, ("order_id", "gt", "A"))
    key_error(template.sort_condition, {}, ("nope", "gt", "A"))


def test_range_lookup_on_variable_width_middle_segment_refused():
    template = tpl("ITEM#{name}#{id}", sort_key=True, owner="Item", name=str, id=str)
    for op, value in [
        ("gt", "a"),
        ("gte", "a"),
        ("lt", "a"),
        ("lte", "a"),
        ("between", ("a", "b")),
    ]:
        message = key_error(template.sort_condition, {}, ("name", op, value))
        assert "name" in message
    assert not template.is_rangeable("name")
    assert template.is_rangeable("id")
    # begins_with is exact on any segment.
    assert template.sort_condition({}, ("name", "begins_with", "ab")) == SortCondition(
        "begins_with", ("ITEM#ab",)
    )
    # A bare int in a partition key is variable width too, but pk templates take no ranges;
    # a str followed by a constant tail is not the last segment either.
    tail = tpl("M#{m}#STATUS#PENDING", sort_key=True, m=str)
    assert not tail.is_rangeable("m")
    key_error(tail.sort_condition, {}, ("m", "gt", "a"))


def test_fixed_width_segments_are_rangeable():
    template = tpl(
        "X#{t}#{d}#{u}#{s:sortable}#{p:05d}#{c:%Y-%m}#{last}",
        sort_key=True,
        t=datetime,
        d=date,
        u=uuid.UUID,
        s=Decimal,
        p=int,
        c=datetime,
        last=str,
    )
    for name in ["t", "d", "u", "s", "p", "c", "last"]:
        assert template.is_rangeable(name), name


@pytest.mark.parametrize("number", [int, Decimal])
def test_range_lookup_without_a_literal_prefix_stays_within_the_segments_extent(number):
    """A one-sided range on a leading fixed-width segment is closed by the extreme renderings
    (here the sortable text of DynamoDB's most negative and largest numbers), so it never
    reaches keys the segment cannot render."""
    template = tpl("{n:sortable}#{id}", sort_key=True, n=number, id=str)
    largest = "9" * 38 + "E+88"
    lowest, highest = render_sortable(Decimal(f"-{largest}")), render_sortable(Decimal(largest))
    assert template.placeholders[0].extent == (lowest, highest)
    above = template.sort_condition({}, ("n", "gte", 5))
    assert above == SortCondition("between", (render_sortable(5), f"{highest}#{SENTINEL}"))
    below = template.sort_condition({}, ("n", "lte", 5))
    assert below is not None and below.values[0] == lowest


def test_between_low_above_high_refused():
    template = order_sk()
    later = DT + timedelta(seconds=1)
    message = key_error(template.sort_condition, {}, ("created_at", "between", (later, DT)))
    assert "created_at" in message
    # low == high is fine (and inclusive).
    assert template.sort_condition({}, ("created_at", "between", (DT, DT))) is not None
    numbers = tpl("S#{n:sortable}#{id}", sort_key=True, n=int, id=str)
    key_error(numbers.sort_condition, {}, ("n", "between", (5, -5)))
    key_error(numbers.sort_condition, {}, ("n", "between", (5,)))
    key_error(numbers.sort_condition, {}, ("n", "between", 5))


def test_unknown_range_operator_refused():
    key_error(order_sk().sort_condition, {}, ("created_at", "ne", DT))


def test_begins_with_lookup_refuses_empty_and_delimiter():
    template = tpl("ITEM#{name}", sort_key=True, name=str)
    key_error(template.sort_condition, {}, ("name", "begins_with", ""))
    key_error(template.sort_condition, {}, ("name", "begins_with", "a#b"))
    escaped = tpl("ITEM#{name}", sort_key=True, escape=True, name=str)
    assert escaped.sort_condition({}, ("name", "begins_with", "a#b%")) == SortCondition(
        "begins_with", ("ITEM#a%23b%25",)
    )


def test_gt_on_last_segment_is_strict_comparison_within_prefix():
    template = tpl("ITEM#{name}", sort_key=True, name=str)
    condition = template.sort_condition({}, ("name", "gt", "m"))
    assert condition.op == "between"
    low, high = condition.values
    assert low > "ITEM#m"
    assert "ITEM#m" < low <= "ITEM#m\x00"
    assert high.startswith("ITEM#")


def test_key_template_error_is_single_table_error():
    assert issubclass(KeyTemplateError, SingleTableError)
    assert issubclass(KeyDefinitionError, ModelDefinitionError)
    assert issubclass(KeyDefinitionError, KeyTemplateError)


# -- hostile text and key byte limits ------------------------------------------------------------

BAD = "bad \ud800"  # a lone surrogate: pydantic accepts it in a str, UTF-8 cannot encode it


@pytest.mark.parametrize("escape", [False, True])
def test_lone_surrogate_in_a_key_value_is_refused_naming_the_field(escape):
    t = KeyTemplate("U#{user_id}", {"user_id": str}, escape=escape, owner="User")
    with pytest.raises(KeyTemplateError) as info:
        t.render({"user_id": BAD})
    assert info.value.key == "user_id"
    message = str(info.value)
    assert "User.user_id" in message and "lone surrogate" in message
    message.encode()  # the value is shown escaped: the message itself is text


def test_lone_surrogate_in_a_str_enum_value_is_refused():
    class Odd(str, enum.Enum):
        BAD = "bad \udc80"

    t = tpl("S#{state}", state=Odd)
    assert "lone surrogate" in key_error(t.render, {"state": Odd.BAD})


def test_lone_surrogate_in_a_begins_with_operand_is_refused():
    t = tpl("A#{a}", sort_key=True, a=str)
    assert "lone surrogate" in key_error(t.sort_condition, {}, ("a", "begins_with", BAD))
    assert "lone surrogate" in key_error(t.sort_condition, {}, ("a", "gte", BAD))


def test_lone_surrogate_in_template_text_is_a_definition_error():
    assert "lone surrogate" in definition_error("A\ud800#{a}", a=str)


def test_valid_non_ascii_key_values_render():
    t = tpl("U#{name}", name=str)
    assert t.render({"name": "Zoë 😀 日本"}) == "U#Zoë 😀 日本"
    assert t.parse("U#Zoë 😀 日本") == {"name": "Zoë 😀 日本"}


def key_size_error(t, call):
    with pytest.raises(KeyTemplateError) as info:
        call()
    err = info.value
    assert not isinstance(err, ModelDefinitionError)
    return err


@pytest.mark.parametrize(
    ("sort_key", "limit", "attribute"), [(False, 2048, "PK"), (True, 1024, "GSI1SK")]
)
def test_key_byte_limits(sort_key, limit, attribute):
    t = KeyTemplate(
        "K#{v}", {"v": str}, sort_key=sort_key, owner="Thing", role="the key", attribute=attribute
    )
    room = limit - 2  # "K#"
    # UTF-8 bytes count, not characters: an emoji is four.
    assert len(t.render({"v": "😀" * (room // 4) + "x" * (room % 4)}).encode()) == limit
    assert len(t.render({"v": "x" * room})) == limit
    over = "😀" * (room // 4) + "x" * (room % 4 + 1)
    err = key_size_error(t, lambda: t.render({"v": over}))
    assert err.key == attribute
    message = str(err)
    assert f"Thing: key attribute {attribute!r}" in message
    assert f"{limit + 1:,} bytes of UTF-8" in message and f"{limit:,} bytes" in message
    assert "😀" not in message  # the size, not the value


def test_key_byte_limit_without_an_attribute_names_the_role():
    t = KeyTemplate("{v}", {"v": str}, role="unique guard", owner="User")
    err = key_size_error(t, lambda: t.render({"v": "é" * 1025}))
    assert err.key == "unique guard" and "2,050 bytes" in str(err)


def test_short_text_is_not_measured_but_long_ascii_is_exact():
    t = tpl("S#{v}", sort_key=True, v=str)
    assert t.render({"v": "a" * 1022}) == "S#" + "a" * 1022  # 1,024 ASCII bytes: fine
    key_size_error(t, lambda: t.render({"v": "a" * 1023}))


@pytest.mark.parametrize(
    "lookup",
    [
        ("v", "gte", "😀" * 300),
        ("v", "lt", "😀" * 300),
        ("v", "between", ("a", "😀" * 300)),
        ("v", "begins_with", "😀" * 300),
    ],
)
def test_sort_condition_values_over_the_limit_are_refused(lookup):
    t = KeyTemplate("S#{v}", {"v": str}, sort_key=True, owner="Thing", role="sk", attribute="SK")
    err = key_size_error(t, lambda: t.sort_condition({}, lookup))
    assert err.key == "SK" and "the key condition on 'SK'" in str(err)


def test_sort_condition_prefix_over_the_limit_is_refused():
    t = KeyTemplate(
        "S#{a}#{b}", {"a": str, "b": str}, sort_key=True, owner="T", role="sk", attribute="SK"
    )
    assert t.sort_condition({"a": "x" * 1000}).values == ("S#" + "x" * 1000 + "#",)
    key_size_error(t, lambda: t.sort_condition({"a": "x" * 1030}))
