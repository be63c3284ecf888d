"""The layout view as one self-contained HTML page (inline CSS and JS, no network assets):
rows coloured by entity type, grouped by partition; clicking a pattern call highlights the rows
it returns and the rows it reads and drops."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .layout import Layout

UNKNOWN_COLOUR = "#e6e6e6"

_CSS = """
:root { color-scheme: light; --line: #d0d7de; --hit: #0b6bcb; --drop: #c2410c; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1f2328; background: #fff; }
header { padding: 16px 24px; border-bottom: 1px solid var(--line); background: #f6f8fa; }
header h1 { margin: 0 0 4px; font-size: 20px; }
header p { margin: 0; color: #57606a; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(280px, 1fr); gap: 16px;
       padding: 16px 24px; align-items: start; }
#legend { display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 12px; padding: 0;
          list-style: none; }
#legend li { padding: 2px 10px; border-radius: 12px; border: 1px solid var(--line);
             font-size: 12px; }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left;
         vertical-align: top; white-space: nowrap; }
thead th { position: sticky; top: 0; background: #f6f8fa; z-index: 1; }
td.attrs { white-space: normal; min-width: 240px; color: #424a53; }
td.num { color: #57606a; text-align: right; }
td code, th code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
tr.partition-head th { background: #eaeef2; font-weight: 600; }
tr.item { background: var(--type-colour, #fff); }
tr.item.returned { outline: 3px solid var(--hit); outline-offset: -3px; }
tr.item.dropped { outline: 3px dashed var(--drop); outline-offset: -3px; opacity: .75; }
tr.item.dim { opacity: .35; }
#patterns { position: sticky; top: 8px; max-height: calc(100vh - 16px); overflow-y: auto; }
#patterns h2 { font-size: 16px; margin: 0 0 8px; }
section.pattern { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
                  margin-bottom: 10px; }
section.pattern h3 { margin: 0; font-size: 14px; }
.op { font-weight: 400; color: #57606a; font-size: 12px; }
.condition { margin: 4px 0; font-size: 12px; word-break: break-word; }
.note { color: #9a6700; font-size: 12px; margin: 4px 0; }
ul.calls { list-style: none; margin: 4px 0 0; padding: 0; }
ul.calls li { margin: 2px 0; font-size: 12px; }
button.call { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; cursor: pointer;
              border: 1px solid var(--line); border-radius: 4px; background: #fff;
              padding: 1px 6px; text-align: left; max-width: 100%; overflow-wrap: anywhere; }
button.call[aria-pressed="true"] { background: var(--hit); color: #fff; border-color: var(--hit); }
.count { color: var(--hit); }
.drop { color: var(--drop); }
#status { min-height: 1.4em; font-size: 12px; color: #57606a; margin: 0 0 8px; }
"""

_JS = """
(function () {
  "use strict";
  var rows = document.querySelectorAll("tr.item");
  var buttons = document.querySelectorAll("button.call");
  var status = document.getElementById("status");
  function ids(text) { return text ? text.split(" ") : []; }
  function clear() {
    rows.forEach(function (row) { row.classList.remove("returned", "dropped", "dim"); });
    buttons.forEach(function (b) { b.setAttribute("aria-pressed", "false"); });
    status.textContent = "Click a pattern call to highlight the rows it reads.";
  }
  function show(button) {
    var returned = ids(button.getAttribute("data-returns"));
    var dropped = ids(button.getAttribute("data-drops"));
    rows.forEach(function (row) {
      var n = row.getAttribute("data-row");
      var hit = returned.indexOf(n) >= 0, drop = dropped.indexOf(n) >= 0;
      row.classList.toggle("returned", hit);
      row.classList.toggle("dropped", drop);
      row.classList.toggle("dim", !hit && !drop);
    });
    buttons.forEach(function (b) { b.setAttribute("aria-pressed", String(b === button)); });
    status.textContent = button.textContent + ": returns " + returned.length + " row(s)" +
      (dropped.length ? ", reads and drops " + dropped.length : "");
    var first = document.getElementById("row-" + (returned[0] || dropped[0]));
    if (first && first.scrollIntoView) { first.scrollIntoView({block: "nearest"}); }
  }
  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      if (button.getAttribute("aria-pressed") === "true") { clear(); } else { show(button); }
    });
  });
  document.getElementById("clear").addEventListener("click", clear);
  clear();
})();
"""


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def render_html(layout: Layout) -> str:
    """One self-contained HTML page (inline CSS and JS, no network assets)."""
    name = layout.repository.__qualname__
    count = len(layout.rows)
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(name)} layout · singletable</title>",
        f"<style>{_CSS}</style></head><body>",
        "<header>",
        f"<h1>{_esc(name)} <span class='op'>table {_esc(layout.table_name)}</span></h1>",
        f"<p>{count} item{'s' if count != 1 else ''} in {len(layout.partitions)} "
        f"partition{'s' if len(layout.partitions) != 1 else ''}"
        + (f" · from {_esc(layout.source)}" if layout.source else "")
        + " · rows grouped by partition, in sort-key order</p>",
        "</header><main><div>",
        '<ul id="legend">',
    ]
    for type_name, colour in layout.colours.items():
        out.append(
            f'<li class="type" data-type="{_esc(type_name)}" '
            f'style="background:{colour}">{_esc(type_name)}</li>'
        )
    out.append("</ul>")
    headers = ["#", *layout.key_columns, layout.type_attribute, "attributes"]
    out.append('<div class="scroll"><table id="items"><thead><tr>')
    out.extend(f"<th>{_esc(h)}</th>" for h in headers)
    out.append("</tr></thead>")
    for partition, rows in layout.partitions:
        out.append(f'<tbody class="partition" data-partition="{_esc(partition)}">')
        out.append(
            f'<tr class="partition-head"><th colspan="{len(headers)}">'
            f"<code>{_esc(partition)}</code> · {len(rows)} item"
            f"{'s' if len(rows) != 1 else ''}</th></tr>"
        )
        for row in rows:
            colour = layout.colours.get(row.type_name or "", UNKNOWN_COLOUR)
            cells = [f'<td class="num">{row.number}</td>']
            cells += [f"<td><code>{_esc(row.text(c))}</code></td>" for c in layout.key_columns]
            cells.append(f"<td>{_esc(row.type_name or '')}</td>")
            cells.append(f'<td class="attrs">{_esc(layout.attributes_text(row))}</td>')
            out.append(
                f'<tr class="item" id="row-{row.number}" data-row="{row.number}" '
                f'data-type="{_esc(row.type_name or "")}" '
                f'style="--type-colour:{colour}">{"".join(cells)}</tr>'
            )
        out.append("</tbody>")
    out.append("</table></div></div>")
    out.append('<aside id="patterns"><h2>Access patterns</h2>')
    out.append('<p id="status"></p><p><button type="button" id="clear">Clear</button></p>')
    for view in layout.patterns:
        explained = view.row
        where = explained.index or "table"
        out.append(f'<section class="pattern" data-pattern="{_esc(view.name)}">')
        out.append(
            f"<h3>{_esc(view.name)} <span class='op'>{_esc(explained.operation)} on "
            f"{_esc(where)} · {_esc(', '.join(explained.entity_types))} · "
            f"{_esc(explained.order)}"
            "</span></h3>"
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
                f'<li><button type="button" class="call" aria-pressed="false" '
                f'data-returns="{returns}" data-drops="{drops}">{_esc(call.label)}</button> '
                f'<span class="count">{len(call.returned)} row'
                f"{'s' if len(call.returned) != 1 else ''}</span>"
                + (extra if call.dropped else "")
                + (f' <span class="note">{_esc(call.note)}</span>' if call.note else "")
                + "</li>"
            )
        if view.more_calls:
            out.append(f"<li>… and {view.more_calls} more partitions</li>")
        out.append("</ul></section>")
    out.append("</aside></main>")
    out.append(f"<script>{_JS}</script>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
