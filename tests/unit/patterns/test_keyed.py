"""Snapshots of the compiled requests (``.params()``) for every pattern shape: no I/O, values
only in placeholders, nothing literal inside the expressions."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from singletable import Attr, Repository, collection, get, query
from singletable._keys import SENTINEL
from singletable.errors import (
    InvalidRequestError,
    KeyTemplateError,
    ModelDefinitionError,
    PatternArgumentError,
    SingleTableError,
)
from tests.models import (
    Customer,
    Leaderboard,
    Match,
    Order,
    OrderDetails,
    OrderLine,
    Shop,
    Status,
    game,
    shop,
)

T0 = datetime(2026, 6, 1, 10, 0, tzinfo=timezone.utc)
T0_TEXT = "2026-06-01T10:00:00.000000Z"


@pytest.fixture
def repo() -> Shop:
    return Shop(client=None)  # compiling sends nothing, so no client is needed


def assert_placeholders_only(params: dict[str, Any]) -> None:
    """Expressions hold only placeholders, operators and functions: no names, no values."""
    for key in ("KeyConditionExpression", "FilterExpression", "ConditionExpression"):
        text = params.get(key, "")
        stripped = re.sub(r"[#:][A-Za-z0-9_]+", "", text)
        stripped = re.sub(
            r"\b(AND|OR|NOT|BETWEEN|IN|begins_with|attribute_\w+|contains)\b", "", stripped
        )
        assert re.fullmatch(r"[\s()=<>,.\[\]0-9]*", stripped), (key, text)
    for placeholder in params.get("ExpressionAttributeValues", {}):
        assert placeholder.startswith(":")
    for placeholder in params.get("ExpressionAttributeNames", {}):
        assert placeholder.startswith("#")


def test_get(repo: Shop) -> None:
    assert repo.customer.params(customer_id="42") == {
        "TableName": "Shop",
        "Key": {"PK": {"S": "CUSTOMER#42"}, "SK": {"S": "PROFILE"}},
    }


def test_get_consistent_and_table_name_override() -> None:
    class Consistent(Repository, table=shop):
        customer = get(Customer, consistent=True)

    params = Consistent(client=None, table_name="Shop-dev").customer.params(customer_id="42")
    assert params == {
        "TableName": "Shop-dev",
        "Key": {"PK": {"S": "CUSTOMER#42"}, "SK": {"S": "PROFILE"}},
        "ConsistentRead": True,
    }


def test_query_prefix_desc(repo: Shop) -> None:
    params = repo.customer_orders.params(customer_id="42")
    assert params == {
        "TableName": "Shop",
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :sk)",
        "ExpressionAttributeNames": {"#pk": "PK", "#sk": "SK"},
        "ExpressionAttributeValues": {":pk": {"S": "CUSTOMER#42"}, ":sk": {"S": "ORDER#"}},
        "ScanIndexForward": False,
        "Limit": 101,
    }
    assert_placeholders_only(params)


def test_query_limit_asks_one_more(repo: Shop) -> None:
    assert repo.customer_orders.params(customer_id="42", limit=10)["Limit"] == 11
    assert Shop(client=None, default_limit=7).customer_orders.params(customer_id="1")["Limit"] == 8


def test_query_leading_sort_fields_narrow_prefix(repo: Shop) -> None:
    params = repo.orders_oldest_first.params(customer_id="42", created_at=T0)
    assert params["ExpressionAttributeValues"][":sk"] == {"S": f"ORDER#{T0_TEXT}#"}
    full = repo.orders_oldest_first.params(customer_id="42", created_at=T0, order_id="A1")
    assert full["KeyConditionExpression"] == "#pk = :pk AND #sk = :sk"
    assert full["ExpressionAttributeValues"][":sk"] == {"S": f"ORDER#{T0_TEXT}#A1"}


def test_query_between_stays_inside_prefix(repo: Shop) -> None:
    t1 = datetime(2026, 6, 30, tzinfo=timezone.utc)
    params = repo.orders_oldest_first.params(customer_id="42", created_at__between=(T0, t1))
    assert params["KeyConditionExpression"] == "#pk = :pk AND #sk BETWEEN :sk AND :sk1"
    assert params["ExpressionAttributeValues"][":sk"] == {"S": f"ORDER#{T0_TEXT}"}
    assert params["ExpressionAttributeValues"][":sk1"] == {
        "S": f"ORDER#2026-06-30T00:00:00.000000Z#{SENTINEL}"
    }
    assert_placeholders_only(params)


def test_query_gt_excludes_equal_items_with_more_segments(repo: Shop) -> None:
    params = repo.orders_oldest_first.params(customer_id="42", created_at__gt=T0)
    values = params["ExpressionAttributeValues"]
    assert values[":sk"] == {"S": f"ORDER#{T0_TEXT}#{SENTINEL}"}
    assert values[":sk1"] == {"S": f"ORDER#{SENTINEL}"}


def test_query_string_datetime_is_coerced(repo: Shop) -> None:
    params = repo.orders_oldest_first.params(
        customer_id="42", created_at="2026-06-01T12:00:00+02:00"
    )
    assert params["ExpressionAttributeValues"][":sk"] == {"S": f"ORDER#{T0_TEXT}#"}


def test_query_on_gsi(repo: Shop) -> None:
    params = repo.orders_by_status.params(status=Status.SHIPPED, limit=5)
    assert params == {
        "TableName": "Shop",
        "IndexName": "GSI1",
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :sk)",
        "ExpressionAttributeNames": {"#pk": "GSI1PK", "#sk": "GSI1SK"},
        "ExpressionAttributeValues": {
            ":pk": {"S": "STATUS#SHIPPED"},
            ":sk": {"S": "ORDER#"},
        },
        "Limit": 6,
    }


def test_sparse_index_with_empty_literal_has_no_sort_condition(repo: Shop) -> None:
    params = repo.pending_orders.params()
    assert params["KeyConditionExpression"] == "#pk = :pk"
    assert params["ExpressionAttributeNames"] == {"#pk": "GSI2PK"}
    assert params["ExpressionAttributeValues"] == {":pk": {"S": "PENDING"}}
    after = repo.pending_orders.params(created_at__gte=T0)
    # No literal prefix: the bound is closed by the latest datetime the segment can render.
    assert after["KeyConditionExpression"] == "#pk = :pk AND #sk BETWEEN :sk AND :sk1"
    assert after["ExpressionAttributeValues"][":sk"] == {"S": T0_TEXT}
    assert after["ExpressionAttributeValues"][":sk1"] == {
        "S": f"9999-12-31T23:59:59.999999Z#{SENTINEL}"
    }


def test_one_asks_two(repo: Shop) -> None:
    params = repo.customer_by_email.params(email="ann@example.com")
    assert params["Limit"] == 2
    assert params["ExpressionAttributeValues"][":pk"] == {"S": "EMAIL#ann@example.com"}


def test_filter_param_uses_placeholders(repo: Shop) -> None:
    params = repo.big_orders.params(customer_id="42", min_total=Decimal("12.5"))
    assert params["FilterExpression"] == "#fn0 >= :fv0"
    assert params["ExpressionAttributeNames"]["#fn0"] == "total"
    assert params["ExpressionAttributeValues"][":fv0"] == {"N": "12.5"}
    assert_placeholders_only(params)


def test_reserved_word_filter_is_aliased() -> None:
    params = Leaderboard(client=None).wins.params(player_id="p1")
    assert params["FilterExpression"] == "#fn0 = :fv0"
    assert params["ExpressionAttributeNames"]["#fn0"] == "result"
    assert params["ExpressionAttributeValues"][":fv0"] == {"S": "win"}


def test_custom_key_attribute_names() -> None:
    params = Leaderboard(client=None).season_top.params(season="2026-Q2", rating__gte=950)
    assert params["ExpressionAttributeNames"] == {"#pk": "gsiPartition", "#sk": "gsiSort"}
    assert params["ExpressionAttributeValues"][":sk"] == {"S": "RATING#00950"}
    assert params["ScanIndexForward"] is False


def test_collection(repo: Shop) -> None:
    assert repo.order_with_lines.params(order_id="O1") == {
        "TableName": "Shop",
        "KeyConditionExpression": "#pk = :pk",
        "ExpressionAttributeNames": {"#pk": "PK"},
        "ExpressionAttributeValues": {":pk": {"S": "ORDER#O1"}},
        "Limit": 101,
    }


def test_keys_only_pattern(repo: Shop) -> None:
    params = repo.order_refs.params(order_id="A1")
    assert params["IndexName"] == "GSI3"
    assert params["ExpressionAttributeValues"] == {
        ":pk": {"S": "ORDERID#A1"},
        ":sk": {"S": "ORDER"},
    }
    assert params["KeyConditionExpression"] == "#pk = :pk AND #sk = :sk"


def test_hooks_add_consumed_capacity() -> None:
    repo = Shop(client=None, hooks=[lambda info: None])
    assert repo.customer.params(customer_id="1")["ReturnConsumedCapacity"] == "TOTAL"


@pytest.mark.parametrize(
    ("call", "culprit"),
    [
        (lambda r: r.customer_orders.params(), "customer_id"),
        (lambda r: r.customer_orders.params(customer_id="1", order_id="A1"), "order_id"),
        (lambda r: r.customer_orders.params(customer_id="1#2"), "customer_id"),
        (lambda r: r.customer_orders.params(customer_id=""), "customer_id"),
        (lambda r: r.customer_orders.params(customer_id="1", order_id__gt="A"), "order_id"),
        (
            lambda r: r.customer_orders.params(
                customer_id="1", created_at__gt=T0, created_at__lt=T0
            ),
            "created_at",
        ),
        (
            lambda r: r.customer_orders.params(
                customer_id="1", created_at__between=(datetime(2027, 1, 1, tzinfo=timezone.utc), T0)
            ),
            "created_at",
        ),
        (
            lambda r: r.customer_orders.params(customer_id="1", created_at=datetime(2026, 1, 1)),
            "created_at",
        ),
        (lambda r: r.customer.params(), "customer_id"),
    ],
)
def test_bad_call_keywords_name_the_culprit(repo: Shop, call: Any, culprit: str) -> None:
    with pytest.raises(KeyTemplateError, match=culprit):
        call(repo)


def test_definition_errors_at_repository_creation() -> None:
    with pytest.raises(ModelDefinitionError, match="GSI1"):

        class ConsistentGsi(Repository, table=shop):
            by_status = query(Order, index="GSI1", consistent=True)

    with pytest.raises(ModelDefinitionError, match="GSI2"):

        class NotPopulated(Repository, table=shop):
            lines = query(OrderLine, index="GSI2")

    with pytest.raises(ModelDefinitionError, match="GSI3"):

        class FullFromKeysOnly(Repository, table=shop):
            orders = query(Order, index="GSI3")

    with pytest.raises(ModelDefinitionError, match="partition"):

        class Unshared(Repository, table=shop):
            mixed = collection(Customer, OrderDetails)

    with pytest.raises(ModelDefinitionError, match="Match"):

        class OtherTable(Repository, table=shop):
            matches = query(Match)

    with pytest.raises(ModelDefinitionError, match="needs a table"):

        class NoTable(Repository):
            pass

    assert game.name == "Game"


def test_declared_signature_is_checked() -> None:
    from singletable import Page

    class Declared(Repository, table=shop):
        @query(Order, order="desc")
        def orders(self, *, customer_id: str, limit: int | None = None) -> Page[Order]: ...

    params = Declared(client=None).orders.params(customer_id="42", limit=3)
    assert params["Limit"] == 4 and params["ScanIndexForward"] is False

    with pytest.raises(ModelDefinitionError, match="customer_idd"):

        class Misspelt(Repository, table=shop):
            @query(Order)
            def orders(self, *, customer_idd: str) -> Page[Order]: ...

    with pytest.raises(ModelDefinitionError, match="customer_id"):

        class Missing(Repository, table=shop):
            @query(Order)
            def orders(self, *, limit: int | None = None) -> Page[Order]: ...


def test_where_condition_with_literal_values_is_placeholdered() -> None:
    class Filtered(Repository, table=shop):
        odd = query(
            Order,
            where=(Attr("status").is_in(Status.PENDING, Status.SHIPPED) & Attr("total").gt(5))
            | ~Attr("customer_name").begins_with("Z"),
        )

    params = Filtered(client=None).odd.params(customer_id="1")
    assert_placeholders_only(params)
    values = [v for k, v in params["ExpressionAttributeValues"].items() if k.startswith(":fv")]
    assert values == [{"S": "PENDING"}, {"S": "SHIPPED"}, {"N": "5"}, {"S": "Z"}]
    assert {"status", "total", "customer_name"} <= set(params["ExpressionAttributeNames"].values())


def test_explain_rows_describe_every_pattern() -> None:
    rows = {row.pattern: row for row in Shop.explain()}
    assert rows["customer"].operation == "GetItem"
    assert rows["customer"].key_condition == "PK = CUSTOMER#{customer_id} AND SK = PROFILE"
    assert rows["orders_by_status"].index == "GSI1"
    assert rows["customer_orders"].order == "desc"
    assert "begins_with(SK, ORDER#)" in rows["customer_orders"].key_condition
    assert rows["order_with_lines"].entity_types == ("ORDER_DETAILS", "ORDER_LINE")
    assert rows["big_orders"].filter == "total >= {min_total}"
    assert rows["order_by_id"].operation == "Query+BatchGetItem"
    assert all(row.operation in ("GetItem", "Query", "Query+BatchGetItem") for row in rows.values())
    # A machine-readable request count: one per request a call (a page) sends.
    assert (rows["customer"].requests, rows["customer_orders"].requests) == (1, 1)
    assert rows["order_by_id"].requests == 2
    assert rows["order_by_id"].as_dict()["requests"] == 2


def test_explain_counts_the_requests_of_an_operation() -> None:
    from singletable import ExplainRow
    from singletable._patterns.base import requests_of

    assert [requests_of(op) for op in ("GetItem", "Query", "Scan")] == [1, 1, 1]
    assert requests_of("Query+BatchGetItem") == 2
    assert requests_of("Query x15") == 15
    assert ExplainRow("p", "Query x3", None, "", ("A",), "asc").requests == 3
    assert (
        ExplainRow("p", "Query+UpdateItem", None, "", ("A",), "asc", requests=None).requests is None
    )


def test_inverted_index_is_derived_and_conflicting_templates_refused() -> None:
    from singletable import GSI, Entity, Table

    table = Table("Edges", indexes=[GSI("Inverted", pk="SK", sk="PK")])

    class Edge(Entity, table=table, type="EDGE"):
        a: str
        b: str

        class Keys:
            pk = "A#{a}"
            sk = "B#{b}"

    class Edges(Repository, table=table):
        by_b = query(Edge, index="Inverted")

    assert Edge(a="1", b="2").to_item() == {
        "_type": {"S": "EDGE"},
        "PK": {"S": "A#1"},
        "SK": {"S": "B#2"},
        "a": {"S": "1"},
        "b": {"S": "2"},
    }
    params = Edges(client=None).by_b.params(b="2")
    assert params["ExpressionAttributeNames"] == {"#pk": "SK", "#sk": "PK"}
    assert params["ExpressionAttributeValues"] == {":pk": {"S": "B#2"}, ":sk": {"S": "A#"}}

    with pytest.raises(ModelDefinitionError, match="'SK'"):

        class Wrong(Entity, table=table, type="WRONG"):
            a: str
            b: str

            class Keys:
                pk = "A#{a}"
                sk = "B#{b}"
                Inverted = ("X#{b}", "Y#{a}")


def test_strftime_sort_key_with_a_gap_is_refused() -> None:
    from singletable._keys import KeyTemplate
    from singletable.errors import KeyDefinitionError

    with pytest.raises(KeyDefinitionError, match="%Y-%d"):
        KeyTemplate("AT#{at:%Y-%d}", {"at": datetime}, sort_key=True)
    KeyTemplate("AT#{at:%Y-%m}", {"at": datetime}, sort_key=True)


def test_parse_key_gives_the_primary_key_fields_back() -> None:
    item = Order(
        customer_id="42",
        order_id="A1",
        created_at=T0,
        status=Status.PENDING,
        total=Decimal(1),
        customer_name="x",
    ).to_item()
    assert Order.parse_key(item) == {"customer_id": "42", "created_at": T0, "order_id": "A1"}
    assert Order.parse_key({"PK": "CUSTOMER#42", "SK": f"ORDER#{T0_TEXT}#A1"})["order_id"] == "A1"
    with pytest.raises(KeyTemplateError):
        Order.parse_key({"PK": "CUSTOMER#42", "SK": "PROFILE"})


def test_items_from_before_a_field_existed_still_decode() -> None:
    from singletable import Entity, Table
    from singletable.errors import ItemDecodeError

    table = Table("Evolving")

    class Account(Entity, table=table):
        account_id: str
        currency: str = "EUR"  # added after the first items were written

        class Keys:
            pk = "ACCOUNT#{account_id}"
            sk = "ACCOUNT"

    old = {
        "_type": {"S": "Account"},
        "PK": {"S": "ACCOUNT#1"},
        "SK": {"S": "ACCOUNT"},
        "account_id": {"S": "1"},
    }
    assert Account.from_item(old) == Account(account_id="1")
    broken = {k: v for k, v in old.items() if k != "account_id"}
    with pytest.raises(ItemDecodeError, match="account_id"):
        Account.from_item(broken)


def test_collection_narrows_to_the_common_sort_key_literal() -> None:
    from singletable import Entity, Table

    table = Table("Threads")

    class Post(Entity, table=table, type="POST"):
        thread_id: str
        post_id: str

        class Keys:
            pk = "THREAD#{thread_id}"
            sk = "MSG#POST#{post_id}"

    class Reply(Entity, table=table, type="REPLY"):
        thread_id: str
        reply_id: str

        class Keys:
            pk = "THREAD#{thread_id}"
            sk = "MSG#REPLY#{reply_id}"

    class Threads(Repository, table=table):
        messages = collection(Post, Reply)

    params = Threads(client=None).messages.params(thread_id="t1")
    assert params["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :sk)"
    assert params["ExpressionAttributeValues"][":sk"] == {"S": "MSG#"}
    assert Threads.table is table


# -- unknown call keywords: pattern-argument ---------------------------------------------------


@pytest.mark.parametrize(
    ("call", "keyword"),
    [
        (lambda r: r.customer.params(customer_id="1", colour="red"), "colour"),
        (lambda r: r.customer.params(custmer_id="1"), "custmer_id"),  # and customer_id missing
        (lambda r: r.customer.params(customer_id="1", where=Attr("name").eq("x")), "where"),
        (lambda r: r.customer.params(customer_id__gt="1"), "customer_id__gt"),
        (lambda r: r.customer_orders.params(customer_id="1", colour="red"), "colour"),
        (lambda r: r.customer_orders.params(customer_id="1", limt=5), "limt"),
        (lambda r: r.customer_orders.params(custmer_id="1"), "custmer_id"),
        (lambda r: r.customer_orders.params(customer_id__gt="1"), "customer_id__gt"),
        (
            lambda r: r.customer_orders.params(customer_id="1", created_at__gtt=T0),
            "created_at__gtt",
        ),
        (lambda r: r.customer_orders.params(customer_id="1", total__gt=5), "total__gt"),
        (lambda r: r.customer_orders.params(customer_id="1", order="asc"), "order"),
        (lambda r: r.customer_by_email.params(emial="a@b.c"), "emial"),
        (lambda r: r.order_refs.params(order_id="A1", limits=3), "limits"),
        (lambda r: r.order_by_id.params(order_id="A1", hydrate=False), "hydrate"),
        (lambda r: r.customer_home.params(customer_id="1", order_id="A1"), "order_id"),
        (lambda r: r.customer_home.params(customer_id="1", created_at__gte=T0), "created_at__gte"),
        (lambda r: r.big_orders.params(customer_id="1", min_totl=3), "min_totl"),  # min_total too
        (lambda r: r.customer_orders.first(customer_id="1", colour="red"), "colour"),
        (lambda r: r.customer_orders.count(customer_id="1", colour="red"), "colour"),
        (lambda r: next(r.customer_orders.pages(customer_id="1", colour="red")), "colour"),
        (lambda r: next(r.customer_orders.all(customer_id="1", colour="red")), "colour"),
        (lambda r: r.customer_orders(customer_id="1", colour="red"), "colour"),
        (lambda r: r.customer_by_email(email="a@b.c", colour="red"), "colour"),
        (lambda r: r.customer_home(customer_id="1", colour="red"), "colour"),
        (lambda r: r.customer_home.all(customer_id="1", colour="red"), "colour"),
        (lambda r: r.customer(customer_id="1", colour="red"), "colour"),
    ],
)
def test_an_unknown_keyword_is_a_pattern_argument_error(
    repo: Shop, call: Any, keyword: str
) -> None:
    # No client: the error comes before anything could be sent.
    with pytest.raises(PatternArgumentError) as excinfo:
        call(repo)
    err = excinfo.value
    assert isinstance(err, InvalidRequestError) and isinstance(err, TypeError)
    assert err.code == "pattern-argument" and err.key == keyword
    assert f"{keyword!r}" in err.message and err.pattern in err.message
    assert err.accepted and "; it accepts " + ", ".join(err.accepted) in err.message


def test_pattern_argument_message_names_pattern_keyword_and_accepted(repo: Shop) -> None:
    with pytest.raises(PatternArgumentError) as excinfo:
        repo.customer_orders.params(customer_id="1", limt=5)
    err = excinfo.value
    assert err.pattern == "customer_orders"
    assert str(err).startswith(
        "customer_orders got an unknown keyword 'limt' (did you mean 'limit'?); it accepts "
        "customer_id, created_at, created_at__gt, created_at__gte, created_at__lt, "
        "created_at__lte, created_at__between, created_at__begins_with, order_id, "
    )
    assert str(err).split(" [")[0].endswith(", limit, cursor, where")
    with pytest.raises(PatternArgumentError, match="did you mean 'customer_id'"):
        repo.customer.params(custmer_id="1")
    with pytest.raises(PatternArgumentError, match="did you mean 'min_total'"):
        repo.big_orders.params(customer_id="1", min_totl=3)
    with pytest.raises(PatternArgumentError, match="partition key") as excinfo:
        repo.customer_orders.params(customer_id__begins_with="1")
    with pytest.raises(PatternArgumentError, match="unknown keywords 'colour', 'size'"):
        repo.customer_orders.params(customer_id="1", size=2, colour="red")
    with pytest.raises(PatternArgumentError) as excinfo:
        repo.customer_orders.params(customer_id="1", zzz=1)
    assert "did you mean" not in str(excinfo.value)  # no near miss, no suggestion


def test_numbers_take_comparisons_but_no_begins_with() -> None:
    from singletable import Entity, Table

    table = Table("Scores")

    class Score(Entity, table=table, type="SCORE"):
        game: str
        points: int
        ratio: Decimal
        level: int
        player: str

        class Keys:
            pk = "GAME#{game}"
            sk = "P#{points:sortable}#R#{ratio:sortable}#L#{level:04d}#{player}"

    class Scores(Repository, table=table):
        scores = query(Score)

    repo = Scores(client=None)
    for field in ("points", "ratio", "level"):
        with pytest.raises(PatternArgumentError, match=f"{field} is a number") as excinfo:
            repo.scores.params(game="g", **{f"{field}__begins_with": "1"})
        assert f"{field}__begins_with" not in excinfo.value.accepted
        assert f"{field}__gte" in excinfo.value.accepted  # fixed width: exact comparisons
    accepted = Scores.scores.accepted
    assert "player__begins_with" in accepted and "player__between" in accepted
    assert repo.scores.params(game="g", points__gte=10)["KeyConditionExpression"].endswith(
        "BETWEEN :sk AND :sk1"
    )
    values = repo.scores.params(game="g", points=1, ratio=2, level=3, player__begins_with="an")
    assert values["ExpressionAttributeValues"][":sk"]["S"].endswith("#L#0003#an")


def test_a_known_lookup_refused_in_its_position_stays_a_key_template_error() -> None:
    """DESIGN: a range lookup on a variable-width segment followed by more segments is a
    KeyTemplateError; it exists for the field, so it is not an unknown keyword."""
    from singletable import Entity, Table

    for key_values in ("refuse", "escape"):
        table = Table("Teams", key_values=key_values)  # type: ignore[arg-type]

        class Member(Entity, table=table, type="MEMBER"):
            org: str
            team: str
            user: str

            class Keys:
                pk = "ORG#{org}"
                sk = "TEAM#{team}#USER#{user}"

        class Teams(Repository, table=table):
            members = query(Member)

        repo = Teams(client=None)
        with pytest.raises(KeyTemplateError, match="team") as excinfo:
            repo.members.params(org="o", team__gt="a")
        assert not isinstance(excinfo.value, PatternArgumentError)
        # ... and the accepted list only offers what is exact there
        assert "team__begins_with" in Teams.members.accepted
        assert "team__gt" not in Teams.members.accepted
        assert ("user__gt" in Teams.members.accepted) is (key_values == "refuse")
        assert repo.members.params(org="o", team__begins_with="a")["KeyConditionExpression"] == (
            "#pk = :pk AND begins_with(#sk, :sk)"
        )
    # a lookup on a field that is not next is refused as before (known, misplaced)
    with pytest.raises(KeyTemplateError, match="order_id") as excinfo:
        Shop(client=None).customer_orders.params(customer_id="1", order_id__gt="A")
    assert not isinstance(excinfo.value, PatternArgumentError)


def test_unknown_keyword_is_reported_before_a_missing_one(repo: Shop) -> None:
    with pytest.raises(PatternArgumentError, match="did you mean 'season'"):
        Leaderboard(client=None).season_top.params(seasn="s1")
    # a missing field alone is still a key-template error
    with pytest.raises(KeyTemplateError) as excinfo:
        repo.customer_orders.params()
    assert not isinstance(excinfo.value, PatternArgumentError)
    with pytest.raises(KeyTemplateError) as excinfo:
        repo.customer.params()
    assert not isinstance(excinfo.value, PatternArgumentError)


def test_declared_signature_refuses_unknown_keywords_as_pattern_arguments() -> None:
    from singletable import Page

    class Declared(Repository, table=shop):
        @query(Order, order="desc")
        def orders(self, *, customer_id: str, limit: int | None = None) -> Page[Order]: ...

        @get(Customer)
        def customer(self, customer_id: str) -> Customer | None: ...

    repo = Declared(client=None)
    calls: list[Any] = [
        lambda: repo.orders(customer_id="1", limt=3),
        lambda: repo.orders.params(customer_id="1", limt=3),
        lambda: repo.orders.first(customer_id="1", limt=3),
        lambda: repo.orders.count(customer_id="1", limt=3),
        lambda: repo.orders.pages(customer_id="1", limt=3),
        lambda: repo.orders.all(customer_id="1", limt=3),
    ]
    for call in calls:
        with pytest.raises(PatternArgumentError, match="did you mean 'limit'") as excinfo:
            call()
        assert excinfo.value.key == "limt" and excinfo.value.accepted == ("customer_id", "limit")
    with pytest.raises(PatternArgumentError, match="customer_id") as excinfo:
        repo.customer.params(custmer_id="1")
    assert excinfo.value.key == "custmer_id"
    # other binding errors name the pattern too, and stay TypeErrors
    # (Python words the binding error itself, differently across versions: only ours is checked)
    with pytest.raises(TypeError, match=r"^orders: .*'customer_id'.*; it accepts customer_id"):
        repo.orders.params()
    with pytest.raises(PatternArgumentError, match=r"^customer: .*; it accepts customer_id \["):
        repo.customer.params("1", "2")
    assert repo.customer.params("42")["Key"]["PK"] == {"S": "CUSTOMER#42"}


@settings(max_examples=150, deadline=2000)
@given(
    name=st.one_of(
        st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True),
        st.builds(
            "{}__{}".format,
            st.sampled_from(["customer_id", "created_at", "order_id", "total", "min_total"]),
            st.sampled_from(["gt", "gte", "lt", "lte", "between", "begins_with", "eq", "in"]),
        ),
    )
)
def test_every_keyword_is_either_understood_or_a_pattern_argument_error(name: str) -> None:
    """Property: a keyword the pattern does not know is always refused as pattern-argument,
    one it knows never is (it may still fail for its value or position)."""
    repo = Shop(client=None)
    known = Shop.big_orders.keywords()[1]
    kwargs = {"customer_id": "1", "min_total": 1, name: "x"}
    try:
        repo.big_orders.params(**kwargs)
    except PatternArgumentError as err:
        assert name not in known and err.key == name
    except SingleTableError:
        assert name in known
    else:
        assert name in known
