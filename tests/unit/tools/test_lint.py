"""singletable._tools.lint.check: every rule fires on its model and stays quiet on its twin;
acknowledgements; the key-language analysis behind collisions, overlaps and ordering."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from singletable import GSI, Entity, Table
from singletable._entity import spec_of
from singletable._tools.lint import (
    LINT_URL,
    RULES,
    Finding,
    can_sort_after,
    check,
    exit_status,
    format_json,
    format_text,
    languages_intersect,
    template_language,
)
from tests import lint_models as m
from tests import lint_native_models as nm
from tests.models import Leaderboard, Store

ROOT = Path(__file__).resolve().parents[3]


def codes(repository: type, code: str | None = None) -> list[Finding]:
    findings = check(repository)
    return [f for f in findings if code is None or f.code == code]


def subjects(repository: type, code: str) -> set[str]:
    return {f.subject for f in codes(repository, code)}


# -- the clean model ----------------------------------------------------------------------------


def test_clean_model_has_no_findings() -> None:
    assert check(m.CleanRepo) == []
    text = format_text(m.CleanRepo, [])
    assert "no findings" in text
    assert "hot" not in text.lower() and "overlap" not in text.lower()


def test_findings_have_code_severity_subject_message_hint() -> None:
    for finding in check(Store):
        assert finding.code in RULES
        assert finding.severity == RULES[finding.code]
        assert finding.subject and finding.message and finding.hint
        assert finding.acknowledged is None
    order = ["error", "warning", "info"]
    severities = [order.index(f.severity) for f in check(Store)]
    assert severities == sorted(severities), "errors first, then warnings, then info"


# -- hot-partition ------------------------------------------------------------------------------


def test_hot_partition_constant_enum_and_literal_keys() -> None:
    found = {f.subject: f for f in codes(m.HotRepo, "hot-partition")}
    assert set(found) == {"Job", "Ticket.GSI1", "Shipment"}
    assert all(f.severity == "warning" for f in found.values())
    job = found["Job"]
    assert "hot" in job.message and "Job" in job.message and "'QUEUE'" in job.message
    assert "no placeholder" in job.message
    assert "shard" in job.hint
    assert "at most 2 partitions" in found["Ticket.GSI1"].message
    assert "LOW, HIGH" in found["Ticket.GSI1"].message
    assert "region (eu, us)" in found["Shipment"].message


def test_hot_partition_not_reported_for_high_cardinality_keys() -> None:
    assert codes(m.CoolRepo, "hot-partition") == []
    assert codes(m.CleanRepo, "hot-partition") == []


def test_hot_partition_hint_is_the_shard_to_add() -> None:
    """The hint is the code to write: the Shard field (of= a primary-key id field outside the
    hot key), the partition key template with it, and scatter= on the patterns reading it."""
    found = {f.subject: f.hint for f in codes(m.HotRepo, "hot-partition")}
    ticket = found["Ticket.GSI1"]
    assert 'shard: Annotated[int, Shard(8, of="ticket_id")] = 0' in ticket
    assert "'PRIORITY#{priority}#{shard}'" in ticket
    assert 'add scatter="shard" to tickets_by_priority' in ticket
    assert 'query(Ticket, index="GSI1", scatter="shard")' in ticket
    assert "backfill" in ticket
    # the table's own partition key: a constant gets the shard after the delimiter
    assert "'QUEUE#{shard}'" in found["Job"] and 'Shard(8, of="job_id")' in found["Job"]
    assert 'query(Job, scatter="shard")' in found["Job"]
    assert 'Shard(8, of="shipment_id")' in found["Shipment"]


def test_a_sharded_key_read_with_scatter_is_not_hot() -> None:
    """Two priorities times 8 shards, read by a scatter pattern: no hot partition, and the
    pattern's 'Query x8' is 8 keyed Queries, not a Scan."""
    assert check(m.ShardedRepo) == []
    (finding,) = codes(m.OneShardRepo, "hot-partition")  # Shard(1) spreads nothing
    assert finding.subject == "OneShardTicket.GSI1"


def test_sparse_queue_index_is_hot_and_says_sparse() -> None:
    (finding,) = codes(m.QueueRepo, "hot-partition")
    assert finding.subject == "Task.GSI1"
    assert "sparse" in finding.message and "'WAITING'" in finding.message


# -- key-collision ------------------------------------------------------------------------------


def test_key_collision_between_entity_types() -> None:
    (finding,) = codes(m.CollidingRepo, "key-collision")
    assert finding.severity == "error"
    assert finding.subject == "CartItem+WishItem"
    assert "CartItem" in finding.message and "WishItem" in finding.message
    assert "overwrite" in finding.message
    assert exit_status(check(m.CollidingRepo)) == 1


def test_no_collision_when_value_languages_are_disjoint() -> None:
    # 'V#{seq:05d}' and 'V#{day}' share a prefix, but five digits never look like a date
    assert codes(m.DistinctRepo, "key-collision") == []
    assert codes(m.SeparatedRepo, "key-collision") == []
    assert codes(m.CleanRepo, "key-collision") == []


def test_test_models_order_and_note_can_collide() -> None:
    # OrderNote's sort key 'ORDER#{created_at}#NOTE{note_id}' equals an Order's
    # 'ORDER#{created_at}#{order_id}' when order_id starts with NOTE: a real collision
    assert subjects(Store, "key-collision") == {"Order+OrderNote"}


# -- prefix-overlap -----------------------------------------------------------------------------


def test_prefix_overlap_names_both_entities() -> None:
    found = {f.subject: f for f in codes(m.OverlappingRepo, "prefix-overlap")}
    assert "posts.PostComment" in found
    finding = found["posts.PostComment"]
    assert finding.severity == "warning"
    assert "overlap" in finding.message
    assert "Post" in finding.message and "PostComment" in finding.message
    assert "begins_with(SK, 'POST#')" in finding.message
    assert codes(m.OverlappingRepo, "key-collision") == []  # overlapping, not colliding


def test_no_overlap_with_distinct_prefixes() -> None:
    assert codes(m.SeparatedRepo, "prefix-overlap") == []
    assert codes(m.CleanRepo, "prefix-overlap") == []


def test_collection_reading_foreign_types_is_an_overlap() -> None:
    assert {"customer_home.OrderNote", "customer_home.Parcel"} <= subjects(Store, "prefix-overlap")


# -- unsortable-sort-key ------------------------------------------------------------------------


def test_unsortable_sort_key_is_refused_at_definition_time() -> None:
    from singletable.errors import KeyDefinitionError

    with pytest.raises(KeyDefinitionError, match="sort"):

        class Bare(Entity, table=Table("Refused"), type="BARE"):
            game_id: str
            points: int

            class Keys:
                pk = "GAME#{game_id}"
                sk = "POINTS#{points}"


def test_unsortable_sort_key_rule_still_checks() -> None:
    repository = m.unsortable_repository()
    (finding,) = codes(repository, "unsortable-sort-key")
    assert finding.severity == "error"
    assert finding.subject == "BareScore"
    assert "{points}" in finding.message and "sortable" in finding.hint
    assert exit_status(check(repository)) == 1


def test_sortable_numbers_pass() -> None:
    assert codes(m.ScoreRepo, "unsortable-sort-key") == []


# -- indexes -------------------------------------------------------------------------------------


def test_unused_index_and_unread_index() -> None:
    (unused,) = codes(m.IndexedRepo, "unused-index")
    assert unused.subject == "GSI2" and unused.severity == "warning"
    assert "Member" in unused.message  # who pays for it
    (unread,) = codes(m.IndexedRepo, "unread-index")
    assert unread.subject == "Badge.GSI1" and unread.severity == "warning"


def test_every_index_read() -> None:
    assert codes(m.IndexedFullRepo) == []


def test_more_than_five_gsis() -> None:
    (finding,) = codes(m.SixIndexRepo, "too-many-indexes")
    assert finding.severity == "warning" and "6" in finding.message
    assert codes(m.FiveIndexRepo, "too-many-indexes") == []
    # five indexes are allowed, and their cost is shown: every create writes each of them
    (amplified,) = codes(m.FiveIndexRepo)
    assert (amplified.code, amplified.severity, amplified.subject) == (
        "write-amplification",
        "info",
        "Widget",
    )
    assert amplified.message.startswith("Widget: create, put, update and delete write more")
    assert "a put costs 10 index write units (GSI1 2, GSI2 2, GSI3 2, GSI4 2, GSI5 2)" in (
        amplified.message
    )


# -- filter --------------------------------------------------------------------------------------


def test_filter_is_info_with_a_waste_estimate() -> None:
    found = {f.subject: f for f in codes(m.FilteredRepo, "filter")}
    assert set(found) == {"paid_purchases", "big_purchases"}
    paid = found["paid_purchases"]
    assert paid.severity == "info"
    assert "waste ~75%" in paid.message  # = on an enum with 4 members keeps about 1 in 4
    assert "waste ~67%" in found["big_purchases"].message  # a range keeps about a third
    assert exit_status(check(m.FilteredRepo)) == 0


def test_no_filter_no_finding() -> None:
    assert codes(m.UnfilteredRepo) == []


# -- projection-mismatch --------------------------------------------------------------------------


def test_keys_only_index_read_for_entities_is_an_error() -> None:
    (finding,) = codes(m.projection_mismatch_repository(), "projection-mismatch")
    assert finding.severity == "error" and finding.subject == "parcel_refs"
    assert "KEYS_ONLY" in finding.message and "hydrate=True" in finding.hint


def test_keys_only_and_hydrate_patterns_pass() -> None:
    assert codes(m.ProjectedRepo, "projection-mismatch") == []


# -- collection-parent-order ----------------------------------------------------------------------


def test_parent_sorting_after_children() -> None:
    (finding,) = codes(m.HomesRepo, "collection-parent-order")
    assert finding.severity == "warning" and finding.subject == "home"
    assert "Household" in finding.message and "Resident" in finding.message
    assert "before its parent Household" in finding.message
    assert "does not sort before" in finding.message


def test_parent_sorting_first() -> None:
    assert codes(m.OrderedHomesRepo) == []


def test_descending_collection_needs_the_parent_last_in_key_order() -> None:
    (finding,) = codes(m.DescendingHomesRepo, "collection-parent-order")
    assert "order=desc" in finding.message and "before its parent Family" in finding.message
    assert "does not sort after" in finding.message and "'~'" in finding.hint


# -- implicit-type-tag --------------------------------------------------------------------------


def test_implicit_type_tag_is_info() -> None:
    (finding,) = codes(m.TaglessRepo, "implicit-type-tag")
    assert finding.severity == "info" and finding.subject == "Note"
    assert "'Note'" in finding.message and "renaming" in finding.message
    assert 'type="NOTE"' in finding.hint
    assert codes(m.CoolRepo, "implicit-type-tag") == []


# -- scan ---------------------------------------------------------------------------------------


def test_scan_is_an_error() -> None:
    (finding,) = codes(m.ScanningRepo, "scan")
    assert finding.severity == "error" and finding.subject == "everything"
    assert "Scan" in finding.message
    assert exit_status(check(m.ScanningRepo)) == 1


def test_get_query_and_collection_never_scan() -> None:
    for repository in (m.CleanRepo, Store, Leaderboard, m.ProjectedRepo):
        assert codes(repository, "scan") == []


# -- acknowledgements ---------------------------------------------------------------------------


def test_acknowledged_findings_are_marked_and_keep_their_severity() -> None:
    findings = check(m.HotAcknowledged)
    assert {f.subject for f in findings} == {"Job", "Ticket.GSI1", "Shipment"}
    reasons = {f.subject: f.acknowledged for f in findings}
    assert reasons["Job"] == "a small work queue, deliberate"
    assert all(f.severity == "warning" for f in findings)
    text = format_text(m.HotAcknowledged, findings, verbose=True)
    assert "ACKNOWLEDGED" in text and "a small work queue, deliberate" in text
    assert "3 acknowledged" in text


def test_acknowledged_findings_collapse_into_one_line_unless_verbose() -> None:
    findings = check(m.HotAcknowledged)
    lines = format_text(m.HotAcknowledged, findings).splitlines()
    assert lines == [
        "3 acknowledged findings (lint --verbose shows them)",
        "HotAcknowledged: 0 errors, 0 warnings, 0 info, 3 acknowledged -> passes",
    ]
    verbose = format_text(m.HotAcknowledged, findings, verbose=True).splitlines()
    assert sum(line.startswith("ACKNOWLEDGED ") for line in verbose) == 3
    assert verbose[-1] == lines[-1]
    assert "--verbose" not in "".join(verbose)


def test_open_findings_are_listed_beside_the_collapsed_line() -> None:
    findings = check(m.AcknowledgedErrors)
    open_findings = [f for f in findings if f.acknowledged is None]
    text = format_text(m.AcknowledgedErrors, findings)
    assert all(f"{f.code} [{f.subject}]" in text for f in open_findings)
    assert "ACKNOWLEDGED" not in text
    count = len(findings) - len(open_findings)
    assert f"{count} acknowledged finding" in text


def test_subject_prefix_covers_sub_subjects() -> None:
    (finding,) = check(m.QueueRepo)  # "hot-partition:Task" covers Task.GSI1
    assert finding.subject == "Task.GSI1"
    assert finding.acknowledged == "sparse queue index, deliberate"


def test_acknowledged_errors_do_not_fail() -> None:
    findings = check(m.AcknowledgedErrors)
    (collision,) = [f for f in findings if f.code == "key-collision"]
    assert collision.acknowledged and not collision.fails
    assert exit_status(findings) == 0


def test_check_takes_extra_acknowledgements() -> None:
    findings = check(m.CollidingRepo, acknowledge={"key-collision:CartItem+WishItem": "known"})
    assert exit_status(findings) == 0
    assert exit_status(check(m.CollidingRepo)) == 1  # the class itself is unchanged


def test_a_finding_is_acknowledged_by_the_subject_the_verbose_listing_shows() -> None:
    open_findings = check(m.CollidingTwiceRepo)
    collisions = sorted(f.subject for f in open_findings if f.code == "key-collision")
    assert collisions == ["Basket+Wish", "Basket+Wish.GSI1"]
    listing = format_text(m.CollidingTwiceRepo, open_findings, verbose=True)
    assert "key-collision [Basket+Wish.GSI1]" in listing
    # The subject as listed acknowledges that finding, and only it.
    findings = check(m.CollidingTwiceRepo, acknowledge={"key-collision:Basket+Wish.GSI1": "ok"})
    reasons = {f.subject: f.acknowledged for f in findings if f.code == "key-collision"}
    assert reasons == {"Basket+Wish": None, "Basket+Wish.GSI1": "ok"}
    assert "unused-acknowledgement" not in {f.code for f in findings}


def test_the_closest_acknowledgement_wins() -> None:
    """``A+B`` covers ``A+B.GSI1`` too, but an acknowledgement naming ``A+B.GSI1`` is closer:
    each finding takes its own reason and neither acknowledgement is unused."""
    findings = check(
        m.CollidingTwiceRepo,
        acknowledge={
            "key-collision:Basket+Wish": "the table: ids never overlap",
            "key-collision:Basket+Wish.GSI1": "the index: read with a filter",
        },
    )
    reasons = {f.subject: f.acknowledged for f in findings if f.code == "key-collision"}
    assert reasons == {
        "Basket+Wish": "the table: ids never overlap",
        "Basket+Wish.GSI1": "the index: read with a filter",
    }
    assert "unused-acknowledgement" not in {f.code for f in findings}
    # A pair may be written either way round.
    reversed_pair = check(
        m.CollidingTwiceRepo, acknowledge={"key-collision:Wish+Basket.GSI1": "ok"}
    )
    assert {f.subject for f in reversed_pair if f.acknowledged} == {"Basket+Wish.GSI1"}


def test_bad_and_stale_acknowledgements_are_reported() -> None:
    found = {f.subject: f for f in check(m.BadAcknowledgements)}
    assert found["hot-partitoin:Account"].code == "invalid-acknowledgement"
    assert found["hot-partitoin:Account"].severity == "error"
    assert found["implicit-type-tag:Account"].code == "invalid-acknowledgement"
    assert "no reason" in found["implicit-type-tag:Account"].message
    assert found["prefix-overlap:invoices"].code == "unused-acknowledgement"
    assert found["prefix-overlap:invoices"].severity == "info"


def test_acknowledge_must_be_a_mapping() -> None:
    class Broken(m.CleanRepo):
        lint_acknowledge = ["hot-partition"]  # type: ignore[assignment]

    (finding,) = check(Broken)
    assert finding.code == "invalid-acknowledgement"


# -- output -------------------------------------------------------------------------------------


def test_text_and_json_output() -> None:
    findings = check(m.CollidingRepo)
    text = format_text(m.CollidingRepo, findings)
    assert text.splitlines()[0].startswith("ERROR")
    assert "fix:" in text and text.rstrip().endswith("fails")
    document = json.loads(format_json(m.CollidingRepo, findings))
    assert document["repository"] == "tests.lint_models:CollidingRepo"
    assert document["exit_status"] == 1
    assert document["counts"]["error"] == 1
    assert {f["code"] for f in document["findings"]} == {"key-collision", "prefix-overlap"}
    assert set(document["findings"][0]) == {
        "code",
        "severity",
        "subject",
        "message",
        "hint",
        "acknowledged",
        "url",
    }


def test_every_finding_ends_with_its_link_in_text_and_json() -> None:
    findings = check(m.CollidingRepo)
    blocks = format_text(m.CollidingRepo, findings).split("\n    see ")[1:]
    assert [block.split("\n", 1)[0] for block in blocks] == [
        f"{LINT_URL}#{finding.code}" for finding in findings
    ]
    document = json.loads(format_json(m.CollidingRepo, findings))
    assert [f["url"] for f in document["findings"]] == [f.url for f in findings]
    assert LINT_URL == "https://singletable.readthedocs.io/lint/"


def test_every_rule_code_has_an_anchor_in_the_lint_rules_page() -> None:
    """Findings link to ``LINT_URL#<code>``: docs/lint.md (published at LINT_URL, in the site's
    navigation) has a section for each code, with what it finds, why and the fix."""
    from tests.project.test_docs import _slug

    text = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    by_anchor = {_slug(section.split("\n", 1)[0]): section for section in sections}
    missing = sorted(code for code in RULES if code not in by_anchor)
    assert not missing, f"docs/lint.md has no section for: {', '.join(missing)}"
    for code in RULES:
        for part in ("**Finds**", "**Why**", "**Fix**"):
            assert part in by_anchor[code], f"docs/lint.md#{code} lacks {part}"
    assert set(by_anchor) <= set(RULES), "a section for a code lint does not have"
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "lint.md" in nav


def test_check_refuses_non_repositories() -> None:
    with pytest.raises(TypeError):
        check(m.Account)  # type: ignore[arg-type]


# -- key languages ------------------------------------------------------------------------------


def _language(entity: type, role: str = "sk") -> object:
    spec = spec_of(entity)
    template = spec.base.sk if role == "sk" else spec.base.pk
    assert template is not None
    return template_language(template, spec)


def test_languages_intersect_by_segment_types() -> None:
    reading, daily = _language(m.Reading), _language(m.DailyTotal)
    assert not languages_intersect(reading, daily)  # type: ignore[arg-type]
    cart, wish = _language(m.CartItem), _language(m.WishItem)
    assert languages_intersect(cart, wish)  # type: ignore[arg-type]
    assert languages_intersect(cart, cart)  # type: ignore[arg-type]


def test_sort_order_between_languages() -> None:
    household, resident = _language(m.Household), _language(m.Resident)
    assert can_sort_after(household, resident)  # type: ignore[arg-type]  # PROFILE > MEMBER#
    assert not can_sort_after(resident, household)  # type: ignore[arg-type]
    family, relative = _language(m.Family), _language(m.Relative)
    assert not can_sort_after(family, relative)  # type: ignore[arg-type]  # '#' < 'M'


def test_datetime_and_padded_languages() -> None:
    table = Table("Languages")

    class Event(Entity, table=table, type="EVENT"):
        stream: str
        at: datetime

        class Keys:
            pk = "S#{stream}"
            sk = "{at}"

    spec = spec_of(Event)
    assert spec.base.sk is not None
    lang = template_language(spec.base.sk, spec)
    from singletable._tools.lint.languages import Lang

    literal = Lang().text("2026-06-01T10:00:00.000000Z")
    assert languages_intersect(lang, literal)
    assert not languages_intersect(lang, Lang().text("2026-06-01"))


# -- native-key indexes ---------------------------------------------------------------------------


def test_native_indexes_lint_clean() -> None:
    """Two entity types in one native index (a collection over it), a number sort attribute,
    a KEYS_ONLY native index read with hydrate= and keys_only=, the table's sort key as a
    native sort attribute: no key finding (typed attributes neither collide nor overlap); a
    Sale is in three indexes, so its writes cost six index units to one (the cost rule's info)."""
    assert [(f.code, f.subject) for f in check(nm.NativeCleanRepo)] == [
        ("write-amplification", "Sale")
    ]
    assert check(nm.NativeShardedRepo) == []  # the hot-partition fix, applied


def test_native_hot_partition_low_cardinality_attributes() -> None:
    found = {f.subject: f for f in codes(nm.NativeHotRepo, "hot-partition")}
    assert set(found) == {"Ticket.ByStatus", "Ticket.Global", "Ticket.ByConstant"}
    by_status = found["Ticket.ByStatus"]
    assert by_status.severity == "warning"
    assert "native index ByStatus" in by_status.message
    assert "partition key (status, region)" in by_status.message
    assert "status (OPEN, CLOSED), region (eu, us): at most 4 partitions" in by_status.message
    # a Shard field alone is low-cardinality too: n partitions for every ticket
    assert "shard (0, 1, 2, 3): at most 4 partitions" in found["Ticket.Global"].message
    assert "only holds 'TICKET'" in found["Ticket.ByConstant"].message
    assert codes(nm.NativeCleanRepo, "hot-partition") == []  # tenant_id, customer_id: many


def test_native_hot_partition_hint_is_the_gsi_line_to_write() -> None:
    """The fix adds a Shard field to the partition tuple: the entity's own when it has one
    (stored already: no backfill), else a new one; the hint holds the exact GSI(...) line."""
    found = {f.subject: f.hint for f in codes(nm.NativeHotRepo, "hot-partition")}
    hint = found["Ticket.ByStatus"]
    line = (
        'GSI("ByStatus", pk=("status", "region", "shard"), sk=("created_at",), '
        'projection="KEYS_ONLY")'
    )
    assert line in hint
    assert eval(line, {"GSI": GSI}) == GSI(
        "ByStatus", pk=("status", "region", "shard"), sk=("created_at",), projection="KEYS_ONLY"
    )
    assert "Ticket.shard (Shard(4), already stored on every item)" in hint
    assert 'add scatter="shard" to tickets' in hint and "no backfill" in hint
    assert "new index under another name" in hint
    # a Shard field alone: more shards
    assert 'Shard(16, of="ticket_id")' in found["Ticket.Global"]
    # no Shard field yet: a new one, and a backfill to store it
    wide = {f.subject: f.hint for f in codes(nm.NativeWideRepo, "hot-partition")}
    pair = wide["Lead.ByPair"]
    assert '`shard: Annotated[int, Shard(8, of="lead_id")] = 0`' in pair
    assert (
        'GSI("ByPair", pk=("status", "region", "shard"), sk=("lead_id",), '
        'index_name="by-pair")' in pair
    )
    assert "repo.backfill(Lead)" in pair
    # four attributes already: the shard takes the last one's place
    four = wide["Lead.ByFour"]
    assert 'GSI("ByFour", pk=("status", "region", "tier", "shard"))' in four
    assert "in place of channel" in four


def test_native_unused_and_unread_indexes() -> None:
    (unused,) = codes(nm.NativeIndexedRepo, "unused-index")
    assert unused.subject == "ByTag" and "Doc" in unused.message
    assert "Keys" not in unused.hint and "by their fields" in unused.hint
    (unread,) = codes(nm.NativeIndexedRepo, "unread-index")
    assert unread.subject == "Sheet.ByOwner"
    assert "None" in unread.hint and "Keys" not in unread.hint  # Doc, read there: not listed


def test_native_patterns_get_the_other_rules_too() -> None:
    (finding,) = codes(nm.NativeIndexedRepo, "filter")
    assert finding.subject == "long_docs" and "pages > 100" in finding.message
    for repository in (nm.NativeCleanRepo, nm.NativeHotRepo, nm.NativeIndexedRepo):
        assert codes(repository, "scan") == []
        assert codes(repository, "key-collision") == []
        assert codes(repository, "prefix-overlap") == []
        assert codes(repository, "collection-parent-order") == []
        assert codes(repository, "unsortable-sort-key") == []
        assert codes(repository, "projection-mismatch") == []
