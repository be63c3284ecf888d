"""Write shapes: expression text compiled once per shape, only the values bound per call (pure).

A write's *shape* is everything that decides the text of its expressions and its
``ExpressionAttributeNames``, and nothing that only decides ``ExpressionAttributeValues``:

* an update: the clauses it ends up writing, in order, each as its operator (``set``,
  ``set_if_not_exists``, ``append``, ``prepend``, ``remove``, ``add``, ``delete``) and the
  stored attribute or document path it writes. :class:`UpdateRecorder` stands in for
  :class:`UpdateExpression` while ``compile_update`` runs, so the shape is read off what the
  uncached compiler would write (a ``None`` that becomes a ``REMOVE``, a sparse index that loses
  its attributes, the maintained fields are all in it) and can never disagree with it;
* a condition: its tree, with each value replaced by a slot (:func:`condition_key`).

:class:`WriteShapes` holds the compiled shapes of one repository (its :class:`PlanContext`, so
the sync and async twins share it): on a later call of the same shape only the values are
encoded and placed under the placeholders the first call chose, so the request is the one the
uncached compiler builds. A ``WriteContext`` without shapes compiles every time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from .._expressions import (
    Attr,
    Between,
    Compare,
    CompileContext,
    Condition,
    ExpressionBuilder,
    Function,
    In,
    Join,
    Not,
    Param,
    Raw,
    UpdateExpression,
)
from .._wire import Wire

SHAPES = 512
"""Compiled shapes one repository keeps. An application has a handful of write shapes per
entity; a caller that builds shapes from data (a ``set=`` keyed by user input, conditions with
``is_in`` of any length) would otherwise grow the cache without bound. Past the bound the least
recently used shape is dropped (and compiled again if it comes back)."""

ValueEncoder = Callable[[str, Any], Wire]

_EMPTY_LIST = -1  # a template slot holding the empty list ``list_append`` starts from


class WriteShapes:
    """A bounded LRU of compiled shapes: key -> template, compiled on a miss.

    ``compiles`` counts the misses (shapes compiled), ``hits`` the calls that only bound
    values (exact on one thread; threads may lose a count); ``len()`` is how many shapes are
    held (at most ``limit``). Thread-safe: the repository's threads share it (a shape two
    threads miss at once is compiled by both; either template is the same).
    """

    __slots__ = ("_lock", "_shapes", "compiles", "hits", "limit")

    def __init__(self, limit: int = SHAPES) -> None:
        self.limit = limit
        self.hits = 0
        self.compiles = 0
        self._shapes: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._shapes)

    def get(self, key: Hashable, compile: Callable[[], Any]) -> Any:
        """The template of shape ``key``; ``compile()`` makes it on a miss."""
        shapes = self._shapes
        found = shapes.get(key)  # a hit takes no lock: one dict read, then the LRU order
        if found is not None:
            try:  # noqa: SIM105 (suppress() would cost a context manager on every hit)
                shapes.move_to_end(key)
            except KeyError:  # another thread dropped it meanwhile: it is still the template
                pass
            self.hits += 1
            return found
        template = compile()
        with self._lock:
            self.compiles += 1
            self._shapes[key] = template
            if len(self._shapes) > self.limit:
                self._shapes.popitem(last=False)
        return template

    # -- updates --

    def update_expression(
        self, recorder: UpdateRecorder
    ) -> tuple[str, dict[str, str], dict[str, Wire]]:
        """``(UpdateExpression, names, values)`` of what ``recorder`` holds."""
        key = ("update", tuple(recorder.clauses))
        text, names, slots = self.get(key, lambda: _update_template(recorder.clauses))
        wires = recorder.wires
        values = {
            placeholder: wires[slot] if slot != _EMPTY_LIST else {"L": []}
            for placeholder, slot in slots
        }
        return text, dict(names), values  # a copy: the request is the caller's to change

    # -- conditions --

    def condition(
        self, condition: Condition, encode: ValueEncoder
    ) -> tuple[str, dict[str, str], dict[str, Wire]]:
        """``(ConditionExpression, names, values)`` of ``condition`` (placeholders prefixed
        ``c``), the values encoded by ``encode``; a condition of no known shape (a ``Param``,
        a condition class of the caller's own) is compiled every time."""
        operands: list[tuple[str | None, Any]] = []
        key = condition_key(condition, operands)
        if key is None:
            return compile_condition_expression(condition, encode)
        text, names, placeholders = self.get(
            ("condition", key), lambda: _condition_template(condition, encode)
        )
        values = {
            placeholder: wire if path is None else encode(path, wire)
            for placeholder, (path, wire) in zip(placeholders, operands)
        }
        return text, dict(names), values  # a copy: the request is the caller's to change


def condition_expression(
    condition: Condition, encode: ValueEncoder, shapes: WriteShapes | None
) -> tuple[str, dict[str, str], dict[str, Wire]]:
    """``(ConditionExpression, names, values)`` of ``condition``: through ``shapes`` when the
    repository keeps them, else compiled."""
    if shapes is None:
        return compile_condition_expression(condition, encode)
    return shapes.condition(condition, encode)


def compile_condition_expression(
    condition: Condition, encode: ValueEncoder
) -> tuple[str, dict[str, str], dict[str, Wire]]:
    """``(ConditionExpression, names, values)`` of ``condition``, compiled (placeholders
    prefixed ``c``)."""
    builder = ExpressionBuilder("c")
    text = condition.compile(CompileContext(builder, encode))
    return text, builder.names, builder.values


def _condition_template(
    condition: Condition, encode: ValueEncoder
) -> tuple[str, dict[str, str], tuple[str, ...]]:
    text, names, values = compile_condition_expression(condition, encode)
    return text, names, tuple(values)


# -- update shapes -----------------------------------------------------------------------------


class UpdateRecorder:
    """Stands in for :class:`UpdateExpression`: records each clause as ``(operator, path)``
    (the shape) and its value (the binding), in the order they are written."""

    __slots__ = ("clauses", "wires")

    def __init__(self) -> None:
        self.clauses: list[tuple[str, str]] = []
        self.wires: list[Wire | None] = []

    def _write(self, operator: str, path: str, wire: Wire | None) -> None:
        self.clauses.append((operator, path))
        self.wires.append(wire)

    def set(self, path: str, wire: Wire) -> None:
        self._write("set", path, wire)

    def set_if_not_exists(self, path: str, wire: Wire) -> None:
        self._write("set_if_not_exists", path, wire)

    def append(self, path: str, wire: Wire) -> None:
        self._write("append", path, wire)

    def prepend(self, path: str, wire: Wire) -> None:
        self._write("prepend", path, wire)

    def remove(self, path: str) -> None:
        self._write("remove", path, None)

    def add(self, path: str, wire: Wire) -> None:
        self._write("add", path, wire)

    def delete(self, path: str, wire: Wire) -> None:
        self._write("delete", path, wire)

    def __bool__(self) -> bool:
        return bool(self.clauses)


class _Slot:
    """Where the value of recorded clause ``index`` goes (compiling a template)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _update_template(
    clauses: list[tuple[str, str]],
) -> tuple[str, dict[str, str], tuple[tuple[str, int], ...]]:
    """``(text, names, slots)``: the clauses written through a real :class:`UpdateExpression`
    (so the text and the placeholders are the uncached compiler's own), each value a
    :class:`_Slot`; ``slots`` pairs each value placeholder with its clause's index (or the
    empty list ``list_append`` needs)."""
    builder = ExpressionBuilder()
    update = UpdateExpression(builder)
    for index, (operator, path) in enumerate(clauses):
        write = getattr(update, operator)
        if operator == "remove":
            write(path)
        else:
            write(path, _Slot(index))
    slots = tuple(
        (placeholder, wire.index if isinstance(wire, _Slot) else _EMPTY_LIST)
        for placeholder, wire in builder.values.items()
    )
    return update.render(), builder.names, slots


# -- condition shapes --------------------------------------------------------------------------


class _NoShape(Exception):
    """The condition has no shape that is safe to reuse."""


def condition_key(condition: Condition, operands: list[tuple[str | None, Any]]) -> Hashable:
    """The shape of ``condition`` (its tree, operators, paths, which operands are attributes),
    or None when it has none that is safe to reuse (a ``Param``, a condition class of the
    caller's own, an empty ``is_in``: compiling says what is wrong with it).

    Appends to ``operands``, in the order compiling places them, each value as ``(path it is
    encoded for, value)``, or ``(None, wire)`` for a value that is already a wire (``Raw``).
    """
    try:
        return _key(condition, operands)
    except _NoShape:
        return None


def _key(condition: Condition, operands: list[tuple[str | None, Any]]) -> Hashable:
    kind = type(condition)
    node: Any = condition
    if kind is Compare:
        return ("cmp", node.path, node.op, _operand(node.path, node.value, operands))
    if kind is Between:
        low = _operand(node.path, node.low, operands)
        return ("between", node.path, low, _operand(node.path, node.high, operands))
    if kind is Function:
        if not node.has_value:
            return ("fn", node.function, node.path)
        path = "" if node.function == "contains" else node.path  # as Function.compile encodes
        return ("fn", node.function, node.path, _operand(path, node.value, operands))
    if kind is In:
        if isinstance(node.options, Param) or not node.options:
            raise _NoShape
        return ("in", node.path, *[_operand(node.path, v, operands) for v in node.options])
    if kind is Join:
        return ("join", node.op, *[_key(part, operands) for part in node.parts])
    if kind is Not:
        return ("not", _key(node.inner, operands))
    if kind is Raw:
        operands.extend((None, wire) for _, wire in node.values)
        return ("raw", node.text, node.names, tuple(token for token, _ in node.values))
    raise _NoShape  # a subclass may compile differently: only the library's own nodes


def _operand(path: str, value: Any, operands: list[tuple[str | None, Any]]) -> Hashable:
    """An operand's place in the shape: an attribute's path, or a value's slot."""
    if isinstance(value, Attr):
        return ("attr", value.path)
    if isinstance(value, Param):
        raise _NoShape  # compiling refuses it: a write's condition takes no call keywords
    operands.append((path, value))
    return "value"
