"""A keep-alive HTTP server that replays recorded DynamoDB responses (for ``bench/e2e.py``).

It answers like DynamoDB at almost no cost of its own, so a benchmark client measures its own
work, and it keeps connections open (HTTP/1.1 keep-alive) as DynamoDB does, so the client
reuses its pooled connection instead of paying a TCP connect per call (moto's server closes
every connection).

Recording: started with ``--upstream URL`` (a moto server), every request it has not seen
before (same ``X-Amz-Target`` and the same JSON body: byte-identical, or equal once its keys are
sorted, for clients whose maps iterate in random order) is forwarded once to the upstream; the
response is stored -- status, body and the headers DynamoDB sends (``x-amzn-RequestId``,
``x-amz-crc32``, ``Content-Type: application/x-amz-json-1.0``) -- and replayed for every later
identical request. A benchmark makes each distinct request once at startup (its warm-up),
which records everything; ``GET /__replay__/stats`` then reports how many requests were
replayed and how many went upstream, so it can check that every timed call was a replay.
``POST /__replay__/freeze`` makes unknown requests fail (HTTP 400, a DynamoDB-style
``ValidationException``) instead of going upstream.

    python bench/replay_server.py --port 0 --upstream http://127.0.0.1:5000 --port-file p.txt

With ``--certfile`` and ``--keyfile`` it serves HTTPS instead (TLS, as DynamoDB), still HTTP/1.1
keep-alive; the upstream it records from stays whatever ``--upstream`` names. Each connection's
TLS handshake runs in that connection's own thread, so the accept loop never waits for one.

Runs in its own process (``bench/e2e.py`` starts it), one thread per connection; stop it
with SIGTERM or SIGINT. Binds 127.0.0.1 only. Not a test and not a DynamoDB emulator.
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: Response headers worth keeping from the upstream (lower-case); the server adds
#: ``Server``, ``Date``, ``Content-Length`` and ``Connection`` itself.
KEPT_HEADERS = ("content-type", "x-amzn-requestid", "x-amz-crc32")

Recording = tuple[int, list[tuple[str, str]], bytes]


def _canonical(body: bytes) -> bytes:
    """The body with its JSON keys sorted (itself when it is not JSON)."""
    try:
        return json.dumps(json.loads(body), sort_keys=True).encode()
    except ValueError:
        return body


class ReplayStore:
    """Recorded responses keyed by (target, request body); thread-safe counters."""

    def __init__(self, upstream: str | None) -> None:
        self.upstream = urllib.parse.urlsplit(upstream) if upstream else None
        self.frozen = False
        self.responses: dict[tuple[str, bytes], Recording] = {}
        self.lock = threading.Lock()
        self.replayed = 0
        self.recorded = 0
        self.unknown = 0

    def lookup(self, target: str, body: bytes, headers: dict[str, str]) -> Recording:
        key = (target, body)
        found = self.responses.get(key)
        if found is None:  # pydynox's Rust maps iterate in random order: same request, new bytes
            key = (target, _canonical(body))
            found = self.responses.get(key)
        if found is not None:
            with self.lock:
                self.replayed += 1
            return found
        if self.upstream is None or self.frozen:
            with self.lock:
                self.unknown += 1
            message = json.dumps(
                {
                    "__type": "com.amazon.coral.validate#ValidationException",
                    "message": f"replay server: no recording for {target}",
                }
            ).encode()
            return 400, [("Content-Type", "application/x-amz-json-1.0")], message
        recording = self._forward(headers, body)
        with self.lock:
            self.recorded += 1
            self.responses.setdefault((target, body), recording)
            self.responses.setdefault(key, recording)
        return recording

    def _forward(self, headers: dict[str, str], body: bytes) -> Recording:
        assert self.upstream is not None
        conn = http.client.HTTPConnection(
            self.upstream.hostname or "127.0.0.1", self.upstream.port or 80, timeout=60
        )
        try:
            forwarded = {
                k: v
                for k, v in headers.items()
                if k.lower() not in ("host", "connection", "content-length")
            }
            conn.request("POST", self.upstream.path or "/", body=body, headers=forwarded)
            response = conn.getresponse()
            data = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() in KEPT_HEADERS]
            return response.status, kept, data
        finally:
            conn.close()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "replayed": self.replayed,
                "recorded": self.recorded,
                "unknown": self.unknown,
                "recordings": len(self.responses),
                "frozen": self.frozen,
            }


def make_handler(store: ReplayStore) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: connections stay open between requests
        server_version = "Server"  # DynamoDB's own Server header says just that
        sys_version = ""
        # One write per response (status line, headers and body leave in one segment; the
        # request loop flushes after each request) and no Nagle: otherwise a separate body
        # write waits for the client's delayed ACK, ~40 ms per call.
        wbufsize = 1 << 20
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # no per-request logging

        def _send(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "keep-alive")
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if self.path == "/__replay__/freeze":
                store.frozen = True
                self._send(200, [("Content-Type", "application/json")], b"{}")
                return
            target = self.headers.get("X-Amz-Target", "")
            status, headers, data = store.lookup(target, body, dict(self.headers.items()))
            self._send(status, headers, data)

        def do_GET(self) -> None:
            if self.path == "/__replay__/stats":
                body = json.dumps(store.stats()).encode()
                self._send(200, [("Content-Type", "application/json")], body)
            else:
                self._send(404, [("Content-Type", "text/plain")], b"not found")

    return Handler


class ReplayHTTPServer(ThreadingHTTPServer):
    """A thread per connection; with an ``SSLContext``, each connection is TLS."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.tls = tls
        super().__init__(address, handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        try:
            # here, in the connection's thread: the handshake does not hold up accept()
            conn = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, ConnectionError):
            return  # a client that gave up on the handshake (or a plain-HTTP probe)
        with conn:
            super().finish_request(conn, client_address)


def server_tls(certfile: Path, keyfile: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)
    return context


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--upstream", help="record unknown requests from this endpoint")
    parser.add_argument("--port-file", type=Path, help="write the bound port here when ready")
    parser.add_argument("--certfile", type=Path, help="serve HTTPS with this PEM certificate")
    parser.add_argument("--keyfile", type=Path, help="the certificate's PEM private key")
    args = parser.parse_args(argv)
    if (args.certfile is None) != (args.keyfile is None):
        parser.error("--certfile and --keyfile go together")

    store = ReplayStore(args.upstream)
    tls = server_tls(args.certfile, args.keyfile) if args.certfile else None
    server = ReplayHTTPServer(("127.0.0.1", args.port), make_handler(store), tls)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(str(port))
        tmp.replace(args.port_file)
    else:
        print(port, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
