"""The layout page's inline stylesheet and script (no network assets).

The page fills the window: a header line (the type chips, which filter the rows to the types
pressed, and buttons that fold and unfold every partition), then the views pane (a tab per
view; the table of the selected view scrolls in both directions under a sticky header row,
with its key columns sticky on the left: one per key attribute, up to eight on a native-key
index) beside the access-pattern list. Rows are one line high: every cell is clipped with an
ellipsis and carries its full text as a tooltip; clicking a row wraps its cells (clicking it
again clips them); the arrow in a partition key folds the partition to its first row. A row of
attribute names shows where a run of one type begins (the script recomputes them as filters and
folds change). Clicking a pattern call selects the view of the index it reads, highlights the
rows it returns (numbered in the order it returns them) and the rows it reads and drops, and
shows the request it sends.
"""

CSS = """
:root { color-scheme: light; --line: #d0d7de; --hit: #0b6bcb; --drop: #c2410c;
        --head: #f6f8fa; --mono: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
* { box-sizing: border-box; }
html, body { height: 100%; }
body { font: 13px/18px system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1f2328; background: #fff; display: flex; flex-direction: column; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px;
         padding: 8px 16px; border-bottom: 1px solid var(--line); background: var(--head); }
header h1 { margin: 0; font-size: 17px; }
.op { font-weight: 400; color: #57606a; font-size: 12px; }
#legend { display: flex; flex-wrap: wrap; gap: 4px; margin: 0; padding: 0; list-style: none; }
button.chip { font: inherit; font-size: 12px; padding: 0 8px; border-radius: 10px;
              border: 1px solid var(--line); cursor: pointer; color: #1f2328; }
button.chip[aria-pressed="true"] { border-color: #1f2328; box-shadow: inset 0 0 0 1px #1f2328;
                                   font-weight: 600; }
#facets { margin: 0; font-size: 12px; color: #57606a; }
#facets button { font-size: 12px; }
main { flex: 1; min-height: 0; display: grid; gap: 12px; padding: 8px 16px 8px;
       grid-template-columns: minmax(0, 1fr) clamp(260px, 22vw, 380px); }
#views-pane { display: flex; flex-direction: column; min-width: 0; min-height: 0; }
#tabs { display: flex; flex-wrap: wrap; gap: 4px; margin: 0 0 6px; }
button.tab { font: inherit; font-size: 12px; cursor: pointer; border: 1px solid var(--line);
             border-radius: 6px; background: #fff; padding: 2px 10px; color: #1f2328; }
button.tab[aria-selected="true"] { background: #1f2328; color: #fff; border-color: #1f2328; }
button.tab .keys { font: var(--mono); font-size: 11px; opacity: .75; }
button.tab .n { font-size: 11px; opacity: .75; }
section.view { display: flex; flex-direction: column; min-height: 0; flex: 1; }
section.view[hidden] { display: none; }
.view-info { margin: 0 0 6px; font-size: 12px; color: #57606a; white-space: nowrap;
             overflow: hidden; text-overflow: ellipsis; }
.grid-wrap { overflow: auto; flex: 1; min-height: 0; border: 1px solid var(--line);
             border-radius: 6px; }
table.grid { border-collapse: separate; border-spacing: 0; font-size: 13px; }
.grid th, .grid td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: left;
                     vertical-align: top; white-space: nowrap; line-height: 18px; }
.grid thead th { position: sticky; top: 0; background: #eaeef2; z-index: 2; font-weight: 600; }
.grid .k { position: sticky; }
.grid .k0 { left: var(--k0, 0); } .grid .k1 { left: var(--k1, 0); }
.grid .k2 { left: var(--k2, 0); } .grid .k3 { left: var(--k3, 0); }
.grid .k4 { left: var(--k4, 0); } .grid .k5 { left: var(--k5, 0); }
.grid .k6 { left: var(--k6, 0); } .grid .k7 { left: var(--k7, 0); }
.grid .k8 { left: var(--k8, 0); } .grid .k9 { left: var(--k9, 0); }
.grid thead th.k { z-index: 3; }
.grid tbody .k { z-index: 1; }
.grid .last-key { box-shadow: inset -1px 0 0 var(--line); }
.grid tbody.partition > tr:first-child > * { border-top: 2px solid #8c959f; }
.grid th.pkc { background: #fff; font-weight: 600; }
.grid th.pkc .v { display: inline-block; vertical-align: top; }
button.fold { border: 0; background: none; padding: 0 4px 0 0; cursor: pointer; font: inherit;
              color: #57606a; vertical-align: top; }
tbody.folded th.pkc::after { content: attr(data-more); color: #57606a; font-weight: 400;
                             font-size: 11px; margin-left: 4px; vertical-align: top; }
td.num[data-pos]::before { content: attr(data-pos); background: var(--hit); color: #fff;
                           border-radius: 8px; padding: 0 5px; margin-right: 4px;
                           font-size: 11px; font-weight: 600; }
.v { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 24ch; }
.code .v { font: var(--mono); line-height: 18px; }
.kp .v { max-width: 32ch; } .ks .v { max-width: 44ch; } .kt .v { max-width: 16ch; }
.native .kp .v, .native .ks .v { max-width: 28ch; }
td.num { color: #57606a; text-align: right; min-width: 3ch; }
tr.type-head > * { font-size: 11px; line-height: 13px; padding-top: 1px; padding-bottom: 1px;
                   color: #57606a; background: var(--head); font-weight: 600; }
tr.type-head td.k { background: var(--head); }
tr.type-head > th.pkc { font-size: 13px; line-height: 18px; padding: 3px 8px; color: #1f2328;
                        background: #fff; }
tr.item { cursor: pointer; }
tr.item > td { background: var(--type-colour, #fff); }
tr.item.open .v { white-space: normal; overflow-wrap: anywhere; }
tr.item:hover > td { filter: brightness(.96); }
tr.item.returned > td { box-shadow: inset 0 2px 0 var(--hit), inset 0 -2px 0 var(--hit); }
tr.item.returned > td.k0 { box-shadow: inset 4px 0 0 var(--hit), inset 0 2px 0 var(--hit),
                                       inset 0 -2px 0 var(--hit); }
tr.item.dropped > td { box-shadow: inset 0 -2px 0 var(--drop); }
tr.item.dropped > td.k0 { box-shadow: inset 4px 0 0 var(--drop), inset 0 -2px 0 var(--drop); }
tr.item.dim > td { background: #f6f8fa; color: #8c959f; }
#patterns { overflow-y: auto; min-height: 0; }
#patterns h2 { font-size: 15px; margin: 0 0 4px; }
section.pattern { border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px;
                  margin-bottom: 8px; }
section.pattern h3 { margin: 0; font-size: 13px; }
.condition { margin: 2px 0; font-size: 12px; word-break: break-word; }
.condition code, .v code { font: var(--mono); }
.note { color: #9a6700; font-size: 12px; margin: 2px 0; }
ul.calls { list-style: none; margin: 2px 0 0; padding: 0; }
ul.calls li { margin: 2px 0; font-size: 12px; }
.call-line { display: flex; align-items: baseline; column-gap: 6px; }
.call-line > span { flex: none; white-space: nowrap; }
button.call { font: var(--mono); cursor: pointer; border: 1px solid var(--line);
              border-radius: 4px; background: #fff; padding: 0 6px; text-align: left;
              flex: 0 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis;
              white-space: nowrap; }
button.call[aria-pressed="true"] { background: var(--hit); color: #fff; border-color: var(--hit); }
.count { color: var(--hit); }
.drop { color: var(--drop); }
#status { min-height: 18px; font-size: 12px; color: #57606a; margin: 0 0 4px; }
#request-panel { margin: 0 0 8px; }
#request-panel h3 { font-size: 13px; margin: 0; }
#order { font-size: 12px; margin: 2px 0; }
#request { font: var(--mono); font-size: 11px; line-height: 15px; white-space: pre-wrap;
           overflow-wrap: anywhere; background: var(--head); border: 1px solid var(--line);
           border-radius: 6px; padding: 4px 6px; margin: 2px 0 0; max-height: 36vh;
           overflow: auto; }
#clear { font-size: 12px; }
"""

JS = """
(function () {
  "use strict";
  var views = document.querySelectorAll("section.view");
  var tabs = document.querySelectorAll("button.tab");
  var rows = document.querySelectorAll("tr.item");
  var buttons = document.querySelectorAll("button.call");
  var chips = document.querySelectorAll("button.chip");
  var status = document.getElementById("status");
  var panel = document.getElementById("request-panel");
  var types = new Set();  // the entity types the chips keep (none: every type)
  var current = null;
  function ids(text) { return text ? text.split(" ") : []; }
  function stick(view) {
    // left offsets of the sticky key columns: the widths of the header cells before each
    var table = view && view.querySelector("table.grid");
    if (!table) { return; }
    var left = 0;
    table.querySelectorAll("thead th.k").forEach(function (th, i) {
      table.style.setProperty("--k" + i, left + "px");
      left += th.getBoundingClientRect().width;
    });
  }
  function refresh() {
    // which rows show: the chips' types, folded partitions (their first row only), a row of
    // attribute names where a run of one type begins; the partition key in the first row
    views.forEach(function (view) {
      var previous = null;
      view.querySelectorAll("tbody.partition").forEach(function (tbody) {
        var folded = tbody.classList.contains("folded");
        var all = Array.from(tbody.rows);
        var kept = all.filter(function (tr) {
          return tr.classList.contains("item") && (!types.size || types.has(tr.dataset.type));
        });
        var head = null, first = null, count = 0;
        all.forEach(function (tr) {
          if (tr.classList.contains("type-head")) { head = tr; tr.hidden = true; return; }
          tr.hidden = kept.indexOf(tr) < 0 || (folded && count > 0);
          if (tr.hidden) { return; }
          count += 1;
          if (tr.dataset.type !== previous && head && !folded) {
            head.hidden = false;
            first = first || head;
          }
          first = first || tr;
          previous = tr.dataset.type;
        });
        tbody.hidden = !first;
        var keys = Array.prototype.slice.call(tbody.querySelectorAll("th.pkc"));
        var key = keys[0];  // (one per partition attribute; the first holds the fold button)
        if (first && key) {
          if (key.parentNode !== first) {
            keys.forEach(function (cell, i) { first.insertBefore(cell, first.children[1 + i]); });
          }
          keys.forEach(function (cell) { cell.rowSpan = all.length - all.indexOf(first); });
          key.setAttribute("data-more", folded && kept.length > 1 ?
            "+" + (kept.length - 1) + " more" : "");
          var fold = key.querySelector("button.fold");
          fold.textContent = folded ? "\u25b8" : "\u25be";
          fold.setAttribute("aria-expanded", String(!folded));
        }
      });
    });
    var shown = current ? current.querySelectorAll("tr.item:not([hidden])").length : 0;
    var total = current ? current.querySelectorAll("tr.item").length : 0;
    document.getElementById("filter").textContent = (types.size ?
      "showing " + Array.from(types).join(", ") : "all types") +
      " \u00b7 " + shown + " of " + total + " rows shown";
    stick(current);
  }
  function select(name) {
    views.forEach(function (view) {
      var on = view.getAttribute("data-view") === name;
      view.hidden = !on;
      if (on) { current = view; }
    });
    tabs.forEach(function (tab) {
      tab.setAttribute("aria-selected", String(tab.getAttribute("data-view") === name));
    });
    refresh();
  }
  function clear() {
    rows.forEach(function (row) { row.classList.remove("returned", "dropped", "dim"); });
    document.querySelectorAll("td.num[data-pos]").forEach(function (cell) {
      cell.removeAttribute("data-pos");
    });
    buttons.forEach(function (b) { b.setAttribute("aria-pressed", "false"); });
    panel.hidden = true;
    status.textContent = "Click a pattern call to highlight the rows it reads.";
  }
  function show(button) {
    clear();
    var section = button.closest("section.pattern");
    select(section.getAttribute("data-view"));
    var returned = ids(button.getAttribute("data-returns"));
    var dropped = ids(button.getAttribute("data-drops"));
    rows.forEach(function (row) {
      var n = row.getAttribute("data-row");
      var hit = returned.indexOf(n) >= 0, drop = dropped.indexOf(n) >= 0;
      row.classList.toggle("returned", hit);
      row.classList.toggle("dropped", drop);
      row.classList.toggle("dim", !hit && !drop);
      if (hit && row.closest("section.view") === current) {
        row.querySelector("td.num").setAttribute("data-pos", returned.indexOf(n) + 1);
      }
      if ((hit || drop) && row.closest("section.view") === current) {
        row.closest("tbody").classList.remove("folded");
      }
    });
    buttons.forEach(function (b) { b.setAttribute("aria-pressed", String(b === button)); });
    status.textContent = button.textContent + ": returns " + returned.length + " row(s)" +
      (dropped.length ? ", reads and drops " + dropped.length : "");
    document.getElementById("order").textContent = "Returns " +
      (returned.length ? "rows " + returned.join(", ") : "no row") + ", " +
      section.getAttribute("data-order") + ".";
    document.getElementById("request").textContent = button.getAttribute("data-request");
    panel.hidden = false;
    refresh();
    var first = current.querySelector('tr.item[data-row="' + (returned[0] || dropped[0]) + '"]');
    if (first && first.scrollIntoView) { first.scrollIntoView({block: "nearest"}); }
  }
  function foldAll(folded) {
    current.querySelectorAll("tbody.partition").forEach(function (tbody) {
      tbody.classList.toggle("folded", folded);
    });
    refresh();
  }
  tabs.forEach(function (tab) {
    tab.addEventListener("click", function () { select(tab.getAttribute("data-view")); });
  });
  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      if (button.getAttribute("aria-pressed") === "true") { clear(); } else { show(button); }
    });
  });
  chips.forEach(function (chip) {
    chip.addEventListener("click", function () {
      var type = chip.getAttribute("data-type");
      if (types.has(type)) { types.delete(type); } else { types.add(type); }
      chip.setAttribute("aria-pressed", String(types.has(type)));
      refresh();
    });
  });
  document.querySelectorAll("button.fold").forEach(function (fold) {
    fold.addEventListener("click", function (event) {
      event.stopPropagation();  // not the row's click (wrap its cells)
      fold.closest("tbody").classList.toggle("folded");
      refresh();
    });
  });
  rows.forEach(function (row) {
    row.addEventListener("click", function () {
      row.classList.toggle("open");
      stick(current);
    });
  });
  window.addEventListener("resize", function () { stick(current); });
  document.getElementById("clear").addEventListener("click", clear);
  document.getElementById("fold-all").addEventListener("click", function () { foldAll(true); });
  document.getElementById("unfold-all").addEventListener("click", function () {
    foldAll(false);
  });
  clear();
  select(tabs.length ? tabs[0].getAttribute("data-view") : "table");
})();
"""
