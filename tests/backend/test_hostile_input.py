"""Hostile or odd input over every backend: refused before anything is sent, naming the culprit.

* text that is not Unicode (a lone surrogate, which pydantic accepts in a ``str``): raw it was a
  ``UnicodeEncodeError`` in process, an HTTP 500 on moto's server and stored as-is by dynalite;
* keys longer than DynamoDB takes (2,048 UTF-8 bytes for a partition key, 1,024 for a sort
  key): moto answered with an unexplained ``ServiceError``, dynalite stored them;
* stored numbers outside DynamoDB's limits, which lax backends keep: reading them back is an
  ``ItemDecodeError`` naming the field (a huge exponent never returned from ``int()``).

Every refusal asserts its error class and code, the culprit in the message, that the recorder saw
no request, and that the table is still empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import pytest
from botocore.exceptions import ClientError

from singletable import (
    GSI,
    LSI,
    Attr,
    Entity,
    Param,
    Repository,
    Table,
    Transaction,
    Unique,
    collection,
    get,
    query,
    transaction,
)
from singletable.errors import (
    InvalidRequestError,
    ItemDecodeError,
    ItemEncodeError,
    KeyTemplateError,
    ModelDefinitionError,
)

hostile = Table(
    "Hostile", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), LSI("LSI1", sk="LSI1SK")]
)


class Note(Entity, table=hostile, type="NOTE"):
    owner: str
    note_id: str
    topic: str = "general"
    title: str = "untitled"
    label: str = "none"
    body: str = ""
    tags: set[str] = set()
    meta: dict[str, str] = {}
    views: int = 0

    class Keys:
        pk = "OWNER#{owner}"
        sk = "NOTE#{note_id}"
        GSI1 = ("TOPIC#{topic}", "TITLE#{title}")
        LSI1 = "LABEL#{label}"


class Member(Entity, table=hostile, type="MEMBER"):
    member_id: str
    email: Annotated[str, Unique()]  # its guard item's key holds the value

    class Keys:
        pk = "MEMBER#{member_id}"
        sk = "MEMBER"


class Notes(Repository, table=hostile):
    note = get(Note)
    notes = query(Note)
    by_topic = query(Note, index="GSI1")
    by_label = query(Note, index="LSI1")
    home = collection(Note)

    @transaction
    def create_both(self, tx: Transaction, first: Note, second: Note) -> None:
        tx.create(first)
        tx.create(second)

    @transaction
    def retitle(self, tx: Transaction, owner: str, note_id: str, title: str) -> None:
        tx.update(Note, owner=owner, note_id=note_id, set={"title": title})


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> Notes:
    notes: Notes = make_repo(Notes, hostile)
    return notes


def note(**changes: Any) -> Note:
    return Note(**{"owner": "ann", "note_id": "n1", **changes})


def stored(repo: Notes) -> list[dict[str, Any]]:
    return repo.client.scan(TableName=repo.table_name, ConsistentRead=True)["Items"]


def refused(repo: Notes, recorder: Any, call: Callable[[Notes], Any], error: type) -> Any:
    """The error ``call`` raises; asserts that nothing was sent and nothing stored."""
    recorder.clear()
    with pytest.raises(error) as info:
        call(repo)
    assert recorder.calls == [], recorder.describe()
    assert stored(repo) == []
    return info.value


# -- lone surrogates ---------------------------------------------------------------------------

BAD = "bad \ud800"

# (call, field at fault): every write path, with the value in a key field or an index key field
KEY_FIELD_WRITES = [
    (lambda r: r.put(note(owner=BAD)), "owner"),
    (lambda r: r.create(note(note_id=BAD)), "note_id"),
    (lambda r: r.put(note(topic=BAD)), "topic"),
    (lambda r: r.put(note(title=BAD)), "title"),
    (lambda r: r.put(note(label=BAD)), "label"),
    (lambda r: r.batch_put([note(note_id="ok"), note(note_id=BAD)]), "note_id"),
    (lambda r: r.create_both(note(note_id="ok"), note(title=BAD)), "title"),
    (lambda r: r.move(note(), note_id=BAD), "note_id"),
    (lambda r: r.update(note(), title=BAD), "title"),
    (lambda r: r.update(Note, owner="ann", note_id="n1", set={"title": BAD}), "title"),
    (lambda r: r.update(Note, owner=BAD, note_id="n1", set={"body": "x"}), "owner"),
    (lambda r: r.retitle("ann", "n1", BAD), "title"),
    (lambda r: r.delete(Note, owner="ann", note_id=BAD), "note_id"),
]


@pytest.mark.parametrize(("call", "field"), KEY_FIELD_WRITES)
def test_lone_surrogate_in_a_key_field_is_refused(
    repo: Notes, recorder: Any, call: Callable[[Notes], Any], field: str
) -> None:
    err = refused(repo, recorder, call, KeyTemplateError)
    assert err.code == "key-template" and err.key == field
    assert f"Note.{field}" in str(err) and "lone surrogate" in str(err)
    str(err).encode()  # the message itself is text (the value is shown escaped)


ATTRIBUTE_WRITES = [
    (lambda r: r.put(note(body=BAD)), "body"),
    (lambda r: r.create(note(tags={"fine", BAD})), "tags"),
    (lambda r: r.put(note(meta={BAD: "value"})), "meta"),
    (lambda r: r.put(note(meta={"key": BAD})), "meta"),
    (lambda r: r.batch_put([note(note_id="ok"), note(note_id="n2", body=BAD)]), "body"),
    (lambda r: r.create_both(note(note_id="ok"), note(body=BAD)), "body"),
    (lambda r: r.update(note(), body=BAD), "body"),
    (lambda r: r.update(Note, owner="ann", note_id="n1", set={"body": BAD}), "body"),
    (lambda r: r.update(Note, owner="ann", note_id="n1", set={"tags": {BAD}}), "tags"),
]


@pytest.mark.parametrize(("call", "field"), ATTRIBUTE_WRITES)
def test_lone_surrogate_in_an_attribute_is_refused(
    repo: Notes, recorder: Any, call: Callable[[Notes], Any], field: str
) -> None:
    err = refused(repo, recorder, call, ItemEncodeError)
    assert err.code == "item-encode" and err.key == field
    assert f"Note.{field} cannot be stored" in str(err) and "lone surrogate" in str(err)
    assert "bad" not in str(err)  # no item contents


READS = [
    (lambda r: r.note(owner=BAD, note_id="n1"), "owner"),
    (lambda r: r.note(owner="ann", note_id=BAD), "note_id"),
    (lambda r: r.notes(owner=BAD), "owner"),
    (lambda r: r.notes(owner="ann", note_id__gte=BAD), "note_id"),
    (lambda r: r.notes(owner="ann", note_id__begins_with=BAD), "note_id"),
    (lambda r: r.by_topic(topic=BAD), "topic"),
    (lambda r: r.by_topic(topic="t", title__between=("a", BAD)), "title"),
    (lambda r: r.by_label(owner="ann", label=BAD), "label"),
    (lambda r: r.home(owner=BAD), "owner"),
    (lambda r: r.batch_get([(Note, {"owner": "ann", "note_id": BAD})]), "note_id"),
]


@pytest.mark.parametrize(("call", "field"), READS)
def test_lone_surrogate_in_a_read_keyword_is_refused(
    repo: Notes, recorder: Any, call: Callable[[Notes], Any], field: str
) -> None:
    err = refused(repo, recorder, call, KeyTemplateError)
    assert err.code == "key-template" and err.key == field
    assert "lone surrogate" in str(err)


def test_valid_non_ascii_text_is_stored_and_read_back(repo: Notes) -> None:
    text = "héllo 😀 \u00e9\U0001f600 ünïcödé"
    written = repo.create(note(owner=text, note_id=text, title=text, body=text, tags={text}))
    assert repo.note(owner=text, note_id=text) == written
    assert [n.body for n in repo.by_topic(topic="general", title__begins_with="héllo")] == [text]


# -- key byte limits -----------------------------------------------------------------------------

LONG_SK = "😀" * 300  # 300 characters, 1,200 bytes: over a sort key's 1,024
LONG_PK = "😀" * 600  # 2,400 bytes: over a partition key's 2,048

# (call, attribute, limit)
OVERLONG_WRITES = [
    (lambda r: r.put(note(note_id=LONG_SK)), "SK", 1024),
    (lambda r: r.create(note(owner=LONG_PK)), "PK", 2048),
    (lambda r: r.put(note(topic=LONG_PK)), "GSI1PK", 2048),
    (lambda r: r.put(note(title=LONG_SK)), "GSI1SK", 1024),
    (lambda r: r.create(note(label=LONG_SK)), "LSI1SK", 1024),
    (lambda r: r.batch_put([note(note_id="ok"), note(title=LONG_SK)]), "GSI1SK", 1024),
    (lambda r: r.create_both(note(note_id="ok"), note(label=LONG_SK)), "LSI1SK", 1024),
    (lambda r: r.move(note(), note_id=LONG_SK), "SK", 1024),
    (lambda r: r.update(note(), title=LONG_SK), "GSI1SK", 1024),
    (lambda r: r.update(Note, owner="ann", note_id="n1", set={"title": LONG_SK}), "GSI1SK", 1024),
    (lambda r: r.update(Note, owner="ann", note_id="n1", set={"topic": LONG_PK}), "GSI1PK", 2048),
    (lambda r: r.update(Note, owner="ann", note_id="n1", set={"label": LONG_SK}), "LSI1SK", 1024),
    (lambda r: r.update(Note, owner=LONG_PK, note_id="n1", set={"body": "x"}), "PK", 2048),
    (lambda r: r.retitle("ann", "n1", LONG_SK), "GSI1SK", 1024),
    (lambda r: r.delete(Note, owner="ann", note_id=LONG_SK), "SK", 1024),
    # The guard item of a Unique() value: "__unique__#MEMBER#email#" + 2,040 bytes.
    (lambda r: r.create(Member(member_id="m1", email="e" * 2040)), "PK", 2048),
]


@pytest.mark.parametrize(("call", "attribute", "limit"), OVERLONG_WRITES)
def test_overlong_key_is_refused_on_every_write_path(
    repo: Notes, recorder: Any, call: Callable[[Notes], Any], attribute: str, limit: int
) -> None:
    err = refused(repo, recorder, call, KeyTemplateError)
    assert err.code == "key-template" and err.key == attribute
    message = str(err)
    assert f"key attribute {attribute!r}" in message and (
        "Note:" in message or "Member:" in message
    )
    assert f"{limit:,} bytes" in message and " bytes of UTF-8" in message
    assert "😀" not in message  # the size, not the value


def test_overlong_unique_guard_key_on_put_is_refused_before_any_write(
    repo: Notes, recorder: Any
) -> None:
    # put reads the stored item first (to move its guard); the refusal comes before any write.
    recorder.clear()
    with pytest.raises(KeyTemplateError) as info:
        repo.put(Member(member_id="m1", email="é" * 1020))
    assert recorder.operations in ([], ["GetItem"])
    assert stored(repo) == []
    assert info.value.key == "PK" and "Unique() guard" in str(info.value)


OVERLONG_READS = [
    (lambda r: r.note(owner="ann", note_id=LONG_SK), "SK", 1024),
    (lambda r: r.note(owner=LONG_PK, note_id="n1"), "PK", 2048),
    (lambda r: r.notes(owner=LONG_PK), "PK", 2048),
    (lambda r: r.notes(owner="ann", note_id__gte=LONG_SK), "SK", 1024),
    (lambda r: r.notes(owner="ann", note_id__begins_with=LONG_SK), "SK", 1024),
    (lambda r: r.by_topic(topic=LONG_PK), "GSI1PK", 2048),
    (lambda r: r.by_topic(topic="t", title__lt=LONG_SK), "GSI1SK", 1024),
    (lambda r: r.by_label(owner="ann", label__begins_with=LONG_SK), "LSI1SK", 1024),
    (lambda r: r.home(owner=LONG_PK), "PK", 2048),
    (lambda r: r.batch_get([(Note, {"owner": "ann", "note_id": LONG_SK})]), "SK", 1024),
    (lambda r: r.notes.count(owner="ann", note_id__lte=LONG_SK), "SK", 1024),
]


@pytest.mark.parametrize(("call", "attribute", "limit"), OVERLONG_READS)
def test_overlong_key_condition_is_refused_on_reads(
    repo: Notes, recorder: Any, call: Callable[[Notes], Any], attribute: str, limit: int
) -> None:
    err = refused(repo, recorder, call, KeyTemplateError)
    assert err.code == "key-template" and err.key == attribute
    assert f"{attribute!r}" in str(err) and f"{limit:,} bytes" in str(err)
    assert "😀" not in str(err)


def test_keys_exactly_at_the_limits_are_stored_and_read(repo: Notes) -> None:
    owner = "😀" * 510 + "xx"  # "OWNER#" + 2,042 bytes = 2,048
    note_id = "😀" * 254 + "abc"  # "NOTE#" + 1,019 bytes = 1,024
    title = "é" * 509  # "TITLE#" + 1,018 bytes = 1,024
    written = repo.create(note(owner=owner, note_id=note_id, title=title))
    item = stored(repo)[0]
    assert len(item["PK"]["S"].encode()) == 2048
    assert len(item["SK"]["S"].encode()) == len(item["GSI1SK"]["S"].encode()) == 1024
    assert repo.note(owner=owner, note_id=note_id) == written
    assert repo.notes(owner=owner, note_id__gte=note_id).items == [written]
    assert repo.by_topic(topic="general", title__lte=title).items == [written]


# -- stored numbers outside DynamoDB's limits ----------------------------------------------------

HUGE_EXPONENT = "1E999999999"  # int(Decimal(...)) of it never returned


@pytest.mark.parametrize("number", [HUGE_EXPONENT, "1E126", "1E-400", "1" * 60])
def test_stored_number_outside_limits_reads_as_item_decode_error(
    repo: Notes, backend: Any, number: str
) -> None:
    raw = note().to_item()
    raw["views"] = {"N": number}
    try:
        repo.client.put_item(TableName=repo.table_name, Item=raw)
    except ClientError as exc:
        # Refused server-side, as DynamoDB does: dynalite refuses every one of these; moto checks
        # through float() and refuses only the huge exponent (it keeps 1E126, which rounds to
        # its limit, 1E-400, which underflows to 0.0, and 60 digits). Nothing to read back.
        assert exc.response["Error"]["Code"] == "ValidationException"
        assert backend.name == "dynalite" or number == HUGE_EXPONENT, backend.name
        assert stored(repo) == []
        return
    with pytest.raises(ItemDecodeError) as info:
        repo.note(owner="ann", note_id="n1")
    err = info.value
    assert err.code == "item-decode" and "NOTE#n1" in str(err.key)
    assert "Note: views: a stored number" in str(err)
    assert err.message.endswith(("(DynamoDB keeps 38)", "(1E-130 to below 1E126)"))  # not the text
    with pytest.raises(ItemDecodeError):
        repo.notes(owner="ann")


# -- filter paths and key attributes --------------------------------------------------------------

# Paths that are no document path: a list index first, a non-ASCII digit (Arabic-Indic one),
# empty steps, stray brackets. Spliced into the expression text they reached the backend.
MALFORMED_PATHS = [
    "[0]",
    "x[\u0661]",
    "meta[\uff11]",
    "meta..a",
    "meta.",
    ".meta",
    "meta]x",
    "tags[",
    "a[-1]",
]

FILTERED_CALLS: list[Callable[[Notes, Any], Any]] = [
    lambda r, where: r.notes(owner="ann", where=where),
    lambda r, where: r.by_topic(topic="general", where=where),
    lambda r, where: r.home(owner="ann", where=where),
    lambda r, where: r.notes.count(owner="ann", where=where),
    lambda r, where: r.create(note(), condition=where),
    lambda r, where: r.update(Note, owner="ann", note_id="n1", set={"views": 1}, condition=where),
]


@pytest.mark.parametrize("path", MALFORMED_PATHS)
@pytest.mark.parametrize("call", FILTERED_CALLS)
def test_a_malformed_attribute_path_is_refused_before_sending(
    repo: Notes, recorder: Any, path: str, call: Callable[[Notes, Any], Any]
) -> None:
    err = refused(repo, recorder, lambda r: call(r, Attr(path).eq("x")), InvalidRequestError)
    assert err.code == "invalid-request" and repr(path) in err.message and err.key == path


@pytest.mark.parametrize(
    ("call", "attribute"),
    [
        (lambda r: r.notes(owner="ann", where=Attr("SK").begins_with("NOTE#")), "SK"),
        (lambda r: r.notes(owner="ann", where=Attr("PK").eq("OWNER#ann")), "PK"),
        (lambda r: r.notes(owner="ann", where=Attr("title").eq(Attr("SK"))), "SK"),
        (lambda r: r.notes(owner="ann", where=Attr("SK.part").exists()), "SK"),
        (lambda r: r.by_topic(topic="general", where=Attr("GSI1SK").gt("TITLE#a")), "GSI1SK"),
        (lambda r: r.by_topic(topic="general", where=Attr("GSI1PK").exists()), "GSI1PK"),
        (lambda r: r.by_label(owner="ann", where=~Attr("LSI1SK").eq("LABEL#x")), "LSI1SK"),
        (lambda r: r.home(owner="ann", where=Attr("views").gt(0) | Attr("SK").exists()), "SK"),
        (lambda r: r.notes.first(owner="ann", where=Attr("SK").exists()), "SK"),
    ],
)
def test_a_filter_on_a_key_attribute_is_refused_naming_it(
    repo: Notes, recorder: Any, call: Callable[[Notes], Any], attribute: str
) -> None:
    """DynamoDB refuses a filter on a key attribute of the table or index queried (dynalite
    does too; moto filters): refused before sending, naming the attribute."""
    err = refused(repo, recorder, call, InvalidRequestError)
    assert err.key == attribute and f"the filter reads {attribute}, a key attribute" in err.message


def test_a_filter_on_another_index_key_attribute_is_sent(repo: Notes, recorder: Any) -> None:
    """Only the queried index's own key attributes are refused: a GSI query may filter on the
    table's key, and every backend answers it."""
    repo.put(note(note_id="n1", title="a"))
    repo.put(note(note_id="n2", title="b"))
    with recorder.expect("Query"):
        page = repo.by_topic(topic="general", where=Attr("SK").eq("NOTE#n2"))
    assert [n.note_id for n in page] == ["n2"]


def test_a_declared_filter_on_a_key_attribute_fails_at_class_creation() -> None:
    with pytest.raises(ModelDefinitionError, match=r"Bad\.by_sk: the filter reads SK, a key"):

        class Bad(Repository, table=hostile):
            by_sk = query(Note, where=Attr("SK").begins_with(Param("prefix")))
