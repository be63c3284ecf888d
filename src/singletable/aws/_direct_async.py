"""The direct transport's async twin: an aiobotocore client's data-plane requests, sent by
singletable through the client's own HTTP session (aiohttp, as aiobotocore configured it).

Everything but the waiting is :class:`._direct.DirectBase`'s: the same body, endpoint, headers
and signature, the same parsing. aiobotocore's awaitables take the place of botocore's calls:
its credentials (``await get_frozen_credentials()``), its aiohttp session
(:mod:`._direct_aiohttp`), the response's
``await content``, its endpoint's retry step (the client's ``needs-retry`` handler and
``asyncio.sleep``; the stock legacy handler is asked through its sync twin,
:mod:`._direct_retry`), its event emitter and its parser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._direct import UNRESOLVED, DirectBase, Operation
from ._direct_aiohttp import Sessions
from ._direct_retry import RetryDecisions

__all__ = ["AsyncDirectTransport"]


class AsyncDirectTransport(DirectBase):
    """The async twin: aiobotocore's client, aiohttp session and retry handler."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self._sessions = Sessions(self._http)
        self._retries = RetryDecisions(self._events)

    def method(self, operation: str) -> Callable[..., Any]:
        """A stand-in for the client's coroutine method for ``operation``."""
        call = self.call

        async def send(**params: Any) -> Any:
            return await call(operation, params)

        return send

    async def call(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request; return (or raise) what aiobotocore's ``_make_api_call`` would."""
        op = self._operations.get(operation) or self.operation(operation)
        if op is None:
            return await self._client._make_api_call(operation, dict(params))  # type: ignore[no-any-return]
        credentials = self._credentials
        frozen = await credentials.get_frozen_credentials() if credentials is not None else None
        params, body, key, endpoint = self.prepare(op, params, frozen)
        context = self.context(op)
        if endpoint is UNRESOLVED:
            resolved = await self._client._resolve_endpoint_ruleset(op.model, params, context)
            endpoint = self.remember(key, context, resolved)
            context = self.context(op)
        if endpoint is None:
            return await self._client._make_api_call(operation, dict(params))  # type: ignore[no-any-return]
        request_dict = {"context": context}
        botocore_endpoint = self._endpoint
        attempts = 1
        botocore_endpoint._update_retries_context(context, attempts)
        while True:
            headers = self.headers(op, body, endpoint, frozen, context)
            response, exception = await self._attempt(op, endpoint.url, headers, body)
            if not await self._needs_retry(op, attempts, request_dict, response, exception):
                break
            attempts += 1
            botocore_endpoint._update_retries_context(context, attempts, response)
            frozen = await credentials.get_frozen_credentials()
        if exception is not None:
            await self._events.emit(op.after_call_error, exception=exception, context=context)
            raise exception
        http_response, parsed = response
        parsed["ResponseMetadata"]["RetryAttempts"] = attempts - 1
        await self._events.emit(
            op.after_call, http_response=http_response, parsed=parsed, model=op.model,
            context=context,
        )  # fmt: skip
        if http_response.status_code >= 300:
            raise self.error(op, parsed)
        return parsed  # type: ignore[no-any-return]

    async def _needs_retry(
        self, op: Operation, attempts: int, request_dict: Any, response: Any, exception: Any
    ) -> bool:
        """aiobotocore's endpoint's ``_needs_retry``, asking the stock legacy handler's sync
        twin when that is the only handler (:mod:`._direct_retry`)."""
        endpoint = self._endpoint
        twin = self._retries.twin(op.needs_retry)
        if twin is None:
            return await endpoint._needs_retry(  # type: ignore[no-any-return]
                attempts, op.model, request_dict, response, exception
            )
        seconds = self._retries.ask(twin, op.model, attempts, request_dict, response, exception)
        if seconds is None or seconds is False:
            return False
        await endpoint._sleep(seconds)
        return True

    async def _attempt(self, op: Operation, url: str, headers: dict[str, str], body: bytes) -> Any:
        """One HTTP exchange: ((http response, parsed), None) or (None, the exception)."""
        try:
            http_response = await self._sessions.send(url, headers, body)
            content = await http_response.content
        except Exception as exc:  # aiobotocore hands every send failure to its retry handler
            return None, exc
        status = http_response.status_code
        parsed = None
        if status < 300:
            parsed = self.fast_parse(op, status, http_response.headers, content)
        if parsed is None:
            response = self.response_dict(op, status, http_response.headers, content)
            parsed = await self._parser.parse(response, op.model.output_shape)
            if status >= 300:
                shape = self._model.shape_for_error_code(parsed.get("Error", {}).get("Code"))
                if shape is not None:
                    parsed.update(await self._parser.parse(response, shape))
        return (http_response, parsed), None
