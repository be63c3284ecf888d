"""Players, their matches and their per-season ratings, on a table whose key attributes have
application-chosen names (``partitionId``/``rangeId``, ``gsiPartition``/``gsiSort``).

partitionId       rangeId                       gsiPartition / gsiSort (index "lookup-index")
PLAYER#<id>       PROFILE                       HANDLE#<handle> / PLAYER#<id>
PLAYER#<id>       MATCH#<played_at>#<match_id>
PLAYER#<id>       SEASON#<season_id>            SEASON#<season_id> / RATING#<rating:05d>
SEASON#<id>       DETAILS
"""

from __future__ import annotations

from datetime import date, datetime
from enum import Enum
from typing import Annotated

from singletable import GSI, Entity, Table, Version

game = Table(
    "Leaderboard",
    pk="partitionId",
    sk="rangeId",
    indexes=[
        # "lookup" is the handle used in Keys and patterns; "lookup-index" the physical name.
        GSI("lookup", pk="gsiPartition", sk="gsiSort", index_name="lookup-index"),
    ],
)

MAX_RATING = 99_999  # five digits: the width of RATING#{rating:05d}


class MatchResult(str, Enum):
    WIN = "win"
    LOSS = "loss"
    DRAW = "draw"


class Player(Entity, table=game, type="PLAYER"):
    player_id: str
    handle: str  # public, appears in profile URLs
    region: str
    joined_on: date

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "PROFILE"
        lookup = ("HANDLE#{handle}", "PLAYER#{player_id}")


class Match(Entity, table=game, type="MATCH"):
    player_id: str
    played_at: datetime
    match_id: str
    result: MatchResult  # "result" is a DynamoDB reserved word; singletable aliases it
    rating_delta: int
    map_id: str

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "MATCH#{played_at}#{match_id}"


class Season(Entity, table=game, type="SEASON"):
    season_id: str
    name: str
    starts_on: date
    ends_on: date

    class Keys:
        pk = "SEASON#{season_id}"
        sk = "DETAILS"


class SeasonRating(Entity, table=game, type="SEASON_RATING"):
    """A player's rating in one season; the index ranks a season's ratings."""

    player_id: str
    season_id: str
    handle: str  # denormalised so the leaderboard renders without reading every player
    rating: int
    games: int = 0
    version: Annotated[int, Version()] = 0  # a rating is read, changed and written back

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "SEASON#{season_id}"
        # zero-padded: as text "RATING#00950" < "RATING#01000", while "950" > "1000"
        lookup = ("SEASON#{season_id}", "RATING#{rating:05d}")
