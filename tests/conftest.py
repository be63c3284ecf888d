"""Fixtures shared by the backend tests: repositories on freshly created tables."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pytest
from moto_fixtures.backends import Backend

from singletable import Repository, Table
from singletable.table import wait_until_active

from .models import Leaderboard, Shop, Store, game, shop

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=timezone.utc)


class Clock:
    """A settable clock for repositories (TTL and timestamps are reproducible)."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make_repo(
    client: DynamoDBClient, table_name: str, clock: Clock, backend: Backend
) -> Callable[..., Any]:
    """``make_repo(RepoClass, table)`` creates the table on the backend and returns a repo."""

    created: set[str] = set()

    def make(repo_cls: type[Repository], table: Table, **options: Any) -> Any:
        name = f"{table_name}-{table.name}"
        if name not in created:
            if "ttl_api" in backend.features:
                table.create(client, table_name=name)
            else:  # dynalite: no UpdateTimeToLive (expiry is checked client-side anyway)
                client.create_table(**table.create_table_params(name))
                wait_until_active(client, name)
            created.add(name)
        options.setdefault("clock", clock)
        return repo_cls(client=client, table_name=name, **options)

    return make


@pytest.fixture
def shop_repo(make_repo: Callable[..., Any]) -> Shop:
    repo: Shop = make_repo(Shop, shop)
    return repo


@pytest.fixture
def game_repo(make_repo: Callable[..., Any]) -> Leaderboard:
    repo: Leaderboard = make_repo(Leaderboard, game)
    return repo


@pytest.fixture
def store(make_repo: Callable[..., Any]) -> Store:
    repo: Store = make_repo(Store, shop)
    return repo
