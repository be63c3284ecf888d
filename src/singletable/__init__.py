"""singletable: single-table DynamoDB design with typed entities and one-request access patterns.

Declare a :class:`Table`, entities (pydantic models with key templates) and a
:class:`Repository` whose named access patterns each compile to exactly one GetItem or Query.

The public names load on first use (PEP 562), as pydantic's own do: ``import singletable``
costs about a millisecond, and ``from singletable import Entity`` loads the model machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._backfill.items import BackfillFailure, BackfillReport
    from ._backfill.job_items import BackfillSegment
    from ._conditions import ConditionFn, Operators
    from ._entity import Entity
    from ._executor import CallInfo, RetryPolicy
    from ._expressions import Attr, Condition, Param
    from ._indexes import Index
    from ._key_formats import render_sortable
    from ._keys import KeyTemplate
    from ._markers import CreatedAt, Shard, Unique, UpdatedAt, Version, shard_of
    from ._paging import Collection, KeyRef, Page
    from ._patterns.declare import ExplainRow, collection, get, query, scan
    from ._patterns.propagate import PropagationReport, propagate
    from ._projection import Projection
    from ._repository import Repository
    from ._table import GSI, LSI, Table
    from ._verbs.transactions import CancellationReason, Transaction, transaction
    from ._version import __version__
    from ._wire import DatetimeFormat
    from .aio import AsyncRepository
    from .aws._client import client_config
    from .errors import SingleTableError

#: public name -> the submodule that defines it
_EXPORTS: dict[str, str] = {
    "__version__": "_version",
    "client_config": "aws._client",
    "Entity": "_entity",
    "Index": "_indexes",
    "render_sortable": "_key_formats",
    "KeyTemplate": "_keys",
    "SingleTableError": "errors",
    "CallInfo": "_executor",
    "RetryPolicy": "_executor",
    "Attr": "_expressions",
    "ConditionFn": "_conditions",
    "Operators": "_conditions",
    "Condition": "_expressions",
    "Param": "_expressions",
    "CreatedAt": "_markers",
    "Shard": "_markers",
    "Unique": "_markers",
    "UpdatedAt": "_markers",
    "Version": "_markers",
    "shard_of": "_markers",
    "Collection": "_paging",
    "KeyRef": "_paging",
    "Page": "_paging",
    "Projection": "_projection",
    "ExplainRow": "_patterns.declare",
    "collection": "_patterns.declare",
    "get": "_patterns.declare",
    "query": "_patterns.declare",
    "scan": "_patterns.declare",
    "PropagationReport": "_patterns.propagate",
    "propagate": "_patterns.propagate",
    "Repository": "_repository",
    "GSI": "_table",
    "LSI": "_table",
    "Table": "_table",
    "CancellationReason": "_verbs.transactions",
    "Transaction": "_verbs.transactions",
    "transaction": "_verbs.transactions",
    "DatetimeFormat": "_wire",
    "BackfillFailure": "_backfill.items",
    "BackfillReport": "_backfill.items",
    "BackfillSegment": "_backfill.job_items",
    "AsyncRepository": "aio",
}

__all__ = [
    "GSI",
    "LSI",
    "AsyncRepository",
    "Attr",
    "BackfillFailure",
    "BackfillReport",
    "BackfillSegment",
    "CallInfo",
    "CancellationReason",
    "Collection",
    "Condition",
    "ConditionFn",
    "CreatedAt",
    "DatetimeFormat",
    "Entity",
    "ExplainRow",
    "Index",
    "KeyRef",
    "KeyTemplate",
    "Operators",
    "Page",
    "Param",
    "Projection",
    "PropagationReport",
    "Repository",
    "RetryPolicy",
    "Shard",
    "SingleTableError",
    "Table",
    "Transaction",
    "Unique",
    "UpdatedAt",
    "Version",
    "__version__",
    "client_config",
    "collection",
    "get",
    "propagate",
    "query",
    "render_sortable",
    "scan",
    "shard_of",
    "transaction",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'singletable' has no attribute {name!r}")
    # __import__, not importlib.import_module: -X importtime only sees the former.
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
