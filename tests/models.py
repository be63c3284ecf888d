"""Models shared by the backend tests: the seeds' shop and game leaderboard."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated

from singletable import (
    GSI,
    Attr,
    CreatedAt,
    Entity,
    Index,
    Param,
    Repository,
    Table,
    Transaction,
    Unique,
    UpdatedAt,
    Version,
    collection,
    get,
    query,
    transaction,
)

shop = Table(
    "Shop",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
        GSI("GSI3", pk="GSI3PK", sk="GSI3SK", projection="KEYS_ONLY"),
    ],
    ttl_attribute="expires_at",
)


class Status(str, Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"
    CANCELLED = "CANCELLED"


class Customer(Entity, table=shop, type="CUSTOMER"):
    customer_id: str
    name: str
    email: Annotated[str, Unique()]
    version: Annotated[int, Version()] = 0
    created: Annotated[datetime | None, CreatedAt()] = None
    updated: Annotated[datetime | None, UpdatedAt()] = None

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"
        GSI1 = ("EMAIL#{email}", "CUSTOMER#{customer_id}")


class Order(Entity, table=shop, type="ORDER"):
    customer_id: str
    order_id: str
    created_at: datetime
    status: Status
    total: Decimal
    customer_name: str
    expires_at: datetime | None = None

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#{order_id}"
        GSI1 = ("STATUS#{status}", "ORDER#{created_at}#{order_id}")
        GSI2 = Index("PENDING", "{created_at}#{order_id}", when={"status": Status.PENDING})
        GSI3 = ("ORDERID#{order_id}", "ORDER")


class OrderNote(Entity, table=shop, type="ORDER_NOTE"):
    """A foreign type whose sort keys share the orders' prefix (entity isolation tests)."""

    customer_id: str
    created_at: datetime
    note_id: str
    text: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{created_at}#NOTE{note_id}"


class OrderDetails(Entity, table=shop, type="ORDER_DETAILS"):
    order_id: str
    shipping_address: str
    payment_method: str

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "META"


class OrderLine(Entity, table=shop, type="ORDER_LINE"):
    order_id: str
    product_id: str
    quantity: int
    price: Decimal
    product_name: str

    class Keys:
        pk = "ORDER#{order_id}"
        sk = "ITEM#{product_id}"


class Parcel(Entity, table=shop, type="PARCEL"):
    """Index sort keys that repeat (several parcels shipped in one minute)."""

    customer_id: str
    parcel_id: str
    carrier: str
    shipped_at: datetime
    weight: int

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PARCEL#{parcel_id}"
        GSI1 = ("CARRIER#{carrier}", "SHIPPED#{shipped_at}")


class Shop(Repository, table=shop):
    customer = get(Customer)
    customer_by_email = query(Customer, index="GSI1", one=True)
    customer_orders = query(Order, order="desc")
    orders_oldest_first = query(Order)
    orders_by_status = query(Order, index="GSI1")
    pending_orders = query(Order, index="GSI2")
    big_orders = query(Order, where=Attr("total").gte(Param("min_total")))
    order_refs = query(Order, index="GSI3", keys_only=True)
    order_by_id = query(Order, index="GSI3", hydrate=True)
    customer_home = collection(Customer, Order)
    order_with_lines = collection(OrderDetails, OrderLine)
    parcels_by_carrier = query(Parcel, index="GSI1", where=Attr("weight").gte(Param("min_weight")))


class Product(Entity, table=shop, type="PRODUCT"):
    product_id: str
    name: str
    category: str
    price: Decimal
    stock: int

    class Keys:
        pk = "PRODUCT#{product_id}"
        sk = "DETAILS"
        GSI1 = ("CATEGORY#{category}", "PRODUCT#{product_id}")


class TeamMember(Entity, table=shop, type="TEAM_MEMBER"):
    team_id: str
    user_id: str
    role: str

    class Keys:
        pk = "TEAM#{team_id}"
        sk = "MEMBER#{user_id}"


class UserTeam(Entity, table=shop, type="USER_TEAM"):
    user_id: str
    team_id: str
    role: str

    class Keys:
        pk = "USER#{user_id}"
        sk = "TEAM#{team_id}"


class Invite(Entity, table=shop, type="INVITE"):
    """A unique code that expires: its guard expires with it."""

    invite_id: str
    code: Annotated[str, Unique()]
    expires_at: datetime | None = None

    class Keys:
        pk = "INVITE#{invite_id}"
        sk = "INVITE"


class Profile(Entity, table=shop, type="PROFILE"):
    user_id: str
    tags: set[str] = set()
    history: list[str] = []
    visits: int = 0
    nickname: str | None = None

    class Keys:
        pk = "USER#{user_id}"
        sk = "PROFILE"


class Job(Entity, table=shop, type="JOB"):
    """Index keys maintained one attribute at a time: a sparse index whose condition is a
    callable (it may read any field, so every update evaluates it), a partition key of two
    fields, and an index the item leaves while an optional field is None."""

    job_id: str
    status: Status
    owner: str
    queue: str = "main"
    priority: int = 0
    note: str | None = None

    class Keys:
        pk = "JOB#{job_id}"
        sk = "JOB"
        GSI1 = ("QUEUE#{queue}#OWNER#{owner}", "PRIORITY#{priority:03d}#{job_id}")
        GSI2 = Index(
            "JOBS_PENDING",
            "JOB#{job_id}",
            when=lambda job: job.status is Status.PENDING and job.priority > 0,
        )
        GSI3 = ("NOTE#{note}", "JOB#{job_id}")


class Store(Shop):
    """The shop with its named multi-item writes."""

    product = get(Product)
    invite = get(Invite)
    profile = get(Profile)
    products_in_category = query(Product, index="GSI1")
    team_members = query(TeamMember)
    user_teams = query(UserTeam)

    @transaction
    def place_order(self, tx: Transaction, order: Order, lines: list[OrderLine]) -> None:
        tx.create(order)
        for line in lines:
            tx.create(line)
            tx.update(
                Product,
                product_id=line.product_id,
                add={"stock": -line.quantity},
                condition=Attr("stock").gte(line.quantity),
            )

    @transaction(token=lambda self, order, lines: f"order-{order.order_id}")
    def place_order_once(self, tx: Transaction, order: Order, lines: list[OrderLine]) -> None:
        self.place_order(order, lines)  # joins this transaction

    @transaction
    def join_team(self, tx: Transaction, user_id: str, team_id: str, role: str) -> None:
        tx.create(TeamMember(team_id=team_id, user_id=user_id, role=role))
        tx.create(UserTeam(user_id=user_id, team_id=team_id, role=role))


game = Table(
    "Game",
    pk="partitionId",
    sk="rangeId",
    indexes=[GSI("gsi", pk="gsiPartition", sk="gsiSort")],
)


class Player(Entity, table=game, type="PLAYER"):
    player_id: str
    handle: str
    region: str

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "PROFILE"
        gsi = ("HANDLE#{handle}", "PLAYER#{player_id}")


class Match(Entity, table=game, type="MATCH"):
    player_id: str
    played_at: datetime
    result: str  # a reserved word in DynamoDB expressions
    rating_delta: int
    map_id: str

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "MATCH#{played_at}"


class SeasonRating(Entity, table=game, type="SEASON_RATING"):
    player_id: str
    season: str
    rating: int

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "SEASON#{season}"
        gsi = ("SEASON#{season}", "RATING#{rating:05d}")


class PlayerRating(Entity, table=game, type="PLAYER_RATING"):
    """A rating whose index partition (the season) is not a key field: a new rating rewrites
    only the index sort key, so the update needs the player id and the rating alone."""

    player_id: str
    season: str
    rating: int

    class Keys:
        pk = "PLAYER#{player_id}"
        sk = "RATING"
        gsi = ("RANKED#{season}", "SCORE#{rating:05d}")


class Leaderboard(Repository, table=game):
    player = get(Player)
    recent_matches = query(Match, order="desc")
    wins = query(Match, order="desc", where=Attr("result").eq("win"))
    season_top = query(SeasonRating, index="gsi", order="desc")
    player_by_handle = query(Player, index="gsi", one=True)


class JobBoard(Store):
    """The store with the jobs' patterns (a repository of its own, so Store's explain table and
    lint findings stay as they are)."""

    job = get(Job)
    pending_jobs = query(Job, index="GSI2")
    queue_jobs = query(Job, index="GSI1", order="desc")
