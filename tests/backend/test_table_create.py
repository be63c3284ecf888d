"""``Table.create`` on every backend: CreateTable with the production settings, boto3's
``table_exists`` waiter, then the follow-up requests (TTL, point-in-time recovery) once the
table is ACTIVE, and what DescribeTable reports afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from singletable import GSI, Table

if TYPE_CHECKING:
    from moto_fixtures.backends import Backend
    from moto_fixtures.recorder import RequestRecorder
    from mypy_boto3_dynamodb import DynamoDBClient

KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

production = Table(
    "Prod",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
    ttl_attribute="expires_at",
    point_in_time_recovery=True,
    recovery_period_days=7,
    deletion_protection=True,
    kms_key=KEY_ARN,
    tags={"team": "shop", "env": "prod"},
    max_throughput=(1000, 500),
    warm_throughput=(12000, 4000),
    table_class="STANDARD_INFREQUENT_ACCESS",
)

plain = Table("Plain", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


def _unprotect(client: DynamoDBClient, name: str, backend: Backend) -> None:
    """Deletion protection stays on until turned off. Only a shared account (the endpoint
    backend, whose tables carry a per-test prefix) deletes tables after a test; the local
    backends start empty (and dynalite's UpdateTable does not know the setting)."""
    if backend.table_prefix:
        client.update_table(TableName=name, DeletionProtectionEnabled=False)


@pytest.mark.requires("ttl_api", "continuous_backups")
def test_create_applies_every_setting(
    client: DynamoDBClient, recorder: RequestRecorder, table_name: str, backend: Backend
) -> None:
    production.create(client, table_name=table_name, delay=0.02)
    try:
        operations = recorder.operations
        assert operations[0] == "CreateTable"
        assert recorder.calls[0][1] == production.create_table_params(table_name)
        # the waiter polls until ACTIVE; only then come the follow-ups, in order
        waited = operations[1:-2]
        assert waited and set(waited) == {"DescribeTable"}
        assert operations[-2:] == ["UpdateTimeToLive", "UpdateContinuousBackups"]

        table = client.describe_table(TableName=table_name)["Table"]
        assert table["TableStatus"] == "ACTIVE"
        assert table["DeletionProtectionEnabled"] is True
        sse = table["SSEDescription"]
        assert (sse["Status"], sse["SSEType"], sse["KMSMasterKeyArn"]) == (
            "ENABLED",
            "KMS",
            KEY_ARN,
        )
        warm = table["WarmThroughput"]
        assert (warm["ReadUnitsPerSecond"], warm["WriteUnitsPerSecond"]) == (12000, 4000)
        tags = client.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"]
        assert sorted((t["Key"], t["Value"]) for t in tags) == [("env", "prod"), ("team", "shop")]
        backups = client.describe_continuous_backups(TableName=table_name)
        pitr = backups["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
        assert pitr["PointInTimeRecoveryStatus"] == "ENABLED"
        assert pitr["RecoveryPeriodInDays"] == 7
        ttl = client.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
        assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    finally:
        _unprotect(client, table_name, backend)


def test_a_plain_table_is_created_and_waited_for(
    client: DynamoDBClient, recorder: RequestRecorder, table_name: str
) -> None:
    plain.create(client, table_name=table_name, delay=0.02)
    operations = recorder.operations
    assert operations[0] == "CreateTable"
    assert operations[1:] and set(operations[1:]) == {"DescribeTable"}  # nothing follows
    assert client.describe_table(TableName=table_name)["Table"]["TableStatus"] == "ACTIVE"


def test_a_table_without_follow_ups_takes_every_create_table_setting(
    client: DynamoDBClient, table_name: str, backend: Backend
) -> None:
    """Every local backend accepts the settings CreateTable itself carries."""
    settings: dict[str, Any] = {
        "deletion_protection": True,
        "tags": {"team": "shop"},
        "table_class": "STANDARD",
        "warm_throughput": (12000, 4000),
        "max_throughput": (100, 100),
    }
    Table("Carried", **settings).create(client, table_name=table_name, delay=0.02)
    try:
        assert client.describe_table(TableName=table_name)["Table"]["TableStatus"] == "ACTIVE"
    finally:
        _unprotect(client, table_name, backend)
