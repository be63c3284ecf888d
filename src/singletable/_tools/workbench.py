"""The model as a NoSQL Workbench data model, so it opens in AWS's own modelling tool.

``workbench_model(Shop, items)`` (``singletable schema app:Shop --format workbench
[--items FILE.json]``) writes Workbench's JSON model: one table with its key schema, its
indexes (from ``create_table_params()``, so exactly what CreateTable creates), every attribute
the entities write (Workbench wants each attribute of the sample data declared, with one
type), and a **facet per entity type**: the partition and sort key shown under the entity's key
templates (``CUSTOMER#{customer_id}``), the attributes it writes, and its sample items. Items
of no entity type (``Unique()`` guard items, unknown tags) go to the table's own
``TableData``; each item appears once. ``NULL`` attributes are left out (Workbench refuses
them).

The layout follows AWS's published models: ``aws-samples/amazon-dynamodb-design-patterns``
(``examples/an-online-shop/json/AnOnlineShop_facets.json``: facets with their own
``TableData``) and Workbench 3.x exports (``ModelMetadata.Version`` ``"3.0"``, ``BillingMode``).
"""

from __future__ import annotations

import base64
import enum
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._entity_spec import EntitySpec
    from .._repository import Repository

__all__ = ["FORMAT_VERSION", "workbench_model"]

FORMAT_VERSION = "3.0"
_DATA_ACCESS: dict[str, Any] = {
    "MySql": {}
}  # what Workbench writes for a model without a SQL source


def workbench_model(
    repository: type[Repository],
    items: Iterable[Mapping[str, Any]] | None = None,
    *,
    table_name: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The NoSQL Workbench data model of ``repository``'s table, with ``items`` (wire-format
    items, e.g. a table scan or the layout's seed data) as the facets' sample data."""
    from .._entity import spec_of

    table = repository.__singletable_table__
    params = table.create_table_params(table_name)
    types = {a["AttributeName"]: a["AttributeType"] for a in params["AttributeDefinitions"]}
    specs = [spec_of(cls) for cls in table.entities.values()]
    keys = {entry["AttributeName"] for entry in params["KeySchema"]}
    data = [_without_nulls(item) for item in items or ()]
    left_out = multi_attribute_indexes(params)
    attributes = _non_key_attributes(specs, data, types, keys)
    facets, loose = _facets(specs, data, keys)
    model: dict[str, Any] = {
        "TableName": params["TableName"],
        "KeyAttributes": key_attributes(params["KeySchema"], types),
        "NonKeyAttributes": [
            {"AttributeName": name, "AttributeType": kind} for name, kind in attributes.items()
        ],
        "TableFacets": facets,
        "GlobalSecondaryIndexes": [
            _index(index, types)
            for index in params.get("GlobalSecondaryIndexes", ())
            if index["IndexName"] not in left_out
        ],
    }
    if params.get("LocalSecondaryIndexes"):
        model["LocalSecondaryIndexes"] = [
            _index(index, types) for index in params["LocalSecondaryIndexes"]
        ]
    if loose:
        model["TableData"] = loose
    model["DataAccess"] = dict(_DATA_ACCESS)
    model["BillingMode"] = params["BillingMode"]
    if "ProvisionedThroughput" in params:
        model["ProvisionedCapacitySettings"] = {
            "ProvisionedThroughput": params["ProvisionedThroughput"]
        }
    stamp = _date(now or datetime.now())
    return {
        "ModelName": repository.__qualname__,
        "ModelMetadata": {
            "Author": "singletable",
            "DateCreated": stamp,
            "DateLastModified": stamp,
            "Description": _description(repository, left_out),
            "AWSService": "Amazon DynamoDB",
            "Version": FORMAT_VERSION,
        },
        "DataModel": [model],
    }


# -- keys and indexes --------------------------------------------------------------------------


def key_attributes(key_schema: Sequence[Mapping[str, str]], types: Mapping[str, str]) -> Any:
    """A key schema as Workbench's ``KeyAttributes``: ``PartitionKey`` and ``SortKey``, each an
    attribute name and type. A key of several attributes per role (a multi-attribute index
    key) arrives here as several HASH or RANGE entries; Workbench's single-attribute fields
    cannot hold it, so it is refused by name rather than cut short."""
    roles: dict[str, list[dict[str, str]]] = {"HASH": [], "RANGE": []}
    for entry in key_schema:
        name = entry["AttributeName"]
        roles[entry["KeyType"]].append({"AttributeName": name, "AttributeType": types[name]})
    out: dict[str, Any] = {}
    for role, label in (("HASH", "PartitionKey"), ("RANGE", "SortKey")):
        attributes = roles[role]
        if len(attributes) > 1:
            names = ", ".join(a["AttributeName"] for a in attributes)
            raise ValueError(
                f"a {label} of several attributes ({names}) has no NoSQL Workbench form here"
            )
        if attributes:
            out[label] = attributes[0]
    return out


def _index(index: Mapping[str, Any], types: Mapping[str, str]) -> dict[str, Any]:
    return {
        "IndexName": index["IndexName"],
        "KeyAttributes": key_attributes(index["KeySchema"], types),
        "Projection": dict(index["Projection"]),
    }


# -- attributes --------------------------------------------------------------------------------


def _written_attributes(spec: EntitySpec, key_names: set[str]) -> list[str]:
    """The non-key attributes an entity writes: the type tag, its index keys, its fields."""
    table = spec.table
    names = [table.type_attribute]
    names += [attr for attr, _ in spec.key_templates if attr not in key_names]
    names += [plan.attr for plan in spec.codec.fields]
    return list(dict.fromkeys(n for n in names if n not in key_names))


def _non_key_attributes(
    specs: Sequence[EntitySpec],
    items: Sequence[Mapping[str, Any]],
    key_types: Mapping[str, str],
    key_names: set[str],
) -> dict[str, str]:
    """Every non-key attribute with one type: as the sample items store it (the first item
    that has it), else from the field's annotation; index key attributes are ``S`` (rendered
    templates) or their declared type."""
    found: dict[str, str] = {}
    for item in items:
        for name, value in item.items():
            if name not in key_names and name not in found:
                found[name] = next(iter(value))
    declared: dict[str, str] = {}
    for spec in specs:
        fields = {plan.attr: plan.name for plan in spec.codec.fields}
        for name in _written_attributes(spec, key_names):
            if name in key_types:
                kind = key_types[name]
            elif name in fields:
                kind = _wire_type(spec.cls.model_fields[fields[name]].annotation)
            else:
                kind = "S"  # the type tag
            declared.setdefault(name, kind)
    for name, kind in found.items():
        declared.setdefault(name, kind)
    return {name: found.get(name, kind) for name, kind in declared.items()}


def _wire_type(annotation: Any) -> str:
    """The attribute type a field annotation is stored as (``S`` when unsure)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _wire_type(typing.get_args(annotation)[0])
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return _wire_type(args[0]) if len(args) == 1 else "S"
    if origin in (list, tuple, Sequence):
        return "L"
    if origin in (dict, Mapping):
        return "M"
    if origin in (set, frozenset):
        return {str: "SS", bytes: "BS"}.get(args[0], "NS") if args else "SS"
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return "BOOL"
        if issubclass(annotation, enum.Enum):
            values = {type(member.value) for member in annotation}
            return "N" if values <= {int} else "S"
        if issubclass(annotation, (int, float, Decimal)):
            return "N"
        if issubclass(annotation, bytes):
            return "B"
        if hasattr(annotation, "model_fields"):
            return "M"
    return "S"


# -- facets ------------------------------------------------------------------------------------


def _facets(
    specs: Sequence[EntitySpec], items: Sequence[dict[str, Any]], key_names: set[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One facet per entity type with its items; the items of no entity type."""
    tag_of: dict[str, EntitySpec] = {}
    for spec in specs:
        for tag in spec.type_tags:
            tag_of[tag] = spec
    by_type: dict[str, list[dict[str, Any]]] = {spec.type_name: [] for spec in specs}
    loose: list[dict[str, Any]] = []
    for item in items:
        owner = tag_of.get(_tag(item, specs) or "")
        (by_type[owner.type_name] if owner is not None else loose).append(item)
    facets = []
    for spec in specs:
        alias = {"PartitionKeyAlias": spec.base.pk.text if spec.base.pk else spec.table.pk}
        if spec.base.sk is not None:
            alias["SortKeyAlias"] = spec.base.sk.text
        facets.append(
            {
                "FacetName": spec.type_name,
                "KeyAttributeAlias": alias,
                "TableData": by_type[spec.type_name],
                "NonKeyAttributes": _written_attributes(spec, key_names),
                "DataAccess": dict(_DATA_ACCESS),
            }
        )
    return facets, loose


def _tag(item: Mapping[str, Any], specs: Sequence[EntitySpec]) -> str | None:
    if not specs:
        return None
    value = item.get(specs[0].table.type_attribute)
    return value.get("S") if isinstance(value, Mapping) else None


def _without_nulls(item: Mapping[str, Any]) -> dict[str, Any]:
    """The item as JSON: NULL attributes left out, binary values base64-encoded (as the
    DynamoDB JSON that Workbench and ``aws dynamodb scan`` write)."""
    return {name: _json(value) for name, value in item.items() if "NULL" not in value}


def _json(value: Mapping[str, Any]) -> dict[str, Any]:
    ((kind, inner),) = value.items()
    if kind == "B" and isinstance(inner, (bytes, bytearray)):
        return {"B": base64.b64encode(inner).decode("ascii")}
    if kind == "BS":
        return {"BS": [_json({"B": v})["B"] for v in inner]}
    if kind == "M":
        return {"M": {k: _json(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_json(v) for v in inner]}
    return {kind: inner}


def multi_attribute_indexes(params: Mapping[str, Any]) -> dict[str, list[str]]:
    """The global secondary indexes keyed on several attributes per role (index name -> its
    key attributes): Workbench's model keys an index on one partition and one sort attribute,
    so these are left out of it and named in its description instead of cut short."""
    return {
        index["IndexName"]: [k["AttributeName"] for k in index["KeySchema"]]
        for index in params.get("GlobalSecondaryIndexes", ())
        if len(index["KeySchema"]) > len({k["KeyType"] for k in index["KeySchema"]})
    }


def _description(repository: type[Repository], left_out: Mapping[str, list[str]]) -> str:
    lines = [f"Generated by singletable from {repository.__module__}:{repository.__qualname__}."]
    if left_out:
        lines.append(
            "Not in this model (multi-attribute keys, which the model format cannot hold): "
            + "; ".join(f"{name} ({', '.join(keys)})" for name, keys in left_out.items())
        )
    lines.append("Access patterns:")
    for row in repository.explain():
        where = f" on {row.index}" if row.index else ""
        lines.append(f"- {row.pattern}: {row.operation}{where}, {row.key_condition}")
    return "\n".join(lines)


def _date(moment: datetime) -> str:
    """Workbench's own date format: ``Jun 22, 2020, 11:55 PM``."""
    return moment.strftime("%b %d, %Y, %I:%M %p")
