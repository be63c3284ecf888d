"""The ``hot-partition`` rule: an entity whose partition key on the table or an index only takes
values from small finite domains (a constant template, Enum, bool or Literal placeholders; on a
native-key index, partition attributes that are all Enum, Literal or a ``Shard`` field alone),
so all its writes land on a few partitions. The hint is the code to write: the ``Shard`` field
to add, the key template or ``GSI(...)`` line that holds it, and ``scatter=`` on the readers."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..._table import GSI
from .findings import Finding, new_finding
from .languages import domain_label, field_domain
from .model import Model, entity_name, pattern_specs, populated, subject

if TYPE_CHECKING:
    from ..._entity_spec import EntitySpec
    from ..._indexes import NativeIndexSpec
    from ..._keys import KeyTemplate

#: The shard count the hint suggests.
SUGGESTED_SHARDS = 8
#: DynamoDB's ceiling, and ours: ``Shard(n)`` takes 1 <= n <= 100.
MAX_SHARDS = 100

_LIMITS = "which caps throughput at one partition's limits (about 1,000 writes/s, 3,000 reads/s)"
_ACKNOWLEDGE = "Or acknowledge it in lint_acknowledge if the volume is small"


def key_domain(spec: EntitySpec, name: str) -> list[Any] | None:
    """A key field's finite set of values: a ``Shard(n)`` field's 0..n-1, else
    :func:`field_domain`'s."""
    for plan in spec.shards:
        if plan.field == name:
            return list(range(plan.n))
    return field_domain(spec, name)


def _spreading_shards(spec: EntitySpec) -> set[str]:
    """The ``Shard(n >= 2)`` fields: each spreads a partition over n (read with scatter=)."""
    return {plan.field for plan in spec.shards if plan.n >= 2}


def _reason(spec: EntitySpec, fields: Sequence[str], constant: str = "") -> str | None:
    """Why a partition key made of ``fields`` is hot, or None when one has many values
    (``constant``: how to name a key without fields)."""
    if not fields:
        return f"{constant or 'has no placeholder'}: every item goes to one partition"
    count = 1
    labels = []
    for name in fields:
        values = key_domain(spec, name)
        if values is None:
            return None
        count *= len(values)
        labels.append(domain_label(spec, name, values))
    return (
        f"only takes low-cardinality values from {', '.join(labels)}: "
        f"at most {count} partition{'s' if count != 1 else ''}"
    )


def _shard_source(spec: EntitySpec, taken: Collection[str]) -> str | None:
    """The field a suggested ``Shard`` hashes: a field of the entity's primary key (a get
    can compute it) outside the hot key, preferring the last ``..._id`` (the one that tells
    items apart), else the last one."""
    base = spec.base
    fields = [
        f for tpl in (base.pk, base.sk) if tpl is not None for f in tpl.fields if f not in taken
    ]
    ids = [f for f in fields if f.lower().endswith("id")]
    if ids:
        return ids[-1]
    return fields[-1] if fields else None


def _new_shard(spec: EntitySpec, taken: Collection[str], n: int = SUGGESTED_SHARDS) -> str:
    """The field declaration to add, ``shard: Annotated[int, Shard(8, of="order_id")] = 0``."""
    name = _shard_name(spec)
    of = _shard_source(spec, taken) or "<a field with many values>"
    return f'{name}: Annotated[int, Shard({n}, of="{of}")] = 0'


def _shard_name(spec: EntitySpec) -> str:
    fields = spec.cls.model_fields
    return next(n for n in ("shard", "write_shard", "key_shard", "shard_") if n not in fields)


def _read_hint(model: Model, spec: EntitySpec, index: str | None, shard: str, n: int) -> str:
    """How to read the sharded key: scatter= on the patterns that read it now."""
    readers = [
        pattern_name
        for pattern_name, pattern in model.patterns.items()
        if getattr(pattern, "index", None) == index
        and getattr(pattern, "plan", None) is not None
        and any(s is spec for s in pattern_specs(pattern))
    ]
    index_arg = f', index="{index}"' if index is not None else ""
    reader = f'query({entity_name(spec)}{index_arg}, scatter="{shard}")'
    merged = f"{reader}: {n} Queries at once, merged in key order"
    if readers:
        return f'add scatter="{shard}" to {", ".join(readers)} ({merged})'
    return f"read it with {merged}"


# -- key templates ------------------------------------------------------------------------------


def _template_hint(model: Model, spec: EntitySpec, index: str | None, template: KeyTemplate) -> str:
    """The fix for a hot partition key template, as the lines to write."""
    shard = _shard_name(spec)
    keyed = f"{template.text}{spec.table.delimiter}{{{shard}}}"
    where = f"its {index} partition key" if index is not None else "its partition key"
    read = _read_hint(model, spec, index, shard, SUGGESTED_SHARDS)
    return (
        f"shard writes: add `{_new_shard(spec, template.fields)}` to {entity_name(spec)} "
        f"(derived on every write), put {{{shard}}} in {where}: '{keyed}', and {read}; "
        f"on a live table the new field needs a backfill (repo.backfill). {_ACKNOWLEDGE}"
    )


def _template_findings(model: Model, spec: EntitySpec) -> Iterable[Finding]:
    for index in populated(spec):
        index_spec = spec.index(index)
        template = index_spec.pk
        if template is None:
            continue  # an LSI shares the table's partition key
        if _spreading_shards(spec) & set(template.fields):
            continue  # write-sharded: n partitions per value, read with scatter=
        reason = _reason(spec, template.fields)
        if reason is None:
            continue
        where = f"{entity_name(spec)}" + (f" on {index}" if index else "")
        sparse = " (a sparse index)" if index_spec.sparse else ""
        yield new_finding(
            "hot-partition",
            subject(entity_name(spec), index),
            f"hot partition: {where}{sparse} partition key {index_spec.keys.pk} = "
            f"{template.text!r} {reason}, {_LIMITS}",
            _template_hint(model, spec, index, template),
        )


# -- native-key indexes -------------------------------------------------------------------------


def gsi_line(index: GSI, pk: Sequence[str], sk: Sequence[str]) -> str:
    """``GSI("ByStatus", pk=("status", "shard"), sk=("created_at",))``: a native index's
    declaration with these attributes (its projection and physical name kept)."""

    def names(attributes: Sequence[str]) -> str:
        inner = ", ".join(f'"{a}"' for a in attributes)
        return f"({inner},)" if len(attributes) == 1 else f"({inner})"

    parts = [f'"{index.name}"', f"pk={names(pk)}"]
    if sk:
        parts.append(f"sk={names(sk)}")
    if index.projection != "ALL":
        projection = index.projection
        shown = f'"{projection}"' if isinstance(projection, str) else repr(projection)
        parts.append(f"projection={shown}")
    if index.index_name is not None:
        parts.append(f'index_name="{index.index_name}"')
    return f"GSI({', '.join(parts)})"


def _native_hint(model: Model, spec: EntitySpec, native: NativeIndexSpec, alone: bool) -> str:
    """The fix for a hot native partition: a ``Shard`` field in the partition tuple (or, for a
    ``Shard`` field alone, a larger ``n``), the ``GSI(...)`` line to write, scatter= readers."""
    table = spec.table
    index = next(i for i in table.indexes if i.name == native.name and not i.is_local)
    assert isinstance(index, GSI)  # a native index is a GSI
    pk = [a.attribute for a in native.pk]
    sk = [a.attribute for a in native.sk]
    name = entity_name(spec)
    fields = [f for a in native.pk for f in a.fields]
    if alone:
        plan = next(p for p in spec.shards if p.field == native.pk[0].field)
        n = min(MAX_SHARDS, max(SUGGESTED_SHARDS, 4 * plan.n))
        if plan.n >= MAX_SHARDS:
            return (
                f"{plan.field} already takes the most shards there are ({MAX_SHARDS}): key "
                f"{native.name} on a field with many values beside it. {_ACKNOWLEDGE}"
            )
        return (
            f"spread it wider: declare {name}.{plan.field} as `{plan.field}: Annotated[int, "
            f'Shard({n}, of="{plan.of}")] = 0` ({n} partitions; each scatter read sends {n} '
            f"Queries), or key {native.name} on a field with many values beside it; on a live "
            f"table, changed shards need a backfill (repo.backfill({name})). {_ACKNOWLEDGE}"
        )
    existing = next((p for p in spec.shards if p.n >= 2), None)
    replaced = ""
    if len(pk) >= 4:  # DynamoDB's limit: the shard takes the last attribute's place
        replaced = f" (in place of {pk[-1]}: a partition takes at most 4 attributes)"
        pk = pk[:3]
    if existing is not None:  # already derived and stored on every item: reuse it
        shard, n = existing.field, existing.n
        add = f"put {name}.{shard} (Shard({n}), already stored on every item) in the partition"
        stored = "no backfill: the items hold it already"
    else:
        shard, n = _shard_name(spec), SUGGESTED_SHARDS
        add = (
            f"add `{_new_shard(spec, fields)}` to {name} (derived on every write) and put it "
            "in the partition"
        )
        stored = f"backfill {name} so its stored items get {shard} (repo.backfill({name}))"
    line = gsi_line(index, [*pk, shard], sk)
    read = _read_hint(model, spec, native.name, shard, n)
    return (
        f"shard writes: {add} tuple{replaced}: {line}, and {read}; on a live table a GSI's key "
        f"schema cannot change: add it as a new index under another name (DynamoDB fills it; "
        f"{stored}), switch the patterns, then drop the old index. {_ACKNOWLEDGE}"
    )


def _native_findings(model: Model, spec: EntitySpec) -> Iterable[Finding]:
    shards = _spreading_shards(spec)
    for name, native in spec.native.items():
        attributes = native.pk
        alone = len(attributes) == 1 and attributes[0].field in shards
        if not alone and any(a.field in shards for a in attributes):
            continue  # write-sharded beside other attributes: read with scatter=
        fields = [f for a in attributes for f in a.fields]
        constant = " and ".join(repr(a.template.text) for a in attributes if a.template)
        reason = _reason(spec, fields, f"only holds {constant}" if constant else "")
        if reason is None:
            continue
        sparse = " (a sparse index)" if native.sparse else ""
        names = ", ".join(a.attribute for a in attributes)
        yield new_finding(
            "hot-partition",
            subject(entity_name(spec), name),
            f"hot partition: {entity_name(spec)} on native index {name}{sparse}: partition key "
            f"({names}) {reason}, {_LIMITS}",
            _native_hint(model, spec, native, alone),
        )


def rule_hot_partition(model: Model) -> Iterable[Finding]:
    """``hot-partition`` findings: key templates first, then native-key indexes."""
    for spec in model.specs:
        yield from _template_findings(model, spec)
        yield from _native_findings(model, spec)
