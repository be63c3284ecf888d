"""Where botocore spends a DynamoDB call's client CPU, and what public configuration cuts.

Run from the repository root::

    python bench/botocore_calls.py profile [--calls 400] [--text out.txt]
    python bench/botocore_calls.py options [--rounds 15] [--seed 7] [--json out.json]

Both start moto's server and ``bench/replay_server.py`` (keep-alive, replayed responses,
each in its own process, as ``bench/e2e.py`` does) and call the replay endpoint, so the
client's own work is what is measured.

``profile`` times the stages of botocore's pipeline for GetItem and the 100-item Query of
``bench/e2e.py`` on a raw boto3 client, on one with ``singletable.aws.fastpath``, and on one
set up as ``default_client()`` does (fast path, ``client_config(parameter_validation=False)``,
singletable's HTTP exchange), with botocore signing and with the signer opted in
(``singletable.aws.signing``), without a profiler's distortion: marker handlers registered
(public ``client.meta.events`` API) first and last on each event botocore emits during a call
record ``perf_counter_ns`` and ``thread_time_ns``, so each segment between two markers is the
code botocore runs there (endpoint rules + validation + serialisation + user agent; signing;
the HTTP exchange; parsing; the retry handler with DynamoDB's CRC32 check; ...). Then it times
botocore's public building blocks alone on the same data (validator, serialiser, SigV4, parser,
``json.loads``, CRC32). ``--text FILE`` also writes pyinstrument call trees (if installed; a
tracing sampler, which inflates call-heavy code such as the parser several times).

``options`` measures, interleaved in shuffled rounds, client CPU per call
(``time.thread_time_ns``) for each public botocore ``Config`` option that could cut
per-call work, one at a time against boto3's defaults, plus singletable's
``client_config()``; for a raw client and for one with the fast path. Ratios are medians
of per-round ratios to the default client of the same kind.

Not a test: absolute numbers depend on the machine; compare within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import os
import platform
import random
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import boto3
import botocore
from botocore.config import Config

from e2e import CUSTOMER, PARTITION_ITEMS, Shop, seed_data, use_dummy_credentials
from endpoints import moto_server, plain_client, replay_freeze, replay_server, replay_stats
from singletable.aws import _client as st_client
from singletable.aws import fastpath

TIMES = "\u00d7"

#: Timeline markers: (event, position). "first" runs before every other handler of the event
#: (registered first on the full event name), "last" after all of them (registered last on
#: the bare event name, whose handlers botocore runs after the more specific ones).
MARKERS: list[tuple[str, str]] = [
    ("provide-client-params", "first"),
    ("before-parameter-build", "first"),
    ("before-endpoint-resolution", "first"),
    ("before-call", "first"),
    ("before-call", "last"),
    ("request-created", "first"),
    ("request-created", "last"),
    ("before-send", "first"),
    ("before-send", "last"),
    ("before-parse", "first"),
    ("before-parse", "last"),
    ("response-received", "first"),
    ("needs-retry", "first"),
    ("needs-retry", "last"),
    ("after-call", "first"),
    ("after-call", "last"),
]

#: What botocore does between two consecutive markers (see botocore/client.py
#: ``_make_api_call`` and botocore/endpoint.py ``_send_request``).
SEGMENTS: dict[tuple[str, str], str] = {
    ("call", "provide-client-params/first"): (
        "dispatch: _api_call, operation model, request context"
    ),
    ("provide-client-params/first", "before-parameter-build/first"): (
        "provide-client-params handlers"
    ),
    ("before-parameter-build/first", "before-endpoint-resolution/first"): (
        "before-parameter-build handlers (idempotency tokens, ...), endpoint parameters"
    ),
    ("before-endpoint-resolution/first", "before-call/first"): (
        "endpoint rules (cached), validation, serialisation, user agent (1st), checksum context"
    ),
    ("before-call/first", "before-call/last"): "before-call handlers",
    ("before-call/last", "request-created/first"): (
        "compression/checksum checks, create_request_object"
    ),
    ("request-created/first", "request-created/last"): (
        "request-created handlers: SigV4 signing (choose-signer, before-sign), user agent (2nd)"
    ),
    ("request-created/last", "before-send/first"): "prepare_request (AWSPreparedRequest)",
    ("before-send/first", "before-send/last"): "before-send handlers",
    ("before-send/last", "before-parse/first"): (
        "HTTP exchange (urllib3; wall incl. server), response dict, checksum body"
    ),
    ("before-parse/first", "before-parse/last"): "before-parse handlers (fast path)",
    ("before-parse/last", "response-received/first"): ("response parser, response dict again"),
    ("response-received/first", "needs-retry/first"): "response-received handlers",
    ("needs-retry/first", "needs-retry/last"): "needs-retry: retry handler (legacy: CRC32)",
    ("needs-retry/last", "after-call/first"): "RetryAttempts, return to the client",
    ("after-call/first", "after-call/last"): "after-call handlers",
    ("after-call/last", "return"): "error check, return",
}


# -- shared setup -----------------------------------------------------------------------------


@contextlib.contextmanager
def replay_endpoint(seed: int) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(replay URL, GetItem params, Query params), recorded and frozen."""
    use_dummy_credentials()
    with moto_server() as moto_url, replay_server(moto_url) as url:
        orders = seed_data(plain_client(moto_url), seed)
        shape = Shop()
        order = orders[0]
        get_params = shape.order.params(
            customer_id=order.customer_id, created_at=order.created_at, order_id=order.order_id
        )
        query_params = shape.orders.params(customer_id=CUSTOMER, limit=PARTITION_ITEMS)
        query_params["Limit"] = PARTITION_ITEMS
        client = plain_client(url)
        client.get_item(**get_params)  # records both responses
        client.query(**query_params)
        replay_freeze(url)
        yield url, get_params, query_params
        stats = replay_stats(url)
        if stats["unknown"]:
            raise SystemExit(f"replay server: some calls were not replayed: {stats}")


def header(command: str) -> None:
    print(f"command: `{shlex.join(['python', 'bench/botocore_calls.py', *sys.argv[1:]])}`")
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; botocore {botocore.__version__}; load average "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print()


# -- profile ---------------------------------------------------------------------------------


class Timeline:
    """Marker handlers on a client's events: (perf_counter_ns, thread_time_ns) per marker."""

    def __init__(self, client: Any, operation: str) -> None:
        self.points: list[tuple[str, int, int]] = []
        events = client.meta.events
        for event, position in MARKERS:
            label = f"{event}/{position}"
            handler = self._marker(label)
            if position == "first":
                # before-endpoint-resolution is emitted per service, the others per operation
                suffix = "" if event == "before-endpoint-resolution" else f".{operation}"
                events.register_first(f"{event}.dynamodb{suffix}", handler)
            else:
                events.register_last(event, handler)

    def _marker(self, label: str) -> Callable[..., None]:
        points = self.points
        perf, cpu = time.perf_counter_ns, time.thread_time_ns

        def marker(**_: Any) -> None:
            points.append((label, perf(), cpu()))

        return marker

    def run(self, fn: Callable[[], Any]) -> list[tuple[str, int, int]]:
        self.points.clear()
        self.points.append(("call", time.perf_counter_ns(), time.thread_time_ns()))
        fn()
        self.points.append(("return", time.perf_counter_ns(), time.thread_time_ns()))
        return list(self.points)


def timeline_segments(
    client: Any, operation: str, fn: Callable[[], Any], calls: int
) -> dict[str, tuple[float, float]]:
    """Per segment: (median wall µs, median CPU µs) over ``calls`` calls."""
    timeline = Timeline(client, operation)
    for _ in range(10):
        timeline.run(fn)
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for _ in range(calls):
        points = timeline.run(fn)
        for (a, wa, ca), (b, wb, cb) in itertools.pairwise(points):
            key = SEGMENTS.get((a, b), f"{a} -> {b}")
            wall.setdefault(key, []).append((wb - wa) / 1e3)
            cpu.setdefault(key, []).append((cb - ca) / 1e3)
        wall.setdefault("whole call", []).append((points[-1][1] - points[0][1]) / 1e3)
        cpu.setdefault("whole call", []).append((points[-1][2] - points[0][2]) / 1e3)
    return {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in wall}


def component_costs(get_params: dict[str, Any], query_params: dict[str, Any]) -> list[str]:
    """Table rows: µs of botocore's public building blocks, called alone on the same data."""
    import binascii

    from botocore.credentials import Credentials
    from botocore.parsers import create_parser
    from botocore.serialize import create_serializer
    from botocore.validate import ParamValidator

    model = plain_client("http://127.0.0.1:9").meta.service_model  # the client never calls
    credentials = Credentials("bench", "bench")
    bodies: dict[str, tuple[int, Any, bytes]] = getattr(component_costs, "bodies", {})
    rows: list[str] = []

    def timed(label: str, fn: Callable[[], Any], reps: int) -> None:
        batches = []
        for _ in range(5):
            start = time.thread_time_ns()
            for _ in range(reps):
                fn()
            batches.append((time.thread_time_ns() - start) / reps / 1e3)
        rows.append(f"| {label} | {statistics.median(batches):,.1f} |")

    for op, params in (("GetItem", get_params), ("Query", query_params)):
        op_model = model.operation_model(op)
        validator = ParamValidator()
        serializer = create_serializer("json", include_validation=False)
        body = serializer.serialize_to_request(params, op_model)["body"]
        timed(
            f"{op}: ParamValidator.validate",
            partial(validator.validate, params, op_model.input_shape),
            200,
        )
        timed(
            f"{op}: JSON serialiser",
            partial(serializer.serialize_to_request, params, op_model),
            200,
        )
        timed(
            f"{op}: SigV4Auth.add_auth (new AWSRequest)", partial(_sign, credentials, op, body), 200
        )
        if op in bodies:
            status, headers, raw = bodies[op]
            reps = 200 if op == "GetItem" else 10
            response = {"status_code": status, "headers": headers, "body": raw}
            timed(
                f"{op}: botocore JSON parser ({len(raw):,} B body)",
                partial(_parse, create_parser, response, op_model.output_shape),
                reps,
            )
            timed(f"{op}: json.loads of the body", partial(json.loads, raw), reps)
            timed(f"{op}: binascii.crc32 of the body", partial(binascii.crc32, raw), reps)
    return rows


def _sign(credentials: Any, operation: str, body: bytes) -> None:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(
        "POST", "http://127.0.0.1/", data=body, headers={"X-Amz-Target": operation}
    )
    SigV4Auth(credentials, "dynamodb", "us-east-1").add_auth(request)


def _parse(create_parser: Callable[[str], Any], response: dict[str, Any], shape: Any) -> Any:
    return create_parser("json").parse(response, shape)  # a new parser per response, as botocore


def record_bodies(client: Any, get_params: dict[str, Any], query_params: dict[str, Any]) -> None:
    """Keep one raw response per operation (for component_costs)."""
    bodies: dict[str, Any] = {}

    def keep(response_dict: dict[str, Any], operation_model: Any, **_: Any) -> None:
        bodies[operation_model.name] = (
            response_dict["status_code"],
            response_dict["headers"],
            response_dict["body"],
        )

    client.meta.events.register("before-parse.dynamodb", keep, unique_id="bench-keep")
    client.get_item(**get_params)
    client.query(**query_params)
    client.meta.events.unregister("before-parse.dynamodb", unique_id="bench-keep")
    component_costs.bodies = bodies  # type: ignore[attr-defined]


def cmd_profile(args: argparse.Namespace) -> int:
    header("profile")
    with replay_endpoint(args.seed) as (url, get_params, query_params):
        record_bodies(plain_client(url), get_params, query_params)
        # (operation, fast path, config, singletable's signer): the default_client() rows
        # are set up as default_client() does it, botocore signing (the default) or with
        # the signer opted in (SINGLETABLE_SIGNING=1 or client_config(signing=True)).
        config = default_client_config()
        runs: dict[str, tuple[str, bool, Config | None, bool]] = {
            "GetItem, raw": ("GetItem", False, None, False),
            "GetItem, fast path": ("GetItem", True, None, False),
            "GetItem, default_client()": ("GetItem", True, config, False),
            "GetItem, default_client() + signer": ("GetItem", True, config, True),
            "Query, raw": ("Query", False, None, False),
            "Query, fast path": ("Query", True, None, False),
            "Query, default_client()": ("Query", True, config, False),
            "Query, default_client() + signer": ("Query", True, config, True),
        }
        results: dict[str, dict[str, tuple[float, float]]] = {}
        texts: list[str] = []
        for name, (op, fast, config, sign) in runs.items():
            client = plain_client(url, config)
            if fast:
                fastpath.install(client)
            if config is not None:
                install_exchange(client)
            if sign:
                install_signer(client)
            params = get_params if op == "GetItem" else query_params
            method = client.get_item if op == "GetItem" else client.query

            def fn(method: Callable[..., Any] = method, params: dict[str, Any] = params) -> Any:
                return method(**params)

            calls = args.calls if op == "GetItem" else max(20, args.calls // 4)
            results[name] = timeline_segments(client, op, fn, calls)
            if args.text:
                texts.append(f"===== {name} ({calls} calls) =====\n{pyinstrument_tree(fn, calls)}")
        component_rows = component_costs(get_params, query_params)
    labels = list(dict.fromkeys(label for r in results.values() for label in r))
    labels.remove("whole call")
    labels.append("whole call")
    print(
        "Timeline of one call: marker handlers on botocore's own events "
        "(time.perf_counter_ns / time.thread_time_ns), medians over the calls; µs"
    )
    print()
    columns = " | ".join(f"{n} wall | {n} CPU" for n in results)
    print(f"| segment (between markers) | {columns} |")
    print("|---|" + "---:|---:|" * len(results))
    for label in labels:
        cells = []
        for name in results:
            w, c = results[name].get(label, (0.0, 0.0))
            cells.append(f"{w:,.1f} | {c:,.1f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("Building blocks alone (thread CPU µs per call, median of 5 batches)")
    print()
    print("| component | µs |")
    print("|---|---:|")
    print("\n".join(component_rows))
    print()
    if args.text:
        args.text.write_text("\n\n".join(texts))
        print(f"pyinstrument trees written to {args.text}")
    return 0


def pyinstrument_tree(fn: Callable[[], Any], calls: int) -> str:
    try:
        from pyinstrument import Profiler
    except ImportError:
        return "(pyinstrument is not installed: pip install pyinstrument)"
    profiler = Profiler(interval=0.0002)
    profiler.start()
    for _ in range(calls):
        fn()
    profiler.stop()
    text: str = profiler.output_text(unicode=True, color=False, show_all=True)
    return text


# -- options ----------------------------------------------------------------------------------


def option_variants() -> dict[str, dict[str, Any]]:
    """Config keyword arguments per variant, one option at a time."""
    variants: dict[str, dict[str, Any]] = {
        "boto3 defaults": {},
        "parameter_validation=False": {"parameter_validation": False},
        "retries mode=standard": {"retries": {"mode": "standard"}},
        "retries mode=adaptive": {"retries": {"mode": "adaptive"}},
        "request_checksum_calculation=when_required": {
            "request_checksum_calculation": "when_required"
        },
        "response_checksum_validation=when_required": {
            "response_checksum_validation": "when_required"
        },
        "account_id_endpoint_mode=disabled": {"account_id_endpoint_mode": "disabled"},
        "tcp_keepalive=True": {"tcp_keepalive": True},
        "inject_host_prefix=False": {"inject_host_prefix": False},
        "endpoint_discovery_enabled=False": {"endpoint_discovery_enabled": False},
        "disable_request_compression=True": {"disable_request_compression": True},
        "user_agent=<fixed string>": {"user_agent": FIXED_USER_AGENT},
        "retries standard, max_attempts=10": {"retries": {"mode": "standard", "max_attempts": 10}},
        "parameter_validation=False + user_agent": {
            "parameter_validation": False,
            "user_agent": FIXED_USER_AGENT,
        },
    }
    return variants


#: A User-Agent fixed at client creation, in botocore's own format (what ``Config(user_agent=)``
#: measures: botocore then sends it as is instead of rebuilding its string twice per call).
FIXED_USER_AGENT = (
    f"Boto3/{boto3.__version__} md/Botocore#{botocore.__version__} ua/2.1 "
    f"os/{platform.system().lower()}#{platform.release()} md/arch#{platform.machine().lower()} "
    f"lang/python#{platform.python_version()} md/pyimpl#{platform.python_implementation()}"
)


def install_signer(client: Any) -> None:
    """singletable's SigV4 signer on ``client``, as an opted-in ``default_client()``
    installs it (for the default session's credentials; a no-op on versions without the
    signer)."""
    try:
        from singletable.aws import signing
    except ImportError:
        return
    session = boto3.DEFAULT_SESSION
    credentials = session.get_credentials() if session is not None else None
    if credentials is not None:
        signing.install(client, credentials)


def install_exchange(client: Any) -> None:
    """singletable's HTTP exchange on ``client``, as ``default_client()`` installs it (a no-op
    on versions without it)."""
    try:
        from singletable.aws import exchange
    except ImportError:
        return
    exchange.install(client)


def singletable_config() -> Config | None:
    helper = getattr(st_client, "client_config", None)
    return helper() if helper is not None else None


def default_client_config() -> Config | None:
    """The ``Config`` ``default_client()`` creates its client with."""
    try:
        return st_client.client_config(parameter_validation=False)
    except TypeError:  # a version before the keyword: default_client() used client_config()
        return singletable_config()


def cmd_options(args: argparse.Namespace) -> int:
    header("options")
    variants: dict[str, Config] = {
        name: Config(**kwargs) for name, kwargs in option_variants().items()
    }
    recommended = singletable_config()
    if recommended is not None:
        variants["singletable client_config()"] = recommended
    chunks = {"GetItem": args.gets // args.rounds, "Query": args.queries // args.rounds}
    rng = random.Random(args.seed)
    with replay_endpoint(args.seed) as (url, get_params, query_params):
        clients: dict[tuple[str, str], Any] = {}
        for name, config in variants.items():
            for kind in ("raw", "fast path"):
                client = plain_client(url, config)
                if kind == "fast path":
                    fastpath.install(client)
                client.get_item(**get_params)
                client.query(**query_params)
                clients[name, kind] = client
        slots = [(op, name, kind) for op in chunks for (name, kind) in clients]
        samples: dict[tuple[str, str, str], list[list[int]]] = {slot: [] for slot in slots}
        for rnd in range(args.warmup + args.rounds):
            order = slots[:]
            rng.shuffle(order)
            for op, name, kind in order:
                client = clients[name, kind]
                call: Callable[[], Any] = (
                    (lambda c=client: c.get_item(**get_params))
                    if op == "GetItem"
                    else (lambda c=client: c.query(**query_params))
                )
                gc.collect()
                cpu = []
                for _ in range(chunks[op]):
                    c0 = time.thread_time_ns()
                    call()
                    cpu.append(time.thread_time_ns() - c0)
                if rnd >= args.warmup:
                    samples[op, name, kind].append(cpu)
    results: dict[str, Any] = {}
    for op in chunks:
        for kind in ("raw", "fast path"):
            print(
                f"#### {op}, {kind} client: client CPU per call, "
                f"{args.rounds} rounds {TIMES} {chunks[op]} calls"
            )
            print()
            print(
                f"| Config | median µs CPU | Δ µs vs defaults | {TIMES} defaults "
                "(median of round ratios) | IQR of round ratios |"
            )
            print("|---|---:|---:|---:|---:|")
            base = samples[op, "boto3 defaults", kind]
            base_median = statistics.median(c for chunk in base for c in chunk) / 1e3
            for name in variants:
                rounds = samples[op, name, kind]
                median = statistics.median(c for chunk in rounds for c in chunk) / 1e3
                ratios = [
                    statistics.median(mine) / statistics.median(theirs)
                    for mine, theirs in zip(rounds, base)
                ]
                q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
                ratio = statistics.median(ratios)
                print(
                    f"| {name} | {median:,.0f} | {median - base_median:+,.0f} | {ratio:.3f} | "
                    f"{q1:.3f}-{q3:.3f} |"
                )
                results[f"{op} / {kind} / {name}"] = {
                    "median_us": median,
                    "delta_us": median - base_median,
                    "ratio": ratio,
                    "ratio_iqr": [q1, q3],
                }
            print()
    if args.json:
        args.json.write_text(json.dumps({"command": sys.argv, "results": results}, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_profile = sub.add_parser("profile", help="sampled time per pipeline stage")
    p_profile.add_argument("--calls", type=int, default=400, help="GetItems (Queries: 1/4)")
    p_profile.add_argument("--seed", type=int, default=7)
    p_profile.add_argument("--text", type=Path, help="write the profiler trees here")
    p_options = sub.add_parser("options", help="client CPU per Config option")
    p_options.add_argument("--rounds", type=int, default=15)
    p_options.add_argument("--warmup", type=int, default=2)
    p_options.add_argument("--gets", type=int, default=300, help="GetItems per variant")
    p_options.add_argument("--queries", type=int, default=75, help="Queries per variant")
    p_options.add_argument("--seed", type=int, default=7)
    p_options.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    return cmd_profile(args) if args.command == "profile" else cmd_options(args)


if __name__ == "__main__":
    sys.exit(main())
