"""Every exception singletable raises.

Each class has a stable ``code`` (documented in ``docs/errors.md`` under the same anchor,
published at ``ERRORS_URL``) and a message that names the culprit: the entity, field, index or
key at fault. Messages name key values (they identify items) but never other item contents,
which may be personal data. This module imports nothing from the package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

DOCS_URL = "https://singletable.readthedocs.io/"
"""The documentation's base URL (also ``site_url`` in mkdocs.yml and the project URLs in
pyproject.toml)."""
ERRORS_URL = f"{DOCS_URL}errors/"
"""The page of docs/errors.md: every error's message ends with ``ERRORS_URL#<code>``."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``" (did you mean 'order_id'?)"`` when one of ``candidates`` is close to ``name``,
    else ``""``: for messages about a misspelt name."""
    import difflib  # the error path only: not an import-time cost

    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


class SingleTableError(Exception):
    """Base class of every singletable error."""

    code: str = "singletable-error"
    location: str | None = None
    """``"path:line"`` of the declaration at fault, for definition errors (else None)."""

    def __init__(self, message: str, *, key: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.key = key

    def __str__(self) -> str:
        return f"{self.message} [{self.code}: see {ERRORS_URL}#{self.code}]"


class ModelDefinitionError(SingleTableError):
    """A declaration is wrong (table, entity, Keys, marker, pattern, repository).

    Raised at class creation, so a bad model never reaches production.
    """

    code = "model-definition"


class KeyTemplateError(SingleTableError):
    """A key cannot be rendered: missing, empty, naive-datetime, too-wide or delimiter-bearing
    value, or a bad range lookup."""

    code = "key-template"


class KeyDefinitionError(ModelDefinitionError, KeyTemplateError):
    """A key template is wrong at definition time (unknown field, bare number in a sort key...)."""

    code = "key-definition"


class InvalidRequestError(SingleTableError):
    """A call cannot be sent as asked (bad keyword, primary-key change via update, transaction
    over 100 operations or touching one item twice, unsafe batch...). Nothing was sent."""

    code = "invalid-request"


class PatternArgumentError(InvalidRequestError, TypeError):
    """An access pattern was called with a keyword it does not take (a misspelt field, a
    lookup the field has no use for, ``where=`` on a get...). Also a ``TypeError``, as
    Python's own unexpected-keyword error is. ``key`` is the first such keyword,
    ``accepted`` the keywords the pattern takes. Nothing was sent."""

    code = "pattern-argument"

    def __init__(
        self, message: str, *, key: Any = None, pattern: str = "", accepted: Sequence[str] = ()
    ) -> None:
        super().__init__(message, key=key)
        self.pattern = pattern
        self.accepted = tuple(accepted)


class ItemEncodeError(SingleTableError):
    """A field value cannot be stored in DynamoDB (NaN, more than 38 significant digits, ...)."""

    code = "item-encode"


class ItemTooLargeError(SingleTableError):
    """An item exceeds DynamoDB's 400 KB (409,600 bytes) limit; nothing was sent."""

    code = "item-too-large"

    def __init__(self, message: str, *, key: Any = None, size: int = 0) -> None:
        super().__init__(message, key=key)
        self.size = size


class ItemDecodeError(SingleTableError):
    """A stored item no longer validates against its entity class."""

    code = "item-decode"

    def __init__(self, message: str, *, key: Any = None, raw: Mapping[str, Any] | None = None):
        super().__init__(message, key=key)
        self.raw = raw


class ConditionFailed(SingleTableError):
    """A write's condition did not hold. ``item`` is the current item (decoded) when known."""

    code = "condition-failed"

    def __init__(self, message: str, *, key: Any = None, item: Any = None) -> None:
        super().__init__(message, key=key)
        self.item = item


class AlreadyExists(ConditionFailed):
    """``create`` found a live item with the same primary key."""

    code = "already-exists"


class NotFound(ConditionFailed):
    """The item a write requires does not exist (or has expired)."""

    code = "not-found"


class VersionConflict(ConditionFailed):
    """The stored version differs from the one the write expected (optimistic locking)."""

    code = "version-conflict"


class UniqueConstraintViolation(ConditionFailed):
    """Another item already holds a value declared ``Unique()``."""

    code = "unique-violation"

    def __init__(
        self, message: str, *, key: Any = None, item: Any = None, field: str | None = None
    ) -> None:
        super().__init__(message, key=key, item=item)
        self.field = field


class MultipleResultsError(SingleTableError):
    """A ``one=True`` pattern matched more than one item."""

    code = "multiple-results"


class InvalidCursor(SingleTableError):
    """A cursor is malformed, altered, signed with an unknown secret or from another query."""

    code = "invalid-cursor"


class TransactionCanceled(SingleTableError):
    """DynamoDB cancelled a transaction; ``reasons`` explains each operation in call order."""

    code = "transaction-canceled"

    def __init__(self, message: str, *, reasons: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.reasons = list(reasons)

    @property
    def retryable(self) -> bool:
        """True when every failure is a transaction conflict (safe to retry)."""
        failed = [r for r in self.reasons if r.failed]
        return bool(failed) and all(r.retryable for r in failed)


class UnprocessedItemsError(SingleTableError):
    """A batch left items unprocessed after every retry; ``unprocessed`` holds them as given."""

    code = "unprocessed-items"

    def __init__(self, message: str, *, unprocessed: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.unprocessed = list(unprocessed)


class ServiceError(SingleTableError):
    """DynamoDB (or the client) reported an error singletable has no specific class for.

    The boto3 exception is the ``__cause__``.
    """

    code = "service-error"

    def __init__(
        self,
        message: str,
        *,
        aws_code: str | None = None,
        operation: str | None = None,
        request_id: str | None = None,
        retryable: bool = False,
        key: Any = None,
        response: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message, key=key)
        self.aws_code = aws_code
        self.operation = operation
        self.request_id = request_id
        self.retryable = retryable
        self.response: Mapping[str, Any] = response or {}


class TableNotFound(ServiceError):
    """The table (or index) does not exist at the endpoint."""

    code = "table-not-found"


__all__ = [
    "AlreadyExists",
    "ConditionFailed",
    "InvalidCursor",
    "InvalidRequestError",
    "ItemDecodeError",
    "ItemEncodeError",
    "ItemTooLargeError",
    "KeyDefinitionError",
    "KeyTemplateError",
    "ModelDefinitionError",
    "MultipleResultsError",
    "NotFound",
    "PatternArgumentError",
    "ServiceError",
    "SingleTableError",
    "TableNotFound",
    "TransactionCanceled",
    "UniqueConstraintViolation",
    "UnprocessedItemsError",
    "VersionConflict",
]
