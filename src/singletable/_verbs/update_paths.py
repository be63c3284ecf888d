"""Document paths in an update's clauses (``set={"shipping.city": "Lyon"}``), pure: no I/O.

Each path is resolved against the entity (:func:`.._document_paths.resolve_path`) and checked
for its clause (:func:`clause_paths`); two entries where one contains the other are refused
(:func:`check_overlaps`: DynamoDB refuses such an update). DynamoDB also refuses an update of a
path whose parent is not stored; where the model does not guarantee the parent (an optional
model, a map entry, a list element), the update is conditioned on it
(:func:`parent_conditions`) and a failure names it (:func:`missing_parent`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from .._document_paths import DocumentPath, is_document_path, parse_path, resolve_path
from .._entity_spec import EntitySpec
from .._expressions import Attr, Condition
from .._wire import Wire
from ..errors import ConditionFailed, InvalidRequestError

#: What each clause needs at its path (an untyped path, under ``Any``, takes anything).
CLAUSE_KINDS = {
    "add": ("number", "set"),
    "delete": ("set",),
    "append": ("list",),
    "prepend": ("list",),
}


def clause_paths(
    spec: EntitySpec, by_clause: Mapping[str, Iterable[str]]
) -> dict[str, DocumentPath]:
    """The document paths among the clauses' entries (clause keyword -> entries), resolved:
    refused, naming the path, when it does not exist in the model, when ``remove=`` names a
    required field, or when the clause needs another kind of value there."""
    paths: dict[str, DocumentPath] = {}
    for clause, entries in by_clause.items():
        for text in entries:
            if not is_document_path(text):
                continue
            path = paths[text] = resolve_path(spec, text)
            if clause == "remove" and path.required:
                raise InvalidRequestError(
                    f"{spec.name}.{text} is required and cannot be removed", key=text
                )
            needed = CLAUSE_KINDS.get(clause)
            if needed is not None and path.kind not in (*needed, "any"):
                raise InvalidRequestError(
                    f"{clause}= needs a {' or '.join(needed)}; {text!r} is not", key=text
                )
    return paths


def check_overlaps(spec: EntitySpec, mentioned: Iterable[str]) -> None:
    """Refuse two entries where one contains the other (``shipping`` and ``shipping.city``,
    ``lines[0]`` and ``lines[0].qty``): DynamoDB refuses an update whose paths overlap."""
    # Sorted by their steps, the paths a path contains come right after it.
    parsed = sorted(
        (tuple((isinstance(s, int), s) for s in parse_path(text)), text)
        for text in dict.fromkeys(mentioned)
    )
    for (outer, outer_text), (inner, inner_text) in itertools.pairwise(parsed):
        if inner[: len(outer)] == outer:
            raise InvalidRequestError(
                f"{spec.name}: {outer_text!r} and {inner_text!r} overlap (one contains the "
                "other), and DynamoDB refuses an update that writes both; change the whole "
                "value or its parts, not both",
                key=inner_text,
            )


def parent_conditions(paths: Mapping[str, DocumentPath]) -> list[Condition]:
    """``attribute_exists(parent)`` for each parent the model does not guarantee is stored."""
    parents = dict.fromkeys(p.parent for p in paths.values() if p.parent is not None)
    return [Attr(parent).exists() for parent in parents]


def missing_parent(
    spec: EntitySpec,
    key_text: str,
    paths: Mapping[str, DocumentPath],
    old: Mapping[str, Wire],
    current: Any,
) -> ConditionFailed | None:
    """The error of an update that failed because a path's parent is not stored in ``old``
    (the item DynamoDB returned with the failure), or None."""
    for path in paths.values():
        if path.parent is not None and not _stored(old, path.parent):
            parent = _given_parent(path.text)
            return ConditionFailed(
                f"{spec.name} {key_text}: {parent} is not stored, so {path.text} cannot be "
                f"updated (DynamoDB updates a path only below a stored map or list element); "
                f"set {parent} whole, e.g. set={{{parent!r}: ...}}",
                key=path.text,
                item=current,
            )
    return None


def _given_parent(text: str) -> str:
    """``"shipping.city"`` -> ``"shipping"``; ``"lines[0].qty"`` -> ``"lines[0]"``."""
    cut = max(text.rfind("."), text.rfind("["))
    return text[:cut]


def _stored(item: Mapping[str, Wire], stored_path: str) -> bool:
    """Whether ``stored_path`` (stored names) holds a value in the wire ``item``."""
    node: Any = {"M": item}
    for step in parse_path(stored_path):
        if isinstance(step, int):
            items = node.get("L") if isinstance(node, dict) else None
            if items is None or step >= len(items):
                return False
            node = items[step]
        else:
            members = node.get("M") if isinstance(node, dict) else None
            if members is None or step not in members:
                return False
            node = members[step]
    return True
