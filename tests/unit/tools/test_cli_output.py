"""Output that fits the reader: on a terminal, ``explain``, ``lint`` and the demo print text
wrapped to its width; in a pipe ``explain`` keeps printing Markdown (API.md's contract, which
scripts rely on). ``--format`` chooses explicitly and says so in ``--help``, and every help
page wraps to the terminal.

Terminals are real: the command runs with its stdout on a pseudo-terminal of a set size."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from singletable._tools._text import text_table
from singletable._tools.lint import explain_text
from singletable.demo_shop.repository import Shop

ROOT = Path(__file__).resolve().parents[3]
SHOP = "singletable.demo_shop.repository:Shop"


def environment(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("COLUMNS", "LINES", "AWS_ENDPOINT_URL_DYNAMODB")
    }
    return {**env, **extra}


def on_terminal(*args: str, columns: int) -> tuple[int, str]:
    """Run ``python -m singletable ARGS`` with stdout on a pseudo-terminal ``columns`` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "singletable", *args],
        cwd=ROOT,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed (Linux reports EIO)
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    status = process.wait(timeout=120)
    assert process.stderr is not None
    process.stderr.close()
    return status, b"".join(chunks).decode().replace("\r\n", "\n")


def piped(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "singletable", *args],
        cwd=ROOT,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# -- the table ----------------------------------------------------------------------------------


def test_a_text_table_wraps_its_widest_columns_to_fit() -> None:
    rows = [("a", "x " * 40), ("bb", "short")]
    table = text_table(("Name", "Text"), rows, width=30)
    lines = table.splitlines()
    assert max(map(len, lines)) <= 30
    assert lines[0].split() == ["Name", "Text"] and set(lines[1]) <= {"-", " "}
    assert table.split().count("x") == 40  # nothing lost
    assert text_table(("Name", "Text"), rows, width=None).splitlines()[2].endswith("x")


def test_names_are_not_cut_in_two() -> None:
    table = explain_text(Shop, width=100)
    assert max(map(len, table.splitlines())) <= 100
    first_cells = [line.split("  ")[0] for line in table.splitlines()[2:] if line[:1].strip()]
    assert first_cells == [row.pattern for row in Shop.explain()]


# -- explain ------------------------------------------------------------------------------------


def test_explain_on_a_terminal_is_a_text_table_of_its_width() -> None:
    status, out = on_terminal("explain", SHOP, columns=100)
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["Pattern", "Operation"]
    assert "|---|" not in out
    assert max(map(len, lines)) <= 100
    assert all(row.pattern in out for row in Shop.explain())


def test_explain_in_a_pipe_stays_markdown() -> None:
    result = piped("explain", SHOP)
    assert result.returncode == 0
    assert result.stdout.splitlines()[1].startswith("|---|")


def test_explain_formats_are_chosen_explicitly() -> None:
    text = piped("explain", SHOP, "--format", "text", COLUMNS="90").stdout
    assert "|---|" not in text and max(map(len, text.splitlines())) <= 90
    status, markdown = on_terminal("explain", SHOP, "--format", "markdown", columns=100)
    assert status == 0 and markdown.splitlines()[1].startswith("|---|")
    unwrapped = piped("explain", SHOP, "--format", "text").stdout  # no terminal, no COLUMNS
    assert len(unwrapped.splitlines()) == 2 + len(Shop.explain())


# -- lint ---------------------------------------------------------------------------------------


def test_lint_on_a_terminal_wraps_to_its_width() -> None:
    status, out = on_terminal("lint", "tests.lint_models:HotRepo", columns=70)
    assert status == 0
    lines = out.splitlines()
    assert "hot-partition" in out and "see https://singletable.readthedocs.io/lint/#" in out
    assert max(len(line) for line in lines if "https://" not in line) <= 70
    piped_out = piped("lint", "tests.lint_models:HotRepo").stdout
    assert max(map(len, piped_out.splitlines())) > 70  # a pipe gets whole lines


def test_lint_as_markdown() -> None:
    result = piped("lint", "tests.lint_models:CollidingRepo", "--format", "markdown")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "| Severity | Code | Subject | Finding | Fix |"
    assert "[`key-collision`](https://singletable.readthedocs.io/lint/#key-collision)" in lines[2]
    assert lines[-1].endswith("-> fails")


# -- the demo -------------------------------------------------------------------------------------


def test_the_demo_on_a_terminal_prints_text_tables_that_fit(tmp_path: Path) -> None:
    status, out = on_terminal("demo", columns=120)
    assert status == 0, out
    explain = out.split("## Access patterns (explain)", 1)[1].split("## Lint", 1)[0]
    assert "| Pattern |" not in explain and "Pattern" in explain
    assert max(map(len, explain.splitlines())) <= 120
    # the run lines too: a result is cut short rather than wrapped by the terminal
    runs = [line for line in out.splitlines() if line.startswith("[ok]")]
    assert runs and max(map(len, runs)) <= 120


# -- help ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["explain", "lint", "demo", "schema"])
def test_format_has_help_text(command: str) -> None:
    out = piped(command, "--help", COLUMNS="100").stdout
    option = out.split("--format", 2)[2] if out.count("--format") > 1 else ""
    assert any(word in option for word in ("markdown", "json", "workbench"))


@pytest.mark.parametrize("command", ["", "explain", "lint", "schema", "layout", "demo", "backfill"])
def test_help_fits_the_terminal(command: str) -> None:
    out = piped(*([command] if command else []), "--help", COLUMNS="80").stdout
    long = [line for line in out.splitlines() if len(line) > 80]
    assert long == []
    assert out.strip()
