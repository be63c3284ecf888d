"""The layout view: a table's items grouped by partition, per index, and which rows each
pattern returns.

Like NoSQL Workbench, it shows the table's items grouped by partition in sort-key order, and
each secondary index as its own view (``layout_views``): the items regrouped by the index's
keys, only its members (sparse indexes) and only the attributes it projects. For each access
pattern of the repository it then evaluates, in Python, the pattern's compiled key condition
against those items: for every partition value found in the items that the pattern's
partition-key template can address, the rows the request reads, the rows it returns (its
entity types) and the rows it reads but drops (other types under the same key condition, which
you pay for). Filters are not evaluated; they are shown next to the pattern. A scatter pattern
(``scatter="shard"``) is evaluated per call, not per partition: each call reads every shard's
partition (``pattern.shard_plans``) and its rows are merged in the pattern's order.

Items come in DynamoDB's wire format (``{"PK": {"S": "CUSTOMER#42"}, ...}``): a JSON list of
items, or an object with an ``"Items"`` list (the output of ``aws dynamodb scan``); or as seed
data loaded through the repository (``layout_seed``). A live table is read with a paginated
Scan: this is an inspection tool, not an access pattern, and the only place singletable sends a
Scan.

``render_text`` gives an aligned terminal table; ``layout_html.render_html`` one self-contained
HTML file (inline CSS and JS, no network assets) with one-line rows coloured by entity type, a
tab per index, and the rows of a pattern call highlighted when you click it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._backfill.job_items import is_job_item
from .._context import PlanContext
from .._verbs.guards import GUARD_TYPE
from .layout_items import (
    ItemsError,
    format_value,
    load_items,
    parse_items,
    read_document,
    scan_items,
)
from .layout_views import MISSING_KEY, IndexView, Row, build_views, table_order

if TYPE_CHECKING:
    from .._entity_spec import EntitySpec
    from .._patterns.declare import ExplainRow, Pattern
    from .._repository import Repository

__all__ = [
    "IndexView",
    "ItemsError",
    "Layout",
    "PatternCall",
    "PatternView",
    "Row",
    "build_layout",
    "format_value",
    "load_items",
    "parse_items",
    "read_document",
    "render_text",
    "scan_items",
]


MAX_CALLS = 50  # pattern calls shown per pattern

PALETTE = (
    "#cfe8ff",
    "#ffe3c2",
    "#d7f5d0",
    "#f3d6f5",
    "#fff4b8",
    "#d2f1f0",
    "#ffd6d6",
    "#e2dcff",
    "#e8f0c8",
    "#f5e0cc",
)


# -- the layout --------------------------------------------------------------------------------


@dataclass
class PatternCall:
    """One call of a pattern on one partition found in the items: the rows it returns, in
    the order it returns them, the rows it reads and drops, and the requests it sends (the
    ``params()`` of each: one, or one per shard for a scatter)."""

    label: str
    returned: list[int]
    dropped: list[int]
    note: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class PatternView:
    row: ExplainRow  # what explain() says of the pattern
    calls: list[PatternCall] = field(default_factory=list)
    note: str = ""
    more_calls: int = 0

    @property
    def name(self) -> str:
        return self.row.pattern


@dataclass
class Layout:
    repository: type[Repository]
    table_name: str
    source: str
    key_columns: list[str]
    type_attribute: str
    rows: list[Row]
    views: list[IndexView]  # the table's first, then each secondary index
    patterns: list[PatternView]
    colours: dict[str, str]

    @property
    def partitions(self) -> list[tuple[str, list[Row]]]:
        """The table view's partitions."""
        return self.views[0].partitions

    def view(self, index: str | None) -> IndexView:
        """The view of the index handle ``index`` (``None``: the table)."""
        return next(v for v in self.views if v.name == index)

    def attributes_text(self, row: Row) -> str:
        hidden = set(self.key_columns) | {self.type_attribute}
        return ", ".join(f"{k}={row.text(k)}" for k in row.item if k not in hidden)


def _key_columns(repository: type[Repository]) -> list[str]:
    table = repository.__singletable_table__
    columns: list[str] = []
    for index in [None, *table.index_names]:
        keys = table.index_keys(index)
        if keys.native:
            continue  # its attributes are the items' own fields, shown with the attributes
        for attr in keys.attributes:
            if attr not in columns:
                columns.append(attr)
    return columns


def _call_label(name: str, values: Mapping[str, Any]) -> str:
    args = ", ".join(f"{k}={getattr(v, 'value', v)!r}" for k, v in values.items())
    return f"{name}({args})"


def _entity_specs(repository: type[Repository]) -> dict[str, EntitySpec]:
    from .._entity import spec_of

    table = repository.__singletable_table__
    return {name: spec_of(cls) for name, cls in table.entities.items()}


def _evaluate_get(pattern: Any, ctx: PlanContext, rows: Sequence[Row]) -> PatternView:
    from ..errors import SingleTableError

    spec = pattern.spec
    view = _view(pattern)
    keys = spec.base.keys
    for row in rows:
        if row.type_name != spec.type_name:
            continue
        values: dict[str, Any] = {}
        try:
            for attr, tpl in ((keys.pk, spec.base.pk), (keys.sk, spec.base.sk)):
                text = row.key_text(attr)
                if tpl is not None and text is not None:
                    values.update(tpl.parse(text))
            request = pattern.params(ctx, values)
        except SingleTableError:
            continue
        key = request["Key"]
        found = [
            r.number for r in rows if all(r.item.get(attr) == value for attr, value in key.items())
        ]
        view.calls.append(
            PatternCall(_call_label(pattern.name, values), found, [], requests=[request])
        )
    return view


def _view(pattern: Any) -> PatternView:
    return PatternView(pattern.explain())


def _evaluate_keyed(pattern: Any, ctx: PlanContext, rows: Sequence[Row]) -> PatternView:
    from .._patterns.declare import QueryPattern
    from ..errors import SingleTableError

    view = _view(pattern)
    keys = pattern.plan.keys
    in_index = [r for r in rows if all(r.key(a) is not MISSING_KEY for a in keys.attributes)]
    # A scatter pattern's shard is not a call keyword: one call reads every shard.
    scatter: str | None = getattr(pattern, "scatter", None)
    calls = _partition_calls(pattern, in_index, scatter)
    own_types = {spec.type_name for spec in pattern.specs}
    keys_only = isinstance(pattern, QueryPattern) and (pattern.keys_only or pattern.hydrate)
    filter_values = dict.fromkeys(pattern.filter_params)
    notes = []
    if scatter is not None:
        notes.append(
            f"scatter over {scatter}: each call reads all {len(pattern.fanout.axis.values)} "
            f"values ({pattern.operation}) and merges them in key order"
        )
    if filter_values:
        notes.append("the filter is not evaluated: rows shown are what the key condition returns")
    view.note = "; ".join(notes)
    # the merged order: the index's sort key (a scatter: what remains of it), then the table's key
    for number, values in enumerate(calls.values()):
        if number >= MAX_CALLS:
            view.more_calls = len(calls) - MAX_CALLS
            break
        try:
            kwargs = {**values, **filter_values}
            plans = (
                pattern.fanout.plans(ctx, kwargs)
                if scatter is not None
                else [pattern.compile(ctx, kwargs)]
            )
        except SingleTableError as exc:
            view.calls.append(
                PatternCall(_call_label(pattern.name, values), [], [], f"not compiled: {exc}")
            )
            continue
        placed: list[tuple[tuple[Any, ...], int, Row]] = []
        for value, compiled in enumerate(plans):
            for r in in_index:
                if not compiled.contains(r.item):
                    continue
                order = (
                    pattern.fanout.axis.order_key(r.item, value)
                    if scatter is not None
                    else tuple(r.key(a) for a in keys.sk_attributes)
                )
                placed.append((order, r.number, r))
        placed.sort(key=lambda entry: entry[:2], reverse=pattern.order == "desc")
        returned: list[int] = []
        dropped: list[int] = []
        for _, _, row in placed:
            if keys_only:
                mine = _parses_as(pattern.specs[0], row)
            else:
                mine = row.type_name in own_types
            (returned if mine else dropped).append(row.number)
        note = ""
        if getattr(pattern, "one_only", False) and len(returned) > 1:
            note = "more than one match: MultipleResultsError"
        requests = [dict(compiled.params) for compiled in plans]
        label = _call_label(pattern.name, values)
        view.calls.append(PatternCall(label, returned, dropped, note, requests))
    if not calls:
        view.note = (
            view.note + "; " if view.note else ""
        ) + "no partition in these items matches the pattern's partition key"
    return view


def _partition_calls(
    pattern: Any, rows: Sequence[Row], scatter: str | None
) -> dict[tuple[tuple[str, str], ...], dict[str, Any]]:
    """One call per partition of ``rows`` the pattern can address (in the index's partition
    order): the partition's field values as call keywords, the scattered field left out."""
    from ..errors import SingleTableError

    attributes = pattern.plan.keys.pk_attributes
    partitions: dict[tuple[Any, ...], Row] = {}
    for row in rows:
        partitions.setdefault(tuple(row.key(a) for a in attributes), row)
    calls: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    for partition in sorted(partitions):
        try:
            values = _partition_values(pattern, partitions[partition])
        except (SingleTableError, ValueError):
            continue  # another entity's partition: not one this pattern can name
        call = {k: v for k, v in values.items() if k != scatter}
        calls.setdefault(tuple(sorted((k, repr(v)) for k, v in call.items())), call)
    return calls


def _partition_values(pattern: Any, row: Row) -> dict[str, Any]:
    """The field values that name ``row``'s partition: parsed back from a key template, or
    (a native-key index) the partition attributes' own values, as the fields type them."""
    from .._patterns.native import NativeKeyPlan
    from .._wire import decode_value
    from ..errors import KeyTemplateError

    plan = pattern.plan
    if not isinstance(plan, NativeKeyPlan):
        text = row.key_text(plan.keys.pk)
        if text is None:
            raise KeyTemplateError(f"{plan.keys.pk} is not a string")
        return dict(plan.pk.parse(text))
    spec = pattern.specs[0]
    values: dict[str, Any] = {}
    for attr in plan.native.pk:
        if attr.template is not None:
            values.update(attr.template.parse(row.key_text(attr.attribute) or ""))
        else:
            assert attr.field is not None
            wire = decode_value(row.item[attr.attribute])
            values[attr.field] = spec.coerce(attr.field, wire)
    return values


def _parses_as(spec: EntitySpec, row: Row) -> bool:
    from ..errors import SingleTableError

    base = spec.base
    try:
        for attr, tpl in ((base.keys.pk, base.pk), (base.keys.sk, base.sk)):
            if tpl is None or not attr:
                continue
            text = row.key_text(attr)
            if text is None:
                return False
            tpl.parse(text)
    except SingleTableError:
        return False
    return True


def _evaluate(pattern: Pattern, ctx: PlanContext, rows: Sequence[Row]) -> PatternView:
    from .._patterns.declare import GetPattern
    from .._patterns.keyed import KeyedPattern as _KeyedPattern

    if isinstance(pattern, GetPattern):
        return _evaluate_get(pattern, ctx, rows)
    if isinstance(pattern, _KeyedPattern):
        return _evaluate_keyed(pattern, ctx, rows)
    view = _view(pattern)
    view.note = "not evaluated (not a get, query or collection pattern)"
    return view


def build_layout(
    repository: type[Repository], items: Iterable[Mapping[str, Any]], *, source: str = ""
) -> Layout:
    """Group ``items`` by partition (in the table and in each index) and evaluate every pattern
    of ``repository`` on them (a backfill job's bookkeeping items are left out)."""
    from .._patterns.declare import DeclaredPattern

    table = repository.__singletable_table__
    specs = _entity_specs(repository)
    items = list(items)
    for number, item in enumerate(items, start=1):
        if item.get(table.pk) is None:
            raise ItemsError(f"{source or 'items'}: item {number} has no {table.pk!r} attribute")
    rows: list[Row] = []
    for item in table_order(table, [i for i in items if not is_job_item(i, table)]):
        tag = item.get(table.type_attribute)
        type_name = format_value(tag) if tag is not None else None
        spec = specs.get(type_name) if type_name is not None else None
        rows.append(Row(len(rows) + 1, item, type_name, spec.name if spec is not None else None))
    fields = {name: [p.attr for p in spec.codec.fields] for name, spec in specs.items()}
    views = build_views(table, rows, fields)
    types = sorted({r.type_name for r in rows if r.type_name and r.type_name != GUARD_TYPE})
    for name in specs:
        if name not in types:
            types.append(name)
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(types)}
    ctx = PlanContext(table.name)  # compiling needs no repository and no client
    patterns = []
    for value in repository.__patterns__.values():
        pattern = value.pattern if isinstance(value, DeclaredPattern) else value
        patterns.append(_evaluate(pattern, ctx, rows))
    return Layout(
        repository,
        table.name,
        source,
        _key_columns(repository),
        table.type_attribute,
        rows,
        views,
        patterns,
        colours,
    )


# -- text --------------------------------------------------------------------------------------


def _clip(text: str, width: int) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _numbers(numbers: Sequence[int]) -> str:
    return ", ".join(str(n) for n in numbers)


def _index_text(layout: Layout) -> list[str]:
    """Each secondary index: its partitions, with their rows (by #) in index order."""
    if len(layout.views) == 1:
        return []
    out = ["Indexes (rows by #, in index order):"]
    for view in layout.views[1:]:
        out.append(f"  {view.describe()}")
        for partition, rows in view.partitions:
            out.append(f"    {_clip(partition, 60)}: {_numbers([r.number for r in rows])}")
    out.append("")
    return out


def render_text(layout: Layout, *, column_width: int = 40, attributes_width: int = 60) -> str:
    """An aligned terminal table grouped by partition, then each pattern's calls and rows."""
    headers = ["#", *layout.key_columns, layout.type_attribute, "attributes"]
    table_rows = []
    for row in layout.rows:
        cells = [str(row.number)]
        cells += [_clip(row.text(c), column_width) for c in layout.key_columns]
        cells.append(_clip(row.type_name or "", column_width))
        cells.append(_clip(layout.attributes_text(row), attributes_width))
        table_rows.append(cells)
    widths = [len(h) for h in headers]
    for cells in table_rows:
        widths = [max(w, len(c)) for w, c in zip(widths, cells)]

    def line(cells: Sequence[str]) -> str:
        parts = [cells[0].rjust(widths[0])]
        parts += [c.ljust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join(parts).rstrip()

    count = len(layout.rows)
    out = [
        f"{layout.repository.__qualname__} · table {layout.table_name} · {count} item"
        f"{'s' if count != 1 else ''} in {len(layout.partitions)} partition"
        f"{'s' if len(layout.partitions) != 1 else ''}"
        + (f" · from {layout.source}" if layout.source else ""),
        "",
        line(headers),
        line(["-" * w for w in widths]),
    ]
    for partition, rows in layout.partitions:
        out.append(f"── {partition} ({len(rows)} item{'s' if len(rows) != 1 else ''})")
        out.extend(line(table_rows[row.number - 1]) for row in rows)
    out.append("")
    out.extend(_index_text(layout))
    out.append("Access patterns (rows by #):")
    for view in layout.patterns:
        explained = view.row
        where = explained.index or "table"
        out.append(f"  {view.name}  {explained.operation} on {where}: {explained.key_condition}")
        if explained.filter:
            out.append(f"      filter: {explained.filter}")
        if view.note:
            out.append(f"      ({view.note})")
        for call in view.calls:
            text = f"rows {_numbers(call.returned)}" if call.returned else "no rows"
            if call.dropped:
                text += f"; also reads and drops {_numbers(call.dropped)}"
            if call.note:
                text += f" ({call.note})"
            out.append(f"    {call.label} -> {text}")
        if view.more_calls:
            out.append(f"    ... and {view.more_calls} more partitions")
    return "\n".join(out) + "\n"
