"""Fixing the stale items of one round, as flows: conditioned updates (at once, or one by
one), moves (one transaction each), and the one retry from a fresh read when an item changed
under the backfill. Each fix ends as an outcome: ``updated``, ``moved``, ``up_to_date`` (fresh
when read again, or gone) or a :class:`BackfillFailure`.

A fix is conditioned on the item being unchanged since the Scan read it. When the condition
fails, the item is read again (consistently; DynamoDB returns it with the failure) and decided
afresh: once. A second failure leaves the item as it is: reported in ``failed`` unless it is
fresh by then. When several fixes went out together and one failed, each is read back to learn
what landed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._flows import Flow, Gather, Send
from .._verbs.commit import commit
from ..errors import ServiceError, SingleTableError, TransactionCanceled
from .items import BackfillFailure, BackfillPlan, Decision, same_item
from .ledger import MOVED, UP_TO_DATE, UPDATED, Ledger, Tally

if TYPE_CHECKING:
    from .._verbs.planner import WritePlanner

PATTERN = "backfill"

CHANGING = (
    "it changed while the backfill was fixing it, twice; it was not overwritten: run the "
    "backfill again"
)


class Fixer:
    """Sends one round's fixes; consumed capacity goes to ``tally``."""

    def __init__(
        self, planner: WritePlanner, plan: BackfillPlan, ledger: Ledger, tally: Tally
    ) -> None:
        self.planner = planner
        self.plan = plan
        self.ledger = ledger
        self.tally = tally

    def fix_all(self, fixes: list[Decision], concurrency: int) -> Flow[dict[int, Any]]:
        """Send the round's fixes (updates at once, at most ``concurrency`` in flight; moves
        one by one) and return each one's outcome, by ``id(decision)``."""
        outcomes: dict[int, Any] = {}
        updates = [d for d in fixes if d.kind == "stale"]
        if concurrency > 1 and len(updates) > 1:
            sends = tuple(Send("UpdateItem", self.plan.update_params(d), PATTERN) for d in updates)
            try:
                responses = yield Gather(sends, concurrency)
            except SingleTableError:
                # One failed (the first in order is all a Gather tells): read each back.
                for decision in updates:
                    outcomes[id(decision)] = yield from self.settle(decision)
            else:
                for decision, response in zip(updates, responses):
                    self.tally.add_capacity(response)
                    outcomes[id(decision)] = UPDATED
        else:
            for decision in updates:
                outcomes[id(decision)] = yield from self.update(decision, retried=False)
        for decision in fixes:
            if decision.kind == "moved":
                outcomes[id(decision)] = yield from self.relocate(decision, retried=False)
        return outcomes

    def read(self, decision: Decision) -> Flow[Any]:
        response: dict[str, Any] = yield Send(
            "GetItem", self.plan.get_params(decision.key), PATTERN
        )
        self.tally.add_capacity(response)
        return response.get("Item")

    def update(self, decision: Decision, *, retried: bool) -> Flow[Any]:
        try:
            response = yield Send("UpdateItem", self.plan.update_params(decision), PATTERN)
        except ServiceError as exc:
            if exc.aws_code != "ConditionalCheckFailedException":
                return self.failure(decision, f"{exc.code} ({exc.aws_code})")
            current = exc.response.get("Item")
            if current is None:  # not returned with the failure (dynalite): read it
                current = yield from self.read(decision)
            if retried:
                return UP_TO_DATE if self.is_fresh(current) else self.failure(decision, CHANGING)
            return (yield from self.again(decision, current))
        except SingleTableError as exc:
            return self.failure(decision, exc.code)
        self.tally.add_capacity(response)
        return UPDATED

    def settle(self, decision: Decision) -> Flow[Any]:
        """The outcome of a fix sent in a Gather that failed: read the item back."""
        current = yield from self.read(decision)
        if same_item(current, decision.after()):
            return UPDATED
        if same_item(current, decision.item):  # not applied, not changed: send it alone
            return (yield from self.update(decision, retried=False))
        return (yield from self.again(decision, current))

    def is_fresh(self, current: Any) -> bool:
        """Whether an item read again needs nothing (gone, another type's, or fresh)."""
        if current is None:
            return True
        return self.plan.classify(current, self.planner.write_context()).kind in ("skip", "fresh")

    def again(self, decision: Decision, current: Any) -> Flow[Any]:
        """The one retry: decide about the item as it is now and fix it (once more at most)."""
        if current is None:
            return UP_TO_DATE  # deleted meanwhile: nothing to fix
        fresh = self.plan.classify(current, self.planner.write_context())
        if fresh.kind in ("skip", "fresh"):
            return UP_TO_DATE
        if fresh.kind == "failed":
            return self.failure(fresh, fresh.reason)
        if fresh.kind == "moved":
            if not self.ledger.move:
                return self.failure(fresh, "its primary key would change: pass move=True")
            return (yield from self.relocate(fresh, retried=True))
        return (yield from self.update(fresh, retried=True))

    def relocate(self, decision: Decision, *, retried: bool) -> Flow[Any]:
        """Move one item: one transaction (delete, put under the new key, guards)."""
        plan = self.plan
        ops = plan.move_ops(decision, self.planner.write_context())
        try:
            yield from commit(ops, plan.spec.table, self.planner.context, pattern=PATTERN)
        except TransactionCanceled as canceled:
            failed = {r.index for r in canceled.reasons if r.failed}
            if 1 in failed:
                return self.failure(decision, "its new key holds another item")
            if failed - {0}:
                return self.failure(decision, "a Unique() value of it is taken by another item")
            current = yield from self.read(decision)
            if retried:
                return UP_TO_DATE if self.is_fresh(current) else self.failure(decision, CHANGING)
            return (yield from self.again(decision, current))
        except SingleTableError as exc:
            aws = getattr(exc, "aws_code", None)
            return self.failure(decision, f"{exc.code} ({aws})" if aws else exc.code)
        assert decision.new_key is not None
        self.ledger.moved_to.add(plan.identity(decision.new_key))
        return MOVED

    def failure(self, decision: Decision, reason: str) -> BackfillFailure:
        return BackfillFailure(self.plan.plain_key(decision.key), reason)
