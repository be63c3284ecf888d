"""Model checks: the access-pattern table (explain) and the lint rules."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .repository import Repository

EXPLAIN_COLUMNS = ("Pattern", "Operation", "Index", "Key condition", "Entity types", "Order")


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
