"""Per-field converters between Python values and DynamoDB's wire format.

Converters are built once per field from its annotation (at class creation), so encoding and
decoding run one specialised function per attribute: no generic per-value dispatch and no
``TypeSerializer`` on the hot path. Values go to pydantic for validation afterwards; nothing
passes through ``model_dump(mode="json")``, which would store ``SecretStr`` as stars.

Strings must be Unicode text: one holding a lone surrogate (``"\ud800"``, which pydantic accepts)
has no UTF-8 form and is refused while encoding, naming the field. The generated encoders only
test ``str.isascii()`` (constant time) and leave the rest to the field-by-field path.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import math
import re
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from operator import itemgetter
from pathlib import PurePath
from typing import Any, Literal, Union

from pydantic import BaseModel, SecretBytes, SecretStr

from .errors import ItemEncodeError
from .keys import LONE_SURROGATE, is_text, render_datetime

UTC = timezone.utc
MAX_ITEM_BYTES = 409_600

Wire = dict[str, Any]
Encoder = Callable[[Any], Wire | None]
Decoder = Callable[[Wire], Any]

_MAX_INT = 10**38


# -- numbers ----------------------------------------------------------------------------------


def number_text(value: int | Decimal | float) -> str:
    """DynamoDB ``N`` text, checked against its limits (38 digits, 1E-130 to below 1E126)."""
    if type(value) is int:
        if -_MAX_INT < value < _MAX_INT:
            return str(value)
        value = Decimal(value)
    elif isinstance(value, bool):
        raise ValueError("bool is not a number here")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be stored (DynamoDB numbers are finite)")
        value = Decimal(repr(value))
    elif isinstance(value, int):
        value = Decimal(int(value))
    if not isinstance(value, Decimal):
        raise TypeError(f"{type(value).__name__} is not a number")
    text = str(value)
    if len(text) < 39 and "E" not in text and value.is_finite():
        return text  # at most 38 digits, exponent within -6..38: always storable
    if not value.is_finite():
        raise ValueError(f"{value!r} cannot be stored (DynamoDB numbers are finite)")
    if value == 0:
        return "0"
    digits = value.as_tuple().digits
    significant = len(digits)
    while significant > 1 and digits[significant - 1] == 0:
        significant -= 1
    if significant > 38:
        raise ValueError(f"{value} has {significant} significant digits (DynamoDB keeps 38)")
    adjusted = value.adjusted()
    if adjusted < -130 or adjusted > 125:
        raise ValueError(f"{value} is outside DynamoDB's range (1E-130 to below 1E126)")
    text = str(value)
    if "E" in text:
        text = format(value, "f")
    return text


def decimal_text(value: Decimal) -> str:
    """``number_text`` for Decimals, fast when the plain text is obviously storable."""
    if value.__class__ is Decimal:
        text = str(value)
        # At most 38 characters, no exponent, ending in a digit (not NaN/Infinity): storable.
        if len(text) < 39 and "E" not in text and text[-1] in "0123456789":
            return text
    return number_text(value)


class NumberRangeError(ValueError):
    """A stored number DynamoDB cannot hold (NaN, infinite, more than 38 significant digits,
    a magnitude outside 1E-130 to below 1E126). Such text comes from other writers or lax
    backends; converting it blindly can take unbounded time (``int(Decimal("1E999999999"))``),
    so it is refused before any conversion. ``path`` is the field (and nested fields) it is in.
    """

    def __init__(self, why: str, path: tuple[str, ...] = ()) -> None:
        super().__init__(why)
        self.why = why
        self.path = path

    def within(self, name: str) -> NumberRangeError:
        return NumberRangeError(self.why, (name, *self.path))


def wire_number(text: str) -> Decimal:
    """The exact value of stored number text; :class:`NumberRangeError` unless DynamoDB could
    hold it, ``ValueError`` unless it is number text. The reasons never quote the text."""
    try:
        number = Decimal(text)
    except (ArithmeticError, TypeError):
        raise ValueError("a stored number is not number text") from None
    if not number.is_finite():
        raise NumberRangeError("a stored number is not finite (DynamoDB numbers are)")
    if number and not -130 <= number.adjusted() <= 125:
        raise NumberRangeError(
            "a stored number is outside DynamoDB's range (1E-130 to below 1E126)"
        )
    if len(text) > 38:  # shorter text cannot hold more than 38 digits
        significant = len(bytes(number.as_tuple().digits).rstrip(b"\0"))
        if significant > 38:
            raise NumberRangeError(
                f"a stored number has {significant:,} significant digits (DynamoDB keeps 38)"
            )
    return number


# Decoding expressions. Text under 39 characters holds at most 38 digits, so a finite value
# whose exponent is in range is storable: the common case costs a length test, the conversion
# and two checks of the Decimal. Anything else goes through ``wire_number``.
_INT_DECODE = "int(num) if len(num := av['N']) < 39 else _int_from_wire(num)"
_IN_RANGE = "(dec := _Decimal(num)).is_finite() and -131 < dec.adjusted() < 126"
_FLOAT_DECODE = f"float(num) if len(num := av['N']) < 39 and {_IN_RANGE} else _float_from_wire(num)"
_DECIMAL_DECODE = f"dec if len(num := av['N']) < 39 and {_IN_RANGE} else _decimal_from_wire(num)"


def _int_from_wire(text: str) -> int:
    if len(text) < 39:  # at most 38 digits: int() is cheap and the value storable
        try:
            return int(text)
        except ValueError:
            pass
    number = wire_number(text)
    if number != number.to_integral_value():
        raise ValueError("a stored number is not an integer")
    return int(number)


def _float_from_wire(text: str) -> float:
    wire_number(text)
    return float(text)


_decimal_from_wire = wire_number


def _number_from_wire(text: str) -> int | Decimal:
    """A number of unknown declared type: int when integral, else Decimal."""
    integral = text.isdigit() or (text[:1] == "-" and text[1:].isdigit())
    if integral and len(text) < 39:
        return int(text)
    number = wire_number(text)
    return int(number) if integral else number


# -- datetimes --------------------------------------------------------------------------------


def datetime_text(value: datetime) -> str:
    """Aware datetimes in canonical UTC (``…Z``, 27 chars, sortable); naive ones as given."""
    if value.utcoffset() is None:
        return value.isoformat(timespec="microseconds")
    return render_datetime(value)


def epoch_text(value: datetime) -> str:
    """A TTL value: whole epoch seconds of an aware datetime."""
    if value.utcoffset() is None:
        raise ValueError("a TTL datetime needs a timezone")
    return str(int(value.timestamp()))


def epoch_seconds(value: datetime) -> int:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("a TTL datetime needs a timezone")
    return int(value.timestamp())


def from_epoch_seconds(text: str) -> datetime:
    return datetime.fromtimestamp(int(wire_number(text)), UTC)


# -- dynamic (annotation-free) conversion ------------------------------------------------------


def encode_value(value: Any) -> Wire:
    """Wire form of any supported Python value (for ``Any`` fields, extras, conditions)."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, str):
        if not is_text(value):
            raise ValueError(f"it holds {LONE_SURROGATE}")
        return {"S": value}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, (int, float, Decimal)):
        return {"N": number_text(value)}
    if isinstance(value, enum.Enum):
        return encode_value(value.value)
    if isinstance(value, datetime):
        return {"S": datetime_text(value)}
    if isinstance(value, (date, time)):
        return {"S": value.isoformat()}
    if isinstance(value, (uuid.UUID, PurePath)):
        return {"S": str(value)}
    if isinstance(value, timedelta):
        return {"N": number_text(Decimal(str(value.total_seconds())))}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"B": bytes(value)}
    if isinstance(value, SecretStr):
        return {"S": value.get_secret_value()}
    if isinstance(value, SecretBytes):
        return {"B": value.get_secret_value()}
    if isinstance(value, BaseModel):
        return nested_codec(type(value)).encode(value)
    if isinstance(value, Mapping):
        return {"M": {_map_key(k): encode_value(v) for k, v in value.items()}}
    if isinstance(value, (set, frozenset)):
        return _encode_set(value)
    if isinstance(value, (list, tuple)):
        return {"L": [encode_value(v) for v in value]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode_value({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if type(value).__module__ == "pydantic_core._pydantic_core" or hasattr(value, "unicode_string"):
        return {"S": str(value)}  # pydantic Url and friends
    raise TypeError(f"values of type {type(value).__name__} cannot be stored")


def _map_key(key: Any) -> str:
    if isinstance(key, enum.Enum):
        key = key.value
    if isinstance(key, str):
        if not is_text(key):
            raise ValueError(f"a map key holds {LONE_SURROGATE}")
        return key
    if isinstance(key, (int, Decimal, uuid.UUID, date)) and not isinstance(key, bool):
        return str(key)
    raise TypeError(f"map keys must be strings, not {type(key).__name__}")


def _encode_set(value: set[Any] | frozenset[Any]) -> Wire:
    if not value:
        raise TypeError("empty sets cannot be stored (the field is omitted instead)")
    items = [v.value if isinstance(v, enum.Enum) else v for v in value]
    if all(isinstance(v, str) for v in items):
        if not is_text("".join(items)):
            raise ValueError(f"a set member holds {LONE_SURROGATE}")
        return {"SS": sorted(items)}
    if all(isinstance(v, (bytes, bytearray)) for v in items):
        return {"BS": sorted(bytes(v) for v in items)}
    if all(isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in items):
        return {"NS": sorted((number_text(v) for v in items), key=Decimal)}
    raise TypeError("a set must hold only strings, only numbers or only bytes")


def decode_value(av: Wire) -> Any:
    """Python value of any wire attribute value (sets as ``set``, numbers as int or Decimal)."""
    ((tag, raw),) = av.items()
    if tag == "S":
        return raw
    if tag == "N":
        return _number_from_wire(raw)
    if tag == "BOOL":
        return raw
    if tag == "NULL":
        return None
    if tag == "M":
        return {k: decode_value(v) for k, v in raw.items()}
    if tag == "L":
        return [decode_value(v) for v in raw]
    if tag == "SS":
        return set(raw)
    if tag == "NS":
        return {_number_from_wire(v) for v in raw}
    if tag == "B":
        return _bytes(raw)
    if tag == "BS":
        return {_bytes(v) for v in raw}
    raise ValueError(f"unknown attribute type {tag!r}")


def _bytes(raw: Any) -> bytes:
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw)
    return base64.b64decode(raw)


# -- per-annotation compiled converters -------------------------------------------------------


class Converter:
    """Encoder/decoder pair for one annotation; ``wire_tag`` is the scalar tag when fixed.

    ``encode_expr``/``decode_expr`` are the same conversions as Python expressions over ``v``
    (the value) and ``av`` (the attribute value), which the code generator inlines.
    ``may_omit`` says the encoder can return None (an empty set is left out).
    """

    # Treated as immutable (not enforced); compared by identity (``is _DYNAMIC``).
    __slots__ = (
        "decode",
        "decode_expr",
        "encode",
        "encode_expr",
        "max_size",
        "may_omit",
        "nested",
        "size_expr",
        "wire_tag",
    )

    def __init__(
        self,
        encode: Encoder,
        decode: Decoder,
        wire_tag: str | None = None,
        encode_expr: str | None = None,
        decode_expr: str | None = None,
        may_omit: bool = False,
        max_size: int | None = None,  # bytes of any encoded value, when bounded
        size_expr: str | None = None,  # an upper bound of the encoded ``av``'s size
        nested: ModelCodec | None = None,  # a pydantic model stored as a map
    ) -> None:
        self.encode = encode
        self.decode = decode
        self.wire_tag = wire_tag
        self.encode_expr = encode_expr
        self.decode_expr = decode_expr
        self.may_omit = may_omit
        self.max_size = max_size
        self.size_expr = size_expr
        self.nested = nested


def _scalar(
    tag: str,
    to_wire: Callable[[Any], Any],
    from_wire: Callable[[Any], Any],
    encode_expr: str | None = None,
    decode_expr: str | None = None,
    max_size: int | None = None,
) -> Converter:
    getter = itemgetter(tag)
    if decode_expr is None and from_wire is _identity:
        decode_expr = f"av[{tag!r}]"
    if max_size is None and tag in ("N", "BOOL"):
        max_size = 21 if tag == "N" else 1
    if from_wire is _identity:
        return Converter(
            lambda v: {tag: to_wire(v)}, getter, tag, encode_expr, decode_expr, False, max_size
        )

    def decode(av: Wire) -> Any:
        return from_wire(av[tag])

    return Converter(
        lambda v: {tag: to_wire(v)}, decode, tag, encode_expr, decode_expr, False, max_size
    )


def _identity(value: Any) -> Any:
    return value


def _str_of_enum(value: Any) -> Any:
    return value._value_ if isinstance(value, enum.Enum) else value


_DYNAMIC = Converter(encode_value, decode_value)


def bare_annotation(annotation: Any) -> Any:
    """``annotation`` without ``Annotated[...]`` metadata and without ``Optional``
    (``X | None`` is ``X``; a union of several types stays as it is)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return bare_annotation(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return bare_annotation(members[0])
    return annotation


def converter_for(annotation: Any, *, where: str = "") -> Converter:
    """A compiled converter for a field annotation (``Optional`` is handled by the caller)."""
    annotation = bare_annotation(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any or annotation is object or origin in (Union, types.UnionType):
        return _DYNAMIC
    if origin is Literal:
        if all(isinstance(v, str) for v in args):
            longest = max(len(v.encode()) for v in args)
            return _scalar("S", _str_of_enum, _identity, _ENUM_S, max_size=longest)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in args):
            return _scalar("N", number_text, _int_from_wire, _NUMBER, _INT_DECODE)
        if all(isinstance(v, bool) for v in args):
            return _scalar("BOOL", _identity, _identity)
        return _DYNAMIC
    if origin in (list, tuple, typing.Sequence, typing.MutableSequence) or (
        isinstance(origin, type) and origin.__name__ == "deque"
    ):
        return _list_converter(args, where)
    if origin in (set, frozenset, typing.AbstractSet, typing.MutableSet):
        return _set_converter(args[0] if args else Any, where)
    if origin in (dict, typing.Mapping, typing.MutableMapping):
        return _map_converter(args[1] if len(args) == 2 else Any, where)
    if isinstance(annotation, type):
        return _class_converter(annotation, where)
    return _DYNAMIC


_ENUM_S = "{'S': v if v.__class__ is str else v._value_}"
_NUMBER = "{'N': _number_text(v)}"
# Common values written without a call: small ints and plain Decimals are always storable.
_INT = "{'N': str(v) if v.__class__ is int and -_MAX_INT < v < _MAX_INT else _number_text(v)}"
_DECIMAL = "{'N': _decimal_text(v)}"


def _class_converter(cls: type, where: str) -> Converter:
    if issubclass(cls, bool):
        return _scalar("BOOL", _identity, _identity, "{'BOOL': v}")
    if issubclass(cls, enum.Enum):
        values = [m.value for m in cls]
        if all(isinstance(v, str) for v in values):
            longest = max((len(v.encode()) for v in values), default=0)
            return _scalar("S", _str_of_enum, _identity, _ENUM_S, max_size=longest)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return _scalar("N", lambda v: number_text(_str_of_enum(v)), _int_from_wire)
        return _DYNAMIC
    if issubclass(cls, str):
        return _scalar("S", _identity, _identity, "{'S': v}")
    if issubclass(cls, int):
        return _scalar("N", number_text, _int_from_wire, _INT, _INT_DECODE)
    if issubclass(cls, float):
        return _scalar("N", number_text, _float_from_wire, _NUMBER, _FLOAT_DECODE)
    if issubclass(cls, Decimal):
        return _scalar("N", number_text, _decimal_from_wire, _DECIMAL, _DECIMAL_DECODE)
    if issubclass(cls, datetime):
        return _scalar("S", datetime_text, _identity, "{'S': _datetime_text(v)}", max_size=32)
    if issubclass(cls, (date, time)):
        return _scalar("S", lambda v: v.isoformat(), _identity, "{'S': v.isoformat()}", max_size=32)
    if issubclass(cls, uuid.UUID):
        return _scalar("S", str, _identity, "{'S': str(v)}", max_size=36)
    if issubclass(cls, PurePath):
        return _scalar("S", str, _identity, "{'S': str(v)}")
    if issubclass(cls, timedelta):
        return _scalar(
            "N", lambda v: number_text(Decimal(str(v.total_seconds()))), _decimal_from_wire
        )
    if issubclass(cls, (bytes, bytearray)):
        return _scalar("B", bytes, _bytes)
    if issubclass(cls, SecretStr):
        return _scalar("S", lambda v: v.get_secret_value(), _identity)
    if issubclass(cls, SecretBytes):
        return _scalar("B", lambda v: v.get_secret_value(), _bytes)
    if issubclass(cls, BaseModel):
        codec = nested_codec(cls)
        return Converter(codec.encode, codec.decode_input, "M", nested=codec)
    return _DYNAMIC


def _list_converter(args: tuple[Any, ...], where: str) -> Converter:
    if not args or (len(args) == 2 and args[1] is Ellipsis) or len(set(args)) == 1:
        item = converter_for(args[0], where=where) if args else _DYNAMIC
        item_encode, item_decode = item.encode, item.decode

        def encode(value: Any) -> Wire:
            return {"L": [{"NULL": True} if v is None else item_encode(v) for v in value]}

        def decode(av: Wire) -> Any:
            return [None if "NULL" in v else item_decode(v) for v in av["L"]]

        return Converter(encode, decode, "L")
    # Heterogeneous tuple[int, str, ...]: one converter per position.
    items = [converter_for(a, where=where) for a in args]

    def encode_tuple(value: Any) -> Wire:
        return {"L": [{"NULL": True} if v is None else c.encode(v) for c, v in zip(items, value)]}

    def decode_tuple(av: Wire) -> Any:
        return [None if "NULL" in v else c.decode(v) for c, v in zip(items, av["L"])]

    return Converter(encode_tuple, decode_tuple, "L")


def _set_converter(item: Any, where: str) -> Converter:
    item_converter = converter_for(item, where=where)
    kind = item_converter.wire_tag
    if kind == "S" and item_converter.encode_expr == "{'S': v}":
        # Plain strings: sorted as they are, no per-element conversion.
        return Converter(
            lambda value: {"SS": sorted(value)} if value else None,
            itemgetter("SS"),
            "SS",
            encode_expr="{'SS': sorted(v)}",
            decode_expr="av['SS']",
            may_omit=True,
            size_expr="4 * len(''.join(av['SS']))",
        )
    if kind == "S":

        def encode(value: Any) -> Wire | None:
            if not value:
                return None
            return {"SS": sorted(_str_of_enum(v) for v in value)}

        return Converter(
            encode,
            itemgetter("SS"),
            "SS",
            decode_expr="av['SS']",
            may_omit=True,
            size_expr="4 * len(''.join(av['SS']))",
        )
    if kind == "N":
        base = converter_for(item, where=where).decode

        def encode_numbers(value: Any) -> Wire | None:
            if not value:
                return None
            return {"NS": [number_text(_str_of_enum(v)) for v in value]}

        def decode_numbers(av: Wire) -> Any:
            return [base({"N": v}) for v in av["NS"]]

        return Converter(encode_numbers, decode_numbers, "NS", may_omit=True)
    if kind == "B":

        def encode_bytes(value: Any) -> Wire | None:
            if not value:
                return None
            return {"BS": [bytes(v) for v in value]}

        def decode_bytes(av: Wire) -> Any:
            return [_bytes(v) for v in av["BS"]]

        return Converter(encode_bytes, decode_bytes, "BS", may_omit=True)

    def encode_any(value: Any) -> Wire | None:
        return _encode_set(value) if value else None

    return Converter(encode_any, decode_value, may_omit=True)


def _map_converter(value_type: Any, where: str) -> Converter:
    inner = converter_for(value_type, where=where)
    if inner is _DYNAMIC:
        return Converter(encode_value, decode_value, "M")
    value_encode, value_decode = inner.encode, inner.decode

    def encode(value: Any) -> Wire:
        return {
            "M": {
                _map_key(k): {"NULL": True} if v is None else value_encode(v)
                for k, v in value.items()
            }
        }

    def decode(av: Wire) -> Any:
        return {k: None if "NULL" in v else value_decode(v) for k, v in av["M"].items()}

    return Converter(encode, decode, "M")


# -- models ------------------------------------------------------------------------------------


class FieldPlan:
    """How one model field is stored: attribute name, validation input key, converter."""

    # Treated as immutable (not enforced).
    __slots__ = ("absent", "attr", "converter", "input_key", "name", "nullable", "required")

    def __init__(
        self,
        name: str,
        attr: str,
        input_key: str,
        converter: Converter,
        # What an absent attribute stands for, when it is not simply "use the default": values
        # the codec leaves out (None; an empty set, which DynamoDB cannot store) must read back
        # as such.
        absent: Literal["none", "empty_set"] | None = None,
        nullable: bool = True,
        required: bool = False,
    ) -> None:
        self.name = name
        self.attr = attr
        self.input_key = input_key
        self.converter = converter
        self.absent = absent
        self.nullable = nullable
        self.required = required


def input_key_of(model: type[BaseModel], name: str) -> str:
    """The key under which ``model_validate`` accepts field ``name``."""
    info = model.model_fields[name]
    by_alias = model.model_config.get("validate_by_alias", True)
    if by_alias is False:
        return name
    alias = info.validation_alias
    if isinstance(alias, str):
        return alias
    if alias is not None:
        return name  # AliasPath/AliasChoices: the codec validates by name (see ModelCodec)
    return info.alias or name


def attribute_name_of(model: type[BaseModel], name: str) -> str:
    """The stored attribute name of field ``name``: its alias when it has one."""
    info = model.model_fields[name]
    return info.serialization_alias or info.alias or name


def _nullable(info: Any) -> bool:
    return type(None) in typing.get_args(info.annotation) or info.annotation in (Any, None)


def _absent_meaning(info: Any, converter: Converter) -> Literal["none", "empty_set"] | None:
    nullable = _nullable(info)
    is_set = converter.wire_tag in ("SS", "NS", "BS") or (converter.may_omit and not nullable)
    if is_set and not (info.default is None and not info.is_required()):
        return "empty_set"
    if info.is_required() and nullable:
        return "none"
    return None


class ModelCodec:
    """Compiled converters for every field of a pydantic model.

    ``overrides`` replaces the converter of named fields (the TTL field stores epoch seconds).
    """

    def __init__(
        self,
        model: type[BaseModel],
        *,
        overrides: Mapping[str, Converter] | None = None,
    ) -> None:
        self.model = model
        where = model.__qualname__
        overrides = overrides or {}
        self.by_name = any(
            info.validation_alias is not None and not isinstance(info.validation_alias, str)
            for info in model.model_fields.values()
        )
        plans = []
        for name, info in model.model_fields.items():
            converter = overrides.get(name) or converter_for(info.annotation, where=where)
            input_key = name if self.by_name else input_key_of(model, name)
            plans.append(
                FieldPlan(
                    name,
                    attribute_name_of(model, name),
                    input_key,
                    converter,
                    _absent_meaning(info, converter),
                    _nullable(info),
                    info.is_required(),
                )
            )
        self.fields: tuple[FieldPlan, ...] = tuple(plans)
        self.allows_extra = model.model_config.get("extra") == "allow"
        self._validate_python = model.__pydantic_validator__.validate_python
        self._encode_into, self.decode_fields = _generate(self.fields)

    def encode_into(self, obj: BaseModel, item: dict[str, Wire]) -> int:
        """Write ``obj``'s stored attributes into ``item`` (None values and empty sets left
        out, extras not included); return an upper bound of their size in bytes."""
        try:
            return self._encode_into(obj.__dict__, item)
        except (ValueError, TypeError, AttributeError, ArithmeticError, ItemEncodeError):
            return self._encode_diagnosing(obj, item)

    def encode_fields(self, obj: BaseModel) -> dict[str, Wire]:
        """Stored attributes of ``obj``, extras included."""
        item: dict[str, Wire] = {}
        self.encode_into(obj, item)
        if self.allows_extra and obj.__pydantic_extra__:
            for key, value in obj.__pydantic_extra__.items():
                if value is None:
                    continue
                try:
                    if not is_text(key):
                        raise ValueError(f"its name holds {LONE_SURROGATE}")
                    item[key] = encode_value(value)
                except (ValueError, TypeError) as exc:
                    raise wrap_encode_error(type(obj).__qualname__, key, exc) from None
        return item

    def _encode_diagnosing(self, obj: BaseModel, item: dict[str, Wire]) -> int:
        """Field by field, so an unstorable value is reported with its field name."""
        values = obj.__dict__
        for plan in self.fields:
            value = values[plan.name]
            if value is None:
                continue
            try:
                av = plan.converter.encode(value)
                if av is not None:
                    value_size(av)  # encodes every string: a lone surrogate raises here
            except (ValueError, TypeError, AttributeError, ArithmeticError, ItemEncodeError) as exc:
                raise wrap_encode_error(type(obj).__qualname__, plan.name, exc) from None
            if av is not None:
                item[plan.attr] = av
        return MAX_ITEM_BYTES + 1  # unknown: let the exact size check run

    def encode(self, obj: Any) -> Wire:
        return {"M": self.encode_fields(obj)}

    def decode_fields_lenient(self, item: Mapping[str, Wire]) -> dict[str, Any]:
        """Like :meth:`decode_fields` but type-agnostic, so pydantic can name what is wrong."""
        data: dict[str, Any] = {}
        for plan in self.fields:
            attr, key, decode = plan.attr, plan.input_key, plan.converter.decode
            av = item.get(attr)
            if av is None:
                if plan.absent is not None:
                    data[key] = None if plan.absent == "none" else set()
                continue
            try:
                try:
                    data[key] = decode(av)
                except NumberRangeError:
                    raise
                except (KeyError, ValueError, TypeError, ArithmeticError):
                    data[key] = decode_value(av)
            except NumberRangeError as exc:
                raise self._within(plan, av, exc) from None
        return data

    @staticmethod
    def _within(plan: FieldPlan, av: Wire, exc: NumberRangeError) -> NumberRangeError:
        """``exc`` located in field ``plan`` (and in the nested model's field, when it is one)."""
        nested = plan.converter.nested
        if nested is not None and not exc.path:
            try:
                nested.decode_fields_lenient(av["M"])
            except NumberRangeError as inner:
                exc = inner
        return exc.within(plan.name)

    def decode_input(self, av: Wire) -> dict[str, Any]:
        return self.decode_fields(av["M"])

    def validate(self, data: dict[str, Any]) -> Any:
        if self.by_name:
            return self.model.model_validate(data, by_name=True, by_alias=False)
        return self._validate_python(data)


class CodeGen:
    """Writes straight-line Python for encoding and decoding model fields.

    One statement per field with the conversion inlined where it is a plain expression, nested
    models written inline: this is what makes the codec cheaper than a loop over converters
    (see bench/codec.py). Encoders also sum an upper bound of the item size: fixed-size values
    by a constant, strings by 4 bytes per character, anything else exactly.
    """

    MAX_INLINE_DEPTH = 3

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_number_text": number_text,
            "_datetime_text": datetime_text,
            "_epoch_text": epoch_text,
            "_decimal_text": decimal_text,
            "_MAX_INT": _MAX_INT,
            "_Decimal": Decimal,
            "_int_from_wire": _int_from_wire,
            "_float_from_wire": _float_from_wire,
            "_decimal_from_wire": _decimal_from_wire,
            "_value_size": value_size,
        }
        self._counter = 0
        self.static = 0
        self.lengths: list[str] = []  # string-length expressions for the size bound
        self.sized: list[str] = []  # exact-size expressions for the size bound
        self.texts: list[str] = []  # strings of the item literal that must be text (see below)

    def bind(self, value: Any, prefix: str = "_c") -> str:
        """A namespace name for ``value`` in the generated code."""
        self._counter += 1
        name = f"{prefix}{self._counter}"
        self.ns[name] = value
        return name

    def compile(self, name: str, filename: str) -> Any:
        exec(compile("\n".join(self.lines), filename, "exec"), self.ns)
        return self.ns[name]

    def _inline_model(
        self, conv: Converter, depth: int, stack: tuple[type, ...]
    ) -> ModelCodec | None:
        nested = conv.nested
        if nested is None or depth >= self.MAX_INLINE_DEPTH or nested.model in stack:
            return None
        if nested.allows_extra or nested.by_name:
            return None
        return nested

    def encode_fields(
        self,
        fields: tuple[FieldPlan, ...],
        *,
        src: str,
        item: str,
        indent: str,
        depth: int = 0,
        reuse: Mapping[str, str] | None = None,
        stack: tuple[type, ...] = (),
    ) -> None:
        """Emit code writing ``fields`` of the values dict ``src`` into the dict ``item``.

        Size accounting for the 400 KB check: fixed sizes (names, bounded values) add up in
        ``self.static`` at generation time, string lengths in ``t`` (4 bytes per character at
        most) and anything else, measured exactly, in ``n``.
        """
        out = self.lines.append
        v = f"v{depth}"
        for plan in fields:
            conv = plan.converter
            self.static += len(plan.attr.encode())
            out(f"{indent}{v} = {src}[{plan.name!r}]")
            if reuse and plan.name in reuse:
                # Already rendered canonically for a key: reuse the text for the attribute.
                text = reuse[plan.name]
                out(f"{indent}if {v} is not None: {item}[{plan.attr!r}] = {{'S': {text}}}")
                self.static += 32
                continue
            nested = self._inline_model(conv, depth, stack)
            if nested is not None:
                inner_item, inner_src = f"m{depth + 1}", f"d{depth + 1}"
                out(f"{indent}if {v} is not None:")
                out(f"{indent}    {inner_src} = {v}.__dict__")
                out(f"{indent}    {inner_item} = {{}}")
                self.static += 3 + len(nested.fields)
                self.encode_fields(
                    nested.fields,
                    src=inner_src,
                    item=inner_item,
                    indent=indent + "    ",
                    depth=depth + 1,
                    stack=(*stack, nested.model),
                )
                out(f"{indent}    {item}[{plan.attr!r}] = {{'M': {inner_item}}}")
                continue
            encoder = self.bind(conv.encode, "_e")
            if conv.may_omit:
                if conv.encode_expr is not None:
                    out(f"{indent}if {v}:")
                    expr = _with_value(conv.encode_expr, v)
                    out(f"{indent}    {item}[{plan.attr!r}] = av = {expr}")
                else:
                    out(f"{indent}if {v} is not None:")
                    out(f"{indent}  av = {encoder}({v})")
                    out(f"{indent}  if av is not None:")
                    out(f"{indent}    {item}[{plan.attr!r}] = av")
                if conv.wire_tag == "SS":  # joined once for the size bound and the text check
                    out(f"{indent}    j = ''.join(av['SS'])")
                    out(f"{indent}    t += len(j)")
                    out(f"{indent}    {text_check('j')}")
                elif conv.size_expr is not None and conv.size_expr.startswith("4 * "):
                    out(f"{indent}    t += {conv.size_expr[4:]}")
                else:
                    out(f"{indent}    n += {conv.size_expr or '_value_size(av)'}")
                continue
            expr = _with_value((conv.encode_expr or "_ENC(v)").replace("_ENC", encoder), v)
            out(f"{indent}if {v} is not None:")
            if conv.max_size is not None:
                out(f"{indent}    {item}[{plan.attr!r}] = {expr}")
                self.static += conv.max_size
            elif conv.encode_expr == "{'S': v}":
                out(f"{indent}    {item}[{plan.attr!r}] = {expr}")
                out(f"{indent}    t += len({v})")
                out(f"{indent}    {text_check(v)}")
            else:
                out(f"{indent}    {item}[{plan.attr!r}] = av = {expr}")
                out(f"{indent}    n += _value_size(av)")

    # Expressions that raise on None, so a field written through them needs no None check.
    _NONE_SAFE_EXPRS = frozenset({"{'BOOL': v}", "{'S': str(v)}"})

    def literal_fields(
        self,
        fields: tuple[FieldPlan, ...],
        *,
        src: str,
        reuse: Mapping[str, str],
        prelude: list[str] | None = None,
    ) -> tuple[list[str], list[FieldPlan]]:
        """Entries of a dict literal for the fields that can never be left out, and the rest.

        A field that cannot be None (its type excludes it) is always written, so it goes into
        the item's dict literal with no None check: its conversion (or the length taken for the
        size bound) raises on a None assigned after validation, and the caller's error path
        names the field. Building the item as one literal is what keeps encoding cheap.
        ``reuse`` maps fields to variables already holding their text (rendered for a key); a
        value an expression reads more than once is first bound to a local in ``prelude``.
        """
        entries: list[str] = []
        rest: list[FieldPlan] = []
        for plan in fields:
            conv = plan.converter
            value = f"{src}[{plan.name!r}]"
            if plan.nullable or conv.may_omit or conv.nested is not None:
                rest.append(plan)
                continue
            if plan.name in reuse:
                text = reuse[plan.name]
                entries.append(f"{plan.attr!r}: {{'S': {text}}}")
                self.static += len(plan.attr.encode())
                self.lengths.append(f"len({text})")
                continue
            expr = conv.encode_expr
            if expr is None or expr in self._NONE_SAFE_EXPRS:
                rest.append(plan)
                continue
            plain_text = expr == "{'S': v}"
            if prelude is not None and (plain_text or len(re.findall(r"\bv\b", expr)) > 1):
                local = f"w{len(prelude)}"
                prelude.append(f"{local} = {value}")
                value = local
            if plain_text:
                self.texts.append(value)
            entries.append(f"{plan.attr!r}: {_with_value(expr, value)}")
            self.static += len(plan.attr.encode())
            if conv.max_size is not None:
                self.static += conv.max_size
            elif expr == "{'S': v}":
                self.lengths.append(f"len({value})")
            else:
                self.sized.append(f"_value_size(item[{plan.attr!r}])")
        return entries, rest

    def literal_inputs(
        self, fields: tuple[FieldPlan, ...], *, src: str
    ) -> tuple[list[str], list[FieldPlan]]:
        """Entries of a dict literal for the validation input of fields that are always stored
        (required, their type excludes None; not a set, which may be left out), and the rest.
        Fields with defaults stay out: items written before such a field existed lack it.

        Reading them as ``item['a']['S']`` raises ``KeyError`` on an item written by someone
        else without the field; the caller then takes the lenient path, where pydantic says
        what is wrong.
        """
        entries: list[str] = []
        rest: list[FieldPlan] = []
        for plan in fields:
            conv = plan.converter
            if not plan.required or plan.nullable or conv.may_omit or conv.nested is not None:
                rest.append(plan)
                continue
            av = f"{src}[{plan.attr!r}]"
            if conv.decode_expr is not None:
                expr = _with_value(conv.decode_expr, av, "av")
            else:
                expr = f"{self.bind(conv.decode, '_d')}({av})"
            entries.append(f"{plan.input_key!r}: {expr}")
        return entries, rest

    def decode_fields(
        self,
        fields: tuple[FieldPlan, ...],
        *,
        src: str,
        data: str,
        indent: str,
        depth: int = 0,
        stack: tuple[type, ...] = (),
    ) -> None:
        """Emit code reading ``fields`` from the attributes dict ``src`` into the validation
        input dict ``data``."""
        out = self.lines.append
        av = f"a{depth}"
        for plan in fields:
            conv = plan.converter
            out(f"{indent}{av} = {src}.get({plan.attr!r})")
            nested = self._inline_model(conv, depth, stack)
            if nested is not None:
                inner_src, inner_data = f"s{depth + 1}", f"r{depth + 1}"
                out(f"{indent}if {av} is not None:")
                out(f"{indent}    {inner_src} = {av}['M']")
                out(f"{indent}    {inner_data} = {{}}")
                self.decode_fields(
                    nested.fields,
                    src=inner_src,
                    data=inner_data,
                    indent=indent + "    ",
                    depth=depth + 1,
                    stack=(*stack, nested.model),
                )
                out(f"{indent}    {data}[{plan.input_key!r}] = {inner_data}")
                continue
            if conv.decode_expr is not None:
                expr = _with_value(conv.decode_expr, av, "av")
            else:
                expr = f"{self.bind(conv.decode, '_d')}({av})"
            out(f"{indent}if {av} is not None: {data}[{plan.input_key!r}] = {expr}")
            if plan.absent == "none":
                out(f"{indent}else: {data}[{plan.input_key!r}] = None")
            elif plan.absent == "empty_set":
                out(f"{indent}else: {data}[{plan.input_key!r}] = set()")


def text_check(var: str) -> str:
    """A statement raising ``UnicodeEncodeError`` (a ``ValueError``: the caller's error path
    then names the field) when the string ``var`` is not text. ASCII, the common case, is told
    in constant time; other text is encoded once."""
    return f"if not {var}.isascii(): {var}.encode()"


def _with_value(expr: str, var: str, placeholder: str = "v") -> str:
    """``expr`` (written over ``v``, or ``av`` for decoders) with that variable renamed."""
    return re.sub(rf"\b{placeholder}\b", var, expr)


def _generate(
    fields: tuple[FieldPlan, ...],
) -> tuple[
    Callable[[dict[str, Any], dict[str, Wire]], int],
    Callable[[Mapping[str, Wire]], dict[str, Any]],
]:
    """Generated ``encode_into(values, item) -> size bound`` and ``decode_fields(item)``."""
    gen = CodeGen()
    gen.lines += ["def encode_into(d, item):", "    n = t = 0"]
    gen.encode_fields(fields, src="d", item="item", indent="    ")
    gen.lines += [f"    return n + 4 * t + {gen.static}", "", "def decode_fields(item):"]
    gen.lines.append("    data = {}")
    gen.decode_fields(fields, src="item", data="data", indent="    ")
    gen.lines.append("    return data")
    gen.compile("encode_into", "<singletable codec>")
    return gen.ns["encode_into"], gen.ns["decode_fields"]


_NESTED: dict[type[BaseModel], ModelCodec] = {}


def nested_codec(model: type[BaseModel]) -> ModelCodec:
    """The (cached) codec of a model stored as a map inside an item."""
    codec = _NESTED.get(model)
    if codec is None:
        # Registered before compiling so self-referencing models find it.
        codec = _NESTED[model] = ModelCodec.__new__(ModelCodec)
        codec.__init__(model)  # type: ignore[misc]
    return codec


# -- item size --------------------------------------------------------------------------------


def _number_size(text: str) -> int:
    digits = text.lstrip("-").split("E")[0].split("e")[0].replace(".", "").strip("0")
    return (len(digits) + 1) // 2 + 1


def value_size(av: Wire) -> int:
    """Bytes of one attribute value by DynamoDB's item-size formula."""
    ((tag, raw),) = av.items()
    if tag == "S":
        return len(raw.encode())
    if tag == "N":
        return _number_size(raw)
    if tag == "B":
        return len(_bytes(raw))
    if tag in ("BOOL", "NULL"):
        return 1
    if tag == "SS":
        return sum(len(s.encode()) for s in raw)
    if tag == "NS":
        return sum(_number_size(n) for n in raw)
    if tag == "BS":
        return sum(len(_bytes(b)) for b in raw)
    if tag == "L":
        return 3 + sum(value_size(v) + 1 for v in raw)
    if tag == "M":
        return 3 + sum(len(k.encode()) + value_size(v) + 1 for k, v in raw.items())
    raise ValueError(f"unknown attribute type {tag!r}")


def item_size(item: Mapping[str, Wire]) -> int:
    """Bytes of an item by DynamoDB's formula (names and values; the 400 KB limit applies)."""
    total = 0
    for name, av in item.items():
        total += len(name.encode()) + value_size(av)
    return total


def check_item_size(
    item: Mapping[str, Wire], describe_key: Callable[[], str], bound: int | None = None
) -> None:
    """Raise :class:`ItemTooLargeError` if ``item`` exceeds 409,600 bytes.

    ``bound`` is a cheap upper bound computed while encoding; the exact formula runs only when
    the bound is above the limit.
    """
    from .errors import ItemTooLargeError

    if bound is not None and bound <= MAX_ITEM_BYTES:
        return
    size = item_size(item)
    if size > MAX_ITEM_BYTES:
        key = describe_key()
        raise ItemTooLargeError(
            f"item {key} is {size:,} bytes; DynamoDB's limit is {MAX_ITEM_BYTES:,} bytes "
            "(400 KB). Move large values to S3 or split the item",
            key=key,
            size=size,
        )


def wrap_encode_error(owner: str, field: str, exc: Exception) -> ItemEncodeError:
    """The error naming ``owner.field`` for an exception raised while encoding it."""
    name = field if is_text(field) else ascii(field)  # the message itself must be text
    if isinstance(exc, ItemEncodeError):  # from a nested model: keep the field it names
        return ItemEncodeError(f"{owner}.{name}: {exc.message}", key=field)
    why = f"it holds {LONE_SURROGATE}" if isinstance(exc, UnicodeEncodeError) else str(exc)
    return ItemEncodeError(f"{owner}.{name} cannot be stored: {why}", key=field)
