"""Key conditions on native-key indexes: call keywords in, a typed KeyConditionExpression out.

A native index is keyed on the items' own attributes (up to four partition and four sort
attributes, each ``S``, ``N`` or ``B``). A Query takes equality on every partition attribute
and on the sort attributes left to right, then at most one range (``__gt/__gte/__lt/__lte/
__between``, ``__begins_with`` on ``S``) on the next one. The call keywords are the fields
(:class:`~._patterns.keywords.CallKeywords`, as for key templates); a table key attribute in
the index takes the fields of its template. Values are encoded as the fields store them, so
numbers compare as numbers. This is the second key-condition builder beside the templates'
(:mod:`.keyed`); both answer the same keywords.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .._entity_spec import EntitySpec
from .._indexes import NativeAttribute, NativeIndexSpec
from .._keys import SortCondition
from .._wire import Wire, bytes_of
from ..errors import InvalidCursor, KeyTemplateError, PatternArgumentError
from .keywords import COMPARISON_OPS, RANGE_OPS, CallKeywords, QueryCall

#: Key-condition operators of the range lookups (and of template sort conditions).
_OPERATORS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class NativeKeyPlan:
    """An entity's native-key index, as a query needs it."""

    __slots__ = ("index", "keys", "native")

    def __init__(self, index: str, native: NativeIndexSpec) -> None:
        self.index = index
        self.keys = native.keys
        self.native = native

    @property
    def cursor_attributes(self) -> frozenset[str]:
        return frozenset(self.keys.attributes)


def native_keywords(plan: NativeKeyPlan, spec: EntitySpec, params: tuple[str, ...]) -> CallKeywords:
    """The call keywords of a query on a native index: every partition field (required), the
    sort fields (optional, left to right) and their range lookups."""
    native = plan.native
    lookups: dict[str, tuple[str, str]] = {}
    listed: list[str] = []
    for attr in native.sk:
        for field in attr.fields:
            listed.append(field)
            if attr.template is not None:
                text = next(p for p in attr.template.placeholders if p.field == field).is_text
                exact = attr.template.is_rangeable(field)
                ops = RANGE_OPS if text else COMPARISON_OPS
            else:
                exact = True
                ops = RANGE_OPS if attr.kind == "S" else COMPARISON_OPS
            for op in ops:
                lookups[f"{field}__{op}"] = (field, op)
                if exact or op == "begins_with":
                    listed.append(f"{field}__{op}")
    partition = tuple(f for a in native.pk for f in a.fields)
    names = ", ".join(a.attribute for a in native.pk)
    return CallKeywords(
        partition,
        tuple(f for a in native.sk for f in a.fields),
        lookups,
        tuple(listed),
        params,
        partition_text=f"the partition of native index {plan.index!r}: {names}",
    )


def key_condition_text(plan: NativeKeyPlan) -> str:
    """explain's key condition: ``tenant_id = {tenant_id} AND region = {region} [+ status,
    created_at]`` (attribute names; placeholders name the fields)."""
    native = plan.native
    text = " AND ".join(f"{a.attribute} = {_placeholder(a)}" for a in native.pk)
    if native.sk:
        text += f" [+ {', '.join(a.attribute for a in native.sk)}]"
    return text


def _placeholder(attr: NativeAttribute) -> str:
    return attr.template.text if attr.template is not None else f"{{{attr.field}}}"


class NativeCondition:
    """One call's key condition on a native index: the expression with its placeholders, and
    what a cursor must satisfy to resume inside it."""

    __slots__ = ("binding", "names", "terms", "values")

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Wire] = {}
        self.terms: list[str] = []
        self.binding: list[tuple[str, str, tuple[Any, ...]]] = []

    def add(self, attribute: str, op: str, *wires: Wire) -> None:
        number = len(self.names)
        name = f"#k{number}"
        self.names[name] = attribute
        placeholders = []
        for wire in wires:
            placeholder = f":k{len(self.values)}"
            self.values[placeholder] = wire
            placeholders.append(placeholder)
        if op == "between":
            self.terms.append(f"{name} BETWEEN {placeholders[0]} AND {placeholders[1]}")
        elif op == "begins_with":
            self.terms.append(f"begins_with({name}, {placeholders[0]})")
        else:
            self.terms.append(f"{name} {op} {placeholders[0]}")
        self.binding.append((attribute, op, tuple(comparable(w) for w in wires)))

    @property
    def expression(self) -> str:
        return " AND ".join(self.terms)

    def check_start(self, key: Mapping[str, Wire]) -> None:
        """:class:`InvalidCursor` unless a cursor's key lies inside this condition."""
        for attribute, op, bounds in self.binding:
            wire = key.get(attribute)
            if wire is None:
                raise InvalidCursor(f"the cursor has no {attribute!r}")
            if not _holds(comparable(wire), op, bounds):
                what = "partition" if op == "=" and attribute else "key range"
                raise InvalidCursor(f"the cursor belongs to another {what} ({attribute})")


def comparable(wire: Wire) -> Any:
    """A wire value as DynamoDB orders it: numbers by value, strings by text, bytes by bytes
    (what merging and cursor checks compare)."""
    ((tag, raw),) = wire.items()
    if tag == "N":
        return Decimal(raw)
    if tag == "B":
        return bytes_of(raw)
    return raw


def _holds(value: Any, op: str, bounds: tuple[Any, ...]) -> bool:
    if type(value) is not type(bounds[0]):
        return False
    if op == "=":
        return bool(value == bounds[0])
    if op == "begins_with":
        return bool(value.startswith(bounds[0]))
    if op == "between":
        return bool(bounds[0] <= value <= bounds[1])
    return bool(
        {">": value > bounds[0], ">=": value >= bounds[0], "<": value < bounds[0]}.get(
            op, value <= bounds[0]
        )
    )


def native_condition(
    pattern: str, plan: NativeKeyPlan, spec: EntitySpec, call: QueryCall
) -> NativeCondition:
    """The key condition of a call (keywords already split and checked)."""
    condition = NativeCondition()
    for attr in plan.native.pk:
        condition.add(attr.attribute, "=", _equal_value(spec, attr, call.pk))
    lookup = call.lookup
    for attr in plan.native.sk:
        given = [f for f in attr.fields if f in call.sk]
        ranged = lookup is not None and lookup[0] in attr.fields
        if not given and not ranged:
            break  # the sort attributes from here on are not constrained
        if attr.template is not None:
            if _template_condition(spec, attr, call, condition):
                return condition
            continue
        if ranged:
            assert lookup is not None
            _range(spec, attr, lookup, condition)
            return condition
        condition.add(attr.attribute, "=", _equal_value(spec, attr, call.sk))
    return condition


def _equal_value(spec: EntitySpec, attr: NativeAttribute, values: Mapping[str, Any]) -> Wire:
    if attr.template is not None:
        coerced = {f: spec.coerce(f, values[f]) for f in attr.template.fields}
        return {"S": attr.template.render(coerced)}
    return _field_value(spec, attr, values[attr.field])  # type: ignore[index]


def _field_value(spec: EntitySpec, attr: NativeAttribute, value: Any) -> Wire:
    field = attr.field
    assert field is not None
    if value is None:
        raise KeyTemplateError(f"{spec.name}.{field} cannot be None in a key condition", key=field)
    wire = spec.encode_for_condition(field, spec.coerce(field, value))
    spec.check_native_value(field, wire)
    return wire


def _range(
    spec: EntitySpec, attr: NativeAttribute, lookup: tuple[str, str, Any], out: NativeCondition
) -> None:
    field, op, value = lookup
    if op == "between":
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise KeyTemplateError(f"{field}__between takes a (low, high) pair", key=field)
        low, high = (_field_value(spec, attr, v) for v in value)
        out.add(attr.attribute, "between", low, high)
    elif op == "begins_with":
        if not isinstance(value, str) or not value:
            raise KeyTemplateError(
                f"{field}__begins_with takes a non-empty str prefix, not {value!r}", key=field
            )
        out.add(attr.attribute, "begins_with", {"S": value})
    else:
        out.add(attr.attribute, _OPERATORS[op], _field_value(spec, attr, value))


def _template_condition(
    spec: EntitySpec, attr: NativeAttribute, call: QueryCall, out: NativeCondition
) -> bool:
    """A table key attribute in the index: its template's sort condition on the fields given
    (equality when all are). True when it is a range, which ends the key condition."""
    template = attr.template
    assert template is not None
    values = {f: spec.coerce(f, call.sk[f]) for f in template.fields if f in call.sk}
    lookup = call.lookup if call.lookup is not None and call.lookup[0] in template.fields else None
    if lookup is not None:
        field, op, value = lookup
        if op == "between":
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise KeyTemplateError(f"{field}__between takes a (low, high) pair", key=field)
            value = (spec.coerce(field, value[0]), spec.coerce(field, value[1]))
        elif not (op == "begins_with" and isinstance(value, str)):
            value = spec.coerce(field, value)
        lookup = (field, op, value)
    sort: SortCondition | None = template.sort_condition(values, lookup)
    if sort is None:
        return True
    wires = [{"S": v} for v in sort.values]
    out.add(attr.attribute, sort.op, *wires)
    return sort.op != "="


def argument_error(
    pattern: str, keywords: CallKeywords, given: Mapping[str, Any]
) -> PatternArgumentError | None:
    """The error for a missing partition keyword, or sort keywords out of order: one skips a
    sort attribute, or follows a range (DynamoDB matches sort attributes left to right:
    equalities, then one range)."""
    missing = [f for f in keywords.partition if f not in given]
    if missing:
        return PatternArgumentError(
            f"{pattern} needs {', '.join(f'{f}=' for f in missing)} ({keywords.partition_text})",
            key=missing[0],
            pattern=pattern,
            accepted=keywords.accepted,
        )
    order = keywords.sort
    position = {f: i for i, f in enumerate(order)}
    used: list[tuple[int, str, bool]] = []  # (position, keyword, is a range)
    for name in given:
        if name in position:
            used.append((position[name], name, False))
        elif name in keywords.lookups:
            used.append((position[keywords.lookups[name][0]], name, True))
    used.sort()
    expected = 0
    previous_range: str | None = None
    for place, name, ranged in used:
        if previous_range is not None:
            return PatternArgumentError(
                f"{pattern}: {name} needs {order[place - 1]}= first, not the range "
                f"{previous_range} (sort attributes are matched left to right: equalities, "
                f"then one range: {', '.join(order)})",
                key=name,
                pattern=pattern,
                accepted=keywords.accepted,
            )
        if place > expected:
            return PatternArgumentError(
                f"{pattern}: {name} needs {order[expected]}= first (sort attributes are "
                f"matched left to right: {', '.join(order)})",
                key=name,
                pattern=pattern,
                accepted=keywords.accepted,
            )
        expected = place + 1
        if ranged:
            previous_range = name
    return None
