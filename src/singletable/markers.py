"""Field markers, used as ``Annotated`` metadata: ``version: Annotated[int, Version()] = 0``."""

from __future__ import annotations

from .record import Record


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
