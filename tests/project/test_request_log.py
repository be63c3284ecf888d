"""ci/request_log.py: the request recorder records what a test sends and its comparer finds
the tests whose requests differ (values that change run to run masked, nothing else)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("request_log", ROOT / "ci" / "request_log.py")
assert _spec is not None and _spec.loader is not None
request_log = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(request_log)

TEST = """
import boto3
from moto import mock_aws

def test_one_put():
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t", BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        )
        client.put_item(TableName="t", Item={"PK": {"S": "VALUE"}})
"""


def record(tmp_path: Path, name: str, value: str) -> Path:
    folder = tmp_path / name
    (tmp_path / "test_sample.py").write_text(TEST.replace("VALUE", value))
    env = {
        **os.environ,
        "REQUEST_LOG": str(folder),
        "PYTHONPATH": str(ROOT / "ci"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the recorder alone: a quicker run
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "request_log", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


def test_a_run_records_each_test_s_requests_and_the_same_run_compares_equal(
    tmp_path: Path,
) -> None:
    first, second = record(tmp_path, "a", "k1"), record(tmp_path, "b", "k1")
    lines = [json.loads(x) for f in first.glob("*.jsonl") for x in f.read_text().splitlines()]
    assert [line["operation"] for line in lines] == ["CreateTable", "PutItem"]
    assert {line["test"] for line in lines} == {"test_sample.py::test_one_put"}
    assert request_log.compare(request_log.load(str(first)), request_log.load(str(second))) == []


def test_a_changed_body_is_reported(tmp_path: Path) -> None:
    old, new = record(tmp_path, "a", "k1"), record(tmp_path, "b", "k2")
    found = request_log.compare(request_log.load(str(old)), request_log.load(str(new)))
    assert found == ["test_sample.py::test_one_put"]


def test_run_to_run_values_are_masked(tmp_path: Path) -> None:
    for name, token in (("a", "one"), ("b", "two")):
        (tmp_path / name).mkdir()
        line = {
            "test": "tests/backend/test_x.py::test_y",
            "operation": "TransactWriteItems",
            "body": json.dumps({"ClientRequestToken": token, "TableName": "t-0123abcd"}),
        }
        (tmp_path / name / "main.jsonl").write_text(json.dumps(line) + "\n")
    old, new = request_log.load(str(tmp_path / "a")), request_log.load(str(tmp_path / "b"))
    assert request_log.compare(old, new) == []
    assert list(old) == ["test_x.py::test_y"]  # paired by file name: a moved file still pairs
