"""A recording, fault-injecting HTTP proxy in front of a DynamoDB endpoint (moto's server,
dynalite, a replay server).

Event-hook fault injectors (:mod:`moto_fixtures.faults`) act inside botocore; a client that
sends its own HTTP (singletable's direct transport) needs faults on the wire. :class:`WireProxy`
is a keep-alive HTTP/1.1 server on 127.0.0.1 that records every request (headers and body, as
received) and forwards it to the upstream, unless a queued fault answers it first:

* ``error`` -- a DynamoDB JSON error (``code``, HTTP ``status``) instead of forwarding;
* ``reset`` -- the connection is closed with no response;
* ``stall`` -- no response for ``seconds``, then the connection is closed (a read timeout);
* ``crc32`` -- forwarded, then the response's ``x-amz-crc32`` is replaced by a wrong one;
* ``date`` -- forwarded, with a ``Date`` header ``seconds`` away from the real time;
  ``skew=`` does the same to any fault's answer.

Faults apply to the next requests in order, one per request (``times`` queues it again).
:meth:`WireProxy.answer` makes every request (after the queued faults) get one canned
response instead of being forwarded. ``WireProxy(upstream, tls=folder)`` serves HTTPS with a
self-signed certificate for 127.0.0.1 made in ``folder`` (:attr:`WireProxy.certificate`: the
CA bundle a client must trust, e.g. through ``AWS_CA_BUNDLE``).
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["Fault", "Recorded", "WireProxy"]

_KEPT = ("content-type", "x-amzn-requestid", "x-amz-crc32")


@dataclass(frozen=True)
class Fault:
    kind: str  # error, reset, stall, crc32, date
    code: str = ""
    status: int = 400
    seconds: float = 0.0
    skew: float = 0.0


@dataclass
class Recorded:
    """One request as the proxy received it, and what it answered."""

    headers: dict[str, str]
    body: bytes
    fault: str | None = None
    status: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return self.headers.get("x-amz-target", "").rpartition(".")[2]

    @property
    def access_key(self) -> str:
        credential = self.headers.get("authorization", "").partition("Credential=")[2]
        return credential.partition("/")[0]


class WireProxy:
    """See the module docstring. ``with WireProxy(upstream) as proxy: proxy.url``."""

    def __init__(self, upstream: str, *, tls: Path | None = None) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.requests: list[Recorded] = []
        self.faults: deque[Fault] = deque()
        self.canned: tuple[int, list[tuple[str, str]], bytes] | None = None
        self.certificate: Path | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        if tls is not None:
            self.certificate, key = self_signed_certificate(tls)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.certificate, key)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        scheme = "http" if self.certificate is None else "https"
        return f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> WireProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def inject(self, kind: str, *, times: int = 1, **options: Any) -> None:
        """Queue a fault (see the module docstring) for the next ``times`` requests."""
        with self._lock:
            self.faults.extend([Fault(kind, **options)] * times)

    def answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """Answer every request with this response (``Content-Length`` and ``Date`` are the
        proxy's own) instead of forwarding it."""
        kept = [(k, v) for k, v in headers.items() if k.lower() not in ("content-length", "date")]
        self.canned = (status, kept, body)

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.faults.clear()
            self.canned = None

    def next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def forward(self, headers: dict[str, str], body: bytes) -> tuple[int, list[Any], bytes]:
        host = self.upstream.hostname or "127.0.0.1"
        connection = http.client.HTTPConnection(host, self.upstream.port, timeout=30)
        try:
            sent = {k: v for k, v in headers.items() if k.lower() not in ("host", "connection")}
            connection.request("POST", self.upstream.path or "/", body=body, headers=sent)
            response = connection.getresponse()
            data = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() in _KEPT]
            return response.status, kept, data
        finally:
            connection.close()


def _error(code: str) -> bytes:
    return json.dumps(
        {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "injected"}
    ).encode()


def _handler(proxy: WireProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            fault = proxy.next_fault()
            record = Recorded(headers, body, fault.kind if fault else None)
            with proxy._lock:
                proxy.requests.append(record)
            if fault is not None and fault.kind in ("reset", "stall"):
                if fault.kind == "stall":  # not time.sleep: tests replace it to skip backoffs
                    threading.Event().wait(fault.seconds)
                self.close_connection = True
                self.connection.close()
                return
            if fault is not None and fault.kind == "error":
                status = fault.status
                kept = [("Content-Type", "application/x-amz-json-1.0")]
                data = _error(fault.code)
            elif proxy.canned is not None:
                status, kept, data = proxy.canned
            else:
                status, kept, data = proxy.forward(headers, body)
            date = None
            if fault is not None and fault.kind == "crc32":
                kept = [(k, v) for k, v in kept if k.lower() != "x-amz-crc32"]
                kept.append(("x-amz-crc32", "1"))
            if fault is not None and (fault.kind == "date" or fault.skew):
                date = formatdate(time.time() + (fault.skew or fault.seconds), usegmt=True)
            record.status = status
            self.send_response_only(status)
            self.send_header("Date", date or self.date_time_string())
            for name, value in kept:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """(certificate, key): PEM files in ``folder`` for a self-signed P-256 certificate valid
    for 127.0.0.1 and localhost for a day (with the key identifiers urllib3's strict
    verification asks of a CA certificate)."""
    import ipaddress
    from datetime import datetime, timedelta, timezone

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(timezone.utc)
    public = key.public_key()
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "proxy-cert.pem", folder / "proxy-key.pem"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path
