"""A stored item's key, and every form it takes outside the wire: one room for "a key as text".

``Key`` wraps key attributes in wire format (``{"PK": {"S": "A"}, "SK": {"S": "B"}}``) in
schema order and answers each use: messages (``text``), cancellation reasons (``str``),
unique guards' owner attribute (``owner_json``, a stored format), checkpoints and reports
(``strings``), and a hashable identity (``identity``; :func:`key_identity` is the same without
building a ``Key``, for batch loops).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._wire import Wire


def key_identity(item: Mapping[str, Wire], attributes: Sequence[str]) -> tuple[Any, ...]:
    """The raw values of ``item``'s key attributes, in schema order (hashable)."""
    return tuple(next(iter(item[a].values())) for a in attributes if a in item)


class Key:
    """Key attributes in wire format, in schema order; a value (equal by attributes)."""

    __slots__ = ("attributes",)

    def __init__(self, attributes: Mapping[str, Wire]) -> None:
        self.attributes = attributes

    @classmethod
    def of(cls, item: Mapping[str, Wire], names: Iterable[str | None]) -> Key:
        """The key of ``item`` (a whole item or a key) for the attribute ``names`` it has."""
        return cls({a: item[a] for a in names if a and a in item})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash(self.identity)

    @property
    def values(self) -> list[Any]:
        """The raw values (``"A"``, ``"12"``...), in schema order."""
        return [next(iter(v.values())) for v in self.attributes.values()]

    @property
    def identity(self) -> tuple[Any, ...]:
        return tuple(self.values)

    @property
    def text(self) -> str:
        """For messages: ``PK='A', SK='B'``."""
        return ", ".join(f"{a}={v!r}" for a, v in zip(self.attributes, self.values))

    def __str__(self) -> str:
        """``PK=A, SK=B`` (a cancellation reason's ``key``)."""
        return ", ".join(f"{a}={v}" for a, v in zip(self.attributes, self.values))

    def __repr__(self) -> str:
        return f"Key({self.text})"

    @property
    def owner_json(self) -> str:
        """The values as a JSON list: what a unique guard stores to name its owner."""
        return json.dumps(self.values, ensure_ascii=False)

    @property
    def strings(self) -> dict[str, str]:
        """``{"PK": "A", "SK": "B"}``: the values as text (checkpoints and reports)."""
        return {a: str(v) for a, v in zip(self.attributes, self.values)}
