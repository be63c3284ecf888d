"""Document paths into an entity's nested models, maps and lists (``"shipping.city"``,
``"lines[0].qty"``, ``"attrs.colour"``), resolved against the entity's annotations.

:func:`resolve_path` is the one place that reads such a path. It parses it (names joined by
``.``, list indexes as ``[n]`` in ASCII digits), walks the annotations down from the entity's
field and returns a :class:`DocumentPath`: the annotation and converter of what the path
addresses (so a value is validated and stored exactly as that nested field stores it), the path
spelt with stored attribute names (aliases), which an expression aliases segment by segment,
and the parent that must be stored for DynamoDB to accept the path, when the model does not
guarantee it.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, TypeAdapter, ValidationError

from ._codec import _map_key, bare_annotation, converter_for, declared_datetime_format
from ._wire import Converter, Wire, value_size
from .errors import InvalidRequestError

if TYPE_CHECKING:
    from ._entity_spec import EntitySpec
    from ._wire import DatetimeFormat

Step = str | int
"""One segment of a path: a name (a model field or a map key) or a list index."""

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[[0-9]+\])*)")
_INDEX = re.compile(r"\[([0-9]+)\]")
_UNTYPED = object()  # what a path under an ``Any`` (or a union) addresses: nothing is known


def is_document_path(text: str) -> bool:
    """Whether ``text`` goes below a top-level field (``a.b``, ``a[0]``)."""
    return "." in text or "[" in text


def parse_path(text: str) -> tuple[Step, ...]:
    """``"lines[0].qty"`` -> ``("lines", 0, "qty")``; anything else is refused, naming it."""
    steps: list[Step] = []
    for part in text.split("."):
        match = _SEGMENT.fullmatch(part)
        if match is None:
            raise InvalidRequestError(
                f"{text!r} is not a document path: write names joined by '.' and list indexes "
                "as [n] in ASCII digits, e.g. 'lines[0].qty'",
                key=text,
            )
        steps.append(match.group(1))
        steps.extend(int(index) for index in _INDEX.findall(match.group(2)))
    return tuple(steps)


def render_path(steps: tuple[Step, ...]) -> str:
    """``("lines", 0, "qty")`` -> ``"lines[0].qty"``."""
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


class DocumentPath:
    """A path resolved against an entity: what it addresses and how that is stored.

    ``text`` is the path as given; ``field`` its top-level field; ``stored`` the path with
    stored attribute names; ``annotation`` (and ``metadata``, the nested field's constraints)
    the type of what it addresses, ``converter`` how that is stored; ``container`` what holds
    its last segment (``"model"``, ``"map"`` or ``"list"``); ``required`` whether it is a
    required model field (which cannot be removed); ``parent`` the stored path that must exist
    for DynamoDB to accept an update of this path, or None when the model guarantees it.
    """

    __slots__ = (
        "_adapters",
        "annotation",
        "container",
        "converter",
        "field",
        "metadata",
        "owner",
        "parent",
        "required",
        "stored",
        "text",
    )

    def __init__(
        self,
        owner: str,
        text: str,
        field: str,
        stored: str,
        annotation: Any,
        metadata: tuple[Any, ...],
        converter: Converter,
        container: Literal["model", "map", "list"],
        required: bool,
        parent: str | None,
    ) -> None:
        self.owner = owner
        self.text = text
        self.field = field
        self.stored = stored
        self.annotation = annotation
        self.metadata = metadata
        self.converter = converter
        self.container = container
        self.required = required
        self.parent = parent
        self._adapters: dict[bool, TypeAdapter[Any]] = {}  # with constraints or without

    def __repr__(self) -> str:
        return f"DocumentPath({self.owner}.{self.text})"

    @property
    def kind(self) -> str:
        """What ``add=``, ``delete=`` and ``append=`` may do here (see :func:`value_kind`)."""
        return "any" if self.annotation is _UNTYPED else value_kind(self.annotation)

    def validate(self, value: Any, *, constraints: bool = True) -> Any:
        """``value`` validated against the addressed type (``"3"`` -> 3 for an int) and, with
        ``constraints``, the nested field's (``Field(ge=0)``: not for an ``add=`` delta or the
        part ``append=`` adds); :class:`InvalidRequestError` naming the path when it fails."""
        if self.annotation is _UNTYPED:
            return value
        if value is None and not _admits_none(self.annotation):
            raise InvalidRequestError(f"{self.owner}.{self.text} cannot be None", key=self.text)
        constrained = constraints and bool(self.metadata)
        adapter = self._adapters.get(constrained)
        if adapter is None:
            target = self.annotation
            if constrained:
                target = Annotated.__class_getitem__((target, *self.metadata))  # type: ignore[attr-defined]
            adapter = self._adapters[constrained] = TypeAdapter(target)
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            message = exc.errors()[0].get("msg", "invalid value")
            raise InvalidRequestError(
                f"{self.owner}.{self.text} is not valid: {message} (given a value of type "
                f"{type(value).__name__})",
                key=self.text,
            ) from None

    def stored_form(self, value: Any) -> Wire | None:
        """A validated ``value`` as the path stores it; None when it is stored by leaving the
        attribute out (None or an empty set in a model, as the item codec does)."""
        if value is None:
            return None if self.container == "model" else {"NULL": True}
        try:
            wire = self.converter.encode(value)
            if wire is not None:
                value_size(wire)  # encodes every string: a lone surrogate raises here
        except (ValueError, TypeError, AttributeError, ArithmeticError) as exc:
            raise InvalidRequestError(
                f"{self.owner}.{self.text} cannot be stored: {exc}", key=self.text
            ) from None
        if wire is None and self.container != "model":
            raise InvalidRequestError(
                f"{self.owner}.{self.text}: an empty set cannot be stored in a "
                f"{self.container}; remove the entry instead",
                key=self.text,
            )
        return wire


def path_value(spec: EntitySpec, text: str, value: Any) -> Wire | None:
    """``value`` as the document path ``text`` stores it, for a condition (which compares, and
    so validates nothing); None when the path is not the model's (an extra attribute, a stored
    name) or the value is not of its type: the caller then encodes it by its own type."""
    try:
        wire = resolve_path(spec, text).converter.encode(value)
        if wire is not None:
            value_size(wire)
        return wire
    except (InvalidRequestError, ValueError, TypeError, AttributeError, ArithmeticError):
        return None


def value_kind(annotation: Any) -> str:
    """A "set", a "list", a "number" or "other": ``annotation`` without ``Optional`` and
    ``Annotated``."""
    bare = bare_annotation(annotation)
    origin = typing.get_origin(bare)
    if origin in (set, frozenset) or bare in (set, frozenset):
        return "set"
    if origin in (list, tuple) or bare in (list, tuple):
        return "list"
    if isinstance(bare, type) and issubclass(bare, (int, float, Decimal)) and bare is not bool:
        return "number"
    return "other"


@functools.lru_cache(maxsize=4096)
def resolve_path(spec: EntitySpec, text: str) -> DocumentPath:
    """``text`` resolved against ``spec``'s entity: the one reading of a document path.

    Refused with :class:`InvalidRequestError` naming the path: a malformed path, a name that
    is no field of its model, an index into something that is not a list, a name into
    something that is not a model or a map, a map key of the wrong type. A path below an
    ``Any`` (or a union of several types) is taken as it is, its values stored by their own
    types."""
    steps = parse_path(text)
    top = steps[0]
    assert isinstance(top, str)  # a path starts with a name
    info = spec.cls.model_fields.get(top)
    if info is None:
        raise InvalidRequestError(f"{spec.name} has no field {top!r} (in {text!r})", key=text)
    fmt = declared_datetime_format(info.annotation, info.metadata) or spec.table.datetime_format
    walk = _Walk(spec.name, text, info.annotation, tuple(info.metadata), fmt)
    stored: list[Step] = [spec.attr_names[top]]
    parent_stored = always = walk.never_absent()
    for step in steps[1:]:
        parent_stored = always
        stored.append(walk.step(step, render_path(steps[: len(stored)])))
        always = parent_stored and walk.container == "model" and walk.never_absent()
    if walk.annotation is _UNTYPED:
        converter = converter_for(Any)  # values stored by their own types
    else:
        converter = converter_for(walk.annotation, datetime_format=walk.fmt)
    return DocumentPath(
        spec.name,
        text,
        top,
        render_path(tuple(stored)),
        walk.annotation,
        walk.metadata,
        converter,
        walk.container,
        walk.required,
        None if parent_stored else render_path(tuple(stored[:-1])),
    )


class _Walk:
    """Where a path's walk down the annotations stands: the annotation reached, its field's
    metadata, the datetime format in force, and what holds it."""

    def __init__(
        self,
        owner: str,
        text: str,
        annotation: Any,
        metadata: tuple[Any, ...],
        fmt: DatetimeFormat | None,
    ) -> None:
        self.owner = owner
        self.text = text
        self.annotation = annotation
        self.metadata = metadata
        self.fmt = fmt
        self.container: Literal["model", "map", "list"] = "model"
        self.required = False

    def never_absent(self) -> bool:
        """Whether a value of the annotation reached is always stored (not None, not Any, not
        a set, which is left out when empty)."""
        if self.annotation is _UNTYPED or _admits_none(self.annotation):
            return False
        return value_kind(self.annotation) != "set"

    def step(self, step: Step, where: str) -> Step:
        """Go one step down from ``where``; returns the step as stored."""
        bare = bare_annotation(self.annotation)
        origin = typing.get_origin(bare)
        args = typing.get_args(bare)
        self.metadata, self.required = (), False
        untyped = self.annotation is _UNTYPED or bare is Any or bare is object
        if untyped or origin in (Union, types.UnionType):
            self.annotation = _UNTYPED
            self.container = "list" if isinstance(step, int) else "map"
            return step
        if isinstance(step, int):
            return self._index(step, where, bare, origin, args)
        if isinstance(bare, type) and issubclass(bare, BaseModel):
            return self._field(step, where, bare)
        if origin in (dict, Mapping, MutableMapping) or bare is dict:
            return self._key(step, where, args)
        raise InvalidRequestError(
            f"{self.owner}.{where} ({_describe(bare)}) has no {step!r}: it is neither a model "
            "nor a map",
            key=self.text,
        )

    def _index(self, step: int, where: str, bare: Any, origin: Any, args: tuple[Any, ...]) -> Step:
        self.container = "list"
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if step >= len(args):
                raise InvalidRequestError(
                    f"{self.owner}.{where} holds {len(args)} values: it has no [{step}]",
                    key=self.text,
                )
            self.annotation = args[step]
            return step
        if origin in (list, tuple, Sequence, MutableSequence) or bare in (list, tuple):
            self.annotation = args[0] if args else Any
            return step
        raise InvalidRequestError(
            f"{self.owner}.{where} ({_describe(bare)}) is not a list: it has no [{step}]",
            key=self.text,
        )

    def _field(self, step: str, where: str, model: type[BaseModel]) -> Step:
        info = model.model_fields.get(step)
        if info is None:
            raise InvalidRequestError(
                f"{self.owner}.{where} ({model.__qualname__}) has no field {step!r}",
                key=self.text,
            )
        attr = info.serialization_alias or info.alias or step
        if is_document_path(attr) or "]" in attr:
            raise InvalidRequestError(
                f"{self.owner}.{where}.{step} is stored as {attr!r}, which a document path "
                "cannot address; update the model whole",
                key=self.text,
            )
        self.container = "model"
        self.annotation = info.annotation
        self.metadata = tuple(info.metadata)
        self.required = info.is_required()
        self.fmt = declared_datetime_format(info.annotation, info.metadata) or self.fmt
        return attr

    def _key(self, step: str, where: str, args: tuple[Any, ...]) -> Step:
        self.container = "map"
        key_type, value_type = args if len(args) == 2 else (Any, Any)
        self.annotation = value_type
        if bare_annotation(key_type) in (str, Any):
            return step
        try:
            key = TypeAdapter(key_type).validate_python(step)
        except ValidationError as exc:
            message = exc.errors()[0].get("msg", "invalid key")
            raise InvalidRequestError(
                f"{self.owner}.{where}: {step!r} is not a key of this map: {message}",
                key=self.text,
            ) from None
        return _map_key(key)


def _admits_none(annotation: Any) -> bool:
    if annotation is Any or annotation is None or annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _admits_none(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_admits_none(a) for a in typing.get_args(annotation))
    return False


def _describe(bare: Any) -> str:
    """A type's name for a message: ``Address``, ``list``, ``Literal``."""
    origin = typing.get_origin(bare)
    if origin is not None:
        return str(getattr(origin, "__name__", None) or getattr(origin, "_name", None) or origin)
    return str(getattr(bare, "__qualname__", None) or repr(bare))
