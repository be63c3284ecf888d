"""singletable.testing as a pytest plugin: a user's conftest-free test suite, run by pytester in
a fresh interpreter (``runpytest_subprocess``), gets ``dynamodb_client`` and
``dynamodb_endpoint`` through the ``pytest11`` entry point of the installed package, and pytest
starts without importing moto or boto3."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

MODELS = """
from singletable import Entity, Repository, Table, get

shop = Table("Shop")


class Customer(Entity, table=shop, type="CUSTOMER"):
    customer_id: str
    name: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "PROFILE"


class Shop(Repository, table=shop):
    customer = get(Customer)
"""

STARTUP = """
import sys

# Module-level: what pytest had imported by the time it collected this first module.
LOADED = sorted(m for m in sys.modules if m.split(".")[0] in ("moto", "boto3", "botocore"))


def test_pytest_started_without_moto_or_boto3():
    assert LOADED == []
"""

USER_TESTS = """
import boto3

from models import Customer, Shop, shop


def test_in_process(dynamodb_client):
    shop.create(dynamodb_client)
    repo = Shop(client=dynamodb_client)
    repo.create(Customer(customer_id="42", name="Ann"))
    assert repo.customer(customer_id="42").name == "Ann"


def test_in_process_starts_empty(dynamodb_client):
    assert dynamodb_client.list_tables()["TableNames"] == []


def endpoint_client(url):
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )


def test_endpoint(dynamodb_endpoint):
    assert dynamodb_endpoint.startswith("http://127.0.0.1:")
    client = endpoint_client(dynamodb_endpoint)
    shop.create(client)
    repo = Shop(client=client)
    repo.create(Customer(customer_id="7", name="Bo"))
    assert repo.customer(customer_id="7").name == "Bo"


def test_endpoint_is_reset_between_tests(dynamodb_endpoint):
    assert endpoint_client(dynamodb_endpoint).list_tables()["TableNames"] == []


def test_one_server_per_session(dynamodb_endpoint, singletable_moto_server):
    assert dynamodb_endpoint == singletable_moto_server


def test_a_client_with_no_aws_configuration_works(dynamodb_endpoint):
    # (run with no AWS variable and no ~/.aws: a newcomer's machine)
    client = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint)
    shop.create(client)
    assert client.list_tables()["TableNames"] == ["Shop"]
"""


@pytest.fixture
def user_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(models=MODELS, test_a_startup=STARTUP, test_b_user=USER_TESTS)
    pytester.syspathinsert()  # models.py, for the subprocess too (PYTHONPATH)
    return pytester


def _env_pythonpath(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [str(pytester.path), str(ROOT)]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))


def test_a_conftest_free_suite_gets_the_fixtures(
    user_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _env_pythonpath(user_suite, monkeypatch)
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.aws
    result = user_suite.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=7)


def test_the_fixtures_are_listed(user_suite: pytest.Pytester) -> None:
    result = user_suite.runpytest_subprocess("--fixtures", "-p", "no:xdist")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*dynamodb_client*", "*dynamodb_endpoint*", "*repository_factory*"]
    )


def test_it_loads_beside_the_projects_own_moto_fixtures_plugin(
    user_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """singletable's own suite loads both plugins (its fixtures are client, backend, ...):
    no fixture name is shared, and both sets work in one run."""
    _env_pythonpath(user_suite, monkeypatch)
    user_suite.makepyfile(
        test_c_both="""
def test_both(dynamodb_client, backend):
    assert backend.name == "inproc"
    assert dynamodb_client.list_tables()["TableNames"] == []
"""
    )
    result = user_suite.runpytest_subprocess(
        "-p", "moto_fixtures.plugin", "--backends=inproc", "-p", "no:xdist", "test_c_both.py"
    )
    result.assert_outcomes(passed=1)


def test_the_plugin_shares_no_fixture_name_with_moto_fixtures() -> None:
    import moto_fixtures.plugin as project_plugin

    from singletable import testing

    def fixtures(module: object) -> set[str]:
        return {
            name
            for name, value in vars(module).items()
            if hasattr(value, "_fixture_function_marker")
            or type(value).__name__ == "FixtureFunctionDefinition"
        }

    ours = fixtures(testing)
    assert ours == {
        "dynamodb_client",
        "dynamodb_endpoint",
        "singletable_moto_server",
        "repository_factory",
        "endpoint_repository_factory",
    }
    theirs = fixtures(project_plugin)
    assert {"client", "backend", "recorder"} <= theirs
    assert not ours & theirs
