"""DynamoDB's capacity rules, as published (pure arithmetic on byte counts).

* Reads: a strongly consistent read of up to 4 KB is one read unit, an eventually consistent one
  half a unit, a transactional one two; sizes round up to the next 4 KB. A GetItem rounds its
  one item; a BatchGetItem rounds each item, then adds; a Query (and a Scan) adds the sizes of
  the items it reads and rounds the total (at most 1 MB a page).
* Writes: a write of up to 1 KB is one write unit, a transactional one two; sizes round up to
  the next 1 KB. An UpdateItem is priced on the larger of the item before and after. Each
  secondary index the item is in costs a write of the index entry's size; an update that
  changes the index's key costs two (one to delete the old entry, one to put the new).

Sources: the Amazon DynamoDB Developer Guide, "DynamoDB read and write operations" and
"Global secondary indexes: provisioned throughput considerations", and the DynamoDB pricing
page (``tests/unit/tools/test_costs.py`` holds their worked examples).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024
QUERY_PAGE_BYTES = 1024 * 1024  # a Query or Scan page reads at most 1 MB
TRANSACTION_FACTOR = 2


def read_units(size: int, *, consistent: bool) -> float:
    """One item read (GetItem): its size rounded up to 4 KB, half for eventual consistency."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def batch_read_units(sizes: Iterable[int], *, consistent: bool) -> float:
    """A BatchGetItem: each item rounded up on its own, then added."""
    return sum(read_units(size, consistent=consistent) for size in sizes)


def query_read_units(sizes: Iterable[int], *, consistent: bool) -> float:
    """A Query page: the items' sizes added (at most 1 MB), then rounded up to 4 KB."""
    total = min(sum(sizes), QUERY_PAGE_BYTES)
    return read_units(total, consistent=consistent)


def transactional_read_units(size: int) -> float:
    return TRANSACTION_FACTOR * read_units(size, consistent=True)


def write_units(size: int, *, transactional: bool = False) -> int:
    """One item written (put, update, delete): its size rounded up to 1 KB, twice in a
    transaction."""
    units = max(1, math.ceil(size / WRITE_UNIT_BYTES))
    return units * TRANSACTION_FACTOR if transactional else units


def update_write_units(before: int, after: int, *, transactional: bool = False) -> int:
    """An UpdateItem: the larger of the item before and after the update."""
    return write_units(max(before, after), transactional=transactional)


def index_write_units(size: int, *, moved: bool) -> int:
    """A secondary index's share of a table write: one write of the index entry, two when the
    write changed the entry's key (the old one deleted, the new one put)."""
    return write_units(size) * (2 if moved else 1)
