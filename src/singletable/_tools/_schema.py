"""``singletable schema``: the table as CreateTable parameters, a CloudFormation resource or
template, a least-privilege IAM policy, or a NoSQL Workbench data model."""

from __future__ import annotations

import argparse
from typing import Any

FORMATS = ("json", "cloudformation", "iam", "workbench")
NEEDS_REPOSITORY = ("iam", "workbench")

_EPILOG = """\
formats:
  json            CreateTable parameters (the Table's, with its production settings)
  cloudformation  an AWS::DynamoDB::Table resource; --template for a complete template
                  (the resource and outputs: table name, ARN, stream ARN)
  iam             a least-privilege IAM policy for the repository: the actions its patterns
                  and write verbs send, on the table's and indexes' ARNs (--read-only: the
                  patterns only; --with-backfill: the table Scan of `singletable backfill`;
                  --with-streams: reading the table's stream, as a StreamRouter does)
  workbench       a NoSQL Workbench data model: the table, its indexes and a facet per entity
                  type, with the sample items of --items FILE.json (wire items or seed data,
                  as `singletable layout --items` takes them)

The target is a Table, a Repository or an Entity class (its table); iam and workbench need the
Repository (its patterns and entities)."""


def add_schema_parser(commands: Any) -> argparse.ArgumentParser:
    """The ``schema`` subcommand's parser."""
    from ._text import ParagraphHelpFormatter

    schema: argparse.ArgumentParser = commands.add_parser(
        "schema",
        help="print CreateTable JSON, CloudFormation, an IAM policy or a Workbench model",
        description="Print the table's CreateTable parameters, an AWS::DynamoDB::Table resource "
        "or template, a least-privilege IAM policy or a NoSQL Workbench data model.",
        epilog=_EPILOG,
        formatter_class=ParagraphHelpFormatter,
    )
    schema.add_argument("target", metavar="MODULE:NAME", help="the Table (or Repository) object")
    schema.add_argument(
        "--format", choices=FORMATS, default="json", help="what to print (json; see below)"
    )
    schema.add_argument("--table-name", metavar="NAME", help="physical table name to use")
    schema.add_argument(
        "--template", action="store_true", help="cloudformation: a complete template"
    )
    policy = schema.add_argument_group("iam")
    policy.add_argument("--account", metavar="ID", default="*", help="AWS account id (*)")
    policy.add_argument("--region", metavar="REGION", default="*", help="AWS region (*)")
    policy.add_argument("--partition", metavar="NAME", default="aws", help="ARN partition (aws)")
    policy.add_argument("--read-only", action="store_true", help="the patterns only, no writes")
    policy.add_argument("--with-backfill", action="store_true", help="also repo.backfill")
    policy.add_argument("--with-streams", action="store_true", help="also read the stream")
    schema.add_argument(
        "--items", metavar="FILE.json", help="workbench: sample items (wire items or seed data)"
    )
    return schema


def schema_document(args: argparse.Namespace, target: Any) -> dict[str, Any]:
    """The document ``args`` ask for, of ``target``: the repository for the formats in
    ``NEEDS_REPOSITORY``, else the table. ``ValueError`` for options that cannot hold."""
    if args.format == "iam":
        from .iam import iam_policy

        return iam_policy(
            target,
            account=args.account,
            region=args.region,
            partition=args.partition,
            table_name=args.table_name,
            read_only=args.read_only,
            backfill=args.with_backfill,
            streams=args.with_streams,
        )
    if args.format == "workbench":
        return _workbench(target, args)
    if args.format == "cloudformation":
        document: dict[str, Any] = target.cloudformation(args.table_name, template=args.template)
        return document
    params: dict[str, Any] = target.create_table_params(args.table_name)
    return params


def _workbench(repository: Any, args: argparse.Namespace) -> dict[str, Any]:
    from ..errors import SingleTableError
    from .layout import ItemsError
    from .workbench import workbench_model

    items = None
    if args.items:
        from .layout_seed import items_from_file

        try:
            items, _ = items_from_file(
                repository, args.items, module=args.target.partition(":")[0], seed=None
            )
        except (ItemsError, SingleTableError) as exc:
            raise ValueError(str(exc)) from None
    model: dict[str, Any] = workbench_model(repository, items, table_name=args.table_name)
    return model
