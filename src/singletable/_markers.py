"""Field markers, used as ``Annotated`` metadata: ``version: Annotated[int, Version()] = 0``."""

from __future__ import annotations

import hashlib

from ._record import FrozenRecord, Record


class Marker(Record):
    """Base class of field markers."""

    # Markers hold no data: no slots makes them immutable. Two markers of one type are equal
    # (``Annotated[int, Version()] == Annotated[int, Version()]``), as dataclasses they were.
    __slots__ = ()

    @property
    def label(self) -> str:
        return f"{type(self).__name__}()"


class Version(Marker):
    """Optimistic locking: writes require the stored version and store it + 1."""

    __slots__ = ()


class CreatedAt(Marker):
    """Set once, to an aware UTC datetime, when the item is first written."""

    __slots__ = ()


class UpdatedAt(Marker):
    """Set to an aware UTC datetime on every write."""

    __slots__ = ()


class Unique(Marker):
    """No two items of the entity type may hold the same value (kept by a guard item)."""

    __slots__ = ()


class Shard(Marker, FrozenRecord):
    """Write sharding: ``shard: Annotated[int, Shard(8, of="order_id")] = 0``.

    With ``of=``, every write sets the field to :func:`shard_of` the canonical key rendering
    of field ``of``, modulo ``n`` (a value the caller passed is overwritten): a reader that
    knows ``of`` can compute it. Without ``of=`` (``Shard(8)``), ``create``, ``put`` and
    ``batch_put`` draw it uniformly at random from ``0..n-1`` and updates and ``move`` keep
    it; such a shard cannot be part of the table's key (a get could not know it). Either way
    items spread over ``n`` partitions when the field is in an index's partition key, and a
    ``query(..., scatter="shard")`` reads all ``n`` and merges them.
    """

    __slots__ = ("n", "of")
    _fields = ("n", "of")

    n: int
    of: str | None

    def __init__(self, n: int, of: str | None = None) -> None:
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "of", of)

    @property
    def label(self) -> str:
        return f"Shard({self.n})" if self.of is None else f"Shard({self.n}, of={self.of!r})"


def shard_of(text: str, n: int) -> int:
    """The shard of a key rendering: the first 8 bytes of the SHA-256 of its UTF-8 bytes, as a
    big-endian unsigned integer, modulo ``n``.

    This function is part of the stored format: the same text gives the same shard in every
    process, Python version and release of this library (it never uses ``hash()``, which is
    salted per process). Changing it would strand every sharded item, so it never changes.
    """
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n
