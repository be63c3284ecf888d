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
    "current item (DynamoDB and moto return it) and singletable reads it once more"
)

_GSI_CREATE_THROUGHPUT = (
    "dynalite refuses an UpdateTable that creates a GSI without ProvisionedThroughput, even on "
    "an on-demand (PAY_PER_REQUEST) table; DynamoDB and moto take it"
)

# A short phrase for each reason, for docs/testing.md's table of what each backend lacks.
SUMMARIES: dict[str, str] = {
    _UNUSED_EAV: "accepts unused ExpressionAttributeValues",
    _NO_ITEM_ON_CCF: (
        "no ReturnValuesOnConditionCheckFailure (a failed write does not return the item)"
    ),
    _GSI_CREATE_THROUGHPUT: "adding a GSI to an on-demand table needs ProvisionedThroughput",
}

KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {
    ("test_failed_write_is_classified_in_one_request", "dynalite"): _NO_ITEM_ON_CCF,
    (
        "test_a_native_index_added_to_a_live_table_needs_no_backfill",
        "dynalite",
    ): _GSI_CREATE_THROUGHPUT,
    # Self-test of the mechanism (tests/backend/test_backends.py); keep these two entries.
    ("test_divergence_unused_expression_attribute_values", "inproc"): _UNUSED_EAV,
    ("test_divergence_unused_expression_attribute_values", "moto_server"): _UNUSED_EAV,
}
