"""The context pure plans compile against (no client, no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from ._executor import RetryPolicy
from ._paging import CursorCodec
from .errors import InvalidRequestError


class PlanContext:
    """What a repository's plans (reads and writes) need from it, and nothing else: the
    physical table name, the default page size, the capacity to ask for, the cursor codec, the
    clock and the retry policy. Built once per repository; ``layout`` and tests build their own.

    ``capacity`` is the ``ReturnConsumedCapacity`` value to ask for (``None``: don't);
    ``clock`` returns aware datetimes (TTL checks compare against it).
    """

    __slots__ = ("capacity", "clock", "cursors", "default_limit", "retry", "table_name")

    def __init__(
        self,
        table_name: str,
        *,
        default_limit: int = 100,
        capacity: str | None = None,
        cursors: CursorCodec | None = None,
        clock: Callable[[], datetime] | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if type(default_limit) is not int or default_limit < 1:
            raise InvalidRequestError("default_limit must be a positive int")
        self.table_name = table_name
        self.default_limit = default_limit
        self.capacity = capacity
        self.cursors = cursors if cursors is not None else CursorCodec(None)
        self.clock = clock
        self.retry = retry if retry is not None else RetryPolicy()

    def now(self) -> datetime:
        """The clock's time (aware); refuses a clock that returns naive datetimes."""
        if self.clock is None:
            return datetime.now(timezone.utc)
        value = self.clock()
        if value.tzinfo is None:
            raise InvalidRequestError("the repository clock must return aware datetimes")
        return value

    def now_epoch(self) -> int:
        return int(self.now().timestamp())
