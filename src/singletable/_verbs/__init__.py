"""The verbs a repository serves, as pure plans and flows: every write, and the batch and
transaction verbs (reads included: ``batch_get``, ``transact_get``).

Every derived attribute (keys of the table and of each index, sparse-index membership, guard
items, version, timestamps, the TTL number) is computed from one complete, validated entity by
``EntitySpec.to_item``. A write is a :class:`~.ops.WriteOp`: the request, the guard-item
operations that must go with it in one transaction, and how to turn a failed condition into the
error the caller should see. The same ops fill transactions, so semantics are identical there.

Floors, lowest first (each imports only those below it):

* :mod:`.shapes`: expression text compiled once per write shape, values bound per call;
* :mod:`.ops`: ``WriteOp``, conditions, reading a returned item back, the error of a failed
  condition, condition checks;
* :mod:`.guards`: the guard items of ``Unique()`` fields;
* :mod:`.index_keys`: the index key attributes an update rewrites;
* :mod:`.single` (create, put, delete) and :mod:`.update` (``compile_update``, its clauses
  checked in :mod:`.update_clauses`);
* :mod:`.commit` (one TransactWriteItems as a flow) and :mod:`.planner` (every single-item
  write of a repository as a flow);
* :mod:`.batch` and :mod:`.batches` (chunked batch verbs) and :mod:`.transactions` (named
  multi-item writes).
"""
