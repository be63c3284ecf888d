"""Native and multi-attribute index keys (API.md "Third wave / Native and multi-attribute index
keys"), on every backend that serves them and both twins: declaration, membership, types,
refused values, patterns, cursors, writes, explain.

The ``arena`` table's native indexes have one attribute each (dynalite serves them too); the
``tenants`` table's have several (``@pytest.mark.requires("multi_attribute_keys")``: dynalite
refuses such a key schema, and the backend fixture skips there saying so)."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from singletable import GSI, Attr, Entity, Repository, Table, collection, query
from singletable.errors import (
    InvalidCursor,
    InvalidRequestError,
    KeyTemplateError,
    ModelDefinitionError,
    NotFound,
    PatternArgumentError,
)
from tests.native_models import (
    Arena,
    Game,
    Invoice,
    Match,
    Order,
    Purchase,
    Status,
    Tenants,
    arena,
    tenants,
)

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
MULTI = pytest.mark.requires("multi_attribute_keys")


@pytest.fixture
def games(make_repo: Any) -> Arena:
    repo: Arena = make_repo(Arena, arena)
    return repo


@pytest.fixture
def shop(make_repo: Any) -> Tenants:
    repo: Tenants = make_repo(Tenants, tenants)
    return repo


def cursor_values(cursor: str) -> dict[str, Any]:
    """The key a cursor holds (its JSON payload; unsigned cursors in these tests)."""
    payload = cursor.split(".", 1)[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["k"])


def open_game(n: int, map_name: str | None, hours: int | None) -> Game:
    when = None if hours is None else T0 + timedelta(hours=hours)
    return Game(game_id=f"g{n}", creator="ann", map=map_name, open_timestamp=when)


def order(n: int, status: Status, minutes: int, region: str = "eu", tenant: str = "t1") -> Order:
    return Order(
        tenant_id=tenant,
        region=region,  # type: ignore[arg-type]
        order_id=f"o{n:02d}",
        status=status,
        created_at=T0 + timedelta(minutes=minutes),
        total=Decimal(n),
    )


# -- one attribute: sparse membership, typed values, numbers sort as numbers ------------------


def test_an_item_is_in_a_native_index_when_it_has_every_key_field(
    games: Arena, recorder: Any
) -> None:
    for n, (map_name, hours) in enumerate([("Dune", 3), ("Dune", 1), ("Ice", 2), (None, None)]):
        games.create(open_game(n, map_name, hours))
    games.create(open_game(4, "Dune", None))  # a map, no open time: not in the index either
    with recorder.expect("Query"):
        found = games.open_games(map="Dune")
    assert [g.game_id for g in found] == ["g1", "g0"]  # by open_timestamp
    params = recorder.params("Query")[0]
    assert params == games.open_games.params(map="Dune")
    assert params["IndexName"] == "OpenGames"
    assert params["KeyConditionExpression"] == "#k0 = :k0"
    assert params["ExpressionAttributeNames"] == {"#k0": "map"}
    assert [g.game_id for g in games.newest_open_games(map="Dune")] == ["g0", "g1"]
    later = games.open_games(map="Dune", open_timestamp__gte=T0 + timedelta(hours=2))
    assert [g.game_id for g in later] == ["g0"]
    explained = {row.pattern: row for row in Arena.explain()}["open_games"]
    assert explained.operation == "Query" and explained.index == "OpenGames"
    assert explained.key_condition == "map = {map} [+ open_timestamp]"


def test_an_update_moves_the_item_within_the_index_and_none_takes_it_out(
    games: Arena, recorder: Any
) -> None:
    game = games.create(open_game(1, "Dune", 1))
    with recorder.expect("UpdateItem"):
        moved = games.update(game, map="Ice")
    update = recorder.params("UpdateItem")[0]["UpdateExpression"]
    assert "GSI" not in json.dumps(recorder.params("UpdateItem")[0])  # nothing derived
    assert update.startswith("SET")
    assert [g.game_id for g in games.open_games(map="Ice")] == ["g1"]
    assert games.open_games(map="Dune").items == []
    closed = games.update(moved, open_timestamp=None)  # a plain REMOVE: out of the index
    assert closed.open_timestamp is None and games.open_games(map="Ice").items == []
    games.update(Game, game_id="g1", set={"open_timestamp": T0})
    assert [g.version for g in games.open_games(map="Ice")] == [4]  # Version() still counts
    games.update(Game, game_id="g1", remove=["map"])
    assert games.open_games(map="Ice").items == []


def test_numbers_sort_as_numbers_and_cursors_keep_their_type(games: Arena, recorder: Any) -> None:
    for n, total in enumerate(["9", "100", "10", "-1.5", "99.9"]):
        games.create(Purchase(customer_id="c", purchase_id=f"p{n}", total=Decimal(total)))
    totals = [p.total for p in games.purchases_by_total.all(customer_id="c")]
    assert totals == [Decimal("-1.5"), 9, 10, Decimal("99.9"), 100]  # text would put 10 < 9
    between = games.purchases_by_total(customer_id="c", total__between=(9, 99.9))
    assert [p.total for p in between] == [9, 10, Decimal("99.9")]
    first = games.purchases_by_total(customer_id="c", total__gt=0, limit=2)
    assert [p.total for p in first] == [9, 10]
    assert first.cursor is not None
    assert cursor_values(first.cursor)["total"] == ["N", "10"]  # N stays N
    with recorder.expect("Query"):
        rest = games.purchases_by_total(customer_id="c", total__gt=0, cursor=first.cursor)
    assert recorder.params("Query")[0]["ExclusiveStartKey"]["total"] == {"N": "10"}
    assert [p.total for p in rest] == [Decimal("99.9"), 100]
    with pytest.raises(InvalidCursor):
        games.purchases_by_total(customer_id="other", total__gt=0, cursor=first.cursor)
    with pytest.raises(InvalidCursor):  # the cursor lies below this range
        games.purchases_by_total(customer_id="c", total__gt=50, cursor=first.cursor)
    assert games.purchases_by_total.count(customer_id="c", total__lt=10) == 2


def test_bytes_key_a_keys_only_index_and_expired_items_stay_hidden(
    games: Arena, clock: Any
) -> None:
    games.create(Purchase(customer_id="c", purchase_id="p1", total=Decimal(1), code=b"\x00A"))
    games.create(
        Purchase(
            customer_id="c",
            purchase_id="p2",
            total=Decimal(2),
            code=b"\x01B",
            expires_at=clock.now + timedelta(hours=1),
        )
    )
    found = games.purchases_by_code(code=b"\x00A")
    assert [p.purchase_id for p in found] == ["p1"]
    assert [p.purchase_id for p in games.purchases_by_code(code=b"\x01B")] == ["p2"]
    clock.now = clock.now + timedelta(hours=2)  # expired, not yet deleted: absent
    assert games.purchases_by_code(code=b"\x01B").items == []
    assert games.purchases_by_total.count(customer_id="c") == 1


def test_values_dynamodb_refuses_as_keys_are_refused_before_sending(
    games: Arena, recorder: Any
) -> None:
    game = games.create(open_game(1, "Dune", 1))
    recorder.clear()
    with pytest.raises(KeyTemplateError, match=r"Game\.map") as error:
        games.create(open_game(2, "", 1))
    assert error.value.key == "map"
    with pytest.raises(KeyTemplateError, match=r"Game\.map"):
        games.update(game, map="")
    with pytest.raises(KeyTemplateError, match=r"Game\.map"):
        games.update(Game, game_id="g1", set={"map": ""})
    with pytest.raises(KeyTemplateError, match=r"Game\.map"):
        games.open_games(map="")
    with pytest.raises(KeyTemplateError, match=r"Game\.map.*2048"):
        games.create(open_game(3, "x" * 2049, 1))  # a partition attribute: 2,048 bytes
    with pytest.raises(KeyTemplateError, match=r"Purchase\.code"):
        games.create(Purchase(customer_id="c", purchase_id="p", total=Decimal(1), code=b""))
    with pytest.raises(KeyTemplateError, match=r"Purchase\.code.*2048"):
        games.batch_put(
            [Purchase(customer_id="c", purchase_id="p", total=Decimal(1), code=b"x" * 2049)]
        )
    assert recorder.operations == []  # nothing half-written, nothing sent
    games.create(open_game(4, "é" * 1024, 1))  # 2,048 bytes exactly: taken
    with pytest.raises(NotFound):
        games.update(Game, game_id="nope", set={"map": "Dune"})


# -- several attributes: left to right, one range, typed -------------------------------------


@MULTI
def test_sort_attributes_match_left_to_right_then_one_range(shop: Tenants, recorder: Any) -> None:
    statuses = [Status.PAID, Status.PENDING, Status.PAID, Status.SHIPPED, Status.PAID]
    for n, status in enumerate(statuses):
        shop.create(order(n, status, minutes=10 * (5 - n)))
    shop.create(order(9, Status.PAID, minutes=1, region="us"))
    shop.create(order(8, Status.PAID, minutes=1, tenant="t2"))
    with recorder.expect("Query"):
        paid = shop.tenant_orders(tenant_id="t1", region="eu", status=Status.PAID)
    assert [o.order_id for o in paid] == ["o04", "o02", "o00"]  # by created_at
    params = recorder.params("Query")[0]
    assert params["KeyConditionExpression"] == "#k0 = :k0 AND #k1 = :k1 AND #k2 = :k2"
    assert params["ExpressionAttributeNames"] == {
        "#k0": "tenant_id",
        "#k1": "region",
        "#k2": "status",
    }
    recent = shop.tenant_orders(
        tenant_id="t1", region="eu", status=Status.PAID, created_at__gt=T0 + timedelta(minutes=15)
    )
    assert [o.order_id for o in recent] == ["o02", "o00"]
    everything = shop.tenant_orders.all(tenant_id="t1", region="eu")
    assert [o.status for o in everything] == sorted(statuses, key=lambda s: s.value)
    starting_p = shop.newest_tenant_orders(tenant_id="t1", region="eu", status__begins_with="P")
    assert [o.status.value[0] for o in starting_p] == ["P"] * 4
    assert starting_p.items[0].status == Status.PENDING  # desc: PENDING > PAID
    assert shop.tenant_orders.count(tenant_id="t1", region="us") == 1
    first = shop.tenant_orders.first(tenant_id="t1", region="eu", status=Status.SHIPPED)
    assert first is not None and first.order_id == "o03"


@MULTI
def test_pages_of_a_multi_attribute_query_neither_skip_nor_repeat(shop: Tenants) -> None:
    for n in range(7):
        shop.create(order(n, Status.PAID if n % 2 else Status.PENDING, minutes=n))
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        page = shop.tenant_orders(tenant_id="t1", region="eu", limit=2, cursor=cursor)
        seen += [o.order_id for o in page]
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == ["o01", "o03", "o05", "o00", "o02", "o04", "o06"]
    assert cursor_values(shop.tenant_orders(tenant_id="t1", region="eu", limit=1).cursor or "")[
        "created_at"
    ] == ["S", "2026-06-01T00:01:00.000000Z"]


@MULTI
def test_a_collection_and_unique_guards_on_a_native_index(shop: Tenants) -> None:
    shop.create(order(1, Status.PAID, minutes=1))
    shop.create(
        Invoice(
            tenant_id="t1",
            region="eu",
            invoice_id="i1",
            status=Status.PAID,
            created_at=T0,
            number="2026-0001",
        )
    )
    shop.create(order(2, Status.PENDING, minutes=2))
    paid = shop.tenant_paperwork(tenant_id="t1", region="eu", status=Status.PAID)
    assert [i.invoice_id for i in paid.all(Invoice)] == ["i1"]
    assert [o.order_id for o in paid.all(Order)] == ["o01"]
    everything = shop.tenant_paperwork(tenant_id="t1", region="eu")
    assert len(everything.all(Order)) == 2 and everything.one(Invoice) is not None


@MULTI
def test_a_shard_partition_attribute_scatters(shop: Tenants, recorder: Any) -> None:
    for n in range(12):
        shop.create(order(n, Status.PAID, minutes=n, region="eu" if n != 5 else "us"))
    with recorder.expect(*["Query"] * 4):
        page = shop.orders_everywhere(region="eu", limit=5)
    assert {p["ExpressionAttributeValues"][":k0"]["N"] for p in recorder.params("Query")} == {
        "0",
        "1",
        "2",
        "3",
    }
    assert [o.order_id for o in page] == ["o11", "o10", "o09", "o08", "o07"]
    rest = list(shop.orders_everywhere.all(region="eu"))
    assert [o.order_id for o in rest] == [f"o{n:02d}" for n in range(11, -1, -1) if n != 5]
    assert shop.orders_everywhere.count(region="eu") == 11
    by_total = [o.total for o in shop.orders_by_total.all()]  # 0, 1, ..., 9, 10, 11: by value
    assert by_total == sorted(by_total) and by_total[-3:] == [9, 10, 11]
    with pytest.raises(PatternArgumentError, match="shard"):
        shop.orders_everywhere(region="eu", shard=1)


@MULTI
def test_a_table_key_attribute_in_a_native_key_takes_its_template_fields(shop: Tenants) -> None:
    for round_, match_id in [(1, "m1"), (2, "m2"), (2, "m3"), (2, "m4"), (3, "m5")]:
        shop.create(Match(tournament_id="cup", region="eu", round=round_, match_id=match_id))
    second = shop.matches(tournament_id="cup", region="eu", round=2)
    assert [m.match_id for m in second] == ["m2", "m3", "m4"]
    later = shop.matches(tournament_id="cup", region="eu", round=2, match_id__gt="m2")
    assert [m.match_id for m in later] == ["m3", "m4"]
    exact = shop.matches(tournament_id="cup", region="eu", round=2, match_id="m3")
    assert [m.match_id for m in exact] == ["m3"]


# -- what a call may ask (no backend) ---------------------------------------------------------


def test_keyword_mistakes_name_the_keyword_and_what_it_needs_first() -> None:
    repo = Tenants(client=None)
    with pytest.raises(PatternArgumentError, match=r"needs region="):
        repo.tenant_orders.params(tenant_id="t1")
    with pytest.raises(PatternArgumentError, match=r"created_at__gte needs status= first") as e:
        repo.tenant_orders.params(tenant_id="t1", region="eu", created_at__gte=T0)
    assert e.value.key == "created_at__gte"
    with pytest.raises(
        PatternArgumentError, match=r"created_at needs status= first, not the range"
    ):
        repo.tenant_orders.params(
            tenant_id="t1", region="eu", status__gte=Status.PAID, created_at=T0
        )
    with pytest.raises(PatternArgumentError, match=r"total"):
        repo.tenant_orders.params(tenant_id="t1", region="eu", total=3)  # not a key field
    with pytest.raises(PatternArgumentError, match=r"total__begins_with"):
        Arena(client=None).purchases_by_total.params(customer_id="c", total__begins_with="1")
    with pytest.raises(KeyTemplateError, match=r"region"):
        repo.tenant_orders.params(tenant_id="t1", region="mars")  # not a Literal value


def test_declarations_are_checked_when_the_classes_are_created() -> None:
    for pk, sk in [("A", ("b",)), (("a",), "B"), ((), None), (("a",) * 2, None)]:
        with pytest.raises(ModelDefinitionError):
            Table("T", indexes=[GSI("X", pk=pk, sk=sk)])  # type: ignore[arg-type]
    with pytest.raises(ModelDefinitionError, match="1 to 4"):
        Table("T", indexes=[GSI("X", pk=("a", "b", "c", "d", "e"))])
    with pytest.raises(ModelDefinitionError, match="writes itself"):
        Table("T", indexes=[GSI("X", pk=("_type",))])
    table = Table("T", indexes=[GSI("ByColour", pk=("colour",), sk=("size",))])

    with pytest.raises(ModelDefinitionError, match=r"Shirt\.size.*cannot key"):

        class Shirt(Entity, table=table):
            shirt_id: str
            colour: str
            size: float

            class Keys:
                pk = "SHIRT#{shirt_id}"
                sk = "SHIRT"

    with pytest.raises(ModelDefinitionError, match=r"Sock\.colour.*cannot key"):

        class Sock(Entity, table=table):
            sock_id: str
            colour: bool

            class Keys:
                pk = "SOCK#{sock_id}"
                sk = "SOCK"

    with pytest.raises(ModelDefinitionError, match="remove ByColour"):

        class Hat(Entity, table=table):
            hat_id: str
            colour: str
            size: int

            class Keys:
                pk = "HAT#{hat_id}"
                sk = "HAT"
                ByColour = ("{colour}", "{size}")

    class Scarf(Entity, table=table):
        scarf_id: str
        colour: str
        size: int

        class Keys:
            pk = "SCARF#{scarf_id}"
            sk = "SCARF"

    with pytest.raises(ModelDefinitionError, match=r"Glove\.size.*as S.*Scarf\.size.*as N"):

        class Glove(Entity, table=table):
            glove_id: str
            colour: str
            size: str

            class Keys:
                pk = "GLOVE#{glove_id}"
                sk = "GLOVE"

    class Belt(Entity, table=table):  # no size: not in the index
        belt_id: str
        colour: str

        class Keys:
            pk = "BELT#{belt_id}"
            sk = "BELT"

    with pytest.raises(ModelDefinitionError, match=r"Belt is not in native index.*size"):

        class Closet(Repository, table=table):
            belts = query(Belt, index="ByColour")

    with pytest.raises(ModelDefinitionError, match=r"Belt is not in native index"):

        class Drawer(Repository, table=table):
            both = collection(Scarf, Belt, index="ByColour")


def test_the_table_schema_types_and_orders_the_native_attributes() -> None:
    params = tenants.create_table_params()
    types = {d["AttributeName"]: d["AttributeType"] for d in params["AttributeDefinitions"]}
    assert types == {
        "PK": "S",
        "SK": "S",
        "tenant_id": "S",
        "region": "S",
        "status": "S",
        "created_at": "S",
        "shard": "N",
        "total": "N",
        "tournament_id": "S",
        "round": "N",
    }
    by_name = {g["IndexName"]: g["KeySchema"] for g in params["GlobalSecondaryIndexes"]}
    assert by_name["ByTenant"] == [
        {"AttributeName": "tenant_id", "KeyType": "HASH"},
        {"AttributeName": "region", "KeyType": "HASH"},
        {"AttributeName": "status", "KeyType": "RANGE"},
        {"AttributeName": "created_at", "KeyType": "RANGE"},
    ]
    arena_types = {
        d["AttributeName"]: d["AttributeType"]
        for d in arena.create_table_params()["AttributeDefinitions"]
    }
    assert arena_types["total"] == "N" and arena_types["code"] == "B"
    resource = tenants.cloudformation()["Properties"]
    assert resource["AttributeDefinitions"] == params["AttributeDefinitions"]
    assert resource["GlobalSecondaryIndexes"] == params["GlobalSecondaryIndexes"]
    lonely = Table("Lonely", indexes=[GSI("X", pk=("nobody",))])
    with pytest.raises(ModelDefinitionError, match="no entity declares a field for 'nobody'"):
        lonely.create_table_params()


def test_nothing_is_derived_for_a_native_index() -> None:
    item = order(1, Status.PAID, minutes=1).to_item()
    assert set(item) == {
        "_type",
        "PK",
        "SK",
        "tenant_id",
        "region",
        "order_id",
        "status",
        "created_at",
        "total",
        "shard",
    }
    assert item["shard"]["N"] in {"0", "1", "2", "3"}
    assert Game(game_id="g", creator="a").to_item().keys() == {
        "_type",
        "PK",
        "SK",
        "game_id",
        "creator",
        "version",
    }


@MULTI
def test_a_filter_on_a_native_key_attribute_is_refused_naming_it(
    shop: Tenants, recorder: Any
) -> None:
    """DynamoDB refuses a filter on any key attribute of the queried index: on a native index
    that is every attribute of its partition and sort tuples."""
    recorder.clear()
    for attribute in ("region", "status", "created_at"):
        with pytest.raises(InvalidRequestError) as caught:
            shop.tenant_orders(tenant_id="t1", region="eu", where=Attr(attribute).exists())
        assert caught.value.key == attribute
        assert f"the filter reads {attribute}, a key attribute of ByTenant" in caught.value.message
        assert "tenant_id, region" in caught.value.message  # the keywords that narrow it
    assert recorder.operations == []
    shop.tenant_orders(tenant_id="t1", region="eu", where=Attr("total").exists())
    assert recorder.operations == ["Query"]  # a filter on another attribute is sent
