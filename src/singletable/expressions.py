"""Condition and update expressions compiled to DynamoDB expression strings.

Every attribute name and every value goes through a placeholder (``#n0``, ``:v0``), so reserved
words (``status``, ``name``, ``date``...) and odd characters in map keys always work, and no
value is ever spliced into an expression string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .codec import Wire, encode_value
from .errors import InvalidRequestError

ValueEncoder = Callable[[str, Any], Wire]
"""Encodes the value compared with a path (``top-level field name``, value) -> wire value."""

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Param:
    """A value supplied at call time: ``Attr("total").gte(Param("min_total"))`` makes
    ``min_total=`` a keyword of the pattern."""

    name: str

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise InvalidRequestError(f"Param name {self.name!r} must be an identifier")


class ExpressionBuilder:
    """Collects placeholders for one request's names and values."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.names: dict[str, str] = {}
        self.values: dict[str, Wire] = {}
        self._name_of: dict[str, str] = {}

    def name(self, attribute: str) -> str:
        """The placeholder of one attribute name (reused when the name repeats)."""
        placeholder = self._name_of.get(attribute)
        if placeholder is None:
            placeholder = f"#{self.prefix}n{len(self._name_of)}"
            self._name_of[attribute] = placeholder
            self.names[placeholder] = attribute
        return placeholder

    def path(self, path: str) -> str:
        """``a.b[2].c`` -> ``#n0.#n1[2].#n2``."""
        parts: list[str] = []
        for match in _PATH_PART.finditer(path):
            if match.group(1) is not None:
                parts.append(("." if parts else "") + self.name(match.group(1)))
            else:
                parts.append(f"[{match.group(2)}]")
        if not parts:
            raise InvalidRequestError(f"attribute path {path!r} is empty")
        return "".join(parts)

    def value(self, wire: Wire) -> str:
        placeholder = f":{self.prefix}v{len(self.values)}"
        self.values[placeholder] = wire
        return placeholder

    def merge_into(self, params: dict[str, Any]) -> None:
        """Add this builder's names and values to request ``params``."""
        if self.names:
            params.setdefault("ExpressionAttributeNames", {}).update(self.names)
        if self.values:
            params.setdefault("ExpressionAttributeValues", {}).update(self.values)


def top_field(path: str) -> str:
    match = _PATH_PART.match(path)
    return match.group(1) if match and match.group(1) else path


@dataclass(frozen=True)
class CompileContext:
    """What compiling a condition needs: placeholders, value encoding, call parameters."""

    builder: ExpressionBuilder
    encode: ValueEncoder = lambda _path, value: encode_value(value)
    params: Mapping[str, Any] = field(default_factory=dict)
    describing: bool = False

    def operand(self, path: str, value: Any) -> str:
        if self.describing:
            if isinstance(value, Param):
                return f"{{{value.name}}}"
            return value.path if isinstance(value, Attr) else repr(value)
        if isinstance(value, Param):
            if value.name not in self.params:
                raise InvalidRequestError(
                    f"this condition needs the call keyword {value.name}=", key=value.name
                )
            value = self.params[value.name]
        if isinstance(value, Attr):
            return self.builder.path(value.path)
        return self.builder.value(self.encode(top_field(path), value))


class Condition:
    """A condition expression tree; combine with ``&``, ``|`` and ``~``."""

    def compile(self, ctx: CompileContext) -> str:
        raise NotImplementedError

    def param_names(self) -> set[str]:
        return set()

    def attribute_paths(self) -> set[str]:
        return set()

    def __and__(self, other: Condition) -> Condition:
        return _Join("AND", (self, other))

    def __or__(self, other: Condition) -> Condition:
        return _Join("OR", (self, other))

    def __invert__(self) -> Condition:
        return _Not(self)

    def describe(self) -> str:
        """The expression with attribute names and parameter names in place (for explain)."""
        return self.compile(CompileContext(_DescribingBuilder(), describing=True))


@dataclass(frozen=True)
class _Compare(Condition):
    path: str
    op: str
    value: Any

    def compile(self, ctx: CompileContext) -> str:
        return f"{ctx.builder.path(self.path)} {self.op} {ctx.operand(self.path, self.value)}"

    def param_names(self) -> set[str]:
        return {self.value.name} if isinstance(self.value, Param) else set()

    def attribute_paths(self) -> set[str]:
        return {self.path}


@dataclass(frozen=True)
class _Between(Condition):
    path: str
    low: Any
    high: Any

    def compile(self, ctx: CompileContext) -> str:
        low = ctx.operand(self.path, self.low)
        high = ctx.operand(self.path, self.high)
        return f"{ctx.builder.path(self.path)} BETWEEN {low} AND {high}"

    def param_names(self) -> set[str]:
        return {v.name for v in (self.low, self.high) if isinstance(v, Param)}

    def attribute_paths(self) -> set[str]:
        return {self.path}


@dataclass(frozen=True)
class _Function(Condition):
    function: str
    path: str
    value: Any = None
    has_value: bool = True

    def compile(self, ctx: CompileContext) -> str:
        target = ctx.builder.path(self.path)
        if not self.has_value:
            return f"{self.function}({target})"
        if self.function == "contains":
            # contains(list_or_set, element): encode the element by its own type.
            operand = ctx.operand("", self.value)
        else:
            operand = ctx.operand(self.path, self.value)
        return f"{self.function}({target}, {operand})"

    def param_names(self) -> set[str]:
        return {self.value.name} if isinstance(self.value, Param) else set()

    def attribute_paths(self) -> set[str]:
        return {self.path}


@dataclass(frozen=True)
class _In(Condition):
    path: str
    options: Any  # a tuple of values, or a Param naming an iterable

    def compile(self, ctx: CompileContext) -> str:
        options = self.options
        if isinstance(options, Param):
            if ctx.describing:
                return f"{ctx.builder.path(self.path)} IN ({{{options.name}}})"
            if options.name not in ctx.params:
                raise InvalidRequestError(
                    f"this condition needs the call keyword {options.name}=", key=options.name
                )
            options = tuple(ctx.params[options.name])
        if not options:
            raise InvalidRequestError(f"is_in on {self.path!r} needs at least one value")
        if len(options) > 100:
            raise InvalidRequestError(f"is_in on {self.path!r} takes at most 100 values")
        placeholders = ", ".join(ctx.operand(self.path, v) for v in options)
        return f"{ctx.builder.path(self.path)} IN ({placeholders})"

    def param_names(self) -> set[str]:
        if isinstance(self.options, Param):
            return {self.options.name}
        return {v.name for v in self.options if isinstance(v, Param)}

    def attribute_paths(self) -> set[str]:
        return {self.path}


@dataclass(frozen=True)
class _Join(Condition):
    op: str
    parts: tuple[Condition, ...]

    def compile(self, ctx: CompileContext) -> str:
        return f" {self.op} ".join(f"({p.compile(ctx)})" for p in self.parts)

    def param_names(self) -> set[str]:
        return set().union(*(p.param_names() for p in self.parts))

    def attribute_paths(self) -> set[str]:
        return set().union(*(p.attribute_paths() for p in self.parts))


@dataclass(frozen=True)
class _Not(Condition):
    inner: Condition

    def compile(self, ctx: CompileContext) -> str:
        return f"NOT ({self.inner.compile(ctx)})"

    def param_names(self) -> set[str]:
        return self.inner.param_names()

    def attribute_paths(self) -> set[str]:
        return self.inner.attribute_paths()


@dataclass(frozen=True)
class _Raw(Condition):
    """A pre-built condition fragment (used internally for key and TTL checks)."""

    text: str
    names: tuple[tuple[str, str], ...] = ()
    values: tuple[tuple[str, Any], ...] = ()

    def compile(self, ctx: CompileContext) -> str:
        text = self.text
        for token, name in self.names:
            text = text.replace(token, ctx.builder.path(name))
        for token, wire in self.values:
            text = text.replace(token, ctx.builder.value(wire))
        return text


class Attr:
    """An attribute (or a path into maps and lists: ``Attr("address.city")``) in a condition."""

    def __init__(self, path: str) -> None:
        if not isinstance(path, str) or not path:
            raise InvalidRequestError("Attr() needs an attribute name")
        self.path = path

    def __repr__(self) -> str:
        return f"Attr({self.path!r})"

    def eq(self, value: Any) -> Condition:
        return _Compare(self.path, "=", value)

    def ne(self, value: Any) -> Condition:
        return _Compare(self.path, "<>", value)

    def lt(self, value: Any) -> Condition:
        return _Compare(self.path, "<", value)

    def lte(self, value: Any) -> Condition:
        return _Compare(self.path, "<=", value)

    def gt(self, value: Any) -> Condition:
        return _Compare(self.path, ">", value)

    def gte(self, value: Any) -> Condition:
        return _Compare(self.path, ">=", value)

    def between(self, low: Any, high: Any) -> Condition:
        return _Between(self.path, low, high)

    def begins_with(self, prefix: Any) -> Condition:
        return _Function("begins_with", self.path, prefix)

    def contains(self, value: Any) -> Condition:
        return _Function("contains", self.path, value)

    def exists(self) -> Condition:
        return _Function("attribute_exists", self.path, has_value=False)

    def not_exists(self) -> Condition:
        return _Function("attribute_not_exists", self.path, has_value=False)

    def is_in(self, *values: Any) -> Condition:
        """``is_in("A", "B")``, ``is_in(["A", "B"])`` or ``is_in(Param("statuses"))``."""
        if len(values) == 1 and isinstance(values[0], Param):
            return _In(self.path, values[0])
        if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
            values = tuple(values[0])
        return _In(self.path, tuple(values))


class _DescribingBuilder(ExpressionBuilder):
    """Prints attribute names instead of placeholders (for explain and lint)."""

    def name(self, attribute: str) -> str:
        return attribute

    def value(self, wire: Wire) -> str:
        ((_, raw),) = wire.items()
        return repr(raw)


# -- update expressions -----------------------------------------------------------------------


@dataclass
class UpdateExpression:
    """``SET``/``REMOVE``/``ADD``/``DELETE`` clauses built through one ExpressionBuilder."""

    builder: ExpressionBuilder
    set_clauses: list[str] = field(default_factory=list)
    remove_clauses: list[str] = field(default_factory=list)
    add_clauses: list[str] = field(default_factory=list)
    delete_clauses: list[str] = field(default_factory=list)

    def set(self, path: str, wire: Wire) -> None:
        self.set_clauses.append(f"{self.builder.path(path)} = {self.builder.value(wire)}")

    def set_if_not_exists(self, path: str, wire: Wire) -> None:
        target = self.builder.path(path)
        self.set_clauses.append(f"{target} = if_not_exists({target}, {self.builder.value(wire)})")

    def append(self, path: str, wire: Wire) -> None:
        target = self.builder.path(path)
        empty = self.builder.value({"L": []})
        self.set_clauses.append(
            f"{target} = list_append(if_not_exists({target}, {empty}), {self.builder.value(wire)})"
        )

    def remove(self, path: str) -> None:
        self.remove_clauses.append(self.builder.path(path))

    def add(self, path: str, wire: Wire) -> None:
        self.add_clauses.append(f"{self.builder.path(path)} {self.builder.value(wire)}")

    def delete(self, path: str, wire: Wire) -> None:
        self.delete_clauses.append(f"{self.builder.path(path)} {self.builder.value(wire)}")

    def render(self) -> str:
        parts = []
        for keyword, clauses in (
            ("SET", self.set_clauses),
            ("REMOVE", self.remove_clauses),
            ("ADD", self.add_clauses),
            ("DELETE", self.delete_clauses),
        ):
            if clauses:
                parts.append(f"{keyword} {', '.join(clauses)}")
        return " ".join(parts)

    def __bool__(self) -> bool:
        return bool(
            self.set_clauses or self.remove_clauses or self.add_clauses or self.delete_clauses
        )


def all_of(conditions: Iterable[Condition | None]) -> Condition | None:
    """AND of the given conditions (None entries skipped)."""
    present = [c for c in conditions if c is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return _Join("AND", tuple(present))


def raw_condition(
    text: str, names: Mapping[str, str] | None = None, values: Mapping[str, Wire] | None = None
) -> Condition:
    """A condition from a template such as ``"attribute_not_exists(@pk)"`` (``@`` tokens are
    replaced by placeholders)."""
    return _Raw(text, tuple((names or {}).items()), tuple((values or {}).items()))
