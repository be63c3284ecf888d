"""The sharded counter over every local backend: one UpdateItem per increment, one Query per
total."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import readme_table, run_example_calls
from singletable.errors import KeyTemplateError

from .models import SHARDS, ViewShard
from .repository import DATA, EXAMPLE_CALLS, PageViews, seed

SEEDED = {page["page_id"]: page["shards"] for page in json.loads(DATA.read_text())["pages"]}


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> PageViews:
    views: PageViews = make_repo(PageViews, rng=random.Random(7))
    seed(views)
    return views


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), PageViews)
    assert in_readme == printed


def test_example_calls_cover_every_pattern() -> None:
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(PageViews.patterns())


def test_every_pattern_is_one_request(repo: PageViews, recorder: Any) -> None:
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)
    shards = results["view_shards"]
    assert all(isinstance(s, ViewShard) for s in shards)
    assert [s.shard for s in shards] == list(range(SHARDS))
    assert [s.views for s in shards] == SEEDED["home"]
    assert results["shard"] == [shards[3]]


def test_the_total_is_one_query(repo: PageViews, recorder: Any) -> None:
    for page_id, shards in SEEDED.items():
        with recorder.expect("Query"):
            assert repo.page_views(page_id) == sum(shards)
    with recorder.expect("Query"):
        assert repo.page_views("never-visited") == 0
    # Shards that were never incremented do not exist; the Query returns the others.
    assert len(repo.view_shards(page_id="blog-single-table")) == 4


def test_increments_spread_over_the_shards(repo: PageViews, recorder: Any) -> None:
    before = repo.page_views("pricing")
    for _ in range(40):
        with recorder.expect("UpdateItem"):
            repo.record_view("pricing")
    request = recorder.params("UpdateItem")[0]
    assert "ADD" in request["UpdateExpression"]
    assert request["Key"]["SK"]["S"] in {f"SHARD#{n}" for n in range(SHARDS)}
    assert repo.page_views("pricing") == before + 40
    touched = [s.shard for s in repo.view_shards(page_id="pricing")]
    assert len(touched) == SHARDS  # the two empty shards were created on first use


def test_first_view_creates_a_shard(repo: PageViews, recorder: Any) -> None:
    with recorder.expect("UpdateItem"):
        shard = repo.record_view("about", views=5)
    assert shard.views == 5 and 0 <= shard.shard < SHARDS
    assert repo.shard(page_id="about", shard=shard.shard) == shard
    assert repo.page_views("about") == 5


def test_only_ten_shards_fit_the_key(repo: PageViews, recorder: Any) -> None:
    with recorder.expect(), pytest.raises(KeyTemplateError, match="shard"):
        repo.update(ViewShard, page_id="home", shard=10, add={"views": 1}, upsert=True)
    with recorder.expect(), pytest.raises(KeyTemplateError, match="shard"):
        repo.shard(page_id="home", shard=-1)
