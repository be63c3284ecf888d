"""The example models lint clean: every finding is acknowledged with the reason its README
explains, and the model checks run without I/O."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from singletable._tools.lint import check

EXAMPLES = [
    ("ecommerce", "Shop"),
    ("leaderboard", "Leaderboard"),
    ("orders_workflow", "Workflow"),
    ("merchant", "Merchants"),
    ("counters", "PageViews"),
    ("battle_royale", "BattleRoyale"),
    ("order_entry", "OrderEntry"),
]


@pytest.mark.parametrize(("example", "repository"), EXAMPLES)
def test_example_lints_clean(example: str, repository: str) -> None:
    repo = getattr(importlib.import_module(f"examples.{example}.repository"), repository)
    findings = check(repo)
    open_findings = [
        f for f in findings if f.acknowledged is None and f.severity in ("error", "warning")
    ]
    assert open_findings == []
    readme = Path(f"examples/{example}/README.md").read_text(encoding="utf-8")
    for finding in findings:
        if finding.acknowledged is not None:
            assert "lint" in readme, f"{example}: acknowledged {finding.key} but README is silent"
