"""singletable.testing.local_table: an in-process moto table for users' tests."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import boto3
import pytest
from moto import mock_aws

from singletable import GSI, Table
from singletable.testing import local_table

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
