"""Models keyed on native (multi-attribute) index keys, for tests/backend/test_native_keys.py.

Two tables: ``arena`` has only single-attribute native indexes (dynalite serves those), and
``tenants`` multi-attribute ones (DynamoDB since November 2025, moto 5.2.5; not dynalite).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated, Literal

from singletable import (
    GSI,
    Entity,
    Repository,
    Shard,
    Table,
    Unique,
    Version,
    collection,
    get,
    query,
)

arena = Table(
    "Arena",
    indexes=[
        # AWS's Battle Royale OpenGamesIndex: only open games have a map and an open time
        GSI("OpenGames", pk=("map",), sk=("open_timestamp",)),
        GSI("ByTotal", pk=("customer_id",), sk=("total",)),
        GSI("ByCode", pk=("code",), projection="KEYS_ONLY"),
    ],
    ttl_attribute="expires_at",
)


class Game(Entity, table=arena, type="GAME"):
    game_id: str
    creator: str
    map: str | None = None
    open_timestamp: datetime | None = None
    version: Annotated[int, Version()] = 0

    class Keys:
        pk = "GAME#{game_id}"
        sk = "GAME"


class Purchase(Entity, table=arena, type="PURCHASE"):
    customer_id: str
    purchase_id: str
    total: Decimal
    code: bytes | None = None
    expires_at: datetime | None = None

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PURCHASE#{purchase_id}"


class Arena(Repository, table=arena):
    game = get(Game)
    open_games = query(Game, index="OpenGames")
    newest_open_games = query(Game, index="OpenGames", order="desc")
    purchases_by_total = query(Purchase, index="ByTotal")
    purchases_by_code = query(Purchase, index="ByCode", hydrate=True)


class Status(str, Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    SHIPPED = "SHIPPED"


tenants = Table(
    "Tenants",
    indexes=[
        GSI("ByTenant", pk=("tenant_id", "region"), sk=("status", "created_at")),
        GSI("ByShard", pk=("shard", "region"), sk=("created_at",)),
        GSI("ByShardTotal", pk=("shard",), sk=("total",)),
        GSI("ByTournament", pk=("tournament_id", "region"), sk=("round", "SK")),
    ],
)


class Order(Entity, table=tenants, type="ORDER"):
    tenant_id: str
    region: Literal["eu", "us"]
    order_id: str
    status: Status
    created_at: datetime
    total: Decimal
    shard: Annotated[int, Shard(4, of="order_id")] = 0

    class Keys:
        pk = "TENANT#{tenant_id}"
        sk = "ORDER#{order_id}"


class Invoice(Entity, table=tenants, type="INVOICE"):
    tenant_id: str
    region: Literal["eu", "us"]
    invoice_id: str
    status: Status
    created_at: datetime
    number: Annotated[str, Unique()]

    class Keys:
        pk = "TENANT#{tenant_id}"
        sk = "INVOICE#{invoice_id}"


class Match(Entity, table=tenants, type="MATCH"):
    tournament_id: str
    region: Literal["eu", "us"]
    round: int
    match_id: str

    class Keys:
        pk = "TOURNAMENT#{tournament_id}"
        sk = "MATCH#{match_id}"


class Tenants(Repository, table=tenants):
    tenant_orders = query(Order, index="ByTenant")
    newest_tenant_orders = query(Order, index="ByTenant", order="desc")
    tenant_paperwork = collection(Order, Invoice, index="ByTenant")
    orders_everywhere = query(Order, index="ByShard", scatter="shard", order="desc")
    orders_by_total = query(Order, index="ByShardTotal", scatter="shard")
    matches = query(Match, index="ByTournament")
