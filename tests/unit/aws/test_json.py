"""The response-body reader is ``json.loads(body.decode("utf-8"))``: the same value (type for
type, key order included) for every document, and the same exception for every refusal."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from singletable.aws._json import read_json


def outcome(read: Any, body: bytes) -> tuple[str, Any]:
    try:
        return ("value", exact(read(body)))
    except Exception as exc:  # the failure's class and words are part of the contract
        return ("error", (type(exc), str(exc)))


def exact(value: Any) -> Any:
    """``value`` as a tree that compares equal only for the same types, floats by their repr
    (``nan``, ``-0.0``) and dict keys in the same order."""
    if isinstance(value, dict):
        return ("dict", [(k, exact(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [exact(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def stdlib(body: bytes) -> Any:
    return json.loads(body.decode("utf-8"))


def same_as_stdlib(body: bytes) -> None:
    assert outcome(read_json, body) == outcome(stdlib, body), body


# -- documents -------------------------------------------------------------------------

NUMBER_TEXT = st.from_regex(r"\A-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][+-]?[0-9]{1,4})?\Z")
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**30, max_value=10**60)
    | st.floats()  # nan and infinities included: both read NaN and Infinity
    | st.text(),  # any code point, lone surrogates included
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300)
@given(value=json_values, ensure_ascii=st.booleans())
def test_a_document_reads_as_the_standard_library_reads_it(value: Any, ensure_ascii: bool) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    same_as_stdlib(text.encode("utf-8", "surrogatepass"))


@given(number=NUMBER_TEXT)
def test_a_number_reads_as_the_standard_library_reads_it(number: str) -> None:
    same_as_stdlib(number.encode())
    same_as_stdlib(f'{{"Count": {number}, "ConsumedCapacity": [{number}]}}'.encode())


# JSON's own characters and a few that are almost JSON: mutations near the grammar's edges
JSONISH = st.text(
    alphabet='{}[]:,"\\ -+.0123456789eEtrufalsnNIiy\t\n\r\x0c\x00u\ud800é', max_size=30
)


@settings(max_examples=300)
@given(text=JSONISH)
def test_text_near_json_reads_or_fails_as_the_standard_library(text: str) -> None:
    same_as_stdlib(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=300)
@given(value=json_values, cut=st.integers(0, 200), insert=st.binary(max_size=3))
def test_a_damaged_document_fails_as_the_standard_library(
    value: Any, cut: int, insert: bytes
) -> None:
    body = json.dumps(value).encode()
    cut = min(cut, len(body))
    same_as_stdlib(body[:cut] + insert + body[cut + 1 :])


@given(body=st.binary(max_size=40))
def test_any_bytes_read_or_fail_as_the_standard_library(body: bytes) -> None:
    same_as_stdlib(body)


# -- what the Rust parser refuses and the standard library reads ------------------------


def test_an_escaped_lone_surrogate_is_read_by_the_standard_library() -> None:
    body = b'{"S": "\\ud800x", "T": "\\udc00"}'
    assert read_json(body) == {"S": "\ud800x", "T": "\udc00"}


def test_nesting_deeper_than_the_rust_parser_goes_is_read_by_the_standard_library() -> None:
    body = b"[" * 300 + b"]" * 300  # jiter stops past 200 levels, Python near 1000
    value = read_json(body)
    for _ in range(299):
        (value,) = value
    assert value == []


def test_the_same_refusals_as_the_standard_library() -> None:
    for body in (b"", b"\xef\xbb\xbf{}", b'"\xff"', b'{"a": 1,}', b"{} {}", b"NaN x", b"01"):
        same_as_stdlib(body)
        assert outcome(read_json, body)[0] == "error"


def test_a_query_page_reads_alike() -> None:
    item = {"PK": {"S": "C#1"}, "n": {"N": "12.50"}, "m": {"M": {"l": {"L": [{"BOOL": True}]}}}}
    page = {"Items": [item] * 50, "Count": 50, "ScannedCount": 50, "LastEvaluatedKey": item}
    same_as_stdlib(json.dumps(page).encode())
