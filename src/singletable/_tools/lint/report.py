"""What lint and explain print: the access-pattern table, acknowledgements applied to the
findings, and the findings as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._text import text_table, wrap_block
from .findings import RULES, SEVERITIES, Finding, exit_status, new_finding, summary

if TYPE_CHECKING:
    from ..._repository import Repository

EXPLAIN_COLUMNS = ("Pattern", "Operation", "Index", "Key condition", "Entity types", "Order")

ACKNOWLEDGE_ATTRIBUTE = "lint_acknowledge"

#: Where the collapsed acknowledged findings are shown in full.
VERBOSE_HINT = "lint --verbose"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


COST_COLUMNS = ("RCU", "WCU")


def _explain_cells(
    repository: type[Repository],
    quote: str,
    costs: bool = False,
    items: Sequence[Mapping[str, Any]] | None = None,
) -> list[tuple[str, ...]]:
    """Each pattern's explain row as the table's cells (conditions between ``quote``s), with
    the ``RCU`` and ``WCU`` cells when priced."""
    priced = costs or items is not None
    rows: list[tuple[str, ...]] = []
    for row in repository.explain(costs=priced, items=items):
        condition = f"{quote}{row.key_condition}{quote}"
        if row.filter:
            condition += f" filter {quote}{row.filter}{quote}"
        cells: tuple[str, ...] = (
            row.pattern,
            row.operation,
            row.index or "table",
            condition,
            ", ".join(row.entity_types),
            row.order,
        )
        if priced:
            cells += (f"{row.rcu:g}", write_units_text(row.wcu or {}))
        rows.append(cells)
    return rows


def explain_markdown(
    repository: type[Repository],
    *,
    costs: bool = False,
    items: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The access-pattern table as Markdown: one row per pattern, every row one request
    (``Query+BatchGetItem`` for hydrating patterns). ``costs=True`` (or sample ``items``) adds
    the ``RCU`` of one call and the ``WCU`` of each write verb (``Repo.explain(costs=True)``)."""
    priced = costs or items is not None
    columns = EXPLAIN_COLUMNS + (COST_COLUMNS if priced else ())
    lines = [
        "| " + " | ".join(columns) + " |",
        "|" + "|".join("---" for _ in columns) + "|",
    ]
    for cells in _explain_cells(repository, "`", costs, items):
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def explain_text(
    repository: type[Repository],
    width: int | None = None,
    *,
    costs: bool = False,
    items: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The access-pattern table as aligned text, wrapped to ``width`` columns when given
    (what ``singletable explain`` prints on a terminal)."""
    priced = costs or items is not None
    columns = EXPLAIN_COLUMNS + (COST_COLUMNS if priced else ())
    return text_table(columns, _explain_cells(repository, "", costs, items), width)


def write_units_text(wcu: Mapping[str, Mapping[str, int]]) -> str:
    """``create 3 (table 1, GSI1 1, Inverted 1); ...``: each verb's total and its parts."""
    parts = []
    for verb, units in wcu.items():
        detail = ", ".join(f"{where} {n}" for where, n in units.items())
        parts.append(f"{verb} {sum(units.values())} ({detail})")
    return "; ".join(parts)


def explain_json(
    repository: type[Repository],
    *,
    costs: bool = False,
    items: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The access-pattern table as JSON (a list of row objects; with ``rcu`` and ``wcu`` when
    priced)."""
    rows = repository.explain(costs=costs, items=items)
    return json.dumps([row.as_dict() for row in rows], indent=2) + "\n"


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
    repository: type[Repository],
    findings: Sequence[Finding],
    *,
    verbose: bool = False,
    width: int | None = None,
) -> str:
    """Findings as text: one block per finding, ending with its link, then a summary line.
    Acknowledged findings are collapsed into one line ("8 acknowledged findings ...") unless
    ``verbose``. With ``width``, messages and hints are wrapped to that many columns."""
    lines = []
    for finding in findings:
        if finding.acknowledged is not None and not verbose:
            continue
        status = "acknowledged" if finding.acknowledged is not None else finding.severity
        lines.append(f"{status.upper():<12} {finding.code} [{finding.subject}]")
        lines += wrap_block(finding.message, width, "    ")
        if finding.acknowledged is not None:
            note = f"acknowledged ({finding.severity}): {finding.acknowledged}"
        else:
            note = f"fix: {finding.hint}"
        lines += wrap_block(note, width, "    ")
        lines.append(f"    see {finding.url}")
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


def format_markdown(repository: type[Repository], findings: Sequence[Finding]) -> str:
    """Findings as a Markdown table (acknowledged ones included, with their reasons), then the
    summary line."""
    lines = [
        "| Severity | Code | Subject | Finding | Fix |",
        "|---|---|---|---|---|",
    ]
    for finding in findings:
        status = finding.severity + (" (acknowledged)" if finding.acknowledged else "")
        fix = f"acknowledged: {finding.acknowledged}" if finding.acknowledged else finding.hint
        code = f"[`{finding.code}`]({finding.url})"
        cells = (status, code, finding.subject, finding.message, fix)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    summary_line = format_text(repository, findings).rstrip("\n").rsplit("\n", 1)[-1]
    return "\n".join([*lines, "", summary_line]) + "\n"


def format_json(repository: type[Repository], findings: Sequence[Finding]) -> str:
    """Findings as a JSON object: repository, findings, counts and exit status."""
    document = {
        "repository": f"{repository.__module__}:{repository.__qualname__}",
        "findings": [f.as_dict() for f in findings],
        "counts": summary(findings),
        "exit_status": exit_status(findings),
    }
    return json.dumps(document, indent=2) + "\n"
