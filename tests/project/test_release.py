"""Release hygiene: one documentation base URL (errors, project URLs, mkdocs, README), absolute
README links that resolve to pages and anchors of the site, the licence, the changelog, the
Python classifiers, an API reference that lists every public name, and a documentation site
that builds with ``--strict`` and highlights code without a CDN."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import singletable
from singletable import errors

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
MKDOCS = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def _slug(heading: str) -> str:
    """The anchor mkdocs' toc gives a heading (Python-Markdown's default slugify)."""
    text = re.sub(r"<[^>]+>|[`*_\[\]]", "", heading)
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    if page.name == "changelog.md":
        text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return {_slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.MULTILINE)}


def _page_of(url: str) -> tuple[Path, str]:
    """The docs/*.md page and anchor a documentation URL points at."""
    assert url.startswith(errors.DOCS_URL), url
    path, _, anchor = url[len(errors.DOCS_URL) :].partition("#")
    page = DOCS / (f"{path.strip('/')}.md" if path.strip("/") else "index.md")
    return page, anchor


# -- one base URL ------------------------------------------------------------------------------


def test_error_messages_link_to_the_published_errors_page() -> None:
    err = errors.KeyTemplateError("Order.order_id is empty", key={"order_id": ""})
    assert str(err) == (
        "Order.order_id is empty [key-template: see "
        "https://singletable.readthedocs.io/errors/#key-template]"
    )
    assert f"{errors.DOCS_URL}errors/" == errors.ERRORS_URL
    page, anchor = _page_of(f"{errors.ERRORS_URL}#{err.code}")
    assert page == DOCS / "errors.md" and anchor in _anchors(page)


CODE_URLS = ("Source", "Issues")  # the code host's pages, not the documentation's


def test_every_url_of_the_project_starts_at_the_docs_base() -> None:
    assert re.search(rf"^site_url: {re.escape(errors.DOCS_URL)}$", MKDOCS, flags=re.MULTILINE)
    urls = PYPROJECT["project"]["urls"]
    assert {"Documentation", "Changelog"} <= set(urls)
    for name, url in urls.items():
        if name in CODE_URLS:
            continue
        page, anchor = _page_of(url)
        assert page.is_file(), url
        assert not anchor or anchor in _anchors(page), url


def test_the_project_links_its_source_and_issue_tracker() -> None:
    urls = PYPROJECT["project"]["urls"]
    source, issues = urls["Source"], urls["Issues"]
    assert re.fullmatch(r"https://[\w.-]+/[\w.-]+/[\w.-]+", source), source
    assert issues == f"{source}/issues"


def test_readme_links_are_absolute_and_resolve() -> None:
    """On a package index page, relative links point nowhere."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>", text)
    targets = [a or b for a, b in links]
    assert targets
    relative = [t for t in targets if not t.startswith(("https://", "http://"))]
    assert not relative, f"relative links in README.md: {relative}"
    for url in targets:
        if url.startswith(errors.DOCS_URL):
            page, anchor = _page_of(url)
            assert page.is_file(), url
            assert not anchor or anchor in _anchors(page), url


# -- packaging metadata ------------------------------------------------------------------------


def test_python_classifiers_match_what_ci_runs() -> None:
    project = PYPROJECT["project"]
    versions = {
        c.rsplit(" ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    assert versions == {"3.10", "3.11", "3.12", "3.13"}
    assert project["requires-python"] == ">=3.10"
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    main = re.search(r"^MAIN_PYTHON=(\S+)", script, flags=re.MULTILINE)
    unit = re.search(r"^UNIT_PYTHONS=\(([^)]*)\)", script, flags=re.MULTILINE)
    assert main and unit
    assert {main.group(1), *unit.group(1).split()} == versions


def test_licence() -> None:
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the singletable authors" in text


def test_changelog_follows_keep_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[([^\]]+)\]", text, flags=re.MULTILINE)
    assert releases[0] == "Unreleased"
    assert PYPROJECT["project"]["version"] == singletable.__version__ in releases
    for release in releases:
        assert re.search(rf"^\[{re.escape(release)}\]: https://", text, flags=re.MULTILINE)
    sections = set(re.findall(r"^### (\w+)", text, flags=re.MULTILINE))
    assert sections <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_plugin_entry_point_is_declared() -> None:
    entry_points = PYPROJECT["project"]["entry-points"]["pytest11"]
    assert entry_points == {"singletable": "singletable.testing"}
    assert PYPROJECT["project"]["optional-dependencies"]["otel"] == ["opentelemetry-api>=1.27"]


# -- the documentation site --------------------------------------------------------------------


def test_the_api_reference_documents_the_package_and_its_public_modules() -> None:
    """``::: singletable`` renders every name of ``singletable.__all__`` (the built site is
    checked below), so a new export needs no edit of the page."""
    text = (DOCS / "reference.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: ([\w.]+)$", text, flags=re.MULTILINE))
    assert {
        "singletable",
        "singletable.aio.AsyncRepository",
        "singletable.otel.OpenTelemetryHook",
        "singletable.testing",
        "singletable.errors",
    } <= documented


def test_code_is_highlighted_without_a_cdn() -> None:
    assert re.search(r"^\s+highlightjs: false$", MKDOCS, flags=re.MULTILINE)
    assert "pymdownx.highlight" in MKDOCS and "css/pygments.css" in MKDOCS
    assert ".highlight .k " in (DOCS / "css" / "pygments.css").read_text(encoding="utf-8")


def test_ci_builds_the_docs_strictly_after_mypy() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    mypy = script.index('step "mypy --strict')
    build = script.index("    mkdocs build --strict")
    pytest_step = script.index('step "pytest, newest dependencies')
    assert mypy < build < pytest_step


@pytest.mark.skipif(shutil.which("mkdocs") is None, reason="mkdocs is in the dev extra")
def test_the_site_builds_strictly_and_loads_nothing_from_other_hosts(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    pages = list(site.rglob("*.html"))
    assert len(pages) >= 14
    external = re.compile(r'<(?:script|link)\b[^>]*(?:src|href)="https?://(?![^"]*readthedocs)')
    loading = sorted({str(p.relative_to(site)) for p in pages if external.search(p.read_text())})
    assert not loading, f"pages loading from other hosts: {loading}"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert '<div class="highlight"><pre><span></span><code><span class="kn">from' in index
    reference = (site / "reference" / "index.html").read_text(encoding="utf-8")
    assert 'id="singletable.otel.OpenTelemetryHook"' in reference
    public = [name for name in singletable.__all__ if name != "__version__"]
    missing = [name for name in public if f'id="singletable.{name}"' not in reference]
    assert not missing, f"the API reference does not show {missing}"
    changelog = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert 'id="unreleased"' in changelog


def test_the_demo_layout_output_is_ignored_by_git() -> None:
    """``singletable demo --layout shop.html``, as the README and docs show it, writes a page
    into the working copy: git ignores it."""
    sources = [ROOT / "README.md", *DOCS.glob("*.md"), ROOT / "src/singletable/_tools/cli.py"]
    names = {
        name
        for path in sources
        for name in re.findall(r"--layout[ =]([\w./-]+\.html)", path.read_text(encoding="utf-8"))
    }
    assert "shop.html" in names
    for name in sorted(names):
        checked = subprocess.run(
            ["git", "check-ignore", "--no-index", "-q", name], cwd=ROOT, check=False
        )
        assert checked.returncode == 0, f"{name} is not in .gitignore"
