"""CI tests what the README tells a new user to run, and the lowest versions it declares.

- The README's test command (after ``pip install -e ".[dev]" &&``) is the command ``.ci/run``
  runs in its fresh environment with the newest dependencies.
- ``ci/constraints-min.txt``, which ``.ci/run`` installs into a second fresh environment (a
  release check, ``CI_MATRIX=1``), pins every runtime dependency at the minimum
  ``pyproject.toml`` declares.
- The environment with the newest botocore (what ``singletable[demo]`` installs) runs the
  documentation's snippets too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
CI_RUN = ROOT / ".ci" / "run"
CONSTRAINTS = ROOT / "ci" / "constraints-min.txt"


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text()
    commands = re.findall(r'^\$ pip install -e "\.\[dev\]" && (.+?)(?:\s+#.*)?$', text, re.M)
    assert len(commands) == 1, commands
    return str(commands[0]).strip()


def _ci_step_commands() -> list[str]:
    """The commands of ``.ci/run``'s top-level ``step "title" command...`` lines."""
    return re.findall(r'^step "[^"]*" (.+)$', CI_RUN.read_text(), re.M)


def test_the_readme_test_command_is_what_ci_runs() -> None:
    command = _readme_test_command()
    assert command.startswith("python -m pytest")
    assert command in _ci_step_commands()


def _minimums() -> dict[str, Version]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    minimums = {}
    for line in project["dependencies"]:
        requirement = Requirement(line)
        (lowest,) = [s.version for s in requirement.specifier if s.operator == ">="]
        minimums[canonicalize_name(requirement.name)] = Version(lowest)
    return minimums


def _pins() -> dict[str, Version]:
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_the_constraints_pin_every_declared_minimum() -> None:
    minimums, pins = _minimums(), _pins()
    assert minimums and {name: pins.get(name) for name in minimums} == minimums


def test_ci_installs_the_constraints_in_a_fresh_environment() -> None:
    script = CI_RUN.read_text()
    assert '-c "$MIN_CONSTRAINTS"' in script
    assert f"MIN_CONSTRAINTS={CONSTRAINTS.relative_to(ROOT)}" in script
    assert "--system-site-packages" not in script


def test_the_newest_botocore_environment_runs_the_docs() -> None:
    """``pip install "singletable[demo]"`` brings the newest botocore, which the dev extra holds
    back (aiobotocore pins it): the docs must run there too, as a newcomer runs them."""
    text = CI_RUN.read_text()
    (command,) = re.findall(r'step "pytest, newest botocore[^"]*" \\\n((?:.*\\\n)*.*)$', text, re.M)
    words = command.replace("\\\n", " ").split()
    assert words[:2] == ["in_venv", '"$VENVS/main"'] and "pytest" in words
    assert "tests/project/test_docs.py" in words
    assert "pip uninstall --quiet -y aiobotocore" in text.replace("\\\n", " ")
