"""The servers ``bench/e2e.py`` times its clients against, and how a client reaches each.

All on 127.0.0.1, each server in its own process (no shared GIL):

* ``moto``: ``python -m moto.server``. It closes the connection after every response, so
  every call there also pays a TCP connect, and moto's own work dominates wall time.
* ``replay``: ``bench/replay_server.py``, a keep-alive HTTP/1.1 server that recorded each
  distinct request's response from moto once (during the warm-up) and replays it.
* ``tls``: the same replay server behind TLS (HTTPS, as DynamoDB is), with a self-signed
  certificate for 127.0.0.1 and localhost made at start in a temporary directory (the
  ``openssl`` command if present, else the ``cryptography`` package; with neither the endpoint
  is left out and the reason printed). Every client trusts that certificate: boto3 and
  aiobotocore through ``verify=``, singletable's default clients through ``AWS_CA_BUNDLE``
  (set while they are created), aiohttp sessions through an ``SSLContext``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

BENCH = Path(__file__).resolve().parent
NAMES = ("moto", "replay", "tls")


@dataclass(frozen=True)
class Endpoint:
    name: str  # one of NAMES
    url: str
    label: str  # the report's heading
    certfile: str | None = None  # the self-signed certificate clients trust (HTTPS only)
    replay: bool = False  # a replay server: frozen before timing, every timed call checked

    def client(self, config: Any = None) -> Any:
        """A boto3 client as a user creates one, endpoint (and certificate) given."""
        return plain_client(self.url, config, self.certfile)

    def ssl_context(self) -> ssl.SSLContext | None:
        """What an aiohttp session or ``urllib`` needs to trust this endpoint (None: HTTP)."""
        return _trusting(self.certfile)

    def use_as_default(self) -> None:
        """Point the default clients created from now on here: ``AWS_ENDPOINT_URL_DYNAMODB``,
        and ``AWS_CA_BUNDLE`` for HTTPS (removed for HTTP)."""
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = self.url
        if self.certfile is None:
            os.environ.pop("AWS_CA_BUNDLE", None)
        else:
            os.environ["AWS_CA_BUNDLE"] = self.certfile

    def replay_stats(self) -> dict[str, Any]:
        return replay_stats(self.url, self.certfile)

    def replay_freeze(self) -> None:
        replay_freeze(self.url, self.certfile)


def use_dummy_credentials() -> None:
    """The default session reads these (``default_client()`` uses it); nothing reaches AWS."""
    os.environ["AWS_ACCESS_KEY_ID"] = "bench"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "bench"
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
        os.environ.pop(name, None)


def plain_client(url: str, config: Any = None, verify: str | None = None) -> Any:
    """A client as a user creates one: ``boto3.client("dynamodb")``, endpoint given (and the
    certificate to trust, for HTTPS)."""
    return boto3.client("dynamodb", endpoint_url=url, config=config, verify=verify)


def replay_stats(url: str, certfile: str | None = None) -> dict[str, Any]:
    """A replay server's counters: replayed, recorded, unknown (see replay_server.py)."""
    with urllib.request.urlopen(
        url + "/__replay__/stats", timeout=10, context=_trusting(certfile)
    ) as response:
        stats: dict[str, Any] = json.loads(response.read())
        return stats


def replay_freeze(url: str, certfile: str | None = None) -> None:
    """From now on, the replay server answers unknown requests with an error."""
    request = urllib.request.Request(url + "/__replay__/freeze", data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=10, context=_trusting(certfile)):
        pass


def _trusting(certfile: str | None) -> ssl.SSLContext | None:
    return None if certfile is None else ssl.create_default_context(cafile=certfile)


def start(names: list[str], moto_url: str, stack: contextlib.ExitStack) -> dict[str, Endpoint]:
    """The endpoints named (moto's server already runs at ``moto_url``); the replay servers
    record from it. ``tls`` is left out, with the reason printed, where no certificate can be
    made. Everything started is stopped when ``stack`` closes."""
    found: dict[str, Endpoint] = {}
    if "moto" in names:
        label = "moto server (own process; a new TCP connection per call)"
        found["moto"] = Endpoint("moto", moto_url, label)
    if "replay" in names:
        url = stack.enter_context(replay_server(moto_url))
        label = "replay server (own process; HTTP/1.1 keep-alive)"
        found["replay"] = Endpoint("replay", url, label, replay=True)
    if "tls" in names:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        try:
            certfile, keyfile, made_by = self_signed_certificate(directory)
        except CertificateUnavailable as exc:
            print(f"(tls endpoint left out: {exc})")
            print()
            return found
        url = stack.enter_context(replay_server(moto_url, certfile, keyfile))
        tls = Endpoint("tls", url, "", str(certfile), replay=True)
        label = (
            f"replay server behind TLS (own process; HTTPS, HTTP/1.1 keep-alive; "
            f"{negotiated(tls)}; self-signed P-256 certificate made by {made_by})"
        )
        found["tls"] = dataclasses.replace(tls, label=label)
    return found


# -- servers ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_http(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if the server has not exited within 10 s (moto's server
    sometimes lingers on a loaded machine; the report must not be lost to it)."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """A moto server in its own process; yields its endpoint URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_http(url + "/moto-api/")
        yield url
    finally:
        stop(proc)


@contextlib.contextmanager
def replay_server(
    upstream: str, certfile: Path | None = None, keyfile: Path | None = None
) -> Iterator[str]:
    """``bench/replay_server.py`` in its own process, recording from ``upstream``; HTTPS with
    ``certfile`` and ``keyfile``. Yields its URL."""
    tls = [] if certfile is None else ["--certfile", str(certfile), "--keyfile", str(keyfile)]
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        proc = subprocess.Popen(
            [
                sys.executable,
                str(BENCH / "replay_server.py"),
                "--port",
                "0",
                "--upstream",
                upstream,
                "--port-file",
                str(port_file),
                *tls,
            ]
        )
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the replay server did not start")
                time.sleep(0.05)
            scheme = "http" if certfile is None else "https"
            yield f"{scheme}://127.0.0.1:{port_file.read_text()}"
        finally:
            stop(proc)


def negotiated(endpoint: Endpoint) -> str:
    """The TLS version and cipher a default client context agrees on with ``endpoint``."""
    context = endpoint.ssl_context()
    assert context is not None
    port = int(endpoint.url.rsplit(":", 1)[1])
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as sock,
        context.wrap_socket(sock, server_hostname="127.0.0.1") as tls,
    ):
        cipher = tls.cipher()
        return f"{tls.version()}, {cipher[0] if cipher else '?'}"


# -- the certificate -------------------------------------------------------------------------


class CertificateUnavailable(Exception):
    """Neither the ``openssl`` command nor the ``cryptography`` package could make one."""


def self_signed_certificate(directory: Path) -> tuple[Path, Path, str]:
    """A self-signed P-256 certificate for 127.0.0.1 and localhost, valid for two days, and
    its key, as PEM files in ``directory``; and what made them."""
    certfile, keyfile = directory / "cert.pem", directory / "key.pem"
    reasons = []
    openssl = shutil.which("openssl")
    if openssl is None:
        reasons.append("no openssl command")
    else:
        command = [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(keyfile),
            "-out",
            str(certfile),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return certfile, keyfile, "the openssl command"
        reasons.append(f"openssl failed: {done.stderr.strip()[-200:]}")
    try:
        _write_with_cryptography(certfile, keyfile)
    except ImportError:
        reasons.append("the cryptography package is not installed")
        raise CertificateUnavailable("; ".join(reasons)) from None
    return certfile, keyfile, "the cryptography package"


def _write_with_cryptography(certfile: Path, keyfile: Path) -> None:
    """What ``openssl req -x509`` writes, made by the test suite's proxy's helper (the
    ``cryptography`` package; ImportError without it)."""
    if str(BENCH.parent) not in sys.path:
        sys.path.insert(0, str(BENCH.parent))  # the checkout's moto_fixtures
    from moto_fixtures.wire import self_signed_certificate

    with tempfile.TemporaryDirectory() as tmp:
        made_cert, made_key = self_signed_certificate(Path(tmp))
        shutil.move(made_cert, certfile)
        shutil.move(made_key, keyfile)
