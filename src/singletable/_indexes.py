"""An entity's keys on one index: ``Index`` (a sparse or explicit entry in ``class Keys``) and
``IndexSpec`` (its compiled templates and membership test)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._keys import KeyTemplate
from ._record import FrozenRecord

if TYPE_CHECKING:
    from ._table import IndexKeys

WhenSpec = Mapping[str, Any] | Callable[[Any], bool]


class Index(FrozenRecord):
    """An index entry in ``class Keys``: templates plus an optional sparse condition.

    ``when={"status": Status.PENDING}`` (equality, or a tuple of allowed values) is preferred:
    lint and explain can read it. A callable ``when=lambda e: ...`` is allowed too.
    """

    # A declaration: immutable (assignment raises AttributeError), equal by value, hashable
    # (when ``when`` is).
    __slots__ = ("pk", "sk", "when")
    _fields = ("pk", "sk", "when")

    pk: str | None
    sk: str | None
    when: WhenSpec | None

    def __init__(
        self, pk: str | None = None, sk: str | None = None, when: WhenSpec | None = None
    ) -> None:
        object.__setattr__(self, "pk", pk)
        object.__setattr__(self, "sk", sk)
        object.__setattr__(self, "when", when)


class IndexSpec:
    """An entity's compiled templates for the table or one index."""

    __slots__ = ("_rule", "keys", "name", "pk", "sk", "when", "when_callable")

    def __init__(
        self,
        name: str | None,
        keys: IndexKeys,
        pk: KeyTemplate | None,  # None on an LSI: the table's partition key is used
        sk: KeyTemplate | None,
        when: dict[str, tuple[Any, ...]] | None = None,
        when_callable: Callable[[Any], bool] | None = None,
    ) -> None:
        self.name = name
        self.keys = keys
        self.pk = pk
        self.sk = sk
        self.when = when
        self.when_callable = when_callable
        self._rule: tuple[tuple[tuple[str, tuple[Any, ...]], ...], tuple[str, ...]] | None = None

    @property
    def template_fields(self) -> tuple[str, ...]:
        fields: list[str] = []
        for tpl in (self.pk, self.sk):
            if tpl is not None:
                fields.extend(tpl.fields)
        return tuple(fields)

    @property
    def when_fields(self) -> tuple[str, ...]:
        return tuple(self.when) if self.when else ()

    @property
    def sparse(self) -> bool:
        return self.when is not None or self.when_callable is not None

    def holds(self, values: Mapping[str, Any], verdict: bool = True) -> bool:
        """Whether an item whose fields hold ``values`` is in this index: the one rule of
        sparse-index membership, which ``to_item`` and updates both apply.

        The item is in the index when ``verdict`` (what the ``when=`` callable returned for it;
        True without one) is true, each ``when=`` field holds an allowed value, and no field of
        the index's templates is None (DynamoDB indexes no item without its key attributes). A
        field missing from ``values`` is not held against the item: an update decides with the
        fields it knows and asks for the rest itself."""
        if not verdict:
            return False
        rule = self._rule
        if rule is None:  # built on first use: the entity sets ``when`` after construction
            rule = self._rule = (tuple((self.when or {}).items()), self.template_fields)
        when, fields = rule
        for name, allowed in when:
            if name in values and values[name] not in allowed:
                return False
        for name in fields:  # noqa: SIM110 (a loop: all() over a generator is slower here)
            if name in values and values[name] is None:
                return False
        return True


class NativeAttribute:
    """One key attribute of a native index, as one entity stores it: a field of its own
    (``field``, typed ``S``/``N``/``B``), or the table's own key attribute, which holds the
    entity's rendered table key (``template``, ``S``)."""

    __slots__ = ("attribute", "field", "kind", "optional", "template")

    def __init__(
        self,
        attribute: str,
        kind: str,
        *,
        field: str | None = None,
        template: KeyTemplate | None = None,
        optional: bool = False,
    ) -> None:
        self.attribute = attribute
        self.kind = kind
        self.field = field
        self.template = template
        self.optional = optional

    @property
    def fields(self) -> tuple[str, ...]:
        """The entity fields a call gives for this attribute (a template's, or the field)."""
        if self.template is not None:
            return self.template.fields
        assert self.field is not None
        return (self.field,)

    def __repr__(self) -> str:
        return f"NativeAttribute({self.attribute!r}, {self.kind!r}, field={self.field!r})"


class NativeIndexSpec:
    """An entity's membership in a native-key index: the attributes it keys on, in key order.

    Nothing is derived: the item holds the fields under their own names, and an item without
    one of them (a ``None`` field) is not in the index, which is therefore ``sparse`` when a
    key field is optional.
    """

    __slots__ = ("keys", "name", "pk", "sk")

    def __init__(
        self,
        name: str,
        keys: IndexKeys,
        pk: tuple[NativeAttribute, ...],
        sk: tuple[NativeAttribute, ...],
    ) -> None:
        self.name = name
        self.keys = keys
        self.pk = pk
        self.sk = sk

    @property
    def attributes(self) -> tuple[NativeAttribute, ...]:
        return self.pk + self.sk

    @property
    def sparse(self) -> bool:
        return any(a.optional for a in self.attributes)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f for a in self.attributes for f in a.fields)

    def holds(self, values: Mapping[str, Any]) -> bool:
        """Whether an item with these field values is in the index: every key field set."""
        return all(values.get(a.field) is not None for a in self.attributes if a.field)
