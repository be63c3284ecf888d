"""``singletable backfill`` against a live endpoint, and lint's ``former-types`` reminder."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from singletable._tools.cli import main
from singletable._tools.lint import check
from tests.backend.test_writes import table_items
from tests.backfill_models import ItemV1, OrderV1, RepoV1, RepoV2, Status, v2


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as exc:  # argparse: --help, usage errors
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def live(backend: Any, client: Any) -> tuple[str, RepoV1]:
    name = backend.table_name("backfill-cli")
    v2.create(client, table_name=name)
    old = RepoV1(client=client, table_name=name)
    for n in range(5):
        old.create(
            OrderV1(customer_id="c1", order_id=f"o{n}", status=Status.PENDING, total=Decimal(n))
        )
    return name, old


@pytest.mark.backend("moto_server")
def test_backfill_prints_the_report(
    capsys: pytest.CaptureFixture[str], backend: Any, live: tuple[str, RepoV1], tmp_path: Path
) -> None:
    name, old = live
    common = ["tests.backfill_models:RepoV2", "Order", "--endpoint", backend.endpoint_url]
    status, out, err = cli(capsys, "backfill", *common, "--table", name, "--dry-run")
    assert status == 0, err
    assert "would update 5" in out and "dry run" in out
    assert all(item["_type"] == {"S": "Order"} for item in table_items(old).values())
    checkpoint = tmp_path / "order.json"
    status, out, err = cli(
        capsys,
        "backfill",
        *common,
        "--table",
        name,
        "--segments",
        "2",
        "--checkpoint",
        str(checkpoint),
        "--rate",
        "1000",
    )
    assert status == 0, err
    assert "updated     5" in out and "failed      0" in out
    # the progress line, on stderr, with the percent of DescribeTable's (approximate) count
    assert "backfill Order: 100% of ~5 items, scanned 5" in err and "elapsed 0:0" in err
    assert not checkpoint.exists()
    assert all(item["_type"] == {"S": "ORDER"} for item in table_items(old).values())


@pytest.mark.backend("moto_server")
def test_backfill_exits_1_when_an_item_is_not_fixed(
    capsys: pytest.CaptureFixture[str], backend: Any, live: tuple[str, RepoV1]
) -> None:
    name, old = live
    old.create(ItemV1(item_id="i1", kind="tool"))  # its sort key changes: needs --move
    status, out, _ = cli(
        capsys,
        "backfill",
        "tests.backfill_models:RepoV2",
        "ITEM",  # a type tag names the entity too
        "--endpoint",
        backend.endpoint_url,
        "--table",
        name,
        "-q",
    )
    assert status == 1
    assert "failed: PK=ITEMS, SK=ITEM#i1: its primary key would change" in out


def test_backfill_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "backfill", "tests.backfill_models:RepoV2", "Nope")
    assert status == 2
    assert "has no entity 'Nope'" in err and "Order" in err
    status, _, err = cli(
        capsys, "backfill", "tests.backfill_models:RepoV2", "Order", "--segments", "0"
    )
    assert status == 2 and "--segments" in err


def test_backfill_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "backfill", "--help")
    assert status == 0
    assert "singletable backfill myapp.models:Shop Order --segments 4 --checkpoint" in out
    for option in ("--segments", "--dry-run", "--checkpoint", "--rate", "--move"):
        assert option in out


def test_lint_reminds_of_former_types_until_acknowledged() -> None:
    (finding,) = [f for f in check(RepoV2) if f.code == "former-types"]
    assert finding.severity == "info" and finding.subject == "Order"
    assert "'Order'" in finding.message
    assert "singletable backfill tests.backfill_models:RepoV2 Order" in finding.hint
    assert not [f for f in check(RepoV1) if f.code == "former-types"]
    acknowledged = check(RepoV2, acknowledge={"former-types:Order": "backfilled 2026-06-01"})
    (finding,) = [f for f in acknowledged if f.code == "former-types"]
    assert finding.acknowledged == "backfilled 2026-06-01"


@pytest.mark.backend("moto_server")
def test_backfill_with_a_job_then_its_status_then_forget(
    capsys: pytest.CaptureFixture[str], backend: Any, live: tuple[str, RepoV1]
) -> None:
    name, _ = live
    common = ["tests.backfill_models:RepoV2", "Order", "--endpoint", backend.endpoint_url]
    common += ["--table", name, "--job", "order-v2"]
    status, out, err = cli(capsys, "backfill", *common, "--segments", "3", "-q")
    assert status == 0, err
    assert "updated     5" in out and err == ""
    status, out, err = cli(capsys, "backfill", *common, "--status")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "backfill job 'order-v2': 3/3 segments done"
    assert [line.split()[:2] for line in lines[2:]] == [["0", "done"], ["1", "done"], ["2", "done"]]
    assert sum(int(line.split()[3]) for line in lines[2:]) == 5  # the updated column
    status, out, err = cli(capsys, "backfill", *common, "--segments", "2")
    assert status == 1 and "started with other options (segments=3)" in err
    status, out, _ = cli(capsys, "backfill", *common, "--forget")
    assert (status, out) == (0, "backfill job 'order-v2': 4 items deleted\n")
    status, out, _ = cli(capsys, "backfill", *common, "--status")
    assert out == "backfill job 'order-v2': no such job\n"
    status, _, err = cli(capsys, "backfill", *common[:-2], "--status")
    assert status == 2 and "--status and --forget name a job" in err
