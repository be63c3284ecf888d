"""The layout view of native-key indexes (``GSI(name, pk=(...), sk=(...))``): a tab per index
whose key columns are its attributes (several partition and sort columns), partitions and rows
in DynamoDB's order (numbers by value), and pattern calls evaluated on them (queries,
collections, scatter over a Shard partition attribute, the table's sort key as a sort
attribute); the text and HTML renderings, and the page in headless Chromium (clicks, geometry).

The items are written through the repository to moto in this process, so shards, keys and
type tags are what the application stores; the expected rows are computed from the entities
with a plain filter-and-sort."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from singletable._tools.layout import Layout, build_layout, render_text, scan_items
from singletable._tools.layout_html import render_html
from singletable.testing import local_table
from tests.native_models import Invoice, Match, Order, Status, Tenants, tenants
from tests.unit.tools.test_layout import (
    SIZES,
    DomCounter,
    _check_geometry,
    chromium_page,
    chromium_path,
)

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
TOTALS = ["2", "10", "100", "7.5", "33", "1000", "9.25", "0.5"]


def orders() -> list[Order]:
    return [
        Order(
            tenant_id=f"t{n % 2 + 1}",
            region="eu" if n % 3 else "us",  # type: ignore[arg-type]
            order_id=f"o{n}",
            status=[Status.SHIPPED, Status.PENDING, Status.PAID][n % 3],
            created_at=T0 + timedelta(hours=5 - n),
            total=Decimal(total),
        )
        for n, total in enumerate(TOTALS)
    ]


def invoices() -> list[Invoice]:
    return [
        Invoice(
            tenant_id="t1",
            region="eu",
            invoice_id=f"i{n}",
            status=Status.PAID,
            created_at=T0 + timedelta(minutes=n),
            number=f"INVOICE-2026-06-0000{n}-FOR-A-LONG-CUSTOMER-REFERENCE",
        )
        for n in range(2)
    ]


def matches() -> list[Match]:
    return [
        Match(tournament_id="cup", region="eu", round=r, match_id=f"m{n}")
        for n, r in enumerate([10, 9, 100, 9])
    ]


@pytest.fixture(scope="module")
def stored() -> Iterator[list[dict[str, Any]]]:
    """The items as the repository stores them (shards derived on write), scanned back."""
    with local_table(tenants) as client:
        repo = Tenants(client=client)
        for entity in [*orders(), *invoices(), *matches()]:
            repo.create(entity)
        yield json.loads(json.dumps(scan_items(client, tenants.name)))  # as read from a file


@pytest.fixture(scope="module")
def layout(stored: list[dict[str, Any]]) -> Layout:
    return build_layout(Tenants, stored, source="native")


def number(layout: Layout, attribute: str, value: str) -> int:
    (row,) = [r.number for r in layout.rows if r.text(attribute) == value]
    return row


def call(layout: Layout, pattern: str, label: str) -> Any:
    view = next(v for v in layout.patterns if v.name == pattern)
    return next(c for c in view.calls if c.label == label)


def by_status_then_time(entity: Any) -> tuple[bytes, datetime]:
    """ByTenant's sort order: status (an S attribute: by UTF-8 bytes), then created_at."""
    return entity.status.value.encode(), entity.created_at


# -- views ----------------------------------------------------------------------------------------


def test_a_tab_per_native_index_with_its_attributes_as_key_columns(layout: Layout) -> None:
    assert [v.ident for v in layout.views] == [
        "table",
        "ByTenant",
        "ByShard",
        "ByShardTotal",
        "ByTournament",
    ]
    by_tenant = layout.view("ByTenant")
    assert by_tenant.native and by_tenant.kind == "GSI"
    assert by_tenant.key_columns == ["tenant_id", "region", "status", "created_at"]
    assert by_tenant.pk_attributes == ("tenant_id", "region")
    assert by_tenant.describe().startswith(
        "GSI ByTenant · native partition key tenant_id, region, sort key status, created_at"
    )
    # the table's key columns are PK and SK: the native attributes are the items' fields
    assert layout.key_columns == ["PK", "SK"]
    assert "status" in layout.view(None).attributes["ORDER"]
    # members: orders and invoices carry every ByTenant attribute, matches do not
    assert sorted(r.type_name or "" for r in by_tenant.rows) == sorted(
        ["ORDER"] * len(TOTALS) + ["INVOICE"] * 2
    )
    assert by_tenant.sparse


def test_partitions_are_tuples_of_partition_values_rows_in_sort_order(layout: Layout) -> None:
    by_tenant = layout.view("ByTenant")
    labels = [label for label, _ in by_tenant.partitions]
    assert labels == [
        "tenant_id=t1, region=eu",
        "tenant_id=t1, region=us",
        "tenant_id=t2, region=eu",
        "tenant_id=t2, region=us",
    ]
    entities = [*orders(), *invoices()]
    for label, rows in by_tenant.partitions:
        tenant, region = (part.split("=")[1] for part in label.split(", "))
        expected = sorted(
            (e for e in entities if (e.tenant_id, e.region) == (tenant, region)),
            key=by_status_then_time,
        )
        assert [(r.text("status"), r.text("created_at")) for r in rows] == [
            (e.status.value, e.to_item()["created_at"]["S"]) for e in expected
        ]


def test_numbers_sort_by_value_in_a_native_index(layout: Layout) -> None:
    by_total = layout.view("ByShardTotal")
    assert [label for label, _ in by_total.partitions] == sorted(
        {label for label, _ in by_total.partitions}, key=int
    )
    for _, rows in by_total.partitions:
        totals = [Decimal(r.text("total")) for r in rows]
        assert totals == sorted(totals)
    # all the orders, by total: 0.5 < 2 < 7.5 < 9.25 < 10 < 33 < 100 < 1000 (not as text)
    everything = sorted(Decimal(r.text("total")) for r in by_total.rows)
    assert everything == sorted(Decimal(t) for t in TOTALS)
    rounds = [r.text("round") for r in layout.view("ByTournament").rows]
    assert rounds == ["9", "9", "10", "100"]


# -- pattern calls ---------------------------------------------------------------------------------


def test_a_native_query_returns_its_partition_in_key_order(layout: Layout) -> None:
    t1_eu = [o for o in orders() if (o.tenant_id, o.region) == ("t1", "eu")]
    expected = [
        number(layout, "order_id", o.order_id) for o in sorted(t1_eu, key=by_status_then_time)
    ]
    tenant_call = call(layout, "tenant_orders", "tenant_orders(tenant_id='t1', region='eu')")
    assert tenant_call.returned == expected
    # invoices share the partition: read and dropped, in key order
    paid_invoices = sorted(invoices(), key=by_status_then_time)
    assert tenant_call.dropped == [
        number(layout, "invoice_id", i.invoice_id) for i in paid_invoices
    ]
    newest = call(
        layout, "newest_tenant_orders", "newest_tenant_orders(tenant_id='t1', region='eu')"
    )
    assert newest.returned == expected[::-1]
    # one call per partition of the index
    view = next(v for v in layout.patterns if v.name == "tenant_orders")
    assert [c.label for c in view.calls] == [
        "tenant_orders(tenant_id='t1', region='eu')",
        "tenant_orders(tenant_id='t1', region='us')",
        "tenant_orders(tenant_id='t2', region='eu')",
        "tenant_orders(tenant_id='t2', region='us')",
    ]


def test_a_native_collection_returns_every_type_in_key_order(layout: Layout) -> None:
    paperwork = call(layout, "tenant_paperwork", "tenant_paperwork(tenant_id='t1', region='eu')")
    entities = [e for e in [*orders(), *invoices()] if (e.tenant_id, e.region) == ("t1", "eu")]
    rows = {id(e): layout.rows[_row_of(layout, e) - 1].number for e in entities}
    assert paperwork.returned == [rows[id(e)] for e in sorted(entities, key=by_status_then_time)]
    assert paperwork.dropped == []


def _row_of(layout: Layout, entity: Any) -> int:
    key = entity.to_item()
    (row,) = [
        r.number for r in layout.rows if (r.item["PK"], r.item["SK"]) == (key["PK"], key["SK"])
    ]
    return row


def test_a_scatter_over_a_native_shard_attribute_is_one_call(layout: Layout) -> None:
    """orders_by_total scatters over shard, the index's only partition attribute: one call
    with no keyword reads every shard, merged by total (numbers by value), ties by table key."""
    view = next(v for v in layout.patterns if v.name == "orders_by_total")
    assert view.row.operation == "Query x4" and "scatter over shard" in view.note
    (scatter,) = view.calls
    assert scatter.label == "orders_by_total()"
    by_total = sorted(orders(), key=lambda o: o.total)
    assert scatter.returned == [number(layout, "order_id", o.order_id) for o in by_total]
    everywhere = next(v for v in layout.patterns if v.name == "orders_everywhere")
    assert [c.label for c in everywhere.calls] == [
        "orders_everywhere(region='eu')",
        "orders_everywhere(region='us')",
    ]
    eu = sorted((o for o in orders() if o.region == "eu"), key=lambda o: o.created_at)[::-1]
    assert everywhere.calls[0].returned == [number(layout, "order_id", o.order_id) for o in eu]


def test_the_table_sort_key_as_a_native_sort_attribute(layout: Layout) -> None:
    (cup,) = next(v for v in layout.patterns if v.name == "matches").calls
    assert cup.label == "matches(tournament_id='cup', region='eu')"
    expected = sorted(matches(), key=lambda m: (m.round, m.to_item()["SK"]["S"]))
    assert cup.returned == [number(layout, "match_id", m.match_id) for m in expected]


# -- text and HTML ---------------------------------------------------------------------------------


def test_text_lists_native_partitions(layout: Layout) -> None:
    text = render_text(layout)
    assert "GSI ByTenant · native partition key tenant_id, region, sort key status" in text
    assert "    tenant_id=t1, region=eu: " in text
    assert "tenant_orders  Query on ByTenant: tenant_id = {tenant_id} AND region = {region}" in text
    assert "tenant_orders(tenant_id='t1', region='eu') -> rows" in text


def test_html_has_a_key_column_per_native_attribute(layout: Layout) -> None:
    page = render_html(layout)
    dom = DomCounter()
    dom.feed(page)
    assert dom.tabs == [v.ident for v in layout.views]
    assert {v: [r["data-row"] for r in rows] for v, rows in dom.views.items()} == {
        v.ident: [str(r.number) for r in v.rows] for v in layout.views
    }
    section = page.split('data-view="ByTenant"', 2)[2].split("</thead>")[0]
    heads = [
        part.split(">", 1)[1].split("<", 1)[0]
        for part in section.split("<th ")[1:]
        if 'data-column="' in part
    ]
    assert heads == ["#", "tenant_id", "region", "status", "created_at", "_type"]
    assert section.count('data-column="pk"') == 2 and section.count('data-column="sk"') == 2
    assert 'title="partition key (attribute 2 of 2)"' in section
    # a partition cell per partition attribute, spanning the partition's rows
    body = page.split('data-view="ByTenant"', 2)[2].split("</section>")[0]
    first = body.split('<tbody class="partition"', 2)[1]
    assert first.count('scope="rowgroup"') == 2


@pytest.fixture
def page_file(layout: Layout, tmp_path: Path) -> Path:
    path = tmp_path / "native.html"
    path.write_text(render_html(layout), encoding="utf-8")
    return path


def test_chromium_clicks_a_native_call(layout: Layout, page_file: Path) -> None:
    """Clicking a call of a native pattern selects its index's tab and highlights exactly
    the rows the layout computed, in that view."""
    chromium = chromium_path()
    expected = call(layout, "tenant_orders", "tenant_orders(tenant_id='t1', region='eu')")
    with chromium_page(chromium) as page:
        page.call("Runtime.enable")
        page.call("Page.enable")
        page.call("Page.navigate", url=page_file.as_uri())
        page.wait_for("Page.loadEventFired")
        page.evaluate(
            "Array.from(document.querySelectorAll("
            "\"section.pattern[data-pattern='tenant_orders'] button.call\"))"
            f".find(b => b.textContent === {json.dumps(expected.label)}).click()"
        )
        shown = "section.view:not([hidden])"
        assert page.evaluate(f"document.querySelector('{shown}').dataset.view") == "ByTenant"
        returned = page.evaluate(
            f"Array.from(document.querySelectorAll('{shown} tr.item.returned'))"
            ".map(r => +r.dataset.row)"
        )
        dropped = page.evaluate(
            f"Array.from(document.querySelectorAll('{shown} tr.item.dropped'))"
            ".map(r => +r.dataset.row)"
        )
        assert returned == expected.returned and dropped == expected.dropped
        problems = [
            e
            for e in page.events
            if e.get("method") in ("Runtime.exceptionThrown", "Runtime.consoleAPICalled")
        ]
        assert problems == []


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_chromium_geometry_of_native_views(
    size: tuple[int, int], layout: Layout, tmp_path: Path
) -> None:
    """Every native view at 1400x1000 and 1920x1080: its four key columns (and #, _type)
    inside the window and sticky when the attributes scroll, one-line rows."""
    chromium = chromium_path()
    width, height = size
    with chromium_page(chromium) as page:
        page.call("Page.enable")
        page.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        path = tmp_path / "native.html"
        path.write_text(render_html(layout), encoding="utf-8")
        page.call("Page.navigate", url=path.as_uri())
        page.wait_for("Page.loadEventFired")
        _check_geometry(page, layout, size, "native")


# -- the demo shop ---------------------------------------------------------------------------------


def test_the_demo_shops_native_indexes(tmp_path: Path) -> None:
    """`singletable demo --layout` and `singletable layout` of the packaged shop: a tab per
    native index, and customer_orders_by_total's calls ordered by total as numbers (318.50
    before 8.50, which text order would reverse)."""
    from singletable._tools.layout_seed import items_from_file
    from singletable.demo_shop import repository as demo_shop

    items, source = items_from_file(demo_shop.Shop, demo_shop.DATA)
    layout = build_layout(demo_shop.Shop, items, source=source)
    by_total = layout.view("OrdersByTotal")
    assert by_total.native and by_total.key_columns == ["customer_id", "total"]
    totals = {label: [r.text("total") for r in rows] for label, rows in by_total.partitions}
    assert totals["c2"] == ["8.50", "318.50"]  # ascending by value in the index
    view = next(v for v in layout.patterns if v.name == "customer_orders_by_total")
    c2 = next(c for c in view.calls if c.label == "customer_orders_by_total(customer_id='c2')")
    assert [layout.rows[n - 1].text("total") for n in c2.returned] == ["318.50", "8.50"]
    by_status = next(v for v in layout.patterns if v.name == "customer_orders_by_status")
    c1 = next(
        c for c in by_status.calls if c.label == "customer_orders_by_status(customer_id='c1')"
    )
    assert [layout.rows[n - 1].text("status") for n in c1.returned] == [
        "SHIPPED",
        "PENDING",
        "PAID",
    ]  # desc: status text order, reversed
