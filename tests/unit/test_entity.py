"""Entity declarations: every definition-time mistake is a ModelDefinitionError at class
creation, naming the culprit and saying how to fix it. Each test uses a fresh Table."""

import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Optional

import pytest
from pydantic import Field, computed_field

from singletable import (
    GSI,
    LSI,
    CreatedAt,
    Entity,
    Index,
    Repository,
    Table,
    Unique,
    UpdatedAt,
    Version,
)
from singletable._entity import spec_of
from singletable.errors import KeyDefinitionError, KeyTemplateError, ModelDefinitionError


class Status(str, enum.Enum):
    PENDING = "PENDING"
    SHIPPED = "SHIPPED"


def shop(**kw: Any) -> Table:
    return Table(
        "Shop",
        indexes=[
            GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
            GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
        ],
        **kw,
    )


def refused(match: str | None = None):
    return pytest.raises(ModelDefinitionError, match=match)


def message(info: pytest.ExceptionInfo) -> str:
    return str(info.value)


def make_entity(name, annotations, keys, table, defaults=None, **class_kw):
    """Declare ``class name(Entity, table=table, **class_kw)`` with a nested ``class Keys``."""
    keys_cls = type("Keys", (), dict(keys))
    keys_cls.__qualname__ = f"{name}.Keys"
    keys_cls.__module__ = __name__
    namespace = {
        "__annotations__": dict(annotations),
        "__module__": __name__,
        "__qualname__": name,
        "Keys": keys_cls,
        **(defaults or {}),
    }
    return type(name, (Entity,), namespace, table=table, **class_kw)


# -- a correct declaration (the DESIGN.md example) ----------------------------------------------


def test_design_example_compiles():
    table = shop(ttl_attribute="expires_at")

    class Customer(Entity, table=table):
        customer_id: str
        name: str
        email: Annotated[str, Unique()]
        version: Annotated[int, Version()] = 0

        class Keys:
            pk = "CUSTOMER#{customer_id}"
            sk = "PROFILE"
            GSI1 = ("EMAIL#{email}", "CUSTOMER#{customer_id}")

    class Order(Entity, table=table, type="ORDER"):
        customer_id: str
        order_id: str
        created_at: datetime
        status: Status
        total: Decimal
        customer_name: str
        expires_at: datetime | None = None

        class Keys:
            pk = "CUSTOMER#{customer_id}"
            sk = "ORDER#{created_at}#{order_id}"
            GSI1 = ("STATUS#{status}", "ORDER#{created_at}#{order_id}")
            GSI2 = Index("PENDING", "{created_at}#{order_id}", when={"status": Status.PENDING})

    customer = spec_of(Customer)
    assert customer.type_name == "Customer"
    assert not customer.explicit_type
    assert customer.version_field == "version"
    assert customer.unique_fields == ("email",)
    assert customer.primary_fields == ("customer_id",)
    assert set(customer.indexes) == {"GSI1"}
    order = spec_of(Order)
    assert order.type_name == "ORDER"
    assert order.explicit_type
    assert order.ttl_field == "expires_at"
    assert order.indexes["GSI2"].sparse
    assert order.indexes["GSI2"].when == {"status": (Status.PENDING,)}
    assert table.entities == {"Customer": Customer, "ORDER": Order}


# -- Keys ---------------------------------------------------------------------------------------


def test_missing_keys_class():
    with refused() as info:

        class NoKeys(Entity, table=shop()):
            id: str

    assert "NoKeys" in message(info)
    assert "class Keys" in message(info)


def test_missing_pk():
    with refused() as info:

        class NoPk(Entity, table=shop()):
            id: str

            class Keys:
                sk = "X"

    assert "NoPk.Keys" in message(info)
    assert "pk" in message(info)


def test_missing_sk_when_table_has_one():
    with refused() as info:

        class NoSk(Entity, table=shop()):
            id: str

            class Keys:
                pk = "X#{id}"

    text = message(info)
    assert "NoSk.Keys" in text
    assert "sk" in text
    assert "'Shop'" in text
    assert "'SK'" in text


def test_sk_on_table_without_sort_key():
    table = Table("Simple", pk="id_key", sk=None)
    with refused() as info:

        class WithSk(Entity, table=table):
            id: str

            class Keys:
                pk = "X#{id}"
                sk = "X"

    text = message(info)
    assert "WithSk" in text
    assert "no sort key" in text
    assert "'Simple'" in text


def test_pk_only_table_accepts_pk_only_entity():
    table = Table("Simple", pk="id_key", sk=None)

    class Thing(Entity, table=table):
        id: str

        class Keys:
            pk = "THING#{id}"

    assert Thing(id="1").to_item() == {
        "_type": {"S": "Thing"},
        "id_key": {"S": "THING#1"},
        "id": {"S": "1"},
    }


def test_unknown_index_name_in_keys():
    with refused() as info:

        class BadIndex(Entity, table=shop()):
            id: str

            class Keys:
                pk = "X#{id}"
                sk = "X"
                GSI9 = ("A#{id}", "B")

    text = message(info)
    assert "GSI9" in text
    assert "BadIndex" in text
    assert "GSI1" in text  # lists the known ones


@pytest.mark.parametrize("role", ["pk", "sk", "GSI1"])
def test_template_naming_unknown_field(role):
    entries = {"pk": "X#{id}", "sk": "X"}
    if role == "GSI1":
        entries["GSI1"] = ("A#{idd}", "B")
    else:
        entries[role] = "X#{idd}"
    with pytest.raises(ModelDefinitionError) as info:
        make_entity("UnknownField", {"id": str}, entries, shop())
    assert isinstance(info.value, KeyTemplateError)
    text = message(info)
    assert "'idd'" in text
    assert "id" in text
    assert "UnknownField" in text


@pytest.mark.parametrize("number_type", [int, Decimal])
def test_bare_number_in_sort_key(number_type):
    with pytest.raises(ModelDefinitionError) as info:
        make_entity(
            "Review",
            {"id": str, "rating": number_type},
            {"pk": "R#{id}", "sk": "RATING#{rating}"},
            shop(),
        )
    assert isinstance(info.value, KeyDefinitionError)
    assert "rating" in message(info)
    assert "sortable" in message(info)


def test_bare_number_in_gsi_sort_key():
    with refused("rating"):

        class Review(Entity, table=shop()):
            id: str
            rating: int

            class Keys:
                pk = "R#{id}"
                sk = "R"
                GSI1 = ("REVIEWS", "RATING#{rating}")


def test_number_fine_in_partition_keys_and_sortable_sort_keys():
    class Review(Entity, table=shop()):
        id: int
        rating: int

        class Keys:
            pk = "R#{id}"
            sk = "RATING#{rating:05d}"
            GSI1 = ("RATING#{rating}", "R#{id:sortable}")

    item = Review(id=7, rating=42).to_item()
    assert item["PK"] == {"S": "R#7"}
    assert item["SK"] == {"S": "RATING#00042"}
    assert item["GSI1PK"] == {"S": "RATING#42"}


@pytest.mark.parametrize(("annotation", "word"), [(float, "float"), (bool, "bool")])
def test_float_and_bool_fields_refused_in_templates(annotation, word):
    with refused() as info:
        make_entity("Bad", {"id": str, "x": annotation}, {"pk": "B#{x}", "sk": "B"}, shop())
    assert "Bad.x" in message(info)
    assert word in message(info)


def test_same_type_name_twice_on_one_table():
    table = shop()

    class First(Entity, table=table, type="THING"):
        id: str

        class Keys:
            pk = "A#{id}"
            sk = "A"

    with refused() as info:

        class Second(Entity, table=table, type="THING"):
            id: str

            class Keys:
                pk = "B#{id}"
                sk = "B"

    text = message(info)
    assert "THING" in text
    assert "First" in text
    assert "Second" in text
    assert "type=" in text


def test_default_type_names_clash_between_same_named_classes():
    table = shop()

    def declare():
        class Item(Entity, table=table):
            id: str

            class Keys:
                pk = "I#{id}"
                sk = "I"

        return Item

    def declare_again():
        class Item(Entity, table=table):
            id: str

            class Keys:
                pk = "J#{id}"
                sk = "J"

        return Item

    declare()
    with refused("'Item'"):
        declare_again()


def test_same_type_name_on_different_tables_sharing_a_name():
    class A(Entity, table=shop(), type="THING"):
        id: str

        class Keys:
            pk = "A#{id}"
            sk = "A"

    class B(Entity, table=shop(), type="THING"):
        id: str

        class Keys:
            pk = "B#{id}"
            sk = "B"

    assert spec_of(A).table is not spec_of(B).table


@pytest.mark.parametrize("type_name", ["__hidden", "__x__"])
def test_bad_type_names(type_name):
    with refused("type"):

        class T(Entity, table=shop(), type=type_name):
            id: str

            class Keys:
                pk = "T#{id}"
                sk = "T"


def test_table_must_be_a_table():
    with refused("Table"):

        class T(Entity, table="Shop"):  # type: ignore[arg-type]
            id: str


# -- attribute-name clashes ---------------------------------------------------------------------


@pytest.mark.parametrize("attr", ["PK", "SK", "GSI1PK", "GSI2SK", "_type"])
def test_alias_equal_to_key_attribute_or_type_tag(attr):
    with refused() as info:

        class Clash(Entity, table=shop()):
            id: str
            other: str = Field(alias=attr)

            class Keys:
                pk = "C#{id}"
                sk = "C"

    text = message(info)
    assert repr(attr) in text
    assert "Clash.other" in text
    assert "rename" in text


@pytest.mark.parametrize("name", ["PK", "SK", "GSI1PK", "GSI1SK"])
def test_field_named_like_key_attribute(name):
    with refused(name):
        make_entity("Clash", {"id": str, name: str}, {"pk": "C#{id}", "sk": "C"}, shop())


def test_field_named_like_custom_type_tag():
    table = Table("T", type_attribute="kind")
    with refused("'kind'"):

        class Clash(Entity, table=table):
            id: str
            kind: str

            class Keys:
                pk = "C#{id}"
                sk = "C"


def test_custom_key_names_clash():
    table = Table("T", pk="partitionId", sk="rangeId")
    with refused("'partitionId'"):

        class Clash(Entity, table=table):
            id: str
            partitionId: str

            class Keys:
                pk = "C#{id}"
                sk = "C"


def test_every_clashing_field_is_reported_at_once():
    """A model ported from another design (its attributes named like this table's keys) is
    fixed in one pass: one error names every clashing field."""
    with refused() as info:
        make_entity(
            "Ported",
            {"id": str, "PK": str, "GSI1PK": str, "kind": str, "sort__key": str},
            {"pk": "P#{id}", "sk": "P"},
            shop(),
            defaults={"kind": Field(default="", alias="_type")},
        )
    text = message(info)
    assert "Ported: 4 fields clash with names singletable reserves" in text
    for clash in ("Ported.PK: ", "Ported.GSI1PK: ", "Ported.kind: ", "Ported.sort__key: "):
        assert clash in text
    assert "'_type' is a key attribute or the type tag" in text


# -- field names --------------------------------------------------------------------------------


@pytest.mark.parametrize("keyword", ["limit", "cursor", "order", "set", "condition", "consistent"])
def test_field_named_like_call_keyword_in_template(keyword):
    with pytest.raises(ModelDefinitionError) as info:
        make_entity(
            "Kw", {"id": str, keyword: str}, {"pk": "K#{id}", "sk": "K#{" + keyword + "}"}, shop()
        )
    assert repr(keyword) in message(info)
    assert "rename" in message(info)


def test_field_named_like_call_keyword_outside_templates_is_allowed():
    class Kw(Entity, table=shop()):
        id: str
        limit: int = 0
        order: str = "x"

        class Keys:
            pk = "K#{id}"
            sk = "K"

    assert Kw(id="1", limit=3).to_item()["limit"] == {"N": "3"}


def test_field_with_double_underscore():
    with refused() as info:

        class Dunder(Entity, table=shop()):
            id: str
            created__at: str

            class Keys:
                pk = "D#{id}"
                sk = "D#{created__at}"

    assert "created__at" in message(info)
    assert "__" in message(info)


# -- markers ------------------------------------------------------------------------------------


def test_two_version_fields():
    with refused() as info:

        class TwoVersions(Entity, table=shop()):
            id: str
            v1: Annotated[int, Version()] = 0
            v2: Annotated[int, Version()] = 0

            class Keys:
                pk = "V#{id}"
                sk = "V"

    text = message(info)
    assert "Version()" in text
    assert "v1" in text
    assert "v2" in text


def test_two_created_at_fields():
    with refused("CreatedAt"):

        class TwoCreated(Entity, table=shop()):
            id: str
            a: Annotated[datetime | None, CreatedAt()] = None
            b: Annotated[datetime | None, CreatedAt()] = None

            class Keys:
                pk = "V#{id}"
                sk = "V"


def test_version_on_non_int():
    with refused() as info:

        class BadVersion(Entity, table=shop()):
            id: str
            version: Annotated[str, Version()] = "0"

            class Keys:
                pk = "V#{id}"
                sk = "V"

    assert "BadVersion.version" in message(info)
    assert "int" in message(info)


@pytest.mark.parametrize("annotation", [bool, float, Status])
def test_version_on_int_like_non_int(annotation):
    with refused("Version"):
        make_entity(
            "BadVersion",
            {"id": str, "version": Annotated[annotation, Version()]},
            {"pk": "V#{id}", "sk": "V"},
            shop(),
        )


@pytest.mark.parametrize("marker", [CreatedAt(), UpdatedAt()])
def test_timestamp_marker_on_non_datetime(marker):
    with refused() as info:
        make_entity(
            "BadStamp",
            {"id": str, "stamp": Annotated[str, marker]},
            {"pk": "V#{id}", "sk": "V"},
            shop(),
            defaults={"stamp": ""},
        )
    assert "BadStamp.stamp" in message(info)
    assert "datetime" in message(info)


def test_ttl_field_must_be_datetime():
    with refused() as info:

        class Session(Entity, table=shop(ttl_attribute="expires_at")):
            id: str
            expires_at: int = 0

            class Keys:
                pk = "S#{id}"
                sk = "S"

    text = message(info)
    assert "Session.expires_at" in text
    assert "TTL" in text
    assert "datetime" in text


def test_ttl_field_found_by_alias_must_be_datetime():
    with refused("expires_at"):

        class Session(Entity, table=shop(ttl_attribute="expires_at")):
            id: str
            expiry: int = Field(0, alias="expires_at")

            class Keys:
                pk = "S#{id}"
                sk = "S"


def test_ttl_field_found():
    class Session(Entity, table=shop(ttl_attribute="ttl")):
        id: str
        ttl: datetime | None = None

        class Keys:
            pk = "S#{id}"
            sk = "S"

    assert spec_of(Session).ttl_field == "ttl"


@pytest.mark.parametrize(
    "annotation",
    [
        list[Annotated[int, Version()]],
        dict[str, Annotated[datetime, CreatedAt()]],
        Optional[list[Annotated[int, Version()]]],  # noqa: UP045
        tuple[Annotated[str, Unique()], ...],
    ],
)
def test_marker_nested_in_container_refused(annotation):
    with refused() as info:
        make_entity("Nested", {"id": str, "inner": annotation}, {"pk": "N#{id}", "sk": "N"}, shop())
    assert "Nested.inner" in message(info)
    assert "container" in message(info)


def test_marker_inside_optional_is_found():
    class Stamped(Entity, table=shop()):
        id: str
        created: Optional[Annotated[datetime, CreatedAt()]] = None  # noqa: UP045
        updated: Annotated[datetime, UpdatedAt()] | None = None
        version: Annotated[int, Version()] = 0

        class Keys:
            pk = "S#{id}"
            sk = "S"

    spec = spec_of(Stamped)
    assert spec.created_field == "created"
    assert spec.updated_field == "updated"
    assert spec.version_field == "version"


def test_marker_on_annotated_optional_is_found():
    class Stamped(Entity, table=shop()):
        id: str
        created: Annotated[datetime | None, CreatedAt()] = None

        class Keys:
            pk = "S#{id}"
            sk = "S"

    assert spec_of(Stamped).created_field == "created"


def test_unique_on_unkeyable_type_refused():
    with refused("tags"):

        class U(Entity, table=shop()):
            id: str
            tags: Annotated[list[str], Unique()]

            class Keys:
                pk = "U#{id}"
                sk = "U"


# -- optional fields in keys --------------------------------------------------------------------


@pytest.mark.parametrize("where", ["pk", "sk"])
def test_optional_field_in_primary_key(where):
    entries = {"pk": "O#{id}", "sk": "O"}
    entries[where] = entries[where] + "#{maybe}" if where == "sk" else "O#{id}#{maybe}"
    with refused() as info:
        make_entity(
            "Opt", {"id": str, "maybe": str | None}, entries, shop(), defaults={"maybe": None}
        )
    assert "Opt.maybe" in message(info)
    assert "optional" in message(info)


def test_optional_field_in_gsi_template_is_allowed():
    class Opt(Entity, table=shop()):
        id: str
        email: str | None = None

        class Keys:
            pk = "O#{id}"
            sk = "O"
            GSI1 = ("EMAIL#{email}", "O#{id}")

    assert "GSI1PK" not in Opt(id="1").to_item()
    assert Opt(id="1", email="a@b").to_item()["GSI1PK"] == {"S": "EMAIL#a@b"}


def test_computed_field_in_template_is_allowed():
    class C(Entity, table=shop()):
        first: str
        last: str

        @computed_field  # type: ignore[prop-decorator]
        @property
        def full(self) -> str:
            return f"{self.first}.{self.last}"

        class Keys:
            pk = "C#{full}"
            sk = "C"

    assert spec_of(C).computed_in_keys == ("full",)
    assert C(first="a", last="b").to_item()["PK"] == {"S": "C#a.b"}


# -- sparse indexes -----------------------------------------------------------------------------


def test_sparse_when_names_unknown_field():
    with refused() as info:

        class Sparse(Entity, table=shop()):
            id: str
            status: Status

            class Keys:
                pk = "S#{id}"
                sk = "S"
                GSI2 = Index("PENDING", "S#{id}", when={"state": Status.PENDING})

    text = message(info)
    assert "'state'" in text
    assert "Sparse.Keys.GSI2" in text


@pytest.mark.parametrize("bad", ["NOPE", ("PENDING", "NOPE"), 3])
def test_sparse_when_value_invalid_for_field_type(bad):
    with refused() as info:

        class Sparse(Entity, table=shop()):
            id: str
            status: Status

            class Keys:
                pk = "S#{id}"
                sk = "S"
                GSI2 = Index("PENDING", "S#{id}", when={"status": bad})

    assert "status" in message(info)
    assert "GSI2" in message(info)


def test_sparse_when_values_are_converted_to_the_field_type():
    class Sparse(Entity, table=shop()):
        id: str
        status: Status

        class Keys:
            pk = "S#{id}"
            sk = "S"
            GSI2 = Index("PENDING", "S#{id}", when={"status": ("PENDING", Status.SHIPPED)})

    assert spec_of(Sparse).indexes["GSI2"].when == {"status": (Status.PENDING, Status.SHIPPED)}


@pytest.mark.parametrize("when", [{}, "status", 3])
def test_sparse_when_must_be_mapping_or_callable(when):
    with refused("when"):

        class Sparse(Entity, table=shop()):
            id: str
            status: Status

            class Keys:
                pk = "S#{id}"
                sk = "S"
                GSI2 = Index("PENDING", "S#{id}", when=when)


# -- index entries ------------------------------------------------------------------------------


def lsi_table() -> Table:
    return Table("L", indexes=[LSI("LSI1", sk="LSI1SK"), GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


def test_lsi_entry_giving_a_pk():
    with refused() as info:

        class Local(Entity, table=lsi_table()):
            id: str
            name: str

            class Keys:
                pk = "L#{id}"
                sk = "L"
                LSI1 = ("OTHER#{id}", "NAME#{name}")

    assert "LSI1" in message(info)
    assert "local" in message(info)


def test_lsi_entry_with_sort_key_only():
    class Local(Entity, table=lsi_table()):
        id: str
        name: str

        class Keys:
            pk = "L#{id}"
            sk = "L"
            LSI1 = "NAME#{name}"

    item = Local(id="1", name="n").to_item()
    assert item["LSI1SK"] == {"S": "NAME#n"}
    assert spec_of(Local).indexes["LSI1"].pk is None


@pytest.mark.parametrize(
    ("entry", "word"),
    [
        (("A#{id}",), "sort key"),
        (("A#{id}", "B", "C"), "3-tuple"),
        (42, "tuple"),
        (Index(None, "B"), "partition key"),
    ],
)
def test_bad_gsi_entries(entry, word):
    with refused() as info:
        make_entity("BadEntry", {"id": str}, {"pk": "E#{id}", "sk": "E", "GSI1": entry}, shop())
    assert "BadEntry.Keys.GSI1" in message(info)
    assert word in message(info)


def test_gsi_without_sort_key_refuses_sk_template():
    table = Table("T", indexes=[GSI("ByEmail", pk="email_key", index_name="email-index")])
    with refused("no sort key"):

        class U(Entity, table=table):
            id: str
            email: str

            class Keys:
                pk = "U#{id}"
                sk = "U"
                ByEmail = ("EMAIL#{email}", "U#{id}")

    class V(Entity, table=table):
        id: str
        email: str

        class Keys:
            pk = "V#{id}"
            sk = "V"
            ByEmail = "EMAIL#{email}"

    assert V(id="1", email="e").to_item()["email_key"] == {"S": "EMAIL#e"}


def test_non_string_template_refused():
    with refused("template string"):

        class T(Entity, table=shop()):
            id: str

            class Keys:
                pk = 42
                sk = "T"


def test_helper_methods_on_keys_are_ignored():
    class T(Entity, table=shop()):
        id: str

        class Keys:
            pk = "T#{id}"
            sk = "T"

            def helper(self) -> str:
                return "x"

    assert set(spec_of(T).indexes) == set()


def test_abstract_base_entity_without_table_is_not_compiled():
    class Base(Entity):
        id: str

    class Concrete(Base, table=shop()):
        class Keys:
            pk = "C#{id}"
            sk = "C"

    assert spec_of(Concrete).type_name == "Concrete"
    with refused("not a concrete entity"):
        spec_of(Base)


def test_table_argument_must_be_a_table() -> None:
    with pytest.raises(ModelDefinitionError, match=r"Thing: table= must be a singletable Table"):

        class Thing(Entity, table="shop", type="THING"):  # type: ignore[arg-type]
            thing_id: str

    with pytest.raises(ModelDefinitionError, match=r"Repo: table= must be a singletable Table"):

        class Repo(Repository, table={"name": "shop"}):  # type: ignore[arg-type]
            pass
