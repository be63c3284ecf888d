"""The workflow repository: reads are one request each; every multi-item write is one named
transaction."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from singletable import Attr, Repository, Transaction, collection, get, query, transaction

from .models import (
    Invite,
    LineItem,
    Membership,
    Order,
    OrderStatus,
    Role,
    Session,
    Team,
    User,
    UserOrder,
    workflow,
)

__all__ = ["EXAMPLE_CALLS", "Workflow", "seed", "workflow"]

DATA = Path(__file__).with_name("data.json")
SESSION_LIFETIME = timedelta(hours=12)
INVITE_LIFETIME = timedelta(days=7)


class Workflow(Repository, table=workflow):
    # Deliberate trade-off that `singletable lint` reports; the README explains it.
    lint_acknowledge = {
        "hot-partition:Order.GSI2": (
            "a sparse queue: only PENDING orders are in GSI2 and they leave it when processed, "
            "so its one partition stays small (README: pending_orders)"
        ),
    }

    # -- users --
    user = get(User)
    user_by_email = query(User, index="GSI1", one=True)
    user_orders = query(UserOrder, order="desc")

    # -- orders --
    order = get(Order)
    order_with_lines = collection(Order, LineItem)
    pending_orders = query(Order, index="GSI2")  # the sparse queue, oldest first

    # -- teams --
    team_page = collection(Team, Invite, Membership)
    team_invites = query(Invite)
    user_teams = query(Membership, index="GSI1")

    # -- sessions --
    session = get(Session)
    user_sessions = query(Session, index="GSI1", order="desc")

    # -- users --

    def register(self, user: User) -> User:
        """One TransactWriteItems: the user and the guard item of its email.
        ``UniqueConstraintViolation`` if the email is taken."""
        return self.create(user)

    def change_email(self, user: User, email: str) -> User:
        """One TransactWriteItems: the new email's guard is created, the old one deleted."""
        changed: User = self.update(user, email=email)
        return changed

    # -- orders --

    @transaction(token=lambda self, order, lines: f"place-{order.order_id}")
    def place_order(self, tx: Transaction, order: Order, lines: Sequence[LineItem]) -> Order:
        """The order by id, its copy under the user and its lines: all or nothing."""
        stored = tx.create(order)
        tx.create(stored.user_copy())
        for line in lines:
            tx.create(line)
        return stored

    @transaction
    def set_status(self, tx: Transaction, order: Order, status: OrderStatus) -> Order:
        """Change the status of both copies in one transaction.

        The canonical order has a ``Version()`` field: if it changed since ``order`` was read,
        the transaction is cancelled with ``VersionConflict``. Leaving PENDING drops the order
        from the sparse ``pending_orders`` index. Returns the order as it will be stored.
        """
        tx.update(order, status=status)
        tx.update(
            UserOrder,
            user_id=order.user_id,
            created_at=order.created_at,
            order_id=order.order_id,
            set={"status": status},
        )
        return order.model_copy(update={"status": status, "version": order.version + 1})

    # -- teams --

    @transaction
    def join_team(self, tx: Transaction, team_id: str, user_id: str, role: Role) -> Membership:
        """Create the relationship item, on the condition that the team exists."""
        tx.condition_check(Team, team_id=team_id, condition=Attr("team_id").exists())
        return tx.create(
            Membership(team_id=team_id, user_id=user_id, role=role, joined_at=self.now())
        )

    def invite(self, team_id: str, email: str, role: Role, invited_by: str) -> Invite:
        """One PutItem; the invite expires after a week (a new invite replaces an old one)."""
        invite = Invite(
            team_id=team_id,
            email=email,
            role=role,
            invited_by=invited_by,
            expires_at=self.now() + INVITE_LIFETIME,
        )
        stored: Invite = self.put(invite)
        return stored

    @transaction
    def accept_invite(self, tx: Transaction, invite: Invite, user: User) -> Membership:
        """Consume the invite and create the membership. An invite that has expired counts as
        absent, so accepting it cancels the transaction."""
        if invite.email != user.email:
            raise PermissionError(f"the invite is for {invite.email}, not {user.email}")
        tx.delete(invite, must_exist=True)
        return self.join_team(invite.team_id, user.user_id, invite.role)  # joins this tx

    # -- sessions --

    def start_session(self, user: User) -> Session:
        """One PutItem (a create: a token collision fails instead of taking over a session)."""
        now = self.now()
        session = Session(
            session_id=secrets.token_urlsafe(16),
            user_id=user.user_id,
            started_at=now,
            expires_at=now + SESSION_LIFETIME,
        )
        created: Session = self.create(session)
        return created


def _entities(data: dict[str, Any], now: datetime) -> dict[str, list[Any]]:
    """The seed entities of ``data.json``; relative times in it are taken from ``now``."""
    orders = []
    for raw in data["orders"]:
        lines = [LineItem(order_id=raw["order_id"], **line) for line in raw["lines"]]
        order = Order(
            order_id=raw["order_id"],
            user_id=raw["user_id"],
            created_at=datetime.fromisoformat(raw["created_at"]),
            status=OrderStatus(raw["status"]),
            total=sum((line.unit_price * line.quantity for line in lines), Decimal(0)),
        )
        orders.append((order, lines))
    return {
        "users": [User(**u) for u in data["users"]],
        "orders": orders,
        "teams": [Team(**t) for t in data["teams"]],
        "memberships": [
            Membership(
                team_id=m["team_id"],
                user_id=m["user_id"],
                role=Role(m["role"]),
                joined_at=now - timedelta(days=m["joined_days_ago"]),
            )
            for m in data["memberships"]
        ],
        "invites": [
            Invite(
                team_id=i["team_id"],
                email=i["email"],
                role=Role(i["role"]),
                invited_by=i["invited_by"],
                expires_at=now + timedelta(hours=i["expires_in_hours"]),
            )
            for i in data["invites"]
        ],
        "sessions": [
            Session(
                session_id=s["session_id"],
                user_id=s["user_id"],
                started_at=now - timedelta(hours=s["started_hours_ago"]),
                expires_at=now + timedelta(hours=s["expires_in_hours"]),
            )
            for s in data["sessions"]
        ],
    }


def seed(repo: Workflow, *, bulk: bool = False) -> None:
    """Load ``data.json`` through the repository's own writes: each user with its email guard
    and each order with its copy and lines in one TransactWriteItems; teams, memberships,
    invites and sessions one PutItem each. Times in the file are relative to the repository's
    clock, so sessions and invites are live when the seed runs.

    ``bulk=True`` writes the same entities with ``batch_put(..., unsafe=True)`` instead: one
    BatchWriteItem request per 25 items and no transactions, for emulators without
    TransactWriteItems (dynalite). Batches check no conditions and write no unique guards, so
    a bulk-loaded table does not enforce email uniqueness for the seeded users.
    """
    seeded = _entities(json.loads(DATA.read_text()), repo.now())
    singles: list[Any] = [
        *seeded["teams"],
        *seeded["memberships"],
        *seeded["invites"],
        *seeded["sessions"],
    ]
    if bulk:
        everything: list[Any] = [*seeded["users"], *singles]
        for order, lines in seeded["orders"]:
            everything += [order, order.user_copy(), *lines]
        repo.batch_put(everything, unsafe=True)
        return
    for user in seeded["users"]:
        repo.register(user)
    for order, lines in seeded["orders"]:
        repo.place_order(order, lines)
    for entity in singles:
        repo.create(entity)


EXAMPLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("user", {"user_id": "u1"}),
    ("user_by_email", {"email": "ann@example.com"}),
    ("user_orders", {"user_id": "u1"}),
    ("order", {"order_id": "o-301"}),
    ("order_with_lines", {"order_id": "o-301"}),
    ("pending_orders", {"limit": 10}),
    ("team_page", {"team_id": "t-core"}),
    ("team_invites", {"team_id": "t-core"}),
    ("user_teams", {"user_id": "u1"}),
    ("session", {"session_id": "s-ann-laptop"}),
    ("user_sessions", {"user_id": "u1"}),
]
