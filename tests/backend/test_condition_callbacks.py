"""Condition callbacks send exactly the requests their ``Attr`` spelling sends: pattern filters
(declared and at call time) and ``condition=`` on every write verb and transaction verb, on
every backend and both twins."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from singletable import Attr, Entity, Param, Repository, Transaction, query, transaction
from singletable.errors import ConditionFailed, InvalidRequestError
from tests.models import shop

transactions = pytest.mark.requires("transactions")


class Address(BaseModel):
    city: str


class Crate(Entity, table=shop, type="CRATE"):
    owner: str
    crate_id: str
    total: Decimal
    label: str
    shipping: Address

    class Keys:
        pk = "CRATEOWNER#{owner}"
        sk = "CRATE#{crate_id}"


class Crates(Repository, table=shop):
    by_owner = query(Crate)
    big_attr = query(
        Crate, where=Attr("total").gte(Param("least")) & Attr("shipping.city").eq("Oslo")
    )
    big_callback = query(
        Crate, where=lambda o, op: op.gte(o.total, Param("least")) & op.eq(o.shipping.city, "Oslo")
    )

    @transaction
    def all_verbs(self, tx: Transaction, crate: Crate, condition: Any) -> None:
        tx.put(crate.model_copy(update={"label": "Avocados"}), condition=condition)
        tx.update(Crate, owner="o", crate_id="c2", set={"label": "Almonds"}, condition=condition)
        tx.delete(Crate, owner="o", crate_id="c3", condition=condition)
        tx.condition_check(Crate, owner="o", crate_id="c4", condition=condition)


@pytest.fixture
def repo(make_repo: Any) -> Crates:
    crates: Crates = make_repo(Crates, shop)
    return crates


def crate(crate_id: str, total: int = 60, label: str = "Apples") -> Crate:
    return Crate(
        owner="o",
        crate_id=crate_id,
        total=Decimal(total),
        label=label,
        shipping=Address(city="Oslo"),
    )


ATTR = Attr("total").gte(50) & Attr("label").begins_with("A") & Attr("shipping.city").eq("Oslo")


def callback(o: Crate, op: Any) -> Any:
    return op.gte(o.total, 50) & op.begins_with(o.label, "A") & op.eq(o.shipping.city, "Oslo")


def sent(recorder: Any, action: Callable[[], Any]) -> list[tuple[str, dict[str, Any]]]:
    """The requests ``action`` sends (a transaction's random token left out)."""
    start = len(recorder.calls)
    action()
    calls = recorder.calls[start:]
    for _, params in calls:
        params.pop("ClientRequestToken", None)
    return calls


def test_a_declared_callback_filter_compiles_to_the_attr_filter() -> None:
    repo = Crates(client=None)
    assert repo.big_callback.params(owner="o", least=50) == repo.big_attr.params(
        owner="o", least=50
    )
    assert Crates.big_callback.explain().filter == Crates.big_attr.explain().filter


def test_a_call_time_callback_sends_the_attr_filter(repo: Crates, recorder: Any) -> None:
    repo.put(crate("c1"))
    repo.put(crate("c2", label="Pears"))
    with_attr = sent(recorder, lambda: repo.by_owner(owner="o", where=ATTR))
    with_callback = sent(recorder, lambda: repo.by_owner(owner="o", where=callback))
    assert [op for op, _ in with_callback] == ["Query"]
    assert with_callback == with_attr
    assert [c.crate_id for c in repo.by_owner(owner="o", where=callback)] == ["c1"]
    # a cursor is bound to the filter, whichever way it was written
    page = repo.by_owner(owner="o", limit=1, where=Attr("shipping.city").eq("Oslo"))
    assert page.cursor is not None
    rest = repo.by_owner(
        owner="o", cursor=page.cursor, where=lambda o, op: op.eq(o.shipping.city, "Oslo")
    )
    assert [c.crate_id for c in rest] == ["c2"]


def test_write_verbs_send_the_attr_condition(repo: Crates, recorder: Any) -> None:
    def verbs(condition: Any, absent: Any) -> None:
        repo.put(crate("c1"))
        repo.put(crate("c1", label="Apricots"), condition=condition)
        repo.create(crate("c2"), condition=absent)
        repo.update(Crate, owner="o", crate_id="c1", set={"label": "Avocados"}, condition=condition)
        repo.update(crate("c1"), label="Almonds", condition=condition)
        repo.delete(Crate, owner="o", crate_id="c1", condition=condition)
        repo.delete(crate("c2"), condition=condition)

    with_attr = sent(recorder, lambda: verbs(ATTR, Attr("label").not_exists()))
    with_callback = sent(recorder, lambda: verbs(callback, lambda o, op: op.not_exists(o.label)))
    assert [op for op, _ in with_callback] == [
        "PutItem",
        "PutItem",
        "PutItem",
        "UpdateItem",
        "UpdateItem",
        "DeleteItem",
        "DeleteItem",
    ]
    conditions = [p.get("ConditionExpression", "") for _, p in with_callback]
    assert sum("begins_with" in c for c in conditions) == 5
    assert with_callback == with_attr


@pytest.mark.requires("return_values_on_condition_check_failure")  # tells failed from missing
def test_a_failed_callback_condition_raises_condition_failed(repo: Crates) -> None:
    repo.put(crate("c1", total=10))
    with pytest.raises(ConditionFailed, match=r"did not hold: total >= \?"):
        repo.update(crate("c1", total=10), label="B", condition=lambda o, op: op.gte(o.total, 50))


def test_a_misspelt_callback_field_is_refused_before_sending(repo: Crates, recorder: Any) -> None:
    with pytest.raises(InvalidRequestError, match="Crate has no field 'totl'"):
        repo.by_owner(owner="o", where=lambda o, op: op.gte(o.totl, 50))
    with pytest.raises(InvalidRequestError, match="Crate has no field 'lable'"):
        repo.put(crate("c1"), condition=lambda o, op: op.eq(o.lable, "A"))
    assert recorder.calls == []


@transactions
def test_transaction_verbs_send_the_attr_condition(repo: Crates, recorder: Any) -> None:
    def fill() -> None:
        for crate_id in ("c1", "c2", "c3", "c4"):
            repo.put(crate(crate_id))

    fill()
    with_attr = sent(recorder, lambda: repo.all_verbs(crate("c1"), ATTR))
    fill()
    with_callback = sent(recorder, lambda: repo.all_verbs(crate("c1"), callback))
    assert [op for op, _ in with_callback] == ["TransactWriteItems"]
    items = with_callback[0][1]["TransactItems"]
    assert [next(iter(item)) for item in items] == ["Put", "Update", "Delete", "ConditionCheck"]
    assert with_callback == with_attr
