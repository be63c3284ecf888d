"""Static typing of scatter patterns and sparse-index scans on both twins, checked by
``mypy --strict`` in CI (never executed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from enum import Enum
from typing import Annotated, Any

from typing_extensions import assert_type

from singletable import (
    GSI,
    Collection,
    Entity,
    Page,
    Repository,
    Shard,
    Table,
    collection,
    query,
    scan,
)
from singletable.aio import AsyncRepository

table = Table("T", indexes=[GSI("Open", pk=("map",), sk=("opened",)), GSI("G", pk="GPK", sk="GSK")])


class Status(str, Enum):
    OPEN = "OPEN"
    DONE = "DONE"


class Game(Entity, table=table):
    game_id: str
    map: str
    status: Status
    opened: datetime | None = None
    bucket: Annotated[int, Shard(4)] = 0

    class Keys:
        pk = "GAME#{game_id}"
        sk = "GAME"
        G = ("BUCKET#{bucket}", "{status}#{game_id}")


class Patterns:
    open_games = scan(Game, index="Open")
    by_status = query(Game, index="G", scatter="bucket")
    every_status = collection(Game, index="G", scatter="bucket")


class Games(Patterns, Repository, table=table): ...


class AsyncGames(Patterns, AsyncRepository, table=table): ...


def sync_twin(repo: Games) -> None:
    assert_type(repo.open_games(limit=10), Page[Game])
    assert_type(repo.open_games.all(), Iterator[Game])
    assert_type(repo.open_games.first(), Game | None)
    assert_type(repo.open_games.count(), int)
    assert_type(repo.open_games.params(), dict[str, Any])
    assert_type(repo.by_status(status=Status.OPEN), Page[Game])
    assert_type(repo.every_status(), Collection)


async def async_twin(repo: AsyncGames) -> None:
    assert_type(await repo.open_games(limit=10), Page[Game])
    assert_type(repo.open_games.all(), AsyncIterator[Game])
    assert_type(repo.open_games.pages(), AsyncIterator[Page[Game]])
    assert_type(await repo.open_games.first(), Game | None)
    assert_type(await repo.open_games.count(), int)
    assert_type(await repo.by_status(status=Status.OPEN), Page[Game])
    assert_type(await repo.every_status.all(), Collection)
