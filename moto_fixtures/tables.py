"""Tables and time for backend tests: create a singletable ``Table`` on any backend, and a
settable clock for ``Repository(clock=...)``."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from singletable._table import wait_until_active

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from singletable import Table

    from .backends import Backend

#: The instant a test ``Clock`` starts at.
NOW = datetime(2026, 6, 15, 12, 0, tzinfo=timezone.utc)


class Clock:
    """A settable clock for ``Repository(clock=...)``: TTL expiry and timestamps follow it."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def create_table(backend: Backend, client: DynamoDBClient, table: Table, name: str) -> None:
    """Create ``table`` as ``name`` on ``backend``; TTL is enabled where the backend can
    (dynalite has no UpdateTimeToLive; singletable decides expiry client-side anyway)."""
    if "ttl_api" in backend.features:
        table.create(client, table_name=name)
    else:
        client.create_table(**table.create_table_params(name))
        wait_until_active(client, name)
