"""Access patterns: ``get``, ``query`` and ``collection``, declared on a Repository.

Each pattern is a descriptor. Declared on the class, it is checked when the repository class
is created; read from an instance, it is a bound pattern whose call sends exactly one request
(``hydrate=True`` adds one BatchGetItem) and whose ``.params(**kw)`` returns that request
without sending it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    Literal,
    ParamSpec,
    TypeVar,
    overload,
)

from typing_extensions import Self

from .batch import batch_get_items, key_identity
from .entity import Entity, EntitySpec, spec_of
from .errors import (
    InvalidCursor,
    InvalidRequestError,
    ItemDecodeError,
    KeyTemplateError,
    ModelDefinitionError,
    MultipleResultsError,
    PatternArgumentError,
)
from .expressions import CompileContext, Condition, ExpressionBuilder
from .keys import CALL_KEYWORDS, SENTINEL, KeyKind, KeyTemplate, SortCondition, key_type_of
from .paging import Collection, KeyRef, Page, binding_of
from .record import FrozenRecord
from .table import IndexKeys, Table

if TYPE_CHECKING:
    from .repository import Repository

E = TypeVar("E", bound=Entity)
T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
PatternT = TypeVar("PatternT")

Order = Literal["asc", "desc"]
RANGE_OPS = ("gt", "gte", "lt", "lte", "between", "begins_with")
#: The comparisons (every lookup but ``begins_with``): they exist on every sort-key field, and
#: are refused with KeyTemplateError where a bound cannot be exact (DESIGN: Access patterns).
COMPARISON_OPS = ("gt", "gte", "lt", "lte", "between")
_NUMBER_KINDS = (KeyKind.INT, KeyKind.DECIMAL)
_SORT_EXPRESSIONS = {
    "=": "#sk = :sk",
    "begins_with": "begins_with(#sk, :sk)",
    ">": "#sk > :sk",
    ">=": "#sk >= :sk",
    "<": "#sk < :sk",
    "<=": "#sk <= :sk",
    "between": "#sk BETWEEN :sk AND :sk1",
}


class ExplainRow(FrozenRecord):
    """One line of the access-pattern table: what a pattern sends."""

    # Immutable (assignment raises AttributeError), equal by value, hashable.
    __slots__ = (
        "consistent",
        "entity_types",
        "filter",
        "index",
        "key_condition",
        "notes",
        "operation",
        "order",
        "pattern",
    )
    _fields = (
        "pattern",
        "operation",
        "index",
        "key_condition",
        "entity_types",
        "order",
        "filter",
        "consistent",
        "notes",
    )

    pattern: str
    operation: str
    index: str | None
    key_condition: str
    entity_types: tuple[str, ...]
    order: str
    filter: str | None
    consistent: bool
    notes: str

    def __init__(
        self,
        pattern: str,
        operation: str,
        index: str | None,
        key_condition: str,
        entity_types: tuple[str, ...],
        order: str,
        filter: str | None = None,
        consistent: bool = False,
        notes: str = "",
    ) -> None:
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "operation", operation)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "key_condition", key_condition)
        object.__setattr__(self, "entity_types", entity_types)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "filter", filter)
        object.__setattr__(self, "consistent", consistent)
        object.__setattr__(self, "notes", notes)

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "operation": self.operation,
            "index": self.index,
            "key_condition": self.key_condition,
            "entity_types": list(self.entity_types),
            "order": self.order,
            "filter": self.filter,
            "consistent": self.consistent,
            "notes": self.notes,
        }


# -- base --------------------------------------------------------------------------------------


class Pattern:
    """Base of access patterns (descriptors)."""

    operation: str = "Query"
    name: str = "<unbound>"
    owner: type | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def bind(self, repository: type[Repository], table: Table) -> None:
        """Definition-time checks against the repository's table."""
        raise NotImplementedError

    def explain(self) -> ExplainRow:
        raise NotImplementedError

    def keywords(self) -> tuple[set[str], set[str]]:
        """(required, accepted) call keywords, for checking declared signatures."""
        raise NotImplementedError

    def __call__(self, method: Callable[Concatenate[Any, P], R]) -> DeclaredPattern[P, R]:
        """Declare the pattern as a method signature (``@query(Order) def f(self, *, ...)``)
        so type checkers see its keywords; the method body is never run."""
        return DeclaredPattern(self, method)


def _entity_spec(entity: Any, where: str) -> EntitySpec:
    try:
        return spec_of(entity)
    except ModelDefinitionError:
        raise ModelDefinitionError(
            f"{where}: {getattr(entity, '__qualname__', entity)!r} is not a concrete entity "
            "(an Entity subclass with table= and class Keys)"
        ) from None


def _check_table(spec: EntitySpec, table: Table, where: str) -> None:
    if spec.table is not table and spec.table.name != table.name:
        raise ModelDefinitionError(
            f"{where}: {spec.name} lives on table {spec.table.name!r}, but the repository is "
            f"declared on {table.name!r}"
        )


def _coerce_all(spec: EntitySpec, values: Mapping[str, Any]) -> dict[str, Any]:
    return {name: spec.coerce(name, value) for name, value in values.items()}


def _is_expired(item: Mapping[str, Any], ttl_attr: str | None, now: int) -> bool:
    if ttl_attr is None:
        return False
    av = item.get(ttl_attr)
    if av is None or "N" not in av:
        return False
    try:
        return int(float(av["N"])) < now
    except ValueError:
        return False


# -- get ---------------------------------------------------------------------------------------


class GetPattern(Pattern, Generic[E]):
    """``get(E)``: one GetItem by the entity's full primary key."""

    operation = "GetItem"

    def __init__(self, entity: type[E], *, consistent: bool = False) -> None:
        self.entity = entity
        self.consistent = consistent

    def bind(self, repository: type[Repository], table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        self.spec = _entity_spec(self.entity, where)
        _check_table(self.spec, table, where)
        self.accepted: tuple[str, ...] = self.spec.primary_fields

    def keywords(self) -> tuple[set[str], set[str]]:
        fields = set(self.spec.primary_fields)
        return fields, fields

    def argument_error(self, keys: Iterable[str]) -> PatternArgumentError | None:
        """The error for keywords that are not key fields (None when every one is)."""
        unknown = set(keys).difference(self.accepted)
        if not unknown:
            return None
        reasons = {}
        for name in unknown:
            split = _split_lookup(name)
            if split is not None and split[0] in self.accepted:
                reasons[name] = (
                    f"a get takes the exact value of {split[0]}; lookups are for queries"
                )
            elif name == "where":
                reasons[name] = "a get reads one item by its key: filters are for queries"
        return pattern_argument_error(self.name, unknown, self.accepted, reasons=reasons)

    def explain(self) -> ExplainRow:
        base = self.spec.base
        parts = [f"{base.keys.pk} = {base.pk.text}"]  # type: ignore[union-attr]
        if base.sk is not None:
            parts.append(f"{base.keys.sk} = {base.sk.text}")
        return ExplainRow(
            self.name,
            "GetItem",
            None,
            " AND ".join(parts),
            (self.spec.type_name,),
            "-",
            consistent=self.consistent,
        )

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: Repository, owner: type) -> BoundGet[E]: ...
    def __get__(self, instance: Repository | None, owner: type) -> Self | BoundGet[E]:
        if instance is None:
            return self
        return BoundGet(self, instance)


class Bound(Generic[PatternT]):
    """A pattern read from a repository instance: the pattern plus where to send it."""

    __slots__ = ("pattern", "repo")

    def __init__(self, pattern: PatternT, repo: Repository) -> None:
        self.pattern: PatternT = pattern
        self.repo = repo


class BoundGet(Bound["GetPattern[E]"], Generic[E]):
    """A get pattern bound to a repository: call it with the key fields."""

    def params(self, **keys: Any) -> dict[str, Any]:
        """The exact GetItem request (no I/O)."""
        pattern = self.pattern
        try:
            key = pattern.spec.key_of_fields(keys)
        except KeyTemplateError:
            # Only now (the valid path pays nothing): a keyword that is not a key field is
            # reported as such, before a missing or badly-valued key field.
            error = pattern.argument_error(keys)
            if error is not None:
                raise error from None
            raise
        params: dict[str, Any] = {"TableName": self.repo.table_name, "Key": key}
        if pattern.consistent:
            params["ConsistentRead"] = True
        if self.repo.return_consumed_capacity:
            params["ReturnConsumedCapacity"] = "TOTAL"
        return params

    def __call__(self, **keys: Any) -> E | None:
        response = self.repo._executor.call(
            "GetItem", self.params(**keys), pattern=self.pattern.name
        )
        item = response.get("Item")
        if item is None:
            return None
        spec = self.pattern.spec
        table = spec.table
        tag = item.get(table.type_attribute)
        if tag is None or tag.get("S") != spec.type_name:
            raise ItemDecodeError(
                f"the item at {spec.describe_key(item)} is a "
                f"{tag.get('S') if tag else 'untyped item'!r}, not a {spec.type_name!r} "
                "(two entity types share this key; see `singletable lint`)",
                key=spec.describe_key(item),
                raw=item,
            )
        if spec.ttl_field and _is_expired(item, table.ttl_attribute, self.repo.now_epoch()):
            return None
        result: E = spec.from_item(item)
        return result


# -- key conditions shared by query and collection ----------------------------------------------


class KeyPlan:
    """An entity's key templates on one index, as a query needs them."""

    __slots__ = ("index", "keys", "pk", "sk")

    def __init__(
        self, index: str | None, keys: IndexKeys, pk: KeyTemplate, sk: KeyTemplate | None
    ) -> None:
        self.index = index
        self.keys = keys
        self.pk = pk
        self.sk = sk

    @property
    def cursor_attributes(self) -> frozenset[str]:
        return frozenset(a for a in (self.keys.pk, self.keys.sk) if a)


class CompiledQuery:
    # No __slots__: ``binding`` (a functools.cached_property) lives in the instance __dict__.

    def __init__(
        self,
        params: dict[str, Any],
        binding_parts: tuple[Any, ...],
        limit: int,
        sort: SortCondition | None,
    ) -> None:
        self.params = params
        self.binding_parts = binding_parts
        self.limit = limit
        self.sort = sort

    @functools.cached_property
    def binding(self) -> str:
        """What a cursor of this query is bound to (hashed only when a cursor is involved)."""
        return binding_of(*self.binding_parts)


def key_plan(spec: EntitySpec, index: str | None, where: str) -> KeyPlan:
    try:
        index_spec = spec.index(index)
    except ModelDefinitionError:
        raise ModelDefinitionError(
            f"{where}: {spec.name} does not populate index {index!r}; add {index} = (...) to "
            f"{spec.name}.Keys or query another index"
        ) from None
    keys = spec.table.index_keys(index)
    pk = index_spec.pk or spec.base.pk
    assert pk is not None
    return KeyPlan(index, keys, pk, index_spec.sk)


def _split_lookup(name: str) -> tuple[str, str] | None:
    field, sep, op = name.rpartition("__")
    if sep and op in RANGE_OPS and field:
        return field, op
    return None


def pattern_argument_error(
    pattern: str,
    unknown: Iterable[str],
    accepted: Sequence[str],
    *,
    known: Iterable[str] = (),
    reasons: Mapping[str, str] | None = None,
) -> PatternArgumentError:
    """The error for call keywords a pattern does not take (built only when raising).

    ``accepted`` is what the message lists (the keywords that make sense), ``known`` adds those
    the pattern understands but refuses in some positions (near-miss suggestions come from
    both); ``reasons`` explains a keyword better than a suggestion can.
    """
    import difflib  # error path only: not an import-time cost

    names = sorted(unknown)
    candidates = sorted({*accepted, *known})
    notes = []
    for name in names:
        reason = (reasons or {}).get(name)
        if reason is None:
            close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
            reason = f"did you mean {close[0]!r}?" if close else None
        notes.append(f"{name!r} ({reason})" if reason else repr(name))
    what = "an unknown keyword" if len(names) == 1 else "unknown keywords"
    takes = ", ".join(accepted) if accepted else "no keywords"
    return PatternArgumentError(
        f"{pattern} got {what} {', '.join(notes)}; it accepts {takes}",
        key=names[0],
        pattern=pattern,
        accepted=accepted,
    )


class _KeyedPattern(Pattern):
    """Compiles ``PK = … [AND sort condition]`` requests from call keywords."""

    index: str | None
    order: Order
    where: Condition | None
    consistent: bool
    plan: KeyPlan
    specs: list[EntitySpec]
    table: Table

    def _bind_common(self, table: Table, where: str) -> None:
        self.table = table
        if self.order not in ("asc", "desc"):
            raise ModelDefinitionError(f"{where}: order must be 'asc' or 'desc'")
        keys = table.index_keys(self.index)
        if self.consistent and self.index is not None and not keys.local:
            raise ModelDefinitionError(
                f"{where}: consistent=True is not possible on global secondary index "
                f"{self.index!r} (DynamoDB serves GSIs eventually consistent); drop it or "
                "query the table"
            )
        self.filter_params = self.where.param_names() if self.where is not None else set()
        clash = self.filter_params & (set(self.plan.pk.fields) | self._sk_fields() | CALL_KEYWORDS)
        if clash:
            raise ModelDefinitionError(
                f"{where}: Param({sorted(clash)[0]!r}) clashes with a key field or call keyword"
            )
        self._plan_keywords()

    def _plan_keywords(self) -> None:
        """What the call keywords mean, decided once per pattern (calls look names up).

        ``_lookups`` maps every lookup that exists on a sort-key field to ``(field, op)``:
        the comparisons on every sort-key field (refused with KeyTemplateError where a bound
        cannot be exact), ``begins_with`` on the fields whose rendering is their readable text
        (not numbers: ``{n:sortable}`` is an encoding and a digit prefix is no numeric range).
        ``_known`` is every keyword the pattern understands; ``accepted`` lists, for messages,
        those that make sense: range lookups only where they are exact.
        """
        spec = self.specs[0]
        sk = self.plan.sk
        lookups: dict[str, tuple[str, str]] = {}
        accepted: list[str] = list(self.plan.pk.fields)
        for ph in sk.placeholders if sk is not None else ():
            assert sk is not None
            field = ph.field
            accepted.append(field)
            ops = COMPARISON_OPS if self._is_number(spec, field) else RANGE_OPS
            exact = sk.is_rangeable(field) and not (ph.is_text and sk.escape)
            for op in ops:
                lookups[f"{field}__{op}"] = (field, op)
                if exact or op == "begins_with":
                    accepted.append(f"{field}__{op}")
        accepted += sorted(self.filter_params)
        accepted += ["limit", "cursor"]
        self._lookups = lookups
        self._sk_field_set = frozenset(sk.fields if sk is not None else ())
        self.accepted: tuple[str, ...] = tuple(accepted)
        self._known = frozenset(accepted) | lookups.keys()

    @staticmethod
    def _is_number(spec: EntitySpec, field: str) -> bool:
        info = spec.cls.model_fields.get(field)
        if info is None:
            return False
        return key_type_of(info.annotation).kind in _NUMBER_KINDS

    def argument_error(self, unknown: Iterable[str]) -> PatternArgumentError:
        reasons = {}
        pk_fields = self.plan.pk.fields
        for name in unknown:
            split = _split_lookup(name)
            if split is None:
                continue
            field, op = split
            if field in pk_fields:
                reasons[name] = f"{field} is in the partition key, which takes one exact value"
            elif field in self._sk_field_set and op == "begins_with":
                reasons[name] = (
                    f"{field} is a number and begins_with compares text; use {field}__gte, "
                    f"{field}__lt or {field}__between"
                )
        return pattern_argument_error(
            self.name, unknown, self.accepted, known=self._known, reasons=reasons
        )

    def _default_sort(self) -> SortCondition | None:
        """The sort-key condition when the pattern has no sort-key template (collections)."""
        return None

    def _sk_fields(self) -> set[str]:
        return set(self.plan.sk.fields) if self.plan.sk else set()

    def keywords(self) -> tuple[set[str], set[str]]:
        required = set(self.plan.pk.fields) | self.filter_params
        return required, set(self._known)

    def key_condition_text(self) -> str:
        keys = self.plan.keys
        text = f"{keys.pk} = {self.plan.pk.text}"
        sk = self.plan.sk
        if sk is not None and keys.sk:
            prefix = self._static_prefix()
            if not sk.fields:
                text += f" AND {keys.sk} = {sk.text}"
            elif prefix:
                text += f" AND begins_with({keys.sk}, {prefix})"
            if sk.fields:
                text += f" [+ {keys.sk} on {', '.join(sk.fields)}]"
        return text

    def _static_prefix(self) -> str:
        sk = self.plan.sk
        return sk.literal_prefix if sk is not None else ""

    def compile(self, repo: Repository, kwargs: dict[str, Any]) -> CompiledQuery:
        """The Query request for call keywords (pure; no I/O)."""
        if not self._known.issuperset(kwargs):  # no set built on the valid path
            raise self.argument_error(kwargs.keys() - self._known)
        kw = dict(kwargs)
        limit = kw.pop("limit", None)
        cursor = kw.pop("cursor", None)
        if limit is None:
            limit = repo.default_limit
        elif not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidRequestError(f"{self.name}: limit must be a positive int, not {limit!r}")
        filter_values = {name: kw.pop(name) for name in list(kw) if name in self.filter_params}
        missing_params = self.filter_params - set(filter_values)
        if missing_params:
            raise KeyTemplateError(
                f"{self.name} needs the filter parameter(s) {', '.join(sorted(missing_params))}",
                key=sorted(missing_params)[0],
            )
        spec = self.specs[0]
        plan = self.plan
        lookup: tuple[str, str, Any] | None = None
        pk_values: dict[str, Any] = {}
        sk_values: dict[str, Any] = {}
        sk_fields = self._sk_field_set
        lookups = self._lookups
        pk_fields = plan.pk.fields
        for name, value in kw.items():  # every name is known (checked above)
            if name in pk_fields:
                pk_values[name] = value
            elif name in sk_fields:
                sk_values[name] = value
            else:
                if lookup is not None:
                    raise KeyTemplateError(
                        f"{self.name}: one range lookup per query (DynamoDB allows one sort-key "
                        f"condition); got {lookup[0]}__{lookup[1]} and {name}",
                        key=name,
                    )
                field, op = lookups[name]
                lookup = (field, op, value)
        missing = [f for f in plan.pk.fields if f not in pk_values]
        if missing:
            raise KeyTemplateError(
                f"{self.name} needs {', '.join(missing)} (partition key {plan.pk.text!r})",
                key=missing[0],
            )
        pk_text = plan.pk.render(_coerce_all(spec, pk_values))
        sort: SortCondition | None = None
        if plan.sk is not None:
            coerced = _coerce_all(spec, sk_values)
            if lookup is not None:
                field, op, value = lookup
                if op == "between":
                    if not isinstance(value, (tuple, list)) or len(value) != 2:
                        raise KeyTemplateError(
                            f"{field}__between takes a (low, high) pair", key=field
                        )
                    value = (spec.coerce(field, value[0]), spec.coerce(field, value[1]))
                elif op == "begins_with" and isinstance(value, str):
                    pass  # a partial rendering, e.g. created_at__begins_with="2026-06"
                else:
                    value = spec.coerce(field, value)
                lookup = (field, op, value)
            sort = plan.sk.sort_condition(coerced, lookup)
        else:
            sort = self._default_sort()
        params = self._request(repo, pk_text, sort, limit, filter_values)
        compiled = CompiledQuery(
            params,
            (
                self.name,
                self.index,
                pk_text,
                sort.op if sort else None,
                list(sort.values) if sort else None,
                sorted((k, repr(v)) for k, v in filter_values.items()),
                self.order,
            ),
            limit,
            sort,
        )
        if cursor is not None:
            params["ExclusiveStartKey"] = self._start_key(
                repo, cursor, compiled.binding, pk_text, sort
            )
        return compiled

    def _request(
        self,
        repo: Repository,
        pk_text: str,
        sort: SortCondition | None,
        limit: int,
        filter_values: Mapping[str, Any],
    ) -> dict[str, Any]:
        keys = self.plan.keys
        names = {"#pk": keys.pk}
        values: dict[str, Any] = {":pk": {"S": pk_text}}
        expression = "#pk = :pk"
        if sort is not None and keys.sk:
            names["#sk"] = keys.sk
            expression += " AND " + _SORT_EXPRESSIONS[sort.op]
            values[":sk"] = {"S": sort.values[0]}
            if sort.op == "between":
                values[":sk1"] = {"S": sort.values[1]}
        params: dict[str, Any] = {"TableName": repo.table_name}
        if self.index is not None:
            params["IndexName"] = keys.physical_name
        params["KeyConditionExpression"] = expression
        if self.where is not None:
            builder = ExpressionBuilder("f")
            ctx = CompileContext(builder, self._filter_encoder(), filter_values)
            params["FilterExpression"] = self.where.compile(ctx)
            names.update(builder.names)
            values.update(builder.values)
        params["ExpressionAttributeNames"] = names
        params["ExpressionAttributeValues"] = values
        if self.order == "desc":
            params["ScanIndexForward"] = False
        if self.consistent:
            params["ConsistentRead"] = True
        params["Limit"] = self._request_limit(limit)
        if repo.return_consumed_capacity:
            params["ReturnConsumedCapacity"] = "TOTAL"
        return params

    def _request_limit(self, limit: int) -> int:
        return limit + 1  # one more than returned, so the end of the range is known

    def _filter_encoder(self) -> Callable[[str, Any], Any]:
        specs = self.specs

        def encode(field: str, value: Any) -> Any:
            # The first entity declaring the field (or attribute) decides how it is stored.
            for spec in specs:
                if field in spec.cls.model_fields or field in spec.attr_names.values():
                    return spec.encode_for_condition(field, value)
            return specs[0].encode_for_condition(field, value)

        return encode

    def _start_key(
        self,
        repo: Repository,
        cursor: str,
        binding: str,
        pk_text: str,
        sort: SortCondition | None,
    ) -> dict[str, Any]:
        attributes = self.plan.cursor_attributes | self._table_key_attributes()
        key = repo._cursors.decode(cursor, binding, attributes)
        keys = self.plan.keys
        if key[keys.pk].get("S") != pk_text:
            raise InvalidCursor("the cursor belongs to another partition")
        if sort is not None and keys.sk and not _within(key[keys.sk].get("S", ""), sort):
            raise InvalidCursor("the cursor lies outside this query's sort-key range")
        return key

    def _table_key_attributes(self) -> frozenset[str]:
        table = self.table
        return frozenset(a for a in (table.pk, table.sk) if a)

    def cursor_key(self, item: Mapping[str, Any]) -> dict[str, Any]:
        attributes = self.plan.cursor_attributes | self._table_key_attributes()
        return {a: item[a] for a in attributes}


def _within(value: str, sort: SortCondition) -> bool:
    op, values = sort.op, sort.values
    if op == "=":
        return value == values[0]
    if op == "begins_with":
        return value.startswith(values[0])
    if op == "between":
        return values[0] <= value <= values[1]
    if op == ">":
        return value > values[0]
    if op == ">=":
        return value >= values[0]
    if op == "<":
        return value < values[0]
    return value <= values[0]


# -- query -------------------------------------------------------------------------------------


class QueryPattern(_KeyedPattern, Generic[T]):
    """``query(E, ...)``: one Query over the entity's items in a partition (or index)."""

    def __init__(
        self,
        entity: type[Any],
        *,
        index: str | None = None,
        order: Order = "asc",
        one: bool = False,
        where: Condition | None = None,
        consistent: bool = False,
        keys_only: bool = False,
        hydrate: bool = False,
    ) -> None:
        self.entity = entity
        self.index = index
        self.order = order
        self.one = one
        self.where = where
        self.consistent = consistent
        self.keys_only = keys_only
        self.hydrate = hydrate

    @property
    def operation(self) -> str:  # type: ignore[override]
        return "Query+BatchGetItem" if self.hydrate else "Query"

    def bind(self, repository: type[Repository], table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        spec = _entity_spec(self.entity, where)
        _check_table(spec, table, where)
        self.specs = [spec]
        self.plan = key_plan(spec, self.index, where)
        self._bind_common(table, where)
        if self.keys_only and self.hydrate:
            raise ModelDefinitionError(f"{where}: choose keys_only=True or hydrate=True, not both")
        if self.where is not None and (self.keys_only or self.hydrate):
            unknown = {p.split(".")[0] for p in self.where.attribute_paths()}
            projected = self._projected_attributes()
            if projected is not None and not unknown <= projected:
                raise ModelDefinitionError(
                    f"{where}: the filter reads {sorted(unknown - projected)}, which index "
                    f"{self.index!r} does not project"
                )
        keys = self.plan.keys
        if not (self.keys_only or self.hydrate) and not self._projects_entity(spec):
            raise ModelDefinitionError(
                f"{where}: index {self.index!r} projects {keys.projection_type}, so it cannot "
                f"return whole {spec.name} entities; declare keys_only=True (typed key "
                "references) or hydrate=True (Query + one BatchGetItem)"
            )
        if self.one and (self.keys_only or self.hydrate):
            raise ModelDefinitionError(
                f"{where}: one=True cannot be combined with keys_only/hydrate"
            )

    def _projected_attributes(self) -> set[str] | None:
        if self.index is None:
            return None
        index = next(i for i in self.table.indexes if i.name == self.index)
        projection = index.projection
        if projection == "ALL":
            return None
        base = set(self.table.key_attributes)
        if isinstance(projection, tuple):
            base |= set(projection[1])
        return base

    def _projects_entity(self, spec: EntitySpec) -> bool:
        projected = self._projected_attributes()
        if projected is None:
            return True
        needed = {spec.table.type_attribute} | set(spec.attr_names.values())
        return needed <= projected

    def _request_limit(self, limit: int) -> int:
        if self.one:
            return 2  # two matches tell "one" from "more than one"
        return limit + 1

    def explain(self) -> ExplainRow:
        spec = self.specs[0]
        notes = []
        if self.one:
            notes.append("one")
        if self.keys_only:
            notes.append("keys only")
        return ExplainRow(
            self.name,
            self.operation,
            self.index,
            self.key_condition_text(),
            (spec.type_name,),
            self.order,
            filter=self.where.describe() if self.where is not None else None,
            consistent=self.consistent,
            notes=", ".join(notes),
        )

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: Repository, owner: type) -> BoundQuery[T]: ...
    def __get__(self, instance: Repository | None, owner: type) -> Self | BoundQuery[T]:
        if instance is None:
            return self
        return BoundQuery(self, instance)

    # -- running --

    def run_page(self, repo: Repository, kwargs: dict[str, Any]) -> Page[Any]:
        compiled = self.compile(repo, kwargs)
        response = repo._executor.call("Query", compiled.params, pattern=self.name)
        items = response.get("Items", [])
        if self.keys_only or self.hydrate:
            refs, raws, more = self._key_refs(items, compiled.limit)
            cursor = self._next_cursor(repo, compiled, raws, more, response)
            if self.keys_only:
                return Page(refs, cursor)
            return Page(self._hydrated(repo, raws), cursor)
        spec = self.specs[0]
        table = spec.table
        tag_attr = table.type_attribute
        type_name = spec.type_name
        ttl_attr = table.ttl_attribute if spec.ttl_field else None
        now = repo.now_epoch() if ttl_attr else 0
        decode = spec.from_item
        limit = compiled.limit if not self.one else 2
        entities: list[Any] = []
        last_raw: Mapping[str, Any] | None = None
        more = False
        for item in items:
            tag = item.get(tag_attr)
            if tag is None or tag.get("S") != type_name:
                continue  # another entity type in the same key range
            if ttl_attr and _is_expired(item, ttl_attr, now):
                continue
            if len(entities) == limit:
                more = True
                break
            entities.append(decode(item))
            last_raw = item
        if self.one:
            if len(entities) > 1:
                partition = compiled.params["ExpressionAttributeValues"][":pk"]["S"]
                raise MultipleResultsError(
                    f"{self.name} matched more than one {spec.name} "
                    f"({self.plan.keys.pk} = {partition!r}); "
                    "a secondary index does not enforce uniqueness"
                )
            return Page(entities, None)
        raws = [last_raw] if last_raw is not None else []
        cursor = self._next_cursor(repo, compiled, raws, more, response)
        return Page(entities, cursor)

    def _next_cursor(
        self,
        repo: Repository,
        compiled: CompiledQuery,
        raws: Sequence[Mapping[str, Any]],
        more: bool,
        response: Mapping[str, Any],
    ) -> str | None:
        if more and raws:
            return repo._cursors.encode(self.cursor_key(raws[-1]), compiled.binding)
        last = response.get("LastEvaluatedKey")
        if last is None:
            return None
        return repo._cursors.encode(last, compiled.binding)

    def _key_refs(
        self, items: Sequence[Mapping[str, Any]], limit: int
    ) -> tuple[list[KeyRef[Any]], list[Mapping[str, Any]], bool]:
        spec = self.specs[0]
        base = spec.base
        refs: list[KeyRef[Any]] = []
        raws: list[Mapping[str, Any]] = []
        more = False
        for item in items:
            fields = _parse_primary(spec, item)
            if fields is None:
                continue  # another entity type's keys
            if len(refs) == limit:
                more = True
                break
            key = {a: item[a] for a in (base.keys.pk, base.keys.sk) if a}
            refs.append(KeyRef(spec.cls, key, fields))
            raws.append(item)
        return refs, raws, more

    def _hydrated(self, repo: Repository, raws: Sequence[Mapping[str, Any]]) -> list[Any]:
        if not raws:
            return []
        spec = self.specs[0]
        table = spec.table
        key_attrs = [a for a in (table.pk, table.sk) if a]
        keys = [{a: raw[a] for a in key_attrs} for raw in raws]
        found = batch_get_items(repo._executor, repo.table_name, keys, key_attrs, pattern=self.name)
        ttl_attr = table.ttl_attribute if spec.ttl_field else None
        now = repo.now_epoch() if ttl_attr else 0
        entities = []
        for key in keys:
            item = found.get(key_identity(key, key_attrs))
            if item is None or _is_expired(item, ttl_attr, now):
                continue  # deleted or expired between the index read and the fetch
            tag = item.get(table.type_attribute)
            if tag is None or tag.get("S") != spec.type_name:
                continue
            entities.append(spec.from_item(item))
        return entities

    def count(self, repo: Repository, kwargs: dict[str, Any]) -> int:
        kwargs = {k: v for k, v in kwargs.items() if k not in ("limit", "cursor")}
        compiled = self.compile(repo, kwargs)
        params = compiled.params
        params.pop("Limit", None)
        params["Select"] = "COUNT"
        spec = self.specs[0]
        if not (self.keys_only or self.hydrate):
            # Count only this entity's live items: the type tag (and TTL) as a filter.
            names = params["ExpressionAttributeNames"]
            values = params["ExpressionAttributeValues"]
            names["#ctype"] = spec.table.type_attribute
            values[":ctype"] = {"S": spec.type_name}
            condition = "#ctype = :ctype"
            if spec.ttl_field and spec.table.ttl_attribute:
                names["#cttl"] = spec.table.ttl_attribute
                values[":cnow"] = {"N": str(repo.now_epoch())}
                condition += " AND (attribute_not_exists(#cttl) OR #cttl >= :cnow)"
            existing = params.get("FilterExpression")
            params["FilterExpression"] = f"({existing}) AND {condition}" if existing else condition
        total = 0
        while True:
            response = repo._executor.call("Query", params, pattern=self.name)
            total += int(response.get("Count", 0))
            last = response.get("LastEvaluatedKey")
            if last is None:
                return total
            params["ExclusiveStartKey"] = last


def _parse_primary(spec: EntitySpec, item: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        return spec.parse_key(item)
    except KeyTemplateError:
        return None  # another entity type's key


class BoundQuery(Bound["QueryPattern[T]"], Generic[T]):
    """A query pattern bound to a repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.compile(self.repo, kwargs).params

    def __call__(self, **kwargs: Any) -> Page[T]:
        """One page: exactly one Query (``hydrate=True``: plus one BatchGetItem)."""
        return self.pattern.run_page(self.repo, kwargs)

    def pages(self, **kwargs: Any) -> Iterator[Page[T]]:
        """Every page in turn, following cursors until DynamoDB reports the end."""
        while True:
            page = self(**kwargs)
            yield page
            if page.cursor is None:
                return
            kwargs = {**kwargs, "cursor": page.cursor}

    def all(self, **kwargs: Any) -> Iterator[T]:
        """Every item across every page."""
        for page in self.pages(**kwargs):
            yield from page.items

    def first(self, *, max_pages: int = 10, **kwargs: Any) -> T | None:
        """The first item, paging past empty pages (filters, expired items), at most
        ``max_pages`` requests."""
        kwargs.setdefault("limit", 1)
        for number, page in enumerate(self.pages(**kwargs), start=1):
            if page.items:
                return page.items[0]
            if number >= max_pages:
                return None
        return None

    def count(self, **kwargs: Any) -> int:
        """The number of matching items (``Select=COUNT``; pages until the end)."""
        return self.pattern.count(self.repo, kwargs)


class OneQueryPattern(QueryPattern[E]):
    """``query(E, one=True)``: the single matching entity or None."""

    @overload  # type: ignore[override]
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: Repository, owner: type) -> BoundOne[E]: ...
    def __get__(self, instance: Repository | None, owner: type) -> Self | BoundOne[E]:
        if instance is None:
            return self
        return BoundOne(self, instance)


class BoundOne(Bound["OneQueryPattern[E]"], Generic[E]):
    """A ``one=True`` query bound to a repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.compile(self.repo, kwargs).params

    def __call__(self, **kwargs: Any) -> E | None:
        """The one matching entity, None, or :class:`MultipleResultsError`."""
        page = self.pattern.run_page(self.repo, kwargs)
        return page.items[0] if page.items else None


# -- collection --------------------------------------------------------------------------------


class CollectionPattern(_KeyedPattern):
    """``collection(A, B, ...)``: one Query over a partition the entity types share."""

    def __init__(
        self, *entities: type[Entity], index: str | None = None, order: Order = "asc"
    ) -> None:
        self.entities = entities
        self.index = index
        self.order = order
        self.where = None
        self.consistent = False

    def bind(self, repository: type[Repository], table: Table) -> None:
        where = f"{repository.__qualname__}.{self.name}"
        if len(self.entities) < 1:
            raise ModelDefinitionError(f"{where}: collection() needs at least one entity")
        self.specs = [_entity_spec(e, where) for e in self.entities]
        for spec in self.specs:
            _check_table(spec, table, where)
        plans = [key_plan(spec, self.index, where) for spec in self.specs]
        texts = {plan.pk.text for plan in plans}
        if len(texts) > 1:
            detail = ", ".join(f"{s.name}: {p.pk.text!r}" for s, p in zip(self.specs, plans))
            raise ModelDefinitionError(
                f"{where}: the entities do not share a partition on "
                f"{self.index or 'the table'} ({detail}); give them the same partition key "
                "template"
            )
        self.plan = KeyPlan(plans[0].index, plans[0].keys, plans[0].pk, None)
        self.sk_plans = plans
        self._bind_common(table, where)
        keys = self.plan.keys
        if keys.projection_type != "ALL":
            raise ModelDefinitionError(
                f"{where}: index {self.index!r} projects {keys.projection_type}; a collection "
                "needs whole items (ALL projection)"
            )
        self.by_tag = {spec.type_name: spec for spec in self.specs}
        self.prefix = _common_prefix([p.sk.literal_prefix if p.sk else "" for p in plans])

    def _static_prefix(self) -> str:
        return self.prefix

    def key_condition_text(self) -> str:
        keys = self.plan.keys
        text = f"{keys.pk} = {self.plan.pk.text}"
        if self.prefix and keys.sk:
            text += f" AND begins_with({keys.sk}, {self.prefix})"
        return text

    def _default_sort(self) -> SortCondition | None:
        if self.prefix and self.plan.keys.sk:
            return SortCondition("begins_with", (self.prefix,))  # the types' common literal
        return None

    def explain(self) -> ExplainRow:
        return ExplainRow(
            self.name,
            "Query",
            self.index,
            self.key_condition_text(),
            tuple(spec.type_name for spec in self.specs),
            self.order,
        )

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: Repository, owner: type) -> BoundCollection: ...
    def __get__(self, instance: Repository | None, owner: type) -> Self | BoundCollection:
        if instance is None:
            return self
        return BoundCollection(self, instance)

    def run_page(self, repo: Repository, kwargs: dict[str, Any]) -> Collection:
        compiled = self.compile(repo, kwargs)
        response = repo._executor.call("Query", compiled.params, pattern=self.name)
        table = self.table
        tag_attr = table.type_attribute
        ttl_attr = table.ttl_attribute
        now = repo.now_epoch() if ttl_attr else 0
        limit = compiled.limit
        entities: list[Any] = []
        last_raw: Mapping[str, Any] | None = None
        more = False
        for item in response.get("Items", []):
            tag = item.get(tag_attr)
            spec = self.by_tag.get(tag.get("S")) if tag is not None else None
            if spec is None:
                continue  # unknown tags (guard items, other entity types) are skipped
            if spec.ttl_field and _is_expired(item, ttl_attr, now):
                continue
            if len(entities) == limit:
                more = True
                break
            entities.append(spec.from_item(item))
            last_raw = item
        if more and last_raw is not None:
            cursor: str | None = repo._cursors.encode(self.cursor_key(last_raw), compiled.binding)
        elif "LastEvaluatedKey" in response:
            cursor = repo._cursors.encode(response["LastEvaluatedKey"], compiled.binding)
        else:
            cursor = None
        return Collection(entities, cursor)


def _common_prefix(prefixes: Sequence[str]) -> str:
    if not prefixes:
        return ""
    first = min(prefixes)
    last = max(prefixes)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size].replace(SENTINEL, "")


class BoundCollection(Bound["CollectionPattern"]):
    """A collection pattern bound to a repository."""

    def params(self, **kwargs: Any) -> dict[str, Any]:
        """The exact Query request (no I/O)."""
        return self.pattern.compile(self.repo, kwargs).params

    def __call__(self, **kwargs: Any) -> Collection:
        """One page of the collection: exactly one Query."""
        return self.pattern.run_page(self.repo, kwargs)

    def pages(self, **kwargs: Any) -> Iterator[Collection]:
        while True:
            page = self(**kwargs)
            yield page
            if page.cursor is None:
                return
            kwargs = {**kwargs, "cursor": page.cursor}

    def all(self, **kwargs: Any) -> Collection:
        """The whole collection, every page merged (one Query per page)."""
        items: list[Any] = []
        for page in self.pages(**kwargs):
            items.extend(page.items)
        return Collection(items, None)


# -- declared (method-signature) patterns -------------------------------------------------------


class DeclaredPattern(Generic[P, R]):
    """A pattern declared as a method signature, so type checkers check its keywords."""

    def __init__(self, pattern: Pattern, method: Callable[..., Any]) -> None:
        self.pattern = pattern
        self.method = method
        self.signature = inspect.signature(method)
        self.__doc__ = method.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.pattern.__set_name__(owner, name)

    @property
    def name(self) -> str:
        return self.pattern.name

    def bind(self, repository: type[Repository], table: Table) -> None:
        self.pattern.bind(repository, table)
        where = f"{repository.__qualname__}.{self.name}"
        params = list(self.signature.parameters.values())[1:]  # after self
        required, accepted = self.pattern.keywords()
        names = set()
        for param in params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ModelDefinitionError(
                    f"{where}: declare each keyword explicitly (no *args/**kwargs)"
                )
            if param.name not in accepted:
                raise ModelDefinitionError(
                    f"{where}: parameter {param.name!r} is not a key field, range lookup or "
                    f"call keyword of this pattern (accepted: {', '.join(sorted(accepted))})"
                )
            names.add(param.name)
        missing = required - names
        if missing:
            raise ModelDefinitionError(
                f"{where}: the signature lacks {', '.join(sorted(missing))}, which the key "
                "templates need"
            )

    def explain(self) -> ExplainRow:
        return self.pattern.explain()

    def argument_error(self, kwargs: Mapping[str, Any], exc: TypeError) -> PatternArgumentError:
        """Python's binding error as a pattern-argument error naming the pattern."""
        accepted = list(self.signature.parameters)[1:]  # after self
        unknown = kwargs.keys() - set(accepted)
        if unknown:
            return pattern_argument_error(self.name, unknown, accepted)
        return PatternArgumentError(
            f"{self.name}: {exc}; it accepts {', '.join(accepted)}",
            pattern=self.name,
            accepted=accepted,
        )

    def keywords(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = self.signature.bind(None, *args, **kwargs)
        except TypeError as exc:
            raise self.argument_error(kwargs, exc) from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(self.signature.parameters)))
        return {k: v for k, v in arguments.items() if v is not None}

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: Repository, owner: type) -> BoundDeclared[P, R]: ...
    def __get__(self, instance: Repository | None, owner: type) -> Self | BoundDeclared[P, R]:
        if instance is None:
            return self
        return BoundDeclared(self, instance)


class BoundDeclared(Generic[P, R]):
    __slots__ = ("declared", "inner")

    def __init__(self, declared: DeclaredPattern[P, R], repo: Repository) -> None:
        self.declared = declared
        self.inner: Any = getattr(declared.pattern, "__get__")(repo, type(repo))  # noqa: B009

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.inner(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def params(self, *args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        return self.inner.params(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def pages(self, *args: P.args, **kwargs: P.kwargs) -> Iterator[Any]:
        return self.inner.pages(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]

    def all(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        return self.inner.all(**self.declared.keywords(args, kwargs))

    def first(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        max_pages = kwargs.pop("max_pages", 10)  # first's own keyword, never a signature's
        return self.inner.first(max_pages=max_pages, **self.declared.keywords(args, kwargs))

    def count(self, *args: P.args, **kwargs: P.kwargs) -> int:
        return self.inner.count(**self.declared.keywords(args, kwargs))  # type: ignore[no-any-return]


# -- factories ----------------------------------------------------------------------------------


def get(entity: type[E], *, consistent: bool = False) -> GetPattern[E]:
    """A GetItem by the entity's full primary key: ``repo.customer(customer_id="42")``."""
    return GetPattern(entity, consistent=consistent)


@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[True],
    where: Condition | None = ...,
    consistent: bool = ...,
) -> OneQueryPattern[E]: ...
@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[False] = ...,
    where: Condition | None = ...,
    consistent: bool = ...,
    keys_only: Literal[True],
    hydrate: Literal[False] = ...,
) -> QueryPattern[KeyRef[E]]: ...
@overload
def query(
    entity: type[E],
    *,
    index: str | None = ...,
    order: Order = ...,
    one: Literal[False] = ...,
    where: Condition | None = ...,
    consistent: bool = ...,
    keys_only: Literal[False] = ...,
    hydrate: bool = ...,
) -> QueryPattern[E]: ...
def query(
    entity: type[E],
    *,
    index: str | None = None,
    order: Order = "asc",
    one: bool = False,
    where: Condition | None = None,
    consistent: bool = False,
    keys_only: bool = False,
    hydrate: bool = False,
) -> QueryPattern[Any]:
    """A Query over the entity's items in one partition of the table or an index.

    ``order="desc"`` reads newest first; ``one=True`` returns ``E | None``; ``where=`` adds a
    server-side filter (``Param`` values become call keywords); ``keys_only``/``hydrate`` are
    for KEYS_ONLY/INCLUDE indexes.
    """
    cls = OneQueryPattern if one else QueryPattern
    return cls(
        entity,
        index=index,
        order=order,
        one=one,
        where=where,
        consistent=consistent,
        keys_only=keys_only,
        hydrate=hydrate,
    )


def collection(
    *entities: type[Entity], index: str | None = None, order: Order = "asc"
) -> CollectionPattern:
    """One Query returning several entity types that share a partition."""
    return CollectionPattern(*entities, index=index, order=order)
