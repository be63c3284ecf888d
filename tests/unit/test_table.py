"""Table declarations (pure): CreateTable parameters, CloudFormation, and refused declarations.
``Table.create`` is exercised against botocore's Stubber: a real boto3 client whose answers
(CREATING, then ACTIVE) come from a queue, so the waiter's polling is seen request by request."""

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import WaiterError
from botocore.stub import Stubber

from singletable import GSI, LSI, Table
from singletable._table import wait_until_active
from singletable.errors import InvalidRequestError, ModelDefinitionError

# The ECommerceApp table from seed 004 (lines 25-60), verbatim.
SEED_ECOMMERCE_JSON = """
{
"TableName": "ECommerceApp",
"KeySchema": [
{ "AttributeName": "PK", "KeyType": "HASH" },
{ "AttributeName": "SK", "KeyType": "RANGE" }
],
"AttributeDefinitions": [
{ "AttributeName": "PK", "AttributeType": "S" },
{ "AttributeName": "SK", "AttributeType": "S" },
{ "AttributeName": "GSI1PK", "AttributeType": "S" },
{ "AttributeName": "GSI1SK", "AttributeType": "S" },
{ "AttributeName": "GSI2PK", "AttributeType": "S" },
{ "AttributeName": "GSI2SK", "AttributeType": "S" }
],
"GlobalSecondaryIndexes": [
{
"IndexName": "GSI1",
"KeySchema": [
{ "AttributeName": "GSI1PK", "KeyType": "HASH" },
{ "AttributeName": "GSI1SK", "KeyType": "RANGE" }
],
"Projection": { "ProjectionType": "ALL" }
},
{
"IndexName": "GSI2",
"KeySchema": [
{ "AttributeName": "GSI2PK", "KeyType": "HASH" },
{ "AttributeName": "GSI2SK", "KeyType": "RANGE" }
],
"Projection": { "ProjectionType": "KEYS_ONLY" }
}
],
"BillingMode": "PAY_PER_REQUEST"
}
"""


def test_seed_ecommerce_table_in_five_lines():
    table = Table(
        "ECommerceApp",
        indexes=[
            GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
            GSI("GSI2", pk="GSI2PK", sk="GSI2SK", projection="KEYS_ONLY"),
        ],
    )
    assert table.create_table_params() == json.loads(SEED_ECOMMERCE_JSON)


def test_minimal_table_params_exact():
    assert Table("Shop").create_table_params() == {
        "TableName": "Shop",
        "KeySchema": [
            {"AttributeName": "PK", "KeyType": "HASH"},
            {"AttributeName": "SK", "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }


def test_params_never_include_throughput_or_non_key_attributes():
    table = Table(
        "Shop",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
        ttl_attribute="expires_at",
        type_attribute="kind",
    )
    params = table.create_table_params()
    assert "ProvisionedThroughput" not in params
    assert all("ProvisionedThroughput" not in g for g in params["GlobalSecondaryIndexes"])
    names = [a["AttributeName"] for a in params["AttributeDefinitions"]]
    assert names == ["PK", "SK", "GSI1PK", "GSI1SK"]
    assert {a["AttributeType"] for a in params["AttributeDefinitions"]} == {"S"}
    assert "LocalSecondaryIndexes" not in params
    assert params["BillingMode"] == "PAY_PER_REQUEST"


def test_default_projection_is_all():
    params = Table("T", indexes=[GSI("GSI1", pk="A", sk="B")]).create_table_params()
    assert params["GlobalSecondaryIndexes"][0]["Projection"] == {"ProjectionType": "ALL"}


def test_table_name_override():
    params = Table("Shop").create_table_params("Shop-dev")
    assert params["TableName"] == "Shop-dev"


def test_custom_key_names():
    table = Table("Ranges", pk="partitionId", sk="rangeId")
    assert table.create_table_params() == {
        "TableName": "Ranges",
        "KeySchema": [
            {"AttributeName": "partitionId", "KeyType": "HASH"},
            {"AttributeName": "rangeId", "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [
            {"AttributeName": "partitionId", "AttributeType": "S"},
            {"AttributeName": "rangeId", "AttributeType": "S"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
    assert table.key_attributes == frozenset({"partitionId", "rangeId"})


def test_partition_key_only_table():
    params = Table("Simple", pk="id", sk=None).create_table_params()
    assert params["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert params["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": "S"}]


def test_gsi_with_partition_key_only_and_shared_attributes():
    table = Table(
        "T",
        indexes=[
            GSI("Inverted", pk="SK", sk="PK"),
            GSI("ByType", pk="_kind"),
            GSI("Other", pk="GSI1PK", sk="SK"),
        ],
        type_attribute="type",
    )
    params = table.create_table_params()
    assert [a["AttributeName"] for a in params["AttributeDefinitions"]] == [
        "PK",
        "SK",
        "_kind",
        "GSI1PK",
    ]
    gsis = {g["IndexName"]: g for g in params["GlobalSecondaryIndexes"]}
    assert gsis["Inverted"]["KeySchema"] == [
        {"AttributeName": "SK", "KeyType": "HASH"},
        {"AttributeName": "PK", "KeyType": "RANGE"},
    ]
    assert gsis["ByType"]["KeySchema"] == [{"AttributeName": "_kind", "KeyType": "HASH"}]


def test_lsi():
    table = Table(
        "T",
        indexes=[LSI("LSI1", sk="LSI1SK", projection="KEYS_ONLY"), GSI("GSI1", pk="G", sk="H")],
    )
    params = table.create_table_params()
    assert params["LocalSecondaryIndexes"] == [
        {
            "IndexName": "LSI1",
            "KeySchema": [
                {"AttributeName": "PK", "KeyType": "HASH"},
                {"AttributeName": "LSI1SK", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        }
    ]
    assert [g["IndexName"] for g in params["GlobalSecondaryIndexes"]] == ["GSI1"]
    assert [a["AttributeName"] for a in params["AttributeDefinitions"]] == [
        "PK",
        "SK",
        "LSI1SK",
        "G",
        "H",
    ]
    keys = table.index_keys("LSI1")
    assert keys.local
    assert (keys.pk, keys.sk) == ("PK", "LSI1SK")


def test_include_projection():
    table = Table("T", indexes=[GSI("GSI1", pk="A", sk="B", projection=("INCLUDE", ["x", "y"]))])
    gsi = table.create_table_params()["GlobalSecondaryIndexes"][0]
    assert gsi["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "y"]}
    assert table.index_keys("GSI1").projection_type == "INCLUDE"


def test_physical_index_name():
    table = Table("T", indexes=[GSI("ByEmail", pk="email", index_name="email-index")])
    gsi = table.create_table_params()["GlobalSecondaryIndexes"][0]
    assert gsi["IndexName"] == "email-index"
    assert table.index_names == ["ByEmail"]
    assert table.index_keys("ByEmail").physical_name == "email-index"


def test_cloudformation_with_ttl():
    table = Table(
        "Shop",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK", projection="KEYS_ONLY")],
        ttl_attribute="expires_at",
    )
    resource = table.cloudformation()
    assert resource == {
        "Type": "AWS::DynamoDB::Table",
        "Properties": {
            **table.create_table_params(),
            "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
        },
    }
    assert resource["Properties"]["TableName"] == "Shop"
    assert table.cloudformation("Shop-prod")["Properties"]["TableName"] == "Shop-prod"
    json.dumps(resource)  # plain JSON-serialisable data


def test_cloudformation_without_ttl():
    resource = Table("Shop").cloudformation()
    assert resource["Type"] == "AWS::DynamoDB::Table"
    assert "TimeToLiveSpecification" not in resource["Properties"]
    assert resource["Properties"] == Table("Shop").create_table_params()


def test_provisioned_billing():
    table = Table(
        "T",
        indexes=[GSI("GSI1", pk="A")],
        billing_mode="PROVISIONED",
        provisioned=(5, 7),
    )
    params = table.create_table_params()
    assert params["BillingMode"] == "PROVISIONED"
    throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 7}
    assert params["ProvisionedThroughput"] == throughput
    assert params["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"] == throughput


def test_tables_may_share_a_name():
    a, b = Table("Shop"), Table("Shop")
    assert a is not b
    assert a.create_table_params() == b.create_table_params()


def test_unknown_index_lookup_names_it():
    table = Table("T", indexes=[GSI("GSI1", pk="A")])
    with pytest.raises(ModelDefinitionError, match="GSI7"):
        table.index_keys("GSI7")


# -- refused declarations ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "culprit"),
    [
        ({"name": ""}, "name"),
        ({"name": "T", "delimiter": ""}, "delimiter"),
        ({"name": "T", "delimiter": "##"}, "'##'"),
        ({"name": "T", "delimiter": "{"}, "delimiter"),
        ({"name": "T", "delimiter": "%"}, "delimiter"),
        ({"name": "T", "key_values": "quote"}, "'quote'"),
        ({"name": "T", "billing_mode": "PROVISIONED"}, "provisioned"),
        ({"name": "T", "indexes": [GSI("email-index", pk="e")]}, "'email-index'"),
        ({"name": "T", "indexes": [GSI("G", pk="a"), GSI("G", pk="b")]}, "'G'"),
        ({"name": "T", "indexes": [GSI("G", pk="a", projection="SOME")]}, "'SOME'"),
        ({"name": "T", "indexes": [GSI("G", pk="a", projection=("INCLUDE",))]}, "INCLUDE"),
        ({"name": "T", "indexes": ["GSI1"]}, "'GSI1'"),
        ({"name": "T", "sk": None, "indexes": [LSI("L", sk="x")]}, "'L'"),
        ({"name": "T", "type_attribute": "PK"}, "'PK'"),
        ({"name": "T", "type_attribute": "SK"}, "'SK'"),
        ({"name": "T", "ttl_attribute": "PK"}, "'PK'"),
        ({"name": "T", "ttl_attribute": "_type"}, "'_type'"),
    ],
)
def test_bad_declarations_refused(kwargs, culprit):
    with pytest.raises(ModelDefinitionError) as info:
        Table(**kwargs)
    assert culprit in str(info.value)


def test_index_handle_error_suggests_index_name():
    with pytest.raises(ModelDefinitionError) as info:
        Table("T", indexes=[GSI("email-index", pk="e")])
    assert "index_name=" in str(info.value)


# -- Table.create against botocore's Stubber (a real client answering from a queue) ---------


def stubbed_client() -> tuple[Any, Stubber]:
    client = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    return client, Stubber(client)


def _status(status: str) -> dict[str, Any]:
    return {"Table": {"TableName": "Shop-test", "TableStatus": status}}


def test_create_waits_with_the_table_exists_waiter_then_enables_ttl_and_backups():
    table = Table(
        "Shop",
        indexes=[GSI("GSI1", pk="A", sk="B")],
        ttl_attribute="expires_at",
        point_in_time_recovery=True,
        recovery_period_days=7,
    )
    client, stub = stubbed_client()
    stub.add_response("create_table", {}, table.create_table_params("Shop-test"))
    for status in ("CREATING", "CREATING", "ACTIVE"):  # what dynalite and DynamoDB report
        stub.add_response("describe_table", _status(status), {"TableName": "Shop-test"})
    ttl = {"Enabled": True, "AttributeName": "expires_at"}
    stub.add_response(
        "update_time_to_live",
        {},
        {"TableName": "Shop-test", "TimeToLiveSpecification": ttl},
    )
    stub.add_response(
        "update_continuous_backups",
        {"ContinuousBackupsDescription": {"ContinuousBackupsStatus": "ENABLED"}},
        {
            "TableName": "Shop-test",
            "PointInTimeRecoverySpecification": {
                "PointInTimeRecoveryEnabled": True,
                "RecoveryPeriodInDays": 7,
            },
        },
    )
    with stub:
        table.create(client, table_name="Shop-test", delay=0.001)
    stub.assert_no_pending_responses()


def test_create_of_a_table_that_is_active_at_once_polls_once():
    client, stub = stubbed_client()
    stub.add_response("create_table", {}, Table("Shop").create_table_params())
    stub.add_response("describe_table", _status("ACTIVE"), {"TableName": "Shop"})
    with stub:
        Table("Shop").create(client)  # no follow-up request: nothing else is sent
    stub.assert_no_pending_responses()


def test_a_table_that_never_becomes_active_times_out():
    client, stub = stubbed_client()
    stub.add_response("create_table", {}, Table("Shop").create_table_params())
    for _ in range(3):
        stub.add_response("describe_table", _status("CREATING"), {"TableName": "Shop"})
    with stub, pytest.raises(TimeoutError, match="'Shop' not ACTIVE"):
        Table("Shop").create(client, delay=0.001, timeout=0.002)


def test_a_failing_describe_table_is_not_a_timeout():
    client, stub = stubbed_client()
    stub.add_client_error("describe_table", "AccessDeniedException", "no")
    with stub, pytest.raises(WaiterError):
        wait_until_active(client, "Shop", delay=0.001)


def test_follow_ups_cannot_be_skipped_by_not_waiting():
    client, stub = stubbed_client()
    with stub, pytest.raises(InvalidRequestError, match="UpdateTimeToLive"):
        Table("Shop", ttl_attribute="expires_at").create(client, wait=False)
    stub.assert_no_pending_responses()  # nothing was sent


def test_follow_up_requests_are_what_create_table_cannot_carry():
    table = Table("Shop", ttl_attribute="ttl", point_in_time_recovery=True)
    assert table.follow_up_requests("Shop-prod") == [
        (
            "UpdateTimeToLive",
            {
                "TableName": "Shop-prod",
                "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "ttl"},
            },
        ),
        (
            "UpdateContinuousBackups",
            {
                "TableName": "Shop-prod",
                "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
            },
        ),
    ]
    assert Table("Shop").follow_up_requests() == []
