"""A lint finding, the rule codes with their severities, and the exit status they make."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...errors import DOCS_URL

LINT_URL = f"{DOCS_URL}lint/"
"""The page of docs/lint.md: every finding links to ``LINT_URL#<code>``."""

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

#: Every lint code with its severity.
RULES: dict[str, Severity] = {
    "scan": "error",
    "key-collision": "error",
    "unsortable-sort-key": "error",
    "projection-mismatch": "error",
    "hot-partition": "warning",
    "prefix-overlap": "warning",
    "unused-index": "warning",
    "too-many-indexes": "warning",
    "unread-index": "warning",
    "collection-parent-order": "warning",
    "filter": "info",
    "implicit-type-tag": "info",
    "former-types": "info",
    "propagation": "info",
    "write-amplification": "info",
    "unused-acknowledgement": "info",
    "invalid-acknowledgement": "error",
}


@dataclass(frozen=True)
class Finding:
    """One lint result. ``acknowledged`` holds the reason when the repository marked it as
    deliberate (see the module docstring)."""

    code: str
    severity: Severity
    subject: str
    message: str
    hint: str
    acknowledged: str | None = None

    @property
    def key(self) -> str:
        """``code:subject``, the form ``lint_acknowledge`` uses."""
        return f"{self.code}:{self.subject}"

    @property
    def url(self) -> str:
        """The rule's section of the lint rules page (what it finds, why, the fix)."""
        return f"{LINT_URL}#{self.code}"

    @property
    def fails(self) -> bool:
        """Whether this finding makes ``singletable lint`` exit 1."""
        return self.severity == "error" and self.acknowledged is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "subject": self.subject,
            "message": self.message,
            "hint": self.hint,
            "acknowledged": self.acknowledged,
            "url": self.url,
        }


def new_finding(code: str, subject: str, message: str, hint: str) -> Finding:
    """A finding of ``code``, with the severity ``RULES`` gives it."""
    return Finding(code, RULES[code], subject, message, hint)


def exit_status(findings: Iterable[Finding]) -> int:
    """1 when an unacknowledged error is among ``findings``, else 0."""
    return 1 if any(f.fails for f in findings) else 0


def summary(findings: Sequence[Finding]) -> dict[str, int]:
    """Unacknowledged findings per severity, and the number of acknowledged ones."""
    counts: dict[str, int] = {severity: 0 for severity in SEVERITIES}
    acknowledged = 0
    for finding in findings:
        if finding.acknowledged is not None:
            acknowledged += 1
        else:
            counts[finding.severity] += 1
    return {**counts, "acknowledged": acknowledged}
