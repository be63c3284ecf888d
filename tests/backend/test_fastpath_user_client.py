"""The response fast path on a client the user gives a repository (``Repository(client=...)``,
``AsyncRepository(client=...)``): installed on that client's own events unless
``fast_path=False`` or ``SINGLETABLE_FAST_PATH=0``, and what it parses equals botocore's (the
differential helpers of tests/backend/test_fastpath.py and tests/backend/test_fastpath_async.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from moto import mock_aws  # before any client is created: moto hooks clients at import
from moto_fixtures import Backend
from moto_fixtures.backends import wipe_tables

from singletable import Repository, get, query
from singletable.aio import AsyncRepository
from singletable.aws import fastpath
from tests.backend.test_fastpath import _client, check_same, probe, scenario
from tests.backend.test_fastpath_async import ORDER, aio_client, run, run_steps, scenario_steps
from tests.models import Order, shop


class UserShop(Repository, table=shop):
    order = get(Order)
    orders = query(Order)


class AsyncUserShop(AsyncRepository, table=shop):
    order = get(Order)
    orders = query(Order)


@pytest.fixture(autouse=True)
def _switch_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(fastpath.ENV_VAR, raising=False)


# ----------------------------------------------------------------------------- installed or not


def test_a_sync_repository_installs_the_fast_path_on_the_given_client() -> None:
    client = _client()
    assert not fastpath.is_installed(client)
    repo = UserShop(client=client)
    assert repo.client is client and fastpath.is_installed(client)
    UserShop(client=client)  # idempotent
    assert fastpath.is_installed(client)


def test_fast_path_false_leaves_a_given_sync_client_untouched() -> None:
    client = _client()
    UserShop(client=client, fast_path=False)
    assert not fastpath.is_installed(client)


def test_the_switch_keeps_the_fast_path_off_a_given_sync_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(fastpath.ENV_VAR, "0")
    client = _client()
    UserShop(client=client)
    assert not fastpath.is_installed(client)


def test_a_stub_client_without_botocore_events_is_accepted_as_it_is() -> None:
    class Stub:
        def get_item(self, **params: Any) -> dict[str, Any]:
            return {}

    stub = Stub()
    repo = UserShop(client=stub)  # type: ignore[arg-type]
    assert repo.order(customer_id="C1", created_at=ORDER.created_at, order_id="O1") is None
    assert not fastpath.is_installed(stub)  # type: ignore[arg-type]


def test_fast_path_false_keeps_it_off_the_default_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    assert fastpath.is_installed(UserShop().client)
    assert not fastpath.is_installed(UserShop(fast_path=False).client)


def test_an_async_repository_installs_the_fast_path_on_the_given_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def main() -> list[bool]:
        async with aio_client() as on, aio_client() as off, aio_client() as switched:
            AsyncUserShop(client=on)
            AsyncUserShop(client=off, fast_path=False)
            monkeypatch.setenv(fastpath.ENV_VAR, "0")
            AsyncUserShop(client=switched)
            return [fastpath.is_installed(c) for c in (on, off, switched)]

    assert run(main()) == [True, False, False]


@pytest.mark.backend("moto_server", "dynalite")
def test_connect_with_fast_path_false_opens_a_client_without_it(backend: Backend) -> None:
    async def main() -> bool:
        async with AsyncUserShop.connect(
            endpoint_url=backend.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            fast_path=False,
        ) as repo:
            return fastpath.is_installed(repo.client)

    assert run(main()) is False


# ----------------------------------------------------------------------------- same output


@pytest.mark.backend
def test_a_user_client_under_a_repository_answers_as_a_plain_one() -> None:
    """The user's own calls on the client, after a repository installed the fast path on it,
    return what the same calls on a plain client return (and take the fast path)."""
    with mock_aws():
        plain = scenario(_client())
    with mock_aws():
        client = _client()
        UserShop(client=client)
        seen = probe(client)
        fast = scenario(client)
    check_same(plain, fast, seen)


@pytest.mark.backend("moto_server", "dynalite")
def test_an_async_user_client_under_a_repository_answers_as_a_plain_one(
    backend: Backend,
) -> None:
    assert backend.endpoint_url
    moto = backend.name == "moto_server"
    admin = backend.client()
    retries = {"retries": {"total_max_attempts": 2, "mode": "standard"}}

    async def main(fast_path: bool) -> tuple[Any, Any]:
        async with aio_client(backend.endpoint_url, **retries) as client:
            AsyncUserShop(client=client, fast_path=fast_path)
            assert fastpath.is_installed(client) is fast_path
            seen = probe(client)
            responses = await run_steps(client, scenario_steps(moto=moto))
        return responses, seen

    plain, _ = run(main(fast_path=False))
    wipe_tables(admin)
    fast, seen = run(main(fast_path=True))
    wipe_tables(admin)
    check_same(plain, fast, seen)


def _read_through(make_repo: Any, fast_path: bool) -> Any:
    repo = make_repo(UserShop, shop, fast_path=fast_path)
    repo.put(ORDER)
    got = repo.order(customer_id="C1", created_at=ORDER.created_at, order_id="O1")
    page = repo.orders(customer_id="C1")
    repo.delete(ORDER)
    return got, page.items


def test_a_repository_reads_the_same_with_and_without_the_fast_path(
    make_repo: Any, client: Any, twin: str
) -> None:
    """On both twins: entities read through a repository on the user's client with the fast
    path equal those read with ``fast_path=False`` (here the test's client has it installed
    by the first repository; the async twin's client gets its own)."""
    seen = probe(client)
    with_it = _read_through(make_repo, fast_path=True)
    assert with_it == (ORDER, [ORDER])
    assert fastpath.is_installed(client)
    took = {op: taken for op, _, taken in seen if op in ("GetItem", "Query")}
    if twin == "sync":  # the async twin sends through its own aiobotocore client
        assert took == {"GetItem": True, "Query": True}
    fastpath.uninstall(client)
    without = _read_through(make_repo, fast_path=False)
    assert without == with_it
