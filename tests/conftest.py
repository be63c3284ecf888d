"""Fixtures shared by the backend tests: repositories on freshly created tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from moto_fixtures import NOW, Backend, Clock, create_table
from moto_fixtures.twins import AsyncClients, twin_repository

from singletable import Repository, Table
from singletable.aws import fastpath, signing

from .models import Leaderboard, Shop, Store, game, shop
from .raw_http import RawServer

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["NOW"]  # the clock's start, for the test modules


@pytest.fixture
def raw_server() -> Iterator[RawServer]:
    """A :class:`RawServer` on 127.0.0.1, closed afterwards."""
    raw = RawServer()
    yield raw
    raw.close()


@pytest.fixture
def default_session(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh boto3 default session (``default_client()`` uses it), restored afterwards;
    no endpoint, signing or fast-path switch set."""
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for name in (
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL_DYNAMODB",
        signing.ENV_VAR,
        fastpath.ENV_VAR,
    ):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def make_repo(
    client: DynamoDBClient,
    table_name: str,
    clock: Clock,
    backend: Backend,
    twin: str,
    async_clients: Callable[[], AsyncClients],
) -> Callable[..., Any]:
    """``make_repo(RepoClass, table)`` creates the table on the backend and returns a repo:
    the sync one, or its async twin behind a blocking view (``twin``; see
    ``moto_fixtures.twins``)."""

    created: set[str] = set()

    def make(repo_cls: type[Repository], table: Table, **options: Any) -> Any:
        name = f"{table_name}-{table.name}"
        if name not in created:
            create_table(backend, client, table, name)
            created.add(name)
        options.setdefault("clock", clock)
        return twin_repository(twin, repo_cls, client, async_clients, table_name=name, **options)

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


# -- Hypothesis: a bounded number of examples and a deadline for every property test -------------
# (print_blob: a failure prints the line that reproduces it, since CI keeps no example database).
# Tests that set their own settings keep within tests/project/test_property_settings.py's bounds.

from hypothesis import settings  # noqa: E402

settings.register_profile("singletable", max_examples=50, deadline=2000, print_blob=True)
settings.load_profile("singletable")
