"""``singletable demo``: the demo shop end to end, on an embedded or a real DynamoDB.

Steps: import the example (by default the shop that ships with the package,
``singletable.demo_shop.repository``: a repository class ``Shop``, ``seed(repo)`` and
``EXAMPLE_CALLS``, a list of ``(pattern name, call keywords)``), start the backend, create the
table, load the seed data, print the explain table and the lint result (acknowledged findings
as one line), then call every pattern and print, per pattern, the operations actually sent
(counted by botocore ``before-call`` event hooks on the client, so nothing is taken on trust),
the number of requests, the consumed capacity DynamoDB reported and the typed result. With
``layout=PATH`` it then scans the table and writes the layout view of its items as HTML.

Without an endpoint the backend is moto, in this process (the ``demo`` extra:
``pip install "singletable[demo]"``). With ``--endpoint URL`` or ``AWS_ENDPOINT_URL_DYNAMODB``
it runs against that endpoint (DynamoDB Local, real AWS) in a table it creates under a unique
name and deletes afterwards.
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import IO, Any

DEFAULT_EXAMPLE = "singletable.demo_shop.repository"
MOTO_MISSING = (
    'the embedded DynamoDB needs moto: pip install "singletable[demo]" '
    "(or run against a DynamoDB endpoint with --endpoint URL)"
)
RESULT_WIDTH = 110


class DemoError(Exception):
    """A demo failure reported as one line (status 2: setup/usage, 1: the run failed)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


# -- output ------------------------------------------------------------------------------------


class Progress:
    """Step lines with timings; a live counter on terminals for long steps."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.live = bool(getattr(out, "isatty", lambda: False)())
        self._label = ""
        self._last = 0.0

    def print(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    @contextlib.contextmanager
    def step(self, label: str) -> Iterator[Progress]:
        self._label = label
        start = time.perf_counter()
        self.out.write(f"... {label}")
        self.out.write("\r" if self.live else "\n")
        self.out.flush()
        yield self
        elapsed = time.perf_counter() - start
        self.out.write(f"{'[done]':<6} {label} ({elapsed:.2f} s)\x1b[K\n" if self.live else "")
        if not self.live:
            self.out.write(f"       done in {elapsed:.2f} s\n")
        self.out.flush()

    def tick(self, detail: str) -> None:
        """Update the current step's counter (terminals only, at most 20 times a second)."""
        now = time.perf_counter()
        if self.live and now - self._last > 0.05:
            self._last = now
            self.out.write(f"... {self._label}: {detail}\x1b[K\r")
            self.out.flush()


def _short(value: Any, width: int = 24) -> str:
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_short(v, width) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, datetime):
        text = value.isoformat().replace("+00:00", "Z")
    elif isinstance(value, (date, Decimal)):
        text = str(value)
    elif isinstance(value, str):
        text = repr(value)
    else:
        text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def short_repr(value: Any, width: int = RESULT_WIDTH) -> str:
    """A one-line summary of a pattern result (entity, Page, Collection, KeyRef, None)."""
    from pydantic import BaseModel

    from .._paging import Collection, KeyRef, Page

    def entity(item: Any) -> str:
        if isinstance(item, BaseModel):
            fields = list(type(item).model_fields)[:3]
            inner = ", ".join(f"{f}={_short(getattr(item, f))}" for f in fields)
            more = ", …" if len(type(item).model_fields) > 3 else ""
            return f"{type(item).__qualname__}({inner}{more})"
        if isinstance(item, KeyRef):
            return repr(item)
        return _short(item, 40)

    if isinstance(value, (Page, Collection)):
        head = repr(value)
        items = [entity(i) for i in value.items[:2]]
        if len(value.items) > 2:
            items.append("…")
        text = head + (": " + ", ".join(items) if items else "")
    elif isinstance(value, list):
        text = f"[{', '.join(entity(i) for i in value[:2])}{', …' if len(value) > 2 else ''}]"
    else:
        text = entity(value)
    return text if len(text) <= width else text[: width - 1] + "…"


# -- the example -------------------------------------------------------------------------------


def import_example(name: str) -> ModuleType:
    """Import the example module, with the current directory on the import path."""
    import importlib

    from .paths import put_cwd_on_path

    put_cwd_on_path()
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not (name == missing or name.startswith(missing + ".")):
            raise DemoError(f"importing the example {name!r} failed: {exc}") from None
    raise DemoError(
        f"cannot import the example module {name!r} (searched the current directory and "
        f"sys.path); leave out --example for the packaged shop ({DEFAULT_EXAMPLE})"
    )


def _example_parts(
    module: ModuleType, repository_name: str
) -> tuple[Any, Any, list[tuple[str, dict[str, Any]]]]:
    from .._repository import Repository

    repository = getattr(module, repository_name, None)
    if not (isinstance(repository, type) and issubclass(repository, Repository)):
        raise DemoError(
            f"{module.__name__} has no Repository class {repository_name!r} (--repository NAME)"
        )
    seed = getattr(module, "seed", None)
    if not callable(seed):
        raise DemoError(f"{module.__name__} has no seed(repo) function")
    calls = getattr(module, "EXAMPLE_CALLS", None)
    if not isinstance(calls, Sequence) or not all(
        isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], Mapping) for c in calls
    ):
        raise DemoError(
            f"{module.__name__}.EXAMPLE_CALLS must be a list of (pattern name, keywords) pairs"
        )
    return repository, seed, [(str(n), dict(kw)) for n, kw in calls]


# -- request counting --------------------------------------------------------------------------


class RequestLog:
    """Operations the client actually sends (botocore ``before-call`` events) and the
    consumed capacity the repository's hook reports."""

    def __init__(self) -> None:
        self.operations: list[str] = []
        self.capacity: list[Any] = []
        self.total = 0
        self.listeners: list[Any] = []

    def before_call(self, model: Any = None, **_: Any) -> None:
        name = getattr(model, "name", "?")
        self.operations.append(name)
        self.total += 1
        for listener in self.listeners:
            listener(self)

    def hook(self, info: Any) -> None:
        self.capacity.append(info.consumed_capacity)

    def reset(self) -> None:
        self.operations = []
        self.capacity = []

    def capacity_units(self) -> float | None:
        units = None
        for entry in self.capacity:
            for part in entry if isinstance(entry, list) else [entry]:
                if isinstance(part, Mapping) and "CapacityUnits" in part:
                    units = (units or 0.0) + float(part["CapacityUnits"])
        return units


def _attach(client: Any, log: RequestLog) -> None:
    client.meta.events.register("before-call.dynamodb.*", log.before_call)


# -- backends ----------------------------------------------------------------------------------


def _embedded(stack: contextlib.ExitStack, table: Any, progress: Progress) -> tuple[Any, str]:
    from ..testing import local_table

    with progress.step(
        f"starting the embedded DynamoDB (moto, in this process) and creating table {table.name}"
    ):
        client = stack.enter_context(local_table(table, table_name=table.name))
    return client, table.name


def _remote(
    stack: contextlib.ExitStack, table: Any, endpoint: str, region: str | None, progress: Progress
) -> tuple[Any, str]:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    session = boto3.session.Session()
    options: dict[str, Any] = {
        "region_name": region or session.region_name or "us-east-1",
        "endpoint_url": endpoint,
    }
    if session.get_credentials() is None:
        options["aws_access_key_id"] = "local"
        options["aws_secret_access_key"] = "local"
    client = session.client("dynamodb", **options)
    name = f"{table.name}-demo-{uuid.uuid4().hex[:8]}"
    try:
        with progress.step(f"creating table {name} at {endpoint} (deleted at the end)"):
            table.create(client, table_name=name, timeout=120.0)
    except (BotoCoreError, ClientError) as exc:
        raise DemoError(f"cannot create a table at {endpoint}: {exc}", 1) from None

    def delete() -> None:
        try:
            client.delete_table(TableName=name)
            progress.print(f"deleted table {name}")
        except (BotoCoreError, ClientError) as exc:
            progress.print(f"could not delete table {name}: {exc}")

    stack.callback(delete)
    return client, name


# -- the run -----------------------------------------------------------------------------------


def _layout_target(path: str | Path) -> Path:
    """The layout file to write, checked before anything runs."""
    target = Path(path)
    if target.is_dir():
        raise DemoError(f"--layout {path}: is a directory; give a file name such as shop.html")
    folder = target.parent
    if not folder.is_dir():
        raise DemoError(f"--layout {path}: the folder {folder} does not exist")
    return target


def _write_layout(
    repository: Any, client: Any, table_name: str, target: Path, progress: Progress
) -> None:
    from .layout import build_layout, scan_items
    from .layout_html import render_html

    with progress.step(f"scanning table {table_name} (inspection only) for the layout view"):
        items = scan_items(client, table_name)
        view = build_layout(repository, items, source=f"the demo table {table_name}")
        try:
            target.write_text(render_html(view), encoding="utf-8")
        except OSError as exc:
            raise DemoError(f"cannot write {target}: {exc.strerror or exc}") from None
    progress.print(f"       wrote {target} ({len(view.rows)} items): open it in a browser")


def expected_operations(operation: str) -> list[str]:
    """An explain row's operation as the requests it stands for: ``Query+BatchGetItem`` is
    one of each, ``Query x8`` (a scatter over 8 shards) is 8 Queries."""
    sent: list[str] = []
    for part in operation.split("+"):
        name, _, times = part.partition(" x")
        sent += [name] * (int(times) if times.isdigit() else 1)
    return sent


def operations_text(sent: Sequence[str]) -> str:
    """Operations as explain writes them: runs of one operation as ``Query x8``."""
    parts: list[str] = []
    for name, run in itertools.groupby(sent):
        times = len(list(run))
        parts.append(name if times == 1 else f"{name} x{times}")
    return "+".join(parts)


def _call_text(name: str, keywords: Mapping[str, Any]) -> str:
    args = ", ".join(f"{k}={_short(v, 40)}" for k, v in keywords.items())
    return f"{name}({args})"


def _fit_line(line: str, stream: IO[str]) -> str:
    """``line`` cut to the terminal's width on a terminal (the result's end goes first)."""
    from ._text import is_terminal, output_width

    columns = output_width(stream) if is_terminal(stream) else None
    return line if columns is None or len(line) <= columns else line[: columns - 1] + "…"


def _print_model(progress: Progress, repository: Any, table_format: str, width: int | None) -> None:
    """The explain table (text or Markdown) and the lint report, wrapped to ``width``."""
    from .lint import check, explain_markdown, explain_text, format_text

    progress.print("\n## Access patterns (explain)\n")
    if table_format == "text":
        table = explain_text(repository, width)
    else:
        table = explain_markdown(repository)
    progress.print(table.rstrip("\n"))
    progress.print("\n## Lint\n")
    progress.print(format_text(repository, check(repository), width=width).rstrip("\n"))


def run(
    *,
    endpoint: str | None = None,
    example: str = DEFAULT_EXAMPLE,
    repository_name: str = "Shop",
    region: str | None = None,
    layout: str | Path | None = None,
    out: IO[str] | None = None,
    table_format: str = "markdown",
) -> int:
    """Run the demo; returns the exit status (1 if a pattern sent other requests than its
    explain row promises). ``layout``: also write the layout view of the table's items (HTML)
    to that file. ``table_format``: the explain table as ``"markdown"`` or ``"text"`` (aligned
    and, like the lint report, wrapped to the terminal's width)."""
    from ._text import output_width

    stream = out or sys.stdout
    progress = Progress(stream)
    started = time.perf_counter()
    layout_target = _layout_target(layout) if layout is not None else None
    if not endpoint:
        try:
            import moto  # noqa: F401  (the demo extra)
        except ImportError:
            raise DemoError(MOTO_MISSING) from None
    module = import_example(example)
    repository, seed, calls = _example_parts(module, repository_name)
    table = repository.__singletable_table__
    progress.print(f"singletable demo: {module.__name__}:{repository.__qualname__}")
    log = RequestLog()
    with contextlib.ExitStack() as stack:
        if endpoint:
            client, table_name = _remote(stack, table, endpoint, region, progress)
        else:
            client, table_name = _embedded(stack, table, progress)
        _attach(client, log)
        repo = repository(client=client, table_name=table_name, hooks=(log.hook,))

        with progress.step("loading the seed data through the repository") as step:
            before = log.total
            log.listeners.append(lambda lg: step.tick(f"{lg.total - before} requests"))
            seed(repo)
            log.listeners.clear()
            seeded = log.total - before
        progress.print(f"       {seeded} write requests")

        _print_model(progress, repository, table_format, output_width(stream))

        progress.print("\n## Every pattern, run (operation sent, requests, capacity, result)\n")
        rows = {row.pattern: row for row in repository.explain()}
        failures, requests, scans = _run_calls(repo, repository, rows, calls, log, progress, stream)
        missing = [n for n in rows if n not in {c for c, _ in calls}]
        if missing:
            progress.print(f"\nnot exercised by EXAMPLE_CALLS: {', '.join(missing)}")
        if layout_target is not None:
            progress.print("")
            _write_layout(repository, client, table_name, layout_target, progress)
    elapsed = time.perf_counter() - started
    verdict = "every pattern sent what explain says" if not failures else f"{failures} failed"
    progress.print(
        f"\ndemo finished in {elapsed:.1f} s: {len(calls)} pattern calls, {requests} requests, "
        f"{scans} scans; {verdict}"
    )
    return 0 if not failures else 1


def _run_calls(
    repo: Any,
    repository: Any,
    rows: dict[str, Any],
    calls: Any,
    log: RequestLog,
    progress: Progress,
    stream: IO[str],
) -> tuple[int, int, int]:
    """Run every example call, one line each: (failures, requests sent, scans sent). A call
    fails when it raises or sends other requests than its explain row states."""
    failures = 0
    requests = 0
    scans = 0
    width = max((len(n) for n, _ in calls), default=10)
    op_width = max((len(r.operation) for r in rows.values()), default=7)
    for name, keywords in calls:
        row = rows.get(name)
        if row is None:
            progress.print(f"[!!] {name}: no such pattern on {repository.__qualname__}")
            failures += 1
            continue
        log.reset()
        try:
            result: Any = getattr(repo, name)(**keywords)
            text = short_repr(result)
        except Exception as exc:
            text = f"raised {type(exc).__name__}: {exc}"
            failures += 1
        sent = list(log.operations)
        requests += len(sent)
        scans += sent.count("Scan")
        expected = expected_operations(row.operation)
        ok = bool(sent) and sent == expected[: len(sent)] and not text.startswith("raised")
        failures += 0 if ok else 1
        units = log.capacity_units()
        capacity = f"{units:g} RCU" if units is not None else "capacity n/a"
        operation = operations_text(sent) or "nothing sent"
        count = f"{len(sent)} request" + ("" if len(sent) == 1 else "s")
        line = (
            f"[{'ok' if ok else '!!'}] {name:<{width}}  {operation:<{op_width}}  "
            f"{count:<10}  {capacity:<7}  {_call_text(name, keywords)} -> {text}"
        )
        progress.print(_fit_line(line, stream))
    return failures, requests, scans
