"""The documentation runs: every ```python block of README.md and docs/**/*.md is executed.

How it works:

* each Markdown file is one test (``test_markdown_runs[docs/patterns.md]``);
* its ```python blocks run in order, in ONE namespace per file (a fresh module object), so a
  later block uses what an earlier block declared, exactly as a reader follows the page;
* each page starts in an environment with no AWS variables and a home folder without ``.aws``
  (a laptop where AWS was never configured), and runs inside in-process moto as
  ``singletable.testing`` starts it (``local_table`` and the ``dynamodb_client`` fixture do
  the same), which sets only what a client needs there (dummy credentials, a region, the
  classic Streams endpoint): a snippet that builds ``boto3.client("dynamodb")`` talks to an
  in-process fake and can never reach an account. Snippets create the tables they use
  themselves (``table.create(client)``), visibly;
* snippets assert what they claim (``assert page.items[0].order_id == "A2"``), so a behaviour
  change makes the docs fail here instead of going stale; a ``try/except`` that shows an error
  needs an ``else: raise AssertionError(...)`` (checked by a test below).

Directives are HTML comments on the line just before a fence (invisible once rendered, and
they keep the fence's info string a plain language name, which mkdocs needs):

* ``<!-- docs-test: skip, <reason> -->`` before a ```python block: not run. For text that
  cannot run (a sketch of a conftest.py, a production setup); the reason is required;
* ``<!-- docs-test: output -->`` before a ```text block: it must equal what the python block
  before it printed (trailing whitespace and surrounding blank lines ignored);
* ``<!-- docs-test: own-backend -->`` anywhere in a page: the page sets up its backends itself
  (moto, ``local_table``, ``local_endpoint``), so it runs without the surrounding moto;
* ``<!-- docs-test: needs <module> -->`` anywhere in a page: the page needs an optional
  dependency (``aiobotocore``, the async extra); where it is not installed (CI's environment
  with the newest botocore, which aiobotocore does not allow yet) the page is skipped, saying
  so.

Other fences (```console, ```js ...) are documentation only. A failure names the file and the
line of the failing block, and the traceback points at lines of the Markdown file itself
(each block is compiled with its real line offset).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import sys
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MARKDOWN_FILES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]

RUN_LANGUAGES = {"python", "py"}
OWN_BACKEND = "<!-- docs-test: own-backend -->"
_NEEDS = re.compile(r"<!--\s*docs-test:\s*needs\s+([\w.]+)\s*-->")

_OPENING = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<text>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: info string, first code line (1-based), code, and the
    ``docs-test`` directive on the line before the fence, if any."""

    info: str
    line: int
    code: str
    directive: str | None = None

    @property
    def language(self) -> str:
        words = self.info.split()
        return words[0].lower() if words else ""

    @property
    def runs(self) -> bool:
        return self.language in RUN_LANGUAGES


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced code block of a Markdown text (CommonMark fences, ``` or ~~~)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _OPENING.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence = opening.group("fence")
        indent = len(opening.group("indent"))
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            line = lines[j]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            j += 1
        if j == len(lines):
            raise ValueError(f"line {i + 1}: the code fence {fence!r} is never closed")
        directive = _DIRECTIVE.match(lines[i - 1]) if i > 0 else None
        blocks.append(
            Block(
                opening.group("info").strip(),
                i + 2,
                "\n".join(body) + "\n",
                directive.group("text") if directive else None,
            )
        )
        i = j + 1
    return blocks


def doc_blocks(path: Path) -> list[Block]:
    """The blocks the docs test acts on, in order: the python blocks it runs, and the
    ``output`` text blocks that check what the python block before them printed."""
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    acted_on: list[Block] = []
    for block in fenced_blocks(path.read_text(encoding="utf-8")):
        at = f"{where}:{block.line - 1}"
        directive = block.directive
        if block.runs:
            if block.info.split()[1:]:
                raise ValueError(
                    f"{at}: write only the language after the fence (```python); to skip a "
                    "block put <!-- docs-test: skip, <reason> --> on the line before it"
                )
            if directive is None:
                acted_on.append(block)
            elif not re.fullmatch(r"skip,\s*\S.*", directive):
                raise ValueError(
                    f"{at}: unknown directive {directive!r} before a python block; use "
                    "<!-- docs-test: skip, <reason> -->"
                )
        elif directive is not None:
            if directive != "output" or block.language != "text":
                raise ValueError(
                    f"{at}: directive {directive!r} before a ```{block.language} block; only "
                    "<!-- docs-test: output --> before a ```text block is understood"
                )
            if not acted_on or not acted_on[-1].runs:
                raise ValueError(
                    f"{at}: an output block must follow the python block whose output it shows"
                )
            acted_on.append(block)
    return acted_on


def python_blocks(path: Path) -> list[Block]:
    """The python blocks of ``path`` that the docs test runs (skipped ones left out)."""
    return [b for b in doc_blocks(path) if b.runs]


def _normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _sandbox_aws(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """A newcomer's laptop: no AWS variable at all, and a home folder without ``.aws``."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


def _needed_module(text: str) -> str | None:
    """The first optional module the page declares it needs that is not installed."""
    for name in _NEEDS.findall(text):
        if importlib.util.find_spec(name) is None:
            return str(name)
    return None


def _doc_frames(exc: BaseException, filename: str) -> str:
    """The traceback lines that point into the Markdown file, plus the exception itself."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    shown = "".join(traceback.format_list(frames))
    return shown + "".join(traceback.format_exception_only(type(exc), exc))


def run_markdown(path: Path) -> str | None:
    """Run the page's blocks in one fresh module namespace; the failure message, or None."""
    from singletable.testing import _in_process

    name = str(path.relative_to(ROOT))
    try:
        blocks = doc_blocks(path)
    except ValueError as exc:
        return str(exc)
    module_name = "docs_" + re.sub(r"\W", "_", name.removesuffix(".md"))
    module = types.ModuleType(module_name, f"the python blocks of {name}")
    module.__file__ = str(path)
    sys.modules[module_name] = module  # pydantic and dataclasses look classes' modules up
    own_backend = OWN_BACKEND in path.read_text(encoding="utf-8")
    printed = ""
    try:
        with contextlib.nullcontext() if own_backend else _in_process():
            for block in blocks:
                if not block.runs:  # an output block
                    if _normalised(printed) != _normalised(block.code):
                        return (
                            f"{name}: the output shown at line {block.line} is not what the "
                            f"python block before it prints\n--- shown\n"
                            f"{_normalised(block.code)}\n--- printed\n{_normalised(printed)}"
                        )
                    continue
                # Leading newlines give the compiled code the block's real line numbers.
                source = "\n" * (block.line - 1) + block.code
                output = io.StringIO()
                try:
                    with contextlib.redirect_stdout(output):
                        exec(compile(source, str(path), "exec"), module.__dict__)
                except Exception as exc:
                    return (
                        f"{name}: the python block starting at line {block.line} failed\n"
                        f"{_doc_frames(exc, str(path))}"
                    )
                finally:
                    printed = output.getvalue()
                    sys.stdout.write(printed)
    finally:
        del sys.modules[module_name]
    return None


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=_id)
def test_markdown_runs(path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = _needed_module(path.read_text(encoding="utf-8"))
    if missing is not None:
        pytest.skip(f"{_id(path)} needs {missing} (an optional dependency), not installed here")
    _sandbox_aws(monkeypatch, tmp_path)
    failure = run_markdown(path)
    if failure is not None:
        pytest.fail(failure, pytrace=False)


def test_readme_and_docs_have_snippets() -> None:
    assert python_blocks(ROOT / "README.md"), "README.md lost its example"
    assert python_blocks(DOCS / "index.md"), "docs/index.md lost its tour"


def _slug(heading: str) -> str:
    """The anchor GitHub and mkdocs' default toc both give a heading made of plain words."""
    text = re.sub(r"<[^>]+>|[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def test_every_error_code_has_an_anchor_in_errors_md() -> None:
    """Error messages end with ``[<code>: see <ERRORS_URL>#<code>]``: each anchor exists in
    docs/errors.md (published at ``ERRORS_URL``)."""
    from singletable import errors

    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.MULTILINE)
    anchors = {_slug(h) for h in headings}
    classes = [
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, errors.SingleTableError)
    ]
    assert len(classes) == len(errors.__all__)
    missing = sorted(f"{c.__name__} ({c.code})" for c in classes if c.code not in anchors)
    assert not missing, f"docs/errors.md has no heading for: {', '.join(missing)}"
    undocumented = sorted(c.__name__ for c in classes if f"`{c.__name__}`" not in text)
    assert not undocumented, f"docs/errors.md never names: {', '.join(undocumented)}"


def _unchecked_trys(tree: ast.AST) -> list[int]:
    """Lines of ``try/except`` statements that would pass silently if nothing was raised: no
    ``else:`` and no ``raise`` right after them."""
    lines = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            for i, stmt in enumerate(statements):
                if not isinstance(stmt, ast.Try) or not stmt.handlers or stmt.orelse:
                    continue
                following = statements[i + 1] if i + 1 < len(statements) else None
                if not isinstance(following, ast.Raise):
                    lines.append(stmt.lineno)
    return lines


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=_id)
def test_snippets_that_expect_an_error_fail_without_it(path: Path) -> None:
    """A snippet showing an error must fail if the error stops happening (``try/except``
    with an ``else: raise AssertionError(...)``), or the docs would silently go stale."""
    unchecked = [
        f"{_id(path)}:{block.line + line - 1}"
        for block in python_blocks(path)
        for line in _unchecked_trys(ast.parse(block.code))
    ]
    assert not unchecked, f"try/except without else: {', '.join(unchecked)}"


def test_mkdocs_nav_lists_every_page() -> None:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w./-]+\.md)\s*$", text, flags=re.MULTILINE))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert listed == pages


def test_fence_parser_and_directives(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "# t",
            "```python",
            "x = 1",
            "```",
            "<!-- docs-test: skip, a sketch -->",
            "~~~python",
            "not run",
            "~~~",
            "````console",
            "```",
            "````",
            "  ```py",
            "  print(2)",
            "  ```",
            "<!-- docs-test: output -->",
            "```text",
            "2",
            "```",
        ]
    )
    blocks = fenced_blocks(text)
    assert [(b.info, b.line, b.code, b.directive) for b in blocks] == [
        ("python", 3, "x = 1\n", None),
        ("python", 7, "not run\n", "skip, a sketch"),
        ("console", 10, "```\n", None),
        ("py", 13, "print(2)\n", None),
        ("text", 17, "2\n", "output"),
    ]
    page = tmp_path / "page.md"
    page.write_text(text)
    assert [b.line for b in doc_blocks(page)] == [3, 13, 17]
    for bad in ("```python skip\n```", "<!-- docs-test: skip -->\n```python\n```"):
        page.write_text(bad)
        with pytest.raises(ValueError):
            doc_blocks(page)


def covered_modules() -> set[str]:
    """The modules docs/versioning.md lists as public ("What is covered")."""
    text = (DOCS / "versioning.md").read_text()
    covered = text[text.index("## What is covered") : text.index("Not covered:")]
    return {"singletable", *re.findall(r"`(singletable(?:\.[a-z_]+)+)`", covered)}


def imported_modules(code: str) -> set[str]:
    """Every ``singletable`` module a snippet imports (``from m import x``, ``import m``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "singletable"}


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=_id)
def test_guides_import_only_covered_modules(path: Path) -> None:
    """A guide that imports an internal module teaches readers to depend on it: every import
    in a page's snippets is of a module docs/versioning.md covers (or a module below one,
    such as ``singletable.demo_shop.models``)."""
    covered = covered_modules()
    assert {"singletable.aio", "singletable.lint", "singletable.streams"} <= covered
    outside = {
        module
        for block in python_blocks(path)
        for module in imported_modules(block.code)
        if not any(module == c or module.startswith(c + ".") for c in covered)
        or any(part.startswith("_") for part in module.split("."))
    }
    assert outside == set(), f"{path.name} imports modules outside the public API: {outside}"
