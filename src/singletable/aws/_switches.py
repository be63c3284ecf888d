"""The environment switches of singletable's botocore extensions.

Each extension has one variable, read on every use (so a test or an operator can flip it
without restarting anything): ``SINGLETABLE_FAST_PATH`` (on unless switched off),
``SINGLETABLE_SIGNING`` (off unless switched on), ``SINGLETABLE_EXCHANGE`` (on unless switched
off) and ``SINGLETABLE_TRANSPORT`` (``botocore`` unless it says ``direct``).
"""

from __future__ import annotations

import os

__all__ = ["EXCHANGE", "FAST_PATH", "SIGNING", "TRANSPORT", "switch", "switch_on", "transport"]

FAST_PATH = "SINGLETABLE_FAST_PATH"
"""The response fast path: on unless ``0`` (or ``false``/``no``/``off``)."""

SIGNING = "SINGLETABLE_SIGNING"
"""singletable's SigV4 signer on the default client: off unless ``1`` (or
``true``/``yes``/``on``); ``0`` also keeps an explicit request for it from installing it."""

EXCHANGE = "SINGLETABLE_EXCHANGE"
"""The default client's HTTP exchange under botocore's pipeline (:mod:`singletable.aws.exchange`):
on unless ``0`` (or ``false``/``no``/``off``)."""

TRANSPORT = "SINGLETABLE_TRANSPORT"
"""The default client's transport: ``direct`` (singletable sends DynamoDB requests itself, see
:mod:`singletable.aws._direct`) or ``botocore``; unset (or anything else) leaves the choice to
``client_config(transport=...)``."""

TRANSPORTS = ("botocore", "direct")

_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"0", "false", "no", "off"})


def switch(env_var: str) -> bool | None:
    """True when ``env_var`` is ``1``/``true``/``yes``/``on``, False when it is
    ``0``/``false``/``no``/``off`` (any case, surrounding blanks ignored), None when it is
    unset or says neither."""
    value = os.environ.get(env_var, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    return None


def switch_on(env_var: str) -> bool:
    """False only when ``env_var`` is switched off (:func:`switch` is False)."""
    return switch(env_var) is not False


def transport() -> str | None:
    """``"direct"`` or ``"botocore"`` when ``SINGLETABLE_TRANSPORT`` says so (any case,
    surrounding blanks ignored), None when it is unset or says neither."""
    value = os.environ.get(TRANSPORT, "").strip().lower()
    return value if value in TRANSPORTS else None
