"""DynamoDB's wire format below the models: number and datetime text, the range checks on stored
numbers, annotation-free decoding, item sizes, and the expression forms of the conversions that
the code generator (codegen.py) inlines.

Strings must be Unicode text: one holding a lone surrogate (``"\\ud800"``, which pydantic accepts)
has no UTF-8 form and DynamoDB cannot store it.
"""

from __future__ import annotations

import base64
import enum
import math
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from decimal import Decimal
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .errors import ItemTooLargeError, ModelDefinitionError

if TYPE_CHECKING:
    from ._codec import ModelCodec

UTC = timezone.utc
#: DynamoDB's item size limit (400 KB), in bytes by its item-size formula.
MAX_ITEM_BYTES = 409_600
#: Integers strictly between ``-MAX_INT`` and ``MAX_INT`` have at most 38 digits: storable.
MAX_INT = 10**38

Wire = dict[str, Any]


# -- text ---------------------------------------------------------------------------------------

#: Why a string with a lone surrogate is refused (messages say what holds one).
LONE_SURROGATE = (
    "a lone surrogate (U+D800..U+DFFF), which is not Unicode text: it has no UTF-8 form and "
    "DynamoDB cannot store it"
)


def is_text(text: str) -> bool:
    """``text`` has a UTF-8 form (holds no lone surrogate); ASCII is answered without a scan."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


# -- numbers ----------------------------------------------------------------------------------


def number_text(value: int | Decimal | float) -> str:
    """DynamoDB ``N`` text, checked against its limits (38 digits, 1E-130 to below 1E126)."""
    if type(value) is int:
        if -MAX_INT < value < MAX_INT:
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


def int_from_wire(text: str) -> int:
    """A stored number read as an int (``ValueError`` unless it is integral)."""
    if len(text) < 39:  # at most 38 digits: int() is cheap and the value storable
        try:
            return int(text)
        except ValueError:
            pass
    number = wire_number(text)
    if number != number.to_integral_value():
        raise ValueError("a stored number is not an integer")
    return int(number)


def float_from_wire(text: str) -> float:
    """A stored number read as a float."""
    wire_number(text)
    return float(text)


decimal_from_wire = wire_number


def number_from_wire(text: str) -> int | Decimal:
    """A number of unknown declared type: int when integral, else Decimal."""
    integral = text.isdigit() or (text[:1] == "-" and text[1:].isdigit())
    if integral and len(text) < 39:
        return int(text)
    number = wire_number(text)
    return int(number) if integral else number


# -- datetimes --------------------------------------------------------------------------------

_CANONICAL_DATETIME = "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ"


def render_datetime(value: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC (27 characters): the canonical, sortable text of
    an aware datetime, in keys and attributes alike."""
    offset = value.utcoffset()
    if offset is None:
        raise ValueError("naive datetime (no timezone)")
    if offset:
        value = value - offset  # wall-clock fields now read as UTC
    return _CANONICAL_DATETIME % (
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
    )


def parse_datetime(text: str) -> datetime:
    """The aware (UTC) datetime of :func:`render_datetime`'s text."""
    if len(text) != 27 or not text.endswith("Z"):
        raise ValueError(f"{text!r} is not a canonical UTC datetime")
    return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)


def datetime_text(value: datetime) -> str:
    """Aware datetimes in canonical UTC (``…Z``, 27 chars, sortable); naive ones as given."""
    if value.utcoffset() is None:
        return value.isoformat(timespec="microseconds")
    return render_datetime(value)


# -- declared datetime formats (adopting a table another library wrote) -----------------------

#: PynamoDB's ``UTCDateTimeAttribute``: ``2025-01-01T01:22:24.677689+0000``.
PYNAMODB_DATETIME = "%Y-%m-%dT%H:%M:%S.%f+0000"
_NAMED_DATETIME_FORMATS = {"canonical": None, "pynamodb": PYNAMODB_DATETIME}
_PROBE = datetime(2001, 2, 3, 4, 5, 6, 789012, UTC)


class DatetimeFormat:
    """How datetime attributes are stored: ``Table(..., datetime_format="pynamodb")`` for every
    field of the table's entities, or ``Annotated[datetime, DatetimeFormat("pynamodb")]`` for
    one field (the field's wins).

    ``"canonical"`` is singletable's own ``2025-01-01T01:22:24.677689Z`` (the default);
    ``"pynamodb"`` is PynamoDB's ``UTCDateTimeAttribute`` (``...677689+0000``); anything else is
    a ``strftime`` pattern of the UTC time. Writes store the declared format; reads accept it
    and every ISO 8601 text (so items in the other format still decode). Key templates keep
    their own format (``{created_at}`` renders canonical text, ``{created_at:%Y-%m}`` its
    pattern). A naive datetime cannot be stored in a declared format (it names no zone).
    """

    __slots__ = ("name", "pattern")

    PYNAMODB = "pynamodb"
    CANONICAL = "canonical"

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ModelDefinitionError(
                "DatetimeFormat takes 'canonical', 'pynamodb' or a strftime pattern"
            )
        pattern = _NAMED_DATETIME_FORMATS.get(name, name)
        if pattern is not None:
            _check_pattern(pattern)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "pattern", pattern)

    name: str
    pattern: str | None  # None: the canonical text

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __repr__(self) -> str:
        return f"DatetimeFormat({self.name!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DatetimeFormat):
            return self.pattern == other.pattern
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (DatetimeFormat, (self.name,))


def _check_pattern(pattern: str) -> None:
    """A strftime pattern must read back what it wrote (to the second, or the microsecond
    with ``%f``)."""
    expected = _PROBE if "%f" in pattern else _PROBE.replace(microsecond=0)
    try:
        text = _PROBE.strftime(pattern)
        back = datetime.strptime(text, pattern).replace(tzinfo=UTC)
    except ValueError as exc:
        raise ModelDefinitionError(
            f"datetime format {pattern!r} does not parse back: {exc}"
        ) from None
    if back != expected:
        raise ModelDefinitionError(
            f"datetime format {pattern!r} does not hold a whole time ({text!r} reads back as "
            f"{back.isoformat()}); include %Y, %m, %d, %H, %M and %S"
        )


def datetime_as(value: datetime, pattern: str) -> str:
    """``value`` in UTC, rendered with a declared ``strftime`` pattern (PynamoDB's without
    strftime: faster, and years below 1000 zero-padded as PynamoDB writes them)."""
    offset = value.utcoffset()
    if offset is None:
        raise ValueError("naive datetime (no timezone): a declared datetime format stores UTC")
    if pattern != PYNAMODB_DATETIME:
        return value.astimezone(UTC).strftime(pattern)
    if offset:
        value = value - offset  # wall-clock fields now read as UTC
    return _PYNAMODB_TEXT % (
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
    )


_PYNAMODB_TEXT = "%04d-%02d-%02dT%02d:%02d:%02d.%06d+0000"


def datetime_from(text: str, pattern: str) -> Any:
    """A stored datetime text: parsed with ``pattern`` (aware, UTC) when it matches, else the
    text itself, which validation parses as ISO 8601 (items written in another format)."""
    if pattern == PYNAMODB_DATETIME:
        return text  # ISO 8601: the model's validation parses it
    try:
        return datetime.strptime(text, pattern).replace(tzinfo=UTC)
    except ValueError:
        return text


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


# -- annotation-free decoding -----------------------------------------------------------------


def decode_value(av: Wire) -> Any:
    """Python value of any wire attribute value (sets as ``set``, numbers as int or Decimal)."""
    ((tag, raw),) = av.items()
    if tag == "S":
        return raw
    if tag == "N":
        return number_from_wire(raw)
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
        return {number_from_wire(v) for v in raw}
    if tag == "B":
        return bytes_of(raw)
    if tag == "BS":
        return {bytes_of(v) for v in raw}
    raise ValueError(f"unknown attribute type {tag!r}")


def bytes_of(raw: Any) -> bytes:
    """The bytes of a ``B`` value (base64 text when it comes from a JSON response)."""
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw)
    return base64.b64decode(raw)


# -- TTL ----------------------------------------------------------------------------------------


def ttl_passed(item: Mapping[str, Wire], ttl_attribute: str, now_epoch: int) -> bool:
    """Whether ``item``'s TTL attribute lies before ``now_epoch``: expired, not yet deleted by
    DynamoDB. No TTL, or one that is not a number, never expires."""
    av = item.get(ttl_attribute)
    if av is None or "N" not in av:
        return False
    try:
        return int(float(av["N"])) < now_epoch
    except ValueError:
        return False


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
        return len(bytes_of(raw))
    if tag in ("BOOL", "NULL"):
        return 1
    if tag == "SS":
        return sum(len(s.encode()) for s in raw)
    if tag == "NS":
        return sum(_number_size(n) for n in raw)
    if tag == "BS":
        return sum(len(bytes_of(b)) for b in raw)
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


# -- the conversions as expressions, for the code generator -----------------------------------
# Each is a Python expression over ``v`` (the value; encoders) or ``av`` (the attribute value;
# decoders). The functions they call are named as in EXPRESSION_GLOBALS, which the generated
# code runs in; converters (codec.py) carry them and codegen.py inlines them.

ENCODE_TEXT = "{'S': v}"
ENCODE_ENUM_TEXT = "{'S': v if v.__class__ is str else v._value_}"
ENCODE_STR_OF = "{'S': str(v)}"
ENCODE_ISOFORMAT = "{'S': v.isoformat()}"
ENCODE_DATETIME = "{'S': _datetime_text(v)}"
ENCODE_DATETIME_AS = "{'S': _datetime_as(v, %r)}"  # % a preset's pattern (never free text)
ENCODE_EPOCH = "{'N': _epoch_text(v)}"
ENCODE_BOOL = "{'BOOL': v}"
ENCODE_NUMBER = "{'N': _number_text(v)}"
# Common values written without a call: small ints and plain Decimals are always storable.
ENCODE_INT = "{'N': str(v) if v.__class__ is int and -_MAX_INT < v < _MAX_INT else _number_text(v)}"
ENCODE_DECIMAL = "{'N': _decimal_text(v)}"
ENCODE_TEXT_SET = "{'SS': sorted(v)}"

# Decoding. Text under 39 characters holds at most 38 digits, so a finite value whose exponent
# is in range is storable: the common case costs a length test, the conversion and two checks of
# the Decimal. Anything else goes through ``wire_number``.
DECODE_INT = "int(num) if len(num := av['N']) < 39 else _int_from_wire(num)"
_IN_RANGE = "(dec := _Decimal(num)).is_finite() and -131 < dec.adjusted() < 126"
DECODE_FLOAT = f"float(num) if len(num := av['N']) < 39 and {_IN_RANGE} else _float_from_wire(num)"
DECODE_DECIMAL = f"dec if len(num := av['N']) < 39 and {_IN_RANGE} else _decimal_from_wire(num)"

#: The names the expressions above call, as the generated code's globals see them.
EXPRESSION_GLOBALS: Mapping[str, Any] = {
    "_number_text": number_text,
    "_datetime_text": datetime_text,
    "_datetime_as": datetime_as,
    "_epoch_text": epoch_text,
    "_decimal_text": decimal_text,
    "_MAX_INT": MAX_INT,
    "_Decimal": Decimal,
    "_int_from_wire": int_from_wire,
    "_float_from_wire": float_from_wire,
    "_decimal_from_wire": decimal_from_wire,
    "_value_size": value_size,
}


# -- converters: how one annotation's values are stored ---------------------------------------

Encoder = Callable[[Any], Wire | None]
Decoder = Callable[[Wire], Any]


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


def scalar(
    tag: str,
    to_wire: Callable[[Any], Any],
    from_wire: Callable[[Any], Any],
    encode_expr: str | None = None,
    decode_expr: str | None = None,
    max_size: int | None = None,
) -> Converter:
    getter = itemgetter(tag)
    if decode_expr is None and from_wire is identity:
        decode_expr = f"av[{tag!r}]"
    if max_size is None and tag in ("N", "BOOL"):
        max_size = 21 if tag == "N" else 1
    if from_wire is identity:
        return Converter(
            lambda v: {tag: to_wire(v)}, getter, tag, encode_expr, decode_expr, False, max_size
        )

    def decode(av: Wire) -> Any:
        return from_wire(av[tag])

    return Converter(
        lambda v: {tag: to_wire(v)}, decode, tag, encode_expr, decode_expr, False, max_size
    )


def identity(value: Any) -> Any:
    return value


def str_of_enum(value: Any) -> Any:
    return value._value_ if isinstance(value, enum.Enum) else value
