"""What patterns and writes cost (``explain(costs=True)``), held against DynamoDB's published
rules and their worked examples, no backend.

Sources (Amazon DynamoDB Developer Guide and pricing page):

* [RW] "DynamoDB read and write operations",
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
* [SIZE] "DynamoDB item sizes and formats",
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
* [GSI] "Global secondary indexes", section "Provisioned throughput considerations" (writes),
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes
* [PRICE] "Pricing for provisioned capacity", https://aws.amazon.com/dynamodb/pricing/provisioned/
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from singletable import GSI, Entity, Index, Repository, Table, Unique, get, query
from singletable._tools.costs import units
from singletable._tools.costs.prices import EntityWrites, read_cost
from singletable._tools.costs.sizes import DEFAULT_TEXT, Sizes, sample_item
from singletable._tools.lint import check
from singletable._wire import item_size

KB = 1024

# -- the rules, on the documents' own examples ------------------------------------------------


def test_reads_round_up_to_4_kb_and_halve_when_eventually_consistent() -> None:
    # [RW]: "reading a 3,500-byte item consumes the same throughput as reading a 4 KB item"
    assert units.read_units(3500, consistent=True) == units.read_units(4 * KB, consistent=True)
    assert units.read_units(3500, consistent=True) == 1.0
    assert units.read_units(3500, consistent=False) == 0.5
    # [RW] and [PRICE]: an 8 KB item: 2 units strongly consistent, 1 eventually, 4 transactional
    assert units.read_units(8 * KB, consistent=True) == 2.0
    assert units.read_units(8 * KB, consistent=False) == 1.0
    assert units.transactional_read_units(8 * KB) == 4.0
    # [RW] GetItem: "if you read a 10 KB item, DynamoDB rounds the item size to 12 KB"
    assert units.read_units(10 * KB, consistent=True) == 3.0


def test_batch_get_rounds_each_item_and_query_rounds_the_total() -> None:
    # [RW] BatchGetItem: items of 1.5 KB and 6.5 KB are counted as 12 KB (4 KB + 8 KB), not 8
    assert units.batch_read_units([1536, 6656], consistent=True) == 3.0
    # [RW] Query: "all items returned are treated as a single read operation": the sizes are
    # added, then rounded up to 4 KB (the same two items: 8 KB, 2 units)
    assert units.query_read_units([1536, 6656], consistent=True) == 2.0
    assert units.query_read_units([1536, 6656], consistent=False) == 1.0
    # a Query page reads at most 1 MB
    assert units.query_read_units([400 * KB] * 10, consistent=True) == 256.0


def test_writes_round_up_to_1_kb_and_double_in_transactions() -> None:
    # [PRICE]: a standard write of a 1 KB item is one WCU, of a 3 KB item three, and a
    # transactional write of a 3 KB item six
    assert units.write_units(1 * KB) == 1
    assert units.write_units(3 * KB) == 3
    assert units.write_units(3 * KB, transactional=True) == 6
    # [RW]: item sizes for writes are rounded up to the next 1 KB (500 bytes: one unit)
    assert units.write_units(500) == 1 and units.write_units(1025) == 2
    # [RW] UpdateItem: "the larger of these item sizes" (before and after the update)
    assert units.update_write_units(1500, 2500) == 3
    # [GSI]: "If an update to the table changes the value of an indexed key attribute (from
    # A to B), two writes are required, one to delete the previous item from the index and
    # another write to put the new item into the index"
    assert units.index_write_units(700, moved=True) == 2
    assert units.index_write_units(700, moved=False) == 1


@given(st.integers(1, 400 * KB), st.booleans())
def test_units_grow_with_size_and_are_whole_or_half(size: int, consistent: bool) -> None:
    read = units.read_units(size, consistent=consistent)
    assert read * (1 if consistent else 2) == math.ceil(size / (4 * KB))
    assert units.write_units(size) == math.ceil(size / KB)
    assert units.write_units(size, transactional=True) == 2 * units.write_units(size)


def test_item_size_follows_the_formula() -> None:
    # [SIZE], worked by hand: a string is its name's bytes plus its UTF-8 bytes; a number its
    # name plus one byte per two significant digits plus one; a Boolean or null one byte plus
    # its name; a list or map three bytes plus one per element plus the elements
    item = {
        "name": {"S": "Ann"},  # 4 + 3
        "total": {"N": "1234.5"},  # 5 + ceil(5 / 2) + 1 = 9
        "ok": {"BOOL": True},  # 2 + 1
        "tags": {"L": [{"S": "a"}, {"S": "bc"}]},  # 4 + 3 + (1 + 1) + (2 + 1)
        "café": {"S": "é"},  # 5 + 2 (UTF-8)
    }
    assert item_size(item) == 7 + 9 + 3 + 12 + 7


# -- pricing a model ---------------------------------------------------------------------------

costs_table = Table("Costs", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Account(Entity, table=costs_table, type="ACCOUNT"):
    """A small entity with a unique field and no index: its create is the doc's 4 units."""

    account_id: Annotated[str, Field(max_length=8)]
    email: Annotated[str, Unique(), Field(max_length=24)]

    class Keys:
        pk = "ACCOUNT#{account_id}"
        sk = "ACCOUNT"


class Ticket(Entity, table=costs_table, type="TICKET"):
    ticket_id: Annotated[str, Field(max_length=8)]
    state: Literal["open", "closed"]
    owner: Annotated[str, Field(max_length=12)]
    body: Annotated[str, Field(max_length=3000)]

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "TICKET"
        GSI1 = Index("OPEN#{owner}", "TICKET#{ticket_id}", when={"state": "open"})


class Desk(Repository, table=costs_table):
    account = get(Account)
    ticket = get(Ticket, consistent=True)
    open_tickets = query(Ticket, index="GSI1")


def test_a_small_unique_create_is_four_units() -> None:
    sizes = Sizes([Account.__singletable__])
    writes = EntityWrites(Account.__singletable__, sizes).verbs()
    # the item (under 1 KB) and its guard (under 1 KB), each a transactional write
    assert writes["create"] == {"table": 4}
    assert writes["delete"] == {"table": 4}
    # a change of the unique value puts a new guard and deletes the old one
    assert writes["update"] == {"table": 2 + 2 + 2}
    assert writes["move"] == {"table": 2 * 2 + 2 * 2}


def test_estimated_sizes_use_max_length_and_defaults() -> None:
    item = sample_item(Ticket.__singletable__)
    assert len(item["body"]["S"]) == 3000  # max_length
    assert item["state"] == {"S": "closed"}  # the longest member
    assert len(item["owner"]["S"]) == 12
    assert item_size(item) > 3000  # a 3 KB item: 3 (rounded up: 4) write units
    sized = sample_item(Note.__singletable__)
    assert len(sized["text"]["S"]) == DEFAULT_TEXT  # no max_length: the documented default
    assert sized["count"] == {"N": "9999999"}  # an int without bounds: 7 significant digits


def test_write_units_per_index_at_the_worst_case() -> None:
    writes = EntityWrites(Ticket.__singletable__, Sizes([Ticket.__singletable__])).verbs()
    table = units.write_units(item_size(sample_item(Ticket.__singletable__)))
    assert table == 4
    # GSI1 projects ALL: its entry is the whole item; an update can change its key (owner)
    assert writes["create"] == {"table": 4, "GSI1": 4}
    assert writes["update"] == {"table": 4, "GSI1": 8}  # delete and put of the entry
    assert writes["delete"] == {"table": 4, "GSI1": 4}
    assert writes["move"] == {"table": 2 * 2 * 4, "GSI1": 8}


def test_read_units_of_one_call() -> None:
    sizes = Sizes([Ticket.__singletable__, Account.__singletable__])
    rows = {row.pattern: row for row in Desk.explain(costs=True)}
    ticket = item_size(sizes.item(Ticket.__singletable__))
    assert rows["ticket"].rcu == units.read_units(ticket, consistent=True) == 1.0
    assert rows["account"].rcu == 0.5  # eventually consistent, under 4 KB
    # a page of 100 tickets (and the one that tells there is more) read from GSI1
    assert rows["open_tickets"].rcu == units.query_read_units([ticket] * 101, consistent=False)
    assert rows["open_tickets"].rcu == read_cost(Desk.open_tickets, sizes)
    assert dict(rows["open_tickets"].wcu["update"]) == {"table": 4, "GSI1": 8}


def test_measured_items_replace_the_estimate() -> None:
    small = Ticket(ticket_id="t1", state="open", owner="ann", body="hi").to_item()
    rows = {row.pattern: row for row in Desk.explain(items=[small])}
    assert dict(rows["open_tickets"].wcu["create"]) == {"table": 1, "GSI1": 1}
    assert rows["open_tickets"].rcu == units.query_read_units(
        [item_size(small)] * 101, consistent=False
    )
    assert rows["account"].wcu == Desk.explain(costs=True)[0].wcu  # no sample: estimated
    assert Desk.explain()[0].rcu is None and "rcu" not in Desk.explain()[0].as_dict()


class Note(Entity, table=costs_table, type="NOTE"):
    note_id: str
    text: str
    count: int = 0

    class Keys:
        pk = "NOTE#{note_id}"
        sk = "NOTE"


# -- lint: write-amplification -------------------------------------------------------------------

wide = Table("Wide", indexes=[GSI(f"G{n}", pk=f"G{n}PK", sk=f"G{n}SK") for n in range(1, 4)])


class Wide(Entity, table=wide, type="WIDE"):
    wide_id: str
    a: str
    b: str
    c: str

    class Keys:
        pk = "WIDE#{wide_id}"
        sk = "WIDE"
        G1 = ("A#{a}", "WIDE#{wide_id}")
        G2 = ("B#{b}", "WIDE#{wide_id}")
        G3 = ("C#{c}", "WIDE#{wide_id}")


class WideRepo(Repository, table=wide):
    by_a = query(Wide, index="G1")
    by_b = query(Wide, index="G2")
    by_c = query(Wide, index="G3")


def test_write_amplification_names_the_indexes() -> None:
    (finding,) = [f for f in check(WideRepo) if f.code == "write-amplification"]
    assert (finding.severity, finding.subject) == ("info", "Wide")
    # an update can move the item in each of the three indexes: 6 index units for 1
    assert (
        "update" in finding.message and "(G1 2, G2 2, G3 2) for 1 on the table" in finding.message
    )
    assert not [f for f in check(Desk) if f.code == "write-amplification"]
