"""Property-based checks of key templates: round trips, order preservation, injectivity,
prefix safety, and exact range-lookup bounds evaluated the way DynamoDB compares strings."""

import uuid
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from singletable._key_formats import parse_sortable, render_sortable
from singletable._keys import SENTINEL, KeyTemplate, SortCondition
from singletable.errors import KeyTemplateError, ModelDefinitionError

UTC = timezone.utc
FAST = settings(
    max_examples=60, deadline=2000, database=None, suppress_health_check=[HealthCheck.too_slow]
)
MEDIUM = settings(
    max_examples=40, deadline=2000, database=None, suppress_health_check=[HealthCheck.too_slow]
)

# -- strategies --------------------------------------------------------------------------------

# Any text a key value may hold (UTF-8 encodable, never the reserved U+10FFFF).
any_char = st.characters(codec="utf-8", exclude_characters=SENTINEL)
key_char = st.characters(codec="utf-8", exclude_characters="#" + SENTINEL)
# Characters around the delimiter and the terminators of the sortable code, plus non-BMP ones.
tricky_char = st.sampled_from(list("!\"$%&'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~\x00\x7f"))
non_bmp_char = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFE)
key_text = st.text(st.one_of(key_char, tricky_char, non_bmp_char), min_size=1, max_size=8).filter(
    lambda s: "#" not in s
)
any_text = st.text(
    st.one_of(any_char, st.sampled_from("#%23"), non_bmp_char), min_size=1, max_size=8
)

MAX_INT = 10**38 - 1
big_ints = st.one_of(
    st.integers(-MAX_INT, MAX_INT),
    st.integers(-1000, 1000),
    st.sampled_from([0, 1, -1, 9, 10, -9, -10, 99, 100, MAX_INT, -MAX_INT, 10**37, -(10**37)]),
)


def _decimal(mantissa: int, exponent: int) -> Decimal:
    return Decimal(f"{mantissa}E{exponent}")  # exact, no context rounding


def _in_dynamodb_range(d: Decimal) -> bool:
    return d == 0 or -130 <= d.adjusted() <= 125


def decimals(max_digits: int = 38) -> st.SearchStrategy[Decimal]:
    limit = 10**max_digits - 1
    mantissas = st.one_of(st.integers(-limit, limit), st.integers(-99, 99))
    exponents = st.one_of(st.integers(-167, 125), st.integers(-6, 6))
    return st.builds(_decimal, mantissas, exponents).filter(_in_dynamodb_range)


fixed_offsets = st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60 - 59, 23 * 60 + 59)
)


def _zones() -> st.SearchStrategy:
    try:
        import zoneinfo

        zoneinfo.ZoneInfo("Europe/Paris")
    except Exception:
        return fixed_offsets
    return st.one_of(fixed_offsets, st.timezones(), st.just(UTC))


aware_datetimes = st.datetimes(
    min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 30), timezones=_zones()
)
all_dates = st.dates()


def utc(dt: datetime) -> datetime:
    return dt.astimezone(UTC)


# -- a tiny DynamoDB sort-key condition evaluator ----------------------------------------------


def dynamo_matches(condition: SortCondition | None, key: str) -> bool:
    """Evaluate a sort-key condition like DynamoDB: by UTF-8 bytes."""
    if condition is None:
        return True
    k = key.encode("utf-8")
    v = [value.encode("utf-8") for value in condition.values]
    op = condition.op
    if op == "=":
        return k == v[0]
    if op == "begins_with":
        return k.startswith(v[0])
    if op == ">":
        return k > v[0]
    if op == ">=":
        return k >= v[0]
    if op == "<":
        return k < v[0]
    if op == "<=":
        return k <= v[0]
    if op == "between":
        return v[0] <= k <= v[1]
    raise AssertionError(f"unknown op {op}")


def check_condition_is_sendable(condition: SortCondition | None) -> None:
    if condition is None:
        return
    for value in condition.values:
        assert value != ""  # DynamoDB refuses empty key values in key conditions
        value.encode("utf-8")  # no lone surrogates
    if condition.op == "between":
        low, high = condition.values
        assert low.encode() <= high.encode()  # DynamoDB refuses BETWEEN with low > high


# -- code point order == UTF-8 byte order ------------------------------------------------------


@FAST
@given(
    st.text(st.one_of(any_char, non_bmp_char), max_size=6),
    st.text(st.one_of(any_char, non_bmp_char), max_size=6),
)
@example("\uffff", "\U00010000")
@example("\ue000", "\U0010fffe")
def test_python_string_order_is_utf8_byte_order(a, b):
    assert (a < b) == (a.encode("utf-8") < b.encode("utf-8"))
    assert (a == b) == (a.encode("utf-8") == b.encode("utf-8"))


def test_sentinel_sorts_above_every_key_character():
    for ch in ["~", "\uffff", "\U0010fffe", "\U00010000"]:
        assert ch.encode() < SENTINEL.encode()


# -- round trips -------------------------------------------------------------------------------


@FAST
@given(st.integers(-MAX_INT, MAX_INT))
def test_int_bare_pk_round_trip(n):
    template = KeyTemplate("N#{n}", {"n": int})
    assert template.parse(template.render({"n": n})) == {"n": n}


@FAST
@given(st.integers(-(10**28) + 1, 10**28 - 1), key_text)
def test_int_sortable_round_trip(n, ident):
    template = KeyTemplate("S#{n:sortable}#{id}", {"n": int, "id": str}, sort_key=True)
    parsed = template.parse(template.render({"n": n, "id": ident}))
    assert parsed == {"n": n, "id": ident}
    assert type(parsed["n"]) is int


@FAST
@given(st.integers(0, 99999))
def test_padded_round_trip(n):
    template = KeyTemplate("RATING#{rating:05d}", {"rating": int}, sort_key=True)
    key = template.render({"rating": n})
    assert len(key) == len("RATING#") + 5
    assert template.parse(key) == {"rating": n}


@FAST
@given(decimals(max_digits=28))
def test_decimal_sortable_round_trip(d):
    assert parse_sortable(render_sortable(d)) == d
    template = KeyTemplate("S#{d:sortable}", {"d": Decimal}, sort_key=True)
    assert template.parse(template.render({"d": d})) == {"d": d}


@FAST
@given(decimals(max_digits=28))
def test_decimal_bare_pk_round_trip_and_canonical(d):
    template = KeyTemplate("P#{d}", {"d": Decimal})
    key = template.render({"d": d})
    assert "E" not in key
    assert template.parse(key) == {"d": d}
    # Any representation of the same number renders alike.
    assert template.render({"d": Decimal(str(d.normalize()) if d else "0.000")}) == key


def _in_a_gap() -> datetime:
    """A wall-clock time that does not exist in its zone (clocks went forward), when the
    time-zone database is there: PEP 495 makes it unequal to every time in another zone."""
    try:
        import zoneinfo

        return datetime(1955, 4, 24, 1, 0, tzinfo=zoneinfo.ZoneInfo("America/Ensenada"))
    except Exception:
        return datetime(1955, 4, 24, 1, 0, tzinfo=UTC)


@FAST
@given(aware_datetimes, key_text)
@example(_in_a_gap(), "A1")
def test_datetime_round_trip(dt, ident):
    template = KeyTemplate(
        "ORDER#{created_at}#{order_id}", {"created_at": datetime, "order_id": str}, sort_key=True
    )
    key = template.render({"created_at": dt, "order_id": ident})
    rendered = key.split("#")[1]
    assert len(rendered) == 27
    assert datetime.strptime(rendered, "%Y-%m-%dT%H:%M:%S.%fZ") == utc(dt).replace(tzinfo=None)
    parsed = template.parse(key)
    # Compared in UTC: an aware time in a DST gap or fold never equals one in another zone
    # (PEP 495), though both name the same instant.
    assert parsed == {"created_at": utc(dt), "order_id": ident}
    assert parsed["created_at"].utcoffset() == timedelta(0)


@FAST
@given(all_dates, st.uuids(), key_text)
def test_date_and_uuid_round_trip(d, u, ident):
    template = KeyTemplate(
        "D#{d}#U#{u}#{id}", {"d": date, "u": uuid.UUID, "id": str}, sort_key=True
    )
    values = {"d": d, "u": u, "id": ident}
    key = template.render(values)
    assert template.parse(key) == values


@FAST
@given(st.datetimes(min_value=datetime(1000, 1, 1), timezones=st.just(UTC)))
def test_custom_strftime_round_trip_to_the_day(dt):
    template = KeyTemplate("DAY#{created_at:%Y-%m-%d}", {"created_at": datetime}, sort_key=True)
    parsed = template.parse(template.render({"created_at": dt}))["created_at"]
    assert parsed == dt.replace(hour=0, minute=0, second=0, microsecond=0)


@FAST
@given(st.lists(key_text, min_size=3, max_size=3))
def test_str_round_trip_with_literals_inside_segments(parts):
    template = KeyTemplate(
        "USER#u{a}#MID#{b}#x{c}#END", {"a": str, "b": str, "c": str}, sort_key=True
    )
    values = dict(zip("abc", parts))
    key = template.render(values)
    assert key == f"USER#u{parts[0]}#MID#{parts[1]}#x{parts[2]}#END"
    assert template.parse(key) == values


# -- ordering ----------------------------------------------------------------------------------


def _assert_order_preserved(a, b, ka, kb):
    assert (a < b) == (ka < kb), (a, b, ka, kb)
    assert (a == b) == (ka == kb), (a, b, ka, kb)
    assert (ka < kb) == (ka.encode() < kb.encode())


@FAST
@given(big_ints, big_ints)
@example(-1, -10)
@example(9, 10)
@example(-(10**37), 10**37)
def test_sortable_ints_preserve_order(a, b):
    template = KeyTemplate("S#{n:sortable}", {"n": int}, sort_key=True)
    _assert_order_preserved(a, b, template.render({"n": a}), template.render({"n": b}))


@FAST
@given(big_ints, big_ints, key_text, key_text)
@example(1, 10, "~", "!")
@example(-10, -1, "~", "!")
@example(-1, 0, "~", "!")
def test_sortable_ints_preserve_order_when_segments_follow(a, b, ida, idb):
    template = KeyTemplate("S#{n:sortable}#{id}", {"n": int, "id": str}, sort_key=True)
    ka = template.render({"n": a, "id": ida})
    kb = template.render({"n": b, "id": idb})
    if a != b:
        assert (a < b) == (ka < kb)
    else:
        assert (ida < idb) == (ka < kb)


@FAST
@given(decimals(), decimals())
@example(Decimal("1"), Decimal("1.5"))
@example(Decimal("-1"), Decimal("-1.5"))
@example(Decimal("1E-130"), Decimal("0"))
@example(Decimal("-1E-130"), Decimal("0"))
@example(Decimal("9.9999999999999999999999999999999999999E125"), Decimal("1E125"))
@example(Decimal("1.50"), Decimal("1.5"))
def test_sortable_decimals_preserve_order(a, b):
    template = KeyTemplate("S#{d:sortable}", {"d": Decimal}, sort_key=True)
    _assert_order_preserved(a, b, template.render({"d": a}), template.render({"d": b}))


@FAST
@given(decimals(), decimals(), key_text, key_text)
@example(Decimal("1"), Decimal("1.5"), "~", "!")
@example(Decimal("-1.5"), Decimal("-1"), "!", "~")
def test_sortable_decimals_preserve_order_when_segments_follow(a, b, ida, idb):
    template = KeyTemplate("S#{d:sortable}#{id}", {"d": Decimal, "id": str}, sort_key=True)
    ka = template.render({"d": a, "id": ida})
    kb = template.render({"d": b, "id": idb})
    if a != b:
        assert (a < b) == (ka < kb)
    else:
        assert (ida < idb) == (ka < kb)


@FAST
@given(st.integers(0, 99999), st.integers(0, 99999), key_text, key_text)
def test_padded_ints_preserve_order_when_segments_follow(a, b, ida, idb):
    template = KeyTemplate("R#{n:05d}#{id}", {"n": int, "id": str}, sort_key=True)
    ka = template.render({"n": a, "id": ida})
    kb = template.render({"n": b, "id": idb})
    if a != b:
        assert (a < b) == (ka < kb)


@FAST
@given(aware_datetimes, aware_datetimes, key_text, key_text, fixed_offsets)
def test_datetimes_preserve_order_in_any_timezone(a, b, ida, idb, other_zone):
    template = KeyTemplate("T#{t}#{id}", {"t": datetime, "id": str}, sort_key=True)
    ka = template.render({"t": a, "id": ida})
    kb = template.render({"t": b, "id": idb})
    if utc(a) != utc(b):
        assert (utc(a) < utc(b)) == (ka < kb)
    else:
        assert (ka == kb) == (ida == idb)
    # The same instant in another zone renders identically.
    plain = KeyTemplate("T#{t}", {"t": datetime}, sort_key=True)
    assert plain.render({"t": a}) == plain.render({"t": a.astimezone(other_zone)})
    _assert_order_preserved(utc(a), utc(b), plain.render({"t": a}), plain.render({"t": b}))


@FAST
@given(all_dates, all_dates)
def test_dates_preserve_order(a, b):
    template = KeyTemplate("D#{d}", {"d": date}, sort_key=True)
    _assert_order_preserved(a, b, template.render({"d": a}), template.render({"d": b}))


@FAST
@given(st.dates(min_value=date(1000, 1, 1)), st.dates(min_value=date(1000, 1, 1)))
def test_custom_strftime_dates_preserve_order(a, b):
    template = KeyTemplate("D#{d:%Y-%m-%d}", {"d": date}, sort_key=True)
    _assert_order_preserved(a, b, template.render({"d": a}), template.render({"d": b}))


def test_custom_strftime_years_below_1000_keep_order():
    template = KeyTemplate("D#{d:%Y-%m-%d}", {"d": date}, sort_key=True)
    early, late = date(999, 1, 1), date(2026, 1, 1)
    assert template.render({"d": early}) < template.render({"d": late})


def test_datetime_outside_utc_range_is_a_key_template_error():
    template = KeyTemplate("T#{t}", {"t": datetime}, sort_key=True, owner="E")
    with pytest.raises(KeyTemplateError, match=r"E\.t"):
        template.render({"t": datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1)))})


# -- injectivity -------------------------------------------------------------------------------

INJECTIVE_TEMPLATES = [
    "A#{a}#{b}",
    "A#{a}#B#{b}",
    "USER#u{a}#{b}",
    "{a}#{b}",
    "{a}#x{b}#END",
]


@FAST
@given(
    st.sampled_from(INJECTIVE_TEMPLATES),
    st.tuples(key_text, key_text),
    st.tuples(key_text, key_text),
)
def test_distinct_values_render_distinct_keys(text, first, second):
    template = KeyTemplate(text, {"a": str, "b": str}, sort_key=True)
    ka = template.render(dict(zip("ab", first)))
    kb = template.render(dict(zip("ab", second)))
    assert (first == second) == (ka == kb)
    assert template.parse(ka) == dict(zip("ab", first))


@FAST
@given(
    st.sampled_from(INJECTIVE_TEMPLATES),
    st.tuples(any_text, any_text),
    st.tuples(any_text, any_text),
)
@example("A#{a}#{b}", ("x#", "y"), ("x", "#y"))
@example("A#{a}#{b}", ("%23", "y"), ("#", "y"))
@example("A#{a}#{b}", ("%", "25"), ("%25", "x"))
def test_escape_mode_is_injective_over_any_strings(text, first, second):
    template = KeyTemplate(text, {"a": str, "b": str}, sort_key=True, escape=True)
    ka = template.render(dict(zip("ab", first)))
    kb = template.render(dict(zip("ab", second)))
    assert (first == second) == (ka == kb)
    assert template.parse(ka) == dict(zip("ab", first))
    assert template.parse(kb) == dict(zip("ab", second))


@FAST
@given(
    st.tuples(big_ints, key_text, aware_datetimes, st.uuids()),
    st.tuples(big_ints, key_text, aware_datetimes, st.uuids()),
)
def test_mixed_type_templates_are_injective(first, second):
    types = {"n": int, "s": str, "t": datetime, "u": uuid.UUID}
    template = KeyTemplate("X#{n:sortable}#{s}#{t}#{u}", types, sort_key=True)
    ka = template.render(dict(zip("nstu", first)))
    kb = template.render(dict(zip("nstu", second)))
    same = first[0] == second[0] and first[1:2] == second[1:2] and first[3] == second[3]
    same = same and utc(first[2]) == utc(second[2])
    assert same == (ka == kb)


@FAST
@given(key_text, key_text)
def test_non_escape_mode_refuses_delimiter_anywhere(prefix, suffix):
    template = KeyTemplate("A#{a}", {"a": str}, owner="E")
    with pytest.raises(KeyTemplateError, match=r"E\.a") as info:
        template.render({"a": prefix + "#" + suffix})
    assert not isinstance(info.value, ModelDefinitionError)


# -- prefixes ----------------------------------------------------------------------------------


@FAST
@given(key_text, key_text, key_text)
@example("f34", "f340", "x")
@example("a", "a!", "x")
def test_prefix_never_matches_another_value(a, b, rest):
    assume(a != b)
    template = KeyTemplate("F#{a}#{b}", {"a": str, "b": str}, sort_key=True)
    prefix = template.prefix({"a": a})
    assert prefix.endswith("#")
    assert template.render({"a": a, "b": rest}).startswith(prefix)
    assert not template.render({"a": b, "b": rest}).startswith(prefix)
    condition = template.sort_condition({"a": a})
    assert dynamo_matches(condition, template.render({"a": a, "b": rest}))
    assert not dynamo_matches(condition, template.render({"a": b, "b": rest}))


@FAST
@given(big_ints, big_ints, key_text)
def test_sortable_prefix_never_matches_another_value(a, b, rest):
    assume(a != b)
    template = KeyTemplate("S#{n:sortable}#{id}", {"n": int, "id": str}, sort_key=True)
    prefix = template.prefix({"n": a})
    assert not template.render({"n": b, "id": rest}).startswith(prefix)


# -- range-lookup bounds -----------------------------------------------------------------------

BASE = datetime(2026, 6, 1, tzinfo=UTC)
# A small pool so that equal field values (and values equal to the bound) are frequent.
DT_POOL = [BASE + timedelta(minutes=m) for m in (0, 1, 2, 3, 5, 8, 13)] + [
    datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 6, 1, 2, 0, tzinfo=timezone(timedelta(hours=2))),  # == BASE
]
pool_datetimes = st.sampled_from(DT_POOL)
INT_POOL = [-(10**20), -100, -11, -10, -9, -1, 0, 1, 9, 10, 11, 100, 10**20]
pool_ints = st.one_of(st.sampled_from(INT_POOL), st.integers(-200, 200))
PAD_POOL = [0, 1, 9, 10, 99, 100, 12345, 99999]
pool_padded = st.one_of(st.sampled_from(PAD_POOL), st.integers(0, 99999))
DEC_POOL = [
    Decimal(x) for x in ("-10.5", "-1", "-0.5", "0", "0.5", "1", "1.5", "1.50", "10", "1E-9")
]
pool_decimals = st.one_of(st.sampled_from(DEC_POOL), decimals(max_digits=6))
DATE_POOL = [date(2026, 6, d) for d in range(1, 8)] + [date(1, 1, 1), date(9999, 12, 31)]
pool_dates = st.sampled_from(DATE_POOL)
NAME_POOL = ["a", "ab", "abc", "b", "a!", "a~", "a\U0001f600", "\U0001f600", "z", "0", "A"]
pool_names = st.one_of(st.sampled_from(NAME_POOL), key_text)

FOREIGN_KEYS = [
    "ORDER",
    "ORDERX#2026-06-01T00:00:00.000000Z#A1",
    "ORDEQ",
    "ORDEQ#2026-06-01T00:00:00.000000Z#A1",
    "ORDER$",
    "ORDER!#x",
    "ORDER~",
    "ORDERS",
    "PROFILE",
    "A",
    "Z",
    "~",
    "0",
    "\U0001f600",
    "ORDER\U0001f600#x",
]


def _ops(value_strategy):
    return st.one_of(
        st.tuples(st.sampled_from(["gt", "gte", "lt", "lte"]), value_strategy),
        st.tuples(st.just("between"), st.tuples(value_strategy, value_strategy)),
    )


def _satisfies(field_value, op, operand, key_of=lambda v: v):
    v = key_of(field_value)
    if op == "gt":
        return v > key_of(operand)
    if op == "gte":
        return v >= key_of(operand)
    if op == "lt":
        return v < key_of(operand)
    if op == "lte":
        return v <= key_of(operand)
    if op == "between":
        return key_of(operand[0]) <= v <= key_of(operand[1])
    raise AssertionError(op)


def _check_exact_selection(template, items, fixed, field, op, operand, foreign, key_of=lambda v: v):
    """Items are dicts of field values; ``fixed`` are the leading fields the caller gives."""
    if op == "between" and key_of(operand[0]) > key_of(operand[1]):
        with pytest.raises(KeyTemplateError):
            template.sort_condition(fixed, (field, op, operand))
        return
    condition = template.sort_condition(fixed, (field, op, operand))
    check_condition_is_sendable(condition)
    keys = {}
    for item in items:
        keys.setdefault(template.render({**item, **fixed}), item)
    every = sorted(list(keys) + list(foreign), key=lambda k: k.encode())
    selected = {k for k in every if dynamo_matches(condition, k)}
    expected = {k for k, item in keys.items() if _satisfies(item[field], op, operand, key_of)}
    wrong_foreign = selected & set(foreign)
    assert not wrong_foreign, (condition, wrong_foreign)
    assert selected == expected, (condition, sorted(selected ^ expected))
    # The selection is a contiguous run of the sorted keys (one Query range).
    positions = [i for i, k in enumerate(every) if k in selected]
    if positions:
        assert positions == list(range(positions[0], positions[-1] + 1))


ORDER_TYPES = {"created_at": datetime, "order_id": str}


@MEDIUM
@given(
    st.lists(st.tuples(pool_datetimes, pool_names), min_size=1, max_size=25), _ops(pool_datetimes)
)
def test_range_on_fixed_width_middle_datetime(rows, lookup):
    template = KeyTemplate("ORDER#{created_at}#{order_id}", ORDER_TYPES, sort_key=True)
    items = [{"created_at": t, "order_id": oid} for t, oid in rows]
    op, operand = lookup
    _check_exact_selection(template, items, {}, "created_at", op, operand, FOREIGN_KEYS, key_of=utc)


@MEDIUM
@given(
    st.lists(st.tuples(pool_names, pool_datetimes, pool_names), min_size=1, max_size=25),
    pool_names,
    _ops(pool_datetimes),
)
def test_range_after_given_leading_field(rows, customer, lookup):
    template = KeyTemplate(
        "ORDER#{customer}#{created_at}#{order_id}",
        {"customer": str, **ORDER_TYPES},
        sort_key=True,
    )
    # Items of the given customer and of other customers (which must never be selected).
    items = [{"customer": c, "created_at": t, "order_id": o} for c, t, o in rows]
    mine = [{**item, "customer": customer} for item in items]
    others = [template.render(item) for item in items if item["customer"] != customer]
    op, operand = lookup
    _check_exact_selection(
        template,
        mine,
        {"customer": customer},
        "created_at",
        op,
        operand,
        FOREIGN_KEYS + others,
        key_of=utc,
    )


@MEDIUM
@given(st.lists(pool_datetimes, min_size=1, max_size=15), _ops(pool_datetimes))
def test_range_on_last_segment_datetime(values, lookup):
    template = KeyTemplate("ORDER#{created_at}", {"created_at": datetime}, sort_key=True)
    items = [{"created_at": t} for t in values]
    op, operand = lookup
    _check_exact_selection(template, items, {}, "created_at", op, operand, FOREIGN_KEYS, key_of=utc)


@MEDIUM
@given(st.lists(pool_names, min_size=1, max_size=20), _ops(pool_names))
def test_range_on_last_segment_str(values, lookup):
    template = KeyTemplate("ITEM#{name}", {"name": str}, sort_key=True)
    items = [{"name": n} for n in values]
    op, operand = lookup
    foreign = ["ITEM", "ITEMS#a", "ITEL#z", "ITEM$", "PROFILE", "A", "Z", "~"]
    _check_exact_selection(template, items, {}, "name", op, operand, foreign)


@MEDIUM
@given(
    st.lists(st.tuples(pool_ints, pool_names), min_size=1, max_size=25),
    _ops(pool_ints),
)
def test_range_on_sortable_int_middle(rows, lookup):
    template = KeyTemplate("SCORE#{n:sortable}#{id}", {"n": int, "id": str}, sort_key=True)
    items = [{"n": n, "id": i} for n, i in rows]
    op, operand = lookup
    foreign = ["SCORE", "SCORES#1", "SCORD#2", "SCORE$", "PROFILE", "A", "Z"]
    _check_exact_selection(template, items, {}, "n", op, operand, foreign)


@MEDIUM
@given(
    st.lists(st.tuples(pool_decimals, pool_names), min_size=1, max_size=25),
    _ops(pool_decimals),
)
def test_range_on_sortable_decimal_middle(rows, lookup):
    template = KeyTemplate("PRICE#{p:sortable}#{id}", {"p": Decimal, "id": str}, sort_key=True)
    items = [{"p": p, "id": i} for p, i in rows]
    op, operand = lookup
    foreign = ["PRICE", "PRICEX#1", "PRICD#2", "PRICE$", "PROFILE", "A", "Z"]
    _check_exact_selection(template, items, {}, "p", op, operand, foreign)


@MEDIUM
@given(
    st.lists(st.tuples(pool_padded, pool_names), min_size=1, max_size=25),
    _ops(pool_padded),
)
def test_range_on_padded_middle(rows, lookup):
    template = KeyTemplate("RATING#{rating:05d}#{id}", {"rating": int, "id": str}, sort_key=True)
    items = [{"rating": r, "id": i} for r, i in rows]
    op, operand = lookup
    foreign = ["RATING", "RATINGS#00001#a", "RATINF#1", "RATING$", "PROFILE", "A", "Z"]
    _check_exact_selection(template, items, {}, "rating", op, operand, foreign)


@MEDIUM
@given(
    st.lists(st.tuples(pool_dates, pool_names), min_size=1, max_size=25),
    _ops(pool_dates),
)
def test_range_on_date_middle(rows, lookup):
    template = KeyTemplate("DAY#{d}#{id}", {"d": date, "id": str}, sort_key=True)
    items = [{"d": d, "id": i} for d, i in rows]
    op, operand = lookup
    foreign = ["DAY", "DAYS#2026-06-01#a", "DAX#1", "DAY$", "PROFILE", "A", "Z"]
    _check_exact_selection(template, items, {}, "d", op, operand, foreign)


@MEDIUM
@given(
    st.lists(st.tuples(pool_datetimes, pool_names), min_size=1, max_size=25),
    _ops(pool_datetimes),
)
def test_range_on_custom_strftime_middle(rows, lookup):
    template = KeyTemplate("DAY#{t:%Y-%m-%dT%H:%M}#{id}", {"t": datetime, "id": str}, sort_key=True)
    items = [{"t": t, "id": i} for t, i in rows]
    op, operand = lookup

    def minute(t):
        return utc(t).replace(second=0, microsecond=0)

    _check_exact_selection(template, items, {}, "t", op, operand, FOREIGN_KEYS, key_of=minute)


@MEDIUM
@given(
    st.lists(st.tuples(pool_datetimes, pool_names), min_size=1, max_size=25),
    _ops(pool_datetimes),
)
def test_range_with_empty_literal_prefix_selects_exactly_the_items(rows, lookup):
    template = KeyTemplate("{created_at}#{order_id}", ORDER_TYPES, sort_key=True)
    items = [{"created_at": t, "order_id": oid} for t, oid in rows]
    op, operand = lookup
    _check_exact_selection(template, items, {}, "created_at", op, operand, [], key_of=utc)


EMPTY_PREFIX_ITEMS = [
    {"created_at": t, "order_id": oid} for t in DT_POOL for oid in ("A1", "b", "\U0001f600")
]
EMPTY_PREFIX_FOREIGN = ["PROFILE", "A", "Z", "~", "0", "!", "ORDER#x", "\U0001f600"]


@pytest.mark.parametrize("op", ["gt", "gte", "lt", "lte"])
def test_range_with_empty_literal_prefix_never_selects_foreign_keys(op):
    template = KeyTemplate("{created_at}#{order_id}", ORDER_TYPES, sort_key=True)
    _check_exact_selection(
        template, EMPTY_PREFIX_ITEMS, {}, "created_at", op, BASE, EMPTY_PREFIX_FOREIGN, key_of=utc
    )


def test_between_with_empty_literal_prefix_never_selects_foreign_keys():
    template = KeyTemplate("{created_at}#{order_id}", ORDER_TYPES, sort_key=True)
    bounds = (DT_POOL[1], DT_POOL[4])
    _check_exact_selection(
        template,
        EMPTY_PREFIX_ITEMS,
        {},
        "created_at",
        "between",
        bounds,
        EMPTY_PREFIX_FOREIGN,
        key_of=utc,
    )


ESCAPE_ALPHABET = st.text(st.sampled_from("a%$!#z~\x00"), min_size=1, max_size=4)


@MEDIUM
@given(st.lists(ESCAPE_ALPHABET, min_size=1, max_size=20), _ops(ESCAPE_ALPHABET))
@example(["a#", "a$", "a%", "a#b", "a"], ("gt", "a#"))
@example(["a#", "a$", "a%", "a#b", "a"], ("lt", "a$"))
@example(["a#", "a$", "a%", "a#b", "a"], ("lte", "a$"))
def test_escape_mode_range_on_text_is_exact_or_refused(names, lookup):
    """Percent-encoding reorders '#' (0x23 -> '%23') relative to '$' (0x24): a range lookup
    on an escaped text segment must either select exactly or be refused before sending."""
    template = KeyTemplate("ITEM#{name}", {"name": str}, sort_key=True, escape=True)
    items = [{"name": n} for n in names]
    op, operand = lookup
    if op == "between" and operand[0] > operand[1]:
        with pytest.raises(KeyTemplateError):
            template.sort_condition({}, ("name", op, operand))
        return
    try:
        template.sort_condition({}, ("name", op, operand))
    except KeyTemplateError as exc:
        assert "name" in str(exc)
        assert not isinstance(exc, ModelDefinitionError)
        return
    _check_exact_selection(template, items, {}, "name", op, operand, ["ITEM", "PROFILE"])


def test_escape_mode_begins_with_on_text_is_exact():
    template = KeyTemplate("ITEM#{name}#{id}", {"name": str, "id": str}, sort_key=True, escape=True)
    names = ["a#", "a#b", "a$", "a%", "a%23", "a", "b#"]
    keys = {template.render({"name": n, "id": "1"}): n for n in names}
    for operand in ["a#", "a%", "a%2", "a", "b"]:
        condition = template.sort_condition({}, ("name", "begins_with", operand))
        selected = {n for k, n in keys.items() if dynamo_matches(condition, k)}
        assert selected == {n for n in names if n.startswith(operand)}, operand


@MEDIUM
@given(
    st.lists(st.tuples(pool_names, pool_names), min_size=1, max_size=25),
    pool_names,
)
def test_begins_with_lookup_selects_exactly(rows, operand):
    template = KeyTemplate("ITEM#{name}#{id}", {"name": str, "id": str}, sort_key=True)
    items = [{"name": n, "id": i} for n, i in rows]
    condition = template.sort_condition({}, ("name", "begins_with", operand))
    check_condition_is_sendable(condition)
    keys = {template.render(item): item for item in items}
    foreign = ["ITEM", "ITEMS#" + operand, "ITEL#x", "PROFILE"]
    selected = {k for k in list(keys) + foreign if dynamo_matches(condition, k)}
    assert selected == {k for k, item in keys.items() if item["name"].startswith(operand)}


@MEDIUM
@given(
    st.lists(st.tuples(pool_datetimes, pool_names), min_size=1, max_size=25),
    st.sampled_from(["2026", "2026-06", "2026-06-01T00:0", "1999-12-31T23:59:59.999999Z"]),
)
def test_begins_with_on_datetime_segment(rows, operand):
    template = KeyTemplate("ORDER#{created_at}#{order_id}", ORDER_TYPES, sort_key=True)
    items = [{"created_at": t, "order_id": oid} for t, oid in rows]
    condition = template.sort_condition({}, ("created_at", "begins_with", operand))
    keys = {template.render(item): item for item in items}
    selected = {k for k in list(keys) + FOREIGN_KEYS if dynamo_matches(condition, k)}
    expected = {
        k
        for k, item in keys.items()
        if template.render_value("created_at", item["created_at"]).startswith(operand)
    }
    assert selected == expected


@FAST
@given(st.sampled_from(DT_POOL), st.sampled_from(DT_POOL))
def test_between_low_above_high_is_refused(low, high):
    template = KeyTemplate("ORDER#{created_at}#{order_id}", ORDER_TYPES, sort_key=True)
    if utc(low) > utc(high):
        with pytest.raises(KeyTemplateError, match="created_at"):
            template.sort_condition({}, ("created_at", "between", (low, high)))
    else:
        condition = template.sort_condition({}, ("created_at", "between", (low, high)))
        check_condition_is_sendable(condition)
