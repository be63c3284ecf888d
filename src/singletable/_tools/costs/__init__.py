"""``Repo.explain(costs=True)``: the capacity units of every access pattern and write verb,
priced from the model (``units``: DynamoDB's rules; ``sizes``: item sizes estimated from the
model or measured from sample items; ``prices``: reads per call, writes per verb and index).
Tooling: imported by ``explain`` only when costs are asked for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .prices import DEFAULT_LIMIT, VERBS, WriteUnits, read_cost, write_cost
from .sizes import Sizes

if TYPE_CHECKING:
    from ..._patterns.base import ExplainRow

__all__ = [
    "DEFAULT_LIMIT",
    "VERBS",
    "Sizes",
    "WriteUnits",
    "priced_rows",
    "read_cost",
    "write_cost",
]


def priced_rows(
    repository: Any, items: Iterable[Mapping[str, Any]] | None = None
) -> list[ExplainRow]:
    """``repository``'s explain rows with ``rcu`` and ``wcu`` (see :mod:`.prices`)."""
    from ..._entity import spec_of
    from ..._patterns.base import DeclaredPattern

    table = repository.__singletable_table__
    patterns = [
        p.pattern if isinstance(p, DeclaredPattern) else p for p in repository.__patterns__.values()
    ]
    specs = {id(spec_of(cls)): spec_of(cls) for cls in table.entities.values()}
    for pattern in patterns:
        for spec in _row_specs(pattern):
            specs.setdefault(id(spec), spec)
    sizes = Sizes(specs.values(), items or ())
    return [
        pattern.explain().with_costs(
            read_cost(pattern, sizes), write_cost(_row_specs(pattern), sizes)
        )
        for pattern in patterns
    ]


def _row_specs(pattern: Any) -> list[Any]:
    read = getattr(pattern, "to", pattern)
    specs = getattr(read, "specs", None)
    return list(specs) if specs is not None else [read.spec]
