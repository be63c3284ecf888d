"""Model checks: the access-pattern table (explain) and the lint rules.

``check(Repo)`` inspects a repository class, its table and every entity declared on that table,
without any I/O, and returns :class:`Finding` objects. Each has a stable ``code``, a
``severity`` (``"error"``, ``"warning"`` or ``"info"``), a ``subject`` (what it is about), a
``message``, a fix ``hint`` and a ``url``: its section of docs/lint.md (``LINT_URL#<code>``),
which says what the rule finds, why it matters and how to fix it. Only unacknowledged errors
fail ``singletable lint``.

Rules (code, severity, subject):

==========================  ========  ==========================================================
``scan``                    error     pattern: anything that would be sent as a Scan (a
                                      declared ``scan(E, index=...)`` of a sparse index is
                                      listed as ``info``: it reads what the index holds)
``key-collision``           error     ``A+B`` or ``A+B.INDEX``: two entity types whose keys on
                                      one index can render equal strings (the same item)
``unsortable-sort-key``     error     ``Entity`` or ``Entity.INDEX``: a sort-key segment that
                                      does not sort like its value (bare number, strftime out of
                                      order); also refused at definition time
``projection-mismatch``     error     pattern: a KEYS_ONLY/INCLUDE index read for whole
                                      entities without ``keys_only=`` or ``hydrate=``
``hot-partition``           warning   ``Entity`` or ``Entity.INDEX``: a partition key template
                                      with no placeholder, or only Enum/bool/Literal ones, or
                                      native partition attributes that are all Enum/Literal
                                      (or a ``Shard`` field alone); a ``Shard(n >= 2)`` field
                                      beside them spreads it: not reported. The hint is the
                                      ``Shard`` line, the template or ``GSI(...)`` line and
                                      ``scatter=`` to add
``prefix-overlap``          warning   ``pattern.Entity``: the pattern's ``begins_with`` prefix
                                      also matches another type's sort keys in its partition
``unused-index``            warning   index: declared on the table, read by no pattern
``too-many-indexes``        warning   table: more than 5 global secondary indexes
``unread-index``            warning   ``Entity.INDEX``: the entity writes index keys that no
                                      pattern reads (write amplification)
``collection-parent-order`` warning   pattern: the collection's first (parent) type does not
                                      sort first in the collection's order
``filter``                  info      pattern: a server-side filter, with a waste estimate
``implicit-type-tag``       info      ``Entity``: no ``type=``, so renaming the class orphans
                                      its stored items
``former-types``            info      ``Entity``: ``former_types=`` declared; a reminder to run
                                      ``singletable backfill`` (lint reads no table), then
                                      acknowledge it or drop the former tags
``propagation``             info      pattern: a ``propagate(...)``: which fields are copies,
                                      and the pattern it rewrites them through
``write-amplification``     info      ``Entity``: a write (create, put, update or delete) whose
                                      index writes cost more than 4x its table write, priced as
                                      ``explain(costs=True)`` prices it (an update that can
                                      change an index key writes that index twice); the
                                      indexes are named with their units
``unused-acknowledgement``  info      acknowledgement key that matches no finding
``invalid-acknowledgement`` error     acknowledgement key with an unknown code or no reason
==========================  ========  ==========================================================

Acknowledging a deliberate finding: give the repository a ``lint_acknowledge`` mapping from
``"code:subject"`` to the reason::

    class Shop(Repository, table=shop):
        lint_acknowledge = {
            "hot-partition:Order.GSI2": "sparse queue index of pending orders, deliberate",
            "implicit-type-tag": "type tags are the class names on purpose",
        }

A key ``"code:subject"`` matches findings with that code whose subject is ``subject`` or lies
under it (``"hot-partition:Order"`` also covers ``Order.GSI2``); a bare ``"code"`` matches every
finding of that code. The reason must be a non-empty string. Acknowledged findings never fail
the command, and the text output collapses them into one line (``format_text(...,
verbose=True)`` or ``singletable lint --verbose`` lists each with its reason). An
acknowledgement that matches nothing is reported as ``unused-acknowledgement`` so stale ones
get cleaned up. Subclasses inherit the mapping (extend it with ``{**Base.lint_acknowledge,
...}``), and ``check(Repo, acknowledge={...})`` adds more.

The package: ``findings`` (the ``Finding`` record and ``RULES``), ``languages`` (key templates
as regular languages, so collisions, overlaps and orders are decided exactly), ``rules`` (one
generator per rule, and ``check``; ``amplification`` holds ``write-amplification``), ``hot``
(the hot-partition rule and its hints), ``report`` (explain tables, acknowledgements, text and
JSON output). It is tooling, never imported by the library, so it uses dataclasses freely (the
library avoids them for import time).
"""

from .findings import LINT_URL, RULES, SEVERITIES, Finding, Severity, exit_status, summary
from .languages import can_sort_after, languages_intersect, template_language
from .report import (
    ACKNOWLEDGE_ATTRIBUTE,
    EXPLAIN_COLUMNS,
    acknowledgements,
    explain_json,
    explain_markdown,
    explain_text,
    format_json,
    format_markdown,
    format_text,
)
from .rules import MAX_GSIS, check

__all__ = [
    "ACKNOWLEDGE_ATTRIBUTE",
    "EXPLAIN_COLUMNS",
    "LINT_URL",
    "MAX_GSIS",
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
    "explain_text",
    "format_json",
    "format_markdown",
    "format_text",
    "languages_intersect",
    "summary",
    "template_language",
]
