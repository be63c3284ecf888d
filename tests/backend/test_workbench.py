"""The NoSQL Workbench data model: a round trip for the demo shop and every example.

Each repository's table is created in moto and seeded, its items are scanned, and the model
written from them is read back: every entity type is a facet keyed by its templates, every
index is there with the key schema and projection CreateTable gets, every sample item appears
exactly once (and decodes as its entity again), and every attribute of the sample data is
declared with the type the item stores it as (Workbench refuses undeclared attributes).

The format follows AWS's published models:

* aws-samples/amazon-dynamodb-design-patterns,
  ``examples/an-online-shop/json/AnOnlineShop_facets.json`` (commit f148d620e364): a table
  with ``TableFacets``, each ``FacetName``, ``KeyAttributeAlias`` (``PartitionKeyAlias``,
  ``SortKeyAlias``), ``TableData`` (its sample items, DynamoDB JSON), ``NonKeyAttributes``
  (names) and ``DataAccess``; ``GlobalSecondaryIndexes`` with ``IndexName``, ``KeyAttributes``
  and ``Projection``; no table-level ``TableData`` when the facets hold the items;
* a Workbench 3.0 export, ITP-system/dynamodb-modelling-example ``product catalog model.json``
  (commit d85e7ee80bbf): ``ModelMetadata`` with ``Author``, ``DateCreated``,
  ``DateLastModified``, ``Description``, ``AWSService`` and ``Version`` ``"3.0"``, and the
  table's ``BillingMode``.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
from moto_fixtures import create_table

from singletable import GSI, Entity, Repository, Table, get
from singletable._entity import spec_of
from singletable._tools.layout import scan_items
from singletable._tools.workbench import key_attributes, multi_attribute_indexes, workbench_model
from tests.backend.test_iam import MODULES, repository_of
from tests.unit.tools.test_cli import run_cli

if TYPE_CHECKING:
    from moto_fixtures.backends import Backend
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = [pytest.mark.backend("inproc")]

# The published examples' keys (see the module docstring).
MODEL_KEYS = {"ModelName", "ModelMetadata", "DataModel"}
METADATA_KEYS = {
    "Author",
    "DateCreated",
    "DateLastModified",
    "Description",
    "AWSService",
    "Version",
}
FACET_KEYS = {"FacetName", "KeyAttributeAlias", "TableData", "NonKeyAttributes", "DataAccess"}
INDEX_KEYS = {"IndexName", "KeyAttributes", "Projection"}


def seeded_items(module_name: str, client: DynamoDBClient, backend: Backend) -> tuple[Any, list]:
    module = importlib.import_module(module_name)
    repository = repository_of(module)
    table = repository.__singletable_table__
    create_table(backend, client, table, table.name)
    module.seed(repository(client=client))
    return repository, scan_items(client, table.name)


def canonical(item: dict[str, Any]) -> str:
    return json.dumps(item, sort_keys=True, default=str)


@pytest.mark.parametrize("module_name", MODULES)
def test_every_type_index_and_item_round_trips(
    module_name: str, client: DynamoDBClient, backend: Backend
) -> None:
    repository, items = seeded_items(module_name, client, backend)
    assert items
    table = repository.__singletable_table__
    params = table.create_table_params()
    model = json.loads(json.dumps(workbench_model(repository, items)))  # plain JSON

    assert set(model) == MODEL_KEYS
    assert set(model["ModelMetadata"]) == METADATA_KEYS
    assert model["ModelMetadata"]["Version"] == "3.0"
    (data,) = model["DataModel"]
    assert data["TableName"] == table.name
    assert data["BillingMode"] == params["BillingMode"]

    # keys and indexes: what CreateTable gets
    types = {a["AttributeName"]: a["AttributeType"] for a in params["AttributeDefinitions"]}
    assert data["KeyAttributes"] == key_attributes(params["KeySchema"], types)
    assert data["KeyAttributes"]["PartitionKey"]["AttributeName"] == table.pk
    indexes = {i["IndexName"]: i for i in data.get("GlobalSecondaryIndexes", [])}
    expected = {i["IndexName"]: i for i in params.get("GlobalSecondaryIndexes", [])}
    # a multi-attribute index has no form in the model: left out, and named in its description
    left_out = multi_attribute_indexes(params)
    for name, attributes in left_out.items():
        assert f"{name} ({', '.join(attributes)})" in model["ModelMetadata"]["Description"]
        del expected[name]
    assert set(indexes) == set(expected)
    for name, index in indexes.items():
        assert set(index) == INDEX_KEYS
        assert index["Projection"] == expected[name]["Projection"]
        key = index["KeyAttributes"]
        schema = [(key["PartitionKey"]["AttributeName"], "HASH")]
        if "SortKey" in key:
            schema.append((key["SortKey"]["AttributeName"], "RANGE"))
        assert schema == [(k["AttributeName"], k["KeyType"]) for k in expected[name]["KeySchema"]]

    # a facet per entity type, keyed by its templates
    facets = {f["FacetName"]: f for f in data["TableFacets"]}
    assert set(facets) == set(table.entities)
    declared = {a["AttributeName"]: a["AttributeType"] for a in data["NonKeyAttributes"]}
    for tag, cls in table.entities.items():
        facet, spec = facets[tag], spec_of(cls)
        assert set(facet) == FACET_KEYS
        assert facet["KeyAttributeAlias"]["PartitionKeyAlias"] == spec.base.pk.text
        if spec.base.sk is not None:
            assert facet["KeyAttributeAlias"]["SortKeyAlias"] == spec.base.sk.text
        assert set(facet["NonKeyAttributes"]) <= set(declared)
        for item in facet["TableData"]:
            assert item[table.type_attribute]["S"] in spec.type_tags
            assert canonical(cls.from_item(item).to_item()) == canonical(item)  # decodes again

    # every sample item, once; every attribute declared with its stored type
    shown = [item for f in data["TableFacets"] for item in f["TableData"]]
    shown += data.get("TableData", [])
    assert Counter(map(canonical, shown)) == Counter(map(canonical, json.loads(json.dumps(items))))
    keys = {entry["AttributeName"] for entry in params["KeySchema"]}
    for item in shown:
        for name, value in item.items():
            assert name in keys or declared.get(name) == next(iter(value)), (name, value)


def test_guard_and_unknown_items_go_to_the_tables_own_data(
    client: DynamoDBClient, backend: Backend
) -> None:
    repository, items = seeded_items("examples.orders_workflow.repository", client, backend)
    stranger = {"PK": {"S": "X#1"}, "SK": {"S": "X"}, "_type": {"S": "SOMETHING"}}
    (data,) = workbench_model(repository, [*items, stranger])["DataModel"]
    loose = data["TableData"]
    assert stranger in loose
    assert any(item["_type"]["S"] == "__unique__" for item in loose)  # Unique() guards
    assert all(
        item["_type"]["S"] not in repository.__singletable_table__.entities for item in loose
    )


def test_without_items_the_facets_are_empty_and_nulls_are_left_out() -> None:
    from singletable.demo_shop.repository import Shop

    (data,) = workbench_model(Shop)["DataModel"]
    assert "TableData" not in data
    assert all(f["TableData"] == [] for f in data["TableFacets"])
    item = {"PK": {"S": "CUSTOMER#1"}, "SK": {"S": "PROFILE"}, "nick": {"NULL": True}}
    (data,) = workbench_model(Shop, [item])["DataModel"]
    assert data["TableData"] == [{"PK": {"S": "CUSTOMER#1"}, "SK": {"S": "PROFILE"}}]


lone = Table("Lone", pk="key", sk=None, indexes=[GSI("ByTag", pk="tag_key")])


class Thing(Entity, table=lone, type="THING"):
    id: str
    tag: str
    blob: bytes
    count: int

    class Keys:
        pk = "{id}"
        ByTag = ("TAG#{tag}",)


class Things(Repository, table=lone):
    thing = get(Thing)


def test_partition_key_only_tables_binary_values_and_field_types() -> None:
    item = Thing(id="a", tag="x", blob=b"\x00\xff", count=3).to_item()
    model = workbench_model(Things, [item])
    (data,) = json.loads(json.dumps(model))["DataModel"]
    assert data["KeyAttributes"] == {"PartitionKey": {"AttributeName": "key", "AttributeType": "S"}}
    assert data["GlobalSecondaryIndexes"][0]["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "tag_key", "AttributeType": "S"}
    }
    (facet,) = data["TableFacets"]
    assert facet["KeyAttributeAlias"] == {"PartitionKeyAlias": "{id}"}
    assert facet["TableData"][0]["blob"] == {"B": "AP8="}  # base64, as DynamoDB JSON has it
    declared = {a["AttributeName"]: a["AttributeType"] for a in data["NonKeyAttributes"]}
    assert declared["blob"] == "B"
    assert declared["count"] == "N"
    (data,) = workbench_model(Things)["DataModel"]  # from the annotations alone
    declared = {a["AttributeName"]: a["AttributeType"] for a in data["NonKeyAttributes"]}
    assert (declared["blob"], declared["count"], declared["tag"]) == ("B", "N", "S")


def test_a_key_of_several_attributes_is_refused_by_name() -> None:
    schema = [
        {"AttributeName": "tenant", "KeyType": "HASH"},
        {"AttributeName": "region", "KeyType": "HASH"},
    ]
    with pytest.raises(ValueError, match="tenant, region"):
        key_attributes(schema, {"tenant": "S", "region": "S"})


def test_the_cli_writes_the_model_from_seed_data() -> None:
    leaderboard = "examples.leaderboard.repository:Leaderboard"
    items = "examples/leaderboard/data.json"
    result = run_cli("schema", leaderboard, "--format", "workbench", "--items", items)
    assert result.returncode == 0, result.stderr
    model = json.loads(result.stdout)
    (data,) = model["DataModel"]
    assert sum(len(f["TableData"]) for f in data["TableFacets"]) > 0
    assert model["ModelName"] == "Leaderboard"
