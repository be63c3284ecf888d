"""Key templates: ``"ORDER#{created_at}#{order_id}"`` rendered, parsed back and turned into
sort-key conditions.

Rendering is canonical and order-preserving where it matters: ``str`` as is, ``Enum`` by value,
``date`` as ``YYYY-MM-DD``, ``UUID`` as its string, ``datetime`` as exactly
``%Y-%m-%dT%H:%M:%S.%fZ`` in UTC, numbers in sort keys only as ``{n:sortable}`` or a zero-padded
``{n:05d}``. A value containing the delimiter (or empty) is refused, unless the table percent-
encodes it (``key_values="escape"``), because ``order_id="A1#ITEM#x"`` could otherwise address
another entity's item. Text that is not Unicode (a lone surrogate such as ``"\\ud800"``) is refused,
and so is a key longer than DynamoDB takes (2,048 UTF-8 bytes for a partition key, 1,024 for a
sort key), before anything is sent.

How each kind of value renders and parses (and which formats it takes) is key_formats.py's;
this module adds the checks every key value gets and builds templates and conditions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import InvalidOperation
from typing import Any, Literal

from ._key_formats import FieldKeyType, KeyKind, key_format, key_type_of
from ._record import Record
from ._wire import LONE_SURROGATE, is_text
from .errors import KeyDefinitionError, KeyTemplateError, did_you_mean

#: Reserved code point (a Unicode noncharacter) used as the upper edge of a key prefix.
SENTINEL = "\U0010ffff"
#: DynamoDB's limits on a key attribute's value, in UTF-8 bytes (tables and indexes alike).
PARTITION_KEY_BYTES = 2048
SORT_KEY_BYTES = 1024

#: Keywords of ``repo.update(E, **key_fields, set=..., ...)``: they share one ``**changes``
#: with the key fields, so no field may be named like them.
UPDATE_KEYWORDS = frozenset(
    {"set", "remove", "add", "delete", "append", "prepend", "if_not_exists", "condition", "upsert"}
)
#: Call keywords of patterns and writes; template fields may not be named like them.
CALL_KEYWORDS = UPDATE_KEYWORDS | frozenset(
    {
        "limit", "cursor", "order", "consistent", "max_pages", "must_exist", "unsafe", "self",
        "keys_only", "hydrate", "index", "one", "where",
    }
)  # fmt: skip

_PLACEHOLDER = re.compile(r"\{([^{}:]*)(?::([^{}]*))?\}")


def predecessor(text: str) -> str:
    """A string ordered right below ``text`` with no key in between (keys never hold SENTINEL)."""
    last = ord(text[-1])
    if last == 0:
        return text[:-1]
    prev = last - 1
    if 0xD800 <= prev <= 0xDFFF:
        prev = 0xD7FF
    return text[:-1] + chr(prev) + SENTINEL


# -- templates --------------------------------------------------------------------------------


class Placeholder:
    # Treated as immutable (not enforced).
    __slots__ = (
        "extent",
        "fast_render",
        "field",
        "fixed_width",
        "fmt",
        "head",
        "is_text",
        "parse",
        "render",
    )

    def __init__(
        self,
        field: str,
        fmt: str | None,
        head: str,  # literal text before the placeholder, from the previous placeholder on
        fixed_width: bool,
        render: Callable[[Any], str],
        parse: Callable[[str], Any],
        # The unchecked renderer and whether rendered text needs the empty/delimiter checks:
        # code generators call ``fast_render`` and fall back to ``render`` (which raises
        # precisely).
        fast_render: Callable[[Any], str] | None = None,
        is_text: bool = False,
        # The smallest and largest text a fixed-width segment can render (range lookups with
        # no literal prefix use them, so a bound never reaches another entity type's keys).
        extent: tuple[str, str] | None = None,
    ) -> None:
        self.field = field
        self.fmt = fmt
        self.head = head
        self.fixed_width = fixed_width
        self.render = render
        self.parse = parse
        self.fast_render = fast_render
        self.is_text = is_text
        self.extent = extent


class Bound(Record):
    # Treated as immutable (not enforced); equal by value, hashable.
    __slots__ = ("inclusive", "value")
    _fields = ("value", "inclusive")

    def __init__(self, value: str, inclusive: bool) -> None:
        self.value = value
        self.inclusive = inclusive


class SortCondition(Record):
    """One sort-key condition: ``=``, ``begins_with``, a single comparison or ``BETWEEN``."""

    # Treated as immutable (not enforced); equal by value, hashable.
    __slots__ = ("op", "values")
    _fields = ("op", "values")

    def __init__(
        self,
        op: Literal["=", "begins_with", ">", ">=", "<", "<=", "between"],
        values: tuple[str, ...],
    ) -> None:
        self.op = op
        self.values = values


class KeyTemplate:
    """A parsed key template bound to the types of the fields it names.

    ``types`` maps field names to annotations (or ready :class:`FieldKeyType`); ``sort_key``
    enables the ordering checks that sort keys need.
    """

    def __init__(
        self,
        text: str,
        types: Mapping[str, Any],
        *,
        sort_key: bool = False,
        delimiter: str = "#",
        escape: bool = False,
        owner: str = "",
        role: str = "key",
        attribute: str | None = None,  # the key attribute it renders (named by size errors)
    ) -> None:
        self.text = text
        self.delimiter = delimiter
        self.escape = escape
        self.sort_key = sort_key
        self.owner = owner
        self.role = role
        self.attribute = attribute
        self.max_bytes = SORT_KEY_BYTES if sort_key else PARTITION_KEY_BYTES
        # Text of at most this many characters is within the limit (UTF-8: 4 bytes a character
        # at most), so only longer keys are encoded to count their bytes.
        self._safe_chars = self.max_bytes // 4
        where = f"{owner} {role} template {text!r}" if owner else f"template {text!r}"
        if not isinstance(text, str) or text == "":
            raise KeyDefinitionError(f"{where}: a key template must be a non-empty string")
        if SENTINEL in text:
            raise KeyDefinitionError(f"{where}: U+10FFFF is reserved")
        if not is_text(text):
            raise KeyDefinitionError(f"{where}: it holds {LONE_SURROGATE}")
        placeholders: list[Placeholder] = []
        pos = 0
        for match in _PLACEHOLDER.finditer(text):
            head = text[pos : match.start()]
            self._check_literal(head, where)
            if placeholders and head == "":
                raise KeyDefinitionError(
                    f"{where}: put the delimiter {delimiter!r} between "
                    f"{{{placeholders[-1].field}}} and {{{match.group(1)}}}, "
                    "otherwise the key cannot be parsed back"
                )
            if placeholders and not head.startswith(delimiter):
                raise KeyDefinitionError(
                    f"{where}: {{{placeholders[-1].field}}} must be followed by the delimiter "
                    f"{delimiter!r} or end the template"
                )
            name, fmt = match.group(1), match.group(2)
            placeholders.append(self._placeholder(name, fmt, head, types, where))
            pos = match.end()
        tail = text[pos:]
        self._check_literal(tail, where)
        if placeholders and tail and not tail.startswith(delimiter):
            raise KeyDefinitionError(
                f"{where}: {{{placeholders[-1].field}}} must be followed by the delimiter "
                f"{delimiter!r} or end the template"
            )
        self.placeholders: tuple[Placeholder, ...] = tuple(placeholders)
        self.tail = tail
        self.fields: tuple[str, ...] = tuple(p.field for p in placeholders)
        if len(set(self.fields)) != len(self.fields):
            raise KeyDefinitionError(f"{where}: a field appears twice")
        self.literal_prefix = placeholders[0].head if placeholders else text
        self._renderers = tuple((p.head, p.field, p.render) for p in placeholders)
        self._segments = self._segment_plan()

    # -- construction helpers --

    def _check_literal(self, literal: str, where: str) -> None:
        if "{" in literal or "}" in literal:
            raise KeyDefinitionError(f"{where}: unbalanced '{{' or '}}' in the literal text")
        if "%" in literal and self.escape:
            raise KeyDefinitionError(
                f"{where}: '%' cannot appear in literal text when key values are escaped"
            )

    def _placeholder(
        self, name: str, fmt: str | None, head: str, types: Mapping[str, Any], where: str
    ) -> Placeholder:
        if not name.isidentifier():
            raise KeyDefinitionError(f"{where}: {{{name}}} is not a field name")
        if name not in types:
            known = ", ".join(sorted(types)) or "none"
            hint = did_you_mean(name, types)
            raise KeyDefinitionError(
                f"{where} names unknown field {name!r}{hint}; fields are: {known}"
            )
        if "__" in name:
            raise KeyDefinitionError(
                f"{where}: field {name!r} contains '__', which is reserved for range lookups "
                "such as created_at__gte; rename the field"
            )
        if name in CALL_KEYWORDS:
            raise KeyDefinitionError(
                f"{where}: field {name!r} clashes with the call keyword {name}=; rename the field"
            )
        ktype = types[name]
        if not isinstance(ktype, FieldKeyType):
            ktype = key_type_of(ktype, owner=self.owner or "template", field=name)
        form = key_format(ktype, fmt, sort_key=self.sort_key, field=name, where=where)
        render = self._guarded(name, ktype.kind, form.render, self._failer(name))
        parse = self._unescaping(form.parse)
        is_text = ktype.kind is KeyKind.STR
        return Placeholder(
            name, fmt, head, form.fixed_width, render, parse, form.render, is_text, form.extent()
        )

    def _failer(self, name: str) -> Callable[[Any, str], KeyTemplateError]:
        owner = self.owner

        def fail(value: Any, why: str) -> KeyTemplateError:
            culprit = f"{owner}.{name}" if owner else name
            return KeyTemplateError(
                f"{culprit} = {value!r} cannot be used in key {self.text!r}: {why}", key=name
            )

        return fail

    def _guarded(
        self,
        name: str,
        kind: KeyKind,
        render: Callable[[Any], str],
        fail: Callable[[Any, str], KeyTemplateError],
    ) -> Callable[[Any], str]:
        delimiter = self.delimiter
        escape = self.escape
        check_text = kind is KeyKind.STR

        def guarded(value: Any) -> str:
            if value is None:
                raise fail(value, "the value is missing (None)")
            try:
                text = render(value)
            except (ValueError, TypeError, AttributeError, ArithmeticError) as exc:
                raise fail(value, str(exc)) from None
            if check_text:
                if text == "":
                    raise fail(value, "empty values cannot be part of a key")
                if not text.isascii():
                    if SENTINEL in text:
                        raise fail(value, "U+10FFFF is reserved")
                    if not is_text(text):
                        raise fail(value, f"it holds {LONE_SURROGATE}")
                if escape:
                    if "%" in text or delimiter in text:
                        return text.replace("%", "%25").replace(delimiter, _pct(delimiter))
                elif delimiter in text:
                    raise fail(
                        value,
                        f"it contains the delimiter {delimiter!r}, so the key would be "
                        "ambiguous (set Table(key_values='escape') to percent-encode it)",
                    )
            return text

        return guarded

    def _unescaping(self, parse: Callable[[str], Any]) -> Callable[[str], Any]:
        if not self.escape:
            return parse
        delimiter_code = _pct(self.delimiter)

        def unescaping(text: str) -> Any:
            return parse(text.replace(delimiter_code, self.delimiter).replace("%25", "%"))

        return unescaping

    def _segment_plan(self) -> list[tuple[str, Placeholder | None]]:
        """The template as delimiter-separated segments: (literal head, placeholder or None)."""
        plan: list[tuple[str, Placeholder | None]] = []
        for i, ph in enumerate(self.placeholders):
            pieces = ph.head.split(self.delimiter)
            if i > 0:
                pieces = pieces[1:]  # the (empty) rest of the previous placeholder's segment
            plan.extend((lit, None) for lit in pieces[:-1])
            plan.append((pieces[-1], ph))
        if not self.placeholders:
            plan.extend((lit, None) for lit in self.tail.split(self.delimiter))
        elif self.tail:
            plan.extend((lit, None) for lit in self.tail.split(self.delimiter)[1:])
        return plan

    # -- rendering --

    def render(self, values: Mapping[str, Any]) -> str:
        """The key for ``values`` (a mapping with every field of the template)."""
        parts: list[str] = []
        for head, name, render in self._renderers:
            try:
                value = values[name]
            except KeyError:
                raise self._missing([name]) from None
            parts.append(head)
            parts.append(render(value))
        parts.append(self.tail)
        text = "".join(parts)
        if len(text) > self._safe_chars:
            self.check_size(text)
        return text

    def check_size(self, text: str, what: str = "") -> None:
        """:class:`KeyTemplateError` if ``text`` is longer than DynamoDB takes for this key
        attribute (naming the attribute, the limit and the size, not the value)."""
        if len(text) <= self._safe_chars:
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        if size <= self.max_bytes:
            return
        owner = f"{self.owner}: " if self.owner else ""
        name = self.attribute or self.role
        kind = "sort" if self.sort_key else "partition"
        raise KeyTemplateError(
            f"{owner}{what or 'key attribute'} {name!r} ({self.role} {self.text!r}) would be "
            f"{size:,} bytes of UTF-8; DynamoDB's limit for a {kind} key is "
            f"{self.max_bytes:,} bytes (shorten the values in it)",
            key=name,
        )

    def render_value(self, field: str, value: Any) -> str:
        """One field's rendered segment value."""
        for ph in self.placeholders:
            if ph.field == field:
                return ph.render(value)
        raise KeyTemplateError(f"{self.text!r} has no field {field!r}", key=field)

    def _missing(self, names: list[str]) -> KeyTemplateError:
        owner = f"{self.owner} " if self.owner else ""
        return KeyTemplateError(
            f"{owner}{self.role} {self.text!r} needs {', '.join(names)}", key=names[0]
        )

    def parse(self, key: str) -> dict[str, Any]:
        """Field values back from a rendered key."""
        segments = key.split(self.delimiter)
        if len(segments) != len(self._segments):
            raise KeyTemplateError(f"key {key!r} does not match template {self.text!r}", key=key)
        values: dict[str, Any] = {}
        for segment, (head, ph) in zip(segments, self._segments):
            if ph is None:
                if segment != head:
                    raise KeyTemplateError(
                        f"key {key!r} does not match template {self.text!r}", key=key
                    )
                continue
            if not segment.startswith(head) or len(segment) == len(head):
                raise KeyTemplateError(
                    f"key {key!r} does not match template {self.text!r}", key=key
                )
            try:
                values[ph.field] = ph.parse(segment[len(head) :])
            except (ValueError, TypeError, InvalidOperation, ArithmeticError):
                raise KeyTemplateError(
                    f"key {key!r}: {segment[len(head) :]!r} is not a valid {ph.field!r} "
                    f"for template {self.text!r}",
                    key=key,
                ) from None
        return values

    # -- prefixes and sort conditions --

    def leading_fields(self, values: Mapping[str, Any]) -> int:
        """How many leading template fields ``values`` gives; gaps are refused."""
        count = 0
        for name in self.fields:
            if name not in values:
                break
            count += 1
        extra = [n for n in self.fields[count:] if n in values]
        if extra:
            raise KeyTemplateError(
                f"{self.role} {self.text!r}: {extra[0]!r} was given without "
                f"{self.fields[count]!r}; sort-key fields must be given from the left",
                key=extra[0],
            )
        return count

    def prefix(self, values: Mapping[str, Any], count: int | None = None) -> str:
        """The literal start plus the first ``count`` fields, up to the next placeholder.

        It ends after a complete segment (and its delimiter), so ``f34`` never matches ``f340``.
        """
        if count is None:
            count = self.leading_fields(values)
        if count >= len(self.placeholders):
            return self.render(values)
        parts: list[str] = []
        for head, name, render in self._renderers[:count]:
            parts.append(head)
            parts.append(render(values[name]))
        parts.append(self.placeholders[count].head)
        return "".join(parts)

    def is_rangeable(self, field: str) -> bool:
        """A range lookup on ``field`` is exact: it is the last segment or fixed-width."""
        for i, ph in enumerate(self.placeholders):
            if ph.field == field:
                last = i == len(self.placeholders) - 1 and self.tail == ""
                return last or ph.fixed_width
        return False

    def sort_condition(
        self,
        values: Mapping[str, Any],
        lookup: tuple[str, str, Any] | None = None,
    ) -> SortCondition | None:
        """The one sort-key condition for ``values`` and an optional ``(field, op, value)``.

        ``op`` is ``gt``, ``gte``, ``lt``, ``lte``, ``between`` (value = (low, high)) or
        ``begins_with``. Bounds never leave the prefix; ``gte``/``lte``/``between`` include and
        ``gt``/``lt`` exclude every item whose field equals the bound, even when more segments
        follow it. A condition value longer than the key's limit is refused.
        """
        condition = self._sort_condition(values, lookup)
        if condition is not None:
            for value in condition.values:
                self.check_size(value, "the key condition on")
        return condition

    def _sort_condition(
        self, values: Mapping[str, Any], lookup: tuple[str, str, Any] | None
    ) -> SortCondition | None:
        count = self.leading_fields(values)
        if lookup is None:
            if count == len(self.placeholders):
                return SortCondition("=", (self.render(values),))
            prefix = self.prefix(values, count)
            return SortCondition("begins_with", (prefix,)) if prefix else None
        field, op, operand = lookup
        if count == len(self.placeholders) or self.fields[count] != field:
            expected = self.fields[count] if count < len(self.fields) else None
            raise KeyTemplateError(
                f"{self.role} {self.text!r}: a range lookup on {field!r} needs the fields before "
                f"it and none after it; the next field here is {expected!r}",
                key=field,
            )
        prefix = self.prefix(values, count)
        ph = self.placeholders[count]
        if op == "begins_with":
            text = self._partial_text(ph, operand)
            return SortCondition("begins_with", (prefix + text,))
        if ph.is_text and self.escape:
            raise KeyTemplateError(
                f"{self.role} {self.text!r}: a range lookup on {field!r} is inexact with "
                "key_values='escape' (percent-encoding reorders '#' and '%'); use "
                f"{field}__begins_with or key_values='refuse'",
                key=field,
            )
        if not self.is_rangeable(field):
            raise KeyTemplateError(
                f"{self.role} {self.text!r}: a range lookup on {field!r} is inexact because "
                f"more segments follow it and its values vary in width; query by begins_with "
                f"or move {field!r} to the end of the sort key",
                key=field,
            )
        last = count == len(self.placeholders) - 1 and self.tail == ""
        lower: Bound | None = None
        upper: Bound | None = None
        if op == "between":
            if not isinstance(operand, (tuple, list)) or len(operand) != 2:
                raise KeyTemplateError(f"{field}__between takes a (low, high) pair", key=field)
            low_text = prefix + ph.render(operand[0])
            high_text = prefix + ph.render(operand[1])
            if low_text > high_text:
                raise KeyTemplateError(
                    f"{field}__between: low {operand[0]!r} is above high {operand[1]!r}",
                    key=field,
                )
            lower = Bound(low_text, True)
            upper = self._block_high(high_text, last)
        else:
            exact = prefix + ph.render(operand)
            if op == "gte":
                lower = Bound(exact, True)
            elif op == "gt":
                lower = (
                    Bound(exact, False) if last else Bound(exact + self.delimiter + SENTINEL, True)
                )
            elif op == "lte":
                upper = self._block_high(exact, last)
            elif op == "lt":
                upper = Bound(exact, False)
            else:
                raise KeyTemplateError(f"unknown range lookup {field}__{op}", key=field)
        if prefix:
            lower = lower or Bound(prefix, True)
            upper = upper or Bound(prefix + SENTINEL, True)
        elif ph.extent is not None:
            # No literal prefix to stay inside: bound by what the segment can render instead.
            lower = lower or Bound(ph.extent[0], True)
            upper = upper or self._block_high(ph.extent[1], last)
        return _comparison(lower, upper)

    def _block_high(self, exact: str, last: bool) -> Bound:
        return Bound(exact, True) if last else Bound(exact + self.delimiter + SENTINEL, True)

    def _partial_text(self, ph: Placeholder, operand: Any) -> str:
        text = operand if isinstance(operand, str) else ph.render(operand)
        if not isinstance(text, str) or text == "":
            raise KeyTemplateError(f"{ph.field}__begins_with needs a non-empty value", key=ph.field)
        if not is_text(text):
            raise KeyTemplateError(
                f"{ph.field}__begins_with={operand!r} holds {LONE_SURROGATE}", key=ph.field
            )
        if self.delimiter in text and not self.escape:
            raise KeyTemplateError(
                f"{ph.field}__begins_with={operand!r} contains the delimiter {self.delimiter!r}",
                key=ph.field,
            )
        if self.escape:
            text = text.replace("%", "%25").replace(self.delimiter, _pct(self.delimiter))
        return text


def _inclusive_low(bound: Bound) -> str:
    return bound.value if bound.inclusive else bound.value + "\x00"


def _inclusive_high(bound: Bound) -> str:
    return bound.value if bound.inclusive else predecessor(bound.value)


def _comparison(lower: Bound | None, upper: Bound | None) -> SortCondition | None:
    if lower is not None and upper is not None:
        low, high = _inclusive_low(lower), _inclusive_high(upper)
        if low > high:
            raise KeyTemplateError(f"the sort-key range {low!r} .. {high!r} is empty")
        return SortCondition("between", (low, high))
    if lower is not None:
        return SortCondition(">=" if lower.inclusive else ">", (lower.value,))
    if upper is not None:
        return SortCondition("<=" if upper.inclusive else "<", (upper.value,))
    return None


def _pct(char: str) -> str:
    return "".join(f"%{b:02X}" for b in char.encode())
