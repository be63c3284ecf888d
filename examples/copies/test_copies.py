"""The copies example over every local backend: one request per read pattern, a rename
propagated from the table's stream (read with ``read_stream`` on moto, in process and on its
server) through the Lambda handler, redelivery, an older event, a failing record, and
``lambda_handler`` itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import readme_table, run_example_calls
from singletable import PropagationReport
from singletable.lint import check
from singletable.streams import Modified, StreamRouter, read_stream

from . import handler as handler_module
from .handler import lambda_handler, make_handler
from .models import Customer, copies
from .repository import EXAMPLE_CALLS, Shop, seed

streams = pytest.mark.requires("streams")


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> Shop:
    shop: Shop = make_repo(Shop)
    seed(shop)
    return shop


def stream_records(repo: Shop, backend: Any) -> list[dict[str, Any]]:
    """Every record of the table's stream so far, from TRIM_HORIZON."""
    arn = repo.client.describe_table(TableName=repo.table_name)["Table"]["LatestStreamArn"]
    return list(read_stream(backend.streams_client(), arn))


def order_names(repo: Shop, customer_id: str) -> list[str]:
    return [o.customer_name for o in repo.customer_orders.all(customer_id=customer_id)]


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), Shop)
    assert in_readme == printed


def test_example_calls_cover_every_read_pattern() -> None:
    reads = [row.pattern for row in Shop.explain() if row.operation in ("GetItem", "Query")]
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(reads)
    assert set(Shop.patterns()) - set(reads) == {"customer_name_sync"}


def test_lint_names_the_copies() -> None:
    findings = check(Shop)
    assert [f.code for f in findings] == ["propagation"]
    assert "Order.customer_name copies Customer.name" in findings[0].message


def test_every_read_pattern_is_one_request(repo: Shop, recorder: Any) -> None:
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)
    assert results["customer"][0].name == "Ann Lee"
    orders = results["customer_orders"]
    assert [o.order_id for o in orders] == ["A3", "A2", "A1"]  # newest first
    assert {o.customer_name for o in orders} == {"Ann Lee"}


@streams
def test_a_rename_reaches_every_order_through_the_stream(
    repo: Shop, backend: Any, recorder: Any
) -> None:
    handler = make_handler(repo)
    ann = repo.customer(customer_id="c1")
    assert ann is not None
    repo.update(ann, name="Ann Smith")
    assert order_names(repo, "c1") == ["Ann Lee"] * 3  # not yet: eventually consistent

    records = stream_records(repo, backend)
    recorder.clear()
    assert handler({"Records": records}, None) == {"batchItemFailures": []}
    # The seed's inserts route nowhere (no handler); the one rename is one Query and three
    # UpdateItems.
    assert recorder.operations == ["Query", "UpdateItem", "UpdateItem", "UpdateItem"]
    assert order_names(repo, "c1") == ["Ann Smith"] * 3
    assert order_names(repo, "c2") == ["Bob Roy"]

    # Lambda delivers at least once: the same batch again rewrites nothing.
    recorder.clear()
    assert handler({"Records": records}, None) == {"batchItemFailures": []}
    assert recorder.operations == ["Query"]
    assert order_names(repo, "c1") == ["Ann Smith"] * 3


@streams
def test_an_older_event_after_a_newer_one_changes_nothing(repo: Shop, backend: Any) -> None:
    ann = repo.customer(customer_id="c1")
    assert ann is not None
    smith = repo.update(ann, name="Ann Smith")
    repo.update(smith, name="Ann Jones")
    records = stream_records(repo, backend)
    events = [e for e in StreamRouter(Shop).events(records) if isinstance(e, Modified)]
    assert [(e.old.name, e.new.name) for e in events] == [
        ("Ann Lee", "Ann Smith"),
        ("Ann Smith", "Ann Jones"),
    ]
    older, newer = events
    assert repo.customer_name_sync.on_event(newer) == PropagationReport(3, 0, 3)
    assert order_names(repo, "c1") == ["Ann Lee"] * 3  # the newer event alone matches nothing
    assert repo.customer_name_sync.on_event(older) == PropagationReport(3, 3, 0)
    assert repo.customer_name_sync.on_event(newer) == PropagationReport(3, 3, 0)
    assert repo.customer_name_sync.on_event(older) == PropagationReport(3, 0, 3)  # late, again
    assert order_names(repo, "c1") == ["Ann Jones"] * 3


def test_a_lambda_event_renames_the_orders(repo: Shop) -> None:
    """The handler fed a Lambda event built by hand (what DynamoDB Streams sends)."""
    ann = repo.customer(customer_id="c1")
    assert ann is not None
    smith = repo.update(ann, name="Ann Smith")
    event = {
        "Records": [
            {
                "eventID": "1",
                "eventName": "MODIFY",
                "eventSource": "aws:dynamodb",
                "dynamodb": {
                    "Keys": Customer.key(customer_id="c1"),
                    "OldImage": ann.to_item(),
                    "NewImage": smith.to_item(),
                    "SequenceNumber": "111",
                    "StreamViewType": "NEW_AND_OLD_IMAGES",
                },
            }
        ]
    }
    assert make_handler(repo)(event, None) == {"batchItemFailures": []}
    assert order_names(repo, "c1") == ["Ann Smith"] * 3


def test_a_failing_record_is_reported_with_every_one_after_it(repo: Shop) -> None:
    ann = repo.customer(customer_id="c1")
    bob = repo.customer(customer_id="c2")
    assert ann is not None and bob is not None
    bob_new = repo.update(bob, name="Bob Ray")
    broken = ann.to_item() | {"name": {"N": "1"}}  # an image that no longer decodes

    def change(sequence: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        return {
            "eventID": sequence,
            "eventName": "MODIFY",
            "dynamodb": {
                "Keys": {"PK": new["PK"], "SK": new["SK"]},
                "OldImage": old,
                "NewImage": new,
                "SequenceNumber": sequence,
            },
        }

    event = {
        "Records": [
            change("1", ann.to_item(), broken),
            change("2", bob.to_item(), bob_new.to_item()),
        ]
    }
    response = make_handler(repo)(event, None)
    assert response == {"batchItemFailures": [{"itemIdentifier": "1"}, {"itemIdentifier": "2"}]}
    assert order_names(repo, "c2") == ["Bob Roy"]  # not processed: Lambda retries from "1"


@pytest.mark.backend("inproc")  # the default client: moto's in-process mock answers it
@pytest.mark.twin("sync")  # lambda_handler builds the sync repository
def test_lambda_handler(
    make_repo: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, backend: Any
) -> None:
    repo: Shop = make_repo(Shop)
    seed(repo)
    monkeypatch.setenv("TABLE_NAME", repo.table_name)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setattr(handler_module, "_handler", None)
    bob = repo.customer(customer_id="c2")
    assert bob is not None
    repo.update(bob, name="Bob Ray")
    records = stream_records(repo, backend)
    assert lambda_handler({"Records": records}, None) == {"batchItemFailures": []}
    assert order_names(repo, "c2") == ["Bob Ray"]
    assert isinstance(handler_module._handler, type(lambda_handler))


def test_the_table_declares_its_stream() -> None:
    assert copies.create_table_params()["StreamSpecification"] == {
        "StreamEnabled": True,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
