"""The counter table.

PK               SK
PAGEVIEW#<page>  SHARD#0 … SHARD#9   (views: a number, incremented with ADD)
"""

from __future__ import annotations

from singletable import Entity, Table

SHARDS = 10

counters = Table("Counters")


class ViewShard(Entity, table=counters, type="VIEW_SHARD"):
    """One of the ten partial counts of a page's views."""

    page_id: str
    shard: int  # 0..9; the one-digit width of {shard:01d} refuses anything else
    views: int = 0

    class Keys:
        pk = "PAGEVIEW#{page_id}"
        sk = "SHARD#{shard:01d}"
