"""The contexts pure plans compile against (no client, no I/O): a repository's
:class:`PlanContext`, and the :class:`WriteContext` snapshot one write compiles against."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from ._executor import RetryPolicy
from ._paging import CursorCodec
from ._verbs.shapes import WriteShapes
from .errors import InvalidRequestError


class PlanContext:
    """What a repository's plans (reads and writes) need from it, and nothing else: the
    physical table name, the default page size, the capacity to ask for, the cursor codec, the
    clock, the retry policy and the writes' compiled shapes. Built once per repository;
    ``layout`` and tests build their own.

    ``capacity`` is the ``ReturnConsumedCapacity`` value to ask for (``None``: don't);
    ``clock`` returns aware datetimes (TTL checks compare against it); ``shapes`` holds the
    writes' compiled expressions (:mod:`singletable._verbs.shapes`; ``None``: every write is
    compiled from scratch).
    """

    __slots__ = ("capacity", "clock", "cursors", "default_limit", "retry", "shapes", "table_name")

    def __init__(
        self,
        table_name: str,
        *,
        default_limit: int = 100,
        capacity: str | None = None,
        cursors: CursorCodec | None = None,
        clock: Callable[[], datetime] | None = None,
        retry: RetryPolicy | None = None,
        shapes: WriteShapes | None = None,
    ) -> None:
        if type(default_limit) is not int or default_limit < 1:
            raise InvalidRequestError("default_limit must be a positive int")
        self.table_name = table_name
        self.default_limit = default_limit
        self.capacity = capacity
        self.cursors = cursors if cursors is not None else CursorCodec(None)
        self.clock = clock
        self.retry = retry if retry is not None else RetryPolicy()
        self.shapes = shapes

    def now(self) -> datetime:
        """The clock's time (aware); refuses a clock that returns naive datetimes."""
        if self.clock is None:
            return datetime.now(timezone.utc)
        value = self.clock()
        if value.tzinfo is None:
            raise InvalidRequestError("the repository clock must return aware datetimes")
        return value

    def now_epoch(self) -> int:
        """The clock's time in whole epoch seconds (what TTL attributes hold)."""
        return int(self.now().timestamp())

    def at(self, now: datetime | None = None) -> WriteContext:
        """A snapshot for one write: this table name at ``now`` (default: the clock's time)."""
        return WriteContext(self.table_name, self.now() if now is None else now, self.shapes)


class WriteContext:
    """What compiling one write needs besides the entity: the table's physical name, one
    fixed time (every timestamp and TTL check of the write agrees on it) and the repository's
    compiled write shapes (``None``: compile from scratch). Same shape as :class:`PlanContext`:
    ``now()`` and ``now_epoch()``."""

    __slots__ = ("_now", "shapes", "table_name")

    table_name: str
    shapes: WriteShapes | None
    _now: datetime

    def __init__(self, table_name: str, now: datetime, shapes: WriteShapes | None = None) -> None:
        set_once = object.__setattr__  # (one per write: skip the snapshot's own check)
        set_once(self, "table_name", table_name)
        set_once(self, "shapes", shapes)
        set_once(self, "_now", now)

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, "_now"):
            raise AttributeError(f"WriteContext is a snapshot; {name} cannot change")
        object.__setattr__(self, name, value)

    def now(self) -> datetime:
        return self._now

    def now_epoch(self) -> int:
        return int(self._now.timestamp())
