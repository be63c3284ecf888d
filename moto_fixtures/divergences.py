"""Known differences between a backend and DynamoDB, as data.

``KNOWN_DIVERGENCES[(test, backend)] = reason`` marks the matching test run
``xfail(strict=True, reason=...)`` (see ``moto_fixtures.plugin``). ``test`` is a test function
name (``"test_query_rejects_key_filter"``) or a suffix of its node id without the parameter part
(``"test_query.py::TestFilters::test_query_rejects_key_filter"``); ``backend`` is ``"inproc"``,
``"moto_server"``, ``"dynalite"`` or ``"endpoint"``.

Tests assert what DynamoDB does. When a backend gets it wrong, add an entry here instead of an
``if backend.name == ...`` in the test. Strict xfail means the day a moto/dynalite upgrade
fixes the divergence the test XPASSes, the run fails, and the entry must be removed.

Example (moto never validates the 25-request limit of BatchWriteItem, AWS and dynalite do)::

    ("test_batch_write_rejects_26_requests", "inproc"): "moto accepts 26 requests",
    ("test_batch_write_rejects_26_requests", "moto_server"): "moto accepts 26 requests",
"""

from __future__ import annotations

_UNUSED_EAV = (
    "moto accepts unused ExpressionAttributeValues; DynamoDB and dynalite reject them "
    "with a ValidationException"
)

_NO_ITEM_ON_CCF = (
    "dynalite ignores ReturnValuesOnConditionCheckFailure, so a failed write cannot return the "
    "current item; DynamoDB and moto return it"
)

# A short phrase for each reason, for docs/testing.md's table of what each backend lacks.
SUMMARIES: dict[str, str] = {
    _UNUSED_EAV: "accepts unused ExpressionAttributeValues",
    _NO_ITEM_ON_CCF: (
        "no ReturnValuesOnConditionCheckFailure (a failed write does not return the item)"
    ),
}

KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {
    ("test_failed_write_is_classified_in_one_request", "dynalite"): _NO_ITEM_ON_CCF,
    ("test_update_keyword_form_operators", "dynalite"): _NO_ITEM_ON_CCF,
    ("test_failed_update_condition_is_shown_without_values", "dynalite"): _NO_ITEM_ON_CCF,
    ("test_a_path_under_a_parent_that_is_not_stored_is_named", "dynalite"): _NO_ITEM_ON_CCF,
    ("test_a_failed_condition_on_a_path_shows_the_path", "dynalite"): _NO_ITEM_ON_CCF,
    # Self-test of the mechanism (tests/test_backends.py); keep these two entries.
    ("test_divergence_unused_expression_attribute_values", "inproc"): _UNUSED_EAV,
    ("test_divergence_unused_expression_attribute_values", "moto_server"): _UNUSED_EAV,
}
