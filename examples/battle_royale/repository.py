"""The Battle Royale repository: AWS's 13 access patterns, each one call (the reads one
request each, the joins one transaction)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from singletable import Attr, Repository, Transaction, collection, get, query, scan, transaction

from .models import SEATS, Game, Map, Medal, Player, User, battle_royale

__all__ = ["EXAMPLE_CALLS", "BattleRoyale", "battle_royale", "seed"]

DATA = Path(__file__).with_name("data.json")


class BattleRoyale(Repository, table=battle_royale):
    lint_acknowledge = {
        "hot-partition:Game.OpenGames": (
            "sparse: only games waiting for players are in it, a few per map at a time, and "
            "each leaves it when it starts; five maps are enough (AWS's own model)"
        ),
        "unread-index:Game.InvertedIndex": (
            "keyed on the table's own keys, the inverted index holds every item; only player "
            "items are read there (past_games), as in AWS's model"
        ),
        "unread-index:User.InvertedIndex": (
            "keyed on the table's own keys, the inverted index holds every item; only player "
            "items are read there (past_games), as in AWS's model"
        ),
    }

    # -- users --
    user = get(User)  # Get user profile

    # -- games --
    game = get(Game)  # View game
    open_games = scan(Game, index="OpenGames")  # Find open games (every map)
    open_games_by_map = query(Game, index="OpenGames")  # Find open games by map, oldest first
    game_players = collection(Game, Player)  # View users in game: the game, then its players
    past_games = query(Player, index="InvertedIndex")  # Find all past games for a user

    # -- writes --

    def create_user(self, user: User) -> User:
        """Create user profile (fails with ``AlreadyExists`` for a taken username)."""
        return self.create(user)

    def update_user(self, username: str, **changes: Any) -> User:
        """Update user profile: the given fields (the user must exist)."""
        updated: User = self.update(User, username=username, set=changes)
        return updated

    def create_game(self, game_id: str, map: Map, creator: str) -> Game:
        """Create game: open (in OpenGames) from its creation."""
        now = self.now()
        game = Game(game_id=game_id, map=map, creator=creator, create_time=now, open_timestamp=now)
        return self.create(game)

    @transaction
    def join_game(self, tx: Transaction, game_id: str, username: str) -> None:
        """Join game for a user: one TransactWriteItems. The player item is created (not
        twice) and the game's head count goes up, on the condition that the game is still open
        and has a free seat; otherwise nothing is written (``TransactionCanceled``)."""
        tx.create(Player(game_id=game_id, username=username, joined_at=self.now()))
        tx.update(
            Game,
            game_id=game_id,
            add={"people": 1},
            condition=Attr("open_timestamp").exists() & Attr("people").lt(SEATS),
        )

    def start_game(self, game_id: str, requested_by: str) -> Game:
        """Start game: only its creator, only when full. Removing ``open_timestamp`` takes the
        game out of OpenGames (one UpdateItem)."""
        started: Game = self.update(
            Game,
            game_id=game_id,
            set={"start_time": self.now()},
            remove=["open_timestamp"],
            condition=Attr("people").eq(SEATS) & Attr("creator").eq(requested_by),
        )
        return started

    def update_game_for_user(
        self, game_id: str, username: str, kills: int, place: Medal | None = None
    ) -> Player:
        """Update game for user: the player's kills and medal (one UpdateItem)."""
        changes: dict[str, Any] = {"kills": kills}
        if place is not None:
            changes["place"] = place
        updated: Player = self.update(Player, game_id=game_id, username=username, set=changes)
        return updated

    def update_game(self, game_id: str) -> Game:
        """Update game: mark a started game as ended (one UpdateItem)."""
        ended: Game = self.update(
            Game,
            game_id=game_id,
            set={"end_time": self.now()},
            condition=Attr("start_time").exists(),
        )
        return ended


def seed(repo: BattleRoyale) -> None:
    """Load ``data.json`` through the repository (BatchWriteItem, 25 items per request)."""
    data = json.loads(DATA.read_text())
    entities: list[Any] = [
        *(User(**u) for u in data["users"]),
        *(Game(**g) for g in data["games"]),
        *(Player(**p) for p in data["players"]),
    ]
    repo.batch_put(entities)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("user", {"username": "johnsonscott"}),
    ("game", {"game_id": "c6f38a6a"}),
    ("open_games", {}),
    ("open_games_by_map", {"map": "Green Grasslands"}),
    ("game_players", {"game_id": "c6f38a6a"}),
    ("past_games", {"username": "johnsonscott"}),
]
