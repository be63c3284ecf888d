"""Which clients have a direct transport (:mod:`._direct`, :mod:`._direct_async`), and putting
one on a client: :func:`singletable.aws._client.default_client` and
:meth:`singletable.aio.AsyncRepository.connect` install it when asked, the executor finds it
with :func:`transport_for`."""

from __future__ import annotations

import logging
import weakref
from typing import Any

from . import fastpath
from ._direct import DirectTransport, declined

__all__ = ["install", "transport_for", "uninstall"]

_logger = logging.getLogger("singletable")
_installed: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def transport_for(client: Any) -> Any:
    """The direct transport installed on ``client`` (sync or async), or None."""
    return _installed.get(client)


def install(client: Any) -> bool:
    """Send ``client``'s data-plane requests through a direct transport (sync for a botocore
    client, async for an aiobotocore one); False, with the reason logged, when
    :func:`declined` says it cannot."""
    if client in _installed:
        return True
    reason = declined(client)
    if reason is not None:
        _logger.warning("singletable's direct transport is not used for this client: %s", reason)
        return False
    if fastpath.aiobotocore_version(client) is not None:
        from ._direct_async import AsyncDirectTransport

        _installed[client] = AsyncDirectTransport(client)
    else:
        _installed[client] = DirectTransport(client)
    return True


def uninstall(client: Any) -> None:
    """Give ``client``'s requests back to botocore (no-op if not installed)."""
    _installed.pop(client, None)
