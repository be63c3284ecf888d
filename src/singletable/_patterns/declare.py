"""Access patterns: ``get``, ``query``, ``collection`` and ``scan``, declared on a repository.

Each pattern is a descriptor. Declared on the class (or on a plain class mixed into the sync
and the async repository), it is checked when the repository class is created; read from an
instance, it is a bound pattern whose call sends the requests ``explain()`` states (one
request; ``hydrate=True`` adds one BatchGetItem; ``scatter=`` sends one Query per value) and
whose ``.params(**kw)`` returns them without sending. The machinery lives in
:mod:`singletable._patterns`; this module is the public face.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from .._context import PlanContext
from .._entity import Entity
from .._expressions import Condition
from .._paging import KeyRef
from .._projection import Projection
from .base import DeclaredPattern, ExplainRow, Pattern
from .collection import CollectionPattern
from .get import GetPattern
from .keyed import Order
from .query import OneQueryPattern, QueryPattern
from .scan import ScanPattern
from .scatter import ScatterCollectionPattern, ScatterQueryPattern

if TYPE_CHECKING:
    from .._conditions import ConditionFn

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
    "ScanPattern",
    "collection",
    "get",
    "query",
    "scan",
]

E = TypeVar("E", bound=Entity)
P = TypeVar("P", bound=Projection[Any])


# -- factories ----------------------------------------------------------------------------------


@overload
def get(entity: type[E], *, consistent: bool = ..., project: None = ...) -> GetPattern[E]: ...
@overload
def get(entity: type[E], *, consistent: bool = ..., project: type[P]) -> GetPattern[P]: ...
def get(
    entity: type[E], *, consistent: bool = False, project: type[Any] | None = None
) -> GetPattern[Any]:
    """A GetItem by the entity's full primary key: ``repo.customer(customer_id="42")``.

    ``project=P`` (a :class:`~singletable.Projection` of the entity) reads only P's fields and
    returns ``P | None``.
    """
    return GetPattern(entity, consistent=consistent, project=project)


@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[True],
    where: Condition | ConditionFn[E] | None = ...,
    consistent: bool = ...,
    project: None = ...,
) -> OneQueryPattern[E]: ...
@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[True],
    where: Condition | ConditionFn[E] | None = ...,
    consistent: bool = ...,
    project: type[P],
) -> OneQueryPattern[P]: ...
@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[False] = ...,
    where: Condition | ConditionFn[E] | None = ...,
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
    where: Condition | ConditionFn[E] | None = ...,
    consistent: bool = ...,
    keys_only: Literal[False] = ...,
    hydrate: bool = ...,
    project: None = ...,
    scatter: str | None = ...,
    max_concurrency: int | None = ...,
) -> QueryPattern[E]: ...
@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[False] = ...,
    where: Condition | ConditionFn[E] | None = ...,
    consistent: bool = ...,
    keys_only: Literal[False] = ...,
    hydrate: bool = ...,
    project: type[P],
    scatter: str | None = ...,
    max_concurrency: int | None = ...,
) -> QueryPattern[P]: ...
def query(
    entity: type[E],
    *,
    index: str | None = None,
    order: Order = "asc",
    one: bool = False,
    where: Condition | ConditionFn[E] | None = None,
    consistent: bool = False,
    keys_only: bool = False,
    hydrate: bool = False,
    project: type[Any] | None = None,
    scatter: str | None = None,
    max_concurrency: int | None = None,
) -> QueryPattern[Any]:
    """A Query over the entity's items in one partition of the table or an index.

    ``order="desc"`` reads newest first; ``one=True`` returns ``E | None``; ``where=`` adds a
    server-side filter (``Param`` values become call keywords; calls may add their own
    ``where=``); ``keys_only``/``hydrate`` are for KEYS_ONLY/INCLUDE indexes; ``project=P``
    reads only the fields of projection ``P`` and returns ``P`` instances; ``scatter="field"``
    names a ``Shard()`` field or an ``Enum``/``Literal`` field in the index's partition key or
    first in its sort key: each page sends one Query per value at once (at most
    ``max_concurrency``) and merges them in the order of the sort key that remains.
    """
    options = {
        "index": index,
        "order": order,
        "one": one,
        "where": where,
        "consistent": consistent,
        "keys_only": keys_only,
        "hydrate": hydrate,
        "project": project,
    }
    if scatter is not None:
        return ScatterQueryPattern(
            entity, scatter=scatter, max_concurrency=max_concurrency, **options
        )
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
        project=project,
    )


def collection(
    *entities: type[Entity],
    index: str | None = None,
    order: Order = "asc",
    scatter: str | None = None,
    max_concurrency: int | None = None,
) -> CollectionPattern:
    """One Query returning several entity types that share a partition; ``scatter="field"``
    (as for :func:`query`) sends one Query per value of the field and merges them."""
    if scatter is not None:
        return ScatterCollectionPattern(
            *entities, index=index, order=order, scatter=scatter, max_concurrency=max_concurrency
        )
    return CollectionPattern(*entities, index=index, order=order)


def scan(entity: type[E], *, index: str, where: Condition | None = None) -> ScanPattern[E]:
    """A Scan of an index in which ``entity`` is sparse (an ``Index(..., when=...)`` entry, or
    a native index keyed on an optional field): pages of the entities it holds, one Scan per
    page, filtered on the entity's type tag (and ``where=``). A dense index is a
    ``ModelDefinitionError``: reading all of it needs a query. The only Scan a repository can
    declare."""
    return ScanPattern(entity, index=index, where=where)
