"""pytest plugin: run tests against every local DynamoDB backend.

Loaded by ``addopts = "-p moto_fixtures.plugin"``. A test that uses the ``backend`` fixture
(directly, or through ``client``/``recorder``/``table_name``) runs once per available backend,
with ids like ``test_x[inproc]``:

* ``inproc`` -- moto in this process (``moto.mock_aws()`` around each test), always;
* ``moto_server`` -- one ``ThreadedMotoServer`` per session (per xdist worker), reset per test;
* ``dynalite`` -- one ``node .../dynalite/cli.js`` per session, all tables deleted per test;
  skipped when node or ``moto_fixtures/node_modules`` is missing
  (install it with ``npm ci --prefix moto_fixtures``);
* ``endpoint`` -- ``$AWS_ENDPOINT_URL_DYNAMODB`` (only when set); tables get a unique prefix per
  test (use the ``table_name`` fixture or ``backend.table_name(...)``) and are deleted after it.

Markers:

* ``@pytest.mark.backend("inproc", "dynalite")`` -- run only on these backends;
* ``@pytest.mark.requires("transactions")`` -- skip on backends without the feature
  (reason ``"dynalite does not support transactions"``).

``--backends=inproc,moto_server`` (or env ``SINGLETABLE_BACKENDS``) limits the whole run.
Known backend bugs are data: ``moto_fixtures/divergences.py``.
"""

from __future__ import annotations

import gc
import importlib.util
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .backends import (
    ALL_FEATURES,
    BACKEND_NAMES,
    ENDPOINT_ENV,
    Backend,
    BackendName,
    DynaliteServer,
    MotoServer,
    dynalite_unavailable,
    features_for,
    make_backend,
    wipe_tables,
)
from .divergences import KNOWN_DIVERGENCES
from .idempotency import honour_client_request_tokens
from .recorder import RequestRecorder, record
from .tables import Clock
from .twins import TWINS, AsyncClients, EventTee, async_unavailable

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["Backend", "RequestRecorder", "record"]

BACKENDS_ENV = "SINGLETABLE_BACKENDS"


# -- configuration ------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("singletable", "singletable DynamoDB backends")
    group.addoption(
        "--backends",
        default=None,
        help=(
            "comma-separated backends to run backend tests on "
            f"(default: all available; env {BACKENDS_ENV}); known: {', '.join(BACKEND_NAMES)}"
        ),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backend(*names): runs against DynamoDB backends (inproc, moto_server, dynalite, "
        "endpoint); with names, only on those",
    )
    config.addinivalue_line(
        "markers",
        "twin(*names): run only on these repository twins (sync, async); tests that build "
        "repositories with make_repo run on both",
    )
    config.addinivalue_line(
        "markers",
        "requires(*features): skip on backends that lack a feature "
        f"({', '.join(sorted(ALL_FEATURES))})",
    )


def _selected(config: pytest.Config) -> list[str]:
    raw = config.getoption("--backends") or os.environ.get(BACKENDS_ENV) or ""
    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in BACKEND_NAMES]
    if unknown:
        raise pytest.UsageError(f"--backends: unknown backend(s) {unknown}; known: {BACKEND_NAMES}")
    return names


def _unavailable(name: str) -> str | None:
    if name in ("inproc", "moto_server") and importlib.util.find_spec("moto") is None:
        return 'moto is not installed: pip install -e ".[dev]"'
    if name == "dynalite":
        return dynalite_unavailable()
    return None


def available_backends(config: pytest.Config) -> list[str]:
    names = ["inproc", "moto_server", "dynalite"]
    if os.environ.get(ENDPOINT_ENV):
        names.append("endpoint")
    selected = _selected(config)
    if selected:
        names = [n for n in names if n in selected]
    return names


def pytest_report_header(config: pytest.Config) -> str:
    parts = []
    for name in available_backends(config):
        reason = _unavailable(name)
        parts.append(f"{name} (skipped: {reason})" if reason else name)
    return "dynamodb backends: " + ", ".join(parts)


#: Backends the async twin cannot run on: moto's in-process mock does not serve aiohttp (see
#: twins.py).
ASYNC_UNSERVED = frozenset({"inproc"})

#: Each backend once, for a test that runs on both twins without naming them: the async twin
#: skips dynalite and the sync twin the moto server. The twins share every flow, so the sync
#: twin meets moto's answers in process and the HTTP path on dynalite, and the async twin
#: meets both on the moto server; running every backend on both twins doubled CI's time without
#: covering more. A test that names its twins (``@pytest.mark.twin("sync", "async")``, e.g. one
#: about what a backend answers) runs on every pair.
ONCE_PER_BACKEND = frozenset({("async", "dynalite"), ("sync", "moto_server")})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",")]
        if "backend" in argnames:
            return  # the test parametrizes backend itself
    names = available_backends(metafunc.config)
    only = metafunc.definition.get_closest_marker("backend")
    if only is not None and only.args:
        unknown = [n for n in only.args if n not in BACKEND_NAMES]
        if unknown:
            raise pytest.UsageError(
                f"{metafunc.definition.nodeid}: @pytest.mark.backend{only.args}: "
                f"unknown backend(s) {unknown}; known: {BACKEND_NAMES}"
            )
        names = [n for n in names if n in only.args]
    if "twin" not in metafunc.fixturenames:
        params = []
        for name in names:
            reason = _unavailable(name)
            marks = [pytest.mark.skip(reason=reason)] if reason else []
            params.append(pytest.param(name, id=name, marks=marks))
        metafunc.parametrize("backend", params, indirect=True)
        return
    twins = list(TWINS)
    chosen = metafunc.definition.get_closest_marker("twin")
    if chosen is not None and chosen.args:
        unknown = [t for t in chosen.args if t not in TWINS]
        if unknown:
            raise pytest.UsageError(
                f"{metafunc.definition.nodeid}: @pytest.mark.twin{chosen.args}: unknown "
                f"twin(s) {unknown}; known: {TWINS}"
            )
        twins = [t for t in twins if t in chosen.args]
    # each backend once (see ONCE_PER_BACKEND), while every backend keeps a twin
    once = (
        not (chosen is not None and chosen.args)
        and {"inproc", "moto_server", "dynalite"} <= set(names)
        and not _unavailable("dynalite")
    )
    pairs = []
    for name in names:
        for twin in twins:
            if twin == "async" and name in ASYNC_UNSERVED:
                continue  # see ASYNC_UNSERVED
            if once and (twin, name) in ONCE_PER_BACKEND:
                continue  # see ONCE_PER_BACKEND
            reason = _unavailable(name) or (async_unavailable() if twin == "async" else None)
            marks = [pytest.mark.skip(reason=reason)] if reason else []
            pairs.append(pytest.param(name, twin, id=f"{name}-{twin}", marks=marks))
    metafunc.parametrize(("backend", "twin"), pairs, indirect=True)


def _required_features(item: pytest.Item) -> list[str]:
    features: list[str] = []
    for mark in item.iter_markers("requires"):
        for feature in mark.args:
            if feature not in ALL_FEATURES:
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.requires({feature!r}): unknown feature; "
                    f"known: {sorted(ALL_FEATURES)}"
                )
            if feature not in features:
                features.append(feature)
    return features


def _missing_reason(name: str, features: list[str]) -> str | None:
    have = features_for(name)
    missing = [f for f in features if f not in have]
    return f"{name} does not support {', '.join(missing)}" if missing else None


def _divergence(item: pytest.Item, backend: str) -> str | None:
    base = item.nodeid.split("[", 1)[0]
    original = getattr(item, "originalname", item.name)
    for (test, name), reason in KNOWN_DIVERGENCES.items():
        if name != backend:
            continue
        if test == original or base.endswith(("::" + test, "/" + test)) or base == test:
            return reason
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("backend") if callspec is not None else None
        if not isinstance(name, str):
            continue
        item.add_marker(pytest.mark.backend)
        reason = _missing_reason(name, _required_features(item))
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
        divergence = _divergence(item, name)
        if divergence:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"{name}: {divergence}"))


_frozen: set[str] = set()


def _freeze_heap(name: str) -> None:
    """Move everything allocated so far (boto, moto, servers, test modules) out of the GC's way.

    Every ``mock_aws()`` start and every new boto3 client allocates thousands of objects, which
    triggers a full (generation 2) collection every 15-20 tests; over the heap of moto and
    botocore that costs 25-60 ms each time. Frozen objects are skipped by the collector. Done
    once per backend, right after its first setup (moto is imported lazily).
    """
    if name not in _frozen:
        _frozen.add(name)
        gc.collect()
        gc.freeze()


# -- session-scoped servers ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def _moto_server() -> Iterator[MotoServer]:
    server = MotoServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _dynalite_server() -> Iterator[DynaliteServer]:
    reason = dynalite_unavailable()
    if reason:
        pytest.skip(reason)
    server = DynaliteServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _dynalite_admin(_dynalite_server: DynaliteServer) -> DynamoDBClient:
    return make_backend("dynalite", _dynalite_server.endpoint_url).client()


@pytest.fixture(scope="session")
def _endpoint_admin() -> DynamoDBClient:
    return make_backend("endpoint", os.environ[ENDPOINT_ENV]).client()


# -- per-test fixtures --------------------------------------------------------------------------


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The backend of this test run, with fresh (empty) state."""
    name: BackendName = getattr(request, "param", "inproc")
    reason = _unavailable(name) or _missing_reason(name, _required_features(request.node))
    if reason:
        pytest.skip(reason)
    if name in ("inproc", "moto_server"):
        honour_client_request_tokens()  # as DynamoDB does (moto_fixtures.idempotency)
    if name == "inproc":
        import moto

        mock: Any = moto.mock_aws()
        mock.start()  # resets moto's state
        _freeze_heap(name)
        try:
            yield make_backend("inproc")
        finally:
            mock.stop()
    elif name == "moto_server":
        server: MotoServer = request.getfixturevalue("_moto_server")
        server.reset()
        _freeze_heap(name)
        yield make_backend("moto_server", server.endpoint_url)
    elif name == "dynalite":
        dynalite: DynaliteServer = request.getfixturevalue("_dynalite_server")
        wipe_tables(request.getfixturevalue("_dynalite_admin"))
        _freeze_heap(name)
        yield make_backend("dynalite", dynalite.endpoint_url)
    elif name == "endpoint":
        admin: DynamoDBClient = request.getfixturevalue("_endpoint_admin")
        current = make_backend("endpoint", os.environ[ENDPOINT_ENV])
        try:
            yield current
        finally:
            names = list(current.created_tables)
            for page in admin.get_paginator("list_tables").paginate():
                names += [
                    t
                    for t in page.get("TableNames", [])
                    if t.startswith(current.table_prefix) and t not in names
                ]
            wipe_tables(admin, names)
    else:  # pragma: no cover
        raise pytest.UsageError(f"unknown backend {name!r}; known: {BACKEND_NAMES}")


@pytest.fixture
def client(backend: Backend, request: pytest.FixtureRequest) -> Iterator[DynamoDBClient]:
    """A boto3 low-level DynamoDB client for ``backend``.

    A new client per test (about 2 ms, built from a shared boto3 session), so event handlers
    a test registers (fault injectors, recorders) can never leak into the next test. On the
    async twin, what is registered on its events applies to the twin's aiobotocore clients
    too (``twins.EventTee``).
    """
    c = backend.client()
    if "twin" in request.fixturenames and request.getfixturevalue("twin") == "async":
        EventTee.install(c)
    yield c
    c.close()


@pytest.fixture
def recorder(client: DynamoDBClient) -> Iterator[RequestRecorder]:
    """Records the requests ``client`` sends; see ``RequestRecorder``."""
    rec = record(client)
    yield rec
    rec.detach()


@pytest.fixture
def table_name(backend: Backend) -> str:
    """A table name safe on this backend (unique per test on ``endpoint``)."""
    return backend.table_name()


@pytest.fixture
def twin(request: pytest.FixtureRequest) -> str:
    """The repository twin of this test run: ``"sync"`` or ``"async"``."""
    name: str = getattr(request, "param", "sync")
    return name


@pytest.fixture
def async_clients(backend: Backend) -> Iterator[Callable[[], AsyncClients]]:
    """A factory of this test's aiobotocore client pool (opened on first use, closed after)."""
    pool: list[AsyncClients] = []

    def get() -> AsyncClients:
        if not pool:
            pool.append(AsyncClients(backend))
        return pool[0]

    yield get
    for clients in pool:
        clients.close()


@pytest.fixture
def clock() -> Clock:
    """A settable clock (starts at ``moto_fixtures.tables.NOW``) for ``Repository(clock=...)``."""
    return Clock()
