"""The physical table: key attribute names, secondary indexes, TTL and type-tag attributes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ._record import FrozenRecord, Record
from .errors import ModelDefinitionError

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


#: DynamoDB's limit on the attributes of a multi-attribute key: four partition, four sort.
NATIVE_KEY_ATTRIBUTES = 4


class GSI(_IndexDeclaration):
    """A global secondary index.

    ``name`` is the handle used in ``Keys`` and patterns; ``index_name`` is the physical
    name when it differs (e.g. ``"email-index"``).

    ``pk`` and ``sk`` are either attribute names (``"GSI1PK"``: one derived attribute each,
    rendered from the templates entities give in ``class Keys``) or tuples of 1-4 entity
    attribute names (``pk=("tenant_id", "region"), sk=("created_at",)``): a **native-key
    index**, keyed on the items' own typed attributes, which entities populate by having those
    fields (nothing is derived, and an absent value leaves the item out of the index).
    """

    # A declaration: immutable (assignment raises AttributeError), equal by value, hashable.
    __slots__ = ("index_name", "name", "pk", "projection", "sk")
    _fields = ("name", "pk", "sk", "projection", "index_name")

    name: str
    pk: str | tuple[str, ...]
    sk: str | tuple[str, ...] | None
    projection: ProjectionSpec
    index_name: str | None

    def __init__(
        self,
        name: str,
        pk: str | tuple[str, ...],
        sk: str | tuple[str, ...] | None = None,
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

    @property
    def is_native(self) -> bool:
        """Keyed on the items' own attributes (``pk``/``sk`` given as tuples)."""
        return isinstance(self.pk, tuple)

    def key_attributes(self, table: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(partition attributes, sort attributes)``, checked: one kind of key (derived
        names or native tuples), 1-4 distinct names per native tuple."""
        where = f"Table {table!r}: GSI {self.name!r}"
        pk, sk = self.pk, self.sk
        if not isinstance(pk, tuple):
            if isinstance(sk, tuple):
                raise ModelDefinitionError(
                    f"{where}: pk is an attribute name but sk a tuple; an index is either "
                    "derived (pk='GSI1PK', sk='GSI1SK') or native (pk=('a',), sk=('b',))"
                )
            if not isinstance(pk, str) or not pk or (sk is not None and not isinstance(sk, str)):
                raise ModelDefinitionError(
                    f"{where}: pk and sk must be attribute names (or tuples of them)"
                )
            return (pk,), (sk,) if sk else ()
        if sk is not None and not isinstance(sk, tuple):
            raise ModelDefinitionError(
                f"{where}: pk is a tuple but sk an attribute name; a native index takes tuples "
                f"for both: sk=({sk!r},)"
            )
        sk = sk or ()
        for role, names in (("pk", pk), ("sk", sk)):
            if (role == "pk" and not names) or len(names) > NATIVE_KEY_ATTRIBUTES:
                raise ModelDefinitionError(
                    f"{where}: {role} takes 1 to {NATIVE_KEY_ATTRIBUTES} attribute names, not "
                    f"{len(names)}"
                )
            if not all(isinstance(n, str) and n for n in names):
                raise ModelDefinitionError(f"{where}: {role} must hold attribute names (str)")
        if len(set(pk + sk)) != len(pk + sk):
            raise ModelDefinitionError(f"{where}: an attribute appears twice in pk and sk")
        return pk, sk


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
    """Resolved key attribute names of the table or one of its indexes.

    ``pk``/``sk`` name the (first) partition and sort attribute; ``pk_attributes`` and
    ``sk_attributes`` all of them, in key order (a derived key has one each; a native one
    up to four each, and ``native`` is true).
    """

    # Built by Table; treated as immutable (not enforced). Equal by value, hashable.
    __slots__ = (
        "local",
        "name",
        "native",
        "physical_name",
        "pk",
        "pk_attributes",
        "projection_type",
        "sk",
        "sk_attributes",
    )
    _fields = (
        "name",
        "pk",
        "sk",
        "projection_type",
        "physical_name",
        "local",
        "pk_attributes",
        "sk_attributes",
    )

    def __init__(
        self,
        name: str | None,  # None = the base table
        pk: str,
        sk: str | None,
        projection_type: str = "ALL",
        physical_name: str | None = None,
        local: bool = False,
        pk_attributes: tuple[str, ...] | None = None,
        sk_attributes: tuple[str, ...] | None = None,
    ) -> None:
        self.name = name
        self.pk = pk
        self.sk = sk
        self.projection_type = projection_type
        self.physical_name = physical_name
        self.local = local
        self.native = pk_attributes is not None
        self.pk_attributes = (pk,) if pk_attributes is None else pk_attributes
        self.sk_attributes = ((sk,) if sk else ()) if sk_attributes is None else sk_attributes

    @property
    def attributes(self) -> tuple[str, ...]:
        """Every key attribute, partition first, in key order."""
        return self.pk_attributes + self.sk_attributes


class Table:
    """One overloaded DynamoDB table.

    ``name`` is the default physical name (a ``Repository`` may override it per stage).
    ``stream`` turns on the table's DynamoDB stream with that view type
    (``"NEW_AND_OLD_IMAGES"``, ``"NEW_IMAGE"``, ``"OLD_IMAGE"`` or ``"KEYS_ONLY"``): see
    :mod:`singletable.streams`. ``datetime_format`` is how its entities store datetime
    fields (``"pynamodb"`` to adopt a PynamoDB table; see
    :class:`~singletable._wire.DatetimeFormat`).
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
            elif index.is_native:
                pk_attrs, sk_attrs = index.key_attributes(self.name)
                keys = IndexKeys(
                    index.name,
                    pk_attrs[0],
                    sk_attrs[0] if sk_attrs else None,
                    index.projection_type,
                    index.physical_name,
                    pk_attributes=pk_attrs,
                    sk_attributes=sk_attrs,
                )
            else:
                index.key_attributes(self.name)
                keys = IndexKeys(
                    index.name,
                    index.pk,  # type: ignore[arg-type]  # checked: a name
                    index.sk,  # type: ignore[arg-type]
                    index.projection_type,
                    index.physical_name,
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
        self._check_native_attributes()
        self._native_types: dict[str, tuple[str, str]] = {}

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
                entry["Projection"] = _projection_dict(index.projection)
                lsis.append(entry)
            else:
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
        return params

    def cloudformation(self, table_name: str | None = None) -> dict[str, Any]:
        """An ``AWS::DynamoDB::Table`` resource for this table."""
        props = self.create_table_params(table_name)
        if self.stream is not None:  # CloudFormation's StreamSpecification has no StreamEnabled
            props["StreamSpecification"] = {"StreamViewType": self.stream}
        if self.ttl_attribute:
            props["TimeToLiveSpecification"] = {
                "AttributeName": self.ttl_attribute,
                "Enabled": True,
            }
        return {"Type": "AWS::DynamoDB::Table", "Properties": props}

    def create(
        self,
        client: DynamoDBClient,
        *,
        table_name: str | None = None,
        wait: bool = True,
        timeout: float = 300.0,
        poll_interval: float = 0.05,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Create the table (with its stream, when ``stream=`` is set), wait until it and its
        indexes are ACTIVE, then enable TTL.

        DynamoDB refuses ``UpdateTimeToLive`` while a table is CREATING, so TTL is enabled only
        after the wait (and only when ``wait`` is true, otherwise it cannot be done yet).
        """
        name = table_name or self.name
        client.create_table(**self.create_table_params(name))
        if not wait:
            return
        wait_until_active(client, name, timeout=timeout, poll_interval=poll_interval, sleep=sleep)
        if self.ttl_attribute:
            client.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": self.ttl_attribute},
            )


def wait_until_active(
    client: DynamoDBClient,
    table_name: str,
    *,
    timeout: float = 300.0,
    poll_interval: float = 0.05,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Poll ``DescribeTable`` until the table and all its GSIs are ACTIVE.

    boto3's ``table_exists`` waiter sleeps 20 s between polls; this backs off from
    ``poll_interval`` to at most 2 s.
    """
    deadline = time.monotonic() + timeout
    delay = poll_interval
    while True:
        desc = client.describe_table(TableName=table_name)["Table"]
        statuses: Iterable[str] = [desc.get("TableStatus", "")] + [
            g.get("IndexStatus", "ACTIVE") for g in desc.get("GlobalSecondaryIndexes", [])
        ]
        if all(s == "ACTIVE" for s in statuses):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"table {table_name!r} not ACTIVE after {timeout:.0f} s")
        sleep(delay)
        delay = min(delay * 2, 2.0)


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
