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

moto is an optional dependency: ``pip install "singletable[demo]"`` or
``pip install moto[dynamodb]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import boto3
    from mypy_boto3_dynamodb import DynamoDBClient

    from .table import Table

__all__ = ["local_endpoint", "local_table"]

_session: boto3.session.Session | None = None

MOTO_MISSING = (
    "local_table() needs moto, which is not installed: "
    'install it with `pip install "singletable[demo]"` or `pip install moto[dynamodb]`'
)


DUMMY_KEY = "testing"  # dummy credentials: local servers accept any


@contextmanager
def local_endpoint() -> Iterator[str]:
    """Run moto's DynamoDB server on 127.0.0.1 (a free port) for the ``with`` block and yield
    its URL (``http://127.0.0.1:PORT``). Point any client at it with dummy credentials:
    ``endpoint_url=url``, e.g. ``AsyncShop.connect(endpoint_url=url, region_name=...)``, or
    create tables there with ``local_table(table, endpoint=url)``.

    Raises ``RuntimeError`` when moto (with its server extra) is not installed.
    """
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise RuntimeError(MOTO_MISSING) from None
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


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
    try:
        import moto
    except ImportError:
        raise RuntimeError(MOTO_MISSING) from None
    import boto3
    from botocore.config import Config

    global _session
    if _session is None:
        # created after moto is imported, so it carries moto's request interceptor; reused,
        # because the first client of a session costs ~50 ms and the next ones ~2 ms
        _session = boto3.session.Session()
    mock = moto.mock_aws()
    mock.start()
    try:
        # an AWS_ENDPOINT_URL_DYNAMODB in the environment must not lead the client away from
        # moto (the option is missing from botocore-stubs, hence the dict)
        options: dict[str, Any] = {"ignore_configured_endpoint_urls": True}
        client: DynamoDBClient = _session.client(
            "dynamodb",
            region_name=region,
            aws_access_key_id=DUMMY_KEY,
            aws_secret_access_key=DUMMY_KEY,
            config=Config(**options),
        )
        table.create(client, table_name=table_name)
        yield client
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
