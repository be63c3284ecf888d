"""Record the differential corpus for ``singletable.fastpath`` (``tests/backend/test_fastpath.py``).

Runs the same DynamoDB data-plane calls against moto in-process, moto server and (when
node and dynalite are available) dynalite, and saves every raw HTTP response (status,
headers, body bytes as botocore received them, captured on ``before-parse``) to
``<source>.json`` beside this script. ``handcrafted.json`` holds bodies no local backend
produces (AWS-style ``UnprocessedItems``/``UnprocessedKeys``, ``ItemCollectionMetrics``,
``GlobalSecondaryIndexes`` capacity, odd and malformed bodies); every entry there says so.

Usage (from the repository root)::

    python tests/fastpath_corpus/record.py                # every source it can run
    python tests/fastpath_corpus/record.py --only dynalite
    DYNALITE_CLI=/path/to/dynalite/cli.js python tests/fastpath_corpus/record.py

dynalite: the repository pins it (``npm ci --prefix moto_fixtures``); the default
``DYNALITE_CLI`` is ``moto_fixtures/node_modules/dynalite/cli.js``, else
``/tmp/dyn/node_modules/dynalite/cli.js`` (``npm install --prefix /tmp/dyn dynalite@4.0.0``).
Bodies above 64 KiB are stored gzip+base64.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

HERE = Path(__file__).resolve().parent
MAIN = "fp-main"
BIN = "fp-bin"
BIG_BODY = 64 * 1024
N38 = "12345678901234567890123456789012345678"

Entry = dict[str, Any]


# ----------------------------------------------------------------------------- helpers


def body_fields(body: bytes) -> dict[str, str]:
    """How a body is stored: UTF-8 text, or gzip+base64 when large or not UTF-8."""
    if len(body) <= BIG_BODY:
        try:
            return {"body": body.decode("utf-8")}
        except UnicodeDecodeError:
            pass
    return {"body_gzip_base64": base64.b64encode(gzip.compress(body, mtime=0)).decode()}


def load_body(entry: Entry) -> bytes:
    """The exact body bytes of a corpus entry (shared with the tests and the benchmark)."""
    if "body" in entry:
        return str(entry["body"]).encode("utf-8")
    return gzip.decompress(base64.b64decode(entry["body_gzip_base64"]))


class Recorder:
    """Captures every raw DynamoDB response a client receives."""

    def __init__(self, client: Any, source: str) -> None:
        self.client = client
        self.source = source
        self.entries: list[Entry] = []
        self._last: list[dict[str, Any]] = []
        client.meta.events.register_first("before-parse.dynamodb", self._capture)

    def _capture(self, response_dict: dict[str, Any], **_: Any) -> None:
        self._last.append(
            {
                "status_code": response_dict["status_code"],
                "headers": {str(k): str(v) for k, v in response_dict["headers"].items()},
                "body": bytes(response_dict["body"]),
            }
        )

    def call(self, operation: str, description: str, **params: Any) -> Any:
        """Call ``operation`` and record its response (errors too)."""
        self._last.clear()
        method = getattr(self.client, _snake(operation))
        try:
            result = method(**params)
        except ClientError as e:
            result = e
        assert len(self._last) == 1, (operation, description, len(self._last))
        raw = self._last[0]
        self.entries.append(
            {
                "source": self.source,
                "operation": operation,
                "description": description,
                "status_code": raw["status_code"],
                "headers": raw["headers"],
                **body_fields(raw["body"]),
            }
        )
        return result

    def quiet(self, operation: str, **params: Any) -> Any:
        """Call without recording (setup)."""
        self._last.clear()
        return getattr(self.client, _snake(operation))(**params)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


# ----------------------------------------------------------------------------- data


def rich_item() -> dict[str, Any]:
    """Every attribute type, binary at every level, sets, unicode (non-BMP), big numbers."""
    return {
        "PK": {"S": "RICH#😀"},
        "SK": {"S": "A#001"},
        "LSK": {"S": "L#ü"},
        "GSI1PK": {"S": "G#1"},
        "GSI1SK": {"S": "A#001"},
        "s": {"S": "plain text"},
        "s_unicode": {"S": 'ü 😀 𝄞 中文 \u2028 "quoted" \\ back'},
        "s_empty": {"S": ""},
        "名前😀": {"S": "unicode attribute name"},
        "n_int": {"N": "42"},
        "n_neg": {"N": "-0.5"},
        "n_38": {"N": N38},
        "n_tiny": {"N": "1E-130"},
        "n_big": {"N": "9.9999999999999999999999999999999999999E+125"},
        "b": {"B": bytes(range(256))},
        "b_empty": {"B": b""},
        "bs": {"BS": [b"\x00", b"\xff\xfe", b"abc"]},
        "ss": {"SS": ["a", "😀", "ü"]},
        "ns": {"NS": ["1", "2.5", "-3", N38]},
        "bool_t": {"BOOL": True},
        "bool_f": {"BOOL": False},
        "null": {"NULL": True},
        "m": {
            "M": {
                "inner_b": {"B": b"\x01\x02\x03"},
                "inner_s": {"S": "😀"},
                "inner_l": {"L": [{"B": b"\x10"}, {"SS": ["x"]}, {"BS": [b"\x20"]}]},
                "inner_m": {"M": {"deep": {"M": {"b": {"B": b"\xde\xad"}}}}},
            }
        },
        "l": {
            "L": [
                {"S": "x"},
                {"N": "1"},
                {"B": b"\xbe\xef"},
                {"BOOL": False},
                {"NULL": True},
                {"M": {"b": {"B": b"\x00"}}},
                {"L": [{"L": [{"B": b"\xff"}]}]},
                {"NS": ["7"]},
            ]
        },
        "m_empty": {"M": {}},
        "l_empty": {"L": []},
    }


def order_item(i: int) -> dict[str, Any]:
    """An order of ~14 attributes, like the benchmark's ``Order``."""
    return {
        "PK": {"S": "ORDERS"},
        "SK": {"S": f"ORDER#{i:05d}"},
        "LSK": {"S": f"L#{i:05d}"},
        "GSI1PK": {"S": f"CUSTOMER#{i % 7}"},
        "GSI1SK": {"S": f"2026-11-25T10:{i % 60:02d}:00Z"},
        "type": {"S": "Order"},
        "order_id": {"S": f"o-{i:08d}-3f2a9c"},
        "customer": {"S": "Zoë Müller 😀"},
        "total": {"N": f"{1000 + i * 7}.15"},
        "qty": {"N": str(i % 9 + 1)},
        "status": {"S": ["open", "paid", "shipped"][i % 3]},
        "tags": {"SS": ["gift", "priority"] if i % 2 else ["standard"]},
        "address": {
            "M": {
                "street": {"S": f"{i} Main St"},
                "city": {"S": "Springfield"},
                "zip": {"S": "12345"},
            }
        },
        "lines": {
            "L": [
                {"M": {"sku": {"S": "SKU-1"}, "n": {"N": "2"}, "price": {"N": "9.99"}}},
                {"M": {"sku": {"S": "SKU-2"}, "n": {"N": "1"}, "price": {"N": "19.5"}}},
            ]
        },
        "checksum": {"B": bytes([i % 256]) * 8},
        "paid": {"BOOL": i % 3 != 0},
    }


def bin_key(i: int) -> dict[str, Any]:
    return {"PK": {"B": b"\x00\xffP" + bytes([i])}, "SK": {"B": b"\x80S" + bytes([i])}}


def bin_item(i: int) -> dict[str, Any]:
    return {**bin_key(i), "payload": {"B": bytes(range(i, i + 16))}, "n": {"N": str(i)}}


def wait_active(client: Any, table: str) -> None:
    for _ in range(200):
        if client.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE":
            return
        time.sleep(0.05)
    raise RuntimeError(f"{table} never became ACTIVE")


def create_tables(client: Any) -> None:
    client.create_table(
        TableName=MAIN,
        KeySchema=[
            {"AttributeName": "PK", "KeyType": "HASH"},
            {"AttributeName": "SK", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": n, "AttributeType": "S"}
            for n in ("PK", "SK", "LSK", "GSI1PK", "GSI1SK")
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GSI1",
                "KeySchema": [
                    {"AttributeName": "GSI1PK", "KeyType": "HASH"},
                    {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "LSI1",
                "KeySchema": [
                    {"AttributeName": "PK", "KeyType": "HASH"},
                    {"AttributeName": "LSK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.create_table(
        TableName=BIN,
        KeySchema=[
            {"AttributeName": "PK", "KeyType": "HASH"},
            {"AttributeName": "SK", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "B"},
            {"AttributeName": "SK", "AttributeType": "B"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    wait_active(client, MAIN)
    wait_active(client, BIN)


# ----------------------------------------------------------------------------- scenario


def scenario(rec: Recorder, *, transactions: bool, big_batch_get: bool) -> None:
    """The recorded calls; the same on every backend except where a backend cannot."""
    c = rec.quiet
    create_tables(rec.client)
    rich = rich_item()
    rich_key = {"PK": rich["PK"], "SK": rich["SK"]}
    for start in range(0, 100, 25):
        c(
            "BatchWriteItem",
            RequestItems={
                MAIN: [{"PutRequest": {"Item": order_item(i)}} for i in range(start, start + 25)]
            },
        )
    for i in range(6):
        c("PutItem", TableName=BIN, Item=bin_item(i))

    # PutItem
    rec.call(
        "PutItem",
        "rich item, ReturnConsumedCapacity TOTAL, ReturnItemCollectionMetrics SIZE (LSI table)",
        TableName=MAIN,
        Item=rich,
        ReturnConsumedCapacity="TOTAL",
        ReturnItemCollectionMetrics="SIZE",
    )
    rec.call(
        "PutItem",
        "overwrite rich item, ReturnValues ALL_OLD, ReturnConsumedCapacity INDEXES",
        TableName=MAIN,
        Item=rich,
        ReturnValues="ALL_OLD",
        ReturnConsumedCapacity="INDEXES",
    )
    rec.call(
        "PutItem",
        "new item, no ReturnValues / capacity",
        TableName=MAIN,
        Item={"PK": {"S": "P#2"}, "SK": {"S": "A#001"}, "v": {"N": "1"}},
    )
    rec.call(
        "PutItem",
        "binary-key item, ReturnValues ALL_OLD (binary old attributes)",
        TableName=BIN,
        Item=bin_item(1),
        ReturnValues="ALL_OLD",
    )

    # GetItem
    rec.call(
        "GetItem",
        "rich item hit, TOTAL",
        TableName=MAIN,
        Key=rich_key,
        ReturnConsumedCapacity="TOTAL",
    )
    rec.call(
        "GetItem",
        "rich item, ConsistentRead, INDEXES",
        TableName=MAIN,
        Key=rich_key,
        ConsistentRead=True,
        ReturnConsumedCapacity="INDEXES",
    )
    rec.call(
        "GetItem",
        "miss: no Item key",
        TableName=MAIN,
        Key={"PK": {"S": "nope"}, "SK": {"S": "nope"}},
    )
    rec.call(
        "GetItem",
        "miss with TOTAL capacity",
        TableName=MAIN,
        Key={"PK": {"S": "nope"}, "SK": {"S": "nope"}},
        ReturnConsumedCapacity="TOTAL",
    )
    rec.call(
        "GetItem",
        "ProjectionExpression into nested map and list",
        TableName=MAIN,
        Key=rich_key,
        ProjectionExpression="#m.inner_m, l[2], b, #n",
        ExpressionAttributeNames={"#m": "m", "#n": "名前😀"},
    )
    rec.call("GetItem", "binary key", TableName=BIN, Key=bin_key(2), ReturnConsumedCapacity="TOTAL")

    # UpdateItem
    rec.call(
        "UpdateItem",
        "ALL_NEW with sets (ADD BS/SS/NS), nested SET, TOTAL, SIZE",
        TableName=MAIN,
        Key=rich_key,
        UpdateExpression="SET #m.added = :b, #c = :n ADD bs :bs, ss :ss, ns :ns",
        ExpressionAttributeNames={"#m": "m", "#c": "counter"},
        ExpressionAttributeValues={
            ":b": {"B": b"\x00added\xff"},
            ":n": {"N": N38},
            ":bs": {"BS": [b"\x01new"]},
            ":ss": {"SS": ["新"]},
            ":ns": {"NS": ["1E-130"]},
        },
        ReturnValues="ALL_NEW",
        ReturnConsumedCapacity="TOTAL",
        ReturnItemCollectionMetrics="SIZE",
    )
    rec.call(
        "UpdateItem",
        "UPDATED_OLD",
        TableName=MAIN,
        Key=rich_key,
        UpdateExpression="SET b = :b, s = :s",
        ExpressionAttributeValues={":b": {"B": b"new"}, ":s": {"S": "new 😀"}},
        ReturnValues="UPDATED_OLD",
    )
    rec.call(
        "UpdateItem",
        "UPDATED_NEW with INDEXES",
        TableName=MAIN,
        Key=rich_key,
        UpdateExpression="SET GSI1SK = :g",
        ExpressionAttributeValues={":g": {"S": "A#001"}},
        ReturnValues="UPDATED_NEW",
        ReturnConsumedCapacity="INDEXES",
    )
    rec.call(
        "UpdateItem",
        "ReturnValues NONE",
        TableName=MAIN,
        Key={"PK": {"S": "P#2"}, "SK": {"S": "A#001"}},
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"N": "2"}},
    )
    rec.call(
        "UpdateItem",
        "ALL_OLD on binary-key table",
        TableName=BIN,
        Key=bin_key(3),
        UpdateExpression="SET payload = :p",
        ExpressionAttributeValues={":p": {"B": b"\xca\xfe"}},
        ReturnValues="ALL_OLD",
    )

    # Query / Scan
    rec.call(
        "Query",
        "Limit 2 -> LastEvaluatedKey, INDEXES",
        TableName=MAIN,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "ORDERS"}},
        Limit=2,
        ReturnConsumedCapacity="INDEXES",
    )
    rec.call(
        "Query",
        "100 orders, one page (benchmark body)",
        TableName=MAIN,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "ORDERS"}},
        Limit=100,
    )
    rec.call(
        "Query",
        "GSI1 Limit 1 -> LastEvaluatedKey with index keys, INDEXES",
        TableName=MAIN,
        IndexName="GSI1",
        KeyConditionExpression="GSI1PK = :p",
        ExpressionAttributeValues={":p": {"S": "CUSTOMER#3"}},
        Limit=1,
        ReturnConsumedCapacity="INDEXES",
    )
    rec.call(
        "Query",
        "LSI1 rich partition, TOTAL",
        TableName=MAIN,
        IndexName="LSI1",
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": rich["PK"]},
        ReturnConsumedCapacity="TOTAL",
    )
    rec.call(
        "Query",
        "no match: empty Items",
        TableName=MAIN,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "EMPTY"}},
        ReturnConsumedCapacity="TOTAL",
    )
    rec.call(
        "Query",
        "Select COUNT",
        TableName=MAIN,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "ORDERS"}},
        Select="COUNT",
    )
    rec.call(
        "Query",
        "binary keys, Limit 1 -> binary LastEvaluatedKey",
        TableName=BIN,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": bin_key(2)["PK"]},
        Limit=1,
    )
    rec.call(
        "Scan",
        "binary table Limit 2 -> binary LastEvaluatedKey, TOTAL",
        TableName=BIN,
        Limit=2,
        ReturnConsumedCapacity="TOTAL",
    )
    rec.call(
        "Scan",
        "filtered scan of rich items, INDEXES",
        TableName=MAIN,
        FilterExpression="attribute_exists(bs)",
        ReturnConsumedCapacity="INDEXES",
    )

    # BatchGetItem
    rec.call(
        "BatchGetItem",
        "two tables, binary keys, a missing key, TOTAL",
        RequestItems={
            MAIN: {"Keys": [rich_key, {"PK": {"S": "nope"}, "SK": {"S": "nope"}}]},
            BIN: {"Keys": [bin_key(0), bin_key(4)], "ConsistentRead": True},
        },
        ReturnConsumedCapacity="TOTAL",
    )
    rec.call(
        "BatchGetItem",
        "all keys missing",
        RequestItems={MAIN: {"Keys": [{"PK": {"S": "nope"}, "SK": {"S": "nope"}}]}},
    )
    if big_batch_get:
        for i in range(6):
            c(
                "PutItem",
                TableName=BIN,
                Item={**bin_key(100 + i), "big": {"S": chr(65 + i) * 380_000}},
            )
        rec.call(
            "BatchGetItem",
            "6 x 380 kB items with binary keys: over dynalite's ~1.4 MB cap -> UnprocessedKeys",
            RequestItems={
                BIN: {"Keys": [bin_key(100 + i) for i in range(6)], "ConsistentRead": True}
            },
            ReturnConsumedCapacity="TOTAL",
        )

    # BatchWriteItem
    rec.call(
        "BatchWriteItem",
        "puts and deletes on both tables, TOTAL, SIZE",
        RequestItems={
            MAIN: [
                {"PutRequest": {"Item": {**rich_item(), "SK": {"S": "A#002"}}}},
                {"DeleteRequest": {"Key": {"PK": {"S": "P#2"}, "SK": {"S": "A#001"}}}},
            ],
            BIN: [{"PutRequest": {"Item": bin_item(9)}}, {"DeleteRequest": {"Key": bin_key(5)}}],
        },
        ReturnConsumedCapacity="TOTAL",
        ReturnItemCollectionMetrics="SIZE",
    )

    # DeleteItem
    rec.call(
        "DeleteItem",
        "ALL_OLD on an existing rich item, TOTAL, SIZE",
        TableName=MAIN,
        Key={"PK": rich["PK"], "SK": {"S": "A#002"}},
        ReturnValues="ALL_OLD",
        ReturnConsumedCapacity="TOTAL",
        ReturnItemCollectionMetrics="SIZE",
    )
    rec.call(
        "DeleteItem",
        "ALL_OLD on a missing item",
        TableName=MAIN,
        Key={"PK": {"S": "nope"}, "SK": {"S": "nope"}},
        ReturnValues="ALL_OLD",
    )
    rec.call("DeleteItem", "binary key, no ReturnValues", TableName=BIN, Key=bin_key(9))

    # Errors (the fast path must leave these to botocore)
    rec.call(
        "PutItem",
        "ERROR ConditionalCheckFailed with ReturnValuesOnConditionCheckFailure ALL_OLD",
        TableName=MAIN,
        Item=rich,
        ConditionExpression="attribute_not_exists(PK)",
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    )
    rec.call(
        "Query",
        "ERROR ValidationException (unknown index)",
        TableName=MAIN,
        IndexName="NOPE",
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "x"}},
    )

    if not transactions:
        rec.call(
            "TransactGetItems",
            "ERROR: not supported here",
            TransactItems=[{"Get": {"TableName": MAIN, "Key": rich_key}}],
        )
        return
    rec.call(
        "TransactGetItems",
        "hit, miss, binary key, TOTAL",
        TransactItems=[
            {"Get": {"TableName": MAIN, "Key": rich_key}},
            {"Get": {"TableName": MAIN, "Key": {"PK": {"S": "nope"}, "SK": {"S": "nope"}}}},
            {"Get": {"TableName": BIN, "Key": bin_key(2)}},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    rec.call(
        "TransactWriteItems",
        "Put, Update, Delete, ConditionCheck, TOTAL, SIZE",
        TransactItems=[
            {
                "Put": {
                    "TableName": MAIN,
                    "Item": {"PK": {"S": "T#1"}, "SK": {"S": "A"}, "b": {"B": b"\x00"}},
                }
            },
            {
                "Update": {
                    "TableName": BIN,
                    "Key": bin_key(2),
                    "UpdateExpression": "SET n = :n",
                    "ExpressionAttributeValues": {":n": {"N": "-1E-130"}},
                }
            },
            {"Delete": {"TableName": BIN, "Key": bin_key(4)}},
            {
                "ConditionCheck": {
                    "TableName": MAIN,
                    "Key": rich_key,
                    "ConditionExpression": "attribute_exists(PK)",
                }
            },
        ],
        ReturnConsumedCapacity="TOTAL",
        ReturnItemCollectionMetrics="SIZE",
    )
    rec.call(
        "TransactWriteItems",
        "ERROR TransactionCanceled, CancellationReasons with binary Item (ALL_OLD)",
        TransactItems=[
            {"Put": {"TableName": MAIN, "Item": {"PK": {"S": "T#2"}, "SK": {"S": "A"}}}},
            {
                "ConditionCheck": {
                    "TableName": BIN,
                    "Key": bin_key(2),
                    "ConditionExpression": "attribute_not_exists(PK)",
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            },
        ],
    )


# ----------------------------------------------------------------------------- backends


def make_client(endpoint_url: str | None = None) -> Any:
    return boto3.client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        endpoint_url=endpoint_url,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def record_moto_inproc() -> list[Entry]:
    from moto import mock_aws

    with mock_aws():
        rec = Recorder(make_client(), "moto-inproc")
        scenario(rec, transactions=True, big_batch_get=False)
    return rec.entries


def record_moto_server() -> list[Entry]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        rec = Recorder(make_client(f"http://{host}:{port}"), "moto-server")
        scenario(rec, transactions=True, big_batch_get=False)
    finally:
        server.stop()
    return rec.entries


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dynalite(cli: str) -> Iterator[str]:
    port = _free_port()
    args = ["node", cli, "--host", "127.0.0.1", "--port", str(port)]
    args += ["--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("dynalite did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def record_dynalite(cli: str) -> list[Entry]:
    with dynalite(cli) as url:
        rec = Recorder(make_client(url), "dynalite")
        scenario(rec, transactions=False, big_batch_get=True)
    return rec.entries


# ----------------------------------------------------------------------------- handcrafted


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def handcrafted() -> list[Entry]:
    """Bodies no local backend returns, written after the API reference's shapes."""
    headers = {"content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "HANDCRAFTED"}
    bkey = {"PK": {"B": _b64(b"\x00\xffP")}, "SK": {"B": _b64(b"\x80S")}}
    item = {
        **bkey,
        "bs": {"BS": [_b64(b"\x01"), _b64(b"")]},
        "m": {"M": {"b": {"B": _b64(b"\xfe")}}},
    }
    capacity = {
        "TableName": MAIN,
        "CapacityUnits": 3,
        "ReadCapacityUnits": 1.5,
        "WriteCapacityUnits": 1,
        "Table": {"CapacityUnits": 1, "ReadCapacityUnits": 0.5, "WriteCapacityUnits": 0},
        "LocalSecondaryIndexes": {"LSI1": {"CapacityUnits": 1.0}},
        "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1, "ReadCapacityUnits": 1}},
    }
    metrics = {
        "ItemCollectionKey": {"PK": {"B": _b64(b"\x00\xffP")}},
        "SizeEstimateRangeGB": [0, 1.0],
    }

    def entry(
        op: str, description: str, body: Any, *, status: int = 200, raw: str | None = None
    ) -> Entry:
        text = raw if raw is not None else json.dumps(body, ensure_ascii=False)
        return {
            "source": "handcrafted",
            "operation": op,
            "description": "HANDCRAFTED: " + description,
            "status_code": status,
            "headers": headers,
            "body": text,
        }

    def nested(depth: int) -> dict[str, Any]:
        value: dict[str, Any] = {"B": _b64(b"bottom")}
        for i in range(depth):
            value = {"M": {"k": value}} if i % 2 else {"L": [value]}
        return value

    return [
        entry(
            "BatchWriteItem",
            "UnprocessedItems (binary keys, put + delete), ItemCollectionMetrics, int/float units",
            {
                "UnprocessedItems": {
                    BIN: [{"PutRequest": {"Item": item}}, {"DeleteRequest": {"Key": bkey}}],
                    MAIN: [{"PutRequest": {"Item": {"PK": {"S": "😀"}, "SK": {"S": "x"}}}}],
                },
                "ItemCollectionMetrics": {BIN: [metrics]},
                "ConsumedCapacity": [capacity, {"TableName": BIN, "CapacityUnits": 2}],
            },
        ),
        entry(
            "BatchGetItem",
            "UnprocessedKeys echoing the full KeysAndAttributes, binary keys",
            {
                "Responses": {BIN: [item], MAIN: []},
                "UnprocessedKeys": {
                    BIN: {
                        "Keys": [bkey, {"PK": {"B": ""}, "SK": {"B": _b64(b"\x01")}}],
                        "ConsistentRead": True,
                        "ProjectionExpression": "#p, bs",
                        "ExpressionAttributeNames": {"#p": "PK"},
                    },
                    MAIN: {
                        "Keys": [{"PK": {"S": "a"}, "SK": {"S": "b"}}],
                        "AttributesToGet": ["PK", "m"],
                    },
                },
                "ConsumedCapacity": [capacity],
            },
        ),
        entry(
            "PutItem",
            "ALL_OLD + ItemCollectionMetrics + INDEXES capacity as AWS documents them",
            {"Attributes": item, "ConsumedCapacity": capacity, "ItemCollectionMetrics": metrics},
        ),
        entry(
            "Query",
            "INDEXES capacity with GlobalSecondaryIndexes, binary LastEvaluatedKey",
            {
                "Items": [item],
                "Count": 1,
                "ScannedCount": 1,
                "LastEvaluatedKey": bkey,
                "ConsumedCapacity": capacity,
            },
        ),
        entry(
            "TransactGetItems",
            "Responses with an empty entry, capacity list",
            {
                "Responses": [{"Item": item}, {}, {"Item": {"S": {"S": "x"}}}],
                "ConsumedCapacity": [capacity],
            },
        ),
        entry(
            "TransactWriteItems",
            "ItemCollectionMetrics per table",
            {"ConsumedCapacity": [capacity], "ItemCollectionMetrics": {BIN: [metrics]}},
        ),
        entry(
            "GetItem",
            "non-BMP unicode and binary as \\u escapes (ensure_ascii)",
            None,
            raw=json.dumps({"Item": {"😀": {"S": "𝄞 ü \u2028"}, "b": {"B": _b64("😀".encode())}}}),
        ),
        entry(
            "GetItem",
            "forward compatibility: unknown top-level member, unknown AttributeValue member, "
            "__type, two members in one AttributeValue, nulls",
            {
                "Item": {
                    "unknown": {"X": "1"},
                    "typed": {"__type": "AttributeValue", "S": "s"},
                    "two": {"S": "s", "N": "1"},
                    "null_member": {"S": None},
                    "null_value": None,
                    "mixed": {"B": None, "BOOL": True},
                    "list_nulls": {"L": [None, {"S": "x"}, {"B": _b64(b"\x00")}]},
                    "bs_null": {"BS": [_b64(b"\x01"), None]},
                    "ss_null": {"SS": ["a", None]},
                    "m_null": {"M": {"k": None}},
                    "n_number": {"N": 5},
                    "null_false": {"NULL": False},
                },
                "FutureMember": {"x": 1},
                "ConsumedCapacity": None,
            },
        ),
        entry(
            "Query", "Items null and Count null", {"Items": None, "Count": None, "ScannedCount": 3}
        ),
        entry(
            "Query", "null entries inside Items", {"Items": [None, {"a": {"S": "b"}}], "Count": 2}
        ),
        entry(
            "GetItem", "nesting 40 levels (under the 64-level cap)", {"Item": {"deep": nested(40)}}
        ),
        entry(
            "GetItem", "DECLINED nesting 70 levels (over the cap)", {"Item": {"deep": nested(70)}}
        ),
        entry("GetItem", "DECLINED empty 200 body", None, raw=""),
        entry("GetItem", "DECLINED non-JSON 200 body", None, raw="<html>oops</html>"),
        entry("GetItem", "DECLINED JSON null body", None, raw="null"),
        entry("GetItem", "DECLINED JSON array body", None, raw="[1, 2]"),
        entry("GetItem", "DECLINED UTF-8 BOM", None, raw="\ufeff{}"),
        entry("GetItem", "DECLINED L is an object", {"Item": {"l": {"L": {}}}}),
        entry("GetItem", "DECLINED SS is a string", {"Item": {"s": {"SS": "abc"}}}),
        entry("GetItem", "DECLINED B is a number", {"Item": {"b": {"B": 5}}}),
        entry(
            "GetItem", "DECLINED invalid base64 (botocore raises)", {"Item": {"b": {"B": "abc"}}}
        ),
        entry("GetItem", "DECLINED Item is a list", {"Item": [1]}),
        entry(
            "TransactWriteItems",
            "ERROR TransactionCanceledException with CancellationReasons, binary Item",
            {
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "Message": "Transaction cancelled, please refer cancellation reasons for "
                "specific reasons [None, ConditionalCheckFailed]",
                "CancellationReasons": [
                    {"Code": "None"},
                    {
                        "Code": "ConditionalCheckFailed",
                        "Message": "The conditional request failed",
                        "Item": item,
                    },
                ],
            },
            status=400,
        ),
        entry(
            "GetItem",
            "ERROR 500 HTML page",
            None,
            status=500,
            raw="<html><body><b>Http/1.1 Service Unavailable</b></body></html>",
        ),
    ]


# ----------------------------------------------------------------------------- main


def write(source: str, entries: list[Entry]) -> None:
    path = HERE / f"{source}.json"
    path.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{path.relative_to(HERE.parent.parent)}: {len(entries)} responses")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["moto-inproc", "moto-server", "dynalite", "handcrafted"])
    args = parser.parse_args(argv)
    pinned = HERE.parent.parent / "moto_fixtures/node_modules/dynalite/cli.js"
    default = pinned if pinned.is_file() else Path("/tmp/dyn/node_modules/dynalite/cli.js")
    cli = os.environ.get("DYNALITE_CLI", str(default))
    recorders: dict[str, Callable[[], list[Entry]]] = {
        "handcrafted": handcrafted,
        "moto-inproc": record_moto_inproc,
        "moto-server": record_moto_server,
        "dynalite": lambda: record_dynalite(cli),
    }
    for source, record in recorders.items():
        if args.only and source != args.only:
            continue
        if source == "dynalite" and not (shutil.which("node") and Path(cli).is_file()):
            print(f"skipping dynalite: node or {cli} missing", file=sys.stderr)
            continue
        write(source, record())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
