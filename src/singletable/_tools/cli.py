"""The ``singletable`` command: explain, lint, schema, layout, demo and backfill.

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
COMMANDS = ("explain", "lint", "schema", "layout", "demo", "backfill")


# -- commands ----------------------------------------------------------------------------------


def cmd_explain(args: argparse.Namespace) -> int:
    from .lint import explain_json, explain_markdown

    repository = load_repository(args.target)
    items = sample_items(args.items) if args.items else None
    costs = bool(args.costs or items)
    show = explain_json if args.format == "json" else explain_markdown
    write(show(repository, costs=costs, items=items))
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


def cmd_lint(args: argparse.Namespace) -> int:
    from .lint import check, exit_status, format_json, format_text

    repository = load_repository(args.target)
    findings = check(repository)
    if args.format == "json":
        write(format_json(repository, findings))
    else:
        write(format_text(repository, findings, verbose=args.verbose))
    return exit_status(findings)


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    table = load_table(args.target)
    if args.format == "cloudformation":
        document = table.cloudformation(args.table_name)
    else:
        document = table.create_table_params(args.table_name)
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
        )
    except DemoError as exc:
        raise CLIError(str(exc), exc.status) from None


# -- parser ------------------------------------------------------------------------------------

_DESCRIPTION = """\
Model checks and tools for singletable repositories.

  singletable explain myapp.models:Shop          the access-pattern table (Markdown)
  singletable lint myapp.models:Shop             key design checks (exit 1 on errors)
  singletable schema myapp.models:shop           CreateTable JSON / CloudFormation
  singletable layout myapp.models:Shop --items items.json [--html layout.html]
  singletable demo [--layout shop.html]          the demo shop on an embedded DynamoDB
  singletable backfill myapp.models:Shop Order   rewrite Order items whose keys are stale

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
former-types, propagation, write-amplification."""

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

    parser = Parser(
        prog=PROG,
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    explain = commands.add_parser(
        "explain",
        help="print the access-pattern table",
        description="Print Repo.explain(): one row per pattern with its operation (GetItem or "
        "Query), index, key condition, entity types and order.",
    )
    explain.add_argument("target", metavar="MODULE:Repo", help="the repository class")
    explain.add_argument("--format", choices=("markdown", "json"), default="markdown")
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

    add_backfill(commands)
    return parser


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
