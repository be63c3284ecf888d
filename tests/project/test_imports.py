"""What ``import singletable`` loads, and that every public name still resolves.

Fresh interpreters (subprocesses), since this test session has long imported everything.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import singletable

INIT = Path(singletable.__file__)
#: never loaded by an application's imports: the tools (CLI, lint, layout, demo), the moto
#: helper, moto itself
TOOLING = ("singletable._tools", "singletable.testing")


def _loaded(code: str) -> list[str]:
    """Module names loaded after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    loaded: list[str] = json.loads(out.splitlines()[-1])
    return loaded


def test_import_singletable_loads_no_submodule() -> None:
    loaded = _loaded("import singletable")
    assert [m for m in loaded if m.startswith("singletable")] == ["singletable"]
    assert "pydantic.main" not in loaded and "botocore" not in loaded


def test_an_application_import_loads_no_tooling() -> None:
    loaded = _loaded(
        "from singletable import Entity, Repository, Table, get, query, transaction\n"
        "t = Table('t')\n"
        "class M(Entity, table=t, type='M'):\n"
        "    x: str\n"
        "    class Keys:\n"
        "        pk = 'M#{x}'\n"
        "        sk = 'M'\n"
        "class R(Repository, table=t):\n"
        "    m = get(M)\n"
    )
    assert "singletable._repository" in loaded and "singletable._entity" in loaded
    assert not [m for m in loaded if m.startswith(TOOLING) or m.split(".")[0] == "moto"]


def test_the_mypy_plugin_and_the_callback_machinery_load_only_when_used() -> None:
    app = (
        "from singletable import Attr, Entity, Repository, Table, query\n"
        "t = Table('t')\n"
        "class M(Entity, table=t, type='M'):\n"
        "    x: str\n"
        "    n: int = 0\n"
        "    class Keys:\n"
        "        pk = 'M#{x}'\n"
        "        sk = 'M'\n"
        "class R(Repository, table=t):\n"
        "    m = query(M)\n"
        "R(client=None).m.params(x='1', where=Attr('n').gte(1))\n"
    )
    loaded = _loaded(app)
    assert "singletable._patterns.query" in loaded
    assert not {"mypy", "singletable.mypy", "singletable._conditions"} & set(loaded)
    with_callback = _loaded(
        app + "R(client=None).m.params(x='1', where=lambda o, op: op.gte(o.n, 1))"
    )
    assert "singletable._conditions" in with_callback
    assert not {"mypy", "singletable.mypy"} & set(with_callback)


_GIVEN_CLIENT = (
    "import boto3\n"
    "from singletable import Entity, Repository, Table, get\n"
    "t = Table('t')\n"
    "class M(Entity, table=t, type='M'):\n"
    "    x: str\n"
    "    class Keys:\n"
    "        pk = 'M#{x}'\n"
    "        sk = 'M'\n"
    "class R(Repository, table=t):\n"
    "    m = get(M)\n"
    "client = boto3.client('dynamodb', region_name='us-east-1')\n"
)


def test_a_repository_given_a_client_with_fast_path_false_loads_no_botocore_extension() -> None:
    """``singletable.aws`` (client set-up, fast path, signer) loads for the default client and
    for the fast path on a given client; with ``fast_path=False`` a given client needs none
    of it."""
    loaded = _loaded(
        _GIVEN_CLIENT + "repo = R(client=client, fast_path=False)\nassert repo.client is client\n"
    )
    assert "singletable._repository" in loaded and "singletable._executor" in loaded
    assert not [m for m in loaded if m.startswith("singletable.aws")]


def test_a_repository_given_a_client_installs_the_fast_path_on_it() -> None:
    loaded = _loaded(
        _GIVEN_CLIENT + "repo = R(client=client)\n"
        "from singletable.aws import fastpath\n"
        "assert fastpath.is_installed(client)\n"
    )
    assert "singletable.aws.fastpath" in loaded
    assert "singletable.aws.signing" not in loaded  # the signer stays the default client's


def test_every_public_name_resolves_to_its_definition() -> None:
    for name in singletable.__all__:
        value = getattr(singletable, name)
        assert value is not None, name
        module = sys.modules[f"singletable.{singletable._EXPORTS[name]}"]
        assert getattr(module, name) is value, name
    assert set(singletable.__all__) == set(singletable._EXPORTS)
    assert set(singletable.__all__) <= set(dir(singletable))


def test_type_checking_imports_match_the_lazy_table() -> None:
    """Type checkers read the ``if TYPE_CHECKING:`` imports; the runtime reads ``_EXPORTS``."""
    tree = ast.parse(INIT.read_text())
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    static = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert static == singletable._EXPORTS


def test_the_transaction_decorator_and_its_module_have_distinct_names() -> None:
    """The decorator is ``singletable.transaction``; its module is
    ``singletable._verbs.transactions`` (one name each, so importing the module never rebinds
    the decorator)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import singletable, sys\n"
            "from singletable import Repository\n"  # imports singletable._verbs.transactions
            "import singletable._verbs.transactions\n"
            "from singletable import transaction\n"
            "module = singletable._verbs.transactions\n"
            "print(callable(transaction), transaction is module.transaction,\n"
            "      'singletable.transaction' in sys.modules)",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert out == ["True", "True", "False"]


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="'Nope'"):
        singletable.Nope  # type: ignore[attr-defined]  # noqa: B018
