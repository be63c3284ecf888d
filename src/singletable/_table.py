"""The physical table: key attribute names, secondary indexes, TTL and type-tag attributes."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ._table_indexes import (
    GSI,
    LSI,
    IndexKeys,
    ProjectionSpec,
    SecondaryIndex,
    projection_dict,
    resolve_index,
)
from ._table_settings import TableClass, TableSettings, Units, table_settings
from .errors import InvalidRequestError, ModelDefinitionError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["GSI", "LSI", "IndexKeys", "ProjectionSpec", "SecondaryIndex", "Table"]

BillingMode = Literal["PAY_PER_REQUEST", "PROVISIONED"]
StreamViewType = Literal["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"]
STREAM_VIEW_TYPES: tuple[StreamViewType, ...] = (
    "NEW_AND_OLD_IMAGES",
    "NEW_IMAGE",
    "OLD_IMAGE",
    "KEYS_ONLY",
)


class Table:
    """One overloaded DynamoDB table.

    ``name`` is the default physical name (a ``Repository`` may override it per stage).
    ``stream`` turns on the table's DynamoDB stream with that view type
    (``"NEW_AND_OLD_IMAGES"``, ``"NEW_IMAGE"``, ``"OLD_IMAGE"`` or ``"KEYS_ONLY"``): see
    :mod:`singletable.streams`. ``datetime_format`` is how its entities store datetime
    fields (``"pynamodb"`` to adopt a PynamoDB table; see
    :class:`~singletable._wire.DatetimeFormat`).

    Production settings (all optional; ``create_table_params()``, ``cloudformation()`` and
    ``create()`` carry them): ``point_in_time_recovery=True`` with ``recovery_period_days``
    (1-35, default 35), ``deletion_protection=True``, ``kms_key`` (a customer managed KMS key
    id, ARN or alias; ``"alias/aws/dynamodb"`` for the AWS managed key), ``tags`` (a mapping),
    ``max_throughput=(read, write)`` (the on-demand cap, request units per second),
    ``warm_throughput=(read, write)`` (pre-warmed units per second) and ``table_class``
    (``"STANDARD"`` or ``"STANDARD_INFREQUENT_ACCESS"``). See docs/production.md.
    """

    # Equality is identity: two tables are the same table only if they are one object.
    __slots__ = (
        "_entities",
        "_index_keys",
        "_native_types",
        "billing_mode",
        "datetime_format",
        "delimiter",
        "indexes",
        "key_values",
        "name",
        "pk",
        "provisioned",
        "settings",
        "sk",
        "stream",
        "ttl_attribute",
        "type_attribute",
    )

    def __init__(
        self,
        name: str,
        pk: str = "PK",
        sk: str | None = "SK",
        indexes: Sequence[SecondaryIndex] = (),
        ttl_attribute: str | None = None,
        type_attribute: str = "_type",
        billing_mode: BillingMode = "PAY_PER_REQUEST",
        provisioned: tuple[int, int] | None = None,
        delimiter: str = "#",
        key_values: Literal["refuse", "escape"] = "refuse",
        stream: StreamViewType | None = None,
        datetime_format: Any = None,
        *,
        point_in_time_recovery: bool = False,
        recovery_period_days: int | None = None,
        deletion_protection: bool = False,
        kms_key: str | None = None,
        tags: Mapping[str, str] | None = None,
        max_throughput: Units | None = None,
        warm_throughput: Units | None = None,
        table_class: TableClass | None = None,
    ) -> None:
        self.name = name
        self.pk = pk
        self.sk = sk
        self.indexes: Sequence[SecondaryIndex] = indexes
        self.ttl_attribute = ttl_attribute
        self.type_attribute = type_attribute
        self.billing_mode: BillingMode = billing_mode
        self.provisioned = provisioned
        self.delimiter = delimiter
        self.key_values: Literal["refuse", "escape"] = key_values
        self.stream: StreamViewType | None = stream
        self.datetime_format = _datetime_format(datetime_format)
        self._entities: dict[str, type] = {}
        self._index_keys: dict[str | None, IndexKeys] = {}

        self._check_options()
        self.settings: TableSettings = table_settings(
            self.name,
            billing_mode=self.billing_mode,
            point_in_time_recovery=point_in_time_recovery,
            recovery_period_days=recovery_period_days,
            deletion_protection=deletion_protection,
            kms_key=kms_key,
            tags=tags,
            max_throughput=max_throughput,
            warm_throughput=warm_throughput,
            table_class=table_class,
        )
        self.indexes = tuple(self.indexes)
        self._index_keys[None] = IndexKeys(None, self.pk, self.sk, "ALL", None)
        reserved = {self.pk, self.sk, self.type_attribute}
        for index in self.indexes:
            keys = resolve_index(self.name, index, self.sk, self.pk)
            if index.name in self._index_keys:
                raise ModelDefinitionError(f"Table {self.name!r}: index {index.name!r} twice")
            self._index_keys[index.name] = keys
        if self.type_attribute in {self.pk, self.sk}:
            raise ModelDefinitionError(
                f"Table {self.name!r}: type_attribute {self.type_attribute!r} is a key attribute"
            )
        if self.ttl_attribute is not None and self.ttl_attribute in reserved:
            raise ModelDefinitionError(
                f"Table {self.name!r}: ttl_attribute {self.ttl_attribute!r} is a key attribute "
                "or the type tag"
            )
        self._check_native_attributes()
        self._native_types: dict[str, tuple[str, str]] = {}

    def _check_options(self) -> None:
        """The scalar options, checked (one message each)."""
        if not self.name:
            raise ModelDefinitionError("Table needs a non-empty name")
        if len(self.delimiter) != 1 or self.delimiter in "{}%":
            raise ModelDefinitionError(
                f"Table {self.name!r}: delimiter {self.delimiter!r} must be one character "
                "other than '{', '}' and '%'"
            )
        if self.key_values not in ("refuse", "escape"):
            raise ModelDefinitionError(
                f"Table {self.name!r}: key_values must be 'refuse' or 'escape', "
                f"not {self.key_values!r}"
            )
        if self.stream is not None and self.stream not in STREAM_VIEW_TYPES:
            raise ModelDefinitionError(
                f"Table {self.name!r}: stream must be one of {', '.join(STREAM_VIEW_TYPES)} "
                f"(or None), not {self.stream!r}"
            )
        if self.billing_mode == "PROVISIONED" and self.provisioned is None:
            raise ModelDefinitionError(
                f"Table {self.name!r}: billing_mode='PROVISIONED' needs provisioned=(read, write)"
            )

    def _check_native_attributes(self) -> None:
        """A native index's attributes are entity fields (or the table's own key attributes,
        which hold the rendered table key): never the type tag, the TTL number or an attribute
        that singletable derives for another index."""
        derived = self.key_attributes - {self.pk, self.sk}
        for keys in self._index_keys.values():
            if not keys.native:
                continue
            for attr in keys.attributes:
                if attr in derived or attr in (self.type_attribute, self.ttl_attribute):
                    raise ModelDefinitionError(
                        f"Table {self.name!r}: native index {keys.name!r} is keyed on {attr!r}, "
                        "which singletable writes itself (a derived index key, the type tag or "
                        "the TTL); key it on entity fields"
                    )

    def __repr__(self) -> str:
        fmt = "" if self.datetime_format is None else f", datetime_format={self.datetime_format!r}"
        if not self.settings.is_default:
            fmt += f", settings={self.settings!r}"
        return (
            f"{type(self).__qualname__}(name={self.name!r}, pk={self.pk!r}, sk={self.sk!r}, "
            f"indexes={self.indexes!r}, ttl_attribute={self.ttl_attribute!r}, "
            f"type_attribute={self.type_attribute!r}, billing_mode={self.billing_mode!r}, "
            f"provisioned={self.provisioned!r}, delimiter={self.delimiter!r}, "
            f"key_values={self.key_values!r}, stream={self.stream!r}{fmt})"
        )

    # -- lookups -----------------------------------------------------------------------------

    def index_keys(self, name: str | None) -> IndexKeys:
        """Key attribute names of the base table (``None``) or of the index handle ``name``."""
        try:
            return self._index_keys[name]
        except KeyError:
            known = ", ".join(repr(n) for n in self._index_keys if n is not None) or "none"
            raise ModelDefinitionError(
                f"Table {self.name!r} has no index {name!r} (indexes: {known}); "
                "declare it in Table(indexes=[GSI(...)])"
            ) from None

    @property
    def index_names(self) -> list[str]:
        return [i.name for i in self.indexes]

    @property
    def key_attributes(self) -> frozenset[str]:
        """Every attribute singletable derives as a key: the table's and each derived index's
        (a native index's attributes are entity fields, not listed here)."""
        names: set[str] = set()
        for keys in self._index_keys.values():
            if not keys.native:
                names.update(keys.attributes)
        return frozenset(names)

    @property
    def native_attributes(self) -> frozenset[str]:
        """The attributes native indexes are keyed on that are entity fields (the table's own
        key attributes left out)."""
        names = {a for keys in self._index_keys.values() if keys.native for a in keys.attributes}
        return frozenset(names - {self.pk, self.sk})

    def register_native_type(self, attribute: str, kind: str, owner: str) -> None:
        """Record that entity field ``owner`` stores native key ``attribute`` as ``kind``
        (``S``, ``N`` or ``B``); another entity typing it differently is refused."""
        known = self._native_types.get(attribute)
        if known is not None and known[0] != kind and known[1] != owner:
            raise ModelDefinitionError(
                f"{owner}: stores index key attribute {attribute!r} as {kind}, but "
                f"{known[1]} stores it as {known[0]}; one attribute has one type in every "
                "index keyed on it: give the fields one type"
            )
        if known is None or known[1] == owner:
            self._native_types[attribute] = (kind, owner)

    def attribute_type(self, attribute: str) -> str:
        """The DynamoDB type (``S``/``N``/``B``) of a key attribute: ``S`` for the derived
        ones, the declaring entities' field type for a native one."""
        if attribute not in self.native_attributes:
            return "S"
        known = self._native_types.get(attribute)
        if known is None:
            users = [
                k.name for k in self._index_keys.values() if k.native and attribute in k.attributes
            ]
            raise ModelDefinitionError(
                f"Table {self.name!r}: no entity declares a field for {attribute!r}, a key "
                f"attribute of native index {users[0]!r}, so its type is unknown; declare "
                "the entities before creating the table"
            )
        return known[0]

    def register_entity(self, type_name: str, cls: type) -> None:
        existing = self._entities.get(type_name)
        same_definition = existing is not None and (existing.__module__, existing.__qualname__) == (
            cls.__module__,
            cls.__qualname__,
        )
        if existing is not None and existing is not cls and not same_definition:
            raise ModelDefinitionError(
                f"type name {type_name!r} is used by {existing.__qualname__} and "
                f"{cls.__qualname__} on table {self.name!r}; give one of them "
                f"type='...' so their items can be told apart"
            )
        self._entities[type_name] = cls

    @property
    def entities(self) -> dict[str, type]:
        """Entity classes declared on this table, by type name."""
        return dict(self._entities)

    # -- schema ------------------------------------------------------------------------------

    def _key_schema(self, keys: IndexKeys) -> list[dict[str, str]]:
        schema = [{"AttributeName": a, "KeyType": "HASH"} for a in keys.pk_attributes]
        schema += [{"AttributeName": a, "KeyType": "RANGE"} for a in keys.sk_attributes]
        return schema

    def create_table_params(self, table_name: str | None = None) -> dict[str, Any]:
        """The exact ``CreateTable`` keyword arguments for this table."""
        attrs: list[str] = []
        for keys in self._index_keys.values():
            for attr in keys.attributes:
                if attr not in attrs:
                    attrs.append(attr)
        params: dict[str, Any] = {
            "TableName": table_name or self.name,
            "KeySchema": self._key_schema(self._index_keys[None]),
            "AttributeDefinitions": [
                {"AttributeName": a, "AttributeType": self.attribute_type(a)} for a in attrs
            ],
        }
        throughput = None
        if self.billing_mode == "PROVISIONED" and self.provisioned:
            throughput = {
                "ReadCapacityUnits": self.provisioned[0],
                "WriteCapacityUnits": self.provisioned[1],
            }
        gsis = []
        lsis = []
        for index in self.indexes:
            entry: dict[str, Any] = {"IndexName": index.physical_name}
            entry["KeySchema"] = self._key_schema(self._index_keys[index.name])
            if isinstance(index, LSI):
                entry["Projection"] = projection_dict(index.projection)
                lsis.append(entry)
            else:
                entry["Projection"] = projection_dict(index.projection)
                if throughput:
                    entry["ProvisionedThroughput"] = dict(throughput)
                gsis.append(entry)
        if gsis:
            params["GlobalSecondaryIndexes"] = gsis
        if lsis:
            params["LocalSecondaryIndexes"] = lsis
        params["BillingMode"] = self.billing_mode
        if throughput:
            params["ProvisionedThroughput"] = throughput
        if self.stream is not None:
            params["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": self.stream}
        params.update(self.settings.create_params())
        return params

    def follow_up_requests(self, table_name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The requests ``create()`` sends once the table is ACTIVE, for what CreateTable
        cannot set: ``(operation, parameters)`` pairs, ``UpdateTimeToLive`` when
        ``ttl_attribute`` is set and ``UpdateContinuousBackups`` for point-in-time recovery."""
        name = table_name or self.name
        requests: list[tuple[str, dict[str, Any]]] = []
        if self.ttl_attribute:
            ttl = {"Enabled": True, "AttributeName": self.ttl_attribute}
            requests.append(
                ("UpdateTimeToLive", {"TableName": name, "TimeToLiveSpecification": ttl})
            )
        return requests + self.settings.follow_up_requests(name)

    def cloudformation(
        self, table_name: str | None = None, *, template: bool = False, logical_id: str = "Table"
    ) -> dict[str, Any]:
        """An ``AWS::DynamoDB::Table`` resource for this table; with ``template=True`` a
        complete template: the resource under ``logical_id`` and outputs for the table's name,
        ARN and (with ``stream=``) stream ARN."""
        props = self.create_table_params(table_name)
        if self.stream is not None:  # CloudFormation's StreamSpecification has no StreamEnabled
            props["StreamSpecification"] = {"StreamViewType": self.stream}
        if self.ttl_attribute:
            props["TimeToLiveSpecification"] = {
                "AttributeName": self.ttl_attribute,
                "Enabled": True,
            }
        props.update(self.settings.cloudformation_properties())
        resource = {"Type": "AWS::DynamoDB::Table", "Properties": props}
        if not template:
            return resource
        outputs: dict[str, Any] = {
            "TableName": {"Description": "the table's name", "Value": {"Ref": logical_id}},
            "TableArn": {
                "Description": "the table's ARN",
                "Value": {"Fn::GetAtt": [logical_id, "Arn"]},
            },
        }
        if self.stream is not None:
            outputs["StreamArn"] = {
                "Description": "the table's stream ARN",
                "Value": {"Fn::GetAtt": [logical_id, "StreamArn"]},
            }
        return {
            "AWSTemplateFormatVersion": "2010-09-09",
            "Description": f"DynamoDB table {props['TableName']} (generated by singletable)",
            "Resources": {logical_id: resource},
            "Outputs": outputs,
        }

    def create(
        self,
        client: DynamoDBClient,
        *,
        table_name: str | None = None,
        wait: bool = True,
        timeout: float = 300.0,
        delay: float = 1.0,
    ) -> None:
        """Create the table (with its stream and production settings), wait until it is
        ACTIVE (boto3's ``table_exists`` waiter, polling every ``delay`` seconds for at most
        ``timeout``), then send :meth:`follow_up_requests`: TTL and point-in-time recovery.

        DynamoDB refuses ``UpdateTimeToLive`` and ``UpdateContinuousBackups`` while a table is
        CREATING, so a table that needs them cannot be created with ``wait=False``
        (:class:`~singletable.errors.InvalidRequestError`, before anything is sent).
        """
        name = table_name or self.name
        follow_ups = self.follow_up_requests(name)
        if follow_ups and not wait:
            raise InvalidRequestError(
                f"Table {self.name!r}: {', '.join(op for op, _ in follow_ups)} can only be sent "
                "once the table is ACTIVE; create it with wait=True"
            )
        client.create_table(**self.create_table_params(name))
        if not wait:
            return
        wait_until_active(client, name, timeout=timeout, delay=delay)
        for operation, params in follow_ups:
            method = getattr(client, _METHODS[operation])
            method(**params)


_METHODS = {
    "UpdateTimeToLive": "update_time_to_live",
    "UpdateContinuousBackups": "update_continuous_backups",
}


def wait_until_active(
    client: DynamoDBClient, table_name: str, *, timeout: float = 300.0, delay: float = 1.0
) -> None:
    """Wait with boto3's ``table_exists`` waiter until DescribeTable reports the table
    ACTIVE (its indexes created with it are ACTIVE then too), polling every ``delay``
    seconds (the waiter's own default is 20) for at most about ``timeout`` seconds;
    :class:`TimeoutError` after that. A table that does not exist yet counts as not ACTIVE."""
    from botocore.exceptions import WaiterError

    if not delay > 0:
        raise ValueError(f"delay must be a positive number of seconds, not {delay!r}")
    # botocore sleeps Delay seconds between polls; a fraction is fine at run time (the stubs
    # type it int)
    config: Any = {"Delay": delay, "MaxAttempts": max(1, math.ceil(timeout / delay)) + 1}
    try:
        client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig=config)
    except WaiterError as exc:
        if not str(exc.kwargs.get("reason", "")).startswith("Max attempts exceeded"):
            raise  # DescribeTable itself failed (access denied, no region...)
        raise TimeoutError(f"table {table_name!r} not ACTIVE after {timeout:.0f} s") from exc


def declared_table(owner: type, table: object) -> Table:
    """``table`` checked as the ``table=`` class argument of ``owner`` (an entity or
    repository class)."""
    if not isinstance(table, Table):
        raise ModelDefinitionError(
            f"{owner.__qualname__}: table= must be a singletable Table, got {table!r}"
        )
    return table


def _datetime_format(value: Any) -> Any:
    """``Table(datetime_format=...)``: a :class:`~singletable._wire.DatetimeFormat`, its name
    or pattern, or None (canonical)."""
    if value is None:
        return None
    from ._wire import DatetimeFormat

    return value if isinstance(value, DatetimeFormat) else DatetimeFormat(value)
