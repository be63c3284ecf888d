"""The typing suite under both checkers: mypy (``--strict``, with the ``singletable.mypy``
plugin) and pyright (strict, basedpyright, through the stub ``singletable stubs`` generates).

Every line of tests/typing/mistakes/ marked ``# mypy: CODE  pyright: RULE`` must be an error
of (at least) those codes under that checker, and no other line of tests/typing may be an
error: the correct uses in tests/typing/check_*.py pin their results with ``assert_type``. One
run of each checker covers every case. Without the plugin, the attribute-form mistakes are
not errors and these tests fail.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from singletable._tools.stubs import stub_module

ROOT = Path(__file__).resolve().parents[2]
TYPING = ROOT / "tests" / "typing"
MISTAKES = sorted((TYPING / "mistakes").glob("*.py"))
STUB = TYPING / "typings" / "tests" / "typing" / "typing_shop.pyi"
MARK = re.compile(r"#\s*mypy:\s*(?P<mypy>[\w\- ]+?)\s+pyright:\s*(?P<pyright>[\w ]+?)\s*$")
MYPY_ERROR = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: .*\[(?P<code>[\w-]+)\]$")

Errors = dict[tuple[str, int], set[str]]


def expected(checker: str) -> Errors:
    found: Errors = {}
    for path in MISTAKES:
        for number, text in enumerate(path.read_text().splitlines(), 1):
            match = MARK.search(text)
            if match:
                found[(path.name, number)] = set(match.group(checker).split())
    return found


def compare(reported: Errors, checker: str) -> None:
    wanted = expected(checker)
    missing = {
        place: sorted(codes - reported.get(place, set()))
        for place, codes in wanted.items()
        if not codes <= reported.get(place, set())
    }
    unexpected = {place: sorted(codes) for place, codes in reported.items() if place not in wanted}
    assert not missing, f"{checker} did not report these expected errors: {missing}"
    assert not unexpected, f"{checker} reported errors on unmarked lines: {unexpected}"


def test_the_mistakes_cover_every_kind_of_error() -> None:
    marks = expected("mypy")
    assert len(marks) >= 50
    codes = set().union(*marks.values())
    assert {"call-arg", "arg-type", "attr-defined", "assignment", "unused-coroutine"} <= codes


def test_mypy_with_the_plugin_reports_exactly_the_marked_mistakes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "tests/typing", *map(str, MISTAKES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "INTERNAL ERROR" not in result.stdout + result.stderr, result.stderr
    reported: Errors = defaultdict(set)
    for line in result.stdout.splitlines():
        match = MYPY_ERROR.match(line)
        if match:
            reported[(Path(match["file"]).name, int(match["line"]))].add(match["code"])
    assert reported or result.returncode == 0, result.stdout + result.stderr
    compare(dict(reported), "mypy")


def test_pyright_strict_reports_exactly_the_marked_mistakes(tmp_path: Path) -> None:
    config = {
        "include": [str(TYPING)],
        "exclude": [str(TYPING / "typings")],
        "stubPath": str(TYPING / "typings"),
        "extraPaths": [str(ROOT)],
        "typeCheckingMode": "strict",
        "pythonVersion": "3.10",
    }
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "basedpyright",
            "-p",
            str(tmp_path / "pyrightconfig.json"),
            "--pythonpath",
            sys.executable,
            "--outputjson",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(result.stdout)
    assert report["summary"]["filesAnalyzed"] >= len(MISTAKES) + 4
    reported: Errors = defaultdict(set)
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            place = (Path(diagnostic["file"]).name, diagnostic["range"]["start"]["line"] + 1)
            reported[place].add(diagnostic.get("rule", "error"))
    compare(dict(reported), "pyright")


def test_the_committed_stub_is_what_singletable_stubs_generates() -> None:
    from tests.typing.typing_shop import Shop

    assert STUB.read_text() == stub_module(Shop), (
        "regenerate: singletable stubs tests.typing.typing_shop:Shop -o "
        + str(STUB.relative_to(ROOT))
    )


@pytest.mark.parametrize("path", MISTAKES, ids=lambda p: p.name)
def test_every_mistakes_file_is_marked(path: Path) -> None:
    assert any(MARK.search(line) for line in path.read_text().splitlines())
