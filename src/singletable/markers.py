"""Field markers, used as ``Annotated`` metadata: ``version: Annotated[int, Version()] = 0``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Marker:
    """Base class of field markers."""

    @property
    def label(self) -> str:
        return f"{type(self).__name__}()"


@dataclass(frozen=True)
class Version(Marker):
    """Optimistic locking: writes require the stored version and store it + 1."""


@dataclass(frozen=True)
class CreatedAt(Marker):
    """Set once, to an aware UTC datetime, when the item is first written."""


@dataclass(frozen=True)
class UpdatedAt(Marker):
    """Set to an aware UTC datetime on every write."""


@dataclass(frozen=True)
class Unique(Marker):
    """No two items of the entity type may hold the same value (kept by a guard item)."""
