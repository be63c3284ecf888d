"""Models for the lint rules: for each rule one repository that triggers it and one that does
not. Each rule's models live on their own table, so one rule's test sees no other rule's
entities. ``CleanRepo`` has no finding at all."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, Literal

from singletable import (
    GSI,
    Attr,
    Entity,
    ExplainRow,
    Index,
    Param,
    Repository,
    Shard,
    Table,
    collection,
    get,
    query,
)
from singletable._entity import spec_of
from singletable._keys import KeyTemplate
from singletable._patterns.declare import Pattern, QueryPattern

# -- a clean model: no findings ------------------------------------------------------------------

clean = Table("Clean", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Account(Entity, table=clean, type="ACCOUNT"):
    account_id: str
    email: str
    name: str

    class Keys:
        pk = "ACCOUNT#{account_id}"
        sk = "#PROFILE"
        GSI1 = ("EMAIL#{email}", "ACCOUNT#{account_id}")


class Invoice(Entity, table=clean, type="INVOICE"):
    account_id: str
    invoice_id: str
    issued_at: datetime
    total: Decimal

    class Keys:
        pk = "ACCOUNT#{account_id}"
        sk = "INVOICE#{issued_at}#{invoice_id}"


class CleanRepo(Repository, table=clean):
    account = get(Account)
    account_by_email = query(Account, index="GSI1", one=True)
    invoices = query(Invoice, order="desc")
    account_home = collection(Account, Invoice)


# -- hot-partition ------------------------------------------------------------------------------

hot = Table("Hot", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Priority(str, Enum):
    LOW = "LOW"
    HIGH = "HIGH"


class Job(Entity, table=hot, type="JOB"):
    """Every job in one partition: the queue is a hot partition."""

    job_id: str
    created_at: datetime

    class Keys:
        pk = "QUEUE"
        sk = "JOB#{created_at}#{job_id}"


class Ticket(Entity, table=hot, type="TICKET"):
    """A partition per enum value (two partitions) on GSI1."""

    ticket_id: str
    priority: Priority

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "#TICKET"
        GSI1 = ("PRIORITY#{priority}", "TICKET#{ticket_id}")


class Shipment(Entity, table=hot, type="SHIPMENT"):
    """A Literal-valued partition key: two partitions."""

    shipment_id: str
    region: Literal["eu", "us"]
    state: Priority

    class Keys:
        pk = "REGION#{region}"
        sk = "SHIPMENT#{shipment_id}"


class HotRepo(Repository, table=hot):
    jobs = query(Job)
    tickets_by_priority = query(Ticket, index="GSI1")
    shipments = query(Shipment)


class HotAcknowledged(HotRepo):
    lint_acknowledge = {
        "hot-partition:Job": "a small work queue, deliberate",
        "hot-partition:Ticket.GSI1": "two priorities are read together anyway",
        "hot-partition:Shipment": "two regions, low volume",
    }


cool = Table("Cool")


class CoolJob(Entity, table=cool, type="JOB"):
    job_id: str
    created_at: datetime

    class Keys:
        pk = "JOB#{job_id}"
        sk = "#JOB"


class CoolRepo(Repository, table=cool):
    job = get(CoolJob)


# -- key-collision ------------------------------------------------------------------------------

colliding = Table("Colliding")


class CartItem(Entity, table=colliding, type="CART_ITEM"):
    user_id: str
    item_id: str

    class Keys:
        pk = "USER#{user_id}"
        sk = "ITEM#{item_id}"


class WishItem(Entity, table=colliding, type="WISH_ITEM"):
    user_id: str
    sku: str

    class Keys:
        pk = "USER#{user_id}"
        sk = "ITEM#{sku}"  # sku="42" and item_id="42" are the same item


class CollidingRepo(Repository, table=colliding):
    cart = query(CartItem)
    wishes = query(WishItem)


colliding_twice = Table("CollidingTwice", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Basket(Entity, table=colliding_twice, type="BASKET"):
    user_id: str
    item_id: str

    class Keys:
        pk = "USER#{user_id}"
        sk = "ITEM#{item_id}"
        GSI1 = ("ITEM#{item_id}", "#USER#{user_id}")


class Wish(Entity, table=colliding_twice, type="WISH"):
    user_id: str
    sku: str

    class Keys:
        pk = "USER#{user_id}"
        sk = "ITEM#{sku}"
        GSI1 = ("ITEM#{sku}", "#USER#{user_id}")


class CollidingTwiceRepo(Repository, table=colliding_twice):
    """Basket and Wish collide on the table and on GSI1: two findings, A+B and A+B.GSI1."""

    basket = get(Basket)
    wish = get(Wish)
    basket_holders = query(Basket, index="GSI1")


distinct = Table("Distinct")


class Reading(Entity, table=distinct, type="READING"):
    sensor_id: str
    seq: int

    class Keys:
        pk = "SENSOR#{sensor_id}"
        sk = "V#{seq:05d}"


class DailyTotal(Entity, table=distinct, type="DAILY_TOTAL"):
    """Same prefix, but a date ('2026-06-01') never renders like five digits."""

    sensor_id: str
    day: date

    class Keys:
        pk = "SENSOR#{sensor_id}"
        sk = "V#{day}"


class DistinctRepo(Repository, table=distinct):
    reading = get(Reading)
    daily_total = get(DailyTotal)


# -- prefix-overlap -----------------------------------------------------------------------------

overlapping = Table("Overlapping")


class Post(Entity, table=overlapping, type="POST"):
    blog_id: str
    post_id: str

    class Keys:
        pk = "BLOG#{blog_id}"
        sk = "POST#{post_id}"


class PostComment(Entity, table=overlapping, type="POST_COMMENT"):
    blog_id: str
    post_id: str
    comment_id: str

    class Keys:
        pk = "BLOG#{blog_id}"
        sk = "POST#{post_id}#COMMENT#{comment_id}"  # starts like a Post's sort key


class OverlappingRepo(Repository, table=overlapping):
    posts = query(Post)
    comments = query(PostComment)


separated = Table("Separated")


class Article(Entity, table=separated, type="ARTICLE"):
    blog_id: str
    post_id: str

    class Keys:
        pk = "BLOG#{blog_id}"
        sk = "POST#{post_id}"


class ArticleComment(Entity, table=separated, type="ARTICLE_COMMENT"):
    blog_id: str
    post_id: str
    comment_id: str

    class Keys:
        pk = "BLOG#{blog_id}"
        sk = "COMMENT#{post_id}#{comment_id}"


class SeparatedRepo(Repository, table=separated):
    posts = query(Article)
    comments = query(ArticleComment)


# -- unsortable-sort-key (refused at definition time, so the bad template is swapped in) -------

scores = Table("Scores")


class Score(Entity, table=scores, type="SCORE"):
    game_id: str
    points: int

    class Keys:
        pk = "GAME#{game_id}"
        sk = "POINTS#{points:sortable}"


class ScoreRepo(Repository, table=scores):
    scores = query(Score, order="desc")


def unsortable_repository() -> type[Repository]:
    """A repository whose entity has a bare number in its sort key, which the definition-time
    check refuses: the template is replaced after the fact, as a hand-edited spec would be."""
    table = Table("Unsortable")

    class BareScore(Entity, table=table, type="BARE_SCORE"):
        game_id: str
        points: int

        class Keys:
            pk = "GAME#{game_id}"
            sk = "POINTS#{points:sortable}"

    class BareScoreRepo(Repository, table=table):
        scores = query(BareScore, order="desc")

    spec = spec_of(BareScore)
    spec.base.sk = KeyTemplate("POINTS#{points}", {"points": int}, owner="BareScore", role="sk")
    return BareScoreRepo


# -- unused-index, too-many-indexes, unread-index -----------------------------------------------

indexed = Table(
    "Indexed",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
)


class Member(Entity, table=indexed, type="MEMBER"):
    member_id: str
    email: str
    team: str

    class Keys:
        pk = "MEMBER#{member_id}"
        sk = "#MEMBER"
        GSI1 = ("EMAIL#{email}", "MEMBER#{member_id}")
        GSI2 = ("TEAM#{team}", "MEMBER#{member_id}")


class Badge(Entity, table=indexed, type="BADGE"):
    member_id: str
    badge_id: str
    kind: str

    class Keys:
        pk = "MEMBER#{member_id}"
        sk = "BADGE#{badge_id}"
        GSI1 = ("KIND#{kind}", "BADGE#{badge_id}")  # written, never read


class IndexedRepo(Repository, table=indexed):
    """GSI2 is read by nobody (unused-index); Badge's GSI1 entries are read by nobody
    (unread-index)."""

    member = get(Member)
    member_by_email = query(Member, index="GSI1", one=True)
    badges = query(Badge)


class IndexedFullRepo(Repository, table=indexed):
    member = get(Member)
    member_by_email = query(Member, index="GSI1", one=True)
    members_of_team = query(Member, index="GSI2")
    badges = query(Badge)
    badges_of_kind = query(Badge, index="GSI1")


def _gsis(count: int) -> list[GSI]:
    return [GSI(f"GSI{n}", pk=f"GSI{n}PK", sk=f"GSI{n}SK") for n in range(1, count + 1)]


six = Table("Six", indexes=_gsis(6))
five = Table("Five", indexes=_gsis(5))


class Gadget(Entity, table=six, type="GADGET"):
    gadget_id: str
    a1: str
    a2: str
    a3: str
    a4: str
    a5: str
    a6: str

    class Keys:
        pk = "GADGET#{gadget_id}"
        sk = "#GADGET"
        GSI1 = ("A1#{a1}", "GADGET#{gadget_id}")
        GSI2 = ("A2#{a2}", "GADGET#{gadget_id}")
        GSI3 = ("A3#{a3}", "GADGET#{gadget_id}")
        GSI4 = ("A4#{a4}", "GADGET#{gadget_id}")
        GSI5 = ("A5#{a5}", "GADGET#{gadget_id}")
        GSI6 = ("A6#{a6}", "GADGET#{gadget_id}")


class SixIndexRepo(Repository, table=six):
    gadget = get(Gadget)
    by_a1 = query(Gadget, index="GSI1")
    by_a2 = query(Gadget, index="GSI2")
    by_a3 = query(Gadget, index="GSI3")
    by_a4 = query(Gadget, index="GSI4")
    by_a5 = query(Gadget, index="GSI5")
    by_a6 = query(Gadget, index="GSI6")


class Widget(Entity, table=five, type="WIDGET"):
    widget_id: str
    a1: str
    a2: str
    a3: str
    a4: str
    a5: str

    class Keys:
        pk = "WIDGET#{widget_id}"
        sk = "#WIDGET"
        GSI1 = ("A1#{a1}", "WIDGET#{widget_id}")
        GSI2 = ("A2#{a2}", "WIDGET#{widget_id}")
        GSI3 = ("A3#{a3}", "WIDGET#{widget_id}")
        GSI4 = ("A4#{a4}", "WIDGET#{widget_id}")
        GSI5 = ("A5#{a5}", "WIDGET#{widget_id}")


class FiveIndexRepo(Repository, table=five):
    widget = get(Widget)
    by_a1 = query(Widget, index="GSI1")
    by_a2 = query(Widget, index="GSI2")
    by_a3 = query(Widget, index="GSI3")
    by_a4 = query(Widget, index="GSI4")
    by_a5 = query(Widget, index="GSI5")


# -- filter -------------------------------------------------------------------------------------

filtered = Table("Filtered")


class Stage(str, Enum):
    NEW = "NEW"
    PAID = "PAID"
    SENT = "SENT"
    DONE = "DONE"


class Purchase(Entity, table=filtered, type="PURCHASE"):
    user_id: str
    purchase_id: str
    stage: Stage
    amount: Decimal

    class Keys:
        pk = "USER#{user_id}"
        sk = "PURCHASE#{purchase_id}"


class FilteredRepo(Repository, table=filtered):
    paid_purchases = query(Purchase, where=Attr("stage").eq(Stage.PAID))
    big_purchases = query(Purchase, where=Attr("amount").gte(Param("min_amount")))


class UnfilteredRepo(Repository, table=filtered):
    purchases = query(Purchase)


# -- projection-mismatch (refused at definition time, so the flag is flipped after it) -----------

projected = Table(
    "Projected", indexes=[GSI("ByRef", pk="REFPK", sk="REFSK", projection="KEYS_ONLY")]
)


class Parcel(Entity, table=projected, type="PARCEL"):
    parcel_id: str
    reference: str
    weight: int

    class Keys:
        pk = "PARCEL#{parcel_id}"
        sk = "#PARCEL"
        ByRef = ("REF#{reference}", "PARCEL#{parcel_id}")


class ProjectedRepo(Repository, table=projected):
    parcel = get(Parcel)
    parcel_refs = query(Parcel, index="ByRef", keys_only=True)
    parcels_by_ref = query(Parcel, index="ByRef", hydrate=True)


def projection_mismatch_repository() -> type[Repository]:
    """A KEYS_ONLY index read for whole entities (the definition-time check is bypassed)."""

    class MismatchRepo(Repository, table=projected):
        parcel = get(Parcel)
        parcel_refs = query(Parcel, index="ByRef", keys_only=True)

    pattern = MismatchRepo.__patterns__["parcel_refs"]
    assert isinstance(pattern, QueryPattern)
    pattern.keys_only = False
    return MismatchRepo


# -- collection-parent-order --------------------------------------------------------------------

homes = Table("Homes")


class Household(Entity, table=homes, type="HOUSEHOLD"):
    household_id: str

    class Keys:
        pk = "HOUSE#{household_id}"
        sk = "PROFILE"  # sorts after 'MEMBER#...': in ascending order the residents come first


class Resident(Entity, table=homes, type="RESIDENT"):
    household_id: str
    resident_id: str

    class Keys:
        pk = "HOUSE#{household_id}"
        sk = "MEMBER#{resident_id}"


class HomesRepo(Repository, table=homes):
    household = get(Household)
    home = collection(Household, Resident)


ordered_homes = Table("OrderedHomes")


class Family(Entity, table=ordered_homes, type="FAMILY"):
    family_id: str

    class Keys:
        pk = "FAMILY#{family_id}"
        sk = "#FAMILY"  # '#' sorts before letters: the parent comes first


class Relative(Entity, table=ordered_homes, type="RELATIVE"):
    family_id: str
    relative_id: str

    class Keys:
        pk = "FAMILY#{family_id}"
        sk = "MEMBER#{relative_id}"


class OrderedHomesRepo(Repository, table=ordered_homes):
    family = get(Family)
    home = collection(Family, Relative)


class DescendingHomesRepo(Repository, table=ordered_homes):
    """The same keys read newest first: the '#FAMILY' parent now comes last."""

    family = get(Family)
    home = collection(Family, Relative, order="desc")


# -- implicit-type-tag --------------------------------------------------------------------------

tagless = Table("Tagless")


class Note(Entity, table=tagless):  # no type=: stored as "_type": "Note"
    note_id: str

    class Keys:
        pk = "NOTE#{note_id}"
        sk = "#NOTE"


class TaglessRepo(Repository, table=tagless):
    note = get(Note)


# -- scan ---------------------------------------------------------------------------------------


class ScanEverything(Pattern):
    """A pattern that would read the whole table (no singletable factory makes one)."""

    operation = "Scan"

    def bind(self, repository: type[Repository], table: Table) -> None:
        return None

    def explain(self) -> ExplainRow:
        return ExplainRow(self.name, "Scan", None, "", ("ACCOUNT",), "-")


class ScanningRepo(Repository, table=clean):
    account = get(Account)
    everything = ScanEverything()


# -- acknowledgements -------------------------------------------------------------------------


class AcknowledgedErrors(CollidingRepo):
    lint_acknowledge = {"key-collision": "sku and item_id never overlap (different alphabets)"}


class BadAcknowledgements(CleanRepo):
    lint_acknowledge = {
        "hot-partitoin:Account": "typo in the code",
        "implicit-type-tag:Account": "",
        "prefix-overlap:invoices": "nothing overlaps any more",
    }


# -- a declared (method-signature) pattern, sparse index ------------------------------------------

queue = Table("Queue", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class QueueStatus(str, Enum):
    WAITING = "WAITING"
    DONE = "DONE"


class Task(Entity, table=queue, type="TASK"):
    task_id: str
    created_at: datetime
    status: QueueStatus

    class Keys:
        pk = "TASK#{task_id}"
        sk = "#TASK"
        GSI1 = Index("WAITING", "{created_at}#{task_id}", when={"status": QueueStatus.WAITING})


class QueueRepo(Repository, table=queue):
    lint_acknowledge = {"hot-partition:Task": "sparse queue index, deliberate"}

    task = get(Task)

    @query(Task, index="GSI1")
    def waiting(self, *, limit: int | None = None) -> Any: ...


# -- write sharding: a low-cardinality key spread over shards, read with scatter= ---------------

sharded = Table("Sharded", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class ShardedTicket(Entity, table=sharded, type="TICKET"):
    """Two priorities (hot on their own), each spread over 8 GSI1 partitions."""

    ticket_id: str
    priority: Priority
    shard: Annotated[int, Shard(8, of="ticket_id")] = 0

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "#TICKET"
        GSI1 = ("PRIORITY#{priority}#{shard}", "TICKET#{ticket_id}")


class ShardedRepo(Repository, table=sharded):
    ticket = get(ShardedTicket)
    tickets_by_priority = query(ShardedTicket, index="GSI1", scatter="shard")


one_shard = Table("OneShard", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class OneShardTicket(Entity, table=one_shard, type="TICKET"):
    """Shard(1) spreads nothing: still two partitions."""

    ticket_id: str
    priority: Priority
    shard: Annotated[int, Shard(1, of="ticket_id")] = 0

    class Keys:
        pk = "TICKET#{ticket_id}"
        sk = "#TICKET"
        GSI1 = ("PRIORITY#{priority}#{shard}", "TICKET#{ticket_id}")


class OneShardRepo(Repository, table=one_shard):
    ticket = get(OneShardTicket)
    tickets_by_priority = query(OneShardTicket, index="GSI1", scatter="shard")
