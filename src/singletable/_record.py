"""Small value classes without dataclasses' import-time cost.

A :class:`Record` names its fields once, in ``_fields`` (constructor order); equality (with
an instance of the same class), hashing and ``repr`` follow from them. A
:class:`FrozenRecord` is also immutable, as declarations (``GSI``, ``Index``, markers...) are:
its ``__init__`` sets fields with ``object.__setattr__``. Defining a dataclass costs about half
a millisecond at import; these cost nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Record:
    """Value semantics from ``_fields``."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())


class FrozenRecord(Record):
    """A :class:`Record` whose fields cannot be assigned after ``__init__``."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return (type(self), self._values())  # copy and pickle go through __init__
