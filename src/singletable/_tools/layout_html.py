"""The layout view as one self-contained HTML page (inline CSS and JS from ``layout_assets``,
no network assets): a tab per view (the table, then each secondary index; a native-key index
shows each of its partition and sort attributes as a key column), one-line rows coloured by
entity type and grouped by partition (each partition folds), non-key attributes as a column set
per entity type (a row of attribute names where a run of one type begins), type chips that
filter the rows to some entity types (a facet view); clicking a pattern call selects its
index's view, highlights the rows it returns (numbered in the order it returns them) and the
rows it reads and drops, and shows the request it sends."""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

from .layout_assets import CSS, JS

if TYPE_CHECKING:
    from .layout import Layout
    from .layout_views import IndexView, Row

UNKNOWN_COLOUR = "#e6e6e6"


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _cell(text: str, classes: str = "", title: str | None = None, tag: str = "td") -> str:
    """One clipped cell: the full text is the tooltip, a click on the row wraps it."""
    tip = text if title is None else title
    attrs = f' class="{classes}"' if classes else ""
    return f'<{tag}{attrs}><div class="v" title="{_esc(tip)}">{_esc(text)}</div></{tag}>'


class _KeyColumns:
    """A view's sticky columns: ``#``, each partition and sort attribute, the type tag."""

    ROLES = {
        "num": "item number (as in the table view)",
        "pk": "partition key",
        "sk": "sort key",
        "type": "type tag",
    }
    CLASSES = {"num": "", "pk": " kp", "sk": " ks", "type": " kt"}

    def __init__(self, view: IndexView) -> None:
        self.parts, self.sorts = len(view.pk_attributes), len(view.sk_attributes)
        self.names = ["#", *view.key_columns] + ([view.type_attribute] if view.shows_type else [])
        self.kinds = ["num"] + ["pk"] * self.parts + ["sk"] * self.sorts
        self.kinds += ["type"] * view.shows_type
        self.last = len(self.names) - 1

    def css(self, i: int) -> str:
        """The classes of column ``i``: sticky at its offset, its role, the last one's edge."""
        return f"k k{i}{self.CLASSES[self.kinds[i]]}" + (" last-key" if i == self.last else "")

    def head(self, i: int) -> str:
        kind = self.kinds[i]
        count = self.parts if kind == "pk" else self.sorts
        place = i if kind == "pk" else i - self.parts
        numbered = f" (attribute {place} of {count})" if kind in ("pk", "sk") and count > 1 else ""
        return (
            f'<th class="{self.css(i)}{" key" if i else ""}" data-column="{kind}" '
            f'title="{self.ROLES[kind]}{numbered}">{_esc(self.names[i])}</th>'
        )


def _view_html(layout: Layout, view: IndexView) -> list[str]:
    """One view (the table or an index): a sticky-headed table, a tbody per partition whose
    partition cells (one per partition attribute) span it, a header row of attribute names
    wherever the entity type changes."""
    keys = _KeyColumns(view)
    head = [keys.head(i) for i in range(len(keys.names))]
    if view.slots:
        head.append(
            f'<th colspan="{view.slots}" class="attrs">attributes '
            '<span class="op">(a column set per entity type)</span></th>'
        )
    native = " native" if view.native else ""
    out = [
        f'<section class="view{native}" role="tabpanel" data-view="{_esc(view.ident)}" '
        f'data-rows="{len(view.rows)}" '
        f'aria-label="{_esc(view.ident)}">',
        f'<p class="view-info" title="{_esc(view.describe())}">{_esc(view.describe())} · '
        "click a row to wrap its cells, a partition key to fold its partition</p>",
        '<div class="grid-wrap"><table class="grid">',
        f"<thead><tr>{''.join(head)}</tr></thead>",
    ]
    previous: object = object()  # the type of the row above: a header row starts each run
    for partition, rows in view.partitions:
        html, previous = _partition_html(layout, view, keys, partition, rows, previous)
        out.append(html)
    out.append("</table></div></section>")
    return out


def _partition_html(
    layout: Layout,
    view: IndexView,
    keys: _KeyColumns,
    partition: str,
    rows: list[Row],
    previous: object,
) -> tuple[str, object]:
    """One partition's tbody and the type of its last row: its rows, a row of attribute names
    starting each partition (for the type filter to reveal) and shown only where a run of one
    type begins (``previous`` is the type above), and a cell per partition attribute spanning
    the rows."""
    keyish = set(layout.key_columns)
    slots = view.slots
    lines: list[str] = []
    shown: list[bool] = []  # which of the lines show without the script's filters
    for row in rows:
        columns = view.columns_of(row)
        if slots and (row.type_name != previous or not lines):
            repeat = " hidden" if row.type_name == previous else ""
            cells = ['<td class="k k0"></td>']
            cells += [
                f'<td class="{keys.css(i)}"></td>' for i in range(1 + keys.parts, keys.last + 1)
            ]
            cells += [f"<th>{_esc(name)}</th>" for name in columns]
            cells += ["<td></td>"] * (slots - len(columns))
            lines.append(
                f'<tr class="type-head" data-type="{_esc(row.type_name or "")}"{repeat}>'
                + "".join(cells)
                + "</tr>"
            )
            shown.append(not repeat)
        previous = row.type_name
        colour = layout.colours.get(row.type_name or "", UNKNOWN_COLOUR)
        cells = [f'<td class="k k0 num">{row.number}</td>']
        for j, attribute in enumerate(view.sk_attributes):
            cells.append(_cell(row.text(attribute), keys.css(1 + keys.parts + j) + " code"))
        if view.shows_type:
            cells.append(_cell(row.type_name or "", keys.css(keys.last)))
        for name in columns:
            text = row.text(name)
            cells.append(
                _cell(text, "code" if name in keyish else "", f"{name}: {text}")
                if name in row.item
                else "<td></td>"
            )
        cells += ["<td></td>"] * (slots - len(columns))
        lines.append(
            f'<tr class="item" data-row="{row.number}" '
            f'data-type="{_esc(row.type_name or "")}" '
            f'style="--type-colour:{colour}">' + "".join(cells) + "</tr>"
        )
        shown.append(True)
    body = _with_partition_keys(lines, shown.index(True), rows[0], view, keys)
    return (
        f'<tbody class="partition" data-partition="{_esc(partition)}" '
        f'data-items="{len(rows)}">{body}</tbody>',
        previous,
    )


def _with_partition_keys(
    lines: list[str], first: int, row: Row, view: IndexView, keys: _KeyColumns
) -> str:
    """The partition's rows with its key cells (spanning them; the fold button in the first)
    in row ``first``, the first that shows (the script moves them when a filter hides it)."""
    cut = lines[first].index("</td>") + len("</td>")  # after the # cell
    fold = (
        '<button type="button" class="fold" aria-expanded="true" '
        'title="fold or unfold this partition">▾</button>'
    )
    cells = []
    for i, attribute in enumerate(view.pk_attributes):
        cell = _cell(row.text(attribute), keys.css(1 + i) + " pkc code", tag="th")
        cell = cell.replace("<th ", f'<th rowspan="{len(lines) - first}" scope="rowgroup" ', 1)
        if i == 0:
            cell = cell.replace('"><div class="v"', f'">{fold}<div class="v"', 1)
        cells.append(cell)
    lines[first] = lines[first][:cut] + "".join(cells) + lines[first][cut:]
    return "".join(lines)


def _patterns_html(layout: Layout) -> list[str]:
    out = ['<aside id="patterns"><h2>Access patterns</h2>']
    out.append('<p id="status"></p><p><button type="button" id="clear">Clear</button></p>')
    out.append(
        '<section id="request-panel" hidden><h3>Request <span class="op">'
        "(pattern.params(...), what the call sends)</span></h3>"
        '<p id="order"></p><pre id="request"></pre></section>'
    )
    for view in layout.patterns:
        explained = view.row
        where = explained.index or "table"
        out.append(
            f'<section class="pattern" data-pattern="{_esc(view.name)}" data-view="{_esc(where)}" '
            f'data-order="{_esc(_order_text(explained))}">'
        )
        out.append(
            f"<h3>{_esc(view.name)} <span class='op'>{_esc(explained.operation)} on "
            f"{_esc(where)} · {_esc(', '.join(explained.entity_types))} · "
            f"{_esc(explained.order)}</span></h3>"
        )
        out.append(f'<p class="condition"><code>{_esc(explained.key_condition)}</code></p>')
        if explained.filter:
            out.append(f'<p class="condition">filter <code>{_esc(explained.filter)}</code></p>')
        if view.note:
            out.append(f'<p class="note">{_esc(view.note)}</p>')
        out.append('<ul class="calls">')
        for call in view.calls:
            returns = " ".join(str(n) for n in call.returned)
            drops = " ".join(str(n) for n in call.dropped)
            extra = f' <span class="drop">+{len(call.dropped)} read and dropped</span>'
            out.append(
                f'<li><div class="call-line"><button type="button" class="call" '
                'aria-pressed="false" '
                f'title="{_esc(call.label)}" data-returns="{returns}" data-drops="{drops}" '
                f'data-request="{_esc(_requests_json(call.requests))}">'
                f"{_esc(call.label)}</button> "
                f'<span class="count">{_plural(len(call.returned), "row")}</span>'
                + (extra if call.dropped else "")
                + "</div>"
                + (f'<div class="note">{_esc(call.note)}</div>' if call.note else "")
                + "</li>"
            )
        if view.more_calls:
            out.append(f"<li>… and {view.more_calls} more partitions</li>")
        out.append("</ul></section>")
    out.append("</aside>")
    return out


def _order_text(explained: Any) -> str:
    """How a pattern orders what it returns, in words."""
    if explained.operation.startswith("GetItem"):
        return "one item"
    direction = "descending" if explained.order == "desc" else "ascending"
    how = "merged from every shard in" if " x" in explained.operation else "in"
    return f"{how} {direction} sort-key order"


def _requests_json(requests: list[dict[str, Any]]) -> str:
    """The requests as the page shows them: one object, or a list for a scatter."""
    document: Any = requests[0] if len(requests) == 1 else requests
    return json.dumps(document, indent=2, default=str)


def render_html(layout: Layout) -> str:
    """One self-contained HTML page (inline CSS and JS, no network assets)."""
    name = layout.repository.__qualname__
    counts: dict[str, int] = {}
    for row in layout.rows:
        counts[row.type_name or ""] = counts.get(row.type_name or "", 0) + 1
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(name)} layout · singletable</title>",
        f"<style>{CSS}</style></head><body>",
        "<header>",
        f"<h1>{_esc(name)} <span class='op'>table {_esc(layout.table_name)} · "
        f"{_plural(len(layout.rows), 'item')} in "
        f"{_plural(len(layout.partitions), 'partition')}"
        + (f" · from {_esc(layout.source)}" if layout.source else "")
        + "</span></h1>",
        '<ul id="legend">',
    ]
    for type_name, colour in layout.colours.items():
        out.append(
            f'<li class="type" data-type="{_esc(type_name)}">'
            f'<button type="button" class="chip" data-type="{_esc(type_name)}" '
            f'aria-pressed="false" style="background:{colour}" '
            f'title="show only {_esc(type_name)} items (click more types to add them)">'
            f"{_esc(type_name)} <span class='op'>{counts.get(type_name, 0)}</span></button></li>"
        )
    out.append(
        '</ul><p id="facets"><span id="filter"></span> '
        '<button type="button" id="fold-all">fold partitions</button> '
        '<button type="button" id="unfold-all">unfold</button></p>'
    )
    out.append("</header><main><div id='views-pane'>")
    out.append('<nav id="tabs" role="tablist" aria-label="views">')
    for view in layout.views:
        label = "Table" if view.name is None else view.name
        keys = " · ".join(view.key_columns)
        out.append(
            f'<button type="button" role="tab" class="tab" data-view="{_esc(view.ident)}" '
            f'aria-selected="false" title="{_esc(view.describe())}">{_esc(label)} '
            f'<span class="keys">{_esc(keys)}</span> '
            f'<span class="n">{len(view.rows)}</span></button>'
        )
    out.append("</nav>")
    for view in layout.views:
        out.extend(_view_html(layout, view))
    out.append("</div>")
    out.extend(_patterns_html(layout))
    out.append("</main>")
    out.append(f"<script>{JS}</script>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
