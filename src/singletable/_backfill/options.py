"""A backfill call's options: checked before anything is sent, the options that fix a job
(entity, type tags, segments, ``dry_run``, ``move``), and what the twin passes in from outside
(:class:`BackfillIO`: the clocks and the stream progress is drawn on)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, NamedTuple, TextIO

from .._entity_spec import EntitySpec
from ..errors import InvalidRequestError
from .job_items import check_job_name

MAX_SEGMENTS = 1_000_000  # DynamoDB's TotalSegments limit
MAX_LEASE_SECONDS = 86_400.0


class BackfillIO(NamedTuple):
    """What a backfill reads from outside, passed in by the twin: ``now`` (epoch seconds from
    the repository clock: lease deadlines, which workers on several machines compare),
    ``monotonic`` (elapsed time and the rate limit) and ``stream`` (where ``progress=True``
    draws: stderr)."""

    now: Callable[[], float]
    monotonic: Callable[[], float]
    stream: TextIO


class Options(NamedTuple):
    """A backfill call's options, checked."""

    segments: int
    dry_run: bool
    checkpoint: str | None
    job: str | None
    lease_seconds: float
    progress: Any
    rate: float | None
    move: bool

    def fixed(self, spec: EntitySpec, table_name: str | None) -> dict[str, Any]:
        """The options a job keeps from its first call (a checkpoint file also names its
        table; a job in the table is in it)."""
        fixed: dict[str, Any] = {"entity": spec.name, "type_tags": list(spec.type_tags)}
        if table_name is not None:
            fixed["table"] = table_name
        fixed.update(segments=self.segments, dry_run=self.dry_run, move=self.move)
        return fixed

    def page_limit(self, default_limit: int, held: int) -> int:
        """Items per Scan page: the repository's default, or a second's worth of the rate
        shared by the ``held`` segments scanned at once."""
        if self.rate is None:
            return default_limit
        return max(1, min(default_limit, math.ceil(self.rate / max(held, 1))))


def check_options(
    *,
    segments: Any,
    dry_run: Any,
    checkpoint: Any,
    job: Any,
    lease_seconds: Any,
    progress: Any,
    rate: Any,
    move: Any,
) -> Options:
    if type(segments) is not int or not 1 <= segments <= MAX_SEGMENTS:
        raise InvalidRequestError(
            f"backfill(segments=...) takes an int from 1 to {MAX_SEGMENTS:,}, not {segments!r}"
        )
    for name, value in (("dry_run", dry_run), ("move", move)):
        if not isinstance(value, bool):
            raise InvalidRequestError(f"backfill({name}=...) takes True or False, not {value!r}")
    if checkpoint is not None and not isinstance(checkpoint, (str, os.PathLike)):
        raise InvalidRequestError(
            f"backfill(checkpoint=...) takes a file path, not {type(checkpoint).__qualname__}"
        )
    if job is not None:
        check_job_name(job)
        if checkpoint is not None:
            raise InvalidRequestError(
                "backfill() takes job= (state in the table, any number of workers) or "
                "checkpoint= (a local file, one machine), not both"
            )
    if not _positive(lease_seconds) or lease_seconds > MAX_LEASE_SECONDS:
        raise InvalidRequestError(
            f"backfill(lease_seconds=...) takes a positive number of seconds up to "
            f"{MAX_LEASE_SECONDS:,.0f}, not {lease_seconds!r}"
        )
    if not (isinstance(progress, bool) or callable(progress)):
        raise InvalidRequestError(
            "backfill(progress=...) takes True, False or a callable(report), not "
            f"{type(progress).__qualname__}"
        )
    if rate is not None and not _positive(rate):
        raise InvalidRequestError(
            f"backfill(max_items_per_second=...) takes a positive number, not {rate!r}"
        )
    return Options(
        segments,
        dry_run,
        None if checkpoint is None else os.fspath(checkpoint),
        job,
        float(lease_seconds),
        progress,
        None if rate is None else float(rate),
        move,
    )


def _positive(value: Any) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and value > 0
    )
