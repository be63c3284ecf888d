"""The model a lint run checks: the repository class, its patterns and every entity of its
table, with the small lookups the rules share. No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._entity_spec import EntitySpec
    from ..._keys import KeyTemplate
    from ..._patterns.declare import Pattern
    from ..._repository import Repository


@dataclass
class Model:
    repository: type[Repository]
    patterns: dict[str, Pattern]
    specs: list[EntitySpec]

    @property
    def table_name(self) -> str:
        return self.repository.__singletable_table__.name


def build_model(repository: type[Repository]) -> Model:
    from ..._entity import spec_of
    from ..._patterns.declare import DeclaredPattern

    table = repository.__singletable_table__
    patterns: dict[str, Pattern] = {}
    for name, value in repository.__patterns__.items():
        patterns[name] = value.pattern if isinstance(value, DeclaredPattern) else value
    specs: dict[int, EntitySpec] = {}
    for cls in table.entities.values():
        spec = spec_of(cls)
        specs[id(spec)] = spec
    for pattern in patterns.values():
        for spec in pattern_specs(pattern):
            specs.setdefault(id(spec), spec)
    return Model(repository, patterns, list(specs.values()))


def pattern_specs(pattern: Pattern) -> list[EntitySpec]:
    specs = getattr(pattern, "specs", None)
    if specs is not None:
        return list(specs)
    spec = getattr(pattern, "spec", None)
    return [spec] if spec is not None else []


def entity_name(spec: EntitySpec) -> str:
    """An entity's name in subjects and messages: its class name."""
    return spec.cls.__name__


def index_label(index: str | None) -> str:
    return index if index is not None else "the table"


def subject(name: str, index: str | None) -> str:
    return name if index is None else f"{name}.{index}"


def index_templates(spec: EntitySpec, index: str | None) -> tuple[KeyTemplate, KeyTemplate | None]:
    index_spec = spec.index(index)
    pk = index_spec.pk or spec.base.pk
    assert pk is not None
    return pk, index_spec.sk


def populated(spec: EntitySpec) -> list[str | None]:
    return [None, *spec.indexes]
