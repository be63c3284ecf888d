"""``singletable backfill``: run ``repo.backfill`` from the command line (one machine with
``--checkpoint``, any number of workers with ``--job``), or show a job's segments
(``--status``)."""

from __future__ import annotations

import argparse
from typing import Any

from ._text import ParagraphHelpFormatter
from .targets import CLIError, live_client, load_repository, load_target, write

_BACKFILL_EPILOG = """\
Example, after adding GSI2 to Order and deploying the table change:

  singletable backfill myapp.models:Shop Order --segments 4 --checkpoint order.json
  singletable backfill myapp.models:Shop Order --segments 64 --job order-gsi2   (every worker)
  singletable backfill myapp.models:Shop Order --job order-gsi2 --status

Scans the table (a parallel Scan over --segments, filtered on the entity's type tags, current
and former), and rewrites each item whose derived attributes are stale (index keys, sparse
membership, Shard fields, the TTL number, the type tag, the stored datetime format) with an
UpdateItem conditioned on the item being unchanged since it was read. Items that changed
meanwhile are read again once, then reported. --dry-run sends no write and reports what would
change. With --checkpoint a killed run started again with the same options resumes where it
stopped (the file is removed when the job finishes). With --job NAME the job's state lives in
the table instead: run the same command on any number of machines at once (a Kubernetes
indexed Job, an AWS Batch array job); each worker leases one segment at a time, and a dead
worker's segment is resumed by another once its lease (--lease seconds) has passed.
--job NAME --status shows every segment; --job NAME --forget deletes the job's state.
Items whose primary key would change are reported; --move moves each in one transaction.
The report goes to stdout, a progress display to stderr (rich's bar when rich is installed
and stderr is a terminal, a plain line otherwise). Exit status 1 when an item could not be
fixed.

The table is the repository's (or --table NAME) at AWS_ENDPOINT_URL_DYNAMODB, --endpoint URL
or AWS, with the default credentials and region (--region)."""


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
    if (args.status or args.forget) and not args.job:
        args.parser.error("--status and --forget name a job: add --job NAME")
    if args.job and args.checkpoint:
        args.parser.error("--job keeps the job's state in the table; drop --checkpoint")
    repository = load_repository(args.target)
    entity = load_entity(repository, args.entity)
    client = live_client(args.endpoint, args.region)
    repo = repository(client, table_name=args.table) if args.table else repository(client)
    try:
        if args.status:
            write(format_status(args.job, repo.backfill_status(args.job)))
            return 0
        if args.forget:
            write(f"backfill job {args.job!r}: {repo.backfill_forget(args.job)} items deleted\n")
            return 0
        report = repo.backfill(
            entity,
            segments=args.segments,
            dry_run=args.dry_run,
            checkpoint=args.checkpoint,
            job=args.job,
            lease_seconds=args.lease,
            progress=not args.quiet,
            max_items_per_second=args.rate,
            move=args.move,
        )
    except SingleTableError as exc:
        raise CLIError(f"{type(exc).__name__}: {exc}", status=1) from None
    write(format_report(report, entity.__qualname__, dry_run=args.dry_run))
    return 1 if report.failed else 0


def format_status(job: str, segments: list[Any]) -> str:
    """``backfill --status``: one line per segment."""
    if not segments:
        return f"backfill job {job!r}: no such job\n"
    done = sum(1 for s in segments if s.done)
    lines = [f"backfill job {job!r}: {done}/{len(segments)} segments done"]
    lines.append(
        f"  {'segment':>7}  {'state':<8} {'scanned':>9} {'updated':>9}  owner, lease, position"
    )
    for s in segments:
        state = "done" if s.done else ("leased" if s.owner else "waiting")
        where = []
        if s.owner and not s.done:
            lease = s.lease_until.strftime("%H:%M:%S") if s.lease_until else "-"
            where.append(f"{s.owner} until {lease} UTC")
        if s.position:
            where.append("after " + ", ".join(f"{a}={v}" for a, v in s.position.items()))
        lines.append(
            f"  {s.segment:>7}  {state:<8} {s.scanned:>9,} {s.updated:>9,}  {'; '.join(where)}"
        )
    return "\n".join(lines) + "\n"


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


def add_backfill(commands: Any) -> None:
    """The ``backfill`` command's parser."""
    backfill = commands.add_parser(
        "backfill",
        help="rewrite an entity's stored items whose derived attributes are stale",
        description="Rewrite the stored items of one entity whose index keys, sparse "
        "membership, Shard fields, TTL number, type tag or datetime format are not what the "
        "model writes now (repo.backfill).",
        epilog=_BACKFILL_EPILOG,
        formatter_class=ParagraphHelpFormatter,
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
    backfill.add_argument(
        "--job",
        metavar="NAME",
        help="keep the job's state in the table: run the same command on any number of workers",
    )
    backfill.add_argument(
        "--lease",
        type=float,
        default=60.0,
        metavar="S",
        help="with --job: seconds a worker holds a segment without renewing it (60)",
    )
    backfill.add_argument("--status", action="store_true", help="with --job: show its segments")
    backfill.add_argument(
        "--forget", action="store_true", help="with --job: delete the job's state items"
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
