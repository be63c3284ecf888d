"""The IAM policy from the model against what the repository actually sends.

For the demo shop and every example, the repository's table is created in moto, its seed data
loaded, and then every request it sends is recorded through botocore's event hooks
(``before-parameter-build``: the operation and its ``TableName``, ``IndexName``, each batch's
and transaction item's table): every example call, every propagation, a tour of the write
verbs (put, update, delete, create, batches, ``transact_get``, a transaction with a condition
check), a backfill and, on a table with a stream, reading the stream. Each request is turned
into the IAM authorisations it needs (a transaction needs one per item: ``PutItem`` for a Put,
``ConditionCheckItem`` for a ConditionCheck) and checked against the policy's statements:
every one is allowed, and every (action, resource) the policy allows was needed by some request.
"""

from __future__ import annotations

import fnmatch
import importlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
from moto_fixtures import create_table

from singletable import Attr, Entity
from singletable._entity import spec_of
from singletable._patterns.propagate import PropagatePattern
from singletable._tools.iam import iam_policy
from singletable.streams import read_stream
from tests.unit.tools.test_cli import run_cli

if TYPE_CHECKING:
    from moto_fixtures.backends import Backend
    from mypy_boto3_dynamodb import DynamoDBClient

ACCOUNT = "123456789012"  # moto's default account
REGION = "us-east-1"

MODULES = [
    "singletable.demo_shop.repository",
    "examples.ecommerce.repository",
    "examples.leaderboard.repository",
    "examples.orders_workflow.repository",
    "examples.merchant.repository",
    "examples.counters.repository",
    "examples.copies.repository",
    "examples.battle_royale.repository",
    "examples.order_entry.repository",
]

pytestmark = [pytest.mark.backend("inproc")]


def repository_of(module: Any) -> Any:
    """The module's repository: the Repository subclass its ``__all__`` names."""
    from singletable import Repository

    (cls,) = [
        value
        for value in (getattr(module, name) for name in module.__all__)
        if isinstance(value, type) and issubclass(value, Repository)
    ]
    return cls


# -- what a request needs ------------------------------------------------------------------------

_TRANSACT = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}


def table_arn(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def needed(operation: str, params: dict[str, Any], stream: str = "") -> list[tuple[str, str]]:
    """The IAM (action, resource ARN) pairs one request needs (``stream``: the stream ARN of
    the last shard iterator, which is what GetRecords reads)."""
    if operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
        return [(operation, table_arn(params["TableName"]))]
    if operation in ("Query", "Scan"):
        arn = table_arn(params["TableName"])
        index = params.get("IndexName")
        return [(operation, f"{arn}/index/{index}" if index else arn)]
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(operation, table_arn(name)) for name in params["RequestItems"]]
    if operation in ("TransactWriteItems", "TransactGetItems"):
        pairs = []
        for entry in params["TransactItems"]:
            ((kind, body),) = entry.items()
            pairs.append((_TRANSACT[kind], table_arn(body["TableName"])))
        return pairs
    if operation in ("DescribeStream", "GetShardIterator"):
        return [(operation, params["StreamArn"])]
    if operation == "GetRecords":
        return [(operation, stream)]
    if operation == "ListStreams":
        return [(operation, "*")]
    raise AssertionError(f"the repository sent {operation}, which this test does not map")


class Requests:
    """Every request the clients send while recording (botocore event hooks: the API
    parameters of each call, as built for sending)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.on = False

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-parameter-build.*.*", self._before_call)

    def _before_call(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        if self.on:
            self.sent.append((model.name, json.loads(json.dumps(params, default=str))))

    @contextmanager
    def recording(self) -> Iterator[None]:
        self.on = True
        try:
            yield
        finally:
            self.on = False

    def pairs(self) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        stream = ""
        for operation, params in self.sent:
            stream = params.get("StreamArn", stream)
            found.update(needed(operation, params, stream))
        return found


def allowed(policy: dict[str, Any]) -> set[tuple[str, str]]:
    """Every (action, resource pattern) the policy's statements allow."""
    assert policy["Version"] == "2012-10-17"
    pairs = set()
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        resources = statement["Resource"]
        for action in statement["Action"]:
            assert action.startswith("dynamodb:")
            for resource in [resources] if isinstance(resources, str) else resources:
                pairs.add((action.removeprefix("dynamodb:"), resource))
    return pairs


def check(policy: dict[str, Any], requests: Requests) -> None:
    grants = allowed(policy)
    sent = requests.pairs()
    refused = sorted(
        (a, r)
        for a, r in sent
        if not any(a == ga and fnmatch.fnmatchcase(r, gr) for ga, gr in grants)
    )
    assert refused == [], f"sent but not allowed: {refused}"
    unused = sorted(
        (ga, gr)
        for ga, gr in grants
        if not any(a == ga and fnmatch.fnmatchcase(r, gr) for a, r in sent)
    )
    assert unused == [], f"allowed but never sent: {unused}"


# -- driving a repository ----------------------------------------------------------------------


def example_entities(repo: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Entity]:
    found: list[Entity] = []
    for name, keywords in calls:
        result = getattr(repo, name)(**keywords)
        items = [result] if isinstance(result, Entity) else list(result or ())
        found += [item for item in items if isinstance(item, Entity)]
    return found


def propagate_all(repo: Any, entities: list[Entity]) -> None:
    """Call every propagation with an entity of its source type and a changed copy."""
    for name, pattern in type(repo).patterns().items():
        if not isinstance(pattern, PropagatePattern):
            continue
        source = next(e for e in entities if isinstance(e, pattern.spec.cls))
        field = next(iter(pattern.fields))
        changed = source.model_copy(update={field: f"{getattr(source, field)} (renamed)"})
        getattr(repo, name)(source, changed)


def changed_field(entity: Entity) -> dict[str, Any]:
    """A new value for a str or number field that no key, marker or index derives from."""
    spec = spec_of(type(entity))
    derived = set(spec.primary_fields) | set(spec.unique_fields) | {p.field for p in spec.shards}
    derived |= {spec.version_field, spec.created_field, spec.updated_field, spec.ttl_field}
    for index in spec.indexes.values():
        derived |= set(index.template_fields)
    for name in type(entity).model_fields:
        value = getattr(entity, name)
        if name in derived or isinstance(value, bool):
            continue
        if isinstance(value, str):
            return {name: value + " (changed)"}
        if isinstance(value, (int, Decimal)):
            return {name: value + 1}
    raise AssertionError(f"{type(entity).__name__} has no plain str or number field")


def verb_tour(repo: Any, entity: Entity) -> None:
    """Every write verb (and batch and transaction read) once, leaving the item as it was."""
    cls = type(entity)
    spec = spec_of(cls)
    keys = {name: getattr(entity, name) for name in spec.key_arguments}
    entity = repo.put(entity)
    entity = repo.update(entity, **changed_field(entity))
    assert repo.batch_get([(cls, keys)])
    assert repo.transact_get([(cls, keys)]) != [None]
    with repo.transaction() as tx:
        tx.condition_check(cls, condition=Attr(spec.table.pk).exists(), **keys)
    repo.delete(entity)
    entity = repo.create(entity)
    repo.batch_delete([(cls, keys)], unsafe=True)  # guard items of Unique() fields stay
    repo.batch_put([entity], unsafe=True)


class Run(NamedTuple):
    module: Any
    repo: Any
    requests: Requests
    entities: list[Entity]


@pytest.fixture
def shop_run(client: DynamoDBClient, backend: Backend) -> Callable[[str], Run]:
    """``shop_run(module)``: the module's repository on a fresh table, seeded, with its
    example calls' entities; requests are recorded inside ``requests.recording()``."""

    def run(module_name: str) -> Run:
        module = importlib.import_module(module_name)
        repository = repository_of(module)
        table = repository.__singletable_table__
        create_table(backend, client, table, table.name)
        requests = Requests()
        requests.attach(client)
        repo = repository(client=client)
        module.seed(repo)
        with requests.recording():
            entities = example_entities(repo, module.EXAMPLE_CALLS)
        return Run(module, repo, requests, entities)

    return run


# -- the checks --------------------------------------------------------------------------------


@pytest.mark.parametrize("module_name", MODULES)
def test_the_policy_allows_exactly_what_the_repository_sends(
    module_name: str, shop_run: Any
) -> None:
    module, repo, requests, entities = shop_run(module_name)
    covered = {name for name, _ in module.EXAMPLE_CALLS} | {
        n for n, p in type(repo).patterns().items() if isinstance(p, PropagatePattern)
    }
    assert covered == set(type(repo).patterns()), "every pattern is exercised"
    with requests.recording():
        propagate_all(repo, entities)
        verb_tour(repo, entities[0])
    check(iam_policy(type(repo), account=ACCOUNT, region=REGION), requests)


@pytest.mark.parametrize("module_name", MODULES)
def test_a_read_only_policy_allows_exactly_the_patterns(module_name: str, shop_run: Any) -> None:
    _, repo, requests, entities = shop_run(module_name)
    with requests.recording():
        propagate_all(repo, entities)
    policy = iam_policy(type(repo), account=ACCOUNT, region=REGION, read_only=True)
    check(policy, requests)


@pytest.mark.parametrize(
    "module_name", ["singletable.demo_shop.repository", "examples.leaderboard.repository"]
)
def test_backfill_adds_the_table_scan(module_name: str, shop_run: Any) -> None:
    _, repo, requests, entities = shop_run(module_name)
    with requests.recording():
        propagate_all(repo, entities)
        verb_tour(repo, entities[0])
        repo.backfill(type(entities[0]))
    assert any(op == "Scan" for op, _ in requests.sent)
    check(iam_policy(type(repo), account=ACCOUNT, region=REGION, backfill=True), requests)
    with pytest.raises(AssertionError, match="Scan"):  # without the option it is refused
        check(iam_policy(type(repo), account=ACCOUNT, region=REGION), requests)


def test_a_stream_reader_gets_the_stream_actions(shop_run: Any, client: DynamoDBClient) -> None:
    import boto3

    _, repo, requests, entities = shop_run("examples.copies.repository")
    streams = boto3.session.Session().client(
        "dynamodbstreams",
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    requests.attach(streams)
    table = type(repo).__singletable_table__.name
    with requests.recording():
        propagate_all(repo, entities)
        verb_tour(repo, entities[0])
        (stream,) = streams.list_streams(TableName=table)["Streams"]
        assert list(read_stream(streams, stream["StreamArn"]))
    policy = iam_policy(type(repo), account=ACCOUNT, region=REGION, streams=True)
    check(policy, requests)
    statement = next(s for s in policy["Statement"] if s["Sid"] == "StreamRecords")
    assert statement["Resource"] == [f"{table_arn(table)}/stream/*"]


def test_the_check_catches_a_policy_that_allows_too_much(shop_run: Any) -> None:
    run = shop_run("examples.counters.repository")
    repo, requests = run.repo, run.requests
    policy = iam_policy(type(repo), account=ACCOUNT, region=REGION, read_only=True)
    policy["Statement"][0]["Action"].append("dynamodb:DeleteItem")
    with pytest.raises(AssertionError, match="allowed but never sent"):
        check(policy, requests)


# -- the document --------------------------------------------------------------------------------


def test_the_demo_shops_policy() -> None:
    from singletable.demo_shop.repository import Shop

    policy = iam_policy(Shop, account=ACCOUNT, region="eu-west-1", table_name="Shop-prod")
    arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/Shop-prod"
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    assert by_sid["TableItems"]["Resource"] == [arn]
    assert by_sid["TableItems"]["Action"] == [
        f"dynamodb:{a}"
        for a in (
            "BatchGetItem",
            "BatchWriteItem",
            "ConditionCheckItem",
            "DeleteItem",
            "GetItem",
            "PutItem",
            "Query",
            "UpdateItem",
        )
    ]
    assert by_sid["IndexQuery"]["Action"] == ["dynamodb:Query"]
    assert by_sid["IndexQuery"]["Resource"] == [
        f"{arn}/index/GSI1",
        f"{arn}/index/Inverted",
        f"{arn}/index/OrdersByStatus",
        f"{arn}/index/OrdersByTotal",
    ]
    assert not any("Scan" in a for s in policy["Statement"] for a in s["Action"])


def test_a_scan_pattern_adds_a_scan_on_its_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Data-driven: an explain row whose operation is Scan is what grants dynamodb:Scan."""
    from singletable._patterns.base import ExplainRow
    from singletable.demo_shop.repository import Shop

    rows = [ExplainRow("pending_scan", "Scan", "GSI1", "", ("Order",), "asc")]
    monkeypatch.setattr(Shop, "explain", classmethod(lambda cls: rows))
    policy = iam_policy(Shop, read_only=True)
    assert policy["Statement"] == [
        {
            "Sid": "IndexScan",
            "Effect": "Allow",
            "Action": ["dynamodb:Scan"],
            "Resource": ["arn:aws:dynamodb:*:*:table/Shop/index/GSI1"],
        }
    ]


def test_options_that_cannot_hold_are_refused() -> None:
    from singletable.demo_shop.repository import Shop

    with pytest.raises(ValueError, match="no stream"):
        iam_policy(Shop, streams=True)
    with pytest.raises(ValueError, match="read_only"):
        iam_policy(Shop, read_only=True, backfill=True)


def test_the_cli_prints_the_policy() -> None:
    shop = "singletable.demo_shop.repository:Shop"
    options = ["--account", ACCOUNT, "--region", REGION, "--table-name", "Shop-*"]
    result = run_cli("schema", shop, "--format", "iam", *options)
    assert result.returncode == 0, result.stderr
    from singletable.demo_shop.repository import Shop

    expected = iam_policy(Shop, account=ACCOUNT, region=REGION, table_name="Shop-*")
    assert json.loads(result.stdout) == expected


def test_the_cli_needs_a_repository_for_a_policy() -> None:
    result = run_cli("schema", "examples.copies.models:copies", "--format", "iam")
    assert result.returncode == 2
    assert "Repository" in result.stderr


def test_every_example_is_covered() -> None:
    """A new example gets its policy and its Workbench round trip checked too."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    found = {
        f"examples.{d.name}.repository"
        for d in examples.iterdir()
        if (d / "repository.py").exists()
    }
    assert found <= set(MODULES)
