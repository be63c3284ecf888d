"""DynamoDB backends for the test suite: moto in-process, moto server, dynalite, a real endpoint.

``Backend`` describes one backend (name, endpoint URL, supported features) and builds boto3
low-level clients for it. ``MotoServer`` and ``DynaliteServer`` own the session-scoped server
processes/threads; ``wipe_tables`` empties a backend that has no reset API (dynalite, endpoint).

Facts behind the feature flags: /work/shared/research/backends.md (moto 5.2, dynalite 4.0.0).
"""

from __future__ import annotations

import atexit
import contextlib
import http.client
import logging
import os
import queue
import shutil
import socket
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import boto3
    from mypy_boto3_dynamodb import DynamoDBClient

BackendName = Literal["inproc", "moto_server", "dynalite", "endpoint"]
BACKEND_NAMES: tuple[BackendName, ...] = ("inproc", "moto_server", "dynalite", "endpoint")

# -- features ---------------------------------------------------------------------------------

TRANSACTIONS = "transactions"  # TransactWriteItems / TransactGetItems
TTL_API = "ttl_api"  # UpdateTimeToLive (DescribeTimeToLive exists everywhere)
RETURN_VALUES_ON_CCF = "return_values_on_condition_check_failure"  # Item on CCF errors
STREAMS = "streams"  # StreamSpecification + the dynamodbstreams API
UNPROCESSED_KEYS_AT_16MB = "unprocessed_keys_at_16mb"  # BatchGetItem response cap is 16 MB
# GSIs keyed on several attributes (up to 4 + 4, DynamoDB since November 2025; moto 5.2.5)
MULTI_ATTRIBUTE_KEYS = "multi_attribute_keys"
CONTINUOUS_BACKUPS = "continuous_backups"  # UpdateContinuousBackups (point-in-time recovery)

ALL_FEATURES: frozenset[str] = frozenset(
    {
        TRANSACTIONS,
        TTL_API,
        RETURN_VALUES_ON_CCF,
        STREAMS,
        UNPROCESSED_KEYS_AT_16MB,
        MULTI_ATTRIBUTE_KEYS,
        CONTINUOUS_BACKUPS,
    }
)

_MISSING: dict[str, frozenset[str]] = {
    "inproc": frozenset(),
    "moto_server": frozenset(),
    # dynalite 4.0.0: UnknownOperationException for Transact*/UpdateTimeToLive/
    # UpdateContinuousBackups, ignores
    # StreamSpecification, never returns Item on ConditionalCheckFailed, caps BatchGetItem
    # responses at ~1.4 MB (1 MB + max item size) instead of 16 MB, and refuses a key schema
    # with more than one HASH or RANGE attribute.
    "dynalite": frozenset(
        {
            TRANSACTIONS,
            TTL_API,
            RETURN_VALUES_ON_CCF,
            STREAMS,
            UNPROCESSED_KEYS_AT_16MB,
            MULTI_ATTRIBUTE_KEYS,
            CONTINUOUS_BACKUPS,
        }
    ),
    "endpoint": frozenset(),
}

# What a backend lacks, in words: docs/testing.md's table is generated from these, the feature
# flags above and divergences.KNOWN_DIVERGENCES (tests/project/test_testing_docs.py checks it).
FEATURE_GAPS: dict[str, str] = {
    TRANSACTIONS: "no transactions (TransactWriteItems, TransactGetItems)",
    TTL_API: "no UpdateTimeToLive",
    RETURN_VALUES_ON_CCF: (
        "no ReturnValuesOnConditionCheckFailure (a failed write does not return the item)"
    ),
    STREAMS: "no Streams",
    UNPROCESSED_KEYS_AT_16MB: "BatchGetItem answers end at about 1.4 MB, not 16 MB",
    MULTI_ATTRIBUTE_KEYS: "no multi-attribute index keys (a GSI keyed on 2-4 + 0-4 attributes)",
    CONTINUOUS_BACKUPS: "no UpdateContinuousBackups (point-in-time recovery)",
}
OTHER_GAPS: dict[str, tuple[str, ...]] = {
    "inproc": (
        # a TransactGetItems on one thread saw half of a TransactWriteItems on another
        "transactions are not atomic under threads",
        "no aiohttp: aiobotocore clients (the async twin) need a server",
    ),
    "moto_server": (),
    # keys over 2,048 (partition) / 1,024 (sort) bytes are stored
    # (tests/backend/test_hostile_input.py)
    "dynalite": ("no key-size limits",),
    "endpoint": (),
}

ENDPOINT_ENV = "AWS_ENDPOINT_URL_DYNAMODB"
# Comma-separated feature list for the "endpoint" backend (e.g. for DynamoDB Local);
# unset = every feature (real DynamoDB).
ENDPOINT_FEATURES_ENV = "SINGLETABLE_ENDPOINT_FEATURES"

DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
DEFAULT_REGION = "us-east-1"


def features_for(name: str) -> frozenset[str]:
    """The features backend ``name`` supports."""
    if name == "endpoint":
        listed = os.environ.get(ENDPOINT_FEATURES_ENV)
        if listed is not None:
            wanted = {f.strip() for f in listed.split(",") if f.strip()}
            unknown = wanted - ALL_FEATURES
            if unknown:
                raise ValueError(
                    f"{ENDPOINT_FEATURES_ENV}: unknown feature(s) {sorted(unknown)}; "
                    f"known: {sorted(ALL_FEATURES)}"
                )
            return frozenset(wanted)
    return ALL_FEATURES - _MISSING[name]


# -- boto3 sessions -----------------------------------------------------------------------------

_sessions: dict[str, boto3.session.Session] = {}
_session_lock = threading.Lock()


def _session(kind: Literal["local", "endpoint"]) -> boto3.session.Session:
    """One boto3 session per kind, so building a client costs ~2 ms instead of ~50 ms.

    moto registers its request interceptor in botocore's BUILTIN_HANDLERS when it is imported,
    and a botocore session copies those handlers when it is created: import moto first.
    """
    with _session_lock:
        session = _sessions.get(kind)
        if session is None:
            if kind == "local":
                with contextlib.suppress(ImportError):
                    import moto.core.models  # noqa: F401
            import boto3

            session = boto3.session.Session()
            _sessions[kind] = session
        return session


# -- the Backend --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backend:
    """One DynamoDB backend a test runs against.

    ``table_prefix`` is empty for the local backends (each test starts with no tables) and a
    unique ``st<hex>-`` per test for ``endpoint`` (a shared, real account): build table names
    with :meth:`table_name`.
    """

    name: BackendName
    endpoint_url: str | None = None
    features: frozenset[str] = ALL_FEATURES
    table_prefix: str = ""
    created_tables: list[str] = field(default_factory=list, compare=False, repr=False)

    def supports(self, *features: str) -> bool:
        return not self.missing(*features)

    def missing(self, *features: str) -> list[str]:
        """The requested features this backend lacks (unknown names raise ValueError)."""
        unknown = [f for f in features if f not in ALL_FEATURES]
        if unknown:
            raise ValueError(f"unknown backend feature(s) {unknown}; known: {sorted(ALL_FEATURES)}")
        return [f for f in features if f not in self.features]

    def table_name(self, base: str = "test-table") -> str:
        """A table name that is safe on this backend (unique per test on ``endpoint``)."""
        return f"{self.table_prefix}{base}"

    @property
    def is_http(self) -> bool:
        return self.name != "inproc"

    def client(self, **config: Any) -> DynamoDBClient:
        """A NEW boto3 low-level DynamoDB client for this backend.

        ``config`` are ``botocore.config.Config`` options that override the defaults: region
        us-east-1, dummy credentials (except ``endpoint``), 2 attempts in ``standard`` retry mode
        and 5 s timeouts, so a moto-server crash (HTTP 500) costs at most one quick retry.
        """
        client: DynamoDBClient = self._client("dynamodb", config)
        self._track_created_tables(client)
        return client

    def streams_client(self) -> Any:
        """A NEW boto3 ``dynamodbstreams`` client for this backend (moto serves the Streams
        API in process and on its server; dynalite has none). On the local backends it uses
        the classic Streams endpoint: botocore 1.44+ otherwise sends calls naming a stream ARN
        to an account-based host, which moto does not route."""
        if self.name == "endpoint":
            return self._client("dynamodbstreams", {})
        return self._client("dynamodbstreams", {"account_id_endpoint_mode": "disabled"})

    def _client(self, service: str, config: dict[str, Any]) -> Any:
        from botocore.config import Config

        if self.name == "endpoint":
            defaults = Config(
                retries={"total_max_attempts": 3, "mode": "standard"},
                connect_timeout=5,
                read_timeout=30,
            )
            region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
            return _session("endpoint").client(
                service,  # type: ignore[call-overload]
                region_name=region or DEFAULT_REGION,
                endpoint_url=self.endpoint_url,
                config=defaults.merge(Config(**config)),
            )
        options: dict[str, Any] = {
            "retries": {"total_max_attempts": 2, "mode": "standard"},
            "connect_timeout": 5,
            "read_timeout": 5,
            # an AWS_ENDPOINT_URL_DYNAMODB in the environment must not redirect the
            # in-process client away from moto (not in botocore-stubs, hence the dict)
            "ignore_configured_endpoint_urls": True,
        }
        return _session("local").client(
            service,  # type: ignore[call-overload]
            region_name=DEFAULT_REGION,
            endpoint_url=self.endpoint_url,
            aws_access_key_id=DUMMY_CREDENTIALS["aws_access_key_id"],
            aws_secret_access_key=DUMMY_CREDENTIALS["aws_secret_access_key"],
            config=Config(**options).merge(Config(**config)),
        )

    def _track_created_tables(self, client: DynamoDBClient) -> None:
        created = self.created_tables

        def after_create(parsed: dict[str, Any], **_: Any) -> None:
            name = parsed.get("TableDescription", {}).get("TableName")
            if name and name not in created:
                created.append(name)

        client.meta.events.register("after-call.dynamodb.CreateTable", after_create)


def make_backend(name: BackendName, endpoint_url: str | None = None) -> Backend:
    prefix = f"st{uuid.uuid4().hex[:10]}-" if name == "endpoint" else ""
    return Backend(name, endpoint_url, features_for(name), prefix)


# -- emptying a backend -------------------------------------------------------------------------


def wipe_tables(
    client: DynamoDBClient, names: list[str] | None = None, *, timeout: float = 60.0
) -> None:
    """Delete ``names`` (default: every table) and wait until they are gone."""
    if names is None:
        names = []
        for page in client.get_paginator("list_tables").paginate():
            names.extend(page.get("TableNames", []))
    deadline = time.monotonic() + timeout
    pending = list(names)
    while pending:
        for name in list(pending):
            try:
                status = client.describe_table(TableName=name)["Table"].get("TableStatus")
            except client.exceptions.ResourceNotFoundException:
                pending.remove(name)
                continue
            if status in ("ACTIVE", "UPDATING") or status is None:
                # CREATING/UPDATING tables refuse DeleteTable; retry on the next round
                with contextlib.suppress(
                    client.exceptions.ResourceInUseException,
                    client.exceptions.ResourceNotFoundException,
                ):
                    client.delete_table(TableName=name)
        if not pending:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"tables {pending} still exist after {timeout:.0f} s")
        time.sleep(0.005)


# -- moto server (in a thread of this process) --------------------------------------------------


class MotoServer:
    """A ``ThreadedMotoServer`` on 127.0.0.1 and a free port, reset over HTTP per test.

    It shares moto's global state with ``mock_aws()`` in this process; tests run one at a time
    per process (xdist workers are processes), and every test resets that state first.
    """

    def __init__(self) -> None:
        self._server: Any = None
        self.endpoint_url = ""
        self.host = "127.0.0.1"
        self.port = 0

    def start(self) -> str:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        self.host, self.port = self._server.get_host_and_port()
        self.endpoint_url = f"http://{self.host}:{self.port}"
        return self.endpoint_url

    def reset(self) -> None:
        """Wipe every moto backend (about 1 ms)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request("POST", "/moto-api/reset")
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"moto server reset failed: HTTP {response.status}")
        finally:
            conn.close()

    def stop(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            server.stop()


# -- dynalite (a node process) ------------------------------------------------------------------

FIXTURES_DIR = Path(__file__).resolve().parent
DYNALITE_CLI = FIXTURES_DIR / "node_modules" / "dynalite" / "cli.js"
DYNALITE_MISSING_HINT = "run `npm ci --prefix moto_fixtures`"


def dynalite_unavailable() -> str | None:
    """Why dynalite cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "dynalite needs Node.js: `node` is not on PATH"
    if not DYNALITE_CLI.is_file():
        return f"moto_fixtures/node_modules/dynalite is missing: {DYNALITE_MISSING_HINT}"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DynaliteServer:
    """``node moto_fixtures/node_modules/dynalite/cli.js`` on 127.0.0.1, stopped by PID."""

    def __init__(self, *, startup_timeout: float = 20.0) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.endpoint_url = ""
        self.output: list[str] = []
        self._startup_timeout = startup_timeout

    def start(self) -> str:
        reason = dynalite_unavailable()
        if reason:
            raise RuntimeError(reason)
        node = shutil.which("node")
        assert node is not None
        last_output = ""
        # dynalite treats --port 0 as "default 4567", so pick a free port; another process can
        # grab it before node binds it (parallel xdist workers), hence the retries.
        for _ in range(5):
            port = _free_port()
            proc = subprocess.Popen(
                [
                    node,
                    str(DYNALITE_CLI),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--createTableMs",
                    "0",
                    "--deleteTableMs",
                    "0",
                    "--updateTableMs",
                    "0",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=FIXTURES_DIR,
            )
            lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=self._drain, args=(proc, lines), daemon=True).start()
            if self._wait_ready(proc, lines):
                self.proc = proc
                self.endpoint_url = f"http://127.0.0.1:{port}"
                atexit.register(self.stop)
                return self.endpoint_url
            self._kill(proc)
            last_output = "".join(self.output[-20:])
            self.output.clear()
            if "EADDRINUSE" not in last_output:
                break
        raise RuntimeError(f"dynalite did not start:\n{last_output}")

    def _drain(self, proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.output.append(line)
            del self.output[:-200]
            lines.put(line)
        lines.put(None)

    def _wait_ready(self, proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> bool:
        deadline = time.monotonic() + self._startup_timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                return False
            if line is None:  # the process exited
                return False
            if "listening at" in line.lower():
                return True
        return False

    @staticmethod
    def _kill(proc: subprocess.Popen[str]) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)

    def stop(self) -> None:
        if self.proc is not None:
            proc, self.proc = self.proc, None
            self._kill(proc)
            with contextlib.suppress(ValueError):
                atexit.unregister(self.stop)
