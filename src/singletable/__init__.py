"""singletable: single-table DynamoDB design with typed entities and one-request access patterns.

Declare a :class:`Table`, entities (pydantic models with key templates) and a
:class:`Repository` whose named access patterns each compile to exactly one GetItem or Query.

The public names load on first use (PEP 562), as pydantic's own do: ``import singletable``
costs about a millisecond, and ``from singletable import Entity`` loads the model machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._version import __version__
    from .aws.client import client_config
    from .entity import Entity
    from .errors import SingleTableError
    from .executor import CallInfo, RetryPolicy
    from .expressions import Attr, Condition, Param
    from .indexes import Index
    from .markers import CreatedAt, Shard, Unique, UpdatedAt, Version
    from .paging import Collection, KeyRef, Page
    from .patterns import ExplainRow, collection, get, query
    from .projection import Projection
    from .reads.propagate import PropagationReport, propagate
    from .repository import Repository
    from .table import GSI, LSI, Table
    from .transactions import CancellationReason, Transaction, transaction
    from .wire import DatetimeFormat
    from .writes.backfill import BackfillFailure, BackfillReport

#: public name -> the submodule that defines it
_EXPORTS: dict[str, str] = {
    "__version__": "_version",
    "client_config": "aws.client",
    "Entity": "entity",
    "Index": "indexes",
    "SingleTableError": "errors",
    "CallInfo": "executor",
    "RetryPolicy": "executor",
    "Attr": "expressions",
    "Condition": "expressions",
    "Param": "expressions",
    "CreatedAt": "markers",
    "Shard": "markers",
    "Unique": "markers",
    "UpdatedAt": "markers",
    "Version": "markers",
    "Collection": "paging",
    "KeyRef": "paging",
    "Page": "paging",
    "Projection": "projection",
    "ExplainRow": "patterns",
    "collection": "patterns",
    "get": "patterns",
    "query": "patterns",
    "PropagationReport": "reads.propagate",
    "propagate": "reads.propagate",
    "Repository": "repository",
    "GSI": "table",
    "LSI": "table",
    "Table": "table",
    "CancellationReason": "transactions",
    "Transaction": "transactions",
    "transaction": "transactions",
    "DatetimeFormat": "wire",
    "BackfillFailure": "writes.backfill",
    "BackfillReport": "writes.backfill",
}

__all__ = [
    "GSI",
    "LSI",
    "Attr",
    "BackfillFailure",
    "BackfillReport",
    "CallInfo",
    "CancellationReason",
    "Collection",
    "Condition",
    "CreatedAt",
    "DatetimeFormat",
    "Entity",
    "ExplainRow",
    "Index",
    "KeyRef",
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
