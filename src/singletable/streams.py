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
unknown types, the guard items ``Unique()`` adds and a backfill job's items are skipped.

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

from typing_extensions import Self

from ._backfill.job_items import JOB_TYPE
from ._entity import Entity, spec_of
from ._entity_spec import EntitySpec
from ._verbs.guards import GUARD_TYPE
from .errors import InvalidRequestError, ItemDecodeError, KeyTemplateError, ModelDefinitionError

if TYPE_CHECKING:
    from ._repository_base import RepositoryBase

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


class StreamEvent(tuple, Generic[E]):  # type: ignore[type-arg]
    """One stream record decoded: the entity class, the item's wire ``keys``, its images
    decoded (``old``/``new``), the record's ``event_id`` and ``sequence_number``, and
    ``expired`` (True only for a deletion by TTL). ``record`` is the raw record.

    Read-only (a tuple underneath: building one costs a tenth of a slotted class's
    ``object.__setattr__`` calls); equal by value (the raw record aside) to events of the same
    class.
    """

    __slots__ = ()
    event_name: ClassVar[EventName]

    def __new__(
        cls,
        entity: type[E],
        keys: Mapping[str, Any],
        old: E | None,
        new: E | None,
        event_id: str = "",
        sequence_number: str = "",
        expired: bool = False,
        record: Mapping[str, Any] | None = None,
    ) -> Self:
        values = (entity, keys, old, new, event_id, sequence_number, expired, record)
        return tuple.__new__(cls, values)

    def __getnewargs__(self) -> tuple[Any, ...]:  # copy and pickle go through __new__
        return tuple(self)

    @property
    def entity(self) -> type[E]:
        """The entity class."""
        return self[0]  # type: ignore[no-any-return]

    @property
    def keys(self) -> Mapping[str, Any]:
        """The item's primary key in the wire format (``{"PK": {"S": ...}, ...}``)."""
        return self[1]  # type: ignore[no-any-return]

    @property
    def old(self) -> E | None:
        """The item before the change (when the view carries it)."""
        return self[2]  # type: ignore[no-any-return]

    @property
    def new(self) -> E | None:
        """The item after the change (when the view carries it)."""
        return self[3]  # type: ignore[no-any-return]

    @property
    def event_id(self) -> str:
        return self[4]  # type: ignore[no-any-return]

    @property
    def sequence_number(self) -> str:
        """The record's ``dynamodb.SequenceNumber`` (what ``batchItemFailures`` reports)."""
        return self[5]  # type: ignore[no-any-return]

    @property
    def expired(self) -> bool:
        """True only for a deletion by DynamoDB's TTL process."""
        return self[6]  # type: ignore[no-any-return]

    @property
    def record(self) -> Mapping[str, Any] | None:
        """The raw stream record."""
        return self[7]  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return tuple.__eq__(self[:7], other[:7])
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

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

    @property
    def old(self) -> None:
        """Always None: there was no item before."""
        return None

    @property
    def new(self) -> E:
        """The item created (None under the ``OLD_IMAGE`` and ``KEYS_ONLY`` views)."""
        return self[3]  # type: ignore[no-any-return]


class Modified(StreamEvent[E]):
    """An item was changed (``MODIFY``): ``old`` and ``new`` are the entity before and after
    (under ``NEW_IMAGE`` ``old`` is None, under ``OLD_IMAGE`` ``new`` is, under ``KEYS_ONLY``
    both are)."""

    __slots__ = ()
    event_name = "MODIFY"

    @property
    def old(self) -> E:
        """The item before the change (None under the ``NEW_IMAGE`` and ``KEYS_ONLY`` views)."""
        return self[2]  # type: ignore[no-any-return]

    @property
    def new(self) -> E:
        """The item after the change (None under the ``OLD_IMAGE`` and ``KEYS_ONLY`` views)."""
        return self[3]  # type: ignore[no-any-return]


class Removed(StreamEvent[E]):
    """An item was deleted (``REMOVE``): ``old`` is the entity (None under the ``NEW_IMAGE``
    and ``KEYS_ONLY`` views); ``new`` is always None. ``expired`` is True when DynamoDB's TTL
    process deleted it."""

    __slots__ = ()
    event_name = "REMOVE"

    @property
    def old(self) -> E:
        """The item deleted (None under the ``NEW_IMAGE`` and ``KEYS_ONLY`` views)."""
        return self[2]  # type: ignore[no-any-return]

    @property
    def new(self) -> None:
        """Always None: there is no item after."""
        return None


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
        if not isinstance(records.get("Records"), list):
            raise InvalidRequestError(
                "a stream batch is a Lambda event {'Records': [...]} or a list of records"
            )
        return list(records["Records"])
    return list(records)


def sequence_number(record: Any) -> str:
    """A record's ``dynamodb.SequenceNumber`` ("" when the record has none, or is no record)."""
    stream = record.get("dynamodb") if isinstance(record, Mapping) else None
    if isinstance(stream, Mapping):
        number = stream.get("SequenceNumber")
        return number if isinstance(number, str) else ""
    return ""


#: The images each view type carries, by event: a record without one of them is malformed.
_PROMISED: dict[Any, dict[str, tuple[str, ...]]] = {
    "NEW_IMAGE": {"INSERT": ("NewImage",), "MODIFY": ("NewImage",)},
    "OLD_IMAGE": {"MODIFY": ("OldImage",), "REMOVE": ("OldImage",)},
    "NEW_AND_OLD_IMAGES": {
        "INSERT": ("NewImage",),
        "MODIFY": ("NewImage", "OldImage"),
        "REMOVE": ("OldImage",),
    },
}


def _which(record: Any) -> str:
    """How messages name a record: by its sequence number when it has one."""
    number = sequence_number(record)
    return f"stream record {number}" if number else "a stream record without a sequence number"


def _parts(record: Any) -> tuple[Mapping[str, Any], EventName]:
    """A record's ``dynamodb`` part and its event name; ItemDecodeError when either is not
    there (or the record is no mapping at all)."""
    if not isinstance(record, Mapping):
        raise ItemDecodeError(f"a stream record is a map, not {type(record).__name__}")
    stream = record.get("dynamodb")
    if not isinstance(stream, Mapping):
        raise ItemDecodeError(f"{_which(record)} has no dynamodb map")
    name = record.get("eventName")
    if name not in EVENT_NAMES:
        raise ItemDecodeError(
            f"{_which(record)}: unknown eventName {name!r} (expected {', '.join(EVENT_NAMES)})",
        )
    return stream, name


def _image(record: Any, stream: Mapping[str, Any], part: str) -> Mapping[str, Any] | None:
    image = stream.get(part)
    if image is not None and not isinstance(image, Mapping):
        raise ItemDecodeError(f"{_which(record)}: its {part} is not a map")
    return image


def _tag_of(image: Mapping[str, Any], attribute: str) -> str | None:
    """The type tag an image holds (None when it holds none, or not as a string)."""
    tag = image.get(attribute)
    text = tag.get("S") if isinstance(tag, Mapping) else None
    return text if isinstance(text, str) else None


def _is_bookkeeping_key(keys: Mapping[str, Any], pk: str) -> bool:
    """Whether ``keys`` are a ``Unique()`` guard's or a backfill job's (never an entity's)."""
    value = keys.get(pk)
    text = value.get("S") if isinstance(value, Mapping) else None
    return isinstance(text, str) and text.startswith((GUARD_TYPE + "#", JOB_TYPE + "#"))


class StreamRouter:
    """Decodes a table's stream records into typed events and runs the handlers registered for
    them. ``StreamRouter(Shop)`` knows every entity declared on ``Shop``'s table."""

    __slots__ = ("_handlers", "_specs", "_tag_attribute", "_tags", "repository", "table")

    def __init__(self, repository: type[RepositoryBase]) -> None:
        from ._repository_base import RepositoryBase

        table = getattr(repository, "__singletable_table__", None)
        if not (isinstance(repository, type) and issubclass(repository, RepositoryBase)) or (
            table is None
        ):
            raise ModelDefinitionError(
                f"StreamRouter takes a repository class declared on a table, not {repository!r}"
            )
        self.repository = repository
        self.table = table
        self._tag_attribute = table.type_attribute
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
        # type tag -> (spec, entity class, decode): the current tag and any former ones
        self._tags: dict[str, tuple[EntitySpec, type, Callable[[Any], Any]]] = {}
        for spec in self._specs:
            for tag in spec.type_tags:
                self._tags.setdefault(tag, (spec, spec.cls, spec.from_item))
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
        """One record as a typed event, or None (an unknown type or a guard item). A record
        that is not a stream record of this table's items (a part missing or of the wrong
        shape, an image the view type promises but the record lacks, an image that does not
        decode) raises :class:`ItemDecodeError` naming its sequence number."""
        stream, name = _parts(record)
        new_image = _image(record, stream, "NewImage")
        old_image = _image(record, stream, "OldImage")
        keys = stream.get("Keys") or {}
        if not isinstance(keys, Mapping):
            raise ItemDecodeError(f"{_which(record)}: its Keys are not a map")
        image = new_image if new_image is not None else old_image
        if image is not None:
            tag = _tag_of(image, self._tag_attribute)
            route = self._tags.get(tag) if tag is not None else None
        else:
            route = self._route_of_keys(keys)
        if route is None:
            return None  # another application's item, or a Unique() guard item
        spec, entity, from_item = route
        where = f"{_which(record)} ({name} of {spec.name})"
        for promised in _PROMISED.get(stream.get("StreamViewType"), {}).get(name, ()):
            if stream.get(promised) is None:
                raise ItemDecodeError(
                    f"{where}: its {stream['StreamViewType']} view promises a {promised}, and "
                    "the record has none",
                    key=spec.describe_key(keys),
                )
        try:
            new = None if new_image is None else from_item(new_image)
            old = None if old_image is None else self._old(spec, old_image)
        except ItemDecodeError as error:
            raise ItemDecodeError(
                f"{where}: {error.message}", key=error.key, raw=error.raw
            ) from error
        except (AttributeError, KeyError, TypeError, ValueError, RecursionError) as error:
            # a value that is not in DynamoDB's wire format ({"S": 5}, a list, 3,000 levels)
            raise ItemDecodeError(
                f"{where}: an image is not in DynamoDB's item format ({type(error).__name__})",
                key=spec.describe_key(keys),
            ) from None
        identity = record.get("userIdentity")
        expired = (
            name == "REMOVE"
            and isinstance(identity, Mapping)
            and identity.get("principalId") == TTL_PRINCIPAL
        )
        values = (
            entity,
            keys,
            old,
            new,
            record.get("eventID", ""),
            stream.get("SequenceNumber", ""),
            expired,
            record,
        )
        event: AnyEvent = tuple.__new__(EVENT_CLASSES[name], values)  # type: ignore[assignment]
        return event

    def _old(self, spec: EntitySpec, image: Mapping[str, Any]) -> Any:
        tag = _tag_of(image, self._tag_attribute)
        route = self._tags.get(tag) if tag is not None else None
        if route is None or route[0] is not spec:
            key = spec.describe_key(image)
            raise ItemDecodeError(
                f"the old image of {key} is a "
                f"{tag if tag is not None else 'untyped item'!r}, the new one a "
                f"{spec.type_name!r} (two entity types share this key; see `singletable lint`)",
                key=key,
            )
        return spec.from_item(image)

    def _route_of_keys(
        self, keys: Mapping[str, Any]
    ) -> tuple[EntitySpec, type, Callable[[Any], Any]] | None:
        """The entity whose primary-key templates parse ``keys`` (KEYS_ONLY records)."""
        if not keys or _is_bookkeeping_key(keys, self.table.pk):
            return None
        for spec in self._specs:
            try:
                spec.parse_key(keys)
            except KeyTemplateError:
                continue
            return spec, spec.cls, spec.from_item
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
