"""The requests of whole-item writes and of unique guards, piece by piece (pure: no backend).

:func:`compile_create`, :func:`compile_put`, :func:`compile_delete`, the condition checks and
the guard ops: their conditions (absent, version, unique values read first, unchanged stored
values, no live entity), the guard items they carry (owner, TTL), and the 400 KB item limit.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from singletable import Attr
from singletable._context import WriteContext
from singletable._entity import spec_of
from singletable._verbs.guards import guard_delete, guard_key, guard_put
from singletable._verbs.ops import compile_condition_check, exists_check
from singletable._verbs.single import compile_create, compile_delete, compile_put
from singletable._wire import MAX_ITEM_BYTES, item_size
from singletable.errors import (
    AlreadyExists,
    ConditionFailed,
    ItemTooLargeError,
    KeyTemplateError,
    NotFound,
    UniqueConstraintViolation,
    VersionConflict,
)
from tests.models import Customer, Invite, Order, Player, Product, Status

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
NOW_TEXT = "2026-03-01T12:00:00.000000Z"
NOW_EPOCH = "1772366400"
TOMORROW_EPOCH = "1772452800"
CTX = WriteContext("Shop", NOW)

CUSTOMER_KEY = {"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}}
CUSTOMER_OWNER = {"S": '["CUSTOMER#c1", "PROFILE"]'}  # a guard's _owner: the owner's key values
GUARD_CLAIM = "attribute_not_exists(#cn0) OR #cn1 = :cv0 OR #cn2 < :cv1"
GUARD_CLAIM_NAMES = {"#cn0": "PK", "#cn1": "_owner", "#cn2": "expires_at"}
GUARD_RELEASE = "attribute_not_exists(#cn0) OR #cn1 = :cv0"


def lamp(**changes: Any) -> Product:
    values: dict[str, Any] = {
        "product_id": "p1",
        "name": "Lamp",
        "category": "home",
        "price": Decimal("9.5"),
        "stock": 3,
    }
    return Product(**{**values, **changes})


LAMP_ITEM = {
    "PK": {"S": "PRODUCT#p1"},
    "SK": {"S": "DETAILS"},
    "GSI1PK": {"S": "CATEGORY#home"},
    "GSI1SK": {"S": "PRODUCT#p1"},
    "_type": {"S": "PRODUCT"},
    "product_id": {"S": "p1"},
    "name": {"S": "Lamp"},
    "category": {"S": "home"},
    "price": {"N": "9.5"},
    "stock": {"N": "3"},
}


def ann(**changes: Any) -> Customer:
    return Customer(**{"customer_id": "c1", "name": "Ann", "email": "a@x", **changes})


def ann_item(version: int, email: str = "a@x") -> dict[str, Any]:
    return {
        "PK": {"S": "CUSTOMER#c1"},
        "SK": {"S": "PROFILE"},
        "GSI1PK": {"S": f"EMAIL#{email}"},
        "GSI1SK": {"S": "CUSTOMER#c1"},
        "_type": {"S": "CUSTOMER"},
        "customer_id": {"S": "c1"},
        "name": {"S": "Ann"},
        "email": {"S": email},
        "version": {"N": str(version)},
        "created": {"S": NOW_TEXT},
        "updated": {"S": NOW_TEXT},
    }


def email_guard_item(email: str) -> dict[str, Any]:
    return {
        "PK": {"S": f"__unique__#CUSTOMER#email#{email}"},
        "SK": {"S": "__unique__"},
        "_type": {"S": "__unique__"},
        "_owner": CUSTOMER_OWNER,
    }


# -- create ------------------------------------------------------------------------------------


def test_create_requires_the_item_to_be_absent() -> None:
    op = compile_create(spec_of(Product), lamp(), CTX)
    assert (op.kind, op.operation, op.describe) == (
        "create",
        "PutItem",
        "Product(PK='PRODUCT#p1', SK='DETAILS')",
    )
    assert op.params == {
        "TableName": "Shop",
        "Item": LAMP_ITEM,
        "ConditionExpression": "attribute_not_exists(#cn0)",
        "ExpressionAttributeNames": {"#cn0": "PK"},
    }
    assert op.key == {"PK": {"S": "PRODUCT#p1"}, "SK": {"S": "DETAILS"}}
    assert op.result == lamp() and op.guards == []
    taken = op.fail(LAMP_ITEM)
    assert isinstance(taken, AlreadyExists) and taken.item == lamp()


def test_create_with_a_condition_adds_it_after_absence() -> None:
    op = compile_create(spec_of(Product), lamp(), CTX, Attr("stock").gte(1))
    assert op.params["ConditionExpression"] == "(attribute_not_exists(#cn0)) AND (#cn1 >= :cv0)"
    assert op.params["ExpressionAttributeNames"] == {"#cn0": "PK", "#cn1": "stock"}
    assert op.params["ExpressionAttributeValues"] == {":cv0": {"N": "1"}}
    failed = op.fail(None)  # no item came back: the caller's condition failed
    assert isinstance(failed, ConditionFailed) and not isinstance(failed, AlreadyExists)
    assert failed.message == (
        "creating Product PK='PRODUCT#p1', SK='DETAILS': the condition= you passed did not "
        "hold: stock >= ?"
    )


def test_create_stamps_the_markers_and_claims_each_unique_value() -> None:
    op = compile_create(spec_of(Customer), ann(), CTX)
    assert op.params["Item"] == ann_item(version=1)
    assert op.params["ConditionExpression"] == "attribute_not_exists(#cn0)"
    assert op.result == ann(version=1, created=NOW, updated=NOW)
    (guard,) = op.guards
    assert (guard.kind, guard.operation, guard.describe) == ("guard_put", "PutItem", "unique email")
    assert guard.params == {
        "TableName": "Shop",
        "Item": email_guard_item("a@x"),
        # absent, already ours, or expired (the table has a TTL attribute)
        "ConditionExpression": GUARD_CLAIM,
        "ExpressionAttributeNames": GUARD_CLAIM_NAMES,
        "ExpressionAttributeValues": {":cv0": CUSTOMER_OWNER, ":cv1": {"N": NOW_EPOCH}},
    }


def test_an_expiring_entity_may_replace_an_expired_item_and_its_guard_expires_with_it() -> None:
    invite = Invite(invite_id="i1", code="C0DE", expires_at=NOW + timedelta(days=1))
    op = compile_create(spec_of(Invite), invite, CTX)
    assert op.params == {
        "TableName": "Shop",
        "Item": {
            "PK": {"S": "INVITE#i1"},
            "SK": {"S": "INVITE"},
            "_type": {"S": "INVITE"},
            "invite_id": {"S": "i1"},
            "code": {"S": "C0DE"},
            "expires_at": {"N": TOMORROW_EPOCH},
        },
        "ConditionExpression": "attribute_not_exists(#cn0) OR #cn1 < :cv0",
        "ExpressionAttributeNames": {"#cn0": "PK", "#cn1": "expires_at"},
        "ExpressionAttributeValues": {":cv0": {"N": NOW_EPOCH}},
    }
    (guard,) = op.guards
    assert guard.params["Item"] == {
        "PK": {"S": "__unique__#INVITE#code#C0DE"},
        "SK": {"S": "__unique__"},
        "_type": {"S": "__unique__"},
        "_owner": {"S": '["INVITE#i1", "INVITE"]'},
        "expires_at": {"N": TOMORROW_EPOCH},
    }


# -- put ---------------------------------------------------------------------------------------


def test_put_of_an_entity_without_version_or_unique_is_unconditional() -> None:
    op = compile_put(spec_of(Product), lamp(), CTX)
    assert (op.kind, op.operation) == ("put", "PutItem")
    assert op.params == {"TableName": "Shop", "Item": LAMP_ITEM}
    assert op.guards == []


def test_put_of_version_0_requires_the_item_to_be_absent() -> None:
    op = compile_put(spec_of(Customer), ann(), CTX)
    assert op.params == {
        "TableName": "Shop",
        "Item": ann_item(version=1),
        "ConditionExpression": "attribute_not_exists(#cn0)",
        "ExpressionAttributeNames": {"#cn0": "PK"},
    }
    assert op.guards == []  # the stored item was not read (previous_known=False): no guard moves
    conflict = op.fail(ann_item(version=4))
    assert isinstance(conflict, VersionConflict)
    assert conflict.message == (
        "Customer PK='CUSTOMER#c1', SK='PROFILE' is at version 4, not 0; reload it and retry"
    )


def test_put_of_a_new_unique_entity_read_first_claims_its_values() -> None:
    op = compile_put(spec_of(Customer), ann(), CTX, previous=None, previous_known=True)
    # No stored item was found: it must still be absent, or hold no email.
    assert op.params["ConditionExpression"] == (
        "(attribute_not_exists(#cn0)) AND ((attribute_not_exists(#cn0)) OR "
        "(attribute_not_exists(#cn1)))"
    )
    assert op.params["ExpressionAttributeNames"] == {"#cn0": "PK", "#cn1": "email"}
    assert "ExpressionAttributeValues" not in op.params
    (guard,) = op.guards
    assert guard.kind == "guard_put" and guard.params["Item"] == email_guard_item("a@x")


def test_put_of_a_stored_version_moves_the_guard_of_a_changed_unique_value() -> None:
    stored = ann(version=3, created=NOW, updated=NOW)
    op = compile_put(
        spec_of(Customer),
        ann(version=3, email="b@x", created=NOW),
        CTX,
        previous=stored,
        previous_known=True,
    )
    assert op.params["Item"] == ann_item(version=4, email="b@x")
    assert op.params["ConditionExpression"] == "(#cn0 = :cv0) AND (#cn1 = :cv1)"
    assert op.params["ExpressionAttributeNames"] == {"#cn0": "version", "#cn1": "email"}
    assert op.params["ExpressionAttributeValues"] == {":cv0": {"N": "3"}, ":cv1": {"S": "a@x"}}
    released, claimed = op.guards
    assert released.params == {
        "TableName": "Shop",
        "Key": {"PK": {"S": "__unique__#CUSTOMER#email#a@x"}, "SK": {"S": "__unique__"}},
        "ConditionExpression": GUARD_RELEASE,
        "ExpressionAttributeNames": {"#cn0": "PK", "#cn1": "_owner"},
        "ExpressionAttributeValues": {":cv0": CUSTOMER_OWNER},
    }
    assert claimed.params["Item"] == email_guard_item("b@x")
    # The stored email moved under the put (the version did not): the error names the field.
    moved = spec_of(Customer).to_item(stored.model_copy(update={"email": "c@x"}))
    error = op.fail(moved)
    assert isinstance(error, ConditionFailed) and not isinstance(error, VersionConflict)
    assert "the stored email changed since the write read it" in error.message
    assert "c@x" not in error.message


def test_put_of_an_unchanged_unique_value_claims_it_again() -> None:
    stored = ann(version=3)
    op = compile_put(spec_of(Customer), ann(version=3), CTX, previous=stored, previous_known=True)
    (claimed,) = op.guards  # re-claimed (a no-op when ours), never released
    assert claimed.kind == "guard_put" and claimed.params["Item"] == email_guard_item("a@x")


# -- delete ------------------------------------------------------------------------------------


def test_delete_by_key_returns_the_old_item_and_nothing_more() -> None:
    op = compile_delete(spec_of(Customer), CTX, key=CUSTOMER_KEY)
    assert (op.kind, op.operation) == ("delete", "DeleteItem")
    assert op.params == {"TableName": "Shop", "Key": CUSTOMER_KEY, "ReturnValues": "ALL_OLD"}
    assert op.guards == []


def test_delete_of_an_instance_checks_its_version_and_releases_its_unique_values() -> None:
    op = compile_delete(
        spec_of(Customer),
        CTX,
        key=CUSTOMER_KEY,
        instance=ann(version=2),
        must_exist=True,
        unique_values={"email": "a@x"},
    )
    assert op.params == {
        "TableName": "Shop",
        "Key": CUSTOMER_KEY,
        "ConditionExpression": "(attribute_exists(#cn0)) AND (#cn1 = :cv0) AND (#cn2 = :cv1)",
        "ExpressionAttributeNames": {"#cn0": "PK", "#cn1": "version", "#cn2": "email"},
        "ExpressionAttributeValues": {":cv0": {"N": "2"}, ":cv1": {"S": "a@x"}},
        "ReturnValues": "ALL_OLD",
    }
    (released,) = op.guards
    assert released.kind == "guard_delete"
    assert released.key == {"PK": {"S": "__unique__#CUSTOMER#email#a@x"}, "SK": {"S": "__unique__"}}
    gone = op.fail(None)
    assert isinstance(gone, NotFound)
    assert gone.message == "Customer PK='CUSTOMER#c1', SK='PROFILE' does not exist"


def test_delete_read_as_absent_requires_no_live_entity_of_its_type() -> None:
    op = compile_delete(
        spec_of(Customer), CTX, key=CUSTOMER_KEY, absent=True, unique_values={"email": None}
    )
    assert op.params["ConditionExpression"] == (
        "(attribute_not_exists(#cn0) OR #cn1 <> :cv0) AND (attribute_not_exists(#cn2))"
    )
    assert op.params["ExpressionAttributeNames"] == {"#cn0": "PK", "#cn1": "_type", "#cn2": "email"}
    assert op.params["ExpressionAttributeValues"] == {":cv0": {"S": "CUSTOMER"}}
    assert op.guards == []  # no stored email, no guard to release
    raced = op.fail(ann_item(version=1))
    assert isinstance(raced, ConditionFailed)
    assert "the item was created after the delete read it as absent" in raced.message


def test_delete_of_an_unchanged_entity_with_a_ttl() -> None:
    order = Order(
        customer_id="c",
        order_id="o",
        created_at=NOW,
        status=Status.PENDING,
        total=Decimal("5"),
        customer_name="Ann",
    )
    spec = spec_of(Order)
    key = spec.primary_key(spec.key_values(order))
    op = compile_delete(
        spec, CTX, key=key, absent=True, unchanged=order, condition=Attr("total").lt(10)
    )
    # The caller's condition, then: no live order (expired counts as gone), then every stored
    # scalar as it was read (no expires_at stored: it must still be absent).
    assert op.params["ConditionExpression"] == (
        "(#cn0 < :cv0) AND (attribute_not_exists(#cn1) OR #cn2 <> :cv1 OR #cn3 < :cv2) AND "
        "((#cn4 = :cv3) AND (#cn5 = :cv4) AND (#cn6 = :cv5) AND (#cn7 = :cv6) AND "
        "(#cn0 = :cv7) AND (#cn8 = :cv8) AND (attribute_not_exists(#cn3)))"
    )
    assert op.params["ExpressionAttributeNames"] == {
        "#cn0": "total",
        "#cn1": "PK",
        "#cn2": "_type",
        "#cn3": "expires_at",
        "#cn4": "customer_id",
        "#cn5": "order_id",
        "#cn6": "created_at",
        "#cn7": "status",
        "#cn8": "customer_name",
    }
    assert op.params["ExpressionAttributeValues"] == {
        ":cv0": {"N": "10"},
        ":cv1": {"S": "ORDER"},
        ":cv2": {"N": NOW_EPOCH},
        ":cv3": {"S": "c"},
        ":cv4": {"S": "o"},
        ":cv5": {"S": NOW_TEXT},
        ":cv6": {"S": "PENDING"},
        ":cv7": {"N": "5"},
        ":cv8": {"S": "Ann"},
    }


# -- condition checks --------------------------------------------------------------------------


def test_condition_check_and_exists_check() -> None:
    spec = spec_of(Order)
    key = {"PK": {"S": "CUSTOMER#c"}, "SK": {"S": f"ORDER#{NOW_TEXT}#o"}}
    check = compile_condition_check(spec, CTX, key=key, condition=Attr("status").eq("PENDING"))
    assert (check.kind, check.operation) == ("condition_check", "ConditionCheck")
    assert check.params == {
        "TableName": "Shop",
        "Key": key,
        "ConditionExpression": "#cn0 = :cv0",
        "ExpressionAttributeNames": {"#cn0": "status"},
        "ExpressionAttributeValues": {":cv0": {"S": "PENDING"}},
    }
    assert check.transact_item("Shop-physical") == {
        "ConditionCheck": {**check.params, "TableName": "Shop-physical"}
        | {"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    }
    exists = exists_check(spec, CTX, key, None)
    assert exists.params == {
        "TableName": "Shop",
        "Key": key,
        "ConditionExpression": (
            "attribute_exists(#cn0) AND (attribute_not_exists(#cn1) OR #cn1 >= :cv0)"
        ),
        "ExpressionAttributeNames": {"#cn0": "PK", "#cn1": "expires_at"},
        "ExpressionAttributeValues": {":cv0": {"N": NOW_EPOCH}},
    }
    assert isinstance(exists.fail(None), NotFound)


# -- guard ops ---------------------------------------------------------------------------------


def test_guard_key_escapes_the_value() -> None:
    assert guard_key(spec_of(Customer), "email", "a#b") == {
        "PK": {"S": "__unique__#CUSTOMER#email#a%23b"},
        "SK": {"S": "__unique__"},
    }


def test_a_guard_claimed_for_a_move_may_still_belong_to_the_previous_owner() -> None:
    new_owner = {"PK": {"S": "CUSTOMER#c2"}, "SK": {"S": "PROFILE"}}
    ttl = {"N": TOMORROW_EPOCH}
    op = guard_put(
        spec_of(Customer), "email", "a@x", new_owner, ttl, CTX, previous_owner=CUSTOMER_KEY
    )
    assert op.params == {
        "TableName": "Shop",
        "Item": {
            "PK": {"S": "__unique__#CUSTOMER#email#a@x"},
            "SK": {"S": "__unique__"},
            "_type": {"S": "__unique__"},
            "_owner": {"S": '["CUSTOMER#c2", "PROFILE"]'},
            "expires_at": ttl,
        },
        "ConditionExpression": (
            "attribute_not_exists(#cn0) OR #cn1 = :cv0 OR #cn1 = :cv1 OR #cn2 < :cv2"
        ),
        "ExpressionAttributeNames": GUARD_CLAIM_NAMES,
        "ExpressionAttributeValues": {
            ":cv0": {"S": '["CUSTOMER#c2", "PROFILE"]'},
            ":cv1": CUSTOMER_OWNER,
            ":cv2": {"N": NOW_EPOCH},
        },
    }
    taken = op.fail(None)
    assert isinstance(taken, UniqueConstraintViolation)
    assert (taken.key, taken.field) == (
        "PK='__unique__#CUSTOMER#email#a@x', SK='__unique__'",
        "email",
    )


def test_guards_on_a_table_without_ttl_carry_no_expiry() -> None:
    # The game table has its own key names and no TTL attribute: a TTL given is dropped and
    # the claim has no expiry clause.
    spec = spec_of(Player)
    owner = {"partitionId": {"S": "PLAYER#p1"}, "rangeId": {"S": "PROFILE"}}
    claim = guard_put(
        spec, "handle", "neo", owner, {"N": TOMORROW_EPOCH}, WriteContext("Game", NOW)
    )
    assert claim.params == {
        "TableName": "Game",
        "Item": {
            "partitionId": {"S": "__unique__#PLAYER#handle#neo"},
            "rangeId": {"S": "__unique__"},
            "_type": {"S": "__unique__"},
            "_owner": {"S": '["PLAYER#p1", "PROFILE"]'},
        },
        "ConditionExpression": "attribute_not_exists(#cn0) OR #cn1 = :cv0",
        "ExpressionAttributeNames": {"#cn0": "partitionId", "#cn1": "_owner"},
        "ExpressionAttributeValues": {":cv0": {"S": '["PLAYER#p1", "PROFILE"]'}},
    }
    release = guard_delete(spec, "handle", "neo", owner, WriteContext("Game", NOW))
    assert release.params == {
        "TableName": "Game",
        "Key": {
            "partitionId": {"S": "__unique__#PLAYER#handle#neo"},
            "rangeId": {"S": "__unique__"},
        },
        "ConditionExpression": GUARD_RELEASE,
        "ExpressionAttributeNames": {"#cn0": "partitionId", "#cn1": "_owner"},
        "ExpressionAttributeValues": {":cv0": {"S": '["PLAYER#p1", "PROFILE"]'}},
    }
    held = release.fail(None)
    assert isinstance(held, ConditionFailed)
    assert held.key == "partitionId='__unique__#PLAYER#handle#neo', rangeId='__unique__'"


# -- size --------------------------------------------------------------------------------------


def padded_lamp(total_bytes: int) -> Product:
    """A product whose stored item is ``total_bytes`` long (its name pads it)."""
    base = item_size(spec_of(Product).to_item(lamp(name="")))
    return lamp(name="n" * (total_bytes - base))


@pytest.mark.parametrize("compile_write", [compile_put, compile_create])
def test_an_item_of_the_limit_is_written_and_one_byte_more_is_refused(compile_write: Any) -> None:
    op = compile_write(spec_of(Product), padded_lamp(MAX_ITEM_BYTES), CTX)
    assert item_size(op.params["Item"]) == MAX_ITEM_BYTES
    with pytest.raises(ItemTooLargeError) as caught:
        compile_write(spec_of(Product), padded_lamp(MAX_ITEM_BYTES + 1), CTX)
    assert caught.value.size == MAX_ITEM_BYTES + 1
    assert caught.value.key == "Product(PK='PRODUCT#p1', SK='DETAILS')"
    assert "409,601 bytes" in caught.value.message and "nnn" not in caught.value.message


def test_a_guard_key_of_the_limit_is_written_and_one_byte_more_is_refused() -> None:
    prefix = len("__unique__#INVITE#code#")
    fits = compile_create(spec_of(Invite), Invite(invite_id="i1", code="x" * (2048 - prefix)), CTX)
    assert len(fits.guards[0].key["PK"]["S"]) == 2048
    with pytest.raises(KeyTemplateError) as caught:
        compile_create(spec_of(Invite), Invite(invite_id="i1", code="x" * (2049 - prefix)), CTX)
    assert caught.value.key == "PK"
    assert caught.value.message.startswith(
        "Invite: the Unique() guard's key attribute 'PK' (unique guard '{code}') would be "
        "2,049 bytes of UTF-8; DynamoDB's limit for a partition key is 2,048 bytes"
    )
