"""Where a declaration is in the user's source: definition errors point at the line at fault.

A model mistake is raised while Python runs the ``class`` statement, so the traceback ends at
the ``class`` line (or inside pydantic). :func:`locate` finds the line of the culprit instead,
the ``class Keys`` entry (``sk = "ORDER#{orderid}"``), the field, or the pattern, by reading
the class's source with :mod:`ast`, and attaches it to the error: ``error.location`` holds
``"path:line"``; on Python 3.11 and later a note (``add_note``) shows it under the traceback,
before that it is appended to the message. The CLI prints it with the error.

The culprit comes from the error itself: definition errors name it first, as
``Order.Keys.GSI1: ...``, ``Order sk template '...' ...``, ``Order GSI1 pk template ...`` or
``Order.created_at: ...`` (``Shop.orders: ...`` for a pattern); anything else points at the
``class`` line. Only the error path pays for this: nothing is read while a model is fine.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from typing import Any

from .errors import SingleTableError

__all__ = ["attribute_line", "locate"]


def locate(error: SingleTableError, cls: type, attribute: str | None = None) -> None:
    """Attach the source line of ``cls``'s culprit to ``error`` (once; no-op when the source
    cannot be read, as for classes typed at a prompt). ``attribute`` names the culprit
    directly (a pattern of a repository); otherwise it is read from the message."""
    if getattr(error, "location", None) is not None:
        return  # located where it was first raised (a nested class)
    where = _culprit(error.message, cls) if attribute is None else ("attribute", attribute)
    found = attribute_line(cls, *where) or attribute_line(cls, "class", "")
    if found is None:
        return
    path, line, text = found
    error.location = f"{path}:{line}"
    note = f"defined at {path}:{line}" + (f": {text}" if text else "")
    if sys.version_info >= (3, 11):
        error.add_note(note)
    else:  # pragma: no cover - Python 3.10 has no exception notes
        error.message = f"{error.message}\n  {note}"
        error.args = (error.message, *error.args[1:])


def _culprit(message: str, cls: type) -> tuple[str, str]:
    """(kind, name) of what ``message`` names first: a Keys entry, a field, or the class."""
    owner = re.escape(cls.__qualname__)
    entry = re.match(rf"{owner}\.Keys\.(\w+)", message) or re.match(
        rf"{owner} (\w+)(?: pk| sk)? template ", message
    )
    if entry:
        return ("keys", entry.group(1))
    if re.match(rf"{owner}\.Keys\b", message):
        return ("attribute", "Keys")
    field = re.match(rf"{owner}\.(\w+)", message)
    if field:
        return ("attribute", field.group(1))
    return ("class", "")


def attribute_line(cls: type, kind: str, name: str) -> tuple[str, int, str] | None:
    """``(path, line, source text)`` of a class's ``kind``: ``"class"`` (its ``class``
    statement), ``"attribute"`` (a field or pattern assigned in its body, or in the base class
    that declares it) or ``"keys"`` (an entry of its ``class Keys``)."""
    for klass in cls.__mro__:
        own = vars(klass)
        if kind == "attribute" and not (name in own or name in own.get("__annotations__", {})):
            continue
        if kind == "keys" and "Keys" not in own:
            continue
        found = _source_line(klass, kind, name)
        if found is not None or kind == "class":
            return found
    return None


def _source_line(klass: type, kind: str, name: str) -> tuple[str, int, str] | None:
    try:
        path = inspect.getsourcefile(klass)
        lines, start = inspect.getsourcelines(klass)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    body = tree.body[0] if tree.body else None
    if path is None or not isinstance(body, ast.ClassDef):
        return None
    node: ast.AST | None = body
    if kind == "keys":
        keys = _member(body, "Keys")
        node = _member(keys, name) if isinstance(keys, ast.ClassDef) else None
    elif kind == "attribute":
        node = _member(body, name)
    if node is None:
        return None
    offset = getattr(node, "lineno", 1) - 1
    return path, start + offset, lines[offset].strip()


def _member(body: ast.ClassDef, name: str) -> ast.AST | None:
    """The statement of ``body`` that defines ``name`` (a nested class or an assignment)."""
    for node in body.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
        if isinstance(node, ast.AnnAssign) and _named(node.target, name):
            return node
        if isinstance(node, ast.Assign) and any(_named(t, name) for t in node.targets):
            return node
    return None


def _named(target: Any, name: str) -> bool:
    return isinstance(target, ast.Name) and target.id == name
