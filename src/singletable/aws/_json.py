"""A response body to Python values: what ``json.loads(body.decode("utf-8"))`` returns, for
less client CPU.

pydantic-core, which pydantic brings, carries jiter, a JSON parser in Rust
(``pydantic_core.from_json``). Where both accept a document, jiter and the standard library
return equal values of equal types, keys in the same order (the last of a repeated key
wins in both), ``NaN`` and ``Infinity`` read alike, numbers too big for a float read as
infinity, integers of any length up to Python's digit limit (``tests/unit/aws/test_json.py``
holds that as a property over arbitrary bytes and JSON-like text). jiter refuses a few
documents the standard library reads: an escaped lone surrogate (``"\\ud800"``) and
nesting deeper than its limit. Those are read by the standard library, so every result and
every failure here is the standard library's. On the benchmark machine a 70 KB Query page
of 100 items parses in ~0.85x the time of ``json.loads`` when the same body is parsed in a
loop (``bench/fastpath.py``), and a whole direct-transport Query costs 0.5-1.0 ms less CPU
(docs/performance.md): jiter reads the bytes without a decoded copy and reuses the strings it
has seen (attribute names, type tags).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json


def read_json(body: bytes) -> Any:
    """``json.loads(body.decode("utf-8"))``: its value, or its exception."""
    try:
        return from_json(body)
    except ValueError:  # jiter refused it: the standard library decides
        return json.loads(body.decode("utf-8"))
