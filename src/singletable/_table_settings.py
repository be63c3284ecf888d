"""A table's production settings: backups, deletion protection, encryption, tags, throughput
caps and pre-warming, storage class.

Each setting maps to the CreateTable parameter and the ``AWS::DynamoDB::Table`` property of the
documented name (``tests/unit/test_table_settings.py`` checks both against botocore's service
model and CloudFormation's resource schema). Point-in-time recovery is not a CreateTable
parameter: :meth:`TableSettings.follow_up_requests` gives the ``UpdateContinuousBackups`` call
``Table.create`` sends once the table is ACTIVE (CloudFormation takes it as a property).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ._record import FrozenRecord
from .errors import ModelDefinitionError

TableClass = Literal["STANDARD", "STANDARD_INFREQUENT_ACCESS"]
TABLE_CLASSES: tuple[TableClass, ...] = ("STANDARD", "STANDARD_INFREQUENT_ACCESS")
Units = tuple[int | None, int | None]
"""(read, write) units; either may be None (not set), not both."""

AWS_MANAGED_KEY = "alias/aws/dynamodb"
"""``kms_key=AWS_MANAGED_KEY`` encrypts with the AWS managed key (no key id is sent)."""

MAX_RECOVERY_DAYS = 35
MAX_TAGS = 50


class TableSettings(FrozenRecord):
    """The settings of :class:`~singletable.Table` that are not keys or indexes."""

    # A declaration: immutable, equal by value.
    __slots__ = (
        "deletion_protection",
        "kms_key",
        "max_throughput",
        "point_in_time_recovery",
        "recovery_period_days",
        "table_class",
        "tags",
        "warm_throughput",
    )
    _fields = (
        "point_in_time_recovery",
        "recovery_period_days",
        "deletion_protection",
        "kms_key",
        "tags",
        "max_throughput",
        "warm_throughput",
        "table_class",
    )

    point_in_time_recovery: bool
    recovery_period_days: int | None
    deletion_protection: bool
    kms_key: str | None
    tags: tuple[tuple[str, str], ...]
    max_throughput: Units | None
    warm_throughput: Units | None
    table_class: TableClass | None

    def __init__(
        self,
        point_in_time_recovery: bool = False,
        recovery_period_days: int | None = None,
        deletion_protection: bool = False,
        kms_key: str | None = None,
        tags: tuple[tuple[str, str], ...] = (),
        max_throughput: Units | None = None,
        warm_throughput: Units | None = None,
        table_class: TableClass | None = None,
    ) -> None:
        object.__setattr__(self, "point_in_time_recovery", point_in_time_recovery)
        object.__setattr__(self, "recovery_period_days", recovery_period_days)
        object.__setattr__(self, "deletion_protection", deletion_protection)
        object.__setattr__(self, "kms_key", kms_key)
        object.__setattr__(self, "tags", tags)
        object.__setattr__(self, "max_throughput", max_throughput)
        object.__setattr__(self, "warm_throughput", warm_throughput)
        object.__setattr__(self, "table_class", table_class)

    @property
    def is_default(self) -> bool:
        return self == TableSettings()

    # -- CreateTable ---------------------------------------------------------------------------

    def create_params(self) -> dict[str, Any]:
        """The CreateTable parameters these settings add (none for the defaults)."""
        params: dict[str, Any] = {}
        if self.kms_key is not None:
            params["SSESpecification"] = {"Enabled": True, **self._kms()}
        if self.tags:
            params["Tags"] = [{"Key": key, "Value": value} for key, value in self.tags]
        if self.table_class is not None:
            params["TableClass"] = self.table_class
        if self.deletion_protection:
            params["DeletionProtectionEnabled"] = True
        if self.warm_throughput is not None:
            params["WarmThroughput"] = _units(
                self.warm_throughput, "ReadUnitsPerSecond", "WriteUnitsPerSecond"
            )
        if self.max_throughput is not None:
            params["OnDemandThroughput"] = _units(
                self.max_throughput, "MaxReadRequestUnits", "MaxWriteRequestUnits"
            )
        return params

    def follow_up_requests(self, table_name: str) -> list[tuple[str, dict[str, Any]]]:
        """The requests that apply what CreateTable cannot set, once the table is ACTIVE:
        ``UpdateContinuousBackups`` for point-in-time recovery."""
        if not self.point_in_time_recovery:
            return []
        return [
            (
                "UpdateContinuousBackups",
                {"TableName": table_name, "PointInTimeRecoverySpecification": self._pitr()},
            )
        ]

    # -- CloudFormation ------------------------------------------------------------------------

    def cloudformation_properties(self) -> dict[str, Any]:
        """The ``AWS::DynamoDB::Table`` properties these settings add. They differ from
        CreateTable's in two places: point-in-time recovery is a property, and encryption is
        ``SSEEnabled`` where CreateTable says ``Enabled``."""
        props = self.create_params()
        if self.kms_key is not None:
            props["SSESpecification"] = {"SSEEnabled": True, **self._kms()}
        if self.point_in_time_recovery:
            props["PointInTimeRecoverySpecification"] = self._pitr()
        return props

    # -- parts ---------------------------------------------------------------------------------

    def _kms(self) -> dict[str, str]:
        if self.kms_key == AWS_MANAGED_KEY:  # DynamoDB's default key: not named
            return {"SSEType": "KMS"}
        assert self.kms_key is not None
        return {"SSEType": "KMS", "KMSMasterKeyId": self.kms_key}

    def _pitr(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"PointInTimeRecoveryEnabled": True}
        if self.recovery_period_days is not None:
            spec["RecoveryPeriodInDays"] = self.recovery_period_days
        return spec


def _units(units: Units, read: str, write: str) -> dict[str, int]:
    out = {}
    if units[0] is not None:
        out[read] = units[0]
    if units[1] is not None:
        out[write] = units[1]
    return out


def table_settings(
    table: str,
    *,
    billing_mode: str,
    point_in_time_recovery: bool,
    recovery_period_days: int | None,
    deletion_protection: bool,
    kms_key: str | None,
    tags: Mapping[str, str] | None,
    max_throughput: Units | None,
    warm_throughput: Units | None,
    table_class: str | None,
) -> TableSettings:
    """The checked settings of table ``table``; :class:`ModelDefinitionError` naming the
    setting at fault."""

    def refuse(message: str) -> ModelDefinitionError:
        return ModelDefinitionError(f"Table {table!r}: {message}")

    if not isinstance(point_in_time_recovery, bool):
        raise refuse("point_in_time_recovery must be True or False")
    if recovery_period_days is not None:
        if not point_in_time_recovery:
            raise refuse("recovery_period_days needs point_in_time_recovery=True")
        if (
            type(recovery_period_days) is not int
            or not 1 <= recovery_period_days <= MAX_RECOVERY_DAYS
        ):
            raise refuse(
                f"recovery_period_days must be a whole number of days from 1 to "
                f"{MAX_RECOVERY_DAYS}, not {recovery_period_days!r}"
            )
    if not isinstance(deletion_protection, bool):
        raise refuse("deletion_protection must be True or False")
    if kms_key is not None and (not isinstance(kms_key, str) or not kms_key):
        raise refuse(
            f"kms_key must be a KMS key id, ARN or alias (or {AWS_MANAGED_KEY!r} for the AWS "
            f"managed key), not {kms_key!r}"
        )
    if table_class is not None and table_class not in TABLE_CLASSES:
        raise refuse(f"table_class must be one of {', '.join(TABLE_CLASSES)}, not {table_class!r}")
    if max_throughput is not None and billing_mode != "PAY_PER_REQUEST":
        raise refuse(
            "max_throughput caps on-demand tables; a PROVISIONED table has provisioned= instead"
        )
    return TableSettings(
        point_in_time_recovery=point_in_time_recovery,
        recovery_period_days=recovery_period_days,
        deletion_protection=deletion_protection,
        kms_key=kms_key,
        tags=_tags(tags, refuse),
        max_throughput=_checked_units("max_throughput", max_throughput, refuse),
        warm_throughput=_checked_units("warm_throughput", warm_throughput, refuse),
        table_class=table_class,
    )


def _tags(tags: Mapping[str, str] | None, refuse: Any) -> tuple[tuple[str, str], ...]:
    if tags is None:
        return ()
    if not isinstance(tags, Mapping):
        raise refuse(f"tags must be a mapping of tag keys to values, not {tags!r}")
    if len(tags) > MAX_TAGS:
        raise refuse(f"{len(tags)} tags: DynamoDB takes at most {MAX_TAGS} per table")
    for key, value in tags.items():
        if not isinstance(key, str) or not 1 <= len(key) <= 128 or key.startswith("aws:"):
            raise refuse(f"tag key {key!r} must be 1 to 128 characters, not starting 'aws:'")
        if not isinstance(value, str) or len(value) > 256:
            raise refuse(f"tag {key!r}: the value must be a string of at most 256 characters")
    return tuple(tags.items())


def _checked_units(name: str, units: Any, refuse: Any) -> Units | None:
    if units is None:
        return None
    ok = isinstance(units, tuple) and len(units) == 2
    ok = ok and all(u is None or (type(u) is int and u >= 1) for u in units)
    if not ok or units == (None, None):
        raise refuse(
            f"{name} must be (read, write) units per second, whole numbers of at least 1 "
            f"(None leaves one unset), not {units!r}"
        )
    return (units[0], units[1])
