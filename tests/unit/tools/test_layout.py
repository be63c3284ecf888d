"""The layout view: grouping, index views, pattern evaluation, items and seed data, text and
HTML rendering, and the HTML rendered in headless Chromium (DOM, console, network, clicks, and
its geometry at 1400x1000 and 1920x1080)."""

from __future__ import annotations

import base64
import contextlib
import html.parser
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from singletable import GSI, LSI, Entity, Repository, Table, get, query
from singletable._tools.layout import (
    ItemsError,
    Layout,
    build_layout,
    load_items,
    parse_items,
    render_text,
)
from singletable._tools.layout_html import render_html
from singletable._tools.layout_items import key_value
from singletable._tools.layout_seed import find_seed, items_from_file, seed_items
from singletable.demo_shop import repository as demo_shop
from tests.models import (
    Customer,
    Order,
    OrderDetails,
    OrderLine,
    OrderNote,
    Product,
    Status,
    Store,
)


def _at(day: int) -> datetime:
    return datetime(2026, 6, day, 10, 0, tzinfo=timezone.utc)


def sample_items() -> list[dict[str, Any]]:
    entities = [
        Customer(customer_id="c1", name="Ann", email="ann@example.com"),
        Customer(customer_id="c2", name="Bob", email="bob@example.com"),
        Order(
            customer_id="c1",
            order_id="o1",
            created_at=_at(1),
            status=Status.PENDING,
            total=Decimal("10"),
            customer_name="Ann",
        ),
        Order(
            customer_id="c1",
            order_id="o2",
            created_at=_at(2),
            status=Status.SHIPPED,
            total=Decimal("25.50"),
            customer_name="Ann",
        ),
        OrderNote(customer_id="c1", created_at=_at(1), note_id="n1", text="gift wrap"),
        OrderDetails(order_id="o1", shipping_address="1 Main St", payment_method="card"),
        OrderLine(
            order_id="o1", product_id="p1", quantity=2, price=Decimal("5"), product_name="Pen"
        ),
        Product(product_id="p1", name="Pen", category="office", price=Decimal("5"), stock=10),
    ]
    items = [entity.to_item() for entity in entities]
    # a unique-guard item, as Customer's Unique() email writes it
    items.append(
        {
            "PK": {"S": "__unique__#CUSTOMER#email#ann@example.com"},
            "SK": {"S": "__unique__"},
            "_type": {"S": "__unique__"},
            "_owner": {"S": '["CUSTOMER#c1", "PROFILE"]'},
        }
    )
    return json.loads(json.dumps(items))  # as read back from a file


@pytest.fixture(scope="module")
def layout() -> Layout:
    return build_layout(Store, sample_items(), source="sample")


def rows_of(layout: Layout, type_name: str) -> list[int]:
    return [row.number for row in layout.rows if row.type_name == type_name]


def call(layout: Layout, pattern: str, label: str) -> Any:
    view = next(v for v in layout.patterns if v.name == pattern)
    return next(c for c in view.calls if c.label == label)


# -- grouping and evaluation --------------------------------------------------------------------


def test_rows_grouped_by_partition_in_sort_key_order(layout: Layout) -> None:
    assert len(layout.rows) == len(sample_items())
    assert [r.number for r in layout.rows] == list(range(1, len(layout.rows) + 1))
    partitions = [p for p, _ in layout.partitions]
    assert partitions == sorted(partitions)
    for _, rows in layout.partitions:
        keys = [r.key_text("SK") or "" for r in rows]
        assert keys == sorted(keys)
    assert layout.key_columns == [
        "PK",
        "SK",
        "GSI1PK",
        "GSI1SK",
        "GSI2PK",
        "GSI2SK",
        "GSI3PK",
        "GSI3SK",
    ]


def test_query_returns_its_rows_and_shows_foreign_rows_it_reads(layout: Layout) -> None:
    orders = call(layout, "customer_orders", "customer_orders(customer_id='c1')")
    order_rows = rows_of(layout, "ORDER")
    assert orders.returned == sorted(order_rows, reverse=True)  # order="desc"
    assert orders.dropped == rows_of(layout, "ORDER_NOTE")
    oldest = call(layout, "orders_oldest_first", "orders_oldest_first(customer_id='c1')")
    assert oldest.returned == order_rows
    empty = call(layout, "customer_orders", "customer_orders(customer_id='c2')")
    assert empty.returned == [] and empty.dropped == []


def test_get_index_sparse_and_keys_only_patterns(layout: Layout) -> None:
    ann = call(layout, "customer", "customer(customer_id='c1')")
    (row,) = ann.returned
    assert layout.rows[row - 1].item["name"] == {"S": "Ann"}
    by_email = call(layout, "customer_by_email", "customer_by_email(email='bob@example.com')")
    assert [layout.rows[n - 1].item["name"]["S"] for n in by_email.returned] == ["Bob"]
    pending = call(layout, "pending_orders", "pending_orders()")
    assert [layout.rows[n - 1].item["order_id"]["S"] for n in pending.returned] == ["o1"]
    refs = call(layout, "order_refs", "order_refs(order_id='o2')")
    assert [layout.rows[n - 1].item["order_id"]["S"] for n in refs.returned] == ["o2"]
    status = call(layout, "orders_by_status", "orders_by_status(status='SHIPPED')")
    assert len(status.returned) == 1


def test_collection_and_filter_notes(layout: Layout) -> None:
    home = call(layout, "customer_home", "customer_home(customer_id='c1')")
    assert set(home.returned) == set(rows_of(layout, "ORDER")) | {
        n
        for n in rows_of(layout, "CUSTOMER")
        if layout.rows[n - 1].item["customer_id"]["S"] == "c1"
    }
    assert home.dropped == rows_of(layout, "ORDER_NOTE")
    big = next(v for v in layout.patterns if v.name == "big_orders")
    assert big.row.filter and "not evaluated" in big.note
    teams = next(v for v in layout.patterns if v.name == "team_members")
    assert teams.calls == [] and "no partition" in teams.note


def test_every_pattern_has_a_view(layout: Layout) -> None:
    assert [v.name for v in layout.patterns] == list(Store.__patterns__)


def test_a_single_result_pattern_alone_warns_of_several_matches(layout: Layout) -> None:
    """Only ``one=True`` patterns warn when a call matches several rows (every query did,
    after QueryPattern's flag was renamed one_only)."""
    orders = call(layout, "customer_orders", "customer_orders(customer_id='c1')")
    assert len(orders.returned) == 2 and orders.note == ""
    items = sample_items()
    twin = dict(items[1], PK={"S": "CUSTOMER#c3"}, customer_id={"S": "c3"})
    twin["GSI1PK"] = {"S": "EMAIL#ann@example.com"}  # a second item under Ann's email
    twin["GSI1SK"] = {"S": "CUSTOMER#c3"}
    doubled = build_layout(Store, [*items, twin])
    by_email = call(doubled, "customer_by_email", "customer_by_email(email='ann@example.com')")
    assert len(by_email.returned) == 2 and "MultipleResultsError" in by_email.note


# -- index views --------------------------------------------------------------------------------


def test_every_index_has_a_view_with_its_members_in_key_order(layout: Layout) -> None:
    assert [v.ident for v in layout.views] == ["table", "GSI1", "GSI2", "GSI3"]
    table = layout.view(None)
    assert [r.number for r in table.rows] == [r.number for r in layout.rows]
    for view in layout.views[1:]:
        members = [r for r in layout.rows if view.pk in r.item and view.sk in r.item]
        assert sorted(r.number for r in view.rows) == [r.number for r in members]
        for partition, rows in view.partitions:
            assert {r.text(view.pk) for r in rows} == {partition}
            keys = [r.text(view.sk or "") for r in rows]
            assert keys == sorted(keys)
    # GSI2 is sparse: only the pending order carries its keys
    pending = layout.view("GSI2")
    assert [r.item["order_id"]["S"] for r in pending.rows] == ["o1"] and pending.sparse
    assert "sparse: 1 of 9 items" in pending.describe()


def test_a_keys_only_index_shows_only_keys(layout: Layout) -> None:
    refs = layout.view("GSI3")
    assert refs.projection == "KEYS_ONLY" and not refs.shows_type
    assert refs.attributes == {"ORDER": ["PK", "SK"]}
    assert "_type is not projected" in refs.describe()
    full = layout.view("GSI1")
    assert full.shows_type
    assert full.attributes["ORDER"][:2] == ["PK", "SK"]
    assert "total" in full.attributes["ORDER"] and "_type" not in full.attributes["ORDER"]


def test_table_view_columns_per_type_follow_keys_then_fields(layout: Layout) -> None:
    columns = layout.view(None).attributes
    assert columns["ORDER"][:4] == ["GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK"]
    assert columns["ORDER"][6:] == [
        "customer_id",
        "order_id",
        "created_at",
        "status",
        "total",
        "customer_name",
    ]
    assert columns["CUSTOMER"][2:5] == ["customer_id", "name", "email"]
    assert columns["__unique__"] == ["_owner"]
    assert all("PK" not in c and "SK" not in c and "_type" not in c for c in columns.values())


views_table = Table(
    "Views",
    indexes=[
        GSI("Inverted", pk="SK", sk="PK"),
        LSI("ByRank", sk="LSI1SK"),
        GSI("ByName", pk="GSI1PK", sk="GSI1SK", projection=("INCLUDE", ["name"])),
    ],
)


class Player(Entity, table=views_table, type="PLAYER"):
    player_id: str
    name: str
    score: int

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "PROFILE"
        ByName = ("NAME#{name}", "PLAYER#{player_id}")


class Players(Repository, table=views_table):
    player = get(Player)
    players_by_name = query(Player, index="ByName", keys_only=True)


def test_inverted_local_and_include_indexes() -> None:
    items = [Player(player_id=p, name=n, score=1).to_item() for p, n in (("a", "Ann"), ("b", "Bo"))]
    for rank in ("10", "9", "100"):  # numbers sort by value in an index, not as text
        items.append(
            {
                "PK": {"S": "PLAYER#a"},
                "SK": {"S": f"RUN#{rank}"},
                "_type": {"S": "RUN"},
                "LSI1SK": {"N": rank},
            }
        )
    layout = build_layout(Players, json.loads(json.dumps(items)))
    inverted, by_rank, by_name = layout.views[1:]
    assert (inverted.kind, inverted.key_columns) == ("GSI", ["SK", "PK"])
    assert [p for p, _ in inverted.partitions] == ["PROFILE", "RUN#10", "RUN#100", "RUN#9"]
    assert [r.text("PK") for r in inverted.partitions[0][1]] == ["PLAYER#a", "PLAYER#b"]
    assert (by_rank.kind, by_rank.key_columns) == ("LSI", ["PK", "LSI1SK"])
    assert [r.text("LSI1SK") for r in by_rank.rows] == ["9", "10", "100"]
    assert by_name.projection == "INCLUDE" and not by_name.shows_type
    assert by_name.attributes == {"PLAYER": ["PK", "SK", "name"]}
    assert "projection INCLUDE name" in by_name.describe()
    assert "ByName" in render_text(layout) and "LSI ByRank" in render_text(layout)


# -- items --------------------------------------------------------------------------------------


def test_items_file_formats(tmp_path: Path) -> None:
    items = sample_items()
    plain = tmp_path / "items.json"
    plain.write_text(json.dumps(items))
    assert load_items(plain) == items
    scanned = tmp_path / "scan.json"
    scanned.write_text(json.dumps({"Items": items, "Count": len(items)}))
    assert load_items(scanned) == items


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"PK": {"S": "x"}}, "JSON list"),
        ([{"PK": "CUSTOMER#1"}], "wire format"),
        ([{"PK": {"S": "x", "N": "1"}}], "wire format"),
        ([42], "item 1"),
    ],
)
def test_items_must_be_wire_format(document: Any, message: str) -> None:
    with pytest.raises(ItemsError, match=message):
        parse_items(document)


def test_unreadable_items_file(tmp_path: Path) -> None:
    with pytest.raises(ItemsError, match="cannot read"):
        load_items(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    with pytest.raises(ItemsError, match="not valid JSON"):
        load_items(broken)


def test_item_without_partition_key() -> None:
    with pytest.raises(ItemsError, match="no 'PK'"):
        build_layout(Store, [{"SK": {"S": "x"}}])


_key_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_key_attr = st.one_of(
    _key_text.map(lambda text: {"S": text}),
    st.integers(-1000, 1000).map(lambda n: {"N": str(n)}),
    st.booleans().map(lambda b: {"BOOL": b}),  # not a key type: not in the index
)


@settings(max_examples=40, deadline=2000)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"PK": _key_text.map(lambda text: {"S": "P" + text})},
            optional={"SK": _key_attr, "LSI1SK": _key_attr, "GSI1PK": _key_attr},
        ),
        max_size=12,
    )
)
def test_views_hold_their_members_once_in_dynamodb_key_order(items: list[dict[str, Any]]) -> None:
    """Every view holds exactly the items with key-typed values for its keys, each once, one
    partition per distinct key value, sort keys ascending in DynamoDB's order (numbers by
    value, strings by UTF-8 bytes)."""
    layout = build_layout(Players, items)
    for view in layout.views:
        members = [
            r.number
            for r in layout.rows
            if view.name is None
            or all(
                key_value(r.item.get(attr)) is not None
                for attr in (view.pk, view.sk)
                if attr is not None
            )
        ]
        assert sorted(r.number for r in view.rows) == members
        partitions = [rows[0].key(view.pk) for _, rows in view.partitions]
        assert partitions == sorted(set(partitions))
        for _, rows in view.partitions:
            assert len({r.key(view.pk) for r in rows}) == 1
            sort_keys = [r.key(view.sk) for r in rows]
            assert sort_keys == sorted(sort_keys)


def test_key_order_is_dynamodbs() -> None:
    assert key_value({"N": "9"}) < key_value({"N": "10"}) < key_value({"N": "1e2"})
    assert key_value({"S": "\uffff"}) < key_value({"S": "\U0001f600"})
    assert key_value({"BOOL": True}) is None and key_value(None) is None


# -- seed data ----------------------------------------------------------------------------------


def test_seed_data_is_loaded_through_the_repository(demo_layout: Layout) -> None:
    data = json.loads(demo_shop.DATA.read_text())
    counts: dict[str | None, int] = {}
    for row in demo_layout.rows:
        counts[row.type_name] = counts.get(row.type_name, 0) + 1
    orders = data["orders"]
    assert counts == {
        "CUSTOMER": len(data["customers"]),
        "PRODUCT": len(data["products"]),
        "ORDER": len(orders),
        "ORDER_DETAILS": len(orders),
        "ORDER_ITEM": sum(len(order["items"]) for order in orders),
        "PAYMENT": sum("payment" in order for order in orders),
    }
    assert demo_layout.source.endswith("seeded through singletable.demo_shop.repository.seed")
    # every item has PK and SK, so the inverted index holds them all, regrouped by SK
    inverted = demo_layout.view("Inverted")
    assert len(inverted.rows) == len(demo_layout.rows) and inverted.key_columns == ["SK", "PK"]


def test_a_scatter_pattern_reads_every_shard_in_one_call(demo_layout: Layout) -> None:
    """orders_by_status is scattered over Order.shard: one call per status (the shard is not
    a call keyword), its rows gathered from every shard's partition, merged newest first."""
    data = json.loads(demo_shop.DATA.read_text())
    view = next(v for v in demo_layout.patterns if v.name == "orders_by_status")
    assert view.row.operation == "Query x8"
    assert "scatter over shard" in view.note and "Query x8" in view.note
    numbers = {
        row.item["order_id"]["S"]: row.number
        for row in demo_layout.rows
        if row.type_name == "ORDER"
    }
    by_status: dict[str, list[str]] = {}
    for order in sorted(data["orders"], key=lambda o: o["created_at"], reverse=True):
        by_status.setdefault(order["status"], []).append(order["order_id"])
    assert {call.label: call.returned for call in view.calls} == {
        f"orders_by_status(status={status!r})": [numbers[o] for o in orders]
        for status, orders in sorted(by_status.items())
    }
    pending = by_status["PENDING"]
    assert len(
        {
            row.item["GSI1PK"]["S"]
            for row in demo_layout.rows
            if row.number in [numbers[o] for o in pending]
        }
    ) == len(pending)  # each in its own shard
    assert "orders_by_status  Query x8 on GSI1" in render_text(demo_layout)
    assert "Query x8 on GSI1" in render_html(demo_layout)


def test_a_scatter_first_in_the_sort_key_merges_what_follows_it() -> None:
    """customer_orders scatters over the status, first in GSI1's sort key: one call, its rows
    merged by created_at whatever their status; scans are not evaluated (and do not stop the
    view); a native scatter is evaluated (no order here is open, so none is in ByRegion)."""
    from datetime import timedelta

    from tests.scatter_models import Book, Order, Status

    repo = Book(client=None)
    t0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
    statuses = [Status.SHIPPED, Status.OPEN, Status.PAID]
    orders = [
        Order(
            customer_id="c1",
            order_id=f"o{n}",
            status=statuses[n % 3],
            created_at=t0 + timedelta(minutes=n),
            region="eu",
        )
        for n in range(6)
    ]
    layout = build_layout(Book, [repo.planner.create_op(o, None).params["Item"] for o in orders])
    numbers = {row.item["order_id"]["S"]: row.number for row in layout.rows}
    views = {v.name: v for v in layout.patterns}
    (call,) = views["customer_orders"].calls
    assert call.returned == [numbers[f"o{n}"] for n in range(6)]
    assert "scatter over status" in views["customer_orders"].note
    assert views["open_orders"].note.startswith("not evaluated")
    assert views["open_everywhere"].calls == []
    assert "no partition in these items" in views["open_everywhere"].note


def test_an_edited_copy_of_the_seed_data_is_what_loads(tmp_path: Path) -> None:
    data = json.loads(demo_shop.DATA.read_text())
    data["products"].append(
        {"product_id": "p-vase", "name": "Vase", "category": "decor", "price": "9", "stock": 1}
    )
    copy = tmp_path / "data.json"
    copy.write_text(json.dumps(data))
    original = demo_shop.DATA
    items, source = items_from_file(demo_shop.Shop, copy)
    assert {"S": "PRODUCT#p-vase"} in [item["PK"] for item in items]
    assert source == f"{copy}, seeded through singletable.demo_shop.repository.seed"
    assert demo_shop.DATA is original  # pointed back after the seed ran


def test_wire_items_are_taken_as_they_are(tmp_path: Path) -> None:
    items = sample_items()
    for name, document in (("list.json", items), ("scan.json", {"Items": items, "Count": 9})):
        path = tmp_path / name
        path.write_text(json.dumps(document))
        assert items_from_file(Store, path) == (items, str(path))
        with pytest.raises(ItemsError, match="--seed applies to seed data only"):
            items_from_file(Store, path, seed="tests.unit.tools.test_layout:seed_without_data")


def seed_without_data(repo: Any) -> None:
    """A seed function whose module has no DATA path to point at the file."""


def test_seed_data_needs_a_seed_that_reads_its_data_path(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"customers": []}))
    with pytest.raises(ItemsError, match=r"no seed\(repo\) function in tests\.models"):
        items_from_file(Store, path, module="tests.models")
    with pytest.raises(ItemsError, match="no module-level DATA path"):
        items_from_file(Store, path, seed="tests.unit.tools.test_layout:seed_without_data")
    with pytest.raises(ItemsError, match="has no function 'nothing'"):
        find_seed(Store, seed="tests.unit.tools.test_layout:nothing")
    with pytest.raises(ItemsError, match="expected MODULE:FUNCTION"):
        find_seed(Store, seed="tests.unit.tools.test_layout")
    with pytest.raises(ItemsError, match="cannot import 'no_such_module_xyz'"):
        find_seed(Store, seed="no_such_module_xyz:seed")


def test_seed_data_the_seed_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"shoppers": []}))
    with pytest.raises(ItemsError, match=r"demo_shop\.repository\.seed failed on this seed data"):
        items_from_file(demo_shop.Shop, path)
    assert demo_shop.seed.__globals__["DATA"] == demo_shop.DATA


def test_seed_data_without_moto_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "moto", None)
    with pytest.raises(ItemsError, match=r'pip install "singletable\[demo\]"'):
        seed_items(demo_shop.Shop, demo_shop.seed, demo_shop.DATA)


# -- text ---------------------------------------------------------------------------------------


def test_text_is_aligned_and_grouped(layout: Layout) -> None:
    text = render_text(layout)
    lines = text.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("#  PK"))
    rule = lines[lines.index(header) + 1]
    assert set(rule.replace(" ", "")) == {"-"}
    sk_column = header.index("SK")
    data = [line for line in lines if line[:3].strip().isdigit()]
    assert len(data) == len(layout.rows)
    assert all(line[sk_column - 2 : sk_column] == "  " for line in data)  # columns line up
    assert "── CUSTOMER#c1 (4 items)" in text
    assert "customer_orders(customer_id='c1') -> rows" in text
    assert "also reads and drops" in text


# -- HTML (static) ------------------------------------------------------------------------------


class DomCounter(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, list[dict[str, str | None]]] = {}
        self.tabs: list[str | None] = []
        self.patterns: list[str | None] = []
        self.calls = 0
        self.external: list[str] = []

    @property
    def rows(self) -> list[dict[str, str | None]]:
        """The table view's rows."""
        return self.views.get("table", [])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "section" and "view" in classes:
            self.views[str(attributes.get("data-view"))] = []
        if tag == "tr" and "item" in classes:
            self.views[list(self.views)[-1]].append(attributes)
        if tag == "button" and "tab" in classes:
            self.tabs.append(attributes.get("data-view"))
        if tag == "section" and "pattern" in classes:
            self.patterns.append(attributes.get("data-pattern"))
        if tag == "button" and "call" in classes:
            self.calls += 1
        for name in ("src", "href"):
            if attributes.get(name):
                self.external.append(str(attributes[name]))
        if tag == "link":
            self.external.append(str(attributes))


def view_rows(layout: Layout) -> dict[str, list[str]]:
    """Each view's item numbers, in display order, as the page writes them."""
    return {v.ident: [str(r.number) for r in v.rows] for v in layout.views}


def test_html_is_self_contained(layout: Layout) -> None:
    page = render_html(layout)
    dom = DomCounter()
    dom.feed(page)
    assert len(dom.rows) == len(layout.rows)
    assert {v: [r["data-row"] for r in rows] for v, rows in dom.views.items()} == view_rows(layout)
    assert dom.tabs == [v.ident for v in layout.views]
    assert dom.patterns == [v.name for v in layout.patterns]
    assert dom.external == []
    assert "http://" not in page and "https://" not in page
    colours = {row["data-type"]: row["style"] for row in dom.rows}
    assert colours["ORDER"] != colours["CUSTOMER"]


def test_html_escapes_item_text() -> None:
    items = sample_items()
    items[0]["name"] = {"S": "<script>alert(1)</script>"}
    page = render_html(build_layout(Store, items))
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


# -- HTML in headless Chromium ------------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        reason = (
            "Chromium is not installed (Debian: apt-get install -y --no-install-recommends "
            "chromium; .ci/run installs it)"
        )
        if os.environ.get("SINGLETABLE_REQUIRE_CHROMIUM") == "1":
            pytest.fail(reason + ", but SINGLETABLE_REQUIRE_CHROMIUM=1")
        pytest.skip(reason)
    return path


@pytest.fixture
def page_file(layout: Layout, tmp_path: Path) -> Path:
    path = tmp_path / "layout.html"
    path.write_text(render_html(layout), encoding="utf-8")
    return path


def test_chromium_dump_dom(layout: Layout, page_file: Path, tmp_path: Path) -> None:
    """The page as Chromium built it: one row per item, an element per pattern, the script
    ran (the status line is filled in) and the console stayed empty."""
    chromium = chromium_path()
    profile = tmp_path / "profile"
    result = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page_file.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    dom = DomCounter()
    dom.feed(result.stdout)
    assert len(dom.rows) == len(layout.rows)
    assert dom.patterns == [v.name for v in layout.patterns]
    assert dom.calls == sum(len(v.calls) for v in layout.patterns)
    assert "Click a pattern call" in result.stdout  # set by the script
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console


# A minimal Chrome DevTools Protocol client (stdlib only: one websocket, text frames).


class DevTools:
    def __init__(self, url: str) -> None:
        assert url.startswith("ws://")
        host_port, _, path = url[len("ws://") :].partition("/")
        host, _, port = host_port.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            response += chunk
        head, _, self.buffer = response.partition(b"\r\n\r\n")
        assert b" 101 " in head.split(b"\r\n")[0], head
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _send(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        if len(data) < 126:
            header += bytes([0x80 | len(data)])
        elif len(data) < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", len(data))
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", len(data))
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def _receive(self) -> dict[str, Any]:
        message = b""
        while True:
            first, second = self._read(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if second & 0x80 else b""
            payload = self._read(length)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the websocket")
            if opcode in (0x9, 0xA):
                continue  # ping/pong
            message += payload
            if first & 0x80:
                result: dict[str, Any] = json.loads(message)
                return result

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self._receive()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while time.monotonic() < deadline:
            message = self._receive()
            self.events.append(message)
            if message.get("method") == method:
                return message
        raise TimeoutError(method)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


@contextlib.contextmanager
def chromium_page(chromium: str) -> Iterator[DevTools]:
    profile = tempfile.mkdtemp(prefix="singletable-chromium-")
    process = subprocess.Popen(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    devtools: DevTools | None = None
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as reply:
            targets = json.loads(reply.read())
        page = next(t for t in targets if t.get("type") == "page")
        devtools = DevTools(page["webSocketDebuggerUrl"])
        yield devtools
    finally:
        if devtools is not None:
            devtools.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)


def test_chromium_devtools_clicks_and_console(layout: Layout, page_file: Path) -> None:
    """Load the page through the DevTools protocol: no exception, console message or network
    request; clicking a pattern call highlights exactly the rows the layout computed."""
    chromium = chromium_path()
    with chromium_page(chromium) as page:
        page.call("Runtime.enable")
        page.call("Log.enable")
        page.call("Network.enable")
        page.call("Page.enable")
        page.call("Page.navigate", url=page_file.as_uri())
        page.wait_for("Page.loadEventFired")
        assert page.evaluate(
            "document.querySelectorAll('section.view[data-view=table] tr.item').length"
        ) == len(layout.rows)
        assert page.evaluate("document.querySelector('section.view:not([hidden])').dataset.view")
        assert page.evaluate(
            "Array.from(document.querySelectorAll('section.pattern')).map(s => s.dataset.pattern)"
        ) == [v.name for v in layout.patterns]
        expected = call(layout, "customer_orders", "customer_orders(customer_id='c1')")
        selector = "section.pattern[data-pattern='customer_orders'] button.call"
        clicked = page.evaluate(
            f'(() => {{ const b = Array.from(document.querySelectorAll("{selector}"))'
            f'.find(b => b.textContent === "{expected.label}"); b.click();'
            " return b.getAttribute('aria-pressed'); })()"
        )
        assert clicked == "true"
        status = page.evaluate("document.getElementById('status').textContent")
        assert "returns 2 row(s)" in status and "drops 1" in status
        shown = "section.view:not([hidden])"
        returned = page.evaluate(
            f"Array.from(document.querySelectorAll('{shown} tr.item.returned'))"
            ".map(r => +r.dataset.row)"
        )
        dropped = page.evaluate(
            f"Array.from(document.querySelectorAll('{shown} tr.item.dropped'))"
            ".map(r => +r.dataset.row)"
        )
        assert sorted(returned) == sorted(expected.returned)
        assert dropped == expected.dropped
        # a call on an index selects that index's view and highlights its rows there
        by_status = call(layout, "orders_by_status", "orders_by_status(status='PENDING')")
        page.evaluate(
            "Array.from(document.querySelectorAll("
            "\"section.pattern[data-pattern='orders_by_status'] button.call\"))"
            f".find(b => b.textContent === {json.dumps(by_status.label)}).click()"
        )
        assert page.evaluate(f"document.querySelector('{shown}').dataset.view") == "GSI1"
        assert (
            page.evaluate(
                f"Array.from(document.querySelectorAll('{shown} tr.item.returned'))"
                ".map(r => +r.dataset.row)"
            )
            == by_status.returned
        )
        page.evaluate("document.getElementById('clear').click()")
        assert page.evaluate("document.querySelectorAll('tr.item.returned').length") == 0
        # everything the page did, as events
        page.evaluate("0")
        problems = [
            e
            for e in page.events
            if e.get("method") in ("Runtime.exceptionThrown", "Runtime.consoleAPICalled")
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
        ]
        assert problems == []
        requests = [
            e["params"]["request"]["url"]
            for e in page.events
            if e.get("method") == "Network.requestWillBeSent"
        ]
        assert all(url.startswith(("file:", "data:")) for url in requests), requests


# -- geometry at the two window sizes ------------------------------------------------------------

SIZES = [(1400, 1000), (1920, 1080)]
ONE_LINE = 30  # px: a one-line row is 25 px (18 px line, padding, border); two lines are 43
SCREENSHOTS = os.environ.get("SINGLETABLE_LAYOUT_SCREENSHOTS")  # a folder: keep them to look at

GEOMETRY = """(() => {
  const view = document.querySelector("section.view:not([hidden])");
  const wrap = view.querySelector(".grid-wrap");
  const rect = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, height: r.height}; };
  const box = rect(wrap);
  const rows = Array.from(view.querySelectorAll("tr.item")).map(rect);
  return {
    view: view.dataset.view,
    pageWidth: document.documentElement.scrollWidth,
    width: window.innerWidth,
    box: box,
    keys: Array.from(view.querySelectorAll("thead th.k")).map(
      (th) => Object.assign(rect(th), {name: th.textContent})),
    firstRowKeys: rows.length ? Array.from(
      view.querySelectorAll("tr.item")[0].querySelectorAll("td.k")).map(rect) : [],
    heights: rows.map((r) => r.height),
    visible: rows.filter((r) => r.top >= box.top && r.bottom <= box.bottom).length,
  };
})()"""


@pytest.fixture(scope="module")
def demo_layout() -> Layout:
    """The packaged demo shop, from its data.json seeded through the repository."""
    items, source = items_from_file(demo_shop.Shop, demo_shop.DATA)
    return build_layout(demo_shop.Shop, items, source=source)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack("!II", data[16:24])
    return width, height


def _check_geometry(page: DevTools, layout: Layout, size: tuple[int, int], name: str) -> None:
    width, height = size
    for view in layout.views:
        page.evaluate(f"document.querySelector('button.tab[data-view=\"{view.ident}\"]').click()")
        shape = page.evaluate(GEOMETRY)
        where = f"{name} {view.ident} at {width}x{height}"
        assert shape["view"] == view.ident, where
        # every index view is there, with its members only
        assert len(shape["heights"]) == len(view.rows), where
        # no horizontal overflow of the page; the key columns are visible without scrolling
        assert shape["pageWidth"] <= width, where
        expected = ["#", *view.key_columns] + (["_type"] if view.shows_type else [])
        assert [k["name"] for k in shape["keys"]] == expected, where
        box = shape["box"]
        for cell in shape["keys"] + shape["firstRowKeys"]:
            assert box["left"] <= cell["left"] and cell["right"] <= box["right"], where
            assert cell["right"] <= width, where
        # one-line rows
        assert max(shape["heights"]) <= ONE_LINE, (where, shape["heights"])
        # the key columns stay when the attributes are scrolled sideways
        page.evaluate(
            "(() => { const w = document.querySelector('section.view:not([hidden]) .grid-wrap');"
            " w.scrollLeft = w.scrollWidth; })()"
        )
        scrolled = page.evaluate(GEOMETRY)
        for cell in scrolled["keys"]:
            assert box["left"] - 1 <= cell["left"] and cell["right"] <= box["right"] + 1, where
        page.evaluate(
            "document.querySelector('section.view:not([hidden]) .grid-wrap').scrollLeft = 0"
        )
    page.evaluate("document.querySelector('button.tab[data-view=table]').click()")
    shape = page.evaluate(GEOMETRY)
    # a screenful of rows (the old page showed 8 items at 1400x1000)
    assert shape["visible"] >= min(len(layout.rows), 18), shape["visible"]
    # a clipped cell wraps when its row is clicked, and clips again on a second click
    wrapped = page.evaluate(
        """(() => {
        const cell = Array.from(document.querySelectorAll(
            "section.view:not([hidden]) tr.item .v")).find((v) => v.scrollWidth > v.clientWidth);
        if (!cell) { return null; }
        const row = cell.closest("tr");
        row.click();
        const open = row.getBoundingClientRect().height;
        row.click();
        return [open, row.getBoundingClientRect().height, cell.title.length > 0];
    })()"""
    )
    assert wrapped is not None, f"{name}: no clipped cell to wrap"
    assert wrapped[0] > ONE_LINE and wrapped[1] <= ONE_LINE and wrapped[2]
    screenshot = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
    assert _png_size(screenshot) == size
    if SCREENSHOTS:
        (Path(SCREENSHOTS) / f"layout-{name}-{width}x{height}.png").write_bytes(screenshot)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_chromium_geometry(
    size: tuple[int, int], layout: Layout, demo_layout: Layout, tmp_path: Path
) -> None:
    """At 1400x1000 and 1920x1080: a view per index with the right rows, the key columns
    (PK, SK, _type) inside the window without scrolling, one-line rows, a screenful of them,
    cells that wrap on demand; the Store sample (sparse and KEYS_ONLY indexes) and the demo
    shop (an inverted index, seeded from its data.json)."""
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
        for name, subject in (("store", layout), ("demo-shop", demo_layout)):
            path = tmp_path / f"{name}.html"
            path.write_text(render_html(subject), encoding="utf-8")
            page.events.clear()
            page.call("Page.navigate", url=path.as_uri())
            page.wait_for("Page.loadEventFired")
            _check_geometry(page, subject, size, name)
