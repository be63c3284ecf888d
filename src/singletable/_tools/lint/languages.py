"""Key templates as regular languages, so "can collide" and "can sort after" are exact.

A template's language holds its literal text and, per placeholder, the strings the field's type
can render: free text without the delimiter, the members of an Enum or Literal, digits of a
given width, canonical datetimes, UUIDs... Two templates collide when their languages intersect;
a collection's parent sorts first when no string of a child's language sorts before it. Fields
shared between templates are treated as independent, so both answers may over-report, never
under-report.
"""

from __future__ import annotations

import enum
import re
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..._codec import bare_annotation

if TYPE_CHECKING:
    from ..._entity_spec import EntitySpec
    from ..._keys import KeyTemplate, Placeholder

_MAX_CHAR = 0x10FFFE  # U+10FFFF is reserved: keys never hold it


@dataclass(frozen=True)
class Chars:
    """A set of characters: ``chars``, or every character but ``chars`` when ``negated``."""

    chars: frozenset[str]
    negated: bool = False

    def intersects(self, other: Chars) -> bool:
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


_DIGITS = Chars(frozenset("0123456789"))
_HEX = Chars(frozenset("0123456789abcdef"))
_ANY = Chars(frozenset(), negated=True)

Edge = tuple["Chars | None", int]


class Lang:
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

    def _edge(self, source: int, chars: Chars | None, target: int) -> None:
        self.edges[source].append((chars, target))

    def text(self, literal: str) -> Lang:
        for char in literal:
            state = self._state()
            self._edge(self.end, Chars(frozenset(char)), state)
            self.end = state
        return self

    def chars(self, chars: Chars, low: int = 1, high: int | None = 1) -> Lang:
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

    def choice(self, branches: Sequence[Callable[[Lang], object]]) -> Lang:
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


def _common_prefix_pairs(a: Lang, b: Lang) -> Iterable[tuple[int, int]]:
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


def languages_intersect(a: Lang, b: Lang) -> bool:
    """Whether some string is in both languages."""
    return any(p == a.end and q == b.end for p, q in _common_prefix_pairs(a, b))


def can_sort_after(a: Lang, b: Lang) -> bool:
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


def field_annotation(spec: EntitySpec, name: str) -> Any:
    info = spec.cls.model_fields.get(name)
    if info is not None:
        return info.annotation
    computed = spec.cls.model_computed_fields.get(name)
    return computed.return_type if computed is not None else None


def field_domain(spec: EntitySpec, name: str) -> list[Any] | None:
    """The finite set of values of a low-cardinality field (Enum, bool, Literal), else None."""
    annotation = bare_annotation(field_annotation(spec, name))
    if typing.get_origin(annotation) is Literal:
        return list(typing.get_args(annotation))
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return [False, True]
        if issubclass(annotation, enum.Enum):
            return list(annotation)
    return None


def domain_label(spec: EntitySpec, name: str, values: Sequence[Any]) -> str:
    shown = [v.value if isinstance(v, enum.Enum) else v for v in values]
    return f"{name} ({', '.join(str(v) for v in shown)})"


_STRFTIME_WIDTHS = {"Y": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2, "f": 6, "y": 2, "j": 3}


def _strftime_lang(lang: Lang, fmt: str, delimiter: str) -> None:
    free = Chars(frozenset(delimiter), negated=True)
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


def _literal_builder(text: str) -> Callable[[Lang], object]:
    return lambda lang: lang.text(text)


def _value_lang(lang: Lang, ph: Placeholder, spec: EntitySpec, delimiter: str) -> None:
    """Append the strings a placeholder's field can render."""
    from ..._key_formats import KeyKind, key_type_of

    domain = field_domain(spec, ph.field)
    if domain is not None:
        rendered = []
        for value in domain:
            try:
                rendered.append(ph.render(value))
            except Exception:  # a value the template refuses never reaches a key
                continue
        lang.choice([_literal_builder(text) for text in dict.fromkeys(rendered)])
        return
    free = Chars(frozenset(delimiter), negated=True)
    try:
        kind = key_type_of(field_annotation(spec, ph.field)).kind
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


def template_language(template: KeyTemplate, spec: EntitySpec) -> Lang:
    """The language of every key ``template`` can render for ``spec``'s field types."""
    lang = Lang()
    for ph in template.placeholders:
        lang.text(ph.head)
        _value_lang(lang, ph, spec, template.delimiter)
    lang.text(template.tail)
    return lang


def prefix_language(prefix: str) -> Lang:
    return Lang().text(prefix).chars(_ANY, 0, None)
