"""DynamoDB's idempotent ``TransactWriteItems``, which moto leaves out.

DynamoDB answers a ``TransactWriteItems`` that repeats the ``ClientRequestToken`` and the
request of one it already applied (within ten minutes) with success and no change, so a client
that retries after losing the response to a committed transaction (a read timeout, a dropped
connection, a 5xx after the commit) does not see its own writes fail their conditions. moto
ignores the token: the retry runs again and meets ``ConditionalCheckFailed`` on the items the
first attempt wrote. On a loaded CI machine that turned a transaction test on moto's server
red now and then, where DynamoDB would have answered it.

:func:`honour_client_request_tokens` makes moto's handler (in process and on the threaded
server, which share it) answer such a repeat as DynamoDB does. The tokens live on the moto
backend object, so moto's reset (every test) forgets them. A repeated token with another
request is left to moto (DynamoDB would raise ``IdempotentParameterMismatchException``); the
ten-minute window is not modelled (a test is shorter).
"""

from __future__ import annotations

import json
import threading
from typing import Any

__all__ = ["honour_client_request_tokens"]

_lock = threading.Lock()
_MARK = "_moto_fixtures_honours_tokens"
_TOKENS = "_moto_fixtures_client_request_tokens"


def honour_client_request_tokens() -> None:
    """Patch moto's DynamoDB handler once per process (idempotent)."""
    from moto.dynamodb.responses import DynamoHandler

    original = DynamoHandler.transact_write_items
    if getattr(original, _MARK, False):
        return

    def transact_write_items(self: Any) -> Any:
        token = self.body.get("ClientRequestToken")
        if token is None:
            return original(self)
        request = json.dumps(self.body["TransactItems"], sort_keys=True)
        backend = self.dynamodb_backend
        with _lock:
            applied: dict[str, tuple[str, Any]] = backend.__dict__.setdefault(_TOKENS, {})
            earlier = applied.get(token)
        if earlier is not None and earlier[0] == request:
            return earlier[1]  # DynamoDB: success, nothing written again
        result = original(self)
        with _lock:
            applied[token] = (request, result)
        return result

    setattr(transact_write_items, _MARK, True)
    DynamoHandler.transact_write_items = transact_write_items  # type: ignore[method-assign]
