"""Projections: typed, read-only subsets of an entity's fields.

```python
class OrderSummary(Projection[Order]):
    order_id: str
    status: Status
```

A projection's fields carry the entity's names and compatible annotations (checked when the
class statement runs). ``get(E, project=P)`` and ``query(E, project=P)`` read only P's
attributes (a ``ProjectionExpression``) and return ``P`` instances, decoded with the entity's
own per-field converters, so values read exactly as the entity would read them. Projections
cannot be written.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ._codec import bare_annotation, input_key_of
from ._entity import Entity, spec_of
from ._entity_spec import EntitySpec
from .errors import ItemDecodeError, ModelDefinitionError

if TYPE_CHECKING:
    from ._codec import FieldPlan

E = TypeVar("E", bound=Entity)


class Projection(BaseModel, Generic[E]):
    """Base of projections: ``class OrderSummary(Projection[Order])`` with a subset of
    ``Order``'s fields. Instances are frozen values (a projection is never written)."""

    model_config = ConfigDict(frozen=True)

    __singletable_entity__: ClassVar[type[Entity] | None] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        entity = _entity_of(cls)
        if entity is None:
            return  # Projection[Order] itself (the parametrized base), or a generic subclass
        cls.__singletable_entity__ = entity
        if "[" not in cls.__name__:
            check_projection(cls, entity)


def _entity_of(cls: type[BaseModel]) -> type[Entity] | None:
    for klass in cls.__mro__:
        metadata = getattr(klass, "__pydantic_generic_metadata__", None) or {}
        if metadata.get("origin") is Projection and metadata.get("args"):
            (entity,) = metadata["args"]
            if isinstance(entity, type) and issubclass(entity, Entity):
                return entity
    return None


def _compatible(declared: Any, stored: Any) -> bool:
    """Whether a projection field annotated ``declared`` can hold what the entity field
    annotated ``stored`` holds: the same type (markers and ``Annotated`` metadata aside), that
    type or None, or ``Any``/``object``."""
    declared, stored = bare_annotation(declared), bare_annotation(stored)
    if declared in (Any, object) or declared == stored:
        return True
    options = typing.get_args(declared)
    return type(None) in options and stored in options


def check_projection(cls: type[Projection[Any]], entity: type[Entity]) -> None:
    """Definition-time checks: every field is one of the entity's, with a compatible
    annotation (:class:`ModelDefinitionError` naming the field and the fix)."""
    fields = spec_of(entity).cls.model_fields
    for name, info in cls.model_fields.items():
        if name not in fields:
            raise ModelDefinitionError(
                f"{cls.__qualname__}.{name}: {entity.__qualname__} has no field {name!r}; a "
                f"projection declares a subset of the entity's fields (by the same names)"
            )
        stored = fields[name].annotation
        if not _compatible(info.annotation, stored):
            raise ModelDefinitionError(
                f"{cls.__qualname__}.{name} is annotated {info.annotation!r}, but "
                f"{entity.__qualname__}.{name} holds {stored!r}; use the entity's annotation "
                "(or it | None, or Any)"
            )


def is_projection(target: Any) -> bool:
    """Whether ``target`` is a projection class or instance."""
    cls = target if isinstance(target, type) else type(target)
    return isinstance(cls, type) and issubclass(cls, Projection)


class ProjectionPlan:
    """How a pattern reads projection ``model`` of an entity: the attributes to ask for and
    the decoder. Built once per pattern at bind time."""

    __slots__ = ("attributes", "decode", "model")

    def __init__(self, model: type[Projection[Any]], spec: EntitySpec) -> None:
        entity = model.__singletable_entity__
        if entity is None or spec_of(entity) is not spec:
            raise ModelDefinitionError(
                f"{model.__qualname__} projects {getattr(entity, '__qualname__', None)}, not "
                f"{spec.name}; declare it as Projection[{spec.name}]"
            )
        self.model = model
        plans = [plan for plan in spec.codec.fields if plan.name in model.model_fields]
        self.attributes = tuple(plan.attr for plan in plans)
        self.decode = _decoder(model, spec, plans)

    def expression(self, extra: tuple[str, ...]) -> tuple[str, dict[str, str]]:
        """``(ProjectionExpression, ExpressionAttributeNames)`` for the projection's attributes
        plus ``extra`` ones (type tag, TTL, keys), every name aliased."""
        names: dict[str, str] = {}
        seen: list[str] = []
        for attr in (*self.attributes, *extra):
            if attr not in seen:
                seen.append(attr)
        for number, attr in enumerate(seen):
            names[f"#p{number}"] = attr
        return ", ".join(names), names


def _decoder(
    model: type[Projection[Any]], spec: EntitySpec, plans: list[FieldPlan]
) -> Callable[[Mapping[str, Any]], Any]:
    keys = [input_key_of(model, plan.name) for plan in plans]

    def decode(item: Mapping[str, Any]) -> Any:
        data: dict[str, Any] = {}
        try:
            for plan, key in zip(plans, keys):
                av = item.get(plan.attr)
                if av is None:
                    if plan.absent is not None:
                        data[key] = None if plan.absent == "none" else set()
                    continue
                data[key] = plan.converter.decode(av)
            return model.model_validate(data)
        except (ValidationError, KeyError, ValueError, TypeError, ArithmeticError) as exc:
            key_text = spec.describe_key(item)
            raise ItemDecodeError(
                f"stored item {key_text} does not validate as {model.__qualname__} (a "
                f"projection of {spec.name}): {type(exc).__name__}",
                key=key_text,
                raw=dict(item),
            ) from exc

    return decode
