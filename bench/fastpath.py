"""Micro-benchmark: botocore's response parser vs singletable.aws.fastpath on a recorded body.

Parses the recorded 100-item Query response (``tests/fastpath_corpus``) the way
``Endpoint._do_get_response`` does, with and without the fast path's hooks, in interleaved
and shuffled repetitions, and prints medians in µs per item and the per-repetition ratio.
``json.loads`` and ``pydantic_core.from_json`` alone are shown for reference (the floor).

    python bench/fastpath.py [--source moto-inproc|moto-server|dynalite] [--reps 31]

Not a test: numbers depend on the machine; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import botocore
import pydantic_core
from botocore.awsrequest import HeadersDict
from botocore.parsers import create_parser

from singletable.aws import fastpath

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fastpath_corpus"
DESCRIPTION = "100 orders, one page (benchmark body)"


def load_entry(source: str) -> dict[str, Any]:
    entries = json.loads((CORPUS / f"{source}.json").read_text(encoding="utf-8"))
    entry: dict[str, Any] = next(e for e in entries if e["description"] == DESCRIPTION)
    return entry


def load_body(entry: dict[str, Any]) -> bytes:
    if "body" in entry:
        return str(entry["body"]).encode("utf-8")
    return gzip.decompress(base64.b64decode(entry["body_gzip_base64"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--source", default="moto-inproc")
    ap.add_argument("--reps", type=int, default=31, help="interleaved repetitions")
    ap.add_argument("--inner", type=int, default=20, help="parses per repetition and contender")
    args = ap.parse_args()

    entry = load_entry(args.source)
    body = load_body(entry)
    headers = entry["headers"]
    client = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    fastpath.install(client)
    model = client.meta.service_model.operation_model("Query")
    shape = model.output_shape
    assert shape is not None
    events = client.meta.events
    n_items = len(json.loads(body)["Items"])

    def response_dict() -> dict[str, Any]:
        return {
            "status_code": entry["status_code"],
            "headers": HeadersDict(headers),
            "body": body,
            "context": {"operation_name": "Query"},
        }

    def botocore_parse() -> Any:
        # botocore creates a parser per response too (Endpoint._do_get_response).
        return create_parser("json").parse(response_dict(), shape)

    def fast_parse() -> Any:
        rd = response_dict()
        customized: dict[str, Any] = {}
        events.emit(
            "before-parse.dynamodb.Query",
            operation_model=model,
            response_dict=rd,
            customized_response_dict=customized,
        )
        parsed = create_parser("json").parse(rd, shape)
        parsed.update(customized)
        events.emit(
            "after-call.dynamodb.Query", http_response=None, parsed=parsed, model=model, context={}
        )
        return parsed

    expected, actual = botocore_parse(), fast_parse()
    if expected != actual or list(expected) != list(actual):
        print("fast path result differs from botocore's", file=sys.stderr)
        return 1

    contenders: dict[str, Callable[[], Any]] = {
        "botocore JSONParser": botocore_parse,
        "singletable.aws.fastpath": fast_parse,
        "json.loads only": lambda: json.loads(body.decode("utf-8")),
        "pydantic_core.from_json only": lambda: pydantic_core.from_json(body),
    }
    rng = random.Random(20261125)
    per_item: dict[str, list[float]] = {name: [] for name in contenders}
    for rep in range(args.reps + 2):  # 2 warm-up repetitions
        order = list(contenders)
        rng.shuffle(order)
        for name in order:
            fn = contenders[name]
            start = time.perf_counter()
            for _ in range(args.inner):
                fn()
            elapsed = time.perf_counter() - start
            if rep >= 2:
                per_item[name].append(elapsed / args.inner / n_items * 1e6)

    ratios = [
        b / f for b, f in zip(per_item["botocore JSONParser"], per_item["singletable.aws.fastpath"])
    ]
    print(
        f"python {platform.python_version()}, botocore {botocore.__version__}, "
        f"pydantic-core {pydantic_core.__version__}; {args.source} Query body: {n_items} items, "
        f"{len(body) / n_items:.0f} B/item; {args.reps} interleaved reps x {args.inner} parses"
    )
    print(f"{'contender':<30} {'median µs/item':>15} {'IQR µs/item':>17} {'min µs/item':>12}")
    for name, values in per_item.items():
        q = statistics.quantiles(values, n=4)
        iqr = f"{q[0]:.2f}-{q[2]:.2f}"
        print(f"{name:<30} {statistics.median(values):>15.2f} {iqr:>17} {min(values):>12.2f}")
    print(f"botocore / fastpath: median ratio {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
