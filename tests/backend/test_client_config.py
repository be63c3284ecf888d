"""Which clients check parameters client-side: the clients singletable creates do not (its
requests are correct by construction), a client of the user's keeps botocore's validation, and
every request singletable sends passes that validation (here for each write verb; the rest of
the suite runs every read and write through validating clients too)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Annotated, Any

import boto3
import pytest
from botocore.exceptions import ParamValidationError

from singletable import Entity, Repository, Table, Unique, get, transaction
from singletable.aio import AsyncRepository
from singletable.aws import client_config, default_client

table = Table("config-shop")


class Member(Entity, table=table, type="MEMBER"):
    member_id: str
    email: Annotated[str, Unique()]
    name: str
    visits: int = 0

    class Keys:
        pk = "MEMBER#{member_id}"
        sk = "PROFILE"


class Visit(Entity, table=table, type="VISIT"):
    member_id: str
    day: str

    class Keys:
        pk = "MEMBER#{member_id}"
        sk = "VISIT#{day}"


class Club(Repository, table=table):
    member = get(Member)

    @transaction
    def join_both(self, tx: Any, first: Member, second: Member) -> None:
        tx.create(first)
        tx.create(second)


class AsyncClub(AsyncRepository, table=table):
    member = get(Member)


#: A request botocore's validation refuses (``Limit`` must be an integer >= 1).
BAD_QUERY = {
    "TableName": "config-shop",
    "KeyConditionExpression": "PK = :p",
    "ExpressionAttributeValues": {":p": {"S": "x"}},
    "Limit": 0,
}


def _answer_before_sending(client: Any) -> None:
    """Answer every call with an empty 200 response once it is serialised (``before-call``
    returning a response skips the HTTP exchange), so no call leaves the process."""

    def answer(**_: Any) -> tuple[Any, dict[str, Any]]:
        return SimpleNamespace(status_code=200, headers={}), {}

    client.meta.events.register("before-call.dynamodb.*", answer)


def validates(client: Any) -> bool:
    """Whether ``client`` refuses a malformed request before sending it."""
    _answer_before_sending(client)
    try:
        client.query(**BAD_QUERY)
    except ParamValidationError:
        return True
    return False


async def validates_async(client: Any) -> bool:
    _answer_before_sending(client)
    try:
        await client.query(**BAD_QUERY)
    except ParamValidationError:
        return True
    return False


def test_client_config_keeps_validation_unless_asked() -> None:
    assert client_config().parameter_validation is True
    assert client_config(parameter_validation=False).parameter_validation is False
    assert client_config(signing=True, parameter_validation=False).parameter_validation is False


def test_the_default_client_skips_parameter_validation(default_session: None) -> None:
    assert not validates(default_client())
    assert not validates(Club().client)
    assert validates(default_client(config=client_config()))  # a config given is used as is


def test_a_users_client_keeps_validating(default_session: None) -> None:
    client = boto3.client("dynamodb")
    assert validates(Club(client=client).client)


def test_connect_skips_parameter_validation(default_session: None) -> None:
    pytest.importorskip("aiobotocore", reason="the async twin is an extra")

    async def check() -> tuple[bool, bool]:
        async with AsyncClub.connect() as repo:
            made = await validates_async(repo.client)
        async with AsyncClub.connect(config=client_config()) as repo:
            given = await validates_async(repo.client)
        return made, given

    assert asyncio.run(check()) == (False, True)


@pytest.mark.requires("transactions")  # Unique() guards are written in transactions
def test_every_write_request_passes_botocore_validation(make_repo: Any, client: Any) -> None:
    """Each write verb through a validating client (the fixture's, plus the async twin's):
    a request botocore would reject raises ParamValidationError, which the repository
    maps and this test would see."""
    assert client.meta.config.parameter_validation is True
    repo = make_repo(Club, table)
    ada = Member(member_id="m1", email="ada@example.com", name="Ada")
    grace = Member(member_id="m2", email="grace@example.com", name="Grace")
    repo.create(ada)
    repo.put(ada.model_copy(update={"name": "Ada L."}))
    repo.update(Member, member_id="m1", set={"name": "Ada Lovelace"}, add={"visits": 1})
    stored = repo.update(repo.member(member_id="m1"), email="ada@lovelace.org")
    assert stored.email == "ada@lovelace.org" and stored.visits == 1
    repo.batch_put([Visit(member_id="m1", day=f"2026-11-{d:02d}") for d in range(1, 4)])
    repo.batch_delete([(Visit, {"member_id": "m1", "day": "2026-11-01"})])
    repo.delete(Member, member_id="m1")
    repo.join_both(ada, grace)
    assert repo.member(member_id="m2") == grace


def test_threads_sharing_a_repository_create_one_default_client(default_session: None) -> None:
    """A service shares one repository across threads; their first calls may come at once.
    botocore's ``creating-client-class`` event on the default session counts the clients
    created."""
    boto3.setup_default_session()
    session = boto3.DEFAULT_SESSION
    assert session is not None
    created: list[str] = []
    session.events.register(
        "creating-client-class.dynamodb", lambda **_: created.append("dynamodb")
    )
    repo = Club()
    threads = 8
    barrier = threading.Barrier(threads)

    def first_use() -> Any:
        barrier.wait()
        return repo.client

    with ThreadPoolExecutor(threads) as pool:
        clients = list(pool.map(lambda _: first_use(), range(threads)))
    assert len(created) == 1
    assert all(c is clients[0] for c in clients)
