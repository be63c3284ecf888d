"""The generated functions (codegen.py) equal the reference path, on random entities.

Each example declares a new entity class: a random set of fields (str, int, Decimal, bool,
float, datetime, date, UUID, str and int Enums, Literal, bytes, Any, list, set, dict, nested
models inlined or not, a recursive model), each maybe Optional, maybe aliased; maybe extras
allowed, maybe a by-name alias that switches the codec to validating by name; on a table with
random key templates (formats, an index over optional fields, a sparse index, a local index, an
inverted index derived from the table key, escaped key values, a TTL field). Then, for a random
valid instance:

- the generated ``to_item`` writes exactly the item the reference writes: the type tag, keys
  rendered one template at a time (``KeyTemplate.render``) for the table and every index the
  entity is in, and the fields encoded one converter at a time
  (``ModelCodec.encode_field_by_field``) plus the extras;
- the generated ``encode_into``/``decode_fields`` of the model's fields (and of a nested
  model's) equal ``encode_field_by_field``/``decode_fields_lenient``, and the size bound the
  generated encoder returns is at least the item's size;
- the generated decode returns the entity the reference decode returns
  (``decode_fields_lenient``, the extras, validation), which is the entity written.
"""

from __future__ import annotations

import enum
import uuid
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from singletable import GSI, LSI, Entity, Index, Table
from singletable._codec import FieldPlan, ModelCodec, encode_value
from singletable._codegen import generate_codec, generate_decode, generate_to_item
from singletable._entity import spec_of
from singletable._entity_spec import EntitySpec
from singletable._indexes import IndexSpec
from singletable._wire import Wire, decode_value, item_size

UTC = timezone.utc
ZONES = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
# Derandomized: the same examples every run (each one declares a class, so they stay few).
PROPERTY = settings(
    max_examples=80,
    deadline=2000,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.Enum):
    LOW = 1
    HIGH = 20


class Inner(BaseModel):
    name: str
    count: int = 0
    price: Decimal | None = None
    at: datetime | None = None
    tags: set[str] = set()


class Open(BaseModel):
    """Allows extras, so it is never inlined: the nested codec encodes it."""

    model_config = ConfigDict(extra="allow")
    label: str


class Node(BaseModel):
    """Refers to itself: inlined down to the model already on the stack, then by its codec."""

    value: int
    child: Node | None = None


class Deep1(BaseModel):
    d2: Deep2


class Deep2(BaseModel):
    d3: Deep3


class Deep3(BaseModel):
    d4: Deep4


class Deep4(BaseModel):
    """Four levels down: deeper than the generator inlines."""

    leaf: str


Node.model_rebuild()
Deep1.model_rebuild()
Deep2.model_rebuild()
Deep3.model_rebuild()


# -- value strategies ----------------------------------------------------------------------------

PLAIN_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
# Key text: often the delimiter, '%' or non-ASCII text, so escaping and the checks are exercised.
_KEY_CHARS = st.characters(exclude_categories=("Cs",), exclude_characters="#\U0010ffff")
KEY_TEXT = st.sampled_from(["a", "%", "é", "50%é"]) | st.text(_KEY_CHARS, min_size=1, max_size=8)
ESCAPED_KEY_TEXT = st.sampled_from(["a#b", "%", "#", "50%#é"]) | KEY_TEXT
INTS = st.one_of(st.integers(-1000, 1000), st.integers(-(10**38) + 1, 10**38 - 1))
DECIMALS = st.builds(
    lambda m, e: Decimal(m).scaleb(e), st.integers(-(10**20), 10**20), st.integers(-40, 40)
)
FLOATS = st.floats(-1e100, 1e100, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-100)
AWARE = st.datetimes(datetime(1900, 1, 1), datetime(2200, 1, 1), timezones=st.sampled_from(ZONES))
ANY_DATETIME = st.one_of(AWARE, st.datetimes(datetime(1900, 1, 1), datetime(2200, 1, 1)))
INNERS = st.builds(
    Inner,
    name=PLAIN_TEXT,
    count=INTS,
    price=st.none() | DECIMALS,
    at=st.none() | AWARE,
    tags=st.sets(PLAIN_TEXT, max_size=3),
)
NODES = st.recursive(
    st.builds(Node, value=INTS),
    lambda children: st.builds(Node, value=INTS, child=children),
    max_leaves=4,
)


class Kind:
    """A field type: its annotation, its values, and the formats it takes in a sort key (None:
    it cannot be in a key)."""

    def __init__(
        self,
        annotation: Any,
        values: st.SearchStrategy[Any],
        sort_formats: tuple[str | None, ...] | None = None,
        pk_ok: bool = True,
    ) -> None:
        self.annotation = annotation
        self.values = values
        self.sort_formats = sort_formats
        self.pk_ok = pk_ok  # a bare number in a partition key renders canonically


KINDS: dict[str, Kind] = {
    "str": Kind(str, KEY_TEXT, (None,)),
    "int": Kind(int, INTS, ("sortable",)),
    "small_int": Kind(int, st.integers(0, 99_999_999), ("08d", "sortable")),
    "decimal": Kind(Decimal, DECIMALS, ("sortable",)),
    "datetime": Kind(datetime, AWARE, (None, "%Y-%m-%d", "%Y%m%d%H%M%S%f")),
    "date": Kind(date, st.dates(), (None, "%Y-%m")),
    "uuid": Kind(uuid.UUID, st.uuids(), (None,)),
    "color": Kind(Color, st.sampled_from(Color), (None,)),
    "level": Kind(Level, st.sampled_from(Level), ("sortable",)),
    "literal": Kind(Literal["a", "b"], st.sampled_from(["a", "b"]), (None,)),
    "bool": Kind(bool, st.booleans()),
    "float": Kind(float, FLOATS),
    "any_datetime": Kind(datetime, ANY_DATETIME),
    "text": Kind(str, PLAIN_TEXT),
    "bytes": Kind(bytes, st.binary(max_size=8)),
    "any": Kind(Any, st.one_of(st.none(), PLAIN_TEXT, INTS, st.booleans())),
    "list": Kind(list[int], st.lists(INTS, max_size=3)),
    "optional_list": Kind(list[str | None], st.lists(st.none() | PLAIN_TEXT, max_size=3)),
    "tuple": Kind(tuple[int, str], st.tuples(INTS, PLAIN_TEXT)),
    "str_set": Kind(set[str], st.sets(PLAIN_TEXT, max_size=3)),
    "enum_set": Kind(set[Color], st.sets(st.sampled_from(Color))),
    "int_set": Kind(set[int], st.sets(INTS, max_size=3)),
    "dict": Kind(dict[str, Decimal], st.dictionaries(PLAIN_TEXT, DECIMALS, max_size=3)),
    "any_dict": Kind(dict[str, Any], st.dictionaries(PLAIN_TEXT, INTS, max_size=3)),
    "inner": Kind(Inner, INNERS),
    "open": Kind(Open, st.builds(Open, label=PLAIN_TEXT)),
    "node": Kind(Node, NODES),
    # The TTL field stores whole epoch seconds.
    "ttl": Kind(datetime, AWARE.map(lambda d: d.replace(microsecond=0))),
    "deep": Kind(
        Deep1,
        st.builds(lambda s: Deep1.model_validate({"d2": {"d3": {"d4": {"leaf": s}}}}), PLAIN_TEXT),
    ),
}
KEY_KINDS = sorted(name for name, kind in KINDS.items() if kind.sort_formats is not None)
PK_KINDS = [name for name in KEY_KINDS if name not in ("int", "small_int", "decimal", "level")]


# -- random entity declarations ------------------------------------------------------------------


class FieldDecl:
    def __init__(self, name: str, kind: str, optional: bool, alias: str | None) -> None:
        self.name = name
        self.kind = KINDS[kind]
        self.optional = optional
        self.alias = alias

    @property
    def input_key(self) -> str:
        return self.alias or self.name


class Declared:
    """A random entity class and how to make its instances."""

    def __init__(self, cls: type[Entity], fields: list[FieldDecl], extras: bool) -> None:
        self.cls = cls
        self.fields = fields
        self.extras = extras

    @property
    def spec(self) -> EntitySpec:
        return spec_of(self.cls)


def _template(tag: str, fields: list[tuple[str, str | None]]) -> str:
    parts = [tag] + [f"{{{name}:{fmt}}}" if fmt else f"{{{name}}}" for name, fmt in fields]
    return "#".join(parts)


@st.composite
def declarations(draw: st.DrawFn) -> Declared:
    n = draw(st.integers(0, 6))
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=n, max_size=n))
    fields = [
        FieldDecl(
            f"f{i}",
            kind,
            optional=draw(st.booleans()),
            alias=draw(st.sampled_from([None, None, f"a_f{i}"])),
        )
        for i, kind in enumerate(kinds)
    ]
    # Key fields: required, one type each (the table key's never optional).
    pk_field = FieldDecl("pk_f", draw(st.just("str") | st.sampled_from(PK_KINDS)), False, None)
    sk_kinds = draw(st.lists(st.sampled_from(KEY_KINDS), max_size=2))
    sk_fields = [FieldDecl(f"sk{i}", kind, False, None) for i, kind in enumerate(sk_kinds)]
    gsi_kind = draw(st.sampled_from(KEY_KINDS))
    gsi_field = FieldDecl(
        "g_f", gsi_kind, draw(st.booleans()), draw(st.sampled_from([None, "a_g"]))
    )
    flag = FieldDecl("flag", "color", False, None)
    fields += [pk_field, *sk_fields, gsi_field, flag]

    escape = draw(st.booleans())
    ttl = draw(st.booleans())
    table = Table(
        "Gen",
        indexes=[
            GSI("GSI1", "GSI1PK", "GSI1SK"),
            GSI("Sparse", "SPK", "SSK"),
            GSI("Inverted", "SK", "PK"),
            LSI("LSI1", "LSI1SK"),
        ],
        ttl_attribute="expires" if ttl else None,
        key_values="escape" if escape else "refuse",
    )

    def sort_format(decl: FieldDecl) -> str | None:
        formats = decl.kind.sort_formats
        assert formats is not None
        return draw(st.sampled_from(formats))

    keys: dict[str, Any] = {
        "pk": _template("P", [("pk_f", None)]),
        "sk": _template("S", [(f.name, sort_format(f)) for f in sk_fields]),
        "LSI1": _template("L", [(f.name, sort_format(f)) for f in reversed(sk_fields)]),
    }
    if draw(st.booleans()):  # an index over a field that may be None: written only when it is not
        keys["GSI1"] = (
            _template(
                "G", [("g_f", sort_format(gsi_field) if gsi_kind in PK_KINDS else "sortable")]
            ),
            _template("GS", [("pk_f", None)]),
        )
    sparse_when = draw(st.sampled_from(["none", "dict", "callable"]))
    if sparse_when != "none":
        when: Any = (
            {"flag": Color.RED} if sparse_when == "dict" else (lambda e: e.flag is Color.BLUE)
        )
        keys["Sparse"] = Index(
            _template("SP", [("flag", None)]), _template("SS", [("pk_f", None)]), when=when
        )

    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {"__module__": __name__, "__qualname__": "Generated"}
    by_name = draw(st.booleans()) and bool(fields[:n])
    for decl in fields:
        annotation = decl.kind.annotation
        if decl.optional:
            annotation = annotation | None
        annotations[decl.name] = annotation
        options: dict[str, Any] = {}
        if decl.alias:
            options["alias"] = decl.alias
        if decl.optional:
            options["default"] = None
        if options:
            namespace[decl.name] = Field(**options)
    if by_name:  # an AliasChoices validation alias: the codec validates by field name
        first = fields[0]
        first.alias = None
        namespace[first.name] = Field(
            default=None if first.optional else ...,
            validation_alias=AliasChoices(f"alt_{first.name}", first.name),
        )
    if ttl:
        annotations["expires"] = datetime | None
        namespace["expires"] = None
        fields.append(FieldDecl("expires", "ttl", True, None))
    extras = draw(st.booleans())
    if extras:
        namespace["model_config"] = ConfigDict(extra="allow")
    namespace["__annotations__"] = annotations
    namespace["Keys"] = type(
        "Keys", (), {**keys, "__module__": __name__, "__qualname__": "Generated.Keys"}
    )
    cls = type(Entity)("Generated", (Entity,), namespace, table=table, type="GEN")
    return Declared(cls, fields, extras)


def instances(declared: Declared) -> st.SearchStrategy[Entity]:
    escape = declared.spec.table.key_values == "escape"
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for decl in declared.fields:
        values = decl.kind.values
        if escape and values is KEY_TEXT:
            values = ESCAPED_KEY_TEXT
        parts[decl.input_key] = st.none() | values if decl.optional else values
    extras: st.SearchStrategy[dict[str, Any]] = st.just({})
    if declared.extras:
        extras = st.dictionaries(st.sampled_from(["x_one", "x_two", "x_three"]), PLAIN_TEXT | INTS)
    return st.builds(
        lambda values, more: declared.cls.model_validate({**values, **more}),
        st.fixed_dictionaries(parts),
        extras,
    )


# -- the reference path --------------------------------------------------------------------------


def reference_to_item(spec: EntitySpec, entity: Entity) -> dict[str, Wire]:
    values = spec.key_values(entity)
    item: dict[str, Wire] = {spec.table.type_attribute: {"S": spec.type_name}}
    for index in [spec.base, *spec.indexes.values()]:
        if index is not spec.base and (
            not reference_member(index, entity)
            or any(values[f] is None for f in index.template_fields)
        ):
            continue
        for attr, tpl in ((index.keys.pk, index.pk), (index.keys.sk, index.sk)):
            if attr and tpl is not None:
                item[attr] = {"S": tpl.render(values)}
    spec.codec.encode_field_by_field(entity, item)
    for name, value in (entity.__pydantic_extra__ or {}).items():
        if value is not None:
            item[name] = encode_value(value)
    return item


def reference_member(index: IndexSpec, entity: Entity) -> bool:
    """The sparse condition, read off the declaration (not :meth:`IndexSpec.holds`)."""
    if index.when is not None:
        return all(getattr(entity, name) in allowed for name, allowed in index.when.items())
    if index.when_callable is not None:
        return bool(index.when_callable(entity))
    return True


def reference_decode(spec: EntitySpec, item: dict[str, Wire]) -> Any:
    codec = spec.codec
    data = codec.decode_fields_lenient(item)
    if codec.allows_extra:
        for name, av in item.items():
            if name not in spec.known_attributes:
                data[name] = decode_value(av)
    return codec.validate(data)


def assert_codec_matches(codec: ModelCodec, obj: BaseModel) -> None:
    """The generated encode_into/decode_fields of ``codec``'s fields equal the reference."""
    encode_into, decode_fields = generate_codec(codec.fields)
    generated: dict[str, Wire] = {}
    bound = encode_into(obj.__dict__, generated)
    reference: dict[str, Wire] = {}
    codec.encode_field_by_field(obj, reference)
    assert generated == reference
    assert bound >= item_size(generated)
    assert decode_fields(generated) == codec.decode_fields_lenient(generated)


def nested_models(fields: tuple[FieldPlan, ...], obj: BaseModel) -> list[tuple[ModelCodec, Any]]:
    found = []
    for plan in fields:
        nested, value = plan.converter.nested, obj.__dict__[plan.name]
        if nested is not None and value is not None:
            found.append((nested, value))
    return found


def as_read_back(spec: EntitySpec, entity: Entity) -> Entity:
    """``entity`` as any decoder returns it: an empty set is not stored (DynamoDB has none), so
    where an absent set does not mean an empty one (an optional set), the default comes back."""
    lost = {
        plan.name: spec.cls.model_fields[plan.name].get_default()
        for plan in spec.codec.fields
        if plan.converter.may_omit and plan.absent is None and entity.__dict__[plan.name] == set()
    }
    return entity.model_copy(update=lost) if lost else entity


@st.composite
def entities(draw: st.DrawFn) -> tuple[Declared, Entity]:
    declared = draw(declarations())
    return declared, draw(instances(declared))


@PROPERTY
@given(entities())
def test_generated_code_equals_the_reference_path(case: tuple[Declared, Entity]) -> None:
    declared, entity = case
    spec = declared.spec
    item = generate_to_item(spec)(entity)
    assert item == reference_to_item(spec, entity)

    assert_codec_matches(spec.codec, entity)
    for nested, value in nested_models(spec.codec.fields, entity):
        assert_codec_matches(nested, value)

    decoded = generate_decode(spec)(item)
    assert decoded == reference_decode(spec, item)
    assert decoded == as_read_back(spec, entity)


def test_the_random_declarations_reach_every_branch_of_the_generator() -> None:
    """The property's declarations are not all alike: spot-check the generator's branches on
    one declaration of each sort that the strategy draws."""
    seen: dict[str, bool] = {}

    @settings(PROPERTY, max_examples=60)
    @given(entities())
    def survey(case: tuple[Declared, Entity]) -> None:
        declared, _ = case
        spec = declared.spec
        codec = spec.codec
        seen["by_name"] = seen.get("by_name", False) or codec.by_name
        seen["extras"] = seen.get("extras", False) or codec.allows_extra
        seen["escape"] = seen.get("escape", False) or spec.table.key_values == "escape"
        seen["ttl"] = seen.get("ttl", False) or spec.ttl_field is not None
        seen["sparse"] = seen.get("sparse", False) or any(i.sparse for i in spec.indexes.values())
        seen["inverted"] = seen.get("inverted", False) or "Inverted" in spec.indexes
        seen["optional index"] = seen.get("optional index", False) or "GSI1" in spec.indexes
        seen["nested"] = seen.get("nested", False) or any(
            p.converter.nested is not None for p in codec.fields
        )

    survey()
    assert seen == dict.fromkeys(seen, True) and len(seen) == 8, seen
