"""The UpdateItem requests :func:`compile_update` builds, piece by piece (pure: no backend).

Each test pins the exact UpdateExpression, ConditionExpression, names and values: the clauses
(set, remove, add, delete, append, if_not_exists), the maintained fields, index key attributes
rewritten one attribute at a time, sparse-index membership, the refusals of a callable ``when=``
that needs a field the update does not know, the version and source conditions of the instance
form, unique guards that move, and upserts.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any

import pytest
from pydantic import Field

from singletable import Attr, Entity, Table
from singletable._context import WriteContext
from singletable._entity import spec_of
from singletable._verbs.update import compile_update
from singletable.errors import InvalidRequestError, KeyTemplateError, NotFound, VersionConflict
from tests.models import (
    Customer,
    Invite,
    Job,
    Order,
    PlayerRating,
    Product,
    Profile,
    Status,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
NOW_TEXT = "2026-03-01T12:00:00.000000Z"
NOW_EPOCH = "1772366400"
CTX = WriteContext("Shop", NOW)

PRODUCT_KEY = {"PK": {"S": "PRODUCT#p1"}, "SK": {"S": "DETAILS"}}
PROFILE_KEY = {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}}
CUSTOMER_KEY = {"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}}
JOB_KEY = {"PK": {"S": "JOB#j"}, "SK": {"S": "JOB"}}
ORDER_KEY_FIELDS = {"customer_id": "c", "created_at": NOW, "order_id": "o"}
ORDER_KEY = {"PK": {"S": "CUSTOMER#c"}, "SK": {"S": f"ORDER#{NOW_TEXT}#o"}}
EXISTS = "attribute_exists(#cn0)"  # the item must exist: every update that is not an upsert
EXISTS_UNEXPIRED = "attribute_exists(#cn0) AND (attribute_not_exists(#cn1) OR #cn1 >= :cv0)"


def update(cls: type[Entity], key_fields: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The params of ``compile_update`` for ``cls`` at ``key_fields``, at NOW."""
    return compile_update(spec_of(cls), CTX, key_fields=key_fields, **changes).params


# -- the clauses -------------------------------------------------------------------------------


def test_set_writes_each_field_and_requires_the_item() -> None:
    params = update(Product, {"product_id": "p1"}, set_values={"name": "Lamp", "stock": 3})
    assert params == {
        "TableName": "Shop",
        "Key": PRODUCT_KEY,
        "UpdateExpression": "SET #n0 = :v0, #n1 = :v1",
        "ConditionExpression": EXISTS,
        "ExpressionAttributeNames": {"#n0": "name", "#n1": "stock", "#cn0": "PK"},
        "ExpressionAttributeValues": {":v0": {"S": "Lamp"}, ":v1": {"N": "3"}},
        "ReturnValues": "ALL_NEW",
    }


def test_remove_add_and_append() -> None:
    params = update(
        Profile,
        {"user_id": "u1"},
        remove=["nickname"],
        add={"visits": 1, "tags": {"a"}},
        append={"history": ["x"]},
    )
    # append= is list_append onto the list, or onto an empty list when there is none yet.
    assert params["UpdateExpression"] == (
        "SET #n3 = list_append(if_not_exists(#n3, :v2), :v3) REMOVE #n0 ADD #n1 :v0, #n2 :v1"
    )
    assert params["ExpressionAttributeNames"] == {
        "#n0": "nickname",
        "#n1": "visits",
        "#n2": "tags",
        "#n3": "history",
        "#cn0": "PK",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"N": "1"},
        ":v1": {"SS": ["a"]},
        ":v2": {"L": []},
        ":v3": {"L": [{"S": "x"}]},
    }
    assert params["ConditionExpression"] == EXISTS


def test_delete_from_a_set_and_if_not_exists() -> None:
    params = update(
        Profile, {"user_id": "u1"}, delete={"tags": ["b", "a"]}, if_not_exists={"nickname": "n"}
    )
    assert params["UpdateExpression"] == "SET #n0 = if_not_exists(#n0, :v0) DELETE #n1 :v1"
    assert params["ExpressionAttributeNames"] == {"#n0": "nickname", "#n1": "tags", "#cn0": "PK"}
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "n"},
        ":v1": {"SS": ["a", "b"]},  # a list given to delete= is a set
    }


def test_set_to_none_removes_the_attribute() -> None:
    params = update(Profile, {"user_id": "u1"}, set_values={"nickname": None})
    assert params["UpdateExpression"] == "REMOVE #n0"
    assert params["ExpressionAttributeNames"] == {"#n0": "nickname", "#cn0": "PK"}
    assert "ExpressionAttributeValues" not in params


def test_the_callers_condition_comes_first_with_its_own_placeholders() -> None:
    params = update(
        Product, {"product_id": "p1"}, add={"stock": -2}, condition=Attr("stock").gte(2)
    )
    assert params["UpdateExpression"] == "ADD #n0 :v0"
    assert params["ConditionExpression"] == "(#cn0 >= :cv0) AND (attribute_exists(#cn1))"
    # The update's names and the condition's are separate placeholders for one attribute.
    assert params["ExpressionAttributeNames"] == {"#n0": "stock", "#cn0": "stock", "#cn1": "PK"}
    assert params["ExpressionAttributeValues"] == {":v0": {"N": "-2"}, ":cv0": {"N": "2"}}


def test_maintained_fields_change_on_every_update() -> None:
    params = update(Customer, {"customer_id": "c1"}, set_values={"name": "Ann"})
    assert params["UpdateExpression"] == "SET #n0 = :v0, #n2 = :v2 ADD #n1 :v1"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "name",
        "#n1": "version",
        "#n2": "updated",
        "#cn0": "PK",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "Ann"},
        ":v1": {"N": "1"},  # Version(): add 1
        ":v2": {"S": NOW_TEXT},  # UpdatedAt(): now
    }
    assert params["ConditionExpression"] == EXISTS  # the keyword form has no version to check


def test_an_entity_with_a_ttl_requires_an_unexpired_item() -> None:
    params = update(Order, ORDER_KEY_FIELDS, set_values={"customer_name": "Bob"})
    assert params["Key"] == ORDER_KEY
    assert params["UpdateExpression"] == "SET #n0 = :v0"
    assert params["ConditionExpression"] == EXISTS_UNEXPIRED
    assert params["ExpressionAttributeNames"] == {
        "#n0": "customer_name",
        "#cn0": "PK",
        "#cn1": "expires_at",
    }
    assert params["ExpressionAttributeValues"] == {":v0": {"S": "Bob"}, ":cv0": {"N": NOW_EPOCH}}


def test_in_a_transaction_the_update_keeps_its_pieces_and_returns_the_old_item_on_failure() -> None:
    op = compile_update(spec_of(Product), CTX, key_fields={"product_id": "p1"}, add={"stock": 1})
    assert (op.kind, op.operation, op.describe) == (
        "update",
        "UpdateItem",
        "Product(PK='PRODUCT#p1', SK='DETAILS')",
    )
    assert op.guards == []
    assert op.transact_item("Shop-physical") == {
        "Update": {
            "TableName": "Shop-physical",
            "Key": PRODUCT_KEY,
            "UpdateExpression": "ADD #n0 :v0",
            "ConditionExpression": EXISTS,
            "ExpressionAttributeNames": {"#n0": "stock", "#cn0": "PK"},
            "ExpressionAttributeValues": {":v0": {"N": "1"}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }
    missing = op.fail(None)
    assert isinstance(missing, NotFound)
    assert missing.key == "PK='PRODUCT#p1', SK='DETAILS'"
    assert "pass upsert=True to create it" in missing.message


# -- index key attributes, one attribute at a time ---------------------------------------------


def test_only_the_index_attribute_whose_template_reads_the_field_is_rewritten() -> None:
    # gsi = ("RANKED#{season}", "SCORE#{rating:05d}"): a new rating rewrites the sort key only,
    # so the update needs neither the season nor anything else.
    params = compile_update(
        spec_of(PlayerRating),
        WriteContext("Game", NOW),
        key_fields={"player_id": "p1"},
        set_values={"rating": 1200},
    ).params
    assert params["Key"] == {"partitionId": {"S": "PLAYER#p1"}, "rangeId": {"S": "RATING"}}
    assert params["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "rating",
        "#n1": "gsiSort",
        "#cn0": "partitionId",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"N": "1200"},
        ":v1": {"S": "SCORE#01200"},
    }


def test_a_partition_key_of_two_fields_is_rewritten_when_both_are_known() -> None:
    # GSI1 = ("QUEUE#{queue}#OWNER#{owner}", "PRIORITY#{priority:03d}#{job_id}"): GSI1SK stays.
    params = update(
        Job, {"job_id": "j"}, set_values={"owner": "bob", "queue": "q", "status": Status.SHIPPED}
    )
    assert params["Key"] == JOB_KEY
    assert (
        params["UpdateExpression"]
        == "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = :v3 REMOVE #n4, #n5"
    )
    assert params["ExpressionAttributeNames"] == {
        "#n0": "owner",
        "#n1": "queue",
        "#n2": "status",
        "#n3": "GSI1PK",
        "#n4": "GSI2PK",  # not pending: out of the sparse index
        "#n5": "GSI2SK",
        "#cn0": "PK",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "bob"},
        ":v1": {"S": "q"},
        ":v2": {"S": "SHIPPED"},
        ":v3": {"S": "QUEUE#q#OWNER#bob"},
    }


def test_joining_a_sparse_index_writes_both_of_its_attributes() -> None:
    # GSI2 = Index("PENDING", "{created_at}#{order_id}", when={"status": Status.PENDING});
    # GSI1 = ("STATUS#{status}", ...): only its partition key reads the status.
    params = update(Order, ORDER_KEY_FIELDS, set_values={"status": Status.PENDING})
    assert params["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = :v3"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "status",
        "#n1": "GSI1PK",
        "#n2": "GSI2PK",
        "#n3": "GSI2SK",
        "#cn0": "PK",
        "#cn1": "expires_at",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "PENDING"},
        ":v1": {"S": "STATUS#PENDING"},
        ":v2": {"S": "PENDING"},
        ":v3": {"S": f"{NOW_TEXT}#o"},
        ":cv0": {"N": NOW_EPOCH},
    }


def test_leaving_a_sparse_index_removes_both_of_its_attributes() -> None:
    params = update(Order, ORDER_KEY_FIELDS, set_values={"status": Status.SHIPPED})
    assert params["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1 REMOVE #n2, #n3"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "status",
        "#n1": "GSI1PK",
        "#n2": "GSI2PK",
        "#n3": "GSI2SK",
        "#cn0": "PK",
        "#cn1": "expires_at",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "SHIPPED"},
        ":v1": {"S": "STATUS#SHIPPED"},
        ":cv0": {"N": NOW_EPOCH},
    }


def test_a_callable_when_decides_membership_on_what_the_update_knows() -> None:
    # GSI2's when= is lambda job: job.status is PENDING and job.priority > 0.
    joined = update(Job, {"job_id": "j"}, set_values={"status": Status.PENDING, "priority": 2})
    assert joined["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = :v3, #n4 = :v4"
    assert joined["ExpressionAttributeNames"] == {
        "#n0": "status",
        "#n1": "priority",
        "#n2": "GSI1SK",  # PRIORITY#{priority:03d}#{job_id}
        "#n3": "GSI2PK",
        "#n4": "GSI2SK",
        "#cn0": "PK",
    }
    assert joined["ExpressionAttributeValues"] == {
        ":v0": {"S": "PENDING"},
        ":v1": {"N": "2"},
        ":v2": {"S": "PRIORITY#002#j"},
        ":v3": {"S": "JOBS_PENDING"},
        ":v4": {"S": "JOB#j"},
    }
    left = update(Job, {"job_id": "j"}, set_values={"status": Status.SHIPPED})
    assert left["UpdateExpression"] == "SET #n0 = :v0 REMOVE #n1, #n2"
    assert left["ExpressionAttributeNames"] == {
        "#n0": "status",
        "#n1": "GSI2PK",
        "#n2": "GSI2SK",
        "#cn0": "PK",
    }
    assert left["ExpressionAttributeValues"] == {":v0": {"S": "SHIPPED"}}


def test_removing_an_optional_key_field_takes_the_item_out_of_its_index() -> None:
    # GSI3 = ("NOTE#{note}", "JOB#{job_id}"): no note, no GSI3 entry.
    params = update(Job, {"job_id": "j"}, remove=["note"], set_values={"status": Status.SHIPPED})
    assert params["UpdateExpression"] == "SET #n0 = :v0 REMOVE #n1, #n2, #n3, #n4, #n5"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "status",
        "#n1": "note",
        "#n2": "GSI2PK",
        "#n3": "GSI2SK",
        "#n4": "GSI3PK",
        "#n5": "GSI3SK",
        "#cn0": "PK",
    }


# -- a callable when= that needs what the update does not know ---------------------------------


def test_a_callable_when_refuses_an_update_that_lacks_a_field_it_reads() -> None:
    with pytest.raises(KeyTemplateError) as caught:
        update(Job, {"job_id": "j"}, set_values={"owner": "bob", "queue": "q"})
    assert caught.value.key == "status"
    assert caught.value.message == (
        "updating Job changes owner, queue; the when= callable of sparse index GSI2 (evaluated "
        "on every update: it may read any field) needs 'status', which the update does not "
        "know: the update must also know status (pass it in set=, or update the entity "
        "instance, or declare when={field: value} so singletable knows what it reads) so no "
        "index key is ever stale or partial"
    )


def test_a_callable_when_refuses_a_field_changed_blind() -> None:
    with pytest.raises(KeyTemplateError) as caught:
        update(Job, {"job_id": "j"}, set_values={"status": Status.PENDING}, add={"priority": 1})
    assert caught.value.key == "priority"
    assert caught.value.message == (
        "updating Job: the when= callable of sparse index GSI2 (evaluated on every update: it "
        "may read any field) needs 'priority', which this update changes by add=, so its new "
        "value is not known here; use set= with the new value, or update the entity instance"
    )


def test_a_callable_when_that_raises_names_the_index() -> None:
    # A stored job without a priority (written before the field existed, say): None > 0.
    stored = Job.model_construct(
        job_id="j", status=Status.PENDING, owner="ann", queue="main", priority=None, note=None
    )
    with pytest.raises(KeyTemplateError) as caught:
        update(Job, {"job_id": "j"}, set_values={"owner": "bob"}, instance=stored)
    assert caught.value.key == "GSI2"
    assert caught.value.message.startswith(
        "updating Job: evaluating the when= callable of sparse index GSI2 (evaluated on every "
        "update: it may read any field) raised TypeError;"
    )
    assert isinstance(caught.value.__cause__, TypeError)


# -- the instance form: version, sources, unique guards ----------------------------------------


def test_an_instance_with_a_version_conditions_on_it() -> None:
    ann = Customer(customer_id="c1", name="Ann", email="a@x", version=3)
    op = compile_update(
        spec_of(Customer),
        CTX,
        key_fields={"customer_id": "c1"},
        set_values={"name": "B"},
        instance=ann,
    )
    assert op.params["ConditionExpression"] == "(attribute_exists(#cn0)) AND (#cn1 = :cv0)"
    assert op.params["ExpressionAttributeNames"] == {
        "#n0": "name",
        "#n1": "version",
        "#n2": "updated",
        "#cn0": "PK",
        "#cn1": "version",
    }
    assert op.params["ExpressionAttributeValues"] == {
        ":v0": {"S": "B"},
        ":v1": {"N": "1"},
        ":v2": {"S": NOW_TEXT},
        ":cv0": {"N": "3"},
    }
    assert op.guards == []  # the email is not changed
    moved_on = spec_of(Customer).to_item(ann.model_copy(update={"version": 5}))
    conflict = op.fail(moved_on)
    assert isinstance(conflict, VersionConflict)
    assert conflict.message == (
        "Customer PK='CUSTOMER#c1', SK='PROFILE' is at version 5, not 3; reload it and retry"
    )


def test_an_instance_without_a_version_conditions_on_the_fields_its_keys_derive_from() -> None:
    job = Job(job_id="j", status=Status.PENDING, owner="ann", priority=1)
    params = update(Job, {"job_id": "j"}, set_values={"owner": "bob"}, instance=job)
    # GSI1PK = QUEUE#{queue}#OWNER#{owner} is rendered from the instance's queue.
    assert params["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1"
    assert params["ConditionExpression"] == "(attribute_exists(#cn0)) AND (#cn1 = :cv0)"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "owner",
        "#n1": "GSI1PK",
        "#cn0": "PK",
        "#cn1": "queue",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "bob"},
        ":v1": {"S": "QUEUE#main#OWNER#bob"},
        ":cv0": {"S": "main"},
    }


def test_a_new_unique_value_moves_its_guard_in_the_same_transaction() -> None:
    ann = Customer(customer_id="c1", name="Ann", email="a@x", version=3)
    op = compile_update(
        spec_of(Customer),
        CTX,
        key_fields={"customer_id": "c1"},
        set_values={"email": "b@x"},
        instance=ann,
        previous_unique={"email": "a@x"},
    )
    assert op.params["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1, #n3 = :v3 ADD #n2 :v2"
    assert op.params["ConditionExpression"] == (
        "(attribute_exists(#cn0)) AND (#cn1 = :cv0) AND (#cn2 = :cv1)"
    )
    assert op.params["ExpressionAttributeNames"] == {
        "#n0": "email",
        "#n1": "GSI1PK",
        "#n2": "version",
        "#n3": "updated",
        "#cn0": "PK",
        "#cn1": "version",
        "#cn2": "email",  # the stored email is still the one read
    }
    assert op.params["ExpressionAttributeValues"] == {
        ":v0": {"S": "b@x"},
        ":v1": {"S": "EMAIL#b@x"},
        ":v2": {"N": "1"},
        ":v3": {"S": NOW_TEXT},
        ":cv0": {"N": "3"},
        ":cv1": {"S": "a@x"},
    }
    owner = {"S": '["CUSTOMER#c1", "PROFILE"]'}
    released, claimed = op.guards
    assert (released.kind, released.operation) == ("guard_delete", "DeleteItem")
    assert released.params == {
        "TableName": "Shop",
        "Key": {"PK": {"S": "__unique__#CUSTOMER#email#a@x"}, "SK": {"S": "__unique__"}},
        "ConditionExpression": "attribute_not_exists(#cn0) OR #cn1 = :cv0",
        "ExpressionAttributeNames": {"#cn0": "PK", "#cn1": "_owner"},
        "ExpressionAttributeValues": {":cv0": owner},
    }
    assert (claimed.kind, claimed.operation) == ("guard_put", "PutItem")
    assert claimed.params["Item"] == {
        "PK": {"S": "__unique__#CUSTOMER#email#b@x"},
        "SK": {"S": "__unique__"},
        "_type": {"S": "__unique__"},
        "_owner": owner,  # no expires_at: the customer does not expire
    }


def test_a_moved_guard_of_an_expiring_entity_expires_with_it() -> None:
    op = compile_update(
        spec_of(Invite),
        CTX,
        key_fields={"invite_id": "i1"},
        set_values={"code": "NEW"},
        previous_unique={"code": "OLD"},
        guard_ttl=NOW + timedelta(days=1),
    )
    assert op.params["UpdateExpression"] == "SET #n0 = :v0"
    assert op.params["ConditionExpression"] == f"({EXISTS_UNEXPIRED}) AND (#cn2 = :cv1)"
    assert op.params["ExpressionAttributeNames"] == {
        "#n0": "code",
        "#cn0": "PK",
        "#cn1": "expires_at",
        "#cn2": "code",
    }
    released, claimed = op.guards
    assert released.key == {"PK": {"S": "__unique__#INVITE#code#OLD"}, "SK": {"S": "__unique__"}}
    assert claimed.params["Item"]["expires_at"] == {"N": str(int(NOW.timestamp()) + 86400)}


def test_an_unchanged_unique_value_is_conditioned_on_but_its_guard_stays() -> None:
    op = compile_update(
        spec_of(Invite),
        CTX,
        key_fields={"invite_id": "i1"},
        set_values={"code": "SAME"},
        previous_unique={"code": "SAME"},
    )
    assert op.guards == []
    assert op.params["ConditionExpression"] == f"({EXISTS_UNEXPIRED}) AND (#cn2 = :cv1)"
    assert op.params["ExpressionAttributeValues"][":cv1"] == {"S": "SAME"}


# -- upsert ------------------------------------------------------------------------------------


def test_an_upsert_writes_what_a_new_item_needs_and_no_existence_condition() -> None:
    params = update(
        Product,
        {"product_id": "p1"},
        set_values={"name": "Lamp", "category": "home", "price": Decimal("9.5")},
        if_not_exists={"stock": 0},
        upsert=True,
    )
    assert params["UpdateExpression"] == (
        "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = if_not_exists(#n3, :v3), #n4 = :v4, "
        "#n5 = :v5, #n6 = if_not_exists(#n6, :v6), #n7 = if_not_exists(#n7, :v7)"
    )
    assert params["ExpressionAttributeNames"] == {
        "#n0": "name",
        "#n1": "category",
        "#n2": "price",
        "#n3": "stock",
        "#n4": "GSI1PK",  # an upsert may create the item: every index attribute is written
        "#n5": "GSI1SK",
        "#n6": "_type",
        "#n7": "product_id",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "Lamp"},
        ":v1": {"S": "home"},
        ":v2": {"N": "9.5"},
        ":v3": {"N": "0"},
        ":v4": {"S": "CATEGORY#home"},
        ":v5": {"S": "PRODUCT#p1"},
        ":v6": {"S": "PRODUCT"},
        ":v7": {"S": "p1"},
    }
    assert "ConditionExpression" not in params


def test_an_upsert_sets_created_at_only_on_a_new_item() -> None:
    params = update(
        Customer, {"customer_id": "c1"}, set_values={"name": "Ann", "email": "a@x"}, upsert=True
    )
    assert params["UpdateExpression"] == (
        "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = :v3, #n5 = :v5, "
        "#n6 = if_not_exists(#n6, :v6), #n7 = if_not_exists(#n7, :v7), "
        "#n8 = if_not_exists(#n8, :v8) ADD #n4 :v4"
    )
    assert params["ExpressionAttributeNames"] == {
        "#n0": "name",
        "#n1": "email",
        "#n2": "GSI1PK",
        "#n3": "GSI1SK",
        "#n4": "version",
        "#n5": "updated",
        "#n6": "_type",
        "#n7": "customer_id",
        "#n8": "created",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "Ann"},
        ":v1": {"S": "a@x"},
        ":v2": {"S": "EMAIL#a@x"},
        ":v3": {"S": "CUSTOMER#c1"},
        ":v4": {"N": "1"},
        ":v5": {"S": NOW_TEXT},
        ":v6": {"S": "CUSTOMER"},
        ":v7": {"S": "c1"},
        ":v8": {"S": NOW_TEXT},
    }
    assert "ConditionExpression" not in params


def test_an_upsert_that_could_create_an_incomplete_item_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        update(Product, {"product_id": "p1"}, set_values={"name": "Lamp"}, upsert=True)
    assert caught.value.key == "category"
    assert caught.value.message == (
        "upsert of Product would create an item without category, price, stock; "
        "pass them in set= or if_not_exists="
    )


# -- refusals ----------------------------------------------------------------------------------

REFUSALS: list[tuple[type[Entity], dict[str, Any], str | None, str]] = [
    (Product, {"set_values": {"colour": "red"}}, "colour", "Product has no field 'colour'"),
    (
        Product,
        {"set_values": {"product_id": "p2"}},
        "product_id",
        "Product.product_id is part of the primary key and cannot be updated in place; "
        "use repo.move(entity, product_id=...) to re-key the item",
    ),
    (
        Customer,
        {"set_values": {"version": 4}},
        "version",
        "Customer.version is maintained by singletable and cannot be set",
    ),
    (
        Customer,
        {"remove": ["updated"]},
        "updated",
        "Customer.updated is maintained by singletable and cannot be set",
    ),
    (
        Profile,
        {"set_values": {"visits": 3}, "add": {"visits": 1}},
        "visits",
        "Profile.visits appears in two update clauses",
    ),
    (Product, {"remove": ["name"]}, "name", "Product.name is required and cannot be removed"),
    (Product, {"add": {"name": "x"}}, "name", "add= needs a number or set field; 'name' is not"),
    (Profile, {"delete": {"visits": 1}}, "visits", "delete= needs a set field; 'visits' is not"),
    (Profile, {"append": {"tags": ["a"]}}, "tags", "append= needs a list field; 'tags' is not"),
    (Product, {"set_values": {"name": None}}, "name", "Product.name cannot be None"),
    (Profile, {"add": {"tags": set()}}, "tags", "Profile.tags: an empty set changes nothing"),
    (
        Product,
        {},
        None,
        "update of Product PK='PRODUCT#p1', SK='DETAILS' changes nothing",
    ),
]


@pytest.mark.parametrize(("cls", "changes", "key", "message"), REFUSALS)
def test_refusals_name_the_field(
    cls: type[Entity], changes: dict[str, Any], key: str | None, message: str
) -> None:
    key_fields = {"Product": {"product_id": "p1"}, "Customer": {"customer_id": "c1"}}
    with pytest.raises(InvalidRequestError) as caught:
        update(cls, key_fields.get(cls.__name__, {"user_id": "u1"}), **changes)
    assert caught.value.key == key
    assert caught.value.message.startswith(message)


# -- add= on an optional constrained number ----------------------------------------------------

counters = Table("Counters")


class Counter(Entity, table=counters, type="COUNTER"):
    counter_id: str
    hits: Annotated[int, Field(ge=0)] | None = None  # pydantic keeps Optional[Annotated[...]]
    seen: Annotated[set[str], Field(max_length=10)] | None = None

    class Keys:
        pk = "COUNTER#{counter_id}"
        sk = "COUNTER"


def test_add_and_delete_see_through_optional_and_annotated() -> None:
    params = compile_update(
        spec_of(Counter),
        WriteContext("Counters", NOW),
        key_fields={"counter_id": "c"},
        add={"hits": 2},
        delete={"seen": {"x"}},
    ).params
    assert params["UpdateExpression"] == "ADD #n0 :v0 DELETE #n1 :v1"
    assert params["ExpressionAttributeNames"] == {"#n0": "hits", "#n1": "seen", "#cn0": "PK"}
    assert params["ExpressionAttributeValues"] == {":v0": {"N": "2"}, ":v1": {"SS": ["x"]}}
