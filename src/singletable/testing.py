"""Helpers for testing code that uses singletable, without AWS.

``local_table`` runs moto in-process for the duration of a ``with`` block::

    from singletable.testing import local_table

    def test_place_order():
        with local_table(shop) as client:
            repo = Shop(client=client)
            ...

``local_endpoint`` runs moto's server on 127.0.0.1 instead, for clients that moto's in-process
mock cannot serve (the async twin's aiobotocore client) and for other processes::

    with local_endpoint() as url, local_table(shop, endpoint=url):
        async with AsyncShop.connect(endpoint_url=url, region_name="us-east-1") as repo:
            ...

This module is also a **pytest plugin**, registered through the ``pytest11`` entry point, so
any test suite in an environment where singletable is installed gets its fixtures without a
conftest.py (``repository_factory`` and ``endpoint_repository_factory`` too: see
:class:`RepositoryFactory`)::

    def test_place_order(dynamodb_client):          # in-process moto, fresh for each test
        shop.create(dynamodb_client)
        repo = Shop(client=dynamodb_client)
        ...

    def test_async_service(dynamodb_endpoint):      # a moto server on 127.0.0.1, reset per test
        ...  # AsyncShop.connect(endpoint_url=dynamodb_endpoint, region_name="us-east-1")

The plugin imports neither moto nor boto3 until a test asks for one of its fixtures.

Inside each of these blocks (and tests using the fixtures), a client made with no AWS
configuration works against the local backend: where the environment sets none, the block sets
dummy credentials, a region (the table's) and ``AWS_ACCOUNT_ID_ENDPOINT_MODE=disabled``, which
keeps botocore 1.44+ sending DynamoDB Streams calls to the endpoint moto serves (not to an
account-based host); what was set before the block is left as it was, and restored after.

moto is an optional dependency: ``pip install "singletable[demo]"`` or
``pip install moto[dynamodb,server]``.
"""

from __future__ import annotations

import http.client
import logging
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import boto3
    from mypy_boto3_dynamodb import DynamoDBClient

    from ._repository import Repository
    from ._table import Table

    R = TypeVar("R", bound=Repository)

__all__ = ["RepositoryFactory", "local_endpoint", "local_table", "reset_endpoint", "seed_table"]

_session: boto3.session.Session | None = None

MOTO_MISSING = (
    "local_table() needs moto, which is not installed: "
    'install it with `pip install "singletable[demo]"` or `pip install moto[dynamodb]`'
)


DUMMY_KEY = "testing"  # dummy credentials: local servers accept any
DEFAULT_REGION = "us-east-1"


@contextmanager
def _local_environment(region: str = DEFAULT_REGION) -> Iterator[None]:
    """What a client made with no AWS configuration needs to work against a local backend,
    set in the environment for the block where it sets nothing itself: dummy credentials,
    ``region``, and the classic (not account-based) endpoints, which moto routes."""
    wanted = {"AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled"}
    if not os.environ.get("AWS_ACCESS_KEY_ID"):
        wanted["AWS_ACCESS_KEY_ID"] = wanted["AWS_SECRET_ACCESS_KEY"] = DUMMY_KEY
    wanted["AWS_DEFAULT_REGION"] = region  # (the variable botocore reads)
    added = {name: value for name, value in wanted.items() if not os.environ.get(name)}
    before = {name: os.environ.get(name) for name in added}
    os.environ.update(added)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def local_endpoint() -> Iterator[str]:
    """Run moto's DynamoDB server on 127.0.0.1 (a free port) for the ``with`` block and yield
    its URL (``http://127.0.0.1:PORT``). Point any client at it with ``endpoint_url=url``, e.g.
    ``AsyncShop.connect(endpoint_url=url)``, or create tables there with
    ``local_table(table, endpoint=url)``. Within the block a client needs no AWS configuration
    (see the module docstring), and the server's request log stays quiet.

    Raises ``RuntimeError`` when moto (with its server extra) is not installed.
    """
    with _moto_server() as url, _local_environment():
        yield url


@contextmanager
def _moto_server() -> Iterator[str]:
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise RuntimeError(MOTO_MISSING) from None
    # werkzeug logs every request at INFO, on stderr when logging is not configured
    request_log = logging.getLogger("werkzeug")
    level = request_log.level
    if level < logging.WARNING:  # (left unset, werkzeug sets INFO itself)
        request_log.setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        request_log.setLevel(level)


@contextmanager
def local_table(
    table: Table,
    *,
    table_name: str | None = None,
    region: str = "us-east-1",
    endpoint: str | None = None,
) -> Iterator[DynamoDBClient]:
    """Create ``table`` in an in-process moto DynamoDB and yield a boto3 client for it.

    With ``endpoint=`` (a URL from :func:`local_endpoint`), the table is created on that
    server instead, and deleted when the block exits.

    The table is created with ``table.create(client, table_name=table_name)`` (indexes, wait
    until ACTIVE, TTL enabled when the table has a ``ttl_attribute``). Everything moto stored
    is discarded when the block exits. The client uses dummy credentials and ignores any
    ``AWS_ENDPOINT_URL*`` setting, so it can never reach a real account.

    Example::

        with local_table(shop) as client:
            repo = Shop(client=client)
            repo.create(Customer(customer_id="c1", name="Ann", email="ann@example.com"))
            assert repo.customer(customer_id="c1") is not None

    Inside another active moto mock (``moto.mock_aws()`` already started), the block shares
    that mock's state instead of starting a fresh one, so use a distinct ``table_name`` there.

    Raises ``RuntimeError`` when moto is not installed.
    """
    if endpoint is not None:
        with _endpoint_table(table, table_name, region, endpoint) as remote:
            yield remote
        return
    with _moto_client(region) as client:
        table.create(client, table_name=table_name)
        yield client


@contextmanager
def _moto_client(region: str = DEFAULT_REGION) -> Iterator[DynamoDBClient]:
    """A boto3 client on an in-process moto started for the block (no tables)."""
    with _in_process(region) as session:
        from botocore.config import Config

        # an AWS_ENDPOINT_URL_DYNAMODB in the environment must not lead the client away from
        # moto (the option is missing from botocore-stubs, hence the dict)
        options: dict[str, Any] = {"ignore_configured_endpoint_urls": True}
        client: DynamoDBClient = session.client(
            "dynamodb",
            region_name=region,
            aws_access_key_id=DUMMY_KEY,
            aws_secret_access_key=DUMMY_KEY,
            config=Config(**options),
        )
        yield client


@contextmanager
def _in_process(region: str = DEFAULT_REGION) -> Iterator[boto3.session.Session]:
    """moto in this process for the block, with :func:`_local_environment`; yields a boto3
    session that carries moto's request interceptor."""
    try:
        import moto
    except ImportError:
        raise RuntimeError(MOTO_MISSING) from None
    import boto3

    global _session
    if _session is None:
        # created after moto is imported, so it carries moto's request interceptor; reused,
        # because the first client of a session costs ~50 ms and the next ones ~2 ms
        _session = boto3.session.Session()
    mock = moto.mock_aws()
    mock.start()
    try:
        with _local_environment(region):
            yield _session
    finally:
        mock.stop()


@contextmanager
def _endpoint_table(
    table: Table, table_name: str | None, region: str, endpoint: str
) -> Iterator[DynamoDBClient]:
    import boto3

    client: DynamoDBClient = boto3.session.Session().client(
        "dynamodb",
        region_name=region,
        endpoint_url=endpoint,
        aws_access_key_id=DUMMY_KEY,
        aws_secret_access_key=DUMMY_KEY,
    )
    table.create(client, table_name=table_name)
    try:
        yield client
    finally:
        client.delete_table(TableName=table_name or table.name)
        client.close()


class RepositoryFactory:
    """Repositories on fresh tables, optionally seeded: ``factory(Shop, [customer, order])``.

    ``client`` is the boto3 client of the backend the tables are created on (in-process moto
    for the ``repository_factory`` fixture, the moto server at ``endpoint`` for
    ``endpoint_repository_factory``; any client, e.g. a DynamoDB Local one, when built by
    hand). A table is created the first time a repository asks for it (``Table.create``: its
    indexes, TTL and settings) and shared by the repositories a test makes on it.
    """

    def __init__(self, client: DynamoDBClient, *, endpoint: str | None = None) -> None:
        self.client = client
        self.endpoint = endpoint
        self.created: list[str] = []

    def __call__(
        self,
        repository: type[R],
        seed: Iterable[Any] = (),
        *,
        table_name: str | None = None,
        **options: Any,
    ) -> R:
        """``repository`` on its table (created if needed) after writing ``seed``, a list of
        entities of that table; ``options`` go to the repository (``clock=``, ``hooks=``...).
        An async repository is refused: create its tables with :meth:`tables`, then connect
        it to :attr:`endpoint`."""
        if getattr(repository, "__singletable_async__", False):
            raise TypeError(
                f"{repository.__qualname__} is an async repository: call "
                f"factory.tables({repository.__qualname__}, seed) and connect it to "
                "factory.endpoint (the endpoint_repository_factory fixture)"
            )
        name = self.tables(repository, seed, table_name=table_name)
        return repository(client=self.client, table_name=name, **options)

    def tables(
        self, repository: Any, seed: Iterable[Any] = (), *, table_name: str | None = None
    ) -> str:
        """Create ``repository``'s table (a repository class of either twin, or a ``Table``)
        unless this factory made it already, write ``seed`` to it, and return its name."""
        from ._table import Table

        table = repository if isinstance(repository, Table) else repository.__singletable_table__
        name = table_name or table.name
        if name not in self.created:
            table.create(self.client, table_name=name, delay=0.05)
            self.created.append(name)
        seed_table(self.client, table, name, seed)
        return name


def seed_table(
    client: DynamoDBClient, table: Table, table_name: str, entities: Iterable[Any]
) -> None:
    """Write ``entities`` as the library does: ``create`` for entities with ``Unique()`` or
    ``Version()`` fields (their guard items and versions are written too), one
    ``batch_put`` for the rest."""
    from ._entity import spec_of
    from ._repository import Repository
    from .errors import InvalidRequestError

    seeder: Any = type("Seed", (Repository,), {}, table=table)(client=client, table_name=table_name)
    plain = []
    for entity in entities:
        spec = spec_of(type(entity))
        if spec.table is not table:
            raise InvalidRequestError(
                f"seed entity {spec.name} belongs to table {spec.table.name!r}, not {table.name!r}"
            )
        if spec.unique_fields or spec.version_field:
            seeder.create(entity)
        else:
            plain.append(entity)
    if plain:
        seeder.batch_put(plain)


def reset_endpoint(url: str) -> None:
    """Forget every table (all of moto's state) on the moto server at ``url``."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        conn.request("POST", "/moto-api/reset")
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"resetting the moto server at {url} failed: HTTP {response.status}")
    finally:
        conn.close()


# -- the pytest plugin (entry point pytest11: singletable = "singletable.testing") -----------------

try:
    import pytest
except ImportError:  # local_table and local_endpoint need no pytest
    pass
else:

    @pytest.fixture
    def dynamodb_client() -> Iterator[DynamoDBClient]:
        """A boto3 DynamoDB client on an in-process moto that starts empty for each test
        (us-east-1, dummy credentials, ``AWS_ENDPOINT_URL*`` ignored). Create your tables with
        ``table.create(dynamodb_client)``. Skips the test when moto is not installed."""
        try:
            with _moto_client() as client:
                yield client
        except RuntimeError as exc:
            if str(exc) != MOTO_MISSING:
                raise
            pytest.skip(MOTO_MISSING)

    @pytest.fixture(scope="session")
    def singletable_moto_server() -> Iterator[str]:
        """The URL of one moto server on 127.0.0.1 for the whole test session (see
        ``dynamodb_endpoint``, which resets it for each test)."""
        try:
            with _moto_server() as url:
                yield url
        except RuntimeError as exc:
            if str(exc) != MOTO_MISSING:
                raise
            pytest.skip(MOTO_MISSING)

    @pytest.fixture
    def repository_factory(dynamodb_client: DynamoDBClient) -> RepositoryFactory:
        """``repository_factory(Shop, [entities...])``: ``Shop`` on its table, created in an
        in-process moto that starts empty for each test, after writing the entities (see
        :class:`RepositoryFactory`). ``repository_factory.client`` is the boto3 client."""
        return RepositoryFactory(dynamodb_client)

    @pytest.fixture
    def endpoint_repository_factory(dynamodb_endpoint: str) -> Iterator[RepositoryFactory]:
        """The same on the session's moto server (``dynamodb_endpoint``, reset for each test):
        for async repositories (``factory.tables(AsyncShop, seed)``, then
        ``AsyncShop.connect(endpoint_url=factory.endpoint, region_name="us-east-1")``) and
        other processes."""
        import boto3

        client: DynamoDBClient = boto3.session.Session().client(
            "dynamodb",
            region_name="us-east-1",
            endpoint_url=dynamodb_endpoint,
            aws_access_key_id=DUMMY_KEY,
            aws_secret_access_key=DUMMY_KEY,
        )
        try:
            yield RepositoryFactory(client, endpoint=dynamodb_endpoint)
        finally:
            client.close()

    @pytest.fixture
    def dynamodb_endpoint(singletable_moto_server: str) -> Iterator[str]:
        """The URL (``http://127.0.0.1:PORT``) of a moto server with no tables: one server
        per session, reset before each test. For clients that in-process moto cannot serve
        (the async twin's aiobotocore) and for other processes; any region and dummy
        credentials work, and during the test a client needs no AWS configuration at all
        (the module docstring says what is set). Tables:
        ``local_table(table, endpoint=dynamodb_endpoint)`` or ``table.create(client)``."""
        reset_endpoint(singletable_moto_server)
        with _local_environment():
            yield singletable_moto_server
