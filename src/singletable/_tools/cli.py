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
from typing import Any

from .cli_backfill import add_backfill
from .targets import CLIError, Parser, live_client, load_repository, load_table, write

__all__ = ["CLIError", "build_parser", "load_repository", "load_table", "main"]

PROG = "singletable"
COMMANDS = ("explain", "lint", "schema", "layout", "demo", "backfill", "stubs")


def table_format(chosen: str) -> str:
    """``auto``: ``text`` on a terminal, ``markdown`` in a pipe or a file."""
    from ._text import is_terminal

    if chosen != "auto":
        return chosen
    return "text" if is_terminal(sys.stdout) else "markdown"


def cmd_explain(args: argparse.Namespace) -> int:
    from ._text import output_width
    from .lint import explain_json, explain_markdown, explain_text

    repository = load_repository(args.target)
    items = sample_items(args.items) if args.items else None
    costs = bool(args.costs or items)
    chosen = table_format(args.format)
    if chosen == "json":
        write(explain_json(repository, costs=costs, items=items))
    elif chosen == "text":
        write(explain_text(repository, output_width(sys.stdout), costs=costs, items=items))
    else:
        write(explain_markdown(repository, costs=costs, items=items))
    return 0


def sample_items(path: str) -> list[dict[str, Any]]:
    """``--items FILE.json``: a JSON list of wire-format items (or a Scan's ``{"Items"}``)."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise CLIError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if isinstance(data, dict):
        data = data.get("Items")
    if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
        raise CLIError(
            f"{path} must hold a JSON list of items in wire form "
            '([{"PK": {"S": "..."}, ...}]) or a Scan\'s {"Items": [...]}'
        )
    return data


def cmd_stubs(args: argparse.Namespace) -> int:
    from .stubs import stub_module

    text = stub_module(load_repository(args.target, twins=True))
    if args.output is None:
        write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as file:
            file.write(text)
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from ._text import output_width
    from .lint import check, exit_status, format_json, format_markdown, format_text

    repository = load_repository(args.target)
    findings = check(repository)
    if args.format == "json":
        write(format_json(repository, findings))
    elif args.format == "markdown":
        write(format_markdown(repository, findings))
    else:
        width = output_width(sys.stdout)
        write(format_text(repository, findings, verbose=args.verbose, width=width))
    return exit_status(findings)


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from ..errors import ModelDefinitionError
    from ._schema import NEEDS_REPOSITORY, schema_document

    if args.format in NEEDS_REPOSITORY:
        try:
            target = load_repository(args.target)
        except CLIError as exc:
            raise CLIError(
                f"--format {args.format} needs the repository (its patterns and entities), "
                f"MODULE:Repo: {exc}"
            ) from None
    else:
        target = load_table(args.target)
    try:
        document = schema_document(args, target)
    except ModelDefinitionError as exc:  # a native key attribute no imported entity types
        raise CLIError(f"{exc} (name the module that declares them, or a Repository)") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    write(json.dumps(document, indent=2) + "\n")
    return 0


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
            client = live_client(args.endpoint, args.region)
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
        write(render_text(layout))
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
            table_format=table_format(args.format),
        )
    except DemoError as exc:
        raise CLIError(str(exc), exc.status) from None


# -- parser (the help texts are in _help) -----------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The command line: one sub-parser per command, each built by its ``_add_*``."""
    from .. import __version__
    from . import _help as text
    from ._text import ParagraphHelpFormatter

    parser = Parser(
        prog=PROG,
        description=text.DESCRIPTION,
        formatter_class=ParagraphHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _add_explain(commands)
    _add_lint(commands)
    _add_schema(commands)
    _add_layout(commands)
    _add_demo(commands)
    add_backfill(commands)
    _add_stubs(commands)
    return parser


def _add_explain(commands: Any) -> None:
    from . import _help as text

    explain = commands.add_parser(
        "explain",
        help="print the access-pattern table",
        description="Print Repo.explain(): one row per pattern with its operation (GetItem or "
        "Query), index, key condition, entity types and order.",
    )
    explain.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    explain.add_argument(
        "--format",
        choices=("auto", "text", "markdown", "json"),
        default="auto",
        help=text.EXPLAIN_FORMAT,
    )
    explain.add_argument(
        "--costs",
        action="store_true",
        help="add the read units of one call (RCU) and each write verb's units per table and "
        "index (WCU), from item sizes estimated from the models",
    )
    explain.add_argument(
        "--items",
        metavar="FILE.json",
        help="price from sample items instead (a JSON list of wire-format items); implies --costs",
    )
    explain.set_defaults(handler=cmd_explain)


def _add_lint(commands: Any) -> None:
    from ..errors import DOCS_URL
    from . import _help as text
    from ._text import ParagraphHelpFormatter

    lint = commands.add_parser(
        "lint",
        help="check the key design (hot partitions, collisions, overlaps, ...)",
        description="Check a repository, its table and its entities for key design problems.",
        epilog=text.LINT_EPILOG.replace("{url}", f"{DOCS_URL}lint/"),
        formatter_class=ParagraphHelpFormatter,
    )
    lint.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    lint.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help=text.LINT_FORMAT,
    )
    lint.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list acknowledged findings with their reasons (text output collapses them into "
        "one line; json always lists them)",
    )
    lint.set_defaults(handler=cmd_lint)


def _add_schema(commands: Any) -> None:
    from ._schema import add_schema_parser

    add_schema_parser(commands).set_defaults(handler=cmd_schema)


def _add_layout(commands: Any) -> None:
    from . import _help as text
    from ._text import ParagraphHelpFormatter

    layout = commands.add_parser(
        "layout",
        help="show items grouped by partition and what each pattern returns",
        description="Show items grouped by partition (keys of the table and every index, type "
        "tag, attributes), each secondary index's items grouped by its keys, and, for each "
        "access pattern, the rows it returns per partition. Prints an aligned table, or writes "
        "one self-contained HTML file with --html.",
        epilog=text.LAYOUT_EPILOG,
        formatter_class=ParagraphHelpFormatter,
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


def _add_demo(commands: Any) -> None:
    from . import _help as text

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
    demo.add_argument(
        "--format",
        choices=("auto", "text", "markdown"),
        default="auto",
        help=text.DEMO_FORMAT,
    )
    demo.set_defaults(handler=cmd_demo)


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
