"""Model checks: the access-pattern table (explain) and the lint rules."""

from .rules import (
    RULES,
    SEVERITIES,
    Finding,
    Severity,
    acknowledgements,
    can_sort_after,
    check,
    exit_status,
    explain_json,
    explain_markdown,
    format_json,
    format_text,
    languages_intersect,
    summary,
    template_language,
)

__all__ = [
    "RULES",
    "SEVERITIES",
    "Finding",
    "Severity",
    "acknowledgements",
    "can_sort_after",
    "check",
    "exit_status",
    "explain_json",
    "explain_markdown",
    "format_json",
    "format_text",
    "languages_intersect",
    "summary",
    "template_language",
]
