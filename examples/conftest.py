"""Fixtures for the examples: a settable clock and repositories on fresh tables, on every
backend the ``backend`` fixture offers (inproc, moto_server, dynalite)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from moto_fixtures import NOW, Clock, create_table
from moto_fixtures.twins import AsyncClients, twin_repository

from singletable import Entity, Projection, Repository
from singletable._tools.demo import expected_operations as operations_of
from singletable.lint import explain_markdown

if TYPE_CHECKING:
    from moto_fixtures.backends import Backend
    from mypy_boto3_dynamodb import DynamoDBClient

R = TypeVar("R", bound=Repository)

__all__ = ["NOW", "Clock", "readme_table", "run_example_calls"]


@pytest.fixture
def make_repo(
    client: DynamoDBClient,
    backend: Backend,
    table_name: str,
    clock: Clock,
    twin: str,
    async_clients: Callable[[], AsyncClients],
) -> Callable[..., Any]:
    """``make_repo(RepoClass)``: the repository on a freshly created table of its own (the
    sync one, or its async twin behind a blocking view: see ``moto_fixtures.twins``)."""

    def make(repo_cls: type[R], **options: Any) -> R:
        options.setdefault("clock", clock)
        name = f"{table_name}-{repo_cls.table.name}"
        create_table(backend, client, repo_cls.table, name)
        repo: R = twin_repository(twin, repo_cls, client, async_clients, table_name=name, **options)
        return repo

    return make


# -- helpers shared by the example test modules ---------------------------------------------


def readme_table(readme: Path, repo_cls: type[Repository]) -> tuple[str, str]:
    """(the table right after the README's title, what explain_markdown prints now)."""
    text = readme.read_text()
    _title, _, rest = text.partition("\n\n")
    table = explain_markdown(repo_cls)
    return rest[: len(table)], table


def expected_operations(repo: Any) -> dict[str, list[str]]:
    """Pattern name -> the DynamoDB operations one call sends, as explain states them
    (``repo``: a repository class, or an instance of either twin). ``Query x8`` (a scatter
    over 8 shards) is 8 Queries; ``Query+BatchGetItem`` is one of each."""
    return {row.pattern: operations_of(row.operation) for row in repo.explain()}


def run_example_calls(
    repo: Repository,
    recorder: Any,
    calls: Iterable[tuple[str, dict[str, Any]]],
) -> dict[str, list[Any]]:
    """Run every example call; assert each sends exactly the operations explain promises and
    returns something. Returns the results (as lists) by pattern name."""
    operations = expected_operations(repo)
    results: dict[str, list[Any]] = {}
    for name, kwargs in calls:
        expect: AbstractContextManager[Any] = recorder.expect(*operations[name])
        with expect:
            result = getattr(repo, name)(**kwargs)
        if result is None:
            raise AssertionError(f"{name}({kwargs}) found nothing in the seed data")
        items = [result] if isinstance(result, (Entity, Projection)) else list(result)
        assert items, f"{name}({kwargs}) found nothing in the seed data"
        results[name] = items
    return results


# -- Hypothesis: a bounded number of examples and a deadline for every property test -------------
# (the same profile as tests/conftest.py registers, for a run of examples/ alone)

from hypothesis import settings  # noqa: E402

settings.register_profile("singletable", max_examples=50, deadline=2000, print_blob=True)
settings.load_profile("singletable")
