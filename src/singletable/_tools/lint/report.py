"""What lint and explain print: the access-pattern table, acknowledgements applied to the
findings, and the findings as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .findings import RULES, SEVERITIES, Finding, exit_status, new_finding, summary

if TYPE_CHECKING:
    from ..._repository import Repository

EXPLAIN_COLUMNS = ("Pattern", "Operation", "Index", "Key condition", "Entity types", "Order")

ACKNOWLEDGE_ATTRIBUTE = "lint_acknowledge"

#: Where the collapsed acknowledged findings are shown in full.
VERBOSE_HINT = "lint --verbose"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def explain_markdown(repository: type[Repository]) -> str:
    """The access-pattern table as Markdown: one row per pattern, every row one request
    (``Query+BatchGetItem`` for hydrating patterns)."""
    lines = [
        "| " + " | ".join(EXPLAIN_COLUMNS) + " |",
        "|" + "|".join("---" for _ in EXPLAIN_COLUMNS) + "|",
    ]
    for row in repository.explain():
        condition = f"`{row.key_condition}`"
        if row.filter:
            condition += f" filter `{row.filter}`"
        cells = (
            row.pattern,
            row.operation,
            row.index or "table",
            condition,
            ", ".join(row.entity_types),
            row.order,
        )
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def explain_json(repository: type[Repository]) -> str:
    """The access-pattern table as JSON (a list of row objects)."""
    rows: list[dict[str, Any]] = [row.as_dict() for row in repository.explain()]
    return json.dumps(rows, indent=2) + "\n"


# -- acknowledgements --------------------------------------------------------------------------


def acknowledgements(repository: type[Repository]) -> dict[str, Any]:
    """The repository's ``lint_acknowledge`` mapping (inherited like any class attribute)."""
    raw = getattr(repository, ACKNOWLEDGE_ATTRIBUTE, None)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        return {"": raw}
    return dict(raw)


def _ack_closeness(key: str, finding: Finding) -> int | None:
    """How closely acknowledgement ``key`` names ``finding``, or None when it does not: a
    bare code is the loosest, a subject prefix (``A+B`` covers ``A+B.GSI1``) closer the longer
    it is, the finding's own subject (as the listing shows it) the closest. A pair may be
    written either way round (``B+A`` is ``A+B``)."""
    code, _, subject = key.partition(":")
    if code != finding.code:
        return None
    if not subject:
        return 0
    head, dot, rest = subject.partition(".")
    subject = "+".join(sorted(head.split("+"))) + dot + rest
    if finding.subject == subject:
        return len(subject) + 1
    if finding.subject.startswith(subject + "."):
        return len(subject)
    return None


def apply_acknowledgements(findings: list[Finding], entries: Mapping[str, Any]) -> list[Finding]:
    """``findings`` with the acknowledged ones marked, then a finding per invalid or unused
    acknowledgement."""
    problems: list[Finding] = []
    valid: dict[str, str] = {}
    for key, reason in entries.items():
        code = key.partition(":")[0] if isinstance(key, str) else ""
        if not isinstance(key, str) or code not in RULES:
            problems.append(
                new_finding(
                    "invalid-acknowledgement",
                    str(key) or ACKNOWLEDGE_ATTRIBUTE,
                    f"{ACKNOWLEDGE_ATTRIBUTE} entry {key!r} does not name a lint code"
                    if key
                    else f"{ACKNOWLEDGE_ATTRIBUTE} must be a mapping of 'code:subject' to a reason",
                    f"use 'code:subject' with a code from: {', '.join(RULES)}",
                )
            )
            continue
        if not isinstance(reason, str) or not reason.strip():
            problems.append(
                new_finding(
                    "invalid-acknowledgement",
                    key,
                    f"{ACKNOWLEDGE_ATTRIBUTE}[{key!r}] has no reason",
                    "say why the finding is deliberate: {'" + key + "': 'why'}",
                )
            )
            continue
        valid[key] = reason.strip()
    used: set[str] = set()
    result = []
    for finding in findings:
        # The closest acknowledgement wins: "A+B.GSI1" over "A+B" for the GSI1 finding.
        closeness = {key: _ack_closeness(key, finding) for key in valid}
        matching = [key for key, close in closeness.items() if close is not None]
        if matching:
            key = max(matching, key=lambda k: closeness[k] or 0)
            finding = replace(finding, acknowledged=valid[key])
            used.add(key)
        result.append(finding)
    for key in valid:
        if key not in used:
            problems.append(
                new_finding(
                    "unused-acknowledgement",
                    key,
                    f"{ACKNOWLEDGE_ATTRIBUTE}[{key!r}] matches no finding",
                    "remove it (the model changed) or fix its subject",
                )
            )
    return result + problems


# -- formatting --------------------------------------------------------------------------------


def _plural(count: int, word: str) -> str:
    if word == "info":
        return f"{count} info"
    return f"{count} {word}{'s' if count != 1 else ''}"


def format_text(
    repository: type[Repository], findings: Sequence[Finding], *, verbose: bool = False
) -> str:
    """Findings as text: one block per finding, then a summary line. Acknowledged findings are
    collapsed into one line ("8 acknowledged findings ...") unless ``verbose``."""
    lines = []
    for finding in findings:
        if finding.acknowledged is not None and not verbose:
            continue
        status = "acknowledged" if finding.acknowledged is not None else finding.severity
        lines.append(f"{status.upper():<12} {finding.code} [{finding.subject}]")
        lines.append(f"    {finding.message}")
        if finding.acknowledged is not None:
            lines.append(f"    acknowledged ({finding.severity}): {finding.acknowledged}")
        else:
            lines.append(f"    fix: {finding.hint}")
    counts = summary(findings)
    name = repository.__qualname__
    if counts["acknowledged"] and not verbose:
        lines.append(
            f"{_plural(counts['acknowledged'], 'acknowledged finding')} "
            f"({VERBOSE_HINT} shows {'them' if counts['acknowledged'] != 1 else 'it'})"
        )
    if not findings:
        lines.append(f"{name}: no findings")
    else:
        parts = [_plural(counts[s], s) for s in SEVERITIES]
        if counts["acknowledged"]:
            parts.append(f"{counts['acknowledged']} acknowledged")
        verdict = "fails" if exit_status(findings) else "passes"
        lines.append(f"{name}: {', '.join(parts)} -> {verdict}")
    return "\n".join(lines) + "\n"


def format_json(repository: type[Repository], findings: Sequence[Finding]) -> str:
    """Findings as a JSON object: repository, findings, counts and exit status."""
    document = {
        "repository": f"{repository.__module__}:{repository.__qualname__}",
        "findings": [f.as_dict() for f in findings],
        "counts": summary(findings),
        "exit_status": exit_status(findings),
    }
    return json.dumps(document, indent=2) + "\n"
