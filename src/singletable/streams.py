"""DynamoDB Streams as typed events, routed to handlers (``singletable.streams``).

```python
router = StreamRouter(Shop)

@router.on(Customer, "MODIFY")
def customer_changed(event: Modified[Customer]) -> None:
    print(event.old.name, "->", event.new.name)

def lambda_handler(event, context):
    return router.handle(event)          # {"batchItemFailures": [...]}
```

A stream record's images are items in the wire format, so they decode with the entity's
compiled codec (``EntitySpec.from_item``), picked by the item's type tag (any of
``EntitySpec.type_tags``). Under the ``KEYS_ONLY`` view (and for records whose view carries no
image) the entity is found by parsing the keys against the entities' key templates. Items of
unknown types and the guard items ``Unique()`` adds are skipped.

Images follow the stream's view type: ``.old`` and ``.new`` are typed for ``NEW_AND_OLD_IMAGES``
(``Modified[E]`` has both, ``Inserted[E]`` a ``new``, ``Removed[E]`` an ``old``) and are None
where the view carries no such image (``NEW_IMAGE``: no ``old``; ``OLD_IMAGE``: no ``new``;
``KEYS_ONLY``: neither). :func:`read_stream` reads a whole stream for local use and tests.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, overload

from .entity import Entity, EntitySpec, spec_of
from .errors import InvalidRequestError, ItemDecodeError, KeyTemplateError, ModelDefinitionError
from .writes.guards import GUARD_TYPE

if TYPE_CHECKING:
    from .core import RepositoryBase

__all__ = [
    "EVENT_NAMES",
    "TTL_PRINCIPAL",
    "Inserted",
    "Modified",
    "Removed",
    "StreamEvent",
    "StreamRouter",
    "read_stream",
]

E = TypeVar("E", bound=Entity)
R = TypeVar("R")
EventName = Literal["INSERT", "MODIFY", "REMOVE"]
EVENT_NAMES: tuple[EventName, ...] = ("INSERT", "MODIFY", "REMOVE")

#: ``userIdentity.principalId`` of a deletion made by DynamoDB's TTL process.
TTL_PRINCIPAL = "dynamodb.amazonaws.com"

logger = logging.getLogger("singletable")


class StreamEvent(Generic[E]):
    """One stream record decoded: the entity class, the item's wire ``keys``, its images
    decoded (``old``/``new``), the record's ``event_id`` and ``sequence_number``, and
    ``expired`` (True only for a deletion by TTL). ``record`` is the raw record.

    Read-only; equal by value (the raw record aside).
    """

    __slots__ = ("entity", "event_id", "expired", "keys", "new", "old", "record", "sequence_number")
    event_name: ClassVar[EventName]

    entity: type[E]
    keys: Mapping[str, Any]
    old: Any
    new: Any
    event_id: str
    sequence_number: str
    expired: bool
    record: Mapping[str, Any] | None

    def __init__(
        self,
        entity: type[E],
        keys: Mapping[str, Any],
        old: E | None,
        new: E | None,
        event_id: str = "",
        sequence_number: str = "",
        expired: bool = False,
        record: Mapping[str, Any] | None = None,
    ) -> None:
        setter = object.__setattr__
        setter(self, "entity", entity)
        setter(self, "keys", keys)
        setter(self, "old", old)
        setter(self, "new", new)
        setter(self, "event_id", event_id)
        setter(self, "sequence_number", sequence_number)
        setter(self, "expired", expired)
        setter(self, "record", record)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"stream events are read-only (cannot assign {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"stream events are read-only (cannot delete {name!r})")

    def _values(self) -> tuple[Any, ...]:
        return (
            self.entity,
            self.keys,
            self.old,
            self.new,
            self.event_id,
            self.sequence_number,
            self.expired,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # entities are not hashable

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}[{self.entity.__name__}](sequence_number="
            f"{self.sequence_number!r}, keys={dict(self.keys)!r}, old={self.old!r}, "
            f"new={self.new!r}, expired={self.expired!r})"
        )


class Inserted(StreamEvent[E]):
    """An item was created (``INSERT``): ``new`` is the entity (None under the ``OLD_IMAGE``
    and ``KEYS_ONLY`` views); ``old`` is always None."""

    __slots__ = ()
    event_name = "INSERT"
    old: None
    new: E


class Modified(StreamEvent[E]):
    """An item was changed (``MODIFY``): ``old`` and ``new`` are the entity before and after
    (under ``NEW_IMAGE`` ``old`` is None, under ``OLD_IMAGE`` ``new`` is, under ``KEYS_ONLY``
    both are)."""

    __slots__ = ()
    event_name = "MODIFY"
    old: E
    new: E


class Removed(StreamEvent[E]):
    """An item was deleted (``REMOVE``): ``old`` is the entity (None under the ``NEW_IMAGE``
    and ``KEYS_ONLY`` views); ``new`` is always None. ``expired`` is True when DynamoDB's TTL
    process deleted it."""

    __slots__ = ()
    event_name = "REMOVE"
    old: E
    new: None


AnyEvent = Inserted[Any] | Modified[Any] | Removed[Any]
EVENT_CLASSES: dict[str, type[StreamEvent[Any]]] = {
    "INSERT": Inserted,
    "MODIFY": Modified,
    "REMOVE": Removed,
}


def stream_records(records: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[Any]:
    """The records of a Lambda event (``{"Records": [...]}``) or a list of records (a
    ``dynamodbstreams`` ``get_records`` call's ``Records``, :func:`read_stream`'s output)."""
    if isinstance(records, Mapping):
        if "Records" not in records:
            raise InvalidRequestError(
                "a stream batch is a Lambda event {'Records': [...]} or a list of records"
            )
        return list(records["Records"])
    return list(records)


def sequence_number(record: Mapping[str, Any]) -> str:
    """A record's ``dynamodb.SequenceNumber`` ("" when the record has none)."""
    stream = record.get("dynamodb")
    if isinstance(stream, Mapping):
        return str(stream.get("SequenceNumber", ""))
    return ""


def _is_guard_key(keys: Mapping[str, Any], pk: str) -> bool:
    value = keys.get(pk)
    text = value.get("S") if isinstance(value, Mapping) else None
    return isinstance(text, str) and text.startswith(GUARD_TYPE + "#")


class StreamRouter:
    """Decodes a table's stream records into typed events and runs the handlers registered for
    them. ``StreamRouter(Shop)`` knows every entity declared on ``Shop``'s table."""

    __slots__ = ("_handlers", "_specs", "_tags", "repository", "table")

    def __init__(self, repository: type[RepositoryBase]) -> None:
        from .core import RepositoryBase

        table = getattr(repository, "__singletable_table__", None)
        if not (isinstance(repository, type) and issubclass(repository, RepositoryBase)) or (
            table is None
        ):
            raise ModelDefinitionError(
                f"StreamRouter takes a repository class declared on a table, not {repository!r}"
            )
        self.repository = repository
        self.table = table
        specs: dict[int, EntitySpec] = {}
        for cls in table.entities.values():
            spec = spec_of(cls)
            specs[id(spec)] = spec
        for pattern in repository.patterns().values():
            inner = getattr(pattern, "pattern", pattern)  # a declared signature's pattern
            for spec in getattr(inner, "specs", None) or [getattr(inner, "spec", None)]:
                if isinstance(spec, EntitySpec):
                    specs.setdefault(id(spec), spec)
        self._specs: tuple[EntitySpec, ...] = tuple(specs.values())
        self._tags: dict[str, EntitySpec] = {}
        for spec in self._specs:
            for tag in spec.type_tags:  # the current tag and any former ones
                self._tags.setdefault(tag, spec)
        self._handlers: dict[tuple[type, str], list[Callable[[Any], Any]]] = {}

    # -- registration --

    @overload
    def on(
        self, entity: type[E], event_name: Literal["INSERT"], /
    ) -> Callable[[Callable[[Inserted[E]], R]], Callable[[Inserted[E]], R]]: ...
    @overload
    def on(
        self, entity: type[E], event_name: Literal["MODIFY"], /
    ) -> Callable[[Callable[[Modified[E]], R]], Callable[[Modified[E]], R]]: ...
    @overload
    def on(
        self, entity: type[E], event_name: Literal["REMOVE"], /
    ) -> Callable[[Callable[[Removed[E]], R]], Callable[[Removed[E]], R]]: ...
    @overload
    def on(
        self, entity: type[E], event_name: None = None, /
    ) -> Callable[
        [Callable[[Inserted[E] | Modified[E] | Removed[E]], R]],
        Callable[[Inserted[E] | Modified[E] | Removed[E]], R],
    ]: ...
    def on(self, entity: type[Any], event_name: str | None = None, /) -> Any:
        """Register the decorated function for ``entity``'s events: every one, or those of
        ``event_name`` (``"INSERT"``, ``"MODIFY"`` or ``"REMOVE"``). Returns it unchanged.
        Handlers of one event run in registration order."""
        spec = self._spec_for(entity)
        if event_name is not None and event_name not in EVENT_NAMES:
            raise ModelDefinitionError(
                f"router.on({spec.name}, {event_name!r}): the event name is one of "
                f"{', '.join(EVENT_NAMES)} (or none, for every event)"
            )
        names = EVENT_NAMES if event_name is None else (event_name,)

        def register(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
            if not callable(handler):
                raise ModelDefinitionError(
                    f"router.on({spec.name}) decorates a function, not {handler!r}"
                )
            for name in names:
                self._handlers.setdefault((spec.cls, name), []).append(handler)
            return handler

        return register

    def _spec_for(self, entity: type[Any]) -> EntitySpec:
        try:
            spec = spec_of(entity)
        except ModelDefinitionError:
            raise ModelDefinitionError(
                f"router.on({getattr(entity, '__qualname__', entity)!r}): not a concrete entity"
            ) from None
        if all(spec is not known for known in self._specs):
            raise ModelDefinitionError(
                f"router.on({spec.name}): {spec.name} is not an entity of table "
                f"{self.table.name!r}, whose stream this router reads"
            )
        return spec

    # -- decoding --

    def events(
        self, records: Mapping[str, Any] | Iterable[Mapping[str, Any]]
    ) -> Iterator[AnyEvent]:
        """The typed events of ``records`` (a Lambda event or a list of records), in record
        order; unknown types and guard items are skipped. A record whose image does not decode
        raises :class:`ItemDecodeError` naming its sequence number."""
        decode = self.decode
        for record in stream_records(records):
            event = decode(record)
            if event is not None:
                yield event

    def decode(self, record: Mapping[str, Any]) -> AnyEvent | None:
        """One record as a typed event, or None (an unknown type or a guard item)."""
        stream = record["dynamodb"]
        name = record["eventName"]
        new_image = stream.get("NewImage")
        old_image = stream.get("OldImage")
        keys = stream.get("Keys") or {}
        image = new_image if new_image is not None else old_image
        if image is not None:
            tag = image.get(self.table.type_attribute)
            spec = self._tags.get(tag.get("S")) if tag is not None else None
            if spec is None:
                return None  # another application's item, or a Unique() guard item
        else:
            spec = self._spec_of_keys(keys)
            if spec is None:
                return None
        cls = EVENT_CLASSES.get(name)
        if cls is None:
            raise InvalidRequestError(
                f"stream record {sequence_number(record)}: unknown eventName {name!r} (expected "
                f"{', '.join(EVENT_NAMES)})"
            )
        try:
            new = spec.from_item(new_image) if new_image is not None else None
            old = self._old(spec, old_image) if old_image is not None else None
        except ItemDecodeError as error:
            raise ItemDecodeError(
                f"stream record {stream.get('SequenceNumber')} ({name} of {spec.name}): "
                f"{error.message}",
                key=error.key,
                raw=error.raw,
            ) from error
        expired = False
        if name == "REMOVE":
            identity = record.get("userIdentity")
            expired = identity is not None and identity.get("principalId") == TTL_PRINCIPAL
        event: AnyEvent = cls(  # type: ignore[assignment]
            spec.cls,
            keys,
            old,
            new,
            record.get("eventID", ""),
            stream.get("SequenceNumber", ""),
            expired,
            record,
        )
        return event

    def _old(self, spec: EntitySpec, image: Mapping[str, Any]) -> Any:
        tag = image.get(self.table.type_attribute)
        if tag is None or self._tags.get(tag.get("S")) is not spec:
            key = spec.describe_key(image)
            raise ItemDecodeError(
                f"the old image of {key} is a "
                f"{tag.get('S') if tag is not None else 'untyped item'!r}, the new one a "
                f"{spec.type_name!r} (two entity types share this key; see `singletable lint`)",
                key=key,
            )
        return spec.from_item(image)

    def _spec_of_keys(self, keys: Mapping[str, Any]) -> EntitySpec | None:
        """The entity whose primary-key templates parse ``keys`` (KEYS_ONLY records)."""
        if not keys or _is_guard_key(keys, self.table.pk):
            return None
        for spec in self._specs:
            try:
                spec.parse_key(keys)
            except KeyTemplateError:
                continue
            return spec
        return None

    # -- handling --

    def _handlers_of(self, event: AnyEvent) -> list[Callable[[Any], Any]]:
        return self._handlers.get((event.entity, event.event_name), [])

    def handle(self, lambda_event: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
        """Run the handlers of every record in order; return Lambda's partial-batch response.

        The first record whose decoding or handler fails, and every record after it, are
        reported in ``batchItemFailures`` (by sequence number) and not processed further, so
        Lambda retries from there and records of one item stay in order. (Turn on
        ``ReportBatchItemFailures`` on the event source mapping.) A handler that returns an
        awaitable fails its record: use :meth:`handle_async`.
        """
        records = stream_records(lambda_event)
        for position, record in enumerate(records):
            try:
                event = self.decode(record)
                if event is None:
                    continue
                for handler in self._handlers_of(event):
                    result = handler(event)
                    if inspect.isawaitable(result):
                        close = getattr(result, "close", None)
                        if close is not None:
                            close()  # never awaited: do not warn about it
                        raise InvalidRequestError(
                            f"a handler of {event.entity.__name__} {event.event_name} events "
                            "returned an awaitable; run async handlers with "
                            "`await router.handle_async(event)`"
                        )
            except Exception as error:
                return _failures(records, position, error)
        return {"batchItemFailures": []}

    async def handle_async(
        self, lambda_event: Mapping[str, Any]
    ) -> dict[str, list[dict[str, str]]]:
        """:meth:`handle` for async handlers (an async twin's ``propagate(...).on_event``):
        awaits what a handler returns when it is awaitable."""
        records = stream_records(lambda_event)
        for position, record in enumerate(records):
            try:
                event = self.decode(record)
                if event is None:
                    continue
                for handler in self._handlers_of(event):
                    result = handler(event)
                    if inspect.isawaitable(result):
                        await _awaited(result)
            except Exception as error:
                return _failures(records, position, error)
        return {"batchItemFailures": []}


async def _awaited(result: Awaitable[Any]) -> Any:
    return await result


def _failures(
    records: list[Any], position: int, error: Exception
) -> dict[str, list[dict[str, str]]]:
    failed = [{"itemIdentifier": sequence_number(r)} for r in records[position:]]
    # No key values or item contents in a log record: the position and the error class only.
    logger.warning(
        "stream record %s failed (%s); reporting it and the %d record(s) after it",
        failed[0]["itemIdentifier"],
        type(error).__name__,
        len(failed) - 1,
    )
    return {"batchItemFailures": failed}


# -- reading a stream --------------------------------------------------------------------------


def read_stream(streams_client: Any, stream_arn: str) -> Iterator[dict[str, Any]]:
    """Every record of a stream, shard by shard (parents before children), each shard from
    ``TRIM_HORIZON`` until a ``get_records`` call returns none: it does not wait for new
    records. For local development and tests (moto serves DynamoDB Streams in process and on
    its server); ``streams_client`` is a boto3 ``dynamodbstreams`` client."""
    shards: list[Mapping[str, Any]] = []
    params: dict[str, Any] = {"StreamArn": stream_arn}
    while True:
        description = streams_client.describe_stream(**params)["StreamDescription"]
        shards.extend(description.get("Shards", ()))
        last = description.get("LastEvaluatedShardId")
        if not last:
            break
        params["ExclusiveStartShardId"] = last
    for shard in _parents_first(shards):
        iterator = streams_client.get_shard_iterator(
            StreamArn=stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        ).get("ShardIterator")
        while iterator:
            response = streams_client.get_records(ShardIterator=iterator)
            records = response.get("Records") or []
            if not records:
                break
            yield from records
            iterator = response.get("NextShardIterator")


def _parents_first(shards: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Shards ordered so that a parent comes before its children (an item's records stay in
    order across a shard split)."""
    ids = {shard["ShardId"] for shard in shards}
    done: set[str] = set()
    ordered: list[Mapping[str, Any]] = []
    pending = list(shards)
    while pending:
        ready = [
            s for s in pending if s.get("ParentShardId") not in ids or s["ParentShardId"] in done
        ]
        if not ready:  # a cycle cannot happen; keep the rest in the order given
            ready = pending
        for shard in ready:
            ordered.append(shard)
            done.add(shard["ShardId"])
        pending = [s for s in pending if s["ShardId"] not in done]
    return ordered
