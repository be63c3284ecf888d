"""What a query-like pattern's call keywords are, and how one call splits into them.

One :class:`CallKeywords` per pattern, decided when the repository class is created, is the
single answer to "which keywords does this pattern take?": the key-condition builders, error
messages, declared signatures, ``propagate`` and the typed call sites all read it. A call's
keywords split into a :class:`QueryCall` (partition values, sort equalities, at most one range
lookup, filter parameters and the options) before any key is rendered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._record import Record
from ..errors import InvalidRequestError, KeyTemplateError

RANGE_OPS = ("gt", "gte", "lt", "lte", "between", "begins_with")
#: The comparisons (every lookup but ``begins_with``).
COMPARISON_OPS = ("gt", "gte", "lt", "lte", "between")
#: Keywords every query-like call takes besides key fields and filter parameters.
OPTIONS = ("limit", "cursor", "where")


def split_lookup(name: str) -> tuple[str, str] | None:
    """``("rating", "gte")`` for ``"rating__gte"``; None when the name is no lookup."""
    field, sep, op = name.rpartition("__")
    if sep and op in RANGE_OPS and field:
        return field, op
    return None


class QueryCall(Record):
    """One call's keywords, split: what the key-condition builders and the request need."""

    __slots__ = ("cursor", "filter_values", "limit", "lookup", "pk", "sk", "where")
    _fields = ("pk", "sk", "lookup", "filter_values", "where", "limit", "cursor")

    def __init__(
        self,
        pk: dict[str, Any],
        sk: dict[str, Any],
        lookup: tuple[str, str, Any] | None,
        filter_values: dict[str, Any],
        where: Any,
        limit: int | None,
        cursor: str | None,
    ) -> None:
        self.pk = pk  # partition fields -> raw values
        self.sk = sk  # sort fields given by equality -> raw values
        self.lookup = lookup  # (field, op, raw value) of the one range lookup
        self.filter_values = filter_values  # declared filters' Param values
        self.where = where  # the call's own filter (a Condition), or None
        self.limit = limit
        self.cursor = cursor

    def one_query(self, field: str, value: Any, *, in_sort: bool) -> QueryCall:
        """This call as one of a scatter's Queries: ``field`` (a partition field, or the first
        sort field) given ``value``, and no cursor (the scatter's cursor holds every Query's
        position)."""
        pk, sk = self.pk, self.sk
        if in_sort:
            sk = {field: value, **sk}
        else:
            pk = {**pk, field: value}
        return QueryCall(pk, sk, self.lookup, self.filter_values, self.where, self.limit, None)


class CallKeywords(Record):
    """A pattern's call keywords, by role.

    ``partition``: the partition key's fields, each required, by equality; ``sort``: the sort
    key's fields in key order, each optional, by equality; ``lookups``: every range lookup that
    exists (``"rating__gte" -> ("rating", "gte")``), of which ``listed`` are those messages
    offer (the ones whose bound is exact); ``params``: declared filters' ``Param`` names
    (required); ``options``: ``limit``, ``cursor``, ``where``; ``partition_text`` names the
    partition key in messages.
    """

    __slots__ = (
        "known",
        "listed",
        "lookups",
        "options",
        "params",
        "partition",
        "partition_text",
        "sort",
    )
    _fields = ("partition", "sort", "lookups", "listed", "params", "options", "partition_text")

    def __init__(
        self,
        partition: tuple[str, ...],
        sort: tuple[str, ...],
        lookups: Mapping[str, tuple[str, str]],
        listed: tuple[str, ...],
        params: tuple[str, ...] = (),
        options: tuple[str, ...] = OPTIONS,
        partition_text: str = "",
    ) -> None:
        self.partition = partition
        self.sort = sort
        self.lookups = dict(lookups)
        self.listed = listed
        self.params = params
        self.options = options
        self.partition_text = partition_text  # for messages: "partition key 'C#{id}'"
        # Every keyword the pattern understands (some refused in some positions); computed
        # once: every call checks against it.
        self.known = frozenset(self.accepted) | self.lookups.keys()

    def without(self, name: str) -> CallKeywords:
        """These keywords with field ``name`` and its lookups taken out (a scatter's field is
        the pattern's to choose)."""
        return CallKeywords(
            tuple(f for f in self.partition if f != name),
            tuple(f for f in self.sort if f != name),
            {k: v for k, v in self.lookups.items() if v[0] != name},
            tuple(k for k in self.listed if k != name and (split_lookup(k) or ("",))[0] != name),
            self.params,
            self.options,
            self.partition_text,
        )

    @property
    def required(self) -> frozenset[str]:
        return frozenset(self.partition) | frozenset(self.params)

    @property
    def accepted(self) -> tuple[str, ...]:
        """What an error message lists: key fields, the exact lookups, parameters, options."""
        return (*self.partition, *self.listed, *sorted(self.params), *self.options)

    def split(self, pattern: str, kwargs: Mapping[str, Any]) -> QueryCall:
        """Split keywords already checked against :attr:`known`; raise for a missing
        partition field or parameter, a second range lookup, or a bad ``limit``."""
        pk: dict[str, Any] = {}
        sk: dict[str, Any] = {}
        filter_values: dict[str, Any] = {}
        lookup: tuple[str, str, Any] | None = None
        limit = cursor = where = None
        partition, sort, params = self.partition, self.sort, self.params
        for name, value in kwargs.items():
            if name in partition:
                pk[name] = value
            elif name in sort:
                sk[name] = value
            elif name == "limit":
                limit = value
            elif name == "cursor":
                cursor = value
            elif name == "where":
                where = value
            elif name in params:
                filter_values[name] = value
            else:
                if lookup is not None:
                    raise KeyTemplateError(
                        f"{pattern}: one range lookup per query (DynamoDB allows one sort-key "
                        f"condition); got {lookup[0]}__{lookup[1]} and {name}",
                        key=name,
                    )
                field, op = self.lookups[name]
                lookup = (field, op, value)
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
        ):
            raise InvalidRequestError(f"{pattern}: limit must be a positive int, not {limit!r}")
        if len(filter_values) != len(params):
            missing = sorted(set(params) - filter_values.keys())
            raise KeyTemplateError(
                f"{pattern} needs the filter parameter(s) {', '.join(missing)}", key=missing[0]
            )
        if len(pk) != len(partition):
            missing = [f for f in partition if f not in pk]
            raise KeyTemplateError(
                f"{pattern} needs {', '.join(missing)} ({self.partition_text})", key=missing[0]
            )
        return QueryCall(pk, sk, lookup, filter_values, where, limit, cursor)
