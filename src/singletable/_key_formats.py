"""Key value formats: how each kind of key field (text, int, Decimal, date, datetime, UUID) is
written into a key and read back.

:func:`key_type_of` classifies a field's annotation as a :class:`KeyKind`. :data:`FORMATS` has
one builder per kind that checks a placeholder's ``{field:format}`` and returns a
:class:`KeyFormat`: the unchecked renderer, the parser, whether every rendering has the same
width (then range lookups on it are exact), and the extreme values whose renderings bound it.
Numbers render canonically (:func:`canonical_decimal`) or, in sort keys, as order-preserving
text (:func:`render_sortable`) or zero-padded; datetimes as the canonical UTC text of wire.py or
a strftime format; dates as ISO or a strftime format.

keys.py wraps these renderers with the checks every key value gets (empty, delimiter, lone
surrogates, the reserved sentinel) and builds templates from them.
"""

from __future__ import annotations

import enum
import re
import types
import typing
import uuid
from collections.abc import Callable
from datetime import date, datetime
from decimal import Context, Decimal
from typing import Any, Literal, Union

from ._record import Record
from ._wire import UTC, parse_datetime, render_datetime
from .errors import KeyDefinitionError

# Enough precision for any DynamoDB number (38 significant digits): the default context's 28
# would round, and two different numbers could render to one key.
_EXACT = Context(prec=60, Emax=999, Emin=-999)
_PADDED = re.compile(r"^0(\d+)d$")
_STRFTIME_DIRECTIVE = re.compile(r"%(.)")
# Directives whose rendered width never varies, in decreasing significance.
_STRFTIME_ORDER = "YmdHMSf"
_DIGITS_COMPLEMENT = str.maketrans("0123456789", "9876543210")
_LARGEST = Decimal("9" * 38 + "E+88")  # 9.99...E125, DynamoDB's largest number
# (copy_negate: unary minus would round it to the context's 28 digits)
_NUMBER_EXTREMES = (_LARGEST.copy_negate(), _LARGEST)


class KeyKind(enum.Enum):
    """The kinds of value a key template can hold, each with its own formats."""

    STR = "str"
    INT = "int"
    DECIMAL = "decimal"
    DATE = "date"
    DATETIME = "datetime"
    UUID = "uuid"


class FieldKeyType(Record):
    """What a template needs to know about a field's type."""

    # Treated as immutable (not enforced); equal by value, hashable.
    __slots__ = ("enum_type", "kind", "optional")
    _fields = ("kind", "optional", "enum_type")

    def __init__(
        self, kind: KeyKind, optional: bool = False, enum_type: type[enum.Enum] | None = None
    ) -> None:
        self.kind = kind
        self.optional = optional
        self.enum_type = enum_type

    @property
    def label(self) -> str:
        if self.enum_type is not None:
            return self.enum_type.__name__
        return self.kind.value


def key_type_of(annotation: Any, *, owner: str = "", field: str = "") -> FieldKeyType:
    """Classify a field annotation for use in a key template (definition-time checks)."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return key_type_of(typing.get_args(annotation)[0], owner=owner, field=field)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            raise KeyDefinitionError(
                f"{owner}.{field}: a union type cannot appear in a key template; "
                "give the field one type"
            )
        inner = key_type_of(args[0], owner=owner, field=field)
        return FieldKeyType(inner.kind, True, inner.enum_type)
    if origin is Literal:
        values = typing.get_args(annotation)
        if all(isinstance(v, str) for v in values):
            return FieldKeyType(KeyKind.STR, optional)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return FieldKeyType(KeyKind.INT, optional)
        raise KeyDefinitionError(
            f"{owner}.{field}: Literal values in a key template must be all str or all int"
        )
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            raise KeyDefinitionError(
                f"{owner}.{field}: bool fields cannot appear in key templates "
                "(use a str Enum or Literal['yes', 'no'] instead)"
            )
        if issubclass(annotation, enum.Enum):
            members = [m.value for m in annotation]
            if all(isinstance(v, str) for v in members):
                return FieldKeyType(KeyKind.STR, optional, annotation)
            if all(isinstance(v, int) and not isinstance(v, bool) for v in members):
                return FieldKeyType(KeyKind.INT, optional, annotation)
            raise KeyDefinitionError(
                f"{owner}.{field}: Enum {annotation.__name__} in a key template needs all-str "
                "or all-int values"
            )
        if issubclass(annotation, float):
            raise KeyDefinitionError(
                f"{owner}.{field}: float fields cannot appear in key templates (two floats that "
                "print alike may differ); use Decimal with {field:sortable} or int"
            )
        if issubclass(annotation, str):
            return FieldKeyType(KeyKind.STR, optional)
        if issubclass(annotation, datetime):
            return FieldKeyType(KeyKind.DATETIME, optional)
        if issubclass(annotation, date):
            return FieldKeyType(KeyKind.DATE, optional)
        if issubclass(annotation, int):
            return FieldKeyType(KeyKind.INT, optional)
        if issubclass(annotation, Decimal):
            return FieldKeyType(KeyKind.DECIMAL, optional)
        if issubclass(annotation, uuid.UUID):
            return FieldKeyType(KeyKind.UUID, optional)
    raise KeyDefinitionError(
        f"{owner}.{field}: type {annotation!r} cannot appear in a key template; key fields "
        "must be str, int, Decimal, date, datetime, UUID, Enum or Literal"
    )


# -- canonical value renderers ----------------------------------------------------------------


def finite_domain(annotation: Any) -> tuple[Any, ...] | None:
    """Every value a key field of this annotation can hold, when that is a known, finite set:
    an ``Enum``'s members or a ``Literal``'s values (``Optional`` stripped: a ``None`` field
    holds no key); None for anything else (``bool`` included, which no key may hold)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return finite_domain(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return finite_domain(args[0]) if len(args) == 1 else None
    if origin is Literal:
        return tuple(dict.fromkeys(typing.get_args(annotation)))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return tuple(annotation)
    return None


def canonical_decimal(value: Decimal | int) -> str:
    """Plain, normalised decimal text: equal numbers render alike (``1.50`` and ``1.5``)."""
    if isinstance(value, int):
        return str(value)
    if not value.is_finite():
        raise ValueError("not a finite number")
    if value == 0:
        return "0"
    return format(value.normalize(_EXACT), "f")


def render_sortable(value: Decimal | int) -> str:
    """Order-preserving text for any DynamoDB number, negatives and fractions included.

    ``1`` = zero; ``2`` + exponent (3 digits) + digits + ``.`` = positive; ``0`` + complemented
    exponent + complemented digits + ``~`` = negative. The terminators make the code prefix-free,
    so comparisons are decided inside the code whatever text follows it.
    """
    dec = Decimal(value) if isinstance(value, int) else value
    if not dec.is_finite():
        raise ValueError("not a finite number")
    if dec == 0:
        return "1"
    sign, digits_t, _ = dec.as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    adjusted = dec.adjusted()
    if not -130 <= adjusted <= 125:
        raise ValueError("magnitude outside DynamoDB's number range (1E-130 to 9.99E+125)")
    if sign == 0:
        return f"2{adjusted + 500:03d}{digits}."
    return f"0{499 - adjusted:03d}{digits.translate(_DIGITS_COMPLEMENT)}~"


def parse_sortable(text: str) -> Decimal:
    """The number :func:`render_sortable` rendered."""
    if text == "1":
        return Decimal(0)
    if len(text) < 6 or text[0] not in "02" or text[-1] not in ".~":
        raise ValueError(f"{text!r} is not a sortable number")
    if text[0] == "2":
        if text[-1] != ".":
            raise ValueError(f"{text!r} is not a sortable number")
        adjusted = int(text[1:4]) - 500
        digits = text[4:-1]
        sign = ""
    else:
        if text[-1] != "~":
            raise ValueError(f"{text!r} is not a sortable number")
        adjusted = 499 - int(text[1:4])
        digits = text[4:-1].translate(_DIGITS_COMPLEMENT)
        sign = "-"
    if not digits.isdigit():
        raise ValueError(f"{text!r} is not a sortable number")
    number = Decimal(f"{sign}{digits[0]}.{digits[1:] or '0'}E{adjusted}").normalize(_EXACT)
    return Decimal(format(number, "f"))


def strftime_full_year(value: date, fmt: str) -> str:
    """``strftime`` with ``%Y`` always four digits (glibc prints year 999 as ``999``)."""
    parts = fmt.split("%%")
    year = f"{value.year:04d}"
    return "%".join(str(value.strftime(p.replace("%Y", year))) for p in parts)


def strftime_is_sortable(fmt: str) -> bool:
    """``fmt`` renders fixed-width text that sorts like the dates (%Y down, without a gap)."""
    directives = _STRFTIME_DIRECTIVE.findall(fmt.replace("%%", ""))
    if not directives or any(d not in _STRFTIME_ORDER for d in directives):
        return False
    positions = [_STRFTIME_ORDER.index(d) for d in directives]
    # From the year down without a gap: "%Y-%d" would sort 2026-05 (the 5th) before 2026-01-06.
    return positions == list(range(len(positions)))


# -- formats per kind ---------------------------------------------------------------------------


class KeyFormat:
    """How one placeholder's values are written: ``render`` (unchecked: keys.py adds the checks
    every key value gets), ``parse``, ``fixed_width`` (every rendering has the same width), and
    ``extremes``, the lowest and highest value, when rendering them bounds every rendering."""

    # Treated as immutable (not enforced).
    __slots__ = ("extremes", "fixed_width", "parse", "render")

    def __init__(
        self,
        render: Callable[[Any], str],
        parse: Callable[[str], Any],
        fixed_width: bool = False,
        extremes: tuple[Any, Any] | None = None,
    ) -> None:
        self.render = render
        self.parse = parse
        self.fixed_width = fixed_width
        self.extremes = extremes

    def extent(self) -> tuple[str, str] | None:
        """The first and last rendering of a fixed-width format (range lookups with no literal
        prefix stay inside it, so a bound never reaches another entity type's keys)."""
        if not self.fixed_width or self.extremes is None:
            return None
        low, high = self.extremes
        try:
            return self.render(low), self.render(high)
        except (ValueError, OverflowError, ArithmeticError):
            return None

    def of_enum(self, enum_type: type[enum.Enum]) -> KeyFormat:
        """The same format for an Enum field: members render by value and parse back to members."""
        render, parse = self.render, self.parse

        def render_member(value: Any) -> str:
            return render(value._value_ if isinstance(value, enum.Enum) else value)

        def parse_member(text: str) -> Any:
            return enum_type(parse(text))

        return KeyFormat(render_member, parse_member, self.fixed_width, self.extremes)


class FormatRequest:
    """A placeholder asking for a format: ``{field:fmt}`` in a sort key or not, and where it is
    (for the messages of :meth:`refuse`)."""

    __slots__ = ("field", "fmt", "sort_key", "where")

    def __init__(self, field: str, fmt: str | None, sort_key: bool, where: str) -> None:
        self.field = field
        self.fmt = fmt
        self.sort_key = sort_key
        self.where = where

    def refuse(self, why: str) -> KeyDefinitionError:
        return KeyDefinitionError(f"{self.where}: {why}")


def _numbers(request: FormatRequest, as_number: Callable[[str], Any], padded: bool) -> KeyFormat:
    field, fmt = request.field, request.fmt
    if fmt is None:
        if request.sort_key:
            raise request.refuse(
                f"{{{field}}} is a number in a sort key and would sort as text ('9' > '1000'); "
                f"write {{{field}:sortable}} or a zero-padded {{{field}:08d}}"
            )
        return KeyFormat(canonical_decimal, as_number)
    if fmt == "sortable":
        if as_number is int:

            def parse(text: str) -> Any:
                return int(parse_sortable(text))

            return KeyFormat(render_sortable, parse, True, _NUMBER_EXTREMES)
        return KeyFormat(render_sortable, parse_sortable, True, _NUMBER_EXTREMES)
    if padded and (m := _PADDED.match(fmt)) is not None:
        width = int(m.group(1))

        def render(value: Any) -> str:
            if value < 0:
                raise ValueError(f"negative value cannot be zero-padded ({fmt})")
            text = format(value, fmt)
            if len(text) > width:
                raise ValueError(f"wider than the {width} digits of {{:{fmt}}}")
            return text

        return KeyFormat(render, int, True, (0, 10**width - 1))
    raise request.refuse(
        f"format {fmt!r} on {{{field}}}: numbers take 'sortable'"
        + (" or a zero-padded width such as '08d'" if padded else "")
    )


def _integers(request: FormatRequest) -> KeyFormat:
    return _numbers(request, int, padded=True)


def _decimals(request: FormatRequest) -> KeyFormat:
    return _numbers(request, Decimal, padded=False)


def _strftime_format(request: FormatRequest, directives: str) -> tuple[str, bool]:
    """A strftime format checked for a sort key; whether it is fixed-width."""
    fmt = request.fmt
    assert fmt is not None
    sortable = strftime_is_sortable(fmt)
    if request.sort_key and not sortable:
        raise request.refuse(
            f"format {fmt!r} on {{{request.field}}} does not sort like the dates it renders; "
            f"use directives {directives} in that order"
        )
    return fmt, sortable


_DATETIME_EXTREMES = (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC))
_DATE_EXTREMES = (date.min, date.max)


def _datetimes(request: FormatRequest) -> KeyFormat:
    if request.fmt is None:
        return KeyFormat(render_datetime, parse_datetime, True, _DATETIME_EXTREMES)
    if "%" not in request.fmt:
        raise request.refuse(
            f"format {request.fmt!r} on {{{request.field}}}: datetimes take strftime formats "
            "such as '%Y-%m-%d'"
        )
    fmt, fixed = _strftime_format(request, "from %Y down to %f")

    def render(value: Any) -> str:
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("naive datetime (no timezone)")
        return strftime_full_year(value.astimezone(UTC), fmt)

    def parse(text: str) -> Any:
        return datetime.strptime(text, fmt).replace(tzinfo=UTC)

    return KeyFormat(render, parse, fixed, _DATETIME_EXTREMES)


def _dates(request: FormatRequest) -> KeyFormat:
    if request.fmt is None:
        return KeyFormat(date.isoformat, date.fromisoformat, True, _DATE_EXTREMES)
    if "%" not in request.fmt:
        raise request.refuse(f"format {request.fmt!r} on {{{request.field}}} is not valid")
    fmt, fixed = _strftime_format(request, "from %Y down")

    def render(value: Any) -> str:
        return strftime_full_year(value, fmt)

    def parse(text: str) -> Any:
        return datetime.strptime(text, fmt).date()

    return KeyFormat(render, parse, fixed, _DATE_EXTREMES)


def _uuids(request: FormatRequest) -> KeyFormat:
    if request.fmt is not None:
        raise request.refuse(f"{{{request.field}}} (UUID) takes no format")
    return KeyFormat(str, uuid.UUID, True, (uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)))


def _texts(request: FormatRequest) -> KeyFormat:
    if request.fmt is not None:
        raise request.refuse(
            f"{{{request.field}}} is text and takes no format (keys are stored as given, never "
            "re-cased)"
        )
    return KeyFormat(str, str)


#: The format builder of each kind of key value.
FORMATS: dict[KeyKind, Callable[[FormatRequest], KeyFormat]] = {
    KeyKind.STR: _texts,
    KeyKind.INT: _integers,
    KeyKind.DECIMAL: _decimals,
    KeyKind.DATE: _dates,
    KeyKind.DATETIME: _datetimes,
    KeyKind.UUID: _uuids,
}


def key_format(
    ktype: FieldKeyType, fmt: str | None, *, sort_key: bool, field: str, where: str
) -> KeyFormat:
    """The format of placeholder ``{field:fmt}`` for a field of type ``ktype``;
    :class:`KeyDefinitionError` (naming ``where``) when the kind does not take ``fmt``."""
    form = FORMATS[ktype.kind](FormatRequest(field, fmt, sort_key, where))
    if ktype.enum_type is not None:
        form = form.of_enum(ktype.enum_type)
    return form
