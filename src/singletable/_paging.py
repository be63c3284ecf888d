"""Query results (pages, collections, key references) and the cursors that resume them.

A cursor is ``1.<payload>`` or, with a ``cursor_secret``, ``1.<payload>.<signature>``:
base64url JSON holding the exclusive start key and a hash binding it to the pattern, index,
key-condition values, filter parameters and order; the signature is HMAC-SHA256 over the
token text. Anything else raises :class:`InvalidCursor`: cursors come from clients, so decoding
treats them as hostile input (bounded length, base64url text only, JSON of exactly that shape).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ._record import FrozenRecord
from .errors import InvalidCursor, MultipleResultsError

if TYPE_CHECKING:
    from ._entity import Entity

T = TypeVar("T")
E = TypeVar("E", bound="Entity")

CURSOR_VERSION = "1"
# Longer than any cursor this module writes: four key attributes within DynamoDB's key limits
# (6,144 bytes), each byte at most six characters of JSON, then base64 (4/3) and a signature.
MAX_CURSOR_CHARS = 65_536
# The largest key attribute value DynamoDB accepts (a partition key's 2,048 bytes).
_MAX_KEY_BYTES = 2048
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class Page(Generic[T]):
    """One page of a query: ``items`` (at most ``limit``) and the ``cursor`` of the next page
    (``None`` when DynamoDB reported the end of the key range). Iterating yields the items.

    ``consumed_capacity`` is the Query's ``ConsumedCapacity`` as DynamoDB returned it, when the
    repository asked for it (``capacity="total"`` or ``"indexes"``, or hooks given), else
    ``None``. (A ``hydrate=True`` page reports its Query only; hooks see the BatchGetItem too.)
    """

    __slots__ = ("consumed_capacity", "cursor", "items")

    def __init__(self, items: list[T], cursor: str | None, consumed_capacity: Any = None) -> None:
        self.items = items
        self.cursor = cursor
        self.consumed_capacity = consumed_capacity

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> T:
        return self.items[index]

    def __repr__(self) -> str:
        more = "more" if self.cursor else "end"
        return f"Page({len(self.items)} items, {more})"


class Collection:
    """Items of several entity types from one Query, in sort-key order.

    ``consumed_capacity`` is the Query's ``ConsumedCapacity`` when the repository asked for it
    (else ``None``); for a whole collection read page by page, the pages' capacity added up
    (:func:`add_capacity`).
    """

    __slots__ = ("consumed_capacity", "cursor", "items")

    def __init__(self, items: list[Any], cursor: str | None, consumed_capacity: Any = None) -> None:
        self.items = items
        self.cursor = cursor
        self.consumed_capacity = consumed_capacity

    def all(self, cls: type[E]) -> list[E]:
        """Every item of type ``cls``, in sort-key order."""
        return [item for item in self.items if type(item) is cls]

    def one(self, cls: type[E]) -> E | None:
        """The item of type ``cls``, or None; :class:`MultipleResultsError` if there are more."""
        found = self.all(cls)
        if len(found) > 1:
            raise MultipleResultsError(
                f"the collection holds {len(found)} {cls.__qualname__} items, not one"
            )
        return found[0] if found else None

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for item in self.items:
            counts[type(item).__qualname__] = counts.get(type(item).__qualname__, 0) + 1
        inner = ", ".join(f"{n} {name}" for name, n in counts.items())
        return f"Collection({inner or 'empty'}, {'more' if self.cursor else 'end'})"


_UNITS = ("CapacityUnits", "ReadCapacityUnits", "WriteCapacityUnits")


def add_capacity(total: Any, more: Any) -> Any:
    """Two ``ConsumedCapacity`` entries of one table added up (units at the top, under
    ``Table`` and per index); ``None`` stands for none reported."""
    if total is None:
        return more
    if more is None:
        return total
    added = _add_units(total, more)
    if "TableName" in total or "TableName" in more:
        added["TableName"] = total.get("TableName", more.get("TableName"))
    if "Table" in total or "Table" in more:
        added["Table"] = _add_units(total.get("Table", {}), more.get("Table", {}))
    for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        if group in total or group in more:
            left, right = total.get(group, {}), more.get(group, {})
            added[group] = {
                name: _add_units(left.get(name, {}), right.get(name, {}))
                for name in dict.fromkeys([*left, *right])
            }
    return added


def _add_units(left: Mapping[str, Any], right: Mapping[str, Any]) -> dict[str, Any]:
    return {
        unit: left.get(unit, 0.0) + right.get(unit, 0.0)
        for unit in _UNITS
        if unit in left or unit in right
    }


class KeyRef(FrozenRecord, Generic[E]):
    """A typed reference to an item (from a KEYS_ONLY index); usable in ``batch_get``."""

    # Immutable (assignment raises AttributeError) and equal by value.
    __slots__ = ("entity", "fields", "key")
    _fields = ("entity", "key", "fields")

    entity: type[E]
    key: Mapping[str, Any]
    fields: Mapping[str, Any]

    def __init__(
        self, entity: type[E], key: Mapping[str, Any], fields: Mapping[str, Any] | None = None
    ) -> None:
        object.__setattr__(self, "entity", entity)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "fields", {} if fields is None else fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        return f"KeyRef[{self.entity.__qualname__}]({inner})"


# -- cursors ----------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def binding_of(*parts: Any) -> str:
    """A short hash of what a cursor must belong to."""
    text = json.dumps(parts, default=str, sort_keys=True, separators=(",", ":"))
    return _b64(hashlib.sha256(text.encode()).digest()[:12])


class CursorCodec:
    """Encodes and checks cursors; signs with the first secret and accepts any of them."""

    def __init__(self, secrets: str | bytes | Sequence[str | bytes] | None) -> None:
        if secrets is None:
            items: list[str | bytes] = []
        elif isinstance(secrets, (str, bytes)):
            items = [secrets]
        else:
            items = list(secrets)
        self._secrets = [s.encode() if isinstance(s, str) else bytes(s) for s in items]
        if any(not s for s in self._secrets):
            raise ValueError("cursor secrets must not be empty")

    def _signature(self, secret: bytes, text: str) -> str:
        return _b64(hmac.new(secret, text.encode(), hashlib.sha256).digest())

    def encode(self, key: Mapping[str, Mapping[str, Any]], binding: str) -> str:
        wire = {}
        for attr, av in key.items():
            ((tag, raw),) = av.items()
            if tag == "B":
                raw = _b64(bytes(raw))
            wire[attr] = [tag, raw]
        payload = json.dumps({"b": binding, "k": wire}, separators=(",", ":"), sort_keys=True)
        token = f"{CURSOR_VERSION}.{_b64(payload.encode())}"
        if self._secrets:
            token = f"{token}.{self._signature(self._secrets[0], token)}"
        return token

    def decode(
        self, cursor: str, binding: str, attributes: frozenset[str] | None
    ) -> dict[str, Any]:
        """The exclusive start key of ``cursor``; :class:`InvalidCursor` unless it is intact,
        signed as configured, bound to ``binding`` and holds exactly ``attributes`` (``None``:
        the caller checks the attributes, as a scatter query's composite cursor does)."""
        if not isinstance(cursor, str) or not cursor:
            raise InvalidCursor("the cursor is not a non-empty string")
        if len(cursor) > MAX_CURSOR_CHARS:
            raise InvalidCursor("the cursor is longer than any cursor this library writes")
        parts = cursor.split(".")
        if parts[0] != CURSOR_VERSION or len(parts) not in (2, 3):
            raise InvalidCursor("the cursor is malformed or from another version")
        # (base64's decoder would skip other characters; compare_digest refuses non-ASCII.)
        if not all(_B64URL.fullmatch(part) for part in parts[1:]):
            raise InvalidCursor("the cursor is malformed (not base64url text)")
        if self._secrets:
            if len(parts) != 3:
                raise InvalidCursor("the cursor is not signed, but this repository signs cursors")
            token = f"{parts[0]}.{parts[1]}"
            if not any(
                hmac.compare_digest(self._signature(secret, token), parts[2])
                for secret in self._secrets
            ):
                raise InvalidCursor("the cursor signature does not match (altered or foreign)")
        elif len(parts) == 3:
            raise InvalidCursor("the cursor is signed, but this repository has no cursor_secret")
        try:
            payload = json.loads(_unb64(parts[1]))
            wire = payload["k"]
            bound = payload["b"]
            if not isinstance(wire, dict):
                raise TypeError
            key: dict[str, Any] = {}
            for attr, pair in wire.items():
                if not isinstance(pair, list) or len(pair) != 2:
                    raise TypeError
                tag, raw = pair
                if not isinstance(raw, str) or not _valid_key_value(tag, raw):
                    raise TypeError
                key[attr] = {tag: _unb64(raw) if tag == "B" else raw}
        # RecursionError: JSON nested deeper than the parser's recursion limit.
        except (ValueError, TypeError, KeyError, RecursionError, binascii.Error, UnicodeError):
            raise InvalidCursor("the cursor is malformed") from None
        if bound != binding:
            raise InvalidCursor("the cursor belongs to another pattern, partition, filter or order")
        if attributes is not None and frozenset(key) != attributes:
            raise InvalidCursor("the cursor does not hold this index's key attributes")
        return key


def _valid_key_value(tag: Any, raw: str) -> bool:
    """``raw`` could be a key attribute value of type ``tag`` (what DynamoDB would accept)."""
    if tag == "S":
        return len(raw.encode()) <= _MAX_KEY_BYTES  # (a lone surrogate raises UnicodeError)
    if tag == "N":
        return len(raw) <= 200 and _NUMBER.fullmatch(raw) is not None
    if tag == "B":
        return len(raw) <= _MAX_KEY_BYTES * 4 // 3 + 4 and _B64URL.fullmatch(raw) is not None
    return False
