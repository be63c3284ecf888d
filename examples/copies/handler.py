"""The stream handler: a Lambda function on the table's stream that propagates renames.

Deploy ``lambda_handler`` with a DynamoDB event source on the table's stream (starting position
TRIM_HORIZON, ``FunctionResponseTypes: ["ReportBatchItemFailures"]``) and the environment
variable ``TABLE_NAME``. ``make_handler(repo)`` builds the same function on a repository of
your choosing (tests, local runs).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from singletable.streams import StreamRouter

from .models import Customer
from .repository import Shop

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def make_handler(repo: Shop) -> Handler:
    """A Lambda handler whose router sends every customer change to the propagation."""
    router = StreamRouter(Shop)
    router.on(Customer, "MODIFY")(repo.customer_name_sync.on_event)

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return router.handle(event)  # {"batchItemFailures": [...]}

    return handler


_handler: Handler | None = None


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The function Lambda calls. The repository (and its client) is built on the first
    invocation and reused while the execution environment lives."""
    global _handler
    if _handler is None:
        _handler = make_handler(Shop(table_name=os.environ["TABLE_NAME"]))
    return _handler(event, context)
