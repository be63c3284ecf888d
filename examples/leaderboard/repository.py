"""The leaderboard's repository: profile, recent matches, season ranking, handle lookup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from singletable import Repository, Transaction, collection, get, query, transaction

from .models import MAX_RATING, Match, Player, Season, SeasonRating, game

__all__ = ["EXAMPLE_CALLS", "Leaderboard", "game", "seed"]

DATA = Path(__file__).with_name("data.json")


class Leaderboard(Repository, table=game):
    # Deliberate trade-off that `singletable lint` reports; the README explains it.
    lint_acknowledge = {
        "collection-parent-order:player_page": (
            "read newest first, a player's season ratings (one per season) come before the "
            "profile; with the default limit of 100 the profile is always on the first page "
            "(README: player_page)"
        ),
    }

    player = get(Player)
    player_by_handle = query(Player, index="lookup", one=True)
    recent_matches = query(Match, order="desc")
    player_page = collection(Player, Match, SeasonRating, order="desc")
    season = get(Season)
    season_top = query(SeasonRating, index="lookup", order="desc")

    @transaction
    def record_match(self, tx: Transaction, match: Match, rating: SeasonRating) -> SeasonRating:
        """Store the match and apply its rating change to the season rating, atomically.

        The new rating is computed from ``rating`` as the caller read it. ``SeasonRating`` has a
        ``Version()`` field, so if another match changed the rating in between, the transaction
        is cancelled (``VersionConflict``) instead of silently losing that match's points.
        Returns the new rating as it will be stored.
        """
        if match.player_id != rating.player_id:
            raise ValueError("the match and the rating belong to different players")
        tx.create(match)
        new_rating = min(MAX_RATING, max(0, rating.rating + match.rating_delta))
        tx.update(rating, rating=new_rating, games=rating.games + 1)
        return rating.model_copy(
            update={"rating": new_rating, "games": rating.games + 1, "version": rating.version + 1}
        )

    def change_handle(self, player: Player, handle: str) -> Player:
        """One UpdateItem: the handle and its index keys change together."""
        updated: Player = self.update(player, handle=handle)
        return updated


def seed(repo: Leaderboard) -> None:
    """Load ``data.json`` through the repository (one BatchWriteItem).

    ``unsafe=True`` because ``SeasonRating`` has a ``Version()`` field, which a batch cannot
    check; loading into an empty table there is nothing to check against.
    """
    data = json.loads(DATA.read_text())
    players = [Player(**p) for p in data["players"]]
    handles = {p.player_id: p.handle for p in players}
    entities: list[Any] = [
        *players,
        *(Season(**s) for s in data["seasons"]),
        *(SeasonRating(handle=handles[r["player_id"]], **r) for r in data["ratings"]),
        *(Match(**m) for m in data["matches"]),
    ]
    repo.batch_put(entities, unsafe=True)


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("player", {"player_id": "u8231"}),
    ("player_by_handle", {"handle": "nighthawk"}),
    ("recent_matches", {"player_id": "u8231", "limit": 3}),
    ("player_page", {"player_id": "u8231"}),
    ("season", {"season_id": "2026-Q2"}),
    ("season_top", {"season_id": "2026-Q2", "limit": 10}),
]
