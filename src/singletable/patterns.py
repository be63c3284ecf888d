"""Access patterns: ``get``, ``query`` and ``collection``, declared on a repository.

Each pattern is a descriptor. Declared on the class (or on a plain class mixed into the sync
and the async repository), it is checked when the repository class is created; read from an
instance, it is a bound pattern whose call sends exactly one request (``hydrate=True`` adds
one BatchGetItem) and whose ``.params(**kw)`` returns that request without sending it. The
machinery lives in :mod:`singletable.reads`; this module is the public face.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from .context import PlanContext
from .entity import Entity
from .expressions import Condition
from .paging import KeyRef
from .reads.base import DeclaredPattern, ExplainRow, Pattern
from .reads.collection import CollectionPattern
from .reads.get import GetPattern
from .reads.keyed import Order
from .reads.query import OneQueryPattern, QueryPattern

__all__ = [
    "CollectionPattern",
    "DeclaredPattern",
    "ExplainRow",
    "GetPattern",
    "OneQueryPattern",
    "Order",
    "Pattern",
    "PlanContext",
    "QueryPattern",
    "collection",
    "get",
    "query",
]

E = TypeVar("E", bound=Entity)


# -- factories ----------------------------------------------------------------------------------


def get(entity: type[E], *, consistent: bool = False) -> GetPattern[E]:
    """A GetItem by the entity's full primary key: ``repo.customer(customer_id="42")``."""
    return GetPattern(entity, consistent=consistent)


@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[True],
    where: Condition | None = ...,
    consistent: bool = ...,
) -> OneQueryPattern[E]: ...
@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[False] = ...,
    where: Condition | None = ...,
    consistent: bool = ...,
    keys_only: Literal[True],
    hydrate: Literal[False] = ...,
) -> QueryPattern[KeyRef[E]]: ...
@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[False] = ...,
    where: Condition | None = ...,
    consistent: bool = ...,
    keys_only: Literal[False] = ...,
    hydrate: bool = ...,
) -> QueryPattern[E]: ...
def query(
    entity: type[E],
    *,
    index: str | None = None,
    order: Order = "asc",
    one: bool = False,
    where: Condition | None = None,
    consistent: bool = False,
    keys_only: bool = False,
    hydrate: bool = False,
) -> QueryPattern[Any]:
    """A Query over the entity's items in one partition of the table or an index.

    ``order="desc"`` reads newest first; ``one=True`` returns ``E | None``; ``where=`` adds a
    server-side filter (``Param`` values become call keywords); ``keys_only``/``hydrate`` are
    for KEYS_ONLY/INCLUDE indexes.
    """
    cls = OneQueryPattern if one else QueryPattern
    return cls(
        entity,
        index=index,
        order=order,
        one=one,
        where=where,
        consistent=consistent,
        keys_only=keys_only,
        hydrate=hydrate,
    )


def collection(
    *entities: type[Entity], index: str | None = None, order: Order = "asc"
) -> CollectionPattern:
    """One Query returning several entity types that share a partition."""
    return CollectionPattern(*entities, index=index, order=order)
