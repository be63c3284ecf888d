"""The index key attributes an update rewrites (pure: no I/O).

An update knows some fields (the key fields and ``set=`` values in the keyword form; every field
in the instance form) and changes some. :func:`index_changes` derives, one attribute at a time,
which index key attributes it must SET or REMOVE so that the stored item ends up with exactly
what :meth:`EntitySpec.to_item` derives from the updated entity. User code (a callable ``when=``,
a computed field in an index template) runs on a read-only stand-in that holds what the update
knows (:class:`_FieldReader`); a read of a field it does not know refuses the update, naming it.
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from .._entity_spec import EntitySpec
from .._indexes import IndexSpec
from .._keys import KeyTemplate
from .._wire import Wire
from ..errors import KeyTemplateError


class _Unknown(Exception):
    """User code (a callable ``when=``, a computed field) read a field the update does not know."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


_MISSING = object()


class _FieldReader:
    """The entity as far as an update knows it, handed to user code in its place.

    Reading a field returns its known value and records the read; reading a field the update
    does not know raises :class:`_Unknown`. Properties (computed fields included), cached
    properties and methods of the entity class run against the reader, so the fields *they*
    read are recorded and checked too. Read-only.
    """

    __slots__ = ("_cls", "_fields", "_reads", "_values")

    def __init__(self, spec: EntitySpec, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_cls", spec.cls)
        object.__setattr__(self, "_fields", spec.cls.model_fields)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_reads", {})

    def __getattr__(self, name: str) -> Any:
        if name in self._fields:
            self._reads[name] = None
            try:
                return self._values[name]
            except KeyError:
                raise _Unknown(name) from None
        found = inspect.getattr_static(self._cls, name, _MISSING)
        if isinstance(found, property) and found.fget is not None:
            return found.fget(self)
        if isinstance(found, functools.cached_property):
            return found.func(self)
        if isinstance(found, staticmethod):
            return found.__func__
        if isinstance(found, classmethod):
            return types.MethodType(found.__func__, self._cls)
        if inspect.isfunction(found):
            return types.MethodType(found, self)
        if found is _MISSING:
            raise AttributeError(f"{self._cls.__qualname__} has no attribute {name!r}")
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self._cls.__qualname__} is read-only during the evaluation")

    @property
    def reads(self) -> list[str]:
        """The fields read so far, in order."""
        return list(self._reads)


def _evaluate(
    spec: EntitySpec, values: Mapping[str, Any], code: Callable[[Any], Any], what: str, key: str
) -> tuple[Any, list[str]]:
    """``code(entity)`` evaluated on ``values`` (what an update knows) through a
    :class:`_FieldReader`: returns (result, fields read, in order). Raises :class:`_Unknown`
    when ``code`` reads a field missing from ``values``; any other exception ``code`` raises
    becomes a :class:`KeyTemplateError` naming ``what`` (its ``key``; the exception is the
    cause)."""
    reader = _FieldReader(spec, values)
    try:
        result = code(reader)
    except _Unknown:
        raise
    except Exception as exc:
        raise KeyTemplateError(
            f"updating {spec.name}: evaluating {what} raised {type(exc).__name__}; singletable "
            "evaluates it on a read-only stand-in for the entity that holds the fields the update "
            "knows (fields, properties and methods work)",
            key=key,
        ) from exc
    return result, reader.reads


@functools.cache
def _optional_key_fields(spec: EntitySpec, index: IndexSpec) -> tuple[str, ...]:
    """The template fields of ``index`` that may be None (nullable or computed): an entity
    whose value is None is left out of the index, as :meth:`EntitySpec.to_item` does."""
    nullable = {p.name for p in spec.codec.fields if p.nullable}
    maybe_none = nullable | set(spec.computed_in_keys)
    primary = set(spec.primary_fields)
    return tuple(
        dict.fromkeys(f for f in index.template_fields if f in maybe_none and f not in primary)
    )


@functools.cache
def _static_index_inputs(spec: EntitySpec) -> frozenset[str] | None:
    """Every field an index attribute (outside the primary key) is rendered from (optional
    ones included: a None leaves the index) or whose value decides membership (``when=``),
    when that is all that decides; None when user code does (a callable ``when=`` or a
    computed field in an index key, evaluated on every update). An update touching none of
    them leaves every index attribute as it is."""
    if spec.computed_in_keys or any(i.when_callable for i in spec.indexes.values()):
        return None
    inputs: set[str] = set()
    for index in spec.indexes.values():
        inputs.update(index.template_fields, index.when_fields)
    return frozenset(inputs)


class _Refusal:
    """The :class:`KeyTemplateError` of an update that needs a field it does not know."""

    def __init__(self, spec: EntitySpec, touched: Iterable[str], blind: Mapping[str, str]):
        self.spec = spec
        maintained = {spec.version_field, spec.updated_field}
        changes = sorted(f for f in touched if f not in maintained)
        self.changes = ", ".join(changes or sorted(touched))
        self.blind = blind

    def unknown(self, field: str, needed_for: str, hint: str = "") -> KeyTemplateError:
        spec = self.spec
        if field in self.blind:
            return KeyTemplateError(
                f"updating {spec.name}: {needed_for} needs {field!r}, which this update changes "
                f"by {self.blind[field]}, so its new value is not known here; use set= with the "
                "new value, or update the entity instance",
                key=field,
            )
        return KeyTemplateError(
            f"updating {spec.name} changes {self.changes}; {needed_for} needs {field!r}, which "
            f"the update does not know: the update must also know {field} (pass it in set=, or "
            f"update the entity instance{hint}) so no index key is ever stale or partial",
            key=field,
        )


def index_changes(
    spec: EntitySpec,
    known: Mapping[str, Any],
    touched: AbstractSet[str],
    blind: Mapping[str, str],
    *,
    every_attribute: bool = False,
) -> tuple[dict[str, Wire], list[str], dict[str, list[str]]]:
    """The index key attributes an update must SET and REMOVE, one attribute at a time.

    Inputs: ``known`` field values after the update (the key fields and ``set=`` values in the
    keyword form; every field in the instance form), ``touched`` the fields the update changes,
    ``blind`` those it changes in ways the client cannot compute (field -> ``"add"``,
    ``"append"``, ...; they are not in ``known``), ``every_attribute`` (an upsert, which may
    create the item, writes every index attribute).

    Rules (the same derivation as :meth:`EntitySpec.to_item`):

    * user code can read any field, so when anything is touched every callable ``when=`` and
      every computed field in an index template is evaluated on ``known`` (a read of an unknown
      field refuses the update, naming it); a computed field is changed when it read a touched
      field;
    * an attribute is rewritten when its template reads a changed field, or when the membership
      of an index it belongs to may change (a ``when=`` field, a field the callable read, or a
      field that may be None in its templates was touched): membership adds or removes **both**
      attributes of the index;
    * a rewritten attribute is SET when one of its indexes holds the item (which must then be
      decidable from ``known``) and every field of its template is known, else REMOVEd.

    Returns ``(set, remove, sources)``: ``sources`` maps each index whose attributes are written
    to the fields the decision read (what an instance-form update conditions on). Raises
    :class:`KeyTemplateError` naming the first field needed but not known.
    """
    if index_unchanged(spec, touched, every_attribute):
        return {}, [], {}
    return IndexUpdate(spec, known, touched, blind, every_attribute).changes()


def index_unchanged(
    spec: EntitySpec, touched: AbstractSet[str], every_attribute: bool = False
) -> bool:
    """Whether an update that changes ``touched`` leaves every index attribute as it is, known
    without evaluating anything: it changes nothing, or (not writing ``every_attribute``) no
    field any index attribute is rendered from or decides membership by, and no user code
    decides it."""
    if not touched:
        return True
    if every_attribute:
        return False
    static_inputs = _static_index_inputs(spec)
    return static_inputs is not None and static_inputs.isdisjoint(touched)


class IndexUpdate:
    """One update's index key attributes, worked out in named steps (:meth:`changes` runs
    them): evaluate the :meth:`computed` fields in index keys and the :meth:`verdicts` of
    callable ``when=``, group the attributes by their :meth:`writers`, and for each attribute
    that may change decide the index's :meth:`membership` (by :meth:`IndexSpec.holds`) and
    render it or remove it."""

    def __init__(
        self,
        spec: EntitySpec,
        known: Mapping[str, Any],
        touched: AbstractSet[str],
        blind: Mapping[str, str],
        every_attribute: bool,
    ) -> None:
        self.spec = spec
        self.touched = touched
        self.every_attribute = every_attribute
        self.refuse = _Refusal(spec, touched, blind)
        fields = spec.cls.model_fields
        self.values = {n: v for n, v in known.items() if n in fields}  # what user code may read
        self.derived: dict[str, Any] = dict(known)  # what templates render from (+ computed)
        self.reads_of: dict[str, list[str]] = {n: [n] for n in fields}
        self.changed = set(touched)
        # index name -> (what its when= callable returned, the fields it read)
        self.verdict_of: dict[str, tuple[bool, list[str]]] = {}
        self.memberships: dict[str, tuple[bool, list[str]]] = {}

    def changes(self) -> tuple[dict[str, Wire], list[str], dict[str, list[str]]]:
        """``(set, remove, sources)``, as :func:`index_changes` returns them."""
        self.computed()
        self.verdicts()
        to_set: dict[str, Wire] = {}
        to_remove: list[str] = []
        sources: dict[str, list[str]] = {}
        for attr, entries in self.writers().items():
            template = entries[0][2]  # every writer of one attribute has the same template
            rewrite = self.every_attribute or bool(set(template.fields) & self.changed)
            rewrite = rewrite or any(self.may_leave_or_join(n, i) for n, i, _ in entries)
            if not rewrite:
                continue
            present = False
            for index_name, index, _ in entries:
                member, reads = self.membership(index_name, index)
                sources.setdefault(index_name, []).extend(reads)
                if member:
                    present = True
                    break
            if not present:
                to_remove.append(attr)
                continue
            role = f"{attr} (index {entries[0][0]}, {template.text!r})"
            for fname in template.fields:
                if fname not in self.derived:
                    raise self.refuse.unknown(fname, role)
                sources.setdefault(entries[0][0], []).extend(self.reads_of.get(fname, [fname]))
            to_set[attr] = {"S": template.render(self.derived)}
        return (
            to_set,
            to_remove,
            {name: list(dict.fromkeys(reads)) for name, reads in sources.items()},
        )

    # -- steps --

    def computed(self) -> None:
        """Evaluate each computed field in an index key on what the update knows; one that read
        a touched field is changed."""
        spec = self.spec
        in_index = {f for index in spec.indexes.values() for f in index.template_fields}
        base_fields = set(spec.base.template_fields)
        for name in spec.computed_in_keys:
            if name not in in_index or name in base_fields:
                continue  # a primary-key field never changes in place
            where = f"{name} (computed, in an index key)"
            try:
                value, reads = _evaluate(spec, self.values, operator.attrgetter(name), where, name)
            except _Unknown as exc:
                raise self.refuse.unknown(exc.field, where) from None
            self.derived[name] = value
            self.reads_of[name] = reads
            if set(reads) & self.touched:
                self.changed.add(name)

    def verdicts(self) -> None:
        """Evaluate every callable ``when=`` (on every update that touches anything: it may
        read any field)."""
        for index_name, index in self.spec.indexes.items():
            if index.when_callable is None:
                continue
            where = (
                f"the when= callable of sparse index {index_name} (evaluated on every update: "
                "it may read any field)"
            )
            try:
                result, reads = _evaluate(
                    self.spec, self.values, index.when_callable, where, index_name
                )
            except _Unknown as exc:
                hint = ", or declare when={field: value} so singletable knows what it reads"
                raise self.refuse.unknown(exc.field, where, hint) from None
            self.verdict_of[index_name] = (bool(result), reads)

    def writers(self) -> dict[str, list[tuple[str, IndexSpec, KeyTemplate]]]:
        """Each index key attribute outside the table key, with the indexes that write it."""
        spec = self.spec
        base_attrs = {spec.base.keys.pk, spec.base.keys.sk}
        writers: dict[str, list[tuple[str, IndexSpec, KeyTemplate]]] = {}
        for index_name, index in spec.indexes.items():
            for attr, tpl in ((index.keys.pk, index.pk), (index.keys.sk, index.sk)):
                if tpl is not None and attr and attr not in base_attrs:
                    writers.setdefault(attr, []).append((index_name, index, tpl))
        return writers

    def may_leave_or_join(self, index_name: str, index: IndexSpec) -> bool:
        """Whether the update touches something that decides membership of ``index``."""
        if self.every_attribute:
            return True
        inputs = set(index.when_fields) | set(_optional_key_fields(self.spec, index))
        if index_name in self.verdict_of:
            inputs |= set(self.verdict_of[index_name][1])
        return bool(inputs & self.changed)

    def membership(self, index_name: str, index: IndexSpec) -> tuple[bool, list[str]]:
        """Whether the item is in ``index`` after the update, and the fields that decided.

        The inputs (the ``when=`` fields, the callable's verdict, the fields that may be None in
        the templates) are taken in that order until :meth:`IndexSpec.holds` refuses the item
        on what is known so far; what was taken is what decided. When nothing refuses it, every
        input must be known."""
        if index_name in self.memberships:
            return self.memberships[index_name]
        inputs: list[tuple[str | None, list[str]]] = [(f, [f]) for f in index.when_fields]
        if index_name in self.verdict_of:
            inputs.append((None, self.verdict_of[index_name][1]))
        for fname in _optional_key_fields(self.spec, index):
            inputs.append((fname, self.reads_of.get(fname, [fname])))
        known: dict[str, Any] = {}
        verdict = True
        reads: list[str] = []
        result = True
        for name, field_reads in inputs:
            reads.extend(field_reads)
            if name is None:
                verdict = self.verdict_of[index_name][0]
            elif name in self.derived:
                known[name] = self.derived[name]
            if not index.holds(known, verdict):
                result = False
                break
        if result:
            unknown = [f for f, _ in inputs if f is not None and f not in self.derived]
            if unknown:
                raise self.refuse.unknown(
                    unknown[0], f"deciding whether the item is in sparse index {index_name}"
                )
        self.memberships[index_name] = (result, reads)
        return result, reads
