"""The ``singletable`` command line: explain, lint, schema, layout, demo; help, usage errors
and target loading. Most tests call ``main()`` in-process; the entry point itself, the demo and
the import conventions run as subprocesses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from singletable._tools.cli import main
from singletable._tools.demo import expected_operations, operations_text
from tests import lint_models as m
from tests.models import Store, shop

ROOT = Path(__file__).resolve().parents[3]


def run_cli(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, isolated: bool = False
) -> subprocess.CompletedProcess[str]:
    """``python -m singletable ARGS`` (or, isolated, main() with no cwd on sys.path)."""
    if isolated:
        command = [
            sys.executable,
            "-I",
            "-c",
            "import sys; from singletable._tools.cli import main; "
            "raise SystemExit(main(sys.argv[1:]))",
            *args,
        ]
    else:
        command = [sys.executable, "-m", "singletable", *args]
    environment = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL_DYNAMODB"}
    environment.update(env or {})
    return subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
    )


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as exc:  # argparse: --help, usage errors
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err: str) -> str:
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- explain ------------------------------------------------------------------------------------


def test_explain_prints_markdown_table(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "explain", "tests.models:Store")
    assert status == 0 and err == ""
    lines = out.strip().splitlines()
    assert lines[0].startswith("| Pattern | Operation | Index | Key condition")
    assert re.fullmatch(r"\|(---\|)+", lines[1])
    rows = [line.split(" | ")[0].lstrip("| ") for line in lines[2:]]
    assert rows == list(Store.__patterns__)
    assert all(("GetItem" in line or "Query" in line) for line in lines[2:])


def test_explain_entry_point_exits_zero() -> None:
    result = run_cli("explain", "tests.lint_models:CleanRepo")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 + len(m.CleanRepo.__patterns__)
    assert lines[1].startswith("|---|")


def test_explain_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "explain", "tests.models:Store", "--format", "json")
    rows = json.loads(out)
    assert status == 0
    assert [r["pattern"] for r in rows] == list(Store.__patterns__)
    assert {r["operation"] for r in rows} <= {"GetItem", "Query", "Query+BatchGetItem"}
    requests = {"GetItem": 1, "Query": 1, "Query+BatchGetItem": 2}
    assert all(r["requests"] == requests[r["operation"]] for r in rows)


def test_explain_costs_adds_rcu_and_wcu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = cli(capsys, "explain", "tests.unit.tools.test_costs:Desk", "--costs")
    assert status == 0
    header, _, *rows = out.splitlines()
    assert header.endswith("| RCU | WCU |")
    (ticket,) = [r for r in rows if r.startswith("| ticket |")]
    assert "| 1 | create 8 (table 4, GSI1 4); put 12 (table 4, GSI1 8);" in ticket
    status, out, _ = cli(
        capsys, "explain", "tests.unit.tools.test_costs:Desk", "--costs", "--format", "json"
    )
    priced = {r["pattern"]: r for r in json.loads(out)}
    assert priced["account"]["wcu"]["create"] == {"table": 4}  # item and guard, in a transaction
    assert priced["account"]["rcu"] == 0.5
    # measured: a small ticket instead of the estimate (a Scan's output works as it is)
    items = tmp_path / "items.json"
    small = {
        "PK": {"S": "TICKET#t1"},
        "SK": {"S": "TICKET"},
        "_type": {"S": "TICKET"},
        "ticket_id": {"S": "t1"},
        "state": {"S": "open"},
        "owner": {"S": "ann"},
        "body": {"S": "hi"},
        "GSI1PK": {"S": "OPEN#ann"},
        "GSI1SK": {"S": "TICKET#t1"},
    }
    items.write_text(json.dumps({"Items": [small]}))
    status, out, _ = cli(
        capsys, "explain", "tests.unit.tools.test_costs:Desk", "--items", str(items)
    )
    (ticket,) = [r for r in out.splitlines() if r.startswith("| ticket |")]
    assert "| 1 | create 2 (table 1, GSI1 1);" in ticket  # a consistent read: one unit
    items.write_text("[1, 2]")
    status, _, err = cli(
        capsys, "explain", "tests.unit.tools.test_costs:Desk", "--items", str(items)
    )
    assert status == 2 and "JSON list of items in wire form" in err


# -- lint ---------------------------------------------------------------------------------------


def test_lint_warning_only_model_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "lint", "tests.lint_models:HotRepo")
    assert status == 0
    assert "hot" in out and "Job" in out and "'QUEUE'" in out
    assert "hot-partition" in out and "WARNING" in out


def test_lint_error_model_exits_one(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "lint", "tests.lint_models:CollidingRepo")
    assert status == 1
    assert "ERROR" in out and "key-collision" in out


def test_lint_overlap_names_both_entities(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "lint", "tests.lint_models:OverlappingRepo")
    assert status == 0
    overlap = [line for line in out.splitlines() if "overlap" in line and "reads" in line]
    assert any("Post" in line and "PostComment" in line for line in overlap)


def test_lint_clean_model(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "lint", "tests.lint_models:CleanRepo")
    assert status == 0 and err == ""
    assert "hot" not in out.lower() and "overlap" not in out.lower()
    assert "no findings" in out


def test_lint_acknowledged_error_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "lint", "tests.lint_models:AcknowledgedErrors", "--verbose")
    assert status == 0
    assert "ACKNOWLEDGED" in out and "different alphabets" in out


def test_lint_collapses_acknowledged_findings_unless_verbose(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = cli(capsys, "lint", "tests.lint_models:AcknowledgedErrors")
    assert status == 0
    assert "ACKNOWLEDGED" not in out and "different alphabets" not in out
    assert "1 acknowledged finding (lint --verbose shows it)" in out.splitlines()
    assert "prefix-overlap [cart.WishItem]" in out  # open findings are still listed
    for flag in ([], ["--verbose"], ["-v"]):  # --verbose never changes the exit status
        assert cli(capsys, "lint", "tests.lint_models:CollidingRepo", *flag)[0] == 1
        assert cli(capsys, "lint", "tests.lint_models:AcknowledgedErrors", *flag)[0] == 0


def test_lint_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "lint", "tests.lint_models:CollidingRepo", "--format", "json")
    document = json.loads(out)
    assert status == 1 == document["exit_status"]
    assert all(set(f) >= {"code", "severity", "subject", "hint"} for f in document["findings"])


def test_lint_entry_point_exit_codes() -> None:
    assert run_cli("lint", "tests.lint_models:HotRepo").returncode == 0
    assert run_cli("lint", "tests.lint_models:CollidingRepo").returncode == 1
    clean = run_cli("lint", "tests.lint_models:CleanRepo")
    assert clean.returncode == 0
    assert "hot" not in clean.stdout.lower() and "overlap" not in clean.stdout.lower()


# -- targets ------------------------------------------------------------------------------------


def test_unimportable_module_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "lint", "no_such_module_xyz:Repo")
    assert status == 2 and out == ""
    line = one_line(err)
    assert "no_such_module_xyz" in line and "cannot import" in line


def test_unimportable_module_entry_point() -> None:
    result = run_cli("lint", "no_such_pkg.models:Shop")
    assert result.returncode != 0
    assert "no_such_pkg" in one_line(result.stderr)


def test_missing_attribute_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "explain", "tests.lint_models:CleanRepoo")
    assert status == 2
    line = one_line(err)
    assert "'CleanRepoo'" in line and "did you mean 'CleanRepo'" in line


def test_target_of_the_wrong_kind(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "lint", "tests.lint_models:Account")
    assert status == 2 and "not a Repository subclass" in one_line(err)
    status, _, err = cli(capsys, "schema", "tests.lint_models:get")
    assert status == 2 and "not a singletable Table" in one_line(err)


def test_target_needs_a_colon(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "explain", "tests.lint_models")
    assert status == 2 and "MODULE:NAME" in one_line(err)


def test_broken_model_module_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken_models.py").write_text(
        textwrap.dedent(
            """
            from singletable import Entity, Table

            table = Table("Broken")

            class Thing(Entity, table=table):
                thing_id: str

                class Keys:
                    pk = "THING#{thing_idd}"
                    sk = "#THING"
            """
        )
    )
    result = run_cli("lint", "broken_models:Repo", cwd=tmp_path, isolated=True)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "broken_models" in line and "thing_idd" in line


def test_current_directory_is_on_the_import_path(tmp_path: Path) -> None:
    (tmp_path / "my_shop.py").write_text(
        textwrap.dedent(
            """
            from singletable import Entity, Repository, Table, get

            table = Table("Mine")

            class Thing(Entity, table=table, type="THING"):
                thing_id: str

                class Keys:
                    pk = "THING#{thing_id}"
                    sk = "#THING"

            class Shop(Repository, table=table):
                thing = get(Thing)
            """
        )
    )
    result = run_cli("explain", "my_shop:Shop", cwd=tmp_path, isolated=True)
    assert result.returncode == 0, result.stderr
    assert "| thing | GetItem |" in result.stdout


# -- schema -------------------------------------------------------------------------------------


def test_schema_json_is_create_table_params(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "schema", "tests.models:shop")
    assert status == 0
    assert json.loads(out) == shop.create_table_params()


def test_schema_cloudformation(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "schema", "tests.models:shop", "--format", "cloudformation")
    assert status == 0
    assert json.loads(out) == shop.cloudformation()


def test_schema_table_name_and_repository_target(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "schema", "tests.models:Store", "--table-name", "Shop-dev")
    assert status == 0
    assert json.loads(out) == shop.create_table_params("Shop-dev")


def test_schema_native_keys_are_typed_and_multi_attribute(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A native-key index: every key attribute in KeySchema order (all HASH, then all RANGE),
    each typed from its fields in AttributeDefinitions; CloudFormation carries the same."""
    from tests.native_models import tenants

    status, out, _ = cli(capsys, "schema", "tests.native_models:Tenants")
    assert status == 0
    document = json.loads(out)
    assert document == tenants.create_table_params()
    by_tenant = next(g for g in document["GlobalSecondaryIndexes"] if g["IndexName"] == "ByTenant")
    assert by_tenant["KeySchema"] == [
        {"AttributeName": "tenant_id", "KeyType": "HASH"},
        {"AttributeName": "region", "KeyType": "HASH"},
        {"AttributeName": "status", "KeyType": "RANGE"},
        {"AttributeName": "created_at", "KeyType": "RANGE"},
    ]
    types = {a["AttributeName"]: a["AttributeType"] for a in document["AttributeDefinitions"]}
    assert types == {
        "PK": "S",
        "SK": "S",
        "tenant_id": "S",
        "region": "S",
        "status": "S",
        "created_at": "S",
        "shard": "N",
        "total": "N",
        "tournament_id": "S",
        "round": "N",
    }
    status, out, _ = cli(
        capsys, "schema", "tests.native_models:tenants", "--format", "cloudformation"
    )
    assert status == 0
    resource = json.loads(out)
    assert resource == tenants.cloudformation()
    properties = resource["Properties"]
    assert properties["GlobalSecondaryIndexes"] == document["GlobalSecondaryIndexes"]
    # CloudFormation wants exactly the key attributes defined, none more
    keyed = {
        k["AttributeName"]
        for schema in [properties["KeySchema"]]
        + [g["KeySchema"] for g in properties["GlobalSecondaryIndexes"]]
        for k in schema
    }
    assert {a["AttributeName"] for a in properties["AttributeDefinitions"]} == keyed


def test_schema_of_a_native_table_without_its_entities(tmp_path: Path) -> None:
    """A native key attribute takes its type from the entities: a module that declares the
    table alone cannot say it, and the error says so in one line."""
    (tmp_path / "only_tables.py").write_text(
        textwrap.dedent(
            """
            from singletable import GSI, Table

            games = Table("Games", indexes=[GSI("OpenGames", pk=("map",), sk=("opened",))])
            """
        )
    )
    result = run_cli("schema", "only_tables:games", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    line = one_line(result.stderr)
    assert "'map'" in line and "OpenGames" in line and "declare the entities" in line


# -- help and usage errors ----------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["explain"], ["lint"], ["schema"], ["layout"], ["demo"]])
def test_help_for_every_command(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    status, out, err = cli(capsys, *command, "--help")
    assert status == 0 and err == ""
    assert out.startswith("usage: singletable")


def test_help_entry_point() -> None:
    result = run_cli("lint", "--help")
    assert result.returncode == 0 and "lint_acknowledge" in result.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "choose a command"),
        (["frobnicate"], "invalid choice"),
        (["lint"], "required"),
        (["explain", "tests.models:Store", "--format", "yaml"], "invalid choice"),
        (["layout", "tests.models:Store"], "--items"),
        (["layout", "tests.models:Store", "--items", "x.json", "--table", "T"], "--table"),
        (["layout", "tests.models:Store", "--seed", "m:seed"], "--seed"),
        (["schema", "tests.models:shop", "--bogus"], "unrecognized"),
    ],
)
def test_usage_errors_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    status, out, err = cli(capsys, *args)
    assert status == 2 and out == ""
    assert needle in one_line(err)


def test_usage_error_entry_point() -> None:
    result = run_cli("lint")
    assert result.returncode == 2 and result.stdout == ""
    assert one_line(result.stderr).startswith("singletable lint: error:")


# -- layout -------------------------------------------------------------------------------------


@pytest.fixture
def items_file(tmp_path: Path) -> Path:
    from tests.unit.tools.test_layout import sample_items

    path = tmp_path / "items.json"
    path.write_text(json.dumps(sample_items()))
    return path


def test_layout_text(capsys: pytest.CaptureFixture[str], items_file: Path) -> None:
    status, out, _ = cli(capsys, "layout", "tests.models:Store", "--items", str(items_file))
    assert status == 0
    assert "── CUSTOMER#c1" in out and "Access patterns" in out


def test_layout_html(capsys: pytest.CaptureFixture[str], items_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "layout.html"
    status, out, err = cli(
        capsys, "layout", "tests.models:Store", "--items", str(items_file), "--html", str(target)
    )
    assert status == 0 and out == ""
    assert f"wrote {target}" in err
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and table_view_rows(page) == 9


def table_view_rows(page: str) -> int:
    """Rows of the page's table view (each index view repeats the rows it holds)."""
    match = re.search(r'<section class="view"[^>]*data-view="table".*?</section>', page, re.S)
    assert match is not None
    return match.group(0).count('<tr class="item"')


def test_layout_bad_items_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"PK": "CUSTOMER#1"}]))
    status, _, err = cli(capsys, "layout", "tests.models:Store", "--items", str(bad))
    assert status == 2 and "wire format" in one_line(err)


EXAMPLE_SEEDS = [
    ("examples.counters.repository:PageViews", "examples/counters/data.json"),
    ("examples.leaderboard.repository:Leaderboard", "examples/leaderboard/data.json"),
    ("examples.merchant.repository:Merchants", "examples/merchant/data.json"),
    ("examples.orders_workflow.repository:Workflow", "examples/orders_workflow/data.json"),
    ("examples.ecommerce.repository:Shop", "src/singletable/demo_shop/data.json"),
]


@pytest.mark.parametrize(("target", "data"), EXAMPLE_SEEDS, ids=[t for t, _ in EXAMPLE_SEEDS])
def test_layout_takes_an_examples_seed_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str, data: str
) -> None:
    """Each example's data.json goes through its seed(repo) on an embedded table; the page
    has the table's rows and a view per index."""
    from singletable._tools.cli import load_repository
    from singletable._tools.layout import build_layout
    from singletable._tools.layout_seed import items_from_file

    page_path = tmp_path / "layout.html"
    status, _, err = cli(
        capsys, "layout", target, "--items", str(ROOT / data), "--html", str(page_path)
    )
    assert status == 0, err
    page = page_path.read_text()
    repository = load_repository(target)
    items, _ = items_from_file(repository, ROOT / data, module=target.partition(":")[0])
    assert len(items) > 0 and table_view_rows(page) == len(items)
    assert f"wrote {page_path} ({len(items)} rows)" in err
    layout = build_layout(repository, items)
    for view in layout.views:
        assert f'data-view="{view.ident}" data-rows="{len(view.rows)}"' in page


def test_layout_seed_function_named_on_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shop_seed.py").write_text(
        textwrap.dedent(
            """
            import json
            from pathlib import Path

            from tests.models import Product

            DATA = Path(__file__).with_name("products.json")


            def seed(repo):
                repo.batch_put(Product(**p) for p in json.loads(DATA.read_text())["products"])
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps(
            {
                "products": [
                    {
                        "product_id": "p9",
                        "name": "Ink",
                        "category": "office",
                        "price": "2",
                        "stock": 4,
                    }
                ]
            }
        )
    )
    status, out, err = cli(
        capsys, "layout", "tests.models:Store", "--items", str(other), "--seed", "shop_seed:seed"
    )
    assert status == 0, err
    assert "── PRODUCT#p9 (1 item)" in out and "seeded through shop_seed.seed" in out
    # without --seed, tests.models has no seed(repo): one line, status 2
    status, _, err = cli(capsys, "layout", "tests.models:Store", "--items", str(other))
    assert status == 2 and "no seed(repo) function in tests.models" in one_line(err)


def test_layout_help_says_how_items_files_are_told_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = cli(capsys, "layout", "--help")
    assert status == 0
    assert "wire-format items" in out and '"Items" list' in out
    assert "seed data" in out and "seed(repo)" in out and "--seed MODULE:FUNCTION" in out


# -- demo ---------------------------------------------------------------------------------------

DEMO_EXAMPLE = '''
"""A small shop standing in for the packaged demo shop in the demo tests."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from enum import Enum
from typing import Any

from singletable import GSI, Entity, Repository, Table, collection, get, query

shop = Table(
    "DemoShop",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK", projection="KEYS_ONLY"),
    ],
)


class Status(str, Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"


class Customer(Entity, table=shop, type="CUSTOMER"):
    customer_id: str
    name: str
    email: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "#PROFILE"
        GSI1 = ("EMAIL#{email}", "CUSTOMER#{customer_id}")


class Order(Entity, table=shop, type="ORDER"):
    customer_id: str
    order_id: str
    created_at: datetime
    status: Status
    total: Decimal

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"
        GSI2 = ("ORDERID#{order_id}", "ORDER")


class Shop(Repository, table=shop):
    customer = get(Customer)
    customer_by_email = query(Customer, index="GSI1", one=True)
    customer_orders = query(Order, order="desc")
    order_by_id = query(Order, index="GSI2", hydrate=True)
    customer_home = collection(Customer, Order)


def seed(repo: Shop) -> None:
    repo.put(Customer(customer_id="c1", name="Ann", email="ann@example.com"))
    for n in range(1, 4):
        repo.put(
            Order(
                customer_id="c1",
                order_id=f"o{n}",
                created_at=datetime(2026, 6, n, 10, tzinfo=timezone.utc),
                status=Status.PENDING if n == 3 else Status.SHIPPED,
                total=Decimal(n * 10),
            )
        )


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("customer", {"customer_id": "c1"}),
    ("customer_by_email", {"email": "ann@example.com"}),
    ("customer_orders", {"customer_id": "c1", "limit": 2}),
    ("order_by_id", {"order_id": "o2"}),
    ("customer_home", {"customer_id": "c1"}),
]
'''

PATTERN_LINE = re.compile(
    r"^\[(?P<mark>ok|!!)\] (?P<name>\w+) +(?P<operation>[A-Za-z+]+(?: x\d+)?) +"
    r"(?P<count>\d+) requests?"
)


def demo_lines(stdout: str) -> dict[str, re.Match[str]]:
    lines = {}
    for line in stdout.splitlines():
        match = PATTERN_LINE.match(line)
        if match:
            lines[match["name"]] = match
    return lines


def check_demo_output(stdout: str, calls: list[str], explain: dict[str, str]) -> None:
    lines = demo_lines(stdout)
    assert sorted(lines) == sorted(calls), stdout
    for name, match in lines.items():
        assert match["mark"] == "ok", match.string
        expected = explain[name]
        if "+" in expected:  # hydrate: Query, plus one BatchGetItem when something matched
            assert match["operation"] in (expected, expected.split("+")[0])
            assert int(match["count"]) == len(match["operation"].split("+"))
        else:  # one request, or "Query x8": a scatter over 8 shards
            assert match["operation"] == expected
            assert int(match["count"]) == len(expected_operations(expected)), match.string
    assert "| Pattern | Operation |" in stdout  # the explain table
    assert "0 scans" in stdout


def test_demo_reads_explain_operations_as_requests() -> None:
    assert expected_operations("GetItem") == ["GetItem"]
    assert expected_operations("Query+BatchGetItem") == ["Query", "BatchGetItem"]
    assert expected_operations("Query x8") == ["Query"] * 8
    assert operations_text(["Query"] * 8) == "Query x8"
    assert operations_text(["Query", "BatchGetItem"]) == "Query+BatchGetItem"
    assert operations_text([]) == ""


@pytest.fixture
def demo_dir(tmp_path: Path) -> Path:
    (tmp_path / "demo_shop.py").write_text(DEMO_EXAMPLE)
    return tmp_path


def test_demo_end_to_end(demo_dir: Path) -> None:
    result = run_cli("demo", "--example", "demo_shop", cwd=demo_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    explain = {
        "customer": "GetItem",
        "customer_by_email": "Query",
        "customer_orders": "Query",
        "order_by_id": "Query+BatchGetItem",
        "customer_home": "Query",
    }
    check_demo_output(result.stdout, list(explain), explain)
    lines = demo_lines(result.stdout)
    assert lines["order_by_id"]["operation"] == "Query+BatchGetItem"
    assert "RCU" in lines["customer"].string  # moto reports consumed capacity
    assert "Page(2 items, more)" in lines["customer_orders"].string
    assert "## Lint" in result.stdout and "no findings" in result.stdout
    assert "starting the embedded DynamoDB" in result.stdout


def test_demo_of_the_packaged_shop_from_any_folder(tmp_path: Path) -> None:
    """The README's command: `singletable demo`, run from a folder that holds nothing (the shop
    ships with the package; its speed is measured in bench/, not asserted here)."""
    from singletable.demo_shop import repository as module

    explain = {row.pattern: row.operation for row in module.Shop.explain()}
    result = run_cli("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    check_demo_output(result.stdout, [name for name, _ in module.EXAMPLE_CALLS], explain)
    assert "singletable demo: singletable.demo_shop.repository:Shop" in result.stdout
    # the shop's eight deliberate findings are one line, not eight blocks (its orders by
    # status are sharded: no hot partition to acknowledge there)
    lint = result.stdout.split("## Lint", 1)[1].split("##", 1)[0].strip().splitlines()
    assert lint == [
        "8 acknowledged findings (lint --verbose shows them)",
        "Shop: 0 errors, 0 warnings, 0 info, 8 acknowledged -> passes",
    ]
    assert demo_lines(result.stdout)["orders_by_status"]["operation"] == "Query x8"
    assert list(tmp_path.iterdir()) == []


def test_the_example_is_the_packaged_shop() -> None:
    from examples.ecommerce import models, repository

    from singletable.demo_shop import models as packaged_models
    from singletable.demo_shop import repository as packaged

    assert repository.Shop is packaged.Shop and repository.seed is packaged.seed
    assert models.Order is packaged_models.Order
    assert packaged.DATA.is_file()


def test_demo_writes_the_layout_view(demo_dir: Path) -> None:
    result = run_cli("demo", "--example", "demo_shop", "--layout", "shop.html", cwd=demo_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "wrote shop.html (4 items)" in result.stdout
    page = (demo_dir / "shop.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and table_view_rows(page) == 4
    assert 'data-pattern="customer_orders"' in page
    assert len(demo_lines(result.stdout)) == 5


def test_demo_refuses_a_layout_it_cannot_write_before_it_runs(demo_dir: Path) -> None:
    result = run_cli(
        "demo", "--example", "demo_shop", "--layout", "no_such_dir/shop.html", cwd=demo_dir
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "no_such_dir" in one_line(result.stderr)


def test_demo_without_moto_says_what_to_install(demo_dir: Path) -> None:
    code = (
        "import sys; sys.modules['moto'] = None; from singletable._tools.cli import main; "
        "raise SystemExit(main(['demo', '--example', 'demo_shop']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=demo_dir, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and result.stdout == ""
    line = one_line(result.stderr)
    assert 'pip install "singletable[demo]"' in line


def test_demo_unknown_example(demo_dir: Path) -> None:
    result = run_cli("demo", "--example", "no_such_example_mod", cwd=demo_dir)
    assert result.returncode == 2
    assert "no_such_example_mod" in one_line(result.stderr)
