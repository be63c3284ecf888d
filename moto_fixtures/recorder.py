"""Record the DynamoDB requests a boto3 client sends, through botocore's event hooks.

* an **API call** is counted at ``before-call.dynamodb.<Op>``: the request passed client-side
  validation and is about to be sent (a ``ParamValidationError`` is never counted); its
  parameters are the final ones, after every ``before-parameter-build`` handler ran.
* an **attempt** is counted at ``before-send.dynamodb.<Op>``: one per HTTP attempt, so retries
  show up here (``attempts``) but not in ``operations``.
"""

from __future__ import annotations

import copy
import itertools
import reprlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

_ids = itertools.count()
_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxdict = 6
_repr.maxlist = 6
_repr.maxlevel = 4


class RequestRecorder:
    """Records the operations a client sends. Build it with :func:`record`."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.client = client
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.attempts: list[str] = []
        self._uid = f"moto_fixtures.recorder.{next(_ids)}"
        self._params_key = f"{self._uid}.params"
        self._registered: list[str] = []
        self._attach()

    # -- hooks ---------------------------------------------------------------------------------

    def _attach(self) -> None:
        events = self.client.meta.events
        self._register(events.register_last, "before-parameter-build.dynamodb", self._on_params)
        # Handlers on a specific name (before-call.dynamodb.GetItem) run before the generic
        # one, and a fault injector may raise there. botocore runs a wildcard node's handlers
        # before its sibling's at the same depth, so ``<event>.dynamodb.*`` + register_first
        # sees every call and attempt, whatever handlers a test adds later.
        self._register(events.register_first, "before-call.dynamodb.*", self._on_call)
        self._register(events.register_first, "before-send.dynamodb.*", self._on_send)

    def _register(self, how: Any, event: str, handler: Any) -> None:
        how(event, handler, unique_id=f"{self._uid}:{event}")
        self._registered.append(event)

    def detach(self) -> None:
        """Stop recording (idempotent)."""
        events = self.client.meta.events
        for event in self._registered:
            events.unregister(event, unique_id=f"{self._uid}:{event}")
        self._registered.clear()

    def _on_params(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context[self._params_key] = params  # a reference: later handlers may still edit it

    def _on_call(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        params = context.get(self._params_key, {})
        self.calls.append((model.name, copy.deepcopy(params)))

    def _on_send(self, event_name: str, **_: Any) -> None:
        self.attempts.append(event_name.rsplit(".", 1)[-1])

    # -- queries -------------------------------------------------------------------------------

    @property
    def operations(self) -> list[str]:
        """Operation names of the API calls, in order (one per call, retries not repeated)."""
        return [op for op, _ in self.calls]

    def count(self, op: str | None = None) -> int:
        """Number of API calls (of operation ``op``)."""
        return len(self.calls) if op is None else sum(1 for o, _ in self.calls if o == op)

    def count_attempts(self, op: str | None = None) -> int:
        """Number of HTTP attempts (of operation ``op``), retries included."""
        return len(self.attempts) if op is None else self.attempts.count(op)

    def params(self, op: str) -> list[dict[str, Any]]:
        """Parameters of every call of ``op``, in order."""
        return [p for o, p in self.calls if o == op]

    def clear(self) -> None:
        self.calls.clear()
        self.attempts.clear()

    def describe(self) -> str:
        if not self.calls:
            return "  (no calls)"
        return "\n".join(
            f"  {i}. {op} {_repr.repr(params)}" for i, (op, params) in enumerate(self.calls, 1)
        )

    @contextmanager
    def expect(self, *operations: str) -> Iterator[RequestRecorder]:
        """Assert that the block sends exactly ``operations``, in this order.

        Clears the recorder on enter. When the block raises, its exception wins and nothing
        is asserted.
        """
        self.clear()
        yield self
        __tracebackhide__ = True
        expected = list(operations)
        if self.operations != expected:
            raise AssertionError(
                f"expected DynamoDB calls {expected}, got {self.operations}:\n{self.describe()}"
            )

    def __repr__(self) -> str:
        return f"<RequestRecorder {self.operations} attempts={len(self.attempts)}>"


def record(client: DynamoDBClient) -> RequestRecorder:
    """Start recording the requests ``client`` sends (``recorder.detach()`` stops)."""
    return RequestRecorder(client)
