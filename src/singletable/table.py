"""The physical table: key attribute names, secondary indexes, TTL and type-tag attributes."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ._table_settings import TableClass, TableSettings, Units, table_settings
from .errors import InvalidRequestError, ModelDefinitionError
from .record import FrozenRecord, Record

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

ProjectionSpec = Literal["ALL", "KEYS_ONLY"] | tuple[Literal["INCLUDE"], Sequence[str]]
BillingMode = Literal["PAY_PER_REQUEST", "PROVISIONED"]
StreamViewType = Literal["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"]
STREAM_VIEW_TYPES: tuple[StreamViewType, ...] = (
    "NEW_AND_OLD_IMAGES",
    "NEW_IMAGE",
    "OLD_IMAGE",
    "KEYS_ONLY",
)


def _projection_dict(projection: ProjectionSpec) -> dict[str, Any]:
    if projection == "ALL" or projection == "KEYS_ONLY":
        return {"ProjectionType": projection}
    if isinstance(projection, tuple) and len(projection) == 2 and projection[0] == "INCLUDE":
        return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(projection[1])}
    raise ModelDefinitionError(
        f"projection {projection!r} is not valid: use 'ALL', 'KEYS_ONLY' or ('INCLUDE', [attrs])"
    )


class _IndexDeclaration(FrozenRecord):
    """What GSI and LSI declarations share."""

    __slots__ = ()
    name: str
    projection: ProjectionSpec
    index_name: str | None

    @property
    def physical_name(self) -> str:
        return self.index_name or self.name

    @property
    def projection_type(self) -> str:
        return str(_projection_dict(self.projection)["ProjectionType"])


class GSI(_IndexDeclaration):
    """A global secondary index.

    ``name`` is the handle used in ``Keys`` and patterns; ``index_name`` is the physical
    name when it differs (e.g. ``"email-index"``).
    """

    # A declaration: immutable (assignment raises AttributeError), equal by value, hashable.
    __slots__ = ("index_name", "name", "pk", "projection", "sk")
    _fields = ("name", "pk", "sk", "projection", "index_name")

    name: str
    pk: str
    sk: str | None
    projection: ProjectionSpec
    index_name: str | None

    def __init__(
        self,
        name: str,
        pk: str,
        sk: str | None = None,
        projection: ProjectionSpec = "ALL",
        index_name: str | None = None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "pk", pk)
        object.__setattr__(self, "sk", sk)
        object.__setattr__(self, "projection", projection)
        object.__setattr__(self, "index_name", index_name)

    @property
    def is_local(self) -> bool:
        return False


class LSI(_IndexDeclaration):
    """A local secondary index: same partition key as the table, another sort key attribute."""

    # A declaration: immutable (assignment raises AttributeError), equal by value, hashable.
    __slots__ = ("index_name", "name", "projection", "sk")
    _fields = ("name", "sk", "projection", "index_name")

    name: str
    sk: str
    projection: ProjectionSpec
    index_name: str | None

    def __init__(
        self,
        name: str,
        sk: str,
        projection: ProjectionSpec = "ALL",
        index_name: str | None = None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "sk", sk)
        object.__setattr__(self, "projection", projection)
        object.__setattr__(self, "index_name", index_name)

    @property
    def is_local(self) -> bool:
        return True


SecondaryIndex = GSI | LSI


class IndexKeys(Record):
    """Resolved key attribute names of the table or one of its indexes."""

    # Built by Table; treated as immutable (not enforced). Equal by value, hashable.
    __slots__ = ("local", "name", "physical_name", "pk", "projection_type", "sk")
    _fields = ("name", "pk", "sk", "projection_type", "physical_name", "local")

    def __init__(
        self,
        name: str | None,  # None = the base table
        pk: str,
        sk: str | None,
        projection_type: str = "ALL",
        physical_name: str | None = None,
        local: bool = False,
    ) -> None:
        self.name = name
        self.pk = pk
        self.sk = sk
        self.projection_type = projection_type
        self.physical_name = physical_name
        self.local = local


class Table:
    """One overloaded DynamoDB table.

    ``name`` is the default physical name (a ``Repository`` may override it per stage).
    ``stream`` turns on the table's DynamoDB stream with that view type
    (``"NEW_AND_OLD_IMAGES"``, ``"NEW_IMAGE"``, ``"OLD_IMAGE"`` or ``"KEYS_ONLY"``): see
    :mod:`singletable.streams`. ``datetime_format`` is how its entities store datetime
    fields (``"pynamodb"`` to adopt a PynamoDB table; see
    :class:`~singletable.wire.DatetimeFormat`).

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
            if not isinstance(index, (GSI, LSI)):
                raise ModelDefinitionError(
                    f"Table {self.name!r}: indexes must be GSI(...) or LSI(...), got {index!r}"
                )
            if not index.name.isidentifier():
                raise ModelDefinitionError(
                    f"Table {self.name!r}: index handle {index.name!r} must be a Python identifier "
                    f"(it is an attribute of 'class Keys'); pass the physical name as "
                    f"index_name={index.name!r} and a handle like name='ByEmail'"
                )
            if index.name in self._index_keys:
                raise ModelDefinitionError(f"Table {self.name!r}: index {index.name!r} twice")
            _projection_dict(index.projection)
            if isinstance(index, LSI):
                if self.sk is None:
                    raise ModelDefinitionError(
                        f"Table {self.name!r}: LSI {index.name!r} needs a table with a sort key"
                    )
                keys = IndexKeys(
                    index.name, self.pk, index.sk, index.projection_type, index.physical_name, True
                )
            else:
                keys = IndexKeys(
                    index.name, index.pk, index.sk, index.projection_type, index.physical_name
                )
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
        """Every attribute that is a key of the table or of an index."""
        names = set()
        for keys in self._index_keys.values():
            names.add(keys.pk)
            if keys.sk:
                names.add(keys.sk)
        return frozenset(names)

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

    def _key_schema(self, pk: str, sk: str | None) -> list[dict[str, str]]:
        schema = [{"AttributeName": pk, "KeyType": "HASH"}]
        if sk:
            schema.append({"AttributeName": sk, "KeyType": "RANGE"})
        return schema

    def create_table_params(self, table_name: str | None = None) -> dict[str, Any]:
        """The exact ``CreateTable`` keyword arguments for this table."""
        attrs: list[str] = []
        for keys in self._index_keys.values():
            for attr in (keys.pk, keys.sk):
                if attr and attr not in attrs:
                    attrs.append(attr)
        params: dict[str, Any] = {
            "TableName": table_name or self.name,
            "KeySchema": self._key_schema(self.pk, self.sk),
            "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in attrs],
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
            if isinstance(index, LSI):
                entry["KeySchema"] = self._key_schema(self.pk, index.sk)
                entry["Projection"] = _projection_dict(index.projection)
                lsis.append(entry)
            else:
                entry["KeySchema"] = self._key_schema(index.pk, index.sk)
                entry["Projection"] = _projection_dict(index.projection)
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
    """``Table(datetime_format=...)``: a :class:`~singletable.wire.DatetimeFormat`, its name
    or pattern, or None (canonical)."""
    if value is None:
        return None
    from .wire import DatetimeFormat

    return value if isinstance(value, DatetimeFormat) else DatetimeFormat(value)
