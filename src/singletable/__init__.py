"""singletable: single-table DynamoDB design with typed entities and one-request access patterns.

Declare a :class:`Table`, entities (pydantic models with key templates) and a
:class:`Repository` whose named access patterns each compile to exactly one GetItem or Query.
"""

from .entity import Entity, Index
from .errors import SingleTableError
from .executor import CallInfo, RetryPolicy, client_config
from .expressions import Attr, Condition, Param
from .markers import CreatedAt, Unique, UpdatedAt, Version
from .paging import Collection, KeyRef, Page
from .patterns import ExplainRow, collection, get, query
from .repository import Repository
from .table import GSI, LSI, Table
from .transaction import CancellationReason, Transaction, transaction

__version__ = "0.1.0"

__all__ = [
    "GSI",
    "LSI",
    "Attr",
    "CallInfo",
    "CancellationReason",
    "Collection",
    "Condition",
    "CreatedAt",
    "Entity",
    "ExplainRow",
    "Index",
    "KeyRef",
    "Page",
    "Param",
    "Repository",
    "RetryPolicy",
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
    "query",
    "transaction",
]
