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


#: The operation behind each follow-up request of ``Table.create``, as a backend feature.
FOLLOW_UP_FEATURES = {
    "UpdateTimeToLive": "ttl_api",
    "UpdateContinuousBackups": "continuous_backups",
}

#: Seconds between DescribeTable polls while a table is CREATING (dynalite reports CREATING
#: for a moment even with --createTableMs 0; moto creates tables ACTIVE).
POLL_DELAY = 0.02


def create_table(backend: Backend, client: DynamoDBClient, table: Table, name: str) -> None:
    """Create ``table`` as ``name`` on ``backend`` with the follow-up requests (TTL,
    point-in-time recovery) the backend serves (dynalite has neither; singletable decides
    expiry client-side anyway)."""
    follow_ups = table.follow_up_requests(name)
    if all(FOLLOW_UP_FEATURES[op] in backend.features for op, _ in follow_ups):
        table.create(client, table_name=name, delay=POLL_DELAY)
    else:
        client.create_table(**table.create_table_params(name))
        wait_until_active(client, name, delay=POLL_DELAY)
