"""Per-field converters between Python values and DynamoDB's wire format, and the model codec.

Converters are built once per field from its annotation (at class creation), so encoding and
decoding run one specialised function per attribute: no generic per-value dispatch and no
``TypeSerializer`` on the hot path. Values go to pydantic for validation afterwards; nothing
passes through ``model_dump(mode="json")``, which would store ``SecretStr`` as stars.

:class:`ModelCodec` holds a model's converters: the generated functions (codegen.py) do the
common case, and the field-by-field methods here are the reference they must equal, used for
error reports and as the fallback.

Strings must be Unicode text: one holding a lone surrogate (``"\\ud800"``, which pydantic accepts)
has no UTF-8 form and is refused while encoding, naming the field. The generated encoders only
test ``str.isascii()`` (constant time) and leave the rest to the field-by-field path.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
import uuid
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from operator import itemgetter
from pathlib import PurePath
from typing import Any, Literal, Union

from pydantic import BaseModel, SecretBytes, SecretStr

from . import _wire as wire
from ._codegen import generate_codec
from ._wire import (
    LONE_SURROGATE,
    MAX_ITEM_BYTES,
    PYNAMODB_DATETIME,
    Converter,
    DatetimeFormat,
    NumberRangeError,
    Wire,
    bytes_of,
    datetime_as,
    datetime_from,
    datetime_text,
    decimal_from_wire,
    decode_value,
    epoch_text,
    float_from_wire,
    from_epoch_seconds,
    identity,
    int_from_wire,
    is_text,
    number_text,
    scalar,
    str_of_enum,
    value_size,
)
from .errors import ItemEncodeError

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


# -- per-annotation compiled converters -------------------------------------------------------


_DYNAMIC = Converter(encode_value, decode_value)
_CANONICAL_DATETIME = scalar("S", datetime_text, identity, wire.ENCODE_DATETIME, max_size=32)


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


def converter_for(
    annotation: Any, *, where: str = "", datetime_format: DatetimeFormat | None = None
) -> Converter:
    """A compiled converter for a field annotation (``Optional`` is handled by the caller).

    ``datetime_format`` is how datetimes are stored (None: canonical); an
    ``Annotated[datetime, DatetimeFormat(...)]`` inside the annotation overrides it."""
    declared = declared_datetime_format(annotation)
    if declared is not None:
        datetime_format = declared
    fmt = datetime_format
    annotation = bare_annotation(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any or annotation is object or origin in (Union, types.UnionType):
        return _DYNAMIC
    if origin is Literal:
        if all(isinstance(v, str) for v in args):
            longest = max(len(v.encode()) for v in args)
            return scalar("S", str_of_enum, identity, wire.ENCODE_ENUM_TEXT, max_size=longest)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in args):
            return scalar("N", number_text, int_from_wire, wire.ENCODE_NUMBER, wire.DECODE_INT)
        if all(isinstance(v, bool) for v in args):
            return scalar("BOOL", identity, identity)
        return _DYNAMIC
    if origin in (list, tuple, typing.Sequence, typing.MutableSequence) or (
        isinstance(origin, type) and origin.__name__ == "deque"
    ):
        return _list_converter(args, where, fmt)
    if origin in (set, frozenset, typing.AbstractSet, typing.MutableSet):
        return _set_converter(args[0] if args else Any, where, fmt)
    if origin in (dict, typing.Mapping, typing.MutableMapping):
        return _map_converter(args[1] if len(args) == 2 else Any, where, fmt)
    if isinstance(annotation, type):
        return _class_converter(annotation, where, fmt)
    return _DYNAMIC


def declared_datetime_format(annotation: Any, metadata: Any = ()) -> DatetimeFormat | None:
    """The ``DatetimeFormat`` in ``metadata`` (a field's) or in the annotation's own
    ``Annotated[...]`` (and its ``Optional``), if any."""
    for item in metadata:
        if isinstance(item, DatetimeFormat):
            return item
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        args = typing.get_args(annotation)
        return declared_datetime_format(args[0], args[1:])
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return declared_datetime_format(members[0])
    return None


def datetime_converter(datetime_format: DatetimeFormat | None) -> Converter:
    """The converter of a datetime field stored in ``datetime_format`` (None: canonical)."""
    pattern = datetime_format.pattern if datetime_format is not None else None
    if pattern is None:
        return _CANONICAL_DATETIME
    if pattern == PYNAMODB_DATETIME:  # ISO 8601: validation parses it, as the canonical text
        return scalar(
            "S",
            lambda v: datetime_as(v, pattern),
            identity,
            wire.ENCODE_DATETIME_AS % pattern,
            max_size=32,
        )
    return scalar(  # not inlined: a pattern is free text, the generated code calls these
        "S", lambda v: datetime_as(v, pattern), lambda text: datetime_from(text, pattern)
    )


def _class_converter(cls: type, where: str, fmt: DatetimeFormat | None = None) -> Converter:
    if issubclass(cls, bool):
        return scalar("BOOL", identity, identity, wire.ENCODE_BOOL)
    if issubclass(cls, enum.Enum):
        values = [m.value for m in cls]
        if all(isinstance(v, str) for v in values):
            longest = max((len(v.encode()) for v in values), default=0)
            return scalar("S", str_of_enum, identity, wire.ENCODE_ENUM_TEXT, max_size=longest)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return scalar("N", lambda v: number_text(str_of_enum(v)), int_from_wire)
        return _DYNAMIC
    if issubclass(cls, str):
        return scalar("S", identity, identity, wire.ENCODE_TEXT)
    if issubclass(cls, int):
        return scalar("N", number_text, int_from_wire, wire.ENCODE_INT, wire.DECODE_INT)
    if issubclass(cls, float):
        return scalar("N", number_text, float_from_wire, wire.ENCODE_NUMBER, wire.DECODE_FLOAT)
    if issubclass(cls, Decimal):
        return scalar("N", number_text, decimal_from_wire, wire.ENCODE_DECIMAL, wire.DECODE_DECIMAL)
    if issubclass(cls, datetime):
        return datetime_converter(fmt)
    if issubclass(cls, (date, time)):
        return scalar("S", lambda v: v.isoformat(), identity, wire.ENCODE_ISOFORMAT, max_size=32)
    if issubclass(cls, uuid.UUID):
        return scalar("S", str, identity, wire.ENCODE_STR_OF, max_size=36)
    if issubclass(cls, PurePath):
        return scalar("S", str, identity, wire.ENCODE_STR_OF)
    if issubclass(cls, timedelta):
        return scalar(
            "N", lambda v: number_text(Decimal(str(v.total_seconds()))), decimal_from_wire
        )
    if issubclass(cls, (bytes, bytearray)):
        return scalar("B", bytes, bytes_of)
    if issubclass(cls, SecretStr):
        return scalar("S", lambda v: v.get_secret_value(), identity)
    if issubclass(cls, SecretBytes):
        return scalar("B", lambda v: v.get_secret_value(), bytes_of)
    if issubclass(cls, BaseModel):
        codec = nested_codec(cls, fmt)
        return Converter(codec.encode, codec.decode_input, "M", nested=codec)
    return _DYNAMIC


def _list_converter(
    args: tuple[Any, ...], where: str, fmt: DatetimeFormat | None = None
) -> Converter:
    if not args or (len(args) == 2 and args[1] is Ellipsis) or len(set(args)) == 1:
        item = converter_for(args[0], where=where, datetime_format=fmt) if args else _DYNAMIC
        item_encode, item_decode = item.encode, item.decode

        def encode(value: Any) -> Wire:
            return {"L": [{"NULL": True} if v is None else item_encode(v) for v in value]}

        def decode(av: Wire) -> Any:
            return [None if "NULL" in v else item_decode(v) for v in av["L"]]

        return Converter(encode, decode, "L")
    # Heterogeneous tuple[int, str, ...]: one converter per position.
    items = [converter_for(a, where=where, datetime_format=fmt) for a in args]

    def encode_tuple(value: Any) -> Wire:
        return {"L": [{"NULL": True} if v is None else c.encode(v) for c, v in zip(items, value)]}

    def decode_tuple(av: Wire) -> Any:
        return [None if "NULL" in v else c.decode(v) for c, v in zip(items, av["L"])]

    return Converter(encode_tuple, decode_tuple, "L")


def _set_converter(item: Any, where: str, fmt: DatetimeFormat | None = None) -> Converter:
    item_converter = converter_for(item, where=where, datetime_format=fmt)
    kind = item_converter.wire_tag
    if kind == "S" and item_converter.encode_expr == wire.ENCODE_TEXT:
        # Plain strings: sorted as they are, no per-element conversion.
        return Converter(
            lambda value: {"SS": sorted(value)} if value else None,
            itemgetter("SS"),
            "SS",
            encode_expr=wire.ENCODE_TEXT_SET,
            decode_expr="av['SS']",
            may_omit=True,
            size_expr="4 * len(''.join(av['SS']))",
        )
    if kind == "S":

        def encode(value: Any) -> Wire | None:
            if not value:
                return None
            return {"SS": sorted(str_of_enum(v) for v in value)}

        return Converter(
            encode,
            itemgetter("SS"),
            "SS",
            decode_expr="av['SS']",
            may_omit=True,
            size_expr="4 * len(''.join(av['SS']))",
        )
    if kind == "N":
        base = item_converter.decode

        def encode_numbers(value: Any) -> Wire | None:
            if not value:
                return None
            return {"NS": [number_text(str_of_enum(v)) for v in value]}

        def decode_numbers(av: Wire) -> Any:
            return [base({"N": v}) for v in av["NS"]]

        return Converter(encode_numbers, decode_numbers, "NS", may_omit=True)
    if kind == "B":

        def encode_bytes(value: Any) -> Wire | None:
            if not value:
                return None
            return {"BS": [bytes(v) for v in value]}

        def decode_bytes(av: Wire) -> Any:
            return [bytes_of(v) for v in av["BS"]]

        return Converter(encode_bytes, decode_bytes, "BS", may_omit=True)

    def encode_any(value: Any) -> Wire | None:
        return _encode_set(value) if value else None

    return Converter(encode_any, decode_value, may_omit=True)


def _map_converter(value_type: Any, where: str, fmt: DatetimeFormat | None = None) -> Converter:
    inner = converter_for(value_type, where=where, datetime_format=fmt)
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

    ``overrides`` replaces the converter of named fields (the TTL field stores epoch seconds);
    ``datetime_format`` is how datetimes are stored where a field declares none (the table's
    ``datetime_format``; None: canonical).
    """

    def __init__(
        self,
        model: type[BaseModel],
        *,
        overrides: Mapping[str, Converter] | None = None,
        datetime_format: DatetimeFormat | None = None,
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
            fmt = declared_datetime_format(info.annotation, info.metadata) or datetime_format
            converter = overrides.get(name) or converter_for(
                info.annotation, where=where, datetime_format=fmt
            )
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
        self._encode_into, self.decode_fields = generate_codec(self.fields)

    def encode_into(self, obj: BaseModel, item: dict[str, Wire]) -> int:
        """Write ``obj``'s stored attributes into ``item`` (None values and empty sets left
        out, extras not included); return an upper bound of their size in bytes."""
        try:
            return self._encode_into(obj.__dict__, item)
        except (ValueError, TypeError, AttributeError, ArithmeticError, ItemEncodeError):
            return self.encode_field_by_field(obj, item)

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

    def encode_field_by_field(self, obj: BaseModel, item: dict[str, Wire]) -> int:
        """What the generated ``encode_into`` does, one converter at a time: the reference
        path, run when the generated code fails, so an unstorable value is reported with its
        field name. Returns a size "bound" that sends the caller to the exact size check."""
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


_NESTED: dict[tuple[type[BaseModel], DatetimeFormat | None], ModelCodec] = {}


def nested_codec(
    model: type[BaseModel], datetime_format: DatetimeFormat | None = None
) -> ModelCodec:
    """The (cached) codec of a model stored as a map inside an item (its datetimes stored in
    ``datetime_format`` where its fields declare none)."""
    codec = _NESTED.get((model, datetime_format))
    if codec is None:
        # Registered before compiling so self-referencing models find it.
        codec = _NESTED[(model, datetime_format)] = ModelCodec.__new__(ModelCodec)
        codec.__init__(model, datetime_format=datetime_format)  # type: ignore[misc]
    return codec


#: The TTL field's converter: whole epoch seconds of an aware datetime.
TTL_CONVERTER = Converter(
    lambda v: {"N": epoch_text(v)},
    lambda av: from_epoch_seconds(av["N"]),
    "N",
    encode_expr=wire.ENCODE_EPOCH,
    max_size=21,
)


def wrap_encode_error(owner: str, field: str, exc: Exception) -> ItemEncodeError:
    """The error naming ``owner.field`` for an exception raised while encoding it."""
    name = field if is_text(field) else ascii(field)  # the message itself must be text
    if isinstance(exc, ItemEncodeError):  # from a nested model: keep the field it names
        return ItemEncodeError(f"{owner}.{name}: {exc.message}", key=field)
    why = f"it holds {LONE_SURROGATE}" if isinstance(exc, UnicodeEncodeError) else str(exc)
    return ItemEncodeError(f"{owner}.{name} cannot be stored: {why}", key=field)
