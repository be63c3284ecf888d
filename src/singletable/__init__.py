"""singletable: single-table DynamoDB design with typed entities and one-request access patterns."""

from .entity import Entity, Index
from .errors import SingleTableError
from .markers import CreatedAt, Unique, UpdatedAt, Version
from .table import GSI, LSI, Table

__version__ = "0.1.0"

__all__ = [
    "GSI",
    "LSI",
    "CreatedAt",
    "Entity",
    "Index",
    "SingleTableError",
    "Table",
    "Unique",
    "UpdatedAt",
    "Version",
    "__version__",
]
