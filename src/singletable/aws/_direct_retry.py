"""The async twin's retry decision: aiobotocore's legacy retry handler, asked without awaiting.

aiobotocore's legacy handler (``AioRetryHandler``, the default retry mode) is botocore's
handler with every checker made a coroutine: for each response it awaits a dozen and a half
checkers through ``resolve_awaitable``, which cost the async direct transport more client CPU
than signing the request. Nothing in them waits, except reading the body for the CRC32 check,
which the transport has already read. :func:`sync_twin` rebuilds the same checker tree from
botocore's own classes (the parents of aiobotocore's: same checks, same order, same maximum
attempts, same retryable exceptions, the same action object for the backoff), and
:class:`RetryDecisions` asks it, for a client whose only ``needs-retry`` handler is the stock
one. Anything else (the standard mode's handler, a handler of the user's, a checker class
this module does not know) is asked through aiobotocore's endpoint as before. The backoff is
still slept by aiobotocore's endpoint (``_sleep``).
"""

from __future__ import annotations

from typing import Any

from aiobotocore.retryhandler import (
    AioCRC32Checker,
    AioMaxAttemptsDecorator,
    AioMultiChecker,
    AioRetryHandler,
)
from botocore.retryhandler import (
    CRC32Checker,
    ExceptionRaiser,
    HTTPStatusCodeChecker,
    MaxAttemptsDecorator,
    MultiChecker,
    RetryHandler,
    ServiceErrorCodeChecker,
)

from ._direct_urllib3 import ReadResponse

__all__ = ["RetryDecisions", "sync_twin"]

_SYNC_ALREADY = (ServiceErrorCodeChecker, HTTPStatusCodeChecker, ExceptionRaiser)


def sync_twin(handler: Any) -> RetryHandler | None:
    """botocore's ``RetryHandler`` equivalent to aiobotocore's ``handler``, or None when
    ``handler`` is not aiobotocore's stock legacy handler made of checkers known here."""
    if type(handler) is not AioRetryHandler:
        return None
    stock: Any = handler
    checker = _sync_checker(stock._checker)
    return None if checker is None else RetryHandler(checker, stock._action)


def _sync_checker(checker: Any) -> Any:
    kind = type(checker)
    if kind is AioMaxAttemptsDecorator:
        inner = _sync_checker(checker._checker)
        if inner is None:
            return None
        return MaxAttemptsDecorator(inner, checker._max_attempts, checker._retryable_exceptions)
    if kind is AioMultiChecker:
        checkers = [_sync_checker(c) for c in checker._checkers]
        return None if any(c is None for c in checkers) else MultiChecker(checkers)
    if kind is AioCRC32Checker:
        return CRC32Checker(header=checker._header_name)
    if kind in _SYNC_ALREADY:  # aiobotocore uses botocore's own for these
        return checker
    return None


class RetryDecisions:
    """Per client: whether to retry an attempt, from the stock handler's sync twin when the
    client's ``needs-retry`` handlers are just that handler, else None (ask aiobotocore)."""

    def __init__(self, events: Any) -> None:
        self._emitter = getattr(events, "_emitter", events)
        self._twins: dict[str, tuple[Any, RetryHandler | None]] = {}

    def twin(self, event: str) -> RetryHandler | None:
        """The sync twin for ``event``'s handlers, if they are exactly the stock handler.

        Reads the emitter's own lookup cache, which it empties (a new dictionary) whenever a
        handler is registered or unregistered: until aiobotocore has emitted ``event`` again
        with the new handlers, the answer is None."""
        cache = getattr(self._emitter, "_lookup_cache", None)
        listed = None if cache is None else cache.get(event)
        if listed is None or len(listed) != 1:
            return None
        handler = listed[0]
        known = self._twins.get(event)
        if known is None or known[0] is not handler:
            known = self._twins[event] = (handler, sync_twin(handler))
        return known[1]

    @staticmethod
    def ask(
        twin: RetryHandler,
        operation: Any,
        attempts: int,
        request_dict: dict[str, Any],
        response: Any,
        exception: Any,
    ) -> Any:
        """The twin's answer (seconds to back off, or None/False) for one attempt."""
        if response is not None:
            http, parsed = response
            # botocore's checkers read the body as bytes (``content``), aiobotocore's await it
            view = ReadResponse(http.url, http.status_code, http.headers, http._content)
            response = (view, parsed)
        return twin(
            response=response,
            operation=operation,
            attempts=attempts,
            caught_exception=exception,
            request_dict=request_dict,
        )
