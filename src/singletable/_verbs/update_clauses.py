"""An update's clauses, checked, and what they change (pure: no I/O).

:class:`Clauses` holds the entries of one update by clause (``set=``, ``remove=``, ``add=``...);
:func:`check_clauses` refuses what no update may do; :func:`changes` works out the fields the
update changes (and those it changes blind), :func:`known` what it knows once applied. The checks
and the changes read the entries' names and clauses only, never their values: with the
repository's compiled shapes (:mod:`.shapes`), :func:`clause_shape` does them once per shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._context import WriteContext
from .._document_paths import DocumentPath, value_kind
from .._entity_spec import EntitySpec
from .._wire import Wire
from ..errors import InvalidRequestError
from .update_paths import check_overlaps, clause_paths


class Clauses:
    """An update's clauses, each by field name or document path (``set=`` and
    ``if_not_exists=`` values are replaced by their coerced values once checked; ``paths``
    holds the document paths among the entries, resolved)."""

    __slots__ = (
        "add",
        "append",
        "delete",
        "if_not_exists",
        "paths",
        "prepend",
        "remove",
        "set_values",
    )

    def __init__(
        self,
        set_values: Mapping[str, Any] | None,
        remove: Iterable[str],
        add: Mapping[str, Any] | None,
        delete: Mapping[str, Any] | None,
        append: Mapping[str, Any] | None,
        if_not_exists: Mapping[str, Any] | None,
        prepend: Mapping[str, Any] | None = None,
    ) -> None:
        self.set_values = dict(set_values or {})
        self.add = dict(add or {})
        self.delete = dict(delete or {})
        self.append = dict(append or {})
        self.if_not_exists = dict(if_not_exists or {})
        self.remove = list(remove)
        self.prepend = dict(prepend or {})
        self.paths: dict[str, DocumentPath] = {}

    def by_clause(self) -> dict[str, list[str]]:
        """Each clause keyword's entries."""
        return {
            "set": [*self.set_values],
            "remove": self.remove,
            "add": [*self.add],
            "delete": [*self.delete],
            "append": [*self.append],
            "if_not_exists": [*self.if_not_exists],
            "prepend": [*self.prepend],
        }

    def mentioned(self) -> list[str]:
        """Every field (or path) a clause names, in clause order (one named twice appears
        twice)."""
        return [name for entries in self.by_clause().values() for name in entries]

    def fields(self, entries: Iterable[str]) -> list[str]:
        """The top-level fields among ``entries`` (not document paths)."""
        return [name for name in entries if name not in self.paths]

    def target(self, spec: EntitySpec, name: str) -> str:
        """The stored attribute (or stored path) an entry writes."""
        path = self.paths.get(name)
        return spec.attr_names[name] if path is None else path.stored

    def field_of(self, name: str) -> str:
        """The top-level field an entry changes."""
        path = self.paths.get(name)
        return name if path is None else path.field

    def stored_form(self, spec: EntitySpec, name: str, value: Any) -> Wire | None:
        """An entry's value as stored (None: left out)."""
        path = self.paths.get(name)
        return spec.encode_field(name, value) if path is None else path.stored_form(value)


def check_clauses(spec: EntitySpec, clauses: Clauses, upsert: bool) -> dict[str, DocumentPath]:
    """Refuse a clause naming an unknown, primary-key or maintained field, a field named in two
    clauses, a required field in ``remove=``, or a field of the wrong kind for ``add=``,
    ``delete=``, ``append=`` or ``prepend=``; resolve and check the document paths (none in an
    upsert, which may create the item) and refuse entries that overlap. Returns the document
    paths (``clauses.paths``)."""
    fields = spec.cls.model_fields
    primary = set(spec.primary_fields)
    mentioned = clauses.mentioned()
    clauses.paths = clause_paths(spec, clauses.by_clause())
    if clauses.paths and upsert:
        text = next(iter(clauses.paths))
        raise InvalidRequestError(
            f"upsert of {spec.name} may create the item, and {text} needs "
            f"{clauses.paths[text].field} stored; set {clauses.paths[text].field} whole",
            key=text,
        )
    for name in clauses.fields(mentioned):
        if name not in fields:
            raise InvalidRequestError(f"{spec.name} has no field {name!r} to update", key=name)
        if name in primary:
            raise InvalidRequestError(
                f"{spec.name}.{name} is part of the primary key and cannot be updated in place; "
                f"use repo.move(entity, {name}=...) to re-key the item",
                key=name,
            )
        if name in (spec.version_field, spec.created_field, spec.updated_field):
            raise InvalidRequestError(
                f"{spec.name}.{name} is maintained by singletable and cannot be set", key=name
            )
    seen: set[str] = set()
    for name in mentioned:
        if name in seen:
            raise InvalidRequestError(f"{spec.name}.{name} appears in two update clauses", key=name)
        seen.add(name)
    if clauses.paths:
        check_overlaps(spec, mentioned)
    for name in clauses.fields(clauses.remove):
        if fields[name].is_required():
            raise InvalidRequestError(
                f"{spec.name}.{name} is required and cannot be removed", key=name
            )
    for name in clauses.fields(clauses.add):
        kind = field_kind(spec, name)
        if kind not in ("number", "set"):
            raise InvalidRequestError(
                f"add= needs a number or set field; {name!r} is not", key=name
            )
    for name in clauses.fields(clauses.delete):
        if field_kind(spec, name) != "set":
            raise InvalidRequestError(f"delete= needs a set field; {name!r} is not", key=name)
    for clause in ("append", "prepend"):
        for name in clauses.fields(getattr(clauses, clause)):
            if field_kind(spec, name) != "list":
                raise InvalidRequestError(
                    f"{clause}= needs a list field; {name!r} is not", key=name
                )
    return clauses.paths


class ClauseShape:
    """What an update's entries (their names and clauses) decide, whatever their values: the
    document paths among them, checked (:func:`check_clauses`), and, once the values are
    coerced, ``(touched, blind)`` (:func:`changes`)."""

    __slots__ = ("_changes", "paths")

    def __init__(self, paths: dict[str, DocumentPath]) -> None:
        self.paths = paths
        self._changes: tuple[frozenset[str], dict[str, str]] | None = None

    def changes(
        self, spec: EntitySpec, clauses: Clauses, instance_given: bool, upsert: bool
    ) -> tuple[frozenset[str], dict[str, str]]:
        """:func:`changes` of ``clauses`` once coerced (worked out on the first call: the
        coerced clauses of one shape name the same fields every time)."""
        if self._changes is None:
            self._changes = changes(spec, clauses, instance_given, upsert)
        return self._changes


def clause_shape(
    spec: EntitySpec, ctx: WriteContext, clauses: Clauses, instance_given: bool, upsert: bool
) -> ClauseShape:
    """The checked shape of ``clauses`` (``clauses.paths`` set from it): with the repository's
    shapes, checked once per shape (the checks read the entries' names and clauses only)."""
    if ctx.shapes is None:
        return ClauseShape(check_clauses(spec, clauses, upsert))
    entries = tuple(tuple(names) for names in clauses.by_clause().values())
    shape: ClauseShape = ctx.shapes.get(
        ("clauses", spec, upsert, instance_given, entries),
        lambda: ClauseShape(check_clauses(spec, clauses, upsert)),
    )
    clauses.paths = shape.paths
    return shape


def changes(
    spec: EntitySpec, clauses: Clauses, instance_given: bool, upsert: bool
) -> tuple[frozenset[str], dict[str, str]]:
    """``(touched, blind)``: the fields the update changes, and those it changes blind (in ways
    the client cannot compute: field -> how). The maintained fields change on every update."""
    top = clauses.fields
    by_clause = clauses.by_clause()
    touched = {clauses.field_of(name) for entries in by_clause.values() for name in entries}
    blind = {n: "add=" for n in top(clauses.add)} | {n: "delete=" for n in top(clauses.delete)}
    blind |= {n: "append=" for n in top(clauses.append)}
    blind |= {n: "prepend=" for n in top(clauses.prepend)}
    if not instance_given:
        blind |= {n: "if_not_exists=" for n in top(clauses.if_not_exists)}
    for clause, entries in by_clause.items():  # a path changes part of its field: the rest
        for name in entries:  # of the new value is not known here
            if name in clauses.paths:
                blind.setdefault(clauses.paths[name].field, f"{clause}= of {name!r}")
    if spec.updated_field:
        touched.add(spec.updated_field)
    if spec.version_field:
        touched.add(spec.version_field)
        if not instance_given:
            blind[spec.version_field] = "adding 1 to the version (Version())"
    if upsert and spec.created_field and not instance_given:
        touched.add(spec.created_field)
        blind[spec.created_field] = "if_not_exists (an upsert sets it only on a new item)"
    return frozenset(touched), blind


def known(
    spec: EntitySpec,
    ctx: WriteContext,
    clauses: Clauses,
    coerced_keys: Mapping[str, Any],
    instance: Any,
    blind: Mapping[str, str],
) -> dict[str, Any]:
    """What the update knows after it is applied: every field of ``instance`` (the instance
    form), the key fields, the ``set=`` and removed fields, the maintained fields; the fields
    it changes ``blind`` are left out."""
    known: dict[str, Any] = {}
    if instance is not None:
        known.update({n: getattr(instance, n) for n in spec.cls.model_fields})
        for name in spec.computed_in_keys:
            known[name] = getattr(instance, name)
    top = clauses.fields
    known.update(coerced_keys)
    known.update({n: clauses.set_values[n] for n in top(clauses.set_values)})
    for name in top(clauses.remove):
        known[name] = None
    if spec.updated_field:
        known[spec.updated_field] = ctx.now()
    if spec.version_field and instance is not None:
        known[spec.version_field] = getattr(instance, spec.version_field) + 1
    for name in blind:
        known.pop(name, None)
    return known


def field_kind(spec: EntitySpec, name: str) -> str:
    """What ``add=``, ``delete=``, ``append=`` and ``prepend=`` may do to a field: a "set", a
    "list", a "number" or "other" (:func:`.._document_paths.value_kind`)."""
    return value_kind(spec.cls.model_fields[name].annotation)
