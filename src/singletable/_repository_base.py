"""What the two repository twins share: the declaration on a table, the pattern registry,
the construction keywords and the contexts their plans compile against.

:class:`~singletable._repository.Repository` (sync) and
:class:`~singletable.aio.AsyncRepository` subclass :class:`RepositoryBase` and add the one
thing that differs: how a flow's requests are sent (``run``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar

from ._context import PlanContext
from ._executor import Hook, RetryPolicy
from ._paging import CursorCodec
from ._patterns.base import DeclaredPattern, ExplainRow, Pattern
from ._table import Table, declared_table
from ._verbs.planner import WritePlanner
from ._verbs.transactions import current_transaction
from .errors import InvalidRequestError, ModelDefinitionError

if TYPE_CHECKING:
    from ._backfill.options import BackfillIO

CAPACITY = {"total": "TOTAL", "indexes": "INDEXES"}


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def install_fast_path(client: Any, fast_path: bool) -> None:
    """Install the response fast path (:func:`singletable.aws.fastpath.install`: handlers on
    ``client.meta.events``, idempotent, version-guarded, off with ``SINGLETABLE_FAST_PATH=0``)
    on a client the user gave a repository, unless ``fast_path`` is False. ``singletable.aws``
    is imported only here, so a repository given a client with ``fast_path=False`` loads none
    of it. A client without botocore's event system (a duck-typed stub) is left alone."""
    if not fast_path or getattr(getattr(client, "meta", None), "events", None) is None:
        return
    from .aws import fastpath

    fastpath.install(client)


class RepositoryBase:
    """The base of both twins: ``class Shop(Repository, table=shop)`` or
    ``class AsyncShop(ShopPatterns, AsyncRepository, table=shop)``.

    Patterns are collected from every class in the MRO (so a plain class holding patterns and
    ``@transaction`` methods can be mixed into both twins) and checked against the table when
    the repository class is created.
    """

    __singletable_table__: ClassVar[Table]
    __singletable_async__: ClassVar[bool] = False
    table: ClassVar[Table]
    """The table this repository class is declared on (also readable on the class)."""
    __patterns__: ClassVar[dict[str, Pattern | DeclaredPattern[Any, Any]]] = {}

    def __init_subclass__(cls, table: Table | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__singletable_twin__" in vars(cls):
            return  # Repository / AsyncRepository themselves
        if table is not None:
            cls.__singletable_table__ = cls.table = declared_table(cls, table)
        twin = next(k for k in cls.__mro__ if "__singletable_twin__" in vars(k))
        if "__singletable_table__" not in dir(cls):
            raise ModelDefinitionError(
                f"{cls.__qualname__} needs a table: class {cls.__qualname__}"
                f"({twin.__name__}, table=my_table)"
            )
        patterns: dict[str, Pattern | DeclaredPattern[Any, Any]] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, (Pattern, DeclaredPattern)):
                    patterns[name] = value
        reserved = set(dir(twin)) | {"table"}
        for name, pattern in patterns.items():
            if name in reserved:
                raise ModelDefinitionError(
                    f"{cls.__qualname__}.{name}: the pattern name shadows "
                    f"{twin.__name__}.{name}; rename it"
                )
            pattern.bind(cls, cls.__singletable_table__)
        cls.__patterns__ = patterns

    def __init__(
        self,
        *,
        table_name: str | None = None,
        cursor_secret: str | bytes | Sequence[str | bytes] | None = None,
        default_limit: int = 100,
        clock: Callable[[], datetime] | None = None,
        retry: RetryPolicy | None = None,
        hooks: Sequence[Hook] = (),
        capacity: str | None = None,
    ) -> None:
        if capacity is not None and capacity not in CAPACITY:
            raise InvalidRequestError(
                f"capacity must be 'total' or 'indexes' (or None), not {capacity!r}"
            )
        asked = CAPACITY[capacity] if capacity else ("TOTAL" if hooks else None)
        self.table_name = table_name or self.table.name
        self.clock = clock or utc_now
        self.retry = retry or RetryPolicy()
        self.read_context = PlanContext(
            self.table_name,
            default_limit=default_limit,
            capacity=asked,
            cursors=CursorCodec(cursor_secret),
            clock=self.clock,
            retry=self.retry,
        )
        self.planner = WritePlanner(self.table, self.read_context)

    @property
    def default_limit(self) -> int:
        return self.read_context.default_limit

    # -- time --

    def now(self) -> datetime:
        """The repository clock's time (aware)."""
        return self.read_context.now()

    def now_epoch(self) -> int:
        return self.read_context.now_epoch()

    def _backfill_io(self) -> BackfillIO:
        """What a backfill reads from outside: the repository clock (lease deadlines), a
        monotonic clock (elapsed time, the rate limit) and stderr (``progress=True``)."""
        from ._backfill.options import BackfillIO

        return BackfillIO(lambda: self.now().timestamp(), time.monotonic, sys.stderr)

    # -- model checks --

    @classmethod
    def explain(
        cls, *, costs: bool = False, items: Iterable[Mapping[str, Any]] | None = None
    ) -> list[ExplainRow]:
        """The access-pattern table: one row per pattern (operation, index, key condition,
        entity types, order). ``costs=True`` adds each row's ``rcu`` (read units of one call)
        and ``wcu`` (write units of each verb of its entity, per table and index), priced from
        item sizes estimated from the models, or measured from ``items`` (wire-format sample
        items; giving them implies ``costs=True``)."""
        if costs or items is not None:
            from ._tools.costs import priced_rows

            return priced_rows(cls, None if items is None else list(items))
        return [pattern.explain() for pattern in cls.__patterns__.values()]

    @classmethod
    def patterns(cls) -> dict[str, Pattern | DeclaredPattern[Any, Any]]:
        return dict(cls.__patterns__)

    def _outside_transaction(self, verb: str) -> None:
        if current_transaction(self) is not None:
            raise InvalidRequestError(
                f"repo.{verb}() inside an open transaction would be sent on its own, outside "
                f"it; use tx.{verb}() (the transaction method's tx argument) instead"
            )
