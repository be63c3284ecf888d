"""Single-item writes compiled to requests (pure: no I/O).

Every derived attribute (keys of the table and of each index, sparse-index membership, guard
items, version, timestamps, the TTL number) is computed from one complete, validated entity by
:meth:`EntitySpec.to_item`. A write is a :class:`WriteOp`: the request, the guard-item operations
that must go with it in one transaction, and how to turn a failed condition into the error the
caller should see. The same ops fill transactions, so semantics are identical there.

Floors, lowest first (each imports only those below it):

* :mod:`.ops`: ``WriteOp``, ``WriteContext``, conditions, reading a returned item back, the
  error of a failed condition, condition checks;
* :mod:`.guards`: the guard items of ``Unique()`` fields;
* :mod:`.index_keys`: the index key attributes an update rewrites (``index_changes``);
* :mod:`.single` (create, put, delete) and :mod:`.update` (``compile_update``).
"""

from __future__ import annotations

from .guards import GUARD_TYPE, OWNER_ATTRIBUTE, guard_delete, guard_key, guard_put
from .index_keys import index_changes
from .ops import (
    WriteContext,
    WriteOp,
    compile_condition_check,
    condition_text,
    exists_check,
    key_text,
    live_entity,
    stamped,
    stored_entity,
    validated,
)
from .single import compile_create, compile_delete, compile_put, unchanged_condition
from .update import compile_update

__all__ = [
    "GUARD_TYPE",
    "OWNER_ATTRIBUTE",
    "WriteContext",
    "WriteOp",
    "compile_condition_check",
    "compile_create",
    "compile_delete",
    "compile_put",
    "compile_update",
    "condition_text",
    "exists_check",
    "guard_delete",
    "guard_key",
    "guard_put",
    "index_changes",
    "key_text",
    "live_entity",
    "stamped",
    "stored_entity",
    "unchanged_condition",
    "validated",
]
