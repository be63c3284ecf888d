"""Key conditions, shared by query and collection patterns: call keywords in, a Query out.

``KeyedPattern.compile(ctx, kwargs)`` is pure: it checks the keywords, renders the partition
key and the sort-key condition (``begins_with`` on the literal prefix plus the leading fields
given, or one exact range lookup), adds the filter, the order and the cursor's start key, and
returns a :class:`QueryPlan` whose ``params`` is the exact request.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from .._context import PlanContext
from .._entity_spec import EntitySpec
from .._expressions import (
    CompileContext,
    Condition,
    ExpressionBuilder,
    condition_of,
    conjunction,
    top_field,
)
from .._key_formats import KeyKind, key_type_of
from .._keys import CALL_KEYWORDS, KeyTemplate, SortCondition
from .._paging import binding_of
from .._projection import ProjectionPlan
from .._table import IndexKeys, Table
from ..errors import InvalidCursor, InvalidRequestError, KeyTemplateError, ModelDefinitionError
from . import native as native_keys
from .base import Decoder, Pattern, pattern_argument_error
from .keywords import COMPARISON_OPS, RANGE_OPS, CallKeywords, QueryCall, split_lookup
from .native import NativeKeyPlan

Order = Literal["asc", "desc"]
CompiledFilter = tuple[str, dict[str, str], dict[str, Any]]
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


class QueryPlan:
    """A compiled Query: the exact request, the page size and what a cursor is bound to."""

    # No __slots__: ``binding`` (a functools.cached_property) lives in the instance __dict__.

    def __init__(
        self,
        params: dict[str, Any],
        binding_parts: tuple[Any, ...],
        limit: int,
        sort: SortCondition | None,
        check_start: Callable[[Mapping[str, Any]], None],
    ) -> None:
        self.params = params
        self.binding_parts = binding_parts
        self.limit = limit
        self.sort = sort  # the sort-key condition (key templates; None on a native index)
        self.check_start = check_start  # InvalidCursor unless a start key lies in the query

    @functools.cached_property
    def binding(self) -> str:
        """What a cursor of this query is bound to (hashed only when a cursor is involved)."""
        return binding_of(*self.binding_parts)

    def contains(self, key: Mapping[str, Any]) -> bool:
        """Whether ``key`` (an item, or its key attributes) lies inside this query's key
        condition: what a start key must satisfy, and which items the Query reads."""
        try:
            self.check_start(key)
        except (InvalidCursor, KeyError):
            return False
        return True


def key_plan(spec: EntitySpec, index: str | None, where: str) -> KeyPlan | NativeKeyPlan:
    """The entity's keys on ``index`` (None: the table), templates or native attributes."""
    keys = spec.table.index_keys(index)
    if keys.native:
        assert index is not None
        native = spec.native.get(index)
        if native is None:
            fields = set(spec.attr_names.values())
            missing = [
                a for a in keys.attributes if a not in fields | {spec.table.pk, spec.table.sk}
            ]
            raise ModelDefinitionError(
                f"{where}: {spec.name} is not in native index {index!r}: it has no field for "
                f"{', '.join(missing)} (an entity is in a native index when it has a field for "
                "every key attribute)"
            )
        return NativeKeyPlan(index, native)
    try:
        index_spec = spec.index(index)
    except ModelDefinitionError:
        raise ModelDefinitionError(
            f"{where}: {spec.name} does not populate index {index!r}; add {index} = (...) to "
            f"{spec.name}.Keys or query another index"
        ) from None
    pk = index_spec.pk or spec.base.pk
    assert pk is not None
    return KeyPlan(index, keys, pk, index_spec.sk)


def within(value: str, sort: SortCondition) -> bool:
    """Whether a sort-key value satisfies the condition (cursor checks, in-memory queries)."""
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


def call_filter(
    pattern: str,
    where: Any,
    encode: Callable[[str, Any], Any],
    unprojected: Callable[[Condition], list[str]],
    index: str | None,
) -> CompiledFilter:
    """A call's ``where=`` compiled under its own ``#w``/``:w`` placeholders: a condition of
    values (no ``Param``) on attributes the index projects (``unprojected(where)`` lists those
    it reads that the index does not)."""
    if not isinstance(where, Condition):
        raise InvalidRequestError(
            f"{pattern}: where= takes a condition such as Attr('total').gte(10), not "
            f"{type(where).__name__}",
            key="where",
        )
    params = where.param_names()
    if params:
        raise InvalidRequestError(
            f"{pattern}: a call's where= takes values, not Param({sorted(params)[0]!r}) "
            "(Param is for filters declared on the pattern)",
            key="where",
        )
    missing = unprojected(where)
    if missing:
        raise InvalidRequestError(
            f"{pattern}: the filter reads {', '.join(missing)}, which index {index!r} does not "
            "project",
            key="where",
        )
    builder = ExpressionBuilder("w")
    expression = where.compile(CompileContext(builder, encode))
    return expression, builder.names, builder.values


class KeyedPattern(Pattern):
    """Compiles ``PK = … [AND sort condition]`` requests from call keywords."""

    index: str | None
    order: Order
    where: Condition | None
    consistent: bool
    plan: KeyPlan | NativeKeyPlan
    specs: list[EntitySpec]
    table: Table
    decoder: Decoder
    projection: ProjectionPlan | None = None  # query(..., project=P) sets it before binding
    scatter: str | None = None  # a scatter pattern's field: its values are the pattern's to read

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
        read_key = self._key_attribute_read(self.where)
        if read_key is not None:
            raise ModelDefinitionError(f"{where}: {self._key_filter_refusal(read_key)}")
        clash = self.filter_params & (self._key_fields() | CALL_KEYWORDS)
        if clash:
            raise ModelDefinitionError(
                f"{where}: Param({sorted(clash)[0]!r}) clashes with a key field or call keyword"
            )
        projection = self.projection
        self.decoder = Decoder(self.specs, table, projection.decode if projection else None)
        self.table_key_attributes = frozenset(a for a in (table.pk, table.sk) if a)
        self.projected: tuple[str, dict[str, str]] | None = None
        if projection is not None:
            extra = [table.type_attribute, *([table.ttl_attribute] if table.ttl_attribute else [])]
            extra += sorted(self.plan.cursor_attributes | self.table_key_attributes)
            self.projected = projection.expression(tuple(extra))
        self._plan_keywords()

    def _plan_keywords(self) -> None:
        """What the call keywords mean, decided once per pattern (calls look names up).

        Every lookup that exists on a sort-key field: the comparisons on every sort-key field
        (refused with KeyTemplateError where a bound cannot be exact), ``begins_with`` on the
        fields whose rendering is their readable text (not numbers: ``{n:sortable}`` is an
        encoding and a digit prefix is no numeric range). Messages list the lookups that make
        sense: range lookups only where they are exact.
        """
        spec = self.specs[0]
        plan = self.plan
        if isinstance(plan, NativeKeyPlan):
            params = tuple(sorted(self.filter_params))
            self.call_keywords = native_keys.native_keywords(plan, spec, params)
            if self.scatter is not None:
                self.call_keywords = self.call_keywords.without(self.scatter)
            return
        sk = plan.sk
        lookups: dict[str, tuple[str, str]] = {}
        listed: list[str] = []
        for ph in sk.placeholders if sk is not None else ():
            assert sk is not None
            field = ph.field
            listed.append(field)
            ops = COMPARISON_OPS if self._is_number(spec, field) else RANGE_OPS
            exact = sk.is_rangeable(field) and not (ph.is_text and sk.escape)
            for op in ops:
                lookups[f"{field}__{op}"] = (field, op)
                if exact or op == "begins_with":
                    listed.append(f"{field}__{op}")
        self.call_keywords = CallKeywords(
            plan.pk.fields,
            sk.fields if sk is not None else (),
            lookups,
            tuple(listed),
            tuple(sorted(self.filter_params)),
            partition_text=f"partition key {plan.pk.text!r}",
        )
        if self.scatter is not None:
            self.call_keywords = self.call_keywords.without(self.scatter)

    @staticmethod
    def _is_number(spec: EntitySpec, field: str) -> bool:
        info = spec.cls.model_fields.get(field)
        if info is None:
            return False
        return key_type_of(info.annotation).kind in _NUMBER_KINDS

    @property
    def accepted(self) -> tuple[str, ...]:
        return self.call_keywords.accepted

    def argument_error(self, unknown: Iterable[str]) -> InvalidRequestError:
        reasons = {}
        keywords = self.call_keywords
        pk_fields = keywords.partition
        for name in unknown:
            split = split_lookup(name)
            if name == self.scatter or (split is not None and split[0] == self.scatter):
                reasons[name] = (
                    f"{self.scatter} is scattered: one call reads every value of it; declare a "
                    "plain query for one value"
                )
                continue
            if split is None:
                continue
            field, op = split
            if field in pk_fields:
                reasons[name] = f"{field} is in the partition key, which takes one exact value"
            elif field in keywords.sort and op == "begins_with":
                reasons[name] = (
                    f"{field} is a number and begins_with compares text; use {field}__gte, "
                    f"{field}__lt or {field}__between"
                )
        return pattern_argument_error(
            self.name, unknown, keywords.accepted, known=keywords.known, reasons=reasons
        )

    def _default_sort(self) -> SortCondition | None:
        """The sort-key condition when the pattern has no sort-key template (collections)."""
        return None

    @property
    def native(self) -> bool:
        """Whether the pattern reads a native-key index."""
        return isinstance(self.plan, NativeKeyPlan)

    def partition_fields(self) -> tuple[str, ...]:
        """The fields that name the partition (every call gives them)."""
        plan = self.plan
        if isinstance(plan, NativeKeyPlan):
            return tuple(f for a in plan.native.pk for f in a.fields)
        return plan.pk.fields

    def _key_fields(self) -> set[str]:
        plan = self.plan
        if isinstance(plan, NativeKeyPlan):
            return set(plan.native.fields)
        return set(plan.pk.fields) | (set(plan.sk.fields) if plan.sk else set())

    def keywords(self) -> tuple[set[str], set[str]]:
        keywords = self.call_keywords
        return set(keywords.required), set(keywords.known)

    def key_condition_text(self) -> str:
        plan = self.plan
        if isinstance(plan, NativeKeyPlan):
            return native_keys.key_condition_text(plan)
        keys = plan.keys
        text = f"{keys.pk} = {plan.pk.text}"
        sk = plan.sk
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
        sk = getattr(self.plan, "sk", None)
        return sk.literal_prefix if sk is not None else ""

    def params(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The exact request for call keywords (what ``.params(**kw)`` shows)."""
        return self.compile(ctx, kwargs).params

    def compile(self, ctx: PlanContext, kwargs: Mapping[str, Any]) -> QueryPlan:
        """The Query request for call keywords (pure; no I/O)."""
        return self.compile_call(ctx, self.split_call(kwargs))

    def split_call(self, kwargs: Mapping[str, Any]) -> QueryCall:
        """Call keywords checked and split (a ``pattern-argument`` error for an unknown one,
        a missing partition field, or native sort attributes out of order)."""
        keywords = self.call_keywords
        if not keywords.known.issuperset(kwargs):  # no set built on the valid path
            raise self.argument_error(kwargs.keys() - keywords.known)
        if self.native:
            error = native_keys.argument_error(self.name, keywords, kwargs)
            if error is not None:
                raise error
        return keywords.split(self.name, kwargs)

    def compile_call(self, ctx: PlanContext, call: QueryCall) -> QueryPlan:
        """The Query for a split call (a scatter query compiles one per value of its field)."""
        limit = ctx.default_limit if call.limit is None else call.limit
        call_filter = self._call_filter(call.where)
        filter_values = call.filter_values
        plan = self.plan
        sort: SortCondition | None = None
        native: native_keys.NativeCondition | None = None
        if isinstance(plan, NativeKeyPlan):
            native = native_keys.native_condition(self.name, plan, self.specs[0], call)
            key: Any = tuple(native.binding)
            expression = (native.expression, native.names, native.values)
        else:
            key, sort = self.key_condition(call)
            expression = self._template_expression(key, sort)
        params = self._request(ctx, expression, limit, filter_values, call_filter)
        compiled = QueryPlan(
            params,
            (
                self.name,
                self.index,
                key,
                sort.op if sort else None,
                list(sort.values) if sort else None,
                sorted((k, repr(v)) for k, v in filter_values.items()),
                self.order,
                # the whole filter: its text, the attribute names behind #w placeholders
                # (Attr("note") and Attr("body") compile to the same text) and the values
                call_filter[0] if call_filter else None,
                sorted(call_filter[1].items()) if call_filter else None,
                sorted(call_filter[2].items()) if call_filter else None,
            ),
            limit,
            sort,
            native.check_start if native is not None else self._start_check(key, sort),
        )
        if call.cursor is not None:
            attributes = self.plan.cursor_attributes | self.table_key_attributes
            start = ctx.cursors.decode(call.cursor, compiled.binding, attributes)
            compiled.check_start(start)
            params["ExclusiveStartKey"] = start
        return compiled

    def key_condition(self, call: QueryCall) -> tuple[str, SortCondition | None]:
        """The rendered partition key and the sort-key condition of a call (key templates)."""
        coerce = self.specs[0].coerce
        plan = self.plan
        assert isinstance(plan, KeyPlan)
        pk_text = plan.pk.render({name: coerce(name, v) for name, v in call.pk.items()})
        if plan.sk is None:
            return pk_text, self._default_sort()
        coerced = {name: coerce(name, v) for name, v in call.sk.items()}
        lookup = call.lookup
        if lookup is not None:
            field, op, value = lookup
            if op == "between":
                if not isinstance(value, (tuple, list)) or len(value) != 2:
                    raise KeyTemplateError(f"{field}__between takes a (low, high) pair", key=field)
                value = (coerce(field, value[0]), coerce(field, value[1]))
            elif op == "begins_with" and isinstance(value, str):
                pass  # a partial rendering, e.g. created_at__begins_with="2026-06"
            else:
                value = coerce(field, value)
            lookup = (field, op, value)
        return pk_text, plan.sk.sort_condition(coerced, lookup)

    def _template_expression(
        self, pk_text: str, sort: SortCondition | None
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        """``PK = :pk [AND sort condition]`` with its names and values (key templates)."""
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
        return expression, names, values

    def _request(
        self,
        ctx: PlanContext,
        key: tuple[str, dict[str, str], dict[str, Any]],
        limit: int,
        filter_values: Mapping[str, Any],
        call_filter: CompiledFilter | None = None,
    ) -> dict[str, Any]:
        expression, names, values = key
        keys = self.plan.keys
        params: dict[str, Any] = {"TableName": ctx.table_name}
        if self.index is not None:
            params["IndexName"] = keys.physical_name
        params["KeyConditionExpression"] = expression
        filters = []
        if self.where is not None:
            builder = ExpressionBuilder("f")
            compile_ctx = CompileContext(builder, self._filter_encoder(), filter_values)
            filters.append(self.where.compile(compile_ctx))
            names.update(builder.names)
            values.update(builder.values)
        if call_filter is not None:
            filters.append(call_filter[0])
            names.update(call_filter[1])
            values.update(call_filter[2])
        if filters:
            params["FilterExpression"] = conjunction(filters)
        if self.projected is not None:
            params["ProjectionExpression"] = self.projected[0]
            names.update(self.projected[1])
        params["ExpressionAttributeNames"] = names
        params["ExpressionAttributeValues"] = values
        if self.order == "desc":
            params["ScanIndexForward"] = False
        if self.consistent:
            params["ConsistentRead"] = True
        params["Limit"] = self._request_limit(limit)
        if ctx.capacity is not None:
            params["ReturnConsumedCapacity"] = ctx.capacity
        return params

    def _request_limit(self, limit: int) -> int:
        return limit + 1  # one more than returned, so the end of the range is known

    def _call_filter(self, where: Any) -> CompiledFilter | None:
        """A call's ``where=`` (a condition or a callback) as ``(FilterExpression, names,
        values)`` (its own ``#w``/``:w`` placeholders, ANDed with the declared filter); None
        without one."""
        if where is None:
            return None
        where = condition_of(where, [spec.cls for spec in self.specs])
        if isinstance(where, Condition):
            read_key = self._key_attribute_read(where)
            if read_key is not None:
                raise InvalidRequestError(
                    f"{self.name}: {self._key_filter_refusal(read_key)}", key=read_key
                )
        return call_filter(self.name, where, self._filter_encoder(), self._unprojected, self.index)

    def _unprojected(self, where: Condition) -> list[str]:
        """The attributes a filter reads that the pattern's index does not project."""
        return []

    def _key_attribute_read(self, where: Condition | None) -> str | None:
        """A key attribute of the queried index or table that ``where`` reads, or None:
        DynamoDB refuses a filter on one (it belongs in the key condition)."""
        if where is None:
            return None
        read = {top_field(path) for path in where.attribute_paths()}
        keys = self.plan.keys
        attributes = keys.attributes if isinstance(self.plan, NativeKeyPlan) else (keys.pk, keys.sk)
        return next((a for a in attributes if a and a in read), None)

    def _key_filter_refusal(self, attribute: str) -> str:
        fields = list(dict.fromkeys([*self.partition_fields(), *sorted(self._key_fields())]))
        return (
            f"the filter reads {attribute}, a key attribute of {self.index or 'the table'}, "
            "and DynamoDB refuses filters on key attributes; narrow the query with its key "
            f"keywords ({', '.join(fields)}) or a range lookup instead"
        )

    def _filter_encoder(self) -> Callable[[str, Any], Any]:
        specs = self.specs

        def encode(field: str, value: Any) -> Any:
            # The first entity declaring the field (or attribute) decides how it is stored.
            top = top_field(field)
            for spec in specs:
                if top in spec.cls.model_fields or top in spec.attr_names.values():
                    return spec.encode_for_condition(field, value)
            return specs[0].encode_for_condition(field, value)

        return encode

    def _start_check(
        self, pk_text: str, sort: SortCondition | None
    ) -> Callable[[Mapping[str, Any]], None]:
        """What a start key must satisfy: this partition, inside the sort-key condition."""
        keys = self.plan.keys

        def check(key: Mapping[str, Any]) -> None:
            if key[keys.pk].get("S") != pk_text:
                raise InvalidCursor("the cursor belongs to another partition")
            if sort is not None and keys.sk and not within(key[keys.sk].get("S", ""), sort):
                raise InvalidCursor("the cursor lies outside this query's sort-key range")

        return check

    def cursor_key(self, item: Mapping[str, Any]) -> dict[str, Any]:
        attributes = self.plan.cursor_attributes | self.table_key_attributes
        return {a: item[a] for a in attributes}

    def next_cursor(
        self,
        ctx: PlanContext,
        plan: QueryPlan,
        last_raw: Mapping[str, Any] | None,
        more: bool,
        response: Mapping[str, Any],
    ) -> str | None:
        """The cursor after a page: the last returned item's keys when more items were seen,
        else DynamoDB's LastEvaluatedKey, else None (the key range is exhausted)."""
        if more and last_raw is not None:
            return ctx.cursors.encode(self.cursor_key(last_raw), plan.binding)
        last = response.get("LastEvaluatedKey")
        if last is None:
            return None
        return ctx.cursors.encode(last, plan.binding)
