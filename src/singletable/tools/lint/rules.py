"""Model checks: the access-pattern table (explain) and the lint rules.

``check(Repo)`` inspects a repository class, its table and every entity declared on that table,
without any I/O, and returns :class:`Finding` objects. Each has a stable ``code``, a
``severity`` (``"error"``, ``"warning"`` or ``"info"``), a ``subject`` (what it is about), a
``message`` and a fix ``hint``. Only unacknowledged errors fail ``singletable lint``.

Rules (code, severity, subject):

==========================  ========  ==========================================================
``scan``                    error     pattern: anything that would be sent as a Scan
``key-collision``           error     ``A+B`` or ``A+B.INDEX``: two entity types whose keys on
                                      one index can render equal strings (the same item)
``unsortable-sort-key``     error     ``Entity`` or ``Entity.INDEX``: a sort-key segment that
                                      does not sort like its value (bare number, strftime out of
                                      order); also refused at definition time
``projection-mismatch``     error     pattern: a KEYS_ONLY/INCLUDE index read for whole
                                      entities without ``keys_only=`` or ``hydrate=``
``hot-partition``           warning   ``Entity`` or ``Entity.INDEX``: a partition key template
                                      with no placeholder, or only Enum/bool/Literal ones
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
finding of that code. The reason must be a non-empty string. Acknowledged findings are still
reported, marked with their reason, and never fail the command; an acknowledgement that matches
nothing is reported as ``unused-acknowledgement`` so stale ones get cleaned up. Subclasses
inherit the mapping (extend it with ``{**Base.lint_acknowledge, ...}``), and
``check(Repo, acknowledge={...})`` adds more.

Key templates are analysed as regular languages (literal text, and per placeholder the strings
its type can render: free text without the delimiter, the members of an Enum or Literal, digits
of a given width, canonical datetimes...), so "can collide" and "can sort after" are decided
exactly for each pair of templates (fields shared between templates are treated as
independent).
"""

from __future__ import annotations

import enum
import json
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from ...codec import bare_annotation

if TYPE_CHECKING:
    from ...entity import EntitySpec
    from ...expressions import Condition
    from ...keys import KeyTemplate, Placeholder
    from ...patterns import Pattern
    from ...repository import Repository

EXPLAIN_COLUMNS = ("Pattern", "Operation", "Index", "Key condition", "Entity types", "Order")

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
    "unused-acknowledgement": "info",
    "invalid-acknowledgement": "error",
}

#: More global secondary indexes than this is a warning (each one multiplies write cost).
MAX_GSIS = 5

ACKNOWLEDGE_ATTRIBUTE = "lint_acknowledge"


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


# -- findings ----------------------------------------------------------------------------------


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
        }


def _finding(code: str, subject: str, message: str, hint: str) -> Finding:
    return Finding(code, RULES[code], subject, message, hint)


def exit_status(findings: Iterable[Finding]) -> int:
    """1 when an unacknowledged error is among ``findings``, else 0."""
    return 1 if any(f.fails for f in findings) else 0


# -- key languages -----------------------------------------------------------------------------

_MAX_CHAR = 0x10FFFE  # U+10FFFF is reserved: keys never hold it


@dataclass(frozen=True)
class _Chars:
    """A set of characters: ``chars``, or every character but ``chars`` when ``negated``."""

    chars: frozenset[str]
    negated: bool = False

    def intersects(self, other: _Chars) -> bool:
        if self.negated and other.negated:
            return True
        if self.negated:
            return bool(other.chars - self.chars)
        if other.negated:
            return bool(self.chars - other.chars)
        return bool(self.chars & other.chars)

    def highest(self) -> int:
        if not self.negated:
            return max(map(ord, self.chars))
        code = _MAX_CHAR
        while chr(code) in self.chars:
            code -= 1
        return code

    def lowest(self) -> int:
        if not self.negated:
            return min(map(ord, self.chars))
        code = 0
        while chr(code) in self.chars:
            code += 1
        return code


_DIGITS = _Chars(frozenset("0123456789"))
_HEX = _Chars(frozenset("0123456789abcdef"))
_ANY = _Chars(frozenset(), negated=True)

Edge = tuple["_Chars | None", int]


class _Lang:
    """A nondeterministic automaton for the strings a key template can render.

    Built left to right: each call appends to the language built so far.
    """

    def __init__(self) -> None:
        self.edges: list[list[Edge]] = [[]]
        self.start = 0
        self.end = 0

    def _state(self) -> int:
        self.edges.append([])
        return len(self.edges) - 1

    def _edge(self, source: int, chars: _Chars | None, target: int) -> None:
        self.edges[source].append((chars, target))

    def text(self, literal: str) -> _Lang:
        for char in literal:
            state = self._state()
            self._edge(self.end, _Chars(frozenset(char)), state)
            self.end = state
        return self

    def chars(self, chars: _Chars, low: int = 1, high: int | None = 1) -> _Lang:
        for _ in range(low):
            state = self._state()
            self._edge(self.end, chars, state)
            self.end = state
        if high is None:
            loop = self._state()
            self._edge(self.end, None, loop)
            self._edge(loop, chars, loop)
            self.end = loop
        else:
            for _ in range(high - low):
                state = self._state()
                self._edge(self.end, chars, state)
                self._edge(self.end, None, state)
                self.end = state
        return self

    def choice(self, branches: Sequence[Callable[[_Lang], object]]) -> _Lang:
        origin = self.end
        ends = []
        for build in branches:
            begin = self._state()
            self._edge(origin, None, begin)
            self.end = begin
            build(self)
            ends.append(self.end)
        join = self._state()
        for end in ends:
            self._edge(end, None, join)
        self.end = join
        return self

    # -- analysis --

    def _productive(self) -> set[int]:
        """States from which the accepting state can be reached."""
        reverse: dict[int, list[int]] = {}
        for source, edges in enumerate(self.edges):
            for _, target in edges:
                reverse.setdefault(target, []).append(source)
        seen = {self.end}
        stack = [self.end]
        while stack:
            state = stack.pop()
            for source in reverse.get(state, ()):
                if source not in seen:
                    seen.add(source)
                    stack.append(source)
        return seen


def _common_prefix_pairs(a: _Lang, b: _Lang) -> Iterable[tuple[int, int]]:
    """Every pair of (productive) states the two automata reach on one common prefix."""
    live_a, live_b = a._productive(), b._productive()
    if a.start not in live_a or b.start not in live_b:
        return
    seen = {(a.start, b.start)}
    stack = [(a.start, b.start)]
    while stack:
        pair = stack.pop()
        yield pair
        p, q = pair
        moves: list[tuple[int, int]] = []
        for chars, target in a.edges[p]:
            if chars is None and target in live_a:
                moves.append((target, q))
        for chars, target in b.edges[q]:
            if chars is None and target in live_b:
                moves.append((p, target))
        for chars_a, target_a in a.edges[p]:
            if chars_a is None or target_a not in live_a:
                continue
            for chars_b, target_b in b.edges[q]:
                if chars_b is None or target_b not in live_b:
                    continue
                if chars_a.intersects(chars_b):
                    moves.append((target_a, target_b))
        for move in moves:
            if move not in seen:
                seen.add(move)
                stack.append(move)


def languages_intersect(a: _Lang, b: _Lang) -> bool:
    """Whether some string is in both languages."""
    return any(p == a.end and q == b.end for p, q in _common_prefix_pairs(a, b))


def can_sort_after(a: _Lang, b: _Lang) -> bool:
    """Whether some string of ``a`` sorts after some string of ``b`` (code point order, which
    is DynamoDB's UTF-8 byte order)."""
    live_a, live_b = a._productive(), b._productive()
    for p, q in _common_prefix_pairs(a, b):
        out_a = [c for c, t in a.edges[p] if c is not None and t in live_a]
        if q == b.end and out_a:
            return True  # b's string ends here and a's goes on
        out_b = [c for c, t in b.edges[q] if c is not None and t in live_b]
        if out_a and out_b and max(c.highest() for c in out_a) > min(c.lowest() for c in out_b):
            return True
    return False


def _field_annotation(spec: EntitySpec, name: str) -> Any:
    info = spec.cls.model_fields.get(name)
    if info is not None:
        return info.annotation
    computed = spec.cls.model_computed_fields.get(name)
    return computed.return_type if computed is not None else None


def _domain(spec: EntitySpec, name: str) -> list[Any] | None:
    """The finite set of values of a low-cardinality field (Enum, bool, Literal), else None."""
    annotation = bare_annotation(_field_annotation(spec, name))
    if typing.get_origin(annotation) is Literal:
        return list(typing.get_args(annotation))
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return [False, True]
        if issubclass(annotation, enum.Enum):
            return list(annotation)
    return None


def _domain_label(spec: EntitySpec, name: str, values: Sequence[Any]) -> str:
    shown = [v.value if isinstance(v, enum.Enum) else v for v in values]
    return f"{name} ({', '.join(str(v) for v in shown)})"


_STRFTIME_WIDTHS = {"Y": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2, "f": 6, "y": 2, "j": 3}


def _strftime_lang(lang: _Lang, fmt: str, delimiter: str) -> None:
    free = _Chars(frozenset(delimiter), negated=True)
    i = 0
    while i < len(fmt):
        char = fmt[i]
        if char == "%" and i + 1 < len(fmt):
            directive = fmt[i + 1]
            if directive == "%":
                lang.text("%")
            elif directive in _STRFTIME_WIDTHS:
                width = _STRFTIME_WIDTHS[directive]
                lang.chars(_DIGITS, width, width)
            else:
                lang.chars(free, 1, None)
            i += 2
            continue
        lang.text(char)
        i += 1


def _literal_builder(text: str) -> Callable[[_Lang], object]:
    return lambda lang: lang.text(text)


def _value_lang(lang: _Lang, ph: Placeholder, spec: EntitySpec, delimiter: str) -> None:
    """Append the strings a placeholder's field can render."""
    from ...keys import KeyKind, key_type_of

    domain = _domain(spec, ph.field)
    if domain is not None:
        rendered = []
        for value in domain:
            try:
                rendered.append(ph.render(value))
            except Exception:  # a value the template refuses never reaches a key
                continue
        lang.choice([_literal_builder(text) for text in dict.fromkeys(rendered)])
        return
    free = _Chars(frozenset(delimiter), negated=True)
    try:
        kind = key_type_of(_field_annotation(spec, ph.field)).kind
    except Exception:
        kind = KeyKind.STR
    fmt = ph.fmt
    if kind in (KeyKind.INT, KeyKind.DECIMAL):
        if fmt == "sortable":
            lang.choice(
                [
                    lambda lg: lg.text("1"),
                    lambda lg: lg.text("2").chars(_DIGITS, 4, None).text("."),
                    lambda lg: lg.text("0").chars(_DIGITS, 4, None).text("~"),
                ]
            )
        elif fmt is not None and (m := re.match(r"^0(\d+)d$", fmt)):
            width = int(m.group(1))
            lang.chars(_DIGITS, width, width)
        else:
            lang.choice([lambda lg: lg, lambda lg: lg.text("-")]).chars(_DIGITS, 1, None)
            if kind is KeyKind.DECIMAL:
                lang.choice([lambda lg: lg, lambda lg: lg.text(".").chars(_DIGITS, 1, None)])
    elif kind is KeyKind.DATETIME and fmt is None:
        _strftime_lang(lang, "%Y-%m-%dT%H:%M:%S.%fZ", delimiter)
    elif kind is KeyKind.DATE and fmt is None:
        _strftime_lang(lang, "%Y-%m-%d", delimiter)
    elif kind in (KeyKind.DATETIME, KeyKind.DATE) and fmt is not None:
        _strftime_lang(lang, fmt, delimiter)
    elif kind is KeyKind.UUID:
        for width in (8, 4, 4, 4):
            lang.chars(_HEX, width, width).text("-")
        lang.chars(_HEX, 12, 12)
    else:
        lang.chars(free, 1, None)


def template_language(template: KeyTemplate, spec: EntitySpec) -> _Lang:
    """The language of every key ``template`` can render for ``spec``'s field types."""
    lang = _Lang()
    for ph in template.placeholders:
        lang.text(ph.head)
        _value_lang(lang, ph, spec, template.delimiter)
    lang.text(template.tail)
    return lang


def _prefix_language(prefix: str) -> _Lang:
    return _Lang().text(prefix).chars(_ANY, 0, None)


# -- the model under check ---------------------------------------------------------------------


@dataclass
class _Model:
    repository: type[Repository]
    patterns: dict[str, Pattern]
    specs: list[EntitySpec]

    @property
    def table_name(self) -> str:
        return self.repository.__singletable_table__.name


def _model(repository: type[Repository]) -> _Model:
    from ...entity import spec_of
    from ...patterns import DeclaredPattern

    table = repository.__singletable_table__
    patterns: dict[str, Pattern] = {}
    for name, value in repository.__patterns__.items():
        patterns[name] = value.pattern if isinstance(value, DeclaredPattern) else value
    specs: dict[int, EntitySpec] = {}
    for cls in table.entities.values():
        spec = spec_of(cls)
        specs[id(spec)] = spec
    for pattern in patterns.values():
        for spec in _pattern_specs(pattern):
            specs.setdefault(id(spec), spec)
    return _Model(repository, patterns, list(specs.values()))


def _pattern_specs(pattern: Pattern) -> list[EntitySpec]:
    specs = getattr(pattern, "specs", None)
    if specs is not None:
        return list(specs)
    spec = getattr(pattern, "spec", None)
    return [spec] if spec is not None else []


def _name(spec: EntitySpec) -> str:
    """An entity's name in subjects and messages: its class name."""
    return spec.cls.__name__


def _index_label(index: str | None) -> str:
    return index if index is not None else "the table"


def _subject(name: str, index: str | None) -> str:
    return name if index is None else f"{name}.{index}"


def _index_templates(spec: EntitySpec, index: str | None) -> tuple[KeyTemplate, KeyTemplate | None]:
    index_spec = spec.index(index)
    pk = index_spec.pk or spec.base.pk
    assert pk is not None
    return pk, index_spec.sk


def _populated(spec: EntitySpec) -> list[str | None]:
    return [None, *spec.indexes]


# -- rules -------------------------------------------------------------------------------------


def _rule_scan(model: _Model) -> Iterable[Finding]:
    allowed = {"GetItem", "Query", "Query+BatchGetItem"}
    for name, pattern in model.patterns.items():
        operation = pattern.explain().operation
        keyed = getattr(pattern, "plan", None) is not None or operation == "GetItem"
        if operation in allowed and keyed:
            continue
        yield _finding(
            "scan",
            name,
            f"pattern {name} would be sent as {operation or 'a request'} without a partition "
            "key condition: a Scan reads (and bills) the whole table",
            "give the entity a key (or a GSI) whose partition key the caller knows, and "
            "declare the pattern with get()/query()/collection()",
        )


def _rule_hot_partition(model: _Model) -> Iterable[Finding]:
    for spec in model.specs:
        for index in _populated(spec):
            index_spec = spec.index(index)
            if index_spec.pk is None:
                continue  # an LSI shares the table's partition key
            template = index_spec.pk
            where = f"{_name(spec)}" + (f" on {index}" if index else "")
            attr = index_spec.keys.pk
            if not template.fields:
                reason = "has no placeholder: every item goes to one partition"
            else:
                domains = [(f, _domain(spec, f)) for f in template.fields]
                if any(values is None for _, values in domains):
                    continue
                count = 1
                labels = []
                for fname, values in domains:
                    assert values is not None
                    count *= len(values)
                    labels.append(_domain_label(spec, fname, values))
                reason = (
                    f"only takes low-cardinality values from {', '.join(labels)}: "
                    f"at most {count} partition{'s' if count != 1 else ''}"
                )
            sparse = " (a sparse index)" if index_spec.sparse else ""
            yield _finding(
                "hot-partition",
                _subject(_name(spec), index),
                f"hot partition: {where}{sparse} partition key {attr} = {template.text!r} "
                f"{reason}, which caps throughput at one partition's limits "
                "(about 1,000 writes/s, 3,000 reads/s)",
                f"shard writes: append a shard to the key, e.g. "
                f"'{template.text}#{{shard}}' with shard a computed field such as "
                "hash(id) % 10, and query every shard; or acknowledge it in lint_acknowledge "
                "if the volume is small",
            )


def _rule_key_collision(model: _Model) -> Iterable[Finding]:
    indexes: list[str | None] = [None, *model.repository.__singletable_table__.index_names]
    for index in indexes:
        members = [s for s in model.specs if index is None or index in s.indexes]
        for i, first in enumerate(members):
            for second in members[i + 1 :]:
                if first.type_name == second.type_name:
                    continue
                pk1, sk1 = _index_templates(first, index)
                pk2, sk2 = _index_templates(second, index)
                if not languages_intersect(
                    template_language(pk1, first), template_language(pk2, second)
                ):
                    continue
                if (
                    sk1 is not None
                    and sk2 is not None
                    and not languages_intersect(
                        template_language(sk1, first), template_language(sk2, second)
                    )
                ):
                    continue
                a, b = sorted((_name(first), _name(second)))
                keys = f"({pk1.text!r}, {sk1.text if sk1 else None!r})"
                other = f"({pk2.text!r}, {sk2.text if sk2 else None!r})"
                effect = (
                    "one item can overwrite the other"
                    if index is None
                    else "their index entries cannot be told apart by key"
                )
                yield _finding(
                    "key-collision",
                    _subject(f"{a}+{b}", index),
                    f"{_name(first)} keys {keys} and {_name(second)} keys {other} on "
                    f"{_index_label(index)} can render the same key: {effect}",
                    "give each entity type its own literal prefix in the sort key (or the "
                    f"partition key), e.g. '{first.type_name}#...' and '{second.type_name}#...'",
                )


def _sort_problem(spec: EntitySpec, ph: Placeholder) -> str | None:
    from ...keys import KeyKind, _strftime_is_sortable, key_type_of

    try:
        ktype = key_type_of(_field_annotation(spec, ph.field))
    except Exception:
        return None
    if ktype.kind in (KeyKind.INT, KeyKind.DECIMAL):
        if ph.fmt is None:
            return "is a number rendered as plain text ('9' sorts after '1000')"
        return None
    if (
        ktype.kind in (KeyKind.DATETIME, KeyKind.DATE)
        and ph.fmt
        and "%" in ph.fmt
        and not _strftime_is_sortable(ph.fmt)
    ):
        return (
            f"uses format {ph.fmt!r}, which does not sort like the dates it renders "
            "(directives must run from %Y down to %f)"
        )
    return None


def _rule_unsortable(model: _Model) -> Iterable[Finding]:
    for spec in model.specs:
        for index in _populated(spec):
            sk = spec.index(index).sk
            if sk is None:
                continue
            for ph in sk.placeholders:
                problem = _sort_problem(spec, ph)
                if problem is None:
                    continue
                yield _finding(
                    "unsortable-sort-key",
                    _subject(_name(spec), index),
                    f"{_name(spec)} sort key {sk.text!r} on {_index_label(index)}: "
                    f"{{{ph.field}}} {problem}, so range conditions and order= are wrong",
                    f"write {{{ph.field}:sortable}} or a zero-padded {{{ph.field}:08d}} for "
                    "numbers, the canonical datetime or an ordered strftime format for dates",
                )


def _rule_projection(model: _Model) -> Iterable[Finding]:
    from ...patterns import CollectionPattern, QueryPattern

    for name, pattern in model.patterns.items():
        if not isinstance(pattern, (QueryPattern, CollectionPattern)) or pattern.index is None:
            continue
        keys = pattern.plan.keys
        if keys.projection_type == "ALL":
            continue
        if isinstance(pattern, QueryPattern):
            if pattern.keys_only or pattern.hydrate:
                continue
            if pattern._projects_entity(pattern.specs[0]):
                continue
        yield _finding(
            "projection-mismatch",
            name,
            f"pattern {name} reads whole entities from index {pattern.index} "
            f"({keys.projection_type} projection), which does not hold them",
            "declare keys_only=True (typed key references) or hydrate=True (Query + one "
            "BatchGetItem), or project ALL attributes",
        )


def _rule_indexes(model: _Model) -> Iterable[Finding]:
    from ...table import GSI

    table = model.repository.__singletable_table__
    used: set[str] = set()
    reads: set[tuple[str, str]] = set()
    for pattern in model.patterns.values():
        index = getattr(pattern, "index", None)
        if index is None:
            continue
        used.add(index)
        for spec in _pattern_specs(pattern):
            reads.add((_name(spec), index))
    for index in table.indexes:
        if index.name not in used:
            writers = [_name(s) for s in model.specs if index.name in s.indexes]
            cost = f" ({', '.join(writers)} write its keys)" if writers else ""
            yield _finding(
                "unused-index",
                index.name,
                f"index {index.name} is read by no pattern of {model.repository.__qualname__}"
                f"{cost}: pure write amplification",
                f"add a pattern that reads it, or drop it from the table (and the {index.name} "
                "entries from the entities' Keys)",
            )
    gsis = [i for i in table.indexes if isinstance(i, GSI)]
    if len(gsis) > MAX_GSIS:
        yield _finding(
            "too-many-indexes",
            table.name,
            f"table {table.name} has {len(gsis)} global secondary indexes (more than "
            f"{MAX_GSIS}); every write to an item is repeated in each index it populates",
            "overload indexes: let several entity types share one GSI with distinct key "
            "prefixes, and make rarely-needed ones sparse",
        )
    for spec in model.specs:
        for index_name in spec.indexes:
            if index_name in used and (_name(spec), index_name) not in reads:
                yield _finding(
                    "unread-index",
                    _subject(_name(spec), index_name),
                    f"{_name(spec)} populates index {index_name}, but no pattern reads "
                    f"{_name(spec)} items there: each write pays for index entries nobody reads",
                    f"remove {index_name} from {_name(spec)}.Keys, make it sparse with "
                    "Index(..., when=...), or add the pattern that needs it",
                )


def _keep_ratio(condition: Condition, spec: EntitySpec) -> tuple[float, str]:
    """A rough share of items a filter keeps, and how it was estimated."""
    from ...expressions import _Between, _Compare, _Function, _In, _Join, _Not, top_field

    def domain_size(path: str) -> int | None:
        values = _domain(spec, top_field(path))
        return len(values) if values else None

    if isinstance(condition, _Compare):
        size = domain_size(condition.path)
        if condition.op == "=":
            if size:
                return 1 / size, f"= on a field with {size} values"
            return 0.1, "= on a free-valued field"
        if condition.op == "<>":
            if size:
                return 1 - 1 / size, f"<> on a field with {size} values"
            return 0.9, "<> on a free-valued field"
        return 1 / 3, "a range comparison"
    if isinstance(condition, _Between):
        return 0.25, "a between"
    if isinstance(condition, _Function):
        if condition.function in ("attribute_exists", "attribute_not_exists"):
            return 0.5, condition.function
        return 0.1, condition.function
    if isinstance(condition, _In):
        size = domain_size(condition.path)
        count = len(condition.options) if isinstance(condition.options, tuple) else 3
        if size:
            return min(1.0, count / size), f"IN over {count} of {size} values"
        return min(1.0, 0.1 * count), f"IN over {count} values"
    if isinstance(condition, _Not):
        ratio, how = _keep_ratio(condition.inner, spec)
        return 1 - ratio, f"NOT ({how})"
    if isinstance(condition, _Join):
        parts = [_keep_ratio(p, spec) for p in condition.parts]
        if condition.op == "AND":
            ratio = 1.0
            for part, _ in parts:
                ratio *= part
        else:
            miss = 1.0
            for part, _ in parts:
                miss *= 1 - part
            ratio = 1 - miss
        return ratio, f" {condition.op} ".join(how for _, how in parts)
    return 0.5, "an opaque condition"


def _rule_filter(model: _Model) -> Iterable[Finding]:
    for name, pattern in model.patterns.items():
        condition: Condition | None = getattr(pattern, "where", None)
        if condition is None:
            continue
        specs = _pattern_specs(pattern)
        ratio, how = _keep_ratio(condition, specs[0])
        ratio = min(max(ratio, 0.01), 1.0)
        waste = round((1 - ratio) * 100)
        factor = 1 / ratio
        yield _finding(
            "filter",
            name,
            f"pattern {name} filters with `{condition.describe()}`: DynamoDB reads and bills "
            f"every item in the key range before the filter drops any; estimated waste "
            f"~{waste}% of the read capacity (assuming {how} keeps ~{ratio:.0%} of the items), "
            f"i.e. about {factor:.1f}x the items read per item returned, and pages may come "
            "back short or empty",
            "when the filter is selective, move the filtered attribute into the sort key or "
            "a sparse GSI so the key condition selects the items",
        )


def _sort_templates(pattern: Pattern) -> list[tuple[EntitySpec, KeyTemplate | None]]:
    from ...patterns import CollectionPattern

    if isinstance(pattern, CollectionPattern):
        return [(spec, plan.sk) for spec, plan in zip(pattern.specs, pattern.sk_plans)]
    return [(spec, pattern.plan.sk) for spec in _pattern_specs(pattern)]  # type: ignore[attr-defined]


def _rule_overlap(model: _Model) -> Iterable[Finding]:
    from ...patterns import CollectionPattern, QueryPattern

    for name, pattern in model.patterns.items():
        if not isinstance(pattern, (QueryPattern, CollectionPattern)):
            continue
        plan = pattern.plan
        if plan.keys.sk is None:
            continue
        own = _pattern_specs(pattern)
        own_names = {s.type_name for s in own}
        if isinstance(pattern, QueryPattern):
            if plan.sk is not None and not plan.sk.fields:
                continue  # SK = constant: an equality, not a prefix (collisions cover it)
            prefix = plan.sk.literal_prefix if plan.sk is not None else ""
        else:
            prefix = pattern.prefix
        partition = template_language(plan.pk, own[0])
        prefix_lang = _prefix_language(prefix)
        for other in model.specs:
            if other.type_name in own_names or (
                pattern.index is not None and pattern.index not in other.indexes
            ):
                continue
            other_pk, other_sk = _index_templates(other, pattern.index)
            if other_sk is None:
                continue
            if not languages_intersect(partition, template_language(other_pk, other)):
                continue
            if not languages_intersect(prefix_lang, template_language(other_sk, other)):
                continue
            readers = ", ".join(_name(s) for s in own)
            condition = (
                f"begins_with({plan.keys.sk}, {prefix!r})" if prefix else "no sort-key condition"
            )
            yield _finding(
                "prefix-overlap",
                f"{name}.{_name(other)}",
                f"prefix overlap: pattern {name} ({readers}) reads partition "
                f"{plan.keys.pk} = {plan.pk.text!r} with {condition}, which also matches "
                f"{_name(other)} sort keys ({other_sk.text!r}): every page reads and pays for "
                f"{_name(other)} items and drops them",
                f"give {_name(other)} a sort-key prefix that does not start with {prefix!r}"
                if prefix
                else f"give {readers} a literal sort-key prefix of its own",
            )


def _rule_collection_order(model: _Model) -> Iterable[Finding]:
    from ...patterns import CollectionPattern

    for name, pattern in model.patterns.items():
        if not isinstance(pattern, CollectionPattern) or len(pattern.specs) < 2:
            continue
        templates = _sort_templates(pattern)
        parent, parent_sk = templates[0]
        if parent_sk is None:
            continue
        parent_lang = template_language(parent_sk, parent)
        late = []
        for child, child_sk in templates[1:]:
            if child_sk is None:
                continue
            child_lang = template_language(child_sk, child)
            if pattern.order == "asc":
                wrong = can_sort_after(parent_lang, child_lang)
            else:
                wrong = can_sort_after(child_lang, parent_lang)
            if wrong:
                late.append(f"{_name(child)} ({child_sk.text!r})")
        if not late:
            continue
        first = "before" if pattern.order == "asc" else "after"
        example = "'#' or '!'" if pattern.order == "asc" else "'~'"
        yield _finding(
            "collection-parent-order",
            name,
            f"collection {name} (order={pattern.order}) can return {', '.join(late)} items "
            f"before its parent {_name(parent)} (sort key {parent_sk.text!r}), because the "
            f"parent's key does not sort {first} theirs: with limit=, the parent falls off the "
            "first page",
            f"give {_name(parent)} a sort key that sorts {first} its children's (e.g. start it "
            f"with {example}), or read the collection in the other order",
        )


def _rule_type_tag(model: _Model) -> Iterable[Finding]:
    for spec in model.specs:
        if spec.explicit_type:
            continue
        yield _finding(
            "implicit-type-tag",
            _name(spec),
            f"{_name(spec)} has no explicit type tag: its items are stored with "
            f"{spec.table.type_attribute} = {spec.type_name!r} (the class name), so renaming "
            "the class orphans every stored item",
            f"declare it: class {spec.cls.__name__}(Entity, table=..., "
            f'type="{spec.type_name.upper()}")',
        )


_RULES: tuple[Callable[[_Model], Iterable[Finding]], ...] = (
    _rule_scan,
    _rule_key_collision,
    _rule_unsortable,
    _rule_projection,
    _rule_hot_partition,
    _rule_overlap,
    _rule_indexes,
    _rule_collection_order,
    _rule_filter,
    _rule_type_tag,
)


# -- acknowledgements --------------------------------------------------------------------------


def acknowledgements(repository: type[Repository]) -> dict[str, Any]:
    """The repository's ``lint_acknowledge`` mapping (inherited like any class attribute)."""
    raw = getattr(repository, ACKNOWLEDGE_ATTRIBUTE, None)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        return {"": raw}
    return dict(raw)


def _ack_matches(key: str, finding: Finding) -> bool:
    code, _, subject = key.partition(":")
    if code != finding.code:
        return False
    if not subject:
        return True
    return finding.subject == subject or finding.subject.startswith(subject + ".")


def _acknowledge(findings: list[Finding], entries: Mapping[str, Any]) -> list[Finding]:
    problems: list[Finding] = []
    valid: dict[str, str] = {}
    for key, reason in entries.items():
        code = key.partition(":")[0] if isinstance(key, str) else ""
        if not isinstance(key, str) or code not in RULES:
            problems.append(
                _finding(
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
                _finding(
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
        for key, reason in valid.items():
            if _ack_matches(key, finding):
                finding = replace(finding, acknowledged=reason)
                used.add(key)
                break
        result.append(finding)
    for key in valid:
        if key not in used:
            problems.append(
                _finding(
                    "unused-acknowledgement",
                    key,
                    f"{ACKNOWLEDGE_ATTRIBUTE}[{key!r}] matches no finding",
                    "remove it (the model changed) or fix its subject",
                )
            )
    return result + problems


# -- entry points ------------------------------------------------------------------------------


def _order(finding: Finding) -> tuple[int, str, str]:
    return (SEVERITIES.index(finding.severity), finding.code, finding.subject)


def check(
    repository: type[Repository], *, acknowledge: Mapping[str, str] | None = None
) -> list[Finding]:
    """Every lint finding for a repository class, its table and the table's entities.

    Pure: no I/O. ``acknowledge`` adds acknowledgements to the repository's
    ``lint_acknowledge``. Findings come errors first, then warnings, then info.
    """
    from ...repository import Repository

    if not (isinstance(repository, type) and issubclass(repository, Repository)):
        raise TypeError(f"check() takes a Repository subclass, not {repository!r}")
    model = _model(repository)
    findings: list[Finding] = []
    seen: set[str] = set()
    for rule in _RULES:
        for finding in rule(model):
            if finding.key not in seen:
                seen.add(finding.key)
                findings.append(finding)
    entries = {**acknowledgements(repository), **(acknowledge or {})}
    findings = _acknowledge(findings, entries)
    return sorted(findings, key=_order)


def summary(findings: Sequence[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {severity: 0 for severity in SEVERITIES}
    acknowledged = 0
    for finding in findings:
        if finding.acknowledged is not None:
            acknowledged += 1
        else:
            counts[finding.severity] += 1
    return {**counts, "acknowledged": acknowledged}


def _plural(count: int, word: str) -> str:
    if word == "info":
        return f"{count} info"
    return f"{count} {word}{'s' if count != 1 else ''}"


def format_text(repository: type[Repository], findings: Sequence[Finding]) -> str:
    """Findings as text: one block per finding, then a summary line."""
    lines = []
    for finding in findings:
        status = "acknowledged" if finding.acknowledged is not None else finding.severity
        lines.append(f"{status.upper():<12} {finding.code} [{finding.subject}]")
        lines.append(f"    {finding.message}")
        if finding.acknowledged is not None:
            lines.append(f"    acknowledged ({finding.severity}): {finding.acknowledged}")
        else:
            lines.append(f"    fix: {finding.hint}")
    counts = summary(findings)
    name = repository.__qualname__
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
