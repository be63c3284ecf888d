"""Typed condition callbacks: ``where=lambda o, op: op.gte(o.total, 50)``.

A callback receives a stand-in for the entity (``o``) and the operators (``op``). To a type
checker ``o`` *is* the entity, so a misspelt field is a type error; at run time it is a
:class:`FieldPath` root whose attributes are document paths (``o.shipping.city`` is the path
``shipping.city``, stored names used for aliased fields), checked against the models' fields.
Each operator builds exactly the :class:`~singletable.Condition` that ``Attr(path)`` builds, so
a callback and its ``Attr`` spelling send identical requests.

This module is imported on the first callback (by ``_expressions.condition_of``, which hands
it the ``Attr`` and ``Condition`` classes), so a program without callbacks never loads it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, Union

from pydantic import BaseModel

from ._codec import attribute_name_of, bare_annotation
from .errors import InvalidRequestError

if TYPE_CHECKING:
    from ._expressions import Attr, Condition, Param

E = TypeVar("E")
T = TypeVar("T")

ConditionFn = Callable[[E, "Operators"], "Condition"]
"""A condition callback over entity ``E``: ``(o, op) -> Condition``."""


class FieldPath:
    """A document path in a condition callback: ``o.shipping.city``, ``o.lines[0].qty``.

    ``types`` are the annotations the value at the path may have. Attribute access checks the
    name against the pydantic models among them (none: any name, as in a dict or an untyped
    value) and follows the field's annotation; ``[...]`` follows a list's or dict's items."""

    __slots__ = ("_path", "_types")

    def __init__(self, path: str, types: tuple[Any, ...]) -> None:
        self._path = path
        self._types = types

    def __getattr__(self, name: str) -> FieldPath:
        if name.startswith("__"):
            raise AttributeError(name)  # copy, pickle and friends probe dunders
        models = [m for t in self._types for m in _models_in(t)]
        if not models:
            return FieldPath(self._join(name), ())
        for model in models:
            info = model.model_fields.get(name)
            if info is not None:
                stored = attribute_name_of(model, name)
                return FieldPath(self._join(stored), (info.annotation,))
        names = sorted({f for m in models for f in m.model_fields})
        owner = " | ".join(m.__qualname__ for m in models)
        where = f"{owner}.{self._path}" if self._path else owner
        raise InvalidRequestError(
            f"condition callback: {where} has no field {name!r} (fields: {', '.join(names)})",
            key=name,
        )

    def __getitem__(self, key: int | str) -> FieldPath:
        if isinstance(key, bool) or not isinstance(key, (int, str)):
            raise InvalidRequestError(
                f"condition callback: {self._path}[{key!r}]: index a list with an int or a "
                "map with a str",
                key=self._path,
            )
        # the items of a list or dict: its last type argument
        items = tuple(a[-1] for t in self._types if (a := typing.get_args(bare_annotation(t))))
        path = f"{self._path}[{key}]" if isinstance(key, int) else self._join(key)
        return FieldPath(path, items)

    def _join(self, name: str) -> str:
        return f"{self._path}.{name}" if self._path else name

    def __bool__(self) -> bool:
        raise InvalidRequestError(
            f"condition callback: {self._path} is a path, not a value; compare it with an "
            f"operator (op.eq(o.{self._path}, value))",
            key=self._path,
        )

    def _compare(self, other: object) -> bool:
        raise InvalidRequestError(
            f"condition callback: compare {self._path} with an operator (op.gt(o.{self._path}, "
            "value)), not with Python's comparison operators",
            key=self._path,
        )

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _compare
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FieldPath({self._path!r})"


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models a value of ``annotation`` may be (``Address | None``, a union)."""
    bare = bare_annotation(annotation)
    union = typing.get_origin(bare) in (Union, types.UnionType)
    members = typing.get_args(bare) if union else (bare,)
    found = []
    for member in members:
        member = bare_annotation(member)
        if isinstance(member, type) and issubclass(member, BaseModel):
            found.append(member)
    return found


class Operators:
    """The operators of a condition callback (``op``): each takes a field of the stand-in
    (``o.total``) and returns the :class:`~singletable.Condition` that ``Attr`` builds. Combine
    the results with ``&``, ``|`` and ``~``."""

    __slots__ = ("_attr",)

    def __init__(self, attr: type[Attr]) -> None:
        self._attr = attr  # the Attr class (this module does not import it: see above)

    def _path(self, field: object) -> Attr:
        if isinstance(field, FieldPath):
            return self._attr(field._path)
        raise InvalidRequestError(
            f"condition callback: an operator's first argument is a field of the stand-in "
            f"(op.eq(o.status, ...)), not {field!r}"
        )

    def _value(self, value: Any) -> Any:
        """A compared value; a path (``op.gt(o.total, o.discount)``) compares two attributes."""
        return self._attr(value._path) if isinstance(value, FieldPath) else value

    def eq(self, field: T, value: T | Param, /) -> Condition:
        return self._path(field).eq(self._value(value))

    def ne(self, field: T, value: T | Param, /) -> Condition:
        return self._path(field).ne(self._value(value))

    def lt(self, field: T, value: T | Param, /) -> Condition:
        return self._path(field).lt(self._value(value))

    def lte(self, field: T, value: T | Param, /) -> Condition:
        return self._path(field).lte(self._value(value))

    def gt(self, field: T, value: T | Param, /) -> Condition:
        return self._path(field).gt(self._value(value))

    def gte(self, field: T, value: T | Param, /) -> Condition:
        return self._path(field).gte(self._value(value))

    def between(self, field: T, low: T | Param, high: T | Param, /) -> Condition:
        return self._path(field).between(self._value(low), self._value(high))

    def begins_with(self, field: str | bytes | None, prefix: str | bytes | Param, /) -> Condition:
        return self._path(field).begins_with(prefix)

    def contains(self, field: object, value: object, /) -> Condition:
        return self._path(field).contains(self._value(value))

    def exists(self, field: object, /) -> Condition:
        return self._path(field).exists()

    def not_exists(self, field: object, /) -> Condition:
        return self._path(field).not_exists()

    def is_in(self, field: T, /, *values: T | Iterable[T] | Param) -> Condition:
        """``op.is_in(o.status, "A", "B")``, ``op.is_in(o.status, ["A", "B"])`` or
        ``op.is_in(o.status, Param("statuses"))``."""
        return self._path(field).is_in(*values)


def resolve_callback(
    where: Callable[..., Any],
    models: Iterable[type[BaseModel]],
    attr: type[Attr],
    condition: type[Condition],
) -> Condition:
    """Call a condition callback with a stand-in for ``models`` (their fields, stored names)
    and the operators; refuse a result that is not a ``condition``."""
    result = where(FieldPath("", tuple(models)), Operators(attr))
    if not isinstance(result, condition):
        raise InvalidRequestError(
            "a condition callback returns a condition built with its operators "
            f"(lambda o, op: op.gte(o.total, 50)), not {type(result).__name__}"
        )
    return result
