"""Fault injection through botocore's event hooks (see the research notes on backends).

* :func:`withhold_batch_requests` -- the last requests of a BatchWriteItem/BatchGetItem are not
  sent and come back as ``UnprocessedItems``/``UnprocessedKeys`` (the rest really executes);
* :func:`raise_client_error` -- a modeled error raised at ``before-call`` (nothing sent, no
  botocore retry), e.g. a cancelled transaction with ``TransactionConflict`` reasons;
* :func:`http_error_response` -- a per-attempt HTTP error at ``before-send`` that goes through
  botocore's parser and retry handler (throttling).
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator
from typing import Any

from botocore.awsrequest import AWSResponse


def withhold_batch_requests(client: Any, operation: str, *, times: int, withhold: int) -> None:
    """For the next ``times`` calls of ``operation``, keep the last ``withhold`` requests back
    and report them as unprocessed. The rest really executes; when every request is withheld,
    nothing is sent (the call is answered at ``before-call``)."""
    left = {"n": times}
    is_write = operation == "BatchWriteItem"

    def before(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if left["n"] <= 0:
            return
        left["n"] -= 1
        params["RequestItems"] = items = copy.deepcopy(params["RequestItems"])
        table = next(iter(items))
        requests = items[table] if is_write else items[table]["Keys"]
        count = min(withhold, len(requests))
        held = requests[len(requests) - count :]
        extra = {} if is_write else {k: v for k, v in items[table].items() if k != "Keys"}
        context["withheld"] = (table, held, extra)
        if count < len(requests):
            del requests[len(requests) - count :]
        else:
            context["withhold_all"] = True

    def unprocessed(
        parsed: dict[str, Any], withheld: tuple[str, list[Any], dict[str, Any]]
    ) -> None:
        table, held, extra = withheld
        if not held:
            return
        if is_write:
            parsed.setdefault("UnprocessedItems", {}).setdefault(table, []).extend(held)
        else:
            entry = parsed.setdefault("UnprocessedKeys", {}).setdefault(table, {"Keys": []})
            entry["Keys"].extend(held)
            entry.update(extra)

    def short_circuit(context: dict[str, Any], **_: Any) -> tuple[Any, dict[str, Any]] | None:
        if not context.pop("withhold_all", False):
            return None
        parsed: dict[str, Any] = {
            "UnprocessedItems" if is_write else "UnprocessedKeys": {},
            "ResponseMetadata": {"HTTPStatusCode": 200, "RetryAttempts": 0},
        }
        if not is_write:
            parsed["Responses"] = {}
        unprocessed(parsed, context.pop("withheld"))
        return _FakeHttp(), parsed

    def after(parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        withheld = context.pop("withheld", None)
        if withheld is not None:
            unprocessed(parsed, withheld)

    client.meta.events.register(f"before-parameter-build.dynamodb.{operation}", before)
    client.meta.events.register_first(f"before-call.dynamodb.{operation}", short_circuit)
    client.meta.events.register(f"after-call.dynamodb.{operation}", after)


class _FakeHttp:
    status_code = 200
    headers: dict[str, str] = {}


def raise_client_error(
    client: Any,
    operation: str,
    code: str,
    *,
    times: int = 1,
    message: str = "injected",
    **extra: Any,
) -> dict[str, int]:
    """Raise a modeled ``code`` error for the next ``times`` calls (nothing is sent).

    Returns a counter dict whose ``"raised"`` entry counts the injected errors.
    """
    state = {"left": times, "raised": 0}
    exc_class = client.exceptions.from_code(code)

    def handler(**_: Any) -> None:
        if state["left"] > 0:
            state["left"] -= 1
            state["raised"] += 1
            raise exc_class(
                {
                    "Error": {"Code": code, "Message": message},
                    "ResponseMetadata": {"HTTPStatusCode": 400},
                    **extra,
                },
                operation,
            )

    client.meta.events.register(f"before-call.dynamodb.{operation}", handler)
    return state


class _Body(io.BytesIO):
    def stream(self, **_: Any) -> Iterator[bytes]:
        while chunk := self.read():
            yield chunk


def http_error_response(
    client: Any, operation: str, code: str, *, times: int = 1, status: int = 400
) -> dict[str, int]:
    """Answer the next ``times`` HTTP attempts of ``operation`` with a DynamoDB error body;
    botocore parses it and applies its retry policy."""
    state = {"left": times, "sent": 0}

    def handler(request: Any, **_: Any) -> AWSResponse | None:
        if state["left"] <= 0:
            return None
        state["left"] -= 1
        state["sent"] += 1
        body = json.dumps(
            {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "injected"}
        ).encode()
        response = AWSResponse(
            request.url, status, {"Content-Type": "application/x-amz-json-1.0"}, _Body(body)
        )
        # In-process moto answers from its own before-send handler; point the request at a
        # host it does not match so the injected response is the only one.
        request.url = "http://fault-injected.invalid/"
        return response

    client.meta.events.register_first(f"before-send.dynamodb.{operation}", handler)
    return state
