"""Verbs as plans: generators that yield the requests they need and return the result.

A flow never touches a client, a file or a terminal. It yields a :class:`Send` (one request),
a :class:`Gather` (several requests to run at once), a :class:`Sleep` (a backoff) or a
:class:`Call` (local work that may block: a checkpoint file written, a progress line drawn), and
receives the parsed response, the list of responses, ``None`` or the call's result back; a
request that failed is thrown into the flow as the mapped
:class:`~singletable.errors.SingleTableError`, so the flow decides what a failure means (a
cancelled transaction, a failed condition). Its return value is the verb's result.

The sync :class:`~singletable._repository.Repository` and the
:class:`~singletable.aio.AsyncRepository` drive the same flows (``run``), so both twins send
byte-identical requests, retry the same way and raise the same errors. Flows compose with
``yield from``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator, Mapping
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from .errors import ServiceError, SingleTableError

T = TypeVar("T")


class Send(NamedTuple):
    """Send one request: ``operation`` (``"GetItem"``) with ``params``, on behalf of
    ``pattern`` (the pattern or verb name hooks and logs report). ``fail``, when given, says
    what a failed request means for this flow (a failed condition on a ``create`` is
    :class:`~singletable.errors.AlreadyExists`): the executor applies it before reporting
    the call, so hooks and logs see the error the caller gets, and the flow receives it."""

    operation: str
    params: Mapping[str, Any]
    pattern: str | None
    fail: Callable[[ServiceError], SingleTableError] | None = None


class Gather(NamedTuple):
    """Send every request at once (at most ``concurrency`` in flight); the flow receives the
    responses in the order of ``sends``. If any fails, the first failure (in that order) is
    thrown into the flow once every request has finished."""

    sends: tuple[Send, ...]
    concurrency: int


class Sleep(NamedTuple):
    """Wait ``seconds`` before going on (the retry policy's backoff)."""

    seconds: float


class Call(NamedTuple):
    """Run ``function(*args)`` and receive its result: local work that may block (a file
    written, a line drawn on a terminal). The sync twin calls it in place; the async twin in a
    worker thread, so it never blocks the event loop. What it raises is raised into the flow."""

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()


Step = Send | Gather | Sleep | Call
Flow = Generator[Step, Any, T]
"""A verb's plan: yields steps, receives their results, returns the verb's result."""


class SyncRunner(Protocol):
    """Runs flows and returns their results: the sync repository."""

    def run(self, flow: Flow[T], /) -> T: ...


class AsyncRunner(Protocol):
    """Runs flows as coroutines: the async repository."""

    def run(self, flow: Flow[T], /) -> Coroutine[Any, Any, T]: ...


def is_async(runner: object) -> bool:
    """Whether ``runner`` runs flows as coroutines (an async repository)."""
    return bool(getattr(type(runner), "__singletable_async__", False))


class Started(Generic[T]):
    """A flow run up to its first step: finished (``ready``, with ``value``) or waiting on
    ``step``. Lets a caller surface a flow's pure errors at once and send its I/O later."""

    __slots__ = ("flow", "ready", "step", "value")

    def __init__(self, flow: Flow[T]) -> None:
        self.flow = flow
        self.value: T | None = None
        self.step: Step | None = None
        try:
            self.step = next(flow)
            self.ready = False
        except StopIteration as stop:
            self.value = stop.value
            self.ready = True

    def rest(self) -> Flow[T]:
        """The remainder of the flow: yields the waiting step first."""
        if self.ready:
            return self.value  # type: ignore[return-value]
        flow, step = self.flow, self.step
        while True:
            try:
                value = yield step  # type: ignore[misc]
            except SingleTableError as error:
                try:
                    step = flow.throw(error)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                continue
            try:
                step = flow.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
