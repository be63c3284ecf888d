"""A least-privilege IAM policy for a repository, from its model.

``iam_policy(Shop, account=..., region=...)`` (``singletable schema app:Shop --format iam``)
allows exactly the DynamoDB actions the repository sends, on the resources it sends them to:

* each **pattern**, from its explain row: every operation in ``row.operation`` (``Query x8`` is
  a Query, ``Query+BatchGetItem`` a Query and a BatchGetItem) becomes its IAM action; reads of
  an index (``Query``, ``Scan``) go to that index's ARN, everything else to the table's. A
  pattern whose operation is ``Scan`` is what adds ``dynamodb:Scan``, on the index it scans;
* the **write verbs** every repository has (``create``, ``put``, ``update``, ``delete``,
  ``move``, ``batch_*``, ``transact_get``, transactions), on the table ARN: ``PutItem``,
  ``UpdateItem``, ``DeleteItem``, ``GetItem`` (``Unique()`` fields read the stored item
  first), ``BatchGetItem``, ``BatchWriteItem`` and ``ConditionCheckItem``. A transaction is
  authorised item by item (Put needs ``PutItem``, ConditionCheck ``ConditionCheckItem``...):
  IAM has no ``TransactWriteItems`` action. ``read_only=True`` leaves the verbs out;
* ``backfill=True``: ``repo.backfill`` scans the table (``Scan`` on the table ARN) and
  rewrites items with the write verbs' actions. Off by default: a service that serves
  requests never scans;
* ``streams=True``: a ``StreamRouter`` reading the table's stream (Lambda's event source
  mapping or ``read_stream``): ``DescribeStream``, ``GetRecords`` and ``GetShardIterator`` on
  ``table/NAME/stream/*``, and ``ListStreams``, which IAM only grants on ``*``.

The account, region, partition and table name are options (``*`` for any account or region;
the table name defaults to the Table's). ``tests/backend/test_iam.py`` runs the demo shop and every
example, records each request the repository sends, and checks that the policy allows every
one of them and nothing they do not use.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._repository import Repository
    from .._table import Table

__all__ = ["VERB_ACTIONS", "iam_policy", "pattern_grants", "policy_grants"]

#: The IAM action of each operation an explain row can name, and whether it is sent to the
#: pattern's index (True) or to the table (False). Transaction operations are authorised per
#: item: a ``TransactGetItems`` needs ``GetItem`` on each item's table.
OPERATION_ACTIONS: dict[str, tuple[str, bool]] = {
    "GetItem": ("GetItem", False),
    "Query": ("Query", True),
    "Scan": ("Scan", True),
    "BatchGetItem": ("BatchGetItem", False),
    "PutItem": ("PutItem", False),
    "UpdateItem": ("UpdateItem", False),
    "DeleteItem": ("DeleteItem", False),
    "TransactGetItems": ("GetItem", False),
}

#: What the write verbs send, on the table (and its guard items): every repository has them.
VERB_ACTIONS: dict[str, tuple[str, ...]] = {
    "create": ("PutItem",),  # a Unique() guard rides in a transaction: PutItem per item
    "put": ("PutItem", "GetItem", "DeleteItem"),  # Unique(): read, then move the guards
    "update": ("UpdateItem", "GetItem", "PutItem", "DeleteItem"),  # guards move with it
    "delete": ("DeleteItem", "GetItem"),  # by keys alone with Unique(): a GetItem first
    "move": ("PutItem", "DeleteItem"),
    "batch_get": ("BatchGetItem",),
    "batch_put": ("BatchWriteItem",),
    "batch_delete": ("BatchWriteItem",),
    "transact_get": ("GetItem",),
    "transaction": ("PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"),
}

BACKFILL_ACTIONS = ("Scan", "GetItem", "UpdateItem", "PutItem", "DeleteItem")
STREAM_ACTIONS = ("DescribeStream", "GetRecords", "GetShardIterator")

Grant = tuple[str, str]
"""(IAM action without the ``dynamodb:`` prefix, resource: ``"table"``, ``"index/NAME"``,
``"stream"`` or ``"*"``)."""


def _operations(text: str) -> list[str]:
    from .demo import expected_operations

    return expected_operations(text)


def pattern_grants(repository: type[Repository]) -> set[Grant]:
    """What the repository's patterns need: (action, resource) from each explain row."""
    table: Table = repository.__singletable_table__
    grants: set[Grant] = set()
    for row in repository.explain():
        for operation in _operations(row.operation):
            try:
                action, on_index = OPERATION_ACTIONS[operation]
            except KeyError:
                raise ValueError(
                    f"{repository.__qualname__}.{row.pattern}: no IAM action is known for the "
                    f"operation {operation!r} of its explain row ({row.operation!r})"
                ) from None
            if on_index and row.index:
                physical = table.index_keys(row.index).physical_name or row.index
                grants.add((action, f"index/{physical}"))
            else:
                grants.add((action, "table"))
    return grants


def policy_grants(
    repository: type[Repository],
    *,
    read_only: bool = False,
    backfill: bool = False,
    streams: bool = False,
) -> set[Grant]:
    """Every (action, resource) the policy allows; see :func:`iam_policy`."""
    table: Table = repository.__singletable_table__
    if read_only and backfill:
        raise ValueError("backfill rewrites items: it cannot be read_only")
    if streams and table.stream is None:
        raise ValueError(
            f"table {table.name!r} has no stream: declare Table(..., stream=...) to read one"
        )
    grants = pattern_grants(repository)
    if not read_only:
        grants |= {(a, "table") for actions in VERB_ACTIONS.values() for a in actions}
    if backfill:
        grants |= {(a, "table") for a in BACKFILL_ACTIONS}
    if streams:
        grants |= {(a, "stream") for a in STREAM_ACTIONS}
        grants.add(("ListStreams", "*"))
    return grants


def _arn(resource: str, *, partition: str, region: str, account: str, table_name: str) -> str:
    if resource == "*":
        return "*"
    base = f"arn:{partition}:dynamodb:{region}:{account}:table/{table_name}"
    if resource == "table":
        return base
    if resource == "stream":
        return f"{base}/stream/*"
    return f"{base}/{resource}"


_SIDS = {"table": "TableItems", "stream": "StreamRecords", "*": "ListStreams"}


def _statements(grants: Iterable[Grant], arn: Any) -> list[dict[str, Any]]:
    """One statement per set of actions, with every resource that set applies to."""
    by_resource: dict[str, set[str]] = {}
    for action, resource in grants:
        by_resource.setdefault(resource, set()).add(action)
    order = {"table": 0, "stream": 2, "*": 3}
    by_actions: dict[tuple[str, ...], list[str]] = {}
    for resource in sorted(by_resource, key=lambda r: (order.get(r, 1), r)):
        by_actions.setdefault(tuple(sorted(by_resource[resource])), []).append(resource)
    statements = []
    for actions, resources in by_actions.items():
        kind = resources[0]
        sid = _SIDS.get(kind) or ("Index" + "".join(a for a in actions))
        statements.append(
            {
                "Sid": sid,
                "Effect": "Allow",
                "Action": [f"dynamodb:{a}" for a in actions],
                "Resource": [arn(r) for r in resources] if kind != "*" else "*",
            }
        )
    return statements


def iam_policy(
    repository: type[Repository],
    *,
    account: str = "*",
    region: str = "*",
    partition: str = "aws",
    table_name: str | None = None,
    read_only: bool = False,
    backfill: bool = False,
    streams: bool = False,
) -> dict[str, Any]:
    """A least-privilege IAM policy document (``Version`` 2012-10-17) for ``repository``:
    the actions its patterns and verbs send, on its table's and indexes' ARNs (see the module
    docstring for what each option adds). ``account``/``region`` default to ``*``;
    ``table_name`` to the Table's name (a pattern such as ``"Shop-*"`` covers every stage)."""
    name = table_name or repository.__singletable_table__.name
    grants = policy_grants(repository, read_only=read_only, backfill=backfill, streams=streams)

    def arn(resource: str) -> str:
        return _arn(resource, partition=partition, region=region, account=account, table_name=name)

    return {"Version": "2012-10-17", "Statement": _statements(grants, arn)}
