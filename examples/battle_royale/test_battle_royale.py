"""AWS's Battle Royale game model over every local backend: the 13 access patterns, each one
call (the reads one request each, as explain states; joining a game one transaction)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import readme_table, run_example_calls
from singletable.errors import AlreadyExists, ConditionFailed, TransactionCanceled

from .models import SEATS, Game, Player, User
from .repository import EXAMPLE_CALLS, BattleRoyale, seed

transactions = pytest.mark.requires("transactions")


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> BattleRoyale:
    game: BattleRoyale = make_repo(BattleRoyale)
    seed(game)
    return game


def game_ids(games: Any) -> list[str]:
    return [g.game_id for g in games]


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), BattleRoyale)
    assert in_readme == printed


def test_example_calls_cover_every_pattern() -> None:
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(BattleRoyale.patterns())


def test_every_read_is_what_explain_states(repo: BattleRoyale, recorder: Any) -> None:
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)

    (scott,) = results["user"]
    assert isinstance(scott, User) and scott.birthdate == date(1990, 4, 12)
    (game,) = results["game"]
    assert isinstance(game, Game) and game.people == 3 and game.open_timestamp is not None
    # Find open games: a Scan of the sparse index holds the four open games and nothing else
    assert sorted(game_ids(results["open_games"])) == [
        "c6f38a6a",
        "d06af94a",
        "e4a1b2c3",
        "f7d8e9a0",
    ]
    assert game_ids(results["open_games_by_map"]) == ["c6f38a6a", "d06af94a"]  # oldest first
    head, *players = results["game_players"]
    assert head == game and [p.username for p in players] == ["hmiller", "johnsonscott", "ochen"]
    past = results["past_games"]
    assert all(isinstance(p, Player) for p in past)
    assert game_ids(past) == ["a1b2c3d4", "b5c6d7e8", "c6f38a6a"]
    assert [p.place for p in past] == ["gold", None, None]


def test_open_games_page_through_the_sparse_index(repo: BattleRoyale, recorder: Any) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        with recorder.expect("Scan"):
            page = repo.open_games(limit=2, cursor=cursor)
        seen += game_ids(page)
        cursor = page.cursor
        if cursor is None:
            break
    assert sorted(seen) == ["c6f38a6a", "d06af94a", "e4a1b2c3", "f7d8e9a0"]
    assert repo.open_games.count() == 4
    request = repo.open_games.params()
    assert request["IndexName"] == "OpenGamesIndex" and "KeyConditionExpression" not in request


def test_users_and_games_are_created_and_updated(repo: BattleRoyale, recorder: Any) -> None:
    with recorder.expect("PutItem"):
        repo.create_user(
            User(
                username="zoe",
                name="Zoe Park",
                email="zoe@example.com",
                birthdate=date(2000, 2, 2),
                address="1 Bay Road, Cork",
            )
        )
    with pytest.raises(AlreadyExists):
        repo.create_user(repo.user(username="zoe"))  # type: ignore[arg-type]
    with recorder.expect("UpdateItem"):
        zoe = repo.update_user("zoe", address="7 Bay Road, Cork")
    assert zoe.address == "7 Bay Road, Cork" and repo.user(username="zoe") == zoe
    with recorder.expect("PutItem"):
        game = repo.create_game("0a0b0c0d", "Frozen Fortress", creator="zoe")
    assert game.open_timestamp == game.create_time
    assert game_ids(repo.open_games_by_map(map="Frozen Fortress")) == ["0a0b0c0d"]


@transactions
def test_joining_filling_starting_and_ending_a_game(repo: BattleRoyale, recorder: Any) -> None:
    with recorder.expect("TransactWriteItems"):
        repo.join_game("e4a1b2c3", "johnsonscott")  # the 50th seat
    full = repo.game(game_id="e4a1b2c3")
    assert full is not None and full.people == SEATS
    with pytest.raises(TransactionCanceled):
        repo.join_game("e4a1b2c3", "nadia")  # no seat left: nothing written
    with pytest.raises(TransactionCanceled):
        repo.join_game("c6f38a6a", "hmiller")  # already in it
    assert repo.game(game_id="c6f38a6a").people == 3  # type: ignore[union-attr]
    with pytest.raises(ConditionFailed):
        repo.start_game("e4a1b2c3", requested_by="johnsonscott")  # not the creator
    with recorder.expect("UpdateItem"):
        started = repo.start_game("e4a1b2c3", requested_by="ramirez")
    assert started.open_timestamp is None and started.start_time is not None
    assert "e4a1b2c3" not in game_ids(repo.open_games.all())  # left the sparse index
    with pytest.raises(TransactionCanceled):
        repo.join_game("e4a1b2c3", "ochen")  # started: closed
    with recorder.expect("UpdateItem"):
        player = repo.update_game_for_user("e4a1b2c3", "johnsonscott", kills=9, place="gold")
    assert player.place == "gold" and player.kills == 9
    with recorder.expect("UpdateItem"):
        ended = repo.update_game("e4a1b2c3")
    assert ended.end_time is not None
    past = repo.past_games(username="johnsonscott")
    places = [(p.game_id, p.place) for p in past]
    assert places == [  # every game the user is in, by the game's key
        ("a1b2c3d4", "gold"),
        ("b5c6d7e8", None),
        ("c6f38a6a", None),
        ("e4a1b2c3", "gold"),
    ]


def test_a_game_that_never_started_cannot_end(repo: BattleRoyale) -> None:
    with pytest.raises(ConditionFailed):
        repo.update_game("f7d8e9a0")
