"""Code generation: straight-line Python for encoding and decoding items, and the one ``exec``.

The codec (codec.py) and the entity spec (entity.py) hand over their compiled plans as data
(a model's ``FieldPlan`` tuple, an ``EntitySpec``); this module writes one function per model
or entity with every conversion inlined, compiles it, and returns it. It is the only module of
the package that calls ``exec``.

Why: the per-item budget (bench/codec.py) cannot be met by a loop over converters. What keeps
it honest: every generated function has a field-by-field reference (``KeyTemplate.render``,
``ModelCodec.encode_field_by_field`` and ``ModelCodec.decode_fields_lenient``), which reports
errors by field and which tests/unit/test_codegen.py holds the generated functions equal to,
on random entities.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import _wire as wire
from ._keys import SENTINEL
from ._wire import MAX_ITEM_BYTES, Wire, decode_value, is_text
from .errors import ItemEncodeError

if TYPE_CHECKING:
    from ._codec import FieldPlan, ModelCodec
    from ._entity_spec import EntitySpec
    from ._indexes import IndexSpec
    from ._keys import KeyTemplate, Placeholder
    from ._wire import Converter


class CodeGen:
    """Writes straight-line Python for encoding and decoding model fields.

    One statement per field with the conversion inlined where it is a plain expression, nested
    models written inline: this is what makes the codec cheaper than a loop over converters
    (see bench/codec.py). Encoders also sum an upper bound of the item size: fixed-size values
    by a constant, strings by 4 bytes per character, anything else exactly.
    """

    MAX_INLINE_DEPTH = 3

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = dict(wire.EXPRESSION_GLOBALS)
        self._counter = 0
        self.static = 0
        self.lengths: list[str] = []  # string-length expressions for the size bound
        self.sized: list[str] = []  # exact-size expressions for the size bound
        self.texts: list[str] = []  # strings of the item literal that must be text (see below)

    def bind(self, value: Any, prefix: str = "_c") -> str:
        """A namespace name for ``value`` in the generated code."""
        self._counter += 1
        name = f"{prefix}{self._counter}"
        self.ns[name] = value
        return name

    def local(self, prefix: str) -> str:
        """A fresh local variable name for the generated code."""
        self._counter += 1
        return f"{prefix}{self._counter}"

    def compile(self, name: str, filename: str) -> Any:
        """Compile the lines written so far and return the function ``name`` they define."""
        exec(compile("\n".join(self.lines), filename, "exec"), self.ns)
        return self.ns[name]

    def _inline_model(
        self, conv: Converter, depth: int, stack: tuple[type, ...]
    ) -> ModelCodec | None:
        nested = conv.nested
        if nested is None or depth >= self.MAX_INLINE_DEPTH or nested.model in stack:
            return None
        if nested.allows_extra or nested.by_name:
            return None
        return nested

    def encode_fields(
        self,
        fields: tuple[FieldPlan, ...],
        *,
        src: str,
        item: str,
        indent: str,
        depth: int = 0,
        reuse: Mapping[str, str] | None = None,
        stack: tuple[type, ...] = (),
    ) -> None:
        """Emit code writing ``fields`` of the values dict ``src`` into the dict ``item``.

        Size accounting for the 400 KB check: fixed sizes (names, bounded values) add up in
        ``self.static`` at generation time, string lengths in ``t`` (4 bytes per character at
        most) and anything else, measured exactly, in ``n``.
        """
        out = self.lines.append
        v = f"v{depth}"
        for plan in fields:
            conv = plan.converter
            self.static += len(plan.attr.encode())
            out(f"{indent}{v} = {src}[{plan.name!r}]")
            if reuse and plan.name in reuse:
                # Already rendered canonically for a key: reuse the text for the attribute.
                text = reuse[plan.name]
                out(f"{indent}if {v} is not None: {item}[{plan.attr!r}] = {{'S': {text}}}")
                self.static += 32
                continue
            nested = self._inline_model(conv, depth, stack)
            if nested is not None:
                inner_item, inner_src = f"m{depth + 1}", f"d{depth + 1}"
                out(f"{indent}if {v} is not None:")
                out(f"{indent}    {inner_src} = {v}.__dict__")
                out(f"{indent}    {inner_item} = {{}}")
                self.static += 3 + len(nested.fields)
                self.encode_fields(
                    nested.fields,
                    src=inner_src,
                    item=inner_item,
                    indent=indent + "    ",
                    depth=depth + 1,
                    stack=(*stack, nested.model),
                )
                out(f"{indent}    {item}[{plan.attr!r}] = {{'M': {inner_item}}}")
                continue
            encoder = self.bind(conv.encode, "_e")
            if conv.may_omit:
                if conv.encode_expr is not None:
                    out(f"{indent}if {v}:")
                    expr = with_value(conv.encode_expr, v)
                    out(f"{indent}    {item}[{plan.attr!r}] = av = {expr}")
                else:
                    out(f"{indent}if {v} is not None:")
                    out(f"{indent}  av = {encoder}({v})")
                    out(f"{indent}  if av is not None:")
                    out(f"{indent}    {item}[{plan.attr!r}] = av")
                if conv.wire_tag == "SS":  # joined once for the size bound and the text check
                    out(f"{indent}    j = ''.join(av['SS'])")
                    out(f"{indent}    t += len(j)")
                    out(f"{indent}    {text_check('j')}")
                elif conv.size_expr is not None and conv.size_expr.startswith("4 * "):
                    out(f"{indent}    t += {conv.size_expr[4:]}")
                else:
                    out(f"{indent}    n += {conv.size_expr or '_value_size(av)'}")
                continue
            expr = with_value((conv.encode_expr or "_ENC(v)").replace("_ENC", encoder), v)
            out(f"{indent}if {v} is not None:")
            if conv.max_size is not None:
                out(f"{indent}    {item}[{plan.attr!r}] = {expr}")
                self.static += conv.max_size
            elif conv.encode_expr == wire.ENCODE_TEXT:
                out(f"{indent}    {item}[{plan.attr!r}] = {expr}")
                out(f"{indent}    t += len({v})")
                out(f"{indent}    {text_check(v)}")
            else:
                out(f"{indent}    {item}[{plan.attr!r}] = av = {expr}")
                out(f"{indent}    n += _value_size(av)")

    # Expressions that raise on None, so a field written through them needs no None check.
    _NONE_SAFE_EXPRS = frozenset({wire.ENCODE_BOOL, wire.ENCODE_STR_OF})

    def literal_fields(
        self,
        fields: tuple[FieldPlan, ...],
        *,
        src: str,
        reuse: Mapping[str, str],
        prelude: list[str] | None = None,
    ) -> tuple[list[str], list[FieldPlan]]:
        """Entries of a dict literal for the fields that can never be left out, and the rest.

        A field that cannot be None (its type excludes it) is always written, so it goes into
        the item's dict literal with no None check: its conversion (or the length taken for the
        size bound) raises on a None assigned after validation, and the caller's error path
        names the field. Building the item as one literal is what keeps encoding cheap.
        ``reuse`` maps fields to variables already holding their text (rendered for a key); a
        value an expression reads more than once is first bound to a local in ``prelude``.
        """
        entries: list[str] = []
        rest: list[FieldPlan] = []
        for plan in fields:
            conv = plan.converter
            value = f"{src}[{plan.name!r}]"
            if plan.nullable or conv.may_omit or conv.nested is not None:
                rest.append(plan)
                continue
            if plan.name in reuse:
                text = reuse[plan.name]
                entries.append(f"{plan.attr!r}: {{'S': {text}}}")
                self.static += len(plan.attr.encode())
                self.lengths.append(f"len({text})")
                continue
            expr = conv.encode_expr
            if expr is None or expr in self._NONE_SAFE_EXPRS:
                rest.append(plan)
                continue
            plain_text = expr == wire.ENCODE_TEXT
            if prelude is not None and (plain_text or len(re.findall(r"\bv\b", expr)) > 1):
                local = f"w{len(prelude)}"
                prelude.append(f"{local} = {value}")
                value = local
            if plain_text:
                self.texts.append(value)
            entries.append(f"{plan.attr!r}: {with_value(expr, value)}")
            self.static += len(plan.attr.encode())
            if conv.max_size is not None:
                self.static += conv.max_size
            elif expr == wire.ENCODE_TEXT:
                self.lengths.append(f"len({value})")
            else:
                self.sized.append(f"_value_size(item[{plan.attr!r}])")
        return entries, rest

    def literal_inputs(
        self, fields: tuple[FieldPlan, ...], *, src: str
    ) -> tuple[list[str], list[FieldPlan]]:
        """Entries of a dict literal for the validation input of fields that are always stored
        (required, their type excludes None; not a set, which may be left out), and the rest.
        Fields with defaults stay out: items written before such a field existed lack it.

        Reading them as ``item['a']['S']`` raises ``KeyError`` on an item written by someone
        else without the field; the caller then takes the lenient path, where pydantic says
        what is wrong.
        """
        entries: list[str] = []
        rest: list[FieldPlan] = []
        for plan in fields:
            conv = plan.converter
            if not plan.required or plan.nullable or conv.may_omit or conv.nested is not None:
                rest.append(plan)
                continue
            av = f"{src}[{plan.attr!r}]"
            if conv.decode_expr is not None:
                expr = with_value(conv.decode_expr, av, "av")
            else:
                expr = f"{self.bind(conv.decode, '_d')}({av})"
            entries.append(f"{plan.input_key!r}: {expr}")
        return entries, rest

    def decode_fields(
        self,
        fields: tuple[FieldPlan, ...],
        *,
        src: str,
        data: str,
        indent: str,
        depth: int = 0,
        stack: tuple[type, ...] = (),
    ) -> None:
        """Emit code reading ``fields`` from the attributes dict ``src`` into the validation
        input dict ``data``."""
        out = self.lines.append
        av = f"a{depth}"
        for plan in fields:
            conv = plan.converter
            out(f"{indent}{av} = {src}.get({plan.attr!r})")
            nested = self._inline_model(conv, depth, stack)
            if nested is not None:
                inner_src, inner_data = f"s{depth + 1}", f"r{depth + 1}"
                out(f"{indent}if {av} is not None:")
                out(f"{indent}    {inner_src} = {av}['M']")
                out(f"{indent}    {inner_data} = {{}}")
                self.decode_fields(
                    nested.fields,
                    src=inner_src,
                    data=inner_data,
                    indent=indent + "    ",
                    depth=depth + 1,
                    stack=(*stack, nested.model),
                )
                out(f"{indent}    {data}[{plan.input_key!r}] = {inner_data}")
                continue
            if conv.decode_expr is not None:
                expr = with_value(conv.decode_expr, av, "av")
            else:
                expr = f"{self.bind(conv.decode, '_d')}({av})"
            out(f"{indent}if {av} is not None: {data}[{plan.input_key!r}] = {expr}")
            if plan.absent == "none":
                out(f"{indent}else: {data}[{plan.input_key!r}] = None")
            elif plan.absent == "empty_set":
                out(f"{indent}else: {data}[{plan.input_key!r}] = set()")


def text_check(var: str) -> str:
    """A statement raising ``UnicodeEncodeError`` (a ``ValueError``: the caller's error path
    then names the field) when the string ``var`` is not text. ASCII, the common case, is told
    in constant time; other text is encoded once."""
    return f"if not {var}.isascii(): {var}.encode()"


def with_value(expr: str, var: str, placeholder: str = "v") -> str:
    """``expr`` (written over ``v``, or ``av`` for decoders) with that variable renamed."""
    return re.sub(rf"\b{placeholder}\b", var, expr)


def generate_codec(
    fields: tuple[FieldPlan, ...],
) -> tuple[
    Callable[[dict[str, Any], dict[str, Wire]], int],
    Callable[[Mapping[str, Wire]], dict[str, Any]],
]:
    """Generated ``encode_into(values, item) -> size bound`` and ``decode_fields(item)``."""
    gen = CodeGen()
    gen.lines += ["def encode_into(d, item):", "    n = t = 0"]
    gen.encode_fields(fields, src="d", item="item", indent="    ")
    gen.lines += [f"    return n + 4 * t + {gen.static}", "", "def decode_fields(item):"]
    gen.lines.append("    data = {}")
    gen.decode_fields(fields, src="item", data="data", indent="    ")
    gen.lines.append("    return data")
    gen.compile("encode_into", "<singletable codec>")
    return gen.ns["encode_into"], gen.ns["decode_fields"]


# -- one entity's to_item and decode ------------------------------------------------------------


def generate_to_item(spec: EntitySpec) -> Callable[[Any], dict[str, Wire]]:
    """Straight-line ``to_item`` for one entity (see :class:`ToItemWriter`)."""
    return ToItemWriter(spec).write()


class ToItemWriter:
    """Writes one entity's ``to_item``: each key field rendered once (and reused for the
    attribute when it is the same text), keys assembled by concatenation, sparse conditions
    inlined, every field encoded inline, and a bound of the item's size summed on the way.

    :meth:`write` runs the steps in the order their code runs: the primary key, the index keys
    every item has, the item's dict literal (type tag, those keys, the fields that are always
    written), the sparse indexes, the other fields, the size bound, and the error wrapper.
    """

    def __init__(self, spec: EntitySpec) -> None:
        self.spec = spec
        self.gen = gen = CodeGen()
        gen.ns["_SENTINEL"] = SENTINEL
        gen.ns["_is_text"] = is_text
        gen.ns["ItemEncodeError"] = ItemEncodeError
        self.lines = gen.lines
        self.entries: list[str] = []  # of the item's dict literal
        self.key_lengths: list[str] = []  # of the key attributes always written
        self.assembled: dict[str, str] = {}  # primary key text expression -> its variable
        # "field:fmt" of each placeholder rendered unconditionally -> the variable holding it
        self.rendered: dict[str, str] = {}
        self.reuse: dict[str, str] = {}  # field -> a variable holding its key text, when the same
        self.sparse: list[tuple[IndexSpec, list[tuple[str, KeyTemplate]]]] = []

    def write(self) -> Callable[[Any], dict[str, Wire]]:
        self.prologue()
        self.primary_keys()
        self.unconditional_index_keys()
        rest = self.literal_fields()
        self.sparse_indexes()
        self.gen.encode_fields(rest, src="d", item="item", indent="    ", reuse=self.reuse)
        self.size_bound()
        self.error_wrapper()
        name = f"<singletable to_item {self.spec.name}>"
        return self.gen.compile("to_item", name)  # type: ignore[no-any-return]

    # -- steps --

    def prologue(self) -> None:
        spec = self.spec
        self.lines += ["def to_item(e):", "    d = e.__dict__"]
        if spec.computed_in_keys:
            self.lines.append("    d = dict(d)")
            self.lines.extend(f"    d[{name!r}] = e.{name}" for name in spec.computed_in_keys)
        self.lines.append("    n = t = u = 0  # u: characters of key attributes")
        type_attribute = spec.table.type_attribute
        self.gen.static += len(type_attribute.encode()) + len(spec.type_name.encode())
        self.entries.append(f"{type_attribute!r}: {{'S': {spec.type_name!r}}}")

    def primary_keys(self) -> None:
        """The table's key attributes, rendered first: every other step may reuse their text."""
        base = self.spec.base
        for tpl in (base.pk, base.sk):
            for ph in tpl.placeholders if tpl else ():
                key = f"{ph.field}:{ph.fmt}"
                if key not in self.rendered:
                    self.rendered[key] = self.render(ph, tpl, "    ")  # type: ignore[arg-type]
        for attr, tpl in ((base.keys.pk, base.pk), (base.keys.sk, base.sk)):
            if tpl is not None and attr:
                self.literal_key(attr, tpl)

    def unconditional_index_keys(self) -> None:
        """Keys of the indexes every item is in go into the item's literal too; the others
        (sparse, or over a field that may be None or is computed) are kept for later."""
        spec = self.spec
        base_attrs = {spec.base.keys.pk, spec.base.keys.sk}
        nullable = {p.name for p in spec.codec.fields if p.nullable}
        for index in spec.indexes.values():
            templates = [
                (attr, tpl)
                for attr, tpl in ((index.keys.pk, index.pk), (index.keys.sk, index.sk))
                if tpl is not None and attr and attr not in base_attrs  # written with the table key
            ]
            fields = {f for _, tpl in templates for f in tpl.fields}
            if index.sparse or fields & (nullable | set(spec.computed_in_keys)):
                self.sparse.append((index, templates))
                continue
            for _, tpl in templates:
                for ph in tpl.placeholders:
                    key = f"{ph.field}:{ph.fmt}"
                    if key not in self.rendered:
                        self.rendered[key] = self.render(ph, tpl, "    ")
            for attr, tpl in templates:
                self.literal_key(attr, tpl)

    def literal_fields(self) -> tuple[FieldPlan, ...]:
        """The item as one dict literal: type tag, keys, and the fields that are always
        written; returns the other fields."""
        spec, gen = self.spec, self.gen
        # A field's key text is its attribute text too (canonical datetimes, str and str Enums;
        # escaped key text is not the attribute's text).
        same_text = (wire.ENCODE_TEXT, wire.ENCODE_ENUM_TEXT)
        plans = {p.name: p for p in spec.codec.fields}
        for name, var in self.rendered.items():
            fname, _, fmt = name.partition(":")
            plan = plans.get(fname)
            if fmt != "None" or plan is None or fname == spec.ttl_field:
                continue
            expr = plan.converter.encode_expr
            if (expr in same_text and not self.escape) or expr == wire.ENCODE_DATETIME:
                self.reuse[fname] = var
        prelude: list[str] = []
        literal, rest = gen.literal_fields(
            spec.codec.fields, src="d", reuse=self.reuse, prelude=prelude
        )
        self.entries.extend(literal)
        self.lines.extend(f"    {line}" for line in prelude)
        self.lines.append(f"    item = {{{', '.join(self.entries)}}}")
        self.lines.extend(f"    {text_check(text)}" for text in gen.texts)
        return tuple(rest)

    def sparse_indexes(self) -> None:
        """Each conditional index's keys, written under its membership test: a sparse index
        asks :meth:`IndexSpec.holds` (the one membership rule); an index over a field that may
        be None tests that field inline."""
        gen = self.gen
        always = {n.split(":")[0] for n in self.rendered}  # rendered ones are not None
        for index, templates in self.sparse:
            conditions = []
            if index.sparse:
                verdict = ""
                if index.when_callable is not None:
                    verdict = f", {gen.bind(index.when_callable, '_when')}(e)"
                conditions.append(f"{gen.bind(index.holds, '_holds')}(d{verdict})")
            else:
                for fname in dict.fromkeys(f for _, tpl in templates for f in tpl.fields):
                    if fname not in always:
                        conditions.append(f"d[{fname!r}] is not None")
            indent = "    "
            if conditions:
                self.lines.append(f"    if {' and '.join(conditions)}:")
                indent = "        "
            names = dict(self.rendered)
            for _, tpl in templates:
                for ph in tpl.placeholders:
                    key = f"{ph.field}:{ph.fmt}"
                    if key not in names:
                        names[key] = self.render(ph, tpl, indent)
            for attr, tpl in templates:
                var = self.key_text(indent, attr, self.assemble(tpl, names), shared=False)
                self.lines.append(f"{indent}item[{attr!r}] = {{'S': {var}}}")
                self.lines.append(f"{indent}u += len({var})")
            if not templates:
                self.lines.append(f"{indent}pass")

    def size_bound(self) -> None:
        """The bound (4 bytes per character of text at most, exact sizes, fixed parts), the
        key byte limits, and the slow end (extras, the exact size check) when it is needed."""
        spec, gen, lines = self.spec, self.gen, self.lines
        sized = "".join(f" + {expr}" for expr in gen.sized)
        lengths = "".join(f" + {expr}" for expr in gen.lengths)
        if self.key_lengths:
            lines.append(f"    u += {' + '.join(self.key_lengths)}")
        lines.append(f"    n += 4 * (t + u{lengths}){sized} + {gen.static}")
        # No key attribute can be over its limit while all of them together hold fewer
        # characters than the smallest limit allows (4 bytes a character at most).
        safe = min(tpl.max_bytes // 4 for _, tpl in spec.key_templates)
        lines.append(f"    if u > {safe}: {gen.bind(spec.check_key_sizes, '_keys')}(item)")
        if spec.native_limits:  # values DynamoDB refuses as index keys (empty, too long)
            lines.append(f"    {gen.bind(spec.check_native_values, '_native')}(item)")
        finish = gen.bind(spec.finish_item, "_finish")
        extras = " or e.__pydantic_extra__" if spec.codec.allows_extra else ""
        lines.append(f"    if n > {MAX_ITEM_BYTES}{extras}: return {finish}(e, item)")
        lines.append("    return item")

    def error_wrapper(self) -> None:
        """Any conversion failure is reported by the field-by-field encoder, naming the field
        (it raises; should it not, the original exception goes on)."""
        lines = self.lines
        diagnose = self.gen.bind(self.spec.codec.encode_fields, "_diagnose")
        body = lines[1:]
        lines[1:] = ["    try:", *("    " + line for line in body)]
        errors = "ValueError, TypeError, AttributeError, ArithmeticError, ItemEncodeError"
        lines.append(f"    except ({errors}):")
        lines.append(f"        {diagnose}(e)")
        lines.append("        raise")

    # -- helpers --

    @property
    def escape(self) -> bool:
        return self.spec.table.key_values == "escape"

    def render(self, ph: Placeholder, tpl: KeyTemplate, indent: str) -> str:
        """A variable holding ``ph``'s rendered text (the guarded renderer raises precisely)."""
        gen, lines = self.gen, self.lines
        guarded = gen.bind(ph.render, "_r")
        var = gen.local("k")
        value = f"d[{ph.field!r}]"
        checks = f"{var}.__class__ is not str or not {var} or {tpl.delimiter!r} in {var}"
        # (Only non-ASCII text can hold the sentinel or a lone surrogate.)
        checks += f" or not {var}.isascii() and (_SENTINEL in {var} or not _is_text({var}))"
        if ph.is_text and not tpl.escape and ph.fmt is None:
            if ph.parse is str:
                lines.append(f"{indent}{var} = {value}")
            else:  # an Enum of strings: its value is the text
                lines.append(f"{indent}try: {var} = {value}._value_")
                lines.append(f"{indent}except AttributeError: {var} = {value}")
            lines.append(f"{indent}if {checks}: {var} = {guarded}({value})")
        elif ph.is_text or ph.fast_render is None:
            lines.append(f"{indent}{var} = {guarded}({value})")
        else:
            # Non-text kinds need no checks beyond what rendering raises: render fast and let
            # the guarded renderer produce the precise KeyTemplateError on failure.
            fast = gen.bind(ph.fast_render, "_f")
            lines.append(f"{indent}try: {var} = {fast}({value})")
            lines.append(f"{indent}except Exception: {var} = {guarded}({value})")
        return var

    @staticmethod
    def assemble(tpl: KeyTemplate, names: Mapping[str, str]) -> str:
        """The expression concatenating ``tpl``'s literal parts and rendered placeholders."""
        parts = []
        for ph in tpl.placeholders:
            if ph.head:
                parts.append(repr(ph.head))
            parts.append(names[f"{ph.field}:{ph.fmt}"])
        if tpl.tail:
            parts.append(repr(tpl.tail))
        return " + ".join(parts) or "''"

    def key_text(self, indent: str, attr: str, expr: str, *, shared: bool) -> str:
        """A variable holding the key text ``expr`` (assigned here unless already known)."""
        self.gen.static += len(attr.encode())
        var = self.assembled.get(expr)
        if var is None:
            var = self.gen.local("key")
            if shared:  # only unconditional key texts are always defined, so only they are reused
                self.assembled[expr] = var
            self.lines.append(f"{indent}{var} = {expr}")
        return var

    def literal_key(self, attr: str, tpl: KeyTemplate) -> None:
        """A key attribute every item has: an entry of the item's literal."""
        var = self.key_text("    ", attr, self.assemble(tpl, self.rendered), shared=True)
        self.entries.append(f"{attr!r}: {{'S': {var}}}")
        self.key_lengths.append(f"len({var})")


def generate_decode(spec: EntitySpec) -> Callable[[Mapping[str, Wire]], Any]:
    """Straight-line decode + validate for one entity (raises pydantic's ValidationError)."""
    codec = spec.codec
    if codec.by_name:
        return _decode_by_name(spec)
    gen = CodeGen()
    validate = gen.bind(codec.model.__pydantic_validator__.validate_python, "_validate")
    literal, rest = gen.literal_inputs(codec.fields, src="item")
    gen.lines += ["def decode(item):", f"    data = {{{', '.join(literal)}}}"]
    gen.decode_fields(tuple(rest), src="item", data="data", indent="    ")
    if codec.allows_extra:
        # Extras are every attribute that is not a field, a key or the type tag.
        known_name = gen.bind(spec.known_attributes, "_known")
        decode_value_name = gen.bind(decode_value, "_decode_value")
        gen.lines.append("    for k, a in item.items():")
        gen.lines.append(f"        if k not in {known_name}: data[k] = {decode_value_name}(a)")
    gen.lines.append(f"    return {validate}(data)")
    return gen.compile("decode", f"<singletable from_item {spec.name}>")  # type: ignore[no-any-return]


def _decode_by_name(spec: EntitySpec) -> Callable[[Mapping[str, Wire]], Any]:
    """The decoder of an entity validated by field name (an AliasChoices or AliasPath alias):
    the codec's generated ``decode_fields``, the extras, then ``model_validate``."""
    decode_fields, validate = spec.codec.decode_fields, spec.codec.validate
    if not spec.codec.allows_extra:
        return lambda item: validate(decode_fields(item))
    known = spec.known_attributes

    def decode(item: Mapping[str, Wire]) -> Any:
        data = decode_fields(item)
        data.update((k, decode_value(a)) for k, a in item.items() if k not in known)
        return validate(data)

    return decode
