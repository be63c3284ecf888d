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
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

from typing_extensions import Unpack

from ._context import PlanContext
from ._executor import Hook, RetryPolicy
from ._paging import CursorCodec
from ._patterns.base import DeclaredPattern, ExplainRow, Pattern
from ._source import locate
from ._table import Table, declared_table
from ._verbs.planner import WritePlanner
from ._verbs.shapes import WriteShapes
from ._verbs.transactions import current_transaction
from .errors import InvalidRequestError, ModelDefinitionError

if TYPE_CHECKING:
    from ._backfill.options import BackfillIO

CAPACITY = {"total": "TOTAL", "indexes": "INDEXES"}


class RepositoryOptions(TypedDict, total=False):
    """The keywords both twins take (``Repository(client, **options)``,
    ``AsyncRepository(client, **options)``, ``AsyncRepository.connect(**options)``), declared
    once.

    * ``table_name``: the physical table name (default: the declared ``Table``'s name);
    * ``cursor_secret``: sign cursors with this secret (a sequence rotates: sign with the first,
      accept any);
    * ``default_limit``: the page size of a call without ``limit=`` (100);
    * ``clock``: a function returning aware datetimes (timestamps, TTL checks);
    * ``retry``: the :class:`RetryPolicy` (attempts, backoff, ``sleep``);
    * ``hooks``: called with a :class:`CallInfo` after every request;
    * ``capacity``: ``"total"`` or ``"indexes"`` asks for ConsumedCapacity on every request;
    * ``fast_path``: install the response fast path on the client (default True).
    """

    table_name: str | None
    cursor_secret: str | bytes | Sequence[str | bytes] | None
    default_limit: int
    clock: Callable[[], datetime] | None
    retry: RetryPolicy | None
    hooks: Sequence[Hook]
    capacity: Literal["total", "indexes"] | None
    fast_path: bool


def check_options(owner: str, options: dict[str, Any]) -> None:
    """Refuse a keyword that is no repository option, as a misspelt keyword argument would be."""
    unknown = options.keys() - RepositoryOptions.__annotations__.keys()
    if unknown:
        raise TypeError(
            f"{owner}() got an unexpected keyword argument {sorted(unknown)[0]!r} (options: "
            f"{', '.join(RepositoryOptions.__annotations__)})"
        )


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
            try:
                if name in reserved:
                    raise ModelDefinitionError(
                        f"{cls.__qualname__}.{name}: the pattern name shadows "
                        f"{twin.__name__}.{name}; rename it"
                    )
                pattern.bind(cls, cls.__singletable_table__)
            except ModelDefinitionError as error:
                locate(error, cls, name)  # the pattern's line (in the class declaring it)
                raise
        cls.__patterns__ = patterns

    def __init__(self, **options: Unpack[RepositoryOptions]) -> None:
        check_options(type(self).__qualname__, dict(options))
        capacity = options.get("capacity")
        if capacity is not None and capacity not in CAPACITY:
            raise InvalidRequestError(
                f"capacity must be 'total' or 'indexes' (or None), not {capacity!r}"
            )
        hooks = options.get("hooks", ())
        asked = CAPACITY[capacity] if capacity else ("TOTAL" if hooks else None)
        self.table_name = options.get("table_name") or self.table.name
        self.clock = options.get("clock") or utc_now
        self.retry = options.get("retry") or RetryPolicy()
        self.context = PlanContext(
            self.table_name,
            default_limit=options.get("default_limit", 100),
            capacity=asked,
            cursors=CursorCodec(options.get("cursor_secret")),
            clock=self.clock,
            retry=self.retry,
            shapes=WriteShapes(),
        )
        self.planner = WritePlanner(self.table, self.context)

    @property
    def default_limit(self) -> int:
        return self.context.default_limit

    # -- time --

    def now(self) -> datetime:
        """The repository clock's time (aware)."""
        return self.context.now()

    def now_epoch(self) -> int:
        return self.context.now_epoch()

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
