"""singletable.testing.local_table: an in-process moto table for users' tests."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from moto import mock_aws

from singletable import GSI, Table
from singletable.streams import read_stream
from singletable.testing import local_endpoint, local_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

shop = Table(
    name="shop",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("ByEmail", pk="email", sk=None)],
    ttl_attribute="expires_at",
)


def _fresh_client() -> DynamoDBClient:
    return boto3.session.Session().client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_local_table_creates_indexes_and_ttl() -> None:
    with local_table(shop) as client:
        desc = client.describe_table(TableName="shop")["Table"]
        assert desc["TableStatus"] == "ACTIVE"
        assert sorted(g["IndexName"] for g in desc["GlobalSecondaryIndexes"]) == [
            "ByEmail",
            "GSI1",
        ]
        ttl = client.describe_time_to_live(TableName="shop")["TimeToLiveDescription"]
        assert ttl["TimeToLiveStatus"] == "ENABLED"
        assert ttl["AttributeName"] == "expires_at"
        client.put_item(TableName="shop", Item={"PK": {"S": "a"}, "SK": {"S": "b"}})
        assert client.get_item(TableName="shop", Key={"PK": {"S": "a"}, "SK": {"S": "b"}})["Item"]

    with mock_aws():
        fresh = _fresh_client()
        assert fresh.list_tables()["TableNames"] == []


def test_local_table_custom_name_and_region() -> None:
    with local_table(shop, table_name="shop-test", region="eu-west-1") as client:
        assert client.meta.region_name == "eu-west-1"
        assert client.list_tables()["TableNames"] == ["shop-test"]


def test_local_table_ignores_a_configured_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    with local_table(shop) as client:
        assert client.list_tables()["TableNames"] == ["shop"]


def test_local_table_stops_moto_when_the_block_fails() -> None:
    with pytest.raises(ZeroDivisionError), local_table(shop):
        1 / 0  # noqa: B018
    with mock_aws():
        assert _fresh_client().list_tables()["TableNames"] == []


def test_local_table_without_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "moto", None)  # makes `import moto` raise ImportError
    with pytest.raises(RuntimeError) as excinfo, local_table(shop):
        pass  # pragma: no cover
    message = str(excinfo.value)
    assert "\n" not in message
    assert message.endswith(
        'install it with `pip install "singletable[demo]"` or `pip install moto[dynamodb]`'
    )


# -- what a client needs inside the blocks ---------------------------------------------------------

streamed = Table(name="streamed", stream="NEW_AND_OLD_IMAGES")


@pytest.fixture
def newcomer(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No AWS variable and no ~/.aws: a machine where AWS was never configured."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


@pytest.mark.usefixtures("newcomer")
def test_a_local_endpoint_serves_clients_with_no_aws_configuration(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with local_endpoint() as url, local_table(shop, endpoint=url):
        client = boto3.client("dynamodb", endpoint_url=url)  # no credentials, no region
        assert client.list_tables()["TableNames"] == ["shop"]
    assert not [r for r in caplog.records if r.name == "werkzeug"]  # no request log
    assert not [name for name in os.environ if name.startswith("AWS_")]  # all restored


@pytest.mark.usefixtures("newcomer")
def test_the_environment_a_caller_set_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "mine")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "mine-too")
    with local_endpoint() as url:
        assert boto3.client("dynamodb", endpoint_url=url).meta.region_name == "eu-west-1"
        assert os.environ["AWS_ACCESS_KEY_ID"] == "mine"
    assert sorted(n for n in os.environ if n.startswith("AWS_")) == [
        "AWS_ACCESS_KEY_ID",
        "AWS_DEFAULT_REGION",
        "AWS_SECRET_ACCESS_KEY",
    ]


@pytest.mark.usefixtures("newcomer")
def test_a_streams_client_made_in_the_block_reads_moto_s_stream() -> None:
    """botocore 1.44+ sends Streams calls naming a stream ARN to an account-based host that
    moto does not route; inside local_table a plain dynamodbstreams client reaches moto."""
    with local_table(streamed) as client:
        client.put_item(TableName="streamed", Item={"PK": {"S": "a"}, "SK": {"S": "b"}})
        arn = client.describe_table(TableName="streamed")["Table"]["LatestStreamArn"]
        streams = boto3.client("dynamodbstreams")  # the block's region and endpoints
        assert os.environ["AWS_ACCOUNT_ID_ENDPOINT_MODE"] == "disabled"
        (record,) = read_stream(streams, arn)
        assert record["eventName"] == "INSERT"
    assert "AWS_ACCOUNT_ID_ENDPOINT_MODE" not in os.environ
