"""The leaderboard over every local backend: one request per pattern, ratings ranked as
numbers, custom key attribute names on the wire."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from examples.conftest import NOW, readme_table, run_example_calls
from singletable.errors import KeyTemplateError, TransactionCanceled, VersionConflict

from .models import Match, MatchResult, Player, Season, SeasonRating
from .repository import EXAMPLE_CALLS, Leaderboard, seed

transactions = pytest.mark.requires("transactions")


@pytest.fixture
def repo(make_repo: Callable[..., Any]) -> Leaderboard:
    board: Leaderboard = make_repo(Leaderboard)
    seed(board)
    return board


def test_readme_starts_with_the_access_pattern_table() -> None:
    in_readme, printed = readme_table(Path(__file__).with_name("README.md"), Leaderboard)
    assert in_readme == printed


def test_example_calls_cover_every_pattern() -> None:
    assert sorted(name for name, _ in EXAMPLE_CALLS) == sorted(Leaderboard.patterns())


def test_every_pattern_is_one_request(repo: Leaderboard, recorder: Any) -> None:
    results = run_example_calls(repo, recorder, EXAMPLE_CALLS)

    (player,) = results["player"]
    assert isinstance(player, Player) and player.joined_on == date(2025, 11, 2)
    assert results["player_by_handle"] == [player]
    matches = results["recent_matches"]
    assert all(isinstance(m, Match) for m in matches)
    assert [m.match_id for m in matches] == ["m-907", "m-903", "m-871"]  # newest first
    assert [m.result for m in matches] == [MatchResult.WIN, MatchResult.LOSS, MatchResult.WIN]
    # The whole partition, newest sort key first: ratings, profile, then matches.
    page = results["player_page"]
    assert [type(e).__name__ for e in page] == [
        "SeasonRating",
        "SeasonRating",
        "Player",
        "Match",
        "Match",
        "Match",
        "Match",
    ]
    (season,) = results["season"]
    assert isinstance(season, Season) and season.name == "Spring 2026"
    top = results["season_top"]
    assert all(isinstance(r, SeasonRating) for r in top)
    # Numeric order, not text order: 9 is last although "9" > "1842" as text.
    assert [r.rating for r in top] == [1842, 1230, 1000, 950, 9]
    assert [r.handle for r in top][:2] == ["nighthawk", "mossy"]


def test_top_n_pages_through_the_ranking(repo: Leaderboard, recorder: Any) -> None:
    with recorder.expect("Query"):
        first = repo.season_top(season_id="2026-Q2", limit=3)
    assert [r.rating for r in first] == [1842, 1230, 1000] and first.cursor
    with recorder.expect("Query"):
        rest = repo.season_top(season_id="2026-Q2", limit=3, cursor=first.cursor)
    assert [r.rating for r in rest] == [950, 9] and rest.cursor is None
    with recorder.expect("Query"):
        contenders = repo.season_top(season_id="2026-Q2", rating__gte=1000)
    assert [r.handle for r in contenders] == ["nighthawk", "mossy", "ember"]
    assert [r.rating for r in repo.season_top(season_id="2026-Q1")] == [1710, 1105]


def test_custom_attribute_names_on_the_wire(repo: Leaderboard) -> None:
    params = repo.season_top.params(season_id="2026-Q2", limit=3)
    assert params["IndexName"] == "lookup-index"
    assert params["ExpressionAttributeNames"] == {"#pk": "gsiPartition", "#sk": "gsiSort"}
    assert params["ScanIndexForward"] is False
    key = repo.player.params(player_id="u8231")["Key"]
    assert key == {"partitionId": {"S": "PLAYER#u8231"}, "rangeId": {"S": "PROFILE"}}
    raw = repo.client.get_item(
        TableName=repo.table_name,
        Key={"partitionId": {"S": "PLAYER#u1004"}, "rangeId": {"S": "SEASON#2026-Q2"}},
    )["Item"]
    assert raw["gsiPartition"] == {"S": "SEASON#2026-Q2"}
    assert raw["gsiSort"] == {"S": "RATING#00009"}


def test_changing_the_handle_moves_the_lookup(repo: Leaderboard, recorder: Any) -> None:
    player = repo.player(player_id="u1003")
    assert player is not None
    with recorder.expect("UpdateItem"):
        renamed = repo.change_handle(player, "quillon")
    assert repo.player_by_handle(handle="quill") is None
    assert repo.player_by_handle(handle="quillon") == renamed


def test_ratings_must_fit_the_padded_width(repo: Leaderboard, recorder: Any) -> None:
    too_wide = SeasonRating(player_id="u1004", season_id="2026-Q2", handle="tarn", rating=100_000)
    with recorder.expect(), pytest.raises(KeyTemplateError, match="rating"):
        repo.put(too_wide)
    negative = too_wide.model_copy(update={"rating": -1})
    with recorder.expect(), pytest.raises(KeyTemplateError, match="rating"):
        repo.put(negative)


@transactions
def test_recording_a_match_reranks_the_player(repo: Leaderboard, recorder: Any) -> None:
    (quill,) = [r for r in repo.season_top(season_id="2026-Q2") if r.handle == "quill"]
    match = Match(
        player_id="u1003",
        played_at=NOW,
        match_id="m-990",
        result=MatchResult.WIN,
        rating_delta=75,
        map_id="dunes",
    )
    with recorder.expect("TransactWriteItems"):
        new = repo.record_match(match, quill)
    assert (new.rating, new.games, new.version) == (1025, 21, 2)
    ranking = [(r.handle, r.rating) for r in repo.season_top(season_id="2026-Q2", limit=4)]
    assert ranking == [("nighthawk", 1842), ("mossy", 1230), ("quill", 1025), ("ember", 1000)]
    assert repo.recent_matches(player_id="u1003", limit=1).items == [match]
    assert repo.player_page(player_id="u1003").one(SeasonRating) == new

    # A second match applied to the rating read before the first one: refused as a whole.
    late = match.model_copy(update={"match_id": "m-991", "played_at": NOW + timedelta(hours=1)})
    with pytest.raises(TransactionCanceled) as caught:
        repo.record_match(late, quill)
    (failed,) = [r for r in caught.value.reasons if r.failed]
    assert failed.kind == "update" and isinstance(failed.error, VersionConflict)
    assert [m.match_id for m in repo.recent_matches(player_id="u1003")] == ["m-990"]
    assert repo.season_top(season_id="2026-Q2", rating__gte=1025).items[-1].rating == 1025


def written_attributes(params: dict[str, Any]) -> set[str]:
    """The attributes an UpdateItem's clauses write (condition names use ``#c...`` placeholders
    of their own, which never appear in the UpdateExpression)."""
    names = params.get("ExpressionAttributeNames", {})
    tokens = params["UpdateExpression"].replace(",", " ").split()
    return {names[token] for token in tokens if token in names}


def test_a_new_rating_is_one_update_of_the_rating_and_its_sort_key(
    repo: Leaderboard, recorder: Any
) -> None:
    # The most common write. gsiPartition = SEASON#{season_id} does not change with the rating:
    # only gsiSort = RATING#{rating:05d} is rewritten, so the update needs the key fields and
    # the rating, nothing else (not the handle, not the games).
    with recorder.expect("UpdateItem"):
        rated = repo.update(
            SeasonRating, player_id="u1004", season_id="2026-Q2", set={"rating": 1300}
        )
    params = recorder.params("UpdateItem")[0]
    assert written_attributes(params) == {"rating", "gsiSort", "version"}
    assert {"S": "RATING#01300"} in params["ExpressionAttributeValues"].values()
    # Conditioned on the item existing only: everything the new key derives from is written.
    assert params["ConditionExpression"] == "attribute_exists(#cn0)"
    assert (rated.rating, rated.version, rated.handle) == (1300, 2, "tarn")  # seeded at 1
    assert [r.handle for r in repo.season_top(season_id="2026-Q2", limit=2)] == [
        "nighthawk",
        "tarn",
    ]

    # The instance form too: one UpdateItem, conditioned on the version it read.
    with recorder.expect("UpdateItem"):
        again = repo.update(rated, rating=1250)
    params = recorder.params("UpdateItem")[0]
    assert written_attributes(params) == {"rating", "gsiSort", "version"}
    assert "gsiPartition" not in params["ExpressionAttributeNames"].values()
    assert params["ConditionExpression"] == "(attribute_exists(#cn0)) AND (#cn1 = :cv0)"
    assert params["ExpressionAttributeNames"]["#cn1"] == "version" and again.version == 3
