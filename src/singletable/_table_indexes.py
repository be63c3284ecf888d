"""A table's secondary indexes as declared (``GSI``, ``LSI``) and as resolved
(``IndexKeys``: the key attribute names of the table or of one index, derived or native)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ._record import FrozenRecord, Record
from .errors import ModelDefinitionError

ProjectionSpec = Literal["ALL", "KEYS_ONLY"] | tuple[Literal["INCLUDE"], Sequence[str]]


def projection_dict(projection: ProjectionSpec) -> dict[str, Any]:
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
        return str(projection_dict(self.projection)["ProjectionType"])


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


def resolve_index(
    table: str, index: SecondaryIndex, table_sk: str | None, table_pk: str
) -> IndexKeys:
    """An index declaration checked and resolved to its key attributes, for table ``table``."""
    if not isinstance(index, (GSI, LSI)):
        raise ModelDefinitionError(
            f"Table {table!r}: indexes must be GSI(...) or LSI(...), got {index!r}"
        )
    if not index.name.isidentifier():
        raise ModelDefinitionError(
            f"Table {table!r}: index handle {index.name!r} must be a Python identifier "
            f"(it is an attribute of 'class Keys'); pass the physical name as "
            f"index_name={index.name!r} and a handle like name='ByEmail'"
        )
    projection_dict(index.projection)
    if isinstance(index, LSI):
        if table_sk is None:
            raise ModelDefinitionError(
                f"Table {table!r}: LSI {index.name!r} needs a table with a sort key"
            )
        return IndexKeys(
            index.name, table_pk, index.sk, index.projection_type, index.physical_name, True
        )
    pk_attrs, sk_attrs = index.key_attributes(table)
    if not index.is_native:
        return IndexKeys(
            index.name,
            pk_attrs[0],
            sk_attrs[0] if sk_attrs else None,
            index.projection_type,
            index.physical_name,
        )
    return IndexKeys(
        index.name,
        pk_attrs[0],
        sk_attrs[0] if sk_attrs else None,
        index.projection_type,
        index.physical_name,
        pk_attributes=pk_attrs,
        sk_attributes=sk_attrs,
    )
