"""The command line against a DynamoDB endpoint: the demo creates a uniquely named table there
and deletes it; ``layout --endpoint`` scans a live table (the command line's other tests are in
tests/unit/tools/test_cli.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.models import Product, Store, shop
from tests.unit.tools.test_cli import cli, demo_dir, demo_lines, run_cli

__all__ = ["demo_dir"]  # the fixture, imported so pytest finds it here


@pytest.mark.backend("moto_server")
def test_demo_against_an_endpoint(backend: Any, client: Any, demo_dir: Path) -> None:
    """With an endpoint, the demo creates a uniquely named table there and deletes it."""
    before = set(client.list_tables()["TableNames"])
    result = run_cli(
        "demo",
        "--example",
        "demo_shop",
        cwd=demo_dir,
        env={"AWS_ENDPOINT_URL_DYNAMODB": backend.endpoint_url},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    created = re.search(r"creating table (DemoShop-demo-[0-9a-f]{8}) at", result.stdout)
    assert created, result.stdout
    assert f"deleted table {created[1]}" in result.stdout
    assert set(client.list_tables()["TableNames"]) == before
    assert "embedded" not in result.stdout
    assert len(demo_lines(result.stdout)) == 5


@pytest.mark.backend("moto_server")
def test_layout_scans_a_live_table(
    capsys: pytest.CaptureFixture[str], backend: Any, client: Any
) -> None:
    name = backend.table_name("layout")
    shop.create(client, table_name=name)
    repo = Store(client=client, table_name=name)
    repo.put(Product(product_id="p1", name="Pen", category="office", price=1, stock=3))
    status, out, err = cli(
        capsys,
        "layout",
        "tests.models:Store",
        "--endpoint",
        backend.endpoint_url,
        "--table",
        name,
    )
    assert status == 0, err
    assert "── PRODUCT#p1 (1 item)" in out
    assert "product(product_id='p1') -> rows 1" in out
