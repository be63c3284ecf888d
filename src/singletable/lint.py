"""Model checks, as a library: the access-pattern table (``explain_markdown``) and the lint
rules (``check``), the same as ``singletable explain`` and ``singletable lint`` print.

``check(Repo)`` inspects a repository class, its table and every entity declared on that table,
without any I/O, and returns :class:`Finding` objects, each with a stable ``code``, a
``severity`` (``"error"``, ``"warning"`` or ``"info"``), a ``subject``, a ``message`` and a fix
``hint``; ``exit_status(findings)`` is what the command exits with (1 when an unacknowledged
error remains). See the lint rules in the documentation for every code.
"""

from __future__ import annotations

from ._tools.lint import (
    RULES,
    Finding,
    Severity,
    check,
    exit_status,
    explain_json,
    explain_markdown,
    format_json,
    format_text,
)

__all__ = [
    "RULES",
    "Finding",
    "Severity",
    "check",
    "exit_status",
    "explain_json",
    "explain_markdown",
    "format_json",
    "format_text",
]
