"""Every property test is bounded: a modest number of examples and a deadline, so that the whole
suite stays well under 10 minutes on 2 cores and a slow example fails at once instead of running
into the per-test timeout (after which Hypothesis would spend minutes shrinking).

- The profile tests/conftest.py loads bounds the tests that set nothing themselves.
- No ``settings(...)`` in tests/ or examples/ turns the deadline off or asks for more than
  ``MAX_EXAMPLES`` (read from the source, so the stateful test's settings are covered too).
- Every property test collected in this run (the whole suite, as CI runs it) ends up with a
  deadline and at most ``MAX_EXAMPLES`` examples; one that runs on a DynamoDB backend at most
  ``MAX_BACKEND_EXAMPLES``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[2]
MAX_PROFILE_EXAMPLES = 50
MAX_EXAMPLES = 300  # pure code: milliseconds an example
MAX_BACKEND_EXAMPLES = 15  # each example writes and reads through a backend


def _settings_calls(tree: ast.AST) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in ("settings", "register_profile"):
            calls.append(node)
    return calls


def _problems(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    where = path.relative_to(root).as_posix()
    for call in _settings_calls(ast.parse(path.read_text(), str(path))):
        for keyword in call.keywords:
            value = keyword.value
            if (
                keyword.arg == "deadline"
                and isinstance(value, ast.Constant)
                and value.value is None
            ):
                problems.append(f"{where}:{call.lineno}: deadline=None")
            if keyword.arg == "max_examples":
                if not (isinstance(value, ast.Constant) and isinstance(value.value, int)):
                    problems.append(f"{where}:{call.lineno}: max_examples is not a number")
                elif value.value > MAX_EXAMPLES:
                    problems.append(f"{where}:{call.lineno}: max_examples={value.value}")
    return problems


def test_the_profile_bounds_examples_and_sets_a_deadline() -> None:
    assert settings.default.max_examples <= MAX_PROFILE_EXAMPLES
    assert settings.default.deadline is not None


@pytest.mark.parametrize("folder", ["tests", "examples"])
def test_no_settings_call_lifts_the_bounds(folder: str) -> None:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    problems = [problem for path in files for problem in _problems(path)]
    assert problems == []


def test_the_source_check_sees_what_it_refuses(tmp_path: Path) -> None:
    source = tmp_path / "tests" / "test_x.py"
    source.parent.mkdir()
    source.write_text(
        "from hypothesis import settings\n"
        "A = settings(max_examples=1000, deadline=2000)\n"
        "B = settings(max_examples=10, deadline=None)\n"
        "C = hypothesis.settings(max_examples=N)\n"
        "D = settings(max_examples=10, deadline=2000)\n"
    )
    assert _problems(source, root=tmp_path) == [
        "tests/test_x.py:2: max_examples=1000",
        "tests/test_x.py:3: deadline=None",
        "tests/test_x.py:4: max_examples is not a number",
    ]


def _property_tests(items: list[pytest.Item]) -> dict[str, tuple[Any, bool]]:
    """nodeid without parameters -> (its hypothesis settings, whether it runs on a backend)."""
    found: dict[str, tuple[Any, bool]] = {}
    for item in items:
        function = getattr(item, "obj", None)
        if not getattr(function, "is_hypothesis_test", False):
            continue
        on_backend = item.get_closest_marker("backend") is not None
        base = item.nodeid.split("[", 1)[0]
        previous = found.get(base, (None, False))[1]
        found[base] = (function._hypothesis_internal_use_settings, on_backend or previous)
    return found


def test_every_collected_property_test_is_bounded(request: pytest.FixtureRequest) -> None:
    problems = []
    for nodeid, (used, on_backend) in _property_tests(request.session.items).items():
        limit = MAX_BACKEND_EXAMPLES if on_backend else MAX_EXAMPLES
        if used.deadline is None:
            problems.append(f"{nodeid}: no deadline")
        if used.max_examples > limit:
            problems.append(f"{nodeid}: max_examples={used.max_examples} > {limit}")
    assert problems == []
