"""Cursor decoding (pure): whatever text a client sends as a cursor, ``CursorCodec.decode``
returns a start key or raises ``InvalidCursor``, never anything else."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from singletable._paging import CursorCodec
from singletable.errors import InvalidCursor

BINDING = "bound-to-this-query"
ATTRS = frozenset({"PK", "SK"})
KEY = {"PK": {"S": "CUSTOMER#42"}, "SK": {"S": "ORDER#2026-06-01T00:00:00.000000Z#A1"}}

UNSIGNED = CursorCodec(None)
SIGNED = CursorCodec("s3cret")
ROTATED = CursorCodec(["new", b"old"])
CODECS = [UNSIGNED, SIGNED, ROTATED]

FUZZ = settings(
    max_examples=300, deadline=1000, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(payload: Any) -> str:
    return "1." + b64(json.dumps(payload).encode())


def outcome(codec: CursorCodec, cursor: Any) -> dict[str, Any] | None:
    """The decoded key, or None when refused with InvalidCursor (anything else propagates)."""
    try:
        return codec.decode(cursor, BINDING, ATTRS)
    except InvalidCursor:
        return None


# -- round trip and the reported inputs ---------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip(codec: CursorCodec) -> None:
    key = {**KEY, "N": {"N": "-1.5"}, "B": {"B": b"\x00\xff"}}
    attrs = frozenset(key)
    assert codec.decode(codec.encode(key, BINDING), BINDING, attrs) == key


def test_a_rotated_secret_still_accepts_cursors_of_the_old_one() -> None:
    assert ROTATED.decode(CursorCodec("old").encode(KEY, BINDING), BINDING, ATTRS) == KEY


@pytest.mark.parametrize("codec", [SIGNED, ROTATED])
def test_non_ascii_signature_is_invalid_cursor(codec: CursorCodec) -> None:
    token = codec.encode(KEY, BINDING)
    payload, _, signature = token.rpartition(".")
    for forged in (f"{payload}.{signature[:-1]}é", f"{payload}.😀", f"{payload}.\ud800"):
        with pytest.raises(InvalidCursor, match="base64url"):
            codec.decode(forged, BINDING, ATTRS)


def test_deeply_nested_json_is_invalid_cursor() -> None:
    deep = "[" * 20_000 + "]" * 20_000  # within the length limit
    with pytest.raises(InvalidCursor, match="malformed"):
        UNSIGNED.decode("1." + b64(deep.encode()), BINDING, ATTRS)
    nested = f'{{"b": "{BINDING}", "k": {{"PK": ["S", "x"], "SK": ' + "[" * 5000 + "]" * 5000 + "}}"
    with pytest.raises(InvalidCursor, match="malformed"):
        UNSIGNED.decode("1." + b64(nested.encode()), BINDING, ATTRS)


def test_oversized_cursor_is_refused_before_parsing() -> None:
    huge = unsigned({"b": BINDING, "k": {"PK": ["S", "x" * 200_000], "SK": ["S", "y"]}})
    with pytest.raises(InvalidCursor, match="longer"):
        UNSIGNED.decode(huge, BINDING, ATTRS)


@pytest.mark.parametrize(
    "wire",
    [
        {"PK": "SS", "SK": ["S", "a"]},  # a two-letter string is not a [tag, value] pair
        {"PK": ["S", "a", "extra"], "SK": ["S", "a"]},
        {"PK": ["S"], "SK": ["S", "a"]},
        {"PK": ["SS", ["a"]], "SK": ["S", "a"]},
        {"PK": ["N", "not a number"], "SK": ["S", "a"]},
        {"PK": ["N", "NaN"], "SK": ["S", "a"]},
        {"PK": ["B", "***"], "SK": ["S", "a"]},
        {"PK": ["S", "x" * 3000], "SK": ["S", "a"]},  # longer than any DynamoDB key value
    ],
)
def test_near_valid_payloads_are_invalid(wire: dict[str, Any]) -> None:
    with pytest.raises(InvalidCursor):
        UNSIGNED.decode(unsigned({"b": BINDING, "k": wire}), BINDING, ATTRS)


def test_non_alphabet_characters_are_not_skipped() -> None:
    # base64's lenient decoder would drop them and decode the rest.
    token = UNSIGNED.encode(KEY, BINDING)
    with pytest.raises(InvalidCursor, match="base64url"):
        UNSIGNED.decode(token[:10] + "!" + token[10:], BINDING, ATTRS)


@pytest.mark.parametrize("cursor", [None, 1, b"1.abc", "", ["1", "abc"]])
def test_non_strings_are_invalid(cursor: Any) -> None:
    with pytest.raises(InvalidCursor, match="non-empty string"):
        UNSIGNED.decode(cursor, BINDING, ATTRS)


# -- fuzzing: only ever a key or InvalidCursor ----------------------------------------------------


codecs = st.sampled_from(CODECS)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)
tags = st.sampled_from(["S", "N", "B", "SS", "M", "", "s"])
pairs = st.one_of(
    st.tuples(tags, st.text(max_size=30)).map(list),
    st.tuples(tags, json_values).map(list),
    st.lists(json_values, max_size=3),
    json_values,
)
payloads = st.one_of(
    st.fixed_dictionaries(
        {"b": st.sampled_from([BINDING, "other"]) | json_values},
        optional={"k": st.dictionaries(st.sampled_from(["PK", "SK", "GSI1PK", "x"]), pairs)},
    ),
    json_values,
)


@FUZZ
@given(codecs, st.text(max_size=300))
def test_random_text(codec: CursorCodec, text: str) -> None:
    outcome(codec, text)


@FUZZ
@given(codecs, st.binary(max_size=300))
def test_random_bytes_as_latin1(codec: CursorCodec, data: bytes) -> None:
    outcome(codec, data.decode("latin-1"))
    outcome(codec, "1." + data.decode("latin-1"))


@FUZZ
@given(codecs, payloads, st.sampled_from(["", ".", ".sig", ".é", "..x"]))
def test_valid_base64_of_random_json(codec: CursorCodec, payload: Any, tail: str) -> None:
    try:
        text = json.dumps(payload)
    except ValueError:
        return  # NaN and friends are still JSON to json.dumps; nothing else is
    key = outcome(codec, "1." + b64(text.encode()) + tail)
    if codec is not UNSIGNED:
        assert key is None  # a repository with a secret never accepts an unsigned cursor
    if key is not None:
        assert frozenset(key) == ATTRS
        assert all(len(av) == 1 and next(iter(av)) in ("S", "N", "B") for av in key.values())


@FUZZ
@given(codecs, st.integers(0, 400), st.text(max_size=40))
def test_valid_prefix_with_random_tail(codec: CursorCodec, cut: int, tail: str) -> None:
    token = codec.encode(KEY, BINDING)
    forged = token[:cut] + tail
    key = outcome(codec, forged)
    if key is not None and codec is not UNSIGNED:
        assert key == KEY  # a signed cursor decodes only as what was signed


@FUZZ
@given(st.lists(st.text(min_size=1, max_size=10) | st.binary(min_size=1, max_size=10), max_size=3))
def test_random_secrets(secrets: list[str | bytes]) -> None:
    codec = CursorCodec(secrets)
    token = codec.encode(KEY, BINDING)
    assert codec.decode(token, BINDING, ATTRS) == KEY
    outcome(codec, token + "x")
    outcome(codec, token.rpartition(".")[0] + ".é")


def test_a_codec_with_a_secret_refuses_an_unsigned_cursor() -> None:
    forged = UNSIGNED.encode(KEY, BINDING)
    assert UNSIGNED.decode(forged, BINDING, ATTRS) == KEY
    for codec in CODECS:
        if codec is not UNSIGNED:
            with pytest.raises(InvalidCursor):
                codec.decode(forged, BINDING, ATTRS)
