"""Production table settings: every setting maps to the CreateTable parameter of the name and
shape botocore's service model gives it, and to the AWS::DynamoDB::Table property of
CloudFormation's resource schema.

The CloudFormation side is checked two ways with cfn-lint (a dev dependency, also pulled in by
moto's server extra), which ships AWS's resource provider schemas: the resource's properties
against the ``AWS::DynamoDB::Table`` schema (``cfnlint.schema.PROVIDER_SCHEMA_MANAGER``,
validated with jsonschema), and the complete template through cfn-lint's own rules
(``cfnlint.api.lint``)."""

from __future__ import annotations

import json
from typing import Any

import botocore.session
import jsonschema
import pytest
from botocore.validate import ParamValidator
from cfnlint.api import ManualArgs, lint
from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

from singletable import GSI, Table
from singletable.errors import ModelDefinitionError

KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

SETTINGS: dict[str, Any] = {
    "point_in_time_recovery": True,
    "recovery_period_days": 7,
    "deletion_protection": True,
    "kms_key": KEY_ARN,
    "tags": {"team": "shop", "env": "prod"},
    "max_throughput": (1000, 500),
    "warm_throughput": (12000, 4000),
    "table_class": "STANDARD_INFREQUENT_ACCESS",
}

# Each setting, the CreateTable parameter it sets (None: not a CreateTable parameter) and the
# CloudFormation property.
MAPPING = {
    "point_in_time_recovery": (None, "PointInTimeRecoverySpecification"),
    "deletion_protection": ("DeletionProtectionEnabled", "DeletionProtectionEnabled"),
    "kms_key": ("SSESpecification", "SSESpecification"),
    "tags": ("Tags", "Tags"),
    "max_throughput": ("OnDemandThroughput", "OnDemandThroughput"),
    "warm_throughput": ("WarmThroughput", "WarmThroughput"),
    "table_class": ("TableClass", "TableClass"),
}


def production_table(**overrides: Any) -> Table:
    return Table(
        "Shop",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
        ttl_attribute="expires_at",
        stream="NEW_AND_OLD_IMAGES",
        **{**SETTINGS, **overrides},
    )


@pytest.fixture(scope="module")
def dynamodb_model() -> Any:
    return botocore.session.get_session().get_service_model("dynamodb")


@pytest.fixture(scope="module")
def cfn_schema() -> dict[str, Any]:
    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", "AWS::DynamoDB::Table")
    document: dict[str, Any] = schema.schema
    assert document["typeName"] == "AWS::DynamoDB::Table"
    return document


def botocore_errors(model: Any, operation: str, params: dict[str, Any]) -> str:
    """What botocore's client-side validation says of ``params`` ('' when they are valid)."""
    shape = model.operation_model(operation).input_shape
    report = ParamValidator().validate(params, shape)
    return str(report.generate_report()) if report.has_errors() else ""


# -- CreateTable -------------------------------------------------------------------------------


def test_create_table_params_validate_against_botocores_model(dynamodb_model: Any) -> None:
    params = production_table().create_table_params()
    assert botocore_errors(dynamodb_model, "CreateTable", params) == ""
    members = dynamodb_model.operation_model("CreateTable").input_shape.members
    for setting, (parameter, _) in MAPPING.items():
        if parameter is not None:
            assert parameter in params, setting
            assert parameter in members, parameter


def test_each_setting_sets_its_parameter_and_nothing_else() -> None:
    plain = Table("Shop", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]).create_table_params()
    for setting, (parameter, _) in MAPPING.items():
        extra = {"recovery_period_days": 7} if setting == "point_in_time_recovery" else {}
        table = Table(
            "Shop",
            indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
            **{setting: SETTINGS[setting], **extra},
        )
        added = set(table.create_table_params()) - set(plain)
        assert added == ({parameter} if parameter else set()), setting


def test_the_values_are_the_documented_shapes() -> None:
    params = production_table().create_table_params()
    assert params["SSESpecification"] == {
        "Enabled": True,
        "SSEType": "KMS",
        "KMSMasterKeyId": KEY_ARN,
    }
    assert params["Tags"] == [{"Key": "team", "Value": "shop"}, {"Key": "env", "Value": "prod"}]
    assert params["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 1000,
        "MaxWriteRequestUnits": 500,
    }
    assert params["WarmThroughput"] == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000}
    assert params["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert params["DeletionProtectionEnabled"] is True


def test_the_aws_managed_key_is_not_named() -> None:
    params = Table("Shop", kms_key="alias/aws/dynamodb").create_table_params()
    assert params["SSESpecification"] == {"Enabled": True, "SSEType": "KMS"}


def test_one_unit_of_a_pair_may_be_left_unset(dynamodb_model: Any) -> None:
    params = Table("Shop", max_throughput=(None, 50), warm_throughput=(900, None))
    created = params.create_table_params()
    assert created["OnDemandThroughput"] == {"MaxWriteRequestUnits": 50}
    assert created["WarmThroughput"] == {"ReadUnitsPerSecond": 900}
    assert botocore_errors(dynamodb_model, "CreateTable", created) == ""


def test_point_in_time_recovery_is_a_follow_up_request(dynamodb_model: Any) -> None:
    table = production_table()
    assert "PointInTimeRecoverySpecification" not in table.create_table_params()
    requests = dict(table.follow_up_requests())
    backups = requests["UpdateContinuousBackups"]
    assert backups["PointInTimeRecoverySpecification"] == {
        "PointInTimeRecoveryEnabled": True,
        "RecoveryPeriodInDays": 7,
    }
    for operation, params in table.follow_up_requests():
        assert botocore_errors(dynamodb_model, operation, params) == "", operation


# -- CloudFormation ----------------------------------------------------------------------------


def test_the_resource_validates_against_cloudformations_schema(cfn_schema: dict[str, Any]) -> None:
    resource = production_table().cloudformation()
    properties = resource["Properties"]
    for setting, (_, prop) in MAPPING.items():
        assert prop in properties, setting
        assert prop in cfn_schema["properties"], prop
    validator = jsonschema.Draft7Validator(cfn_schema)
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(properties)]
    assert errors == []


def test_the_schema_check_catches_a_createtable_shape(cfn_schema: dict[str, Any]) -> None:
    """CloudFormation says SSEEnabled where CreateTable says Enabled: the check can fail."""
    properties = production_table().cloudformation()["Properties"]
    properties["SSESpecification"] = production_table().create_table_params()["SSESpecification"]
    assert list(jsonschema.Draft7Validator(cfn_schema).iter_errors(properties))


def test_cloudformation_differs_from_create_table_only_where_documented() -> None:
    table = production_table()
    properties = table.cloudformation()["Properties"]
    assert properties["SSESpecification"] == {
        "SSEEnabled": True,
        "SSEType": "KMS",
        "KMSMasterKeyId": KEY_ARN,
    }
    assert properties["PointInTimeRecoverySpecification"] == {
        "PointInTimeRecoveryEnabled": True,
        "RecoveryPeriodInDays": 7,
    }
    same = (
        "Tags",
        "OnDemandThroughput",
        "WarmThroughput",
        "TableClass",
        "DeletionProtectionEnabled",
    )
    created = table.create_table_params()
    assert {k: properties[k] for k in same} == {k: created[k] for k in same}


def test_a_complete_template_passes_cfn_lint() -> None:
    template = production_table().cloudformation(template=True, logical_id="ShopTable")
    assert set(template) == {"AWSTemplateFormatVersion", "Description", "Resources", "Outputs"}
    assert template["Resources"] == {"ShopTable": production_table().cloudformation()}
    assert template["Outputs"]["TableArn"]["Value"] == {"Fn::GetAtt": ["ShopTable", "Arn"]}
    assert template["Outputs"]["StreamArn"]["Value"] == {"Fn::GetAtt": ["ShopTable", "StreamArn"]}
    assert template["Outputs"]["TableName"]["Value"] == {"Ref": "ShopTable"}
    matches = lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))
    assert [str(m) for m in matches] == []


def test_cfn_lint_catches_a_bad_template() -> None:
    template = production_table().cloudformation(template=True)
    template["Resources"]["Table"]["Properties"]["TableClass"] = "GLACIER"
    assert lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))


def test_a_table_without_a_stream_has_no_stream_output() -> None:
    assert set(Table("Shop").cloudformation(template=True)["Outputs"]) == {"TableName", "TableArn"}


# -- refused settings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "culprit"),
    [
        ({"recovery_period_days": 7}, "point_in_time_recovery=True"),
        ({"point_in_time_recovery": True, "recovery_period_days": 36}, "1 to 35"),
        ({"point_in_time_recovery": True, "recovery_period_days": 0}, "1 to 35"),
        ({"point_in_time_recovery": "yes"}, "point_in_time_recovery"),
        ({"deletion_protection": 1}, "deletion_protection"),
        ({"kms_key": ""}, "kms_key"),
        ({"tags": {"aws:owner": "x"}}, "'aws:owner'"),
        ({"tags": {"k": "v" * 257}}, "'k'"),
        ({"tags": {f"k{i}": "v" for i in range(51)}}, "51 tags"),
        ({"tags": ["team"]}, "tags"),
        ({"max_throughput": (0, 5)}, "max_throughput"),
        ({"max_throughput": (None, None)}, "max_throughput"),
        ({"warm_throughput": 100}, "warm_throughput"),
        ({"table_class": "GLACIER"}, "'GLACIER'"),
        (
            {"billing_mode": "PROVISIONED", "provisioned": (5, 5), "max_throughput": (10, 10)},
            "provisioned=",
        ),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(kwargs: dict[str, Any], culprit: str) -> None:
    with pytest.raises(ModelDefinitionError) as info:
        Table("Shop", **kwargs)
    assert culprit in str(info.value)
    assert "'Shop'" in str(info.value)


def test_default_settings_change_nothing() -> None:
    table = Table("Shop")
    assert table.settings.is_default
    assert "settings=" not in repr(table)
    assert "kms_key='alias/aws/dynamodb'" in repr(Table("Shop", kms_key="alias/aws/dynamodb"))
