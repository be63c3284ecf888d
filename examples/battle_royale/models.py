"""The Battle Royale table, as AWS's "Modeling Game Player Data with Amazon DynamoDB" designs it.

PK / SK                                  indexes (native: the items' own attributes)
USER#<username> / #METADATA#<username>
GAME#<game_id> / #METADATA#<game_id>     OpenGames: map / open_timestamp (open games only)
GAME#<game_id> / USER#<username>         InvertedIndex: SK / PK (every item; players by user)
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from singletable import GSI, Entity, Table

#: A game starts when this many players have joined.
SEATS = 50

Map = Literal[
    "Green Grasslands", "Dirty Desert", "Juicy Jungle", "Urban Underground", "Frozen Fortress"
]
Medal = Literal["gold", "silver", "bronze"]

battle_royale = Table(
    "battle-royale",
    indexes=[
        # Only a game waiting for players carries open_timestamp: a sparse index, read per map
        # (Query) or whole (Scan). Nothing is derived: the keys are the game's own fields.
        GSI("OpenGames", pk=("map",), sk=("open_timestamp",), index_name="OpenGamesIndex"),
        # The table's key turned around: a user's game memberships by their SK.
        GSI("InvertedIndex", pk=("SK",), sk=("PK",)),
    ],
)


class User(Entity, table=battle_royale, type="USER"):
    username: str
    name: str
    email: str
    birthdate: date
    address: str
    games_played: int = 0
    wins: int = 0
    kills: int = 0

    class Keys:
        pk = "USER#{username}"
        sk = "#METADATA#{username}"


class Game(Entity, table=battle_royale, type="GAME"):
    game_id: str
    map: Map
    creator: str
    create_time: datetime
    people: int = 0  # players joined so far
    open_timestamp: datetime | None = None  # set while open: the game is in OpenGames
    start_time: datetime | None = None
    end_time: datetime | None = None

    class Keys:
        pk = "GAME#{game_id}"
        sk = "#METADATA#{game_id}"


class Player(Entity, table=battle_royale, type="USER_GAME"):
    """A user's place in a game (the tutorial's UserGameMapping)."""

    game_id: str
    username: str
    joined_at: datetime
    kills: int = 0
    place: Medal | None = None  # the last three standing get a medal

    class Keys:
        pk = "GAME#{game_id}"
        sk = "USER#{username}"
