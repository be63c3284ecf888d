"""docs/migrations.md "Many machines": the Kubernetes indexed Job and the AWS Batch array job
are valid YAML of the documented shape, and the command each runs is one the CLI accepts, the
same job on every worker. (They are not run: no cluster here.)"""

from __future__ import annotations

from typing import Any

import yaml

from singletable._tools.cli import build_parser
from tests.project.test_docs import DOCS, fenced_blocks

PAGE = DOCS / "migrations.md"


def manifests() -> list[Any]:
    blocks = [b for b in fenced_blocks(PAGE.read_text()) if b.language == "yaml"]
    return [yaml.safe_load(block.code) for block in blocks]


def backfill_args(command: list[str]) -> Any:
    assert command[:2] == ["singletable", "backfill"]
    return build_parser().parse_args(command[1:])


def test_the_kubernetes_job_runs_the_same_backfill_job_in_every_pod() -> None:
    (job,) = [m for m in manifests() if m.get("kind") == "Job"]
    assert job["apiVersion"] == "batch/v1"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] >= 2
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] in ("OnFailure", "Never")
    (container,) = pod["containers"]
    args = backfill_args(container["command"])
    assert (args.target, args.entity, args.job, args.segments) == (
        "app.models:Shop",
        "Order",
        "order-gsi2",
        64,
    )
    assert args.segments >= spec["parallelism"]  # every pod finds a segment to work


def test_the_batch_array_job_runs_the_same_backfill_job_in_every_child() -> None:
    (template,) = [m for m in manifests() if "Resources" in m]
    (definition,) = template["Resources"].values()
    assert definition["Type"] == "AWS::Batch::JobDefinition"
    properties = definition["Properties"]
    assert properties["Type"] == "container"
    assert properties["RetryStrategy"]["Attempts"] >= 2  # a dead child rejoins the job
    args = backfill_args(properties["ContainerProperties"]["Command"])
    assert (args.job, args.segments, args.quiet) == ("order-gsi2", 64, True)
    assert "--array-properties size=8" in PAGE.read_text()
