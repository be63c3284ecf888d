"""What each access pattern and each write verb costs in capacity units, from item sizes
(:mod:`.sizes`) and DynamoDB's rules (:mod:`.units`).

**Reads** (``rcu``, one call): a get reads one item; a query reads one page of the repository's
``default_limit`` (100) items plus the one that tells whether there is more (two for
``one=True``), as the index stores them (its projection); ``hydrate=True`` adds the
BatchGetItem of the page's full items; a scatter is one such Query per shard value; a row over
several types prices a page of its largest. Consistency as declared (a global index reads
eventually consistent).

**Writes** (``wcu``, per verb of the row's entity, ``{verb: {"table" or index: units}}``):
``create``, ``put``, ``update``, ``delete`` and ``move``. The table's units include the
``Unique()`` guard items; a verb that must go through a transaction (a ``Unique()`` field, a
``move``) is priced at 2x per KB there. Each index the item is in costs a write of its entry;
``put`` and ``update`` are priced at their worst case: two writes (delete and put) on each
index whose key an update can change, one on an index the item can enter or leave or whose
projected attributes change. Index writes are propagated after the table write and are priced
as ordinary writes, in transactions too. A row over several types prices each verb at its most
expensive type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._context import WriteContext
from ..._verbs.guards import guard_put
from ..._wire import Wire, item_size
from . import units
from .sizes import (
    SAMPLE_TIME,
    Sizes,
    field_levels,
    finite_domain,
    index_entry,
    sample_item,
    sample_value,
)

if TYPE_CHECKING:
    from ..._entity_spec import EntitySpec
    from ..._table import Table

VERBS = ("create", "put", "update", "delete", "move")
DEFAULT_LIMIT = 100
TABLE = "table"


class WriteUnits(Mapping[str, Any]):
    """A read-only mapping, equal to a dict with the same contents and hashable (explain rows
    are values)."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Any:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data.items())))

    def __repr__(self) -> str:
        return repr(self._data)

    def plain(self) -> dict[str, Any]:
        return {k: v.plain() if isinstance(v, WriteUnits) else v for k, v in self._data.items()}


# -- reads -------------------------------------------------------------------------------------


def read_cost(pattern: Any, sizes: Sizes, limit: int = DEFAULT_LIMIT) -> float:
    """The read units of one call of ``pattern`` (see the module docstring)."""
    if getattr(pattern, "operation", "") == "GetItem":
        return units.read_units(sizes.size(pattern.spec), consistent=bool(pattern.consistent))
    read = getattr(pattern, "to", pattern)  # a propagation reads through its pattern
    specs: Sequence[EntitySpec] = read.specs
    table = specs[0].table
    keys = table.index_keys(read.index)
    entry = max(_entry_size(sizes.item(spec), table, keys) for spec in specs)
    one = getattr(read, "one_only", False)
    count = 2 if one else limit + 1
    consistent = bool(getattr(read, "consistent", False)) and (read.index is None or keys.local)
    cost = units.query_read_units([entry] * count, consistent=consistent)
    if getattr(read, "hydrate", False):
        full = max(sizes.size(spec) for spec in specs)
        cost += units.batch_read_units([full] * limit, consistent=False)
    fanout = getattr(read, "fanout", None)  # a scatter: one such Query per value
    return cost * (len(fanout.axis.values) if fanout is not None else 1)


def _entry_size(item: Mapping[str, Wire], table: Table, keys: Any) -> int:
    if keys.name is None:
        return item_size(item)
    entry = index_entry(item, keys, _table_keys(table), _included(table, keys.name))
    return item_size(entry if entry is not None else item)


def _table_keys(table: Table) -> list[str]:
    return [a for a in (table.pk, table.sk) if a]


def _included(table: Table, name: str) -> tuple[str, ...]:
    for index in table.indexes:
        if index.name == name and isinstance(index.projection, tuple):
            return (table.type_attribute, *index.projection[1])
    return ()


# -- writes ------------------------------------------------------------------------------------


class EntityWrites:
    """What each write verb of one entity costs, from its representative item."""

    def __init__(self, spec: EntitySpec, sizes: Sizes) -> None:
        self.spec = spec
        self.table = spec.table
        self.item = sizes.item(spec)
        self.size = item_size(self.item)
        self.guards = [item_size(g) for g in guard_items(spec, self.item)]
        self.entries = self.index_entries(self.item)
        self.guard_entries = [self.index_entries(g) for g in guard_items(spec, self.item)]
        self.moves, self.enters = movable_indexes(spec, self)

    def index_entries(self, item: Mapping[str, Wire]) -> dict[str, int]:
        """Index name -> the size of ``item``'s entry there, for the indexes it is in."""
        found = {}
        for index in self.table.indexes:
            keys = self.table.index_keys(index.name)
            include = _included(self.table, index.name)
            entry = index_entry(item, keys, _table_keys(self.table), include)
            if entry is not None:
                found[index.name] = item_size(entry)
        return found

    def verbs(self) -> WriteUnits:
        unique = bool(self.spec.unique_fields)
        return WriteUnits(
            {
                "create": self.priced(self.size, unique, guards=1, index_factor=self.once),
                "put": self.priced(self.size, unique, guards=2, index_factor=self.worst),
                "update": self.priced(self.size, unique, guards=2, index_factor=self.worst),
                "delete": self.priced(self.size, unique, guards=1, index_factor=self.once),
                "move": self.priced(self.size, True, guards=2, index_factor=self.twice, items=2),
            }
        )

    def priced(
        self, size: int, transactional: bool, *, guards: int, index_factor: Any, items: int = 1
    ) -> WriteUnits:
        table_units = items * units.write_units(size, transactional=transactional)
        table_units += sum(guards * units.write_units(g, transactional=True) for g in self.guards)
        costs: dict[str, int] = {TABLE: table_units}
        for name in self.table.index_names:
            factor = index_factor(name)
            entry = self.entries.get(name)
            if entry is not None and factor:
                costs[name] = costs.get(name, 0) + factor * units.write_units(entry)
            for guard in self.guard_entries:
                if name in guard:
                    costs[name] = costs.get(name, 0) + guards * units.write_units(guard[name])
        return WriteUnits(costs)

    def once(self, name: str) -> int:
        return 1

    def twice(self, name: str) -> int:
        return 2

    def worst(self, name: str) -> int:
        """An update's worst case on one index: 2 when it can move the entry, 1 when it can
        add, remove or change it, 0 when it cannot touch it."""
        if name in self.moves:
            return 2
        if name in self.enters or self._projects_data(name):
            return 1
        return 0

    def _projects_data(self, name: str) -> bool:
        keys = self.table.index_keys(name)
        return keys.projection_type == "ALL" or bool(_included(self.table, name)[1:])


def guard_items(spec: EntitySpec, item: Mapping[str, Wire]) -> list[dict[str, Wire]]:
    """The ``Unique()`` guard items an entity's item comes with."""
    if not spec.unique_fields:
        return []
    entity = spec.from_item(item)
    owner = {a: item[a] for a in (spec.table.pk, spec.table.sk) if a and a in item}
    ctx = WriteContext(spec.table.name, SAMPLE_TIME)
    guards = []
    for name in spec.unique_fields:
        value = getattr(entity, name)
        if value is not None:
            guards.append(dict(guard_put(spec, name, value, owner, None, ctx).params["Item"]))
    return guards


def movable_indexes(spec: EntitySpec, writes: EntityWrites) -> tuple[set[str], set[str]]:
    """``(indexes whose key an update can change, indexes it can move the item into or out
    of)``, found by writing sample entities that differ in one field that is not part of the
    primary key: generic over whatever attributes an entity derives for an index."""
    fixed = set(spec.primary_fields)
    fields = [f for f in spec.cls.model_fields if f not in fixed]
    moves: set[str] = set()
    enters: set[str] = set()
    for base in _bases(spec, fields):
        before = _keys_by_index(spec, sample_item(spec, base))
        for name in fields:
            info = spec.cls.model_fields[name]
            level = field_levels(spec)[name]
            for value in _alternatives(info.annotation, info.metadata, level):
                try:
                    after = _keys_by_index(spec, sample_item(spec, {**base, name: value}))
                except Exception:  # a value the entity refuses: not an update it can make
                    continue
                for index in spec.table.index_names:
                    old, new = before.get(index), after.get(index)
                    if old is not None and new is not None and old != new:
                        moves.add(index)
                    elif (old is None) != (new is None):
                        enters.add(index)
    return moves, enters


def _keys_by_index(spec: EntitySpec, item: Mapping[str, Wire]) -> dict[str, tuple[Any, ...]]:
    found = {}
    for index in spec.table.indexes:
        keys = spec.table.index_keys(index.name)
        attrs = [a for a in (keys.pk, keys.sk) if a]
        if all(a in item for a in attrs):
            found[index.name] = tuple(repr(item[a]) for a in attrs)
    return found


def _bases(spec: EntitySpec, fields: Iterable[str]) -> list[dict[str, Any]]:
    """The sample entity, and one per value of each finite-domain field (an index's ``when``
    and key segments often hang on one)."""
    bases: list[dict[str, Any]] = [{}]
    for name in fields:
        info = spec.cls.model_fields[name]
        values = finite_domain(info.annotation)
        bases += [{name: v} for v in values]
    return bases


def _alternatives(annotation: Any, metadata: Any, level: int) -> list[Any]:
    return [sample_value(annotation, metadata, other=True, level=level), *finite_domain(annotation)]


def write_cost(specs: Sequence[EntitySpec], sizes: Sizes) -> WriteUnits:
    """Each verb's units per table and index; over several types, each at its most expensive."""
    priced = [EntityWrites(spec, sizes).verbs() for spec in specs]
    merged: dict[str, WriteUnits] = {}
    for verb in VERBS:
        worst: dict[str, int] = {}
        for costs in priced:
            for where, amount in costs[verb].items():
                worst[where] = max(worst.get(where, 0), amount)
        merged[verb] = WriteUnits(worst)
    return WriteUnits(merged)
