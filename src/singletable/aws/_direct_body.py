"""DynamoDB request bodies as botocore's ``JSONSerializer`` writes them, compiled per operation.

botocore serialises a request by walking the operation's input shape and rebuilding every
dict and list on the way (``botocore/serialize.py``), then ``json.dumps`` the copy. The only
values it changes are blobs (base64 text) and sets given for lists; everything else is written
as given, in the order given. :func:`compile_body` builds, from the same service model, a
function that returns the parameters with exactly those changes made (copying a container only
when something inside it changed), so ``json.dumps`` of its result is byte for byte botocore's
body. Shapes it does not mirror (timestamps, floats, renamed members) make it decline, and the
operation is then sent by botocore.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.model import ListShape, MapShape, StructureShape

if TYPE_CHECKING:
    from botocore.model import OperationModel, Shape

__all__ = ["BodyEncoder", "Unsupported", "compile_body"]

BodyEncoder = Callable[[Any], bytes]
_Convert = Callable[[Any], Any]

_AV_KEPT = frozenset({"S", "N", "NULL", "BOOL"})
_AV_STRING_SETS = frozenset({"SS", "NS"})


class Unsupported(Exception):
    """An input shape :func:`compile_body` does not mirror."""


def _identity(value: Any) -> Any:
    return value


def _blob(value: Any) -> str:
    # botocore: base64.b64encode(value).strip().decode("utf-8"), a str encoded first.
    if isinstance(value, str):
        value = value.encode("utf-8")
    return binascii.b2a_base64(value, newline=False).decode("ascii")


def _as_list(value: Any) -> Any:
    # botocore builds a new list from any iterable; json.dumps writes lists and tuples alike.
    return value if type(value) is list or type(value) is tuple else list(value)


def _attribute_value(value: Any) -> Any:
    """One ``AttributeValue`` with its blobs encoded (the same object when it has none)."""
    if type(value) is dict and len(value) == 1:
        for tag, inner in value.items():
            if tag in _AV_KEPT:
                return value
            if tag == "M":
                converted = _attribute_map(inner)
                return value if converted is inner else {"M": converted}
            if tag == "L":
                converted = _attribute_list(inner)
                return value if converted is inner else {"L": converted}
            if tag == "B":
                return {"B": _blob(inner)}
            if tag == "BS":
                return {"BS": [_blob(e) for e in inner]}
            if tag in _AV_STRING_SETS:
                converted = _as_list(inner)
                return value if converted is inner else {tag: converted}
    return _attribute_value_members(value)


def _attribute_value_members(value: Any) -> Any:
    """The general case (several members, or an unknown one), member by member."""
    out: dict[str, Any] = {}
    for tag, inner in value.items():
        if tag in ("B",):
            out[tag] = _blob(inner)
        elif tag == "BS":
            out[tag] = [_blob(e) for e in inner]
        elif tag == "M":
            out[tag] = _attribute_map(inner)
        elif tag == "L":
            out[tag] = _attribute_list(inner)
        elif tag in _AV_STRING_SETS:
            out[tag] = _as_list(inner)
        else:
            out[tag] = inner
    return out


def _attribute_map(value: Any) -> Any:
    """A map of names to ``AttributeValue`` (an item, a key, ``M``), copied only if changed."""
    out = None
    for name, av in value.items():
        converted = _attribute_value(av)
        if converted is not av:
            if out is None:
                out = dict(value)
            out[name] = converted
    return value if out is None else out


def _attribute_list(value: Any) -> Any:
    converted = [_attribute_value(av) for av in value]
    if type(value) is list and all(c is v for c, v in zip(converted, value, strict=True)):
        return value
    return converted


def _is_attribute_value(shape: Shape) -> bool:
    return (
        isinstance(shape, StructureShape)
        and not shape.is_document_type
        and not shape.is_tagged_union
        and tuple(shape.members) == ("S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL")
    )


def _compile(shape: Shape, memo: dict[str, _Convert]) -> _Convert:
    if shape.name in memo:
        return memo[shape.name]
    if isinstance(shape, StructureShape):
        if _is_attribute_value(shape):
            return _attribute_value
        if shape.is_document_type:
            return _identity
        converters: dict[str, _Convert] = {}

        def structure(value: Any) -> Any:
            out = None
            for name, member in value.items():
                convert = converters[name]  # an unknown member: botocore raises KeyError too
                if convert is _identity:
                    continue
                converted = convert(member)
                if converted is not member:
                    if out is None:
                        out = dict(value)
                    out[name] = converted
            return value if out is None else out

        memo[shape.name] = structure  # before the members: shapes may be recursive
        for name, member_shape in shape.members.items():
            if member_shape.serialization.get("name", name) != name:
                raise Unsupported(f"{shape.name}.{name} is renamed on the wire")
            converters[name] = _compile(member_shape, memo)
        if all(c is _identity for c in converters.values()):
            memo[shape.name] = _identity
            return _identity
        return structure
    if isinstance(shape, MapShape):
        if _is_attribute_value(shape.value):
            return _attribute_map
        value_convert = _compile(shape.value, memo)
        if value_convert is _identity:
            return _identity

        def map_(value: Any) -> Any:
            return {k: value_convert(v) for k, v in value.items()}

        return map_
    if isinstance(shape, ListShape):
        item_convert = _compile(shape.member, memo)
        if item_convert is _identity:
            return _as_list

        def list_(value: Any) -> Any:
            return [item_convert(v) for v in value]

        return list_
    if shape.type_name == "blob":
        return _blob
    if shape.type_name in ("string", "integer", "long", "boolean"):
        return _identity
    raise Unsupported(f"{shape.name}: {shape.type_name}")  # timestamps, floats, anything new


def compile_body(operation_model: OperationModel) -> BodyEncoder:
    """The body botocore's ``JSONSerializer`` sends for ``operation_model``'s parameters, as
    a function of them. Raises :class:`Unsupported` for an input shape it does not mirror."""
    shape = operation_model.input_shape
    convert = _identity if shape is None else _compile(shape, {})
    dumps = json.dumps

    def encode(params: Any) -> bytes:
        return dumps(convert(params)).encode("utf-8")

    return encode
