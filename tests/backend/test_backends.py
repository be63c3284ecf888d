"""The test backends themselves: every backend fixture, the recorder, markers, divergences."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError, ParamValidationError
from moto_fixtures.backends import Backend, features_for, wipe_tables
from moto_fixtures.divergences import KNOWN_DIVERGENCES
from moto_fixtures.plugin import RequestRecorder, record

from singletable._table import wait_until_active

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def create_table(client: DynamoDBClient, name: str) -> None:
    """PK/SK table with one GSI (GSI1PK/GSI1SK, ALL), on demand; waits until ACTIVE."""
    client.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "PK", "KeyType": "HASH"},
            {"AttributeName": "SK", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": a, "AttributeType": "S"} for a in ("PK", "SK", "GSI1PK", "GSI1SK")
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GSI1",
                "KeySchema": [
                    {"AttributeName": "GSI1PK", "KeyType": "HASH"},
                    {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    wait_until_active(client, name, delay=0.02, timeout=30)


def visible_tables(client: DynamoDBClient, backend: Backend) -> list[str]:
    names = [
        n
        for page in client.get_paginator("list_tables").paginate()
        for n in page.get("TableNames", [])
    ]
    return [n for n in names if n.startswith(backend.table_prefix)]


def item(pk: str, sk: str, **extra: str) -> dict[str, Any]:
    return {"PK": {"S": pk}, "SK": {"S": sk}, **{k: {"S": v} for k, v in extra.items()}}


# -- round trips --------------------------------------------------------------------------------


def test_table_with_gsi_round_trip(client: DynamoDBClient, table_name: str) -> None:
    create_table(client, table_name)
    desc = client.describe_table(TableName=table_name)["Table"]
    assert [g["IndexName"] for g in desc["GlobalSecondaryIndexes"]] == ["GSI1"]

    client.put_item(TableName=table_name, Item=item("U#1", "A#1", name="ann"))
    client.put_item(TableName=table_name, Item=item("U#1", "A#2", GSI1PK="E#x", GSI1SK="U#1"))
    client.put_item(TableName=table_name, Item=item("U#2", "A#1"))

    got = client.get_item(TableName=table_name, Key={"PK": {"S": "U#1"}, "SK": {"S": "A#1"}})
    assert got["Item"]["name"] == {"S": "ann"}

    page = client.query(
        TableName=table_name,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :p)",
        ExpressionAttributeValues={":pk": {"S": "U#1"}, ":p": {"S": "A#"}},
    )
    assert [i["SK"]["S"] for i in page["Items"]] == ["A#1", "A#2"]

    sparse = client.query(
        TableName=table_name,
        IndexName="GSI1",
        KeyConditionExpression="GSI1PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "E#x"}},
    )
    assert [(i["PK"]["S"], i["SK"]["S"]) for i in sparse["Items"]] == [("U#1", "A#2")]


@pytest.mark.requires("transactions")
def test_a_repeated_client_request_token_is_answered_as_dynamodb_answers_it(
    client: DynamoDBClient, table_name: str
) -> None:
    """DynamoDB answers a TransactWriteItems that repeats an applied one (same token, same
    request) with success and writes nothing again; moto needs moto_fixtures.idempotency."""
    create_table(client, table_name)
    put = {"Put": {"TableName": table_name, "Item": item("U#9", "A#1", n="1")}}
    put["Put"]["ConditionExpression"] = "attribute_not_exists(PK)"
    client.transact_write_items(TransactItems=[put], ClientRequestToken="tok-1")
    key = {"PK": {"S": "U#9"}, "SK": {"S": "A#1"}}
    client.put_item(TableName=table_name, Item=item("U#9", "A#1", n="2"))  # changed since
    client.transact_write_items(TransactItems=[put], ClientRequestToken="tok-1")  # a retry
    assert client.get_item(TableName=table_name, Key=key)["Item"]["n"] == {"S": "2"}
    with pytest.raises(ClientError) as caught:  # a new token is a new transaction
        client.transact_write_items(TransactItems=[put], ClientRequestToken="tok-2")
    assert caught.value.response["Error"]["Code"] == "TransactionCanceledException"


def test_backend_describes_itself(backend: Backend, client: DynamoDBClient) -> None:
    assert backend.name in ("inproc", "moto_server", "dynalite", "endpoint")
    assert (backend.endpoint_url is None) == (backend.name == "inproc")
    assert client.meta.region_name == "us-east-1" or backend.name == "endpoint"
    if backend.name == "dynalite":
        assert not backend.supports("transactions")
        assert backend.missing("transactions", "ttl_api") == ["transactions", "ttl_api"]
    with pytest.raises(ValueError, match="unknown backend feature"):
        backend.supports("time_travel")


def test_backend_client_is_new_each_time(backend: Backend, client: DynamoDBClient) -> None:
    other = backend.client(read_timeout=7)
    assert other is not client
    config: Any = other.meta.config
    assert config.read_timeout == 7
    if backend.name != "endpoint":
        assert config.retries == {"total_max_attempts": 2, "mode": "standard"}
    assert visible_tables(other, backend) == []
    other.close()


# -- isolation: two tests, each must start empty, whatever the order --------------------------


@pytest.mark.parametrize("run", ["first", "second"])
def test_isolation_starts_empty(client: DynamoDBClient, backend: Backend, run: str) -> None:
    assert visible_tables(client, backend) == []
    create_table(client, backend.table_name("leftover"))
    client.put_item(TableName=backend.table_name("leftover"), Item=item("P", run))


def test_isolation_starts_empty_too(client: DynamoDBClient, backend: Backend) -> None:
    assert visible_tables(client, backend) == []
    create_table(client, backend.table_name("leftover"))


# -- recorder -----------------------------------------------------------------------------------


def test_recorder_counts_one_get_item(
    client: DynamoDBClient, recorder: RequestRecorder, table_name: str
) -> None:
    create_table(client, table_name)
    recorder.clear()
    client.get_item(TableName=table_name, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert recorder.operations == ["GetItem"]
    assert recorder.count("GetItem") == 1
    assert recorder.count() == 1
    assert recorder.count_attempts("GetItem") == 1
    op, params = recorder.calls[0]
    assert op == "GetItem"
    assert params == {"TableName": table_name, "Key": {"PK": {"S": "a"}, "SK": {"S": "b"}}}


def test_recorder_expect(
    client: DynamoDBClient, recorder: RequestRecorder, table_name: str
) -> None:
    create_table(client, table_name)
    key = {"PK": {"S": "a"}, "SK": {"S": "b"}}
    with recorder.expect("PutItem", "GetItem"):
        client.put_item(TableName=table_name, Item=item("a", "b"))
        client.get_item(TableName=table_name, Key=key)

    with pytest.raises(AssertionError) as excinfo, recorder.expect("GetItem"):
        client.get_item(TableName=table_name, Key=key)
        client.query(
            TableName=table_name,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": "a"}},
        )
    message = str(excinfo.value)
    assert "expected DynamoDB calls ['GetItem'], got ['GetItem', 'Query']" in message
    assert "2. Query" in message

    with pytest.raises(AssertionError, match=r"expected DynamoDB calls \[\], got \['GetItem'\]"):  # noqa: SIM117
        with recorder.expect():
            client.get_item(TableName=table_name, Key=key)


def test_recorder_expect_lets_the_block_error_through(
    client: DynamoDBClient, recorder: RequestRecorder
) -> None:
    with pytest.raises(ClientError) as excinfo, recorder.expect():
        client.get_item(TableName="missing-table", Key={"PK": {"S": "a"}})
    assert excinfo.value.response["Error"]["Code"] == "ResourceNotFoundException"
    assert recorder.operations == ["GetItem"]


def test_recorder_ignores_requests_that_are_never_sent(
    client: DynamoDBClient, recorder: RequestRecorder
) -> None:
    with pytest.raises(ParamValidationError):
        client.query(TableName="t-x", Limit=0, KeyConditionExpression="PK = :p")
    assert recorder.operations == []
    assert recorder.attempts == []


def test_recorder_sees_final_params_and_short_circuits(
    client: DynamoDBClient, recorder: RequestRecorder, table_name: str
) -> None:
    create_table(client, table_name)

    def rename(params: dict[str, Any], **_: Any) -> None:
        params["ConsistentRead"] = True

    def fail(**_: Any) -> None:
        error = {"Error": {"Code": "ThrottlingException", "Message": "injected"}}
        raise ClientError(error, "GetItem")  # type: ignore[arg-type]

    recorder.clear()
    client.meta.events.register("before-parameter-build.dynamodb.GetItem", rename)
    client.meta.events.register_first("before-call.dynamodb.GetItem", fail)
    with pytest.raises(ClientError):
        client.get_item(TableName=table_name, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    # the call was made (and recorded with its final params) but never sent
    assert recorder.params("GetItem") == [
        {
            "TableName": table_name,
            "Key": {"PK": {"S": "a"}, "SK": {"S": "b"}},
            "ConsistentRead": True,
        }
    ]
    assert recorder.attempts == []


def test_recorder_counts_retried_attempts(
    backend: Backend, client: DynamoDBClient, table_name: str
) -> None:
    from botocore.exceptions import EndpointConnectionError

    create_table(client, table_name)
    own = backend.client(retries={"total_max_attempts": 3, "mode": "legacy"})
    rec = record(own)
    left = {"n": 2}

    def drop(request: Any, **_: Any) -> None:
        if left["n"] > 0:
            left["n"] -= 1
            raise EndpointConnectionError(endpoint_url=request.url)

    own.meta.events.register_first("before-send.dynamodb.GetItem", drop)
    response = own.get_item(TableName=table_name, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert response["ResponseMetadata"]["RetryAttempts"] == 2
    assert rec.operations == ["GetItem"]
    assert rec.count_attempts("GetItem") == 3
    rec.detach()
    own.get_item(TableName=table_name, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert rec.count() == 1
    own.close()


# -- markers ------------------------------------------------------------------------------------


@pytest.mark.requires("transactions")
def test_requires_marker_runs_where_supported(
    backend: Backend, client: DynamoDBClient, table_name: str
) -> None:
    assert backend.supports("transactions")
    create_table(client, table_name)
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": table_name, "Item": item("a", str(i))}} for i in (1, 2)
        ]
    )
    assert client.scan(TableName=table_name, Select="COUNT")["Count"] == 2


def test_requires_marker_skips_with_reason(request: pytest.FixtureRequest) -> None:
    items = [
        i
        for i in request.session.items
        if isinstance(i, pytest.Function)
        and i.originalname == "test_requires_marker_runs_where_supported"
    ]
    if not items:
        pytest.skip("test_requires_marker_runs_where_supported is not collected")
    for i in items:
        name = i.callspec.params["backend"]
        reasons = {m.kwargs.get("reason") for m in i.iter_markers("skip")}
        if "transactions" in features_for(name):
            assert f"{name} does not support transactions" not in reasons
        else:
            assert f"{name} does not support transactions" in reasons
    if any(i.callspec.params["backend"] == "dynalite" for i in items):
        assert "transactions" not in features_for("dynalite")


@pytest.mark.backend("inproc")
def test_backend_marker_restricts(backend: Backend, request: pytest.FixtureRequest) -> None:
    assert backend.name == "inproc"
    assert request.node.name == "test_backend_marker_restricts[inproc]"


# -- known divergences --------------------------------------------------------------------------


def test_divergence_unused_expression_attribute_values(
    client: DynamoDBClient, table_name: str
) -> None:
    """DynamoDB rejects an ExpressionAttributeValues entry no expression uses; moto accepts it."""
    create_table(client, table_name)
    with pytest.raises(ClientError) as excinfo:
        client.put_item(
            TableName=table_name,
            Item=item("a", "b"),
            ConditionExpression="attribute_not_exists(PK)",
            ExpressionAttributeValues={":unused": {"S": "x"}},
        )
    assert excinfo.value.response["Error"]["Code"] == "ValidationException"


def test_divergences_become_strict_xfails(request: pytest.FixtureRequest) -> None:
    items = [
        i
        for i in request.session.items
        if isinstance(i, pytest.Function)
        and i.originalname == "test_divergence_unused_expression_attribute_values"
    ]
    if not items:
        pytest.skip("the divergence self-test is not collected")
    for i in items:
        name = i.callspec.params["backend"]
        xfail = i.get_closest_marker("xfail")
        if (i.originalname, name) in KNOWN_DIVERGENCES:
            assert xfail is not None
            assert xfail.kwargs["strict"] is True
            assert "unused ExpressionAttributeValues" in xfail.kwargs["reason"]
        else:
            assert xfail is None


# -- helpers ------------------------------------------------------------------------------------


def test_wipe_tables(client: DynamoDBClient, backend: Backend) -> None:
    names = [backend.table_name("wipe-a"), backend.table_name("wipe-b")]
    for name in names:
        create_table(client, name)
    assert sorted(backend.created_tables) == sorted(names)
    wipe_tables(client, names)
    assert visible_tables(client, backend) == []
