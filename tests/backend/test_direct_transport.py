"""The direct transport against botocore's pipeline: the same requests on the wire (bodies
byte for byte, every header but the date, signature and invocation id, the signed headers and
their values), the same results, on moto's server, dynalite and the replay endpoint, on both
twins; and on each, the pipeline with singletable's HTTP exchange too.

The direct transport sends HTTP itself, so these suites run on the HTTP backends only
(in-process moto answers inside botocore's event hooks, which direct requests do not run).
Each scenario runs once per transport on a freshly created table, through a
:class:`moto_fixtures.wire.WireProxy` that records what each transport sent.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from moto_fixtures import NOW, Backend, Clock, create_table
from moto_fixtures.tables import POLL_DELAY
from moto_fixtures.wire import Recorded, WireProxy

from singletable import SingleTableError
from singletable.aws import _direct_install
from singletable.aws._direct_aiohttp import Exchange
from tests.direct_support import comparable, open_repo, raw_body_equal, transports
from tests.models import Customer, Order, Product, Status, shop

pytestmark = pytest.mark.backend("moto_server", "dynalite")

ROOT = Path(__file__).resolve().parents[2]


def _orders(count: int) -> list[Order]:
    return [
        Order(
            customer_id="c1",
            order_id=f"o{i:02}",
            created_at=NOW + timedelta(minutes=i),
            status=Status.PENDING if i % 2 else Status.SHIPPED,
            total=Decimal(i) + Decimal("0.25"),
            customer_name="Ann \u00e9",
        )
        for i in range(count)
    ]


def _code(call: Callable[[], Any]) -> tuple[str, str | None]:
    try:
        call()
    except SingleTableError as error:
        return type(error).__name__, getattr(error, "aws_code", None)
    raise AssertionError("the call did not fail")


def scenario(repo: Any, backend: Backend) -> list[Any]:
    """Every operation singletable sends (each at least once); what each call returned."""
    orders = _orders(30)
    out: list[Any] = [repo.put(orders[0])]  # PutItem
    out.append(repo.batch_put(orders[1:]))  # BatchWriteItem x2
    out.append(list(repo.customer_orders.all(customer_id="c1")))  # Query, paged
    out.append(repo.orders_by_status.first(status=Status.PENDING))  # Query on an index
    out.append(repo.update(orders[0], customer_name="Bo"))  # UpdateItem, instance form
    key = {"customer_id": "c1", "created_at": orders[1].created_at, "order_id": "o01"}
    out.append(repo.update(Order, **key, add={"total": Decimal("5")}))  # UpdateItem, keywords
    out.append(repo.batch_get([orders[2], orders[3]]))  # BatchGetItem
    out.append(repo.delete(orders[4]))  # DeleteItem
    product = Product(product_id="p1", name="Pen", category="office", price=Decimal("1.5"), stock=3)
    out.append(repo.create(product))  # PutItem with a condition
    again = Product(product_id="p1", name="Pencil", category="office", price=Decimal(1), stock=1)
    out.append(_code(lambda: repo.create(again)))  # a failed condition
    out.append(repo.product(product_id="p1"))  # GetItem
    out.append(repo.product(product_id="nope"))  # GetItem, nothing found
    out.append(repo.backfill(Order, dry_run=True).scanned)  # Scan
    if backend.supports("transactions"):
        ann = Customer(customer_id="k1", name="Ann", email="ann@example.com")
        out.append(repo.create(ann))  # TransactWriteItems (a Unique guard)
        twin = Customer(customer_id="k2", name="Ann", email="ann@example.com")
        out.append(_code(lambda: repo.create(twin)))  # a cancelled transaction
        out.append(repo.transact_get([ann, product]))  # TransactGetItems
    return out


def _run_both(
    backend: Backend,
    client: Any,
    twin: str,
    clock: Clock,
    upstream: str,
    table: str,
    tls: Path | None = None,
) -> tuple[dict[str, list[Any]], dict[str, list[Recorded]]]:
    """The scenario on each transport, on a new table each time, through one proxy (HTTPS
    with a certificate made in ``tls``)."""
    results: dict[str, list[Any]] = {}
    sent: dict[str, list[Recorded]] = {}
    with WireProxy(upstream, tls=tls) as proxy:
        for transport in transports(twin):
            if table in client.list_tables()["TableNames"]:
                client.delete_table(TableName=table)
                # dynalite deletes in the background and refuses a CreateTable until it is gone
                waiter: Any = {"Delay": POLL_DELAY, "MaxAttempts": 1500}
                client.get_waiter("table_not_exists").wait(TableName=table, WaiterConfig=waiter)
            create_table(backend, client, shop, table)
            clock.now = NOW
            proxy.clear()
            with ExitStack() as stack:
                repo = open_repo(stack, twin, transport, proxy.url, table, clock)
                results[transport] = scenario(repo, backend)
            sent[transport] = list(proxy.requests)
    return results, sent


def _assert_same_wire(sent: dict[str, list[Recorded]]) -> None:
    """Each transport sent what botocore's pipeline sent, request for request."""
    for name in [name for name in sent if name != "botocore"]:
        assert [r.target for r in sent[name]] == [r.target for r in sent["botocore"]], name
        for botocore_request, request in zip(sent["botocore"], sent[name], strict=True):
            actual, expected = comparable(request), comparable(botocore_request)
            assert set(actual["headers"].items()) ^ set(expected["headers"].items()) == set()
            assert actual == expected, name
            assert raw_body_equal(request, botocore_request), name


def _assert_same_results(results: dict[str, list[Any]]) -> None:
    for name in [name for name in results if name != "botocore"]:
        assert results[name] == results["botocore"], name


def test_every_operation_is_the_same_on_the_wire_and_in_results(
    backend: Backend, client: Any, twin: str, clock: Clock, table_name: str
) -> None:
    assert backend.endpoint_url is not None
    results, proxies = _run_both(backend, client, twin, clock, backend.endpoint_url, table_name)
    _assert_same_wire(proxies)
    _assert_same_results(results)
    assert set(results) == set(transports(twin))
    targets = {r.target for r in proxies["direct"]}
    expected = {"PutItem", "BatchWriteItem", "Query", "UpdateItem", "BatchGetItem", "DeleteItem"}
    expected |= {"GetItem", "Scan"}
    if backend.supports("transactions"):
        expected |= {"TransactWriteItems", "TransactGetItems"}
    assert targets == expected


@pytest.mark.backend("moto_server")
def test_over_tls_every_operation_is_the_same_on_the_wire_and_in_results(
    backend: Backend,
    client: Any,
    twin: str,
    clock: Clock,
    table_name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DynamoDB speaks HTTPS: the hand-written exchange of the sync twin reads and writes a
    TLS socket as urllib3 does (the clients trust the proxy's certificate as a user's would,
    through AWS_CA_BUNDLE)."""
    assert backend.endpoint_url is not None
    monkeypatch.setenv("AWS_CA_BUNDLE", str(tmp_path / "proxy-cert.pem"))  # made by the proxy
    results, proxies = _run_both(
        backend, client, twin, clock, backend.endpoint_url, table_name, tls=tmp_path
    )
    _assert_same_wire(proxies)
    _assert_same_results(results)
    assert len(proxies["direct"]) == len(proxies["botocore"]) > 10


@pytest.mark.twin("async")
@pytest.mark.backend("moto_server")
def test_the_async_transport_writes_on_the_session_s_connector(
    backend: Backend, client: Any, twin: str, clock: Clock, table_name: str
) -> None:
    """aiobotocore's session adds nothing to a request, so the async twin writes and reads on
    a connection of its connector (``_direct_aiohttp.Exchange``) rather than through
    ``ClientSession.request``; the suites above compare what it sends and reads."""
    assert backend.endpoint_url is not None
    create_table(backend, client, shop, table_name)
    with ExitStack() as stack:
        repo = open_repo(stack, twin, "direct", backend.endpoint_url, table_name, clock)
        assert repo.product(product_id="p1") is None
        transport = _direct_install.transport_for(repo.async_repository.client)
        exchanges = list(transport._sessions._exchanges.values())
        assert len(exchanges) == 1 and isinstance(exchanges[0], Exchange)


def _replay_module() -> Any:
    spec = importlib.util.spec_from_file_location("replay_server", ROOT / "bench/replay_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def replay(backend: Backend) -> Iterator[tuple[str, Any]]:
    """bench/replay_server.py in a thread, recording from ``backend`` (moto's server)."""
    module = _replay_module()
    store = module.ReplayStore(backend.endpoint_url)
    server = module.ReplayHTTPServer(("127.0.0.1", 0), module.make_handler(store))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", store
    server.shutdown()
    server.server_close()


@pytest.mark.backend("moto_server")
def test_replay_endpoint_answers_the_direct_transport_from_botocore_s_recordings(
    backend: Backend,
    client: Any,
    twin: str,
    clock: Clock,
    table_name: str,
    replay: tuple[str, Any],
) -> None:
    """The replay server keys recordings by target and body bytes: every direct request
    without a generated token is a replay of the request botocore sent."""
    url, store = replay
    results, proxies = _run_both(backend, client, twin, clock, url, table_name)
    _assert_same_wire(proxies)
    _assert_same_results(results)
    replayers = [r for name in proxies if name != "botocore" for r in proxies[name]]
    tokens = sum(b"ClientRequestToken" in r.body for r in replayers)
    stats = store.stats()
    assert stats["replayed"] == len(replayers) - tokens
    assert stats["recorded"] == len(proxies["botocore"]) + tokens
