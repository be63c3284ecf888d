"""The layout's views: the table and each of its secondary indexes, as NoSQL Workbench shows
them.

A view groups the items it holds by its partition key and orders each partition by its sort
key, in DynamoDB's order (numbers by value, strings and binary by bytes). The table view holds
every item; an index view holds only the items that carry the index's key attributes (a sparse
index shows its members only), and only the attributes the index projects: the table's and
the index's keys, plus every attribute (``ALL``), none (``KEYS_ONLY``) or the listed ones
(``INCLUDE``). The type tag is an ordinary attribute there: a ``KEYS_ONLY`` index does not
hold it. A native-key index has up to four partition and four sort attributes (the items' own
typed fields): its partitions are the distinct tuples of partition values, each ordered by its
sort attributes left to right, as DynamoDB orders them.

Non-key attributes are shown as a column set per entity type: for each type, the attributes
its items in the view carry, in a stable order (the table's keys, other index keys, the
entity's fields in declaration order, then anything else in the order first seen).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .layout_items import format_value, key_value

if TYPE_CHECKING:
    from .._table import Table

MISSING_KEY: tuple[int, Any] = (-1, b"")


@dataclass
class Row:
    """One item, numbered in the table view's order (the same number in every view)."""

    number: int  # 1-based
    item: dict[str, Any]
    type_name: str | None
    entity: str | None  # the entity class name, when the type tag is known

    def text(self, attribute: str) -> str:
        value = self.item.get(attribute)
        return format_value(value) if value is not None else ""

    def key_text(self, attribute: str | None) -> str | None:
        if attribute is None:
            return None
        value = self.item.get(attribute)
        if value is None or "S" not in value:
            return None
        return str(value["S"])

    def key(self, attribute: str | None) -> tuple[int, Any]:
        """This item's value of a key attribute, in DynamoDB's order."""
        if attribute is None:
            return MISSING_KEY
        return key_value(self.item.get(attribute)) or MISSING_KEY


@dataclass
class IndexView:
    """The table (``name`` None) or one secondary index, with the items it holds."""

    name: str | None  # the index handle (class Keys attribute); None: the table
    kind: str  # "table", "GSI" or "LSI"
    physical_name: str | None
    pk_attributes: tuple[str, ...]  # one; up to four on a native-key index
    sk_attributes: tuple[str, ...]  # none or one; up to four on a native-key index
    projection: str  # "ALL", "KEYS_ONLY" or "INCLUDE"
    projected: frozenset[str] | None  # non-key attributes held; None: every attribute
    type_attribute: str
    table_keys: tuple[str, ...]
    total: int  # items in the table
    native: bool = False  # keyed on the items' own typed attributes
    partitions: list[tuple[str, list[Row]]] = field(default_factory=list)
    attributes: dict[str, list[str]] = field(default_factory=dict)  # by type name ("" untyped)

    @property
    def ident(self) -> str:
        return self.name if self.name is not None else "table"

    @property
    def rows(self) -> list[Row]:
        return [row for _, rows in self.partitions for row in rows]

    @property
    def pk(self) -> str:
        """The (first) partition attribute."""
        return self.pk_attributes[0]

    @property
    def sk(self) -> str | None:
        """The (first) sort attribute; None without a sort key."""
        return self.sk_attributes[0] if self.sk_attributes else None

    @property
    def key_columns(self) -> list[str]:
        return [*self.pk_attributes, *self.sk_attributes]

    def partition_label(self, row: Row) -> str:
        """The partition a row is in: its partition value (``name=value, ...`` for several)."""
        if len(self.pk_attributes) == 1:
            return row.text(self.pk)
        return ", ".join(f"{a}={row.text(a)}" for a in self.pk_attributes)

    @property
    def shows_type(self) -> bool:
        return self.holds(self.type_attribute)

    @property
    def sparse(self) -> bool:
        return len(self.rows) < self.total

    @property
    def slots(self) -> int:
        return max((len(columns) for columns in self.attributes.values()), default=0)

    def holds(self, attribute: str) -> bool:
        """Whether the index holds (projects) ``attribute``."""
        if self.projected is None or attribute in self.key_columns:
            return True
        return attribute in self.table_keys or attribute in self.projected

    def columns_of(self, row: Row) -> list[str]:
        return self.attributes.get(row.type_name or "", [])

    def describe(self) -> str:
        """One line: what the view is keyed on, projects and holds."""
        if self.name is None:
            where = "table"
        else:
            physical = f" ({self.physical_name})" if self.physical_name != self.name else ""
            where = f"{self.kind} {self.name}{physical}"
        keys = f"partition key {', '.join(self.pk_attributes)}"
        if self.sk_attributes:
            keys += f", sort key {', '.join(self.sk_attributes)}"
        if self.native:
            keys = f"native {keys}"
        count = len(self.rows)
        held = f"{count} item{'s' if count != 1 else ''} in {len(self.partitions)} partition"
        held += "s" if len(self.partitions) != 1 else ""
        parts = [where, keys]
        if self.name is not None:
            projection = self.projection
            if self.projection == "INCLUDE" and self.projected is not None:
                projection += " " + ", ".join(sorted(self.projected))
            parts.append(f"projection {projection}")
            if self.sparse:
                held += f" (sparse: {count} of {self.total} items carry its keys)"
        parts.append(held)
        if not self.shows_type:
            parts.append(
                f"{self.type_attribute} is not projected: rows are coloured by the table "
                "item's type"
            )
        return " · ".join(parts)


def _projection(index: Any) -> tuple[str, frozenset[str] | None]:
    projection = index.projection
    if projection == "KEYS_ONLY":
        return "KEYS_ONLY", frozenset()
    if isinstance(projection, tuple) and projection and projection[0] == "INCLUDE":
        return "INCLUDE", frozenset(str(a) for a in projection[1])
    return "ALL", None


def _group(view: IndexView, rows: Sequence[Row]) -> None:
    members = rows
    if view.name is not None:  # a secondary index holds the items that carry its keys
        members = [
            row for row in rows if all(row.key(a) is not MISSING_KEY for a in view.key_columns)
        ]
    grouped: dict[tuple[tuple[int, Any], ...], list[Row]] = {}
    for row in members:
        grouped.setdefault(tuple(row.key(a) for a in view.pk_attributes), []).append(row)
    for partition in sorted(grouped):
        part_rows = sorted(
            grouped[partition],
            key=lambda r: (tuple(r.key(a) for a in view.sk_attributes), r.number),
        )
        view.partitions.append((view.partition_label(part_rows[0]), part_rows))


def _attribute_columns(
    view: IndexView, order: Sequence[str], fields: Mapping[str, Sequence[str]]
) -> None:
    hidden = {*view.key_columns, view.type_attribute}
    seen: dict[str, dict[str, None]] = {}
    for row in view.rows:
        names = seen.setdefault(row.type_name or "", {})
        for name in row.item:
            if name not in hidden and view.holds(name):
                names[name] = None
    for type_name, names in seen.items():
        preferred = [*order, *fields.get(type_name, ())]
        rank = {name: n for n, name in reversed(list(enumerate(preferred)))}
        first_seen = {name: n for n, name in enumerate(names)}
        view.attributes[type_name] = sorted(
            names, key=lambda name: (rank.get(name, len(rank)), first_seen[name])
        )


def build_views(
    table: Table, rows: Sequence[Row], fields: Mapping[str, Sequence[str]]
) -> list[IndexView]:
    """The table view and one view per secondary index (in declaration order) of ``rows``.
    ``fields``: each entity type's attribute names in field order (column order)."""
    table_keys = tuple(a for a in (table.pk, table.sk) if a)
    key_order = [*table_keys]
    for name in table.index_names:
        keys = table.index_keys(name)
        if not keys.native:  # a native index's attributes are fields: in field order
            key_order += [a for a in keys.attributes if a not in key_order]
    views = [
        IndexView(
            None, "table", None, (table.pk,), table_keys[1:], "ALL", None, table.type_attribute,
            table_keys, len(rows),
        )
    ]  # fmt: skip
    for index in table.indexes:
        keys = table.index_keys(index.name)
        projection, projected = _projection(index)
        views.append(
            IndexView(
                index.name,
                "LSI" if keys.local else "GSI",
                keys.physical_name,
                keys.pk_attributes,
                keys.sk_attributes,
                projection,
                projected,
                table.type_attribute,
                table_keys,
                len(rows),
                keys.native,
            )
        )
    for view in views:
        _group(view, rows)
        _attribute_columns(view, key_order, fields)
    return views


def table_order(table: Table, items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``items`` in the table view's order: by partition key, then sort key."""
    numbered = [
        (key_value(item.get(table.pk)) or MISSING_KEY, n, dict(item))
        for n, item in enumerate(items)
    ]
    sk = table.sk

    def order(entry: tuple[tuple[int, Any], int, dict[str, Any]]) -> tuple[Any, ...]:
        pk, number, item = entry
        sort = (key_value(item.get(sk)) if sk else None) or MISSING_KEY
        return (pk, sort, number)

    return [item for _, _, item in sorted(numbered, key=order)]
