"""``singletable stubs module:Repo``: the repository's module with every attribute pattern
rewritten as a declared signature.

The output is the module's own source, in which each ``name = query(...)`` (or ``get``,
``collection``) of the repository class, and of the classes it inherits patterns from in the
same module, becomes::

    @query(...)
    def name(self, *, customer_id: str, ..., limit: int | None = None) -> Page[Order]: ...

so it is a self-contained module defining the same repository class. Saved as a ``.py`` it is
the switched module (it runs: declared signatures are checked when the class is created);
saved as a ``.pyi`` (beside the module, or under pyright's ``stubPath``) it gives pyright,
which has no plugins, the typed calls the mypy plugin gives mypy. Keyword types come from
:func:`singletable._tools.signatures.call_signature`, the runtime's own answer.
"""

from __future__ import annotations

import ast
import inspect
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from .signatures import CallSignature, Keyword, call_signature

#: names the rewritten signatures use, and where they come from
_SINGLETABLE_NAMES = ("Collection", "Condition", "ConditionFn", "KeyRef", "Page")
_TYPING_NAMES = {typing.Any: "Any", typing.Literal: "Literal"}


class Names:
    """How the generated text names things: a name the module already binds to the object,
    else a new import (collected in ``imports``)."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.namespace = namespace
        self.imports: dict[str, set[str]] = {}  # module -> names

    def of(self, obj: Any, module: str, name: str) -> str:
        bound = self.namespace.get(name, _MISSING)
        if bound is obj:
            return name
        if bound is not _MISSING:  # the name means something else here: qualify it
            self.imports.setdefault("", set()).add(module)
            return f"{module}.{name}"
        self.imports.setdefault(module, set()).add(name)
        return name

    def import_lines(self) -> list[str]:
        lines = [f"import {m}" for m in sorted(self.imports.get("", ()))]
        for module, names in sorted(self.imports.items()):
            if module:
                lines.append(f"from {module} import {', '.join(sorted(names))}")
        return lines


_MISSING = object()


def annotation_text(annotation: Any, names: Names) -> str:
    """Source text of a runtime annotation (``Annotated`` metadata dropped); ``Any`` for what
    cannot be named from the module (a class local to a function)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is None or annotation is type(None):
        return "None"
    if origin is typing.Annotated:
        return annotation_text(args[0], names)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(annotation_text(a, names) for a in args)
    if origin is typing.Literal:
        return f"{names.of(typing.Literal, 'typing', 'Literal')}[{', '.join(map(repr, args))}]"
    if annotation in _TYPING_NAMES:
        return names.of(annotation, "typing", _TYPING_NAMES[annotation])
    if origin is not None:
        base = annotation_text(origin, names)
        return f"{base}[{', '.join(annotation_text(a, names) for a in args)}]" if args else base
    if isinstance(annotation, type):
        if annotation.__module__ == "builtins":
            return annotation.__name__
        qualname = annotation.__qualname__
        if "<locals>" in qualname:
            return names.of(typing.Any, "typing", "Any")
        top, _, rest = qualname.partition(".")
        holder = sys.modules[annotation.__module__].__dict__.get(top, annotation)
        text = names.of(holder, annotation.__module__, top)
        return f"{text}.{rest}" if rest else text
    return names.of(typing.Any, "typing", "Any")


def _singletable(names: Names, name: str) -> str:
    import singletable

    return names.of(getattr(singletable, name), "singletable", name)


def keyword_text(keyword: Keyword, signature: CallSignature, names: Names) -> str:
    """``name: type`` (required) or ``name: type | None = None`` of one keyword."""
    if keyword.shape == "limit":
        kind = "int"
    elif keyword.shape == "cursor" or keyword.shape == "prefix":
        kind = "str"
    elif keyword.shape == "where":
        entity = (
            annotation_text(signature.entities[0], names)
            if len(signature.entities) == 1
            else names.of(typing.Any, "typing", "Any")
        )
        kind = (
            f"{_singletable(names, 'Condition')} | {_singletable(names, 'ConditionFn')}[{entity}]"
        )
    elif keyword.shape == "any" or keyword.entity is None or keyword.field is None:
        kind = names.of(typing.Any, "typing", "Any")
    else:
        kind = _field_text(keyword.entity, keyword.field, names)
        if keyword.shape == "pair":
            kind = f"tuple[{kind}, {kind}]"
        elif keyword.shape == "values":
            kind = f"{names.of(Iterable, 'collections.abc', 'Iterable')}[{kind}]"
    if keyword.required:
        return f"{keyword.name}: {kind}"
    return f"{keyword.name}: {kind} | None = None"


def _field_text(entity: type[Any], field: str, names: Names) -> str:
    """A key field's type, without ``None`` (no key value is None)."""
    info = entity.model_fields.get(field)
    if info is not None:
        annotation = info.annotation
    elif field in entity.model_computed_fields:
        annotation = entity.model_computed_fields[field].return_type
    else:
        return names.of(typing.Any, "typing", "Any")
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " | ".join(annotation_text(a, names) for a in kept)
    return annotation_text(annotation, names)


def result_text(signature: CallSignature, names: Names) -> str:
    if signature.kind == "collection":
        return _singletable(names, "Collection")
    item = annotation_text(signature.result, names)
    if signature.keys_only:
        item = f"{_singletable(names, 'KeyRef')}[{item}]"
    if signature.kind in ("get", "one"):
        return f"{item} | None"
    return f"{_singletable(names, 'Page')}[{item}]"


def method_text(
    name: str, declaration: str, signature: CallSignature, names: Names, indent: str
) -> str:
    """The declared-signature form of one pattern."""
    params = [keyword_text(k, signature, names) for k in signature.keywords]
    head = f"def {name}(self, *, {', '.join(params)})" if params else f"def {name}(self)"
    result = result_text(signature, names)
    one_line = f"{indent}{head} -> {result}: ..."
    if len(one_line) <= 100:
        body = one_line
    else:
        inner = indent + "    "
        lines = [f"{indent}def {name}(", f"{inner}self,", f"{inner}*,"]
        lines += [f"{inner}{p}," for p in params]
        body = "\n".join([*lines, f"{indent}) -> {result}: ..."])
    return f"{indent}@{declaration}\n{body}"


def stub_module(repository: type[Any]) -> str:
    """The source of ``repository``'s module with its attribute patterns (and those it
    inherits from classes of the same module) as declared signatures."""
    module = sys.modules[repository.__module__]
    source = inspect.getsource(module)
    tree = ast.parse(source)
    names = Names(module.__dict__)
    edits: list[tuple[int, int, str]] = []  # (first line, last line, replacement), 1-based
    elsewhere = []
    for cls in repository.__mro__:
        patterns = {n: v for n, v in cls.__dict__.items() if call_signature(v) is not None}
        if not patterns:
            continue
        node = _class_node(tree, cls) if cls.__module__ == module.__name__ else None
        if node is None:
            elsewhere.append(f"{cls.__module__}.{cls.__qualname__}")
            continue
        for statement in node.body:
            target = _assigned_name(statement)
            if target in patterns and isinstance(statement, (ast.Assign, ast.AnnAssign)):
                assert statement.value is not None and statement.end_lineno is not None
                declaration = ast.get_source_segment(source, statement.value) or ""
                indent = " " * statement.col_offset
                signature = call_signature(patterns[target])
                assert signature is not None
                text = method_text(target, declaration, signature, names, indent)
                edits.append((statement.lineno, statement.end_lineno, text))
    lines = source.splitlines()
    for first, last, text in sorted(edits, reverse=True):
        lines[first - 1 : last] = text.split("\n")
    imports = names.import_lines()
    at = _import_position(tree)
    note = [
        "",
        f"# Generated by `singletable stubs {repository.__module__}:{repository.__qualname__}`: "
        "attribute patterns as declared signatures.",
    ]
    if elsewhere:
        note.append(f"# Patterns inherited from other modules are not rewritten: {elsewhere}")
    lines[at:at] = [*note, *imports]
    return "\n".join(lines) + "\n"


def _class_node(tree: ast.Module, cls: type[Any]) -> ast.ClassDef | None:
    """The class statement of ``cls`` (by qualified name; None for local classes)."""
    body: list[ast.stmt] = tree.body
    found: ast.ClassDef | None = None
    for part in cls.__qualname__.split("."):
        found = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if found is None:
            return None
        body = found.body
    return found


def _assigned_name(statement: ast.stmt) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    return None


def _import_position(tree: ast.Module) -> int:
    """The line after the module's leading docstring and imports (0-based insert index)."""
    position = 0
    for node in tree.body:
        is_docstring = (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if isinstance(node, (ast.Import, ast.ImportFrom)) or (is_docstring and position == 0):
            position = node.end_lineno or position
        else:
            break
    return position
