"""The ``write-amplification`` rule: a write whose index writes cost more than
``WRITE_AMPLIFICATION`` times its table write (priced as ``explain(costs=True)`` prices them,
from item sizes estimated from the model)."""

from __future__ import annotations

from collections.abc import Iterable

from ..costs.prices import TABLE, EntityWrites
from ..costs.sizes import Sizes
from .findings import Finding, new_finding
from .model import Model, entity_name

WRITE_AMPLIFICATION = 4
"""Index writes above this many times the table write are reported."""

PRICED_VERBS = ("create", "put", "update", "delete")


def rule_write_amplification(model: Model) -> Iterable[Finding]:
    sizes = Sizes(model.specs)
    for spec in model.specs:
        verbs = EntityWrites(spec, sizes).verbs()
        heavy = []
        for verb in PRICED_VERBS:
            units = verbs[verb]
            table = units[TABLE]
            indexes = {name: n for name, n in units.items() if name != TABLE and n}
            if sum(indexes.values()) > WRITE_AMPLIFICATION * table:
                heavy.append((verb, table, indexes))
        if not heavy:
            continue
        verb, table, indexes = max(heavy, key=lambda h: sum(h[2].values()) / h[1])
        named = ", ".join(f"{name} {n}" for name, n in indexes.items())
        names = [h[0] for h in heavy]
        verbs_text = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        yield new_finding(
            "write-amplification",
            entity_name(spec),
            f"{entity_name(spec)}: {verbs_text} write{'' if len(heavy) > 1 else 's'} more to the "
            f"indexes than {WRITE_AMPLIFICATION}x the table write; a {verb} costs "
            f"{sum(indexes.values())} index write units ({named}) for {table} on the table",
            "drop index keys no pattern reads (unread-index), project KEYS_ONLY or INCLUDE "
            "where a query does not need whole items, and keep often-changed fields out of "
            "index keys (an update that changes a key writes the index twice)",
        )
