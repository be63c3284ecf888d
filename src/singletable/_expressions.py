"""Condition and update expressions compiled to DynamoDB expression strings.

Every attribute name and every value goes through a placeholder (``#n0``, ``:v0``), so reserved
words (``status``, ``name``, ``date``...) and odd characters in map keys always work, and no
value is ever spliced into an expression string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from ._codec import encode_value
from ._document_paths import parse_path
from ._record import FrozenRecord, Record
from ._wire import Wire
from .errors import InvalidRequestError

if TYPE_CHECKING:
    from ._conditions import ConditionFn

ValueEncoder = Callable[[str, Any], Wire]
"""Encodes the value compared with a path (``path``, value) -> wire value."""

_TOP_NAME = re.compile(r"[^.\[\]]+")


class Param(FrozenRecord):
    """A value supplied at call time: ``Attr("total").gte(Param("min_total"))`` makes
    ``min_total=`` a keyword of the pattern."""

    # Immutable (assignment raises AttributeError), equal by name, hashable.
    __slots__ = ("name",)
    _fields = ("name",)

    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)
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
        """``a.b[2].c`` -> ``#n0.#n1[2].#n2``: every name aliased (the path read by
        :func:`parse_path`, which refuses a malformed one)."""
        if path and "." not in path and "[" not in path and "]" not in path:
            return self.name(path)  # one attribute name: the common case, no parsing
        parts: list[str] = []
        for step in parse_path(path):
            if isinstance(step, int):
                parts.append(f"[{step}]")
            else:
                parts.append(("." if parts else "") + self.name(step))
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


def conjunction(expressions: Sequence[str]) -> str:
    """Compiled conditions ANDed: ``a`` alone, or ``(a) AND (b)``."""
    return expressions[0] if len(expressions) == 1 else " AND ".join(f"({e})" for e in expressions)


def add_filter(params: dict[str, Any], condition: Condition, prefix: str) -> None:
    """AND ``condition`` into request ``params``' FilterExpression (after any filter already
    there), its placeholders under ``prefix`` so they never meet the request's own."""
    builder = ExpressionBuilder(prefix)
    expression = condition.compile(CompileContext(builder))
    existing = params.get("FilterExpression")
    params["FilterExpression"] = conjunction([existing, expression]) if existing else expression
    builder.merge_into(params)


def top_field(path: str) -> str:
    """The attribute a path starts with (``a`` of ``a.b[2]``)."""
    match = _TOP_NAME.match(path)
    return match.group(0) if match else path


def _encode_by_value(_path: str, value: Any) -> Wire:
    return encode_value(value)


class CompileContext:
    """What compiling a condition needs: placeholders, value encoding, call parameters."""

    __slots__ = ("builder", "describing", "encode", "params")

    def __init__(
        self,
        builder: ExpressionBuilder,
        encode: ValueEncoder = _encode_by_value,
        params: Mapping[str, Any] | None = None,
        describing: bool = False,
    ) -> None:
        self.builder = builder
        self.encode = encode
        self.params: Mapping[str, Any] = {} if params is None else params
        self.describing = describing

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
        return self.builder.value(self.encode(path, value))


class Condition:
    """A condition expression tree; combine with ``&``, ``|`` and ``~``."""

    __slots__ = ()

    def compile(self, ctx: CompileContext) -> str:
        raise NotImplementedError

    def param_names(self) -> set[str]:
        return set()

    def attribute_paths(self) -> set[str]:
        return set()

    def __and__(self, other: Condition) -> Condition:
        return Join("AND", (self, other))

    def __or__(self, other: Condition) -> Condition:
        return Join("OR", (self, other))

    def __invert__(self) -> Condition:
        return Not(self)

    def __bool__(self) -> bool:
        # `a and b` would silently keep only b: conditions combine with & and |
        raise InvalidRequestError(
            "a condition has no truth value: combine conditions with & and | (and negate with "
            "~), not with and/or/not"
        )

    def describe(self) -> str:
        """The expression with attribute names and parameter names in place (for explain)."""
        return self.compile(CompileContext(_DescribingBuilder(), describing=True))


@overload
def condition_of(where: Condition | ConditionFn[Any], models: Iterable[type[Any]]) -> Condition: ...
@overload
def condition_of(
    where: Condition | ConditionFn[Any] | None, models: Iterable[type[Any]]
) -> Condition | None: ...
def condition_of(where: Any, models: Iterable[type[Any]]) -> Any:
    """``where`` as a :class:`Condition`: a callback (``lambda o, op: ...``) is called with a
    stand-in for ``models`` (see :mod:`singletable._conditions`, imported on first use);
    anything else is returned as it is (callers refuse what is not a condition)."""
    if where is None or isinstance(where, Condition) or not callable(where):
        return where
    from ._conditions import resolve_callback

    return resolve_callback(where, models, Attr, Condition)


class Node(Condition, Record):
    """A built-in condition: equal by value, hashable and shown like a dataclass, over the
    attributes named in ``_fields`` (in ``__init__`` order)."""

    __slots__ = ()


class Compare(Node):
    __slots__ = ("op", "path", "value")
    _fields = ("path", "op", "value")

    def __init__(self, path: str, op: str, value: Any) -> None:
        self.path = path
        self.op = op
        self.value = value

    def compile(self, ctx: CompileContext) -> str:
        return f"{ctx.builder.path(self.path)} {self.op} {ctx.operand(self.path, self.value)}"

    def param_names(self) -> set[str]:
        return {self.value.name} if isinstance(self.value, Param) else set()

    def attribute_paths(self) -> set[str]:
        return _paths(self.path, self.value)


class Between(Node):
    __slots__ = ("high", "low", "path")
    _fields = ("path", "low", "high")

    def __init__(self, path: str, low: Any, high: Any) -> None:
        self.path = path
        self.low = low
        self.high = high

    def compile(self, ctx: CompileContext) -> str:
        low = ctx.operand(self.path, self.low)
        high = ctx.operand(self.path, self.high)
        return f"{ctx.builder.path(self.path)} BETWEEN {low} AND {high}"

    def param_names(self) -> set[str]:
        return {v.name for v in (self.low, self.high) if isinstance(v, Param)}

    def attribute_paths(self) -> set[str]:
        return _paths(self.path, self.low, self.high)


class Function(Node):
    __slots__ = ("function", "has_value", "path", "value")
    _fields = ("function", "path", "value", "has_value")

    def __init__(self, function: str, path: str, value: Any = None, has_value: bool = True) -> None:
        self.function = function
        self.path = path
        self.value = value
        self.has_value = has_value

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
        return _paths(self.path, self.value)


class In(Node):
    __slots__ = ("options", "path")
    _fields = ("path", "options")

    def __init__(self, path: str, options: Any) -> None:
        self.path = path
        self.options = options  # a tuple of values, or a Param naming an iterable

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
        options = () if isinstance(self.options, Param) else self.options
        return _paths(self.path, *options)


def _paths(path: str, *operands: Any) -> set[str]:
    """The paths a condition reads: its own and those of operands that are attributes
    (``Attr("a").eq(Attr("b"))`` reads both)."""
    return {path, *(operand.path for operand in operands if isinstance(operand, Attr))}


class Join(Node):
    __slots__ = ("op", "parts")
    _fields = ("op", "parts")

    def __init__(self, op: str, parts: tuple[Condition, ...]) -> None:
        self.op = op
        self.parts = parts

    def compile(self, ctx: CompileContext) -> str:
        return f" {self.op} ".join(f"({p.compile(ctx)})" for p in self.parts)

    def param_names(self) -> set[str]:
        return set().union(*(p.param_names() for p in self.parts))

    def attribute_paths(self) -> set[str]:
        return set().union(*(p.attribute_paths() for p in self.parts))


class Not(Node):
    __slots__ = ("inner",)
    _fields = ("inner",)

    def __init__(self, inner: Condition) -> None:
        self.inner = inner

    def compile(self, ctx: CompileContext) -> str:
        return f"NOT ({self.inner.compile(ctx)})"

    def param_names(self) -> set[str]:
        return self.inner.param_names()

    def attribute_paths(self) -> set[str]:
        return self.inner.attribute_paths()


class Raw(Node):
    """A pre-built condition fragment (used internally for key and TTL checks)."""

    __slots__ = ("names", "text", "values")
    _fields = ("text", "names", "values")

    def __init__(
        self,
        text: str,
        names: tuple[tuple[str, str], ...] = (),
        values: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        self.text = text
        self.names = names
        self.values = values

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
        parse_path(path)  # refused here, naming it, when it is no document path
        self.path = path

    def __repr__(self) -> str:
        return f"Attr({self.path!r})"

    def eq(self, value: Any) -> Condition:
        return Compare(self.path, "=", value)

    def ne(self, value: Any) -> Condition:
        return Compare(self.path, "<>", value)

    def lt(self, value: Any) -> Condition:
        return Compare(self.path, "<", value)

    def lte(self, value: Any) -> Condition:
        return Compare(self.path, "<=", value)

    def gt(self, value: Any) -> Condition:
        return Compare(self.path, ">", value)

    def gte(self, value: Any) -> Condition:
        return Compare(self.path, ">=", value)

    def between(self, low: Any, high: Any) -> Condition:
        return Between(self.path, low, high)

    def begins_with(self, prefix: Any) -> Condition:
        return Function("begins_with", self.path, prefix)

    def contains(self, value: Any) -> Condition:
        return Function("contains", self.path, value)

    def exists(self) -> Condition:
        return Function("attribute_exists", self.path, has_value=False)

    def not_exists(self) -> Condition:
        return Function("attribute_not_exists", self.path, has_value=False)

    def is_in(self, *values: Any) -> Condition:
        """``is_in("A", "B")``, ``is_in(["A", "B"])`` or ``is_in(Param("statuses"))``."""
        if len(values) == 1 and isinstance(values[0], Param):
            return In(self.path, values[0])
        if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
            values = tuple(values[0])
        return In(self.path, tuple(values))


class _DescribingBuilder(ExpressionBuilder):
    """Prints attribute names instead of placeholders (for explain and lint)."""

    def name(self, attribute: str) -> str:
        return attribute

    def value(self, wire: Wire) -> str:
        ((_, raw),) = wire.items()
        return repr(raw)


# -- update expressions -----------------------------------------------------------------------


class UpdateExpression:
    """``SET``/``REMOVE``/``ADD``/``DELETE`` clauses built through one ExpressionBuilder."""

    __slots__ = ("add_clauses", "builder", "delete_clauses", "remove_clauses", "set_clauses")

    def __init__(
        self,
        builder: ExpressionBuilder,
        set_clauses: list[str] | None = None,
        remove_clauses: list[str] | None = None,
        add_clauses: list[str] | None = None,
        delete_clauses: list[str] | None = None,
    ) -> None:
        self.builder = builder
        self.set_clauses: list[str] = [] if set_clauses is None else set_clauses
        self.remove_clauses: list[str] = [] if remove_clauses is None else remove_clauses
        self.add_clauses: list[str] = [] if add_clauses is None else add_clauses
        self.delete_clauses: list[str] = [] if delete_clauses is None else delete_clauses

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

    def prepend(self, path: str, wire: Wire) -> None:
        target = self.builder.path(path)
        empty = self.builder.value({"L": []})
        self.set_clauses.append(
            f"{target} = list_append({self.builder.value(wire)}, if_not_exists({target}, {empty}))"
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
    return Join("AND", tuple(present))


def raw_condition(
    text: str, names: Mapping[str, str] | None = None, values: Mapping[str, Wire] | None = None
) -> Condition:
    """A condition from a template such as ``"attribute_not_exists(@pk)"`` (``@`` tokens are
    replaced by placeholders)."""
    return Raw(text, tuple((names or {}).items()), tuple((values or {}).items()))
