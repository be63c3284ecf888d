"""The ``singletable`` command: explain, lint, schema, layout, demo, backfill and stubs.

Targets are named ``MODULE:ATTRIBUTE`` (``myapp.models:Shop``), as uvicorn does: the current
directory is put on ``sys.path`` first, so a module next to you imports. Everything heavy is
imported lazily, so ``import singletable`` never pays for the CLI.

Exit status: 0 on success; 1 when ``lint`` finds an unacknowledged error (or ``demo`` sees a
pattern send other requests than explain promises, or ``backfill`` could not fix an item or
stopped on an error); 2 for usage errors and targets that cannot
be loaded, reported as one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .paths import put_cwd_on_path

PROG = "singletable"
COMMANDS = ("explain", "lint", "schema", "layout", "demo", "backfill", "stubs")


class CLIError(Exception):
    """A user mistake: reported as one line on stderr, exit status ``status``."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) and help on every command."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


# -- targets -----------------------------------------------------------------------------------


def _import_failure(module_name: str, exc: BaseException) -> CLIError:
    from ..errors import SingleTableError

    if (
        isinstance(exc, ModuleNotFoundError)
        and exc.name
        and (module_name == exc.name or module_name.startswith(exc.name + "."))
    ):
        return CLIError(
            f"cannot import module {module_name!r}: no module named {exc.name!r} "
            "(searched the current directory and sys.path)"
        )
    if isinstance(exc, SingleTableError):
        return CLIError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, SyntaxError):
        return CLIError(
            f"importing {module_name!r} failed: syntax error in {exc.filename}:{exc.lineno}: "
            f"{exc.msg}"
        )
    tb = exc.__traceback__
    location = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if "importlib" not in filename and not filename.startswith("<frozen"):
            location = f" ({filename}:{tb.tb_lineno})"
        tb = tb.tb_next
    return CLIError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}{location}")


def load_target(spec: str) -> Any:
    """The object named by ``MODULE:ATTRIBUTE`` (the attribute may be dotted)."""
    import importlib

    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise CLIError(f"target {spec!r} must be MODULE:NAME, e.g. myapp.models:Shop")
    put_cwd_on_path()
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise _import_failure(module_name, exc) from None
    target: Any = module
    path = module_name
    for part in attribute.split("."):
        if not hasattr(target, part):
            import difflib

            names = [n for n in dir(target) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise CLIError(f"{path!r} has no attribute {part!r}{hint}")
        target = getattr(target, part)
        path = f"{path}:{part}" if path == module_name else f"{path}.{part}"
    return target


def load_repository(spec: str) -> Any:
    from .._repository import Repository

    target = load_target(spec)
    if isinstance(target, type) and issubclass(target, Repository) and target is not Repository:
        return target
    raise CLIError(
        f"{spec} is {_describe(target)}, not a Repository subclass "
        "(class Shop(Repository, table=...))"
    )


def load_table(spec: str) -> Any:
    from .._entity import Entity
    from .._repository import Repository
    from .._table import Table

    target = load_target(spec)
    if isinstance(target, Table):
        return target
    if isinstance(target, type) and issubclass(target, Repository) and target is not Repository:
        return target.__singletable_table__
    if isinstance(target, type) and issubclass(target, Entity):
        table = getattr(target, "__singletable_table__", None)
        if isinstance(table, Table):
            return table
    raise CLIError(f"{spec} is {_describe(target)}, not a singletable Table")


def _describe(target: Any) -> str:
    if isinstance(target, type):
        return f"the class {target.__qualname__}"
    return f"a {type(target).__name__}"


# -- commands ----------------------------------------------------------------------------------


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def cmd_explain(args: argparse.Namespace) -> int:
    from .lint import explain_json, explain_markdown

    repository = load_repository(args.target)
    _write(explain_json(repository) if args.format == "json" else explain_markdown(repository))
    return 0


def cmd_stubs(args: argparse.Namespace) -> int:
    from .._repository_base import RepositoryBase
    from .stubs import stub_module

    target = load_target(args.target)
    if not (isinstance(target, type) and issubclass(target, RepositoryBase)):
        raise CLIError(f"{args.target} is {_describe(target)}, not a repository class")
    text = stub_module(target)
    if args.output is None:
        _write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as file:
            file.write(text)
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from .lint import check, exit_status, format_json, format_text

    repository = load_repository(args.target)
    findings = check(repository)
    if args.format == "json":
        _write(format_json(repository, findings))
    else:
        _write(format_text(repository, findings, verbose=args.verbose))
    return exit_status(findings)


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    table = load_table(args.target)
    if args.format == "cloudformation":
        document = table.cloudformation(args.table_name)
    else:
        document = table.create_table_params(args.table_name)
    _write(json.dumps(document, indent=2) + "\n")
    return 0


def _live_client(endpoint: str | None, region: str | None) -> Any:
    import boto3

    session = boto3.session.Session()
    options: dict[str, Any] = {"region_name": region or session.region_name or "us-east-1"}
    if endpoint:
        options["endpoint_url"] = endpoint
        if session.get_credentials() is None:  # a local endpoint takes any credentials
            options["aws_access_key_id"] = "local"
            options["aws_secret_access_key"] = "local"
    return session.client("dynamodb", **options)


def cmd_layout(args: argparse.Namespace) -> int:
    from ..errors import SingleTableError
    from .layout import ItemsError, build_layout, render_text, scan_items
    from .layout_html import render_html
    from .layout_seed import items_from_file

    if args.items and args.table:
        args.parser.error("--table reads a live table; it cannot be combined with --items")
    if args.seed and not args.items:
        args.parser.error("--seed loads seed data given with --items FILE.json")
    if not (args.items or args.endpoint or args.table):
        args.parser.error("give the items: --items FILE.json, or --endpoint URL [--table NAME]")
    if args.max_items < 1:
        args.parser.error("--max-items must be at least 1")
    repository = load_repository(args.target)
    try:
        if args.items:
            items, source = items_from_file(
                repository,
                args.items,
                module=args.target.partition(":")[0],
                seed=args.seed,
                max_items=args.max_items,
            )
        else:
            table_name = args.table or repository.__singletable_table__.name
            client = _live_client(args.endpoint, args.region)
            items = _scan(client, table_name, args.max_items, scan_items)
            source = f"table {table_name}" + (f" at {args.endpoint}" if args.endpoint else "")
        layout = build_layout(repository, items, source=source)
    except (ItemsError, SingleTableError) as exc:
        raise CLIError(str(exc)) from None
    if args.html:
        try:
            with open(args.html, "w", encoding="utf-8") as handle:
                handle.write(render_html(layout))
        except OSError as exc:
            raise CLIError(f"cannot write {args.html}: {exc.strerror or exc}") from None
        sys.stderr.write(f"wrote {args.html} ({len(layout.rows)} rows)\n")
    else:
        _write(render_text(layout))
    return 0


def _scan(client: Any, table_name: str, max_items: int, scan: Any) -> list[dict[str, Any]]:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        items: list[dict[str, Any]] = scan(client, table_name, max_items=max_items)
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise CLIError(
            f"scanning table {table_name!r} failed: {error.get('Code')}: {error.get('Message')}"
        ) from None
    except BotoCoreError as exc:
        raise CLIError(f"scanning table {table_name!r} failed: {exc}") from None
    return items


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import DemoError, run

    try:
        return run(
            endpoint=args.endpoint or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or None,
            example=args.example,
            repository_name=args.repository,
            region=args.region,
            layout=args.layout,
        )
    except DemoError as exc:
        raise CLIError(str(exc), exc.status) from None


def load_entity(repository: Any, name: str) -> Any:
    """An entity of ``repository``'s table, by class name or type tag (or ``MODULE:NAME``)."""
    from .._entity import spec_of

    entities = repository.__singletable_table__.entities
    if ":" in name:
        target = load_target(name)
        if target in entities.values():
            return target
        raise CLIError(f"{name} is not an entity of {repository.__qualname__}'s table")
    for tag, cls in entities.items():
        if name in (cls.__name__, cls.__qualname__, tag) or name in spec_of(cls).type_tags:
            return cls
    known = ", ".join(sorted(cls.__qualname__ for cls in entities.values())) or "none"
    raise CLIError(
        f"{repository.__qualname__}'s table has no entity {name!r} (its entities: {known})"
    )


def cmd_backfill(args: argparse.Namespace) -> int:
    from ..errors import SingleTableError

    if args.segments < 1:
        args.parser.error("--segments must be at least 1")
    if args.rate is not None and args.rate <= 0:
        args.parser.error("--rate must be a positive number of items per second")
    repository = load_repository(args.target)
    entity = load_entity(repository, args.entity)
    client = _live_client(args.endpoint, args.region)
    repo = repository(client, table_name=args.table) if args.table else repository(client)
    try:
        report = repo.backfill(
            entity,
            segments=args.segments,
            dry_run=args.dry_run,
            checkpoint=args.checkpoint,
            progress=not args.quiet,
            max_items_per_second=args.rate,
            move=args.move,
        )
    except SingleTableError as exc:
        raise CLIError(f"{type(exc).__name__}: {exc}", status=1) from None
    _write(format_report(report, entity.__qualname__, dry_run=args.dry_run))
    return 1 if report.failed else 0


def format_report(report: Any, entity: str, *, dry_run: bool = False) -> str:
    """A backfill report as the command prints it."""
    would = " (dry run: nothing written)" if dry_run else ""
    lines = [
        f"backfill {entity}{would}",
        f"  scanned     {report.scanned:,}",
        f"  matched     {report.matched:,}",
        f"  up to date  {report.up_to_date:,}",
        f"  {'would update' if dry_run else 'updated':<11} {report.updated:,}",
        f"  {'would move' if dry_run else 'moved':<11} {report.moved:,}",
        f"  failed      {len(report.failed):,}",
    ]
    if report.consumed_capacity is not None:
        lines.append(f"  capacity    {report.consumed_capacity:,.1f} units")
    for failure in report.failed:
        key = ", ".join(f"{a}={v}" for a, v in failure.key.items())
        lines.append(f"  failed: {key}: {failure.reason}")
    return "\n".join(lines) + "\n"


# -- parser ------------------------------------------------------------------------------------

_DESCRIPTION = """\
Model checks and tools for singletable repositories.

  singletable explain myapp.models:Shop          the access-pattern table (Markdown)
  singletable lint myapp.models:Shop             key design checks (exit 1 on errors)
  singletable schema myapp.models:shop           CreateTable JSON / CloudFormation
  singletable layout myapp.models:Shop --items items.json [--html layout.html]
  singletable demo [--layout shop.html]          the demo shop on an embedded DynamoDB
  singletable backfill myapp.models:Shop Order   rewrite Order items whose keys are stale
  singletable stubs myapp.models:Shop [-o F.pyi] the module with declared signatures (pyright)

Targets are MODULE:NAME; the current directory is on the import path."""

_LINT_EPILOG = """\
Findings have a code, a severity (error, warning, info) and a subject. Only unacknowledged
errors make the exit status 1. Acknowledge a deliberate finding on the repository:

    class Shop(Repository, table=shop):
        lint_acknowledge = {"hot-partition:Order.GSI2": "sparse queue index, deliberate"}

"code:subject" also covers subjects below it ("hot-partition:Order" covers Order.GSI2);
a bare "code" covers every finding of that code. Acknowledged findings are counted in one
line; --verbose lists each with its reason. Codes: scan, key-collision,
unsortable-sort-key, projection-mismatch, hot-partition, prefix-overlap, unused-index,
too-many-indexes, unread-index, collection-parent-order, filter, implicit-type-tag,
former-types."""

_BACKFILL_EPILOG = """\
Example, after adding GSI2 to Order and deploying the table change:

  singletable backfill myapp.models:Shop Order --segments 4 --checkpoint order.json

Scans the table (a parallel Scan over --segments, filtered on the entity's type tags, current
and former), and rewrites each item whose derived attributes are stale (index keys, sparse
membership, Shard fields, the TTL number, the type tag, the stored datetime format) with an
UpdateItem conditioned on the item being unchanged since it was read. Items that changed
meanwhile are read again once, then reported. --dry-run sends no write and reports what would
change. With --checkpoint a killed run started again with the same options resumes where it
stopped (the file is removed when the job finishes). Items whose primary key would change
are reported; --move moves each in one transaction. The report goes to stdout, a progress
line to stderr. Exit status 1 when an item could not be fixed.

The table is the repository's (or --table NAME) at AWS_ENDPOINT_URL_DYNAMODB, --endpoint URL
or AWS, with the default credentials and region (--region)."""

_LAYOUT_EPILOG = """\
--items FILE.json takes either format; the JSON decides:
  wire-format items  a JSON list like [{"PK": {"S": "CUSTOMER#42"}, "SK": {"S": "PROFILE"},
                     "_type": {"S": "CUSTOMER"}}], or an object with an "Items" list (the
                     output of `aws dynamodb scan`): shown as they are.
  seed data          any other JSON object, such as the examples' data.json
                     ({"customers": [...], ...}): loaded through the repository. The table is
                     created in an embedded DynamoDB (moto: pip install "singletable[demo]"),
                     seed(repo) writes it and the items are scanned back. seed is looked up in
                     MODULE, then in the repository's module (--seed MODULE:FUNCTION to name
                     another); it must read its module-level DATA path, which points at
                     FILE.json while it runs.
--endpoint/--table read a live table with a paginated Scan: an inspection tool, never an access
pattern.

The HTML page has a tab per view: the table, then every secondary index (GSI and LSI, the
inverted index too) with the items regrouped by its keys, only the items that carry them
(sparse indexes) and only the attributes it projects (KEYS_ONLY, INCLUDE). Rows are one line;
click a row to wrap its cells. Non-key attributes are columns per entity type."""


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = _Parser(
        prog=PROG,
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    explain = commands.add_parser(
        "explain",
        help="print the access-pattern table",
        description="Print Repo.explain(): one row per pattern with its operation (GetItem or "
        "Query), index, key condition, entity types and order.",
    )
    explain.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    explain.add_argument("--format", choices=("markdown", "json"), default="markdown")
    explain.set_defaults(handler=cmd_explain)

    lint = commands.add_parser(
        "lint",
        help="check the key design (hot partitions, collisions, overlaps, ...)",
        description="Check a repository, its table and its entities for key design problems.",
        epilog=_LINT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lint.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    lint.add_argument("--format", choices=("text", "json"), default="text")
    lint.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list acknowledged findings with their reasons (text output collapses them into "
        "one line; json always lists them)",
    )
    lint.set_defaults(handler=cmd_lint)

    schema = commands.add_parser(
        "schema",
        help="print CreateTable JSON or a CloudFormation resource",
        description="Print the table's CreateTable parameters (json) or an "
        "AWS::DynamoDB::Table resource (cloudformation). The target may also be a "
        "Repository or Entity class (its table is used).",
    )
    schema.add_argument("target", metavar="MODULE:table", help="the Table object")
    schema.add_argument("--format", choices=("json", "cloudformation"), default="json")
    schema.add_argument("--table-name", metavar="NAME", help="physical table name to use")
    schema.set_defaults(handler=cmd_schema)

    layout = commands.add_parser(
        "layout",
        help="show items grouped by partition and what each pattern returns",
        description="Show items grouped by partition (keys of the table and every index, type "
        "tag, attributes), each secondary index's items grouped by its keys, and, for each "
        "access pattern, the rows it returns per partition. Prints an aligned table, or writes "
        "one self-contained HTML file with --html.",
        epilog=_LAYOUT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    layout.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    source = layout.add_mutually_exclusive_group()
    source.add_argument(
        "--items",
        metavar="FILE.json",
        help="wire-format items, or seed data such as an example's data.json (see below)",
    )
    source.add_argument("--endpoint", metavar="URL", help="scan a live table at this endpoint")
    layout.add_argument("--table", metavar="NAME", help="live table name (default: the Table's)")
    layout.add_argument("--region", metavar="REGION", help="AWS region for a live table")
    layout.add_argument(
        "--max-items", type=int, default=1000, metavar="N", help="scan at most N items (1000)"
    )
    layout.add_argument(
        "--seed",
        metavar="MODULE:FUNCTION",
        help="the seed(repo) that loads the --items seed data (default: seed in MODULE, then "
        "in the repository's module)",
    )
    layout.add_argument("--html", metavar="OUT", help="write a self-contained HTML file")
    layout.set_defaults(handler=cmd_layout, parser=layout)

    demo = commands.add_parser(
        "demo",
        help="run the demo shop end to end on an embedded DynamoDB",
        description="Create the demo shop's table (the shop ships with the package), load its "
        "seed data, print the explain table and lint result, then run every access pattern and "
        "show the requests it sent. Without an endpoint it uses an embedded in-process DynamoDB "
        '(moto: pip install "singletable[demo]"); with --endpoint or AWS_ENDPOINT_URL_DYNAMODB '
        "it runs there in a table it creates and deletes.",
    )
    demo.add_argument("--endpoint", metavar="URL", help="DynamoDB endpoint (DynamoDB Local, AWS)")
    demo.add_argument(
        "--layout",
        metavar="OUT.html",
        help="also write the layout view of the demo's items (HTML, as `singletable layout "
        "--html` does)",
    )
    demo.add_argument(
        "--example",
        metavar="MODULE",
        default="singletable.demo_shop.repository",
        help="module with the repository, seed(repo) and EXAMPLE_CALLS "
        "(default: the packaged shop, singletable.demo_shop.repository)",
    )
    demo.add_argument(
        "--repository", metavar="NAME", default="Shop", help="repository class name (Shop)"
    )
    demo.add_argument("--region", metavar="REGION", help="AWS region (default us-east-1)")
    demo.set_defaults(handler=cmd_demo)

    backfill = commands.add_parser(
        "backfill",
        help="rewrite an entity's stored items whose derived attributes are stale",
        description="Rewrite the stored items of one entity whose index keys, sparse "
        "membership, Shard fields, TTL number, type tag or datetime format are not what the "
        "model writes now (repo.backfill).",
        epilog=_BACKFILL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    backfill.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    backfill.add_argument("entity", metavar="Entity", help="entity class name (or type tag)")
    backfill.add_argument(
        "--segments", type=int, default=1, metavar="N", help="parallel Scan segments (1)"
    )
    backfill.add_argument("--dry-run", action="store_true", help="send no write; report")
    backfill.add_argument(
        "--checkpoint", metavar="FILE", help="record progress in FILE.json and resume from it"
    )
    backfill.add_argument("--rate", type=float, metavar="N", help="scan at most N items per second")
    backfill.add_argument(
        "--move", action="store_true", help="move items whose primary key changed"
    )
    backfill.add_argument("--endpoint", metavar="URL", help="DynamoDB endpoint URL")
    backfill.add_argument("--region", metavar="REGION", help="AWS region")
    backfill.add_argument("--table", metavar="NAME", help="physical table name (the Table's)")
    backfill.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    backfill.set_defaults(handler=cmd_backfill, parser=backfill)

    _add_stubs(commands)
    return parser


def _add_stubs(commands: Any) -> None:
    """The ``stubs`` command's parser."""
    stubs = commands.add_parser(
        "stubs",
        help="print the module with every attribute pattern as a declared signature",
        description="Print the repository's module with every attribute pattern of the "
        "repository (and of the classes it inherits patterns from in that module) rewritten "
        "as a declared signature: keyword types from the entity fields, the result type "
        "precise. Save it as the module (the switch to declared signatures) or as a .pyi "
        "stub for pyright, which has no plugins (mypy users enable singletable.mypy instead).",
    )
    stubs.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    stubs.add_argument("-o", "--output", metavar="FILE", help="write to FILE (e.g. a .pyi)")
    stubs.set_defaults(handler=cmd_stubs)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error(f"choose a command: {', '.join(COMMANDS)}")
    try:
        status: int = args.handler(args)
    except CLIError as exc:
        sys.stderr.write(f"{PROG} {args.command}: error: {exc}\n")
        return exc.status
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG} {args.command}: interrupted\n")
        return 130
    except BrokenPipeError:
        # the reader went away (| head): quiet exit, as cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
