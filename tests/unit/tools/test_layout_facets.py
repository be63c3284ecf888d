"""The layout view as a facet view: type chips filter the rows, a row of attribute names
where a run of one type begins (not once per partition), partitions that fold, and a selected
call that shows its request and the order of its rows. Checked in the HTML itself, then in
headless Chromium (the same set-up as tests/unit/tools/test_layout.py), with screenshots at
1400x1000 after filtering and after selecting a call (kept when SINGLETABLE_LAYOUT_SCREENSHOTS
names a folder)."""

from __future__ import annotations

import base64
import html.parser
import json
import os
from itertools import groupby, pairwise
from pathlib import Path
from typing import Any

import pytest

from singletable._tools.layout import Layout, build_layout
from singletable._tools.layout_html import render_html
from singletable._tools.layout_seed import items_from_file
from singletable.demo_shop import repository as demo_shop
from tests.models import Store
from tests.unit.tools.test_layout import (
    DevTools,
    _png_size,
    call,
    chromium_page,
    chromium_path,
    sample_items,
)

SCREENSHOTS = os.environ.get("SINGLETABLE_LAYOUT_SCREENSHOTS")


@pytest.fixture(scope="module")
def store() -> Layout:
    return build_layout(Store, sample_items(), source="sample")


@pytest.fixture(scope="module")
def shop() -> Layout:
    items, source = items_from_file(demo_shop.Shop, demo_shop.DATA)
    return build_layout(demo_shop.Shop, items, source=source)


class Rows(html.parser.HTMLParser):
    """Each view's rows as the page writes them: ("head" | "item", type, hidden)."""

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, list[tuple[str, str, bool]]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "section" and "view" in classes:
            self.views[str(attributes["data-view"])] = []
        if tag == "tr" and {"item", "type-head"} & set(classes):
            kind = "item" if "item" in classes else "head"
            row = (kind, str(attributes.get("data-type")), "hidden" in attributes)
            self.views[list(self.views)[-1]].append(row)


# -- the page as written -----------------------------------------------------------------------


def test_attribute_names_show_once_per_run_of_one_type(shop: Layout) -> None:
    parser = Rows()
    parser.feed(render_html(shop))
    for view in shop.views:
        rows = parser.views[view.ident]
        shown_heads = [t for kind, t, hidden in rows if kind == "head" and not hidden]
        runs = [t for t, _ in groupby(r.type_name or "" for r in view.rows)]
        assert shown_heads == runs, view.ident
        # a shown header row is always followed by an item of its type
        for (kind, kind_type, hidden), following in pairwise(rows):
            if kind == "head" and not hidden:
                assert following[:2] == ("item", kind_type)
    # the inverted index holds one item per partition: one header row per type, not per item
    inverted = parser.views["Inverted"]
    assert sum(1 for kind, _, hidden in inverted if kind == "head" and not hidden) < len(
        [r for r in inverted if r[0] == "item"]
    )


def test_every_call_carries_the_request_it_sends(store: Layout) -> None:
    repo = Store(client=None)
    orders = call(store, "customer_orders", "customer_orders(customer_id='c1')")
    assert orders.requests == [repo.customer_orders.params(customer_id="c1")]
    ann = call(store, "customer", "customer(customer_id='c1')")
    assert ann.requests == [repo.customer.params(customer_id="c1")]
    page = render_html(store)
    assert "data-request=" in page and "request-panel" in page


def test_a_scatter_call_carries_one_request_per_shard(shop: Layout) -> None:
    view = next(v for v in shop.patterns if v.name == "orders_by_status")
    for found in view.calls:
        assert len(found.requests) == 8
        assert len({r["ExpressionAttributeValues"][":pk"]["S"] for r in found.requests}) == 8


# -- in Chromium --------------------------------------------------------------------------------

VISIBLE_ITEMS = """Array.from(document.querySelectorAll(
  "section.view:not([hidden]) tbody:not([hidden]) tr.item:not([hidden])"))
  .map((r) => [+r.dataset.row, r.dataset.type])"""

PARTITION_KEYS = """Array.from(document.querySelectorAll(
  "section.view:not([hidden]) tbody:not([hidden])")).map((tbody) => {
    const key = tbody.querySelector("th.pkc");
    return [tbody.dataset.partition, key.closest("tr").hidden, key.rowSpan,
            key.getBoundingClientRect().height > 0];
  })"""


def open_page(page: DevTools, layout: Layout, path: Path) -> None:
    path.write_text(render_html(layout), encoding="utf-8")
    page.events.clear()
    page.call("Page.navigate", url=path.as_uri())
    page.wait_for("Page.loadEventFired")


def click(page: DevTools, selector: str, text: str | None = None) -> None:
    found = (
        f"Array.from(document.querySelectorAll({json.dumps(selector)}))"
        f".find((e) => e.textContent.startsWith({json.dumps(text)}))"
        if text is not None
        else f"document.querySelector({json.dumps(selector)})"
    )
    page.evaluate(f"{found}.click()")


def screenshot(page: DevTools, name: str) -> None:
    data = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
    assert _png_size(data) == (1400, 1000)
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        (Path(SCREENSHOTS) / f"layout-{name}-1400x1000.png").write_bytes(data)


@pytest.fixture
def page() -> Any:
    chromium = chromium_path()
    with chromium_page(chromium) as devtools:
        devtools.call("Page.enable")
        devtools.call("Runtime.enable")
        devtools.call(
            "Emulation.setDeviceMetricsOverride",
            width=1400,
            height=1000,
            deviceScaleFactor=1,
            mobile=False,
        )
        yield devtools
        problems = [e for e in devtools.events if e.get("method") in ("Runtime.exceptionThrown",)]
        assert problems == []


def test_type_chips_filter_the_rows(page: DevTools, shop: Layout, tmp_path: Path) -> None:
    open_page(page, shop, tmp_path / "shop.html")
    everything = page.evaluate(VISIBLE_ITEMS)
    assert len(everything) == len(shop.rows)
    click(page, "button.chip[data-type=ORDER]")
    orders = [r.number for r in shop.rows if r.type_name == "ORDER"]
    assert page.evaluate(VISIBLE_ITEMS) == [[n, "ORDER"] for n in orders]
    # each partition left shows its key once, in a shown row, spanning the rest
    keys = page.evaluate(PARTITION_KEYS)
    assert keys and all(not hidden and span >= 1 and drawn for _, hidden, span, drawn in keys)
    assert "showing ORDER" in page.evaluate("document.getElementById('filter').textContent")
    screenshot(page, "filtered")
    click(page, "button.chip[data-type=PAYMENT]")  # a second chip adds its type
    shown = {t for _, t in page.evaluate(VISIBLE_ITEMS)}
    assert shown == {"ORDER", "PAYMENT"}
    # header rows follow the filter: one where each shown run of one type begins
    heads = page.evaluate(
        "Array.from(document.querySelectorAll('section.view:not([hidden]) tbody:not([hidden])"
        " tr:not([hidden])')).map((r) => r.classList.contains('type-head') ? 'H:' +"
        " r.dataset.type : r.dataset.type)"
    )
    for before, after in pairwise(heads):
        if after.startswith("H:"):
            assert after[2:] != before.removeprefix("H:")
    # the filter applies to every view (the Inverted index too)
    click(page, "button.tab[data-view=Inverted]")
    assert {t for _, t in page.evaluate(VISIBLE_ITEMS)} == {"ORDER", "PAYMENT"}
    click(page, "button.chip[data-type=ORDER]")
    click(page, "button.chip[data-type=PAYMENT]")
    assert len(page.evaluate(VISIBLE_ITEMS)) == len(shop.view("Inverted").rows)


def test_partitions_fold(page: DevTools, shop: Layout, tmp_path: Path) -> None:
    open_page(page, shop, tmp_path / "shop.html")
    table = shop.view(None)
    partition, rows = next((p, r) for p, r in table.partitions if len(r) > 2)
    selector = f"tbody[data-partition={json.dumps(partition)}]"
    page.evaluate(f"document.querySelector({json.dumps(selector)}).querySelector('.fold').click()")
    shown = page.evaluate(
        f"Array.from(document.querySelector({json.dumps(selector)})"
        ".querySelectorAll('tr:not([hidden])')).map((r) => +r.dataset.row || 0)"
    )
    assert shown == [rows[0].number]
    more = page.evaluate(f"document.querySelector({json.dumps(selector)} + ' th.pkc').dataset.more")
    assert more == f"+{len(rows) - 1} more"
    click(page, "#fold-all")
    assert len(page.evaluate(VISIBLE_ITEMS)) == len(table.partitions)
    click(page, "#unfold-all")
    assert len(page.evaluate(VISIBLE_ITEMS)) == len(shop.rows)


def test_a_selected_call_shows_its_request_and_row_order(
    page: DevTools, shop: Layout, tmp_path: Path
) -> None:
    open_page(page, shop, tmp_path / "shop.html")
    click(page, "#fold-all")  # selecting a call unfolds the partitions it reads
    view = next(v for v in shop.patterns if v.name == "customer_orders")
    chosen = max(view.calls, key=lambda c: len(c.returned))
    assert len(chosen.returned) >= 2
    click(page, "button.call", chosen.label)
    assert page.evaluate("document.getElementById('request-panel').hidden") is False
    request = json.loads(page.evaluate("document.getElementById('request').textContent"))
    assert request == json.loads(json.dumps(chosen.requests[0]))
    assert request["ScanIndexForward"] is False  # order="desc"
    order = page.evaluate("document.getElementById('order').textContent")
    assert order == (
        f"Returns rows {', '.join(map(str, chosen.returned))}, in descending sort-key order."
    )
    positions = page.evaluate(
        "Array.from(document.querySelectorAll('section.view:not([hidden]) td.num[data-pos]'))"
        ".map((c) => [+c.dataset.pos, +c.textContent])"
    )
    assert sorted(positions) == [[i + 1, n] for i, n in enumerate(chosen.returned)]
    assert all(
        n in [r for r, _ in page.evaluate(VISIBLE_ITEMS)] for n in chosen.returned
    )  # unfolded
    screenshot(page, "call")
    click(page, "#clear")
    assert page.evaluate("document.getElementById('request-panel').hidden") is True
    assert page.evaluate("document.querySelectorAll('td.num[data-pos]').length") == 0
