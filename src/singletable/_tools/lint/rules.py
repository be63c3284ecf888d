"""The lint rules: each one a generator of findings over the model under check (the
repository class, its patterns and every entity of its table). No I/O."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from .amplification import rule_write_amplification
from .findings import SEVERITIES, Finding, new_finding
from .hot import rule_hot_partition
from .languages import (
    can_sort_after,
    field_annotation,
    field_domain,
    languages_intersect,
    prefix_language,
    template_language,
)
from .model import Model as _Model
from .model import build_model as _model
from .model import entity_name as _name
from .model import index_label as _index_label
from .model import index_templates as _index_templates
from .model import pattern_specs as _pattern_specs
from .model import populated as _populated
from .model import subject as _subject
from .report import acknowledgements, apply_acknowledgements

if TYPE_CHECKING:
    from ..._entity_spec import EntitySpec
    from ..._expressions import Condition
    from ..._keys import KeyTemplate, Placeholder
    from ..._patterns.declare import Pattern
    from ..._repository import Repository

#: More global secondary indexes than this is a warning (each one multiplies write cost).
MAX_GSIS = 5


# -- rules -------------------------------------------------------------------------------------


def _rule_scan(model: _Model) -> Iterable[Finding]:
    from ..._patterns.scan import ScanPattern

    allowed = {"GetItem", "Query", "Query+BatchGetItem", "Query+UpdateItem"}
    for name, pattern in model.patterns.items():
        row = pattern.explain()
        operation = row.operation
        if isinstance(getattr(pattern, "pattern", pattern), ScanPattern):
            yield Finding(
                "scan",
                "info",
                name,
                f"pattern {name} scans sparse index {row.index} for "
                f"{', '.join(row.entity_types)}: each page is one Scan of what the index holds "
                "(every item of it is read and billed, in no key order)",
                "keep the index small (only the items the pattern wants are in it); read it "
                "with a query when the caller knows a partition key",
            )
            continue
        keyed = getattr(pattern, "plan", None) is not None or operation == "GetItem"
        if getattr(pattern, "scatter", None) is not None:
            operation = "Query"  # "Query xN": one keyed Query per value
        if operation in allowed and keyed:
            continue
        yield new_finding(
            "scan",
            name,
            f"pattern {name} would be sent as {operation or 'a request'} without a partition "
            "key condition: a Scan reads (and bills) the whole table",
            "give the entity a key (or a GSI) whose partition key the caller knows, and "
            "declare the pattern with get()/query()/collection()",
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
                yield new_finding(
                    "key-collision",
                    _subject(f"{a}+{b}", index),
                    f"{_name(first)} keys {keys} and {_name(second)} keys {other} on "
                    f"{_index_label(index)} can render the same key: {effect}",
                    "give each entity type its own literal prefix in the sort key (or the "
                    f"partition key), e.g. '{first.type_name}#...' and '{second.type_name}#...'",
                )


def _sort_problem(spec: EntitySpec, ph: Placeholder) -> str | None:
    from ..._key_formats import KeyKind, key_type_of, strftime_is_sortable

    try:
        ktype = key_type_of(field_annotation(spec, ph.field))
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
        and not strftime_is_sortable(ph.fmt)
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
                yield new_finding(
                    "unsortable-sort-key",
                    _subject(_name(spec), index),
                    f"{_name(spec)} sort key {sk.text!r} on {_index_label(index)}: "
                    f"{{{ph.field}}} {problem}, so range conditions and order= are wrong",
                    f"write {{{ph.field}:sortable}} or a zero-padded {{{ph.field}:08d}} for "
                    "numbers, the canonical datetime or an ordered strftime format for dates",
                )


def _rule_projection(model: _Model) -> Iterable[Finding]:
    from ..._patterns.declare import CollectionPattern, QueryPattern

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
        yield new_finding(
            "projection-mismatch",
            name,
            f"pattern {name} reads whole entities from index {pattern.index} "
            f"({keys.projection_type} projection), which does not hold them",
            "declare keys_only=True (typed key references) or hydrate=True (Query + one "
            "BatchGetItem), or project ALL attributes",
        )


def _rule_indexes(model: _Model) -> Iterable[Finding]:
    from ..._table import GSI

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
            native = table.index_keys(index.name).native
            writers = [_name(s) for s in model.specs if index.name in _members(s)]
            cost = f" ({', '.join(writers)} write its keys)" if writers else ""
            keys = (
                "; the entities are in it by their fields and need no change"
                if native
                else f" (and the {index.name} entries from the entities' Keys)"
            )
            yield new_finding(
                "unused-index",
                index.name,
                f"index {index.name} is read by no pattern of {model.repository.__qualname__}"
                f"{cost}: pure write amplification",
                f"add a pattern that reads it, or drop it from the table{keys}",
            )
    gsis = [i for i in table.indexes if isinstance(i, GSI)]
    if len(gsis) > MAX_GSIS:
        yield new_finding(
            "too-many-indexes",
            table.name,
            f"table {table.name} has {len(gsis)} global secondary indexes (more than "
            f"{MAX_GSIS}); every write to an item is repeated in each index it populates",
            "overload indexes: let several entity types share one GSI with distinct key "
            "prefixes, and make rarely-needed ones sparse",
        )
    for spec in model.specs:
        for index_name in _members(spec):
            if index_name in used and (_name(spec), index_name) not in reads:
                fix = (
                    f"leave one of its key fields ({', '.join(spec.native[index_name].fields)}) "
                    "None where no entry is needed (an optional field makes the index sparse), "
                    "rename the field"
                    if index_name in spec.native
                    else f"remove {index_name} from {_name(spec)}.Keys, make it sparse with "
                    "Index(..., when=...)"
                )
                yield new_finding(
                    "unread-index",
                    _subject(_name(spec), index_name),
                    f"{_name(spec)} populates index {index_name}, but no pattern reads "
                    f"{_name(spec)} items there: each write pays for index entries nobody reads",
                    f"{fix}, or add the pattern that needs it",
                )


def _members(spec: EntitySpec) -> list[str]:
    """The indexes an entity writes entries to: named in its Keys, or native ones it has
    every key field of."""
    return [*spec.indexes, *spec.native]


def _keep_ratio(condition: Condition, spec: EntitySpec) -> tuple[float, str]:
    """A rough share of items a filter keeps, and how it was estimated."""
    from ..._expressions import Between, Compare, Function, In, Join, Not, top_field

    def domain_size(path: str) -> int | None:
        values = field_domain(spec, top_field(path))
        return len(values) if values else None

    if isinstance(condition, Compare):
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
    if isinstance(condition, Between):
        return 0.25, "a between"
    if isinstance(condition, Function):
        if condition.function in ("attribute_exists", "attribute_not_exists"):
            return 0.5, condition.function
        return 0.1, condition.function
    if isinstance(condition, In):
        size = domain_size(condition.path)
        count = len(condition.options) if isinstance(condition.options, tuple) else 3
        if size:
            return min(1.0, count / size), f"IN over {count} of {size} values"
        return min(1.0, 0.1 * count), f"IN over {count} values"
    if isinstance(condition, Not):
        ratio, how = _keep_ratio(condition.inner, spec)
        return 1 - ratio, f"NOT ({how})"
    if isinstance(condition, Join):
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
        yield new_finding(
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
    from ..._patterns.declare import CollectionPattern

    if getattr(pattern, "native", False):
        return []  # a native index sorts by typed attributes, not by templates
    if isinstance(pattern, CollectionPattern):
        return [(spec, plan.sk) for spec, plan in zip(pattern.specs, pattern.sk_plans)]  # type: ignore[union-attr]
    return [(spec, pattern.plan.sk) for spec in _pattern_specs(pattern)]  # type: ignore[attr-defined]


def _rule_overlap(model: _Model) -> Iterable[Finding]:
    from ..._patterns.declare import CollectionPattern, QueryPattern
    from ..._patterns.native import NativeKeyPlan

    for name, pattern in model.patterns.items():
        if not isinstance(pattern, (QueryPattern, CollectionPattern)):
            continue
        plan = pattern.plan
        if isinstance(plan, NativeKeyPlan) or plan.keys.sk is None:
            continue  # a native index holds typed attributes: no prefix to overlap
        own = _pattern_specs(pattern)
        own_names = {s.type_name for s in own}
        if isinstance(pattern, QueryPattern):
            if plan.sk is not None and not plan.sk.fields:
                continue  # SK = constant: an equality, not a prefix (collisions cover it)
            prefix = plan.sk.literal_prefix if plan.sk is not None else ""
        else:
            prefix = pattern.prefix
        partition = template_language(plan.pk, own[0])
        prefix_lang = prefix_language(prefix)
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
            yield new_finding(
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
    from ..._patterns.declare import CollectionPattern

    for name, pattern in model.patterns.items():
        if not isinstance(pattern, CollectionPattern) or len(pattern.specs) < 2:
            continue
        if pattern.native:
            continue  # typed sort attributes: the order follows values, not type prefixes
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
        yield new_finding(
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
        yield new_finding(
            "implicit-type-tag",
            _name(spec),
            f"{_name(spec)} has no explicit type tag: its items are stored with "
            f"{spec.table.type_attribute} = {spec.type_name!r} (the class name), so renaming "
            "the class orphans every stored item",
            f"declare it: class {spec.cls.__name__}(Entity, table=..., "
            f'type="{spec.type_name.upper()}")',
        )


def _rule_former_types(model: _Model) -> Iterable[Finding]:
    """A reminder, not a check: lint reads no table, so it cannot tell whether the items under
    the former tags were rewritten yet. Acknowledge it once the backfill has run."""
    for spec in model.specs:
        if not spec.former_types:
            continue
        former = ", ".join(repr(tag) for tag in spec.former_types)
        yield new_finding(
            "former-types",
            _name(spec),
            f"{_name(spec)} still reads items tagged {former} (former_types=) as its own and "
            f"rewrites them as {spec.type_name!r} only when they are written; until a backfill "
            f"has run, queries filtering on {spec.table.type_attribute} and other tools see the "
            "old tags",
            f"run `singletable backfill {model.repository.__module__}:"
            f"{model.repository.__qualname__} {_name(spec)}` (or "
            f"repo.backfill({_name(spec)})), then acknowledge this finding "
            f'(lint_acknowledge = {{"former-types:{_name(spec)}": "backfilled on <date>"}}) or '
            "drop former_types=",
        )


def _rule_propagation(model: _Model) -> Iterable[Finding]:
    from ..._patterns.propagate import PropagatePattern

    for name, pattern in model.patterns.items():
        if not isinstance(pattern, PropagatePattern):
            continue
        source, target, to = pattern.spec, pattern.target, pattern.to
        copies = ", ".join(
            f"{_name(target)}.{t} copies {_name(source)}.{s}" for s, t in pattern.fields.items()
        )
        fields = ", ".join(f"{_name(target)}.{t}" for t in pattern.fields.values())
        yield new_finding(
            "propagation",
            name,
            f"{copies} (denormalised): propagate {name} rewrites the stale copies through "
            f"pattern {to.name} ({to.explain().operation} on {_index_label(to.index)}, "
            f"{to.key_condition_text()}), one UpdateItem per stale {_name(target)}",
            f"write {', '.join(pattern.fields)} on {_name(source)} only and let {name} update "
            f'{fields} (from the table\'s stream: router.on({_name(source)}, "MODIFY")'
            f"(repo.{name}.on_event)); readers of the copies see the old value until then",
        )


_RULES: tuple[Callable[[_Model], Iterable[Finding]], ...] = (
    _rule_scan,
    _rule_key_collision,
    _rule_unsortable,
    _rule_projection,
    rule_hot_partition,
    _rule_overlap,
    _rule_indexes,
    _rule_collection_order,
    _rule_filter,
    _rule_type_tag,
    _rule_former_types,
    _rule_propagation,
    rule_write_amplification,
)


# -- the entry point ---------------------------------------------------------------------------


def _order(finding: Finding) -> tuple[int, str, str]:
    return (SEVERITIES.index(finding.severity), finding.code, finding.subject)


def check(
    repository: type[Repository], *, acknowledge: Mapping[str, str] | None = None
) -> list[Finding]:
    """Every lint finding for a repository class, its table and the table's entities.

    Pure: no I/O. ``acknowledge`` adds acknowledgements to the repository's
    ``lint_acknowledge``. Findings come errors first, then warnings, then info.
    """
    from ..._repository import Repository

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
    findings = apply_acknowledgements(findings, entries)
    return sorted(findings, key=_order)
