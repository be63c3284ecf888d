"""The counter repository: increment a random shard, read all shards with one Query."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from singletable import Repository, get, query

from .models import SHARDS, ViewShard, counters

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["EXAMPLE_CALLS", "PageViews", "counters", "seed"]

DATA = Path(__file__).with_name("data.json")


class PageViews(Repository, table=counters):
    view_shards = query(ViewShard)
    shard = get(ViewShard)

    def __init__(
        self,
        client: DynamoDBClient | None = None,
        *,
        rng: random.Random | None = None,
        **options: Any,
    ) -> None:
        super().__init__(client, **options)
        self.rng = rng or random.Random()

    def record_view(self, page_id: str, views: int = 1) -> ViewShard:
        """One UpdateItem: ``ADD views :n`` on a random shard, created on first use."""
        stored: ViewShard = self.update(
            ViewShard,
            page_id=page_id,
            shard=self.rng.randrange(SHARDS),
            add={"views": views},
            upsert=True,
        )
        return stored

    def page_views(self, page_id: str) -> int:
        """The page's total: one Query returns every shard (at most ten), summed here."""
        shards = self.view_shards(page_id=page_id, limit=SHARDS)
        assert shards.cursor is None, "a page has at most ten shards"
        return sum(shard.views for shard in shards)


def seed(repo: PageViews) -> None:
    """Load ``data.json``: each page's views as already spread over its shards (one
    BatchWriteItem)."""
    data = json.loads(DATA.read_text())
    repo.batch_put(
        ViewShard(page_id=page["page_id"], shard=n, views=views)
        for page in data["pages"]
        for n, views in enumerate(page["shards"])
        if views
    )


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("view_shards", {"page_id": "home"}),
    ("shard", {"page_id": "home", "shard": 3}),
]
