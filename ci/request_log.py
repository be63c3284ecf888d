"""Record every request body the test suite sends, and compare two recordings.

A refactoring that claims "behaviour unchanged" can show it: run the suite on the old and on
the new code with this plugin, then compare what each test sent, byte for byte::

    REQUEST_LOG=/tmp/old PYTHONPATH=ci python -m pytest -p request_log --hypothesis-seed=0
    REQUEST_LOG=/tmp/new PYTHONPATH=ci python -m pytest -p request_log --hypothesis-seed=0
    python ci/request_log.py /tmp/old /tmp/new

The plugin wraps botocore's and aiobotocore's ``Endpoint.make_request``, where the serialised
body exists, and writes one JSON line per request (test id, operation, body) to
``$REQUEST_LOG/<xdist worker>.jsonl``; only requests sent during a test's call phase count, so
fixtures' table set-up stays out. Tests are matched by file name and test id, so a test file
that moved folders still pairs with itself. Values that change from run to run (tokens, UUIDs,
random table suffixes, clock readings) are masked before comparing; everything else must match
exactly.
"""

from __future__ import annotations

import collections
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest

_MASKS = [
    (re.compile(r'"ClientRequestToken": ?"[^"]*"'), '"ClientRequestToken":"<token>"'),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])"), "<hex32>"),
    (re.compile(r'-[0-9a-f]{8}(?=[",])'), "-<suffix>"),
    (re.compile(r"\b1[789]\d{8}(\.\d+)?\b"), "<epoch>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?"), "<iso>"),
]


class _Recorder:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.test: str | None = None

    def write(self, operation_model: Any, request_dict: dict[str, Any]) -> None:
        if self.test is None:
            return
        body = request_dict.get("body", b"")
        if isinstance(body, bytes | bytearray):
            body = body.decode("utf-8", "replace")
        line = {"test": self.test, "operation": operation_model.name, "body": str(body)}
        self.out.write(json.dumps(line) + "\n")


_recorder: _Recorder | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _recorder
    folder = os.environ.get("REQUEST_LOG")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    # open for the whole session: the file closes when the worker exits
    log = open(Path(folder) / f"{worker}.jsonl", "a", buffering=1)  # noqa: SIM115
    recorder = _recorder = _Recorder(log)

    import botocore.endpoint

    make_request = botocore.endpoint.Endpoint.make_request

    def recorded(self: Any, operation_model: Any, request_dict: dict[str, Any]) -> Any:
        recorder.write(operation_model, request_dict)
        return make_request(self, operation_model, request_dict)

    botocore.endpoint.Endpoint.make_request = recorded  # type: ignore[method-assign]
    try:
        import aiobotocore.endpoint
    except ImportError:
        return
    make_async_request = aiobotocore.endpoint.AioEndpoint.make_request

    async def recorded_async(self: Any, operation_model: Any, request_dict: Any) -> Any:
        recorder.write(operation_model, request_dict)
        return await make_async_request(self, operation_model, request_dict)

    aiobotocore.endpoint.AioEndpoint.make_request = recorded_async  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)  # pytest 8.0, the lowest supported, has no wrapper=True
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if _recorder is not None:
        _recorder.test = item.nodeid
    yield
    if _recorder is not None:
        _recorder.test = None


Requests = dict[str, collections.Counter[tuple[str, str]]]


def load(folder: str) -> Requests:
    """Per test (file name and test id), the multiset of (operation, masked body)."""
    sent: Requests = collections.defaultdict(collections.Counter)
    for path in sorted(Path(folder).glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            file, _, test = record["test"].partition("::")
            body = record["body"]
            for pattern, mask in _MASKS:
                body = pattern.sub(mask, body)
            sent[f"{file.rsplit('/', 1)[-1]}::{test}"][(record["operation"], body)] += 1
    return sent


def compare(old: Requests, new: Requests) -> list[str]:
    """The tests of both recordings whose requests differ; prints the counts."""
    both = sorted(set(old) & set(new))
    same = [t for t in both if old[t] == new[t]]
    different = [t for t in both if old[t] != new[t]]
    print(f"tests that sent requests: old {len(old)}, new {len(new)}, in both {len(both)}")
    print(f"identical: {len(same)} tests, {sum(sum(old[t].values()) for t in same)} requests")
    print(f"different: {len(different)} tests")
    for test in different:
        print(f"  {test}")
        for (operation, body), _ in (old[test] - new[test]).most_common(2):
            print(f"    - {operation} {body[:300]}")
        for (operation, body), _ in (new[test] - old[test]).most_common(2):
            print(f"    + {operation} {body[:300]}")
    return different


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python ci/request_log.py OLD_FOLDER NEW_FOLDER")
    raise SystemExit(1 if compare(load(sys.argv[1]), load(sys.argv[2])) else 0)
